//! One lifecycle for the lanes that make model calls over a stored run (contradiction
//! detection, AutoHall on claims, self-detection): the run's lock, its status, the call slots,
//! the counts, saving that holds results while the store is down, cancellation and the closing
//! summary. A lane supplies its work (which calls, how each result is stored) as one future
//! given the run's [`Life`]; everything around it is here, written once.
//!
//! The order, for every lane: take the lock (one process per run, the same lock as `prism run
//! --resume`), mark the run running, do the work, then, unless the lock was lost (the run is
//! someone else's now), count what was left undone, store the final status and release.

use std::future::Future;
use std::sync::{Arc, Mutex};

use tokio::sync::{Semaphore, SemaphorePermit};
use tokio_util::sync::CancellationToken;

use super::hold::{Holder, StoreState};
use super::lease::Lease;
use crate::store::{RunStatus, StoreHandle};

pub use super::run_error::RunError;

/// What every lane's run tells its front-end besides its own work, in one type for all lanes
/// (each lane's event enum carries it as its `Life` variant), so a front-end says these things
/// the same way whichever lane it shows.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Lifecycle {
    /// Results cannot be saved (a full disk, most likely): they are held and saving is retried;
    /// no new call goes out meanwhile. Sent once per outage.
    StoreDown { reason: String },
    /// Saving works again; what was held is saved and the run goes on.
    StoreUp,
    /// The run ended (finished or cancelled), with its counts.
    Finished(Counts),
}

impl Lifecycle {
    /// How saving stopping or working again is told (`hold`'s states, as this event).
    pub fn of_store(s: super::hold::StoreState) -> Lifecycle {
        match s {
            super::hold::StoreState::Down(reason) => Lifecycle::StoreDown { reason },
            super::hold::StoreState::Up => Lifecycle::StoreUp,
        }
    }
}

/// What a run's calls came to: made (or answered by the cache), failed for good, and left
/// undone by a cancel (they run on resume).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Counts {
    pub run_id: String,
    /// Calls (answers: jobs) this run set out to make.
    pub total: usize,
    pub done: usize,
    pub failed: usize,
    pub cache_hits: usize,
    pub cancelled: usize,
}

/// How a lane hears the lifecycle of its run (it wraps it in its own event type).
pub type Tell = Box<dyn Fn(Lifecycle) + Send + Sync>;

/// The usual [`Tell`]: each lifecycle event sent down the lane's event channel, wrapped by
/// `wrap` (a lane's `Life` variant). A closed channel (nobody listening any more) is fine.
pub fn tell_into<E: Send + 'static>(
    tx: tokio::sync::mpsc::UnboundedSender<E>,
    wrap: fn(Lifecycle) -> E,
) -> impl Fn(Lifecycle) + Send + Sync + 'static {
    move |l| {
        let _ = tx.send(wrap(l));
    }
}

/// What every worker of one run shares.
pub struct Life {
    /// The user's cancel, or the lock lost.
    pub cancel: CancellationToken,
    /// Calls in flight across the run.
    slots: Semaphore,
    counts: Mutex<Counts>,
    hold: Holder,
    tell: Tell,
}

impl Life {
    /// Counts one call's end.
    pub fn count(&self, ok: bool, cached: bool) {
        let mut c = self.counts.lock().unwrap_or_else(|e| e.into_inner());
        if ok {
            c.done += 1;
            c.cache_hits += usize::from(cached);
        } else {
            c.failed += 1;
        }
    }

    /// Waits for a call slot (and for a store that can save again); `None` when cancelled.
    pub async fn slot(&self) -> Option<SemaphorePermit<'_>> {
        self.hold.slot(&self.slots, &self.cancel).await
    }

    /// Saves with `save` until it works (held while the store is down; the lane hears when
    /// saving stops and starts working again); `false` when cancelled first.
    pub async fn save<F, Fut>(&self, save: F) -> bool
    where
        F: FnMut() -> Fut,
        Fut: Future<Output = crate::store::WriteResult<()>>,
    {
        let tell = |s: StoreState| (self.tell)(Lifecycle::of_store(s));
        self.hold.save(&self.cancel, tell, save).await
    }

    /// Saves `rec` with `write` into a store of the lane's own behind a mutex (the review
    /// store, a topics store), off the async threads, held and retried like every save.
    pub async fn save_locked<S, T>(
        &self,
        store: &Arc<Mutex<S>>,
        rec: &Arc<T>,
        write: fn(&mut S, &T) -> crate::store::Result<()>,
    ) -> bool
    where
        S: Send + 'static,
        T: Send + Sync + 'static,
    {
        self.save(|| {
            let (store, rec) = (store.clone(), rec.clone());
            async move {
                tokio::task::spawn_blocking(move || {
                    write(&mut store.lock().unwrap_or_else(|e| e.into_inner()), &rec)
                })
                .await
                .map_err(|_| crate::store::WriteError::Stopped)?
                .map_err(crate::store::WriteError::from)
            }
        })
        .await
    }

    pub fn is_cancelled(&self) -> bool {
        self.cancel.is_cancelled()
    }
}

/// Where a lane keeps its runs: how the harness stores a run's status there.
pub trait RunTable {
    /// What to call a run in messages ("detection run").
    const WHAT: &'static str;
    fn set_status(
        store: &StoreHandle,
        run_id: String,
        status: RunStatus,
    ) -> impl Future<Output = ()> + Send;
}

/// A lane's run, as the harness needs it.
pub struct Spec<'a> {
    pub run_id: &'a str,
    /// Calls still to make (the undone ones count as cancelled on a cancel).
    pub calls: usize,
    /// The most calls in flight across the run.
    pub concurrency: usize,
}

impl<'a> Spec<'a> {
    pub fn new(run_id: &'a str, calls: usize, concurrency: usize) -> Spec<'a> {
        Spec {
            run_id,
            calls,
            concurrency,
        }
    }
}

/// Runs `work` inside the lifecycle of a run kept in `T`; returns the counts (the status is
/// stored by then, and `tell` has heard [`Lifecycle::Finished`]). `tell` hears every lifecycle
/// event of the run: saving stopped and working again, and the end.
pub async fn run<T, W, WF>(
    store: &StoreHandle,
    cancel: &CancellationToken,
    spec: Spec<'_>,
    tell: impl Fn(Lifecycle) + Send + Sync + 'static,
    work: W,
) -> Result<Counts, RunError>
where
    T: RunTable,
    W: FnOnce(Arc<Life>) -> WF,
    WF: Future<Output = ()>,
{
    let lease = take_lease(store, spec.run_id, T::WHAT, cancel).await?;
    // From here on the work stops on the user's cancel or on losing the lock.
    T::set_status(store, spec.run_id.to_string(), RunStatus::Running).await;
    let life = Arc::new(Life {
        cancel: lease.cancel.clone(),
        slots: Semaphore::new(spec.concurrency.max(1)),
        counts: Mutex::new(Counts {
            run_id: spec.run_id.to_string(),
            total: spec.calls,
            ..Counts::default()
        }),
        hold: Holder::default(),
        tell: Box::new(tell),
    });
    work(life.clone()).await;
    if lease.lost() || life.hold.lost() {
        // The run is someone else's now: its status and lock are theirs to set.
        let err = lease.lost_error(T::WHAT);
        lease.release().await;
        return Err(err);
    }
    let (counts, status) = closing(&life.counts, spec.calls, life.cancel.is_cancelled());
    T::set_status(store, spec.run_id.to_string(), status).await;
    lease.release().await;
    (life.tell)(Lifecycle::Finished(counts.clone()));
    Ok(counts)
}

impl RunTable for crate::store::DetectWrite {
    const WHAT: &'static str = "detection run";
    async fn set_status(store: &StoreHandle, run_id: String, status: RunStatus) {
        let _ = store.detect(Self::Status(run_id, status)).await;
    }
}

impl RunTable for crate::store::SelfcheckWrite {
    const WHAT: &'static str = "self-detection run";
    async fn set_status(store: &StoreHandle, run_id: String, status: RunStatus) {
        let _ = store.selfcheck(Self::Status(run_id, status)).await;
    }
}

/// Takes the run's lock (one process per run: a second would make every call again), or says
/// who holds it. Every lane's run, the answers' included, starts here.
pub async fn take_lease(
    store: &StoreHandle,
    run_id: &str,
    what: &'static str,
    cancel: &CancellationToken,
) -> Result<Lease, RunError> {
    match Lease::take(store, run_id, cancel).await {
        Ok(Ok(lease)) => Ok(lease),
        Ok(Err(held)) => Err(RunError::Locked {
            what,
            run: run_id.to_string(),
            pid: held.pid,
            age: held.age,
        }),
        Err(e) => Err(RunError::store(format!("locking the {what}"), e)),
    }
}

/// The counts at the end, and the status they make: a cancelled run counts the calls it left
/// undone and stays resumable; a cancel that came after the last call (done and failed reach
/// the planned calls) leaves it finished. `calls` is the plan's count, which for some lanes is an
/// estimate (AutoHall asks again after an unreadable reply, skips a refusal's samples): a run
/// that was not cancelled is finished whatever the estimate said.
fn closing(counts: &Mutex<Counts>, calls: usize, cancelled: bool) -> (Counts, RunStatus) {
    let mut c = counts.lock().unwrap_or_else(|e| e.into_inner()).clone();
    c.cancelled = if cancelled {
        calls.saturating_sub(c.done + c.failed)
    } else {
        0
    };
    let status = if c.cancelled > 0 {
        RunStatus::Cancelled
    } else {
        RunStatus::Finished
    };
    (c, status)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_cancelled_run_counts_what_it_left() {
        let c = Mutex::new(Counts {
            done: 3,
            failed: 1,
            ..Counts::default()
        });
        assert_eq!(closing(&c, 10, true).0.cancelled, 6);
        assert_eq!(closing(&c, 10, true).1, RunStatus::Cancelled);
        // Every call made (a cancel after the last one): finished, nothing to resume.
        assert_eq!(closing(&c, 4, true).0.cancelled, 0);
        assert_eq!(closing(&c, 4, true).1, RunStatus::Finished);
        // Not cancelled: finished, even when the plan's estimate was higher.
        assert_eq!(closing(&c, 10, false).1, RunStatus::Finished);
    }
}
