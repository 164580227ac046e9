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

pub mod agreement;
pub mod bank;
pub mod db;
pub mod load;
pub mod quality;
pub mod queue;
pub mod rubric;
pub mod watch;

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::taxonomy::Dimension;

/// How far before the last decision seen a refresh reads again: a concurrent writer's
/// transaction can commit a lower sequence number after a higher one became visible.
pub const REFRESH_LOOKBACK: i64 = 256;

/// A reviewer's verdict on an item.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Decision {
    Retain,
    Remove,
    Revise,
}

impl Decision {
    pub const ALL: [Decision; 3] = [Decision::Retain, Decision::Remove, Decision::Revise];

    pub fn as_str(self) -> &'static str {
        match self {
            Decision::Retain => "retain",
            Decision::Remove => "remove",
            Decision::Revise => "revise",
        }
    }

    pub fn parse(s: &str) -> Option<Decision> {
        match s.trim().to_ascii_lowercase().as_str() {
            "retain" | "keep" => Some(Decision::Retain),
            "remove" | "reject" => Some(Decision::Remove),
            "revise" => Some(Decision::Revise),
            _ => None,
        }
    }

    pub fn index(self) -> usize {
        self as usize
    }
}

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

/// One decision, as stored and exported. `uid` is unique across machines (reviewer, time and a
/// random part), so an import adds each decision once however often it is merged.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ReviewRecord {
    pub uid: String,
    pub item_id: String,
    pub task_id: String,
    pub reviewer: String,
    pub round: u32,
    /// Clarity, Domain Relevance, Coherence (1-10); a reviewer may leave one unscored.
    pub clarity: Option<u8>,
    pub relevance: Option<u8>,
    pub coherence: Option<u8>,
    pub decision: Decision,
    #[serde(default)]
    pub rationale: String,
    /// A revision's new question / reference answer (the original stays in the dataset).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub edited_question: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub edited_answer: Option<String>,
    /// Milliseconds since the Unix epoch.
    pub created_at: i64,
}

impl ReviewRecord {
    /// A new uid: the reviewer, the time and 64 random bits.
    pub fn new_uid(reviewer: &str, created_at: i64) -> String {
        format!(
            "{}-{created_at}-{:016x}",
            crate::text::one_line(reviewer),
            rand::random::<u64>()
        )
    }

    /// Checks the fields a file could get wrong; the reason names the field.
    pub fn check(&self) -> Result<(), String> {
        for (name, v) in [
            ("clarity", self.clarity),
            ("relevance", self.relevance),
            ("coherence", self.coherence),
        ] {
            if let Some(v) = v
                && !(1..=10).contains(&v)
            {
                return Err(format!("{name}: {v} is not between 1 and 10"));
            }
        }
        if self.uid.trim().is_empty() {
            return Err("uid: empty".into());
        }
        if self.item_id.trim().is_empty() {
            return Err("item_id: empty".into());
        }
        if self.reviewer.trim().is_empty() {
            return Err("reviewer: empty".into());
        }
        if self.round == 0 {
            return Err("round: rounds start at 1".into());
        }
        // PostgreSQL keeps rounds as INTEGER: a larger one would read back as another round.
        if self.round > i32::MAX as u32 {
            return Err(format!(
                "round: {} is over the largest round, {}",
                self.round,
                i32::MAX
            ));
        }
        // PostgreSQL text cannot hold NUL; SQLite could, so both refuse it alike.
        for (name, v) in [
            ("uid", Some(&self.uid)),
            ("item_id", Some(&self.item_id)),
            ("task_id", Some(&self.task_id)),
            ("reviewer", Some(&self.reviewer)),
            ("rationale", Some(&self.rationale)),
            ("edited_question", self.edited_question.as_ref()),
            ("edited_answer", self.edited_answer.as_ref()),
        ] {
            if v.is_some_and(|v| v.contains('\0')) {
                return Err(format!("{name}: holds a NUL character (\\u0000)"));
            }
        }
        Ok(())
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
        st.current = latest
            .iter()
            .map(|(r, d)| (r.to_string(), d.decision))
            .collect();
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
}
