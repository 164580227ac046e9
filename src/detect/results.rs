//! What a detection run comes to, computed from what is stored (never kept separately, so it
//! cannot drift from the verdicts): per answer, AutoHall's OR-rule flag, the conflicts out of K
//! and the mean conflict rate; per model and temperature, AutoHall's collection (#N, #H, H%) and
//! its detection metrics on the balanced set.
//!
//! Only round 0 counts: the K samples the run was set up with. Rounds added later ("sample
//! again" in the TUI) are for looking, and never move a reported number.

use std::collections::{BTreeMap, HashMap, HashSet};

use serde::Serialize;

use super::stored::Stored;
use crate::eval::binary::{self, Confusion, Scores};
use crate::store::{Class, Target, Verdict};

/// The pair verdicts of one answer in one round.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct Outcome {
    pub k: u32,
    pub conflicts: u32,
    pub consistent: u32,
    /// The judge replied but could not be read, every attempt.
    pub unparsed: u32,
    /// Pairs not checked: the sample or the judge failed, or not done yet.
    pub missing: u32,
}

impl Outcome {
    /// AutoHall's rule: flagged when at least one pair conflicts.
    pub fn flagged(&self) -> bool {
        self.conflicts > 0
    }

    /// Every pair has a verdict (conflict, consistent or unparsed).
    pub fn complete(&self) -> bool {
        self.missing == 0
    }

    /// Every pair checked and not one verdict could be read: neither flagged nor cleared (a
    /// screen says "undecided" and a share of flagged answers leaves it out).
    pub fn undecided(&self) -> bool {
        self.complete() && self.conflicts == 0 && self.consistent == 0 && self.unparsed > 0
    }

    /// The mean conflict rate, SelfCheckGPT-prompt style: a conflict counts 1, a consistent
    /// pair 0 and an unreadable verdict 0.5, over the pairs checked. `None` before any.
    pub fn rate(&self) -> Option<f64> {
        let n = self.conflicts + self.consistent + self.unparsed;
        (n > 0).then(|| (self.conflicts as f64 + 0.5 * self.unparsed as f64) / n as f64)
    }
}

/// Per target, the outcome of `round` in the run's first wording of the pair check (the one
/// every flag uses).
pub(crate) fn outcomes(stored: &Stored, k: u32, round: u32) -> HashMap<u32, Outcome> {
    outcomes_in(stored, k, round, 0)
}

/// Per target, the outcome of `round` in pair wording `wording`.
pub(crate) fn outcomes_in(
    stored: &Stored,
    k: u32,
    round: u32,
    wording: u32,
) -> HashMap<u32, Outcome> {
    let mut out: HashMap<u32, Outcome> = stored
        .targets
        .iter()
        .filter(|t| t.answer.is_some() && !t.refused)
        .map(|t| {
            (
                t.idx,
                Outcome {
                    k,
                    missing: k,
                    ..Outcome::default()
                },
            )
        })
        .collect();
    for p in stored
        .pairs
        .iter()
        .filter(|p| p.round == round && p.k < k && p.wording == wording)
    {
        let Some(o) = out.get_mut(&p.target) else {
            continue;
        };
        match p.verdict {
            Verdict::Conflict => o.conflicts += 1,
            Verdict::Consistent => o.consistent += 1,
            Verdict::Unparsed => o.unparsed += 1,
            Verdict::Failed => continue,
        }
        o.missing -= 1;
    }
    out
}

/// Whether a claim's reference is hallucinatory: its classification differs from the label.
/// `None` when it cannot be told (no reference, a refusal, no readable classification).
pub(crate) fn hallucinated(t: &Target) -> Option<bool> {
    if t.answer.is_none() || t.refused {
        return None;
    }
    let truth = t.class?.truth()?;
    Some(truth != t.label?)
}

fn group_key(t: &Target) -> (String, u64) {
    (
        t.model.clone(),
        t.temperature.map(f64::to_bits).unwrap_or(u64::MAX),
    )
}

/// The balanced set of each model and temperature: every hallucinated reference and as many
/// factual ones, drawn with `seed`.
pub(crate) fn balanced_targets(targets: &[Target], seed: u64) -> HashSet<u32> {
    let mut groups: BTreeMap<(String, u64), (Vec<usize>, Vec<usize>)> = BTreeMap::new();
    for t in targets {
        if let Some(h) = hallucinated(t) {
            let g = groups.entry(group_key(t)).or_default();
            if h {
                g.0.push(t.idx as usize);
            } else {
                g.1.push(t.idx as usize);
            }
        }
    }
    let mut out = HashSet::new();
    for (pos, neg) in groups.values() {
        let (p, n) = binary::balanced(pos, neg, seed);
        out.extend(p.into_iter().chain(n).map(|i| i as u32));
    }
    out
}

/// AutoHall's collection for one model and temperature.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct Collection {
    pub model: String,
    pub temperature: Option<f64>,
    pub claims: usize,
    /// No reference (the call failed for good).
    pub failed: usize,
    /// References that are refusals without content, set aside.
    pub refused: usize,
    /// Classifications that could not be read.
    pub unparsed: usize,
    /// #N: references classified; #H: those whose classification differs from the label.
    pub n: usize,
    pub h: usize,
    /// H% = #H / #N.
    pub h_rate: Option<f64>,
}

/// Detection on the balanced set of one model and temperature.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct Detection {
    pub model: String,
    pub temperature: Option<f64>,
    /// The wording of the pair check (0: the run's first, the one the flags use).
    pub wording: u32,
    /// The balanced set, and those of it with every pair checked (the ones scored).
    pub balanced: usize,
    pub scored: usize,
    /// The OR rule (flagged when any pair conflicts).
    pub or_rule: Scores,
    pub or_confusion: Confusion,
    /// Flagged when at least `t` pairs conflict, for t = 1..=K.
    pub thresholds: Vec<(u32, Scores)>,
    /// Of the mean conflict rate.
    pub auroc: Option<f64>,
    pub auprc: Option<f64>,
    /// Mean conflicts of K, on hallucinated and on factual references.
    pub mean_conflicts_h: Option<f64>,
    pub mean_conflicts_f: Option<f64>,
    /// Pair replies no verdict could be read from, over the scored references.
    pub unreadable_pairs: u32,
}

/// The claims tables: collection per model and temperature, and detection on each balanced set.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct ClaimsReport {
    pub k: u32,
    pub seed: u64,
    pub collection: Vec<Collection>,
    /// Detection in the run's first wording of the pair check.
    pub detection: Vec<Detection>,
    /// With more than one wording (`pair_variants`): detection in each, the first included,
    /// on the same balanced set (AutoHall's prompt-sensitivity table). Empty otherwise.
    pub by_wording: Vec<Detection>,
}

pub(crate) fn mean(xs: &[f64]) -> Option<f64> {
    (!xs.is_empty()).then(|| xs.iter().sum::<f64>() / xs.len() as f64)
}

pub(crate) fn claims_report(stored: &Stored, k: u32, seed: u64) -> ClaimsReport {
    let k = k.max(1);
    let outcomes = outcomes(stored, k, 0);
    // The wordings the stored pairs were asked in; one alone needs no table of its own.
    let wordings = stored
        .pairs
        .iter()
        .map(|p| p.wording + 1)
        .max()
        .unwrap_or(1);
    let by_wording: Vec<HashMap<u32, Outcome>> = if wordings > 1 {
        std::iter::once(outcomes.clone())
            .chain((1..wordings).map(|w| outcomes_in(stored, k, 0, w)))
            .collect()
    } else {
        Vec::new()
    };
    let chosen = balanced_targets(&stored.targets, seed);
    let mut groups: BTreeMap<(String, u64), Vec<&Target>> = BTreeMap::new();
    for t in &stored.targets {
        groups.entry(group_key(t)).or_default().push(t);
    }
    let mut report = ClaimsReport {
        k,
        seed,
        ..ClaimsReport::default()
    };
    for ts in groups.values() {
        let (model, temperature) = (ts[0].model.clone(), ts[0].temperature);
        let mut c = Collection {
            model: model.clone(),
            temperature,
            claims: ts.len(),
            ..Collection::default()
        };
        for t in ts {
            if t.answer.is_none() {
                c.failed += 1;
            } else if t.refused {
                c.refused += 1;
            } else if t.class == Some(Class::Unparsed) || t.class.is_none() {
                c.unparsed += 1;
            } else if let Some(h) = hallucinated(t) {
                c.n += 1;
                c.h += usize::from(h);
            }
        }
        c.h_rate = (c.n > 0).then(|| 100.0 * c.h as f64 / c.n as f64);
        report.collection.push(c);

        report
            .detection
            .push(detection(ts, &chosen, &outcomes, k, 0));
        for (w, oc) in by_wording.iter().enumerate() {
            report
                .by_wording
                .push(detection(ts, &chosen, oc, k, w as u32));
        }
    }
    report
}

/// Detection on the balanced set of one model and temperature (`ts`), from `outcomes`.
fn detection(
    ts: &[&Target],
    chosen: &HashSet<u32>,
    outcomes: &HashMap<u32, Outcome>,
    k: u32,
    wording: u32,
) -> Detection {
    let set: Vec<(&Target, bool, Outcome)> = ts
        .iter()
        .filter(|t| chosen.contains(&t.idx))
        .filter_map(|t| Some((*t, hallucinated(t)?, *outcomes.get(&t.idx)?)))
        .collect();
    let scored: Vec<&(&Target, bool, Outcome)> =
        set.iter().filter(|(_, _, o)| o.complete()).collect();
    let or_confusion = Confusion::of(scored.iter().map(|(_, h, o)| (*h, o.flagged())));
    let thresholds = (1..=k)
        .map(|th| {
            (
                th,
                Confusion::of(scored.iter().map(|(_, h, o)| (*h, o.conflicts >= th))).scores(),
            )
        })
        .collect();
    let points: Vec<(f64, bool)> = scored
        .iter()
        .filter_map(|(_, h, o)| Some((o.rate()?, *h)))
        .collect();
    let conflicts = |want: bool| {
        mean(
            &scored
                .iter()
                .filter(|(_, h, _)| *h == want)
                .map(|(_, _, o)| o.conflicts as f64)
                .collect::<Vec<_>>(),
        )
    };
    Detection {
        model: ts[0].model.clone(),
        temperature: ts[0].temperature,
        wording,
        balanced: set.len(),
        scored: scored.len(),
        or_rule: or_confusion.scores(),
        or_confusion,
        thresholds,
        auroc: binary::auroc(&points).map(|v| 100.0 * v),
        auprc: binary::auprc(&points).map(|v| 100.0 * v),
        mean_conflicts_h: conflicts(true),
        mean_conflicts_f: conflicts(false),
        unreadable_pairs: scored.iter().map(|(_, _, o)| o.unparsed).sum(),
    }
}

/// One answer's line in the answers table.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub(crate) struct AnswerRow {
    pub target: u32,
    pub item: String,
    pub task: String,
    pub model: String,
    pub flagged: bool,
    pub conflicts: u32,
    pub k: u32,
    pub unparsed: u32,
    pub missing: u32,
    pub rate: Option<f64>,
}

/// Every answer of an answers run, with its round-0 outcome.
pub(crate) fn answer_rows(stored: &Stored, k: u32) -> Vec<AnswerRow> {
    let outcomes = outcomes(stored, k.max(1), 0);
    stored
        .targets
        .iter()
        .filter_map(|t| {
            let o = outcomes.get(&t.idx)?;
            Some(AnswerRow {
                target: t.idx,
                item: t.item_id.clone(),
                task: t.task_id.clone(),
                model: t.model.clone(),
                flagged: o.flagged(),
                conflicts: o.conflicts,
                k: o.k,
                unparsed: o.unparsed,
                missing: o.missing,
                rate: o.rate(),
            })
        })
        .collect()
}

/// One stored answer's self-contradiction flag (its newest detection, round 0), with its PRISM
/// score when it has one.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct AnswerFlag {
    pub source_run: String,
    pub source_job: u32,
    pub item_id: String,
    pub task_id: String,
    pub model: String,
    pub outcome: Outcome,
    pub score: Option<f64>,
}

/// Every stored answer that has been through detection, flagged or not (only answers whose
/// pairs are all checked: a half-done detection says nothing yet), newest detection first wins.
pub(crate) fn answer_flags(db: &crate::store::Db) -> crate::store::Result<Vec<AnswerFlag>> {
    let store = db.read()?;
    use std::collections::hash_map::Entry;
    let mut seen: HashMap<(String, u32), AnswerFlag> = HashMap::new();
    let mut scores: HashMap<String, HashMap<u32, Option<f64>>> = HashMap::new();
    // Newest first: the first detection seen of an answer is the one that counts.
    for run in store.detect_runs()? {
        if run.kind != crate::store::DetectKind::Answers {
            continue;
        }
        let stored = Stored::load(db, &run.id)?;
        let outcomes = outcomes(&stored, run.config.k.max(1), 0);
        for t in &stored.targets {
            let (Some(src), Some(job), Some(o)) =
                (&t.source_run, t.source_job, outcomes.get(&t.idx))
            else {
                continue;
            };
            if !o.complete() {
                continue;
            }
            if let Entry::Vacant(e) = seen.entry((src.clone(), job)) {
                if !scores.contains_key(src) {
                    let map = store
                        .scores(Some(src))?
                        .into_iter()
                        .map(|s| (s.job_idx, s.score))
                        .collect();
                    scores.insert(src.clone(), map);
                }
                e.insert(AnswerFlag {
                    source_run: src.clone(),
                    source_job: job,
                    item_id: t.item_id.clone(),
                    task_id: t.task_id.clone(),
                    model: t.model.clone(),
                    outcome: *o,
                    score: scores[src].get(&job).copied().flatten(),
                });
            }
        }
    }
    let mut out: Vec<AnswerFlag> = seen.into_values().collect();
    out.sort_by(|a, b| (&a.source_run, a.source_job).cmp(&(&b.source_run, b.source_job)));
    Ok(out)
}

/// An answer PRISM scored wrong: below half credit.
pub(crate) fn scored_wrong(score: f64) -> bool {
    score < 0.5
}

/// How far the zero-resource flag agrees with PRISM's verdict, for one model and dimension (or
/// `all`), over the answers that have both.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct Agreement {
    pub model: String,
    /// `KE`, `KM`, `RE`, `IFE` or `all`.
    pub dimension: String,
    /// Answers with a complete detection (with or without a score).
    pub checked: usize,
    pub flagged: usize,
    /// Of the checked answers, those with a PRISM score, and those scored wrong.
    pub scored: usize,
    pub wrong: usize,
    pub flagged_wrong: usize,
    /// Of the flagged (scored) answers, the share PRISM scored wrong; of the wrong ones, the
    /// share flagged. Percent.
    pub precision: Option<f64>,
    pub recall: Option<f64>,
    /// Scored wrong, yet no pair contradicted: what the flag cannot see.
    pub wrong_never_contradicted: usize,
}

/// Agreement per model and dimension, then per model over all dimensions.
pub(crate) fn agreement(flags: &[AnswerFlag]) -> Vec<Agreement> {
    let mut map: BTreeMap<(String, String), Agreement> = BTreeMap::new();
    for f in flags {
        let dim = crate::eval::metrics::dimension_of(&f.task_id)
            .map(|d| d.code().to_string())
            .unwrap_or_else(|| "?".into());
        for d in [dim, "all".to_string()] {
            let a = map
                .entry((f.model.clone(), d.clone()))
                .or_insert_with(|| Agreement {
                    model: f.model.clone(),
                    dimension: d,
                    ..Agreement::default()
                });
            a.checked += 1;
            a.flagged += usize::from(f.outcome.flagged());
            if let Some(s) = f.score {
                a.scored += 1;
                let wrong = scored_wrong(s);
                a.wrong += usize::from(wrong);
                a.flagged_wrong += usize::from(wrong && f.outcome.flagged());
                a.wrong_never_contradicted += usize::from(wrong && f.outcome.conflicts == 0);
            }
        }
    }
    let mut out: Vec<Agreement> = map.into_values().collect();
    for a in &mut out {
        let flagged_scored = flags
            .iter()
            .filter(|f| {
                f.model == a.model
                    && f.score.is_some()
                    && f.outcome.flagged()
                    && (a.dimension == "all"
                        || crate::eval::metrics::dimension_of(&f.task_id)
                            .is_some_and(|d| d.code() == a.dimension))
            })
            .count();
        a.precision =
            (flagged_scored > 0).then(|| 100.0 * a.flagged_wrong as f64 / flagged_scored as f64);
        a.recall = (a.wrong > 0).then(|| 100.0 * a.flagged_wrong as f64 / a.wrong as f64);
    }
    // Dimensions in taxonomy order, `all` last.
    let rank = |d: &str| match d {
        "KE" => 0,
        "KM" => 1,
        "RE" => 2,
        "IFE" => 3,
        "all" => 5,
        _ => 4,
    };
    out.sort_by(|a, b| {
        a.model
            .cmp(&b.model)
            .then(rank(&a.dimension).cmp(&rank(&b.dimension)))
    });
    out
}

#[cfg(test)]
/// For tests: a stored answer's detection outcome (`conflicts` of `k`, the rest consistent)
/// with its PRISM score. Here, not in `test_support`, which the results' own tests import.
pub(crate) fn test_flag(task: &str, k: u32, conflicts: u32, score: Option<f64>) -> AnswerFlag {
    AnswerFlag {
        source_run: "r".into(),
        source_job: 0,
        item_id: "i".into(),
        task_id: task.into(),
        model: "m".into(),
        outcome: Outcome {
            k,
            conflicts,
            consistent: k - conflicts,
            unparsed: 0,
            missing: 0,
        },
        score,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::dataset::claims::Truth;
    use crate::detect::test_support::{pair, target};

    #[test]
    fn outcome_counts_round_zero_only_and_rates_unparsed_half() {
        use Verdict::*;
        let stored = Stored {
            targets: vec![target(0, Truth::True, Class::True)],
            samples: vec![],
            entailments: vec![],
            pairs: vec![
                pair(0, 0, 0, Conflict),
                pair(0, 0, 1, Consistent),
                pair(0, 0, 2, Unparsed),
                pair(0, 0, 3, Failed),
                pair(0, 1, 0, Conflict),
                pair(0, 1, 1, Conflict),
            ],
        };
        let o = outcomes(&stored, 4, 0)[&0];
        assert_eq!(
            (o.conflicts, o.consistent, o.unparsed, o.missing),
            (1, 1, 1, 1)
        );
        assert!(o.flagged() && !o.complete());
        assert_eq!(o.rate(), Some(1.5 / 3.0));
        let o1 = outcomes(&stored, 4, 1)[&0];
        assert_eq!((o1.conflicts, o1.missing), (2, 2));
    }

    /// A hand-computed case: 4 hallucinated references (labels true, classified false) and 6
    /// factual; the balanced set keeps the 4 and 4 of the 6. With every pair checked, the OR
    /// rule flags 3 hallucinated and 1 factual: TP 3, FN 1, FP 1, TN 3: precision 75, recall 75,
    /// F1 75, accuracy 75.
    #[test]
    fn claims_report_by_hand() {
        use Verdict::*;
        let mut targets = Vec::new();
        for i in 0..4 {
            targets.push(target(i, Truth::True, Class::False));
        }
        for i in 4..10 {
            targets.push(target(i, Truth::False, Class::False));
        }
        // A refusal and an unparsed classification are counted, not in #N.
        let mut refused = target(10, Truth::True, Class::True);
        refused.refused = true;
        targets.push(refused);
        targets.push(target(11, Truth::True, Class::Unparsed));
        let mut pairs = Vec::new();
        // Conflicts per target: hallucinated 2, 1, 1, 0; every factual one 0 except idx 4 (1).
        let conflicts = [2, 1, 1, 0, 1, 0, 0, 0, 0, 0];
        for (t, &c) in conflicts.iter().enumerate() {
            for k in 0..2 {
                pairs.push(pair(
                    t as u32,
                    0,
                    k,
                    if k < c { Conflict } else { Consistent },
                ));
            }
        }
        let stored = Stored {
            targets,
            samples: vec![],
            entailments: vec![],
            pairs,
        };
        let r = claims_report(&stored, 2, 7);
        let c = &r.collection[0];
        assert_eq!(
            (c.claims, c.refused, c.unparsed, c.n, c.h),
            (12, 1, 1, 10, 4)
        );
        assert_eq!(c.h_rate, Some(40.0));
        let d = &r.detection[0];
        assert_eq!(d.balanced, 8);
        assert_eq!(d.scored, 8);
        // Which 4 factual ones were drawn decides FP: idx 4 is the only factual conflict.
        let chosen = balanced_targets(&stored.targets, 7);
        let fp = usize::from(chosen.contains(&4));
        assert_eq!(d.or_confusion.tp, 3);
        assert_eq!(d.or_confusion.fn_, 1);
        assert_eq!(d.or_confusion.fp, fp);
        assert_eq!(d.or_confusion.tn, 4 - fp);
        // Threshold 2 flags only the target with two conflicts.
        assert_eq!(d.thresholds[1].1.recall, Some(25.0));
        assert_eq!(d.mean_conflicts_h, Some(1.0));
        assert!(r.by_wording.is_empty());

        // A second wording of the pair check in which no pair conflicts: the flags (wording 0)
        // do not move; the table per wording holds both.
        let mut stored = stored;
        for t in 0..10 {
            for k in 0..2 {
                let mut p = pair(t, 0, k, Consistent);
                p.wording = 1;
                stored.pairs.push(p);
            }
        }
        let r2 = claims_report(&stored, 2, 7);
        assert_eq!(r2.detection, r.detection);
        assert_eq!(r2.by_wording.len(), 2);
        assert_eq!(r2.by_wording[0], r.detection[0]);
        let w1 = &r2.by_wording[1];
        assert_eq!((w1.wording, w1.scored), (1, 8));
        assert_eq!((w1.or_confusion.tp, w1.or_confusion.fp), (0, 0));
        assert_eq!(w1.mean_conflicts_h, Some(0.0));
    }

    fn flag(task: &str, conflicts: u32, score: Option<f64>) -> AnswerFlag {
        test_flag(task, 3, conflicts, score)
    }

    /// By hand, KE: flagged & wrong, flagged & right, not flagged & wrong, not flagged & right,
    /// flagged & unscored. Precision 1/2, recall 1/2, one wrong answer never contradicted.
    #[test]
    fn agreement_by_hand() {
        let flags = vec![
            flag("KE-FD-x", 2, Some(0.0)),
            flag("KE-FD-x", 1, Some(1.0)),
            flag("KE-FD-x", 0, Some(0.0)),
            flag("KE-FD-x", 0, Some(1.0)),
            flag("KE-FD-x", 3, None),
            flag("RE-X-y", 1, Some(0.0)),
        ];
        let a = agreement(&flags);
        let ke = a.iter().find(|a| a.dimension == "KE").unwrap();
        assert_eq!((ke.checked, ke.flagged, ke.scored, ke.wrong), (5, 3, 4, 2));
        assert_eq!(ke.precision, Some(50.0));
        assert_eq!(ke.recall, Some(50.0));
        assert_eq!(ke.wrong_never_contradicted, 1);
        let all = a.iter().find(|a| a.dimension == "all").unwrap();
        assert_eq!((all.checked, all.wrong, all.flagged_wrong), (6, 3, 2));
        assert_eq!(all.recall.map(|r| (r * 100.0).round()), Some(6667.0));
        assert_eq!(a.last().unwrap().dimension, "all");
    }
}
