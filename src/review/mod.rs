//! Human review: the panels that decide which items stay in a benchmark (METHODS §2).
//!
//! A reviewer scores an item on Clarity, Domain Relevance and Coherence (1-10), decides retain,
//! remove or revise, and writes a rationale. Every decision is kept with its time and round,
//! never overwritten: what an item's status is follows from its history ([`status`]), so two
//! reviewers (or two imports) can only add to it.
//!
//! Rounds: an item starts in round 1. A round converges when at least `min_reviewers` reviewers
//! have decided it and their latest decisions in that round agree. A round that converges on
//! "revise" moves the item to the next round, with the edited question or answer the revising
//! decisions carry (the original stays in the dataset); one that converges on retain or remove
//! settles it. Reviewers who disagree leave the round disputed until someone changes their mind
//! (a new decision, the old one kept).

pub(crate) mod agreement;
pub(crate) mod bank;
pub mod calibration;
pub mod judge_templates;
pub mod judges;
pub mod load;
mod pairs;
pub mod quality;
pub mod quality_run;
pub mod queue;
mod replies;
pub(crate) mod rubric;
pub mod template_trial;

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::taxonomy::Dimension;

/// Reviewers whose latest decisions in a round must agree for it to converge (PRISM's panels
/// review each item at least twice), unless a command is told otherwise (`--min-reviewers`).
pub const MIN_REVIEWERS: usize = 2;

/// How far before the last decision seen a refresh reads again: a concurrent writer's
/// transaction can commit a lower sequence number after a higher one became visible.
pub const REFRESH_LOOKBACK: i64 = 256;

pub use crate::store::review_records::{Decision, ReviewRecord};

/// PRISM's two panels: Knowledge & Source reviews KE and KM, Reasoning & Instruction RE and IFE.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Panel {
    Knowledge,
    Reasoning,
}

impl Panel {
    pub fn of(dim: Dimension) -> Panel {
        match dim {
            Dimension::KE | Dimension::KM => Panel::Knowledge,
            Dimension::RE | Dimension::IFE => Panel::Reasoning,
        }
    }

    pub fn label(self) -> &'static str {
        match self {
            Panel::Knowledge => "Knowledge & Source",
            Panel::Reasoning => "Reasoning & Instruction",
        }
    }

    pub fn parse(s: &str) -> Option<Panel> {
        match s.trim().to_ascii_lowercase().as_str() {
            "knowledge" | "k" | "ke" | "km" => Some(Panel::Knowledge),
            "reasoning" | "r" | "re" | "ife" => Some(Panel::Reasoning),
            _ => None,
        }
    }
}

/// Where an item stands for one reviewer.
#[derive(Debug, Clone, PartialEq)]
pub struct ItemStatus {
    /// The round under review now (1 + rounds that converged on revise).
    pub round: u32,
    pub state: State,
    /// Latest decision of each reviewer in the current round.
    pub current: BTreeMap<String, Decision>,
    /// The latest edited question / answer from a round that converged on revise.
    pub edited_question: Option<String>,
    pub edited_answer: Option<String>,
    /// How each finished round ended, in order.
    pub rounds: Vec<(u32, Decision)>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum State {
    /// Nobody has decided this round yet.
    Unreviewed,
    /// Decided by fewer reviewers than a round needs, all agreeing so far.
    Open,
    /// Reviewers disagree.
    Disputed,
    /// Settled: retained or removed.
    Converged(Decision),
}

impl State {
    pub fn label(self) -> &'static str {
        match self {
            State::Unreviewed => "unreviewed",
            State::Open => "open",
            State::Disputed => "disputed",
            State::Converged(Decision::Retain) => "retained",
            State::Converged(Decision::Remove) => "removed",
            State::Converged(Decision::Revise) => "revised",
            State::Converged(Decision::Withdrawn) => "unreviewed",
        }
    }
}

/// An item's status from its decisions (any order; each reviewer's latest per round counts).
pub fn status(decisions: &[&ReviewRecord], min_reviewers: usize) -> ItemStatus {
    let mut by_round: BTreeMap<u32, Vec<&ReviewRecord>> = BTreeMap::new();
    for d in decisions {
        by_round.entry(d.round).or_default().push(d);
    }
    let mut st = ItemStatus {
        round: 1,
        state: State::Unreviewed,
        current: BTreeMap::new(),
        edited_question: None,
        edited_answer: None,
        rounds: Vec::new(),
    };
    let min = min_reviewers.max(1);
    loop {
        let Some(ds) = by_round.get(&st.round) else {
            return st;
        };
        let mut latest: BTreeMap<&str, &ReviewRecord> = BTreeMap::new();
        for d in ds {
            let keep = match latest.get(d.reviewer.as_str()) {
                Some(old) => (d.created_at, &d.uid) > (old.created_at, &old.uid),
                None => true,
            };
            if keep {
                latest.insert(&d.reviewer, d);
            }
        }
        // A reviewer whose latest decision is a withdrawal has not decided this round.
        latest.retain(|_, d| d.decision != Decision::Withdrawn);
        st.current = latest
            .iter()
            .map(|(r, d)| (r.to_string(), d.decision))
            .collect();
        if st.current.is_empty() {
            st.state = State::Unreviewed;
            return st;
        }
        let mut kinds: Vec<Decision> = st.current.values().copied().collect();
        kinds.dedup();
        kinds.sort();
        kinds.dedup();
        st.state = if kinds.len() > 1 {
            State::Disputed
        } else if st.current.len() >= min {
            State::Converged(kinds[0])
        } else {
            State::Open
        };
        if st.state != State::Converged(Decision::Revise) {
            return st;
        }
        // Converged on revise: the newest edit of the round carries into the next one.
        let mut revising: Vec<&&ReviewRecord> = latest.values().collect();
        revising.sort_by_key(|d| (d.created_at, d.uid.clone()));
        for d in revising {
            if d.edited_question.is_some() {
                st.edited_question = d.edited_question.clone();
            }
            if d.edited_answer.is_some() {
                st.edited_answer = d.edited_answer.clone();
            }
        }
        st.rounds.push((st.round, Decision::Revise));
        st.round += 1;
        st.current.clear();
        st.state = State::Unreviewed;
    }
}

/// The decision that undoes `done` (undo, `z`): `reviewer`'s latest decision on the item in
/// the same round before `done`, made again now (a new uid and time, scores, rationale and
/// edits as they were), or a withdrawal when `done` was their first of the round. Nothing is
/// deleted: the new record is added, so rounds and agreement stay true, and undoing twice
/// walks back through the earlier decisions. `decisions`: the item's, any order.
pub fn undoing(decisions: &[ReviewRecord], done: &ReviewRecord, at: i64) -> ReviewRecord {
    let before = decisions
        .iter()
        .filter(|d| {
            d.item_id == done.item_id
                && d.reviewer == done.reviewer
                && d.round == done.round
                && d.uid != done.uid
                && (d.created_at, &d.uid) < (done.created_at, &done.uid)
        })
        .max_by(|a, b| (a.created_at, &a.uid).cmp(&(b.created_at, &b.uid)));
    let mut back = match before {
        Some(d) => d.clone(),
        None => ReviewRecord {
            clarity: None,
            relevance: None,
            coherence: None,
            decision: Decision::Withdrawn,
            rationale: format!("undone: {}", done.decision.as_str()),
            edited_question: None,
            edited_answer: None,
            ..done.clone()
        },
    };
    // Later than `done` whatever the clock says, so it is the latest.
    back.created_at = at.max(done.created_at + 1);
    back.uid = ReviewRecord::new_uid(&back.reviewer, back.created_at);
    back
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rec(reviewer: &str, round: u32, d: Decision, t: i64) -> ReviewRecord {
        ReviewRecord {
            uid: format!("{reviewer}-{t}"),
            item_id: "i1".into(),
            task_id: "t".into(),
            reviewer: reviewer.into(),
            round,
            clarity: Some(7),
            relevance: Some(8),
            coherence: Some(9),
            decision: d,
            rationale: String::new(),
            edited_question: None,
            edited_answer: None,
            created_at: t,
        }
    }

    fn st(recs: &[ReviewRecord]) -> ItemStatus {
        let refs: Vec<&ReviewRecord> = recs.iter().collect();
        status(&refs, 2)
    }

    #[test]
    fn rounds_converge_dispute_and_move_on_revise() {
        use Decision::*;
        assert_eq!(st(&[]).state, State::Unreviewed);
        let one = [rec("ann", 1, Retain, 1)];
        assert_eq!(st(&one).state, State::Open);
        let two = [rec("ann", 1, Retain, 1), rec("bob", 1, Remove, 2)];
        assert_eq!(st(&two).state, State::Disputed);
        // Bob changes his mind: his old decision stays in the history, his latest counts.
        let mut three = two.to_vec();
        three.push(rec("bob", 1, Retain, 3));
        assert_eq!(st(&three).state, State::Converged(Retain));
        assert_eq!(st(&three).current.len(), 2);

        // Both revise, one with an edit: round 2 opens with the edit; round 2's votes decide.
        let mut edit = rec("bob", 1, Revise, 2);
        edit.edited_question = Some("Better question?".into());
        let revised = [rec("ann", 1, Revise, 1), edit, rec("ann", 2, Remove, 5)];
        let s = st(&revised);
        assert_eq!(s.round, 2);
        assert_eq!(s.state, State::Open);
        assert_eq!(s.edited_question.as_deref(), Some("Better question?"));
        assert_eq!(s.rounds, vec![(1, Revise)]);
    }

    #[test]
    fn records_from_files_are_checked_field_by_field() {
        let mut r = rec("ann", 1, Decision::Retain, 1);
        assert!(r.check().is_ok());
        r.clarity = Some(11);
        assert!(r.check().unwrap_err().starts_with("clarity"));
        r.clarity = None;
        r.round = 0;
        assert!(r.check().unwrap_err().starts_with("round"));
        let a = ReviewRecord::new_uid("ann", 5);
        let b = ReviewRecord::new_uid("ann", 5);
        assert_ne!(a, b);
        assert!(a.starts_with("ann-5-"));
    }

    #[test]
    fn undoing_restores_the_decision_before_or_withdraws() {
        let first = rec("ann", 1, Decision::Retain, 10);
        let second = rec("ann", 1, Decision::Remove, 20);
        let bob = rec("bob", 1, Decision::Remove, 15);
        let all = vec![first.clone(), bob.clone(), second.clone()];
        // ann and bob agree on remove: converged; undoing ann's remove brings back her retain.
        assert_eq!(st(&all).state, State::Converged(Decision::Remove));
        let back = undoing(&all, &second, 5);
        assert_eq!(back.decision, Decision::Retain);
        assert!(
            back.created_at > second.created_at,
            "the latest, whatever the clock"
        );
        assert_ne!(back.uid, first.uid);
        let mut after = all.clone();
        after.push(back.clone());
        assert_eq!(st(&after).state, State::Disputed);
        // Undoing her first decision of the round withdraws it: bob alone, open.
        let gone = undoing(&after, &first, 30);
        assert_eq!(gone.decision, Decision::Withdrawn);
        let mut after2 = after.clone();
        after2.push(gone);
        let s = st(&after2);
        assert_eq!(s.state, State::Open);
        assert_eq!(s.current.keys().collect::<Vec<_>>(), vec!["bob"]);
        // Everyone withdrawn: unreviewed, nothing counted.
        let lone = rec("cy", 1, Decision::Retain, 1);
        let w = undoing(std::slice::from_ref(&lone), &lone, 2);
        assert_eq!(st(&[lone, w]).state, State::Unreviewed);
    }
}
