//! The quality agent's lane: each item's A/B/C scores asked of one model and kept in the review
//! store the moment they arrive, inside the run harness like every lane (one process at a time
//! per model and dataset, call slots, counts, scores held while the store cannot save them,
//! cancel). Its unit of work is one item (a request, read again up to `attempts` times while the
//! reply cannot be read); its state is its records: a second run asks only for what is missing.

use std::collections::HashSet;
use std::sync::{Arc, Mutex};

use futures::StreamExt;
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

use super::db::ReviewDb;
use super::quality::{self, QualityRecord};
use crate::dataset::Dataset;
use crate::engine::Caller;
use crate::engine::harness::{self, Counts, Lifecycle, RunError, RunTable};
use crate::store::{RunStatus, StoreHandle};

/// What the lane will do: the items to score and under which lock.
#[derive(Debug, Clone)]
pub struct QualityPlan {
    /// The lock's name: one scoring of a dataset by a model at a time.
    pub run_id: String,
    /// Items to score (indexes into the dataset), in order.
    pub todo: Vec<usize>,
    /// Asks per item while its reply cannot be read.
    pub attempts: u32,
}

/// Plans a scoring: the `items` that `model` has no scores for yet (all of them with `again`).
pub fn plan(
    ds: &Dataset,
    dataset_ref: &str,
    model: &str,
    items: &[usize],
    scored: &HashSet<String>,
    again: bool,
    attempts: u32,
) -> QualityPlan {
    QualityPlan {
        run_id: format!("quality:{model}:{dataset_ref}"),
        todo: items
            .iter()
            .copied()
            .filter(|&i| again || !scored.contains(&*ds.items[i].id))
            .collect(),
        attempts: attempts.max(1),
    }
}

/// What the front-end hears.
#[derive(Debug, Clone)]
pub enum QualityEvent {
    /// An item's record, saved: scores, or an unreadable reply, or a failed call.
    Scored(Arc<QualityRecord>),
    Life(Lifecycle),
}

/// The lane's runs for the harness: a scoring's state is its records (scored or not), so there
/// is no status to keep; the harness's lock is what matters, so that two `prism quality` of one
/// model and dataset do not ask for every item twice.
struct QualityRuns;

impl RunTable for QualityRuns {
    const WHAT: &'static str = "quality scoring";
    async fn set_status(_: &StoreHandle, _: String, _: RunStatus) {}
}

/// Runs a plan: every item scored by `caller`, each record saved in `review` as it arrives.
#[allow(clippy::too_many_arguments)]
pub async fn run(
    ds: Arc<Dataset>,
    plan: QualityPlan,
    caller: Arc<Caller>,
    review: Arc<Mutex<ReviewDb>>,
    store: &StoreHandle,
    concurrency: usize,
    events: mpsc::UnboundedSender<QualityEvent>,
    cancel: &CancellationToken,
) -> Result<Counts, RunError> {
    let spec = harness::Spec {
        run_id: &plan.run_id,
        calls: plan.todo.len(),
        concurrency,
    };
    let tell = harness::tell_into(events.clone(), QualityEvent::Life);
    harness::run::<QualityRuns, _, _>(store, cancel, spec, tell, |life| async move {
        futures::stream::iter(plan.todo)
            .map(|i| {
                let (life, caller, ds, review, events) = (
                    life.clone(),
                    caller.clone(),
                    ds.clone(),
                    review.clone(),
                    events.clone(),
                );
                async move {
                    let Some(_slot) = life.slot().await else {
                        return;
                    };
                    let rec = tokio::select! {
                        r = score_item(&caller, &ds, i, plan.attempts) => r,
                        _ = life.cancel.cancelled() => return,
                    };
                    drop(_slot);
                    // A call the cancel cut short is not a result: it is asked on the next run.
                    if life.is_cancelled() && rec.error.as_deref() == Some("cancelled") {
                        return;
                    }
                    let rec = Arc::new(rec);
                    let saved = life
                        .save_locked(&review, &rec, ReviewDb::save_quality)
                        .await;
                    if saved {
                        life.count(rec.error.is_none(), false);
                        let _ = events.send(QualityEvent::Scored(rec));
                    }
                }
            })
            .buffer_unordered(concurrency.max(1))
            .collect::<Vec<()>>()
            .await;
    })
    .await
}

/// One item: asked at temperature 0, then (while the reply cannot be read) again with sampling.
async fn score_item(caller: &Caller, ds: &Dataset, i: usize, attempts: u32) -> QualityRecord {
    let item = &ds.items[i];
    let first = quality::request(ds, item);
    let mut rec = QualityRecord {
        item_id: item.id.to_string(),
        task_id: ds.task_of(item).id.clone(),
        model: caller.cfg.name.clone(),
        scores: None,
        reply: String::new(),
        error: None,
        attempts: 0,
        created_at: crate::store::now_secs(),
    };
    for attempt in 0..attempts {
        rec.attempts = attempt + 1;
        // The first ask at temperature 0; asked again, greedy decoding would repeat the same
        // unreadable reply, so later attempts sample (with a seed of their own).
        let mut req = first.clone();
        if attempt > 0 {
            req.params.temperature = Some(0.7);
            req.params.seed = Some(u64::from(attempt));
        }
        match caller.complete(&req, attempt).await {
            Ok(reply) => {
                rec.scores = quality::parse(&reply.text);
                rec.reply = reply.text;
                rec.error = None;
                if rec.scores.is_some() {
                    break;
                }
            }
            Err(e) => {
                rec.error = Some(e);
                break;
            }
        }
    }
    rec
}
