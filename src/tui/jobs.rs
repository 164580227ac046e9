//! Background work in one shape: a component asks for a [`JobRequest`], [`Jobs`] starts it on
//! the runtime with a cancellation token, and every result comes back on one channel as a
//! [`Delivery`] naming the component that asked. Nothing here knows about screens beyond that
//! name; the app applies results to the session and hands them to the asker.

use std::sync::Arc;
use std::time::Duration;

use tokio::sync::mpsc;
use tokio::task::JoinHandle;
use tokio_util::sync::CancellationToken;

use super::screen_id::ScreenId;
use crate::dataset::Dataset;
use crate::engine::score::ToScore;
use crate::engine::{BackendFactory, Caller};
use crate::provider::ModelConfig;
use crate::store::{ResponseRecord, ScoreRecord, Store, StoreHandle};

/// What the loop needs to start runs, score and read stored answers. `offline()` has no store.
pub struct Services {
    pub store: Option<StoreHandle>,
    /// A second connection for reads (WAL lets it read while the writer writes).
    pub reader: Option<Store>,
    pub factory: BackendFactory,
    /// How the dataset is named in runs (a path, or `<sample-data>`).
    pub dataset_ref: String,
    /// Most requests in flight for runs started here.
    pub concurrency: usize,
    /// The judge for judged evaluators (`judge` in config.toml), if any.
    pub judge: Option<Arc<Caller>>,
}

impl Services {
    pub fn offline() -> Services {
        Services {
            store: None,
            reader: None,
            factory: crate::engine::http_backends(),
            dataset_ref: "<sample-data>".into(),
            concurrency: 16,
            judge: None,
        }
    }

    /// Opens the store at `db` for runs and reads.
    pub fn with_store(
        db: &std::path::Path,
        factory: BackendFactory,
        dataset_ref: String,
    ) -> anyhow::Result<Services> {
        let writer = Store::open(db)?;
        let reader = Store::open(db)?;
        Ok(Services {
            store: Some(StoreHandle::spawn(writer, Some(db.to_path_buf()))),
            reader: Some(reader),
            factory,
            dataset_ref,
            concurrency: 16,
            judge: None,
        })
    }

    /// Uses `cfg` as the judge, sharing the store's cache.
    pub fn set_judge(&mut self, cfg: &ModelConfig) -> anyhow::Result<()> {
        let caller = Caller::new(
            cfg,
            &self.factory,
            self.store.clone(),
            true,
            CancellationToken::new(),
        )?;
        self.judge = Some(Arc::new(caller));
        Ok(())
    }

    /// Every stored score, into the app (the tree's rates and the verdicts of shown answers);
    /// answers stored without a score are scored by rule in the background.
    pub fn load_scores(&self, app: &mut super::App) {
        let Some(reader) = &self.reader else { return };
        match reader.scores(None) {
            Ok(all) => {
                for r in all {
                    app.session.apply_score(r);
                }
            }
            Err(e) => app.notice = Some(format!("reading scores: {e}")),
        }
        match reader.unscored_responses() {
            Ok(records) => {
                let inputs: Vec<ToScore> = records
                    .iter()
                    .filter_map(|r| Some(to_score(app.ds.index_of(&r.item_id)?, r)))
                    .collect();
                if !inputs.is_empty() {
                    app.request(
                        ScreenId::Browse,
                        JobRequest::Score {
                            inputs,
                            judge: false,
                        },
                    );
                }
            }
            Err(e) => app.notice = Some(format!("reading stored answers: {e}")),
        }
    }
}

/// Work a component can ask for.
#[derive(Debug, Clone)]
pub enum JobRequest {
    /// Run items against models, `samples` answers each.
    Run {
        items: Vec<usize>,
        models: Vec<ModelConfig>,
        samples: u32,
    },
    /// Read an item's stored answers and scores; with `rescore`, score them again (with the
    /// judge) once read.
    LoadStored { item: usize, rescore: bool },
    /// Score answers (rules; the judge too when `judge` is set and one is configured).
    Score { inputs: Vec<ToScore>, judge: bool },
}

/// A result of background work.
#[derive(Debug, Clone)]
pub enum Msg {
    Engine(crate::engine::Event),
    Stored {
        item: usize,
        records: Vec<ResponseRecord>,
        scores: Vec<ScoreRecord>,
        rescore: bool,
    },
    /// A score (saved), or an answer left unscored with the reason.
    Scored(ScoreRecord),
    /// A job could not start or failed, with why.
    Failed(String),
}

/// A result and the component that asked for the work.
#[derive(Debug)]
pub struct Delivery {
    pub to: ScreenId,
    pub msg: Msg,
}

/// The jobs in flight and the channel their results come back on.
pub struct Jobs {
    pub services: Services,
    tx: mpsc::UnboundedSender<Delivery>,
    pub rx: mpsc::UnboundedReceiver<Delivery>,
    run: Option<(CancellationToken, JoinHandle<()>)>,
    others: Vec<(CancellationToken, JoinHandle<()>)>,
}

impl Jobs {
    pub fn new(services: Services) -> Jobs {
        let (tx, rx) = mpsc::unbounded_channel();
        Jobs {
            services,
            tx,
            rx,
            run: None,
            others: Vec::new(),
        }
    }

    /// Whether work is still in flight (the loop waits for it when input ends).
    pub fn busy(&mut self) -> bool {
        self.others.retain(|(_, h)| !h.is_finished());
        self.run.as_ref().is_some_and(|(_, h)| !h.is_finished()) || !self.others.is_empty()
    }

    pub fn run_in_progress(&self) -> bool {
        self.run.as_ref().is_some_and(|(_, h)| !h.is_finished())
    }

    fn send(&self, to: ScreenId, msg: Msg) {
        let _ = self.tx.send(Delivery { to, msg });
    }

    /// Starts a job for `to`; results (or why it could not start) arrive on `rx`.
    pub fn start(&mut self, to: ScreenId, req: JobRequest, ds: &Arc<Dataset>) {
        match req {
            JobRequest::Run {
                items,
                models,
                samples,
            } => self.start_run(to, items, models, samples, ds),
            JobRequest::LoadStored { item, rescore } => {
                let Some(reader) = &self.services.reader else {
                    return;
                };
                let id = ds.items[item].id.to_string();
                match (reader.responses_for_item(&id), reader.scores_for_item(&id)) {
                    (Ok(records), Ok(scores)) => self.send(
                        to,
                        Msg::Stored {
                            item,
                            records,
                            scores,
                            rescore,
                        },
                    ),
                    (Err(e), _) | (_, Err(e)) => {
                        self.send(to, Msg::Failed(format!("reading stored answers: {e}")))
                    }
                }
            }
            JobRequest::Score { inputs, judge } => {
                let judge = if judge {
                    self.services.judge.clone()
                } else {
                    None
                };
                let (stx, mut srx) = mpsc::unbounded_channel();
                let (ds, store, fwd) = (ds.clone(), self.services.store.clone(), self.tx.clone());
                let cancel = CancellationToken::new();
                let c2 = cancel.clone();
                // One task scores and forwards, so when it ends every score has reached the loop.
                let handle = tokio::spawn(async move {
                    use futures::FutureExt;
                    // A bug in scoring is reported, not silently lost with its scores.
                    let work = std::panic::AssertUnwindSafe(crate::engine::score::score_all(
                        ds, inputs, judge, 4, store, stx,
                    ))
                    .catch_unwind();
                    let work = async {
                        work.await.unwrap_or_else(|p| {
                            Err(anyhow::anyhow!(
                                "internal error: {}",
                                crate::engine::panic_message(&*p)
                            ))
                        })
                    };
                    let forward = async {
                        while let Some(r) = srx.recv().await {
                            let _ = fwd.send(Delivery {
                                to,
                                msg: Msg::Scored(r),
                            });
                        }
                    };
                    tokio::select! {
                        (result, ()) = async { tokio::join!(work, forward) } => {
                            if let Err(e) = result {
                                let _ = fwd.send(Delivery { to, msg: Msg::Failed(format!("scoring: {e}")) });
                            }
                        }
                        _ = c2.cancelled() => {}
                    }
                });
                self.others.push((cancel, handle));
            }
        }
    }

    fn start_run(
        &mut self,
        to: ScreenId,
        items: Vec<usize>,
        models: Vec<ModelConfig>,
        samples: u32,
        ds: &Arc<Dataset>,
    ) {
        let Some(store) = self.services.store.clone() else {
            self.send(to, Msg::Failed("runs need a store".into()));
            return;
        };
        if self.run_in_progress() {
            self.send(to, Msg::Failed("a run is already in progress".into()));
            return;
        }
        let mut spec = crate::engine::RunSpec::new(
            ds.clone(),
            self.services.dataset_ref.clone(),
            items,
            models,
        );
        spec.concurrency = self.services.concurrency;
        spec.samples = samples.max(1);
        let cancel = CancellationToken::new();
        let (etx, mut erx) = mpsc::unbounded_channel();
        let fwd = self.tx.clone();
        tokio::spawn(async move {
            while let Some(ev) = erx.recv().await {
                if fwd
                    .send(Delivery {
                        to,
                        msg: Msg::Engine(ev),
                    })
                    .is_err()
                {
                    break;
                }
            }
        });
        let factory = self.services.factory.clone();
        let c2 = cancel.clone();
        let err = self.tx.clone();
        let handle = tokio::spawn(async move {
            if let Err(e) = crate::engine::run(spec, store, factory, etx, c2).await {
                let _ = err.send(Delivery {
                    to,
                    msg: Msg::Failed(format!("run not started: {e}")),
                });
            }
        });
        self.run = Some((cancel, handle));
    }

    /// Cancels the run in progress; what finished is kept.
    pub fn cancel_run(&self) {
        if let Some((cancel, _)) = &self.run {
            cancel.cancel();
        }
    }

    /// On quit: cancel everything, give the run a moment to record where it stopped (finished
    /// answers are already stored; the rest stay pending for `--resume`).
    pub async fn shutdown(&mut self) {
        for (c, _) in &self.others {
            c.cancel();
        }
        if let Some((cancel, handle)) = self.run.take() {
            cancel.cancel();
            let _ = tokio::time::timeout(Duration::from_secs(3), handle).await;
        }
    }
}

/// A stored response as something to score.
pub fn to_score(item: usize, r: &ResponseRecord) -> ToScore {
    ToScore {
        run_id: r.run_id.clone(),
        job_idx: r.job_idx,
        item,
        model: r.model.clone(),
        sample: r.sample,
        response: match (&r.error, &r.text) {
            (Some(e), _) => Some(format!("ERROR: {e}")),
            (None, t) => t.clone(),
        },
    }
}
