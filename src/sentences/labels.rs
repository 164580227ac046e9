//! People's verdicts on sentences (`L` on the where-in-the-answer screen, `prism labels
//! import`): SelfCheckGPT's three grades, accurate, minor inaccurate, major inaccurate (the last
//! two non-factual). As with labels on answers, nothing is overwritten: a new labelling is a
//! new row, a reviewer's newest on a sentence counts, undo adds the one before again.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::store::lane_tables::{SENTENCE_LABELS, Table, Val};
use crate::store::record::{Fields, Record, int, text};

/// A person's grade of a sentence.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Grade {
    Accurate,
    #[serde(rename = "minor_inaccurate")]
    Minor,
    #[serde(rename = "major_inaccurate")]
    Major,
    /// The reviewer's earlier grade taken back (undo when there was none before it).
    Withdrawn,
}

impl Grade {
    pub const ALL: [Grade; 3] = [Grade::Accurate, Grade::Minor, Grade::Major];

    pub fn as_str(self) -> &'static str {
        match self {
            Grade::Accurate => "accurate",
            Grade::Minor => "minor_inaccurate",
            Grade::Major => "major_inaccurate",
            Grade::Withdrawn => "withdrawn",
        }
    }

    /// How it reads on a screen.
    pub fn words(self) -> &'static str {
        match self {
            Grade::Accurate => "accurate",
            Grade::Minor => "minor inaccurate",
            Grade::Major => "major inaccurate",
            Grade::Withdrawn => "withdrawn",
        }
    }

    /// Reads a grade as people write it (`accurate`, `a`, `minor`, `minor inaccurate`, `major`).
    pub fn parse(s: &str) -> Option<Grade> {
        let s = s.trim().to_ascii_lowercase().replace(['-', ' '], "_");
        match s.as_str() {
            "accurate" | "a" | "factual" | "correct" => Some(Grade::Accurate),
            "minor" | "minor_inaccurate" | "m" => Some(Grade::Minor),
            "major" | "major_inaccurate" | "x" => Some(Grade::Major),
            "withdrawn" => Some(Grade::Withdrawn),
            _ => None,
        }
    }

    /// Non-factual (minor or major), as the paper's evaluation counts it; `None` for a
    /// withdrawal.
    pub fn non_factual(self) -> Option<bool> {
        match self {
            Grade::Accurate => Some(false),
            Grade::Minor | Grade::Major => Some(true),
            Grade::Withdrawn => None,
        }
    }
}

/// One grading of one sentence of a stored answer by one person.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SentenceLabel {
    pub uid: String,
    #[serde(rename = "run")]
    pub run_id: String,
    #[serde(rename = "job")]
    pub job_idx: u32,
    pub item_id: String,
    pub model: String,
    /// The sentence's index in the answer (0-based) and its byte span in the answer's text.
    pub sentence: u32,
    pub start: u32,
    pub end: u32,
    pub text: String,
    pub reviewer: String,
    pub label: Grade,
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub note: String,
    /// Milliseconds since the Unix epoch.
    pub created_at: i64,
}

impl Record for SentenceLabel {
    fn table() -> &'static Table {
        &SENTENCE_LABELS
    }

    fn fields(&self) -> Vec<(&'static str, Val)> {
        vec![
            ("uid", text(Some(&self.uid))),
            ("run_id", text(Some(&self.run_id))),
            ("job_idx", int(self.job_idx)),
            ("item_id", text(Some(&self.item_id))),
            ("model", text(Some(&self.model))),
            ("sentence", int(self.sentence)),
            ("span_start", int(self.start)),
            ("span_end", int(self.end)),
            ("text", text(Some(&self.text))),
            ("reviewer", text(Some(&self.reviewer))),
            ("label", text(Some(self.label.as_str()))),
            ("note", text(Some(&self.note))),
            ("created_at", int(self.created_at)),
        ]
    }

    fn from_fields(f: &Fields<'_>) -> crate::store::Result<Self> {
        let label = f.text("label")?;
        Ok(SentenceLabel {
            uid: f.text("uid")?,
            run_id: f.text("run_id")?,
            job_idx: f.u32("job_idx")?,
            item_id: f.text("item_id")?,
            model: f.text("model")?,
            sentence: f.u32("sentence")?,
            start: f.u32("span_start")?,
            end: f.u32("span_end")?,
            text: f.opt_text("text").unwrap_or_default(),
            reviewer: f.text("reviewer")?,
            label: Grade::parse(&label).ok_or_else(|| crate::store::StoreError::BadValue {
                table: "sentence_labels",
                what: "label",
                value: label,
            })?,
            note: f.opt_text("note").unwrap_or_default(),
            created_at: f.int("created_at")?,
        })
    }
}

type Key<'a> = (&'a str, u32, u32, &'a str);

fn key(l: &SentenceLabel) -> Key<'_> {
    (&l.run_id, l.job_idx, l.sentence, &l.reviewer)
}

/// Each reviewer's newest grade per sentence (withdrawn ones left out), from all labels.
pub fn newest(labels: &[SentenceLabel]) -> Vec<&SentenceLabel> {
    let mut newest: BTreeMap<Key<'_>, &SentenceLabel> = BTreeMap::new();
    for l in labels {
        match newest.get(&key(l)) {
            Some(o) if (o.created_at, &o.uid) >= (l.created_at, &l.uid) => {}
            _ => {
                newest.insert(key(l), l);
            }
        }
    }
    newest
        .into_values()
        .filter(|l| l.label != Grade::Withdrawn)
        .collect()
}

/// Whether people call a sentence non-factual: the majority of its reviewers' newest grades;
/// `None` on a tie or with no grade. Keyed by (run, job, sentence).
pub fn verdicts(labels: &[SentenceLabel]) -> BTreeMap<(String, u32, u32), bool> {
    let mut votes: BTreeMap<(String, u32, u32), (u32, u32)> = BTreeMap::new();
    for l in newest(labels) {
        let Some(bad) = l.label.non_factual() else {
            continue;
        };
        let v = votes
            .entry((l.run_id.clone(), l.job_idx, l.sentence))
            .or_default();
        if bad { v.0 += 1 } else { v.1 += 1 }
    }
    votes
        .into_iter()
        .filter(|(_, (b, g))| b != g)
        .map(|(k, (b, g))| (k, b > g))
        .collect()
}

/// The label that undoes `done`: the reviewer's grade of the same sentence before it, given
/// again now, or a withdrawal when `done` was the first. Nothing is deleted.
pub fn undoing(labels: &[SentenceLabel], done: &SentenceLabel, at: i64) -> SentenceLabel {
    let before = labels
        .iter()
        .filter(|l| {
            key(l) == key(done)
                && l.uid != done.uid
                && (l.created_at, &l.uid) < (done.created_at, &done.uid)
        })
        .max_by(|a, b| (a.created_at, &a.uid).cmp(&(b.created_at, &b.uid)));
    let mut back = match before {
        Some(l) => l.clone(),
        None => SentenceLabel {
            label: Grade::Withdrawn,
            note: format!("undone: {}", done.label.words()),
            ..done.clone()
        },
    };
    back.created_at = at.max(done.created_at + 1);
    back.uid = crate::store::AnswerLabel::new_uid(&back.reviewer, back.created_at);
    back
}

#[cfg(test)]
mod tests {
    use super::*;

    fn l(uid: &str, who: &str, sentence: u32, g: Grade, at: i64) -> SentenceLabel {
        SentenceLabel {
            uid: uid.into(),
            run_id: "r".into(),
            job_idx: 3,
            item_id: "i".into(),
            model: "m".into(),
            sentence,
            start: 0,
            end: 4,
            text: "Text".into(),
            reviewer: who.into(),
            label: g,
            note: String::new(),
            created_at: at,
        }
    }

    #[test]
    fn the_newest_grade_of_each_reviewer_counts_and_the_majority_decides() {
        let all = vec![
            l("1", "ann", 0, Grade::Accurate, 1),
            l("2", "ann", 0, Grade::Major, 2),
            l("3", "bob", 0, Grade::Minor, 1),
            l("4", "ann", 1, Grade::Accurate, 1),
            l("5", "bob", 1, Grade::Major, 1),
            l("6", "ann", 2, Grade::Major, 1),
            l("7", "ann", 2, Grade::Withdrawn, 5),
        ];
        let v = verdicts(&all);
        assert_eq!(v.get(&("r".into(), 3, 0)), Some(&true));
        // A tie says nothing, nor does a withdrawn grade.
        assert_eq!(v.get(&("r".into(), 3, 1)), None);
        assert_eq!(v.get(&("r".into(), 3, 2)), None);
        assert_eq!(v.len(), 1);
    }

    #[test]
    fn undo_gives_the_grade_before_again_or_withdraws_the_first() {
        let first = l("1", "ann", 0, Grade::Accurate, 1);
        let second = l("2", "ann", 0, Grade::Major, 2);
        let all = vec![first.clone(), second.clone()];
        let back = undoing(&all, &second, 10);
        assert_eq!(back.label, Grade::Accurate);
        assert_eq!(back.created_at, 10);
        assert_ne!(back.uid, first.uid);
        let gone = undoing(&all, &first, 10);
        assert_eq!(gone.label, Grade::Withdrawn);
        let mut with = all.clone();
        with.push(back);
        assert_eq!(newest(&with)[0].label, Grade::Accurate);
    }

    #[test]
    fn a_label_reads_back_from_its_row() {
        let a = l("1", "ann", 4, Grade::Minor, 7);
        assert_eq!(SentenceLabel::from_row(&a.to_row()).unwrap(), a);
        for g in Grade::ALL {
            assert_eq!(Grade::parse(g.as_str()), Some(g));
            assert_eq!(Grade::parse(g.words()), Some(g));
        }
    }
}
