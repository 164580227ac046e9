//! The flags every lane's command (`prism detect`, `autohall`, `selfcheck`) shares: where the
//! models and the store are, how many calls at once, the cache, JSON output and resuming; and
//! the same without resuming for the commands that ask about what a run stored (`AskFlags`).

use std::path::PathBuf;

#[derive(Debug, clap::Args)]
pub struct LaneFlags {
    /// Models file (default: models.toml in the config dir).
    #[arg(long)]
    pub models_file: Option<PathBuf>,
    /// Store file (default: prism.db in the data dir), or a shared store (postgres://...):
    /// worked on in this machine's store, every result pushed there as it is saved.
    #[arg(long)]
    pub db: Option<PathBuf>,
    /// The most calls in flight across all models.
    #[arg(long, default_value_t = 16)]
    pub concurrency: usize,
    /// Ignore the response cache (replies are still stored and cached).
    #[arg(long)]
    pub no_cache: bool,
    /// Print events as JSON lines (the default when stdout is not a terminal).
    #[arg(long)]
    pub json: bool,
    /// Finish an earlier run of this command: only what is missing or failed is asked.
    #[arg(long, value_name = "RUN_ID")]
    pub resume: Option<String>,
}

/// The flags of a lane that asks one model about what a run stored (`prism entropy`, `prism
/// self-detect`): no `--resume` (what is stored is never asked again anyway).
#[derive(Debug, Clone, clap::Args)]
pub struct AskFlags {
    /// Models file (default: models.toml in the config dir).
    #[arg(long)]
    pub models_file: Option<PathBuf>,
    /// Store file (default: prism.db in the data dir), or a shared store (postgres://...):
    /// its run and verdicts pulled first, the new verdicts pushed there at the end.
    #[arg(long)]
    pub db: Option<PathBuf>,
    /// The most calls in flight.
    #[arg(long, default_value_t = 8)]
    pub concurrency: usize,
    /// Ignore the response cache (replies are still stored and cached).
    #[arg(long)]
    pub no_cache: bool,
    /// One JSON object per row on stdout (the default when stdout is not a terminal).
    #[arg(long)]
    pub json: bool,
}

/// The store a lane command works on (`--db`, else this machine's store), saying when it
/// works through this machine's store for a shared one.
pub(super) fn open_db(
    db: Option<&std::path::PathBuf>,
    dirs: &crate::config::Dirs,
) -> anyhow::Result<crate::store::Db> {
    let db = crate::store::Db::open(
        db.map(std::path::PathBuf::as_path),
        &super::run::default_db(dirs),
    )?;
    db.say_working();
    Ok(db)
}

/// The store a reading command reads (`prism runs`, `compare`, `report`, `export`,
/// `signals`): a shared store through this machine's copy, brought up to date first.
pub(super) fn synced(
    db: Option<&std::path::PathBuf>,
    dirs: &crate::config::Dirs,
) -> anyhow::Result<crate::store::Db> {
    let db = crate::store::Db::open(
        db.map(std::path::PathBuf::as_path),
        &super::run::default_db(dirs),
    )?;
    db.sync()?;
    Ok(db)
}
