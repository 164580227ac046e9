//! The run engine: a plan of items x models x samples becomes jobs; jobs run under a global and
//! a per-model (adaptive) concurrency limit, with retries, timeouts and cancellation; every result
//! is committed to the store before it is announced; typed [`Event`]s go to whichever front-end
//! runs the engine. Nothing here knows about the terminal.

mod backoff;
mod call;
pub mod harness;
pub(crate) mod hold;
pub(crate) mod judge;
mod judge_slot;
pub mod lane;
pub(crate) mod lease;
pub(crate) mod models;
pub mod records;
pub use lane::Lane;
pub use models::{ResumeModels, resume_models};
mod run_error;
pub(crate) mod score;
mod scorer;
pub(crate) mod tokens;

use std::collections::{HashMap, VecDeque};
use std::sync::Arc;
use std::time::{Duration, Instant};

use futures::FutureExt;
use futures::future::BoxFuture;
use sha2::{Digest, Sha256};
use tokio::sync::{Semaphore, mpsc};
use tokio_util::sync::CancellationToken;

pub use backoff::RetryPolicy;
pub use call::{Caller, Delta, Reply};

use crate::dataset::Dataset;
use crate::prompt;
use crate::provider::{
    AdaptiveLimiter, ChatRequest, ChatStream, ModelConfig, Params, Provider, ProviderError,
    RateLimiter, StreamEvent,
};
use crate::store::{
    Cached, JobRecord, ModelSnapshot, ResponseRecord, RunConfig, RunRecord, RunStatus, StoreHandle,
    now_secs,
};

mod answer;
pub use answer::panic_message;
use answer::{
    Limits, Outcome, PENDING_COMMITS_PER_SLOT, finish, panic_record, read_stream, run_job,
};

/// Anything that answers a chat request with a stream: the HTTP providers, the local model.
pub trait Backend: Send + Sync {
    fn stream<'a>(
        &'a self,
        req: &'a ChatRequest,
    ) -> BoxFuture<'a, Result<ChatStream, ProviderError>>;
    /// Identifies what answers in cache keys: everything that changes the reply to one request
    /// (the request itself is hashed beside it). Two models may share a model id on two servers
    /// (llama.cpp's and vLLM's servers often all call theirs the same), so an HTTP backend's
    /// identity holds its endpoints, and a local one's the file and how it is prompted.
    fn cache_identity(&self) -> String;
}

impl Backend for Provider {
    fn stream<'a>(
        &'a self,
        req: &'a ChatRequest,
    ) -> BoxFuture<'a, Result<ChatStream, ProviderError>> {
        Box::pin(Provider::stream(self, req))
    }
    fn cache_identity(&self) -> String {
        Provider::cache_identity(self)
    }
}

/// Makes a backend for a model config. The CLI and TUI pass one that knows every provider kind
/// (including the local model); tests can pass their own.
pub type BackendFactory =
    Arc<dyn Fn(&ModelConfig) -> Result<Arc<dyn Backend>, ProviderError> + Send + Sync>;

/// The factory for every provider kind; `local` models without a `path` use `default_local`.
pub fn backends(default_local: std::path::PathBuf) -> BackendFactory {
    let http = http_backends();
    Arc::new(move |cfg: &ModelConfig| {
        if cfg.provider != crate::provider::ProviderKind::Local {
            return http(cfg);
        }
        #[cfg(feature = "local")]
        {
            let m = crate::provider::local::LocalModel::for_config(cfg, &default_local)?;
            let idle = cfg
                .idle_timeout_secs
                .map(Duration::from_secs_f64)
                .unwrap_or(Duration::from_secs(600));
            Ok(Arc::new(LocalBackend { model: m, idle }) as Arc<dyn Backend>)
        }
        #[cfg(not(feature = "local"))]
        {
            let _ = &default_local;
            Err(ProviderError::Config(format!(
                "model {:?}: this prism was built without the `local` feature",
                cfg.name
            )))
        }
    })
}

/// The embedded model as a backend. The idle timeout is long: a job may wait in the local queue
/// behind others before its first token.
#[cfg(feature = "local")]
struct LocalBackend {
    model: Arc<crate::provider::local::LocalModel>,
    idle: Duration,
}

#[cfg(feature = "local")]
impl Backend for LocalBackend {
    fn stream<'a>(
        &'a self,
        req: &'a ChatRequest,
    ) -> BoxFuture<'a, Result<ChatStream, ProviderError>> {
        Box::pin(self.model.stream(req, self.idle))
    }
    fn cache_identity(&self) -> String {
        self.model.identity().to_string()
    }
}

/// The factory for the HTTP providers only.
pub fn http_backends() -> BackendFactory {
    Arc::new(|cfg: &ModelConfig| {
        if cfg.provider == crate::provider::ProviderKind::Local {
            return Err(ProviderError::Config(format!(
                "model {:?}: the local provider is not available in this build",
                cfg.name
            )));
        }
        Ok(Arc::new(Provider::from_config(cfg)?) as Arc<dyn Backend>)
    })
}

/// One unit of work.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Job {
    pub idx: u32,
    /// Index into `Dataset::items`.
    pub item: usize,
    /// Index into the run's models.
    pub model: usize,
    pub sample: u32,
}

/// What a front-end hears.
#[derive(Debug, Clone)]
pub enum Event {
    /// The run is recorded and about to start: its id, its models and every job.
    Started {
        run_id: String,
        models: Vec<String>,
        jobs: Arc<Vec<Job>>,
        already_done: usize,
    },
    /// A request was sent (`attempt` counts from 1).
    Sending { job: u32, attempt: u32 },
    /// More text arrived.
    Delta { job: u32, text: String },
    /// More of the answer's tokens with their log-probabilities arrived (when the run asked
    /// for them and the model gives them), so a front-end can shade the answer as it streams.
    /// Each token's text is redacted as a delta is; the stored answer is what counts.
    Tokens {
        job: u32,
        tokens: Vec<crate::provider::TokenLogprob>,
    },
    /// The attempt failed and will be retried after `delay`; partial text is discarded.
    Retrying {
        job: u32,
        attempt: u32,
        max_attempts: u32,
        reason: String,
        delay: Duration,
    },
    /// The job finished and its response is committed.
    Done {
        job: u32,
        response: Arc<ResponseRecord>,
    },
    /// The job failed for good; the failure is committed too.
    Failed {
        job: u32,
        response: Arc<ResponseRecord>,
    },
    /// An answer's score, saved (scoring as answers arrive: [`Scoring`]).
    Scored(crate::store::ScoreRecord),
    /// Scoring could not save or finish, with why (the answers are stored; `prism score` scores
    /// them later).
    ScoringFailed { reason: String },
    /// Answers cannot be saved (and are held), saving works again, the run ended: told as
    /// every lane tells them.
    Life(harness::Lifecycle),
}

/// Scoring as answers arrive, the answers lane's policy in every front-end: each answer is
/// scored once it is stored, by rule at once and by the judge (when one is given) for what the
/// rules cannot settle; without a judge those wait, unscored, for one. Scores are saved and
/// announced as [`Event::Scored`]; the run finishes once its answers' scores are in.
#[derive(Clone, Default)]
pub struct Scoring {
    pub judge: JudgeSlot,
}

impl Scoring {
    /// Scoring with this judge (or none: what needs one waits).
    pub fn with(judge: Option<Arc<Caller>>) -> Scoring {
        Scoring {
            judge: JudgeSlot::new(judge),
        }
    }
}

pub use judge_slot::JudgeSlot;

/// How a stored run is resumed (see [`resume`]).
#[derive(Clone)]
pub struct ResumeOptions {
    /// The most jobs in flight across all models.
    pub concurrency: usize,
    /// Send `Delta` events (see [`RunSpec::stream_deltas`]).
    pub stream_deltas: bool,
    /// Score answers as they arrive (`None`: leave them to `prism score`).
    pub score: Option<Scoring>,
}

impl Default for ResumeOptions {
    fn default() -> Self {
        ResumeOptions {
            concurrency: 64,
            stream_deltas: false,
            score: Some(Scoring::default()),
        }
    }
}

/// What a run came to: jobs done, failed, left by a cancel (they stay pending for `--resume`),
/// answered by the cache (every lane's counts).
pub type RunSummary = harness::Counts;

/// What to run.
#[derive(Clone)]
pub struct RunSpec {
    pub dataset: Arc<Dataset>,
    /// How the dataset is named in the store (a path, or `<sample-data>`).
    pub dataset_ref: String,
    /// Items, by index into the dataset.
    pub items: Vec<usize>,
    pub models: Vec<ModelConfig>,
    pub samples: u32,
    pub shots: u32,
    /// Overrides over the per-task defaults and each model's params.
    pub params: Params,
    /// The most jobs in flight across all models.
    pub concurrency: usize,
    pub use_cache: bool,
    pub filter: Option<String>,
    pub limit: Option<usize>,
    pub retry: RetryPolicy,
    /// Send a `Delta` event per piece of text (the TUI shows the stream live; the headless CLI
    /// does not need them, and at tens of thousands of jobs they are most of the events).
    pub stream_deltas: bool,
    /// Score answers as they arrive (by rule unless a judge is set); `None`: leave them to
    /// `prism score`.
    pub score: Option<Scoring>,
}

impl RunSpec {
    pub fn new(
        dataset: Arc<Dataset>,
        dataset_ref: String,
        items: Vec<usize>,
        models: Vec<ModelConfig>,
    ) -> Self {
        RunSpec {
            dataset,
            dataset_ref,
            items,
            models,
            samples: 1,
            shots: 0,
            params: Params::default(),
            concurrency: 64,
            use_cache: true,
            filter: None,
            limit: None,
            retry: RetryPolicy::default(),
            stream_deltas: true,
            score: Some(Scoring::default()),
        }
    }

    /// The plan: jobs ordered item by item, so models progress together and a side-by-side
    /// view fills evenly.
    pub fn plan(&self) -> Vec<Job> {
        let mut jobs =
            Vec::with_capacity(self.items.len() * self.models.len() * self.samples as usize);
        for &item in &self.items {
            for sample in 0..self.samples.max(1) {
                for model in 0..self.models.len() {
                    jobs.push(Job {
                        idx: jobs.len() as u32,
                        item,
                        model,
                        sample,
                    });
                }
            }
        }
        jobs
    }
}

/// Per-model state during a run.
struct ModelRuntime {
    cfg: ModelConfig,
    backend: Arc<dyn Backend>,
    limiter: Arc<AdaptiveLimiter>,
    rate: Option<RateLimiter>,
    /// The model's API key, only to take it out of anything a server sends back.
    key: Option<crate::provider::Secret>,
}

impl ModelRuntime {
    fn redact<'a>(&self, text: &'a str) -> std::borrow::Cow<'a, str> {
        crate::provider::config::redact(self.key.as_ref(), text)
    }
}

struct Shared {
    spec: RunSpec,
    run_id: String,
    models: Vec<ModelRuntime>,
    store: StoreHandle,
    events: mpsc::UnboundedSender<Event>,
    /// The run's lifecycle (engine::harness): cancel, call slots, counts, saving that holds
    /// answers while the store is down and notices a write refused for a lost lock.
    life: Arc<harness::Life>,
    /// Scores each answer once it is stored (`None`: the run does not score).
    scorer: Option<scorer::Scorer>,
}

/// Starts a new run: records it and its jobs, then runs them.
pub async fn run(
    spec: RunSpec,
    store: StoreHandle,
    factory: BackendFactory,
    events: mpsc::UnboundedSender<Event>,
    cancel: CancellationToken,
) -> Result<RunSummary, harness::RunError> {
    let jobs = spec.plan();
    let run_id = crate::store::new_run_id();
    let record = RunRecord {
        id: run_id.clone(),
        created_at: now_secs(),
        dataset: spec.dataset_ref.clone(),
        config: RunConfig {
            models: spec.models.iter().map(ModelSnapshot::from).collect(),
            samples: spec.samples,
            shots: spec.shots,
            params: spec.params.clone(),
            filter: spec.filter.clone(),
            limit: spec.limit,
            no_cache: !spec.use_cache,
            source: None,
        },
        status: RunStatus::Running,
    };
    let job_records: Vec<JobRecord> = jobs
        .iter()
        .map(|j| {
            let item = &spec.dataset.items[j.item];
            JobRecord {
                idx: j.idx,
                item_id: item.id.to_string(),
                task_id: spec.dataset.task_of(item).id.clone(),
                model: spec.models[j.model].name.clone(),
                sample: j.sample,
            }
        })
        .collect();
    // Backends first: a missing key or bad config fails before anything is recorded.
    let models = runtimes(&spec.models, &factory).map_err(harness::RunError::config)?;
    store
        .create_run(record, job_records)
        .await
        .map_err(|e| harness::RunError::store("recording the run", e))?;
    let todo = jobs.clone();
    let lane = Lane {
        store,
        factory,
        events,
        cancel,
    };
    let jobs = Jobs {
        all: Arc::new(jobs),
        todo,
        done_before: 0,
        unscored: Vec::new(),
    };
    execute(lane, spec, run_id, models, jobs).await
}

/// What a resumed run works on: its dataset, its jobs not done, all its jobs, and its stored
/// answers that have no score (scored first, when the run scores).
pub struct ResumeJobs {
    pub dataset: Arc<Dataset>,
    pub unfinished: Vec<JobRecord>,
    pub all: Vec<JobRecord>,
    pub unscored: Vec<ResponseRecord>,
}

/// The jobs a run executes: all of them (for the front-end and leasing), those to do now, and
/// how many were done before.
struct Jobs {
    all: Arc<Vec<Job>>,
    todo: Vec<Job>,
    done_before: usize,
    /// Stored answers without a score, scored before anything else.
    unscored: Vec<ResponseRecord>,
}

/// Finishes an earlier run: only its jobs that are not done are run again, with `models` (see
/// [`resume_models`]).
pub async fn resume(
    lane: Lane<Event>,
    run: &RunRecord,
    models: Vec<ModelConfig>,
    jobs: ResumeJobs,
    opts: ResumeOptions,
) -> Result<RunSummary, harness::RunError> {
    let ResumeJobs {
        dataset,
        unfinished,
        all: all_jobs,
        unscored,
    } = jobs;
    let cfg = &run.config;
    // Jobs of the run's models that are not answering here (skipped by [`resume_models`]) are
    // left as they are: pending for whoever can answer them.
    let model_index: HashMap<&str, usize> = models
        .iter()
        .enumerate()
        .map(|(i, m)| (m.name.as_str(), i))
        .collect();
    let answering = |j: &&JobRecord| model_index.contains_key(j.model.as_str());
    let to_job = |j: &JobRecord| -> anyhow::Result<Job> {
        let item = dataset.index_of(&j.item_id).ok_or_else(|| {
            anyhow::anyhow!(
                "run {}: item {} is not in the dataset {} (pass the run's dataset: prism run \
                 DATASET --resume {})",
                run.id,
                j.item_id,
                run.dataset,
                run.id
            )
        })?;
        let model = *model_index
            .get(j.model.as_str())
            .ok_or_else(|| anyhow::anyhow!("run {}: model {} answers nowhere", run.id, j.model))?;
        Ok(Job {
            idx: j.idx,
            item,
            model,
            sample: j.sample,
        })
    };
    let all: Vec<Job> = all_jobs
        .iter()
        .filter(answering)
        .map(to_job)
        .collect::<anyhow::Result<_>>()
        .map_err(harness::RunError::config)?;
    let todo: Vec<Job> = unfinished
        .iter()
        .filter(answering)
        .map(to_job)
        .collect::<anyhow::Result<_>>()
        .map_err(harness::RunError::config)?;
    let mut spec = RunSpec::new(dataset, run.dataset.clone(), Vec::new(), models);
    spec.samples = cfg.samples;
    spec.shots = cfg.shots;
    spec.params = cfg.params.clone();
    spec.concurrency = opts.concurrency;
    spec.stream_deltas = opts.stream_deltas;
    spec.score = opts.score;
    // A run started with --no-cache resumes without the cache too.
    spec.use_cache = !cfg.no_cache;
    let models = runtimes(&spec.models, &lane.factory).map_err(harness::RunError::config)?;
    let jobs = Jobs {
        done_before: all.len() - todo.len(),
        all: Arc::new(all),
        todo,
        unscored,
    };
    execute(lane, spec, run.id.clone(), models, jobs).await
}

fn runtimes(models: &[ModelConfig], factory: &BackendFactory) -> anyhow::Result<Vec<ModelRuntime>> {
    models
        .iter()
        .map(|cfg| {
            let backend = factory(cfg).map_err(|e| anyhow::anyhow!("{e}"))?;
            Ok(ModelRuntime {
                cfg: cfg.clone(),
                backend,
                limiter: AdaptiveLimiter::new(cfg.max_concurrency),
                rate: cfg.requests_per_minute.map(RateLimiter::per_minute),
                key: cfg.api_key().ok().flatten(),
            })
        })
        .collect()
}

/// Where the answers lane keeps its runs (`runs`), for the harness.
pub struct AnswersRun;

impl harness::RunTable for AnswersRun {
    const WHAT: &'static str = "run";
    async fn set_status(store: &StoreHandle, run_id: String, status: RunStatus) {
        let _ = store.set_status(&run_id, status).await;
    }
}

/// The answers lane inside the run harness (lock, status, call slots, counts, holding answers
/// while the store is down, cancel, the closing counts): one queue and a pool of workers per
/// model, each answer saved, counted, announced and scored as it arrives.
async fn execute(
    lane: Lane<Event>,
    spec: RunSpec,
    run_id: String,
    models: Vec<ModelRuntime>,
    jobs: Jobs,
) -> Result<RunSummary, harness::RunError> {
    let Lane {
        store,
        events,
        cancel,
        ..
    } = lane;
    let Jobs {
        all: all_jobs,
        todo,
        done_before: already_done,
        unscored,
    } = jobs;
    let total = todo.len();
    let workers = spec.concurrency.max(1).min(total.max(1));
    let hspec = harness::Spec {
        run_id: &run_id,
        calls: total,
        concurrency: workers,
    };
    let tell = harness::tell_into(events.clone(), Event::Life);
    let (st, rid) = (store.clone(), run_id.clone());
    harness::run::<AnswersRun, _, _>(&store, &cancel, hspec, tell, |life| async move {
        let all = all_jobs.clone();
        let _ = events.send(Event::Started {
            run_id: rid.clone(),
            models: spec.models.iter().map(|m| m.name.clone()).collect(),
            jobs: all_jobs,
            already_done,
        });
        let (scorer, scoring) = match spec.score.clone() {
            Some(s) => {
                let (scorer, task) =
                    scorer::Scorer::start(spec.dataset.clone(), s, st.clone(), events.clone());
                (Some(scorer), Some(task))
            }
            None => (None, None),
        };
        // Answers a process stored and never scored (killed before its scores were saved):
        // scored now, as if they had just arrived.
        if let Some(scorer) = &scorer {
            for r in &unscored {
                if let Some(i) = spec.dataset.index_of(&r.item_id) {
                    scorer.push(score::ToScore::stored(i, r));
                }
            }
        }
        let shared = Arc::new(Shared {
            run_id: rid,
            models,
            store: st,
            events,
            life,
            scorer,
            spec,
        });
        work(&shared, todo, workers, &all).await;
        if let (Some(scorer), Some(task)) = (&shared.scorer, scoring) {
            scorer.close();
            scorer::wait(task, shared.life.is_cancelled()).await;
        }
    })
    .await
}

/// One queue and one pool of workers per model, so a slow or rate-limited model never holds
/// up the others; the run's call slots cap the total in flight. On a shared store the queues
/// are filled by leasing jobs ([`Queue::Leased`]) rather than from `todo`.
async fn work(shared: &Arc<Shared>, todo: Vec<Job>, workers: usize, all_jobs: &[Job]) {
    let leased = shared.store.is_shared();
    let mut queues: Vec<VecDeque<Job>> =
        (0..shared.models.len()).map(|_| VecDeque::new()).collect();
    if !leased {
        for j in todo {
            queues[j.model].push_back(j);
        }
    }
    let by_idx: Arc<HashMap<u32, Job>> = Arc::new(if leased {
        all_jobs.iter().map(|j| (j.idx, j.clone())).collect()
    } else {
        HashMap::new()
    });
    let commits = Arc::new(Semaphore::new(PENDING_COMMITS_PER_SLOT * workers));
    let mut handles = Vec::new();
    for (mi, q) in queues.into_iter().enumerate() {
        let most = shared.models[mi].cfg.max_concurrency.max(1).min(workers);
        let (n, queue) = if leased {
            let model = shared.models[mi].cfg.name.clone();
            (most, Queue::leased(shared, model, most, by_idx.clone()))
        } else {
            // A plain mutex: held only to pop a job, never across an await.
            let n = most.min(q.len());
            (n, Queue::Fixed(Arc::new(std::sync::Mutex::new(q))))
        };
        for _ in 0..n {
            let (shared, queue, commits) = (shared.clone(), queue.clone(), commits.clone());
            handles.push(tokio::spawn(async move {
                loop {
                    if shared.life.is_cancelled() {
                        break;
                    }
                    let Some(job) = queue.next(&shared).await else {
                        break;
                    };
                    // While answers cannot be saved, no new request goes out.
                    let Some(slot) = shared.life.slot().await else {
                        break;
                    };
                    // A bug in one job never takes the run down or passes unnoticed: the job
                    // is recorded as failed with the panic's message, and the run goes on.
                    let ran = std::panic::AssertUnwindSafe(run_job(&shared, job.clone()))
                        .catch_unwind()
                        .await;
                    // The answer is in: its request slot goes to the next job now, and the
                    // commit is awaited by a task of its own. The answer is still on disk
                    // before it is counted or shown (`finish`); the pending commits are
                    // bounded, so a slow disk slows the run instead of piling answers up.
                    drop(slot);
                    let done = match ran {
                        Ok(Some(d)) => d,
                        Ok(None) => continue,
                        Err(panic) => panic_record(&shared, &job, panic),
                    };
                    let Ok(permit) = commits.clone().acquire_owned().await else {
                        break;
                    };
                    let sh = shared.clone();
                    tokio::spawn(async move {
                        finish(&sh, done.job, done.record, done.ok).await;
                        drop(permit);
                    });
                }
            }));
        }
    }
    for h in handles {
        let _ = h.await;
    }
    // Every commit in flight has landed (or given up on cancel) once all permits are back.
    let _ = commits
        .acquire_many((PENDING_COMMITS_PER_SLOT * workers) as u32)
        .await;
}

/// Where a model's workers take their next job from.
#[derive(Clone)]
enum Queue {
    /// This process's share of the run, planned up front.
    Fixed(Arc<std::sync::Mutex<VecDeque<Job>>>),
    /// Leased from the shared store a batch at a time.
    Leased(Arc<LeaseQueue>),
}

/// A model's jobs leased from a shared run: a task of its own leases them a batch at a time
/// ahead of the workers ([`prefetch`]), so no worker waits for a lease's round trip.
struct LeaseQueue {
    jobs: tokio::sync::Mutex<mpsc::Receiver<Job>>,
}

/// How long a worker waits before asking again when every job left is leased by others
/// (one of them may die and its leases run out) or the store cannot answer.
const LEASE_POLL: Duration = Duration::from_millis(500);

impl Queue {
    /// The next job, or `None` when there is none left (or the run is cancelled).
    async fn next(&self, shared: &Shared) -> Option<Job> {
        match self {
            Queue::Fixed(q) => q.lock().unwrap_or_else(|e| e.into_inner()).pop_front(),
            Queue::Leased(q) => {
                let mut rx = q.jobs.lock().await;
                tokio::select! {
                    _ = shared.life.cancel.cancelled() => None,
                    j = rx.recv() => j,
                }
            }
        }
    }

    /// A model's leased queue and the task that fills it: `batch` jobs leased at a time (the
    /// model's workers), at most two batches leased and not yet started, so a worker that dies
    /// holds few jobs another must wait for.
    fn leased(
        shared: &Arc<Shared>,
        model: String,
        batch: usize,
        plan: Arc<HashMap<u32, Job>>,
    ) -> Queue {
        let (tx, rx) = mpsc::channel(batch.max(1));
        tokio::spawn(prefetch(shared.clone(), model, batch.max(1), plan, tx));
        Queue::Leased(Arc::new(LeaseQueue {
            jobs: tokio::sync::Mutex::new(rx),
        }))
    }
}

/// Leases a model's jobs for its workers until none is left anywhere: none to lease and none
/// held by another worker (a dead one's come free once its leases run out, so while others hold
/// some it keeps asking).
async fn prefetch(
    shared: Arc<Shared>,
    model: String,
    batch: usize,
    plan: Arc<HashMap<u32, Job>>,
    tx: mpsc::Sender<Job>,
) {
    while !shared.life.is_cancelled() {
        match shared.store.lease(&shared.run_id, &model, batch).await {
            Ok(l) if !l.jobs.is_empty() => {
                for j in l.jobs.iter().filter_map(|i| plan.get(i)) {
                    if tx.send(j.clone()).await.is_err() {
                        return;
                    }
                }
                continue;
            }
            Ok(l) if l.held_elsewhere == 0 => return,
            // Others hold the rest, or the store is away: ask again shortly.
            Ok(_) | Err(_) => {}
        }
        tokio::select! {
            _ = shared.life.cancel.cancelled() => return,
            _ = tokio::time::sleep(LEASE_POLL) => {}
        }
    }
}

/// A name for one holding of a run's lock: this process's pid (so a lock whose process died is
/// seen to be free) and a random part, new for every lease, so that two starts of one run in
/// the same process are refused like two in two processes.
pub(crate) fn lock_owner() -> String {
    format!("{}-{:016x}", std::process::id(), rand::random::<u64>())
}

/// Hashes of one request: `request_hash` (what was asked: backend, messages, parameters; for
/// audit) and `cache_key` (the same plus the sample index, so repeated samples of one item stay
/// independent). The request is serialized and hashed once.
pub fn request_hashes(identity: &str, req: &ChatRequest, sample: u32) -> (String, String) {
    let mut h = Sha256::new();
    h.update(identity.as_bytes());
    h.update([0]);
    h.update(serde_json::to_vec(req).unwrap_or_default());
    let full = h.finalize();
    let mut k = Sha256::new();
    k.update(full);
    k.update(sample.to_le_bytes());
    (hex::encode(&full[..16]), hex::encode(k.finalize()))
}
