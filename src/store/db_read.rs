//! Reading this machine's store through its [`Db`]: one connection, opened on the first read
//! and kept, so a command (or the TUI's store thread) that reads many times opens the store
//! (and checks its schema) once, and code outside `src/store/` holds a `&Db`, never a
//! connection.
//!
//! What a read hands out is shared (`&`): every write goes through the store's writer or a
//! `Db` method, so a read cannot write by accident. The lock is re-entrant because a reader
//! often calls a helper that reads too (on the same thread, the same connection); another
//! thread reading the same `Db` waits for the first to let go, which no command does for
//! long (a `Db` is read by the thread that made it, and the TUI's store thread has its own).

use std::cell::OnceCell;
use std::ops::Deref;

use parking_lot::{ReentrantMutex, ReentrantMutexGuard};

use super::history::History;
use super::{Db, Store};

/// The connection a [`Db`] reads through, opened on the first read.
#[derive(Default)]
pub(super) struct Reader(ReentrantMutex<OnceCell<Store>>);

impl Db {
    /// This machine's store to read (opened, and made if missing, on the first read). Hold
    /// what it gives for the reads of one task, not across an `.await`.
    pub fn read(&self) -> super::Result<impl Deref<Target = Store> + '_> {
        let cell = self.reader.0.lock();
        if cell.get().is_none() {
            let _ = cell.set(self.store()?);
        }
        Ok(ReentrantMutexGuard::map(cell, |c| {
            c.get().expect("the reader was opened above")
        }))
    }

    /// This machine's store to read, which must exist already (`hint` says how to make one).
    pub fn read_existing(&self, hint: &str) -> anyhow::Result<impl Deref<Target = Store> + '_> {
        if self.reader.0.lock().get().is_none() && !self.local().is_file() {
            anyhow::bail!(
                "no store at {} ({hint})",
                super::Location::of(self.local()).shown()
            );
        }
        Ok(self.read()?)
    }

    /// A `Db` reading through `store`, already open (an in-memory store in tests).
    pub fn over(store: Store) -> Db {
        let db = Db::file(&store.path().unwrap_or_default());
        let _ = db.reader.0.lock().set(store);
        db
    }
}

/// What lists of runs read (`prism runs`, the runs screen, reports' rates): this machine's
/// store, or the shared store itself for a `Db` made with [`Db::listing_shared`].
impl Db {
    fn history<T>(&self, f: impl FnOnce(&dyn History) -> super::Result<T>) -> super::Result<T> {
        match self.pg().filter(|_| self.lists_shared) {
            Some(pg) => f(pg),
            None => f(&*self.read()?),
        }
    }

    /// A page of runs, newest first, with their names and tags.
    pub fn runs_page(&self, f: &super::RunFilter) -> super::Result<Vec<super::LabelledRun>> {
        self.history(|h| h.runs_page(f))
    }

    pub fn job_counts(&self, run: &str) -> super::Result<super::JobCounts> {
        self.history(|h| h.job_counts(run))
    }

    /// The distinct items a run asked.
    pub fn run_item_count(&self, run: &str) -> super::Result<usize> {
        self.history(|h| h.run_item_count(run))
    }

    pub fn run_summaries(&self, run: &str) -> super::Result<Vec<super::summaries::TaskSummary>> {
        self.history(|h| h.run_summaries(run))
    }

    /// A run's summaries as its scores make them now: what the kept ones must equal.
    pub fn recount_summaries(
        &self,
        run: &str,
    ) -> super::Result<Vec<super::summaries::TaskSummary>> {
        self.history(|h| h.recount_summaries(run))
    }

    /// A run held only in part here (a shared run whose pull is not finished): its answers
    /// here, and all of them.
    pub fn pulled_in_part(&self, run: &str) -> super::Result<Option<(usize, usize)>> {
        self.history(|h| h.pulled_in_part(run))
    }

    /// Where a run's kept summaries and its scores part (see
    /// [`super::history::summaries_disagree`]).
    pub fn summaries_disagree(&self, run: &str) -> super::Result<Vec<(String, String)>> {
        self.history(|h| super::history::summaries_disagree(h, run))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_read_inside_a_read_shares_the_connection() {
        let dir = tempfile::tempdir().unwrap();
        let db = Db::file(&dir.path().join("s.db"));
        let outer = db.read().unwrap();
        let inner = db.read().unwrap();
        assert!(std::ptr::eq(&*outer, &*inner));
        assert!(outer.runs().unwrap().is_empty());
    }

    #[test]
    fn reading_a_missing_store_says_how_to_make_one() {
        let dir = tempfile::tempdir().unwrap();
        let db = Db::file(&dir.path().join("none.db"));
        let e = db.read_existing("run `prism run` first").err().unwrap();
        assert!(e.to_string().contains("run `prism run` first"), "{e}");
        assert!(!dir.path().join("none.db").exists());
    }
}
