//! Saving that never gives up on a result: a write that fails (a full disk, most likely) is held
//! and retried with backoff until it works or the work is cancelled; the front-end is told once
//! when saving stops working and once when it works again; while it is down, no new call goes out
//! (each call would only add a result to hold). Shared by detection and self-detection.

use std::future::Future;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::Duration;

use tokio::sync::{Semaphore, SemaphorePermit};
use tokio_util::sync::CancellationToken;

/// What saving is up to, across the workers of one run.
#[derive(Debug, Default)]
pub(crate) struct Holder {
    down: AtomicBool,
    holding: AtomicUsize,
    /// A write was refused because the run's lock was taken over (see `lease`).
    lost: AtomicBool,
}

/// What a front-end is told.
pub enum StoreState {
    Down(String),
    Up,
}

impl Holder {
    /// Runs `save` until it succeeds; `false` when cancelled first (the result is then not
    /// saved, and its work is done again on resume).
    pub(crate) async fn save<F, Fut>(
        &self,
        cancel: &CancellationToken,
        tell: impl Fn(StoreState),
        mut save: F,
    ) -> bool
    where
        F: FnMut() -> Fut,
        Fut: Future<Output = crate::store::WriteResult<()>>,
    {
        let mut delay = Duration::from_millis(200);
        let mut held = false;
        loop {
            match save().await {
                Ok(()) => break,
                Err(e) => {
                    // Not ours to save any more: the run was taken over, so it stops.
                    if e.is_lost_lock() {
                        self.lost.store(true, Ordering::Release);
                        cancel.cancel();
                        if held {
                            self.holding.fetch_sub(1, Ordering::AcqRel);
                        }
                        return false;
                    }
                    if !held {
                        held = true;
                        self.holding.fetch_add(1, Ordering::AcqRel);
                    }
                    if !self.down.swap(true, Ordering::AcqRel) {
                        tell(StoreState::Down(format!(
                            "could not save results ({e}); holding them and retrying"
                        )));
                    }
                    tokio::select! {
                        _ = tokio::time::sleep(delay) => {}
                        _ = cancel.cancelled() => {
                            self.holding.fetch_sub(1, Ordering::AcqRel);
                            return false;
                        }
                    }
                    delay = (delay * 2).min(Duration::from_secs(10));
                }
            }
        }
        if held
            && self.holding.fetch_sub(1, Ordering::AcqRel) == 1
            && self.down.swap(false, Ordering::AcqRel)
        {
            tell(StoreState::Up);
        }
        true
    }

    /// Whether a write was refused because the run's lock was taken over.
    pub(crate) fn lost(&self) -> bool {
        self.lost.load(Ordering::Acquire)
    }

    /// Waits for a call slot, and for saving to work again; `None` when cancelled.
    pub(crate) async fn slot<'a>(
        &self,
        slots: &'a Semaphore,
        cancel: &CancellationToken,
    ) -> Option<SemaphorePermit<'a>> {
        while self.down.load(Ordering::Acquire) && !cancel.is_cancelled() {
            tokio::time::sleep(Duration::from_millis(200)).await;
        }
        tokio::select! {
            s = slots.acquire() => s.ok(),
            _ = cancel.cancelled() => None,
        }
    }
}
