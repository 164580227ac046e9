//! AutoHall's analyses of one run (the paper's Fig. 4, Fig. 6 and Table X), computed from what
//! is stored, per model and temperature, on the balanced set's references whose K pairs all
//! have a verdict:
//! - the **K sweep**: detection as if only the first k samples had been drawn, k = 1..K;
//! - the **conflicts histogram**: how many references had 0, 1, ..., K conflicting pairs,
//!   hallucinated and factual apart;
//! - detection **by reference length** (words) and **by topic** (the claim's topic from the
//!   data).
//!
//! Only round 0 counts, as in [`super::results`].

use std::collections::{BTreeMap, HashMap};

use serde::Serialize;

use super::results::{Outcome, balanced_targets, hallucinated, mean, outcomes};
use super::stored::Stored;
use crate::eval::binary::{self, Confusion, Scores};
use crate::store::Target;

/// Detection with the first `k` samples.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub(crate) struct SweepRow {
    pub(crate) k: u32,
    pub(crate) or_rule: Scores,
    pub(crate) auroc: Option<f64>,
}

/// Detection on one part of the scored set (a length group, a topic).
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub(crate) struct Slice {
    pub(crate) name: String,
    pub(crate) scored: usize,
    pub(crate) hallucinated: usize,
    pub(crate) or_rule: Scores,
    pub(crate) auroc: Option<f64>,
    pub(crate) mean_conflicts_h: Option<f64>,
    pub(crate) mean_conflicts_f: Option<f64>,
}

/// The analyses of one model and temperature.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub(crate) struct GroupAnalysis {
    pub(crate) model: String,
    pub(crate) temperature: Option<f64>,
    pub(crate) k: u32,
    /// References of the balanced set with all K pairs checked.
    pub(crate) scored: usize,
    /// Pair replies no verdict could be read from, over the scored references.
    pub(crate) unreadable_pairs: u32,
    pub(crate) sweep: Vec<SweepRow>,
    /// (conflicts, hallucinated references, factual references), conflicts = 0..=K.
    pub(crate) histogram: Vec<(u32, usize, usize)>,
    pub(crate) by_length: Vec<Slice>,
    pub(crate) by_topic: Vec<Slice>,
}

/// The reference length groups, in words (upper bounds, inclusive; the last is open).
pub(crate) const LENGTH_GROUPS: [(usize, &str); 5] = [
    (50, "1-50 words"),
    (100, "51-100 words"),
    (150, "101-150 words"),
    (200, "151-200 words"),
    (usize::MAX, "201+ words"),
];

/// A scored reference: its target, whether it is hallucinated, its outcome.
pub(crate) type Row<'a> = (&'a Target, bool, Outcome);

/// Detection (OR rule, AUROC of the conflict rate, mean conflicts) over some references.
pub(crate) fn slice(name: String, rows: &[Row<'_>]) -> Slice {
    let conflicts = |want: bool| {
        mean(
            &rows
                .iter()
                .filter(|(_, h, _)| *h == want)
                .map(|(_, _, o)| f64::from(o.conflicts))
                .collect::<Vec<_>>(),
        )
    };
    let points: Vec<(f64, bool)> = rows
        .iter()
        .filter_map(|(_, h, o)| Some((o.rate()?, *h)))
        .collect();
    Slice {
        name,
        scored: rows.len(),
        hallucinated: rows.iter().filter(|(_, h, _)| *h).count(),
        or_rule: Confusion::of(rows.iter().map(|(_, h, o)| (*h, o.flagged()))).scores(),
        auroc: binary::auroc(&points).map(|v| 100.0 * v),
        mean_conflicts_h: conflicts(true),
        mean_conflicts_f: conflicts(false),
    }
}

/// Claims without a topic among those a model assigned (its reply could not be read).
pub(crate) const NO_TOPIC: &str = "(no topic read)";

/// The analyses of every model and temperature of a claims run with K samples. `topics`: the
/// claims' topics as a model assigned them (by claim text), instead of the data's.
pub(crate) fn analyse(
    stored: &Stored,
    k: u32,
    seed: u64,
    topics: Option<&HashMap<String, String>>,
) -> Vec<GroupAnalysis> {
    let k = k.max(1);
    let full = outcomes(stored, k, 0);
    let chosen = balanced_targets(&stored.targets, seed);
    let mut groups: BTreeMap<(String, u64), Vec<Row<'_>>> = BTreeMap::new();
    for t in stored.targets.iter().filter(|t| chosen.contains(&t.idx)) {
        let (Some(h), Some(o)) = (hallucinated(t), full.get(&t.idx)) else {
            continue;
        };
        if o.complete() {
            let key = (
                t.model.clone(),
                t.temperature.map(f64::to_bits).unwrap_or(u64::MAX),
            );
            groups.entry(key).or_default().push((t, h, *o));
        }
    }
    let by_k: Vec<_> = (1..=k).map(|j| (j, outcomes(stored, j, 0))).collect();
    groups
        .into_values()
        .map(|rows| {
            let sweep = by_k
                .iter()
                .map(|(j, outs)| {
                    let part: Vec<Row<'_>> = rows
                        .iter()
                        .filter_map(|(t, h, _)| Some((*t, *h, *outs.get(&t.idx)?)))
                        .collect();
                    let s = slice(String::new(), &part);
                    SweepRow {
                        k: *j,
                        or_rule: s.or_rule,
                        auroc: s.auroc,
                    }
                })
                .collect();
            let histogram = (0..=k)
                .map(|c| {
                    let of = |want: bool| {
                        rows.iter()
                            .filter(|(_, h, o)| *h == want && o.conflicts == c)
                            .count()
                    };
                    (c, of(true), of(false))
                })
                .collect();
            let mut lengths: BTreeMap<usize, Vec<Row<'_>>> = BTreeMap::new();
            let mut by_topic: BTreeMap<String, Vec<Row<'_>>> = BTreeMap::new();
            for r in &rows {
                let words =
                    r.0.answer
                        .as_deref()
                        .unwrap_or("")
                        .split_whitespace()
                        .count();
                let g = LENGTH_GROUPS
                    .iter()
                    .position(|(max, _)| words <= *max)
                    .unwrap_or(LENGTH_GROUPS.len() - 1);
                lengths.entry(g).or_default().push(*r);
                let topic = match topics {
                    None => r.0.task_id.clone(),
                    Some(m) => m
                        .get(&r.0.question)
                        .cloned()
                        .unwrap_or_else(|| NO_TOPIC.to_string()),
                };
                by_topic.entry(topic).or_default().push(*r);
            }
            GroupAnalysis {
                model: rows[0].0.model.clone(),
                temperature: rows[0].0.temperature,
                k,
                scored: rows.len(),
                unreadable_pairs: rows.iter().map(|(_, _, o)| o.unparsed).sum(),
                sweep,
                histogram,
                by_length: lengths
                    .into_iter()
                    .map(|(g, rs)| slice(LENGTH_GROUPS[g].1.to_string(), &rs))
                    .collect(),
                by_topic: by_topic
                    .into_iter()
                    .map(|(name, rs)| slice(name, &rs))
                    .collect(),
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::dataset::claims::Truth;
    use crate::detect::test_support;
    use crate::store::{Class, PairRecord, Verdict};

    /// A reference of `words` words on `topic`, hallucinated or not (label true, classified
    /// false or true).
    fn target(idx: u32, h: bool, words: usize, topic: &str) -> Target {
        let class = if h { Class::False } else { Class::True };
        Target {
            task_id: topic.into(),
            question: format!("claim {idx}"),
            answer: Some(vec!["w"; words].join(" ")),
            ..test_support::target(idx, Truth::True, class)
        }
    }

    fn pair(target: u32, k: u32, verdict: Verdict) -> PairRecord {
        test_support::pair(target, 0, k, verdict)
    }

    /// Two hallucinated and two factual references, K = 3, every one in the balanced set. The
    /// pairs (C conflict, . consistent, ? unreadable), by sample:
    ///   h0 (40 words, topic a): . C C      h1 (120 words, a): . . .
    ///   f2 (40 words, b):       . . ?      f3 (300 words, b): C . .
    /// With k = 1 only f3 is flagged: recall 0, accuracy 25. With k = 2, h0 too: recall 50,
    /// precision 50. With k = 3 the same. Histogram (conflicts: h, f): 0: 1, 1; 1: 0, 1; 2: 1, 0.
    #[test]
    fn the_sweep_the_histogram_and_the_slices_by_hand() {
        use Verdict::{Conflict as C, Consistent as K, Unparsed as U};
        let targets = vec![
            target(0, true, 40, "a"),
            target(1, true, 120, "a"),
            target(2, false, 40, "b"),
            target(3, false, 300, "b"),
        ];
        let plan = [[K, C, C], [K, K, K], [K, K, U], [C, K, K]];
        let pairs = plan
            .iter()
            .enumerate()
            .flat_map(|(t, vs)| {
                vs.iter()
                    .enumerate()
                    .map(move |(k, v)| pair(t as u32, k as u32, *v))
            })
            .collect();
        let stored = Stored {
            targets,
            samples: vec![],
            entailments: vec![],
            pairs,
        };
        let a = analyse(&stored, 3, 0, None);
        assert_eq!(a.len(), 1);
        let g = &a[0];
        assert_eq!((g.scored, g.unreadable_pairs), (4, 1));
        let recall: Vec<Option<f64>> = g.sweep.iter().map(|s| s.or_rule.recall).collect();
        assert_eq!(recall, vec![Some(0.0), Some(50.0), Some(50.0)]);
        assert_eq!(g.sweep[0].or_rule.accuracy, Some(25.0));
        assert_eq!(g.sweep[1].or_rule.precision, Some(50.0));
        assert_eq!(
            g.histogram,
            vec![(0, 1, 1), (1, 0, 1), (2, 1, 0), (3, 0, 0)]
        );
        let lengths: Vec<(&str, usize)> = g
            .by_length
            .iter()
            .map(|s| (s.name.as_str(), s.scored))
            .collect();
        assert_eq!(
            lengths,
            vec![("1-50 words", 2), ("101-150 words", 1), ("201+ words", 1)]
        );
        let a_topic = &g.by_topic[0];
        assert_eq!((a_topic.name.as_str(), a_topic.hallucinated), ("a", 2));
        assert_eq!(a_topic.or_rule.recall, Some(50.0));
        assert_eq!(a_topic.mean_conflicts_h, Some(1.0));
        // Topic b has no hallucinated reference: no recall, no AUROC.
        assert_eq!(g.by_topic[1].or_rule.recall, None);
        assert_eq!(g.by_topic[1].auroc, None);

        // Topics a model assigned, by the claim's text, instead of the data's; a claim it gave
        // none stands apart.
        let q = |i: usize| stored.targets[i].question.clone();
        let assigned = HashMap::from([
            (q(0), "Science".to_string()),
            (q(2), "Science".to_string()),
            (q(3), "Law".to_string()),
        ]);
        let g = &analyse(&stored, 3, 0, Some(&assigned))[0];
        let topics: Vec<(&str, usize, usize)> = g
            .by_topic
            .iter()
            .map(|s| (s.name.as_str(), s.scored, s.hallucinated))
            .collect();
        assert_eq!(
            topics,
            vec![(NO_TOPIC, 1, 1), ("Law", 1, 0), ("Science", 2, 1)]
        );
    }

    /// A reference with a pair still missing is not scored, nor in the sweep.
    #[test]
    fn an_unfinished_reference_is_left_out() {
        let stored = Stored {
            targets: vec![target(0, true, 10, "a"), target(1, false, 10, "a")],
            samples: vec![],
            entailments: vec![],
            pairs: vec![
                pair(0, 0, Verdict::Conflict),
                pair(1, 0, Verdict::Consistent),
                pair(1, 1, Verdict::Consistent),
            ],
        };
        let g = &analyse(&stored, 2, 0, None)[0];
        assert_eq!(g.scored, 1);
        assert_eq!(g.sweep[0].or_rule.n, 1);
    }
}
