//! Self-detection from the TUI: the stored runs with what they stored, and a new run over a
//! triples dataset in the detect slot (one background detection at a time; esc cancels it,
//! `prism selfcheck --resume` finishes it).

use std::sync::Arc;

use tokio_util::sync::CancellationToken;

use super::{Effects, Job, JobCx, Msg, Outcome, Slot};
use crate::dataset::triples::TripleSet;
use crate::provider::ModelConfig;
use crate::selfcheck::results::Stored;
use crate::selfcheck::run::SelfcheckEvent;
use crate::store::SelfcheckRun;

/// Every stored self-detection run with what it stored, newest first.
pub struct LoadSelfchecks;

#[derive(Debug)]
pub struct Selfchecks(pub Vec<(SelfcheckRun, Stored)>);

impl Outcome for Selfchecks {}

impl Job for LoadSelfchecks {
    fn start(self: Box<Self>, cx: &mut JobCx<'_>) {
        cx.on_reader(None, |db| {
            selfcheck_runs(db)
                .map(|s| Msg::new(Selfchecks(s)))
                .unwrap_or_else(|e| Msg::failed(format!("reading self-detection runs: {e}")))
        });
    }
}

fn selfcheck_runs(db: &crate::store::Db) -> crate::store::Result<Vec<(SelfcheckRun, Stored)>> {
    let reader = db.read()?;
    let mut out = Vec::new();
    for run in reader.selfcheck_runs()? {
        let stored = Stored::load(db, &run.id)?;
        out.push((run, stored));
    }
    Ok(out)
}

/// A new self-detection run over `set`: each model writes and judges its own sentences.
pub struct Selfcheck {
    pub set: Arc<TripleSet>,
    /// The whole dataset: examples and decoys come from it.
    pub pool: Arc<TripleSet>,
    pub dataset: String,
    pub models: Vec<ModelConfig>,
    /// False sentences by swapping the object (else written by the model).
    pub swap: bool,
}

/// A self-detection run just recorded and starting.
#[derive(Debug)]
pub struct SelfcheckStarted {
    pub run: Box<SelfcheckRun>,
    pub stored: Stored,
}

impl Outcome for SelfcheckStarted {}

impl Outcome for SelfcheckEvent {
    fn apply(&self, fx: &mut Effects<'_>) {
        if let SelfcheckEvent::Life(l) = self {
            fx.lifecycle(l, "self-detection");
        }
    }
}

impl Job for Selfcheck {
    fn start(self: Box<Self>, cx: &mut JobCx<'_>) {
        if let Err(e) = start(cx, *self) {
            cx.fail(format!("self-detection: {e:#}"));
        }
    }
}

fn start(cx: &mut JobCx<'_>, job: Selfcheck) -> anyhow::Result<()> {
    use crate::selfcheck::run::{Options, Plan, plan};
    let Some(store) = cx.services.store.clone() else {
        anyhow::bail!("self-detection needs a store");
    };
    if cx.in_progress(Slot::Detect) {
        anyhow::bail!("a detection is in progress (esc on its screen cancels it)");
    }
    if job.models.is_empty() {
        anyhow::bail!("choose models first (r opens the picker)");
    }
    if job.set.triples.is_empty() {
        anyhow::bail!("no triples to run");
    }
    let p = Plan {
        false_by: if job.swap {
            crate::store::FalseBy::Swap
        } else {
            crate::store::FalseBy::Model
        },
        ..Plan::default()
    };
    let (run, items, models) = plan(
        job.dataset,
        &job.set,
        &job.pool.triples,
        job.models,
        Vec::new(),
        p,
    );
    cx.send(Msg::new(SelfcheckStarted {
        run: Box::new(run.clone()),
        stored: Stored {
            items: items.clone(),
            verdicts: Vec::new(),
        },
    }));
    let cancel = CancellationToken::new();
    let (etx, erx) = tokio::sync::mpsc::unbounded_channel();
    let factory = cx.services.factory.clone();
    let opts = Options {
        concurrency: cx.services.concurrency,
        use_cache: true,
    };
    let (reply, c2) = (cx.reply(), cancel.clone());
    // One task runs and forwards (see the run job).
    cx.spawn(Slot::Detect, cancel, async move {
        let work = async {
            let lane = crate::engine::Lane {
                store,
                factory,
                events: etx,
                cancel: c2,
            };
            if let Err(e) = crate::selfcheck::run::start(lane, run, items, models, opts).await {
                reply.fail(format!("self-detection not started: {e:#}"));
            }
        };
        tokio::join!(work, reply.forward(erx));
    });
    Ok(())
}
