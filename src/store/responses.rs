//! Every answer (or failure) a run received, as it arrived.

use rusqlite::{OptionalExtension, params};
use serde::{Deserialize, Serialize};

use super::Store;
use super::error::Result;
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

/// An answer's times in milliseconds as SQLite's integers.
pub(super) fn response_times(r: &ResponseRecord) -> [Option<i64>; 2] {
    [
        r.latency_ms.map(|v| v as i64),
        r.first_token_ms.map(|v| v as i64),
    ]
}

/// An answer's values in the order the inserts bind them (`run_id` .. `logprobs`), with the
/// cache key to store (`None`: the answer is no cache entry).
pub(super) fn response_values<'a>(
    r: &'a ResponseRecord,
    times: &'a [Option<i64>; 2],
    key: Option<&'a String>,
) -> [&'a dyn rusqlite::ToSql; 20] {
    [
        &r.run_id,
        &r.job_idx,
        &r.item_id,
        &r.task_id,
        &r.model,
        &r.sample,
        &r.text,
        &r.error,
        &r.finish_reason,
        &r.prompt_tokens,
        &r.completion_tokens,
        &times[0],
        &times[1],
        &r.attempts,
        &r.params,
        &r.request_hash,
        &r.cached,
        &r.created_at,
        key_sql(key),
        &r.logprobs,
    ]
}

fn key_sql(key: Option<&String>) -> &dyn rusqlite::ToSql {
    match key {
        Some(k) => k,
        None => &rusqlite::types::Null,
    }
}

impl ResponseRecord {
    pub fn is_ok(&self) -> bool {
        self.error.is_none()
    }
}

impl Store {
    /// Saves responses in one transaction; a successful one with a cache key is the cache
    /// entry for that key.
    pub fn save_responses(&mut self, rs: &[ResponseRecord]) -> Result<()> {
        let tx = self.conn.transaction()?;
        {
            let mut ins = tx.prepare_cached(
                "INSERT OR REPLACE INTO responses (run_id, job_idx, item_id, task_id, model, sample, text, error,
                 finish_reason, prompt_tokens, completion_tokens, latency_ms, first_token_ms, attempts, params,
                 request_hash, cached, created_at, cache_key, logprobs)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16, ?17, ?18, ?19, ?20)",
            )?;
            let mut job =
                tx.prepare_cached("UPDATE jobs SET state = ?3 WHERE run_id = ?1 AND idx = ?2")?;
            for r in rs {
                // Errors and cut answers are never cached.
                let key = r
                    .cache_key
                    .as_ref()
                    .filter(|_| r.is_ok() && r.text.is_some());
                let times = response_times(r);
                ins.execute(response_values(r, &times, key))?;
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
        }
        tx.commit()?;
        Ok(())
    }

    pub(super) const RESPONSE_COLS: &'static str = "run_id, job_idx, item_id, task_id, model, sample, text, error, finish_reason, prompt_tokens, completion_tokens, latency_ms, first_token_ms, attempts, params, request_hash, cached, created_at";

    pub(super) fn response_row(r: &rusqlite::Row<'_>) -> rusqlite::Result<ResponseRecord> {
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
            logprobs: None,
        })
    }

    pub fn responses(&self, run_id: &str) -> Result<Vec<ResponseRecord>> {
        let mut st = self.conn.prepare(&format!(
            "SELECT {} FROM responses WHERE run_id = ?1 ORDER BY job_idx",
            Self::RESPONSE_COLS
        ))?;
        let rows = st
            .query_map([run_id], Self::response_row)?
            .collect::<rusqlite::Result<Vec<_>>>()?;
        Ok(rows)
    }

    /// One run's answers to one item, every model and sample, in job order.
    pub fn responses_in_run(&self, run_id: &str, item_id: &str) -> Result<Vec<ResponseRecord>> {
        let mut st = self.conn.prepare(&format!(
            "SELECT {} FROM responses WHERE run_id = ?1 AND item_id = ?2 ORDER BY job_idx",
            Self::RESPONSE_COLS
        ))?;
        let rows = st
            .query_map([run_id, item_id], Self::response_row)?
            .collect::<rusqlite::Result<Vec<_>>>()?;
        Ok(rows)
    }

    /// The latest answer of each (model, sample) for an item, across runs (re-opening an item
    /// shows what is stored).
    pub fn responses_for_item(&self, item_id: &str) -> Result<Vec<ResponseRecord>> {
        let mut st = self.conn.prepare(&format!(
            "SELECT {} FROM responses WHERE item_id = ?1 ORDER BY created_at, run_id, job_idx",
            Self::RESPONSE_COLS
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
                .query_row(params![r.run_id, r.job_idx], |row| row.get(0))
                .optional()?
                .flatten();
        }
        Ok(latest)
    }

    /// Stored answers that have no score yet (answered, never scored: the TUI scores them by
    /// rule when it opens the store).
    /// Answers whose score waits for a judge (scored by rule as far as the rule goes, then
    /// left unscored with "needs the … judge"), oldest run first.
    pub fn awaiting_judge(&self) -> Result<Vec<ResponseRecord>> {
        let cols: Vec<String> = Self::RESPONSE_COLS
            .split(", ")
            .map(|c| format!("r.{c}"))
            .collect();
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

    pub fn unscored_responses(&self) -> Result<Vec<ResponseRecord>> {
        let cols: Vec<String> = Self::RESPONSE_COLS
            .split(", ")
            .map(|c| format!("r.{c}"))
            .collect();
        let mut st = self.conn.prepare(&format!(
            "SELECT {} FROM responses r WHERE NOT EXISTS \
             (SELECT 1 FROM scores s WHERE s.run_id = r.run_id AND s.job_idx = r.job_idx) \
             ORDER BY r.run_id, r.job_idx",
            cols.join(", ")
        ))?;
        let rows = st
            .query_map([], Self::response_row)?
            .collect::<rusqlite::Result<Vec<_>>>()?;
        Ok(rows)
    }
}
