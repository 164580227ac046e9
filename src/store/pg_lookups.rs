//! Cache lookups on a shared store, from the engine's own tasks: async clients on the
//! engine's runtime, queries pipelined on a few connections taken in turn (the server runs one
//! connection's queries one after another, a fraction of a millisecond each). Every job looks
//! the cache up before its call, so a lookup's latency is paid by every job: through a thread
//! of its own it cost a worker on PostgreSQL a third of its throughput against a fast model.

use std::sync::Arc;

use tokio_postgres::{Client, Statement};

use super::Cached;
use super::record::Record;

/// The cached answer for a key: a single call's entry first, else the newest answer of a run
/// that carries the key.
/// Its columns are the cache table's in the description's order, so the row converts to a
/// [`CacheEntry`](super::cache::CacheEntry) by name.
static CACHE_GET: std::sync::LazyLock<String> = std::sync::LazyLock::new(|| {
    let cols = super::tables::CACHE.col_list();
    let answer = cols.replacen("key", "$1::TEXT AS key", 1);
    format!(
        "SELECT {cols} FROM cache WHERE key = $1
         UNION ALL
         SELECT * FROM (SELECT {answer}
             FROM responses WHERE cache_key = $1 AND error IS NULL AND text IS NOT NULL
             ORDER BY created_at DESC LIMIT 1) b
         LIMIT 1"
    )
});

/// Connections lookups are spread over.
const CONNECTIONS: usize = 4;

type Conn = tokio::sync::Mutex<Option<Arc<(Client, Statement)>>>;

pub(crate) struct Lookups {
    cfg: Box<tokio_postgres::Config>,
    conns: Vec<Conn>,
    turn: std::sync::atomic::AtomicUsize,
}

impl Lookups {
    pub(crate) fn new(cfg: Box<tokio_postgres::Config>) -> Lookups {
        Lookups {
            cfg,
            conns: (0..CONNECTIONS)
                .map(|_| tokio::sync::Mutex::new(None))
                .collect(),
            turn: Default::default(),
        }
    }

    /// The next connection (made, or made again when lost); `None` when the store cannot be
    /// reached (the lookup is then a miss: the model is asked).
    async fn conn(&self) -> Option<Arc<(Client, Statement)>> {
        let k = self.turn.fetch_add(1, std::sync::atomic::Ordering::Relaxed) % CONNECTIONS;
        let mut g = self.conns[k].lock().await;
        if let Some(c) = g.as_ref().filter(|c| !c.0.is_closed()) {
            return Some(c.clone());
        }
        let (client, connection) = self.cfg.connect(super::pg::tls()).await.ok()?;
        tokio::spawn(connection);
        let st = client.prepare(&CACHE_GET).await.ok()?;
        let c = Arc::new((client, st));
        *g = Some(c.clone());
        Some(c)
    }

    pub(crate) async fn get(&self, key: &str) -> Option<Cached> {
        let c = self.conn().await?;
        let row = c.0.query_opt(&c.1, &[&key]).await.ok()??;
        let t = &super::tables::CACHE;
        let row = super::lane_tables::pg::row_of(t, &row, t.cols.len()).ok()?;
        Some(super::cache::CacheEntry::from_row(&row).ok()?.cached)
    }
}
