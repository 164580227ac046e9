//! Human review: every decision (inserted, never updated) and each reviewer's draft per item
//! (replaced as they type, deleted when the decision is saved).

use rusqlite::{OptionalExtension, params};

use super::Store;
use super::error::Result;
use super::review_records::{Decision, QualityRecord, ReviewRecord};

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

const COLS: &str = "uid, item_id, task_id, reviewer, round, clarity, relevance, coherence, decision, rationale, edited_question, edited_answer, created_at";

const DRAFT_COLS: &str = "item_id, reviewer, round, clarity, relevance, coherence, decision, rationale, edited_question, updated_at";

fn draft_row(r: &rusqlite::Row<'_>) -> rusqlite::Result<Draft> {
    let decision: Option<String> = r.get(6)?;
    Ok(Draft {
        item_id: r.get(0)?,
        reviewer: r.get(1)?,
        round: r.get(2)?,
        clarity: r.get(3)?,
        relevance: r.get(4)?,
        coherence: r.get(5)?,
        decision: decision.as_deref().and_then(Decision::parse),
        rationale: r.get(7)?,
        edited_question: r.get(8)?,
        updated_at: r.get(9)?,
    })
}

fn row(r: &rusqlite::Row<'_>) -> rusqlite::Result<ReviewRecord> {
    let decision: String = r.get(8)?;
    Ok(ReviewRecord {
        uid: r.get(0)?,
        item_id: r.get(1)?,
        task_id: r.get(2)?,
        reviewer: r.get(3)?,
        round: r.get(4)?,
        clarity: r.get(5)?,
        relevance: r.get(6)?,
        coherence: r.get(7)?,
        // Written by `Decision::as_str`; anything else came from outside and reads as revise
        // (the decision that asks for another look) rather than failing the whole history.
        decision: Decision::parse(&decision).unwrap_or(Decision::Revise),
        rationale: r.get(9)?,
        edited_question: r.get(10)?,
        edited_answer: r.get(11)?,
        created_at: r.get(12)?,
    })
}

impl Store {
    /// Saves decisions; ones already there (same uid) are skipped. Returns how many were new.
    /// The reviewer's draft for a decided item goes in the same transaction.
    pub fn save_decisions(&mut self, rs: &[ReviewRecord]) -> Result<usize> {
        super::busy_retry(|| -> Result<usize> {
            let tx = self
                .conn
                .transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)?;
            let mut added = 0;
            {
                let mut ins = tx.prepare_cached(&format!(
                    "INSERT OR IGNORE INTO review_decisions ({COLS})
                     VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13)"
                ))?;
                // A decision replaces the reviewer's draft only when it is new and the draft is
                // not newer than it: importing old decisions keeps a draft typed since.
                let mut del = tx.prepare_cached(
                    "DELETE FROM review_drafts WHERE item_id = ?1 AND reviewer = ?2 AND updated_at <= ?3",
                )?;
                for r in rs {
                    let new = ins.execute(params![
                        r.uid,
                        r.item_id,
                        r.task_id,
                        r.reviewer,
                        r.round,
                        r.clarity,
                        r.relevance,
                        r.coherence,
                        r.decision.as_str(),
                        r.rationale,
                        r.edited_question,
                        r.edited_answer,
                        r.created_at
                    ])?;
                    if new > 0 {
                        del.execute(params![r.item_id, r.reviewer, r.created_at])?;
                    }
                    added += new;
                }
            }
            tx.commit()?;
            Ok(added)
        })
    }

    /// Every decision, oldest first.
    pub fn decisions(&self) -> Result<Vec<ReviewRecord>> {
        let mut st = self.conn.prepare_cached(&format!(
            "SELECT {COLS} FROM review_decisions ORDER BY created_at, uid"
        ))?;
        let rows = st.query_map([], row)?;
        Ok(rows.collect::<rusqlite::Result<_>>()?)
    }

    /// Decisions stored after `seq` (the table's rowid: SQLite has one writer at a time, so
    /// what a reader sees is always everything up to the last rowid it saw), and the last seq.
    pub fn decisions_after(&self, seq: i64) -> Result<(Vec<ReviewRecord>, i64)> {
        let mut st = self.conn.prepare_cached(&format!(
            "SELECT {COLS}, rowid FROM review_decisions WHERE rowid > ?1 ORDER BY rowid"
        ))?;
        let mut last = seq;
        let rows = st.query_map([seq], |r| {
            let rec = row(r)?;
            Ok((rec, r.get::<_, i64>(13)?))
        })?;
        let mut out = Vec::new();
        for x in rows {
            let (rec, s) = x?;
            last = last.max(s);
            out.push(rec);
        }
        Ok((out, last))
    }

    /// One item's decisions, oldest first.
    pub fn item_decisions(&self, item_id: &str) -> Result<Vec<ReviewRecord>> {
        let mut st = self.conn.prepare_cached(&format!(
            "SELECT {COLS} FROM review_decisions WHERE item_id = ?1 ORDER BY created_at, uid"
        ))?;
        let rows = st.query_map([item_id], row)?;
        Ok(rows.collect::<rusqlite::Result<_>>()?)
    }

    /// Saves (replaces) a reviewer's draft for an item.
    pub fn save_draft(&mut self, d: &Draft) -> Result<()> {
        super::busy_retry(|| {
            self.conn
                .prepare_cached(
                    "INSERT OR REPLACE INTO review_drafts (item_id, reviewer, round, clarity,
                     relevance, coherence, decision, rationale, edited_question, updated_at)
                     VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10)",
                )?
                .execute(params![
                    d.item_id,
                    d.reviewer,
                    d.round,
                    d.clarity,
                    d.relevance,
                    d.coherence,
                    d.decision.map(Decision::as_str),
                    d.rationale,
                    d.edited_question,
                    d.updated_at
                ])
        })?;
        Ok(())
    }

    /// Every draft of a reviewer.
    pub fn drafts(&self, reviewer: &str) -> Result<Vec<Draft>> {
        let mut st = self.conn.prepare_cached(&format!(
            "SELECT {DRAFT_COLS} FROM review_drafts WHERE reviewer = ?1 ORDER BY item_id"
        ))?;
        let rows = st.query_map([reviewer], draft_row)?;
        Ok(rows.collect::<rusqlite::Result<_>>()?)
    }

    /// Saves (replaces) the quality agent's scores of an item by a model.
    pub fn save_quality(&mut self, q: &QualityRecord) -> Result<()> {
        super::busy_retry(|| self.save_records(std::slice::from_ref(q)))
    }

    /// The quality agent's scores (of one model, or all), by item id.
    pub fn quality(&self, model: Option<&str>) -> Result<Vec<QualityRecord>> {
        self.records_where(model.map(|m| ("model", m)))
    }

    /// Every scored answer as (item, model, score), for the review queue's signals.
    pub fn score_triples(&self, mut f: impl FnMut(&str, &str, f64)) -> Result<()> {
        let mut st = self
            .conn
            .prepare_cached("SELECT item_id, model, score FROM scores WHERE score IS NOT NULL")?;
        let mut rows = st.query([])?;
        while let Some(r) = rows.next()? {
            f(
                r.get_ref(0)?.as_str()?,
                r.get_ref(1)?.as_str()?,
                r.get_ref(2)?.as_f64()?,
            );
        }
        Ok(())
    }

    /// Per item, how many scored answers the rule and the judge disagree on (one ≥ 0.5, the
    /// other below).
    pub fn rule_judge_disagreements(&self, mut f: impl FnMut(&str, u32)) -> Result<()> {
        let mut st = self.conn.prepare_cached(
            "SELECT item_id, COUNT(*) FROM scores
             WHERE score IS NOT NULL AND rule_score IS NOT NULL
               AND (score >= 0.5) != (rule_score >= 0.5)
             GROUP BY item_id",
        )?;
        let mut rows = st.query([])?;
        while let Some(r) = rows.next()? {
            f(r.get_ref(0)?.as_str()?, r.get::<_, u32>(1)?);
        }
        Ok(())
    }

    pub fn draft(&self, item_id: &str, reviewer: &str) -> Result<Option<Draft>> {
        Ok(self
            .conn
            .prepare_cached(&format!(
                "SELECT {DRAFT_COLS} FROM review_drafts WHERE item_id = ?1 AND reviewer = ?2"
            ))?
            .query_row([item_id, reviewer], draft_row)
            .optional()?)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rec(uid: &str, reviewer: &str, d: Decision) -> ReviewRecord {
        ReviewRecord {
            uid: uid.into(),
            item_id: "item-1".into(),
            task_id: "task".into(),
            reviewer: reviewer.into(),
            round: 1,
            clarity: Some(8),
            relevance: None,
            coherence: Some(3),
            decision: d,
            rationale: "why: ünïcode\nand lines".into(),
            edited_question: None,
            edited_answer: Some("new answer".into()),
            created_at: 1_700_000_000_000,
        }
    }

    #[test]
    fn decisions_are_kept_whole_and_added_once() {
        let mut s = Store::open_in_memory().unwrap();
        let a = rec("u1", "ann", Decision::Retain);
        let b = rec("u2", "bob", Decision::Remove);
        s.save_draft(&Draft {
            item_id: "item-1".into(),
            reviewer: "ann".into(),
            round: 1,
            rationale: "half-typed".into(),
            ..Draft::default()
        })
        .unwrap();
        assert_eq!(
            s.draft("item-1", "ann").unwrap().unwrap().rationale,
            "half-typed"
        );
        assert_eq!(s.save_decisions(&[a.clone(), b.clone()]).unwrap(), 2);
        // The decision replaces the draft; the same uids again add nothing.
        assert_eq!(s.draft("item-1", "ann").unwrap(), None);
        assert_eq!(s.save_decisions(&[a.clone(), b.clone()]).unwrap(), 0);
        assert_eq!(s.decisions().unwrap(), vec![a.clone(), b]);
        assert_eq!(s.item_decisions("item-1").unwrap().len(), 2);
        assert!(s.item_decisions("other").unwrap().is_empty());
    }
}
