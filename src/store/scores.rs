//! Scores: derived from responses, replaced when an answer is scored again (responses are never
//! touched).

use rusqlite::{OptionalExtension, params};

use super::Store;
use super::error::Result;

/// The score of one stored response. `score` is `None` when the item needs a judge and none was
/// given: unscored, never counted as wrong.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct ScoreRecord {
    pub run_id: String,
    pub job_idx: u32,
    pub item_id: String,
    pub task_id: String,
    pub model: String,
    pub sample: u32,
    pub evaluator: String,
    pub score: Option<f64>,
    pub detail: String,
    /// The judge model's name, for judged scores.
    pub judge: Option<String>,
    /// The judge's full last reply.
    pub judge_reply: Option<String>,
    pub judge_attempts: u32,
    pub created_at: i64,
    /// The rule's verdict when the rule had one but the judge decided (fact_judge: answer and
    /// reference say opposite yes/no); the review queue flags the two disagreeing.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rule_score: Option<f64>,
}

/// A score's columns in table order (`run_id` .. `rule_score`), as the insert statements bind them.
pub(super) const SCORE_COLS: &str = "run_id, job_idx, item_id, task_id, model, sample, evaluator,
    score, detail, judge, judge_reply, judge_attempts, created_at, rule_score";

/// A score's values in [`SCORE_COLS`] order.
pub(super) fn score_values(r: &ScoreRecord) -> [&dyn rusqlite::ToSql; 14] {
    [
        &r.run_id,
        &r.job_idx,
        &r.item_id,
        &r.task_id,
        &r.model,
        &r.sample,
        &r.evaluator,
        &r.score,
        &r.detail,
        &r.judge,
        &r.judge_reply,
        &r.judge_attempts,
        &r.created_at,
        &r.rule_score,
    ]
}

impl Store {
    /// Saves scores in one transaction, replacing earlier scores of the same responses.
    pub fn save_scores(&mut self, rs: &[ScoreRecord]) -> Result<()> {
        let tx = self.conn.transaction()?;
        {
            let mut ins = tx.prepare_cached(&format!(
                "INSERT OR REPLACE INTO scores ({SCORE_COLS})
                     VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14)"
            ))?;
            for r in rs {
                ins.execute(score_values(r))?;
            }
        }
        tx.commit()?;
        Ok(())
    }

    fn score_row(r: &rusqlite::Row<'_>) -> rusqlite::Result<ScoreRecord> {
        Ok(ScoreRecord {
            run_id: r.get(0)?,
            job_idx: r.get(1)?,
            item_id: r.get(2)?,
            task_id: r.get(3)?,
            model: r.get(4)?,
            sample: r.get(5)?,
            evaluator: r.get(6)?,
            score: super::unknown::score(r.get(7)?),
            detail: r.get(8)?,
            judge: r.get(9)?,
            judge_reply: r.get(10)?,
            judge_attempts: r.get(11)?,
            created_at: r.get(12)?,
            rule_score: super::unknown::score(r.get(13)?),
        })
    }

    const SCORE_COLS: &str = "run_id, job_idx, item_id, task_id, model, sample, evaluator, score, detail, judge, judge_reply, judge_attempts, created_at, rule_score";

    /// Every score of a run (or of every run), in job order.
    pub fn scores(&self, run_id: Option<&str>) -> Result<Vec<ScoreRecord>> {
        let sql = format!(
            "SELECT {} FROM scores WHERE (?1 IS NULL OR run_id = ?1) ORDER BY run_id, job_idx",
            Self::SCORE_COLS
        );
        let mut st = self.conn.prepare(&sql)?;
        let rows = st.query_map([run_id], Self::score_row)?;
        Ok(rows.collect::<rusqlite::Result<_>>()?)
    }

    /// The lean read behind rates and heatmaps: (model, task, item, score) of a run's scores,
    /// handed over without building a record per row.
    pub fn score_points(
        &self,
        run_id: &str,
        mut f: impl FnMut(&str, &str, &str, Option<f64>),
    ) -> Result<usize> {
        let mut st = self.conn.prepare_cached(
            "SELECT model, task_id, item_id, score FROM scores WHERE run_id = ?1",
        )?;
        let mut rows = st.query([run_id])?;
        let mut n = 0;
        while let Some(r) = rows.next()? {
            f(
                r.get_ref(0)?.as_str()?,
                r.get_ref(1)?.as_str()?,
                r.get_ref(2)?.as_str()?,
                super::unknown::score(r.get_ref(3)?.as_f64_or_null()?),
            );
            n += 1;
        }
        Ok(n)
    }

    /// The lowest-scored answer of a model in a task of a run, with its response text (the example
    /// failure a report shows next to a bad sub-task).
    pub fn worst_answer(
        &self,
        run_id: &str,
        model: &str,
        task_id: &str,
    ) -> Result<Option<(ScoreRecord, Option<String>)>> {
        let sql = format!(
            "SELECT {} FROM scores WHERE run_id = ?1 AND model = ?2 AND task_id = ?3 AND score IS NOT NULL
             ORDER BY score, job_idx LIMIT 1",
            Self::SCORE_COLS
        );
        let mut st = self.conn.prepare_cached(&sql)?;
        let Some(s) = st
            .query_row(params![run_id, model, task_id], Self::score_row)
            .optional()?
        else {
            return Ok(None);
        };
        let text: Option<String> = self
            .conn
            .prepare_cached("SELECT coalesce(text, 'ERROR: ' || error) FROM responses WHERE run_id = ?1 AND job_idx = ?2")?
            .query_row(params![run_id, s.job_idx], |r| r.get(0))
            .optional()?
            .flatten();
        Ok(Some((s, text)))
    }

    /// The judges that scored a run.
    pub fn judges(&self, run_id: &str) -> Result<Vec<String>> {
        let mut st = self.conn.prepare_cached(
            "SELECT DISTINCT judge FROM scores WHERE run_id = ?1 AND judge IS NOT NULL ORDER BY judge",
        )?;
        let rows = st.query_map([run_id], |r| r.get(0))?;
        Ok(rows.collect::<rusqlite::Result<_>>()?)
    }

    /// The scores of one item across runs and models.
    pub fn scores_for_item(&self, item_id: &str) -> Result<Vec<ScoreRecord>> {
        let sql = format!(
            "SELECT {} FROM scores WHERE item_id = ?1 ORDER BY run_id, job_idx",
            Self::SCORE_COLS
        );
        let mut st = self.conn.prepare(&sql)?;
        let rows = st.query_map([item_id], Self::score_row)?;
        Ok(rows.collect::<rusqlite::Result<_>>()?)
    }
}
