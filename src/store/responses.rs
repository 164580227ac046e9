//! Every answer (or failure) a run received, as it arrived.

use rusqlite::{OptionalExtension, params};
use serde::{Deserialize, Serialize};

use super::Store;
use super::error::Result;
use super::lane_tables::{Table, Val};
use super::record::{Fields, Record, blob, flag, int, text};
use super::runs::JobState;

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
    /// The answer's token log-probabilities, encoded (`store::logprobs`), when they were asked
    /// for and the provider gave them. Read apart (`Store::logprobs`): they are big.
    #[serde(skip)]
    pub logprobs: Option<Vec<u8>>,
}

/// An answer as a row of [`super::tables::RESPONSES`], and back: the one conversion, by column
/// name, both backends read and write answers with. Its cache key is stored only for an
/// answer that can be one (errors and cut answers are never cache entries).
impl Record for ResponseRecord {
    fn table() -> &'static Table {
        &super::tables::RESPONSES
    }

    fn fields(&self) -> Vec<(&'static str, Val)> {
        let ms =
            |v: Option<u64>| v.map_or(Val::Null, |v| int(i64::try_from(v).unwrap_or(i64::MAX)));
        vec![
            ("run_id", text(Some(&self.run_id))),
            ("job_idx", int(self.job_idx)),
            ("item_id", text(Some(&self.item_id))),
            ("task_id", text(Some(&self.task_id))),
            ("model", text(Some(&self.model))),
            ("sample", int(self.sample)),
            ("text", text(self.text.as_deref())),
            ("error", text(self.error.as_deref())),
            ("finish_reason", text(self.finish_reason.as_deref())),
            ("prompt_tokens", self.prompt_tokens.map_or(Val::Null, int)),
            (
                "completion_tokens",
                self.completion_tokens.map_or(Val::Null, int),
            ),
            ("latency_ms", ms(self.latency_ms)),
            ("first_token_ms", ms(self.first_token_ms)),
            ("attempts", int(self.attempts)),
            ("params", text(Some(&self.params))),
            ("request_hash", text(Some(&self.request_hash))),
            ("cached", flag(self.cached)),
            ("created_at", int(self.created_at)),
            (
                "cache_key",
                text(
                    self.cache_key
                        .as_deref()
                        .filter(|_| self.is_ok() && self.text.is_some()),
                ),
            ),
            ("logprobs", blob(self.logprobs.as_deref())),
        ]
    }

    fn from_fields(f: &Fields<'_>) -> Result<Self> {
        let count = |c| f.opt_int(c).and_then(|v| u32::try_from(v).ok());
        let ms = |c| f.opt_int(c).and_then(|v| u64::try_from(v).ok());
        Ok(ResponseRecord {
            run_id: f.text("run_id")?,
            job_idx: f.u32("job_idx")?,
            item_id: f.text("item_id")?,
            task_id: f.text("task_id")?,
            model: f.text("model")?,
            sample: f.u32("sample")?,
            text: f.opt_text("text"),
            error: f.opt_text("error"),
            finish_reason: f.opt_text("finish_reason"),
            prompt_tokens: count("prompt_tokens"),
            completion_tokens: count("completion_tokens"),
            latency_ms: ms("latency_ms"),
            first_token_ms: ms("first_token_ms"),
            attempts: f
                .opt_int("attempts")
                .map_or(0, |v| v.clamp(0, i64::from(u32::MAX)) as u32),
            params: f.opt_text("params").unwrap_or_default(),
            request_hash: f.opt_text("request_hash").unwrap_or_default(),
            cached: f.flag("cached"),
            created_at: f.opt_int("created_at").unwrap_or(0),
            cache_key: f.opt_text("cache_key"),
            logprobs: f.opt_blob("logprobs"),
        })
    }
}

/// The columns an answer is read with when its tokens are not wanted (they are big).
pub(super) fn light_cols() -> String {
    super::tables::RESPONSES.cols[..super::tables::RESPONSE_READ]
        .iter()
        .map(|(c, _)| *c)
        .collect::<Vec<_>>()
        .join(", ")
}

impl ResponseRecord {
    pub fn is_ok(&self) -> bool {
        self.error.is_none()
    }

    /// An answer read from files (another tool's log, PRISM's outputs layout) for `job` of
    /// `run_id`: its text, or why there is none; no endpoint was called, so nothing of a call.
    pub fn imported(
        run_id: &str,
        job: &super::JobRecord,
        text: Option<String>,
        error: Option<String>,
    ) -> ResponseRecord {
        ResponseRecord {
            run_id: run_id.to_string(),
            job_idx: job.idx,
            item_id: job.item_id.clone(),
            task_id: job.task_id.clone(),
            model: job.model.clone(),
            sample: job.sample,
            text,
            error,
            finish_reason: None,
            prompt_tokens: None,
            completion_tokens: None,
            latency_ms: None,
            first_token_ms: None,
            attempts: 0,
            params: "{}".into(),
            request_hash: String::new(),
            cached: false,
            created_at: super::now_secs(),
            cache_key: None,
            logprobs: None,
        }
    }
}

impl Store {
    /// Saves responses in one transaction; a successful one with a cache key is the cache
    /// entry for that key.
    pub fn save_responses(&mut self, rs: &[ResponseRecord]) -> Result<()> {
        self.save_responses_and_scores(rs, &[])
    }

    /// Saves responses, then scores, in one transaction: the writer's group commit of what
    /// arrived together. A run scores each answer as it lands, so a group holds answers and the
    /// scores of answers committed before; one commit where there were two writes the table's
    /// last pages and the WAL frame headers once.
    pub fn save_responses_and_scores(
        &mut self,
        rs: &[ResponseRecord],
        scores: &[super::ScoreRecord],
    ) -> Result<()> {
        let tx = self.conn.transaction()?;
        write_responses(&tx, rs)?;
        if !scores.is_empty() {
            super::scores::write_scores(&tx, scores)?;
        }
        tx.commit()?;
        Ok(())
    }

    /// An answer read with [`light_cols`] (no cache key, no tokens).
    pub(super) fn response_row(r: &rusqlite::Row<'_>) -> rusqlite::Result<ResponseRecord> {
        super::lane_tables::sqlite_record(r, super::tables::RESPONSE_READ)
    }

    pub fn responses(&self, run_id: &str) -> Result<Vec<ResponseRecord>> {
        let mut st = self.conn.prepare(&format!(
            "SELECT {} FROM responses WHERE run_id = ?1 ORDER BY job_idx",
            light_cols()
        ))?;
        let rows = st
            .query_map([run_id], Self::response_row)?
            .collect::<rusqlite::Result<Vec<_>>>()?;
        Ok(rows)
    }

    /// A run's answers that have no score (none saved yet: a process killed between an
    /// answer and its judge's score), for a resumed run to score first.
    pub fn unscored_responses_of(&self, run_id: &str) -> Result<Vec<ResponseRecord>> {
        let mut st = self.conn.prepare(&format!(
            "SELECT {} FROM responses r WHERE r.run_id = ?1 AND NOT EXISTS
             (SELECT 1 FROM scores s WHERE s.run_id = r.run_id AND s.job_idx = r.job_idx)
             ORDER BY r.job_idx",
            light_cols()
                .split(", ")
                .map(|c| format!("r.{c}"))
                .collect::<Vec<_>>()
                .join(", ")
        ))?;
        let rows = st
            .query_map([run_id], Self::response_row)?
            .collect::<rusqlite::Result<Vec<_>>>()?;
        Ok(rows)
    }

    /// One answer: a run's job.
    pub fn response(&self, run_id: &str, job: u32) -> Result<Option<ResponseRecord>> {
        let mut st = self.conn.prepare(&format!(
            "SELECT {} FROM responses WHERE run_id = ?1 AND job_idx = ?2",
            light_cols()
        ))?;
        let mut rows = st.query_map(rusqlite::params![run_id, job], Self::response_row)?;
        Ok(rows.next().transpose()?)
    }

    /// One run's answers to one item, every model and sample, in job order.
    pub fn responses_in_run(&self, run_id: &str, item_id: &str) -> Result<Vec<ResponseRecord>> {
        let mut st = self.conn.prepare(&format!(
            "SELECT {} FROM responses WHERE run_id = ?1 AND item_id = ?2 ORDER BY job_idx",
            light_cols()
        ))?;
        let rows = st
            .query_map([run_id, item_id], Self::response_row)?
            .collect::<rusqlite::Result<Vec<_>>>()?;
        Ok(rows)
    }

    /// The latest answer of each (model, sample) for an item, across runs (re-opening an item
    /// shows what is stored).
    /// One run's answers to one item (every model and sample), in job order: what the runs
    /// screen opens (`o`), where the newest answers of every run are not what is asked.
    pub fn run_item_answers(&self, run_id: &str, item_id: &str) -> Result<Vec<ResponseRecord>> {
        let mut st = self.conn.prepare(&format!(
            "SELECT {} FROM responses WHERE run_id = ?1 AND item_id = ?2 ORDER BY job_idx",
            light_cols()
        ))?;
        let rows = st
            .query_map([run_id, item_id], Self::response_row)?
            .collect::<rusqlite::Result<Vec<_>>>()?;
        Ok(rows)
    }

    /// The items of a run, each once, in job order.
    pub fn run_item_ids(&self, run_id: &str) -> Result<Vec<String>> {
        let mut st = self
            .conn
            .prepare("SELECT item_id FROM jobs WHERE run_id = ?1 ORDER BY idx")?;
        let rows = st
            .query_map([run_id], |r| r.get::<_, String>("item_id"))?
            .collect::<rusqlite::Result<Vec<_>>>()?;
        let mut seen = std::collections::HashSet::new();
        Ok(rows
            .into_iter()
            .filter(|i| seen.insert(i.clone()))
            .collect())
    }

    /// The items with a stored answer (of any run, model or sample) that holds `needle`, case
    /// aside (ASCII letters; SQLite's `lower`), in item order. A scan of the answers' text: the
    /// TUI asks it off the loop thread, once per search.
    pub fn items_answered_with(&self, needle: &str) -> Result<Vec<String>> {
        let mut st = self.conn.prepare(
            "SELECT DISTINCT item_id FROM responses
             WHERE text IS NOT NULL AND instr(lower(text), lower(?1)) > 0 ORDER BY item_id",
        )?;
        let rows = st
            .query_map([needle], |r| r.get::<_, String>("item_id"))?
            .collect::<rusqlite::Result<Vec<_>>>()?;
        Ok(rows)
    }

    pub fn responses_for_item(&self, item_id: &str) -> Result<Vec<ResponseRecord>> {
        let mut st = self.conn.prepare(&format!(
            "SELECT {} FROM responses WHERE item_id = ?1 ORDER BY created_at, run_id, job_idx",
            light_cols()
        ))?;
        let rows = st
            .query_map([item_id], Self::response_row)?
            .collect::<rusqlite::Result<Vec<_>>>()?;
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
        // Their token log-probabilities, where kept (a few answers: read one by one).
        let mut lp = self
            .conn
            .prepare_cached("SELECT logprobs FROM responses WHERE run_id = ?1 AND job_idx = ?2")?;
        for r in &mut latest {
            r.logprobs = lp
                .query_row(params![r.run_id, r.job_idx], |row| row.get("logprobs"))
                .optional()?
                .flatten();
        }
        Ok(latest)
    }

    /// Answers whose score waits for a judge (scored by rule as far as the rule goes, then
    /// left unscored with "needs the … judge"), oldest run first.
    pub fn awaiting_judge(&self) -> Result<Vec<ResponseRecord>> {
        let cols: Vec<String> = light_cols().split(", ").map(|c| format!("r.{c}")).collect();
        let mut st = self.conn.prepare(&format!(
            "SELECT {} FROM responses r JOIN scores s ON s.run_id = r.run_id AND s.job_idx = r.job_idx \
             WHERE s.score IS NULL AND s.detail LIKE 'needs the % judge' \
             ORDER BY r.run_id, r.job_idx",
            cols.join(", ")
        ))?;
        let rows = st
            .query_map([], Self::response_row)?
            .collect::<rusqlite::Result<Vec<_>>>()?;
        Ok(rows)
    }

    /// Stored answers that have no score yet (answered, never scored: the TUI scores them by
    /// rule when it opens the store).
    pub fn unscored_responses(&self) -> Result<Vec<ResponseRecord>> {
        // A run whose answers (its done jobs) are as many as its score rows (its summaries)
        // has none unscored: only the others are read answer by answer, so a history of
        // finished runs costs one count each.
        let runs: Vec<(String, i64)> = self
            .conn
            .prepare_cached(
                "SELECT r.id, COALESCE((SELECT SUM(rows) FROM run_summaries s \
                 WHERE s.run_id = r.id), 0) AS scored FROM runs r ORDER BY r.id",
            )?
            .query_map([], |r| Ok((r.get("id")?, r.get("scored")?)))?
            .collect::<rusqlite::Result<_>>()?;
        let mut out = Vec::new();
        for (run, scored) in runs {
            if self.job_counts(&run)?.done as i64 == scored {
                continue;
            }
            out.extend(self.unscored_responses_of(&run)?);
        }
        Ok(out)
    }
}

/// Writes responses in `tx` and marks their jobs done or failed.
fn write_responses(tx: &rusqlite::Transaction<'_>, rs: &[ResponseRecord]) -> Result<()> {
    // Made once: it is the same for every save.
    static SQL: std::sync::LazyLock<String> =
        std::sync::LazyLock::new(|| super::tables::RESPONSES.replace_sql());
    let mut ins = tx.prepare_cached(&SQL)?;
    let mut job = tx.prepare_cached("UPDATE jobs SET state = ?3 WHERE run_id = ?1 AND idx = ?2")?;
    for r in rs {
        ins.execute(rusqlite::params_from_iter(r.to_row()))?;
        job.execute(params![
            r.run_id,
            r.job_idx,
            if r.is_ok() {
                JobState::Done.as_str()
            } else {
                JobState::Failed.as_str()
            }
        ])?;
    }
    Ok(())
}
