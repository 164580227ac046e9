//! A lane's run on a shared store (PostgreSQL). The detection and self-detection lanes read
//! what they work on through SQLite (plans, resumes, reports), so on a shared store they work
//! on this machine's store, the one the TUI mirrors the team's runs into, and every change they
//! commit there is pushed to the shared store as it commits: the writer thread tells the
//! pusher which rows it changed ([`PushMsg`]), and the pusher reads those rows back and writes
//! them to PostgreSQL. While the database is away the changes wait here (nothing is lost: they
//! are committed locally) and go when it answers again; after such an outage the whole run is
//! copied once more at the end, each row only moved forward, so nothing missed stays behind.
//!
//! One process at a time works on a lane's run, as on SQLite: it holds the run's row in
//! `lane_locks` and keeps its heartbeat (the database's clock); a holder not heard from for
//! [`STALE_AFTER_SECS`] is gone and its run can be resumed elsewhere.

use std::collections::HashSet;
use std::path::Path;
use std::sync::mpsc;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use super::lane_tables::{self, LaneKind, Row, Table, Touched};
use super::links::{Gate, RunKind};
use super::locks::{HEARTBEAT_SECS, Holder, STALE_AFTER_SECS};
use super::pg::PgStore;
use super::{Result, Store, StoreError};

/// What the writer thread tells the pusher.
pub enum PushMsg {
    /// Rows committed to the local store.
    Touched(Vec<Touched>),
    /// Everything told so far is to be pushed (tried for up to `patience`); the reply says
    /// how many rows went and whether some could not.
    Finish {
        patience: Duration,
        reply: mpsc::Sender<Result<Pushed>>,
    },
}

/// What a pusher did over a run.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Pushed {
    /// Rows written to the shared store (a row changed twice counts twice).
    pub changes: usize,
    /// Whether every push went the first time (no outage, no takeover): then the shared
    /// store has every row the lane saved, with nothing left to check.
    pub clean: bool,
}

/// The pusher of one lane run's changes (see the module's comment).
pub struct Pusher {
    tx: mpsc::Sender<PushMsg>,
    thread: Option<JoinHandle<()>>,
}

impl Pusher {
    /// Starts pushing what is committed to the store at `local` into `pg`, keeping `run`
    /// held by `who` (taken by [`PgStore::take_lane`] first). `say` hears what the user
    /// should know: the shared store went away, came back, or the run was taken over.
    pub fn start(
        local: &Path,
        pg: PgStore,
        run: String,
        who: Holder,
        say: impl Fn(String) + Send + 'static,
    ) -> Result<Pusher> {
        let store = Store::open(local)?;
        let (tx, rx) = mpsc::channel();
        let thread = std::thread::Builder::new()
            .name("prism-lane-push".into())
            .spawn(move || {
                Worker {
                    store,
                    pg,
                    run,
                    who,
                    pending: Vec::new(),
                    seen: HashSet::new(),
                    down: false,
                    troubled: false,
                    lost: false,
                    pushed: 0,
                    say: Box::new(say),
                }
                .run(rx)
            })
            .map_err(|e| StoreError::Shared(e.to_string()))?;
        Ok(Pusher {
            tx,
            thread: Some(thread),
        })
    }

    /// Where the writer thread tells what it committed.
    pub fn sender(&self) -> mpsc::Sender<PushMsg> {
        self.tx.clone()
    }

    /// Pushes what is left (trying for up to `patience` while the database is away) and lets
    /// the run go; how many rows went over the whole run.
    pub fn finish(mut self, patience: Duration) -> Result<Pushed> {
        let (reply, rx) = mpsc::channel();
        let sent = self.tx.send(PushMsg::Finish { patience, reply });
        let r = match sent {
            Ok(()) => rx
                .recv()
                .unwrap_or_else(|_| Err(StoreError::Shared("the pusher ended".into()))),
            Err(_) => Err(StoreError::Shared("the pusher ended".into())),
        };
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
        r
    }
}

struct Worker {
    store: Store,
    pg: PgStore,
    run: String,
    who: Holder,
    /// Changes committed here and not yet on the shared store, in the order they came.
    pending: Vec<Touched>,
    seen: HashSet<String>,
    /// The shared store did not answer the last push (said once until it does).
    down: bool,
    /// A push ever failed (or the run was taken over).
    troubled: bool,
    /// Another process took the run over: nothing more is pushed.
    lost: bool,
    pushed: usize,
    say: Box<dyn Fn(String) + Send>,
}

impl Worker {
    fn run(mut self, rx: mpsc::Receiver<PushMsg>) {
        let beat_every = Duration::from_secs(HEARTBEAT_SECS);
        let mut last_beat = Instant::now();
        loop {
            let wait = if self.pending.is_empty() {
                beat_every.saturating_sub(last_beat.elapsed())
            } else {
                Duration::from_millis(if self.down { 1_000 } else { 50 })
            };
            match rx.recv_timeout(wait) {
                Ok(PushMsg::Touched(t)) => {
                    self.add(t);
                    // Whatever else is already waiting goes in the same push.
                    while let Ok(m) = rx.try_recv() {
                        match m {
                            PushMsg::Touched(t) => self.add(t),
                            PushMsg::Finish { patience, reply } => {
                                return self.finish(patience, reply);
                            }
                        }
                    }
                }
                Ok(PushMsg::Finish { patience, reply }) => return self.finish(patience, reply),
                Err(mpsc::RecvTimeoutError::Timeout) => {}
                // The writer and the lane are gone without a finish (an error on the way):
                // what is left is pushed once, the run let go.
                Err(mpsc::RecvTimeoutError::Disconnected) => {
                    let (reply, _) = mpsc::channel();
                    return self.finish(Duration::from_secs(5), reply);
                }
            }
            if !self.pending.is_empty() {
                let _ = self.push();
            }
            if last_beat.elapsed() >= beat_every && !self.lost {
                last_beat = Instant::now();
                match self.pg.beat_lane(&self.run, &self.who.owner) {
                    Ok(true) | Err(_) => {}
                    Ok(false) => {
                        self.lost = true;
                        self.troubled = true;
                        (self.say)(format!(
                            "run {} was taken over on the shared store by another process \
                             (this one was not heard from for {STALE_AFTER_SECS} s): its \
                             results stay in this machine's store",
                            self.run
                        ));
                    }
                }
            }
        }
    }

    fn add(&mut self, ts: Vec<Touched>) {
        for t in ts {
            let key = match &t {
                Touched::Run(kind, id) => format!("{kind:?} {id}"),
                Touched::Row(table, key) => format!("{} {key:?}", table.name),
                Touched::Scores(run, jobs) => format!("scores {run} {jobs:?}"),
            };
            if self.seen.insert(key) {
                self.pending.push(t);
            }
        }
    }

    /// Pushes the pending changes in one transaction: whole runs first, then rows table by
    /// table with parents first, each read back from the local store as it now stands.
    fn push(&mut self) -> Result<()> {
        if self.lost {
            self.pending.clear();
            self.seen.clear();
            return Ok(());
        }
        let mut rows: Vec<(&'static Table, Vec<Row>)> = Vec::new();
        for t in &self.pending {
            if let Touched::Run(kind, id) = t {
                for table in kind.tables() {
                    rows.push((table, self.store.lane_rows(table, Some(id))?));
                }
            }
        }
        // The described tables in their order (parents first), then any other table a lane
        // described for itself (`Db::ensure_table`), in the order its rows came.
        let mut tables: Vec<&'static Table> = lane_tables::all();
        for t in &self.pending {
            if let Touched::Row(tt, _) = t
                && !tables.iter().any(|x| x.name == tt.name)
            {
                tables.push(tt);
            }
        }
        for table in tables {
            let keys: Vec<Row> = self
                .pending
                .iter()
                .filter_map(|t| match t {
                    Touched::Row(tt, key) if tt.name == table.name => Some(key.clone()),
                    _ => None,
                })
                .collect();
            if !keys.is_empty() {
                rows.push((table, self.store.lane_rows_by_key(table, &keys)?));
            }
        }
        // Scores, read back as they now stand, each replacing the shared store's.
        let mut scores = Vec::new();
        for t in &self.pending {
            if let Touched::Scores(run, jobs) = t {
                let want: HashSet<u32> = jobs.iter().copied().collect();
                scores.extend(
                    self.store
                        .scores(Some(run))?
                        .into_iter()
                        .filter(|s| want.contains(&s.job_idx)),
                );
            }
        }
        let pushed = self.pg.put_lane_rows(rows, true).and_then(|n| {
            if !scores.is_empty() {
                self.pg.save_scores(&scores)?;
            }
            Ok(n + scores.len())
        });
        match pushed {
            Ok(n) => {
                self.pushed += n;
                self.pending.clear();
                self.seen.clear();
                if self.down {
                    self.down = false;
                    (self.say)("the shared store answers again: the waiting results went".into());
                }
                Ok(())
            }
            Err(e) => {
                self.troubled = true;
                if !self.down {
                    self.down = true;
                    (self.say)(format!(
                        "cannot reach the shared store: {e}; results are kept in this machine's \
                         store and pushed when it answers"
                    ));
                }
                Err(e)
            }
        }
    }

    fn finish(mut self, patience: Duration, reply: mpsc::Sender<Result<Pushed>>) {
        let until = Instant::now() + patience;
        let mut r = Ok(());
        if !self.lost {
            while !self.pending.is_empty() {
                r = self.push();
                if r.is_ok() || Instant::now() >= until {
                    break;
                }
                std::thread::sleep(Duration::from_millis(500));
            }
            let _ = self.pg.release_lane(&self.run, &self.who.owner);
        }
        let _ = reply.send(r.map(|()| Pushed {
            changes: self.pushed,
            clean: !self.troubled,
        }));
    }
}

/// Puts a lane run on the shared store as this store has it, each row only moved forward (what
/// an outage or an earlier session left behind); how many rows were added or moved forward.
pub fn reconcile(local: &Store, pg: &PgStore, kind: LaneKind, run: &str) -> Result<usize> {
    let rows = kind
        .tables()
        .iter()
        .map(|t| Ok((*t, local.lane_rows(t, Some(run))?)))
        .collect::<Result<Vec<_>>>()?;
    pg.put_lane_rows(rows, false)
}

/// A run made on this machine, of any lane, put on the shared store: what it lacks of it or has
/// behind (the TUI on a shared store, when a run it started ends). What the run was and how
/// many rows went; `None` when this store has no such run.
pub fn push_run(local: &Store, pg: &PgStore, id: &str) -> Result<Option<(&'static str, usize)>> {
    let kind = if local.run(id)?.is_some() {
        RunKind::Answers
    } else {
        match LaneKind::ALL.into_iter().find(|k| {
            local
                .lane_statuses(*k)
                .is_ok_and(|s| s.iter().any(|(r, _)| r == id))
        }) {
            Some(k) => RunKind::of_lane(k),
            None => return Ok(None),
        }
    };
    // A run of that id made elsewhere is never joined to this one: its rows would come back
    // into this machine's run through the mirror.
    let gate = Gate::open(local, pg.shown())?;
    if !gate.is_linked(kind, id) {
        let there = pg.holds_run(kind, id)?;
        if there {
            return Err(StoreError::ForeignRun {
                run: crate::text::one_line(id),
                store: pg.shown().to_string(),
            });
        }
        local.link_runs(pg.shown(), &[(kind, id)])?;
    }
    if let Some(b) = local.run_bundle(id)? {
        let added = pg.put_run_bundle(&b)?;
        // Its answers' checks (self-detection asked of its answers) go with it.
        let checks = local.lane_rows(&lane_tables::ANSWER_CHECKS, Some(id))?;
        let n = pg.put_lane_rows(vec![(&lane_tables::ANSWER_CHECKS, checks)], false)?;
        return Ok(Some(("run", added.responses + added.scores + n)));
    }
    for kind in LaneKind::ALL {
        if local.lane_statuses(kind)?.iter().any(|(r, _)| r == id) {
            return Ok(Some((kind.noun(), reconcile(local, pg, kind, id)?)));
        }
    }
    Ok(None)
}
