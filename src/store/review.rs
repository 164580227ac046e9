//! Human review: every decision (inserted, never updated) and each reviewer's draft per item
//! (replaced as they type, deleted when the decision is saved).

use rusqlite::params;

use super::Store;
use super::error::Result;
use super::record::Record;
pub use super::review_records::Draft;
use super::review_records::{QualityRecord, ReviewRecord};

/// Review decisions are inserted, never replaced (a uid once stored stays).
fn insert_decision() -> String {
    let t = &super::tables::REVIEW_DECISIONS;
    format!(
        "INSERT OR IGNORE INTO {} ({}) VALUES ({})",
        t.name,
        t.col_list(),
        t.marks("?")
    )
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
                let mut ins = tx.prepare_cached(&insert_decision())?;
                // A decision replaces the reviewer's draft only when it is new and the draft is
                // not newer than it: importing old decisions keeps a draft typed since.
                let mut del = tx.prepare_cached(
                    "DELETE FROM review_drafts WHERE item_id = ?1 AND reviewer = ?2 AND updated_at <= ?3",
                )?;
                for r in rs {
                    let new = ins.execute(rusqlite::params_from_iter(r.to_row()))?;
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
        let mut v: Vec<ReviewRecord> = self.records_where(None)?;
        oldest_first(&mut v);
        Ok(v)
    }

    /// Decisions stored after `seq` (the table's rowid: SQLite has one writer at a time, so
    /// what a reader sees is always everything up to the last rowid it saw), and the last seq.
    pub fn decisions_after(&self, seq: i64) -> Result<(Vec<ReviewRecord>, i64)> {
        let t = &super::tables::REVIEW_DECISIONS;
        let width = t.cols.len();
        let mut st = self.conn.prepare_cached(&format!(
            "SELECT {}, rowid FROM review_decisions WHERE rowid > ?1 ORDER BY rowid",
            t.col_list()
        ))?;
        let rows = super::lane_tables::sqlite_rows(
            &mut st,
            &[super::lane_tables::Val::Int(seq)],
            width + 1,
        )?;
        let last = rows
            .last()
            .and_then(|r| match r[width] {
                super::lane_tables::Val::Int(s) => Some(s),
                _ => None,
            })
            .unwrap_or(seq);
        let out = rows
            .iter()
            .filter_map(|r| super::record::converted(ReviewRecord::from_row(r)))
            .collect();
        Ok((out, last.max(seq)))
    }

    /// One item's decisions, oldest first.
    pub fn item_decisions(&self, item_id: &str) -> Result<Vec<ReviewRecord>> {
        let mut v: Vec<ReviewRecord> = self.records_where(Some(("item_id", item_id)))?;
        oldest_first(&mut v);
        Ok(v)
    }

    /// Saves (replaces) a reviewer's draft for an item.
    pub fn save_draft(&mut self, d: &Draft) -> Result<()> {
        super::busy_retry(|| self.save_records(std::slice::from_ref(d)))
    }

    /// Every draft of a reviewer.
    pub fn drafts(&self, reviewer: &str) -> Result<Vec<Draft>> {
        let mut v: Vec<Draft> = self.records_where(Some(("reviewer", reviewer)))?;
        v.sort_by(|a, b| a.item_id.cmp(&b.item_id));
        Ok(v)
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
        // Columns found by name once, then read by that index on every row (a hot loop).
        let [item, model, score] = ["item_id", "model", "score"].map(|c| st.column_index(c));
        let (item, model, score) = (item?, model?, score?);
        let mut rows = st.query([])?;
        while let Some(r) = rows.next()? {
            f(
                r.get_ref(item)?.as_str()?,
                r.get_ref(model)?.as_str()?,
                r.get_ref(score)?.as_f64()?,
            );
        }
        Ok(())
    }

    /// Per item, how many scored answers the rule and the judge disagree on (one ≥ 0.5, the
    /// other below).
    pub fn rule_judge_disagreements(&self, mut f: impl FnMut(&str, u32)) -> Result<()> {
        let mut st = self.conn.prepare_cached(
            "SELECT item_id, COUNT(*) AS n FROM scores
             WHERE score IS NOT NULL AND rule_score IS NOT NULL
               AND (score >= 0.5) != (rule_score >= 0.5)
             GROUP BY item_id",
        )?;
        let mut rows = st.query([])?;
        while let Some(r) = rows.next()? {
            f(r.get_ref("item_id")?.as_str()?, r.get::<_, u32>("n")?);
        }
        Ok(())
    }

    pub fn draft(&self, item_id: &str, reviewer: &str) -> Result<Option<Draft>> {
        Ok(self
            .records_where::<Draft>(Some(("item_id", item_id)))?
            .into_iter()
            .find(|d| d.reviewer == reviewer))
    }
}

/// Decisions in the order every history shows them: oldest first, then by uid.
pub(super) fn oldest_first(v: &mut [ReviewRecord]) {
    v.sort_by(|a, b| (a.created_at, &a.uid).cmp(&(b.created_at, &b.uid)));
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::review_records::Decision;

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
