//! The response cache: successful answers by request (and sample), so a repeated request is
//! answered without calling the model again. Errors are never cached.

use rusqlite::{OptionalExtension, params};

use super::Store;
use super::error::Result;
use super::time::now_secs;

/// A cached answer.
#[derive(Debug, Clone, PartialEq)]
pub struct Cached {
    pub text: String,
    pub finish_reason: Option<String>,
    pub prompt_tokens: Option<u32>,
    pub completion_tokens: Option<u32>,
    pub latency_ms: Option<u64>,
    /// Token log-probabilities, encoded (`store::logprobs`), when the answer had them.
    pub logprobs: Option<Vec<u8>>,
}

/// Fills the cache: a run's successful answers, and single requests (the judges).
pub(super) const CACHE_PUT: &str = "INSERT OR REPLACE INTO cache (key, text, finish_reason, prompt_tokens, completion_tokens, latency_ms, created_at, logprobs)
     VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)";

impl Store {
    pub fn cache_put(&self, key: &str, c: &Cached) -> Result<()> {
        self.conn.execute(
            CACHE_PUT,
            params![
                key,
                c.text,
                c.finish_reason,
                c.prompt_tokens,
                c.completion_tokens,
                c.latency_ms.map(|v| v as i64),
                now_secs(),
                c.logprobs
            ],
        )?;
        Ok(())
    }

    /// The cached answer for `key`: a single call's entry in `cache`, else a run's answer that
    /// carries the key (the newest).
    pub fn cache_get(&self, key: &str) -> Result<Option<Cached>> {
        let row = |r: &rusqlite::Row<'_>| {
            Ok(Cached {
                text: r.get(0)?,
                finish_reason: r.get(1)?,
                prompt_tokens: r.get(2)?,
                completion_tokens: r.get(3)?,
                latency_ms: r.get::<_, Option<i64>>(4)?.map(|v| v as u64),
                logprobs: r.get(5)?,
            })
        };
        // One statement (one read transaction, one round of file locks): the judges' cache
        // first, then a run's answer stored with the key.
        let mut st = self.conn.prepare_cached(
            "SELECT text, finish_reason, prompt_tokens, completion_tokens, latency_ms, logprobs FROM cache WHERE key = ?1
             UNION ALL
             SELECT * FROM (SELECT text, finish_reason, prompt_tokens, completion_tokens, latency_ms, logprobs FROM responses
                 WHERE cache_key = ?1 AND error IS NULL AND text IS NOT NULL
                 ORDER BY created_at DESC LIMIT 1)
             LIMIT 1",
        )?;
        Ok(st.query_row([key], row).optional()?)
    }
}
