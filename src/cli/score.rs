//! `prism score`: score stored responses (after changing the judge or the rules, without calling
//! the models again), or score an official `outputs/<model>/responses/` directory and write its
//! `scores/*.jsonl` and `summary.json`.

use std::collections::{BTreeMap, HashMap};
use std::io::{IsTerminal, Write};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use anyhow::{Context, bail};
use serde_json::{Value, json};
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

use super::exchange;
use super::run::{dataset_path, default_db, load_models, open_dataset};
use crate::config::{Config, Dirs};
use crate::dataset::Dataset;
use crate::engine::score::{Panel, ScoreCounts, ToScore, score_all};
use crate::engine::{BackendFactory, Caller};
use crate::eval::panel::PanelRule;
use crate::eval::summary::{self, Aggregator, Catalogue, ModelSummary, Point};
use crate::store::{ScoreRecord, StoreHandle};
use crate::taxonomy::Dimension;

#[derive(Debug, clap::Args)]
pub struct ScoreArgs {
    /// Store with the responses to score (default: prism.db in the data dir), or a shared
    /// store (postgres://...): the run is scored here and every score pushed there.
    #[arg(long)]
    pub db: Option<PathBuf>,
    /// The run to score (default: the latest).
    #[arg(long)]
    pub run: Option<String>,
    /// The judge model (a name from the models file; default: `judges`, else `judge`, in
    /// config.toml), or a panel of judges `a,b,c`: each is asked, every verdict is kept, and
    /// the score follows --judge-rule. Without one, items that need a judge are left
    /// unscored, never scored as wrong.
    #[arg(long, value_delimiter = ',', value_name = "MODEL[,MODEL...]")]
    pub judge: Vec<String>,
    /// How a panel's verdicts become the score: what most judges say (an even split is left
    /// unscored, and said), what all say (else unscored), or the first judge's (the others
    /// only recorded, to compare).
    #[arg(long, value_enum, default_value_t = PanelRule::Majority)]
    pub judge_rule: PanelRule,
    /// Ask each judge this many times (at its temperature; each asking cached apart): every
    /// verdict is kept, a judge says what most of its askings say, and `prism judges` shows
    /// how often a judge's verdict flips.
    #[arg(long, default_value_t = 1, value_parser = clap::value_parser!(u32).range(1..=20))]
    pub judge_repeats: u32,
    /// How the semantic-equivalence judge's reply is read: as PRISM reads it (`YES` anywhere
    /// means the same meaning: PRISM-exact scores), or strictly (exactly one of the words yes /
    /// no, else asked again, then the fallback). Either way a reply holding both, neither, or
    /// a YES only inside a word is marked in the verdict; `prism judges --reading strict`
    /// compares the two on people's labels without asking again.
    #[arg(long, value_enum, default_value_t = crate::eval::judge::Reading::Prism)]
    pub judge_reading: crate::eval::judge::Reading,
    /// Ask the judge with your own wording of one of PRISM's judges instead of the dataset's:
    /// `[JUDGE=]FILE`, JUDGE one of semantic_equivalence (the default), math_equivalence,
    /// code_rubric, claim_audit; the file's placeholders are {question}, {model_answer},
    /// {reference}, {test_input}, {test_output}. The judge's verdicts and scores are kept as
    /// `<model>~<file stem>`: another judge, calibrated apart, never PRISM's. Try wordings
    /// side by side first with `prism judges --try-template`.
    #[arg(long, value_name = "[JUDGE=]FILE")]
    pub judge_template: Vec<String>,
    /// The dataset (a PRISM release dir); default: the run's own, or the sample data.
    #[arg(long, value_name = "PRISM_DIR")]
    pub data: Option<PathBuf>,
    /// Score OUT_DIR/<model>/responses/*.jsonl instead of a store; writes scores/ and summary.json.
    #[arg(long, value_name = "OUT_DIR", requires = "model")]
    pub prism_outputs: Option<PathBuf>,
    /// With --prism-outputs: the model directory to score.
    #[arg(long)]
    pub model: Option<String>,
    #[arg(long)]
    pub models_file: Option<PathBuf>,
    /// Judge requests in flight at once.
    #[arg(long, default_value_t = 16)]
    pub concurrency: usize,
    /// Ask the judge again instead of reusing cached judge replies.
    #[arg(long)]
    pub no_cache: bool,
    /// Print the summary as JSON on stdout.
    #[arg(long)]
    pub json: bool,
}

pub(crate) fn score(args: ScoreArgs, dirs: &Dirs, factory: BackendFactory) -> anyhow::Result<i32> {
    let (config, _) = Config::load(&dirs.config_file());
    let judges = judge_names(&args.judge, &config)?;
    let wording = super::judge_templates::Wording::load(&args.judge_template)?;
    if judges.is_empty() && wording.label.is_some() {
        bail!("--judge-template: no judge to ask with it (pass --judge MODEL)");
    }
    let rt = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()?;
    match &args.prism_outputs {
        Some(out) => score_outputs(&args, out, &judges, &wording, dirs, factory, &rt),
        None => score_store(&args, &judges, &wording, dirs, factory, &rt),
    }
}

/// The judges named: `--judge`, else the config's `judges`, else its `judge`; each once.
fn judge_names(flag: &[String], config: &Config) -> anyhow::Result<Vec<String>> {
    let named: Vec<String> = if !flag.is_empty() {
        flag.to_vec()
    } else if let Some(list) = config.judges.clone().filter(|l| !l.is_empty()) {
        list
    } else {
        config.judge.clone().into_iter().collect()
    };
    let mut out: Vec<String> = Vec::new();
    for n in named {
        let n = n.trim().to_string();
        if n.is_empty() {
            bail!("--judge: an empty judge name (write --judge a,b,c)");
        }
        if out.contains(&n) {
            bail!("--judge: {n:?} is named twice (ask one judge again with --judge-repeats)");
        }
        out.push(n);
    }
    Ok(out)
}

/// The panel of the judges named (none: no judging), each with its limits, retries and cache.
fn judge_panel(
    names: &[String],
    wording: &super::judge_templates::Wording,
    args: &ScoreArgs,
    dirs: &Dirs,
    factory: &BackendFactory,
    store: Option<StoreHandle>,
) -> anyhow::Result<Option<Panel>> {
    if names.is_empty() {
        return Ok(None);
    }
    let models = load_models(dirs, args.models_file.as_deref())?;
    let mut judges = Vec::with_capacity(names.len());
    for name in names {
        let Some(cfg) = models.get(name) else {
            let known: Vec<&str> = models.models.iter().map(|m| m.name.as_str()).collect();
            bail!(
                "no model {name:?} to judge with (configured: {})",
                known.join(", ")
            );
        };
        judges.push(Arc::new(Caller::new(
            &wording.judge(cfg),
            factory,
            store.clone(),
            !args.no_cache,
            CancellationToken::new(),
        )?));
    }
    Ok(Some(Panel {
        judges,
        rule: args.judge_rule,
        repeats: args.judge_repeats,
        reading: args.judge_reading,
    }))
}

/// Runs the scoring with a progress line for judge calls on a terminal.
fn drive(
    rt: &tokio::runtime::Runtime,
    ds: Arc<Dataset>,
    inputs: Vec<ToScore>,
    panel: Option<Panel>,
    concurrency: usize,
    store: Option<StoreHandle>,
) -> anyhow::Result<(ScoreCounts, Vec<ScoreRecord>)> {
    let total = inputs.len();
    let (tx, mut rx) = mpsc::unbounded_channel();
    rt.block_on(async move {
        let task = tokio::spawn(score_all(
            ds,
            inputs,
            crate::engine::score::Judging {
                panel,
                concurrency,
                keep_scores: true,
            },
            store,
            tx,
        ));
        let tty = std::io::stderr().is_terminal();
        let mut got = Vec::with_capacity(total);
        while let Some(r) = rx.recv().await {
            got.push(r);
            if tty && (got.len() % 25 == 0 || got.len() == total) {
                eprint!("\rscored {}/{total}", got.len());
            }
        }
        if tty && total > 0 {
            eprintln!();
        }
        let counts = task.await??;
        Ok((counts, got))
    })
}

fn score_store(
    args: &ScoreArgs,
    judges: &[String],
    wording: &super::judge_templates::Wording,
    dirs: &Dirs,
    factory: BackendFactory,
    rt: &tokio::runtime::Runtime,
) -> anyhow::Result<i32> {
    // On a shared store: the run is scored in this machine's store, each score pushed to the
    // shared store as it is saved.
    let db = super::lane_flags::open_db(args.db.as_ref(), dirs)?;
    let named = db.pull_run(args.run.as_deref())?;
    let store = db.read_existing("run `prism run` first, or pass --db")?;
    let shown = db.local().display().to_string();
    let run = match &named {
        Some(id) => store
            .run(id)?
            .ok_or_else(|| anyhow::anyhow!("no run {id} in {shown}"))?,
        None => store
            .latest_run()?
            .ok_or_else(|| anyhow::anyhow!("no runs in {shown}"))?,
    };
    let (ds, _) = open_dataset(args.data.as_deref().or(dataset_path(&run.dataset)))?;
    let ds = wording.apply(ds);
    wording.keep(&db)?;
    if let Some(note) = crate::eval::summary::registry_note(&ds) {
        crate::warn!("note: {note}");
    }
    let mut inputs = Vec::new();
    let mut missing = 0;
    let mut foreign = 0;
    for r in store.responses(&run.id)? {
        let Some(item) = ds.index_of(&r.item_id) else {
            if crate::foreign::place::is_foreign_task(&r.task_id) {
                foreign += 1;
            } else {
                missing += 1;
            }
            continue;
        };
        inputs.push(ToScore::from_record(item, &r));
    }
    if missing > 0 {
        crate::warn!("warning: {missing} responses name items not in the dataset; skipped");
    }
    if foreign > 0 {
        crate::warn!(
            "note: {foreign} imported answers are not items of this release: they keep the tool's own scores (prism report --run {})",
            run.id
        );
    }
    let handle = db.records_handle(&format!("score:{}", run.id), "score(s)")?;
    let panel = judge_panel(judges, wording, args, dirs, &factory, Some(handle.clone()))?;
    let shown = panel.as_ref().map(Panel::name);
    let judge = shown.as_deref();
    let (counts, _) = drive(
        rt,
        ds.clone(),
        inputs,
        panel,
        args.concurrency,
        Some(handle),
    )?;
    // Every score went to a shared store as it was saved; what is left goes now.
    db.finish()?;
    // Summaries from what the store now holds (the source of truth).
    let scores = db.read()?.scores(Some(&run.id))?;
    let models = summarise(&ds, &scores);
    let report = json!({
        "run": run.id,
        "dataset": run.dataset,
        "judge": judge,
        "counts": counts,
        "models": models.iter().map(|m| m.to_json(judge)).collect::<Vec<_>>(),
        "dimension_correlations": correlations_json(&models),
        "judge_human_agreement": agreement_json(&ds, &scores),
    });
    if args.json {
        crate::outln!(
            "{}",
            crate::text::json_for_terminal(&serde_json::to_string_pretty(&report)?)
        );
    } else {
        crate::outp!(
            "{}",
            crate::text::sanitize(&table(&run.id, &counts, &models))
        );
    }
    Ok(0)
}

pub(crate) fn summarise(ds: &Dataset, scores: &[ScoreRecord]) -> Vec<ModelSummary> {
    let mut agg = Aggregator::default();
    for s in scores {
        agg.add(Point {
            model: &s.model,
            task: &s.task_id,
            item: &s.item_id,
            score: s.score,
        });
    }
    agg.finish(&Catalogue::of(ds))
}

fn correlations_json(models: &[ModelSummary]) -> Value {
    if models.len() < 3 {
        return Value::Null;
    }
    let m = summary::dimension_correlations(models);
    let mut out = serde_json::Map::new();
    for (i, a) in Dimension::ALL.iter().enumerate() {
        let row: serde_json::Map<String, Value> = Dimension::ALL
            .iter()
            .enumerate()
            .map(|(j, b)| (b.code().to_string(), m[i][j].into()))
            .collect();
        out.insert(a.code().into(), row.into());
    }
    out.into()
}

/// Judge-versus-human agreement over judged scores whose item carries a `human_score`.
fn agreement_json(ds: &Dataset, scores: &[ScoreRecord]) -> Value {
    let human: HashMap<&str, f64> = ds
        .items
        .iter()
        .filter_map(|it| {
            let v = it.extra.iter().find(|(k, _)| &**k == "human_score")?;
            Some((&*it.id, v.1.as_f64()?))
        })
        .collect();
    let pairs: Vec<(f64, f64)> = scores
        .iter()
        .filter(|s| s.judge.is_some())
        .filter_map(|s| Some((s.score?, *human.get(s.item_id.as_str())?)))
        .collect();
    match summary::agreement(&pairs) {
        Some((mad, sd)) => json!({"pairs": pairs.len(), "mad": mad, "sd": sd}),
        None => Value::Null,
    }
}

/// The terminal table: one row per model, partial rates marked `*` with n/N tasks below.
pub(crate) fn table(run: &str, c: &ScoreCounts, models: &[ModelSummary]) -> String {
    let mut s = format!(
        "run {run}: {} scored ({} by rule, {} by judge), {} unscored",
        c.scored, c.by_rule, c.by_judge, c.unscored
    );
    if c.judge_errors > 0 {
        s.push_str(&format!(", {} judge errors", c.judge_errors));
    }
    if c.fallbacks > 0 {
        s.push_str(&format!(", {} judge fallbacks", c.fallbacks));
    }
    if c.panel_undecided > 0 {
        s.push_str(&format!(
            ", {} left unscored by the judges' rule (--judge-rule)",
            c.panel_undecided
        ));
    }
    s.push('\n');
    if c.unscored > c.judge_errors + c.panel_undecided {
        s.push_str("  (items needing a judge are left unscored: pass --judge MODEL)\n");
    }
    let w = models
        .iter()
        .map(|m| m.model.len())
        .max()
        .unwrap_or(5)
        .max(5);
    s.push_str(&format!(
        "\n{:<w$}  {:>8} {:>8} {:>8} {:>8} {:>8}\n",
        "model", "KE", "KM", "RE", "IFE", "H-Score"
    ));
    let mut partial = false;
    for m in models {
        s.push_str(&format!("{:<w$} ", m.model));
        for d in Dimension::ALL {
            let cell = match m.rates.get(d) {
                Some(r) if r.complete() => format!("{:.2}", r.rate),
                Some(r) => {
                    partial = true;
                    format!("{:.2}*", r.rate)
                }
                None => "-".into(),
            };
            s.push_str(&format!(" {cell:>8}"));
        }
        let h = m.h_score().map_or("-".into(), |h| format!("{h:.2}"));
        s.push_str(&format!(" {h:>8}\n"));
    }
    if partial {
        s.push_str("\n* partial: ");
        let m = &models[0];
        let cov: Vec<String> = Dimension::ALL
            .iter()
            .filter_map(|d| {
                m.rates
                    .get(*d)
                    .map(|r| format!("{d} {} of {} tasks", r.tasks, r.of))
            })
            .collect();
        s.push_str(&cov.join(", "));
        s.push_str(&format!(" ({})\n", m.model));
    }
    s
}

fn score_outputs(
    args: &ScoreArgs,
    out: &Path,
    judges: &[String],
    wording: &super::judge_templates::Wording,
    dirs: &Dirs,
    factory: BackendFactory,
    rt: &tokio::runtime::Runtime,
) -> anyhow::Result<i32> {
    let model = args.model.as_deref().expect("clap requires --model");
    let (ds, _) = open_dataset(args.data.as_deref())?;
    let ds = wording.apply(ds);
    if let Some(note) = crate::eval::summary::registry_note(&ds) {
        crate::warn!("note: {note}");
    }
    let mdir = out.join(exchange::dir_name(model));
    let mut problems = Vec::new();
    let read = exchange::read_responses(&mdir.join("responses"), &mut problems)?;
    // Items of an answered task with no line: scored as failed (0, in the denominator), as
    // PRISM's evaluation scores them; said below, never dropped.
    let missing = read.missing(&ds);
    let absent = missing.iter().map(|(task, id)| {
        let failed = crate::engine::score::Answer::Failed(exchange::no_response(task));
        (task.clone(), id.clone(), failed)
    });
    // An official outputs file: its text as PRISM reads it (`ERROR: ...` is a failure).
    let read_rows = read.rows.into_iter().map(|r| {
        let text = crate::engine::score::Answer::Text(r.response);
        (r.task, r.id, text)
    });
    let mut inputs = Vec::new();
    for (n, (task, id, response)) in read_rows.chain(absent).enumerate() {
        let Some(item) = ds.index_of(&id) else {
            problems.push(format!("{task}: id: {id:?} is not in the dataset"));
            continue;
        };
        inputs.push(ToScore {
            run_id: String::new(),
            job_idx: n as u32,
            item,
            model: model.to_string(),
            sample: 0,
            response: Some(response),
            stored_earlier: false,
        });
    }
    for p in &problems {
        crate::warn!("{p}");
    }
    // Judge replies are cached in the default store, so scoring again costs no judge calls.
    let cache = crate::store::Db::file(&default_db(dirs)).writer().ok();
    let panel = judge_panel(judges, wording, args, dirs, &factory, cache)?;
    let shown = panel.as_ref().map(Panel::name);
    let judge = shown.as_deref();
    let (counts, mut scores) = drive(rt, ds.clone(), inputs, panel, args.concurrency, None)?;
    scores.sort_by_key(|s| s.job_idx);
    write_scores(&mdir.join("scores"), &scores)?;
    let models = summarise(&ds, &scores);
    let summary = models
        .first()
        .map(|m| m.to_json(judge))
        .unwrap_or_else(|| json!({"model": model, "judge": judge, "task_scores": {}}));
    let mut summary = summary;
    if !missing.is_empty() {
        // Beside the official fields: how many items had no response, and which.
        summary["missing_responses"] = json!({
            "count": missing.len(),
            "items": missing.iter().map(|(_, id)| id).collect::<Vec<_>>(),
        });
        crate::warn!(
            "{} item(s) of the answered tasks have no response: scored 0 (failed) and counted, as PRISM scores them: {}",
            missing.len(),
            crate::text::truncate(
                &missing
                    .iter()
                    .map(|(_, id)| id.as_str())
                    .collect::<Vec<_>>()
                    .join(", "),
                200
            )
        );
    }
    let path = mdir.join("summary.json");
    std::fs::write(&path, serde_json::to_string_pretty(&summary)? + "\n")
        .with_context(|| format!("writing {}", path.display()))?;
    let unscored: Vec<&ScoreRecord> = scores.iter().filter(|s| s.score.is_none()).collect();
    if !unscored.is_empty() {
        crate::warn!(
            "{} items left unscored (they need a judge):",
            unscored.len()
        );
        for s in unscored.iter().take(20) {
            crate::warn!("  {} ({})", s.item_id, s.detail);
        }
        if unscored.len() > 20 {
            crate::warn!("  ... and {} more (see summary.json)", unscored.len() - 20);
        }
    }
    if args.json {
        crate::outln!(
            "{}",
            crate::text::json_for_terminal(&serde_json::to_string_pretty(&summary)?)
        );
    } else {
        crate::outp!("{}", crate::text::sanitize(&table(model, &counts, &models)));
        crate::warn!(
            "wrote {} and {}",
            mdir.join("scores").display(),
            path.display()
        );
    }
    Ok(if problems.is_empty() { 0 } else { 2 })
}

/// `scores/<task_id>.jsonl`: `{"id", "task", "score", ...detail}` per scored item.
fn write_scores(dir: &Path, scores: &[ScoreRecord]) -> anyhow::Result<()> {
    std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
    let mut by_task: BTreeMap<&str, Vec<&ScoreRecord>> = BTreeMap::new();
    for s in scores.iter().filter(|s| s.score.is_some()) {
        by_task.entry(&s.task_id).or_default().push(s);
    }
    for (task, rows) in by_task {
        // Task ids come from the dataset: a file name, never a path (`../../x` stays in `dir`).
        let path = dir.join(format!("{}.jsonl", exchange::dir_name(task)));
        let mut f = std::io::BufWriter::new(
            std::fs::File::create(&path).with_context(|| format!("writing {}", path.display()))?,
        );
        for s in rows {
            let mut v = json!({
                "id": s.item_id,
                "task": s.task_id,
                "score": s.score,
                "evaluator": s.evaluator,
                "detail": s.detail,
            });
            if let Some(j) = &s.judge {
                v["judge"] = j.clone().into();
                v["judge_reply"] = s.judge_reply.clone().into();
                v["judge_attempts"] = s.judge_attempts.into();
            }
            writeln!(f, "{v}")?;
        }
        f.flush()?;
    }
    Ok(())
}
