//! Two raters' yes/no verdicts on the same answers (a judge's and people's, as `(judge says
//! hallucinated, people say hallucinated)`): accuracy, Cohen's kappa and Gwet's AC1, and
//! their percentile bootstrap intervals over the answers.

use rand::{Rng, SeedableRng};

use super::agreement;

/// A statistic with its bootstrap 95% interval (none where it is undefined).
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Est {
    pub value: Option<f64>,
    pub low: Option<f64>,
    pub high: Option<f64>,
}

pub(crate) fn accuracy(flags: &[(bool, bool)]) -> Option<f64> {
    (!flags.is_empty())
        .then(|| flags.iter().filter(|(a, b)| a == b).count() as f64 / flags.len() as f64)
}

pub(crate) fn kappa(flags: &[(bool, bool)]) -> Option<f64> {
    let (a, b): (Vec<bool>, Vec<bool>) = flags.iter().copied().unzip();
    agreement::cohen_kappa(&a, &b)
}

pub(crate) fn ac1_of(flags: &[(bool, bool)]) -> Option<f64> {
    let (a, b): (Vec<bool>, Vec<bool>) = flags.iter().copied().unzip();
    agreement::gwet_ac1(&a, &b)
}

pub(crate) type Interval = (Option<f64>, Option<f64>);

/// Percentile bootstrap 95% intervals of accuracy, kappa and AC1 over the answers (resampled
/// with replacement; resamples where one is undefined are left out of its interval).
pub(crate) fn boot(
    flags: &[(bool, bool)],
    resamples: usize,
    seed: u64,
) -> (Interval, Interval, Interval) {
    if flags.len() < 2 || resamples == 0 {
        return ((None, None), (None, None), (None, None));
    }
    let mut rng = rand::rngs::StdRng::seed_from_u64(seed);
    let mut accs = Vec::with_capacity(resamples);
    let mut kaps = Vec::with_capacity(resamples);
    let mut ac1s = Vec::with_capacity(resamples);
    let mut sample = Vec::with_capacity(flags.len());
    for _ in 0..resamples {
        sample.clear();
        sample.extend((0..flags.len()).map(|_| flags[rng.random_range(0..flags.len())]));
        accs.extend(accuracy(&sample));
        kaps.extend(kappa(&sample));
        ac1s.extend(ac1_of(&sample));
    }
    (
        percentiles(&mut accs),
        percentiles(&mut kaps),
        percentiles(&mut ac1s),
    )
}

fn percentiles(v: &mut [f64]) -> Interval {
    if v.is_empty() {
        return (None, None);
    }
    v.sort_by(f64::total_cmp);
    let at = |q: f64| v[((v.len() - 1) as f64 * q).round() as usize];
    (Some(at(0.025)), Some(at(0.975)))
}
