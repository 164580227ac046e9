//! The response cache: successful answers by request (and sample), so a repeated request is
//! answered without calling the model again. Errors are never cached.

use rusqlite::OptionalExtension;

use super::Store;
use super::error::Result;
use super::lane_tables::{Table, Val};
use super::record::{self, Fields, Record};
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

/// An entry of the cache as stored (the one conversion between `cache` rows and entries, for
/// both backends).
pub(crate) struct CacheEntry {
    pub(crate) key: String,
    pub(crate) cached: Cached,
    pub(crate) created_at: i64,
}

impl Record for CacheEntry {
    fn table() -> &'static Table {
        &super::tables::CACHE
    }

    fn fields(&self) -> Vec<(&'static str, Val)> {
        let c = &self.cached;
        vec![
            ("key", record::text(Some(&self.key))),
            ("text", record::text(Some(&c.text))),
            ("finish_reason", record::text(c.finish_reason.as_deref())),
            ("prompt_tokens", record::opt_int(c.prompt_tokens)),
            ("completion_tokens", record::opt_int(c.completion_tokens)),
            (
                "latency_ms",
                record::opt_int(c.latency_ms.map(|v| v.min(i64::MAX as u64) as i64)),
            ),
            ("created_at", record::int(self.created_at)),
            ("logprobs", record::blob(c.logprobs.as_deref())),
        ]
    }

    fn from_fields(f: &Fields<'_>) -> Result<Self> {
        Ok(CacheEntry {
            key: f.text("key")?,
            cached: Cached {
                text: f.text("text")?,
                finish_reason: f.opt_text("finish_reason"),
                prompt_tokens: f
                    .opt_int("prompt_tokens")
                    .map(|v| v.clamp(0, u32::MAX.into()) as u32),
                completion_tokens: f
                    .opt_int("completion_tokens")
                    .map(|v| v.clamp(0, u32::MAX.into()) as u32),
                latency_ms: f.opt_int("latency_ms").map(|v| v.max(0) as u64),
                logprobs: f.opt_blob("logprobs"),
            },
            created_at: f.opt_int("created_at").unwrap_or(0),
        })
    }
}

/// A cached answer by key, in one statement (one read transaction, one round of file locks):
/// the judges' cache first, then a run's answer stored with the key. The newest answer is the
/// row `max(created_at)` stands on (SQLite gives an aggregate's bare columns from the row of
/// its min or max): unlike `ORDER BY created_at DESC LIMIT 1` it needs no temporary B-tree,
/// which every job's lookup opened and closed; with no such answer the aggregate's one row is
/// all NULL, and the outer `WHERE` drops it.
/// Its columns are the cache table's, in the description's order (the answer's `created_at` is
/// its newest), so the row converts to a [`CacheEntry`] by name.
pub(super) static LOOKUP: std::sync::LazyLock<String> = std::sync::LazyLock::new(|| {
    let cols = super::tables::CACHE.col_list();
    let answer = cols.replacen("key", "?1", 1);
    let inner = answer
        .replacen("?1, ", "", 1)
        .replace("created_at", "max(created_at) AS created_at");
    format!(
        "SELECT {cols} FROM cache WHERE key = ?1
         UNION ALL
         SELECT {answer} FROM (
             SELECT {inner}
             FROM responses WHERE cache_key = ?1 AND error IS NULL AND text IS NOT NULL)
         WHERE text IS NOT NULL
         LIMIT 1"
    )
});

impl Store {
    pub fn cache_put(&self, key: &str, c: &Cached) -> Result<()> {
        let entry = CacheEntry {
            key: key.to_string(),
            cached: c.clone(),
            created_at: now_secs(),
        };
        self.conn
            .prepare_cached(&super::tables::CACHE.upsert("?", true, ""))?
            .execute(rusqlite::params_from_iter(entry.to_row()))?;
        Ok(())
    }

    /// The cached answer for `key`: a single call's entry in `cache`, else a run's answer that
    /// carries the key (the newest).
    pub fn cache_get(&self, key: &str) -> Result<Option<Cached>> {
        let mut st = self.conn.prepare_cached(&LOOKUP)?;
        let width = super::tables::CACHE.cols.len();
        let entry = st
            .query_row([key], |r| {
                super::lane_tables::sqlite_record::<CacheEntry>(r, width)
            })
            .optional()?;
        Ok(entry.map(|e| e.cached))
    }
}
