//! A worker on a shared store (PostgreSQL): its name in a run, its counts, and how its
//! store's troubles are told. Apart from the writer thread (`pg_writer`) so the store's handle
//! can carry it without importing the thread.

use std::sync::atomic::{AtomicU64, Ordering};

/// How a shared store's errors begin, so what is said of them ([`store_down_advice`]) fits:
/// a database away is not a full disk.
pub(crate) const SHARED_DB: &str = "the shared database";

/// What to tell a user whose results cannot be saved, for `reason` (a save's error).
pub fn store_down_advice(reason: &str, goes_on: &str) -> String {
    if reason.contains(SHARED_DB) {
        format!("cannot reach the database: {reason}; {goes_on} once it answers again")
    } else {
        format!("disk full? {reason}; free space and {goes_on}")
    }
}

/// What a worker's handles share: its name in the run and its counts.
pub(crate) struct Shared {
    /// This worker, as leases and answers name it (host and pid, and a random part).
    pub worker: String,
    pub(super) dropped: AtomicU64,
    pub(super) retaken: AtomicU64,
}

/// A worker's counts on a shared run.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct SharedCounts {
    /// Answers dropped: another worker's answer to the job was stored first.
    pub dropped: u64,
    /// Jobs taken over from a worker whose lease ran out.
    pub retaken: u64,
}

impl Shared {
    pub(crate) fn counts(&self) -> SharedCounts {
        SharedCounts {
            dropped: self.dropped.load(Ordering::Relaxed),
            retaken: self.retaken.load(Ordering::Relaxed),
        }
    }
}

/// The name a worker goes by in a shared run: readable in `prism runs workers`, unique across
/// machines and restarts.
pub(super) fn worker_name() -> String {
    format!(
        "{}-{}-{:04x}",
        super::host_name(),
        std::process::id(),
        rand::random::<u16>()
    )
}
