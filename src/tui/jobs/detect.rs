//! Contradiction detection (AutoHall's samples and pairs) from the TUI: a stored answer's
//! detection shown or started, items or claims for models, one more round of samples, a stored
//! detection; the claims detections of a claims dataset; semantic entropy of one group. One
//! detection at a time, in the detect slot (esc on its screen cancels it).

use std::sync::Arc;

use tokio_util::sync::CancellationToken;

use super::{Effects, Job, JobCx, Msg, Outcome, Slot};
use crate::dataset::Dataset;
use crate::detect::run::{DetectEvent, Stored};
use crate::engine::Caller;
use crate::provider::ModelConfig;
use crate::store::DetectRun;

pub const DETECT_K: u32 = 6;

/// Contradiction detection a component can ask for. Pairs are checked by the model itself
/// (AutoHall's way); `prism detect --judge` checks them with another model.
#[derive(Debug, Clone)]
pub enum DetectJob {
    /// A stored answer: its newest detection is shown, or a new one is started. `models`: the
    /// configured ones (the answer's model is looked up there, else in its run).
    Answer {
        run_id: String,
        job_idx: u32,
        model: String,
        models: Vec<ModelConfig>,
    },
    /// Items for models: each model's newest stored answer to each item is tested (or asked for
    /// first when there is none).
    Items {
        items: Vec<usize>,
        models: Vec<ModelConfig>,
        k: u32,
    },
    /// Claims (AutoHall's pipeline) for models, at one generation temperature.
    Claims {
        set: Arc<crate::dataset::claims::ClaimSet>,
        claims: Vec<usize>,
        models: Vec<ModelConfig>,
        temperature: f64,
        dataset: String,
        k: u32,
    },
    /// One more round of samples for a target of a stored detection.
    Again {
        detect_id: String,
        target: u32,
        models: Vec<ModelConfig>,
    },
    /// Show a stored detection.
    Load { detect_id: String, target: u32 },
}

/// A detection to show (stored, or just recorded and starting), and the target to focus.
#[derive(Debug)]
pub struct Detection {
    pub run: Box<DetectRun>,
    pub stored: Stored,
    pub focus: u32,
}

impl Outcome for Detection {}

impl Outcome for DetectEvent {
    fn apply(&self, fx: &mut Effects<'_>) {
        if let DetectEvent::Life(l) = self {
            fx.lifecycle(l, "detection");
        }
    }
}

const BUSY: &str = "a detection is in progress (esc on its screen cancels it)";

impl Job for DetectJob {
    /// Starts (or shows) a detection: the run and what is stored go first ([`Detection`]), then
    /// the engine's events. Planning reads the store, so it runs on the store worker; the
    /// detect slot is taken at once, so a second request is refused.
    fn start(self: Box<Self>, cx: &mut JobCx<'_>) {
        if let Err(e) = start_detect(cx, *self) {
            cx.fail(format!("detection: {e:#}"));
        }
    }
}

fn start_detect(cx: &mut JobCx<'_>, job: DetectJob) -> anyhow::Result<()> {
    let Some(store) = cx.services.store.clone() else {
        anyhow::bail!("detection needs a store");
    };
    let busy = cx.in_progress(Slot::Detect);
    match &job {
        DetectJob::Load { detect_id, target } => {
            let (detect_id, target) = (detect_id.clone(), *target);
            cx.on_store(move |sx| match &sx.db {
                Some(db) => vec![show(db, &detect_id, target).unwrap_or_else(|e| {
                    Msg::failed(format!("reading detection {detect_id}: {e:#}"))
                })],
                None => vec![Msg::failed("detection needs a store")],
            });
            return Ok(());
        }
        // An answer with a detection is shown even while another runs.
        DetectJob::Answer {
            run_id, job_idx, ..
        } if busy => {
            let (run_id, job_idx) = (run_id.clone(), *job_idx);
            cx.on_store(move |sx| {
                match sx.db.as_ref().map(|db| {
                    Ok::<_, anyhow::Error>(match db.read()?.detection_of(&run_id, job_idx)? {
                        Some((id, target)) => Some(show(db, &id, target)?),
                        None => None,
                    })
                }) {
                    Some(Ok(Some(msg))) => vec![msg],
                    Some(Ok(None)) => vec![Msg::failed(BUSY)],
                    Some(Err(e)) => vec![Msg::failed(format!("detection: {e:#}"))],
                    None => vec![Msg::failed("detection needs a store")],
                }
            });
            return Ok(());
        }
        _ if busy => anyhow::bail!(BUSY),
        DetectJob::Items { models, .. } | DetectJob::Claims { models, .. } if models.is_empty() => {
            anyhow::bail!("choose models first (r opens the picker)")
        }
        _ => {}
    }
    // The plan comes from the store worker: None when the answer has a detection already,
    // which is shown instead.
    let (ptx, prx) =
        tokio::sync::oneshot::channel::<anyhow::Result<Option<crate::detect::plan::Plan>>>();
    let (ds, dataset_ref) = (cx.ds.clone(), cx.services.dataset_ref.clone());
    cx.on_store(move |sx| {
        let Some(db) = &sx.db else {
            let _ = ptx.send(Err(anyhow::anyhow!("detection needs a store")));
            return Vec::new();
        };
        let mut out = Vec::new();
        let planned = plan_detection(db, &ds, &dataset_ref, job, &mut out);
        let _ = ptx.send(planned);
        out
    });
    let cancel = CancellationToken::new();
    let (etx, erx) = tokio::sync::mpsc::unbounded_channel();
    let factory = cx.services.factory.clone();
    let opts = crate::detect::run::DetectOptions {
        concurrency: cx.services.concurrency,
        use_cache: true,
        stream_deltas: true,
    };
    let (reply, c2) = (cx.reply(), cancel.clone());
    // One task runs and forwards (see the run job).
    cx.spawn(Slot::Detect, cancel, async move {
        let work = async {
            let plan = match prx.await {
                Ok(Ok(Some(plan))) => plan,
                Ok(Ok(None)) => return,
                Ok(Err(e)) => return reply.fail(format!("detection: {e:#}")),
                Err(_) => return reply.fail("detection: the store worker stopped"),
            };
            // Before any event of the run: the same task sends both, in this order.
            reply.outcome(Detection {
                run: Box::new(plan.run.clone()),
                stored: plan.stored.clone(),
                focus: plan.focus(),
            });
            let lane = crate::engine::Lane {
                store,
                factory,
                events: etx,
                cancel: c2,
            };
            if let Err(e) = plan.launch(lane, opts).await {
                reply.fail(format!("detection not started: {e:#}"));
            }
        };
        tokio::join!(work, reply.forward(erx));
    });
    Ok(())
}

/// The plan of a detection the TUI asked for, read on the store worker. `None`: nothing to
/// start (the answer has a detection already, pushed onto `out` to be shown).
fn plan_detection(
    db: &crate::store::Db,
    ds: &Dataset,
    dataset_ref: &str,
    job: DetectJob,
    out: &mut Vec<Msg>,
) -> anyhow::Result<Option<crate::detect::plan::Plan>> {
    let reader = db.read()?;
    use crate::detect::plan::{self, Settings};
    match job {
        DetectJob::Answer {
            run_id,
            job_idx,
            model: _,
            models,
        } => {
            if let Some((id, target)) = reader.detection_of(&run_id, job_idx)? {
                out.push(show(db, &id, target)?);
                return Ok(None);
            }
            let source = reader
                .run(&run_id)?
                .ok_or_else(|| anyhow::anyhow!("no run {run_id}"))?;
            let record: Vec<_> = reader
                .responses(&run_id)?
                .into_iter()
                .filter(|r| r.job_idx == job_idx)
                .collect();
            if record.is_empty() {
                anyhow::bail!("no stored answer {run_id}/{job_idx}");
            }
            let settings = Settings::with_k(DETECT_K);
            Ok(Some(
                plan::answers(&source, ds, &record, &models, &settings)?.0,
            ))
        }
        DetectJob::Items { items, models, k } => Ok(Some(plan::items(
            db,
            ds,
            dataset_ref,
            &items,
            models,
            &Settings::with_k(k),
        )?)),
        DetectJob::Claims {
            set,
            claims,
            models,
            temperature,
            dataset,
            k,
        } => {
            let mut subset = (*set).clone();
            subset.claims = claims
                .iter()
                .filter_map(|&i| set.claims.get(i).cloned())
                .collect();
            let settings = Settings {
                temperatures: vec![temperature],
                ..Settings::with_k(k)
            };
            Ok(Some(plan::claims(&subset, dataset, models, &settings)?))
        }
        DetectJob::Again {
            detect_id,
            target,
            models,
        } => Ok(Some(plan::again(db, &detect_id, target, &models)?)),
        DetectJob::Load { .. } => Ok(None),
    }
}

/// The claims detections over a claims dataset, each with what it stored.
fn claims_runs(
    db: &crate::store::Db,
    dataset: &str,
) -> crate::store::Result<Vec<(crate::store::DetectRun, crate::detect::run::Stored)>> {
    let reader = db.read()?;
    let mut out = Vec::new();
    for run in reader.detect_runs()? {
        if run.kind == crate::store::DetectKind::Claims && run.dataset == dataset {
            let stored = crate::detect::run::Stored::load(db, &run.id)?;
            out.push((run, stored));
        }
    }
    Ok(out)
}

/// A stored detection to show, focused on `target`.
fn show(db: &crate::store::Db, id: &str, target: u32) -> anyhow::Result<Msg> {
    let reader = db.read()?;
    let run = reader
        .detect_run(id)?
        .ok_or_else(|| anyhow::anyhow!("no detection {id}"))?;
    let stored = crate::detect::run::Stored::load(db, id)?.with_entailments(db)?;
    Ok(Msg::new(Detection {
        run: Box::new(run),
        stored,
        focus: target,
    }))
}

/// The claims detections over a claims dataset: every target, newest run first.
pub struct LoadClaims {
    pub dataset: String,
}

#[derive(Debug)]
pub struct Claims(pub Vec<(DetectRun, Stored)>);

impl Outcome for Claims {}

impl Job for LoadClaims {
    fn start(self: Box<Self>, cx: &mut JobCx<'_>) {
        let dataset = self.dataset;
        cx.on_reader(None, move |db| {
            claims_runs(db, &dataset)
                .map(|c| Msg::new(Claims(c)))
                .unwrap_or_else(|e| Msg::failed(format!("reading detections: {e}")))
        });
    }
}

/// Semantic entropy of one group of answers: `judge` clusters them, asking only the entailment
/// verdicts not stored yet (the contradictions screen's `e`); each verdict reaches the screen
/// as it is saved.
pub struct Entropy {
    pub group: Box<crate::detect::semantic::Group>,
    pub judge: Box<ModelConfig>,
}

impl Outcome for crate::detect::semantic::EntropyEvent {
    fn apply(&self, fx: &mut Effects<'_>) {
        if let crate::detect::semantic::EntropyEvent::Life(l) = self {
            fx.lifecycle(l, "semantic entropy");
        }
    }
}

impl Job for Entropy {
    fn start(self: Box<Self>, cx: &mut JobCx<'_>) {
        use crate::detect::semantic;
        let (group, judge) = (*self.group, *self.judge);
        let (Some(handle), Some(db)) = (cx.services.store.clone(), cx.services.db.clone()) else {
            return cx.fail("semantic entropy needs a store");
        };
        let caller = match Caller::new(
            &judge,
            &cx.services.factory,
            Some(handle.clone()),
            true,
            CancellationToken::new(),
        ) {
            Ok(c) => Arc::new(c),
            Err(e) => return cx.fail(format!("judge {}: {e:#}", judge.name)),
        };
        let reply = cx.reply();
        let cancel = CancellationToken::new();
        let c2 = cancel.clone();
        let factory = cx.services.factory.clone();
        cx.spawn(Slot::Other, cancel, async move {
            let name = judge.name.clone();
            let opened = tokio::task::spawn_blocking(move || {
                anyhow::Ok(semantic::Known::of(&db.read()?.entailments(Some(&name))?))
            })
            .await;
            let known = match opened {
                Ok(Ok(x)) => x,
                Ok(Err(e)) => return reply.fail(format!("semantic entropy: {e}")),
                Err(_) => return,
            };
            let (etx, erx) = tokio::sync::mpsc::unbounded_channel();
            let id = match &group.via {
                semantic::Via::Detection { run, target, .. } => format!("{run}:{target}"),
                semantic::Via::Samples => group.item_id.clone(),
            };
            let unit = Arc::new(semantic::GroupClustering {
                groups: Arc::new(vec![group]),
                known: std::sync::Mutex::new(known),
                caller,
            });
            let lock = unit.lock(&id);
            let lane = crate::engine::Lane {
                store: handle.clone(),
                factory,
                events: etx,
                cancel: c2.clone(),
            };
            let lane = async {
                if let Err(e) = crate::engine::records::run(lane, 4, &lock, unit, vec![0]).await {
                    reply.fail(format!("semantic entropy: {e}"));
                }
            };
            tokio::join!(lane, reply.forward(erx));
        });
    }
}
