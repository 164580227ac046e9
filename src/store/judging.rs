//! The judge on trial, as the store keeps it: every verdict each judge gave on an answer (one
//! row per answer, judge and repeat, so a panel of judges and repeated asks are all kept), and
//! people's verdicts on answers (labels: never overwritten, one row per labelling, by reviewer
//! and time; the newest of a reviewer's counts). Both are described tables, so they move
//! between SQLite and PostgreSQL, and with their runs, as the other lanes' rows do.

use serde::{Deserialize, Serialize};

use super::Store;
use super::error::Result;
use super::lane_tables::{ANSWER_LABELS, JUDGE_VERDICTS, Table, Val};
use super::record::{Fields, Record, int, real, text};

/// One judge's verdict on one answer, on one asking (`repeat` 0, 1, ...).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct JudgeVerdict {
    pub run_id: String,
    pub job_idx: u32,
    pub judge: String,
    pub repeat: u32,
    pub item_id: String,
    pub task_id: String,
    pub model: String,
    pub evaluator: String,
    /// 0..1 as PRISM's judges score; `None` when the judge could not be reached.
    pub score: Option<f64>,
    pub detail: String,
    pub reply: Option<String>,
    pub attempts: u32,
    /// The judge's reply was never readable and its fallback score applied.
    pub fallback: bool,
    pub created_at: i64,
}

impl JudgeVerdict {
    /// Whether this verdict says the answer is hallucinated (PRISM's line: a score below 0.5).
    pub fn hallucinated(&self) -> Option<bool> {
        self.score.map(|s| s < 0.5)
    }
}

impl Record for JudgeVerdict {
    fn table() -> &'static Table {
        &JUDGE_VERDICTS
    }

    fn fields(&self) -> Vec<(&'static str, Val)> {
        vec![
            ("run_id", text(Some(&self.run_id))),
            ("job_idx", int(self.job_idx)),
            ("judge", text(Some(&self.judge))),
            ("repeat", int(self.repeat)),
            ("item_id", text(Some(&self.item_id))),
            ("task_id", text(Some(&self.task_id))),
            ("model", text(Some(&self.model))),
            ("evaluator", text(Some(&self.evaluator))),
            ("score", real(self.score)),
            ("detail", text(Some(&self.detail))),
            ("reply", text(self.reply.as_deref())),
            ("attempts", int(self.attempts)),
            ("fallback", int(i64::from(self.fallback))),
            ("created_at", int(self.created_at)),
        ]
    }

    fn from_fields(f: &Fields<'_>) -> Result<Self> {
        Ok(JudgeVerdict {
            run_id: f.text("run_id")?,
            job_idx: f.u32("job_idx")?,
            judge: f.text("judge")?,
            repeat: f.u32("repeat")?,
            item_id: f.text("item_id")?,
            task_id: f.text("task_id")?,
            model: f.text("model")?,
            evaluator: f.text("evaluator")?,
            // A score outside 0..1 is no score (as for scores).
            score: f.opt_real("score").filter(|s| (0.0..=1.0).contains(s)),
            detail: f.opt_text("detail").unwrap_or_default(),
            reply: f.opt_text("reply"),
            attempts: f.u32("attempts")?,
            fallback: f.opt_int("fallback").unwrap_or(0) != 0,
            created_at: f.int("created_at")?,
        })
    }
}

/// A person's verdict on an answer.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Label {
    Hallucinated,
    Correct,
    /// Looked at and could not tell: kept, never counted as either.
    CantTell,
    /// The reviewer's earlier label taken back (undo, `z`, when there was none before it): as
    /// if they had not labelled the answer. Kept like every label; never offered as a choice.
    Withdrawn,
}

impl Label {
    pub const ALL: [Label; 3] = [Label::Hallucinated, Label::Correct, Label::CantTell];

    pub fn as_str(self) -> &'static str {
        match self {
            Label::Hallucinated => "hallucinated",
            Label::Correct => "correct",
            Label::CantTell => "cant_tell",
            Label::Withdrawn => "withdrawn",
        }
    }

    /// How a label reads on a screen.
    pub fn words(self) -> &'static str {
        match self {
            Label::Hallucinated => "hallucinated",
            Label::Correct => "correct",
            Label::CantTell => "can't tell",
            Label::Withdrawn => "withdrawn",
        }
    }

    /// Reads a label as people write it (`h`, `hallucinated`, `correct`, `c`, `?`, `cant tell`).
    pub fn parse(s: &str) -> Option<Label> {
        let s = s.trim().to_ascii_lowercase().replace(['-', ' ', '\''], "_");
        match s.as_str() {
            "hallucinated" | "h" | "wrong" | "hallucination" => Some(Label::Hallucinated),
            "correct" | "c" | "ok" | "right" => Some(Label::Correct),
            "cant_tell" | "can_t_tell" | "cannot_tell" | "unsure" | "?" | "u" => {
                Some(Label::CantTell)
            }
            "withdrawn" => Some(Label::Withdrawn),
            _ => None,
        }
    }

    /// The label as a hallucination flag (`None` for can't tell).
    pub fn hallucinated(self) -> Option<bool> {
        match self {
            Label::Hallucinated => Some(true),
            Label::Correct => Some(false),
            Label::CantTell | Label::Withdrawn => None,
        }
    }
}

/// One labelling of an answer by a person. Labels are never overwritten: a new one is a new
/// row (its own uid), and a reviewer's newest label on an answer is the one that counts.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct AnswerLabel {
    pub uid: String,
    #[serde(rename = "run")]
    pub run_id: String,
    #[serde(rename = "job")]
    pub job_idx: u32,
    pub item_id: String,
    pub model: String,
    pub reviewer: String,
    pub label: Label,
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub note: String,
    /// Milliseconds since the Unix epoch.
    pub created_at: i64,
}

impl AnswerLabel {
    /// A new label's uid: the reviewer, the time and 64 random bits.
    pub fn new_uid(reviewer: &str, created_at: i64) -> String {
        super::review_records::ReviewRecord::new_uid(reviewer, created_at)
    }
}

impl Record for AnswerLabel {
    fn table() -> &'static Table {
        &ANSWER_LABELS
    }

    fn fields(&self) -> Vec<(&'static str, Val)> {
        vec![
            ("uid", text(Some(&self.uid))),
            ("run_id", text(Some(&self.run_id))),
            ("job_idx", int(self.job_idx)),
            ("item_id", text(Some(&self.item_id))),
            ("model", text(Some(&self.model))),
            ("reviewer", text(Some(&self.reviewer))),
            ("label", text(Some(self.label.as_str()))),
            ("note", text(Some(&self.note))),
            ("created_at", int(self.created_at)),
        ]
    }

    fn from_fields(f: &Fields<'_>) -> Result<Self> {
        let label = f.text("label")?;
        Ok(AnswerLabel {
            uid: f.text("uid")?,
            run_id: f.text("run_id")?,
            job_idx: f.u32("job_idx")?,
            item_id: f.text("item_id")?,
            model: f.text("model")?,
            reviewer: f.text("reviewer")?,
            label: Label::parse(&label).ok_or_else(|| super::StoreError::BadValue {
                table: "answer_labels",
                what: "label",
                value: label,
            })?,
            note: f.opt_text("note").unwrap_or_default(),
            created_at: f.int("created_at")?,
        })
    }
}

/// Each reviewer's newest label per answer (`(run, job, reviewer)`), from all labels.
pub fn newest_labels(labels: &[AnswerLabel]) -> Vec<&AnswerLabel> {
    let mut newest: std::collections::BTreeMap<(&str, u32, &str), &AnswerLabel> =
        std::collections::BTreeMap::new();
    for l in labels {
        let k = (l.run_id.as_str(), l.job_idx, l.reviewer.as_str());
        match newest.get(&k) {
            Some(o) if (o.created_at, &o.uid) >= (l.created_at, &l.uid) => {}
            _ => {
                newest.insert(k, l);
            }
        }
    }
    // A reviewer whose newest label is a withdrawal has no label on the answer.
    newest
        .into_values()
        .filter(|l| l.label != Label::Withdrawn)
        .collect()
}

/// The label that undoes `done` (undo, `z`): the reviewer's newest label on the same answer
/// before it, given again now, or a withdrawal when `done` was their first. Labels are never
/// deleted; the new one is added and, being the newest, is the reviewer's label.
pub fn undoing_label(labels: &[AnswerLabel], done: &AnswerLabel, at: i64) -> AnswerLabel {
    let before = labels
        .iter()
        .filter(|l| {
            l.run_id == done.run_id
                && l.job_idx == done.job_idx
                && l.reviewer == done.reviewer
                && l.uid != done.uid
                && (l.created_at, &l.uid) < (done.created_at, &done.uid)
        })
        .max_by(|a, b| (a.created_at, &a.uid).cmp(&(b.created_at, &b.uid)));
    let mut back = match before {
        Some(l) => l.clone(),
        None => AnswerLabel {
            label: Label::Withdrawn,
            note: format!("undone: {}", done.label.words()),
            ..done.clone()
        },
    };
    back.created_at = at.max(done.created_at + 1);
    back.uid = AnswerLabel::new_uid(&back.reviewer, back.created_at);
    back
}

impl Store {
    /// Saves (replaces) judges' verdicts.
    pub fn save_judge_verdicts(&mut self, v: &[JudgeVerdict]) -> Result<()> {
        self.save_records(v)
    }

    /// Every judge's verdict on the answers of `run` (of every run for `None`).
    pub fn judge_verdicts(&self, run: Option<&str>) -> Result<Vec<JudgeVerdict>> {
        self.records_where(run.map(|r| ("run_id", r)))
    }

    /// Adds labels, on answers or on sentences (one already here, by its uid, is not added
    /// twice); returns how many were new.
    pub fn add_labels<R: Record>(&mut self, labels: &[R]) -> Result<usize> {
        let rows: Vec<_> = labels.iter().map(Record::to_row).collect();
        self.put_lane_rows(&[(R::table(), rows)], false)
    }

    /// Every label on the answers of `run` (of every run for `None`), oldest first.
    pub fn answer_labels(&self, run: Option<&str>) -> Result<Vec<AnswerLabel>> {
        let mut v: Vec<AnswerLabel> = self.records_where(run.map(|r| ("run_id", r)))?;
        v.sort_by(|a, b| (a.created_at, &a.uid).cmp(&(b.created_at, &b.uid)));
        Ok(v)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn label(uid: &str, reviewer: &str, l: Label, at: i64) -> AnswerLabel {
        AnswerLabel {
            uid: uid.into(),
            run_id: "r1".into(),
            job_idx: 3,
            item_id: "KE-1".into(),
            model: "m".into(),
            reviewer: reviewer.into(),
            label: l,
            note: String::new(),
            created_at: at,
        }
    }

    #[test]
    fn labels_are_added_never_overwritten_and_the_newest_of_a_reviewer_counts() {
        let mut s = Store::open_in_memory().unwrap();
        let a = label("a", "ann", Label::Correct, 10);
        let b = label("b", "ann", Label::Hallucinated, 20);
        let c = label("c", "bob", Label::CantTell, 15);
        assert_eq!(s.add_labels(&[a.clone(), b.clone()]).unwrap(), 2);
        // The same uid again (an import run twice) adds nothing and changes nothing.
        let mut a2 = a.clone();
        a2.label = Label::Hallucinated;
        assert_eq!(s.add_labels(&[a2, c.clone()]).unwrap(), 1);
        let all = s.answer_labels(Some("r1")).unwrap();
        assert_eq!(all, vec![a, c.clone(), b.clone()]);
        let newest = newest_labels(&all);
        assert_eq!(newest, vec![&b, &c]);
        assert!(s.answer_labels(Some("r2")).unwrap().is_empty());
    }

    #[test]
    fn undoing_a_label_gives_the_one_before_again_or_withdraws_it() {
        let a = label("a", "ann", Label::Correct, 10);
        let b = label("b", "ann", Label::Hallucinated, 20);
        let c = label("c", "bob", Label::CantTell, 15);
        let all = vec![a.clone(), b.clone(), c.clone()];
        let back = undoing_label(&all, &b, 3);
        assert_eq!(back.label, Label::Correct);
        assert!(back.created_at > b.created_at);
        let mut after = all.clone();
        after.push(back.clone());
        let newest: Vec<Label> = newest_labels(&after).iter().map(|l| l.label).collect();
        assert_eq!(newest, vec![Label::Correct, Label::CantTell]);
        // Her first label undone: withdrawn, and she has no label on the answer any more.
        let w = undoing_label(&after, &a, 40);
        assert_eq!(w.label, Label::Withdrawn);
        after.push(w);
        let newest: Vec<&str> = newest_labels(&after)
            .iter()
            .map(|l| l.reviewer.as_str())
            .collect();
        assert_eq!(newest, vec!["bob"]);
    }

    #[test]
    fn verdicts_are_kept_per_judge_and_repeat() {
        let mut s = Store::open_in_memory().unwrap();
        let v = |judge: &str, repeat: u32, score: Option<f64>| JudgeVerdict {
            run_id: "r1".into(),
            job_idx: 0,
            judge: judge.into(),
            repeat,
            item_id: "KE-1".into(),
            task_id: "KE-FD-Myths".into(),
            model: "m".into(),
            evaluator: "fact_judge".into(),
            score,
            detail: "d".into(),
            reply: Some("YES".into()),
            attempts: 1,
            fallback: false,
            created_at: 1,
        };
        s.save_judge_verdicts(&[v("a", 0, Some(1.0)), v("a", 1, Some(0.0)), v("b", 0, None)])
            .unwrap();
        // Asked again: the verdict of that judge and repeat is replaced.
        s.save_judge_verdicts(&[v("a", 1, Some(1.0))]).unwrap();
        let got = s.judge_verdicts(Some("r1")).unwrap();
        assert_eq!(got.len(), 3);
        assert_eq!(got[1].score, Some(1.0));
        assert_eq!(got[2].hallucinated(), None);
        assert_eq!(Label::parse("can't tell"), Some(Label::CantTell));
        assert_eq!(Label::parse(" H "), Some(Label::Hallucinated));
        assert_eq!(Label::parse("maybe"), None);
    }
}
