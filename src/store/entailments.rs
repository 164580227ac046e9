//! Entailment verdicts for semantic entropy: whether one answer to a question entails another,
//! as a judge said, one row per judge, question and ordered pair of answers. Kept across runs
//! (an answer pair is the same pair in any run), so clustering the same answers again asks
//! nothing; the clusters themselves are recomputed from these rows (`eval::semantic`).

use rusqlite::params;
use serde::{Deserialize, Serialize};

use super::Store;
use super::error::Result;

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

impl Store {
    /// Saves (replaces) a verdict.
    pub fn save_entailment(&mut self, r: &EntailRecord) -> Result<()> {
        self.conn.execute(
            "INSERT OR REPLACE INTO entailments (judge, question, premise, hypothesis, relation,
             reply, error, attempts, created_at) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9)",
            params![
                r.judge,
                r.question,
                r.premise,
                r.hypothesis,
                r.relation.map(Relation::as_str),
                r.reply,
                r.error,
                r.attempts,
                r.created_at
            ],
        )?;
        Ok(())
    }

    /// Every verdict `judge` gave (all judges when `None`), by judge then question.
    pub fn entailments(&self, judge: Option<&str>) -> Result<Vec<EntailRecord>> {
        let mut st = self.conn.prepare(
            "SELECT judge, question, premise, hypothesis, relation, reply, error, attempts,
             created_at FROM entailments WHERE ?1 IS NULL OR judge = ?1
             ORDER BY judge, question, premise, hypothesis",
        )?;
        let rows = st
            .query_map(params![judge], row)?
            .collect::<rusqlite::Result<Vec<_>>>()?;
        Ok(rows)
    }

    /// Every verdict on answers to these questions (a detection's, for its screen).
    pub fn entailments_on(&self, questions: &[&str]) -> Result<Vec<EntailRecord>> {
        let mut st = self.conn.prepare(
            "SELECT judge, question, premise, hypothesis, relation, reply, error, attempts,
             created_at FROM entailments WHERE question = ?1",
        )?;
        let mut out = Vec::new();
        let mut seen = std::collections::HashSet::new();
        for q in questions {
            if !seen.insert(*q) {
                continue;
            }
            out.extend(
                st.query_map(params![q], row)?
                    .collect::<rusqlite::Result<Vec<_>>>()?,
            );
        }
        Ok(out)
    }

    /// The judges that gave any verdict, most verdicts first.
    pub fn entailment_judges(&self) -> Result<Vec<String>> {
        let mut st = self.conn.prepare(
            "SELECT judge FROM entailments GROUP BY judge ORDER BY COUNT(*) DESC, judge",
        )?;
        let rows = st
            .query_map([], |r| r.get(0))?
            .collect::<rusqlite::Result<Vec<String>>>()?;
        Ok(rows)
    }
}

fn row(r: &rusqlite::Row<'_>) -> rusqlite::Result<EntailRecord> {
    Ok(EntailRecord {
        judge: r.get(0)?,
        question: r.get(1)?,
        premise: r.get(2)?,
        hypothesis: r.get(3)?,
        relation: r
            .get::<_, Option<String>>(4)?
            .as_deref()
            .and_then(Relation::parse),
        reply: r.get(5)?,
        error: r.get(6)?,
        attempts: r.get(7)?,
        created_at: r.get(8)?,
    })
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
