//! From item scores to the numbers PRISM reports: task S and H, per-dimension hallucination rates
//! (macro over tasks), the H-Score, and the Spearman rank correlation between dimensions.

use std::collections::BTreeMap;

use crate::taxonomy::Dimension;

/// Task S = 100 x the mean item score (failed items count as 0 and stay in the denominator).
pub(crate) fn task_score(item_scores: &[f64]) -> Option<f64> {
    (!item_scores.is_empty())
        .then(|| 100.0 * item_scores.iter().sum::<f64>() / item_scores.len() as f64)
}

/// A dimension's rate: the mean of task H = 100 - S over its tasks, with how many tasks that is
/// out of how many the dimension has.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct DimRate {
    pub rate: f64,
    pub tasks: usize,
    /// Tasks the dimension has in the dataset (the same as `tasks` when unknown).
    pub of: usize,
}

impl DimRate {
    pub fn complete(&self) -> bool {
        self.tasks == self.of
    }
}

#[derive(Debug, Clone, PartialEq)]
pub struct Rates {
    /// In `Dimension::ALL` order; `None` when the dimension has no scored task.
    pub dims: [Option<DimRate>; 4],
}

impl Rates {
    /// The H-Score: the plain mean of the four rates, only when all four are complete.
    pub fn h_score(&self) -> Option<f64> {
        let mut sum = 0.0;
        for d in &self.dims {
            let d = d.as_ref().filter(|d| d.complete())?;
            sum += d.rate;
        }
        Some(sum / 4.0)
    }

    pub fn get(&self, d: Dimension) -> Option<DimRate> {
        self.dims[d.index()]
    }
}

/// The dimension of a task id (`KE-FD-DefAn` → KE).
pub(crate) fn dimension_of(task_id: &str) -> Option<Dimension> {
    task_id.split('-').next()?.parse().ok()
}

/// Rates from task scores S (0-100) by task id. `expected` gives how many tasks each dimension
/// has in the dataset (for partial coverage); without it, the tasks present are taken as all.
pub(crate) fn rates(task_scores: &BTreeMap<String, f64>, expected: Option<&[usize; 4]>) -> Rates {
    let mut sums = [0.0f64; 4];
    let mut counts = [0usize; 4];
    for (task, s) in task_scores {
        if let Some(d) = dimension_of(task) {
            sums[d.index()] += 100.0 - s;
            counts[d.index()] += 1;
        }
    }
    let dims = std::array::from_fn(|i| {
        (counts[i] > 0).then(|| DimRate {
            rate: sums[i] / counts[i] as f64,
            tasks: counts[i],
            of: expected.map(|e| e[i]).unwrap_or(counts[i]),
        })
    });
    Rates { dims }
}

/// Ranks with ties sharing their average rank (1-based).
fn ranks(v: &[f64]) -> Vec<f64> {
    let mut idx: Vec<usize> = (0..v.len()).collect();
    idx.sort_by(|&a, &b| v[a].partial_cmp(&v[b]).unwrap_or(std::cmp::Ordering::Equal));
    let mut r = vec![0.0; v.len()];
    let mut i = 0;
    while i < idx.len() {
        let mut j = i;
        while j + 1 < idx.len() && v[idx[j + 1]] == v[idx[i]] {
            j += 1;
        }
        let avg = (i + j) as f64 / 2.0 + 1.0;
        for k in i..=j {
            r[idx[k]] = avg;
        }
        i = j + 1;
    }
    r
}

/// Spearman's rank correlation (Pearson on average ranks); `None` under three values or when one
/// side is constant.
pub(crate) fn spearman(a: &[f64], b: &[f64]) -> Option<f64> {
    if a.len() != b.len() || a.len() < 3 {
        return None;
    }
    pearson(&ranks(a), &ranks(b))
}

/// Pearson's correlation; `None` under three values or when one side is constant.
pub(crate) fn pearson(a: &[f64], b: &[f64]) -> Option<f64> {
    if a.len() != b.len() || a.len() < 3 {
        return None;
    }
    let n = a.len() as f64;
    let (ma, mb) = (a.iter().sum::<f64>() / n, b.iter().sum::<f64>() / n);
    let cov: f64 = a.iter().zip(b).map(|(x, y)| (x - ma) * (y - mb)).sum();
    let va: f64 = a.iter().map(|x| (x - ma).powi(2)).sum();
    let vb: f64 = b.iter().map(|y| (y - mb).powi(2)).sum();
    (va > 0.0 && vb > 0.0).then(|| cov / (va * vb).sqrt())
}

/// The Spearman correlation between every pair of dimensions over rows of rates (one row per
/// model, in `Dimension::ALL` order; paper Figure 4). `None` where fewer than three rows have
/// both rates.
pub(crate) fn dimension_correlations(rows: &[[Option<f64>; 4]]) -> [[Option<f64>; 4]; 4] {
    std::array::from_fn(|i| {
        std::array::from_fn(|j| {
            let (xs, ys): (Vec<f64>, Vec<f64>) =
                rows.iter().filter_map(|r| Some((r[i]?, r[j]?))).unzip();
            spearman(&xs, &ys)
        })
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_papers_gpt_5_2_task_scores_give_its_rates() {
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("tests/fixtures/reference/gpt-5.2-summary.json");
        let v: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
        let scores: BTreeMap<String, f64> = v["task_scores"]
            .as_object()
            .unwrap()
            .iter()
            .map(|(k, s)| (k.clone(), s.as_f64().unwrap()))
            .collect();
        assert_eq!(scores.len(), 65);
        let r = rates(&scores, None);
        let want = [17.83, 5.57, 24.67, 15.35];
        for (d, w) in Dimension::ALL.iter().zip(want) {
            let got = r.get(*d).unwrap().rate;
            assert!((got - w).abs() <= 0.02, "{d}: {got} vs {w}");
        }
        assert!((r.h_score().unwrap() - 15.85).abs() <= 0.02);
    }

    #[test]
    fn partial_dimensions_have_no_h_score() {
        let mut s = BTreeMap::new();
        s.insert("KE-FD-A".to_string(), 80.0);
        s.insert("KM-FK-B".to_string(), 100.0);
        s.insert("RE-LF-C".to_string(), 50.0);
        s.insert("IFE-LC-D".to_string(), 90.0);
        let r = rates(&s, Some(&[1, 1, 1, 1]));
        assert_eq!(r.h_score(), Some((20.0 + 0.0 + 50.0 + 10.0) / 4.0));
        let r = rates(&s, Some(&[2, 1, 1, 1]));
        assert!(!r.get(Dimension::KE).unwrap().complete());
        assert_eq!(r.h_score(), None);
        assert_eq!(task_score(&[1.0, 0.0, 0.5, 0.5]), Some(50.0));
        assert_eq!(task_score(&[]), None);
    }

    #[test]
    fn spearman_with_ties() {
        assert_eq!(spearman(&[1.0, 2.0, 3.0], &[10.0, 20.0, 30.0]), Some(1.0));
        assert_eq!(spearman(&[1.0, 2.0, 3.0], &[3.0, 2.0, 1.0]), Some(-1.0));
        let r = spearman(&[1.0, 2.0, 2.0, 4.0], &[1.0, 3.0, 2.0, 4.0]).unwrap();
        assert!((r - 0.9486832980505138).abs() < 1e-9, "{r}");
        assert_eq!(spearman(&[1.0, 1.0, 1.0], &[1.0, 2.0, 3.0]), None);
        assert_eq!(spearman(&[1.0, 2.0], &[1.0, 2.0]), None);
    }
}
