//! The records of human review and of the quality agent, as the store keeps them (SQLite and
//! the shared PostgreSQL store alike). They live here, below both stores, so that nothing in
//! the store reaches up into `review`; what review makes of them (status, agreement, the
//! rubric's weighted score) is in `review`.

use serde::{Deserialize, Serialize};

/// A reviewer's verdict on an item.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Decision {
    Retain,
    Remove,
    Revise,
    /// The reviewer's earlier decision in the round taken back (undo, `z`, when there was none
    /// before it): as if they had not decided. Kept like every decision (nothing is deleted, so
    /// rounds and agreement stay true); never offered as a choice, never counted.
    Withdrawn,
}

impl Decision {
    pub const ALL: [Decision; 3] = [Decision::Retain, Decision::Remove, Decision::Revise];

    pub fn as_str(self) -> &'static str {
        match self {
            Decision::Retain => "retain",
            Decision::Remove => "remove",
            Decision::Revise => "revise",
            Decision::Withdrawn => "withdrawn",
        }
    }

    pub fn parse(s: &str) -> Option<Decision> {
        match s.trim().to_ascii_lowercase().as_str() {
            "retain" | "keep" => Some(Decision::Retain),
            "remove" | "reject" => Some(Decision::Remove),
            "revise" => Some(Decision::Revise),
            "withdrawn" => Some(Decision::Withdrawn),
            _ => None,
        }
    }

    pub fn index(self) -> usize {
        self as usize
    }
}

/// What a reviewer has typed and chosen for an item but not saved as a decision yet.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Draft {
    pub item_id: String,
    pub reviewer: String,
    pub round: u32,
    pub clarity: Option<u8>,
    pub relevance: Option<u8>,
    pub coherence: Option<u8>,
    pub decision: Option<Decision>,
    pub rationale: String,
    pub edited_question: Option<String>,
    pub updated_at: i64,
}

/// One item's scores from one model (or why there are none).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct QualityRecord {
    pub item_id: String,
    pub task_id: String,
    pub model: String,
    /// A Factuality, B Discriminability, C Clarity; `None` when no reply could be read.
    pub scores: Option<[u8; 3]>,
    /// The last reply (kept so an unreadable one can be looked at).
    pub reply: String,
    pub error: Option<String>,
    pub attempts: u32,
    pub created_at: i64,
}

impl super::record::Record for QualityRecord {
    fn table() -> &'static super::lane_tables::Table {
        &super::lane_tables::QUALITY_SCORES
    }

    fn fields(&self) -> Vec<(&'static str, super::lane_tables::Val)> {
        use super::record::{int, text};
        let score = |i: usize| {
            self.scores
                .map_or(super::lane_tables::Val::Null, |s| int(s[i]))
        };
        vec![
            ("item_id", text(Some(&self.item_id))),
            ("model", text(Some(&self.model))),
            ("task_id", text(Some(&self.task_id))),
            ("factuality", score(0)),
            ("discriminability", score(1)),
            ("clarity", score(2)),
            ("reply", text(Some(&self.reply))),
            ("error", text(self.error.as_deref())),
            ("attempts", int(self.attempts)),
            ("created_at", int(self.created_at)),
        ]
    }

    fn from_fields(f: &super::record::Fields<'_>) -> super::Result<Self> {
        // A score outside 1..10 is no score (a row written by hand, or by a newer prism).
        let score = |c| {
            f.opt_int(c)
                .and_then(|v| u8::try_from(v).ok())
                .filter(|v| (1..=10).contains(v))
        };
        Ok(QualityRecord {
            item_id: f.text("item_id")?,
            model: f.text("model")?,
            task_id: f.text("task_id")?,
            scores: match (
                score("factuality"),
                score("discriminability"),
                score("clarity"),
            ) {
                (Some(a), Some(b), Some(c)) => Some([a, b, c]),
                _ => None,
            },
            reply: f.opt_text("reply").unwrap_or_default(),
            error: f.opt_text("error"),
            attempts: f.u32("attempts")?,
            created_at: f.int("created_at")?,
        })
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

/// A score of the review rubric (1-10) as stored: anything else reads as unscored.
fn rubric(f: &super::record::Fields<'_>, col: &'static str) -> Option<u8> {
    f.opt_int(col)
        .and_then(|v| u8::try_from(v).ok())
        .filter(|v| (1..=10).contains(v))
}

/// A decision as stored: written by `Decision::as_str`; anything else came from outside and
/// reads as revise (the decision that asks for another look) rather than failing the whole
/// history.
fn decision(f: &super::record::Fields<'_>) -> Decision {
    f.opt_text("decision")
        .as_deref()
        .and_then(Decision::parse)
        .unwrap_or(Decision::Revise)
}

impl super::record::Record for ReviewRecord {
    fn table() -> &'static super::lane_tables::Table {
        &super::tables::REVIEW_DECISIONS
    }

    fn fields(&self) -> Vec<(&'static str, super::lane_tables::Val)> {
        use super::record::{int, opt_int, text};
        vec![
            ("uid", text(Some(&self.uid))),
            ("item_id", text(Some(&self.item_id))),
            ("task_id", text(Some(&self.task_id))),
            ("reviewer", text(Some(&self.reviewer))),
            ("round", int(self.round)),
            ("clarity", opt_int(self.clarity)),
            ("relevance", opt_int(self.relevance)),
            ("coherence", opt_int(self.coherence)),
            ("decision", text(Some(self.decision.as_str()))),
            ("rationale", text(Some(&self.rationale))),
            ("edited_question", text(self.edited_question.as_deref())),
            ("edited_answer", text(self.edited_answer.as_deref())),
            ("created_at", int(self.created_at)),
        ]
    }

    fn from_fields(f: &super::record::Fields<'_>) -> super::Result<Self> {
        Ok(ReviewRecord {
            uid: f.text("uid")?,
            item_id: f.text("item_id")?,
            task_id: f.text("task_id")?,
            reviewer: f.text("reviewer")?,
            round: f.u32("round")?.max(1),
            clarity: rubric(f, "clarity"),
            relevance: rubric(f, "relevance"),
            coherence: rubric(f, "coherence"),
            decision: decision(f),
            rationale: f.opt_text("rationale").unwrap_or_default(),
            edited_question: f.opt_text("edited_question"),
            edited_answer: f.opt_text("edited_answer"),
            created_at: f.int("created_at")?,
        })
    }
}

impl super::record::Record for Draft {
    fn table() -> &'static super::lane_tables::Table {
        &super::tables::REVIEW_DRAFTS
    }

    fn fields(&self) -> Vec<(&'static str, super::lane_tables::Val)> {
        use super::record::{int, opt_int, text};
        vec![
            ("item_id", text(Some(&self.item_id))),
            ("reviewer", text(Some(&self.reviewer))),
            ("round", int(self.round)),
            ("clarity", opt_int(self.clarity)),
            ("relevance", opt_int(self.relevance)),
            ("coherence", opt_int(self.coherence)),
            ("decision", text(self.decision.map(Decision::as_str))),
            ("rationale", text(Some(&self.rationale))),
            ("edited_question", text(self.edited_question.as_deref())),
            ("updated_at", int(self.updated_at)),
        ]
    }

    fn from_fields(f: &super::record::Fields<'_>) -> super::Result<Self> {
        Ok(Draft {
            item_id: f.text("item_id")?,
            reviewer: f.text("reviewer")?,
            round: f.u32("round")?.max(1),
            clarity: rubric(f, "clarity"),
            relevance: rubric(f, "relevance"),
            coherence: rubric(f, "coherence"),
            decision: f.opt_text("decision").as_deref().and_then(Decision::parse),
            rationale: f.opt_text("rationale").unwrap_or_default(),
            edited_question: f.opt_text("edited_question"),
            updated_at: f.int("updated_at")?,
        })
    }
}
