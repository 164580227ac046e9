//! Runs as things a user manages: what `prism runs` and the TUI's runs screen list about each
//! (name, tags, items, jobs done and failed, each model's settings and scores). One place, so
//! the two front-ends say the same.

use std::collections::HashMap;

use crate::eval::compare::{PairAnswers, SampleAnswer, Scored, Side};
use crate::store::{Db, RunRecord};

/// One run as `prism runs` lists it.
#[derive(Debug, Clone)]
pub struct Listed {
    pub run: RunRecord,
    pub name: Option<String>,
    pub tags: Vec<String>,
    pub items: usize,
    pub done: usize,
    pub failed: usize,
    /// Per model: its H-Score (when complete) and dimension rates.
    pub scores: Vec<(String, Option<f64>, [Option<f64>; 4])>,
    /// Answers (done or failed) without a score row, in a run that has scores: its rates
    /// leave them out (a process died between an answer and its judge's score).
    pub unscored_answers: usize,
    /// A shared run whose pull to this machine is not finished: its answers here, of all.
    pub pulling: Option<(usize, usize)>,
}

/// A run as listed: its labels, its counts (one indexed count of its jobs) and its rates from
/// its summaries; nothing of its answers is read.
pub(crate) fn listed(
    store: &Db,
    run: RunRecord,
    name: Option<String>,
    tags: Vec<String>,
) -> anyhow::Result<Listed> {
    let counts = store.job_counts(&run.id)?;
    let jobs = counts.done + counts.failed + counts.pending + counts.unknown;
    // A run asks every item of every model `samples` times, so its items are its jobs over
    // that; a run whose jobs do not divide so (written by hand) is counted item by item.
    let per_item = run.config.models.len() * run.config.samples.max(1) as usize;
    let items = if per_item > 0 && jobs % per_item == 0 {
        jobs / per_item
    } else {
        store.run_item_count(&run.id)?
    };
    let scores = match crate::report::build::rates_of(store, &run, None) {
        Ok(rows) => rows
            .iter()
            .map(|r| {
                (
                    r.name.clone(),
                    r.h_score(),
                    std::array::from_fn(|d| r.dims[d].map(|x| x.rate)),
                )
            })
            .collect(),
        Err(_) => Vec::new(),
    };
    // Score rows, from the summaries (no score is read): fewer than the answers means some
    // answers have none. A run with no score at all was not scored (`--no-score`).
    let rows: usize = store
        .run_summaries(&run.id)?
        .iter()
        .map(|s| s.rows as usize)
        .sum();
    let answered = counts.done + counts.failed;
    // (A run held in part has its summaries and counts as the shared store has them.)
    // Answers imported under another tool's tree never get a PRISM score.
    let foreign = run.config.source.as_ref().map_or(0, |s| s.foreign_answers);
    let unscored_answers = if rows > 0 {
        answered.saturating_sub(rows + foreign)
    } else {
        0
    };
    let pulling = store.pulled_in_part(&run.id)?;
    Ok(Listed {
        run,
        name,
        tags,
        items,
        done: counts.done,
        failed: counts.failed,
        scores,
        unscored_answers,
        pulling,
    })
}

/// A model's settings in a few words (see [`crate::store::ModelSnapshot::describe`]).
pub(crate) fn settings(m: &crate::store::ModelSnapshot) -> String {
    m.describe()
}

/// A page of runs (newest first, see [`Db::runs_page`]); with a model, its history
/// (oldest first).
pub(crate) fn list(db: &Db, f: &crate::store::RunFilter) -> anyhow::Result<Vec<Listed>> {
    let mut all = Vec::new();
    for (run, name, tags) in db.runs_page(f)? {
        all.push(listed(db, run, name, tags)?);
    }
    if f.model.is_some() {
        all.reverse();
    }
    Ok(all)
}

/// Two runs compared (2,000 resamples, seed 0, as `prism compare` by default), with the
/// models both runs have. A run with several models is compared on `model` when both have it,
/// else on the first model of the first run's that the second has too.
pub(crate) fn compare_runs(
    db: &Db,
    (a, b): (&str, &str),
    model: Option<&str>,
) -> anyhow::Result<(crate::eval::compare::Comparison, Vec<String>)> {
    let store = db.read()?;
    use crate::eval::compare::compare;
    let run = |id: &str| store.run(id)?.ok_or_else(|| anyhow::anyhow!("no run {id}"));
    let (ra, rb) = (run(a)?, run(b)?);
    let (ma, mb) = (run_models(db, &ra)?, run_models(db, &rb)?);
    let common: Vec<String> = ma.iter().filter(|m| mb.contains(m)).cloned().collect();
    // The model asked for; else each model both have in turn, the first with an item scored
    // on both sides (one model scored on no common item never hides another that is).
    let tries: Vec<(String, String)> = match model {
        Some(m) if common.iter().any(|c| c == m) => vec![(m.to_string(), m.to_string())],
        _ if !common.is_empty() => common.iter().map(|m| (m.clone(), m.clone())).collect(),
        _ if ma.len() == 1 && mb.len() == 1 => vec![(ma[0].clone(), mb[0].clone())],
        _ => anyhow::bail!(
            "{a} and {b} have no model in common: compare one model of each with prism compare {a}:MODEL {b}:MODEL"
        ),
    };
    let mut tried = Vec::new();
    for (ma, mb) in tries {
        let sa = Side {
            run_id: a.to_string(),
            model: ma,
        };
        let sb = Side {
            run_id: b.to_string(),
            model: mb,
        };
        let mut c = compare(
            (&sa.label(), &side_scores(db, &sa)?),
            (&sb.label(), &side_scores(db, &sb)?),
            2000,
            0,
        );
        c.sides = Some([sa.clone(), sb.clone()]);
        if c.paired > 0 {
            return Ok((c, common));
        }
        tried.push(format!("{} and {}", sa.label(), sb.label()));
    }
    anyhow::bail!("no item scored on both: {}", tried.join("; "))
}

/// Heatmap rows for stored runs, in the order given: a row per model of each run, named
/// `model @ run` (the run's name, else its id); the runs without a score yet come back apart.
pub(crate) fn heatmap_rows(
    db: &Db,
    runs: &[String],
    ds: &crate::dataset::Dataset,
) -> anyhow::Result<(Vec<crate::report::Row>, Vec<String>)> {
    let store = db.read()?;
    let (mut rows, mut unscored) = (Vec::new(), Vec::new());
    let cat = crate::eval::summary::Catalogue::of(ds);
    for id in runs {
        // Rates only (from the run's summaries): the heatmap shows no worst examples.
        let Some(run) = store.run(id)? else {
            continue;
        };
        match crate::report::build::rates_in(db, &run, &cat) {
            Ok(got) => {
                let label = store.run_labels(id)?.0.unwrap_or_else(|| id.clone());
                rows.extend(got.into_iter().map(|mut r| {
                    r.name = format!("{} @ {}", r.name, crate::text::one_line(&label));
                    r
                }));
            }
            Err(e) if e.is::<crate::report::build::NoScores>() => unscored.push(id.clone()),
            Err(e) => return Err(e),
        }
    }
    Ok((rows, unscored))
}

/// What each side of `sides` answered to `item_id`, with the scores.
pub(crate) fn pair_answers(
    db: &Db,
    item_id: &str,
    sides: &[crate::eval::compare::Side; 2],
) -> anyhow::Result<PairAnswers> {
    let store = db.read()?;
    let mut task_id = String::new();
    let mut out: [Vec<SampleAnswer>; 2] = Default::default();
    let scores = store.scores_for_item(item_id)?;
    for (k, side) in sides.iter().enumerate() {
        for r in store.responses_in_run(&side.run_id, item_id)? {
            if r.model != side.model {
                continue;
            }
            task_id.clone_from(&r.task_id);
            let score = scores
                .iter()
                .find(|s| s.run_id == side.run_id && s.model == side.model && s.sample == r.sample);
            out[k].push(SampleAnswer {
                sample: r.sample,
                failed: !r.is_ok(),
                text: match (&r.text, &r.error) {
                    (_, Some(e)) => e.clone(),
                    (Some(t), None) => t.clone(),
                    (None, None) => String::new(),
                },
                score: score.and_then(|s| s.score),
                detail: score.map(|s| s.detail.clone()).unwrap_or_default(),
            });
        }
        out[k].sort_by_key(|s| s.sample);
    }
    Ok(PairAnswers {
        item_id: item_id.to_string(),
        task_id,
        sides: out,
    })
}

/// H-Scores (0-100, lower is better) as block characters scaled to their own range.
pub(crate) fn sparkline(values: &[Option<f64>]) -> String {
    const BARS: [char; 8] = ['▁', '▂', '▃', '▄', '▅', '▆', '▇', '█'];
    let known: Vec<f64> = values.iter().flatten().copied().collect();
    let lo = known.iter().copied().fold(f64::INFINITY, f64::min);
    let hi = known.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    values
        .iter()
        .map(|v| match v {
            None => '·',
            Some(_) if hi - lo < 1e-9 => BARS[3],
            Some(x) => BARS[(((x - lo) / (hi - lo)) * 7.0).round() as usize],
        })
        .collect()
}

/// A side of a comparison: `RUN` or `RUN:MODEL`; a run with one model needs no model named.
pub fn resolve_side(db: &Db, spec: &str) -> anyhow::Result<Side> {
    let store = db.read()?;
    let (run_id, model) = match spec.split_once(':') {
        Some((r, m)) => (r, Some(m)),
        None => (spec, None),
    };
    let run = store
        .run(run_id)?
        .ok_or_else(|| anyhow::anyhow!("no run {run_id} in the store (prism runs lists them)"))?;
    let models = run_models(db, &run)?;
    let model = match model {
        Some(m) if models.iter().any(|x| x == m) => m.to_string(),
        Some(m) => anyhow::bail!(
            "run {run_id} has no model {m:?}; it has {}",
            models.join(", ")
        ),
        None if models.len() == 1 => models[0].clone(),
        None => anyhow::bail!(
            "run {run_id} has {} models ({}): name one as {run_id}:MODEL",
            models.len(),
            models.join(", ")
        ),
    };
    Ok(Side {
        run_id: run_id.to_string(),
        model,
    })
}

/// A run's models: as its config lists them, else (a run recorded without them) as its jobs
/// name them, in order.
pub fn run_models(db: &Db, run: &crate::store::RunRecord) -> anyhow::Result<Vec<String>> {
    let store = db.read()?;
    let mut models: Vec<String> = run.config.models.iter().map(|m| m.name.clone()).collect();
    if models.is_empty() {
        for (j, _) in store.jobs(&run.id)? {
            if !models.contains(&j.model) {
                models.push(j.model);
            }
        }
    }
    Ok(models)
}

/// Per item of one side: its task and mean score; items with an unscored sample are `None`.
pub fn side_scores(db: &Db, side: &Side) -> anyhow::Result<HashMap<String, Scored>> {
    let store = db.read()?;
    let mut acc = ScoredAcc::default();
    store.score_points(&side.run_id, |model, task, item, score| {
        if model == side.model {
            acc.add(task, item, score);
        }
    })?;
    let mut out = acc.finish();
    // Which judges each judged item's score stands on (a gate trusts only calibrated ones).
    for r in store.scores(Some(&side.run_id))? {
        let (Some(label), true) = (&r.judge, r.model == side.model) else {
            continue;
        };
        if let Some(s) = out.get_mut(&r.item_id) {
            for n in crate::review::judges::panel_names(label) {
                if !s.judges.iter().any(|j| j == n) {
                    s.judges.push(n.to_string());
                }
            }
        }
    }
    Ok(out)
}

/// The same as [`side_scores`], with each judged answer scored by `judge` alone (what most of
/// its askings said; unscored where it gave no verdict): how the side reads under that judge.
pub fn side_scores_under(
    db: &Db,
    side: &Side,
    judge: &str,
    verdicts: &[crate::store::JudgeVerdict],
) -> anyhow::Result<HashMap<String, Scored>> {
    let store = db.read()?;
    let mut askings: HashMap<u32, Vec<Option<f64>>> = HashMap::new();
    for v in verdicts
        .iter()
        .filter(|v| v.run_id == side.run_id && v.model == side.model && v.judge == judge)
    {
        askings.entry(v.job_idx).or_default().push(v.score);
    }
    let mut acc = ScoredAcc::default();
    for r in store.scores(Some(&side.run_id))? {
        if r.model != side.model {
            continue;
        }
        let score = match (&r.judge, askings.get(&r.job_idx)) {
            (Some(_), Some(a)) => crate::eval::panel::judge_score(a),
            _ => r.score,
        };
        acc.add(&r.task_id, &r.item_id, score);
    }
    Ok(acc.finish())
}

/// The comparison `c` of `a` and `b` under each judge alone, for the judges that gave
/// verdicts on both sides (`None` without one): the H-Score's and each dimension's B − A as
/// stored and under each judge, and whether the ranking holds whichever judge reads.
pub fn judge_sensitivity(
    db: &Db,
    a: &Side,
    b: &Side,
    c: &crate::eval::compare::Comparison,
) -> anyhow::Result<Option<crate::eval::compare::JudgeSensitivity>> {
    let store = db.read()?;
    use crate::eval::compare::{JudgeSensitivity, Level, SensitivityRow, compare};
    let mut verdicts = store.judge_verdicts(Some(&a.run_id))?;
    if b.run_id != a.run_id {
        verdicts.extend(store.judge_verdicts(Some(&b.run_id))?);
    }
    let judges_of = |s: &Side| -> std::collections::BTreeSet<&str> {
        verdicts
            .iter()
            .filter(|v| v.run_id == s.run_id && v.model == s.model)
            .map(|v| v.judge.as_str())
            .collect()
    };
    let judges: Vec<String> = judges_of(a)
        .intersection(&judges_of(b))
        .map(|j| j.to_string())
        .collect();
    if judges.is_empty() {
        return Ok(None);
    }
    let mut under = Vec::new();
    for j in &judges {
        let sa = side_scores_under(db, a, j, &verdicts)?;
        let sb = side_scores_under(db, b, j, &verdicts)?;
        under.push(compare((&c.a, &sa), (&c.b, &sb), 0, c.seed));
    }
    let rows = c
        .rows
        .iter()
        .filter(|r| r.level != Level::Task)
        .map(|r| {
            let per_judge = under
                .iter()
                .map(|u| {
                    u.rows
                        .iter()
                        .find(|x| x.level == r.level && x.name == r.name)
                        .and_then(|x| x.diff)
                })
                .collect();
            SensitivityRow::new(r.level, &r.name, r.diff, per_judge)
        })
        .collect();
    Ok(Some(JudgeSensitivity {
        paired: under.iter().map(|u| u.paired).collect(),
        judges,
        rows,
    }))
}

/// Samples' scores summed per item.
#[derive(Default)]
struct ScoredAcc(HashMap<String, ItemAcc>);

#[derive(Default)]
struct ItemAcc {
    task: String,
    sum: f64,
    n: u32,
    right: u32,
    unscored: bool,
}

impl ScoredAcc {
    fn add(&mut self, task: &str, item: &str, score: Option<f64>) {
        let e = self.0.entry(item.to_string()).or_insert_with(|| ItemAcc {
            task: task.to_string(),
            ..ItemAcc::default()
        });
        match score {
            Some(s) => {
                e.sum += s;
                e.n += 1;
                e.right += u32::from(s >= 0.5);
            }
            None => e.unscored = true,
        }
    }

    fn finish(self) -> HashMap<String, Scored> {
        self.0
            .into_iter()
            .map(|(item, a)| {
                let mean = (!a.unscored && a.n > 0).then(|| a.sum / a.n as f64);
                let scored = Scored {
                    task: a.task,
                    mean,
                    samples: a.n,
                    split: a.right > 0 && a.right < a.n,
                    judges: Vec::new(),
                };
                (item, scored)
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_sparkline_scales_to_its_own_range_and_marks_gaps() {
        assert_eq!(
            sparkline(&[Some(10.0), Some(20.0), None, Some(15.0)]),
            "▁█·▅"
        );
        assert_eq!(sparkline(&[Some(5.0), Some(5.0)]), "▄▄");
        assert_eq!(sparkline(&[None]), "·");
    }
}

#[cfg(test)]
mod compare_tests {
    use super::*;
    use crate::store::{
        JobRecord, ModelSnapshot, RunConfig, RunRecord, RunStatus, ScoreRecord, Store,
    };

    /// A run of two models on two items of a task; `scored` says which model's answers have a
    /// score.
    fn seed(s: &mut Store, id: &str, scored: &str) {
        let models = ["local", "smol"];
        let jobs: Vec<JobRecord> = (0..4)
            .map(|i| JobRecord {
                idx: i,
                item_id: format!("KE-FD-Myths-000{}", i % 2 + 1),
                task_id: "KE-FD-Myths".into(),
                model: models[(i / 2) as usize].into(),
                sample: 0,
            })
            .collect();
        s.create_run(
            &RunRecord {
                id: id.into(),
                created_at: 0,
                dataset: "<sample-data>".into(),
                config: RunConfig {
                    models: models.iter().map(|m| ModelSnapshot::imported(m)).collect(),
                    samples: 1,
                    ..RunConfig::default()
                },
                status: RunStatus::Finished,
            },
            &jobs,
        )
        .unwrap();
        let scores: Vec<ScoreRecord> = jobs
            .iter()
            .filter(|j| j.model == scored)
            .map(|j| ScoreRecord {
                run_id: id.into(),
                job_idx: j.idx,
                item_id: j.item_id.clone(),
                task_id: j.task_id.clone(),
                model: j.model.clone(),
                sample: 0,
                evaluator: "exact".into(),
                score: Some(1.0),
                detail: String::new(),
                judge: None,
                judge_reply: None,
                judge_attempts: 0,
                created_at: 0,
                rule_score: None,
            })
            .collect();
        s.save_scores(&scores).unwrap();
    }

    /// Two runs whose first common model has no item scored on both: the comparison goes on
    /// to the next model that has (issue 62: the runs screen stopped at "no item scored").
    #[test]
    fn a_comparison_finds_the_model_scored_on_both() {
        let mut s = Store::open_in_memory().unwrap();
        seed(&mut s, "ra", "smol");
        seed(&mut s, "rb", "smol");
        let s = Db::over(s);
        let (c, common) = compare_runs(&s, ("ra", "rb"), None).unwrap();
        assert_eq!(common, ["local", "smol"]);
        assert_eq!(c.a, "ra:smol");
        assert_eq!(c.paired, 2);
        // Asked for local by name: said, not silently another model.
        let e = compare_runs(&s, ("ra", "rb"), Some("local")).unwrap_err();
        assert!(
            e.to_string().contains("no item scored on both: ra:local"),
            "{e}"
        );
    }
}
