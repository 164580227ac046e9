//! `prism selfcheck`: self-detection on triples, headless, with the progress, JSON lines and
//! exit codes of `prism run`, ending with the metrics table.

use std::io::{IsTerminal, Write};
use std::path::PathBuf;

use anyhow::{Context, bail};
use indicatif::ProgressBar;
use serde_json::json;
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

use super::inputs::Filter;
use super::run::load_models;
use crate::config::Dirs;
use crate::engine::BackendFactory;
use crate::provider::{ModelConfig, Params};
use crate::selfcheck::results::{self, Row, Stored};
use crate::selfcheck::run::{self as engine, Options, SelfcheckEvent, Step};
use crate::store::Db;
use crate::store::SelfcheckRun;
use crate::store::lane_tables::LaneKind;

#[derive(Debug, clap::Args)]
pub struct SelfcheckArgs {
    /// Triples: a .jsonl file or a directory of them (ours, or LAMA T-REx); omit for the bundled
    /// sample triples.
    pub dataset: Option<PathBuf>,
    /// The models writing the sentences, comma-separated.
    #[arg(long, value_delimiter = ',')]
    pub models: Vec<String>,
    /// The models judging them (every generator's sentences go to each); default: each model
    /// judges its own.
    #[arg(long, value_delimiter = ',')]
    pub detector: Vec<String>,
    /// Examples in the true-sentence prompt (other triples, never the item).
    #[arg(long, default_value_t = 3)]
    pub shots: u32,
    /// A triples file whose records with a `sentence` are the pool the examples are drawn
    /// from (the paper draws 10 from 41 hand-written ones); default: the dataset's own.
    #[arg(long, value_name = "FILE")]
    pub examples: Option<PathBuf>,
    /// Attempts at a sentence that passes its check before the triple is set aside.
    #[arg(long, default_value_t = 3)]
    pub attempts: u32,
    /// Who writes the false sentence: the model (the method), or swap: the object replaced by
    /// another object of the same relation from the dataset (for models too small to do the
    /// edit; the detection half is then measured on sentences the model did not write).
    #[arg(long, value_enum, default_value_t = crate::store::FalseBy::Model)]
    pub false_by: crate::store::FalseBy,
    /// A JSON object mapping each relation to an area (`{"place of birth": "place", ...}`):
    /// recall is also given per area, the relations of an area pooled (the paper's Appendix C).
    #[arg(long, value_name = "FILE")]
    pub areas: Option<PathBuf>,
    /// A LAMA relations.jsonl naming T-REx predicate ids.
    #[arg(long)]
    pub relations: Option<PathBuf>,
    /// Only triples whose relation matches a glob or whose id is given; comma-separated.
    #[arg(long)]
    pub filter: Option<String>,
    /// At most this many triples (after the filter), taken in turn from each relation.
    #[arg(long)]
    pub limit: Option<usize>,
    /// Equal-size popularity bins for the recall/popularity correlation.
    #[arg(long, default_value_t = 20)]
    pub bins: u32,
    /// Generation temperature (default 0.7, over each model's own).
    #[arg(long)]
    pub temperature: Option<f64>,
    #[command(flatten)]
    pub lane: super::lane_flags::LaneFlags,
}

use super::background::{Task, calls_bar, lifecycle, tick};

/// What a self-detection task needs to run.
type Launch = (
    Options,
    BackendFactory,
    mpsc::UnboundedSender<SelfcheckEvent>,
    CancellationToken,
);

/// `--resume ID`: the stored run, answered by this machine's models of its models' names (those
/// named by `--models`, when given).
fn resume_task(
    args: &SelfcheckArgs,
    id: &str,
    dirs: &Dirs,
    db: &Db,
    (opts, factory, tx, cancel): Launch,
) -> anyhow::Result<(Task, SelfcheckRun)> {
    let store = db.read()?;
    let run = store
        .selfcheck_run(id)?
        .with_context(|| format!("no self-detection run {id} in {}", db.local().display()))?;
    let stored = Stored::load(db, id)?;
    // The run's models answer as this machine's models file names them (never as the store
    // recorded them); `--models` picks which of them.
    let configured = load_models(dirs, args.lane.models_file.as_deref())?;
    let named = if args.models.is_empty() {
        configured.models
    } else {
        configured.select(&args.models.join(","))?
    };
    let snaps: Vec<_> = run
        .config
        .generators
        .iter()
        .chain(&run.config.detectors)
        .cloned()
        .collect();
    let mut models: Vec<ModelConfig> = Vec::new();
    for m in &snaps {
        if !models.iter().any(|x| x.name == m.name) {
            models.push(crate::engine::models::model_named(
                &m.name, &named, &snaps, &run.id,
            )?);
        }
    }
    let handle = db.lane_handle(LaneKind::Selfcheck, &run.id)?;
    let r = run.clone();
    let c2 = cancel;
    let task: Task = Box::pin(async move {
        let lane = crate::engine::Lane {
            store: handle,
            factory,
            events: tx,
            cancel: c2,
        };
        engine::resume(lane, r, stored, models, opts).await
    });
    Ok((task, run))
}

/// A new run over the triples (the bundled ones without a dataset).
fn new_task(
    args: &SelfcheckArgs,
    dirs: &Dirs,
    db: &Db,
    (opts, factory, tx, cancel): Launch,
) -> anyhow::Result<(Task, SelfcheckRun)> {
    if args.models.is_empty() {
        bail!("--models is required (e.g. --models smol)");
    }
    let relations = match &args.relations {
        Some(p) => crate::dataset::triples::load_relations(p).map_err(anyhow::Error::msg)?,
        None => Default::default(),
    };
    let (loaded, dataset_ref) = super::inputs::side_set(
        args.dataset.as_deref(),
        |p| Ok(crate::dataset::triples::load_path(p, &relations)?),
        crate::dataset::triples::sample_triples,
        "<sample-triples>",
        |l| l.problems.iter().filter(|p| p.is_error()).count(),
        "triples",
    )?;
    let mut set = loaded.set;
    let pool = set.triples.clone();
    let examples = match &args.examples {
        Some(p) => {
            let ex = crate::dataset::triples::load_path(p, &relations)
                .with_context(|| format!("reading the examples file {}", p.display()))?;
            for pr in ex.problems.iter().filter(|p| p.is_error()) {
                crate::warn!("{pr}");
            }
            let with: Vec<_> = ex
                .set
                .triples
                .into_iter()
                .filter(|t| t.sentence.is_some())
                .collect();
            if with.is_empty() {
                bail!(
                    "{}: no record has a `sentence` to show as an example",
                    p.display()
                );
            }
            Some(with)
        }
        None => None,
    };
    if let Some(f) = Filter::new(args.filter.as_deref(), |p| set.by_id(p).is_some())? {
        set.triples.retain(|t| f.keeps(&t.id, &t.relation));
    }
    if let Some(n) = args.limit {
        set.spread(n);
    }
    set.regroup();
    if set.triples.is_empty() {
        bail!("no triples to run");
    }
    let configured = load_models(dirs, args.lane.models_file.as_deref())?;
    let generators = configured.select(&args.models.join(","))?;
    let detectors = if args.detector.is_empty() {
        Vec::new()
    } else {
        configured.select(&args.detector.join(","))?
    };
    let (run, items, models) = engine::plan(
        dataset_ref,
        &set,
        &pool,
        generators,
        detectors,
        engine::Plan {
            shots: args.shots,
            attempts: args.attempts,
            params: Params {
                temperature: args.temperature,
                ..Params::default()
            },
            filter: args.filter.clone(),
            bins: args.bins,
            examples,
            false_by: args.false_by,
        },
    );
    let handle = db.lane_handle(LaneKind::Selfcheck, &run.id)?;
    let r = run.clone();
    let c2 = cancel;
    let task: Task = Box::pin(async move {
        let lane = crate::engine::Lane {
            store: handle,
            factory,
            events: tx,
            cancel: c2,
        };
        engine::start(lane, r, items, models, opts).await
    });
    Ok((task, run))
}

/// `prism selfcheck`. Exit codes: 0 every call done, 2 some failed, 1 could not start, 130
/// interrupted (finish with --resume).
pub(crate) fn selfcheck(
    args: SelfcheckArgs,
    dirs: &Dirs,
    factory: BackendFactory,
) -> anyhow::Result<i32> {
    let db = super::lane_flags::open_db(args.lane.db.as_ref(), dirs)?;
    if let Some(id) = &args.lane.resume {
        db.pull_lane(LaneKind::Selfcheck, id)?;
    }
    // Read before any call, so a wrong file costs nothing.
    let areas = args.areas.as_deref().map(results::load_areas).transpose()?;
    let cancel = CancellationToken::new();
    let (tx, rx) = mpsc::unbounded_channel();
    let opts = Options {
        concurrency: args.lane.concurrency.max(1),
        use_cache: !args.lane.no_cache,
    };
    let (task, run) = match &args.lane.resume {
        Some(id) => resume_task(&args, id, dirs, &db, (opts, factory, tx, cancel.clone()))?,
        None => new_task(&args, dirs, &db, (opts, factory, tx, cancel.clone()))?,
    };
    let json_mode = args.lane.json || !std::io::stdout().is_terminal();
    let (summary, failures) =
        super::background::run_with_printer(task, print_events(rx, json_mode), &cancel)?;
    super::background::say_summary("self-detection", &summary, &failures);
    db.finish()?;
    let stored = Stored::load(&db, &run.id)?;
    let rows = results::rows(&run, &stored);
    let by_area: Vec<Vec<results::RelationRecall>> = areas
        .as_ref()
        .map(|a| rows.iter().map(|r| results::recall_by_area(r, a)).collect())
        .unwrap_or_default();
    if json_mode {
        let mut line = json!({"event": "results", "run_id": run.id, "rows": rows});
        if areas.is_some() {
            line["areas"] = json!(by_area);
        }
        crate::outln!("{}", crate::text::json_for_terminal(&line.to_string()));
    } else {
        eprint!("{}", crate::text::sanitize(&table(&rows)));
        for (r, areas) in rows.iter().zip(&by_area) {
            eprintln!(
                "recall by area, {} judged by {}:",
                crate::text::sanitize(&r.generator),
                crate::text::sanitize(&r.detector)
            );
            for a in areas {
                eprintln!(
                    "    {:<28} n={:<4} direct {:>6}  cot {:>6}",
                    crate::text::sanitize(&a.relation),
                    a.n,
                    pct(a.direct),
                    pct(a.cot)
                );
            }
        }
        crate::say!("{}", run.id);
    }
    Ok(super::background::exit_code(
        &summary,
        "selfcheck",
        &run.id,
        &db.shown(),
    ))
}

fn pct(v: Option<f64>) -> String {
    v.map_or("-".into(), |v| format!("{v:.1}"))
}

/// The metrics for the terminal: per generator x detector, direct and CoT side by side.
pub(crate) fn table(rows: &[Row]) -> String {
    let mut s = format!(
        "\n{:<24} {:>6} {:>5}  {:>6} {:>6} {:>6} {:>6} {:>5}  {:>6} {:>6} {:>6} {:>6} {:>5}\n",
        "generator / detector",
        "items",
        "aside",
        "R",
        "P",
        "F1",
        "A",
        "unp",
        "R cot",
        "P cot",
        "F1 cot",
        "A cot",
        "unp"
    );
    for r in rows {
        let name = if r.generator == r.detector {
            r.generator.clone()
        } else {
            format!("{} / {}", r.generator, r.detector)
        };
        s.push_str(&format!(
            "{:<24} {:>6} {:>5}  {:>6} {:>6} {:>6} {:>6} {:>5}  {:>6} {:>6} {:>6} {:>6} {:>5}\n",
            name,
            r.items,
            r.set_aside,
            pct(r.direct.scores.recall),
            pct(r.direct.scores.precision),
            pct(r.direct.scores.f1),
            pct(r.direct.scores.accuracy),
            r.direct.unparsed,
            pct(r.cot.scores.recall),
            pct(r.cot.scores.precision),
            pct(r.cot.scores.f1),
            pct(r.cot.scores.accuracy),
            r.cot.unparsed
        ));
        if r.direct.unparsed + r.cot.unparsed > 0 {
            let clean = |m: &crate::selfcheck::results::ModeScores| {
                format!(
                    "R {} P {} F1 {} A {}",
                    pct(m.parsed_only.recall),
                    pct(m.parsed_only.precision),
                    pct(m.parsed_only.f1),
                    pct(m.parsed_only.accuracy)
                )
            };
            s.push_str(&format!(
                "    unclean left out: direct {} ({} unclean) · cot {} ({} unclean)\n",
                clean(&r.direct),
                r.direct.unparsed,
                clean(&r.cot),
                r.cot.unparsed
            ));
        }
        for rel in &r.relations {
            s.push_str(&format!(
                "    recall {:<28} n={:<4} direct {:>6}  cot {:>6}\n",
                rel.relation,
                rel.n,
                pct(rel.direct),
                pct(rel.cot)
            ));
        }
        if let Some(p) = &r.popularity {
            let f = |v: Option<f64>| v.map_or("-".into(), |v| format!("{v:.3}"));
            s.push_str(&format!(
                "    recall vs popularity over {} bins: direct rho {} (p {}), cot rho {} (p {})\n",
                p.bins,
                f(p.rho_direct),
                f(p.p_direct),
                f(p.rho_cot),
                f(p.p_cot)
            ));
        }
    }
    s.push_str("(false sentences are the positives; an unclean reply (no clean yes/no, e.g. a CoT reply with no `Answer:` line) counts as detected, as METHODS.md says; `unp` says how many there were, and \"unclean left out\" gives the numbers without them)\n");
    s
}

async fn print_events(
    mut rx: mpsc::UnboundedReceiver<SelfcheckEvent>,
    json_mode: bool,
) -> Vec<String> {
    let mut failures = Vec::new();
    let mut bar: Option<ProgressBar> = None;
    let stdout = std::io::stdout();
    while let Some(ev) = rx.recv().await {
        let line = match &ev {
            SelfcheckEvent::Started {
                run_id,
                items,
                calls,
            } => {
                if !json_mode {
                    bar = Some(calls_bar(*calls));
                }
                json!({"event": "started", "run_id": run_id, "items": items.len(), "calls": calls})
            }
            SelfcheckEvent::Sending { item, step } => {
                if !json_mode {
                    continue;
                }
                let call = match step {
                    Step::Write { sentence, attempt } => {
                        json!({"step": "write", "sentence": sentence.as_str(), "attempt": attempt})
                    }
                    Step::Judge {
                        sentence,
                        detector,
                        mode,
                    } => {
                        json!({"step": "judge", "sentence": sentence.as_str(), "detector": detector, "mode": mode.as_str()})
                    }
                };
                json!({"event": "sending", "item": item, "call": call})
            }
            SelfcheckEvent::Item(it) => {
                tick(&bar);
                if let Some(e) = &it.error {
                    failures.push(format!("{} on {}: {e}", it.triple_id, it.generator));
                }
                json!({"event": "item", "item": it.idx, "triple": it.triple_id, "generator": it.generator,
                       "true_sentence": it.true_sentence, "false_sentence": it.false_sentence,
                       "set_aside": it.set_aside, "error": it.error})
            }
            SelfcheckEvent::Verdict(v) => {
                tick(&bar);
                if let Some(e) = &v.error {
                    failures.push(format!("item {} ({}): {e}", v.item, v.detector));
                }
                json!({"event": "verdict", "item": v.item, "sentence": v.sentence.as_str(),
                       "detector": v.detector, "mode": v.mode.as_str(), "answer": v.answer.as_str(),
                       "error": v.error})
            }
            SelfcheckEvent::Life(l) => lifecycle(&bar, l, "run_id", "the run goes on"),
        };
        if json_mode {
            let mut out = stdout.lock();
            let _ = writeln!(out, "{}", crate::text::json_for_terminal(&line.to_string()));
        }
    }
    failures
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::eval::binary::Scores;
    use crate::selfcheck::results::ModeScores;

    #[test]
    fn unclean_replies_are_counted_and_the_numbers_without_them_shown() {
        // A CoT mode whose every reply was unclean: all "detected" (recall 100), and no clean
        // reply to score without them.
        let row = Row {
            generator: "smol".into(),
            detector: "smol".into(),
            items: 2,
            direct: ModeScores {
                scores: Scores {
                    recall: Some(50.0),
                    ..Scores::default()
                },
                unparsed: 1,
                parsed_only: Scores {
                    recall: Some(100.0),
                    precision: Some(50.0),
                    ..Scores::default()
                },
                ..ModeScores::default()
            },
            cot: ModeScores {
                scores: Scores {
                    recall: Some(100.0),
                    precision: Some(50.0),
                    ..Scores::default()
                },
                unparsed: 4,
                ..ModeScores::default()
            },
            ..Row::default()
        };
        let t = table(&[row]);
        assert!(
            t.contains("unclean left out: direct R 100.0 P 50.0 F1 - A - (1 unclean) · cot R - P - F1 - A - (4 unclean)"),
            "{t}"
        );
        let clean = Row {
            generator: "g".into(),
            detector: "g".into(),
            ..Row::default()
        };
        assert!(!table(&[clean]).contains("unclean left out:"));
    }
}
