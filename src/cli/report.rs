//! `prism report`: the heatmap's numbers as a terminal table, CSV, Markdown, JSON or a
//! self-contained HTML file, from a store run, official summaries, outputs directories and
//! reference CSVs, optionally against a baseline.

use std::path::PathBuf;

use anyhow::{Context, bail};

use super::run::{dataset_path, default_db};
use crate::config::Dirs;
use crate::report::{Report, Row, build, html, render};

#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Format {
    Table,
    Csv,
    Md,
    Json,
    Html,
}

#[derive(Debug, clap::Args)]
pub struct ReportArgs {
    /// The HTML report's colours: a theme (bundled: dark, light, high-contrast; or a file in
    /// the config dir's themes/); default: the config's, else dark.
    #[arg(long)]
    pub theme: Option<String>,
    /// Store to read scored runs from (default: prism.db in the data dir; used unless only
    /// files are given), or a shared store (postgres://...), read through this machine's copy.
    #[arg(long)]
    pub db: Option<PathBuf>,
    /// A shared store's URL without its password, when `db` was one (read through this
    /// machine's store, which `db` then names).
    #[arg(skip)]
    pub shared: Option<String>,
    /// The run to report (default: the latest).
    #[arg(long)]
    pub run: Option<String>,
    /// Official summary.json files (each one row).
    #[arg(long, num_args = 1.., value_name = "FILE")]
    pub summary: Vec<PathBuf>,
    /// A PRISM outputs/ directory (a row per model: its summary.json, else its scores/).
    #[arg(long, value_name = "DIR")]
    pub prism_outputs: Option<PathBuf>,
    /// Published figures to place beside yours, marked as references (e.g. the paper's Table 2,
    /// shipped as sample-data/references/paper-table2.csv).
    #[arg(long, value_name = "CSV")]
    pub references: Vec<PathBuf>,
    /// Show each cell's change against an earlier run (models matched by name) or against one
    /// model of the report.
    #[arg(long, value_name = "RUN_ID|MODEL")]
    pub baseline: Option<String>,
    /// The dataset (for questions in examples and for coverage); default: the run's own.
    #[arg(long, value_name = "PRISM_DIR")]
    pub data: Option<PathBuf>,
    /// Detection runs (`prism detect`, `prism autohall`) whose tables to add; the detections of
    /// the reported run's answers are added without asking.
    #[arg(long, value_name = "DETECT_ID")]
    pub detect: Vec<String>,
    /// Self-detection runs (`prism selfcheck`) whose tables to add.
    #[arg(long, value_name = "RUN_ID")]
    pub selfcheck: Vec<String>,
    #[arg(long, value_enum, default_value_t = Format::Table)]
    pub format: Format,
    /// One item's page instead (HTML): its question and reference, and every stored answer of
    /// the run (--run, default the latest) with its score and, where the run stored them, its
    /// tokens shaded by probability (hover one for the alternatives).
    #[arg(long, value_name = "ITEM_ID")]
    pub item: Option<String>,
    /// Write to this file instead of stdout.
    #[arg(short = 'o', long)]
    pub output: Option<PathBuf>,
    /// Replace the output even when it is a SQLite database (the store is refused otherwise).
    #[arg(long)]
    pub force: bool,
}

/// The tables of the self-detection runs `ids`.
fn selfcheck_sections(
    db: &crate::store::Db,
    ids: &[String],
) -> anyhow::Result<Vec<crate::report::selfcheck::Section>> {
    let store = db.read()?;
    let mut out = Vec::new();
    for id in ids {
        let run = store
            .selfcheck_run(id)?
            .with_context(|| format!("no self-detection run {id} in the store"))?;
        let stored = crate::selfcheck::results::Stored::load(db, id)?;
        out.push(crate::report::selfcheck::Section {
            run_id: run.id.clone(),
            dataset: run.dataset.clone(),
            rows: crate::selfcheck::results::rows(&run, &stored),
        });
    }
    Ok(out)
}

/// The judges on trial for the reported run, when a panel's verdicts are stored.
fn judges_of(
    db: &crate::store::Db,
    run: &str,
    ds: Option<&crate::dataset::Dataset>,
) -> anyhow::Result<Option<crate::review::judges::Trial>> {
    let cat = ds
        .map(crate::eval::summary::Catalogue::of)
        .unwrap_or_default();
    let trial = crate::review::judges::of_store(
        db,
        Some(run),
        &cat,
        &crate::review::judges::Options::default(),
    )?;
    Ok(Some(trial).filter(|t| !t.judges.is_empty()))
}

/// `theme` colours the HTML heatmap (`--theme`, else the config's, else the default).
/// `--baseline B`: the rows of run B when the store has it, else the row of the model B.
fn baseline_rows(
    b: &str,
    db: Option<&crate::store::Db>,
    rows: &[Row],
    args: &ReportArgs,
    load_ds: &dyn Fn(&str) -> Option<crate::dataset::Dataset>,
) -> anyhow::Result<Vec<Row>> {
    if let Some(db) = db
        && let Some(run) = db.read()?.run(b)?
    {
        let ds = load_ds(&run.dataset);
        return Ok(build::from_store(db, &run.id, ds.as_ref())
            .map_err(|e| score_hint(e, args))?
            .0);
    }
    match rows.iter().find(|r| r.name == b) {
        Some(r) => Ok(vec![r.clone()]),
        None => bail!("--baseline {b}: no run or model of that name"),
    }
}

pub(crate) fn report(
    mut args: ReportArgs,
    dirs: &Dirs,
    theme: &crate::theme::Theme,
) -> anyhow::Result<i32> {
    let db = super::lane_flags::synced(args.db.as_ref(), dirs)?;
    if db.is_shared() {
        args.shared = Some(db.shown());
        args.db = Some(db.local().to_path_buf());
    }
    if let Some(item) = &args.item {
        return item_page(&args, item, dirs);
    }
    let mut problems = Vec::new();
    let mut rows: Vec<Row> = Vec::new();
    let mut meta = crate::report::Meta {
        prism_version: env!("CARGO_PKG_VERSION").to_string(),
        ..Default::default()
    };
    let files_only = args.db.is_none()
        && args.run.is_none()
        && args.detect.is_empty()
        && args.selfcheck.is_empty()
        && (!args.summary.is_empty()
            || args.prism_outputs.is_some()
            || !args.references.is_empty());
    if let Some(o) = args.output.as_deref().filter(|_| !args.force) {
        let store_path = args.db.clone().unwrap_or_else(|| default_db(dirs));
        super::output::refuse_stores(o, &[&store_path])?;
    }
    let db = if files_only {
        None
    } else {
        let db = crate::store::Db::file(&args.db.clone().unwrap_or_else(|| default_db(dirs)));
        db.read_existing("pass --db, or --summary/--prism-outputs")?;
        Some(db)
    };
    let load_ds = |r: &str| -> Option<crate::dataset::Dataset> {
        let p = args.data.as_deref().or(dataset_path(r));
        match p {
            Some(p) => crate::dataset::load_path(p).ok().map(|l| l.dataset),
            None => Some(crate::dataset::load_sample().dataset),
        }
    };
    let mut detections = crate::report::detection::Detections::default();
    let mut judges = None;
    let mut sentences = None;
    let mut source = Vec::new();
    if let Some(db) = &db {
        let store = db.read()?;
        // Only --detect or --selfcheck asked for: those tables alone.
        let detect_only =
            args.run.is_none() && (!args.detect.is_empty() || !args.selfcheck.is_empty());
        if !detect_only {
            let run = match &args.run {
                Some(id) => store
                    .run(id)?
                    .with_context(|| format!("no run {id} in the store"))?,
                None => store.latest_run()?.context("no runs in the store")?,
            };
            let ds = load_ds(&run.dataset);
            source = crate::report::source::tables(db, &run.id)?;
            if let Some((r, m)) =
                rates_unless_only_source(db, &run.id, ds.as_ref(), &source, &args)?
            {
                rows.extend(r);
                meta = m;
            }
            // Rates of a run held in part are the shared store's (its summaries); the tables
            // of answers only reach as far as its pull did: said, and a partial result.
            if let Some((here, all)) = store.pulled_in_part(&run.id)? {
                problems.push(format!(
                    "run {} is only in part on this machine: {here} of {all} answers (its pull from the shared store is not finished: report with --db URL to go on with it)",
                    run.id
                ));
            }
            judges = judges_of(db, &run.id, ds.as_ref())?;
            // How each judge's calibration stands, beside its numbers (what `prism gate` trusts).
            if let Some(t) = &judges {
                source.extend(super::calibration::table(db, t, ds.as_ref(), dirs)?);
            }
            (sentences, detections.answers) = answer_lenses(db, &run.id, ds.as_ref())?;
        }
        add_detections(db, &args.detect, &mut detections)?;
    }
    for f in &args.summary {
        rows.push(build::from_summary_file(f, &mut problems)?);
    }
    if let Some(dir) = &args.prism_outputs {
        rows.extend(build::from_outputs(dir, &mut problems)?);
    }
    for f in &args.references {
        rows.extend(build::references_csv(f, &mut problems)?);
    }
    let selfchecks = match &db {
        Some(db) => selfcheck_sections(db, &args.selfcheck)?,
        None => Vec::new(),
    };
    if rows.is_empty() && detections.is_empty() && selfchecks.is_empty() && source.is_empty() {
        bail!("nothing to report");
    }
    if let Some(b) = &args.baseline {
        let base = baseline_rows(b, db.as_ref(), &rows, &args, &load_ds)?;
        build::attach_baseline(&mut rows, &base);
    }
    for p in &problems {
        crate::warn!("{p}");
    }
    let heat = !rows.is_empty();
    let mut rep = Report::new(rows, meta);
    rep.detections = detections;
    rep.selfcheck = selfchecks;
    rep.judges = judges;
    rep.sentences = sentences;
    rep.source = source;
    let out = render_as(&rep, heat, args.format, theme)?;
    let store_path = args.db.clone().unwrap_or_else(|| default_db(dirs));
    let written =
        super::output::write_output(args.output.as_deref(), &[&store_path], args.force, |w| {
            Ok(w.write_all(out.as_bytes())?)
        })?;
    if let Some(p) = written {
        crate::warn!("wrote {}", p.display());
    }
    Ok(if problems.is_empty() { 0 } else { 2 })
}

/// `prism report --item ID`: one item's page, from a stored run.
fn item_page(args: &ReportArgs, item_id: &str, dirs: &Dirs) -> anyhow::Result<i32> {
    use crate::report::item::{AnswerView, ItemView, html};
    if !matches!(args.format, Format::Table | Format::Html) {
        anyhow::bail!("--item writes an HTML page: leave out --format, or pass --format html");
    }
    let path = args.db.clone().unwrap_or_else(|| default_db(dirs));
    let db = crate::store::Db::file(&path);
    let store = db.read_existing("run prism run first, or pass --db")?;
    let run = match &args.run {
        Some(id) => store
            .run(id)?
            .ok_or_else(|| anyhow::anyhow!("no run {id} in {}", path.display()))?,
        None => store
            .latest_run()?
            .ok_or_else(|| anyhow::anyhow!("no runs in {}", path.display()))?,
    };
    let mut responses: Vec<_> = store
        .responses(&run.id)?
        .into_iter()
        .filter(|r| r.item_id == item_id)
        .collect();
    if responses.is_empty() {
        anyhow::bail!("run {} has no answer to item {item_id:?}", run.id);
    }
    responses.sort_by(|a, b| (&a.model, a.sample).cmp(&(&b.model, b.sample)));
    let jobs: std::collections::HashSet<u32> = responses.iter().map(|r| r.job_idx).collect();
    let mut tokens: std::collections::HashMap<u32, _> = store
        .logprobs(&run.id)?
        .into_iter()
        .filter(|(j, _)| jobs.contains(j))
        .collect();
    let scores: std::collections::HashMap<u32, (f64, String)> = store
        .scores(Some(&run.id))?
        .into_iter()
        .filter_map(|s| Some((s.job_idx, (s.score?, s.evaluator))))
        .collect();
    // The question and reference from the run's dataset, when it is at hand.
    let ds = super::run::open_dataset(args.data.as_deref().or(dataset_path(&run.dataset)))
        .ok()
        .map(|(d, _)| d);
    let item = ds.as_ref().and_then(|d| d.item_by_id(item_id));
    let view = ItemView {
        run_id: run.id.clone(),
        item_id: item_id.to_string(),
        task_id: responses[0].task_id.clone(),
        question: item
            .map(crate::prompt::format_question)
            .unwrap_or_else(|| "(the run's dataset is not at hand: pass --data)".into()),
        reference: item.and_then(|i| i.answer.as_deref().map(str::to_string)),
        answers: responses
            .iter()
            .map(|r| {
                // Tokens only when they spell the stored answer (what was scored).
                let blob = r.logprobs.as_deref();
                let (tokens, tokens_note) = crate::eval::whitebox::shown_tokens(
                    tokens.remove(&r.job_idx),
                    blob.and_then(crate::store::logprobs::note),
                    r.text.as_deref().unwrap_or(""),
                );
                AnswerView {
                    model: r.model.clone(),
                    sample: r.sample,
                    text: r.text.clone(),
                    error: r.error.clone(),
                    score: scores.get(&r.job_idx).cloned(),
                    tokens,
                    tokens_note,
                }
            })
            .collect(),
    };
    let out = html(&view);
    let written = super::output::write_output(args.output.as_deref(), &[&path], args.force, |w| {
        Ok(w.write_all(out.as_bytes())?)
    })?;
    if let Some(p) = written {
        crate::warn!("wrote {}", p.display());
    }
    Ok(0)
}

/// The report in `format`: the heatmap's tables when there are rows (`heat`), then the
/// detection and self-detection sections.
fn render_as(
    rep: &Report,
    heat: bool,
    format: Format,
    theme: &crate::theme::Theme,
) -> anyhow::Result<String> {
    let det = &rep.detections;
    let mut sc = crate::report::selfcheck::tables(&rep.selfcheck);
    let mut shaded = crate::report::sentences::tables(rep.sentences.as_ref());
    shaded.extend(rep.source.iter().cloned());
    use crate::report::detection as dt;
    use crate::report::tables as tb;
    Ok(match format {
        // A table is for the terminal: outside strings in it are sanitized.
        Format::Table => {
            let mut s = if heat {
                render::table(rep)
            } else {
                String::new()
            };
            s.push_str(&dt::table(det));
            sc.extend(shaded);
            s.push_str(&tb::text(&sc));
            crate::text::sanitize(&s).into_owned()
        }
        Format::Csv => {
            let mut s = if heat {
                render::csv(rep)
            } else {
                String::new()
            };
            for part in [
                if det.is_empty() {
                    String::new()
                } else {
                    dt::csv(det)
                },
                tb::csv(&sc),
                tb::csv(&shaded),
            ] {
                if part.is_empty() {
                    continue;
                }
                if !s.is_empty() {
                    s.push('\n');
                }
                s.push_str(&part);
            }
            s
        }
        Format::Md => {
            let mut s = if heat {
                render::markdown(rep)
            } else {
                String::new()
            };
            s.push_str(&dt::markdown(det));
            sc.extend(shaded);
            s.push_str(&tb::markdown(&sc));
            s
        }
        Format::Json => {
            let mut v = if heat {
                render::json(rep)
            } else {
                serde_json::json!({})
            };
            if !det.is_empty() {
                v["detection"] = dt::json(det);
            }
            if !rep.selfcheck.is_empty() {
                v["selfcheck"] = crate::report::selfcheck::json(&rep.selfcheck);
            }
            if let Some(t) = &rep.judges {
                v["judges"] = serde_json::to_value(t)?;
            }
            if let Some(t) = &rep.sentences {
                v["sentences"] = serde_json::to_value(t)?;
            }
            let (cal, src): (Vec<_>, Vec<_>) = rep
                .source
                .iter()
                .cloned()
                .partition(|t| t.id == "judge_calibration");
            if !src.is_empty() {
                v["source"] = crate::report::tables::json(&src);
            }
            if !cal.is_empty() {
                v["calibration"] = crate::report::tables::json(&cal);
            }
            crate::text::json_for_terminal(&serde_json::to_string_pretty(&v)?).into_owned() + "\n"
        }
        Format::Html => {
            let mut s = html::html(rep, theme);
            let mut extra = String::new();
            if !det.is_empty() {
                extra.push_str(&dt::html(det));
            }
            if !sc.is_empty() {
                extra.push_str("<h2>Self-detection</h2>\n");
                extra.push_str(&tb::html(&sc));
            }
            if let Some(t) = &rep.judges {
                extra.push_str(&crate::report::judges::html(t));
            }
            if let Some(t) = &rep.sentences {
                extra.push_str(&crate::report::sentences::html(t));
            }
            if !rep.source.is_empty() {
                extra.push_str("<h2>The tool's own scores, the judges' calibrations</h2>\n");
                extra.push_str(&tb::html(&rep.source));
            }
            if let Some(at) = s.rfind("</body>") {
                s.insert_str(at, &extra);
            }
            s
        }
    })
}

/// The tables of the detection runs asked for with `--detect`: AutoHall's for claims runs, and
/// for answer runs (when the run's own are not there already) how the flags agree with PRISM.
fn add_detections(
    db: &crate::store::Db,
    ids: &[String],
    detections: &mut crate::report::detection::Detections,
) -> anyhow::Result<()> {
    let store = db.read()?;
    for id in ids {
        let d = store
            .detect_run(id)?
            .with_context(|| format!("no detection run {id} in the store"))?;
        let stored = crate::detect::stored::Stored::load(db, id)?;
        match d.kind {
            crate::store::DetectKind::Claims => {
                detections
                    .claims
                    .push(crate::report::detection::ClaimsSection {
                        detect_id: d.id.clone(),
                        dataset: d.dataset.clone(),
                        tables: crate::detect::results::claims_report(
                            &stored,
                            d.config.k,
                            d.config.seed,
                        ),
                    });
            }
            crate::store::DetectKind::Answers => {
                // This run's verdicts, against the scores of the answers it tested.
                let all = crate::detect::results::answer_flags(db)?;
                let mine: Vec<_> = all
                    .into_iter()
                    .filter(|f| {
                        stored.targets.iter().any(|t| {
                            t.source_run.as_deref() == Some(f.source_run.as_str())
                                && t.source_job == Some(f.source_job)
                        })
                    })
                    .collect();
                if detections.answers.is_empty() {
                    detections.answers = crate::detect::results::agreement(&mine);
                }
            }
        }
    }
    Ok(())
}

/// A run that is not scored yet gets the command that scores it, with the `--db` given here.
/// Where in the run's answers its sentences are least backed (with a dataset), and how its
/// answers' self-contradiction flags agree with PRISM's verdicts.
fn answer_lenses(
    db: &crate::store::Db,
    run: &str,
    ds: Option<&crate::dataset::Dataset>,
) -> anyhow::Result<(
    Option<crate::report::sentences::Section>,
    Vec<crate::detect::results::Agreement>,
)> {
    let sentences = match ds {
        Some(ds) => crate::report::sentences::of_run(
            db,
            run,
            ds,
            Some(crate::report::sentences::WORST),
            &crate::sentences::support_records(db)?,
        )?,
        None => None,
    };
    let flags: Vec<_> = crate::detect::results::answer_flags(db)?
        .into_iter()
        .filter(|f| f.source_run == run)
        .collect();
    Ok((sentences, crate::detect::results::agreement(&flags)))
}

/// The run's rates; for a run imported from another tool that PRISM's rules have not scored
/// yet, none (its tool's own scores are the report), said.
fn rates_unless_only_source(
    db: &crate::store::Db,
    run: &str,
    ds: Option<&crate::dataset::Dataset>,
    source: &[crate::report::tables::Table],
    args: &ReportArgs,
) -> anyhow::Result<Option<(Vec<crate::report::Row>, crate::report::Meta)>> {
    match build::from_store(db, run, ds) {
        Ok(x) => Ok(Some(x)),
        Err(e) if !source.is_empty() && e.is::<build::NoScores>() => {
            crate::warn!(
                "note: {e}: the tool's own scores only (prism score --run {run} scores the release's items by PRISM's rules)"
            );
            Ok(None)
        }
        Err(e) => Err(score_hint(e, args)),
    }
}

fn score_hint(e: anyhow::Error, args: &ReportArgs) -> anyhow::Error {
    match e.downcast_ref::<build::NoScores>() {
        Some(ns) => {
            let cmd = format!("prism score --run {}", crate::text::shell_quote(&ns.0));
            let quote = |d: &PathBuf| crate::text::shell_quote(&d.display().to_string());
            let hint = match (&args.shared, &args.db) {
                // The URL is shown without its password: the user gives the one they used.
                (Some(shown), _) => {
                    format!("run `{cmd} --db URL` first, URL being the shared store {shown}")
                }
                (None, Some(d)) => format!("run `{cmd} --db {}` first", quote(d)),
                (None, None) => format!("run `{cmd}` first"),
            };
            anyhow::anyhow!("{ns} ({hint})")
        }
        None => e,
    }
}
