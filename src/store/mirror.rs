//! A local mirror of a shared store's runs: a SQLite file every reading part of prism (the
//! TUI's screens, reports, scoring) reads as it reads any store, kept current by pulling what
//! changed on the shared store. Answers and scores there carry a change number (`seq`); the
//! mirror pulls those past the last it saw, run statuses, and a new run in two steps: its head
//! first (row, labels, summaries and job counts, as the shared store keeps them: every list and
//! rate is whole from the first pull), then its jobs with their answers and scores, a page at a
//! time, in the background (`store::mirror_pending`; a stopped session goes on where it was).
//! Every pull is keyed like `prism db copy`, so pulling a row twice changes nothing.
//!
//! Change numbers are taken when a row is written, so a transaction that commits late can make
//! a lower number visible after a higher one: each pull starts [`MARGIN`] numbers before the
//! last seen, and rows already mirrored are skipped.

use std::collections::{HashMap, HashSet};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::thread::JoinHandle;
use std::time::Duration;

use postgres::fallible_iterator::FallibleIterator;

use super::history::History;
use super::lane_tables::{self, LaneKind};
use super::links::{Gate, RunKind};
use super::pg::PgStore;
use super::pg_runs::RUNS_CHANNEL;
use super::{Result, RunStatus, ScoreRecord, Store};

/// How far before the last change seen each pull starts again (see the module's notes).
const MARGIN: i64 = 512;
/// Rows pulled per query.
const PAGE: i64 = 5_000;
/// Jobs of a new run pulled per query (with their answers and scores).
const PAGE_JOBS: u32 = 5_000;
/// Pages of runs held in part a watching mirror pulls before it says what came and looks
/// again (about a second's work: 20,000 jobs).
const STEP_PAGES: usize = 4;

/// What one pull brought.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Pulled {
    pub runs: usize,
    pub answers: usize,
    pub scores: usize,
    /// Runs whose status changed (a run finished).
    pub statuses: usize,
    /// The scores pulled (those already mirrored too: applying one again changes nothing),
    /// for a front-end that keeps scores in memory.
    pub score_records: Vec<ScoreRecord>,
    /// Which worker answered each pulled answer (run, job), where one is recorded.
    pub answered_by: Vec<((String, u32), String)>,
    /// Rows of the other lanes' tables added or moved forward (detection and self-detection
    /// results, answer checks, entailments, topics).
    pub lane_rows: usize,
    /// Rows refused in this pull: they belong to runs that exist only on this machine (never
    /// pulled from or pushed to the shared store).
    pub refused_rows: usize,
    /// Runs held in part are left to pull (a bounded pull stopped; see [`Mirror::pull_some`]).
    pub more: bool,
    /// The runs first refused in this pull (each is named once a session), with their rows.
    pub refused: Vec<(String, usize)>,
    /// Runs held by both stores that a store mirrored before links were kept trusted, once.
    pub trusted: usize,
}

impl Pulled {
    /// Whether anything changed in the mirror.
    pub fn changed(&self) -> bool {
        self.runs + self.answers + self.scores + self.statuses + self.lane_rows > 0
            || !self.refused.is_empty()
    }

    /// What the refusals were, for a message (empty when none were new).
    pub fn refused_words(&self) -> Option<String> {
        if self.refused.is_empty() {
            return None;
        }
        let runs: Vec<String> = self
            .refused
            .iter()
            .take(3)
            .map(|(id, n)| format!("{} ({n} row(s))", crate::text::one_line(id)))
            .collect();
        Some(format!(
            "refused rows for run(s) that exist only on this machine: {}{}",
            runs.join(", "),
            if self.refused.len() > 3 {
                format!(" and {} more", self.refused.len() - 3)
            } else {
                String::new()
            }
        ))
    }
}

pub struct Mirror {
    pg: PgStore,
    store: Store,
    answers_seen: i64,
    scores_seen: i64,
    /// Per lane table, the last change number seen.
    lanes_seen: HashMap<&'static str, i64>,
    started: bool,
    /// Runs whose refused rows were already named this session.
    told: HashSet<(RunKind, String)>,
}

impl Mirror {
    pub fn new(pg: PgStore, store: Store) -> Mirror {
        Mirror {
            pg,
            store,
            answers_seen: 0,
            scores_seen: 0,
            lanes_seen: HashMap::new(),
            started: false,
            told: HashSet::new(),
        }
    }

    /// Pulls what changed since the last pull (the first pull: every run the mirror lacks,
    /// and what changed since the last session that mirrored this store into this one). Rows
    /// are taken only for runs that came from the shared store or went to it
    /// ([`super::links`]); the others are refused and counted.
    pub fn pull(&mut self) -> Result<Pulled> {
        self.pull_some(None)
    }

    /// [`Mirror::pull`], with at most `pages` pages of the runs held in part (`None`: all of
    /// them); [`Pulled::more`] says some are left for the next call.
    pub fn pull_some(&mut self, pages: Option<usize>) -> Result<Pulled> {
        let mut out = Pulled::default();
        let theirs = self.pg.statuses()?;
        let mut gate = Gate::open(&self.store, self.pg.shown())?;
        if gate.legacy {
            out.trusted = gate.trust_legacy(&self.their_runs(&theirs)?);
        }
        if !self.started {
            self.start(&theirs)?;
        }
        let ours: HashMap<String, RunStatus> = self
            .store
            .runs()?
            .into_iter()
            .map(|r| (r.id, r.status))
            .collect();
        for (id, status) in &theirs {
            match ours.get(id) {
                None => {
                    if !gate.admit_run(RunKind::Answers, id) {
                        continue;
                    }
                    gate.save(&mut self.store)?;
                    // The run's head first (its row, labels, summaries and job counts as the
                    // shared store has them): every list and rate shows it at once; its jobs
                    // with their answers and scores follow below, a page at a time.
                    let Some(head) = self.pg.run_bundle_part(id, 0..0)? else {
                        continue;
                    };
                    let sums = History::run_summaries(&self.pg, id)?;
                    let counts = History::job_counts(&self.pg, id)?;
                    if self.store.put_pending_run(&head, &sums, &counts)? {
                        out.runs += 1;
                    }
                }
                Some(s) if s.as_str() != status => {
                    // A status this prism does not know leaves the copy's as it is (named
                    // once by the parse).
                    let theirs = RunStatus::parse(status)?;
                    if theirs != RunStatus::Unknown && gate.admits(RunKind::Answers, id) {
                        self.store.set_run_status(id, theirs)?;
                        out.statuses += 1;
                    }
                }
                Some(_) => {}
            }
        }
        gate.save(&mut self.store)?;
        let running: HashSet<&str> = theirs
            .iter()
            .filter(|(_, s)| s.as_str() == RunStatus::Running.as_str())
            .map(|(id, _)| id.as_str())
            .collect();
        let mut budget = pages.unwrap_or(usize::MAX);
        for (id, lo) in self.store.pending_runs()? {
            if running.contains(id.as_str()) {
                // Still running there: its rates and counts move on before its pages land.
                let sums = History::run_summaries(&self.pg, &id)?;
                let counts = History::job_counts(&self.pg, &id)?;
                self.store.refresh_pending_run(&id, &sums, &counts)?;
            }
            self.pull_pages(&id, lo, &mut budget, &mut out)?;
        }
        gate.save(&mut self.store)?;
        loop {
            let page = self.pg.answers_since(self.answers_seen, PAGE)?;
            let Some(last) = page.last().map(|(seq, _)| *seq) else {
                break;
            };
            let full = page.len() as i64 == PAGE;
            let rs: Vec<_> = page
                .into_iter()
                .map(|(_, r)| r)
                .filter(|r| gate.admits(RunKind::Answers, &r.run_id))
                .collect();
            out.answers += self.store.put_answers(&rs)?;
            let mut by_run: HashMap<&str, Vec<u32>> = HashMap::new();
            for r in &rs {
                by_run.entry(&r.run_id).or_default().push(r.job_idx);
            }
            for (run, idxs) in by_run {
                for (idx, w) in self.pg.job_workers(run, &idxs)? {
                    out.answered_by.push(((run.to_string(), idx), w));
                }
            }
            if !full {
                self.answers_seen = self.answers_seen.max(last - MARGIN);
                break;
            }
            self.answers_seen = last;
        }
        loop {
            let page = self.pg.scores_since(self.scores_seen, PAGE)?;
            let Some(last) = page.last().map(|(seq, _)| *seq) else {
                break;
            };
            let full = page.len() as i64 == PAGE;
            let rs: Vec<_> = page
                .into_iter()
                .map(|(_, r)| r)
                .filter(|r| gate.admits(RunKind::Answers, &r.run_id))
                .collect();
            out.scores += self.store.put_new_scores(&rs)?;
            out.score_records.extend(rs);
            if !full {
                self.scores_seen = self.scores_seen.max(last - MARGIN);
                break;
            }
            self.scores_seen = last;
        }
        out.statuses += self.pull_labels(&mut gate)?;
        out.lane_rows = self.pull_lanes(&mut gate)?;
        gate.save(&mut self.store)?;
        self.save_marks()?;
        for (kind, id, rows) in gate.take_refused() {
            out.refused_rows += rows;
            if self.told.insert((kind, id.clone())) {
                out.refused.push((id, rows));
            }
        }
        Ok(out)
    }

    /// Pages of run `id`'s jobs (with their answers and scores) from job `lo`, while `budget`
    /// lasts; the last page makes the run whole (see `store::mirror_pending`).
    fn pull_pages(
        &mut self,
        id: &str,
        mut lo: u32,
        budget: &mut usize,
        out: &mut Pulled,
    ) -> Result<()> {
        loop {
            if *budget == 0 {
                out.more = true;
                return Ok(());
            }
            *budget -= 1;
            let Some(b) = self
                .pg
                .run_bundle_part(id, lo..lo.saturating_add(PAGE_JOBS))?
            else {
                // Gone from the shared store: what came of it is all there is.
                return self.store.finish_pending_run(id);
            };
            if b.jobs.is_empty() && b.responses.is_empty() {
                return self.store.finish_pending_run(id);
            }
            let added = self.store.put_run_bundle(&b)?;
            out.answers += added.responses;
            out.scores += added.scores;
            let idxs: Vec<u32> = b.jobs.iter().map(|(j, _)| j.idx).collect();
            for (idx, w) in self.pg.job_workers(id, &idxs)? {
                out.answered_by.push(((id.to_string(), idx), w));
            }
            out.score_records.extend(b.scores);
            lo = lo.saturating_add(PAGE_JOBS);
            self.store.advance_pending_run(id, lo)?;
            if lo == u32::MAX {
                return self.store.finish_pending_run(id);
            }
        }
    }

    /// Every run the shared store holds, of every kind (for the one-time trust of a store
    /// mirrored before links were kept).
    fn their_runs(&self, theirs: &[(String, String)]) -> Result<Vec<(RunKind, String)>> {
        let mut all: Vec<(RunKind, String)> = theirs
            .iter()
            .map(|(id, _)| (RunKind::Answers, id.clone()))
            .collect();
        for kind in LaneKind::ALL {
            for (id, _) in self.pg.lane_statuses(kind)? {
                all.push((RunKind::of_lane(kind), id));
            }
        }
        Ok(all)
    }

    /// Names and tags given on the shared store (`prism runs name|tag --db URL`) to the runs
    /// this store mirrors; how many changed.
    fn pull_labels(&mut self, gate: &mut Gate) -> Result<usize> {
        let ours = self.store.all_labels()?;
        let mut n = 0;
        for (id, name, tags) in self.pg.labels()? {
            if !gate.is_linked(RunKind::Answers, &id) {
                continue;
            }
            match ours.get(&id) {
                Some((n0, t0)) if (n0, t0) != (&name, &tags) => {
                    self.store.set_run_name(&id, name.as_deref())?;
                    self.store.set_run_tags(&id, &tags)?;
                    n += 1;
                }
                _ => {}
            }
        }
        Ok(n)
    }

    /// Where the first pull starts. A store that mirrored this one before goes on from its
    /// marks; a store that has none of the shared runs needs only what changes while they are
    /// copied whole (from the latest change numbers now); a store that has some of them from
    /// elsewhere (a `prism db copy`) pulls every change once. Marks past the shared store's
    /// latest change mean it was made again: everything is pulled once.
    fn start(&mut self, theirs: &[(String, String)]) -> Result<()> {
        let (a, s) = self.pg.max_changes()?;
        let last = self.pg.last_change()?;
        let marks = self.store.mirror_marks(self.pg.shown())?;
        let fresh = {
            let ours: std::collections::HashSet<String> =
                self.store.runs()?.into_iter().map(|r| r.id).collect();
            !theirs.iter().any(|(id, _)| ours.contains(id))
        };
        let from = |what: &str, max: i64| match marks.get(what).copied() {
            Some(m) if m <= last => m,
            Some(_) => 0,
            None if fresh => (max - MARGIN).max(0),
            None => 0,
        };
        self.answers_seen = from("answers", a);
        self.scores_seen = from("scores", s);
        for t in lane_tables::all() {
            // The lanes' rows are not copied whole with a run: without a mark every one is
            // pulled by its change number.
            self.lanes_seen
                .insert(t.name, from(&format!("lane:{}", t.name), 0));
        }
        self.started = true;
        // Kept at once: a session stopped before its first pull ends goes on from here rather
        // than pulling every change of the shared store.
        self.save_marks()
    }

    fn save_marks(&mut self) -> Result<()> {
        let mut marks = vec![
            ("answers".to_string(), self.answers_seen),
            ("scores".to_string(), self.scores_seen),
        ];
        for (t, seen) in &self.lanes_seen {
            marks.push((format!("lane:{t}"), *seen));
        }
        self.store.set_mirror_marks(self.pg.shown(), &marks)
    }

    /// The other lanes' rows changed since the last pull, table by table in the order their
    /// parents come first (a run before its targets), each only moving a row forward.
    fn pull_lanes(&mut self, gate: &mut Gate) -> Result<usize> {
        let mut n = 0;
        for t in lane_tables::all() {
            let mut seen = self.lanes_seen.get(t.name).copied().unwrap_or(0);
            loop {
                let page = self.pg.lane_rows_since(t, seen, PAGE)?;
                let Some(last) = page.last().map(|(seq, _)| *seq) else {
                    break;
                };
                let full = page.len() as i64 == PAGE;
                let rows = gate.lane_rows(t, page.into_iter().map(|(_, r)| r).collect());
                // A new run is linked before its rows land.
                gate.save(&mut self.store)?;
                n += self.store.put_lane_rows(&[(t, rows)], false)?;
                if !full {
                    seen = seen.max(last - MARGIN);
                    break;
                }
                seen = last;
            }
            self.lanes_seen.insert(t.name, seen);
        }
        Ok(n)
    }

    /// Pulls on a thread of its own for as long as the returned watch lives: at once, then
    /// whenever the shared store notifies a save (`LISTEN`), and every [`EVERY`] regardless (a
    /// notification is lost while the listening connection is down). `on_pull` hears every
    /// pull that changed something, `on_error` each failure (once until a pull works again).
    pub fn watch(
        mut self,
        on_pull: impl Fn(Pulled) + Send + 'static,
        on_error: impl Fn(String) + Send + 'static,
    ) -> std::io::Result<MirrorWatch> {
        let stop = Arc::new(AtomicBool::new(false));
        let flag = stop.clone();
        let cfg = self.pg.connect_config();
        let thread = std::thread::Builder::new()
            .name("prism-mirror".into())
            .spawn(move || {
                let mut listener: Option<postgres::Client> = None;
                // Since when pulls fail, and whether that was said: a connection dropped and
                // made again (a server restarted) is not news; an outage longer than
                // `QUIET_OUTAGE` is, once.
                let (mut failing_since, mut said) = (None::<std::time::Instant>, false);
                while !flag.load(Ordering::Relaxed) {
                    // A few pages of a run held in part at a time, so what came shows on the
                    // way, and a stop is heard between them.
                    let mut more = false;
                    match self.pull_some(Some(STEP_PAGES)) {
                        Ok(p) => {
                            (failing_since, said) = (None, false);
                            more = p.more;
                            if p.changed() {
                                on_pull(p);
                            }
                        }
                        Err(e) => {
                            let since = *failing_since.get_or_insert_with(std::time::Instant::now);
                            if !said && since.elapsed() >= QUIET_OUTAGE {
                                said = true;
                                on_error(e.to_string());
                            }
                        }
                    }
                    if more {
                        continue;
                    }
                    if listener.as_ref().is_none_or(|c| c.is_closed()) {
                        listener = listen(&cfg).ok();
                    }
                    wait(listener.as_mut(), &flag);
                }
            })?;
        Ok(MirrorWatch {
            stop,
            thread: Some(thread),
        })
    }
}

/// The longest a mirror goes without pulling.
pub const EVERY: Duration = Duration::from_secs(2);

/// How long pulls fail before the mirror says so (a server restart is over well within it).
pub const QUIET_OUTAGE: Duration = Duration::from_secs(5);

/// A running mirror; dropping it stops the thread.
pub struct MirrorWatch {
    stop: Arc<AtomicBool>,
    thread: Option<JoinHandle<()>>,
}

impl Drop for MirrorWatch {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

fn listen(cfg: &postgres::Config) -> std::result::Result<postgres::Client, postgres::Error> {
    let mut cfg = cfg.clone();
    cfg.connect_timeout(Duration::from_secs(5));
    let mut c = cfg.connect(super::pg::tls())?;
    c.batch_execute(&format!("LISTEN {RUNS_CHANNEL}"))?;
    Ok(c)
}

/// Until a save is notified, [`EVERY`] passes, or the watch is stopped (looked at every
/// 200 ms). A burst of notifications is one wake.
fn wait(listener: Option<&mut postgres::Client>, stop: &AtomicBool) {
    let step = Duration::from_millis(200);
    let mut waited = Duration::ZERO;
    let Some(c) = listener else {
        while waited < EVERY && !stop.load(Ordering::Relaxed) {
            std::thread::sleep(step);
            waited += step;
        }
        return;
    };
    while waited < EVERY && !stop.load(Ordering::Relaxed) {
        let got = c
            .notifications()
            .timeout_iter(step)
            .next()
            .map(|n| n.is_some());
        match got {
            Ok(true) => {
                while let Ok(Some(_)) = c.notifications().iter().next() {}
                // Let a burst of saves land: one pull for many.
                std::thread::sleep(step);
                return;
            }
            Ok(false) if !c.is_closed() => waited += step,
            _ => return,
        }
    }
}

/// How far this store mirrored each shared store (SQLite migration 17).
impl Store {
    /// Every run's name and tags as stored (tags space-separated).
    fn all_labels(&self) -> Result<HashMap<String, (Option<String>, String)>> {
        let mut st = self.conn.prepare("SELECT id, name, tags FROM runs")?;
        let rows = st
            .query_map([], |r| Ok((r.get("id")?, (r.get("name")?, r.get("tags")?))))?
            .collect::<rusqlite::Result<HashMap<_, _>>>()?;
        Ok(rows)
    }

    fn set_run_tags(&self, id: &str, tags: &str) -> Result<()> {
        self.conn.execute(
            "UPDATE runs SET tags = ?2 WHERE id = ?1",
            rusqlite::params![id, tags],
        )?;
        Ok(())
    }

    fn mirror_marks(&self, store: &str) -> Result<HashMap<String, i64>> {
        let mut st = self
            .conn
            .prepare("SELECT what, seen FROM mirror_marks WHERE store = ?1")?;
        let rows = st
            .query_map([store], |r| Ok((r.get("what")?, r.get("seen")?)))?
            .collect::<rusqlite::Result<HashMap<_, _>>>()?;
        Ok(rows)
    }

    fn set_mirror_marks(&mut self, store: &str, marks: &[(String, i64)]) -> Result<()> {
        let tx = self.conn.transaction()?;
        {
            let mut st = tx.prepare_cached(
                "INSERT OR REPLACE INTO mirror_marks (store, what, seen) VALUES (?1, ?2, ?3)",
            )?;
            for (what, seen) in marks {
                st.execute(rusqlite::params![store, what, seen])?;
            }
        }
        tx.commit()?;
        Ok(())
    }
}
