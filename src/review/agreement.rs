//! Inter-rater agreement: how far reviewers' decisions and scores agree beyond chance.
//!
//! - observed agreement over pairs of ratings of the same item;
//! - Cohen's kappa for two reviewers rating the same items;
//! - Fleiss' kappa for many reviewers (items may have different numbers of ratings: each item's
//!   agreement is over its own pairs, the generalisation Fleiss' formula reduces to);
//! - Krippendorff's alpha, nominal (decisions) and interval (1-10 scores), with missing ratings.
//!
//! Every function returns `None` where the statistic is undefined (no pairs, or no variation to
//! agree beyond chance on), never a NaN.

use std::collections::HashMap;
use std::hash::Hash;

/// Share of rating pairs (two ratings of one item by different reviewers) that are equal.
/// `units` holds each item's ratings; items with fewer than two count nothing.
pub(crate) fn observed_agreement<L: Eq>(units: &[Vec<L>]) -> Option<f64> {
    let (mut agree, mut pairs) = (0usize, 0usize);
    for u in units {
        for i in 0..u.len() {
            for j in i + 1..u.len() {
                pairs += 1;
                agree += usize::from(u[i] == u[j]);
            }
        }
    }
    (pairs > 0).then(|| agree as f64 / pairs as f64)
}

/// Cohen's kappa of two reviewers' labels on the same items (`a[i]` and `b[i]` rate item i).
pub(crate) fn cohen_kappa<L: Eq + Hash + Clone>(a: &[L], b: &[L]) -> Option<f64> {
    let n = a.len().min(b.len());
    if n == 0 {
        return None;
    }
    let mut ca: HashMap<&L, f64> = HashMap::new();
    let mut cb: HashMap<&L, f64> = HashMap::new();
    let mut agree = 0.0;
    for (x, y) in a.iter().zip(b).take(n) {
        *ca.entry(x).or_default() += 1.0;
        *cb.entry(y).or_default() += 1.0;
        if x == y {
            agree += 1.0;
        }
    }
    let n = n as f64;
    let po = agree / n;
    let pe: f64 = ca
        .iter()
        .map(|(k, x)| x / n * cb.get(k).copied().unwrap_or(0.0) / n)
        .sum();
    kappa(po, pe)
}

/// Gwet's AC1 of two raters' yes/no verdicts on the same items (`a[i]` and `b[i]`): chance
/// agreement from how often a verdict is yes at all, `pe = 2π(1 − π)` with π the mean share of
/// yes, so it does not collapse when nearly every item is one class (where kappa does: the
/// demo labels are 83 to 13). Both categories always count (q = 2), seen or not.
pub(crate) fn gwet_ac1(a: &[bool], b: &[bool]) -> Option<f64> {
    let n = a.len().min(b.len());
    if n == 0 {
        return None;
    }
    let po = a.iter().zip(b).take(n).filter(|(x, y)| x == y).count() as f64 / n as f64;
    let yes = a
        .iter()
        .take(n)
        .chain(b.iter().take(n))
        .filter(|x| **x)
        .count() as f64;
    let pi = yes / (2 * n) as f64;
    kappa(po, 2.0 * pi * (1.0 - pi))
}

/// The prevalence- and bias-adjusted kappa of two raters' yes/no verdicts, `2·po − 1` (Byrt,
/// Bishop and Carlin; Brennan and Prediger's coefficient with two categories).
pub(crate) fn pabak(a: &[bool], b: &[bool]) -> Option<f64> {
    let n = a.len().min(b.len());
    (n > 0).then(|| {
        2.0 * (a.iter().zip(b).take(n).filter(|(x, y)| x == y).count() as f64 / n as f64) - 1.0
    })
}

/// Fleiss' kappa from per-item counts: `counts[i][j]` reviewers put item i in category j.
/// Items with fewer than two ratings are skipped.
pub(crate) fn fleiss_kappa(counts: &[Vec<u32>]) -> Option<f64> {
    let rows: Vec<&Vec<u32>> = counts
        .iter()
        .filter(|r| r.iter().sum::<u32>() >= 2)
        .collect();
    if rows.is_empty() {
        return None;
    }
    let k = rows.iter().map(|r| r.len()).max().unwrap_or(0);
    let mut totals = vec![0.0; k];
    let mut all = 0.0;
    let mut p_bar = 0.0;
    for r in &rows {
        let n: f64 = r.iter().map(|&x| x as f64).sum();
        let sq: f64 = r.iter().map(|&x| (x as f64) * (x as f64)).sum();
        p_bar += (sq - n) / (n * (n - 1.0));
        for (j, &x) in r.iter().enumerate() {
            totals[j] += x as f64;
        }
        all += n;
    }
    p_bar /= rows.len() as f64;
    let pe: f64 = totals.iter().map(|t| (t / all).powi(2)).sum();
    kappa(p_bar, pe)
}

/// `(po - pe) / (1 - pe)`; undefined when chance agreement is already total.
fn kappa(po: f64, pe: f64) -> Option<f64> {
    ((1.0 - pe).abs() > 1e-12).then(|| (po - pe) / (1.0 - pe))
}

/// The difference function of Krippendorff's alpha.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Metric {
    /// Categories: equal or not (decisions).
    Nominal,
    /// Numbers on an interval scale: squared difference (1-10 scores).
    Interval,
}

/// Krippendorff's alpha over `units` (each item's ratings, missing ones simply absent; items with
/// fewer than two ratings are not pairable and ignored), via the coincidence matrix.
pub(crate) fn krippendorff_alpha(units: &[Vec<f64>], metric: Metric) -> Option<f64> {
    let delta = |a: f64, b: f64| match metric {
        Metric::Nominal => {
            if a == b {
                0.0
            } else {
                1.0
            }
        }
        Metric::Interval => (a - b).powi(2),
    };
    // Values and how often each occurs among pairable ratings (n_c), and the observed
    // disagreement summed over units (each ordered pair weighted 1 / (m_u - 1)).
    let mut values: Vec<(f64, f64)> = Vec::new();
    let mut observed = 0.0;
    for u in units.iter().filter(|u| u.len() >= 2) {
        let m = u.len() as f64;
        for (i, &a) in u.iter().enumerate() {
            match values.iter_mut().find(|(v, _)| *v == a) {
                Some((_, c)) => *c += 1.0,
                None => values.push((a, 1.0)),
            }
            for (j, &b) in u.iter().enumerate() {
                if i != j {
                    observed += delta(a, b) / (m - 1.0);
                }
            }
        }
    }
    let n: f64 = values.iter().map(|(_, c)| c).sum();
    if n < 2.0 {
        return None;
    }
    let mut expected = 0.0;
    for &(a, ca) in &values {
        for &(b, cb) in &values {
            expected += ca * cb * delta(a, b);
        }
    }
    let d_o = observed / n;
    let d_e = expected / (n * (n - 1.0));
    (d_e > 1e-12).then(|| 1.0 - d_o / d_e)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn close(a: Option<f64>, b: f64, tol: f64) {
        let a = a.expect("defined");
        assert!((a - b).abs() < tol, "{a} vs {b}");
    }

    #[test]
    fn cohen_kappa_matches_the_textbook_table() {
        // 50 items: both yes 20, a yes b no 5, a no b yes 10, both no 15: po 0.7, pe 0.5.
        let mut a = Vec::new();
        let mut b = Vec::new();
        for (x, y, n) in [
            ("y", "y", 20),
            ("y", "n", 5),
            ("n", "y", 10),
            ("n", "n", 15),
        ] {
            for _ in 0..n {
                a.push(x);
                b.push(y);
            }
        }
        close(cohen_kappa(&a, &b), 0.4, 1e-12);
        // Perfect agreement on varied labels is 1; one label everywhere is undefined.
        close(cohen_kappa(&["a", "b", "c"], &["a", "b", "c"]), 1.0, 1e-12);
        assert_eq!(cohen_kappa(&["a", "a"], &["a", "a"]), None);
        assert_eq!(cohen_kappa::<&str>(&[], &[]), None);
    }

    #[test]
    fn fleiss_kappa_matches_the_fleiss_example() {
        // Fleiss (1971) as tabulated on Wikipedia: 10 items, 14 raters, 5 categories: 0.210.
        let t = vec![
            vec![0, 0, 0, 0, 14],
            vec![0, 2, 6, 4, 2],
            vec![0, 0, 3, 5, 6],
            vec![0, 3, 9, 2, 0],
            vec![2, 2, 8, 1, 1],
            vec![7, 7, 0, 0, 0],
            vec![3, 2, 6, 3, 0],
            vec![2, 5, 3, 2, 2],
            vec![6, 5, 2, 1, 0],
            vec![0, 2, 2, 3, 7],
        ];
        close(fleiss_kappa(&t), 0.2099, 1e-4);
        // By hand: two items, two raters each, one agreeing pair (1,1) and one not (1,0)/(0,1):
        // P = (1 + 0) / 2 = 0.5; p = (3/4, 1/4), Pe = 0.625; kappa = -1/3.
        close(fleiss_kappa(&[vec![2, 0], vec![1, 1]]), -1.0 / 3.0, 1e-12);
        assert_eq!(fleiss_kappa(&[vec![1, 0]]), None);
    }

    #[test]
    fn krippendorff_alpha_matches_krippendorffs_worked_example() {
        // Krippendorff (2011), "Computing Krippendorff's alpha-reliability", 4 observers,
        // 12 units, missing values: nominal 0.743, interval 0.849.
        let obs: [[Option<f64>; 12]; 4] = {
            let n = None;
            let s = |x: f64| Some(x);
            [
                [
                    s(1.),
                    s(2.),
                    s(3.),
                    s(3.),
                    s(2.),
                    s(1.),
                    s(4.),
                    s(1.),
                    s(2.),
                    n,
                    n,
                    n,
                ],
                [
                    s(1.),
                    s(2.),
                    s(3.),
                    s(3.),
                    s(2.),
                    s(2.),
                    s(4.),
                    s(1.),
                    s(2.),
                    s(5.),
                    n,
                    s(3.),
                ],
                [
                    n,
                    s(3.),
                    s(3.),
                    s(3.),
                    s(2.),
                    s(3.),
                    s(4.),
                    s(2.),
                    s(2.),
                    s(5.),
                    s(1.),
                    n,
                ],
                [
                    s(1.),
                    s(2.),
                    s(3.),
                    s(3.),
                    s(2.),
                    s(4.),
                    s(4.),
                    s(1.),
                    s(2.),
                    s(5.),
                    s(1.),
                    n,
                ],
            ]
        };
        let units: Vec<Vec<f64>> = (0..12)
            .map(|u| obs.iter().filter_map(|o| o[u]).collect())
            .collect();
        close(krippendorff_alpha(&units, Metric::Nominal), 0.743, 5e-4);
        close(krippendorff_alpha(&units, Metric::Interval), 0.849, 5e-4);
        // No variation at all: undefined, not NaN.
        assert_eq!(
            krippendorff_alpha(&[vec![1.0, 1.0], vec![1.0, 1.0]], Metric::Nominal),
            None
        );
    }

    /// Every case of `tests/fixtures/agreement/ac1.json` (written by
    /// `scripts/calibration-expected.py` with the `irrCAC` package, which rounds to five
    /// places): one-sided labels (the demo's shape), one class only, always disagreeing.
    #[test]
    fn ac1_and_pabak_equal_the_reference_implementation() {
        let path = concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/tests/fixtures/agreement/ac1.json"
        );
        let r: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
        let flags = |v: &serde_json::Value| -> Vec<bool> {
            v.as_array()
                .unwrap()
                .iter()
                .map(|x| x.as_i64().unwrap() == 1)
                .collect()
        };
        let cases = r["cases"].as_array().unwrap();
        assert!(cases.len() >= 8);
        for (i, c) in cases.iter().enumerate() {
            let (a, b) = (flags(&c["a"]), flags(&c["b"]));
            for (what, got) in [("ac1", gwet_ac1(&a, &b)), ("pabak", pabak(&a, &b))] {
                let want = c[what].as_f64().unwrap();
                assert!(
                    got.is_some_and(|g| (g - want).abs() < 1e-4),
                    "case {i} {what}: {got:?}, irrCAC says {want}"
                );
            }
        }
        // Where kappa collapses (one rater saw one class only), AC1 still reads.
        let one_sided = &cases[1];
        let (a, b) = (flags(&one_sided["a"]), flags(&one_sided["b"]));
        assert_eq!(cohen_kappa(&a, &b), Some(0.0));
        assert!(gwet_ac1(&a, &b).unwrap() > 0.85);
    }

    /// Every case of `tests/fixtures/agreement/reference.json` (written by
    /// `scripts/agreement-expected.py` with scikit-learn, statsmodels and the `krippendorff`
    /// package): ties, missing ratings, a single class (undefined there as here).
    #[test]
    fn agreement_equals_the_reference_implementations() {
        let path = concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/tests/fixtures/agreement/reference.json"
        );
        let r: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
        let same = |got: Option<f64>, want: &serde_json::Value, what: &str| match want.as_f64() {
            Some(w) => assert!(
                got.is_some_and(|g| (g - w).abs() < 1e-9),
                "{what}: {got:?}, the reference says {w}"
            ),
            None => assert_eq!(got, None, "{what}: the reference says undefined"),
        };
        let ints = |v: &serde_json::Value| -> Vec<i64> {
            v.as_array()
                .unwrap()
                .iter()
                .map(|x| x.as_i64().unwrap())
                .collect()
        };
        for (i, c) in r["cohen"].as_array().unwrap().iter().enumerate() {
            let got = cohen_kappa(&ints(&c["a"]), &ints(&c["b"]));
            same(got, &c["kappa"], &format!("cohen case {i}"));
        }
        for (i, c) in r["fleiss"].as_array().unwrap().iter().enumerate() {
            let counts: Vec<Vec<u32>> = c["counts"]
                .as_array()
                .unwrap()
                .iter()
                .map(|row| ints(row).into_iter().map(|x| x as u32).collect())
                .collect();
            same(
                fleiss_kappa(&counts),
                &c["kappa"],
                &format!("fleiss case {i}"),
            );
        }
        for (i, c) in r["krippendorff"].as_array().unwrap().iter().enumerate() {
            // Raters x answers, null missing: each answer's ratings are a unit.
            let raters = c["raters"].as_array().unwrap();
            let n = raters[0].as_array().unwrap().len();
            let units: Vec<Vec<f64>> = (0..n)
                .map(|u| raters.iter().filter_map(|r| r[u].as_f64()).collect())
                .collect();
            same(
                krippendorff_alpha(&units, Metric::Nominal),
                &c["nominal"],
                &format!("krippendorff nominal case {i}"),
            );
            same(
                krippendorff_alpha(&units, Metric::Interval),
                &c["interval"],
                &format!("krippendorff interval case {i}"),
            );
        }
        assert!(r["cohen"].as_array().unwrap().len() >= 9);
    }

    #[test]
    fn observed_agreement_counts_pairs() {
        // (a, a, b): one of three pairs agrees; (c, c): one of one. Two of four in all.
        close(
            observed_agreement(&[vec!["a", "a", "b"], vec!["c", "c"]]),
            2.0 / 4.0,
            1e-12,
        );
        assert_eq!(observed_agreement(&[vec!["a"]]), None);
    }
}
