//! The quality agent's lane: each item's A/B/C scores asked of one model and kept in the review
//! store the moment they arrive, inside the run harness like every lane (one process at a time
//! per model and dataset, call slots, counts, scores held while the store cannot save them,
//! cancel). Its unit of work is one item (a request, read again up to `attempts` times while the
//! reply cannot be read); its state is its records: a second run asks only for what is missing.

use std::collections::HashSet;
use std::sync::Arc;

use super::quality::{self, QualityRecord};
use crate::dataset::Dataset;
use crate::engine::Caller;
use crate::engine::records::{Cx, RecordEvent, Unit};

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

/// What the front-end hears: each item's record as it is saved (scores, or an unreadable
/// reply, or a failed call).
pub type QualityEvent = RecordEvent<QualityRecord, ()>;

/// The lane's unit: one item of `ds` scored by `caller`, asked again up to `attempts` times
/// while its reply cannot be read.
pub struct Quality {
    pub ds: Arc<Dataset>,
    pub caller: Arc<Caller>,
    pub attempts: u32,
}

impl Unit for Quality {
    type Todo = usize;
    type Record = QualityRecord;
    type Outcome = ();
    const WHAT: &'static str = "quality scoring";

    async fn work(self: Arc<Self>, i: usize, cx: Cx<Self>) -> Option<()> {
        let slot = cx.slot().await?;
        let rec = tokio::select! {
            r = score_item(&self.caller, &self.ds, i, self.attempts) => r,
            _ = cx.cancel().cancelled() => return None,
        };
        drop(slot);
        // A call the cancel cut short is not a result: it is asked on the next run.
        if cx.is_cancelled() && rec.error.as_deref() == Some("cancelled") {
            return None;
        }
        let rec = cx.save(rec).await?;
        cx.count(rec.error.is_none(), false);
        Some(())
    }
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
