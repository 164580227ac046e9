//! Which signal predicts which kind of hallucination: each zero-resource signal an answer has
//! (today the self-contradiction conflict rate of its newest complete detection) against
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

/// A row's key: the signal, the model, and the cell (`(true, "all")` sorts after every cell).
type Key = (String, String, (bool, String));

/// The signals of the answers that have them, per model and cell, then `all`.
pub fn table(flags: &[AnswerFlag], by: By, resamples: usize, seed: u64) -> Vec<SignalRow> {
    let mut points: BTreeMap<Key, Vec<(f64, bool)>> = BTreeMap::new();
    for f in flags {
        let (Some(score), Some(rate)) = (f.score, f.outcome.rate()) else {
            continue;
        };
        let p = (rate, scored_wrong(score));
        for c in [(false, cell(&f.task_id, by)), (true, "all".to_string())] {
            points
                .entry(("self-contradiction".into(), f.model.clone(), c))
                .or_default()
                .push(p);
        }
    }
    points
        .into_iter()
        .map(|((signal, model, (_, cell)), pts)| SignalRow {
            signal,
            model,
            cell,
            score: evaluate(&pts, resamples, seed),
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::detect::results::Outcome;

    fn flag(task: &str, conflicts: u32, score: f64) -> AnswerFlag {
        AnswerFlag {
            source_run: "r".into(),
            source_job: 0,
            item_id: "i".into(),
            task_id: task.into(),
            model: "m".into(),
            outcome: Outcome {
                k: 4,
                conflicts,
                consistent: 4 - conflicts,
                ..Outcome::default()
            },
            score: Some(score),
        }
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
        let rows = table(&flags, By::Dimension, 200, 1);
        let get = |c: &str| rows.iter().find(|r| r.cell == c).unwrap();
        assert_eq!(get("KE").score.auroc, Some(100.0));
        assert_eq!(get("KE").score.prr, Some(100.0));
        assert_eq!(get("RE").score.auroc, Some(0.0));
        assert!(get("IFE").score.too_few.is_some());
        assert_eq!(get("all").score.n, 26);
        assert_eq!(rows.last().unwrap().cell, "all");
        let by_cat = table(&flags, By::Category, 10, 1);
        assert!(by_cat.iter().any(|r| r.cell == "KE-FD"));
        let by_task = table(&flags, By::Task, 10, 1);
        assert!(by_task.iter().any(|r| r.cell == "RE-MR-X"));
    }
}
