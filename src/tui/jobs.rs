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
    /// Who is reviewing (`--reviewer`, the config's `reviewer`, or the login name).
    pub reviewer: String,
    /// Where review decisions and drafts go: the store's file, or a shared PostgreSQL database.
    pub review: Option<crate::store::Panel>,
    /// Blind review (`--blind`, or `blind = true` in the config).
    pub blind: bool,
    /// Where choices made in the TUI are remembered (`config.toml`); `None`: not remembered.
    pub config_file: Option<std::path::PathBuf>,
    /// A shared store whose runs are mirrored into the local store while the TUI runs
    /// (`store::mirror`): the team's runs, and answers arriving from every worker.
    pub shared: Option<Arc<crate::store::Db>>,
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
            reviewer: crate::review::load::default_reviewer(),
            review: None,
            blind: false,
            config_file: None,
            shared: None,
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
        let review = crate::store::Panel::local(Store::open(db)?);
        Ok(Services {
            store: Some(StoreHandle::spawn(writer, Some(db.to_path_buf()))),
            reader: Some(reader),
            factory,
            dataset_ref,
            concurrency: 16,
            judge: None,
            reviewer: crate::review::load::default_reviewer(),
            review: Some(review),
            blind: false,
            config_file: None,
            shared: None,
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
}

/// Samples per answer in detections started from the TUI (AutoHall's default).
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

/// Work a component can ask for.
#[derive(Debug, Clone)]
pub enum JobRequest {
    Detect(DetectJob),
    /// What the tree opens on: the newest score of every item, model and sample (the store's
    /// summaries, whatever the history holds), then the stored answers that were never scored
    /// (a run stopped between an answer and its score), which come back to be scored.
    LoadScores,
    /// The runs in the store, as `prism runs` lists them.
    LoadRuns,
    /// Two runs compared as `prism compare` does (a model both have when they have several).
    /// A stored run's items (the runs screen's `o`), to open its answers.
    LoadRunItems {
        run: String,
    },
    /// One stored run's answers to one item, with their scores.
    LoadRunAnswers {
        run: String,
        item: usize,
    },
    /// Names a run (empty: no name), on the shared store too when there is one; the runs are
    /// listed again.
    NameRun {
        run: String,
        name: String,
    },
    /// A person's label on an answer (the compare screen's `L`), on the shared store first
    /// when there is one; never replacing an earlier label.
    Label {
        run: String,
        job: u32,
        item_id: String,
        model: String,
        label: crate::store::Label,
        note: String,
    },
    /// The items whose stored answers hold `query` (the browse search, on enter).
    SearchAnswers {
        query: String,
    },
    CompareRuns {
        a: String,
        b: String,
        /// The model to compare on when both runs have it (else their first in common).
        model: Option<String>,
    },
    /// The heatmap rows of stored runs: a row per model and run.
    LoadRunRows {
        runs: Vec<String>,
    },
    /// An item's answers and scores on both sides of a comparison.
    LoadPairAnswers {
        item_id: String,
        sides: Box<[crate::eval::compare::Side; 2]>,
    },
    /// Judge with this model from now on (remembered in the config), and score every stored
    /// answer that waits for a judge.
    SetJudge(Box<ModelConfig>),
    /// Every stored answer's self-contradiction flag, with its score (the heatmap's metric).
    LoadFlags,
    /// How well each signal predicts PRISM's verdict, per model and cell of every view, over
    /// every stored run (the heatmap's signals metric).
    LoadSignals,
    /// The judges on trial over one run's judged answers, or every run's.
    LoadJudges {
        run: Option<String>,
    },
    /// People's labels on an item's answers (the compare screen shows each reviewer's newest);
    /// from then on a change to the labels, by anyone, arrives as [`Msg::LabelsChanged`].
    LoadItemLabels {
        item: usize,
    },
    /// One judged answer with every judge's verdicts and every person's labels.
    LoadJudgedAnswer {
        run: String,
        job: u32,
    },
    /// Semantic entropy of one group of answers: `judge` clusters them, asking only the
    /// entailment verdicts not stored yet (the contradictions screen's `e`).
    Entropy {
        group: Box<crate::detect::semantic::Group>,
        judge: Box<ModelConfig>,
    },
    /// The claims detections over a claims dataset: every target, newest run first.
    LoadClaims {
        dataset: String,
    },
    /// Every stored self-detection run with what it stored, newest first.
    LoadSelfchecks,
    /// On a shared store: a run started here (any lane) has ended; it goes to the team's store
    /// (`what` names the lane in what is said).
    PushShared {
        run: String,
        what: String,
    },
    /// A new self-detection run over `set`: each model writes and judges its own sentences.
    Selfcheck {
        set: Arc<crate::dataset::triples::TripleSet>,
        /// The whole dataset: examples and decoys come from it.
        pool: Arc<crate::dataset::triples::TripleSet>,
        dataset: String,
        models: Vec<ModelConfig>,
        /// False sentences by swapping the object (else written by the model).
        swap: bool,
    },
    /// Run items against models, `samples` answers each.
    Run {
        items: Vec<usize>,
        models: Vec<ModelConfig>,
        samples: u32,
    },
    /// Read an item's stored answers and scores; with `rescore`, score them again (with the
    /// judge) once read.
    LoadStored {
        item: usize,
        rescore: bool,
    },
    /// Score answers (rules; the judge too when `judge` is set and one is configured).
    Score {
        inputs: Vec<ToScore>,
        judge: bool,
    },
    /// The review's decisions, this reviewer's drafts and the items' triage signals.
    LoadReview,
    /// Decisions stored after `after` (other reviewers', on a shared database).
    RefreshReview {
        after: i64,
    },
    /// Replace this reviewer's draft of an item (sent as they type).
    SaveDraft(crate::store::Draft),
    /// Save a decision (its draft goes in the same transaction).
    SaveDecision(Box<crate::review::ReviewRecord>),
    /// Take back a decision or label this session saved (`z`; `tui::undo`).
    Undo(super::undo::Undo),
}

/// A result of background work.
#[derive(Debug, Clone)]
pub enum Msg {
    /// A detection to show (stored, or just recorded and starting), and the target to focus.
    Detection {
        run: Box<crate::store::DetectRun>,
        stored: crate::detect::run::Stored,
        focus: u32,
    },
    Detect(crate::detect::run::DetectEvent),
    Flags(Vec<crate::detect::results::AnswerFlag>),
    /// Per signal, model and cell (dimensions, categories, sub-tasks, `all`): AUROC without an
    /// interval.
    Signals(Vec<crate::detect::signals::SignalRow>),
    /// The judges on trial (`LoadJudges`).
    Judges(Box<crate::review::judges::Trial>),
    /// One judged answer (`LoadJudgedAnswer`).
    JudgedAnswer(Box<crate::review::judges::JudgedAnswer>),
    /// A clustering's news: a verdict saved, the group clustered (or stopped), the end.
    Entropy(crate::detect::semantic::EntropyEvent),
    Claims(Vec<(crate::store::DetectRun, crate::detect::run::Stored)>),
    Selfchecks(
        Vec<(
            crate::store::SelfcheckRun,
            crate::selfcheck::results::Stored,
        )>,
    ),
    /// A self-detection run just recorded and starting.
    SelfcheckStarted {
        run: Box<crate::store::SelfcheckRun>,
        stored: crate::selfcheck::results::Stored,
    },
    Selfcheck(crate::selfcheck::run::SelfcheckEvent),
    Engine(crate::engine::Event),
    Stored {
        item: usize,
        records: Vec<ResponseRecord>,
        scores: Vec<ScoreRecord>,
        rescore: bool,
    },
    /// A score (saved), or an answer left unscored with the reason.
    Scored(ScoreRecord),
    /// A review store call worked (a draft saved): an error shown from an earlier one is over.
    ReviewStoreOk,
    Review(Box<crate::review::load::ReviewData>),
    ReviewMore {
        decisions: Vec<crate::review::ReviewRecord>,
        seq: i64,
    },
    /// Review decisions were stored by someone else (review::watch): read what is new.
    ReviewChanged,
    /// The mirror pulled runs, answers or scores from the shared store (every open screen
    /// hears it).
    SharedPulled(Box<crate::store::mirror::Pulled>),
    /// A decision is on disk.
    DecisionSaved(Box<crate::review::ReviewRecord>),
    /// An undo was carried out: what it did, for the status line.
    Undone(String),
    /// The judge is set: its name, the answers that waited for one (the app has them scored),
    /// and why the choice could not be remembered, if it could not.
    JudgeSet {
        name: String,
        waiting: Vec<ToScore>,
        not_remembered: Option<String>,
    },
    /// The newest stored score of every item, model and sample.
    LatestScores(Vec<crate::store::summaries::LatestScore>),
    /// Stored answers without a score, to be scored.
    Unscored(Vec<ToScore>),
    Runs(Vec<crate::runs::Listed>),
    /// A run's items, as dataset indices, and how many are not in the dataset open here.
    RunItems {
        run: String,
        items: Vec<usize>,
        missing: usize,
    },
    /// One stored run's answers to an item, with their scores.
    RunAnswers {
        run: String,
        item: usize,
        records: Vec<ResponseRecord>,
        scores: Vec<ScoreRecord>,
    },
    /// A label saved (the compare screen shows it on its answer's pane).
    Labelled(crate::store::AnswerLabel),
    /// An item's labels (`LoadItemLabels`), with who "you" are.
    ItemLabels {
        item: usize,
        labels: Vec<crate::store::AnswerLabel>,
        me: String,
    },
    /// Someone (another screen, another process, a teammate through the shared store) stored
    /// labels: screens showing labels read them again.
    LabelsChanged,
    /// The items with a stored answer holding the search `query`.
    AnswerMatches {
        query: String,
        items: Vec<String>,
    },
    /// Two runs compared, with the models they both have.
    Comparison(Box<crate::eval::compare::Comparison>, Vec<String>),
    PairAnswers(Box<crate::eval::compare::PairAnswers>),
    /// Heatmap rows of stored runs (`model @ run`), and the runs with no scores yet.
    RunRows {
        rows: Vec<crate::report::Row>,
        unscored: Vec<String>,
    },
    /// A job could not start or failed, with why.
    Failed(String),
    /// Something to tell the user that is not a failure (a run pushed to the team's store).
    Notice(String),
}

impl super::store_worker::Failed for Msg {
    fn failed(why: String) -> Msg {
        Msg::Failed(why)
    }
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
    /// The detection in progress (one at a time, beside a run).
    detect: Option<(CancellationToken, JoinHandle<()>)>,
    others: Vec<(CancellationToken, JoinHandle<()>)>,
    /// Watches for other reviewers' decisions once the review screen has loaded.
    review_watch: Option<crate::store::panel_watch::Watch>,
    /// Watches people's labels once a screen showing them has loaded.
    labels_watch: Option<crate::store::panel_watch::Watch>,
    /// Mirrors the shared store's runs into the local store (when there is one).
    _mirror: Option<crate::store::mirror::MirrorWatch>,
    /// Store reads and small writes, off the loop thread.
    worker: super::store_worker::StoreWorker<Msg>,
}

impl Jobs {
    pub fn new(services: Services) -> Jobs {
        let (tx, rx) = mpsc::unbounded_channel();
        // The worker's own connections (SQLite serves one thread per connection well; the
        // shared store's is a handle on its connection thread).
        let ctx = super::store_worker::StoreCtx {
            reader: services
                .reader
                .as_ref()
                .and_then(|r| r.path())
                .and_then(|p| Store::open(&p).ok()),
            review: services.review.as_ref().and_then(|r| r.reopen()),
        };
        let out = tx.clone();
        let worker = super::store_worker::StoreWorker::start(ctx, move |to, msg| {
            let _ = out.send(Delivery { to, msg });
        });
        let mirror = Self::mirror(&services, &tx);
        Jobs {
            services,
            tx,
            rx,
            run: None,
            detect: None,
            others: Vec::new(),
            review_watch: None,
            labels_watch: None,
            _mirror: mirror,
            worker,
        }
    }

    /// Starts mirroring the shared store's runs into the local store, if there is a shared
    /// store; what it pulls is delivered as [`Msg::SharedPulled`].
    fn mirror(
        services: &Services,
        tx: &mpsc::UnboundedSender<Delivery>,
    ) -> Option<crate::store::mirror::MirrorWatch> {
        let db = services.shared.clone()?;
        let (pulled, failed) = (tx.clone(), tx.clone());
        let shown = db.shown();
        db.mirror(
            move |p| {
                let _ = pulled.send(Delivery {
                    to: ScreenId::Heatmap,
                    msg: Msg::SharedPulled(Box::new(p)),
                });
            },
            move |e| {
                let _ = failed.send(Delivery {
                    to: ScreenId::Heatmap,
                    msg: Msg::Failed(format!("the team's runs on {shown} are not updating: {e}")),
                });
            },
        )
        .ok()
        .flatten()
    }

    /// Puts a run started here on the shared store, off the loop thread (a thread of its own:
    /// the reads and writes of the store worker do not wait behind the network).
    fn push_shared(&mut self, to: ScreenId, run: String, what: String) {
        let Some(db) = self.services.shared.clone() else {
            return;
        };
        let tx = self.tx.clone();
        let h = tokio::task::spawn_blocking(move || {
            let shown = db.shown();
            let pushed = db.push_finished_run(&run);
            let msg = match pushed {
                Ok(Some((noun, n))) => Msg::Notice(format!(
                    "{noun} {run} is on the team's store {shown} ({n} row(s) added)"
                )),
                Ok(None) => return,
                Err(e) => Msg::Failed(format!(
                    "{what}: {run} stays in this machine's store (the team's store {shown}: \
                     {e}); push it with prism db copy"
                )),
            };
            let _ = tx.send(Delivery { to, msg });
        });
        self.others.push((CancellationToken::new(), h));
    }

    /// Whether work is still in flight (the loop waits for it when input ends).
    pub fn busy(&mut self) -> bool {
        self.others.retain(|(_, h)| !h.is_finished());
        self.run.as_ref().is_some_and(|(_, h)| !h.is_finished())
            || self.detect_in_progress()
            || !self.others.is_empty()
            || self.worker.pending() > 0
    }

    pub fn detect_in_progress(&self) -> bool {
        self.detect.as_ref().is_some_and(|(_, h)| !h.is_finished())
    }

    /// Cancels the detection in progress; what finished is kept (resume with `prism detect
    /// --resume`, or sample again).
    pub fn cancel_detect(&self) {
        if let Some((cancel, _)) = &self.detect {
            cancel.cancel();
        }
    }

    pub fn run_in_progress(&self) -> bool {
        self.run.as_ref().is_some_and(|(_, h)| !h.is_finished())
    }

    /// Starts the watcher that tells the review screen of other reviewers' decisions (once;
    /// it lives as long as the loop).
    fn watch_review(&mut self) {
        if self.review_watch.is_some() {
            return;
        }
        let Some(source) = self.services.review.as_ref().and_then(|r| r.watch_source()) else {
            return;
        };
        let tx = self.tx.clone();
        let changed = move || {
            let _ = tx.send(Delivery {
                to: ScreenId::Review,
                msg: Msg::ReviewChanged,
            });
        };
        match crate::store::panel_watch::Watch::start(source, changed) {
            Ok(w) => self.review_watch = Some(w),
            Err(e) => self.send(
                ScreenId::Review,
                Msg::Failed(format!(
                    "other reviewers' decisions will not show live: {e}"
                )),
            ),
        }
    }

    /// Starts the watcher that tells the screens showing labels (compare, judges) that labels
    /// changed (once; it lives as long as the loop). It watches this machine's store file: on
    /// a shared store that is the mirror, into which the team's labels are pulled.
    fn watch_labels(&mut self) {
        if self.labels_watch.is_some() {
            return;
        }
        let Some(path) = self.services.reader.as_ref().and_then(|r| r.path()) else {
            return;
        };
        let tx = self.tx.clone();
        let changed = move || {
            for to in [ScreenId::Compare, ScreenId::Judges] {
                let _ = tx.send(Delivery {
                    to,
                    msg: Msg::LabelsChanged,
                });
            }
        };
        match crate::store::panel_watch::Watch::start_table(path, "answer_labels", changed) {
            Ok(w) => self.labels_watch = Some(w),
            Err(e) => self.send(
                ScreenId::Compare,
                Msg::Failed(format!("other people's labels will not show live: {e}")),
            ),
        }
    }

    /// Judges with `cfg` from now on and remembers it; the answers that waited for a judge
    /// are read on the store worker and come back with [`Msg::JudgeSet`], which has them scored.
    fn set_judge(&mut self, to: ScreenId, cfg: ModelConfig, ds: &Arc<Dataset>) {
        if let Err(e) = self.services.set_judge(&cfg) {
            return self.send(to, Msg::Failed(format!("judge {}: {e:#}", cfg.name)));
        }
        let not_remembered = match &self.services.config_file {
            Some(path) => crate::config::remember(path, "judge", &cfg.name).err(),
            None => Some("no config file in this session".into()),
        };
        let ds = ds.clone();
        self.on_store(to, move |cx| {
            let mut out = Vec::new();
            let waiting = match &cx.reader {
                Some(reader) => match reader.awaiting_judge() {
                    Ok(records) => records
                        .iter()
                        .filter_map(|r| Some(to_score(ds.index_of(&r.item_id)?, r)))
                        .collect(),
                    Err(e) => {
                        out.push(Msg::Failed(format!("reading stored answers: {e}")));
                        Vec::new()
                    }
                },
                None => Vec::new(),
            };
            out.push(Msg::JudgeSet {
                name: cfg.name.clone(),
                waiting,
                not_remembered,
            });
            out
        });
    }

    /// Runs `task` on the store worker; its messages go to `to`.
    fn on_store(
        &self,
        to: ScreenId,
        task: impl FnOnce(&mut super::store_worker::StoreCtx) -> Vec<Msg> + Send + 'static,
    ) {
        if let Err(e) = self.worker.submit(to, Box::new(task)) {
            self.send(to, Msg::Failed(format!("reading the store: {e}")));
        }
    }

    fn send(&self, to: ScreenId, msg: Msg) {
        let _ = self.tx.send(Delivery { to, msg });
    }

    /// Runs `read` on the store worker's reader; without a store, `missing` is the answer
    /// (or nothing, when a screen without a store simply shows nothing).
    fn on_reader(
        &self,
        to: ScreenId,
        missing: Option<&'static str>,
        read: impl FnOnce(&Store) -> Msg + Send + 'static,
    ) {
        self.on_store(to, move |cx| match &cx.reader {
            Some(reader) => vec![read(reader)],
            None => missing.map(|m| Msg::Failed(m.into())).into_iter().collect(),
        });
    }

    /// Saves a person's label on an answer (the compare screen's `L`).
    fn label(&mut self, to: ScreenId, req: JobRequest) {
        let JobRequest::Label {
            run,
            job,
            item_id,
            model,
            label,
            note,
        } = req
        else {
            return;
        };
        let shared = self.services.shared.clone();
        let at = crate::store::now_millis();
        let rec = crate::store::AnswerLabel {
            uid: crate::store::AnswerLabel::new_uid(&self.services.reviewer, at),
            run_id: run,
            job_idx: job,
            item_id,
            model,
            reviewer: self.services.reviewer.clone(),
            label,
            note,
            created_at: at,
        };
        self.on_store(to, move |cx| {
            let Some(reader) = &mut cx.reader else {
                return vec![Msg::Failed("labels need a store".into())];
            };
            let saved = match &shared {
                Some(db) => db.add_labels(std::slice::from_ref(&rec)),
                None => reader
                    .add_labels(std::slice::from_ref(&rec))
                    .map_err(anyhow::Error::from),
            };
            match saved {
                Ok(_) => vec![
                    Msg::Notice(format!(
                        "labelled {} (kept with your earlier labels; your newest counts)",
                        rec.label.words()
                    )),
                    Msg::Labelled(rec),
                ],
                Err(e) => vec![Msg::Failed(format!("saving the label: {e:#}"))],
            }
        });
    }

    /// The runs screen's and the search's reads and writes of stored runs, on the store worker.
    fn stored_runs(&mut self, to: ScreenId, req: JobRequest, ds: &Arc<Dataset>) {
        let runs_need = Some("runs need a store");
        match req {
            JobRequest::LoadRunItems { run } => {
                let ds = ds.clone();
                self.on_reader(to, runs_need, move |r| match r.run_item_ids(&run) {
                    Ok(ids) => {
                        let items: Vec<usize> = ids.iter().filter_map(|i| ds.index_of(i)).collect();
                        Msg::RunItems {
                            missing: ids.len() - items.len(),
                            run,
                            items,
                        }
                    }
                    Err(e) => Msg::Failed(format!("reading the run: {e}")),
                })
            }
            JobRequest::LoadRunAnswers { run, item } => {
                let id = ds.items[item].id.to_string();
                self.on_reader(to, runs_need, move |r| {
                    match (r.run_item_answers(&run, &id), r.scores_for_item(&id)) {
                        (Ok(records), Ok(mut scores)) => {
                            scores.retain(|s| s.run_id == run);
                            Msg::RunAnswers {
                                run,
                                item,
                                records,
                                scores,
                            }
                        }
                        (Err(e), _) | (_, Err(e)) => {
                            Msg::Failed(format!("reading the run's answers: {e}"))
                        }
                    }
                })
            }
            JobRequest::NameRun { run, name } => {
                let shared = self.services.shared.clone();
                self.on_store(to, move |cx| {
                    let Some(reader) = &cx.reader else {
                        return vec![Msg::Failed("runs need a store".into())];
                    };
                    let name = crate::text::one_line(&name)
                        .trim()
                        .chars()
                        .take(200)
                        .collect::<String>();
                    let n = (!name.is_empty()).then_some(name.as_str());
                    let named = match &shared {
                        // The team's name first: the local copy follows it.
                        Some(db) => db
                            .name_shared_run(&run, n)
                            .and_then(|ok| Ok(ok && reader.set_run_name(&run, n)?)),
                        None => reader.set_run_name(&run, n).map_err(anyhow::Error::from),
                    };
                    let said = match named {
                        Ok(true) => match n {
                            Some(n) => format!("{run} is named \"{n}\""),
                            None => format!("{run} has no name now"),
                        },
                        Ok(false) => format!("no run {run} in the store"),
                        Err(e) => format!("naming {run}: {e:#}"),
                    };
                    let list = crate::runs::list(reader, &crate::store::RunFilter::default())
                        .map(Msg::Runs)
                        .unwrap_or_else(|e| Msg::Failed(format!("reading runs: {e:#}")));
                    vec![list, Msg::Notice(said)]
                });
            }
            JobRequest::SearchAnswers { query } => {
                self.on_reader(to, None, move |r| match r.items_answered_with(&query) {
                    Ok(items) => Msg::AnswerMatches { query, items },
                    Err(e) => Msg::Failed(format!("searching the answers: {e}")),
                })
            }
            _ => {}
        }
    }

    /// The judge on trial's reads (labels, the trial, one judged answer), on the store worker;
    /// each starts the watch on labels, so a label stored anywhere reaches the screen.
    fn judging(&mut self, to: ScreenId, req: JobRequest, ds: &Arc<Dataset>) {
        match req {
            JobRequest::LoadItemLabels { item } => {
                self.watch_labels();
                let me = self.services.reviewer.clone();
                let Some(id) = ds.items.get(item).map(|it| it.id.to_string()) else {
                    return;
                };
                self.on_reader(to, None, move |r| match r.answer_labels(None) {
                    Ok(all) => Msg::ItemLabels {
                        labels: all.into_iter().filter(|l| l.item_id == id).collect(),
                        item,
                        me,
                    },
                    Err(e) => Msg::Failed(format!("reading the labels: {e}")),
                })
            }
            JobRequest::LoadJudges { run } => {
                self.watch_labels();
                let cat = crate::eval::summary::Catalogue::of(ds);
                self.on_reader(to, Some("the judges need a store"), move |r| {
                    let opts = crate::review::judges::Options::default();
                    crate::review::judges::of_store(r, run.as_deref(), &cat, &opts)
                        .map(|t| Msg::Judges(Box::new(t)))
                        .unwrap_or_else(|e| Msg::Failed(format!("reading the judges: {e}")))
                })
            }
            JobRequest::LoadJudgedAnswer { run, job } => {
                self.on_reader(
                    to,
                    None,
                    move |r| match crate::review::judges::judged_answer(r, &run, job) {
                        Ok(Some(a)) => Msg::JudgedAnswer(Box::new(a)),
                        Ok(None) => Msg::Failed(format!(
                            "answer {job} of run {} is not in the store",
                            crate::text::one_line(&run)
                        )),
                        Err(e) => Msg::Failed(format!("reading the answer: {e}")),
                    },
                )
            }
            _ => {}
        }
    }

    /// Starts a job for `to`; results (or why it could not start) arrive on `rx`.
    pub fn start(&mut self, to: ScreenId, req: JobRequest, ds: &Arc<Dataset>) {
        let runs_need = Some("runs need a store");
        match req {
            JobRequest::SetJudge(cfg) => self.set_judge(to, *cfg, ds),
            JobRequest::LoadScores => {
                // Two tasks: the tree fills from the first before the second looks for
                // unscored answers.
                self.on_reader(to, None, |r| {
                    r.latest_scores()
                        .map(Msg::LatestScores)
                        .unwrap_or_else(|e| Msg::Failed(format!("reading scores: {e}")))
                });
                let ds = ds.clone();
                self.on_reader(to, None, move |r| match r.unscored_responses() {
                    Ok(records) => Msg::Unscored(
                        records
                            .iter()
                            .filter_map(|r| Some(to_score(ds.index_of(&r.item_id)?, r)))
                            .collect(),
                    ),
                    Err(e) => Msg::Failed(format!("reading stored answers: {e}")),
                });
            }
            JobRequest::LoadRuns => self.on_reader(to, runs_need, |r| {
                crate::runs::list(r, &crate::store::RunFilter::default())
                    .map(Msg::Runs)
                    .unwrap_or_else(|e| Msg::Failed(format!("reading runs: {e:#}")))
            }),
            JobRequest::LoadRunItems { .. }
            | JobRequest::LoadRunAnswers { .. }
            | JobRequest::NameRun { .. }
            | JobRequest::SearchAnswers { .. } => self.stored_runs(to, req, ds),
            JobRequest::Label { .. } => self.label(to, req),
            JobRequest::Undo(u) => {
                let shared = self.services.shared.clone();
                self.on_store(to, move |cx| {
                    match super::undo::run(u, cx, shared.as_deref()) {
                        Ok((said, changed)) => vec![
                            Msg::Undone(said),
                            match changed {
                                super::undo::Changed::Decisions => Msg::ReviewChanged,
                                super::undo::Changed::Labels => Msg::LabelsChanged,
                            },
                        ],
                        Err(why) => vec![Msg::Failed(why)],
                    }
                });
            }
            JobRequest::CompareRuns { a, b, model } => self.on_reader(to, runs_need, move |r| {
                crate::runs::compare_runs(r, (&a, &b), model.as_deref())
                    .map(|(c, common)| Msg::Comparison(Box::new(c), common))
                    .unwrap_or_else(|e| Msg::Failed(format!("comparing: {e:#}")))
            }),
            JobRequest::LoadRunRows { runs } => {
                let ds = ds.clone();
                self.on_reader(to, runs_need, move |r| {
                    crate::runs::heatmap_rows(r, &runs, &ds)
                        .map(|(rows, unscored)| Msg::RunRows { rows, unscored })
                        .unwrap_or_else(|e| Msg::Failed(format!("reading runs: {e:#}")))
                })
            }
            JobRequest::LoadPairAnswers { item_id, sides } => {
                self.on_reader(to, runs_need, move |r| {
                    crate::runs::pair_answers(r, &item_id, &sides)
                        .map(|p| Msg::PairAnswers(Box::new(p)))
                        .unwrap_or_else(|e| Msg::Failed(format!("reading answers: {e:#}")))
                })
            }
            JobRequest::Detect(job) => {
                if let Err(e) = self.start_detect(to, job, ds) {
                    self.send(to, Msg::Failed(format!("detection: {e:#}")));
                }
            }
            JobRequest::LoadFlags => self.on_reader(to, None, |r| {
                crate::detect::results::answer_flags(r)
                    .map(Msg::Flags)
                    .unwrap_or_else(|e| Msg::Failed(format!("reading detections: {e}")))
            }),
            JobRequest::Entropy { group, judge } => self.start_entropy(to, *group, *judge),
            JobRequest::LoadSignals => self.on_reader(to, None, |r| {
                signal_rows(r)
                    .map(Msg::Signals)
                    .unwrap_or_else(|e| Msg::Failed(format!("reading signals: {e}")))
            }),
            JobRequest::LoadItemLabels { .. }
            | JobRequest::LoadJudges { .. }
            | JobRequest::LoadJudgedAnswer { .. } => self.judging(to, req, ds),
            JobRequest::LoadClaims { dataset } => self.on_reader(to, None, move |r| {
                claims_runs(r, &dataset)
                    .map(Msg::Claims)
                    .unwrap_or_else(|e| Msg::Failed(format!("reading detections: {e}")))
            }),
            JobRequest::PushShared { run, what } => self.push_shared(to, run, what),
            JobRequest::LoadSelfchecks => self.on_reader(to, None, |r| {
                selfcheck_runs(r)
                    .map(Msg::Selfchecks)
                    .unwrap_or_else(|e| Msg::Failed(format!("reading self-detection runs: {e}")))
            }),
            JobRequest::Selfcheck {
                set,
                pool,
                dataset,
                models,
                swap,
            } => {
                if let Err(e) = self.start_selfcheck(to, (&set, &pool), dataset, models, swap) {
                    self.send(to, Msg::Failed(format!("self-detection: {e:#}")));
                }
            }
            JobRequest::Run {
                items,
                models,
                samples,
            } => self.start_run(to, items, models, samples, ds),
            JobRequest::LoadStored { item, rescore } => {
                let id = ds.items[item].id.to_string();
                self.on_reader(to, None, move |r| {
                    match (r.responses_for_item(&id), r.scores_for_item(&id)) {
                        (Ok(records), Ok(scores)) => Msg::Stored {
                            item,
                            records,
                            scores,
                            rescore,
                        },
                        (Err(e), _) | (_, Err(e)) => {
                            Msg::Failed(format!("reading stored answers: {e}"))
                        }
                    }
                })
            }
            JobRequest::Score { inputs, judge } => self.start_score(to, inputs, judge, ds),
            JobRequest::LoadReview
            | JobRequest::RefreshReview { .. }
            | JobRequest::SaveDraft(_)
            | JobRequest::SaveDecision(_) => self.review(to, req),
        }
    }

    /// The review screen's reads and writes, on the store worker. Writes are small; they queue
    /// in the order typed, so a draft is saved before the decision after it, and the loop never
    /// waits for them.
    fn review(&mut self, to: ScreenId, req: JobRequest) {
        match req {
            JobRequest::LoadReview => {
                // Watching starts before the load: what is stored meanwhile is in the load or
                // arrives as a change (a change before the screen has data is ignored).
                self.watch_review();
                let (reviewer, blind) = (self.services.reviewer.clone(), self.services.blind);
                self.on_store(to, move |cx| {
                    let (Some(reader), Some(review)) = (&cx.reader, &cx.review) else {
                        return vec![Msg::Failed("review needs a store".into())];
                    };
                    vec![
                        match crate::review::load::ReviewData::load(reader, review, &reviewer) {
                            Ok(mut d) => {
                                d.blind = blind;
                                Msg::Review(Box::new(d))
                            }
                            Err(e) => Msg::Failed(format!("reading reviews: {e}")),
                        },
                    ]
                })
            }
            JobRequest::RefreshReview { after } => self.on_store(to, move |cx| {
                let Some(review) = &cx.review else {
                    return Vec::new();
                };
                vec![match review.decisions_after(after) {
                    Ok((decisions, seq)) => Msg::ReviewMore { decisions, seq },
                    Err(e) => Msg::Failed(format!("reading reviews: {e}")),
                }]
            }),
            JobRequest::SaveDraft(mut d) => {
                d.reviewer = self.services.reviewer.clone();
                self.on_store(to, move |cx| {
                    let Some(store) = &mut cx.review else {
                        return Vec::new();
                    };
                    // Either way the screen hears: an error it shows goes once a save works.
                    vec![match store.save_draft(&d) {
                        Ok(()) => Msg::ReviewStoreOk,
                        Err(e) => Msg::Failed(format!("saving the draft: {e}")),
                    }]
                })
            }
            JobRequest::SaveDecision(mut r) => {
                r.reviewer = self.services.reviewer.clone();
                r.uid = crate::review::ReviewRecord::new_uid(&r.reviewer, r.created_at);
                self.on_store(to, move |cx| {
                    let Some(store) = &mut cx.review else {
                        return vec![Msg::Failed("review needs a store".into())];
                    };
                    vec![match store.save_decisions(std::slice::from_ref(&r)) {
                        Ok(_) => Msg::DecisionSaved(r),
                        Err(e) => Msg::Failed(format!(
                            "the decision was not saved ({e}); it is kept as your draft: ctrl-s tries again"
                        )),
                    }]
                })
            }
            _ => {}
        }
    }

    /// Clusters one group of answers with `judge` in the background (the entropy lane, with the
    /// verdicts stored so far read first); each verdict reaches the screen as it is saved.
    fn start_entropy(
        &mut self,
        to: ScreenId,
        group: crate::detect::semantic::Group,
        judge: ModelConfig,
    ) {
        use crate::detect::semantic;
        let (Some(handle), Some(path)) = (
            self.services.store.clone(),
            self.services.reader.as_ref().and_then(|r| r.path()),
        ) else {
            self.send(to, Msg::Failed("semantic entropy needs a store".into()));
            return;
        };
        let caller = match Caller::new(
            &judge,
            &self.services.factory,
            Some(handle.clone()),
            true,
            CancellationToken::new(),
        ) {
            Ok(c) => Arc::new(c),
            Err(e) => {
                self.send(to, Msg::Failed(format!("judge {}: {e:#}", judge.name)));
                return;
            }
        };
        let fwd = self.tx.clone();
        let cancel = CancellationToken::new();
        let c2 = cancel.clone();
        let factory = self.services.factory.clone();
        let handle_task = tokio::spawn(async move {
            let name = judge.name.clone();
            let opened = tokio::task::spawn_blocking(move || {
                let store = Store::open(&path)?;
                crate::store::Result::Ok(semantic::Known::of(&store.entailments(Some(&name))?))
            })
            .await;
            let known = match opened {
                Ok(Ok(x)) => x,
                Ok(Err(e)) => {
                    let _ = fwd.send(Delivery {
                        to,
                        msg: Msg::Failed(format!("semantic entropy: {e}")),
                    });
                    return;
                }
                Err(_) => return,
            };
            let (etx, erx) = mpsc::unbounded_channel();
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
                    let _ = fwd.send(Delivery {
                        to,
                        msg: Msg::Failed(format!("semantic entropy: {e}")),
                    });
                }
            };
            tokio::join!(lane, forward(erx, fwd.clone(), to, Msg::Entropy));
        });
        self.others.push((cancel, handle_task));
    }

    /// Scores answers in the background (rules; the judge too when `judge` is set and one is
    /// configured); each score reaches the loop as it is saved.
    fn start_score(&mut self, to: ScreenId, inputs: Vec<ToScore>, judge: bool, ds: &Arc<Dataset>) {
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
                ds,
                inputs,
                crate::engine::score::Judging::one(judge, 4),
                store,
                stx,
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
        // Scored as they arrive, with the judge chosen when the run starts.
        spec.score = Some(crate::engine::Scoring {
            judge: self.services.judge.clone(),
        });
        let cancel = CancellationToken::new();
        let (etx, erx) = mpsc::unbounded_channel();
        let fwd = self.tx.clone();
        let factory = self.services.factory.clone();
        let c2 = cancel.clone();
        let err = self.tx.clone();
        // One task runs and forwards: when it ends, every event has reached the loop (which
        // stops waiting once no job is busy and nothing is queued).
        let handle = tokio::spawn(async move {
            let work = async move {
                if let Err(e) = crate::engine::run(spec, store, factory, etx, c2).await {
                    let _ = err.send(Delivery {
                        to,
                        msg: Msg::Failed(format!("run not started: {e}")),
                    });
                }
            };
            tokio::join!(work, forward(erx, fwd, to, Msg::Engine));
        });
        self.run = Some((cancel, handle));
    }

    /// Starts (or shows) a detection for `to`: the run and what is stored go first
    /// ([`Msg::Detection`]), then the engine's events. Planning reads the store, so it runs on
    /// the store worker; the detection slot is taken at once, so a second request is refused.
    fn start_detect(
        &mut self,
        to: ScreenId,
        job: DetectJob,
        ds: &Arc<Dataset>,
    ) -> anyhow::Result<()> {
        use crate::detect::plan;
        let Some(store) = self.services.store.clone() else {
            anyhow::bail!("detection needs a store");
        };
        let busy = "a detection is in progress (esc on its screen cancels it)";
        match &job {
            DetectJob::Load { .. } => {}
            // An answer with a detection is shown even while another runs.
            DetectJob::Answer {
                run_id, job_idx, ..
            } if self.detect_in_progress() => {
                let (run_id, job_idx) = (run_id.clone(), *job_idx);
                self.on_store(to, move |cx| {
                    match cx.reader.as_ref().map(|r| {
                        Ok::<_, anyhow::Error>(match r.detection_of(&run_id, job_idx)? {
                            Some((id, target)) => Some(show(r, &id, target)?),
                            None => None,
                        })
                    }) {
                        Some(Ok(Some(msg))) => vec![msg],
                        Some(Ok(None)) => vec![Msg::Failed(busy.into())],
                        Some(Err(e)) => vec![Msg::Failed(format!("detection: {e:#}"))],
                        None => vec![Msg::Failed("detection needs a store".into())],
                    }
                });
                return Ok(());
            }
            _ if self.detect_in_progress() => anyhow::bail!(busy),
            DetectJob::Items { models, .. } | DetectJob::Claims { models, .. }
                if models.is_empty() =>
            {
                anyhow::bail!("choose models first (r opens the picker)")
            }
            _ => {}
        }
        if let DetectJob::Load { detect_id, target } = job {
            self.on_store(to, move |cx| match &cx.reader {
                Some(r) => vec![show(r, &detect_id, target).unwrap_or_else(|e| {
                    Msg::Failed(format!("reading detection {detect_id}: {e:#}"))
                })],
                None => vec![Msg::Failed("detection needs a store".into())],
            });
            return Ok(());
        }
        // The plan comes from the store worker: None when the answer has a detection already,
        // which is shown instead.
        let (ptx, prx) = tokio::sync::oneshot::channel::<anyhow::Result<Option<plan::Plan>>>();
        let (ds, dataset_ref) = (ds.clone(), self.services.dataset_ref.clone());
        self.on_store(to, move |cx| {
            let Some(reader) = &cx.reader else {
                let _ = ptx.send(Err(anyhow::anyhow!("detection needs a store")));
                return Vec::new();
            };
            let mut out = Vec::new();
            let planned = plan_detection(reader, &ds, &dataset_ref, job, &mut out);
            let _ = ptx.send(planned);
            out
        });
        let cancel = CancellationToken::new();
        let (etx, erx) = mpsc::unbounded_channel();
        let (fwd, tell, shown) = (self.tx.clone(), self.tx.clone(), self.tx.clone());
        let factory = self.services.factory.clone();
        let opts = crate::detect::run::DetectOptions {
            concurrency: self.services.concurrency,
            use_cache: true,
            stream_deltas: true,
        };
        let c2 = cancel.clone();
        let failed = move |why: String| {
            let _ = tell.send(Delivery {
                to,
                msg: Msg::Failed(why),
            });
        };
        // One task runs and forwards (see start_run).
        let handle = tokio::spawn(async move {
            let work = async move {
                let plan = match prx.await {
                    Ok(Ok(Some(plan))) => plan,
                    Ok(Ok(None)) => return,
                    Ok(Err(e)) => return failed(format!("detection: {e:#}")),
                    Err(_) => return failed("detection: the store worker stopped".into()),
                };
                // Before any event of the run: the same task sends both, in this order.
                let _ = shown.send(Delivery {
                    to,
                    msg: Msg::Detection {
                        run: Box::new(plan.run.clone()),
                        stored: plan.stored.clone(),
                        focus: plan.focus(),
                    },
                });
                let lane = crate::engine::Lane {
                    store,
                    factory,
                    events: etx,
                    cancel: c2,
                };
                if let Err(e) = plan.launch(lane, opts).await {
                    failed(format!("detection not started: {e:#}"));
                }
            };
            tokio::join!(work, forward(erx, fwd, to, Msg::Detect));
        });
        self.detect = Some((cancel, handle));
        Ok(())
    }

    /// Starts a self-detection run in the detection slot (one background detection at a
    /// time; esc cancels it, `prism selfcheck --resume` finishes it).
    fn start_selfcheck(
        &mut self,
        to: ScreenId,
        (set, pool): (
            &crate::dataset::triples::TripleSet,
            &crate::dataset::triples::TripleSet,
        ),
        dataset: String,
        models: Vec<ModelConfig>,
        swap: bool,
    ) -> anyhow::Result<()> {
        use crate::selfcheck::run::{Options, Plan, plan, start};
        let Some(store) = self.services.store.clone() else {
            anyhow::bail!("self-detection needs a store");
        };
        if self.detect_in_progress() {
            anyhow::bail!("a detection is in progress (esc on its screen cancels it)");
        }
        if models.is_empty() {
            anyhow::bail!("choose models first (r opens the picker)");
        }
        if set.triples.is_empty() {
            anyhow::bail!("no triples to run");
        }
        let p = Plan {
            false_by: if swap {
                crate::store::FalseBy::Swap
            } else {
                crate::store::FalseBy::Model
            },
            ..Plan::default()
        };
        let (run, items, models) = plan(dataset, set, &pool.triples, models, Vec::new(), p);
        self.send(
            to,
            Msg::SelfcheckStarted {
                run: Box::new(run.clone()),
                stored: crate::selfcheck::results::Stored {
                    items: items.clone(),
                    verdicts: Vec::new(),
                },
            },
        );
        let cancel = CancellationToken::new();
        let (etx, erx) = mpsc::unbounded_channel();
        let (fwd, err) = (self.tx.clone(), self.tx.clone());
        let factory = self.services.factory.clone();
        let opts = Options {
            concurrency: self.services.concurrency,
            use_cache: true,
        };
        let c2 = cancel.clone();
        // One task runs and forwards (see start_run).
        let handle = tokio::spawn(async move {
            let work = async move {
                let lane = crate::engine::Lane {
                    store,
                    factory,
                    events: etx,
                    cancel: c2,
                };
                if let Err(e) = start(lane, run, items, models, opts).await {
                    let _ = err.send(Delivery {
                        to,
                        msg: Msg::Failed(format!("self-detection not started: {e:#}")),
                    });
                }
            };
            tokio::join!(work, forward(erx, fwd, to, Msg::Selfcheck));
        });
        self.detect = Some((cancel, handle));
        Ok(())
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
        if let Some((cancel, handle)) = self.detect.take() {
            cancel.cancel();
            let _ = tokio::time::timeout(Duration::from_secs(3), handle).await;
        }
        if let Some((cancel, handle)) = self.run.take() {
            cancel.cancel();
            let _ = tokio::time::timeout(Duration::from_secs(3), handle).await;
        }
    }
}

/// The plan of a detection the TUI asked for, read on the store worker. `None`: nothing to
/// start (the answer has a detection already, pushed onto `out` to be shown).
fn plan_detection(
    reader: &Store,
    ds: &Dataset,
    dataset_ref: &str,
    job: DetectJob,
    out: &mut Vec<Msg>,
) -> anyhow::Result<Option<crate::detect::plan::Plan>> {
    use crate::detect::plan::{self, Settings};
    match job {
        DetectJob::Answer {
            run_id,
            job_idx,
            model: _,
            models,
        } => {
            if let Some((id, target)) = reader.detection_of(&run_id, job_idx)? {
                out.push(show(reader, &id, target)?);
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
            reader,
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
        } => Ok(Some(plan::again(reader, &detect_id, target, &models)?)),
        DetectJob::Load { .. } => Ok(None),
    }
}

/// The claims detections over a claims dataset, each with what it stored.
fn claims_runs(
    reader: &Store,
    dataset: &str,
) -> crate::store::Result<Vec<(crate::store::DetectRun, crate::detect::run::Stored)>> {
    let mut out = Vec::new();
    for run in reader.detect_runs()? {
        if run.kind == crate::store::DetectKind::Claims && run.dataset == dataset {
            let stored = crate::detect::run::Stored::load(reader, &run.id)?;
            out.push((run, stored));
        }
    }
    Ok(out)
}

/// Every self-detection run with what it stored.
fn selfcheck_runs(
    reader: &Store,
) -> crate::store::Result<
    Vec<(
        crate::store::SelfcheckRun,
        crate::selfcheck::results::Stored,
    )>,
> {
    let mut out = Vec::new();
    for run in reader.selfcheck_runs()? {
        let stored = crate::selfcheck::results::Stored::load(reader, &run.id)?;
        out.push((run, stored));
    }
    Ok(out)
}

/// A stored detection to show, focused on `target`.
fn show(reader: &Store, id: &str, target: u32) -> anyhow::Result<Msg> {
    let run = reader
        .detect_run(id)?
        .ok_or_else(|| anyhow::anyhow!("no detection {id}"))?;
    let stored = crate::detect::run::Stored::load(reader, id)?.with_entailments(reader)?;
    Ok(Msg::Detection {
        run: Box::new(run),
        stored,
        focus: target,
    })
}

/// Hands every event of a channel to the loop as a delivery to `to`, until the sender is gone.
async fn forward<E>(
    mut rx: mpsc::UnboundedReceiver<E>,
    fwd: mpsc::UnboundedSender<Delivery>,
    to: ScreenId,
    wrap: fn(E) -> Msg,
) {
    while let Some(ev) = rx.recv().await {
        if fwd.send(Delivery { to, msg: wrap(ev) }).is_err() {
            break;
        }
    }
}

/// A stored response as something to score.
pub fn to_score(item: usize, r: &ResponseRecord) -> ToScore {
    ToScore::from_record(item, r)
}

/// Every stored run's signal points in one table per view (no bootstrap: the heatmap shows
/// AUROC; `prism signals` gives the intervals). Each run's questions come from its own dataset,
/// read once per dataset.
fn signal_rows(r: &Store) -> crate::store::Result<Vec<crate::detect::signals::SignalRow>> {
    use crate::detect::signals::{By, gather, table};
    let runs: Vec<String> = r.runs()?.into_iter().map(|x| x.id).collect();
    let read: std::cell::RefCell<std::collections::HashMap<String, Option<Arc<Dataset>>>> =
        Default::default();
    let points = gather(r, &runs, &|run| {
        read.borrow_mut()
            .entry(run.dataset.clone())
            .or_insert_with(|| match run.dataset.as_str() {
                "<sample-data>" => Some(Arc::new(crate::dataset::load_sample().dataset)),
                p => crate::dataset::load_path(std::path::Path::new(p))
                    .ok()
                    .map(|l| Arc::new(l.dataset)),
            })
            .clone()
    })?;
    let mut rows = Vec::new();
    for by in [By::Dimension, By::Category, By::Task] {
        rows.extend(
            table(&points, by, 0, 0)
                .into_iter()
                .filter(|row| by == By::Dimension || row.cell != "all"),
        );
    }
    Ok(rows)
}
