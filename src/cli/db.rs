//! `prism db copy FROM TO` (`store::copy`: every table moved between two stores, each a file
//! or a shared store) and `prism db workers` (a shared run's progress and its workers).

use std::path::PathBuf;

use anyhow::bail;
use clap::Subcommand;

#[derive(Debug, Subcommand)]
pub enum DbCommand {
    /// Copy a store into another (a SQLite file or a postgres:// URL each way); run it again to
    /// finish a copy that stopped. Every table moves: runs, detection and self-detection runs,
    /// answer checks, entailments, topics, judge verdicts, labels, sentence verdicts, the cache,
    /// review decisions, quality scores.
    Copy {
        from: PathBuf,
        to: PathBuf,
        /// Only these runs (comma-separated ids; default: every run).
        #[arg(long, value_delimiter = ',')]
        run: Vec<String>,
    },
    /// A shared run's progress and the workers on it: what each answered, dropped (another
    /// worker's answer came first) and took over (a lease that ran out), and when it was last
    /// heard from.
    Workers {
        /// The run (default: the newest).
        run: Option<String>,
        /// The shared store (postgres://...).
        #[arg(long)]
        db: String,
    },
}

pub(super) fn db(what: DbCommand) -> anyhow::Result<i32> {
    match what {
        DbCommand::Copy { from, to, run } => {
            crate::store::copy::copy(&from, &to, &run)?;
            Ok(0)
        }
        DbCommand::Workers { run, db } => workers(run, &db),
    }
}

fn workers(run: Option<String>, db: &str) -> anyhow::Result<i32> {
    // The local store is not used: everything here is read on the shared store.
    let db =
        crate::store::Db::open_shared(db, &std::env::temp_dir().join("prism-unused.db"), |_| {
            "workers share a run on a PostgreSQL store: --db postgres://...".into()
        })?;
    let run = match run {
        Some(r) => r,
        None => match db.newest_shared_run()? {
            Some(r) => r,
            None => bail!("no runs in {}", db.shown()),
        },
    };
    let Some(rec) = db.run(&run)? else {
        bail!("no run {run} in {}", db.shown());
    };
    let jobs = db.shared_jobs(&run)?;
    let count = |s: crate::store::JobState| jobs.iter().filter(|(_, st, _)| *st == s).count();
    let leased = jobs
        .iter()
        .filter(|(_, s, w)| *s == crate::store::JobState::Pending && w.is_some())
        .count();
    crate::outln!(
        "{run}  {}  {} jobs: {} done, {} failed, {} pending ({} leased)",
        rec.status.as_str(),
        jobs.len(),
        count(crate::store::JobState::Done),
        count(crate::store::JobState::Failed),
        count(crate::store::JobState::Pending),
        leased
    );
    crate::outln!(
        "{:<28} {:<16} {:>8} {:>8} {:>8} {:>8}  last heard",
        "worker",
        "host",
        "pid",
        "stored",
        "dropped",
        "retaken"
    );
    for (w, host, pid, stored, dropped, retaken, ago) in db.workers(&run)? {
        crate::outln!(
            "{:<28} {:<16} {:>8} {:>8} {:>8} {:>8}  {:.0} s ago",
            crate::text::one_line(&w),
            crate::text::one_line(&host),
            pid,
            stored,
            dropped,
            retaken,
            ago
        );
    }
    Ok(0)
}
