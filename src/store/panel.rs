//! The review panel's store: where review decisions, drafts and quality scores live, this
//! machine's SQLite store (one reviewer, or several processes on one file) or a shared store (a
//! panel on several machines, every decision at once for everyone: decisions are only ever
//! added, each once by its uid, and the shared store orders them). Both backends have the same
//! tables and stay private to this module; everything review-related goes through [`Panel`].

use super::pg::PgStore;
use super::review_records::{QualityRecord, ReviewRecord};
use super::{AnyStore, Location};
use super::{Draft, Result};

/// A review panel's store (see the module's notes).
pub struct Panel(AnyStore);

impl Panel {
    /// The panel of a shared store.
    pub(super) fn of_shared(pg: PgStore) -> Panel {
        Panel(AnyStore::Shared(pg))
    }

    /// The panel of the store `loc` names.
    pub(crate) fn open(loc: &Location) -> Result<Panel> {
        Ok(Panel(AnyStore::connect(loc)?))
    }

    pub fn save_decisions(&mut self, rs: &[ReviewRecord]) -> Result<usize> {
        match &mut self.0 {
            AnyStore::Local(s) => s.save_decisions(rs),
            AnyStore::Shared(p) => p.save_decisions(rs),
        }
    }

    pub fn decisions(&self) -> Result<Vec<ReviewRecord>> {
        match &self.0 {
            AnyStore::Local(s) => s.decisions(),
            AnyStore::Shared(p) => p.decisions(),
        }
    }

    /// Decisions stored after `seq`, and the last seq (see the stores' notes on ordering).
    pub fn decisions_after(&self, seq: i64) -> Result<(Vec<ReviewRecord>, i64)> {
        match &self.0 {
            AnyStore::Local(s) => s.decisions_after(seq),
            AnyStore::Shared(p) => p.decisions_after(seq),
        }
    }

    pub fn save_draft(&mut self, d: &Draft) -> Result<()> {
        match &mut self.0 {
            AnyStore::Local(s) => s.save_draft(d),
            AnyStore::Shared(p) => p.save_draft(d),
        }
    }

    pub fn drafts(&self, reviewer: &str) -> Result<Vec<Draft>> {
        match &self.0 {
            AnyStore::Local(s) => s.drafts(reviewer),
            AnyStore::Shared(p) => p.drafts(reviewer),
        }
    }

    pub fn save_quality(&mut self, q: &QualityRecord) -> Result<()> {
        match &mut self.0 {
            AnyStore::Local(s) => s.save_quality(q),
            AnyStore::Shared(p) => p.save_quality(q),
        }
    }

    pub fn quality(&self, model: Option<&str>) -> Result<Vec<QualityRecord>> {
        match &self.0 {
            AnyStore::Local(s) => s.quality(model),
            AnyStore::Shared(p) => p.quality(model),
        }
    }
}
