//! Semantic entropy (Farquhar et al., Nature 2024): sampled answers to one question grouped
//! into meanings, then the entropy over the meanings. Two answers mean the same when each
//! entails the other; answers that are the same text once normalised need no judge at all.
//!
//! Clustering is the paper's greedy pass: each answer joins the first cluster whose first
//! member it is equivalent to, else starts a cluster. It is written as a replay over what is
//! known (`cluster`): given the entailment verdicts known so far it either finishes or names
//! the one question it needs next, so a front-end can ask a judge, store the verdict and replay,
//! and a stored clustering is recomputed from its verdicts rather than kept.

use serde::Serialize;

/// Text as compared for "the same answer": lower case, words separated by one space, outer
/// quotes and final punctuation dropped ("Paris." and "paris" are one answer).
pub fn normalise(text: &str) -> String {
    let words: Vec<&str> = text.split_whitespace().collect();
    let joined = words.join(" ").to_lowercase();
    joined
        .trim_matches(|c: char| matches!(c, '"' | '\'' | '`' | '“' | '”' | '‘' | '’'))
        .trim_end_matches(['.', '!', '?', ';', ':', ','])
        .trim()
        .to_string()
}

/// Where a clustering stands.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Clustering {
    /// Every answer's cluster (clusters numbered from 0 in order of their first member).
    Done(Vec<usize>),
    /// The clustering needs to know whether answer `premise` entails answer `hypothesis`
    /// (indices into the answers).
    Need { premise: usize, hypothesis: usize },
}

/// Clusters `answers` with the entailment verdicts `entails(premise, hypothesis)` knows
/// (`Some(true)`: entails; `None`: not known yet). Normalised-equal answers are equivalent
/// without a verdict; otherwise both directions must entail, and the second is asked only when
/// the first holds.
pub fn cluster(
    answers: &[&str],
    mut entails: impl FnMut(usize, usize) -> Option<bool>,
) -> Clustering {
    let norm: Vec<String> = answers.iter().map(|a| normalise(a)).collect();
    // The first member of each cluster, and every answer's cluster.
    let mut heads: Vec<usize> = Vec::new();
    let mut ids = Vec::with_capacity(answers.len());
    'answers: for i in 0..answers.len() {
        for (c, &h) in heads.iter().enumerate() {
            let same = if norm[i] == norm[h] {
                true
            } else {
                match entails(i, h) {
                    None => {
                        return Clustering::Need {
                            premise: i,
                            hypothesis: h,
                        };
                    }
                    Some(false) => false,
                    Some(true) => match entails(h, i) {
                        None => {
                            return Clustering::Need {
                                premise: h,
                                hypothesis: i,
                            };
                        }
                        Some(b) => b,
                    },
                }
            };
            if same {
                ids.push(c);
                continue 'answers;
            }
        }
        ids.push(heads.len());
        heads.push(i);
    }
    Clustering::Done(ids)
}

/// The entropy of a clustering, with its clusters' shares.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Entropy {
    /// Answers clustered.
    pub answers: usize,
    pub clusters: usize,
    /// Discrete semantic entropy (nats): over the share of answers in each cluster.
    pub discrete: f64,
    /// Probability-weighted semantic entropy (nats): each cluster's probability the normalised
    /// sum of its members' sequence probabilities. `None` unless every answer has one.
    pub weighted: Option<f64>,
}

/// Entropy of `ids` (as [`Clustering::Done`] gives them); `loglik`: each answer's sequence
/// log-likelihood when known (the paper uses the length-normalised one: the mean token
/// log-probability).
pub fn entropy(ids: &[usize], loglik: &[Option<f64>]) -> Option<Entropy> {
    if ids.is_empty() {
        return None;
    }
    let k = ids.iter().max().map_or(0, |m| m + 1);
    let n = ids.len() as f64;
    let mut counts = vec![0usize; k];
    for &c in ids {
        counts[c] += 1;
    }
    let discrete = -counts
        .iter()
        .filter(|&&c| c > 0)
        .map(|&c| {
            let p = c as f64 / n;
            p * p.ln()
        })
        .sum::<f64>();
    let weighted = (loglik.len() == ids.len() && loglik.iter().all(Option::is_some)).then(|| {
        // log p(cluster) = logsumexp of its members, then normalised over the clusters.
        let mut by: Vec<Vec<f64>> = vec![Vec::new(); k];
        for (&c, l) in ids.iter().zip(loglik) {
            by[c].push(l.unwrap_or(f64::NEG_INFINITY));
        }
        let lc: Vec<f64> = by.iter().map(|v| logsumexp(v)).collect();
        let z = logsumexp(&lc);
        -lc.iter()
            .map(|l| {
                let lp = l - z;
                if lp.is_finite() { lp.exp() * lp } else { 0.0 }
            })
            .sum::<f64>()
    });
    Some(Entropy {
        answers: ids.len(),
        clusters: k,
        discrete: clean(discrete),
        weighted: weighted.map(clean),
    })
}

/// -0.0 and rounding dust below zero read as 0.
fn clean(x: f64) -> f64 {
    if x.abs() < 1e-12 { 0.0 } else { x }
}

fn logsumexp(xs: &[f64]) -> f64 {
    let m = xs.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    if !m.is_finite() {
        return m;
    }
    m + xs.iter().map(|x| (x - m).exp()).sum::<f64>().ln()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Entailment by hand: answers mean the same when they share their first word, except
    /// that "Lyon" entails "France" one way only.
    fn by_first_word(answers: &[&str], asked: &mut Vec<(usize, usize)>) -> Clustering {
        let mut known = std::collections::HashMap::new();
        loop {
            match cluster(answers, |p, h| known.get(&(p, h)).copied()) {
                Clustering::Need {
                    premise,
                    hypothesis,
                } => {
                    asked.push((premise, hypothesis));
                    let first = |i: usize| answers[i].split_whitespace().next().unwrap_or("");
                    let yes = first(premise) == first(hypothesis)
                        || (answers[premise].starts_with("Lyon")
                            && answers[hypothesis].starts_with("France"));
                    known.insert((premise, hypothesis), yes);
                }
                done => return done,
            }
        }
    }

    #[test]
    fn equal_answers_cost_no_question() {
        let mut asked = Vec::new();
        let answers = ["Paris.", "paris", "  \"Paris\" ", "PARIS!"];
        assert_eq!(
            by_first_word(&answers, &mut asked),
            Clustering::Done(vec![0, 0, 0, 0])
        );
        assert!(asked.is_empty());
        let e = entropy(&[0, 0, 0, 0], &[]).unwrap();
        assert_eq!((e.clusters, e.discrete, e.weighted), (1, 0.0, None));
    }

    #[test]
    fn hand_made_clusters() {
        let mut asked = Vec::new();
        let answers = [
            "Paris is the capital",
            "Paris of course",
            "France as a whole",
            "Lyon I think",
            "Lyon surely",
        ];
        let Clustering::Done(ids) = by_first_word(&answers, &mut asked) else {
            panic!()
        };
        // Lyon entails France but not back: two clusters, not one.
        assert_eq!(ids, vec![0, 0, 1, 2, 2]);
        // Each answer against each earlier head; the way back only after a yes.
        assert_eq!(
            asked,
            vec![
                (1, 0),
                (0, 1),
                (2, 0),
                (3, 0),
                (3, 2),
                (2, 3),
                (4, 0),
                (4, 2),
                (2, 4),
                (4, 3),
                (3, 4)
            ]
        );
        // Shares 2/5, 2/5, 1/5.
        let e = entropy(&ids, &[]).unwrap();
        let want = -(2.0 * 0.4 * 0.4f64.ln() + 0.2 * 0.2f64.ln());
        assert!((e.discrete - want).abs() < 1e-12, "{}", e.discrete);
        assert_eq!(e.clusters, 3);
    }

    #[test]
    fn all_different_is_log_n() {
        let e = entropy(&[0, 1, 2, 3], &[]).unwrap();
        assert!((e.discrete - 4f64.ln()).abs() < 1e-12);
        assert!(entropy(&[], &[]).is_none());
    }

    #[test]
    fn weighted_by_sequence_probability() {
        // Two clusters; the first's members are far likelier: low weighted entropy though
        // the counts are even.
        let ids = [0, 0, 1, 1];
        let ll = [Some(-0.1), Some(-0.2), Some(-5.0), Some(-6.0)];
        let e = entropy(&ids, &ll).unwrap();
        assert!((e.discrete - 2f64.ln()).abs() < 1e-12);
        let w = e.weighted.unwrap();
        let a = ((-0.1f64).exp() + (-0.2f64).exp()).ln();
        let b = ((-5.0f64).exp() + (-6.0f64).exp()).ln();
        let z = (a.exp() + b.exp()).ln();
        let (pa, pb) = ((a - z).exp(), (b - z).exp());
        let want = -(pa * pa.ln() + pb * pb.ln());
        assert!((w - want).abs() < 1e-12, "{w} vs {want}");
        assert!(w < e.discrete);
        // One answer without a likelihood: no weighted form.
        let e = entropy(&ids, &[Some(-0.1), None, Some(-5.0), Some(-6.0)]).unwrap();
        assert_eq!(e.weighted, None);
        // Equal likelihoods: the weighted form is the discrete one.
        let e = entropy(&[0, 1, 1], &[Some(-1.0); 3]).unwrap();
        assert!((e.weighted.unwrap() - e.discrete).abs() < 1e-12);
    }
}
