//! A run's lock for as long as this process works on it: taken at the start, refreshed by a
//! heartbeat, released at the end. Shared by the three kinds of run (answers, detection,
//! self-detection).
//!
//! A process that stalls past the lock's staleness (SIGSTOP, a suspended laptop, a frozen VM)
//! can lose the lock to a `--resume` elsewhere. When it wakes it must stop, not finish the run
//! beside the new holder: the store refuses its writes ([`crate::store::LOST_LOCK`]), its next
//! heartbeat finds the lock gone, and either one cancels its work through [`Lease::cancel`].

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use tokio_util::sync::CancellationToken;

use crate::store::{Held, StoreHandle};

pub struct Lease {
    store: StoreHandle,
    run: String,
    owner: String,
    /// Cancelled when the user cancels (the parent token) or the lock is lost.
    pub cancel: CancellationToken,
    lost: Arc<AtomicBool>,
    beat: tokio::task::JoinHandle<()>,
}

impl Lease {
    /// Takes `run`'s lock; `Ok(Err(held))` when another live process holds it.
    pub async fn take(
        store: &StoreHandle,
        run: &str,
        parent: &CancellationToken,
    ) -> crate::store::WriteResult<Result<Lease, Held>> {
        let owner = super::lock_owner();
        if let Err(held) = store.lock_run(run, &owner).await? {
            return Ok(Err(held));
        }
        let cancel = parent.child_token();
        let lost = Arc::new(AtomicBool::new(false));
        let beat = {
            let (store, run, owner) = (store.clone(), run.to_string(), owner.clone());
            let (cancel, lost) = (cancel.clone(), lost.clone());
            tokio::spawn(async move {
                let mut tick =
                    tokio::time::interval(Duration::from_secs(crate::store::HEARTBEAT_SECS));
                tick.tick().await;
                loop {
                    tick.tick().await;
                    // A store that cannot answer is no proof the lock is gone: only a
                    // heartbeat that finds another owner stops the run.
                    if let Ok(false) = store.heartbeat_run(&run, &owner).await {
                        lost.store(true, Ordering::Release);
                        cancel.cancel();
                        break;
                    }
                }
            })
        };
        Ok(Ok(Lease {
            store: store.clone(),
            run: run.to_string(),
            owner,
            cancel,
            lost,
            beat,
        }))
    }

    /// A handle the workers use to report a write refused because the lock is gone.
    pub fn loss(&self) -> Loss {
        Loss {
            cancel: self.cancel.clone(),
            lost: self.lost.clone(),
        }
    }

    /// Whether the lock was taken over while this process worked.
    pub fn lost(&self) -> bool {
        self.lost.load(Ordering::Acquire)
    }

    /// The error a run ends with when it lost its lock: nothing after the takeover was saved
    /// by this process, and the new holder finishes the run.
    pub fn lost_error(&self, what: &'static str) -> super::run_error::RunError {
        super::run_error::RunError::TakenOver {
            what,
            run: self.run.clone(),
        }
    }

    /// Stops the heartbeat and lets go of the lock (only ours: a lock taken over stays with
    /// its new holder).
    pub async fn release(self) {
        self.beat.abort();
        let _ = self.store.unlock_run(&self.run, &self.owner).await;
    }
}

/// Reports a lost lock from a worker: the work stops at once.
#[derive(Clone)]
pub struct Loss {
    cancel: CancellationToken,
    lost: Arc<AtomicBool>,
}

impl Loss {
    /// Records the loss if `error` (from a store write) says the lock is gone; returns whether
    /// it did.
    pub fn check(&self, error: &crate::store::WriteError) -> bool {
        if error.is_lost_lock() {
            self.lost.store(true, Ordering::Release);
            self.cancel.cancel();
            true
        } else {
            false
        }
    }
}
