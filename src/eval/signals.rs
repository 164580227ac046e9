//! How well a zero-resource signal predicts PRISM's verdict: a signal scores each answer (higher
//! = more suspect), the verdict says which answers are hallucinated (scored below half credit),
//! and a cell (a model and a dimension, category or sub-task) gets AUROC and AUPRC with a
//! bootstrap 95% interval, and the prediction-rejection ratio. A cell with too few hallucinated
//! or too few correct answers says so instead of a number.

use serde::Serialize;

use super::binary::{auprc, auroc};
use super::compare::SplitMix64;

/// Fewer hallucinated (or correct) answers than this in a cell: no number is given.
pub const MIN_EACH: usize = 5;

/// A signal's quality in one cell.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct SignalScore {
    /// Answers with both the signal and a verdict; of them, hallucinated.
    pub n: usize,
    pub hallucinated: usize,
    /// Percent; `None` with too few of either class (`too_few` says which).
    pub auroc: Option<f64>,
    pub auroc_ci: Option<(f64, f64)>,
    pub auprc: Option<f64>,
    pub auprc_ci: Option<(f64, f64)>,
    /// Prediction-rejection ratio, percent: 100 rejects hallucinations first, 0 is no better
    /// than rejecting at random, below 0 worse.
    pub prr: Option<f64>,
    pub too_few: Option<String>,
}

/// Scores a signal over `(signal, hallucinated)` points: point estimates, and intervals from
/// `resamples` bootstrap draws (the answers resampled with replacement) from `seed`.
pub fn evaluate(points: &[(f64, bool)], resamples: usize, seed: u64) -> SignalScore {
    let h = points.iter().filter(|p| p.1).count();
    let mut s = SignalScore {
        n: points.len(),
        hallucinated: h,
        ..SignalScore::default()
    };
    let ok = points.len() - h;
    if h < MIN_EACH || ok < MIN_EACH {
        s.too_few = Some(format!(
            "{h} hallucinated, {ok} correct (need {MIN_EACH} of each)"
        ));
        return s;
    }
    s.auroc = auroc(points).map(|v| 100.0 * v);
    s.auprc = auprc(points).map(|v| 100.0 * v);
    s.prr = prr(points).map(|v| 100.0 * v);
    let mut rng = SplitMix64(seed);
    let (mut roc, mut pr) = (Vec::with_capacity(resamples), Vec::with_capacity(resamples));
    let mut draw = Vec::with_capacity(points.len());
    for _ in 0..resamples {
        draw.clear();
        draw.extend((0..points.len()).map(|_| points[rng.below(points.len())]));
        // A draw with one class alone has no AUROC: it is left out of the interval.
        if let Some(v) = auroc(&draw) {
            roc.push(100.0 * v);
        }
        if let Some(v) = auprc(&draw) {
            pr.push(100.0 * v);
        }
    }
    s.auroc_ci = interval(&mut roc);
    s.auprc_ci = interval(&mut pr);
    s
}

/// The 2.5th and 97.5th percentiles.
fn interval(xs: &mut [f64]) -> Option<(f64, f64)> {
    if xs.is_empty() {
        return None;
    }
    xs.sort_by(f64::total_cmp);
    let at = |q: f64| xs[((xs.len() - 1) as f64 * q).round() as usize];
    Some((at(0.025), at(0.975)))
}

/// The prediction-rejection ratio (Malinin et al.; lm-polygraph's PRR): answers are rejected
/// most suspect first, and the mean quality (1 correct, 0 hallucinated) of those kept is taken
/// at every rejection rate 0, 1/n, ..., (n-1)/n. The area under that curve, against random
/// rejection (the mean quality throughout) and the oracle (hallucinations first):
/// `(signal - random) / (oracle - random)`. Tied signals are rejected together, each position
/// of a tie given the tie's mean quality (the expectation over orders). `None` with one class.
pub fn prr(points: &[(f64, bool)]) -> Option<f64> {
    let n = points.len();
    let bad = points.iter().filter(|p| p.1).count();
    if bad == 0 || bad == n {
        return None;
    }
    let mean_q = (n - bad) as f64 / n as f64;
    // Quality by position, most suspect first, ties averaged.
    let mut sorted: Vec<&(f64, bool)> = points.iter().collect();
    sorted.sort_by(|a, b| b.0.total_cmp(&a.0));
    let mut quality = vec![0.0; n];
    let mut i = 0;
    while i < n {
        let mut j = i;
        while j + 1 < n && sorted[j + 1].0 == sorted[i].0 {
            j += 1;
        }
        let good = sorted[i..=j].iter().filter(|p| !p.1).count();
        let q = good as f64 / (j - i + 1) as f64;
        quality[i..=j].fill(q);
        i = j + 1;
    }
    let area = |quality: &[f64]| -> f64 {
        // Rejecting the first r: the mean of the rest, for r = 0..n-1.
        let mut rest: f64 = quality.iter().sum();
        let mut total = 0.0;
        for (r, q) in quality.iter().enumerate() {
            total += rest / (n - r) as f64;
            rest -= q;
        }
        total / n as f64
    };
    let oracle: Vec<f64> = (0..n).map(|i| if i < bad { 0.0 } else { 1.0 }).collect();
    let (a_sig, a_orc) = (area(&quality), area(&oracle));
    let a_rnd = mean_q;
    (a_orc > a_rnd).then(|| (a_sig - a_rnd) / (a_orc - a_rnd))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// AUROC and AUPRC equal scikit-learn's `roc_auc_score` and `average_precision_score` on
    /// every case of the committed fixture (`scripts/signals-expected.py` wrote it), ties and
    /// all.
    #[test]
    fn auroc_and_auprc_equal_scikit_learns() {
        let fx: serde_json::Value =
            serde_json::from_str(include_str!("../../tests/fixtures/signals/sklearn.json"))
                .unwrap();
        let cases = fx["cases"].as_array().unwrap();
        assert!(cases.len() >= 10);
        for (i, c) in cases.iter().enumerate() {
            let points: Vec<(f64, bool)> = c["scores"]
                .as_array()
                .unwrap()
                .iter()
                .zip(c["hallucinated"].as_array().unwrap())
                .map(|(x, y)| (x.as_f64().unwrap(), y.as_bool().unwrap()))
                .collect();
            let roc = auroc(&points).unwrap();
            let pr = auprc(&points).unwrap();
            assert!(
                (roc - c["auroc"].as_f64().unwrap()).abs() < 1e-12,
                "case {i}: auroc {roc} vs {}",
                c["auroc"]
            );
            assert!(
                (pr - c["auprc"].as_f64().unwrap()).abs() < 1e-12,
                "case {i}: auprc {pr} vs {}",
                c["auprc"]
            );
        }
    }

    #[test]
    fn prr_by_hand() {
        // A perfect signal: 1; the reverse: -1; all tied: 0 (as random).
        let perfect = [(0.9, true), (0.8, true), (0.2, false), (0.1, false)];
        assert!((prr(&perfect).unwrap() - 1.0).abs() < 1e-12);
        let reverse = [(0.1, true), (0.2, true), (0.8, false), (0.9, false)];
        assert!((prr(&reverse).unwrap() + 1.0).abs() < 1e-12);
        let tied = [(0.5, true), (0.5, false), (0.5, false), (0.5, true)];
        assert!(prr(&tied).unwrap().abs() < 1e-12);
        // By hand: n = 4, qualities most suspect first 0, 1, 0, 1. Kept means at r = 0..3:
        // 2/4, 2/3, 1/2, 1 → area 2.6667/4; random 0.5; oracle 0, 0, 1, 1 → 1/2, 2/3, 1, 1 →
        // 3.1667/4. PRR = (0.66667 - 0.5) / (0.79167 - 0.5) = 0.5714.
        let mixed = [(0.9, true), (0.8, false), (0.7, true), (0.6, false)];
        assert!((prr(&mixed).unwrap() - 0.571_428_571).abs() < 1e-6);
        assert_eq!(prr(&[(1.0, true)]), None);
    }

    #[test]
    fn a_cell_with_too_few_says_so_and_intervals_hold_the_estimate() {
        let few: Vec<(f64, bool)> = (0..20).map(|i| (i as f64, i < 3)).collect();
        let s = evaluate(&few, 200, 1);
        assert_eq!(s.auroc, None);
        assert_eq!(
            s.too_few.as_deref(),
            Some("3 hallucinated, 17 correct (need 5 of each)")
        );
        let points: Vec<(f64, bool)> = (0..60)
            .map(|i| ((i * 37 % 60) as f64, (i * 37 % 60) % 3 == 0 || i % 7 == 0))
            .collect();
        let s = evaluate(&points, 500, 7);
        let (lo, hi) = s.auroc_ci.unwrap();
        let est = s.auroc.unwrap();
        assert!(lo <= est && est <= hi, "{lo} {est} {hi}");
        assert!(hi - lo > 1.0);
        // The same seed, the same interval.
        assert_eq!(evaluate(&points, 500, 7), s);
    }
}
