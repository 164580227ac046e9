//! `prism self-detect [RUN]`: self-detection's question asked of a run's stored answers. Each
//! answer's own model (or `--detector`) says whether the answer contains false information,
//! directly and with chain-of-thought; the verdicts are stored as they arrive and asked once;
//! `prism signals` scores them against PRISM's verdict beside the other signals.

use std::collections::{BTreeMap, HashMap, HashSet};
use std::io::IsTerminal;
use std::path::PathBuf;
use std::sync::Arc;

use anyhow::{Context, bail};
use clap::Args;
use serde_json::json;

use super::run::{dataset_path, load_models, open_dataset};
use crate::config::Dirs;
use crate::engine::BackendFactory;
use crate::selfcheck::answers::{self, Check, detected};
use crate::store::Mode;
use crate::store::lane_tables;

#[derive(Debug, Args)]
pub struct SelfDetectArgs {
    /// The run whose answers to check (default: the latest).
    pub run: Option<String>,
    /// Ask this model instead of each answer's own (then it is not self-detection, and the
    /// report says whose verdict it is).
    #[arg(long)]
    pub detector: Option<String>,
    /// Only the first N answers of the run.
    #[arg(long)]
    pub limit: Option<usize>,
    /// Only directly, or only with chain-of-thought (default: both).
    #[arg(long, value_enum)]
    pub mode: Option<ModeArg>,
    /// The run's dataset, when it has moved (the questions come from it).
    #[arg(long)]
    pub dataset: Option<PathBuf>,
    #[command(flatten)]
    pub ask: super::lane_flags::AskFlags,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum ModeArg {
    Direct,
    Cot,
}

pub(crate) fn self_detect(
    args: SelfDetectArgs,
    dirs: &Dirs,
    factory: BackendFactory,
) -> anyhow::Result<i32> {
    let db = super::lane_flags::open_db(args.ask.db.as_ref(), dirs)?;
    let named_run = db.pull_run(args.run.as_deref())?;
    if let Some(id) = named_run.as_deref().filter(|_| db.is_shared()) {
        db.pull_table(&lane_tables::ANSWER_CHECKS, Some(id))?;
    }
    let store = db.read_existing("run prism run first, or pass --db")?;
    let run = match &named_run {
        Some(id) => store
            .run(id)?
            .with_context(|| format!("no run {id} in {}", db.local().display()))?,
        None => store.latest_run()?.context("no runs in the store")?,
    };
    let (ds, _) = open_dataset(args.dataset.as_deref().or(dataset_path(&run.dataset)))
        .with_context(|| format!("the dataset of run {} (its questions)", run.id))?;
    let mut responses: Vec<_> = store
        .responses(&run.id)?
        .into_iter()
        .filter(|r| r.text.is_some())
        .collect();
    if let Some(n) = args.limit {
        responses.truncate(n);
    }
    if responses.is_empty() {
        bail!("run {} has no finished answer to check", run.id);
    }
    let (detectors, todo) = plan_checks(&args, dirs, &db, &run, &ds, &responses)?;
    let interrupted = !todo.is_empty() && ask(&args, &db, &run.id, (detectors, todo), factory)?;
    // Every verdict went to a shared store as it was saved; what is left goes now.
    db.finish()?;
    let failed = say_verdicts(&args, &db, &run.id, &responses)?;
    Ok(if interrupted {
        130
    } else if failed > 0 {
        2
    } else {
        0
    })
}

/// Each answer's detector (the named one, or the model that answered, as this machine's
/// models file names it) and the checks still to ask (those stored without an error are not
/// asked again).
fn plan_checks(
    args: &SelfDetectArgs,
    dirs: &Dirs,
    db: &crate::store::Db,
    run: &crate::store::RunRecord,
    ds: &crate::dataset::Dataset,
    responses: &[crate::store::ResponseRecord],
) -> anyhow::Result<(Detectors, Vec<Check>)> {
    let store = db.read()?;
    let modes: Vec<Mode> = match args.mode {
        None => Mode::BOTH.to_vec(),
        Some(ModeArg::Direct) => vec![Mode::Direct],
        Some(ModeArg::Cot) => vec![Mode::Cot],
    };
    let configured = load_models(dirs, args.ask.models_file.as_deref())?;
    // Each answer's detector: the named one, or the model that answered (as the run knew it).
    let mut detectors: HashMap<String, crate::provider::ModelConfig> = HashMap::new();
    let detector_of = |model: &str| args.detector.clone().unwrap_or_else(|| model.to_string());
    for r in responses {
        let name = detector_of(&r.model);
        if detectors.contains_key(&name) {
            continue;
        }
        let cfg = match &args.detector {
            Some(d) => configured
                .select(d)?
                .into_iter()
                .next()
                .context("--detector names no model")?,
            None => crate::engine::models::model_named(
                &name,
                &configured.models,
                &run.config.models,
                &run.id,
            )?,
        };
        detectors.insert(name, cfg);
    }
    let done: HashSet<(u32, String, Mode)> = store
        .answer_checks(&run.id)?
        .into_iter()
        .filter(|c| c.error.is_none())
        .map(|c| (c.job_idx, c.detector, c.mode))
        .collect();
    let mut todo = Vec::new();
    let mut unknown = 0;
    for r in responses {
        let Some(item) = ds.item_by_id(&r.item_id) else {
            unknown += 1;
            continue;
        };
        for &mode in &modes {
            let detector = detector_of(&r.model);
            if !done.contains(&(r.job_idx, detector.clone(), mode)) {
                todo.push(Check {
                    job_idx: r.job_idx,
                    detector,
                    mode,
                    question: crate::prompt::format_question(item),
                    answer: r.text.clone().unwrap_or_default(),
                });
            }
        }
    }
    if unknown > 0 {
        crate::warn!(
            "warning: {unknown} answer(s) left out: their items are not in the dataset; pass the run's dataset with --dataset"
        );
    }
    crate::warn!(
        "{} answers of {}, {} checks to ask ({} stored already)",
        responses.len(),
        run.id,
        todo.len(),
        responses.len() * modes.len() - todo.len() - unknown * modes.len()
    );
    Ok((detectors, todo))
}

/// Each detector's name and model.
type Detectors = HashMap<String, crate::provider::ModelConfig>;

/// Asks `todo` of the detectors, each verdict saved (and pushed to a shared store) as it
/// arrives; whether it was interrupted.
fn ask(
    args: &SelfDetectArgs,
    db: &crate::store::Db,
    run_id: &str,
    (detectors, todo): (Detectors, Vec<Check>),
    factory: BackendFactory,
) -> anyhow::Result<bool> {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()?;
    let cancel = tokio_util::sync::CancellationToken::new();
    rt.block_on(async {
        crate::shutdown::cancel_on_signal(&cancel);
        let handle = db.records_handle(&format!("answer-checks:{run_id}"), "answer check(s)")?;
        let mut callers = HashMap::new();
        for (name, cfg) in &detectors {
            callers.insert(
                name.clone(),
                Arc::new(crate::engine::Caller::new(
                    cfg,
                    &factory,
                    Some(handle.clone()),
                    !args.ask.no_cache,
                    cancel.clone(),
                )?),
            );
        }
        let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel();
        let unit = Arc::new(answers::Checks {
            run_id: run_id.to_string(),
            callers,
        });
        let lock = unit.lock();
        let lane = crate::engine::Lane {
            store: handle.clone(),
            factory: factory.clone(),
            events: tx,
            cancel: cancel.clone(),
        };
        let lane =
            crate::engine::records::run(lane, args.ask.concurrency.max(1), &lock, unit, todo);
        let drain = async move { while rx.recv().await.is_some() {} };
        let (ran, ()) = tokio::join!(lane, drain);
        ran.map_err(|e| anyhow::anyhow!("{e}"))?;
        anyhow::Ok(())
    })?;
    Ok(cancel.is_cancelled())
}

/// What the verdicts come to, per detector and mode, beside PRISM's verdict where scored
/// (JSON lines with `--json`); how many checks failed.
fn say_verdicts(
    args: &SelfDetectArgs,
    db: &crate::store::Db,
    run_id: &str,
    responses: &[crate::store::ResponseRecord],
) -> anyhow::Result<usize> {
    let store = db.read()?;
    // What the verdicts come to, per detector and mode, beside PRISM's verdict where scored.
    let scores: HashMap<u32, f64> = store
        .scores(Some(run_id))?
        .into_iter()
        .filter_map(|s| Some((s.job_idx, s.score?)))
        .collect();
    let jobs: HashSet<u32> = responses.iter().map(|r| r.job_idx).collect();
    // (checked, said false, unparsed, failed, scored wrong among said false, scored wrong)
    let mut by: BTreeMap<(String, &'static str), [usize; 6]> = BTreeMap::new();
    for c in store.answer_checks(run_id)? {
        if !jobs.contains(&c.job_idx) {
            continue;
        }
        let e = by.entry((c.detector.clone(), c.mode.as_str())).or_default();
        match detected(c.answer) {
            None => e[3] += 1,
            Some(d) => {
                e[0] += 1;
                e[1] += usize::from(d);
                e[2] += usize::from(c.answer == crate::store::Answer::Unparsed);
                if let Some(&s) = scores.get(&c.job_idx) {
                    let wrong = crate::detect::results::scored_wrong(s);
                    e[4] += usize::from(d && wrong);
                    e[5] += usize::from(wrong);
                }
            }
        }
    }
    let as_json = args.ask.json || !std::io::stdout().is_terminal();
    let mut text = format!(
        "\n{:<16} {:<7} {:>7} {:>11} {:>9} {:>7}  {}\n",
        "detector",
        "mode",
        "checked",
        "false info",
        "unparsed",
        "failed",
        "of PRISM's wrong answers"
    );
    let mut failed = 0;
    for ((detector, mode), e) in &by {
        failed += e[3];
        if as_json {
            crate::outln!(
                "{}",
                crate::text::json_for_terminal(
                    &json!({"event": "self_detect", "run_id": run_id, "detector": detector,
                            "mode": mode, "checked": e[0], "false_information": e[1],
                            "unparsed": e[2], "failed": e[3], "wrong_detected": e[4],
                            "wrong": e[5]})
                    .to_string()
                )
            );
        } else {
            text.push_str(&format!(
                "{:<16} {:<7} {:>7} {:>11} {:>9} {:>7}  {}\n",
                crate::text::truncate(detector, 16),
                mode,
                e[0],
                e[1],
                e[2],
                e[3],
                if e[5] > 0 {
                    format!("{} of {} said false", e[4], e[5])
                } else {
                    "(none scored wrong, or not scored)".into()
                }
            ));
        }
    }
    if !as_json {
        text.push_str("\nfalse info: said the answer contains false information (an unparsed reply counts, as METHODS.md §4 has it). prism signals scores the verdicts against PRISM's.\n");
        eprint!("{}", crate::text::sanitize(&text));
    }
    Ok(failed)
}
