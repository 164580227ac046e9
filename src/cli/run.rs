//! `prism run` and `prism models`: the headless front-end of the engine.

use std::io::{IsTerminal, Write};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use anyhow::{Context, bail};
use globset::{Glob, GlobSetBuilder};
use indicatif::{ProgressBar, ProgressStyle};
use serde_json::json;
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

use crate::config::Dirs;
use crate::dataset::Dataset;
use crate::engine::{self, BackendFactory, Event, RunSpec, RunSummary};
use crate::provider::{ModelsFile, Params};
use crate::store::Db;

/// Options of `prism run`.
#[derive(Debug, clap::Args)]
pub struct RunArgs {
    /// Dataset to run (omit for the bundled sample data; with --resume, the run's own dataset).
    pub dataset: Option<PathBuf>,
    /// Models to run, comma-separated names from the models file.
    #[arg(long, value_delimiter = ',')]
    pub models: Vec<String>,
    /// Models file (default: models.toml in the config dir).
    #[arg(long)]
    pub models_file: Option<PathBuf>,
    /// Store file (default: prism.db in the data dir), or a shared store
    /// (`postgres://user@host/db`): the run's jobs are then leased, so workers on other
    /// machines can join it (`prism work RUN --db ...`).
    #[arg(long)]
    pub db: Option<PathBuf>,
    /// Only items whose task matches a glob (`KE-FD-*`) or whose id is given; comma-separated.
    #[arg(long)]
    pub filter: Option<String>,
    /// At most this many items (after the filter, in dataset order).
    #[arg(long)]
    pub limit: Option<usize>,
    /// The most requests in flight across all models.
    #[arg(long, default_value_t = 64)]
    pub concurrency: usize,
    /// Answers per item and model (independent samples).
    #[arg(long, default_value_t = 1)]
    pub samples: u32,
    /// In-context examples from the same sub-task: 0, 1 or 3.
    #[arg(long, default_value_t = 0, value_parser = parse_shots)]
    pub shots: u32,
    /// Override the per-task temperature.
    #[arg(long)]
    pub temperature: Option<f64>,
    /// Override the per-task top-p.
    #[arg(long)]
    pub top_p: Option<f64>,
    #[arg(long)]
    pub max_tokens: Option<u32>,
    #[arg(long)]
    pub seed: Option<u64>,
    /// Ask for each answer token's log-probability and N alternatives (0-20), stored with the
    /// answer, where the provider gives them (OpenAI-compatible servers, Gemini; not
    /// Anthropic). Off by default (a model's `params = { logprobs = 5 }` turns it on for it).
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u8).range(0..=20))]
    pub logprobs: Option<u8>,
    /// Ignore the response cache (answers are still stored, and cached for next time).
    #[arg(long)]
    pub no_cache: bool,
    /// The judge that scores answers as they arrive, for what the rules cannot settle (a name
    /// from the models file; default: `judge` in config.toml). Without one those wait,
    /// unscored, for `prism score --judge`.
    #[arg(long)]
    pub judge: Option<String>,
    /// Do not score answers as they arrive (leave them all to `prism score`).
    #[arg(long)]
    pub no_score: bool,
    /// Print events as JSON lines (the default when stdout is not a terminal).
    #[arg(long)]
    pub json: bool,
    /// Finish an earlier run: only its jobs that are not done run again. With --models, the
    /// named models answer in place of the run's (of the same name, else its imported ones in
    /// order): an imported run resumes only that way.
    /// On a shared store, the same is joining a run beside the workers already on it
    /// (`--join`, or `prism work RUN`).
    #[arg(long, value_name = "RUN_ID", visible_alias = "join")]
    pub resume: Option<String>,
    /// On a shared store: how long a worker's lease on its jobs lasts without renewal (it is
    /// renewed every third of it while the worker lives); a dead worker's jobs go to the
    /// others after this.
    #[arg(long, default_value_t = 60.0, value_name = "SECONDS", value_parser = parse_lease)]
    pub lease_secs: f64,
    /// With --resume: a model of the run that this machine's models file lacks is called at
    /// the endpoint the run recorded, without any API key (by default it is skipped: a store
    /// never chooses an endpoint or a key variable).
    #[arg(long)]
    pub recorded_endpoints: bool,
    /// Set by `prism work`: the store must be a shared one.
    #[arg(skip)]
    pub work: bool,
}

/// Options of `prism work`.
#[derive(Debug, clap::Args)]
pub struct WorkArgs {
    /// The run to join.
    pub run: String,
    /// The shared store (`postgres://user@host/db`; the password from PGPASSWORD or a pgpass
    /// file); default: `db` in config.toml.
    #[arg(long)]
    pub db: Option<String>,
    /// The run's dataset on this machine, when it is not at the path the run recorded.
    #[arg(long)]
    pub dataset: Option<PathBuf>,
    /// Models from this machine's models file to answer in place of the run's of the same
    /// name (default: each of the run's models that this machine's models file names).
    #[arg(long, value_delimiter = ',')]
    pub models: Vec<String>,
    /// This machine's models file (default: models.toml in the config dir). Only its models
    /// answer: a run's model that it lacks is skipped, its jobs left to workers that have it.
    #[arg(long)]
    pub models_file: Option<PathBuf>,
    /// The most requests this worker has in flight.
    #[arg(long, default_value_t = 64)]
    pub concurrency: usize,
    /// How long a lease lasts without renewal (see `prism run --lease-secs`).
    #[arg(long, default_value_t = 60.0, value_name = "SECONDS", value_parser = parse_lease)]
    pub lease_secs: f64,
    /// The judge for scoring as answers arrive (as `prism run --judge`).
    #[arg(long)]
    pub judge: Option<String>,
    #[arg(long)]
    pub no_score: bool,
    #[arg(long)]
    pub json: bool,
    /// Call a run's model that this machine's models file lacks at the endpoint the run
    /// recorded, without any API key (by default it is skipped: a shared store never chooses
    /// an endpoint or a key variable for a worker).
    #[arg(long)]
    pub recorded_endpoints: bool,
    /// Ask the models again instead of reusing this machine's cached replies (as `prism run
    /// --no-cache`; a run started with it asks again on every worker anyway).
    #[arg(long)]
    pub no_cache: bool,
}

impl WorkArgs {
    /// The `prism run --join` this is.
    pub fn into_run(self, dirs: &Dirs) -> anyhow::Result<RunArgs> {
        let db = match self.db {
            Some(d) => d,
            None => crate::config::Config::load(&dirs.config_file())
                .0
                .db
                .ok_or_else(|| anyhow::anyhow!("prism work needs the shared store: --db postgres://user@host/db (or db = \"postgres://...\" in config.toml)"))?,
        };
        Ok(RunArgs {
            work: true,
            dataset: self.dataset,
            models: self.models,
            models_file: self.models_file,
            db: Some(PathBuf::from(db)),
            filter: None,
            limit: None,
            concurrency: self.concurrency,
            samples: 1,
            shots: 0,
            temperature: None,
            top_p: None,
            max_tokens: None,
            seed: None,
            logprobs: None,
            no_cache: self.no_cache,
            judge: self.judge,
            no_score: self.no_score,
            json: self.json,
            resume: Some(self.run),
            lease_secs: self.lease_secs,
            recorded_endpoints: self.recorded_endpoints,
        })
    }
}

fn parse_lease(s: &str) -> Result<f64, String> {
    match s.parse::<f64>() {
        Ok(v) if (1.0..=86_400.0).contains(&v) => Ok(v),
        _ => Err("a number of seconds from 1 to 86400".into()),
    }
}

/// Which models file this machine reads, in words: the path, where it came from when not the
/// default, and whether it is there (a container that mounts it elsewhere learns why its
/// models are missing).
fn models_file_read(dirs: &Dirs, file: Option<&Path>) -> String {
    let (path, from) = match file {
        Some(f) => (f.to_path_buf(), "--models-file"),
        None if std::env::var_os("PRISM_CONFIG_DIR").is_some() => {
            (dirs.config.join("models.toml"), "PRISM_CONFIG_DIR")
        }
        None => (dirs.config.join("models.toml"), "the config dir"),
    };
    let there = if path.is_file() {
        ""
    } else {
        " (not found: set PRISM_CONFIG_DIR to the directory holding it, or pass --models-file)"
    };
    format!("{} (from {from}){there}", path.display())
}

/// The models of this machine's models file (and the built-in ones) that bear the run's model
/// names: the only models a resumed or joined run calls, besides those named with `--models`.
fn own_models(
    dirs: &Dirs,
    file: Option<&Path>,
    run: &crate::store::RunRecord,
) -> Vec<crate::provider::ModelConfig> {
    match load_models(dirs, file) {
        Ok(m) => m
            .models
            .into_iter()
            .filter(|m| run.config.models.iter().any(|r| r.name == m.name))
            .collect(),
        Err(e) => {
            crate::warn!("{e:#}; only the models named with --models answer");
            Vec::new()
        }
    }
}

/// Says which models answer a resumed or joined run and which of its models are skipped.
fn tell_resume_models(chosen: &engine::ResumeModels, shared: bool, models_file: &str) {
    let (recorded, own): (Vec<&str>, Vec<&str>) = chosen
        .models
        .iter()
        .map(|m| m.name.as_str())
        .partition(|n| chosen.recorded.iter().any(|r| r == n));
    if !own.is_empty() {
        crate::warn!(
            "models from this machine's models file: {}",
            crate::text::one_line(&own.join(", "))
        );
    }
    if !recorded.is_empty() {
        crate::warn!(
            "at the endpoint the run recorded, without an API key: {}",
            crate::text::one_line(&recorded.join(", "))
        );
    }
    for note in &chosen.notes {
        crate::warn!("{}", crate::text::one_line(note));
    }
    if !chosen.skipped.is_empty() {
        crate::warn!("this machine's models file: {models_file}");
    }
    for (name, why) in &chosen.skipped {
        crate::warn!(
            "skipped model {}: {}; its jobs {}",
            crate::text::one_line(name),
            crate::text::one_line(why),
            if shared {
                "stay pending for a worker that has it"
            } else {
                "stay pending (resume again once it is configured, or pass --recorded-endpoints to call the recorded endpoint without a key)"
            }
        );
    }
}

fn parse_shots(s: &str) -> Result<u32, String> {
    match s.parse::<u32>() {
        Ok(k @ (0 | 1 | 3)) => Ok(k),
        _ => Err("shots must be 0, 1 or 3".into()),
    }
}

pub fn default_db(dirs: &Dirs) -> PathBuf {
    dirs.data.join("prism.db")
}

/// The models file: `--models-file`, else `models.toml` in the config dir, else none; plus the
/// built-in local models (`local`, `smol`) unless the file defines models of those names.
pub fn load_models(dirs: &Dirs, file: Option<&Path>) -> anyhow::Result<ModelsFile> {
    let mut f = match file {
        Some(f) => ModelsFile::load(f)?,
        None => {
            let p = dirs.config.join("models.toml");
            if p.is_file() {
                ModelsFile::load(&p)?
            } else {
                ModelsFile::default()
            }
        }
    };
    if cfg!(feature = "local") {
        let builtins = [builtin_local(), builtin_smol(dirs)];
        for (i, m) in builtins.into_iter().enumerate() {
            if f.get(&m.name).is_none() {
                f.models.insert(i.min(f.models.len()), m);
            }
        }
    }
    Ok(f)
}

/// The models, or, when the models file does not read, the built-in ones with the error in
/// full: a broken file never hides the embedded models.
pub fn load_models_or_builtins(dirs: &Dirs, file: Option<&Path>) -> (ModelsFile, Option<String>) {
    match load_models(dirs, file) {
        Ok(m) => (m, None),
        Err(e) => {
            let mut f = ModelsFile::default();
            if cfg!(feature = "local") {
                f.models = vec![builtin_local(), builtin_smol(dirs)];
            }
            (f, Some(format!("{e:#}")))
        }
    }
}

/// The built-in `smol` model: SmolLM2 135M Instruct in the data dir, run in a worker process with
/// the chat template from its own metadata (it is an instruct model). Two retries: the only
/// local failure worth retrying is a worker that died, and a fresh one usually answers.
pub fn builtin_smol(dirs: &Dirs) -> crate::provider::ModelConfig {
    let f: ModelsFile = toml::from_str(
        "[[models]]\nname = \"smol\"\nprovider = \"local\"\nmodel = \"smollm2-135m-instruct\"\nmax_concurrency = 4\nmax_retries = 2\nparams = { max_tokens = 128 }\n",
    )
    .expect("the built-in smol model config parses");
    let mut m = f.models.into_iter().next().expect("one model");
    m.path = Some(super::model::SMOL.path(dirs));
    m
}

/// Whether a model is one of the built-in local ones (by name and provider).
pub fn is_builtin(m: &crate::provider::ModelConfig) -> bool {
    m.provider == crate::provider::ProviderKind::Local && super::model::builtin(&m.name).is_some()
}

/// Whether a model can be started as configured: a built-in needs its file installed; any
/// other local model needs its file; remote models are tried (a missing key or a server that
/// is down is said when the run starts).
pub fn can_start(dirs: &Dirs, m: &crate::provider::ModelConfig) -> bool {
    if is_builtin(m) {
        return is_installed_builtin(dirs, m);
    }
    match (&m.provider, &m.path) {
        (crate::provider::ProviderKind::Local, Some(p)) => p.is_file(),
        _ => true,
    }
}

/// The file that remembers the run picker's choice across sessions.
fn choice_file(dirs: &Dirs) -> PathBuf {
    dirs.data.join("picker-choice.json")
}

/// The models chosen in the run picker when the TUI last closed (names; empty when none).
pub fn remembered_choice(dirs: &Dirs) -> Vec<String> {
    std::fs::read(choice_file(dirs))
        .ok()
        .and_then(|b| serde_json::from_slice::<Vec<String>>(&b).ok())
        .unwrap_or_default()
}

/// Remembers the picker's choice (best effort: a read-only data dir only loses the memory).
pub fn remember_choice(dirs: &Dirs, names: &[String]) {
    if let Ok(json) = serde_json::to_vec(names) {
        let _ = std::fs::create_dir_all(&dirs.data);
        let _ = std::fs::write(choice_file(dirs), json);
    }
}

/// What the run picker starts with: the last choice, of what can start; else the installed
/// built-ins (the demo runs both side by side with no key and no server); else the user's own
/// first model. Never a model that cannot start (a built-in not installed yet).
pub fn preselect(dirs: &Dirs, models: &[crate::provider::ModelConfig]) -> Vec<String> {
    let runnable = |m: &&crate::provider::ModelConfig| can_start(dirs, m);
    let last = remembered_choice(dirs);
    let mut pick: Vec<String> = models
        .iter()
        .filter(runnable)
        .filter(|m| last.contains(&m.name))
        .map(|m| m.name.clone())
        .collect();
    if pick.is_empty() {
        pick = models
            .iter()
            .filter(|m| is_installed_builtin(dirs, m))
            .map(|m| m.name.clone())
            .collect();
    }
    if pick.is_empty() {
        pick.extend(
            models
                .iter()
                .filter(runnable)
                .find(|m| !is_builtin(m))
                .map(|m| m.name.clone()),
        );
    }
    pick
}

/// Whether a model is one of the built-in local ones and its file is installed (the TUI
/// preselects these, so the demo runs both side by side with no key and no server).
pub fn is_installed_builtin(dirs: &Dirs, m: &crate::provider::ModelConfig) -> bool {
    m.provider == crate::provider::ProviderKind::Local
        && super::model::builtin(&m.name).is_some_and(|b| {
            m.path.as_deref().unwrap_or(&b.path(dirs)) == b.path(dirs) && b.is_installed(dirs)
        })
}

/// The built-in `local` model: the default GGUF in the data dir, run in a worker process. It is a base
/// model, so it is prompted completion-style: on the sample data that gives the reference answer
/// 20.0% of the time against 5.5% with the chat template, and parrots the task prompt 27% of the
/// time against 87% (`cargo run --release --example prompt_style`).
pub fn builtin_local() -> crate::provider::ModelConfig {
    let f: ModelsFile = toml::from_str(
        "[[models]]\nname = \"local\"\nprovider = \"local\"\nmodel = \"gemma-3-270m\"\ncompletion = true\nmax_concurrency = 4\nmax_retries = 2\nparams = { max_tokens = 128 }\n",
    )
    .expect("the built-in local model config parses");
    f.models.into_iter().next().expect("one model")
}

/// Backends for every provider, with the default local model in the data dir.
pub fn factory(dirs: &Dirs) -> BackendFactory {
    engine::backends(super::model::default_path(dirs))
}

/// Items selected by `--filter` and `--limit`, in dataset order.
pub fn select_items(
    ds: &Dataset,
    filter: Option<&str>,
    limit: Option<usize>,
) -> anyhow::Result<Vec<usize>> {
    let mut items: Vec<usize> = match filter {
        None => (0..ds.items.len()).collect(),
        Some(f) => {
            let mut globs = GlobSetBuilder::new();
            let mut ids = Vec::new();
            for part in f.split(',').map(str::trim).filter(|p| !p.is_empty()) {
                if ds.item_by_id(part).is_some() {
                    ids.push(part.to_string());
                } else {
                    globs.add(Glob::new(part).with_context(|| format!("--filter {part:?}"))?);
                }
            }
            let globs = globs.build()?;
            (0..ds.items.len())
                .filter(|&i| {
                    let it = &ds.items[i];
                    ids.iter().any(|id| **id == *it.id) || globs.is_match(&ds.task_of(it).id)
                })
                .collect()
        }
    };
    if let Some(n) = limit {
        items.truncate(n);
    }
    if items.is_empty() {
        bail!("no items match --filter {:?}", filter.unwrap_or(""));
    }
    Ok(items)
}

/// The run as a future (a new run, or one resumed or joined).
type RunTask =
    std::pin::Pin<Box<dyn std::future::Future<Output = anyhow::Result<RunSummary>> + Send>>;

/// Runs `prism run`. Exit codes: 0 all jobs done, 2 some failed, 1 could not start,
/// 130 interrupted (resume with --resume).
pub fn run(args: RunArgs, dirs: &Dirs, factory: BackendFactory) -> anyhow::Result<i32> {
    let db = match (&args.db, args.work) {
        (Some(d), true) => Db::open_shared(&d.to_string_lossy(), &default_db(dirs), |file| {
            format!(
                "prism work joins a run on a shared store (postgres://...); {file} is a file: finish a run there with prism run --resume {} --db FILE",
                args.resume.as_deref().unwrap_or("RUN")
            )
        })?,
        _ => Db::open(args.db.as_deref(), &default_db(dirs))?,
    };
    let shown = db.shown();
    let rt = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()?;
    let json_mode = args.json || !std::io::stdout().is_terminal();
    let cancel = CancellationToken::new();
    let (tx, rx) = mpsc::unbounded_channel();

    let lane = engine::Lane {
        store: db.run_handle(Duration::from_secs_f64(args.lease_secs))?,
        factory,
        events: tx,
        cancel: cancel.clone(),
    };
    let kept = lane.store.clone();
    let (task, total_hint): (RunTask, usize) = match &args.resume {
        Some(run_id) => resume_task(&args, dirs, &db, run_id, lane)?,
        None => new_task(&args, dirs, lane)?,
    };

    let summary = rt.block_on(async {
        crate::shutdown::cancel_on_signal(&cancel);
        let printer = tokio::spawn(report_events(rx, json_mode, total_hint));
        let result = task.await;
        let (failures, scores) = printer.await.unwrap_or_default();
        result.map(|s| (s, failures, scores))
    });
    let (summary, failures, scores) = summary?;
    // The summary and the failures go to stderr in both modes (stdout is for the run id or the
    // JSON events, which scripts read).
    {
        crate::warn!(
            "run {}: {} done ({} from cache), {} failed{}",
            summary.run_id,
            summary.done,
            summary.cache_hits,
            summary.failed,
            if summary.cancelled > 0 {
                format!(", {} not run (cancelled)", summary.cancelled)
            } else {
                String::new()
            }
        );
        if let Some(c) = kept.shared_counts() {
            crate::warn!(
                "this worker: {} job(s) taken over from workers whose lease ran out, {} answer(s) dropped (another worker's was stored first)",
                c.retaken,
                c.dropped
            );
        }
        if !args.no_score {
            crate::warn!("{}", scores.line(&summary.run_id, &shown, kept.is_shared()));
        }
        for f in failures.iter().take(20) {
            crate::warn!("  failed: {f}");
        }
        if failures.len() > 20 {
            crate::warn!("  ... and {} more", failures.len() - 20);
        }
        if !json_mode {
            crate::say!("{}", summary.run_id);
        }
    }
    if summary.cancelled > 0 {
        crate::warn!(
            "interrupted; finish it with: prism {} {} --db {}",
            if kept.is_shared() {
                "work"
            } else {
                "run --resume"
            },
            summary.run_id,
            crate::text::shell_quote(&shown)
        );
        return Ok(130);
    }
    Ok(if summary.failed > 0 { 2 } else { 0 })
}

/// A run resumed (or a shared run joined): its task, and how many jobs it has left.
fn resume_task(
    args: &RunArgs,
    dirs: &Dirs,
    db: &Db,
    run_id: &str,
    lane: engine::Lane<engine::Event>,
) -> anyhow::Result<(RunTask, usize)> {
    let shown = db.shown();
    let mut run = db
        .run(run_id)?
        .ok_or_else(|| anyhow::anyhow!("no run {run_id} in {shown}"))?;
    // `--no-cache` on a resume holds for the rest of the run, as it does when the run was
    // started with it.
    run.config.no_cache |= args.no_cache;
    let named = if !args.models.is_empty() {
        load_models(dirs, args.models_file.as_deref())?.select(&args.models.join(","))?
    } else {
        Vec::new()
    };
    let own = own_models(dirs, args.models_file.as_deref(), &run);
    let chosen = engine::resume_models(&run, &named, &own, args.recorded_endpoints)?;
    let file = models_file_read(dirs, args.models_file.as_deref());
    tell_resume_models(&chosen, db.is_shared(), &file);
    let models = chosen.models;
    let (ds, _) = open_dataset(args.dataset.as_deref().or(dataset_path(&run.dataset)))?;
    let jobs = db.jobs(&run.id)?;
    let unfinished: Vec<_> = jobs
        .iter()
        .filter(|(_, s)| s.is_todo())
        .map(|(j, _)| j.clone())
        .collect();
    let all: Vec<_> = jobs.into_iter().map(|(j, _)| j).collect();
    let n = unfinished.len();
    let score = scoring(args, dirs, &lane, !run.config.no_cache)?;
    let unscored = if score.is_some() {
        db.unscored_answers(&run.id)?
    } else {
        Vec::new()
    };
    let concurrency = args.concurrency;
    Ok((
        Box::pin(async move {
            let jobs = engine::ResumeJobs {
                dataset: ds,
                unfinished,
                all,
                unscored,
            };
            let opts = engine::ResumeOptions {
                concurrency,
                stream_deltas: false,
                score,
            };
            Ok(engine::resume(lane, &run, models, jobs, opts).await?)
        }),
        n,
    ))
}

/// A new run: its task, and how many jobs it has.
fn new_task(
    args: &RunArgs,
    dirs: &Dirs,
    lane: engine::Lane<engine::Event>,
) -> anyhow::Result<(RunTask, usize)> {
    if args.models.is_empty() {
        bail!("--models is required (e.g. --models local,gpt)");
    }
    let models = load_models(dirs, args.models_file.as_deref())?.select(&args.models.join(","))?;
    // Anthropic's API has no log-probabilities: say so rather than store nothing silently.
    for m in &models {
        if (args.logprobs.is_some() || m.params.logprobs.is_some())
            && m.provider == crate::provider::ProviderKind::Anthropic
        {
            crate::warn!(
                "token log-probabilities: not available from {} (Anthropic's API has none); its answers are stored without them",
                m.name
            );
        }
    }
    let (ds, dataset_ref) = open_dataset(args.dataset.as_deref())?;
    let items = select_items(&ds, args.filter.as_deref(), args.limit)?;
    let mut spec = RunSpec::new(ds, dataset_ref, items, models);
    spec.samples = args.samples.max(1);
    spec.shots = args.shots;
    spec.concurrency = args.concurrency.max(1);
    spec.use_cache = !args.no_cache;
    spec.filter = args.filter.clone();
    spec.limit = args.limit;
    // Nothing here shows the stream; skip the per-token events.
    spec.stream_deltas = false;
    spec.params = Params {
        temperature: args.temperature,
        top_p: args.top_p,
        max_tokens: args.max_tokens,
        stop: Vec::new(),
        seed: args.seed,
        logprobs: args.logprobs,
    };
    let n = spec.plan().len();
    spec.score = scoring(args, dirs, &lane, spec.use_cache)?;
    let engine::Lane {
        store,
        factory,
        events,
        cancel,
    } = lane;
    Ok((
        Box::pin(async move { Ok(engine::run(spec, store, factory, events, cancel).await?) }),
        n,
    ))
}

/// `<sample-data>` names the bundled data; anything else is a path.
/// The dataset a run recorded: a path, or the sample data (`<sample-data>`, and `<unknown>` for
/// answers imported without `--dataset`: the sample data is tried, and a job whose item is not
/// there is named when the run resumes).
pub(crate) fn dataset_path(r: &str) -> Option<&Path> {
    (r != "<sample-data>" && r != "<unknown>").then(|| Path::new(r))
}

pub fn open_dataset(path: Option<&Path>) -> anyhow::Result<(Arc<Dataset>, String)> {
    let (loaded, r) = match path {
        Some(p) => {
            let abs = std::fs::canonicalize(p).unwrap_or_else(|_| p.to_path_buf());
            (crate::dataset::load_path(p)?, abs.display().to_string())
        }
        None => (crate::dataset::load_sample(), "<sample-data>".to_string()),
    };
    let errors = loaded.errors();
    if errors > 0 {
        let d = &loaded.dataset;
        let validate = match path {
            Some(p) => format!(
                "prism validate {}",
                crate::text::shell_quote(&p.display().to_string())
            ),
            None => "prism validate".to_string(),
        };
        crate::warn!(
            "warning: {errors} problem(s) in the dataset ({}); every item that loaded is used ({} items in {} tasks); `{validate}` lists them",
            loaded.error_kinds(),
            d.items.len(),
            d.tasks.len(),
        );
    }
    if loaded.dataset.items.is_empty() {
        bail!("the dataset has no items");
    }
    Ok((Arc::new(loaded.dataset), r))
}

/// A JSON string literal.
fn json_string(s: &str) -> String {
    serde_json::to_string(s).unwrap_or_else(|_| "\"\"".into())
}

/// The judge for scoring as answers arrive (`--judge`, else the config's), or no scoring with
/// `--no-score`.
/// The scoring of answers as they arrive. The judge's calls stop with the run (`cancel`): a
/// SIGTERM or ctrl-c stops a judge's generation at once, in the embedded model's worker too.
fn scoring(
    args: &RunArgs,
    dirs: &Dirs,
    lane: &engine::Lane<engine::Event>,
    use_cache: bool,
) -> anyhow::Result<Option<engine::Scoring>> {
    let (factory, store, cancel) = (&lane.factory, &lane.store, &lane.cancel);
    if args.no_score {
        return Ok(None);
    }
    let (config, _) = crate::config::Config::load(&dirs.config_file());
    let Some(name) = args.judge.clone().or(config.judge) else {
        return Ok(Some(engine::Scoring::default()));
    };
    let models = load_models(dirs, args.models_file.as_deref())?;
    let cfg = models.get(&name).with_context(|| {
        format!("no model {name:?} to judge with (--judge, or judge in config.toml)")
    })?;
    let caller = engine::Caller::new(cfg, factory, Some(store.clone()), use_cache, cancel.clone())?;
    Ok(Some(engine::Scoring::with(Some(Arc::new(caller)))))
}

/// What the scores that arrived with a run came to.
#[derive(Debug, Default)]
struct ScoreTally {
    scored: usize,
    wrong: usize,
    waiting: usize,
    errors: Vec<String>,
}

impl ScoreTally {
    fn add(&mut self, score: Option<f64>) {
        match score {
            Some(v) => {
                self.scored += 1;
                self.wrong += usize::from(crate::detect::results::scored_wrong(v));
            }
            None => self.waiting += 1,
        }
    }

    fn line(&self, run_id: &str, db: &str, shared: bool) -> String {
        let mut s = format!("scores: {} scored ({} wrong)", self.scored, self.wrong);
        if self.waiting > 0 && shared {
            // The URL is shown without its password: the user gives the one they ran with.
            s.push_str(&format!(
                ", {} wait for a judge: prism score --run {run_id} --judge MODEL --db URL (the shared store's, {})",
                self.waiting,
                crate::text::shell_quote(db)
            ));
        } else if self.waiting > 0 {
            s.push_str(&format!(
                ", {} wait for a judge: prism score --run {run_id} --judge MODEL --db {}",
                self.waiting,
                crate::text::shell_quote(db)
            ));
        }
        for e in self.errors.iter().take(3) {
            s.push_str(&format!(
                "\n  scoring failed: {}",
                crate::text::clean_line(e)
            ));
        }
        s
    }
}

/// The JSON line of a finished job, written directly (no JSON tree per line: every job sends
/// one).
fn done_line(job: u32, response: &crate::store::ResponseRecord) -> String {
    let opt = |v: Option<u64>| v.map_or("null".to_string(), |v| v.to_string());
    format!(
        "{{\"event\":\"done\",\"job\":{job},\"item\":{},\"model\":{},\"sample\":{},\"cached\":{},\"latency_ms\":{},\"completion_tokens\":{}}}",
        json_string(&response.item_id),
        json_string(&response.model),
        response.sample,
        response.cached,
        opt(response.latency_ms),
        opt(response.completion_tokens.map(u64::from))
    )
}

/// The JSON line of a score (`score` null while it waits for a judge).
fn scored_line(r: &crate::store::ScoreRecord) -> String {
    let score = r.score.map_or("null".to_string(), |v| format!("{v}"));
    format!(
        "{{\"event\":\"scored\",\"job\":{},\"item\":{},\"model\":{},\"sample\":{},\"evaluator\":{},\"score\":{score}}}",
        r.job_idx,
        json_string(&r.item_id),
        json_string(&r.model),
        r.sample,
        json_string(&r.evaluator),
    )
}

/// Prints progress (terminal) or JSON lines; returns the failures, one line each, and what
/// the scores came to.
async fn report_events(
    mut rx: mpsc::UnboundedReceiver<Event>,
    json_mode: bool,
    total: usize,
) -> (Vec<String>, ScoreTally) {
    let mut failures = Vec::new();
    let mut tally = ScoreTally::default();
    let bar = (!json_mode).then(|| {
        let b = ProgressBar::new(total as u64);
        b.set_style(
            ProgressStyle::with_template(
                "{spinner} [{elapsed_precise}] {bar:40} {pos}/{len} {per_sec} ETA {eta} {msg}",
            )
            .unwrap_or_else(|_| ProgressStyle::default_bar()),
        );
        b.enable_steady_tick(Duration::from_millis(200));
        b
    });
    let mut failed = 0usize;
    // Buffered, flushed whenever the queue of events is empty: a reader sees every line as soon
    // as the run has nothing newer to say, without a write call per line under load.
    let mut out = std::io::BufWriter::with_capacity(1 << 16, std::io::stdout());
    while let Some(ev) = rx.recv().await {
        let line = match &ev {
            Event::Started {
                run_id,
                models: m,
                jobs: j,
                already_done,
            } => {
                json!({"event": "started", "run_id": run_id, "models": m, "jobs": j.len(), "already_done": already_done})
            }
            Event::Sending { job, attempt } => {
                if !json_mode {
                    continue;
                }
                // The two events every job sends are written directly (no JSON tree per line).
                let _ = writeln!(
                    out,
                    "{{\"event\":\"sending\",\"job\":{job},\"attempt\":{attempt}}}"
                );
                if rx.is_empty() {
                    let _ = out.flush();
                }
                continue;
            }
            Event::Delta { .. } | Event::Tokens { .. } => continue,
            Event::Retrying {
                job,
                attempt,
                max_attempts,
                reason,
                delay,
            } => {
                if let Some(b) = &bar {
                    b.set_message(format!("retrying: {}", crate::text::one_line(reason)));
                }
                json!({"event": "retrying", "job": job, "attempt": attempt, "max_attempts": max_attempts,
                       "reason": reason, "delay_ms": delay.as_millis() as u64})
            }
            Event::Done { job, response } => {
                if let Some(b) = &bar {
                    b.inc(1);
                }
                if !json_mode {
                    continue;
                }
                let line = done_line(*job, response);
                let _ = writeln!(out, "{}", crate::text::json_for_terminal(&line));
                if rx.is_empty() {
                    let _ = out.flush();
                }
                continue;
            }
            Event::Failed { job, response } => {
                failed += 1;
                let reason = response.error.clone().unwrap_or_default();
                failures.push(format!(
                    "{} on {} (sample {}): {}",
                    response.item_id, response.model, response.sample, reason
                ));
                if let Some(b) = &bar {
                    b.inc(1);
                    b.set_message(format!("{failed} failed"));
                }
                json!({"event": "failed", "job": job, "item": response.item_id, "model": response.model,
                       "sample": response.sample, "reason": reason, "attempts": response.attempts})
            }
            Event::Scored(r) => {
                tally.add(r.score);
                if !json_mode {
                    continue;
                }
                let line = scored_line(r);
                let _ = writeln!(out, "{}", crate::text::json_for_terminal(&line));
                if rx.is_empty() {
                    let _ = out.flush();
                }
                continue;
            }
            Event::ScoringFailed { reason } => {
                tally.errors.push(reason.clone());
                json!({"event": "scoring_failed", "reason": reason})
            }
            Event::Life(l) => super::background::lifecycle(
                &bar,
                l,
                "run_id",
                "the run goes on (no model is asked again)",
            ),
        };
        if json_mode {
            let _ = writeln!(out, "{}", crate::text::json_for_terminal(&line.to_string()));
            if rx.is_empty() {
                let _ = out.flush();
            }
        }
    }
    let _ = out.flush();
    (failures, tally)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_picker_starts_with_what_can_run_and_remembers_the_last_choice() {
        let tmp = tempfile::tempdir().unwrap();
        let dirs = Dirs {
            config: tmp.path().join("config"),
            data: tmp.path().join("data"),
        };
        let remote: crate::provider::ModelConfig = toml::from_str::<ModelsFile>(
            "[[models]]\nname = \"gpt\"\nprovider = \"openai\"\nmodel = \"x\"\n\
             [[models]]\nname = \"mine\"\nprovider = \"local\"\npath = \"/nonexistent/m.gguf\"\n\
             [[models]]\nname = \"other\"\nprovider = \"openai\"\nmodel = \"y\"\n",
        )
        .unwrap()
        .models
        .remove(0);
        let f: ModelsFile = toml::from_str(
            "[[models]]\nname = \"mine\"\nprovider = \"local\"\npath = \"/nonexistent/m.gguf\"\n\
             [[models]]\nname = \"other\"\nprovider = \"openai\"\nmodel = \"y\"\n",
        )
        .unwrap();
        let models = vec![
            builtin_local(),
            builtin_smol(&dirs),
            f.models[0].clone(),
            remote,
            f.models[1].clone(),
        ];
        // Nothing installed: not a built-in, not a local file that is missing; the first remote.
        assert_eq!(preselect(&dirs, &models), vec!["gpt".to_string()]);
        // The last choice wins, of what can start (`smol` is not installed, so it is dropped).
        remember_choice(&dirs, &["other".into(), "smol".into()]);
        assert_eq!(preselect(&dirs, &models), vec!["other".to_string()]);
        // Only built-ins, none installed: nothing is chosen.
        assert!(preselect(&dirs, &models[..2]).is_empty());
    }
}
