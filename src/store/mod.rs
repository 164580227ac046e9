//! The SQLite store: runs, their jobs, every response, and the response cache.
//!
//! One file (WAL mode) in the data dir or at `--db PATH`. Responses are committed as they
//! complete; the async side talks to one writer thread ([`StoreHandle`]) that commits whatever
//! has queued up in a single transaction (group commit) and only then acknowledges, so a result
//! the front-end has seen is always on disk.

mod writer;

use std::path::Path;
use std::time::{SystemTime, UNIX_EPOCH};

use rusqlite::{Connection, OptionalExtension, params};
use serde::{Deserialize, Serialize};

pub use writer::StoreHandle;

/// Schema migrations, applied in order; `PRAGMA user_version` records how many ran.
const MIGRATIONS: &[&str] = &[
    // 1: runs, jobs, responses, cache.
    r#"
    CREATE TABLE runs (
        id TEXT PRIMARY KEY,
        created_at INTEGER NOT NULL,
        dataset TEXT NOT NULL,
        config TEXT NOT NULL,
        status TEXT NOT NULL
    );
    CREATE TABLE jobs (
        run_id TEXT NOT NULL,
        idx INTEGER NOT NULL,
        item_id TEXT NOT NULL,
        task_id TEXT NOT NULL,
        model TEXT NOT NULL,
        sample INTEGER NOT NULL,
        state TEXT NOT NULL DEFAULT 'pending',
        PRIMARY KEY (run_id, idx)
    ) WITHOUT ROWID;
    CREATE INDEX jobs_state ON jobs(run_id, state);
    CREATE TABLE responses (
        run_id TEXT NOT NULL,
        job_idx INTEGER NOT NULL,
        item_id TEXT NOT NULL,
        task_id TEXT NOT NULL,
        model TEXT NOT NULL,
        sample INTEGER NOT NULL,
        text TEXT,
        error TEXT,
        finish_reason TEXT,
        prompt_tokens INTEGER,
        completion_tokens INTEGER,
        latency_ms INTEGER,
        first_token_ms INTEGER,
        attempts INTEGER NOT NULL,
        params TEXT NOT NULL,
        request_hash TEXT NOT NULL,
        cached INTEGER NOT NULL DEFAULT 0,
        created_at INTEGER NOT NULL,
        PRIMARY KEY (run_id, job_idx)
    );
    CREATE INDEX responses_item ON responses(item_id, model);
    CREATE TABLE cache (
        key TEXT PRIMARY KEY,
        text TEXT NOT NULL,
        finish_reason TEXT,
        prompt_tokens INTEGER,
        completion_tokens INTEGER,
        latency_ms INTEGER,
        created_at INTEGER NOT NULL
    ) WITHOUT ROWID;
    "#,
    // 2: scores, derived from responses and replaced on re-scoring (responses are never touched).
    r#"
    CREATE TABLE scores (
        run_id TEXT NOT NULL,
        job_idx INTEGER NOT NULL,
        item_id TEXT NOT NULL,
        task_id TEXT NOT NULL,
        model TEXT NOT NULL,
        sample INTEGER NOT NULL,
        evaluator TEXT NOT NULL,
        score REAL,
        detail TEXT NOT NULL,
        judge TEXT,
        judge_reply TEXT,
        judge_attempts INTEGER NOT NULL DEFAULT 0,
        created_at INTEGER NOT NULL,
        PRIMARY KEY (run_id, job_idx)
    ) WITHOUT ROWID;
    CREATE INDEX scores_item ON scores(item_id, model);
    CREATE INDEX scores_task ON scores(run_id, model, task_id, score);
    "#,
];

/// `YYYY-MM-DD HH:MM UTC` for a Unix time (civil-from-days, so no time crate is needed).
pub fn format_time(secs: i64) -> String {
    let days = secs.div_euclid(86_400);
    let rem = secs.rem_euclid(86_400);
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1_460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = yoe + era * 400 + i64::from(m <= 2);
    format!(
        "{y:04}-{m:02}-{d:02} {:02}:{:02} UTC",
        rem / 3600,
        rem % 3600 / 60
    )
}

pub fn now_secs() -> i64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_secs() as i64)
        .unwrap_or(0)
}

/// A run: what was asked. Its config never holds an API key (only the variable's name).
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct RunRecord {
    pub id: String,
    pub created_at: i64,
    /// The dataset path, or `<sample-data>`.
    pub dataset: String,
    pub config: RunConfig,
    pub status: String,
}

#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
pub struct RunConfig {
    pub models: Vec<crate::provider::ModelConfig>,
    pub samples: u32,
    pub shots: u32,
    /// The run's own parameter overrides (over the per-task defaults and each model's).
    pub params: crate::provider::Params,
    #[serde(default)]
    pub filter: Option<String>,
    #[serde(default)]
    pub limit: Option<usize>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct JobRecord {
    pub idx: u32,
    pub item_id: String,
    pub task_id: String,
    pub model: String,
    pub sample: u32,
}

/// One stored answer (or failure).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ResponseRecord {
    pub run_id: String,
    pub job_idx: u32,
    pub item_id: String,
    pub task_id: String,
    pub model: String,
    pub sample: u32,
    pub text: Option<String>,
    pub error: Option<String>,
    pub finish_reason: Option<String>,
    pub prompt_tokens: Option<u32>,
    pub completion_tokens: Option<u32>,
    pub latency_ms: Option<u64>,
    pub first_token_ms: Option<u64>,
    pub attempts: u32,
    pub params: String,
    pub request_hash: String,
    pub cached: bool,
    pub created_at: i64,
    /// Cache key to fill on success (not stored in `responses`).
    #[serde(skip)]
    pub cache_key: Option<String>,
}

impl ResponseRecord {
    pub fn is_ok(&self) -> bool {
        self.error.is_none()
    }
}

/// The score of one stored response. `score` is `None` when the item needs a judge and none was
/// given: unscored, never counted as wrong.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct ScoreRecord {
    pub run_id: String,
    pub job_idx: u32,
    pub item_id: String,
    pub task_id: String,
    pub model: String,
    pub sample: u32,
    pub evaluator: String,
    pub score: Option<f64>,
    pub detail: String,
    /// The judge model's name, for judged scores.
    pub judge: Option<String>,
    /// The judge's full last reply.
    pub judge_reply: Option<String>,
    pub judge_attempts: u32,
    pub created_at: i64,
}

/// A cached answer.
#[derive(Debug, Clone, PartialEq)]
pub struct Cached {
    pub text: String,
    pub finish_reason: Option<String>,
    pub prompt_tokens: Option<u32>,
    pub completion_tokens: Option<u32>,
    pub latency_ms: Option<u64>,
}

/// Fills the cache: a run's successful answers, and single requests (the judges).
const CACHE_PUT: &str = "INSERT OR REPLACE INTO cache (key, text, finish_reason, prompt_tokens, completion_tokens, latency_ms, created_at)
     VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)";

pub struct Store {
    conn: Connection,
}

impl Store {
    pub fn open(path: &Path) -> anyhow::Result<Store> {
        if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
            std::fs::create_dir_all(dir)
                .map_err(|e| anyhow::anyhow!("creating {}: {e}", dir.display()))?;
        }
        let conn = Connection::open(path)
            .map_err(|e| anyhow::anyhow!("opening store {}: {e}", path.display()))?;
        Self::setup(conn).map_err(|e| anyhow::anyhow!("store {}: {e}", path.display()))
    }

    pub fn open_in_memory() -> anyhow::Result<Store> {
        Self::setup(Connection::open_in_memory()?)
    }

    fn setup(conn: Connection) -> anyhow::Result<Store> {
        conn.pragma_update(None, "journal_mode", "WAL")?;
        // NORMAL in WAL mode: a commit survives a crash of the process (kill -9); only an OS
        // crash or power loss can lose the last transactions.
        conn.pragma_update(None, "synchronous", "NORMAL")?;
        conn.pragma_update(None, "foreign_keys", "ON")?;
        // Fewer, larger checkpoints and a bigger page cache: a run writes a response per job.
        conn.pragma_update(None, "cache_size", -32_000)?;
        conn.pragma_update(None, "wal_autocheckpoint", 4_000)?;
        conn.busy_timeout(std::time::Duration::from_secs(10))?;
        let mut store = Store { conn };
        store.migrate()?;
        Ok(store)
    }

    fn migrate(&mut self) -> anyhow::Result<()> {
        let version: usize = self
            .conn
            .pragma_query_value(None, "user_version", |r| r.get::<_, i64>(0))?
            as usize;
        if version > MIGRATIONS.len() {
            anyhow::bail!(
                "this store was written by a newer prism (schema {version}, this one knows {})",
                MIGRATIONS.len()
            );
        }
        for (i, m) in MIGRATIONS.iter().enumerate().skip(version) {
            let tx = self.conn.transaction()?;
            tx.execute_batch(m)?;
            tx.pragma_update(None, "user_version", (i + 1) as i64)?;
            tx.commit()?;
        }
        Ok(())
    }

    pub fn schema_version(&self) -> i64 {
        self.conn
            .pragma_query_value(None, "user_version", |r| r.get(0))
            .unwrap_or(0)
    }

    /// Records a new run and all of its jobs in one transaction.
    pub fn create_run(&mut self, run: &RunRecord, jobs: &[JobRecord]) -> anyhow::Result<()> {
        let tx = self.conn.transaction()?;
        tx.execute(
            "INSERT INTO runs (id, created_at, dataset, config, status) VALUES (?1, ?2, ?3, ?4, ?5)",
            params![
                run.id,
                run.created_at,
                run.dataset,
                serde_json::to_string(&run.config)?,
                run.status
            ],
        )?;
        {
            let mut st = tx.prepare(
                "INSERT INTO jobs (run_id, idx, item_id, task_id, model, sample) VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
            )?;
            for j in jobs {
                st.execute(params![
                    run.id, j.idx, j.item_id, j.task_id, j.model, j.sample
                ])?;
            }
        }
        tx.commit()?;
        Ok(())
    }

    pub fn set_run_status(&self, run_id: &str, status: &str) -> anyhow::Result<()> {
        self.conn.execute(
            "UPDATE runs SET status = ?2 WHERE id = ?1",
            params![run_id, status],
        )?;
        Ok(())
    }

    /// Saves responses (and fills the cache with the successful ones) in one transaction.
    pub fn save_responses(&mut self, rs: &[ResponseRecord]) -> anyhow::Result<()> {
        let tx = self.conn.transaction()?;
        {
            let mut ins = tx.prepare_cached(
                "INSERT OR REPLACE INTO responses (run_id, job_idx, item_id, task_id, model, sample, text, error,
                 finish_reason, prompt_tokens, completion_tokens, latency_ms, first_token_ms, attempts, params,
                 request_hash, cached, created_at)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16, ?17, ?18)",
            )?;
            let mut job =
                tx.prepare_cached("UPDATE jobs SET state = ?3 WHERE run_id = ?1 AND idx = ?2")?;
            let mut cache = tx.prepare_cached(CACHE_PUT)?;
            for r in rs {
                ins.execute(params![
                    r.run_id,
                    r.job_idx,
                    r.item_id,
                    r.task_id,
                    r.model,
                    r.sample,
                    r.text,
                    r.error,
                    r.finish_reason,
                    r.prompt_tokens,
                    r.completion_tokens,
                    r.latency_ms.map(|v| v as i64),
                    r.first_token_ms.map(|v| v as i64),
                    r.attempts,
                    r.params,
                    r.request_hash,
                    r.cached,
                    r.created_at
                ])?;
                job.execute(params![
                    r.run_id,
                    r.job_idx,
                    if r.is_ok() { "done" } else { "failed" }
                ])?;
                // Errors are never cached.
                if let (Some(key), true, Some(text)) = (&r.cache_key, r.is_ok(), &r.text) {
                    cache.execute(params![
                        key,
                        text,
                        r.finish_reason,
                        r.prompt_tokens,
                        r.completion_tokens,
                        r.latency_ms.map(|v| v as i64),
                        r.created_at
                    ])?;
                }
            }
        }
        tx.commit()?;
        Ok(())
    }

    /// Saves scores in one transaction, replacing earlier scores of the same responses.
    pub fn save_scores(&mut self, rs: &[ScoreRecord]) -> anyhow::Result<()> {
        let tx = self.conn.transaction()?;
        {
            let mut ins = tx.prepare_cached(
                "INSERT OR REPLACE INTO scores (run_id, job_idx, item_id, task_id, model, sample, evaluator,
                 score, detail, judge, judge_reply, judge_attempts, created_at)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13)",
            )?;
            for r in rs {
                ins.execute(params![
                    r.run_id,
                    r.job_idx,
                    r.item_id,
                    r.task_id,
                    r.model,
                    r.sample,
                    r.evaluator,
                    r.score,
                    r.detail,
                    r.judge,
                    r.judge_reply,
                    r.judge_attempts,
                    r.created_at
                ])?;
            }
        }
        tx.commit()?;
        Ok(())
    }

    fn score_row(r: &rusqlite::Row<'_>) -> rusqlite::Result<ScoreRecord> {
        Ok(ScoreRecord {
            run_id: r.get(0)?,
            job_idx: r.get(1)?,
            item_id: r.get(2)?,
            task_id: r.get(3)?,
            model: r.get(4)?,
            sample: r.get(5)?,
            evaluator: r.get(6)?,
            score: r.get(7)?,
            detail: r.get(8)?,
            judge: r.get(9)?,
            judge_reply: r.get(10)?,
            judge_attempts: r.get(11)?,
            created_at: r.get(12)?,
        })
    }

    const SCORE_COLS: &str = "run_id, job_idx, item_id, task_id, model, sample, evaluator, score, detail, judge, judge_reply, judge_attempts, created_at";

    /// Every score of a run (or of every run), in job order.
    pub fn scores(&self, run_id: Option<&str>) -> anyhow::Result<Vec<ScoreRecord>> {
        let sql = format!(
            "SELECT {} FROM scores WHERE (?1 IS NULL OR run_id = ?1) ORDER BY run_id, job_idx",
            Self::SCORE_COLS
        );
        let mut st = self.conn.prepare(&sql)?;
        let rows = st.query_map([run_id], Self::score_row)?;
        Ok(rows.collect::<Result<_, _>>()?)
    }

    /// The lean read behind rates and heatmaps: (model, task, item, score) of a run's scores,
    /// handed over without building a record per row.
    pub fn score_points(
        &self,
        run_id: &str,
        mut f: impl FnMut(&str, &str, &str, Option<f64>),
    ) -> anyhow::Result<usize> {
        let mut st = self.conn.prepare_cached(
            "SELECT model, task_id, item_id, score FROM scores WHERE run_id = ?1",
        )?;
        let mut rows = st.query([run_id])?;
        let mut n = 0;
        while let Some(r) = rows.next()? {
            f(
                r.get_ref(0)?.as_str()?,
                r.get_ref(1)?.as_str()?,
                r.get_ref(2)?.as_str()?,
                r.get_ref(3)?.as_f64_or_null()?,
            );
            n += 1;
        }
        Ok(n)
    }

    /// The lowest-scored answer of a model in a task of a run, with its response text (the example
    /// failure a report shows next to a bad sub-task).
    pub fn worst_answer(
        &self,
        run_id: &str,
        model: &str,
        task_id: &str,
    ) -> anyhow::Result<Option<(ScoreRecord, Option<String>)>> {
        let sql = format!(
            "SELECT {} FROM scores WHERE run_id = ?1 AND model = ?2 AND task_id = ?3 AND score IS NOT NULL
             ORDER BY score, job_idx LIMIT 1",
            Self::SCORE_COLS
        );
        let mut st = self.conn.prepare_cached(&sql)?;
        let Some(s) = st
            .query_row(params![run_id, model, task_id], Self::score_row)
            .optional()?
        else {
            return Ok(None);
        };
        let text: Option<String> = self
            .conn
            .prepare_cached("SELECT coalesce(text, 'ERROR: ' || error) FROM responses WHERE run_id = ?1 AND job_idx = ?2")?
            .query_row(params![run_id, s.job_idx], |r| r.get(0))
            .optional()?
            .flatten();
        Ok(Some((s, text)))
    }

    /// The judges that scored a run.
    pub fn judges(&self, run_id: &str) -> anyhow::Result<Vec<String>> {
        let mut st = self.conn.prepare_cached(
            "SELECT DISTINCT judge FROM scores WHERE run_id = ?1 AND judge IS NOT NULL ORDER BY judge",
        )?;
        let rows = st.query_map([run_id], |r| r.get(0))?;
        Ok(rows.collect::<Result<_, _>>()?)
    }

    /// The scores of one item across runs and models.
    pub fn scores_for_item(&self, item_id: &str) -> anyhow::Result<Vec<ScoreRecord>> {
        let sql = format!(
            "SELECT {} FROM scores WHERE item_id = ?1 ORDER BY run_id, job_idx",
            Self::SCORE_COLS
        );
        let mut st = self.conn.prepare(&sql)?;
        let rows = st.query_map([item_id], Self::score_row)?;
        Ok(rows.collect::<Result<_, _>>()?)
    }

    pub fn cache_put(&self, key: &str, c: &Cached) -> anyhow::Result<()> {
        self.conn.execute(
            CACHE_PUT,
            params![
                key,
                c.text,
                c.finish_reason,
                c.prompt_tokens,
                c.completion_tokens,
                c.latency_ms.map(|v| v as i64),
                now_secs()
            ],
        )?;
        Ok(())
    }

    pub fn cache_get(&self, key: &str) -> anyhow::Result<Option<Cached>> {
        let mut st = self.conn.prepare_cached(
            "SELECT text, finish_reason, prompt_tokens, completion_tokens, latency_ms FROM cache WHERE key = ?1",
        )?;
        Ok(st
            .query_row([key], |r| {
                Ok(Cached {
                    text: r.get(0)?,
                    finish_reason: r.get(1)?,
                    prompt_tokens: r.get(2)?,
                    completion_tokens: r.get(3)?,
                    latency_ms: r.get::<_, Option<i64>>(4)?.map(|v| v as u64),
                })
            })
            .optional()?)
    }

    pub fn run(&self, id: &str) -> anyhow::Result<Option<RunRecord>> {
        let mut st = self
            .conn
            .prepare("SELECT id, created_at, dataset, config, status FROM runs WHERE id = ?1")?;
        let r = st
            .query_row([id], Self::run_row)
            .optional()?
            .map(|(run, cfg)| parse_run(run, &cfg))
            .transpose()?;
        Ok(r)
    }

    /// Runs, newest first.
    pub fn runs(&self) -> anyhow::Result<Vec<RunRecord>> {
        let mut st = self.conn.prepare(
            "SELECT id, created_at, dataset, config, status FROM runs ORDER BY created_at DESC, id DESC",
        )?;
        let rows = st
            .query_map([], Self::run_row)?
            .collect::<Result<Vec<_>, _>>()?;
        rows.into_iter().map(|(r, c)| parse_run(r, &c)).collect()
    }

    pub fn latest_run(&self) -> anyhow::Result<Option<RunRecord>> {
        Ok(self.runs()?.into_iter().next())
    }

    fn run_row(r: &rusqlite::Row<'_>) -> rusqlite::Result<(RunRecord, String)> {
        Ok((
            RunRecord {
                id: r.get(0)?,
                created_at: r.get(1)?,
                dataset: r.get(2)?,
                config: RunConfig::default(),
                status: r.get(4)?,
            },
            r.get(3)?,
        ))
    }

    pub fn jobs(&self, run_id: &str) -> anyhow::Result<Vec<(JobRecord, String)>> {
        let mut st = self.conn.prepare(
            "SELECT idx, item_id, task_id, model, sample, state FROM jobs WHERE run_id = ?1 ORDER BY idx",
        )?;
        let rows = st
            .query_map([run_id], |r| {
                Ok((
                    JobRecord {
                        idx: r.get(0)?,
                        item_id: r.get(1)?,
                        task_id: r.get(2)?,
                        model: r.get(3)?,
                        sample: r.get(4)?,
                    },
                    r.get::<_, String>(5)?,
                ))
            })?
            .collect::<Result<Vec<_>, _>>()?;
        Ok(rows)
    }

    /// Jobs still to do: never finished, or failed (a resume tries failures again).
    pub fn unfinished_jobs(&self, run_id: &str) -> anyhow::Result<Vec<JobRecord>> {
        let mut st = self.conn.prepare(
            "SELECT idx, item_id, task_id, model, sample FROM jobs WHERE run_id = ?1 AND state != 'done' ORDER BY idx",
        )?;
        let rows = st
            .query_map([run_id], |r| {
                Ok(JobRecord {
                    idx: r.get(0)?,
                    item_id: r.get(1)?,
                    task_id: r.get(2)?,
                    model: r.get(3)?,
                    sample: r.get(4)?,
                })
            })?
            .collect::<Result<Vec<_>, _>>()?;
        Ok(rows)
    }

    pub fn job_counts(&self, run_id: &str) -> anyhow::Result<(usize, usize, usize)> {
        let mut st = self
            .conn
            .prepare("SELECT state, COUNT(*) FROM jobs WHERE run_id = ?1 GROUP BY state")?;
        let mut out = (0, 0, 0);
        for row in st.query_map([run_id], |r| {
            Ok((r.get::<_, String>(0)?, r.get::<_, i64>(1)?))
        })? {
            let (s, n) = row?;
            match s.as_str() {
                "done" => out.0 = n as usize,
                "failed" => out.1 = n as usize,
                _ => out.2 = n as usize,
            }
        }
        Ok(out)
    }

    const RESPONSE_COLS: &'static str = "run_id, job_idx, item_id, task_id, model, sample, text, error, finish_reason, prompt_tokens, completion_tokens, latency_ms, first_token_ms, attempts, params, request_hash, cached, created_at";

    fn response_row(r: &rusqlite::Row<'_>) -> rusqlite::Result<ResponseRecord> {
        Ok(ResponseRecord {
            run_id: r.get(0)?,
            job_idx: r.get(1)?,
            item_id: r.get(2)?,
            task_id: r.get(3)?,
            model: r.get(4)?,
            sample: r.get(5)?,
            text: r.get(6)?,
            error: r.get(7)?,
            finish_reason: r.get(8)?,
            prompt_tokens: r.get(9)?,
            completion_tokens: r.get(10)?,
            latency_ms: r.get::<_, Option<i64>>(11)?.map(|v| v as u64),
            first_token_ms: r.get::<_, Option<i64>>(12)?.map(|v| v as u64),
            attempts: r.get(13)?,
            params: r.get(14)?,
            request_hash: r.get(15)?,
            cached: r.get(16)?,
            created_at: r.get(17)?,
            cache_key: None,
        })
    }

    pub fn responses(&self, run_id: &str) -> anyhow::Result<Vec<ResponseRecord>> {
        let mut st = self.conn.prepare(&format!(
            "SELECT {} FROM responses WHERE run_id = ?1 ORDER BY job_idx",
            Self::RESPONSE_COLS
        ))?;
        let rows = st
            .query_map([run_id], Self::response_row)?
            .collect::<Result<Vec<_>, _>>()?;
        Ok(rows)
    }

    /// The latest answer of each (model, sample) for an item, across runs (re-opening an item
    /// shows what is stored).
    pub fn responses_for_item(&self, item_id: &str) -> anyhow::Result<Vec<ResponseRecord>> {
        let mut st = self.conn.prepare(&format!(
            "SELECT {} FROM responses WHERE item_id = ?1 ORDER BY created_at, run_id, job_idx",
            Self::RESPONSE_COLS
        ))?;
        let rows = st
            .query_map([item_id], Self::response_row)?
            .collect::<Result<Vec<_>, _>>()?;
        let mut latest: Vec<ResponseRecord> = Vec::new();
        for r in rows {
            if let Some(pos) = latest
                .iter()
                .position(|l| l.model == r.model && l.sample == r.sample)
            {
                latest[pos] = r;
            } else {
                latest.push(r);
            }
        }
        Ok(latest)
    }

    /// Item ids that have at least one stored answer, with the models that answered.
    pub fn answered_items(&self) -> anyhow::Result<Vec<(String, String)>> {
        let mut st = self
            .conn
            .prepare("SELECT DISTINCT item_id, model FROM responses WHERE error IS NULL")?;
        let rows = st
            .query_map([], |r| Ok((r.get(0)?, r.get(1)?)))?
            .collect::<Result<Vec<_>, _>>()?;
        Ok(rows)
    }
}

fn parse_run(mut run: RunRecord, cfg: &str) -> anyhow::Result<RunRecord> {
    run.config = serde_json::from_str(cfg)
        .map_err(|e| anyhow::anyhow!("run {}: unreadable config: {e}", run.id))?;
    Ok(run)
}

/// A new run id: sortable by time, readable, unique enough (`r20261129-194512-3fa9`).
pub fn new_run_id() -> String {
    let secs = now_secs();
    let (y, m, d) = civil_from_days(secs.div_euclid(86_400));
    let s = secs.rem_euclid(86_400);
    format!(
        "r{y:04}{m:02}{d:02}-{:02}{:02}{:02}-{:04x}",
        s / 3600,
        s / 60 % 60,
        s % 60,
        rand::random::<u16>()
    )
}

/// Days since 1970-01-01 to a civil date (Howard Hinnant's algorithm).
fn civil_from_days(z: i64) -> (i64, u32, u32) {
    let z = z + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let y = yoe + era * 400;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let m = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    (if m <= 2 { y + 1 } else { y }, m, d)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn times_format_as_utc_dates() {
        assert_eq!(format_time(0), "1970-01-01 00:00 UTC");
        assert_eq!(format_time(1_796_000_000), "2026-11-30 00:53 UTC");
        assert_eq!(format_time(951_782_400), "2000-02-29 00:00 UTC");
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
        }
    }

    #[test]
    fn civil_dates() {
        assert_eq!(civil_from_days(0), (1970, 1, 1));
        assert_eq!(civil_from_days(20_786), (2026, 11, 29));
        assert!(new_run_id().starts_with('r'));
    }

    #[test]
    fn runs_jobs_responses_and_cache_round_trip() {
        let mut s = Store::open_in_memory().unwrap();
        assert_eq!(s.schema_version(), MIGRATIONS.len() as i64);
        let run = RunRecord {
            id: "r1".into(),
            created_at: 5,
            dataset: "<sample-data>".into(),
            config: RunConfig {
                samples: 1,
                ..RunConfig::default()
            },
            status: "running".into(),
        };
        let jobs: Vec<JobRecord> = (0..3)
            .map(|i| JobRecord {
                idx: i,
                item_id: format!("item-{i}"),
                task_id: "T".into(),
                model: "m".into(),
                sample: 0,
            })
            .collect();
        s.create_run(&run, &jobs).unwrap();
        assert_eq!(s.run("r1").unwrap().unwrap(), run);
        s.save_responses(&[resp("r1", 0, true), resp("r1", 1, false)])
            .unwrap();
        assert_eq!(s.job_counts("r1").unwrap(), (1, 1, 1));
        // Failed and never-run jobs are what a resume does.
        let left: Vec<u32> = s
            .unfinished_jobs("r1")
            .unwrap()
            .iter()
            .map(|j| j.idx)
            .collect();
        assert_eq!(left, vec![1, 2]);
        // Only successes are cached.
        assert!(s.cache_get("key-0").unwrap().is_some());
        assert!(s.cache_get("key-1").unwrap().is_none());
        assert_eq!(s.responses("r1").unwrap().len(), 2);
        assert_eq!(
            s.responses_for_item("item-0").unwrap()[0].text.as_deref(),
            Some("answer")
        );
    }

    #[test]
    fn reopening_a_file_keeps_everything() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("sub/prism.db");
        {
            let mut s = Store::open(&p).unwrap();
            let run = RunRecord {
                id: "r".into(),
                created_at: 1,
                dataset: "d".into(),
                config: RunConfig::default(),
                status: "running".into(),
            };
            s.create_run(&run, &[]).unwrap();
        }
        let s = Store::open(&p).unwrap();
        assert_eq!(s.runs().unwrap().len(), 1);
    }
}
