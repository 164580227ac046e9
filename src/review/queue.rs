//! The review queue: which items a reviewer sees, in what order. Items are ranked by triage
//! signals drawn from what the store already knows about them, so reviewers spend their time
//! where a decision matters: models that disagree on an item, answers flagged by
//! self-contradiction, and items every model fails (a wrong reference?) or every model passes (too
//! easy to discriminate?).

use std::collections::HashMap;

use super::{Decision, ItemStatus, Panel, State};
use crate::dataset::Dataset;

/// What the store knows about one item's answers.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Evidence {
    /// Each model's scores of the item (all runs and samples).
    pub scores: HashMap<String, Vec<f64>>,
    /// Answers that went through contradiction detection, and how many were flagged.
    pub checked: u32,
    pub flagged: u32,
    /// The quality agent's A, B, C scores, per model.
    pub quality: Vec<(String, [u8; 3])>,
    /// Answers where the rule's own verdict and the judge's disagree (one passes, one fails).
    pub rule_judge: u32,
    /// Answers a panel judged where two judges' verdicts differ.
    pub judges_disagree: u32,
    /// Answers where one judge, asked again, gave a different verdict.
    pub judge_flips: u32,
    /// The least backed sentence of the item's answers: the share of its samples a judge said
    /// do not support it (where in the answer's prompt method), when asked.
    pub unbacked: Option<f64>,
}

/// Per item, how many of its answers the judges disagree on and how many a judge flipped on,
/// from every stored verdict (`prism score --judge a,b --judge-repeats N`).
pub fn judge_evidence(verdicts: &[crate::store::JudgeVerdict]) -> HashMap<String, (u32, u32)> {
    use std::collections::BTreeMap;
    /// An answer's item, and each judge's askings' scores.
    type Askings<'a> = (&'a str, BTreeMap<&'a str, Vec<Option<f64>>>);
    let mut answers: BTreeMap<(&str, u32), Askings> = BTreeMap::new();
    for v in verdicts {
        answers
            .entry((v.run_id.as_str(), v.job_idx))
            .or_insert_with(|| (v.item_id.as_str(), BTreeMap::new()))
            .1
            .entry(v.judge.as_str())
            .or_default()
            .push(v.score);
    }
    let mut out: HashMap<String, (u32, u32)> = HashMap::new();
    for (item, judges) in answers.values() {
        let sides: Vec<bool> = judges
            .values()
            .filter_map(|a| crate::eval::panel::judge_score(a).map(|s| s < 0.5))
            .collect();
        let disagree = sides.iter().any(|&h| h) && sides.iter().any(|&h| !h);
        let flips = judges.values().any(|a| {
            let read: Vec<bool> = a.iter().flatten().map(|&s| s < 0.5).collect();
            read.iter().any(|&h| h) && read.iter().any(|&h| !h)
        });
        if disagree || flips {
            let e = out.entry(item.to_string()).or_default();
            e.0 += u32::from(disagree);
            e.1 += u32::from(flips);
        }
    }
    out
}

/// A sentence at least this share of whose samples do not back it is a triage signal.
pub const UNBACKED: f64 = 0.75;

/// Why an item is worth a look; each is shown beside the item.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Signals {
    /// At least one model mostly right and another mostly wrong (mean score ≥ 0.5 vs < 0.5).
    pub models_disagree: bool,
    /// Answers flagged by self-contradiction (AutoHall).
    pub flagged: u32,
    /// Every one of at least two scored answers wrong (score < 0.5).
    pub all_fail: bool,
    /// Every one of at least two scored answers right.
    pub all_pass: bool,
    /// A quality agent would filter it (a score not above PRISM's 7.0).
    pub low_quality: bool,
    /// Answers the rule and the judge scored differently (fact_judge: the answer says the
    /// opposite yes/no of the reference, yet the judge passed it): the question or its
    /// reference may read two ways, or the judge is wrong.
    pub rule_judge: u32,
    /// Answers two judges of a panel scored differently: the judges cannot both be right.
    pub judges_disagree: u32,
    /// Answers a judge scored differently when asked again: its verdict there is a coin toss.
    pub judge_flips: u32,
    /// A sentence of an answer that most of its samples do not back (prompt score ≥ 0.75):
    /// likely made up, and the item's reference or the verdict may need a look. Its score.
    pub unbacked: Option<f64>,
}

impl Signals {
    pub fn of(e: &Evidence) -> Signals {
        let means: Vec<f64> = e
            .scores
            .values()
            .filter(|s| !s.is_empty())
            .map(|s| s.iter().sum::<f64>() / s.len() as f64)
            .collect();
        let all: Vec<f64> = e.scores.values().flatten().copied().collect();
        Signals {
            models_disagree: means.iter().any(|&m| m >= 0.5) && means.iter().any(|&m| m < 0.5),
            flagged: e.flagged,
            all_fail: all.len() >= 2 && all.iter().all(|&s| s < 0.5),
            all_pass: all.len() >= 2 && all.iter().all(|&s| s >= 0.5),
            low_quality: e
                .quality
                .iter()
                .any(|(_, q)| !super::rubric::passes(q.map(f64::from), super::quality::THRESHOLD)),
            rule_judge: e.rule_judge,
            judges_disagree: e.judges_disagree,
            judge_flips: e.judge_flips,
            unbacked: e.unbacked.filter(|&u| u >= UNBACKED),
        }
    }

    /// Higher first. Disagreement between models says the most about an item (ambiguous question
    /// or reference); a flagged answer and a universal failure next; a universal pass least.
    pub fn priority(&self) -> u32 {
        4 * u32::from(self.models_disagree)
            + 3 * u32::from(self.flagged > 0)
            + 3 * u32::from(self.rule_judge > 0)
            + 3 * u32::from(self.judges_disagree > 0)
            + 2 * u32::from(self.judge_flips > 0)
            + 2 * u32::from(self.all_fail)
            + 2 * u32::from(self.low_quality)
            + 2 * u32::from(self.unbacked.is_some())
            + u32::from(self.all_pass)
    }

    pub fn labels(&self) -> Vec<&'static str> {
        let mut v = Vec::new();
        if self.models_disagree {
            v.push("models disagree");
        }
        if self.flagged > 0 {
            v.push("self-contradiction");
        }
        if self.rule_judge > 0 {
            v.push("rule and judge disagree");
        }
        if self.judges_disagree > 0 {
            v.push("the judges disagree");
        }
        if self.judge_flips > 0 {
            v.push("a judge flips when asked again");
        }
        if self.all_fail {
            v.push("every model fails");
        }
        if self.all_pass {
            v.push("every model passes");
        }
        if self.low_quality {
            v.push("low quality score");
        }
        if self.unbacked.is_some() {
            v.push("a sentence its samples do not back");
        }
        v
    }
}

/// Which items to show.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum StatusFilter {
    #[default]
    All,
    Unreviewed,
    /// Decided by this reviewer in the item's current round.
    Mine,
    Disputed,
    Converged,
    /// Back for another round after a revision (round 2 or later, not settled).
    Revised,
}

impl StatusFilter {
    pub const ALL: [StatusFilter; 6] = [
        StatusFilter::All,
        StatusFilter::Unreviewed,
        StatusFilter::Mine,
        StatusFilter::Disputed,
        StatusFilter::Converged,
        StatusFilter::Revised,
    ];

    pub fn label(self) -> &'static str {
        match self {
            StatusFilter::All => "all",
            StatusFilter::Unreviewed => "unreviewed",
            StatusFilter::Mine => "mine",
            StatusFilter::Disputed => "disputed",
            StatusFilter::Converged => "converged",
            StatusFilter::Revised => "revised",
        }
    }

    pub fn next(self) -> StatusFilter {
        let i = Self::ALL.iter().position(|&f| f == self).unwrap_or(0);
        Self::ALL[(i + 1) % Self::ALL.len()]
    }

    pub fn parse(s: &str) -> Option<StatusFilter> {
        Self::ALL.into_iter().find(|f| f.label() == s.trim())
    }

    pub fn keeps(self, st: &ItemStatus, reviewer: &str) -> bool {
        match self {
            StatusFilter::All => true,
            StatusFilter::Unreviewed => st.state == State::Unreviewed,
            StatusFilter::Mine => st.current.contains_key(reviewer),
            StatusFilter::Disputed => st.state == State::Disputed,
            StatusFilter::Converged => matches!(
                st.state,
                State::Converged(Decision::Retain | Decision::Remove)
            ),
            StatusFilter::Revised => st.round >= 2 && !matches!(st.state, State::Converged(_)),
        }
    }
}

/// Which items the queue shows.
#[derive(Debug, Clone, Copy, Default)]
pub struct View<'a> {
    pub filter: StatusFilter,
    pub panel: Option<Panel>,
    /// A dimension, category or sub-task by its task-id prefix (`KE`, `KE-FD`, a task id).
    pub prefix: Option<&'a str>,
}

impl View<'_> {
    /// Whether item `i` (with its status, when it has decisions) is in the queue.
    pub fn keeps(&self, ds: &Dataset, i: usize, st: Option<&ItemStatus>, reviewer: &str) -> bool {
        // Task ids are `<DIM>-<CAT>-<Name>`: a prefix picks a dimension, category or task.
        let task = ds.task_of(&ds.items[i]);
        self.panel.is_none_or(|p| Panel::of(task.dimension) == p)
            && self.prefix.is_none_or(|p| task.id.starts_with(p))
            && st.map_or(
                matches!(self.filter, StatusFilter::All | StatusFilter::Unreviewed),
                |st| self.filter.keeps(st, reviewer),
            )
    }
}

/// The queue order: higher priority first; within a priority the least backed sentence first
/// (where the judge was asked), then dataset order.
pub fn order_key(
    signals: &HashMap<String, Signals>,
    ds: &Dataset,
    i: usize,
) -> (std::cmp::Reverse<u32>, std::cmp::Reverse<u32>, usize) {
    let s = signals.get(&*ds.items[i].id);
    (
        std::cmp::Reverse(s.map_or(0, Signals::priority)),
        // In thousandths: an order, not a measure.
        std::cmp::Reverse(
            s.and_then(|s| s.unbacked)
                .map_or(0, |u| (u * 1000.0) as u32),
        ),
        i,
    )
}

/// The queue: dataset item indices that `view` keeps, in [`order_key`] order.
pub fn build(
    ds: &Dataset,
    status: &HashMap<String, ItemStatus>,
    signals: &HashMap<String, Signals>,
    reviewer: &str,
    view: View<'_>,
) -> Vec<usize> {
    let mut q: Vec<usize> = (0..ds.items.len())
        .filter(|&i| view.keeps(ds, i, status.get(&*ds.items[i].id), reviewer))
        .collect();
    q.sort_by_cached_key(|&i| order_key(signals, ds, i));
    q
}

/// Puts item `i` in or out of a built queue after its status changed (a decision), keeping the
/// order; returns whether the queue changed. O(queue) at worst, instead of a rebuild.
pub fn update(
    q: &mut Vec<usize>,
    ds: &Dataset,
    i: usize,
    st: Option<&ItemStatus>,
    signals: &HashMap<String, Signals>,
    reviewer: &str,
    view: View<'_>,
) -> bool {
    let key = order_key(signals, ds, i);
    let at = q.binary_search_by(|&x| order_key(signals, ds, x).cmp(&key));
    match (at, view.keeps(ds, i, st, reviewer)) {
        (Ok(p), false) => {
            q.remove(p);
            true
        }
        (Err(p), true) => {
            q.insert(p, i);
            true
        }
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ev(scores: &[(&str, &[f64])], flagged: u32) -> Evidence {
        Evidence {
            scores: scores
                .iter()
                .map(|(m, s)| (m.to_string(), s.to_vec()))
                .collect(),
            checked: flagged,
            flagged,
            quality: Vec::new(),
            rule_judge: 0,
            judges_disagree: 0,
            judge_flips: 0,
            unbacked: None,
        }
    }

    #[test]
    fn a_sentence_its_samples_do_not_back_is_a_signal_and_ranks_within_its_priority() {
        let ds = crate::dataset::load_sample().dataset;
        let with = |u: Option<f64>| {
            let mut e = ev(&[("a", &[1.0])], 0);
            e.unbacked = u;
            Signals::of(&e)
        };
        assert_eq!(with(Some(0.5)).unbacked, None, "half the samples back it");
        assert_eq!(with(Some(0.75)).unbacked, Some(0.75));
        assert!(
            with(Some(1.0))
                .labels()
                .contains(&"a sentence its samples do not back")
        );
        assert_eq!(with(Some(1.0)).priority(), with(None).priority() + 2);
        // Two items of one priority: the less backed first, whatever the dataset order.
        let mut signals = HashMap::new();
        signals.insert(ds.items[0].id.to_string(), with(Some(0.8)));
        signals.insert(ds.items[1].id.to_string(), with(Some(1.0)));
        let mut q = vec![0, 1, 2];
        q.sort_by_key(|&i| order_key(&signals, &ds, i));
        assert_eq!(q, [1, 0, 2]);
    }

    #[test]
    fn signals_and_their_order() {
        let s = Signals::of(&ev(&[("a", &[1.0, 1.0]), ("b", &[0.0])], 0));
        assert!(s.models_disagree && !s.all_fail && !s.all_pass);
        let s = Signals::of(&ev(&[("a", &[0.0]), ("b", &[0.2])], 0));
        assert!(s.all_fail && !s.models_disagree);
        let s = Signals::of(&ev(&[("a", &[1.0])], 0));
        assert_eq!(s, Signals::default(), "one answer says nothing");
        let pass = Signals::of(&ev(&[("a", &[1.0]), ("b", &[1.0])], 0));
        assert!(pass.all_pass);
        let flagged = Signals::of(&ev(&[], 1));
        let disagree = Signals::of(&ev(&[("a", &[1.0]), ("b", &[0.0])], 0));
        let fail = Signals::of(&ev(&[("a", &[0.0]), ("b", &[0.0])], 0));
        assert!(disagree.priority() > flagged.priority());
        assert!(flagged.priority() > fail.priority());
        assert!(fail.priority() > pass.priority());
        assert!(pass.priority() > Signals::default().priority());
        assert_eq!(disagree.labels(), vec!["models disagree"]);
        let mut e = ev(&[], 0);
        e.quality.push(("judge".into(), [9, 9, 7]));
        let low = Signals::of(&e);
        assert!(low.low_quality, "7 does not exceed 7.0");
        assert!(low.priority() > pass.priority());
        e.quality[0].1 = [9, 9, 8];
        assert!(!Signals::of(&e).low_quality);
        // The rule and the judge disagreeing ranks with a self-contradiction.
        let mut e = ev(&[], 0);
        e.rule_judge = 1;
        let rj = Signals::of(&e);
        assert_eq!(rj.labels(), vec!["rule and judge disagree"]);
        assert_eq!(rj.priority(), flagged.priority());
    }

    #[test]
    fn judges_that_disagree_or_flip_are_signals() {
        let v = |run: &str, job: u32, item: &str, judge: &str, repeat: u32, score: Option<f64>| {
            crate::store::JudgeVerdict {
                run_id: run.into(),
                job_idx: job,
                judge: judge.into(),
                repeat,
                item_id: item.into(),
                task_id: "t".into(),
                model: "m".into(),
                evaluator: "judge_equiv".into(),
                score,
                detail: String::new(),
                reply: None,
                attempts: 1,
                fallback: false,
                created_at: 0,
            }
        };
        let verdicts = vec![
            // item a, answer 1: j says right, k says wrong: the judges disagree.
            v("r", 1, "a", "j", 0, Some(1.0)),
            v("r", 1, "a", "k", 0, Some(0.0)),
            // item a, answer 2: j flips (right, wrong, right) yet reads right; k agrees.
            v("r", 2, "a", "j", 0, Some(1.0)),
            v("r", 2, "a", "j", 1, Some(0.0)),
            v("r", 2, "a", "j", 2, Some(1.0)),
            v("r", 2, "a", "k", 0, Some(0.8)),
            // item b: both agree, one unreadable asking is no flip.
            v("r", 3, "b", "j", 0, Some(0.0)),
            v("r", 3, "b", "j", 1, None),
            v("r", 3, "b", "k", 0, Some(0.2)),
            // item c: j splits evenly (no verdict of its own) and k has one: no disagreement
            // between judges, but a flip.
            v("s", 1, "c", "j", 0, Some(0.0)),
            v("s", 1, "c", "j", 1, Some(1.0)),
            v("s", 1, "c", "k", 0, Some(1.0)),
        ];
        let e = judge_evidence(&verdicts);
        assert_eq!(e.get("a"), Some(&(1, 1)));
        assert_eq!(e.get("b"), None);
        assert_eq!(e.get("c"), Some(&(0, 1)));
        let mut ev = ev(&[], 0);
        ev.judges_disagree = 1;
        ev.judge_flips = 1;
        let s = Signals::of(&ev);
        assert_eq!(
            s.labels(),
            vec!["the judges disagree", "a judge flips when asked again"]
        );
        assert_eq!(s.priority(), 5);
    }

    #[test]
    fn updating_the_queue_item_by_item_equals_rebuilding_it() {
        use super::super::{ReviewRecord, status};
        let ds = crate::dataset::load_sample().dataset;
        // Signals on a few items so the order is not just the dataset's.
        let mut signals = HashMap::new();
        for (k, it) in ds.items.iter().enumerate().filter(|(k, _)| k % 7 == 0) {
            let e = ev(&[("a", &[1.0]), ("b", &[(k % 2) as f64])], (k % 3) as u32);
            signals.insert(it.id.to_string(), Signals::of(&e));
        }
        let mut decisions: Vec<ReviewRecord> = Vec::new();
        for filter in StatusFilter::ALL {
            for panel in [None, Some(Panel::Knowledge), Some(Panel::Reasoning)] {
                let view = View {
                    filter,
                    panel,
                    prefix: None,
                };
                let mut statuses: HashMap<String, ItemStatus> = HashMap::new();
                let mut q = build(&ds, &statuses, &signals, "ann", view);
                decisions.clear();
                for step in 0..200usize {
                    let i = (step * 37) % ds.items.len();
                    let id = ds.items[i].id.to_string();
                    decisions.push(ReviewRecord {
                        uid: format!("u{step}"),
                        item_id: id.clone(),
                        task_id: String::new(),
                        reviewer: ["ann", "bob"][step % 2].into(),
                        round: 1,
                        clarity: None,
                        relevance: None,
                        coherence: None,
                        decision: Decision::ALL[(step / 3) % 3],
                        rationale: String::new(),
                        edited_question: None,
                        edited_answer: None,
                        created_at: step as i64,
                    });
                    let mine: Vec<&ReviewRecord> =
                        decisions.iter().filter(|d| d.item_id == id).collect();
                    let st = status(&mine, 2);
                    update(&mut q, &ds, i, Some(&st), &signals, "ann", view);
                    statuses.insert(id, st);
                    assert_eq!(
                        q,
                        build(&ds, &statuses, &signals, "ann", view),
                        "{filter:?} {panel:?} step {step}"
                    );
                }
            }
        }
    }
}
