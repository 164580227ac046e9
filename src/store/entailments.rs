//! Entailment verdicts for semantic entropy: whether one answer to a question entails another,
//! as a judge said, one row per judge, question and ordered pair of answers. Kept across runs
//! (an answer pair is the same pair in any run), so clustering the same answers again asks
//! nothing; the clusters themselves are recomputed from these rows (`eval::semantic`).

use serde::{Deserialize, Serialize};

use super::Store;
use super::error::Result;
use super::lane_tables::{ENTAILMENTS, Table, Val};
use super::record::{Fields, Record, int, text};

/// What the judge said of "does the premise entail the hypothesis?".
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Relation {
    Entailment,
    Neutral,
    Contradiction,
}

impl Relation {
    pub fn as_str(self) -> &'static str {
        match self {
            Relation::Entailment => "entailment",
            Relation::Neutral => "neutral",
            Relation::Contradiction => "contradiction",
        }
    }

    pub fn parse(s: &str) -> Option<Relation> {
        match s {
            "entailment" => Some(Relation::Entailment),
            "neutral" => Some(Relation::Neutral),
            "contradiction" => Some(Relation::Contradiction),
            _ => None,
        }
    }
}

/// One judge's verdict on one ordered pair of answers to one question.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct EntailRecord {
    pub judge: String,
    pub question: String,
    pub premise: String,
    pub hypothesis: String,
    /// `None`: the judge replied but no reply could be read, or the call failed (`error`).
    pub relation: Option<Relation>,
    pub reply: Option<String>,
    pub error: Option<String>,
    pub attempts: u32,
    pub created_at: i64,
}

impl Record for EntailRecord {
    fn table() -> &'static Table {
        &ENTAILMENTS
    }

    fn fields(&self) -> Vec<(&'static str, Val)> {
        vec![
            ("judge", text(Some(&self.judge))),
            ("question", text(Some(&self.question))),
            ("premise", text(Some(&self.premise))),
            ("hypothesis", text(Some(&self.hypothesis))),
            ("relation", text(self.relation.map(Relation::as_str))),
            ("reply", text(self.reply.as_deref())),
            ("error", text(self.error.as_deref())),
            ("attempts", int(self.attempts)),
            ("created_at", int(self.created_at)),
        ]
    }

    fn from_fields(f: &Fields<'_>) -> Result<Self> {
        Ok(EntailRecord {
            judge: f.text("judge")?,
            question: f.text("question")?,
            premise: f.text("premise")?,
            hypothesis: f.text("hypothesis")?,
            // A relation this prism does not know reads as unread.
            relation: f.opt_text("relation").as_deref().and_then(Relation::parse),
            reply: f.opt_text("reply"),
            error: f.opt_text("error"),
            attempts: f.u32("attempts")?,
            created_at: f.int("created_at")?,
        })
    }
}

impl Store {
    /// Saves (replaces) a verdict.
    pub fn save_entailment(&mut self, r: &EntailRecord) -> Result<()> {
        self.save_records(std::slice::from_ref(r))
    }

    /// Every verdict `judge` gave (all judges when `None`), by judge then question.
    pub fn entailments(&self, judge: Option<&str>) -> Result<Vec<EntailRecord>> {
        self.records_where(judge.map(|j| ("judge", j)))
    }

    /// Every verdict on answers to these questions (a detection's, for its screen).
    pub fn entailments_on(&self, questions: &[&str]) -> Result<Vec<EntailRecord>> {
        let mut out = Vec::new();
        let mut seen = std::collections::HashSet::new();
        for q in questions {
            if seen.insert(*q) {
                out.extend(self.records_where::<EntailRecord>(Some(("question", q)))?);
            }
        }
        Ok(out)
    }

    /// The judges that gave any verdict, most verdicts first.
    pub fn entailment_judges(&self) -> Result<Vec<String>> {
        let mut st = self.conn.prepare(
            "SELECT judge FROM entailments GROUP BY judge ORDER BY COUNT(*) DESC, judge",
        )?;
        let rows = st
            .query_map([], |r| r.get("judge"))?
            .collect::<rusqlite::Result<Vec<String>>>()?;
        Ok(rows)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_verdict_is_kept_per_judge_question_and_ordered_pair() {
        let mut s = Store::open_in_memory().unwrap();
        let rec = |judge: &str, p: &str, h: &str, rel: Option<Relation>| EntailRecord {
            judge: judge.into(),
            question: "Capital of France?".into(),
            premise: p.into(),
            hypothesis: h.into(),
            relation: rel,
            reply: Some("entailment".into()),
            error: None,
            attempts: 1,
            created_at: 3,
        };
        s.save_entailment(&rec("j", "Paris", "It is Paris", None))
            .unwrap();
        s.save_entailment(&rec(
            "j",
            "Paris",
            "It is Paris",
            Some(Relation::Entailment),
        ))
        .unwrap();
        s.save_entailment(&rec("j", "It is Paris", "Paris", Some(Relation::Neutral)))
            .unwrap();
        s.save_entailment(&rec("k", "Paris", "Lyon", Some(Relation::Contradiction)))
            .unwrap();
        let j = s.entailments(Some("j")).unwrap();
        assert_eq!(j.len(), 2);
        assert_eq!(
            j.iter().find(|r| r.premise == "Paris").unwrap().relation,
            Some(Relation::Entailment)
        );
        assert_eq!(s.entailments(None).unwrap().len(), 3);
        assert_eq!(s.entailment_judges().unwrap(), vec!["j", "k"]);
        assert_eq!(
            s.entailments_on(&["Capital of France?", "Capital of France?"])
                .unwrap()
                .len(),
            3
        );
        assert!(s.entailments_on(&["other"]).unwrap().is_empty());
    }
}
