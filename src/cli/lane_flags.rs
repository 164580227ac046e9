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

/// A records lane run by a command that asks `judge` (`prism entropy`, `prism sentences`): on a
/// runtime of its own, ctrl-c cancelling it, each record pushed to a shared store as it commits
/// (`lock` also names the run for the pusher, `noun` its records in messages), every event handed
/// to `each`. Whether it was interrupted.
pub(super) fn run_records<U: crate::engine::records::Unit>(
    db: &crate::store::Db,
    ask: &AskFlags,
    (lock, noun): (&str, &'static str),
    (judge, factory): (
        &crate::provider::ModelConfig,
        &crate::engine::BackendFactory,
    ),
    (make, todo): (
        impl FnOnce(std::sync::Arc<crate::engine::Caller>) -> U,
        Vec<U::Todo>,
    ),
    mut each: impl FnMut(crate::engine::records::RecordEvent<U::Record, U::Outcome>),
) -> anyhow::Result<bool> {
    use std::sync::Arc;
    let rt = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()?;
    let cancel = tokio_util::sync::CancellationToken::new();
    rt.block_on(async {
        crate::shutdown::cancel_on_signal(&cancel);
        let handle = db.records_handle(lock, noun)?;
        let caller = Arc::new(crate::engine::Caller::new(
            judge,
            factory,
            Some(handle.clone()),
            !ask.no_cache,
            cancel.clone(),
        )?);
        let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel();
        let lane = crate::engine::Lane {
            store: handle,
            factory: factory.clone(),
            events: tx,
            cancel: cancel.clone(),
        };
        let run = crate::engine::records::run(
            lane,
            ask.concurrency.max(1),
            lock,
            Arc::new(make(caller)),
            todo,
        );
        let drain = async {
            while let Some(ev) = rx.recv().await {
                each(ev);
            }
        };
        let (ran, ()) = tokio::join!(run, drain);
        ran.map_err(|e| anyhow::anyhow!("{e}"))
    })?;
    Ok(cancel.is_cancelled())
}
