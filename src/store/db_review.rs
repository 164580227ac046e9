//! Review decisions, drafts and the panel's quality scores through a [`Db`]: the panel's own,
//! read and written where the panel keeps them (the shared store itself when there is one:
//! every decision at once for the whole panel; else this machine's store), never through a
//! copy. One of the direct-to-shared writes the store's notes name, one method per kind.

use super::review_records::{QualityRecord, ReviewRecord};
use super::{Db, Draft, Location, Panel, Result};

impl Db {
    /// Runs `f` on the panel's store, opened on first use.
    fn with_panel<T>(&self, f: impl FnOnce(&mut Panel) -> Result<T>) -> Result<T> {
        let mut held = self.review.lock().unwrap_or_else(|e| e.into_inner());
        let panel = match &mut *held {
            Some(p) => p,
            None => held.insert(match self.pg() {
                Some(pg) => Panel::of_shared(pg.clone()),
                None => Panel::open(&Location::File(self.local().to_path_buf()))?,
            }),
        };
        f(panel)
    }

    pub fn save_decisions(&self, rs: &[ReviewRecord]) -> Result<usize> {
        self.with_panel(|p| p.save_decisions(rs))
    }

    pub fn decisions(&self) -> Result<Vec<ReviewRecord>> {
        self.with_panel(|p| p.decisions())
    }

    /// Decisions stored after `seq`, and the last seq (see the stores' notes on ordering).
    pub fn decisions_after(&self, seq: i64) -> Result<(Vec<ReviewRecord>, i64)> {
        self.with_panel(|p| p.decisions_after(seq))
    }

    pub fn save_draft(&self, d: &Draft) -> Result<()> {
        self.with_panel(|p| p.save_draft(d))
    }

    pub fn drafts(&self, reviewer: &str) -> Result<Vec<Draft>> {
        self.with_panel(|p| p.drafts(reviewer))
    }

    pub fn save_quality(&self, q: &QualityRecord) -> Result<()> {
        self.with_panel(|p| p.save_quality(q))
    }

    pub fn quality(&self, model: Option<&str>) -> Result<Vec<QualityRecord>> {
        self.with_panel(|p| p.quality(model))
    }

    /// Where a watcher sees other reviewers' decisions arrive.
    pub fn review_source(&self) -> super::panel_watch::Source {
        match self.pg() {
            Some(pg) => super::panel_watch::Source::Shared(pg.connect_config()),
            None => super::panel_watch::Source::File(self.local().to_path_buf()),
        }
    }
}
