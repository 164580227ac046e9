//! Building report rows from each source: a store run, official `summary.json` files, PRISM
//! `outputs/` directories, and reference CSVs of published figures.

use std::collections::BTreeMap;
use std::path::Path;

use anyhow::Context;
use serde_json::Value;

use super::{Example, Meta, Row, Source, Worst};
use crate::dataset::Dataset;
use crate::eval::metrics::{self, DimRate};
use crate::eval::summary::{Catalogue, category_rates};
use crate::store::Db;
use crate::taxonomy::Dimension;

/// How many of a model's worst sub-tasks a report shows.
pub const WORST: usize = 5;

fn clip(s: &str, n: usize) -> String {
    let mut out: String = s.chars().take(n).collect();
    if s.chars().count() > n {
        out.push('…');
    }
    out
}

/// A run with answers but no scores: the front-end says how to score it (with the options the
/// user gave, so the hint can be run as printed).
#[derive(Debug)]
pub struct NoScores(pub String);

impl std::fmt::Display for NoScores {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "run {} has no scores yet", self.0)
    }
}

impl std::error::Error for NoScores {}

/// The rows of a stored run (one per model, in the run's order of models) with their rates
/// and nothing else, from the run's summaries (kept as its scores landed): it costs the run's
/// sub-tasks, not its answers. A run without a score is [`NoScores`].
pub fn rates_of(
    db: &Db,
    run: &crate::store::RunRecord,
    ds: Option<&Dataset>,
) -> anyhow::Result<Vec<Row>> {
    rates_in(db, run, &ds.map(Catalogue::of).unwrap_or_default())
}

/// [`rates_of`] with the dataset's catalogue made once (a heatmap of many runs).
pub fn rates_in(
    db: &Db,
    run: &crate::store::RunRecord,
    cat: &Catalogue,
) -> anyhow::Result<Vec<Row>> {
    let summaries = db.run_summaries(&run.id)?;
    if summaries.iter().all(|t| t.rows == 0) {
        return Err(NoScores(run.id.clone()).into());
    }
    let mut models = model_summaries(&summaries, cat);
    // Those the run does not name come after those it does.
    let rank = |name: &str| {
        run.config
            .models
            .iter()
            .position(|m| m.name == name)
            .unwrap_or(usize::MAX)
    };
    models.sort_by_key(|s| rank(&s.model));
    Ok(models
        .iter()
        .map(|s| {
            Row::from_summary(
                s,
                Source::Run {
                    run_id: run.id.clone(),
                },
            )
        })
        .collect())
}

/// The rows of a stored run (one per model), with each model's worst sub-tasks and an example
/// failure from each, and the run's metadata.
pub fn from_store(db: &Db, run_id: &str, ds: Option<&Dataset>) -> anyhow::Result<(Vec<Row>, Meta)> {
    let store = db.read()?;
    let run = store
        .run(run_id)?
        .with_context(|| format!("no run {run_id} in the store"))?;
    let mut rows = Vec::new();
    for mut row in rates_of(db, &run, ds)? {
        let mut by_rate: Vec<(&String, f64)> = row
            .task_scores
            .iter()
            .map(|(t, s)| (t, 100.0 - s))
            .collect();
        by_rate.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(b.0)));
        for (task, rate) in by_rate.into_iter().take(WORST) {
            let example = store
                .worst_answer(run_id, &row.name, task)?
                .filter(|(s, _)| s.score.is_some_and(|v| v < 1.0))
                .map(|(s, text)| Example {
                    question: ds
                        .and_then(|d| d.item_by_id(&s.item_id))
                        .map(|i| clip(&i.question, 300))
                        .unwrap_or_default(),
                    answer: clip(text.as_deref().unwrap_or(""), 400),
                    score: s.score.unwrap_or(0.0),
                    detail: s.detail,
                    item_id: s.item_id,
                });
            row.worst.push(Worst {
                task: task.clone(),
                rate,
                example,
            });
        }
        rows.push(row);
    }
    let meta = Meta {
        run: Some(run.id.clone()),
        run_name: store.run_labels(&run.id)?.0,
        dataset: Some(run.dataset.clone()),
        date: Some(crate::store::format_time(run.created_at)),
        judges: store.judges(run_id)?,
        models: run
            .config
            .models
            .iter()
            // Provider, model id and the parameters set, in words ("openai {}" said nothing).
            .map(|m| (m.name.clone(), m.describe()))
            .collect(),
        samples: Some(run.config.samples),
        shots: Some(run.config.shots),
        run_settings: Some(run.config.describe()).filter(|s| !s.is_empty()),
        prism_version: env!("CARGO_PKG_VERSION").to_string(),
    };
    Ok((rows, meta))
}

/// A row from task scores (S by task id): the rates, categories and H-Score recomputed, so the
/// numbers always follow PRISM's rules whatever the file says.
fn from_task_scores(
    name: &str,
    task_scores: BTreeMap<String, f64>,
    source: Source,
    coverage: Option<&Value>,
) -> Row {
    let own = Catalogue {
        tasks: task_scores
            .keys()
            .filter_map(|t| {
                let mut p = t.split('-');
                let d: Dimension = p.next()?.parse().ok()?;
                let c = crate::taxonomy::category(d, p.next()?)?;
                Some((t.clone(), (d, c.code, 0)))
            })
            .collect(),
    };
    let (cat, expected) = match coverage {
        // Our own summaries say how many tasks each dimension of their dataset has.
        Some(cov) => {
            let mut expected = own.per_dimension();
            for d in Dimension::ALL {
                if let Some(of) = cov[d.code()]["of"].as_u64() {
                    expected[d.index()] = expected[d.index()].max(of as usize);
                }
            }
            (own, expected)
        }
        // Others are read against the official registry (plus any task it lacks): a summary
        // listing only some tasks is partial for every dimension it does not cover entirely.
        None => {
            let mut cat = Catalogue::official();
            for (t, v) in own.tasks {
                cat.tasks.entry(t).or_insert(v);
            }
            let expected = cat.per_dimension();
            (cat, expected)
        }
    };
    row_from_task_scores(name, task_scores, source, &cat, &expected)
}

/// A row from task scores, given which tasks exist (for categories) and how many tasks each
/// dimension has (for coverage).
pub fn row_from_task_scores(
    name: &str,
    task_scores: BTreeMap<String, f64>,
    source: Source,
    cat: &Catalogue,
    expected: &[usize; 4],
) -> Row {
    let rates = metrics::rates(&task_scores, Some(expected));
    Row {
        name: name.to_string(),
        source,
        dims: rates.dims,
        categories: category_rates(cat, &task_scores)
            .into_iter()
            .map(|c| c.1)
            .collect(),
        task_scores,
        worst: Vec::new(),
        baseline: None,
        pending: BTreeMap::new(),
    }
}

/// A row from an official `summary.json` (or ours).
/// Task scores that are not numbers are skipped and reported in `problems`.
pub fn from_summary_file(path: &Path, problems: &mut Vec<String>) -> anyhow::Result<Row> {
    let text =
        std::fs::read_to_string(path).with_context(|| format!("reading {}", path.display()))?;
    let v: Value =
        serde_json::from_str(&text).with_context(|| format!("{}: not JSON", path.display()))?;
    let name = v["model"]
        .as_str()
        .map(str::to_string)
        .or_else(|| {
            path.parent()
                .and_then(|p| p.file_name())
                .map(|n| n.to_string_lossy().into_owned())
        })
        .unwrap_or_else(|| path.display().to_string());
    let source = Source::File {
        path: path.display().to_string(),
    };
    let mut task_scores: BTreeMap<String, f64> = BTreeMap::new();
    for (k, s) in v["task_scores"].as_object().into_iter().flatten() {
        match s.as_f64() {
            Some(s) => {
                task_scores.insert(k.clone(), s);
            }
            None => problems.push(format!(
                "{}: task_scores.{k}: not a number ({s})",
                path.display()
            )),
        }
    }
    if !task_scores.is_empty() {
        return Ok(from_task_scores(
            &name,
            task_scores,
            source,
            v.get("coverage"),
        ));
    }
    // Only the four rates: take them as given.
    let rates = &v["dimension_hallucination_rates"];
    let dims = std::array::from_fn(|i| {
        rates[Dimension::ALL[i].code()]
            .as_f64()
            .map(|rate| DimRate {
                rate,
                tasks: 0,
                of: 0,
            })
    });
    if dims.iter().all(Option::is_none) {
        anyhow::bail!(
            "{}: task_scores: missing (and no dimension_hallucination_rates)",
            path.display()
        );
    }
    Ok(Row {
        name,
        source,
        dims,
        categories: vec![None; 15],
        task_scores,
        worst: Vec::new(),
        baseline: None,
        pending: BTreeMap::new(),
    })
}

/// Rows from a PRISM `outputs/` directory: per model its `summary.json`, else its
/// `scores/*.jsonl` aggregated.
pub fn from_outputs(dir: &Path, problems: &mut Vec<String>) -> anyhow::Result<Vec<Row>> {
    let mut models: Vec<_> = std::fs::read_dir(dir)
        .with_context(|| format!("reading {}", dir.display()))?
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.is_dir())
        .collect();
    models.sort();
    let mut rows = Vec::new();
    for m in models {
        let summary = m.join("summary.json");
        if summary.is_file() {
            match from_summary_file(&summary, problems) {
                Ok(r) => rows.push(r),
                Err(e) => problems.push(format!("{e:#}")),
            }
            continue;
        }
        let scores = m.join("scores");
        if !scores.is_dir() {
            continue;
        }
        let name = m
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        let mut per_task: BTreeMap<String, (f64, usize)> = BTreeMap::new();
        let mut files: Vec<_> = std::fs::read_dir(&scores)?
            .flatten()
            .map(|e| e.path())
            .collect();
        files.sort();
        for f in files
            .iter()
            .filter(|p| p.extension().is_some_and(|x| x == "jsonl"))
        {
            let task = f
                .file_stem()
                .map(|s| s.to_string_lossy().into_owned())
                .unwrap_or_default();
            let text = std::fs::read_to_string(f)?;
            for (i, line) in text
                .lines()
                .enumerate()
                .filter(|(_, l)| !l.trim().is_empty())
            {
                match serde_json::from_str::<Value>(line)
                    .ok()
                    .and_then(|v| v["score"].as_f64())
                {
                    Some(s) => {
                        let e = per_task.entry(task.clone()).or_default();
                        e.0 += s;
                        e.1 += 1;
                    }
                    None => problems.push(format!(
                        "{}:{}: score: missing or not a number",
                        f.display(),
                        i + 1
                    )),
                }
            }
        }
        let task_scores = per_task
            .into_iter()
            .map(|(t, (sum, n))| (t, 100.0 * sum / n as f64))
            .collect();
        rows.push(from_task_scores(
            &name,
            task_scores,
            Source::File {
                path: m.display().to_string(),
            },
            None,
        ));
    }
    Ok(rows)
}

/// Reference rows from a CSV of published figures: `model,...,KE,KM,RE,IFE[,h_score]` (the
/// paper's Table 2 has this shape). The H-Score is recomputed from the four rates; a published
/// one that disagrees by more than 0.02 is reported as a problem.
pub fn references_csv(path: &Path, problems: &mut Vec<String>) -> anyhow::Result<Vec<Row>> {
    let text =
        std::fs::read_to_string(path).with_context(|| format!("reading {}", path.display()))?;
    references_from_text(&text, path, problems)
}

/// The bundled reference rows: the paper's Table 2 (sample-data/references/paper-table2.csv).
pub fn bundled_references() -> Vec<Row> {
    let text = crate::dataset::SAMPLE_DATA
        .get_file("references/paper-table2.csv")
        .and_then(|f| f.contents_utf8())
        .unwrap_or("");
    references_from_text(text, Path::new("paper-table2.csv"), &mut Vec::new()).unwrap_or_default()
}

/// Reference rows from CSV text; `path` names it in problems and as the rows' source.
pub fn references_from_text(
    text: &str,
    path: &Path,
    problems: &mut Vec<String>,
) -> anyhow::Result<Vec<Row>> {
    let mut rd = csv::ReaderBuilder::new()
        .flexible(true)
        .from_reader(text.as_bytes());
    let headers = rd.headers()?.clone();
    let col = |name: &str| {
        headers
            .iter()
            .position(|h| h.trim().eq_ignore_ascii_case(name))
    };
    let model_col =
        col("model").with_context(|| format!("{}:1: model: no such column", path.display()))?;
    let dim_cols: Vec<usize> = Dimension::ALL
        .iter()
        .map(|d| {
            col(d.code()).with_context(|| format!("{}:1: {d}: no such column", path.display()))
        })
        .collect::<anyhow::Result<_>>()?;
    let h_col = col("h_score").or_else(|| col("H-Score"));
    let stem = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let mut rows = Vec::new();
    for (i, rec) in rd.records().enumerate() {
        let line = i + 2;
        let rec = match rec {
            Ok(r) => r,
            Err(e) => {
                problems.push(format!("{}:{line}: -: {e}", path.display()));
                continue;
            }
        };
        let name = rec.get(model_col).unwrap_or("").trim().to_string();
        let mut dims = [None; 4];
        let mut bad = false;
        for (k, &c) in dim_cols.iter().enumerate() {
            match rec.get(c).and_then(|v| v.trim().parse::<f64>().ok()) {
                Some(rate) => {
                    dims[k] = Some(DimRate {
                        rate,
                        tasks: 0,
                        of: 0,
                    })
                }
                None => {
                    problems.push(format!(
                        "{}:{line}: {}: not a number",
                        path.display(),
                        Dimension::ALL[k]
                    ));
                    bad = true;
                }
            }
        }
        if bad || name.is_empty() {
            continue;
        }
        let row = Row {
            name: name.clone(),
            source: Source::Reference {
                source: stem.clone(),
            },
            dims,
            categories: vec![None; 15],
            task_scores: BTreeMap::new(),
            worst: Vec::new(),
            baseline: None,
            pending: BTreeMap::new(),
        };
        if let Some(published) = h_col
            .and_then(|c| rec.get(c))
            .and_then(|v| v.trim().parse::<f64>().ok())
            && let Some(h) = row.h_score()
            && (h - published).abs() > 0.02
        {
            problems.push(format!(
                "{}:{line}: h_score: {published} published, {h:.2} from the four rates",
                path.display()
            ));
        }
        rows.push(row);
    }
    Ok(rows)
}

/// Attaches baselines: by model name from `baseline` rows, or, when `baseline` is a single row
/// of another name, that row for every row (compare everything against one model).
pub fn attach_baseline(rows: &mut [Row], baseline: &[Row]) {
    for r in rows.iter_mut() {
        let b = baseline
            .iter()
            .find(|b| b.name == r.name)
            .or_else(|| (baseline.len() == 1).then(|| &baseline[0]));
        r.baseline = b.map(|b| {
            Box::new(Row {
                baseline: None,
                ..b.clone()
            })
        });
    }
}

/// A run's rates per model from its summaries, as the aggregator makes them from points (the
/// same task S, the same rates, coverage and categories): `cat` says which tasks exist.
pub fn model_summaries(
    rows: &[crate::store::summaries::TaskSummary],
    cat: &crate::eval::summary::Catalogue,
) -> Vec<crate::eval::summary::ModelSummary> {
    let mut models: Vec<&str> = Vec::new();
    for r in rows {
        if !models.contains(&r.model.as_str()) {
            models.push(&r.model);
        }
    }
    models
        .into_iter()
        .map(|m| {
            let tasks = rows
                .iter()
                .filter(|r| r.model == m && r.scored + r.unscored > 0)
                .map(|r| {
                    (
                        r.task_id.clone(),
                        (r.sum, r.scored as usize, r.unscored as usize),
                    )
                })
                .collect();
            crate::eval::summary::ModelSummary::from_tasks(m, tasks, cat)
        })
        .collect()
}
