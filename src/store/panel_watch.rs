//! Other reviewers, live: a thread that notices when review decisions (or, with
//! [`Watch::start_table`], people's labels on answers) were stored by anyone else and says so,
//! so an open screen reads them without a key press.
//!
//! - On a SQLite file (several processes on one machine): `PRAGMA data_version` on a connection
//!   of its own changes whenever another connection commits; only then is the decisions table's
//!   last rowid read, so the runs being written to the same file wake nobody.
//! - On the shared PostgreSQL store: `LISTEN` on [`CHANNEL`], which every decision save
//!   notifies in its own transaction (delivered on commit). A dropped connection is made again
//!   and counts as a change, since notifications sent meanwhile are lost.
//!
//! The watcher only signals; the screen reads what is new from its own position, so nothing is
//! read twice or missed between the screen's load and the watcher's start.

use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::thread::JoinHandle;
use std::time::Duration;

use postgres::fallible_iterator::FallibleIterator;

/// The notification channel decision saves send on (PostgreSQL).
pub(crate) use super::pg::REVIEW_CHANNEL as CHANNEL;

/// How often a SQLite file is looked at (a pragma read: microseconds).
pub const POLL: Duration = Duration::from_millis(50);

/// How long a PostgreSQL wait lasts before the watcher checks whether it should stop.
const PG_WAIT: Duration = Duration::from_millis(200);

/// Where decisions are watched (a [`super::Panel`] says: `watch_source`).
#[derive(Clone)]
pub enum Source {
    File(PathBuf),
    /// Holds the password the store connected with: never shown.
    Shared(Box<postgres::Config>),
}

/// A running watcher; dropping it stops the thread.
pub struct Watch {
    stop: Arc<AtomicBool>,
    thread: Option<JoinHandle<()>>,
}

impl Watch {
    /// Starts watching `source`; `changed` is called (on the watcher's thread) each time new
    /// decisions may be there.
    pub fn start(source: Source, changed: impl Fn() + Send + 'static) -> std::io::Result<Watch> {
        let stop = Arc::new(AtomicBool::new(false));
        let flag = stop.clone();
        let thread = std::thread::Builder::new()
            .name("prism-review-watch".into())
            .spawn(move || match source {
                Source::File(path) => watch_file(&path, "review_decisions", &flag, &changed),
                Source::Shared(cfg) => watch_shared(&cfg, &flag, &changed),
            })?;
        Ok(Watch {
            stop,
            thread: Some(thread),
        })
    }
}

impl Watch {
    /// Watches one table of a SQLite file (people's labels on answers, say): `changed` is
    /// called when a commit by any other connection added rows to it. On a shared store the
    /// file is this machine's mirror, which the mirror's own connection writes what the team
    /// adds into, so the same watch sees the team's rows too.
    pub fn start_table(
        path: PathBuf,
        table: &'static str,
        changed: impl Fn() + Send + 'static,
    ) -> std::io::Result<Watch> {
        let stop = Arc::new(AtomicBool::new(false));
        let flag = stop.clone();
        let thread = std::thread::Builder::new()
            .name(format!("prism-watch-{table}"))
            .spawn(move || watch_file(&path, table, &flag, &changed))?;
        Ok(Watch {
            stop,
            thread: Some(thread),
        })
    }
}

impl Drop for Watch {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

fn watch_file(path: &std::path::Path, table: &str, stop: &AtomicBool, changed: &dyn Fn()) {
    use rusqlite::{Connection, OpenFlags};
    let open = || {
        let c = Connection::open_with_flags(
            path,
            OpenFlags::SQLITE_OPEN_READ_ONLY | OpenFlags::SQLITE_OPEN_NO_MUTEX,
        )?;
        c.busy_timeout(Duration::from_millis(200))?;
        Ok::<_, rusqlite::Error>(c)
    };
    let last_rowid = |c: &Connection| {
        c.query_row(
            &format!("SELECT COALESCE(MAX(rowid), 0) AS last FROM {table}"),
            [],
            |r| r.get::<_, i64>("last"),
        )
    };
    let mut conn = None;
    let (mut version, mut rowid) = (None::<i64>, None::<i64>);
    while !stop.load(Ordering::Relaxed) {
        if conn.is_none() {
            conn = open().ok();
        }
        if let Some(c) = &conn {
            match c.query_row("PRAGMA data_version", [], |r| {
                r.get::<_, i64>("data_version")
            }) {
                Ok(v) if version != Some(v) => {
                    version = Some(v);
                    // Something was committed (by anyone): were decisions among it?
                    match last_rowid(c) {
                        Ok(r) => {
                            if rowid.is_some_and(|old| old != r) {
                                changed();
                            }
                            rowid = Some(r);
                        }
                        // Busy: look again next time.
                        Err(_) => version = None,
                    }
                }
                Ok(_) => {}
                // The file went away or broke: open it again later.
                Err(_) => conn = None,
            }
        }
        std::thread::sleep(POLL);
    }
}

fn watch_shared(cfg: &postgres::Config, stop: &AtomicBool, changed: &dyn Fn()) {
    let mut backoff = Duration::from_millis(250);
    let mut first = true;
    while !stop.load(Ordering::Relaxed) {
        let mut client = match listen(cfg) {
            Ok(c) => c,
            Err(_) => {
                sleep_unless_stopped(backoff, stop);
                backoff = (backoff * 2).min(Duration::from_secs(5));
                continue;
            }
        };
        backoff = Duration::from_millis(250);
        // Reconnected: whatever was notified while the connection was down is lost, so the
        // screen reads again. (Not on the first connection: the screen has just loaded.)
        if !std::mem::take(&mut first) {
            changed();
        }
        while !stop.load(Ordering::Relaxed) {
            let got = client.notifications().timeout_iter(PG_WAIT).next();
            match got {
                Ok(Some(_)) => {
                    // A burst of saves is one read.
                    while let Ok(Some(_)) = client.notifications().iter().next() {}
                    changed();
                }
                Err(_) => break,
                Ok(None) if client.is_closed() => break,
                Ok(None) => {}
            }
        }
    }
}

fn listen(cfg: &postgres::Config) -> Result<postgres::Client, postgres::Error> {
    let mut cfg = cfg.clone();
    cfg.connect_timeout(Duration::from_secs(5));
    let mut c = cfg.connect(super::pg::tls())?;
    c.batch_execute(&format!("LISTEN {CHANNEL}"))?;
    Ok(c)
}

fn sleep_unless_stopped(d: Duration, stop: &AtomicBool) {
    let step = Duration::from_millis(50);
    let mut slept = Duration::ZERO;
    while slept < d && !stop.load(Ordering::Relaxed) {
        std::thread::sleep(step);
        slept += step;
    }
}
