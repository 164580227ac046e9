//! The store's writer thread and its async handle.
//!
//! SQLite connections are not shared between threads, and a commit is blocking I/O that must not
//! stall the async runtime. One thread owns the connection; requests queue on a channel. The
//! thread takes everything queued, saves it in one transaction, and answers each request only
//! after the commit.
//!
//! Checkpoints (copying the WAL into the database file, then syncing it) run on a thread of
//! their own with its own connection: done by the writer after a commit, as SQLite does by
//! default, a checkpoint held up every save and cache lookup queued behind it for as long as it
//! took to copy 16 MB and sync. The writer still checkpoints past a much larger WAL, a backstop
//! for when the background checkpoints cannot finish because the writer keeps appending.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::mpsc;
use std::thread;
use std::time::{Duration, Instant};

use tokio::sync::oneshot;

use super::lane_push::PushMsg;
use super::lane_tables::{Row, Table, Touched, touched_by_detect, touched_by_selfcheck};

use super::{
    Cached, DetectWrite, JobRecord, ResponseRecord, RunRecord, RunStatus, ScoreRecord,
    SelfcheckWrite, Store,
};

pub(super) enum Cmd {
    Save(ResponseRecord, oneshot::Sender<WriteResult<()>>),
    /// Detection writes are group-committed like responses (14 calls per claim add up).
    Detect(DetectWrite, oneshot::Sender<WriteResult<()>>),
    Selfcheck(SelfcheckWrite, oneshot::Sender<WriteResult<()>>),
    /// Rows of a described table (`store::record`), each replacing the row of its key:
    /// group-committed like answers, and told to the pusher as they commit.
    Rows(&'static Table, Vec<Row>, oneshot::Sender<WriteResult<()>>),
    CacheGet(String, oneshot::Sender<Option<Cached>>),
    CreateRun(RunRecord, Vec<JobRecord>, oneshot::Sender<WriteResult<()>>),
    SetStatus(String, RunStatus, oneshot::Sender<WriteResult<()>>),
    CachePut(String, Cached, oneshot::Sender<WriteResult<()>>),
    SaveScores(Vec<ScoreRecord>, oneshot::Sender<WriteResult<()>>),
    /// Scores of answers read back from the store (a resumed run scoring what its last
    /// process left unscored): on a shared store, saved whichever worker stored the answer.
    SaveStoredScores(Vec<ScoreRecord>, oneshot::Sender<WriteResult<()>>),
    Lock(Lock, oneshot::Sender<WriteResult<Result<(), super::Held>>>),
    /// A store size limit, in pages (tests make a full disk with it).
    MaxPages(u64, oneshot::Sender<WriteResult<()>>),
    /// Lease up to n jobs of a model in a shared run (PostgreSQL only: `pg_writer`).
    Lease {
        run: String,
        model: String,
        n: usize,
        reply: oneshot::Sender<WriteResult<super::pg_runs::Leased>>,
    },
}

/// What to do with a run's lock.
pub(super) enum Lock {
    Take { run: String, owner: String },
    Beat { run: String, owner: String },
    Release { run: String, owner: String },
}

/// A cheap, cloneable handle to the writer thread.
#[derive(Clone)]
pub struct StoreHandle {
    pub(super) tx: mpsc::Sender<Cmd>,
    pub path: Option<PathBuf>,
    /// On a shared store (PostgreSQL): what its workers share, and this worker's counts.
    pub(super) shared: Option<std::sync::Arc<super::worker::Shared>>,
    /// On a shared store, the threads cache lookups and leases go to directly (a job waits on
    /// them before its call; behind the writer they would wait for its commits).
    pub(super) lookups: Option<std::sync::Arc<super::pg_lookups::Lookups>>,
    pub(super) leases: Option<mpsc::Sender<Cmd>>,
}

impl StoreHandle {
    /// Starts the writer thread on an opened store (and, for a store on disk at `path`, the
    /// checkpoint thread).
    pub fn spawn(store: Store, path: Option<PathBuf>) -> StoreHandle {
        Self::spawn_pushing(store, path, None)
    }

    /// The same, telling `push` which lane rows each commit changed (a lane's run on a shared
    /// store, worked on here and pushed there: `store::lane_push`).
    pub fn spawn_pushing(
        store: Store,
        path: Option<PathBuf>,
        push: Option<mpsc::Sender<PushMsg>>,
    ) -> StoreHandle {
        let (tx, rx) = mpsc::channel::<Cmd>();
        let checkpoints = path.as_deref().and_then(|p| start_checkpointer(p, &store));
        thread::Builder::new()
            .name("prism-store".into())
            .spawn(move || writer_loop(store, rx, checkpoints, push))
            .expect("spawning the store thread");
        StoreHandle {
            tx,
            path,
            shared: None,
            lookups: None,
            leases: None,
        }
    }

    /// Whether this is a shared store (PostgreSQL), where workers lease a run's jobs
    /// ([`StoreHandle::lease`]) instead of one process holding the whole run.
    pub fn is_shared(&self) -> bool {
        self.shared.is_some()
    }

    /// On a shared store: answers this worker made that were dropped because another
    /// worker's answer to the same job was stored first (a lease that ran out and was
    /// retaken), and jobs it retook from a worker whose lease ran out.
    pub fn shared_counts(&self) -> Option<super::worker::SharedCounts> {
        self.shared.as_ref().map(|s| s.counts())
    }

    /// Leases up to `n` of `model`'s pending jobs in the shared run `run` for this worker (it
    /// must have taken the run's lock: joined it).
    pub async fn lease(
        &self,
        run: &str,
        model: &str,
        n: usize,
    ) -> WriteResult<super::pg_runs::Leased> {
        let (tx, rx) = oneshot::channel();
        self.leases
            .as_ref()
            .unwrap_or(&self.tx)
            .send(Cmd::Lease {
                run: run.into(),
                model: model.into(),
                n,
                reply: tx,
            })
            .map_err(|_| WriteError::Stopped)?;
        rx.await.map_err(|_| WriteError::Stopped)?
    }

    /// Saves one response; returns once it is committed.
    pub async fn save(&self, r: ResponseRecord) -> WriteResult<()> {
        let (tx, rx) = oneshot::channel();
        self.tx
            .send(Cmd::Save(r, tx))
            .map_err(|_| WriteError::Stopped)?;
        rx.await.map_err(|_| WriteError::Stopped)?
    }

    /// Saves one response and its score (a rule's, known the moment the answer is) together:
    /// both join the same group commit, so a stored answer scored by rule is never without its
    /// score. Returns once committed, what the answer and the score each came to (a score that
    /// cannot be saved loses no answer).
    pub async fn save_scored(
        &self,
        r: ResponseRecord,
        score: ScoreRecord,
    ) -> (WriteResult<()>, WriteResult<()>) {
        let (tx, rx) = oneshot::channel();
        let (stx, srx) = oneshot::channel();
        // One after the other on the one channel: the writer takes them into the same group,
        // the answer first (as PostgreSQL's writer keeps them in order too).
        if self.tx.send(Cmd::Save(r, tx)).is_err()
            || self.tx.send(Cmd::SaveScores(vec![score], stx)).is_err()
        {
            return (Err(WriteError::Stopped), Err(WriteError::Stopped));
        }
        let answered = rx.await.unwrap_or(Err(WriteError::Stopped));
        let scored = srx.await.unwrap_or(Err(WriteError::Stopped));
        (answered, scored)
    }

    /// Applies one self-detection write; returns once it is committed.
    pub async fn selfcheck(&self, w: SelfcheckWrite) -> WriteResult<()> {
        let (tx, rx) = oneshot::channel();
        self.tx
            .send(Cmd::Selfcheck(w, tx))
            .map_err(|_| WriteError::Stopped)?;
        rx.await.map_err(|_| WriteError::Stopped)?
    }

    /// Applies one detection write; returns once it is committed.
    pub async fn detect(&self, w: DetectWrite) -> WriteResult<()> {
        let (tx, rx) = oneshot::channel();
        self.tx
            .send(Cmd::Detect(w, tx))
            .map_err(|_| WriteError::Stopped)?;
        rx.await.map_err(|_| WriteError::Stopped)?
    }

    /// Saves records of a described table (each replacing the row of its key); returns once
    /// they are committed. Every lane that keeps records (topics, entropy's verdicts, answer
    /// checks, quality scores) saves through here: one write path, pushed to a shared store
    /// as it commits.
    pub async fn save_records<R: super::record::Record>(&self, recs: &[R]) -> WriteResult<()> {
        let (tx, rx) = oneshot::channel();
        let rows = recs.iter().map(super::record::Record::to_row).collect();
        self.tx
            .send(Cmd::Rows(R::table(), rows, tx))
            .map_err(|_| WriteError::Stopped)?;
        rx.await.map_err(|_| WriteError::Stopped)?
    }

    pub async fn cache_get(&self, key: String) -> Option<Cached> {
        if let Some(l) = &self.lookups {
            return l.get(&key).await;
        }
        let (tx, rx) = oneshot::channel();
        self.tx.send(Cmd::CacheGet(key, tx)).ok()?;
        rx.await.ok().flatten()
    }

    pub async fn create_run(&self, run: RunRecord, jobs: Vec<JobRecord>) -> WriteResult<()> {
        let (tx, rx) = oneshot::channel();
        self.tx
            .send(Cmd::CreateRun(run, jobs, tx))
            .map_err(|_| WriteError::Stopped)?;
        rx.await.map_err(|_| WriteError::Stopped)?
    }

    pub async fn cache_put(&self, key: String, c: Cached) -> WriteResult<()> {
        let (tx, rx) = oneshot::channel();
        self.tx
            .send(Cmd::CachePut(key, c, tx))
            .map_err(|_| WriteError::Stopped)?;
        rx.await.map_err(|_| WriteError::Stopped)?
    }

    /// Saves scores; returns once they are committed.
    pub async fn save_scores(&self, rs: Vec<ScoreRecord>) -> WriteResult<()> {
        let (tx, rx) = oneshot::channel();
        self.tx
            .send(Cmd::SaveScores(rs, tx))
            .map_err(|_| WriteError::Stopped)?;
        rx.await.map_err(|_| WriteError::Stopped)?
    }

    /// Saves scores of answers read back from the store (see [`Cmd::SaveStoredScores`]).
    pub async fn save_stored_scores(&self, rs: Vec<ScoreRecord>) -> WriteResult<()> {
        let (tx, rx) = oneshot::channel();
        self.tx
            .send(Cmd::SaveStoredScores(rs, tx))
            .map_err(|_| WriteError::Stopped)?;
        rx.await.map_err(|_| WriteError::Stopped)?
    }

    /// Takes the run's lock for this process (`owner` is unique to it).
    pub async fn lock_run(&self, run: &str, owner: &str) -> WriteResult<Result<(), super::Held>> {
        self.lock(Lock::Take {
            run: run.into(),
            owner: owner.into(),
        })
        .await
    }

    /// Refreshes the run's lock; `Ok(false)` when this process no longer holds it.
    pub async fn heartbeat_run(&self, run: &str, owner: &str) -> WriteResult<bool> {
        self.lock(Lock::Beat {
            run: run.into(),
            owner: owner.into(),
        })
        .await
        .map(|r| r.is_ok())
    }

    pub async fn unlock_run(&self, run: &str, owner: &str) -> WriteResult<()> {
        self.lock(Lock::Release {
            run: run.into(),
            owner: owner.into(),
        })
        .await
        .map(|_| ())
    }

    async fn lock(&self, l: Lock) -> WriteResult<Result<(), super::Held>> {
        let (tx, rx) = oneshot::channel();
        self.tx
            .send(Cmd::Lock(l, tx))
            .map_err(|_| WriteError::Stopped)?;
        rx.await.map_err(|_| WriteError::Stopped)?
    }

    /// Limits the store to `pages` pages (SQLite's `max_page_count`): past it every write fails
    /// as a full disk would. For tests of what a full disk does.
    #[doc(hidden)]
    pub async fn set_max_pages(&self, pages: u64) -> WriteResult<()> {
        let (tx, rx) = oneshot::channel();
        self.tx
            .send(Cmd::MaxPages(pages, tx))
            .map_err(|_| WriteError::Stopped)?;
        rx.await.map_err(|_| WriteError::Stopped)?
    }

    pub async fn set_status(&self, run_id: &str, status: RunStatus) -> WriteResult<()> {
        let (tx, rx) = oneshot::channel();
        self.tx
            .send(Cmd::SetStatus(run_id.into(), status, tx))
            .map_err(|_| WriteError::Stopped)?;
        rx.await.map_err(|_| WriteError::Stopped)?
    }
}

type Ack = oneshot::Sender<WriteResult<()>>;

/// Saves waiting for one commit.
#[derive(Default)]
struct Batch {
    /// Runs this process holds the lock of (run → owner token). A write for such a run is
    /// made only while the lock is still ours: a process that stalled past the lock's staleness
    /// (SIGSTOP, a suspended laptop) and lost it to a `--resume` elsewhere must not go on
    /// writing that run beside the new holder.
    fences: HashMap<String, String>,
    records: Vec<ResponseRecord>,
    acks: Vec<Ack>,
    detect: Vec<DetectWrite>,
    detect_acks: Vec<Ack>,
    selfcheck: Vec<SelfcheckWrite>,
    selfcheck_acks: Vec<Ack>,
    rows: Vec<(&'static Table, Vec<Row>)>,
    rows_acks: Vec<Ack>,
    /// Scores, saved in the answers' transaction (after them).
    scores: Vec<Vec<ScoreRecord>>,
    scores_acks: Vec<Ack>,
    /// Where a lane's committed rows are told (a lane's run on a shared store).
    push: Option<mpsc::Sender<PushMsg>>,
}

/// WAL pages past which the writer checkpoints by itself (64 MB).
const WRITER_CHECKPOINT_BACKSTOP: i64 = 16_384;
/// The least time between two background checkpoints: each one ends with a sync of the file.
const CHECKPOINT_EVERY: Duration = Duration::from_millis(250);

/// Starts the checkpoint thread for the store at `path`; returns how to tell it a commit
/// happened. `None` (the writer keeps checkpointing as SQLite does by default) if its connection
/// cannot be opened.
fn start_checkpointer(path: &Path, store: &Store) -> Option<mpsc::SyncSender<()>> {
    let conn = rusqlite::Connection::open(path).ok()?;
    store
        .set_wal_autocheckpoint(WRITER_CHECKPOINT_BACKSTOP)
        .ok()?;
    // One pending notice is enough: a checkpoint covers every commit before it.
    let (tx, rx) = mpsc::sync_channel::<()>(1);
    thread::Builder::new()
        .name("prism-checkpoint".into())
        .spawn(move || {
            // It ends when the writer does (its sender dropped).
            while rx.recv().is_ok() {
                let t = Instant::now();
                // PASSIVE: never waits for readers or the writer; what it cannot copy now is
                // copied next time.
                let _ = conn.query_row("PRAGMA wal_checkpoint(PASSIVE)", [], |_| Ok(()));
                thread::sleep(CHECKPOINT_EVERY.saturating_sub(t.elapsed()));
            }
        })
        .ok()?;
    Some(tx)
}

fn writer_loop(
    mut store: Store,
    rx: mpsc::Receiver<Cmd>,
    checkpoints: Option<mpsc::SyncSender<()>>,
    push: Option<mpsc::Sender<PushMsg>>,
) {
    let mut batch = Batch {
        push,
        ..Batch::default()
    };
    let mut last_saves = 0;
    while let Ok(first) = rx.recv() {
        // Group commit: everything already waiting goes into one transaction. While answers
        // arrive steadily, also what arrives within GATHER of the first: a commit writes whole
        // pages (the last page of the table again, a page of the key index per answer), so
        // larger groups write fewer pages per answer. Lookups are answered as they come.
        let gather = (last_saves >= BUSY).then(|| Instant::now() + GATHER);
        let mut next = Some(first);
        let mut taken = 0;
        while let Some(cmd) = next {
            handle(&mut store, &mut batch, cmd);
            taken += 1;
            if taken >= 4096 {
                break;
            }
            next = match rx.try_recv() {
                Ok(c) => Some(c),
                Err(_) => gather.and_then(|until| {
                    let left = until.saturating_duration_since(Instant::now());
                    rx.recv_timeout(left).ok()
                }),
            };
        }
        last_saves = batch.records.len();
        flush(&mut store, &mut batch);
        if let Some(c) = &checkpoints {
            let _ = c.try_send(());
        }
    }
}

/// Saves in the last group from which the writer waits for more before committing.
const BUSY: usize = 16;
/// How long it then waits, from the group's first command.
const GATHER: Duration = Duration::from_millis(2);

/// One command: a save joins the group; a lookup is answered now; anything else commits the
/// group first (to keep order) and is done at once.
fn handle(store: &mut Store, batch: &mut Batch, cmd: Cmd) {
    match cmd {
        Cmd::Save(r, ack) => {
            batch.records.push(r);
            batch.acks.push(ack);
        }
        Cmd::Detect(w, ack) => {
            batch.detect.push(w);
            batch.detect_acks.push(ack);
        }
        Cmd::Selfcheck(w, ack) => {
            batch.selfcheck.push(w);
            batch.selfcheck_acks.push(ack);
        }
        Cmd::Rows(t, rows, ack) => {
            batch.rows.push((t, rows));
            batch.rows_acks.push(ack);
        }
        // Scores join the group too: a run scores every answer as it lands, and a commit of
        // their own (after committing the answers before them) was a second commit per group.
        Cmd::SaveScores(rs, ack) | Cmd::SaveStoredScores(rs, ack) => {
            batch.scores.push(rs);
            batch.scores_acks.push(ack);
        }
        // A lookup does not commit what is pending (each job looks up the cache before
        // it asks, so flushing here would turn group commits back into one per job): a
        // pending save with the key answers it, as the committed row would.
        Cmd::CacheGet(key, reply) => {
            let pending = batch
                .records
                .iter()
                .rev()
                .find(|r| r.cache_key.as_deref() == Some(key.as_str()) && r.is_ok());
            let hit = match pending {
                Some(r) => r.text.clone().map(|text| Cached {
                    text,
                    finish_reason: r.finish_reason.clone(),
                    prompt_tokens: r.prompt_tokens,
                    completion_tokens: r.completion_tokens,
                    latency_ms: r.latency_ms,
                    logprobs: r.logprobs.clone(),
                }),
                None => store.cache_get(&key).ok().flatten(),
            };
            let _ = reply.send(hit);
        }
        other => {
            // Keep order: anything else waits for the saves queued before it.
            flush(store, batch);
            match other {
                Cmd::CreateRun(run, jobs, reply) => {
                    let _ = reply.send(store.create_run(&run, &jobs).map_err(WriteError::from));
                }
                Cmd::SetStatus(id, status, reply) => {
                    let _ = reply.send(store.set_run_status(&id, status).map_err(WriteError::from));
                }
                Cmd::CachePut(key, c, reply) => {
                    let r = store.cache_put(&key, &c).map_err(WriteError::from);
                    // A judge's reply reaches the shared store as it is kept, so the team
                    // asks each question once.
                    if r.is_ok()
                        && let Some(p) = &batch.push
                    {
                        let _ = p.send(PushMsg::Touched(vec![Touched::Row(
                            &super::tables::CACHE,
                            vec![super::lane_tables::Val::Text(key)],
                        )]));
                    }
                    let _ = reply.send(r);
                }
                Cmd::Lock(l, reply) => {
                    let now = super::now_secs();
                    let r = match l {
                        Lock::Take { run, owner } => {
                            let who = super::Holder {
                                owner: owner.clone(),
                                host: super::host_name(),
                                pid: i64::from(std::process::id()),
                            };
                            let r = store.lock_run(&run, &who, now, super::pid_alive);
                            if matches!(r, Ok(Ok(()))) {
                                batch.fences.insert(run, owner);
                            }
                            r
                        }
                        Lock::Beat { run, owner } => {
                            store.heartbeat_run(&run, &owner, now).map(|held| {
                                if held {
                                    Ok(())
                                } else {
                                    Err(super::Held { pid: 0, age: 0 })
                                }
                            })
                        }
                        Lock::Release { run, owner } => {
                            batch.fences.remove(&run);
                            store.unlock_run(&run, &owner).map(Ok)
                        }
                    };
                    let _ = reply.send(r.map_err(WriteError::from));
                }
                Cmd::MaxPages(n, reply) => {
                    let _ = reply.send(store.set_max_pages(n).map_err(WriteError::from));
                }
                Cmd::Lease { reply, .. } => {
                    let _ = reply.send(Err(WriteError::from(super::StoreError::Shared(
                        "jobs are leased only on a shared (PostgreSQL) store".into(),
                    ))));
                }
                Cmd::Save(..)
                | Cmd::Detect(..)
                | Cmd::Selfcheck(..)
                | Cmd::Rows(..)
                | Cmd::SaveScores(..)
                | Cmd::SaveStoredScores(..)
                | Cmd::CacheGet(..) => {
                    unreachable!("handled above")
                }
            }
        }
    }
}

/// The error a write gets when its run's lock was taken over: the writer of that run is now
/// another process, so this one stops instead of writing beside it.
pub const LOST_LOCK: &str = "this process lost the run's lock";

/// Why a write did not land. Cloneable: a group commit answers every write in it with the same
/// outcome.
#[derive(Debug, Clone, thiserror::Error)]
pub enum WriteError {
    #[error("store thread stopped")]
    Stopped,
    /// The run's lock was taken over (see [`LOST_LOCK`]).
    #[error("{LOST_LOCK} (another prism took it over after this one stalled)")]
    LostLock,
    #[error("{0}")]
    Store(std::sync::Arc<super::StoreError>),
}

impl From<super::StoreError> for WriteError {
    fn from(e: super::StoreError) -> WriteError {
        WriteError::Store(std::sync::Arc::new(e))
    }
}

impl WriteError {
    pub fn is_lost_lock(&self) -> bool {
        matches!(self, WriteError::LostLock)
    }
}

/// What the writer answers.
pub type WriteResult<T> = std::result::Result<T, WriteError>;

/// Whether this process still holds `run`'s lock (always, for a run it never locked). Asked
/// once per run per group commit; a store that cannot answer counts as held, so the write
/// itself fails and is retried as any failed write is.
fn still_ours(
    store: &Store,
    fences: &HashMap<String, String>,
    memo: &mut HashMap<String, bool>,
    run: &str,
) -> bool {
    let Some(owner) = fences.get(run) else {
        return true;
    };
    *memo
        .entry(run.to_string())
        .or_insert_with(|| match store.lock_owner(run) {
            Ok(now) => now.as_deref() == Some(owner.as_str()),
            Err(_) => true,
        })
}

/// Sends `LOST_LOCK` to the writes of runs no longer ours and keeps the rest, in order.
fn fence<T>(
    store: &Store,
    fences: &HashMap<String, String>,
    memo: &mut HashMap<String, bool>,
    writes: &mut Vec<T>,
    acks: &mut Vec<Ack>,
    run_of: impl Fn(&T) -> Option<&str>,
) {
    if fences.is_empty() {
        return;
    }
    let (mut keep, mut keep_acks) = (Vec::with_capacity(writes.len()), Vec::new());
    for (w, ack) in writes.drain(..).zip(acks.drain(..)) {
        if run_of(&w).is_none_or(|r| still_ours(store, fences, memo, r)) {
            keep.push(w);
            keep_acks.push(ack);
        } else {
            let _ = ack.send(Err(WriteError::LostLock));
        }
    }
    *writes = keep;
    *acks = keep_acks;
}

/// Saves a group's answers and scores in one transaction. Should that fail, each is tried on
/// its own, as before they shared one: a score that cannot be saved must not take the answers
/// with it (an answer lost is a call paid for again). Returns what the answers and the scores
/// each came to.
pub(super) fn save_answers_and_scores(
    store: &mut Store,
    records: &[ResponseRecord],
    scores: &[ScoreRecord],
) -> (WriteResult<()>, WriteResult<()>) {
    match store.save_responses_and_scores(records, scores) {
        Ok(()) => (Ok(()), Ok(())),
        Err(e) if records.is_empty() || scores.is_empty() => {
            let e = WriteError::from(e);
            (Err(e.clone()), Err(e))
        }
        Err(_) => (
            store.save_responses(records).map_err(WriteError::from),
            store.save_scores(scores).map_err(WriteError::from),
        ),
    }
}

fn flush(store: &mut Store, batch: &mut Batch) {
    // A lane's rows are told to the pusher before the lane hears they are saved, so a lane
    // that ends has told it everything.
    let push = batch.push.clone();
    let tell = |ts: Vec<Touched>| {
        if let Some(p) = &push {
            let _ = p.send(PushMsg::Touched(ts));
        }
    };
    let mut memo = HashMap::new();
    let Batch {
        fences,
        records,
        acks,
        detect,
        detect_acks,
        selfcheck,
        selfcheck_acks,
        rows: _,
        rows_acks: _,
        scores,
        scores_acks,
        push: _,
    } = batch;
    fence(store, fences, &mut memo, records, acks, |r| {
        Some(r.run_id.as_str())
    });
    fence(store, fences, &mut memo, detect, detect_acks, |w| {
        w.run_id()
    });
    fence(store, fences, &mut memo, selfcheck, selfcheck_acks, |w| {
        w.run_id()
    });
    // Scores too: an answer refused for a lock this process lost takes its score with it.
    fence(store, fences, &mut memo, scores, scores_acks, |rs| {
        rs.first().map(|r| r.run_id.as_str())
    });
    if !batch.records.is_empty() || !batch.scores.is_empty() {
        let scores: Vec<ScoreRecord> = batch.scores.drain(..).flatten().collect();
        let (answered, scored) = save_answers_and_scores(store, &batch.records, &scores);
        batch.records.clear();
        for ack in batch.acks.drain(..) {
            let _ = ack.send(answered.clone());
        }
        // Told to the pusher as they commit (a shared store gets every score as it is saved).
        if scored.is_ok() && !scores.is_empty() {
            let mut by_run: HashMap<&str, Vec<u32>> = HashMap::new();
            for s in &scores {
                by_run.entry(&s.run_id).or_default().push(s.job_idx);
            }
            tell(
                by_run
                    .into_iter()
                    .map(|(run, jobs)| Touched::Scores(run.to_string(), jobs))
                    .collect(),
            );
        }
        for ack in batch.scores_acks.drain(..) {
            let _ = ack.send(scored.clone());
        }
    }
    if !batch.selfcheck.is_empty() {
        let result = store
            .apply_selfcheck(&batch.selfcheck)
            .map_err(WriteError::from);
        if result.is_ok() {
            tell(batch.selfcheck.iter().map(touched_by_selfcheck).collect());
        }
        batch.selfcheck.clear();
        for ack in batch.selfcheck_acks.drain(..) {
            let _ = ack.send(result.clone());
        }
    }
    if !batch.rows.is_empty() {
        let rows = std::mem::take(&mut batch.rows);
        let refs: Vec<(&Table, Vec<Row>)> = rows.iter().map(|(t, r)| (*t, r.clone())).collect();
        let result = store
            .put_lane_rows(&refs, true)
            .map(|_| ())
            .map_err(WriteError::from);
        if result.is_ok() {
            tell(
                rows.iter()
                    .flat_map(|(t, rs)| rs.iter().map(|r| Touched::Row(t, t.key_of(r))))
                    .collect(),
            );
        }
        for ack in batch.rows_acks.drain(..) {
            let _ = ack.send(result.clone());
        }
    }
    if !batch.detect.is_empty() {
        let result = store.apply_detect(&batch.detect).map_err(WriteError::from);
        if result.is_ok() {
            tell(batch.detect.iter().map(touched_by_detect).collect());
        }
        batch.detect.clear();
        for ack in batch.detect_acks.drain(..) {
            let _ = ack.send(result.clone());
        }
    }
}
