//! Which sentence method tells (METHODS.md §5, 4.): every sentence people graded, scored by
//! each method from what is stored, against their verdict (non-factual: minor or major
//! inaccurate, by the majority of its reviewers). Sentence level: AUC-PR with non-factual as
//! the positive class and with factual as the positive class (the score negated), AUROC, each
//! with a bootstrap interval, beside the random baseline (the positive class's share). Answer
//! level: Pearson and Spearman of the answer's score (the mean of its sentences') against
//! people's share of non-factual sentences among those they graded.

use std::collections::BTreeMap;

use serde::Serialize;

use super::labels::{SentenceLabel, verdicts};
use super::{Method, Scores, answer_scores, of_stored};
use crate::eval::signals::{SignalScore, evaluate};

/// Reads one score of a sentence's.
pub type Pick = fn(&Scores) -> Option<f64>;

/// The scores a sentence method gives, by their names in `--json` and `prism sentences`.
pub const SCORES: [(&str, Pick); 5] = [
    ("prompt", |s| s.prompt),
    ("unigram", |s| s.unigram),
    ("unigram_avg", |s| s.unigram_avg),
    ("logprob_avg", |s| s.logprob_avg),
    ("logprob_max", |s| s.logprob_max),
];

/// One graded sentence with its scores.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Graded {
    pub run: String,
    pub job: u32,
    pub model: String,
    /// The answer's sub-task (the heatmap's cells).
    pub task: String,
    pub sentence: u32,
    pub non_factual: bool,
    pub scores: BTreeMap<&'static str, f64>,
}

/// One answer with graded sentences: its scores (the mean over all its sentences) and the
/// share of its graded sentences people call non-factual.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct GradedAnswer {
    pub run: String,
    pub job: u32,
    pub model: String,
    pub share: f64,
    pub scores: BTreeMap<&'static str, f64>,
}

/// What could be scored, and how many graded sentences could not (their answer gone from the
/// store, or the sentence no longer where it was graded).
#[derive(Debug, Default)]
pub struct Gathered {
    pub sentences: Vec<Graded>,
    pub answers: Vec<GradedAnswer>,
    pub lost: usize,
}

/// Scores every graded sentence of `labels` from the store (the prompt method by `judge`'s
/// verdicts, or by the judge with the most verdicts on each answer).
pub fn gather(
    db: &crate::store::Db,
    labels: &[SentenceLabel],
    judge: Option<&str>,
) -> crate::store::Result<Gathered> {
    let people = verdicts(labels);
    // Each graded sentence's text as graded, to find it again if the splitter moved it.
    let text_of: BTreeMap<(&str, u32, u32), &str> = labels
        .iter()
        .map(|l| ((l.run_id.as_str(), l.job_idx, l.sentence), l.text.as_str()))
        .collect();
    let mut by_answer: BTreeMap<(String, u32), Vec<(u32, bool)>> = BTreeMap::new();
    for ((run, job, s), bad) in people {
        by_answer.entry((run, job)).or_default().push((s, bad));
    }
    let mut out = Gathered::default();
    for ((run, job), graded) in by_answer {
        let Some((answer, known, _)) = of_stored(db, &run, job, judge)? else {
            out.lost += graded.len();
            continue;
        };
        let scored = answer.score(&Method::ALL, &known);
        let mut bad = 0;
        for &(idx, non_factual) in &graded {
            let was = text_of.get(&(run.as_str(), job, idx)).copied();
            let at = match scored.get(idx as usize) {
                Some(s) if was.is_none_or(|t| t.is_empty() || t == s.sentence.text) => Some(s),
                _ => was.and_then(|t| scored.iter().find(|s| s.sentence.text == t)),
            };
            let Some(s) = at else {
                out.lost += 1;
                continue;
            };
            bad += usize::from(non_factual);
            out.sentences.push(Graded {
                run: run.clone(),
                job,
                model: answer.group.model.clone(),
                task: answer.group.task_id.clone(),
                sentence: idx,
                non_factual,
                scores: SCORES
                    .iter()
                    .filter_map(|(n, f)| Some((*n, f(&s.scores)?)))
                    .collect(),
            });
        }
        out.answers.push(GradedAnswer {
            run: run.clone(),
            job,
            model: answer.group.model.clone(),
            share: bad as f64 / graded.len() as f64,
            scores: answer_scores(&scored),
        });
    }
    Ok(out)
}

/// The heatmap's signal names of the sentence methods (against people's grades, not PRISM's
/// verdict: the name says so).
fn signal_name(method: &str) -> &'static str {
    match method {
        "prompt" => "sentence prompt (people)",
        "unigram" => "sentence unigram (people)",
        "unigram_avg" => "sentence unigram avg (people)",
        "logprob_avg" => "sentence logprob avg (people)",
        _ => "sentence logprob max (people)",
    }
}

/// Every graded sentence's score by each method as a signal point (for the heatmap's signals
/// metric: one row per model and method, a cell per dimension).
pub fn points(g: &Gathered) -> Vec<crate::detect::signals::Point> {
    let mut out = Vec::new();
    for s in &g.sentences {
        for (name, v) in &s.scores {
            out.push(crate::detect::signals::Point {
                signal: signal_name(name),
                model: s.model.clone(),
                task: s.task.clone(),
                value: *v,
                hallucinated: s.non_factual,
            });
        }
    }
    out
}

/// A method's numbers against people's grades.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct MethodRow {
    pub method: &'static str,
    /// Non-factual as the positive class: n, positives, AUROC and AUC-PR with intervals.
    pub non_factual: SignalScore,
    /// The random baseline of AUC-PR with non-factual as positive (their share, percent).
    pub non_factual_baseline: Option<f64>,
    /// Factual as the positive class (the score negated).
    pub factual_auprc: Option<f64>,
    pub factual_auprc_ci: Option<(f64, f64)>,
    pub factual_baseline: Option<f64>,
    /// Answer level: answers with a score and a graded sentence, and the correlations of
    /// their score with people's share of non-factual sentences.
    pub answers: usize,
    pub pearson: Option<f64>,
    pub spearman: Option<f64>,
}

/// Each method with a score on some graded sentence, in [`SCORES`] order.
pub fn table(g: &Gathered, resamples: usize, seed: u64) -> Vec<MethodRow> {
    let mut rows = Vec::new();
    for (name, _) in SCORES {
        let points: Vec<(f64, bool)> = g
            .sentences
            .iter()
            .filter_map(|s| Some((*s.scores.get(name)?, s.non_factual)))
            .collect();
        if points.is_empty() {
            continue;
        }
        let flipped: Vec<(f64, bool)> = points.iter().map(|&(x, b)| (-x, !b)).collect();
        let nf = evaluate(&points, resamples, seed);
        let f = evaluate(&flipped, resamples, seed);
        let share = |k: usize| (!points.is_empty()).then(|| 100.0 * k as f64 / points.len() as f64);
        let (xs, ys): (Vec<f64>, Vec<f64>) = g
            .answers
            .iter()
            .filter_map(|a| Some((*a.scores.get(name)?, a.share)))
            .unzip();
        rows.push(MethodRow {
            method: name,
            non_factual_baseline: share(nf.hallucinated),
            factual_baseline: share(f.hallucinated),
            factual_auprc: f.auprc,
            factual_auprc_ci: f.auprc_ci,
            non_factual: nf,
            answers: xs.len(),
            pearson: crate::eval::metrics::pearson(&xs, &ys),
            spearman: crate::eval::metrics::spearman(&xs, &ys),
        });
    }
    rows
}

#[cfg(test)]
mod tests {
    use super::*;

    fn graded(score: f64, bad: bool) -> Graded {
        Graded {
            run: "r".into(),
            job: 0,
            model: "m".into(),
            task: "KE-FD-Myths".into(),
            sentence: 0,
            non_factual: bad,
            scores: [("unigram", score)].into_iter().collect(),
        }
    }

    #[test]
    fn a_method_that_ranks_every_made_up_sentence_first_scores_full_marks_both_ways() {
        let mut g = Gathered::default();
        for i in 0..6 {
            g.sentences.push(graded(10.0 + i as f64, true));
            g.sentences.push(graded(i as f64, false));
        }
        let rows = table(&g, 50, 1);
        assert_eq!(rows.len(), 1);
        let r = &rows[0];
        assert_eq!(r.method, "unigram");
        assert_eq!(r.non_factual.auprc, Some(100.0));
        assert_eq!(r.non_factual.auroc, Some(100.0));
        assert_eq!(r.factual_auprc, Some(100.0));
        assert_eq!(r.non_factual_baseline, Some(50.0));
        assert_eq!(r.factual_baseline, Some(50.0));
    }

    /// prism's numbers equal scikit-learn's and SciPy's on the committed cases
    /// (scripts/sentence-signals-expected.py wrote them).
    #[test]
    fn the_numbers_are_scikit_learns_and_scipys() {
        let fixture: serde_json::Value =
            serde_json::from_str(include_str!("../../tests/fixtures/sentences/sklearn.json"))
                .unwrap();
        let nums = |v: &serde_json::Value| -> Vec<f64> {
            v.as_array()
                .unwrap()
                .iter()
                .map(|x| x.as_f64().unwrap())
                .collect()
        };
        let cases = fixture["cases"].as_array().unwrap();
        assert!(cases.len() >= 5);
        for (i, c) in cases.iter().enumerate() {
            let mut g = Gathered::default();
            let bad: Vec<bool> = c["non_factual"]
                .as_array()
                .unwrap()
                .iter()
                .map(|b| b.as_bool().unwrap())
                .collect();
            for (x, b) in nums(&c["scores"]).into_iter().zip(bad) {
                g.sentences.push(graded(x, b));
            }
            for (x, share) in nums(&c["answer_scores"])
                .into_iter()
                .zip(nums(&c["answer_shares"]))
            {
                g.answers.push(GradedAnswer {
                    run: "r".into(),
                    job: 0,
                    model: "m".into(),
                    share,
                    scores: [("unigram", x)].into_iter().collect(),
                });
            }
            let r = &table(&g, 0, 0)[0];
            let close = |ours: Option<f64>, theirs: &serde_json::Value, what: &str| {
                let (a, b) = (ours.unwrap(), theirs.as_f64().unwrap());
                assert!(
                    (a - b).abs() < 1e-9,
                    "case {i}: {what}: prism {a}, reference {b}"
                );
            };
            close(
                r.non_factual.auprc.map(|v| v / 100.0),
                &c["auprc_non_factual"],
                "AUC-PR non-factual",
            );
            close(
                r.factual_auprc.map(|v| v / 100.0),
                &c["auprc_factual"],
                "AUC-PR factual",
            );
            close(r.non_factual.auroc.map(|v| v / 100.0), &c["auroc"], "AUROC");
            close(r.pearson, &c["pearson"], "Pearson");
            close(r.spearman, &c["spearman"], "Spearman");
        }
    }

    /// The study in the book (docs/src/sentences.md): the 274 graded sentences of the embedded
    /// models (tests/fixtures/sentence-study), their scores as `prism sentences --json` printed
    /// them, give the AUC-PR the book quotes.
    #[test]
    fn the_books_study_numbers_come_from_the_committed_grades() {
        let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/sentence-study");
        let read = |f: &str| -> Vec<serde_json::Value> {
            std::fs::read_to_string(format!("{dir}/{f}"))
                .unwrap()
                .lines()
                .map(|l| serde_json::from_str(l).unwrap())
                .collect()
        };
        let labels: Vec<SentenceLabel> = read("labels.jsonl")
            .into_iter()
            .map(|v| serde_json::from_value(v).unwrap())
            .collect();
        let people = verdicts(&labels);
        let mut g = Gathered::default();
        for e in read("sentences.jsonl") {
            let (run, job) = (
                e["run"].as_str().unwrap(),
                e["job"].as_u64().unwrap() as u32,
            );
            let mut bad = 0;
            let ss = e["sentences"].as_array().unwrap();
            for (i, x) in ss.iter().enumerate() {
                let nf = people[&(run.to_string(), job, i as u32)];
                bad += usize::from(nf);
                g.sentences.push(Graded {
                    run: run.into(),
                    job,
                    model: e["model"].as_str().unwrap().into(),
                    task: e["task_id"].as_str().unwrap().into(),
                    sentence: i as u32,
                    non_factual: nf,
                    scores: SCORES
                        .iter()
                        .filter_map(|(n, _)| Some((*n, x["scores"][*n].as_f64()?)))
                        .collect(),
                });
            }
            g.answers.push(GradedAnswer {
                run: run.into(),
                job,
                model: e["model"].as_str().unwrap().into(),
                share: bad as f64 / ss.len() as f64,
                scores: SCORES
                    .iter()
                    .filter_map(|(n, _)| Some((*n, e["answer"][*n].as_f64()?)))
                    .collect(),
            });
        }
        assert_eq!(g.sentences.len(), 274);
        let rows = table(&g, 1000, 0);
        let got: Vec<(&str, String, String)> = rows
            .iter()
            .map(|r| {
                (
                    r.method,
                    format!("{:.1}", r.non_factual.auprc.unwrap()),
                    format!("{:.1}", r.factual_auprc.unwrap()),
                )
            })
            .collect();
        let want = [
            ("prompt", "25.3", "79.3"),
            ("unigram", "45.2", "92.4"),
            ("unigram_avg", "41.4", "91.2"),
            ("logprob_avg", "36.9", "88.6"),
            ("logprob_max", "44.6", "89.1"),
        ];
        assert_eq!(got, want.map(|(m, a, b)| (m, a.to_string(), b.to_string())));
        assert_eq!(
            format!("{:.1}", rows[0].non_factual_baseline.unwrap()),
            "23.0"
        );
    }
}
