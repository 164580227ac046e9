//! The review panel's store: where review decisions, drafts and quality scores live, this
//! machine's SQLite store (one reviewer, or several processes on one file) or a shared store (a
//! panel on several machines, every decision at once for everyone: decisions are only ever
//! added, each once by its uid, and the shared store orders them). Both backends have the same
//! tables and stay private to this module; everything review-related goes through [`Panel`].

use std::path::Path;

use super::pg::{self, PgStore};
use super::review_records::{QualityRecord, ReviewRecord};
use super::{Draft, Result, Store};

/// A review panel's store (see the module's notes).
pub struct Panel(Backend);

enum Backend {
    Local(Store),
    Shared(PgStore),
}

impl Panel {
    /// The panel of this machine's store `store`.
    pub fn local(store: Store) -> Panel {
        Panel(Backend::Local(store))
    }

    /// The panel of a shared store.
    pub(super) fn of_shared(pg: PgStore) -> Panel {
        Panel(Backend::Shared(pg))
    }

    /// `db` is a SQLite file or a shared store's URL.
    pub fn open(db: &Path) -> Result<Panel> {
        match db.to_str().filter(|s| pg::is_url(s)) {
            Some(url) => Ok(Panel(Backend::Shared(PgStore::connect(url)?))),
            None => Ok(Panel(Backend::Local(Store::open(db)?))),
        }
    }

    /// What to call it in messages (a URL without its password).
    pub fn describe(&self, db: &Path) -> String {
        match &self.0 {
            Backend::Local(_) => db.display().to_string(),
            Backend::Shared(p) => p.shown().to_string(),
        }
    }

    /// Another handle on the same database, for another thread: a new connection to the
    /// SQLite file, or the shared store's connection thread (`None`: an in-memory store).
    pub fn reopen(&self) -> Option<Panel> {
        match &self.0 {
            Backend::Local(s) => Some(Panel(Backend::Local(Store::open(&s.path()?).ok()?))),
            Backend::Shared(p) => Some(Panel(Backend::Shared(p.clone()))),
        }
    }

    /// Where a watcher sees other reviewers' decisions arrive (`None`: an in-memory store).
    pub fn watch_source(&self) -> Option<super::panel_watch::Source> {
        match &self.0 {
            Backend::Local(s) => s.path().map(super::panel_watch::Source::File),
            Backend::Shared(p) => Some(super::panel_watch::Source::Shared(p.connect_config())),
        }
    }

    pub fn save_decisions(&mut self, rs: &[ReviewRecord]) -> Result<usize> {
        match &mut self.0 {
            Backend::Local(s) => s.save_decisions(rs),
            Backend::Shared(p) => p.save_decisions(rs),
        }
    }

    pub fn decisions(&self) -> Result<Vec<ReviewRecord>> {
        match &self.0 {
            Backend::Local(s) => s.decisions(),
            Backend::Shared(p) => p.decisions(),
        }
    }

    /// Decisions stored after `seq`, and the last seq (see the stores' notes on ordering).
    pub fn decisions_after(&self, seq: i64) -> Result<(Vec<ReviewRecord>, i64)> {
        match &self.0 {
            Backend::Local(s) => s.decisions_after(seq),
            Backend::Shared(p) => p.decisions_after(seq),
        }
    }

    pub fn save_draft(&mut self, d: &Draft) -> Result<()> {
        match &mut self.0 {
            Backend::Local(s) => s.save_draft(d),
            Backend::Shared(p) => p.save_draft(d),
        }
    }

    pub fn drafts(&self, reviewer: &str) -> Result<Vec<Draft>> {
        match &self.0 {
            Backend::Local(s) => s.drafts(reviewer),
            Backend::Shared(p) => p.drafts(reviewer),
        }
    }

    pub fn save_quality(&mut self, q: &QualityRecord) -> Result<()> {
        match &mut self.0 {
            Backend::Local(s) => s.save_quality(q),
            Backend::Shared(p) => p.save_quality(q),
        }
    }

    pub fn quality(&self, model: Option<&str>) -> Result<Vec<QualityRecord>> {
        match &self.0 {
            Backend::Local(s) => s.quality(model),
            Backend::Shared(p) => p.quality(model),
        }
    }
}
