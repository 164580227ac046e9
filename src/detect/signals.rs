//! Which signal predicts which kind of hallucination: each zero-resource signal an answer has
//! (the self-contradiction conflict rate of its newest complete detection; the semantic entropy
//! of its group of sampled answers, once a judge clustered them; the white-box scores of its
//! token log-probabilities, when they were stored) against
//! PRISM's verdict on the same answer (hallucinated: scored below half credit), per model and
//! per dimension, category or sub-task, with AUROC, AUPRC, their bootstrap intervals and the
//! prediction-rejection ratio (`eval::signals`).

use std::collections::BTreeMap;

use serde::Serialize;

use super::results::{AnswerFlag, scored_wrong};
use crate::eval::signals::{SignalScore, evaluate};

/// How answers are grouped into cells.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum By {
    Dimension,
    Category,
    Task,
}

/// The cell of a sub-task id under `by` (`KE-FD-DefAn`: `KE`, `KE-FD`, `KE-FD-DefAn`).
fn cell(task: &str, by: By) -> String {
    let parts: Vec<&str> = task.split('-').collect();
    match by {
        By::Dimension => parts[0].to_string(),
        By::Category => parts[..parts.len().min(2)].join("-"),
        By::Task => task.to_string(),
    }
}

/// One row: a signal's quality for one model in one cell (`all`: every answer of the model).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SignalRow {
    pub signal: String,
    pub model: String,
    pub cell: String,
    #[serde(flatten)]
    pub score: SignalScore,
}

/// One answer's value of one signal (higher = more suspect), beside PRISM's verdict on it.
#[derive(Debug, Clone, PartialEq)]
pub struct Point {
    pub signal: &'static str,
    pub model: String,
    pub task: String,
    pub value: f64,
    pub hallucinated: bool,
}

/// The signal names, in the order rows are listed.
pub const SELF_CONTRADICTION: &str = "self-contradiction";
pub const LOW_MEAN_LOGPROB: &str = "-mean logprob";
pub const LOW_MIN_LOGPROB: &str = "-min logprob";
pub const MEAN_ENTROPY: &str = "mean entropy";
pub const SEMANTIC_ENTROPY: &str = "semantic entropy";
pub const SEMANTIC_ENTROPY_P: &str = "semantic entropy (p)";
pub const SELF_DETECTION: &str = "self-detection";
pub const SELF_DETECTION_COT: &str = "self-detection (CoT)";

/// Self-contradiction: the conflict rate of each answer's newest complete detection.
pub fn contradiction_points(flags: &[AnswerFlag]) -> Vec<Point> {
    flags
        .iter()
        .filter_map(|f| {
            Some(Point {
                signal: SELF_CONTRADICTION,
                model: f.model.clone(),
                task: f.task_id.clone(),
                value: f.outcome.rate()?,
                hallucinated: scored_wrong(f.score?),
            })
        })
        .collect()
}

/// The white-box signals of every scored answer with token log-probabilities, in `runs`:
/// the negated mean and minimum token log-probability (perplexity ranks as the mean does, so
/// it is not a signal of its own) and the mean entropy.
pub fn whitebox_points(db: &crate::store::Db, runs: &[String]) -> crate::store::Result<Vec<Point>> {
    let store = db.read()?;
    let mut out = Vec::new();
    for run in runs {
        let tokens = store.logprobs(run)?;
        if tokens.is_empty() {
            continue;
        }
        let scores = scored(db, run)?;
        for (job, toks) in tokens {
            let (Some((score, task, model)), Some(w)) =
                (scores.get(&job), crate::eval::whitebox::scores(&toks))
            else {
                continue;
            };
            let mut push = |signal, value| {
                out.push(Point {
                    signal,
                    model: model.clone(),
                    task: task.clone(),
                    value,
                    hallucinated: scored_wrong(*score),
                })
            };
            push(LOW_MEAN_LOGPROB, -w.mean_logprob);
            push(LOW_MIN_LOGPROB, -w.min_logprob);
            if let Some(e) = w.mean_entropy {
                push(MEAN_ENTROPY, e);
            }
        }
    }
    Ok(out)
}

/// Semantic entropy of each scored answer whose group of answers one of `judges` clustered
/// completely (the first such judge, in the order given): the discrete form, and the
/// probability-weighted one where the answers' tokens were stored. An answer in several groups
/// (its run's samples and a detection's) counts once, with the group of more answers.
/// `score_of(run, job)`: PRISM's score of an answer.
pub fn semantic_points(
    groups: &[super::semantic::Group],
    judges: &[super::semantic::Known],
    score_of: impl Fn(&str, u32) -> Option<f64>,
) -> Vec<Point> {
    let mut best: BTreeMap<
        (String, u32),
        (
            usize,
            crate::eval::semantic::Entropy,
            &super::semantic::Group,
        ),
    > = BTreeMap::new();
    for g in groups {
        let (Some(run), Some(job)) = (&g.source_run, g.source_job) else {
            continue;
        };
        let Some((_, e)) = judges.iter().find_map(|k| k.entropy(g)) else {
            continue;
        };
        let key = (run.clone(), job);
        if best.get(&key).is_none_or(|(n, _, _)| *n < g.answers.len()) {
            best.insert(key, (g.answers.len(), e, g));
        }
    }
    let mut out = Vec::new();
    for ((run, job), (_, e, g)) in best {
        let Some(score) = score_of(&run, job) else {
            continue;
        };
        let mut push = |signal, value| {
            out.push(Point {
                signal,
                model: g.model.clone(),
                task: g.task_id.clone(),
                value,
                hallucinated: scored_wrong(score),
            })
        };
        push(SEMANTIC_ENTROPY, e.discrete);
        if let Some(w) = e.weighted {
            push(SEMANTIC_ENTROPY_P, w);
        }
    }
    out
}

/// Every signal point of the answers of `runs`: self-contradiction (their detections),
/// semantic entropy (their runs' samples and their detections, where a judge clustered them)
/// and the white-box scores (where their tokens were stored). `dataset_of` gives a run's
/// dataset, for the questions of its samples (`None`: its sample groups are left out).
pub fn gather(
    db: &crate::store::Db,
    runs: &[String],
    dataset_of: &dyn Fn(
        &crate::store::RunRecord,
    ) -> Option<std::sync::Arc<crate::dataset::Dataset>>,
) -> crate::store::Result<Vec<Point>> {
    let flags: Vec<AnswerFlag> = super::results::answer_flags(db)?
        .into_iter()
        .filter(|f| runs.contains(&f.source_run))
        .collect();
    let mut points = contradiction_points(&flags);
    points.extend(semantic(db, runs, dataset_of)?);
    points.extend(self_detection_points(db, runs)?);
    points.extend(whitebox_points(db, runs)?);
    Ok(points)
}

/// Self-detection's verdict on each scored answer of `runs` (`prism self-detect`): 1 when the
/// detector said it contains false information (an unparsed reply counts, as METHODS.md §4 has
/// it), 0 when it said no; failed calls are left out. With several detectors on one answer,
/// each verdict is a point.
pub fn self_detection_points(
    db: &crate::store::Db,
    runs: &[String],
) -> crate::store::Result<Vec<Point>> {
    let store = db.read()?;
    let mut out = Vec::new();
    for run in runs {
        let checks = store.answer_checks(run)?;
        if checks.is_empty() {
            continue;
        }
        let scores = scored(db, run)?;
        for c in checks {
            let (Some((score, task, model)), Some(d)) =
                (scores.get(&c.job_idx), c.answer.detected())
            else {
                continue;
            };
            out.push(Point {
                signal: match c.mode {
                    crate::store::Mode::Direct => SELF_DETECTION,
                    crate::store::Mode::Cot => SELF_DETECTION_COT,
                },
                model: model.clone(),
                task: task.clone(),
                value: f64::from(u8::from(d)),
                hallucinated: scored_wrong(*score),
            });
        }
    }
    Ok(out)
}

/// Semantic entropy of the answers of `runs` whose groups a judge clustered (`prism entropy`):
/// the runs' own samples and the detections of their answers.
fn semantic(
    db: &crate::store::Db,
    runs: &[String],
    dataset_of: &dyn Fn(
        &crate::store::RunRecord,
    ) -> Option<std::sync::Arc<crate::dataset::Dataset>>,
) -> crate::store::Result<Vec<Point>> {
    let store = db.read()?;
    use super::semantic::{Known, detection_groups, run_groups};
    let judges: Vec<Known> = store
        .entailment_judges()?
        .iter()
        .map(|j| store.entailments(Some(j)).map(|r| Known::of(&r)))
        .collect::<Result<_, _>>()?;
    if judges.is_empty() {
        return Ok(Vec::new());
    }
    let mut groups = Vec::new();
    let mut scores = std::collections::HashMap::new();
    for run in runs {
        for s in store.scores(Some(run))? {
            if let Some(v) = s.score {
                scores.insert((run.clone(), s.job_idx), v);
            }
        }
        let Some(rec) = store.run(run)? else { continue };
        if rec.config.samples < 2 {
            continue;
        }
        if let Some(ds) = dataset_of(&rec) {
            groups.extend(run_groups(db, run, &ds)?);
        }
    }
    for d in store.detect_runs()? {
        if d.kind != crate::store::DetectKind::Answers {
            continue;
        }
        let stored = super::stored::Stored::load(db, &d.id)?;
        if stored
            .targets
            .iter()
            .any(|t| t.source_run.as_ref().is_some_and(|r| runs.contains(r)))
        {
            groups.extend(detection_groups(&d.id, d.config.k.max(1), &stored));
        }
    }
    Ok(semantic_points(&groups, &judges, |run, job| {
        scores.get(&(run.to_string(), job)).copied()
    }))
}

/// PRISM's score of each scored answer of `run`, with its sub-task and model, by job.
fn scored(
    db: &crate::store::Db,
    run: &str,
) -> crate::store::Result<std::collections::HashMap<u32, (f64, String, String)>> {
    let store = db.read()?;
    Ok(store
        .scores(Some(run))?
        .into_iter()
        .filter_map(|s| Some((s.job_idx, (s.score?, s.task_id, s.model))))
        .collect())
}

/// A row's key: the signal's rank, the model, and the cell (`(true, "all")` after every cell).
type Key = (usize, &'static str, String, (bool, String));

/// Per signal, model and cell (then `all`), how well the signal predicts the verdict.
pub fn table(points: &[Point], by: By, resamples: usize, seed: u64) -> Vec<SignalRow> {
    let rank = |s: &str| {
        [
            SELF_CONTRADICTION,
            SEMANTIC_ENTROPY,
            SEMANTIC_ENTROPY_P,
            SELF_DETECTION,
            SELF_DETECTION_COT,
            LOW_MEAN_LOGPROB,
            LOW_MIN_LOGPROB,
            MEAN_ENTROPY,
        ]
        .iter()
        .position(|x| *x == s)
        .unwrap_or(usize::MAX)
    };
    let mut cells: BTreeMap<Key, Vec<(f64, bool)>> = BTreeMap::new();
    for p in points {
        for c in [(false, cell(&p.task, by)), (true, "all".to_string())] {
            cells
                .entry((rank(p.signal), p.signal, p.model.clone(), c))
                .or_default()
                .push((p.value, p.hallucinated));
        }
    }
    cells
        .into_iter()
        .map(|((_, signal, model, (_, cell)), pts)| SignalRow {
            signal: signal.to_string(),
            model,
            cell,
            score: evaluate(&pts, resamples, seed),
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn flag(task: &str, conflicts: u32, score: f64) -> AnswerFlag {
        crate::detect::results::test_flag(task, 4, conflicts, Some(score))
    }

    /// On KE the conflicts separate wrong from right answers perfectly; on RE they run the
    /// other way; IFE has too few wrong answers for a number.
    #[test]
    fn a_signal_per_dimension_by_hand() {
        let mut flags = Vec::new();
        for i in 0..6 {
            flags.push(flag("KE-FD-DefAn", 3, 0.0 + f64::from(i) * 0.01));
            flags.push(flag("KE-FD-DefAn", 0, 1.0));
            flags.push(flag("RE-MR-X", 0, 0.0));
            flags.push(flag("RE-MR-X", 4, 1.0));
        }
        flags.push(flag("IFE-X-Y", 2, 0.0));
        flags.push(flag("IFE-X-Y", 0, 1.0));
        let rows = table(&contradiction_points(&flags), By::Dimension, 200, 1);
        let get = |c: &str| rows.iter().find(|r| r.cell == c).unwrap();
        assert_eq!(get("KE").score.auroc, Some(100.0));
        assert_eq!(get("KE").score.prr, Some(100.0));
        assert_eq!(get("RE").score.auroc, Some(0.0));
        assert!(get("IFE").score.too_few.is_some());
        assert_eq!(get("all").score.n, 26);
        assert_eq!(rows.last().unwrap().cell, "all");
        let by_cat = table(&contradiction_points(&flags), By::Category, 10, 1);
        assert!(by_cat.iter().any(|r| r.cell == "KE-FD"));
        let by_task = table(&contradiction_points(&flags), By::Task, 10, 1);
        assert!(by_task.iter().any(|r| r.cell == "RE-MR-X"));
    }
}
