//! Two wordings of one judge on the same labelled answers: which agrees with people.
//!
//! A judge asked with the user's template is kept as `<model>~<label>`
//! (`review::judge_templates`), so every wording of a model is a judge of its own in the
//! trial. Here each two of one model are compared where both and people decided: each one's
//! accuracy, kappa and AC1, the answers only one of them got right (McNemar's exact test on
//! those: a difference the answers cannot tell from chance is said to be one), and the
//! difference in accuracy with its bootstrap 95% interval (the same answers resampled for
//! both, so the interval is of the difference, not of two separate numbers).

use rand::{Rng, SeedableRng};
use serde::Serialize;

use super::judge_templates::{label_in, model_of};
use super::pairs::{Est, ac1_of, accuracy, kappa};

/// Two wordings compared on the answers both judged and people labelled.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct TemplatePair {
    pub a: String,
    pub b: String,
    pub n: usize,
    pub accuracy_a: Option<f64>,
    pub accuracy_b: Option<f64>,
    pub kappa_a: Option<f64>,
    pub kappa_b: Option<f64>,
    pub ac1_a: Option<f64>,
    pub ac1_b: Option<f64>,
    /// Answers where only `a`'s verdict matched people's.
    pub only_a_right: usize,
    pub only_b_right: usize,
    /// McNemar's exact two-sided p over the answers only one got right.
    pub p_value: Option<f64>,
    /// Accuracy of `b` minus accuracy of `a`, with its interval.
    pub difference: Est,
}

impl TemplatePair {
    /// Which wording agrees with people more, in a sentence.
    pub fn say(&self) -> String {
        let (Some(d), Some(p)) = (self.difference.value, self.p_value) else {
            return format!(
                "{} and {}: no answer both judged and people labelled",
                self.a, self.b
            );
        };
        let f = |v: Option<f64>| v.map_or("-".into(), |v| format!("{v:+.2}"));
        let (better, worse) = if d >= 0.0 {
            (&self.b, &self.a)
        } else {
            (&self.a, &self.b)
        };
        let shown = format!(
            "accuracy {} [{}, {}], McNemar p {}",
            f(Some(d)),
            f(self.difference.low),
            f(self.difference.high),
            crate::text::fixed(p, 3)
        );
        if self.only_a_right + self.only_b_right == 0 {
            format!(
                "{} and {} agree with people on the same {} answers",
                self.a, self.b, self.n
            )
        } else if p < 0.05 {
            format!("{better} agrees with people more than {worse} ({shown})")
        } else {
            format!(
                "{better} agrees with people more than {worse} on these {} answers, but not beyond chance ({shown}): label more answers to tell",
                self.n
            )
        }
    }
}

/// Whether two judges are wordings of one model (one of them asked with a template).
pub fn same_model(a: &str, b: &str) -> bool {
    a != b && model_of(a) == model_of(b) && (label_in(a).is_some() || label_in(b).is_some())
}

/// Compares `a` and `b` on `answers`: per answer, (a says hallucinated, b says hallucinated,
/// people say hallucinated).
pub fn compare(
    a: &str,
    b: &str,
    answers: &[(bool, bool, bool)],
    resamples: usize,
    seed: u64,
) -> TemplatePair {
    let of_a: Vec<(bool, bool)> = answers.iter().map(|&(x, _, p)| (x, p)).collect();
    let of_b: Vec<(bool, bool)> = answers.iter().map(|&(_, y, p)| (y, p)).collect();
    let only_a_right = answers
        .iter()
        .filter(|&&(x, y, p)| x == p && y != p)
        .count();
    let only_b_right = answers
        .iter()
        .filter(|&&(x, y, p)| y == p && x != p)
        .count();
    let diff = |s: &[(bool, bool, bool)]| -> Option<f64> {
        (!s.is_empty()).then(|| {
            s.iter()
                .map(|&(x, y, p)| f64::from(u8::from(y == p)) - f64::from(u8::from(x == p)))
                .sum::<f64>()
                / s.len() as f64
        })
    };
    let (low, high) = boot_difference(answers, resamples, seed, diff);
    TemplatePair {
        a: a.to_string(),
        b: b.to_string(),
        n: answers.len(),
        accuracy_a: accuracy(&of_a),
        accuracy_b: accuracy(&of_b),
        kappa_a: kappa(&of_a),
        kappa_b: kappa(&of_b),
        ac1_a: ac1_of(&of_a),
        ac1_b: ac1_of(&of_b),
        only_a_right,
        only_b_right,
        p_value: (!answers.is_empty()).then(|| mcnemar_exact(only_a_right, only_b_right)),
        difference: Est {
            value: diff(answers),
            low,
            high,
        },
    }
}

/// Percentile bootstrap 95% interval of `stat` over the answers resampled with replacement.
fn boot_difference(
    answers: &[(bool, bool, bool)],
    resamples: usize,
    seed: u64,
    stat: impl Fn(&[(bool, bool, bool)]) -> Option<f64>,
) -> (Option<f64>, Option<f64>) {
    if answers.len() < 2 || resamples == 0 {
        return (None, None);
    }
    let mut rng = rand::rngs::StdRng::seed_from_u64(seed);
    let mut got = Vec::with_capacity(resamples);
    let mut sample = Vec::with_capacity(answers.len());
    for _ in 0..resamples {
        sample.clear();
        sample.extend((0..answers.len()).map(|_| answers[rng.random_range(0..answers.len())]));
        got.extend(stat(&sample));
    }
    got.sort_by(f64::total_cmp);
    let at = |q: f64| got[((got.len() - 1) as f64 * q).round() as usize];
    (Some(at(0.025)), Some(at(0.975)))
}

/// McNemar's exact test: the two-sided binomial p of `b` against `c` discordant answers
/// (each equally likely under no difference). 1 when there are none.
pub fn mcnemar_exact(b: usize, c: usize) -> f64 {
    let n = b + c;
    if n == 0 {
        return 1.0;
    }
    let k = b.min(c);
    // ln C(n, i) 0.5^n, summed for i = 0..=k, in log space (n may be thousands).
    let ln_half_n = n as f64 * 0.5f64.ln();
    let mut ln_choose = 0.0; // ln C(n, 0)
    let mut tail = 0.0;
    for i in 0..=k {
        if i > 0 {
            ln_choose += ((n - i + 1) as f64).ln() - (i as f64).ln();
        }
        tail += (ln_choose + ln_half_n).exp();
    }
    (2.0 * tail).min(1.0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mcnemar_matches_the_binomial_by_hand() {
        // b=1, c=9: 2 * (C(10,0)+C(10,1)) / 1024 = 22/1024.
        assert!((mcnemar_exact(1, 9) - 22.0 / 1024.0).abs() < 1e-12);
        assert!((mcnemar_exact(9, 1) - 22.0 / 1024.0).abs() < 1e-12);
        // Even split: the whole distribution, capped at 1.
        assert_eq!(mcnemar_exact(5, 5), 1.0);
        assert_eq!(mcnemar_exact(0, 0), 1.0);
        // b=0, c=6: 2 / 64.
        assert!((mcnemar_exact(0, 6) - 2.0 / 64.0).abs() < 1e-12);
        // Large n stays finite and small.
        let p = mcnemar_exact(100, 300);
        assert!(p > 0.0 && p < 1e-20, "{p}");
    }

    #[test]
    fn the_wording_people_agree_with_is_named() {
        // 20 answers: a matches people on 10, b on 18 (b right wherever a is).
        let mut answers = Vec::new();
        for i in 0..20 {
            let people = i % 2 == 0;
            let a = if i < 10 { people } else { !people };
            let b = if i < 18 { people } else { !people };
            answers.push((a, b, people));
        }
        let c = compare("smol~a", "smol~b", &answers, 500, 1);
        assert_eq!((c.n, c.only_a_right, c.only_b_right), (20, 0, 8));
        assert_eq!(c.accuracy_a, Some(0.5));
        assert_eq!(c.accuracy_b, Some(0.9));
        assert!((c.difference.value.unwrap() - 0.4).abs() < 1e-12);
        assert!(c.difference.low.unwrap() > 0.0, "{:?}", c.difference);
        assert!(c.p_value.unwrap() < 0.01);
        let s = c.say();
        assert!(
            s.starts_with("smol~b agrees with people more than smol~a"),
            "{s}"
        );
        // Swapped, the same sentence names the same winner.
        let swapped: Vec<_> = answers.iter().map(|&(a, b, p)| (b, a, p)).collect();
        let s = compare("smol~b", "smol~a", &swapped, 500, 1).say();
        assert!(
            s.starts_with("smol~b agrees with people more than smol~a"),
            "{s}"
        );
    }

    #[test]
    fn a_small_difference_is_not_called_one() {
        let answers = vec![
            (true, true, true),
            (false, true, true),
            (false, false, false),
            (true, true, false),
        ];
        let c = compare("j", "j~x", &answers, 200, 3);
        assert_eq!((c.only_a_right, c.only_b_right), (0, 1));
        assert!(c.say().contains("not beyond chance"), "{}", c.say());
        assert!(same_model("j", "j~x"));
        assert!(same_model("j~a", "j~b"));
        assert!(!same_model("j", "k~x"));
        assert!(!same_model("j", "j"));
    }
}
