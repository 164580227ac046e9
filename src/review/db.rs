//! Where review decisions, drafts and quality scores live: the local SQLite store (one
//! reviewer, or several processes on one file) or the shared PostgreSQL store (a panel on
//! several machines). Both have the same tables; everything review-related goes through here.

use std::path::Path;

use super::ReviewRecord;
use super::quality::QualityRecord;
use crate::store::pg::{self, PgStore};
use crate::store::{Draft, Result, Store};

pub enum ReviewDb {
    Local(Store),
    Shared(PgStore),
}

impl ReviewDb {
    /// `db` is a SQLite file or a `postgres://` URL.
    pub fn open(db: &Path) -> Result<ReviewDb> {
        match db.to_str().filter(|s| pg::is_url(s)) {
            Some(url) => Ok(ReviewDb::Shared(PgStore::connect(url)?)),
            None => Ok(ReviewDb::Local(Store::open(db)?)),
        }
    }

    /// What to call it in messages (a URL without its password).
    pub fn describe(&self, db: &Path) -> String {
        match self {
            ReviewDb::Local(_) => db.display().to_string(),
            ReviewDb::Shared(p) => p.shown().to_string(),
        }
    }

    /// Another handle on the same database, for another thread: a new connection to the
    /// SQLite file, or the shared store's connection thread (`None`: an in-memory store).
    pub fn reopen(&self) -> Option<ReviewDb> {
        match self {
            ReviewDb::Local(s) => Some(ReviewDb::Local(Store::open(&s.path()?).ok()?)),
            ReviewDb::Shared(p) => Some(ReviewDb::Shared(p.clone())),
        }
    }

    /// Where a watcher sees other reviewers' decisions arrive (`None`: an in-memory store).
    pub fn watch_source(&self) -> Option<super::watch::Source> {
        match self {
            ReviewDb::Local(s) => s.path().map(super::watch::Source::File),
            ReviewDb::Shared(p) => Some(super::watch::Source::Shared(p.connect_config())),
        }
    }

    pub fn save_decisions(&mut self, rs: &[ReviewRecord]) -> Result<usize> {
        match self {
            ReviewDb::Local(s) => s.save_decisions(rs),
            ReviewDb::Shared(p) => p.save_decisions(rs),
        }
    }

    pub fn decisions(&self) -> Result<Vec<ReviewRecord>> {
        match self {
            ReviewDb::Local(s) => s.decisions(),
            ReviewDb::Shared(p) => p.decisions(),
        }
    }

    /// Decisions stored after `seq`, and the last seq (see the stores' notes on ordering).
    pub fn decisions_after(&self, seq: i64) -> Result<(Vec<ReviewRecord>, i64)> {
        match self {
            ReviewDb::Local(s) => s.decisions_after(seq),
            ReviewDb::Shared(p) => p.decisions_after(seq),
        }
    }

    pub fn save_draft(&mut self, d: &Draft) -> Result<()> {
        match self {
            ReviewDb::Local(s) => s.save_draft(d),
            ReviewDb::Shared(p) => p.save_draft(d),
        }
    }

    pub fn drafts(&self, reviewer: &str) -> Result<Vec<Draft>> {
        match self {
            ReviewDb::Local(s) => s.drafts(reviewer),
            ReviewDb::Shared(p) => p.drafts(reviewer),
        }
    }

    pub fn save_quality(&mut self, q: &QualityRecord) -> Result<()> {
        match self {
            ReviewDb::Local(s) => s.save_quality(q),
            ReviewDb::Shared(p) => p.save_quality(q),
        }
    }

    pub fn quality(&self, model: Option<&str>) -> Result<Vec<QualityRecord>> {
        match self {
            ReviewDb::Local(s) => s.quality(model),
            ReviewDb::Shared(p) => p.quality(model),
        }
    }
}
