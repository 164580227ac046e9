//! The store: runs, their jobs, every answer, scores, every lane's results, review decisions
//! and the response cache. The one way in is [`Db`] (a command's `--db`); the backends are
//! private to this module.
//!
//! ```text
//!  commands · lanes · screens ──Db::open(--db)──▶ Db (db.rs)   review (db_review.rs → panel.rs):
//!        │ Db::read (db_read.rs)   │ save (one writer)          decisions, live for all
//!        ▼                         ▼                            whole writes (db_write.rs)
//!  Store: SQLite, this machine ◀── StoreHandle (writer.rs: group commit; answers, lane writes,
//!        ▲            │            records of described tables, scores; held while it cannot save)
//!  mirror.rs pulls    │ lane_push.rs pushes each commit as it lands
//!  by change number   ▼
//!  PostgreSQL, shared (pg*.rs) ◀── pg_writer.rs: a shared run's answers and leases, direct
//!  links.rs: rows come back only for runs shared with that store · lane_tables.rs: each table
//!  described once (columns, key, forward rule) · record.rs: each record converted once, by name
//!  location.rs: a store's name parsed once (a file or a shared store) · any.rs connects either
//! ```
//!
//! The sharing model (kept everywhere): every command works on this machine's store, and one
//! sync component moves rows between it and a shared store (`db.rs` says how). Two things are
//! written to the shared store directly, because it decides them: a shared run's answers and
//! leases (which worker's answer stands), and review decisions (the panel every reviewer
//! reads live).
//!
//! One file per table family: `schema` (migrations), `runs` (runs and jobs), `responses`,
//! `scores`, `cache`, `detect` (contradiction detection), `selfcheck`, `review` (human review),
//! `topics` (claims' topics by a model), `entailments` (semantic entropy's verdicts). Every
//! table is described once, in `tables` (runs, answers, scores, cache, review) or
//! `lane_tables` (the lanes'); `tests/backends.rs` runs every command on both backends and
//! compares them row for row. A new table is a migration, a description and a file.

mod answer_checks;
mod any;
pub(crate) mod bundle;
mod cache;
pub mod copy;
pub mod db;
mod db_read;
mod db_review;
mod db_write;
mod detect;
mod detect_records;
mod entailments;
mod error;
pub mod history;
pub mod judging;
pub mod lane_locks;
pub mod lane_push;
pub mod lane_tables;
pub mod links;
mod location;
mod locks;
pub mod logprobs;
pub mod mirror;
mod mirror_pending;
pub mod panel;
pub mod panel_watch;
pub(crate) mod pg;
mod pg_conninfo;
mod pg_lookups;
pub(crate) mod pg_runs;
mod pg_schema;
mod pg_url;
mod pg_writer;
pub mod record;
mod responses;
mod review;
pub(crate) mod review_records;
mod runs;
mod schema;
mod scores;
mod selfcheck;
mod selfcheck_records;
pub mod summaries;
pub mod tables;
mod time;
mod topics;
pub mod unknown;
mod worker;
mod writer;

use std::path::Path;

use rusqlite::Connection;

pub use answer_checks::AnswerCheck;
pub use any::{AnyStore, CopyLinks};
pub use bundle::{Added, RunBundle};
pub use cache::Cached;
pub use db::{Db, shown_name};
pub use detect::{
    Class, DetectConfig, DetectKind, DetectRun, DetectWrite, PairRecord, SampleRecord, Target,
    Verdict,
};
pub use entailments::{EntailRecord, Relation};
pub use error::{Result, StoreError};
pub use judging::{AnswerLabel, JudgeVerdict, Label};
pub(crate) use location::Location;
pub use locks::{HEARTBEAT_SECS, Held, Holder, STALE_AFTER_SECS, host_name, pid_alive};
pub use panel::Panel;
#[doc(hidden)]
pub(crate) use pg::fuzz_db_url;
pub use pg_runs::Leased;
pub use responses::ResponseRecord;
pub use review::Draft;
pub use runs::{
    IMPORTED, JobCounts, JobRecord, JobState, LabelledRun, ModelSnapshot, RunConfig, RunFilter,
    RunRecord, RunSource, RunStatus, new_run_id,
};
pub use scores::ScoreRecord;
pub use selfcheck::{
    Answer, FalseBy, Mode, SelfcheckConfig, SelfcheckItem, SelfcheckRun, SelfcheckWrite, Sentence,
    VerdictRecord,
};
pub use time::{format_time, now_millis, now_secs, parse_since};
pub use topics::TopicRecord;
pub use worker::{SharedCounts, store_down_advice};
pub use writer::{LOST_LOCK, StoreHandle, WriteError, WriteResult};

pub struct Store {
    conn: Connection,
}

/// Runs `f` again while SQLite answers busy or locked, for up to ten seconds.
fn busy_retry<T, E>(mut f: impl FnMut() -> std::result::Result<T, E>) -> Result<T>
where
    E: Into<StoreError>,
{
    let start = std::time::Instant::now();
    let mut wait = std::time::Duration::from_millis(5);
    loop {
        match f() {
            Err(e) => {
                let e: StoreError = e.into();
                let busy = matches!(
                    &e,
                    StoreError::Sqlite(rusqlite::Error::SqliteFailure(f, _))
                        if matches!(f.code, rusqlite::ErrorCode::DatabaseBusy | rusqlite::ErrorCode::DatabaseLocked)
                );
                if !busy || start.elapsed() > std::time::Duration::from_secs(10) {
                    return Err(e);
                }
                std::thread::sleep(wait);
                wait = (wait * 2).min(std::time::Duration::from_millis(200));
            }
            Ok(v) => return Ok(v),
        }
    }
}

impl Store {
    /// The file this store is (`None` in memory).
    pub fn path(&self) -> Option<std::path::PathBuf> {
        self.conn
            .path()
            .filter(|p| !p.is_empty())
            .map(std::path::PathBuf::from)
    }

    pub fn open(path: &Path) -> Result<Store> {
        // A PostgreSQL URL or connection string is never a file name: it would create a file
        // named after it, password and all (`./postgres:/ann:pw@host/db`).
        if let loc @ Location::Shared(_) = Location::of(path) {
            return Err(StoreError::NotSqlite(loc.shown()));
        }
        if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
            std::fs::create_dir_all(dir).map_err(|source| StoreError::Io {
                path: dir.to_path_buf(),
                source,
            })?;
        }
        let open = || -> Result<Store> { Self::setup(Connection::open(path)?) };
        open().map_err(|e| StoreError::Open {
            path: path.to_path_buf(),
            source: Box::new(e),
        })
    }

    pub fn open_in_memory() -> Result<Store> {
        Self::setup(Connection::open_in_memory()?)
    }

    fn setup(conn: Connection) -> Result<Store> {
        // First, so a second process opening the same new file waits instead of failing.
        conn.busy_timeout(std::time::Duration::from_secs(10))?;
        // Switching a new file to WAL can answer "busy" without waiting (SQLite will not wait
        // when waiting could deadlock), so it is tried again for a while.
        busy_retry(|| conn.pragma_update(None, "journal_mode", "WAL"))?;
        // NORMAL in WAL mode: a commit survives a crash of the process (kill -9); only an OS
        // crash or power loss can lose the last transactions.
        conn.pragma_update(None, "synchronous", "NORMAL")?;
        conn.pragma_update(None, "foreign_keys", "ON")?;
        // Fewer, larger checkpoints and a bigger page cache: a run writes a response per job.
        conn.pragma_update(None, "cache_size", -8_000)?;
        conn.pragma_update(None, "wal_autocheckpoint", 4_000)?;
        let mut store = Store { conn };
        busy_retry(|| schema::migrate(&mut store.conn))?;
        Ok(store)
    }

    /// WAL pages after which a commit of this connection checkpoints (SQLite's
    /// `wal_autocheckpoint`; 0 never).
    pub(crate) fn set_wal_autocheckpoint(&self, pages: i64) -> Result<()> {
        self.conn.pragma_update(None, "wal_autocheckpoint", pages)?;
        Ok(())
    }

    pub fn schema_version(&self) -> i64 {
        schema::schema_version(&self.conn)
    }

    /// SQLite's `max_page_count` for this connection (tests make a full disk with it).
    #[doc(hidden)]
    pub fn set_max_pages(&self, pages: u64) -> Result<()> {
        self.conn
            .pragma_update(None, "max_page_count", pages as i64)?;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Jobs 0-2 of items `item-0`..`item-2`, one model, one sample.
    fn three_jobs() -> Vec<JobRecord> {
        (0..3)
            .map(|i| JobRecord {
                idx: i,
                item_id: format!("item-{i}"),
                task_id: "T".into(),
                model: "m".into(),
                sample: 0,
            })
            .collect()
    }

    /// A right answer's score of job `idx` of run "r" (model "m", task "T").
    fn right_score(idx: u32) -> ScoreRecord {
        ScoreRecord {
            run_id: "r".into(),
            job_idx: idx,
            item_id: format!("item-{idx}"),
            task_id: "T".into(),
            model: "m".into(),
            score: Some(1.0),
            ..Default::default()
        }
    }

    fn resp(run: &str, idx: u32, ok: bool) -> ResponseRecord {
        ResponseRecord {
            run_id: run.into(),
            job_idx: idx,
            item_id: format!("item-{idx}"),
            task_id: "T".into(),
            model: "m".into(),
            sample: 0,
            text: ok.then(|| "answer".to_string()),
            error: (!ok).then(|| "HTTP 500".to_string()),
            finish_reason: None,
            prompt_tokens: Some(3),
            completion_tokens: Some(5),
            latency_ms: Some(12),
            first_token_ms: Some(4),
            attempts: 1,
            params: "{}".into(),
            request_hash: "h".into(),
            cached: false,
            created_at: 1,
            cache_key: Some(format!("key-{idx}")),
            logprobs: None,
        }
    }

    /// A store made before pair wordings (schema 11) keeps every pair verdict, as wording 0.
    #[test]
    fn pair_verdicts_of_an_older_store_become_wording_0() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("old.db");
        {
            let conn = Connection::open(&p).unwrap();
            for m in &schema::MIGRATIONS[..11] {
                conn.execute_batch(m).unwrap();
            }
            conn.pragma_update(None, "user_version", 11).unwrap();
            conn.execute_batch(
                "INSERT INTO detect_pairs (run_id, target, round, k, judge, verdict, reply,
                 attempts, created_at) VALUES ('d1', 0, 0, 3, 'smol', 'conflict', 'Yes.', 1, 7);",
            )
            .unwrap();
        }
        let s = Store::open(&p).unwrap();
        let pairs = s.detect_pairs("d1").unwrap();
        assert_eq!(pairs.len(), 1);
        let p0 = &pairs[0];
        assert_eq!((p0.k, p0.wording, p0.verdict), (3, 0, Verdict::Conflict));
        assert_eq!(p0.reply.as_deref(), Some("Yes."));
    }

    #[test]
    fn run_ids_sort_by_time() {
        assert!(new_run_id().starts_with('r'));
        assert_eq!(new_run_id().len(), "r20261129-194512-3fa9".len());
    }

    #[test]
    fn runs_jobs_responses_and_cache_round_trip() {
        let mut s = Store::open_in_memory().unwrap();
        assert_eq!(s.schema_version(), schema::MIGRATIONS.len() as i64);
        let run = RunRecord {
            id: "r1".into(),
            created_at: 5,
            dataset: "<sample-data>".into(),
            config: RunConfig {
                samples: 1,
                ..RunConfig::default()
            },
            status: RunStatus::Running,
        };
        let jobs = three_jobs();
        s.create_run(&run, &jobs).unwrap();
        assert_eq!(s.run("r1").unwrap().unwrap(), run);
        s.save_responses(&[resp("r1", 0, true), resp("r1", 1, false)])
            .unwrap();
        assert_eq!(
            s.job_counts("r1").unwrap(),
            JobCounts {
                done: 1,
                failed: 1,
                pending: 1,
                unknown: 0
            }
        );
        // Failed and never-run jobs are what a resume does.
        let left: Vec<u32> = s
            .unfinished_jobs("r1")
            .unwrap()
            .iter()
            .map(|j| j.idx)
            .collect();
        assert_eq!(left, vec![1, 2]);
        // Only successes are cached: the answer's own row is the entry (no second copy).
        assert_eq!(s.cache_get("key-0").unwrap().unwrap().text, "answer");
        assert!(s.cache_get("key-1").unwrap().is_none());
        let copies: i64 = s
            .conn
            .query_row("SELECT count(*) FROM cache", [], |r| r.get(0))
            .unwrap();
        assert_eq!(copies, 0);
        // A single call's entry (judges, detection) is still read from `cache`.
        s.cache_put(
            "judge-1",
            &Cached {
                text: "verdict".into(),
                finish_reason: None,
                prompt_tokens: None,
                completion_tokens: None,
                latency_ms: None,
                logprobs: None,
            },
        )
        .unwrap();
        assert_eq!(s.cache_get("judge-1").unwrap().unwrap().text, "verdict");
        assert_eq!(s.responses("r1").unwrap().len(), 2);
        assert_eq!(
            s.responses_for_item("item-0").unwrap()[0].text.as_deref(),
            Some("answer")
        );
    }

    /// A lookup answers with the newest successful answer stored with the key (not a failed
    /// or an older one).
    #[test]
    fn the_cache_answers_with_the_newest_successful_answer() {
        let mut s = Store::open_in_memory().unwrap();
        s.create_run(&empty_run("r1"), &three_jobs()).unwrap();
        let mut older = resp("r1", 0, true);
        older.text = Some("older".into());
        older.created_at = 10;
        let mut newer = resp("r1", 1, true);
        newer.text = Some("newer".into());
        newer.created_at = 20;
        newer.cache_key = older.cache_key.clone();
        let mut failed = resp("r1", 2, false);
        failed.created_at = 30;
        failed.cache_key = older.cache_key.clone();
        s.save_responses(&[older, newer, failed]).unwrap();
        assert_eq!(s.cache_get("key-0").unwrap().unwrap().text, "newer");
        assert!(s.cache_get("key-9").unwrap().is_none());
    }

    /// A running run with default settings.
    fn empty_run(id: &str) -> RunRecord {
        RunRecord {
            id: id.into(),
            created_at: 1,
            dataset: "d".into(),
            config: RunConfig::default(),
            status: RunStatus::Running,
        }
    }

    #[test]
    fn reopening_a_file_keeps_everything() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("sub/prism.db");
        {
            let mut s = Store::open(&p).unwrap();
            s.create_run(&empty_run("r"), &[]).unwrap();
        }
        let s = Store::open(&p).unwrap();
        assert_eq!(s.runs().unwrap().len(), 1);
    }

    #[test]
    fn processes_opening_a_new_store_at_once_do_not_race_on_the_schema() {
        // Eight connections (as eight processes would) open the same new file at the same
        // moment, twenty times over: every one opens, and the schema is complete once.
        for round in 0..20 {
            let dir = tempfile::tempdir().unwrap();
            let p = dir.path().join(format!("s{round}.db"));
            let gate = std::sync::Arc::new(std::sync::Barrier::new(8));
            let handles: Vec<_> = (0..8)
                .map(|_| {
                    let (p, gate) = (p.clone(), gate.clone());
                    std::thread::spawn(move || {
                        gate.wait();
                        Store::open(&p).map(|s| s.schema_version())
                    })
                })
                .collect();
            for h in handles {
                assert_eq!(h.join().unwrap().unwrap(), schema::MIGRATIONS.len() as i64);
            }
        }
    }

    /// Every query a run makes per job finds its rows by an index, never by a scan.
    #[test]
    fn the_per_job_queries_use_indexes() {
        let s = Store::open_in_memory().unwrap();
        let plan = |sql: &str| -> String {
            let mut st = s
                .conn
                .prepare(&format!("EXPLAIN QUERY PLAN {sql}"))
                .unwrap();
            let rows = st
                .query_map([], |r| r.get::<_, String>(3))
                .unwrap()
                .map(|r| r.unwrap())
                .collect::<Vec<_>>();
            rows.join("; ")
        };
        let lookup = plan(&cache::LOOKUP.replace("?1", "'k'"));
        assert!(lookup.contains("USING PRIMARY KEY"), "{lookup}");
        assert!(!lookup.contains("TEMP B-TREE"), "{lookup}");
        assert!(lookup.contains("responses_cache_key"), "{lookup}");
        assert!(
            !lookup.contains("SCAN cache") && !lookup.contains("SCAN responses"),
            "{lookup}"
        );
        let update = plan("UPDATE jobs SET state = 'done' WHERE run_id = 'r' AND idx = 1");
        assert!(update.contains("USING PRIMARY KEY"), "{update}");
        let left = plan("SELECT idx FROM jobs WHERE run_id = 'r' AND state != 'done' ORDER BY idx");
        assert!(
            !left.contains("TEMP B-TREE"),
            "resume reads jobs in order: {left}"
        );
        // The indexes a saved answer or score no longer writes (migration 21) are gone, and
        // what used them reads by another: a sub-task's worst answer by the group's index.
        let indexes: Vec<String> = s
            .conn
            .prepare("SELECT name FROM sqlite_master WHERE type = 'index'")
            .unwrap()
            .query_map([], |r| r.get(0))
            .unwrap()
            .map(|r| r.unwrap())
            .collect();
        for gone in ["jobs_state", "scores_item", "scores_task"] {
            assert!(!indexes.iter().any(|i| i == gone), "{gone} in {indexes:?}");
        }
        let worst = plan(
            "SELECT job_idx FROM scores INDEXED BY scores_group WHERE run_id = 'r' AND model = 'm'
             AND task_id = 't' AND score IS NOT NULL ORDER BY score, job_idx LIMIT 1",
        );
        assert!(
            worst.contains("scores_group (run_id=? AND model=? AND task_id=?)"),
            "{worst}"
        );
    }

    /// The writer saves a group's answers and the scores that came with them in one
    /// transaction; a score that cannot be saved fails alone and takes no answer with it.
    /// A shared run held in part (`mirror_pending`): its summaries and counts are the shared
    /// store's while its pages land (scores pulled so far do not make them), and its last
    /// page makes them from its own scores.
    #[test]
    fn a_run_held_in_part_keeps_the_shared_summaries_until_it_is_whole() {
        let mut store = Store::open_in_memory().unwrap();
        let head = RunBundle {
            run: empty_run("r"),
            name: Some("team".into()),
            tags: String::new(),
            jobs: Vec::new(),
            responses: Vec::new(),
            scores: Vec::new(),
        };
        let theirs = summaries::TaskSummary {
            run_id: "r".into(),
            model: "m".into(),
            task_id: "T".into(),
            scored: 40,
            unscored: 0,
            sum: 10.0,
            hallucinated: 30,
            rows: 40,
        };
        let counts = JobCounts {
            done: 38,
            failed: 2,
            pending: 0,
            unknown: 0,
        };
        assert!(
            store
                .put_pending_run(&head, std::slice::from_ref(&theirs), &counts)
                .unwrap()
        );
        // Held already: a second head changes nothing.
        assert!(
            !store
                .put_pending_run(&head, &[], &JobCounts::default())
                .unwrap()
        );
        assert_eq!(store.job_counts("r").unwrap(), counts);
        assert_eq!(store.run_labels("r").unwrap().0.as_deref(), Some("team"));
        // A page lands: two answers, both right.
        let score = right_score;
        let page = RunBundle {
            jobs: vec![],
            responses: vec![resp("r", 0, true), resp("r", 1, true)],
            scores: vec![score(0), score(1)],
            ..head.clone()
        };
        store.put_run_bundle(&page).unwrap();
        store.put_new_scores(&[score(1)]).unwrap();
        store.advance_pending_run("r", 5_000).unwrap();
        assert_eq!(
            store.pending_runs().unwrap(),
            vec![("r".to_string(), 5_000)]
        );
        assert_eq!(
            store.run_summaries(Some("r")).unwrap(),
            vec![theirs.clone()]
        );
        assert_eq!(store.job_counts("r").unwrap(), counts);
        // The shared run moved on.
        let moved = summaries::TaskSummary {
            scored: 41,
            sum: 11.0,
            rows: 41,
            ..theirs
        };
        store
            .refresh_pending_run("r", std::slice::from_ref(&moved), &counts)
            .unwrap();
        assert_eq!(store.run_summaries(Some("r")).unwrap(), vec![moved]);
        // Whole: made from its own scores, its counts from its own jobs.
        store.finish_pending_run("r").unwrap();
        assert!(store.pending_runs().unwrap().is_empty());
        let mine = store.run_summaries(Some("r")).unwrap();
        assert_eq!(
            (
                mine.len(),
                mine[0].scored,
                mine[0].hallucinated,
                mine[0].sum
            ),
            (1, 2, 0, 2.0)
        );
        assert_ne!(store.job_counts("r").unwrap(), counts);
    }

    #[test]
    fn a_group_saves_answers_and_scores_together_and_a_bad_score_loses_no_answer() {
        let mut store = Store::open_in_memory().unwrap();
        store.create_run(&empty_run("r"), &[]).unwrap();
        let score = right_score;
        let (a, s) =
            writer::save_answers_and_scores(&mut store, &[resp("r", 0, true)], &[score(0)]);
        assert!(a.is_ok() && s.is_ok(), "{a:?} {s:?}");
        // A store that refuses one score (a trigger stands in for whatever made it fail).
        store
            .conn
            .execute_batch(
                "CREATE TRIGGER refuse BEFORE INSERT ON scores WHEN NEW.job_idx = 1
                 BEGIN SELECT RAISE(ABORT, 'refused'); END;",
            )
            .unwrap();
        let (a, s) = writer::save_answers_and_scores(
            &mut store,
            &[resp("r", 1, true), resp("r", 2, true)],
            &[score(1)],
        );
        assert!(a.is_ok(), "{a:?}");
        assert!(s.unwrap_err().to_string().contains("refused"));
        let stored: Vec<u32> = store
            .responses("r")
            .unwrap()
            .iter()
            .map(|r| r.job_idx)
            .collect();
        assert_eq!(stored, [0, 1, 2]);
        let scored: Vec<u32> = store
            .scores(Some("r"))
            .unwrap()
            .iter()
            .map(|s| s.job_idx)
            .collect();
        assert_eq!(scored, [0]);
        // The summaries moved with the one score saved, not with the refused one.
        let sums = store.run_summaries(Some("r")).unwrap();
        assert_eq!(sums.iter().map(|s| s.scored).sum::<u32>(), 1);
    }

    /// An answer and its rule score saved through the handle are both committed once it
    /// returns; a score the store refuses is reported as such and loses no answer.
    #[test]
    fn an_answer_and_its_score_commit_together_and_a_refused_score_loses_no_answer() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("prism.db");
        let mut store = Store::open(&p).unwrap();
        store.create_run(&empty_run("r"), &[]).unwrap();
        store
            .conn
            .execute_batch(
                "CREATE TRIGGER refuse BEFORE INSERT ON scores WHEN NEW.job_idx = 1
                 BEGIN SELECT RAISE(ABORT, 'refused'); END;",
            )
            .unwrap();
        let h = StoreHandle::spawn(store, Some(p.clone()));
        let score = right_score;
        let rt = tokio::runtime::Builder::new_current_thread()
            .build()
            .unwrap();
        let (a, s) = rt.block_on(h.save_scored(resp("r", 0, true), score(0)));
        assert!(a.is_ok() && s.is_ok(), "{a:?} {s:?}");
        let (a, s) = rt.block_on(h.save_scored(resp("r", 1, true), score(1)));
        assert!(a.is_ok(), "{a:?}");
        assert!(s.unwrap_err().to_string().contains("refused"));
        let read = Store::open(&p).unwrap();
        let answered: Vec<u32> = read
            .responses("r")
            .unwrap()
            .iter()
            .map(|r| r.job_idx)
            .collect();
        assert_eq!(answered, [0, 1]);
        let scored: Vec<u32> = read
            .scores(Some("r"))
            .unwrap()
            .iter()
            .map(|s| s.job_idx)
            .collect();
        assert_eq!(scored, [0]);
        assert_eq!(read.run_summaries(Some("r")).unwrap()[0].scored, 1);
    }

    /// The summaries move by each item's scores read once, before the write, with the write's
    /// own scores put in their place: after every kind of change (samples of one item across
    /// groups, a score replaced, one job twice in a group, scores that are no score: none, NaN,
    /// 5.0) they equal the summaries made from all the scores.
    #[test]
    fn the_summaries_kept_by_difference_equal_the_ones_made_from_the_scores() {
        let mut store = Store::open_in_memory().unwrap();
        store.create_run(&empty_run("r"), &[]).unwrap();
        let score = |idx: u32, item: &str, task: &str, sample: u32, v: Option<f64>| ScoreRecord {
            run_id: "r".into(),
            job_idx: idx,
            item_id: item.into(),
            task_id: task.into(),
            model: "m".into(),
            sample,
            score: v,
            ..Default::default()
        };
        let groups: &[Vec<ScoreRecord>] = &[
            // One sample of a two-sample item: the item waits for its second.
            vec![
                score(0, "a", "T", 0, Some(1.0)),
                score(2, "b", "T", 0, Some(0.0)),
            ],
            // Its second sample; b's replaced by a score that is no score.
            vec![
                score(1, "a", "T", 1, Some(0.25)),
                score(2, "b", "T", 0, Some(f64::NAN)),
            ],
            // One job twice in one group (the last wins), a score out of range, a new task.
            vec![
                score(3, "c", "U", 0, Some(0.0)),
                score(3, "c", "U", 0, Some(0.75)),
                score(4, "d", "U", 0, Some(5.0)),
                score(2, "b", "T", 0, None),
            ],
            // Everything again, as a re-score writes it.
            vec![
                score(0, "a", "T", 0, Some(0.0)),
                score(1, "a", "T", 1, Some(0.0)),
                score(2, "b", "T", 0, Some(1.0)),
                score(3, "c", "U", 0, Some(1.0)),
                score(4, "d", "U", 0, Some(0.5)),
            ],
        ];
        for (i, g) in groups.iter().enumerate() {
            store.save_scores(g).unwrap();
            let kept = store.run_summaries(Some("r")).unwrap();
            let made: Vec<summaries::TaskSummary> = store
                .records_from_sql(
                    &summaries::summarize("run_id = ?1"),
                    &[lane_tables::Val::Text("r".into())],
                )
                .unwrap();
            assert_eq!(kept.len(), made.len(), "after group {i}");
            for (k, m) in kept.iter().zip(&made) {
                assert_eq!(
                    (&k.task_id, k.scored, k.unscored, k.hallucinated, k.rows),
                    (&m.task_id, m.scored, m.unscored, m.hallucinated, m.rows),
                    "after group {i}"
                );
                assert!((k.sum - m.sum).abs() < 1e-9, "after group {i}: {k:?} {m:?}");
            }
        }
        // The last group's values, by hand: T has a (0, 0: hallucinated) and b (1); U has c (1)
        // and d (0.5, not below 0.5).
        let kept = store.run_summaries(Some("r")).unwrap();
        let by = |t: &str| kept.iter().find(|s| s.task_id == t).unwrap().clone();
        assert_eq!(
            (by("T").scored, by("T").hallucinated, by("T").rows),
            (2, 1, 3)
        );
        assert_eq!(
            (by("U").scored, by("U").hallucinated, by("U").rows),
            (2, 0, 2)
        );
        assert!((by("U").sum - 1.5).abs() < 1e-12);
    }

    /// Checkpoints run on their own thread: answers saved through the handle reach the database
    /// file (not only the WAL) although the writer alone would not checkpoint before 64 MB.
    #[test]
    fn a_background_thread_checkpoints_what_the_writer_commits() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("prism.db");
        let rt = tokio::runtime::Builder::new_current_thread()
            .build()
            .unwrap();
        let mut store = Store::open(&p).unwrap();
        store.create_run(&empty_run("r"), &[]).unwrap();
        let main_file = || std::fs::metadata(&p).unwrap().len();
        let before = main_file();
        let h = StoreHandle::spawn(store, Some(p.clone()));
        rt.block_on(async {
            for i in 0..2_000 {
                let mut r = resp("r", i, true);
                r.text = Some("x".repeat(2_000));
                h.save(r).await.unwrap();
            }
        });
        // 2,000 answers of 2 KB: about 1,000 pages, far below the writer's own threshold.
        let t = std::time::Instant::now();
        while main_file() < before + 4_000_000 && t.elapsed() < std::time::Duration::from_secs(10) {
            std::thread::sleep(std::time::Duration::from_millis(20));
        }
        assert!(
            main_file() >= before + 4_000_000,
            "the database file is still {} bytes",
            main_file()
        );
        let s = Store::open(&p).unwrap();
        assert_eq!(s.responses("r").unwrap().len(), 2_000);
    }
}
