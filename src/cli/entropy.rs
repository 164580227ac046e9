//! `prism entropy [RUN] --judge MODEL`: semantic entropy over the answers an item already has
//! (a run made with `--samples N`, or a detection run's answer and samples): the judge clusters
//! them by two-way entailment (only the verdicts not stored yet are asked), then each group's
//! meanings, discrete semantic entropy and, where the answers' tokens were stored, the
//! probability-weighted form. `prism signals` then scores it against PRISM's verdict.

use std::io::IsTerminal;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use anyhow::{Context, bail};
use clap::Args;
use serde_json::json;

use super::run::{dataset_path, load_models, open_dataset};
use crate::config::Dirs;
use crate::detect::semantic::{self, EntropyEvent, Group, Known, members};
use crate::engine::BackendFactory;
use crate::store::lane_tables::{self, LaneKind};

#[derive(Debug, Args)]
pub struct EntropyArgs {
    /// A run made with --samples N (N ≥ 2), or a detection run (default: the latest run).
    pub run: Option<String>,
    /// The model asked whether one answer entails another.
    #[arg(long)]
    pub judge: String,
    /// Only this many groups (items × models), in order.
    #[arg(long)]
    pub limit: Option<usize>,
    /// The run's dataset, when it has moved (the questions come from it).
    #[arg(long)]
    pub dataset: Option<PathBuf>,
    #[command(flatten)]
    pub ask: super::lane_flags::AskFlags,
}

/// The groups of `id` (a detection run or a run), or why there are none.
pub(crate) fn groups_of(
    db: &crate::store::Db,
    id: &str,
    dataset: Option<&Path>,
) -> anyhow::Result<Vec<Group>> {
    let store = db.read()?;
    if let Some(d) = store.detect_run(id)? {
        let stored = crate::detect::run::Stored::load(db, id)?;
        let groups = semantic::detection_groups(id, d.config.k.max(1), &stored);
        if groups.is_empty() {
            bail!(
                "detection run {id} has no answer with all its samples yet (finish it with --resume)"
            );
        }
        return Ok(groups);
    }
    let run = store
        .run(id)?
        .with_context(|| format!("no run or detection run {id} in the store"))?;
    let (ds, _) = open_dataset(dataset.or(dataset_path(&run.dataset)))
        .with_context(|| format!("the dataset of run {id} (its questions)"))?;
    let groups = semantic::run_groups(db, id, &ds)?;
    if groups.is_empty() {
        bail!(
            "run {id} has no item with two answers or more from one model: make one with prism run --samples 5, or sample answers with prism detect --run {id} and pass the detection run"
        );
    }
    Ok(groups)
}

pub(crate) fn entropy(
    args: EntropyArgs,
    dirs: &Dirs,
    factory: BackendFactory,
) -> anyhow::Result<i32> {
    let db = super::lane_flags::open_db(args.ask.db.as_ref(), dirs)?;
    let mut named_run = args.run.clone();
    if db.is_shared() {
        // A run's samples, or a detection run's sampled answers.
        let id = match db.pull_run(args.run.as_deref()) {
            Ok(id) => id,
            Err(e) => match args.run.as_deref() {
                Some(id) if db.pull_lane(LaneKind::Detect, id).is_ok() => Some(id.to_string()),
                _ => return Err(e),
            },
        };
        db.pull_table(&lane_tables::ENTAILMENTS, None)?;
        named_run = id;
    }
    let store = db.read_existing("run prism run --samples 5 first")?;
    let id = match &named_run {
        Some(id) => id.clone(),
        None => store.latest_run()?.context("no runs in the store")?.id,
    };
    let mut groups = groups_of(&db, &id, args.dataset.as_deref())?;
    if let Some(n) = args.limit {
        groups.truncate(n);
    }
    let judge = load_models(dirs, args.ask.models_file.as_deref())?
        .select(&args.judge)?
        .into_iter()
        .next()
        .context("--judge names no model")?;
    let known = Known::of(&store.entailments(Some(&judge.name))?);
    drop(store);
    let todo = groups.iter().filter(|g| known.entropy(g).is_none()).count();
    crate::warn!(
        "{} groups of answers in {id}: {} clustered from stored verdicts, {todo} to cluster with {}",
        groups.len(),
        groups.len() - todo,
        judge.name
    );
    let groups = Arc::new(groups);
    let interrupted = todo > 0 && cluster(&args, &db, &id, (&groups, known, &judge), factory)?;
    // Every verdict went to a shared store as it was saved; what is left goes now.
    db.finish()?;
    let known = Known::of(&db.read()?.entailments(Some(&judge.name))?);
    let as_json = args.ask.json || !std::io::stdout().is_terminal();
    let mut unfinished = 0;
    let mut text = format!(
        "\n{:<16} {:<24} {:>7} {:>8} {:>8} {:>8}\n",
        "model", "item", "answers", "meanings", "SE", "SE (p)"
    );
    for g in groups.iter() {
        let got = known.entropy(g);
        if got.is_none() {
            unfinished += 1;
        }
        if as_json {
            let clusters = got.as_ref().map(|(ids, _)| members(ids));
            crate::outln!(
                "{}",
                crate::text::json_for_terminal(
                    &json!({"event": "entropy", "group": g, "judge": judge.name,
                            "entropy": got.as_ref().map(|(_, e)| e), "clusters": clusters})
                    .to_string()
                )
            );
        } else {
            let f = |v: Option<f64>| v.map_or("-".to_string(), |v| format!("{v:.3}"));
            text.push_str(&format!(
                "{:<16} {:<24} {:>7} {:>8} {:>8} {:>8}\n",
                crate::text::truncate(&g.model, 16),
                crate::text::truncate(&g.item_id, 24),
                g.answers.len(),
                got.as_ref()
                    .map_or("-".to_string(), |(_, e)| e.clusters.to_string()),
                f(got.as_ref().map(|(_, e)| e.discrete)),
                f(got.as_ref().and_then(|(_, e)| e.weighted)),
            ));
        }
    }
    if !as_json {
        text.push_str(&format!(
            "\nSE: discrete semantic entropy over the meanings (nats); SE (p): weighted by the answers' token probabilities (when stored).\n{}",
            if unfinished > 0 {
                format!("{unfinished} groups not clustered (a failed call or an interrupt): run it again\n")
            } else {
                String::new()
            }
        ));
        eprint!("{}", crate::text::sanitize(&text));
    }
    Ok(if interrupted {
        130
    } else if unfinished > 0 {
        2
    } else {
        0
    })
}

/// Clusters `groups` with `judge`, asking only what `known` lacks; each verdict saved (and
/// pushed to a shared store) as it arrives; whether it was interrupted.
fn cluster(
    args: &EntropyArgs,
    db: &crate::store::Db,
    id: &str,
    (groups, known, judge): (&Arc<Vec<Group>>, Known, &crate::provider::ModelConfig),
    factory: BackendFactory,
) -> anyhow::Result<bool> {
    // (verdicts read, unreadable, failed calls)
    let mut calls = (0, 0, 0);
    let interrupted = super::lane_flags::run_records(
        db,
        &args.ask,
        (
            &format!("entropy:{}:{id}", judge.name),
            "entailment verdict(s)",
        ),
        (judge, &factory),
        (
            |caller| semantic::GroupClustering {
                groups: groups.clone(),
                known: std::sync::Mutex::new(known),
                caller,
            },
            (0..groups.len()).collect(),
        ),
        |ev| {
            if let EntropyEvent::Saved(r) = ev {
                match (&r.relation, &r.error) {
                    (Some(_), _) => calls.0 += 1,
                    (None, None) => calls.1 += 1,
                    (None, Some(_)) => calls.2 += 1,
                }
            }
        },
    )?;
    crate::warn!(
        "judge {}: {} verdicts read, {} unreadable (counted as not entailing), {} failed calls{}",
        judge.name,
        calls.0,
        calls.1,
        calls.2,
        if interrupted {
            " (interrupted: run it again for the rest)"
        } else {
            ""
        }
    );
    Ok(interrupted)
}
