//! Binary detection metrics, with the hallucination as the positive class: the confusion
//! matrix, accuracy, precision, recall and F1; AUROC and AUPRC of a score; a balanced set drawn
//! with a seed. Shared by AutoHall's contradiction detection and self-detection.

use serde::Serialize;

/// Counts of a detector's verdicts against the truth.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct Confusion {
    /// Hallucinations flagged.
    pub tp: usize,
    /// Factual items flagged.
    pub fp: usize,
    /// Factual items not flagged.
    pub tn: usize,
    /// Hallucinations missed.
    pub fn_: usize,
}

/// The four usual numbers, in percent; `None` where undefined (nothing to divide by).
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize)]
pub struct Scores {
    pub accuracy: Option<f64>,
    pub precision: Option<f64>,
    pub recall: Option<f64>,
    pub f1: Option<f64>,
    pub n: usize,
}

fn pct(a: usize, b: usize) -> Option<f64> {
    (b > 0).then(|| 100.0 * a as f64 / b as f64)
}

impl Confusion {
    /// Counts (truth, flagged) pairs, `truth` true for a hallucination.
    pub fn of(pairs: impl IntoIterator<Item = (bool, bool)>) -> Confusion {
        let mut c = Confusion::default();
        for (truth, flagged) in pairs {
            match (truth, flagged) {
                (true, true) => c.tp += 1,
                (false, true) => c.fp += 1,
                (false, false) => c.tn += 1,
                (true, false) => c.fn_ += 1,
            }
        }
        c
    }

    pub fn n(&self) -> usize {
        self.tp + self.fp + self.tn + self.fn_
    }

    pub fn scores(&self) -> Scores {
        let precision = pct(self.tp, self.tp + self.fp);
        let recall = pct(self.tp, self.tp + self.fn_);
        let f1 = match (precision, recall) {
            (Some(p), Some(r)) if p + r > 0.0 => Some(2.0 * p * r / (p + r)),
            (Some(_), Some(_)) => Some(0.0),
            _ => None,
        };
        Scores {
            accuracy: pct(self.tp + self.tn, self.n()),
            precision,
            recall,
            f1,
            n: self.n(),
        }
    }
}

/// F1 and accuracy on a balanced set (as many positives as negatives) from recall and
/// precision in percent: how papers' tables can be checked (the tests check ours against them).
#[cfg(test)]
pub(crate) fn balanced_f1_accuracy(recall: f64, precision: f64) -> (f64, f64) {
    let (r, p) = (recall / 100.0, precision / 100.0);
    let f1 = if r + p > 0.0 {
        2.0 * p * r / (p + r)
    } else {
        0.0
    };
    // Per positive: TP = r, FP = r (1/p - 1), TN = 1 - FP; accuracy = (TP + TN) / 2.
    let fp = if p > 0.0 { r * (1.0 / p - 1.0) } else { 0.0 };
    let acc = (r + 1.0 - fp) / 2.0;
    (100.0 * f1, 100.0 * acc)
}

/// The area under the ROC curve of `score` for telling positives (`true`) from negatives, with
/// ties counted half (the Mann-Whitney statistic). `None` without both classes.
pub(crate) fn auroc(points: &[(f64, bool)]) -> Option<f64> {
    let pos = points.iter().filter(|p| p.1).count();
    let neg = points.len() - pos;
    if pos == 0 || neg == 0 {
        return None;
    }
    // Ranks with ties averaged.
    let mut idx: Vec<usize> = (0..points.len()).collect();
    idx.sort_by(|&a, &b| points[a].0.total_cmp(&points[b].0));
    let mut ranks = vec![0.0; points.len()];
    let mut i = 0;
    while i < idx.len() {
        let mut j = i;
        while j + 1 < idx.len() && points[idx[j + 1]].0 == points[idx[i]].0 {
            j += 1;
        }
        let r = (i + j) as f64 / 2.0 + 1.0;
        for k in i..=j {
            ranks[idx[k]] = r;
        }
        i = j + 1;
    }
    let sum_pos: f64 = points
        .iter()
        .zip(&ranks)
        .filter(|(p, _)| p.1)
        .map(|(_, r)| r)
        .sum();
    let u = sum_pos - (pos * (pos + 1)) as f64 / 2.0;
    Some(u / (pos * neg) as f64)
}

/// The area under the precision-recall curve of `score` (average precision: precision at each
/// positive, thresholds taken at each distinct score, ties together). `None` without both
/// classes: with positives only every ranking scores 1 (scikit-learn prints 1.0), a number that
/// says nothing of the score, so it is not given, as AUROC is not.
pub(crate) fn auprc(points: &[(f64, bool)]) -> Option<f64> {
    let pos = points.iter().filter(|p| p.1).count();
    if pos == 0 || pos == points.len() {
        return None;
    }
    let mut sorted: Vec<&(f64, bool)> = points.iter().collect();
    sorted.sort_by(|a, b| b.0.total_cmp(&a.0));
    let (mut tp, mut seen, mut ap) = (0usize, 0usize, 0.0);
    let mut i = 0;
    while i < sorted.len() {
        // A threshold at this score takes every point tied with it.
        let mut j = i;
        let mut new_tp = 0;
        while j < sorted.len() && sorted[j].0 == sorted[i].0 {
            new_tp += usize::from(sorted[j].1);
            j += 1;
        }
        tp += new_tp;
        seen += j - i;
        ap += new_tp as f64 * (tp as f64 / seen as f64);
        i = j;
    }
    Some(ap / pos as f64)
}

/// A balanced set: every positive, and as many negatives drawn from `negatives` with `seed`
/// (all of them when there are fewer). Returned sorted, so the set is the same for the same
/// seed whatever the order given.
pub(crate) fn balanced(
    positives: &[usize],
    negatives: &[usize],
    seed: u64,
) -> (Vec<usize>, Vec<usize>) {
    use rand::SeedableRng;
    use rand::seq::SliceRandom;
    let mut neg = negatives.to_vec();
    neg.sort_unstable();
    let mut rng = rand::rngs::StdRng::seed_from_u64(seed);
    neg.shuffle(&mut rng);
    neg.truncate(positives.len());
    neg.sort_unstable();
    let mut pos = positives.to_vec();
    pos.sort_unstable();
    (pos, neg)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn close(a: Option<f64>, b: f64) -> bool {
        a.is_some_and(|a| (a - b).abs() < 1e-9)
    }

    #[test]
    fn scores_from_a_hand_computed_matrix() {
        // 8 positives, 12 negatives: 6 caught, 3 false alarms.
        let c = Confusion {
            tp: 6,
            fp: 3,
            tn: 9,
            fn_: 2,
        };
        let s = c.scores();
        assert!(close(s.accuracy, 75.0));
        assert!(close(s.precision, 200.0 / 3.0));
        assert!(close(s.recall, 75.0));
        // 2 * (2/3) * (3/4) / (2/3 + 3/4) = 12/17.
        assert!(close(s.f1, 1200.0 / 17.0));
        let none = Confusion::default().scores();
        assert_eq!(
            (none.precision, none.recall, none.accuracy),
            (None, None, None)
        );
        assert_eq!(
            Confusion::of([(true, true), (false, true), (false, false), (true, false)]),
            Confusion {
                tp: 1,
                fp: 1,
                tn: 1,
                fn_: 1
            }
        );
    }

    #[test]
    fn the_papers_balanced_rows_check_out() {
        // Self-detection, GPT-3.5-T: without CoT R 21.9, P 85.1 → F1 34.9, A 59.0; with CoT
        // R 58.2, P 83.8 → F1 68.7, A 73.5.
        // (The paper computed from unrounded recall and precision: from the rounded ones F1 is
        // 34.84, within 0.1 of the published 34.9.)
        let (f1, acc) = balanced_f1_accuracy(21.9, 85.1);
        assert!((f1 - 34.9).abs() < 0.1, "{f1}");
        assert!((acc - 59.0).abs() < 0.05, "{acc}");
        let (f1, acc) = balanced_f1_accuracy(58.2, 83.8);
        assert!((f1 - 68.7).abs() < 0.05, "{f1}");
        assert!((acc - 73.5).abs() < 0.05, "{acc}");
        // And through a matrix on a balanced set of 1,000 + 1,000.
        let c = Confusion {
            tp: 219,
            fp: 38,
            tn: 962,
            fn_: 781,
        };
        let s = c.scores();
        assert!((s.recall.unwrap() - 21.9).abs() < 0.05);
        assert!((s.precision.unwrap() - 85.2).abs() < 0.1);
        assert!((s.f1.unwrap() - 34.9).abs() < 0.1);
        assert!((s.accuracy.unwrap() - 59.05).abs() < 0.01);
    }

    #[test]
    fn auroc_and_auprc_on_a_hand_made_ranking() {
        // Scores 0.9 (pos), 0.8 (neg), 0.7 (pos), 0.6 (pos), 0.2 (neg).
        let pts = [
            (0.9, true),
            (0.8, false),
            (0.7, true),
            (0.6, true),
            (0.2, false),
        ];
        // Pairs (pos over neg): 0.9 beats both, 0.7 beats 0.2, 0.6 beats 0.2 → 4 of 6.
        assert!(close(auroc(&pts), 4.0 / 6.0));
        // Precision at each positive: 1/1, 2/3, 3/4 → mean 29/36.
        assert!(close(auprc(&pts), (1.0 + 2.0 / 3.0 + 3.0 / 4.0) / 3.0));
        // Ties count half; a perfect ranking is 1; one class alone has no AUROC.
        assert!(close(auroc(&[(1.0, true), (1.0, false)]), 0.5));
        assert!(close(auroc(&[(2.0, true), (1.0, false)]), 1.0));
        assert_eq!(auroc(&[(1.0, true)]), None);
        // Nor AUPRC: positives alone make any ranking perfect.
        assert_eq!(auprc(&[(1.0, true)]), None);
        assert_eq!(auprc(&[(1.0, true), (0.5, true)]), None);
        assert_eq!(auprc(&[(1.0, false)]), None);
        // Tied scores are one threshold: both points come in together.
        assert!(close(auprc(&[(1.0, true), (1.0, false)]), 0.5));
    }

    #[test]
    fn a_balanced_set_is_seeded_and_order_free() {
        let (p, n) = balanced(&[5, 1], &[9, 3, 7, 2, 8], 42);
        assert_eq!(p, vec![1, 5]);
        assert_eq!(n.len(), 2);
        let (_, n2) = balanced(&[1, 5], &[2, 3, 7, 8, 9], 42);
        assert_eq!(n, n2);
        let (_, n3) = balanced(&[1, 5, 6], &[2, 3], 1);
        assert_eq!(n3, vec![2, 3]);
    }
}
