//! Scoring as answers arrive ([`super::Scoring`]): an answer the rules settle is scored where
//! it is stored (`engine::finish`, its score in the answer's commit); one task per run takes
//! each answer that needs a judge, scores what arrived together in one batch and announces
//! every score as [`Event::Scored`]. Judge calls run a few batches at a time, so a
//! slow judge never holds up the answers; the run waits for the scores before it finishes.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use tokio::sync::{Semaphore, mpsc};
use tokio::task::{JoinHandle, JoinSet};

use super::score::{ToScore, score_all};
use super::{Event, Scoring};
use crate::dataset::Dataset;
use crate::store::StoreHandle;

/// Batches scored at once (each may wait on judge calls).
const BATCHES_IN_FLIGHT: usize = 4;

/// A cancelled run waits this long for the scores in flight; what is left is scored later
/// (the TUI scores unscored answers by rule when it loads them, `prism score` scores all).
const GRACE_ON_CANCEL: Duration = Duration::from_secs(2);

/// Where a run's workers hand their stored answers; the task that scores them is returned
/// beside it by [`Scorer::start`], for the run to wait on.
pub(super) struct Scorer {
    tx: Mutex<Option<mpsc::UnboundedSender<ToScore>>>,
    /// A judge reads what the rules cannot settle (else such an answer is settled unscored);
    /// set while the run goes, it judges what arrives after.
    judge: super::JudgeSlot,
}

impl Scorer {
    pub(super) fn start(
        ds: Arc<Dataset>,
        scoring: Scoring,
        store: StoreHandle,
        events: mpsc::UnboundedSender<Event>,
    ) -> (Scorer, JoinHandle<()>) {
        let (tx, mut rx) = mpsc::unbounded_channel::<ToScore>();
        let slot = scoring.judge.clone();
        let task = tokio::spawn(async move {
            let (stx, mut srx) = mpsc::unbounded_channel();
            let tell = events.clone();
            let work = async move {
                let limit = Arc::new(Semaphore::new(BATCHES_IN_FLIGHT));
                let mut batches = JoinSet::new();
                while let Some(first) = rx.recv().await {
                    let Ok(permit) = limit.clone().acquire_owned().await else {
                        break;
                    };
                    // Whatever else has arrived meanwhile goes in the same batch.
                    let mut batch = vec![first];
                    while let Ok(t) = rx.try_recv() {
                        batch.push(t);
                    }
                    let (ds, judge, store, stx, tell) = (
                        ds.clone(),
                        scoring.judge.get(),
                        store.clone(),
                        stx.clone(),
                        tell.clone(),
                    );
                    batches.spawn(async move {
                        let n = batch.len();
                        if let Err(e) = score_all(
                            ds,
                            batch,
                            super::score::Judging::one(judge, n),
                            Some(store),
                            stx,
                        )
                        .await
                        {
                            let _ = tell.send(Event::ScoringFailed {
                                reason: format!("{e:#}"),
                            });
                        }
                        drop(permit);
                    });
                    while batches.try_join_next().is_some() {}
                }
                drop(stx);
                while batches.join_next().await.is_some() {}
            };
            let forward = async {
                while let Some(r) = srx.recv().await {
                    let _ = events.send(Event::Scored(r));
                }
            };
            tokio::join!(work, forward);
        });
        (
            Scorer {
                tx: Mutex::new(Some(tx)),
                judge: slot,
            },
            task,
        )
    }

    /// Whether a judge reads what the rules cannot settle.
    pub(super) fn judged(&self) -> bool {
        self.judge.is_set()
    }

    /// Scores a stored answer (after the run ended, it is left for later).
    pub(super) fn push(&self, t: ToScore) {
        if let Some(tx) = self.tx.lock().unwrap_or_else(|e| e.into_inner()).as_ref() {
            let _ = tx.send(t);
        }
    }

    /// No more answers: the task ends once the ones pushed are scored.
    pub(super) fn close(&self) {
        self.tx.lock().unwrap_or_else(|e| e.into_inner()).take();
    }
}

/// Waits for the scores of every answer pushed (for a cancelled run, at most a moment).
pub(super) async fn wait(task: JoinHandle<()>, cancelled: bool) {
    if cancelled {
        let abort = task.abort_handle();
        if tokio::time::timeout(GRACE_ON_CANCEL, task).await.is_err() {
            abort.abort();
        }
    } else {
        let _ = task.await;
    }
}
