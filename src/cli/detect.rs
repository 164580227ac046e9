//! `prism detect` (contradiction detection on stored answers) and `prism autohall` (AutoHall's
//! pipeline on claims): the headless front-ends of the detection engine, with the progress, JSON
//! lines and exit codes of `prism run`.

use std::io::{IsTerminal, Write};
use std::path::PathBuf;

use anyhow::{Context, bail};
use indicatif::ProgressBar;
use serde_json::json;
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

use super::inputs::Filter;
use super::run::{dataset_path, load_models, open_dataset};
use crate::config::Dirs;
use crate::detect::plan::{self, Plan, Settings};
use crate::detect::results;
use crate::detect::run::{DetectEvent, DetectOptions, Step, Stored};
use crate::engine::BackendFactory;
use crate::provider::{ModelConfig, Params};
use crate::store::Db;
use crate::store::lane_tables::{self, LaneKind};
use crate::store::{DetectKind, DetectRun, Verdict};

fn parse_k(s: &str) -> Result<u32, String> {
    match s.parse::<u32>() {
        Ok(k @ 1..=20) => Ok(k),
        _ => Err("k must be a number from 1 to 20".into()),
    }
}

/// Options both commands share.
#[derive(Debug, clap::Args)]
pub struct Common {
    /// Models to test, comma-separated names from the models file.
    #[arg(long, value_delimiter = ',')]
    pub models: Vec<String>,
    #[command(flatten)]
    pub lane: super::lane_flags::LaneFlags,
    /// The model that checks the pairs (default: each model checks its own).
    #[arg(long)]
    pub judge: Option<String>,
    /// Samples per answer (K), 1 to 20.
    #[arg(short = 'k', long, default_value_t = 6, value_parser = parse_k)]
    pub k: u32,
    /// The most tokens of each generated answer, reference and sample (default: the model's
    /// own `max_tokens`, 128 for the built-in models); the pair checks keep the judge's.
    #[arg(long, value_parser = clap::value_parser!(u32).range(1..=32768))]
    pub max_tokens: Option<u32>,
    /// A TOML file rewording the prompts: `pair_check` ({question}, {a}, {b}),
    /// `classification` ({claim}, {reference}), `references` (a list, {claim}); the run
    /// records them.
    #[arg(long, value_name = "FILE")]
    pub prompts: Option<PathBuf>,
    /// Read a stored run's pair and classification replies again with this prism's readers
    /// (no model is asked); the verdicts that change are saved and counted.
    #[arg(long, value_name = "RUN_ID", conflicts_with = "resume")]
    pub reread: Option<String>,
}

/// Options of `prism detect`.
#[derive(Debug, clap::Args)]
pub struct DetectArgs {
    #[command(flatten)]
    pub common: Common,
    /// The run whose answers are tested (default: the latest).
    #[arg(long)]
    pub run: Option<String>,
    /// Only answers whose sub-task matches a glob (`KE-FD-*`) or whose item id is given.
    #[arg(long)]
    pub filter: Option<String>,
    /// At most this many answers (after the filter, in the run's order).
    #[arg(long)]
    pub limit: Option<usize>,
    /// Sampling temperature of the K samples (default: the answer's own).
    #[arg(long)]
    pub temperature: Option<f64>,
    /// The run's dataset, when it moved since.
    #[arg(long)]
    pub dataset: Option<PathBuf>,
}

/// Options of `prism autohall`.
#[derive(Debug, clap::Args)]
pub struct AutohallArgs {
    /// Claims: a .jsonl file or a directory of them (ours, Climate-FEVER, FEVER, PUBHEALTH,
    /// WiCE); omit for the bundled sample claims.
    pub dataset: Option<PathBuf>,
    #[command(flatten)]
    pub common: Common,
    /// Generation temperatures, comma-separated (AutoHall studies 0.1, 0.5 and 0.9).
    #[arg(long, value_delimiter = ',', default_values_t = vec![0.1, 0.5, 0.9])]
    pub temperature: Vec<f64>,
    /// Only claims whose topic matches a glob or whose id is given; comma-separated.
    #[arg(long)]
    pub filter: Option<String>,
    /// At most this many claims (after the filter).
    #[arg(long)]
    pub limit: Option<usize>,
    /// Seed of the balanced set's draw.
    #[arg(long, default_value_t = 0)]
    pub seed: u64,
    /// Sample and check pairs only on the balanced set (fewer calls; the collection runs first).
    #[arg(long)]
    pub balanced_only: bool,
    /// Store AutoHall's released outputs (`dataset/<model>_data/<dataset>/dataset_<T>.jsonl`,
    /// comma-separated) as a run instead of calling models; DATASET, when given, is the claims
    /// file the claims' truth is read from (else the released label).
    #[arg(long, value_delimiter = ',', value_name = "FILE")]
    pub import: Vec<PathBuf>,
    /// Print AutoHall's analyses of a stored run instead of running: the K = 1..K sweep, the
    /// conflicts per reference (hallucinated and factual apart), detection by reference length
    /// and by topic.
    #[arg(long, value_name = "RUN_ID", conflicts_with_all = ["import", "resume"])]
    pub analyse: Option<String>,
    /// With --analyse: detection by the topics MODEL assigns (one call per claim, stored and
    /// reused by later analyses), instead of the data's (AutoHall's topic analysis when the data
    /// has one topic, as Climate-FEVER's file does).
    #[arg(long, value_name = "MODEL", requires = "analyse")]
    pub topics_by: Option<String>,
    /// With --topics-by: the topics offered, comma-separated (default: AutoHall's 13: Education,
    /// Technology, Literature, Geography, Business, Culture, Sports, Politics, Music, History,
    /// Science, Law, Entertainment).
    #[arg(long, value_name = "LIST", requires = "topics_by")]
    pub topic_list: Option<String>,
    /// With --import: the model's name in the run (default: the response's, else the path's).
    #[arg(long, requires = "import")]
    pub model_name: Option<String>,
    /// With --import: how a classification reply is read: `paper` (the authors' notebooks: the
    /// word true anywhere, else false) or `prism` (prism's reader). Both are counted.
    #[arg(long, value_enum, default_value = "paper", requires = "import")]
    pub reading: crate::detect::import::Reading,
}

fn options(c: &Common) -> DetectOptions {
    DetectOptions {
        concurrency: c.lane.concurrency.max(1),
        use_cache: !c.lane.no_cache,
        stream_deltas: false,
    }
}

fn templates_of(c: &Common) -> anyhow::Result<crate::detect::templates::Templates> {
    c.prompts.as_deref().map_or_else(
        || Ok(Default::default()),
        crate::detect::templates::Templates::load,
    )
}

fn judge_of(dirs: &Dirs, c: &Common) -> anyhow::Result<Option<ModelConfig>> {
    match &c.judge {
        None => Ok(None),
        Some(j) => Ok(Some(
            load_models(dirs, c.lane.models_file.as_deref())?
                .select(j)?
                .into_iter()
                .next()
                .context("--judge names no model")?,
        )),
    }
}

use super::background::{Task, calls_bar, lifecycle, tick};

/// The plan of a stored detection run to finish: this machine's models of the run's names
/// answer (those named with `--models`, when given); `--judge` replaces its judge.
fn resume_plan(
    dirs: &Dirs,
    c: &Common,
    db: &crate::store::Db,
    id: &str,
    kind: DetectKind,
) -> anyhow::Result<Plan> {
    let store = db.read()?;
    let run = store
        .detect_run(id)?
        .with_context(|| format!("no detection run {id} in the store"))?;
    if !run.config.imported.is_empty() {
        bail!(
            "{id} was imported from {} (AutoHall's released outputs): it has no model to call, so there is nothing to resume",
            run.config.imported.join(", ")
        );
    }
    if run.kind != kind {
        bail!(
            "{id} is a detection run on {}; resume it with prism {}",
            run.kind.as_str(),
            match run.kind {
                DetectKind::Answers => "detect --resume",
                DetectKind::Claims => "autohall --resume",
            }
        );
    }
    // The run's models answer as this machine's models file names them (never as the store
    // recorded them); `--models` picks which of them.
    let configured = load_models(dirs, c.lane.models_file.as_deref())?;
    let named = if c.models.is_empty() {
        configured.models
    } else {
        configured.select(&c.models.join(","))?
    };
    plan::resume(db, id, &named, judge_of(dirs, c)?)
}

/// The plan of `prism detect` without `--resume`: the stored answers of a run.
fn answers_plan(args: &DetectArgs, dirs: &Dirs, db: &crate::store::Db) -> anyhow::Result<Plan> {
    let store = db.read_existing("run prism run first, or pass --db")?;
    let c = &args.common;
    let source = match &args.run {
        Some(id) => store
            .run(id)?
            .with_context(|| format!("no run {id} in {}", db.shown()))?,
        None => store.latest_run()?.context("no runs in the store")?,
    };
    let (ds, _) = open_dataset(args.dataset.as_deref().or(dataset_path(&source.dataset)))
        .with_context(|| format!("the dataset of run {}", source.id))?;
    let mut responses = store.responses(&source.id)?;
    if !c.models.is_empty() {
        for m in &c.models {
            if !source.config.models.iter().any(|s| &s.name == m) {
                bail!(
                    "run {} has no model {m:?} (its models: {})",
                    source.id,
                    source
                        .config
                        .models
                        .iter()
                        .map(|m| m.name.as_str())
                        .collect::<Vec<_>>()
                        .join(", ")
                );
            }
        }
        responses.retain(|r| c.models.contains(&r.model));
    }
    if let Some(f) = Filter::new(args.filter.as_deref(), |p| ds.item_by_id(p).is_some())? {
        responses.retain(|r| f.keeps(&r.item_id, &r.task_id));
    }
    // Only finished answers to items of the dataset become targets; the limit counts those,
    // in the run's order.
    responses.retain(|r| r.text.is_some());
    let (mut known, unknown): (Vec<_>, Vec<_>) = responses
        .into_iter()
        .partition(|r| ds.index_of(&r.item_id).is_some());
    if let Some(first) = unknown.first() {
        crate::warn!(
            "warning: {} answer(s) left out: their items are not in the dataset (e.g. {}); \
             pass the run's dataset with --dataset",
            unknown.len(),
            first.item_id
        );
    }
    if let Some(n) = args.limit {
        known.truncate(n);
    }
    if known.is_empty() {
        bail!(
            "no answers to test in run {} (after --models/--filter)",
            source.id
        );
    }
    let settings = Settings {
        judge: judge_of(dirs, c)?,
        params: Params {
            temperature: args.temperature,
            max_tokens: c.max_tokens,
            ..Params::default()
        },
        filter: args.filter.clone(),
        templates: templates_of(c)?,
        ..Settings::with_k(c.k)
    };
    let configured = load_models(dirs, c.lane.models_file.as_deref())?;
    Ok(plan::answers(&source, &ds, &known, &configured.models, &settings)?.0)
}

/// The plan of `prism autohall` without `--resume`: claims for models at each temperature.
fn claims_plan(args: &AutohallArgs, dirs: &Dirs) -> anyhow::Result<Plan> {
    let c = &args.common;
    if c.models.is_empty() {
        bail!("--models is required (e.g. --models smol)");
    }
    if args.temperature.is_empty() || args.temperature.iter().any(|t| !(0.0..=2.0).contains(t)) {
        bail!("--temperature: each value must be between 0 and 2");
    }
    let (loaded, dataset_ref) = super::inputs::side_set(
        args.dataset.as_deref(),
        |p| Ok(crate::dataset::claims::load_path(p)?),
        crate::dataset::claims::sample_claims,
        "<sample-claims>",
        |l| l.problems.iter().filter(|p| p.is_error()).count(),
        "claims",
    )?;
    let mut set = loaded.set;
    if let Some(f) = Filter::new(args.filter.as_deref(), |p| set.by_id(p).is_some())? {
        set.claims.retain(|cl| f.keeps(&cl.id, &cl.topic));
    }
    if let Some(n) = args.limit {
        set.claims.truncate(n);
    }
    let models = load_models(dirs, c.lane.models_file.as_deref())?.select(&c.models.join(","))?;
    let settings = Settings {
        judge: judge_of(dirs, c)?,
        temperatures: args.temperature.clone(),
        seed: args.seed,
        balanced_only: args.balanced_only,
        filter: args.filter.clone(),
        params: Params {
            max_tokens: c.max_tokens,
            ..Params::default()
        },
        templates: templates_of(c)?,
        ..Settings::with_k(c.k)
    };
    plan::claims(&set, dataset_ref, models, &settings)
}

/// Runs a plan on `db`, printing as `prism run` does.
fn launch(
    plan: Plan,
    db: &Db,
    c: &Common,
    factory: BackendFactory,
    command: &str,
) -> anyhow::Result<i32> {
    let cancel = CancellationToken::new();
    let (tx, rx) = mpsc::unbounded_channel();
    let run = plan.run.clone();
    let handle = db.lane_handle(LaneKind::Detect, &run.id)?;
    let opts = options(c);
    let c2 = cancel.clone();
    let lane = crate::engine::Lane {
        store: handle,
        factory,
        events: tx,
        cancel: c2,
    };
    let task: Task = Box::pin(async move { plan.launch(lane, opts).await });
    drive(task, rx, c.lane.json, cancel, &run, db, command)
}

/// `prism detect`. Exit codes: 0 every call done, 2 some failed, 1 could not start, 130
/// interrupted (finish with --resume).
pub(crate) fn detect(
    mut args: DetectArgs,
    dirs: &Dirs,
    factory: BackendFactory,
) -> anyhow::Result<i32> {
    let db = super::lane_flags::open_db(args.common.lane.db.as_ref(), dirs)?;
    match (&args.common.reread, &args.common.lane.resume) {
        (Some(id), _) | (None, Some(id)) => db.pull_lane(LaneKind::Detect, id)?,
        // The answers under test: the named run, or the shared store's newest.
        (None, None) => args.run = db.pull_run(args.run.as_deref())?,
    }
    let c = &args.common;
    if let Some(id) = &c.reread {
        let code = super::autohall_reports::reread(id, &db, c.lane.json, DetectKind::Answers)?;
        db.push_lane(LaneKind::Detect, id)?;
        return Ok(code);
    }
    let planned = match &c.lane.resume {
        Some(id) => resume_plan(dirs, c, &db, id, DetectKind::Answers)?,
        None => answers_plan(&args, dirs, &db)?,
    };
    launch(planned, &db, c, factory, "detect")
}

/// `prism autohall`. Exit codes as `prism detect`.
pub(crate) fn autohall(
    args: AutohallArgs,
    dirs: &Dirs,
    factory: BackendFactory,
) -> anyhow::Result<i32> {
    let c = &args.common;
    let db = super::lane_flags::open_db(c.lane.db.as_ref(), dirs)?;
    if let Some(id) = c
        .reread
        .as_ref()
        .or(args.analyse.as_ref())
        .or(c.lane.resume.as_ref())
    {
        db.pull_lane(LaneKind::Detect, id)?;
    }
    if !args.import.is_empty() {
        let before: Vec<String> = db
            .read()?
            .lane_statuses(LaneKind::Detect)?
            .into_iter()
            .map(|(id, _)| id)
            .collect();
        let code = super::autohall_reports::import(
            &super::autohall_reports::Import {
                claims: args.dataset.as_deref(),
                files: &args.import,
                model_name: args.model_name.as_deref(),
                reading: args.reading,
                json: c.lane.json,
            },
            &db,
        )?;
        if db.is_shared() {
            for (id, _) in db.read()?.lane_statuses(LaneKind::Detect)? {
                if !before.contains(&id) {
                    db.push_lane(LaneKind::Detect, &id)?;
                    crate::warn!("{id}: pushed to {}", db.shown());
                }
            }
        }
        return Ok(code);
    }
    if let Some(id) = &c.reread {
        let code = super::autohall_reports::reread(id, &db, c.lane.json, DetectKind::Claims)?;
        db.push_lane(LaneKind::Detect, id)?;
        return Ok(code);
    }
    if let Some(id) = &args.analyse {
        db.pull_table(&lane_tables::CLAIM_TOPICS, None)?;
        let topics = match &args.topics_by {
            None => None,
            Some(name) => Some(super::autohall_reports::TopicsBy {
                model: load_models(dirs, c.lane.models_file.as_deref())?
                    .select(name)?
                    .into_iter()
                    .next()
                    .ok_or_else(|| anyhow::anyhow!("no model {name:?}"))?,
                list: match &args.topic_list {
                    Some(l) => crate::detect::topics::parse_list(l)
                        .map_err(|e| anyhow::anyhow!("--topic-list: {e}"))?,
                    None => crate::detect::topics::AUTOHALL_TOPICS
                        .iter()
                        .map(|t| t.to_string())
                        .collect(),
                },
                factory,
                concurrency: c.lane.concurrency.max(1),
                use_cache: !c.lane.no_cache,
            }),
        };
        let code = super::autohall_reports::analyse(id, &db, c.lane.json, topics)?;
        return Ok(code);
    }
    let plan = match &c.lane.resume {
        Some(id) => resume_plan(dirs, c, &db, id, DetectKind::Claims)?,
        None => claims_plan(&args, dirs)?,
    };
    launch(plan, &db, c, factory, "autohall")
}

/// Runs the task to its end, printing progress or JSON lines, then the results.
fn drive(
    task: Task,
    rx: mpsc::UnboundedReceiver<DetectEvent>,
    json: bool,
    cancel: CancellationToken,
    run: &DetectRun,
    db: &Db,
    command: &str,
) -> anyhow::Result<i32> {
    let json_mode = json || !std::io::stdout().is_terminal();
    let (summary, failures) =
        super::background::run_with_printer(task, print_events(rx, json_mode), &cancel)?;
    super::background::say_summary("detection", &summary, &failures);
    db.finish()?;
    // The results, from what is stored (a resumed run counts everything, not just this part).
    let stored = Stored::load(db, &run.id)?;
    let k = run.config.k.max(1);
    match run.kind {
        DetectKind::Claims => {
            let rep = results::claims_report(&stored, k, run.config.seed);
            if json_mode {
                let line = json!({"event": "results", "detect_id": run.id, "claims": rep});
                crate::outln!("{}", crate::text::json_for_terminal(&line.to_string()));
            } else {
                eprint!(
                    "{}",
                    crate::text::sanitize(&super::autohall_reports::claims_table(&rep))
                );
            }
        }
        DetectKind::Answers => {
            let rows = results::answer_rows(&stored, k);
            let mut per_model: std::collections::BTreeMap<&str, (usize, usize)> =
                Default::default();
            for r in &rows {
                let e = per_model.entry(&r.model).or_default();
                e.0 += 1;
                e.1 += usize::from(r.flagged);
            }
            if json_mode {
                let line = json!({"event": "results", "detect_id": run.id,
                    "models": per_model.iter().map(|(m, (n, f))| json!({"model": m, "answers": n, "flagged": f})).collect::<Vec<_>>()});
                crate::outln!("{}", crate::text::json_for_terminal(&line.to_string()));
            } else {
                for (m, (n, f)) in &per_model {
                    crate::warn!(
                        "  {m}: {f} of {n} answers flagged by self-contradiction (K = {k})"
                    );
                }
            }
        }
    }
    if !json_mode {
        crate::say!("{}", run.id);
    }
    Ok(super::background::exit_code(
        &summary,
        command,
        &run.id,
        &db.shown(),
    ))
}

fn step_json(step: Step) -> serde_json::Value {
    match step {
        Step::Answer => json!({"step": "answer"}),
        Step::Classify => json!({"step": "classify"}),
        Step::Sample { round, k } => json!({"step": "sample", "round": round, "k": k}),
        Step::Pair { round, k, wording } => {
            json!({"step": "pair", "round": round, "k": k, "wording": wording})
        }
    }
}

/// Prints progress (terminal) or JSON lines; returns the failures, one line each.
async fn print_events(
    mut rx: mpsc::UnboundedReceiver<DetectEvent>,
    json_mode: bool,
) -> Vec<String> {
    let mut failures = Vec::new();
    let mut bar: Option<ProgressBar> = None;
    let mut names: Vec<(String, String)> = Vec::new();
    let stdout = std::io::stdout();
    let name = |names: &[(String, String)], t: u32| {
        names
            .get(t as usize)
            .map(|(i, m)| format!("{i} on {m}"))
            .unwrap_or_else(|| format!("target {t}"))
    };
    while let Some(ev) = rx.recv().await {
        let line = match &ev {
            DetectEvent::Started {
                run_id,
                targets,
                calls,
            } => {
                names = targets
                    .iter()
                    .map(|t| (t.item_id.clone(), t.model.clone()))
                    .collect();
                if !json_mode {
                    bar = Some(calls_bar(*calls));
                }
                json!({"event": "started", "detect_id": run_id, "targets": targets.len(), "calls": calls})
            }
            DetectEvent::Sending {
                target,
                step,
                attempt,
                reason,
            } => {
                if let (Some(b), Some(r)) = (&bar, reason) {
                    b.set_message(format!("retrying: {}", crate::text::one_line(r)));
                }
                if !json_mode {
                    continue;
                }
                json!({"event": "sending", "target": target, "call": step_json(*step), "attempt": attempt, "reason": reason})
            }
            DetectEvent::Delta { .. } => continue,
            DetectEvent::Answer {
                target,
                answer,
                refused,
            } => {
                tick(&bar);
                if let Err(e) = answer {
                    failures.push(format!("{}: answer: {e}", name(&names, *target)));
                }
                json!({"event": "answer", "target": target, "ok": answer.is_ok(), "refused": refused,
                       "error": answer.as_ref().err()})
            }
            DetectEvent::Classified {
                target,
                class,
                reply: _,
            } => {
                tick(&bar);
                if let Err(e) = class {
                    failures.push(format!("{}: classification: {e}", name(&names, *target)));
                }
                json!({"event": "classified", "target": target,
                       "class": class.as_ref().ok().map(|c| c.as_str()), "error": class.as_ref().err()})
            }
            DetectEvent::Sample(s) => {
                tick(&bar);
                if let Some(e) = &s.error {
                    failures.push(format!("{}: sample {}: {e}", name(&names, s.target), s.k));
                }
                json!({"event": "sample", "target": s.target, "round": s.round, "k": s.k, "variant": s.variant,
                       "ok": s.error.is_none(), "cached": s.cached, "error": s.error})
            }
            DetectEvent::Pair(p) => {
                tick(&bar);
                if let Some(e) = &p.error {
                    failures.push(format!("{}: pair {}: {e}", name(&names, p.target), p.k));
                }
                if p.verdict == Verdict::Conflict
                    && let Some(b) = &bar
                {
                    b.set_message(format!("conflict: {}", name(&names, p.target)));
                }
                json!({"event": "pair", "target": p.target, "round": p.round, "k": p.k,
                       "verdict": p.verdict.as_str(), "attempts": p.attempts, "error": p.error})
            }
            DetectEvent::Life(l) => lifecycle(
                &bar,
                l,
                "detect_id",
                "detection goes on (nothing is asked again)",
            ),
        };
        if json_mode {
            let mut out = stdout.lock();
            let _ = writeln!(out, "{}", crate::text::json_for_terminal(&line.to_string()));
        }
    }
    failures
}
