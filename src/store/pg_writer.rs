//! The writer thread of a shared store (PostgreSQL): the same [`StoreHandle`] the engine
//! writes through on SQLite, answered by a thread with its own connection, so the answers lane
//! runs unchanged on either. What differs is what "holding a run" means: on SQLite one
//! process holds the run's lock; here every worker joins the run and holds leases on the jobs
//! it is working on (`pg_runs`). This thread renews them (every third of the lease) for as long
//! as the worker lives, so a worker that dies, or loses the database for longer than the lease,
//! stops holding them and another takes them.
//!
//! Saves are group-committed like SQLite's: every save already queued goes into one
//! transaction. What a job waits on before its call never waits behind a commit: leases go to
//! a thread with a connection of its own, cache lookups to an async client (`pg_lookups`). A lost connection is made again before the next command; a command that
//! fails meanwhile answers with the error, and the engine holds the answers and tries again.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};

use super::worker::{SHARED_DB, Shared, worker_name};
use std::sync::{Arc, mpsc};
use std::time::{Duration, Instant};

use postgres::Client;
use tokio::sync::oneshot;

use super::writer::{Cmd, Lock, StoreHandle, WriteError, WriteResult};
use super::{ResponseRecord, ScoreRecord, StoreError, pg_runs};

impl StoreHandle {
    /// A handle on the shared store `pg` (already connected and migrated), for a worker that
    /// leases jobs for `lease` at a time.
    pub fn spawn_pg(pg: &super::pg::PgStore, lease: Duration) -> super::Result<StoreHandle> {
        let shared = Arc::new(Shared {
            worker: worker_name(),
            dropped: AtomicU64::new(0),
            retaken: AtomicU64::new(0),
        });
        let (tx, rx) = mpsc::channel::<Cmd>();
        let (leases_tx, leases_rx) = mpsc::channel::<Cmd>();
        let mut leases = Leases {
            conn: Conn::open(pg)?,
            shared: shared.clone(),
            lease,
        };
        let mut w = Writer {
            conn: Conn::open(pg)?,
            shared: shared.clone(),
            joined: Default::default(),
            ever: Default::default(),
            lease,
        };
        let spawn = |name: &str, f: Box<dyn FnOnce() + Send>| {
            std::thread::Builder::new()
                .name(name.into())
                .spawn(f)
                .map_err(|e| StoreError::Shared(e.to_string()))
        };
        spawn("prism-pg-leases", Box::new(move || leases.run(leases_rx)))?;
        spawn("prism-pg-writer", Box::new(move || w.run(rx)))?;
        Ok(StoreHandle {
            tx,
            path: None,
            shared: Some(shared),
            lookups: Some(Arc::new(super::pg_lookups::Lookups::new(pg.async_config()))),
            leases: Some(leases_tx),
        })
    }
}

/// A connection to the shared store, made again when lost.
struct Conn {
    cfg: Box<postgres::Config>,
    shown: String,
    client: Option<Client>,
    /// Statements prepared on this connection (made again with it): a statement sent as text
    /// is parsed and planned on every call, a round trip and most of a millisecond each.
    prepared: HashMap<&'static str, postgres::Statement>,
}

impl Conn {
    fn open(pg: &super::pg::PgStore) -> super::Result<Conn> {
        let cfg = pg.connect_config();
        let shown = pg.shown().to_string();
        let client = cfg
            .connect(super::pg::tls())
            .map_err(|e| StoreError::Shared(format!("{shown}: {}", super::pg::chain(&e))))?;
        Ok(Conn {
            cfg,
            shown,
            client: Some(client),
            prepared: HashMap::new(),
        })
    }

    /// `sql` prepared on the connection (connected first if need be).
    fn prepare(&mut self, sql: &'static str) -> WriteResult<postgres::Statement> {
        if let Some(s) = self.prepared.get(sql)
            && self.client.as_ref().is_some_and(|c| !c.is_closed())
        {
            return Ok(s.clone());
        }
        let st = self.with(|c| c.prepare(sql))?;
        self.prepared.insert(sql, st.clone());
        Ok(st)
    }

    /// Runs `f` on the connection, made again first if it was lost; an error that leaves the
    /// connection closed drops it, so the next command connects again.
    fn with<T>(
        &mut self,
        f: impl FnOnce(&mut Client) -> Result<T, postgres::Error>,
    ) -> WriteResult<T> {
        if self.client.as_ref().is_none_or(|c| c.is_closed()) {
            self.prepared.clear();
            self.client = Some(
                self.cfg
                    .connect(super::pg::tls())
                    .map_err(|e| self.error(&e))?,
            );
        }
        let c = self.client.as_mut().expect("connected above");
        let r = f(c);
        if r.is_err() && c.is_closed() {
            self.client = None;
        }
        r.map_err(|e| self.error(&e))
    }

    fn error(&self, e: &postgres::Error) -> WriteError {
        WriteError::from(StoreError::Shared(format!(
            "{SHARED_DB} {}: {}",
            self.shown,
            super::pg::chain(e)
        )))
    }
}

/// What one commit saves: answers, then scores (`scored` counts the scores).
#[derive(Default)]
struct Group {
    answers: Vec<(ResponseRecord, Ack)>,
    /// Scores, each set with whether it is of answers read back from the store.
    scores: Vec<(Vec<ScoreRecord>, bool, Ack)>,
    scored: usize,
}

type Ack = oneshot::Sender<WriteResult<()>>;

struct Writer {
    conn: Conn,
    shared: Arc<Shared>,
    /// Runs this worker has joined (its lock taken) and not yet let go of.
    joined: std::collections::HashSet<String>,
    /// Every run it joined in this process: at exit, whatever it still holds in them goes back
    /// (a lease taken just as the run let go of them).
    ever: std::collections::HashSet<String>,
    lease: Duration,
}

/// The thread that leases jobs, on a connection of its own (a job waits on its lease; behind
/// the writer it would wait for commits).
struct Leases {
    conn: Conn,
    shared: Arc<Shared>,
    lease: Duration,
}

impl Leases {
    fn run(&mut self, rx: mpsc::Receiver<Cmd>) {
        while let Ok(cmd) = rx.recv() {
            let Cmd::Lease {
                run,
                model,
                n,
                reply,
            } = cmd
            else {
                continue;
            };
            let (worker, secs) = (self.shared.worker.clone(), self.lease.as_secs_f64());
            let r = self.conn.prepare(pg_runs::LEASE).and_then(|st| {
                self.conn
                    .with(|c| pg_runs::lease(c, &st, &run, &model, &worker, n, secs))
            });
            if let Ok(l) = &r {
                self.shared
                    .retaken
                    .fetch_add(l.retaken as u64, Ordering::Relaxed);
            }
            let _ = reply.send(r);
        }
    }
}

impl Writer {
    fn run(&mut self, rx: mpsc::Receiver<Cmd>) {
        let renew_every = self.lease / 3;
        let mut next_renew = Instant::now() + renew_every;
        loop {
            let wait = next_renew.saturating_duration_since(Instant::now());
            let first = match rx.recv_timeout(wait) {
                Ok(c) => Some(c),
                Err(mpsc::RecvTimeoutError::Timeout) => None,
                Err(mpsc::RecvTimeoutError::Disconnected) => break,
            };
            if Instant::now() >= next_renew {
                // A renewal that fails (the database away) is tried at the next tick; leases
                // that run out meanwhile are another worker's to take.
                let _ = self.renew();
                next_renew = Instant::now() + renew_every;
            }
            let Some(first) = first else { continue };
            // Group commit: the answers and scores already queued go into one transaction
            // (an answer and the score a rule gave it commit together, as on SQLite: a worker
            // killed between the two would leave an answer without its score); anything else
            // is done in order after what came before.
            let mut group = Group::default();
            let mut next = Some(first);
            while let Some(cmd) = next {
                match cmd {
                    Cmd::Save(r, ack) => group.answers.push((r, ack)),
                    Cmd::SaveScores(rs, ack) => {
                        group.scored += rs.len();
                        group.scores.push((rs, false, ack));
                    }
                    Cmd::SaveStoredScores(rs, ack) => {
                        group.scored += rs.len();
                        group.scores.push((rs, true, ack));
                    }
                    other => {
                        self.save(&mut group);
                        self.handle(other);
                    }
                }
                if group.answers.len() + group.scored >= 1024 {
                    break;
                }
                next = rx.try_recv().ok();
            }
            self.save(&mut group);
        }
        // The process is ending: leases still held go back now.
        for run in std::mem::take(&mut self.ever) {
            let worker = self.shared.worker.clone();
            let _ = self.conn.with(|c| pg_runs::release(c, &run, &worker));
        }
    }

    fn renew(&mut self) -> WriteResult<()> {
        if self.joined.is_empty() {
            return Ok(());
        }
        let runs: Vec<String> = self.joined.iter().cloned().collect();
        let (worker, secs) = (self.shared.worker.clone(), self.lease.as_secs_f64());
        self.conn.with(|c| {
            let runs: Vec<&str> = runs.iter().map(String::as_str).collect();
            pg_runs::renew(c, &runs, &worker, secs)
        })
    }

    /// Commits a group: its answers, then its scores, in one transaction; every request of
    /// the group is answered with what the commit came to.
    fn save(&mut self, group: &mut Group) {
        if group.answers.is_empty() && group.scores.is_empty() {
            return;
        }
        let Group {
            answers, scores, ..
        } = std::mem::take(group);
        let (rs, acks): (Vec<_>, Vec<_>) = answers.into_iter().unzip();
        // A worker's own scores are saved only for the answers it stored (an answer of its
        // that was dropped keeps its score out too); scores of answers read back from the
        // store are those answers', whoever stored them.
        let (mut own, mut stored, mut score_acks) = (Vec::new(), Vec::new(), Vec::new());
        for (rs, of_stored, ack) in scores {
            if of_stored { &mut stored } else { &mut own }.extend(rs);
            score_acks.push(ack);
        }
        let workers: Vec<Option<String>> = rs
            .iter()
            .map(|r| {
                self.joined
                    .contains(&r.run_id)
                    .then(|| self.shared.worker.clone())
            })
            .collect();
        let (joined, worker) = (&self.joined, self.shared.worker.clone());
        let owner = |run: &str| joined.contains(run).then(|| worker.clone());
        let result = self.conn.prepare(pg_runs::SAVE).and_then(|ins| {
            let jobs = self.conn.prepare(pg_runs::SAVE_JOBS)?;
            self.conn.with(|c| {
                let mut tx = c.transaction()?;
                // Every group the scores touch, locked first, in one order, before any answer
                // or score is written (see `summaries::pg::lock`).
                super::summaries::pg::lock(
                    &mut tx,
                    &super::summaries::Touched::of(own.iter().chain(&stored)),
                )?;
                let dropped = if rs.is_empty() {
                    0
                } else {
                    pg_runs::save_responses(&mut tx, (&ins, &jobs), &rs, &workers)?
                };
                if !own.is_empty() {
                    pg_runs::save_scores(&mut tx, &own, &owner)?;
                }
                if !stored.is_empty() {
                    pg_runs::save_scores(&mut tx, &stored, &|_| None)?;
                }
                tx.commit()?;
                Ok(dropped)
            })
        });
        if let Ok(dropped) = &result {
            self.shared
                .dropped
                .fetch_add(*dropped as u64, Ordering::Relaxed);
        }
        let result = result.map(|_| ());
        for ack in acks.into_iter().chain(score_acks) {
            let _ = ack.send(result.clone());
        }
    }

    fn handle(&mut self, cmd: Cmd) {
        let worker = self.shared.worker.clone();
        match cmd {
            // The handle sends these to their own threads.
            Cmd::CacheGet(_, reply) => {
                let _ = reply.send(None);
            }
            Cmd::Lease { reply, .. } => {
                let _ = reply.send(Err(WriteError::Stopped));
            }
            Cmd::CachePut(key, v, reply) => {
                let _ = reply.send(self.conn.with(|c| pg_runs::cache_put(c, &key, &v)));
            }
            Cmd::CreateRun(run, jobs, reply) => {
                let r = match super::runs::RunRow::of(&run) {
                    Ok(row) => {
                        let jobs: Vec<_> = jobs
                            .iter()
                            .map(|j| super::runs::JobRow::pending(&run.id, j))
                            .collect();
                        self.conn.with(|c| pg_runs::create_run(c, &row, &jobs))
                    }
                    Err(e) => Err(WriteError::from(e)),
                };
                let _ = reply.send(r);
            }
            Cmd::SetStatus(run, status, reply) => {
                let _ = reply.send(self.conn.with(|c| pg_runs::set_status(c, &run, status)));
            }
            Cmd::Save(..) | Cmd::SaveScores(..) | Cmd::SaveStoredScores(..) => {
                unreachable!("grouped by the loop")
            }
            // Joining a run: every worker may; what one works on is what it leases.
            Cmd::Lock(Lock::Take { run, .. }, reply) => {
                let r = self.conn.with(|c| pg_runs::join(c, &run, &worker));
                if r.is_ok() {
                    self.ever.insert(run.clone());
                    self.joined.insert(run);
                }
                let _ = reply.send(r.map(Ok));
            }
            // The leases are renewed by this thread for as long as the worker lives.
            Cmd::Lock(Lock::Beat { .. }, reply) => {
                let _ = reply.send(Ok(Ok(())));
            }
            Cmd::Lock(Lock::Release { run, .. }, reply) => {
                self.joined.remove(&run);
                let _ = reply.send(
                    self.conn
                        .with(|c| pg_runs::release(c, &run, &worker))
                        .map(Ok),
                );
            }
            Cmd::MaxPages(_, reply) => {
                let _ = reply.send(Ok(()));
            }
            Cmd::Rows(t, rows, ack) => {
                let r = self
                    .conn
                    .with(|c| super::lane_tables::pg::put(c, &[(t, rows)], true));
                let _ = ack.send(r.map(|_| ()));
            }
            Cmd::Detect(_, ack) | Cmd::Selfcheck(_, ack) => {
                let _ = ack.send(Err(WriteError::from(StoreError::Shared(
                    "detection and self-detection runs are kept in a SQLite store".into(),
                ))));
            }
        }
    }
}
