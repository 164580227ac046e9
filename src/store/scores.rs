//! Scores: derived from responses, replaced when an answer is scored again (responses are never
//! touched).

use rusqlite::{OptionalExtension, params};

use super::Store;
use super::error::Result;
use super::lane_tables::{Table, Val};
use super::record::{Fields, Record, int, real, text};

/// The score of one stored response. `score` is `None` when the item needs a judge and none was
/// given: unscored, never counted as wrong.
#[derive(Debug, Clone, Default, PartialEq, serde::Serialize, serde::Deserialize)]
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

/// A score's columns in table order (`run_id` .. `rule_score`), as the statements name them.
pub(super) fn score_cols() -> String {
    super::tables::SCORES.col_list()
}

/// A score as a row of [`super::tables::SCORES`], and back: the one conversion, by column name,
/// both backends read and write scores with. A score outside 0..1 reads as none (noted once).
impl Record for ScoreRecord {
    fn table() -> &'static Table {
        &super::tables::SCORES
    }

    fn fields(&self) -> Vec<(&'static str, Val)> {
        vec![
            ("run_id", text(Some(&self.run_id))),
            ("job_idx", int(self.job_idx)),
            ("item_id", text(Some(&self.item_id))),
            ("task_id", text(Some(&self.task_id))),
            ("model", text(Some(&self.model))),
            ("sample", int(self.sample)),
            ("evaluator", text(Some(&self.evaluator))),
            ("score", real(self.score)),
            ("detail", text(Some(&self.detail))),
            ("judge", text(self.judge.as_deref())),
            ("judge_reply", text(self.judge_reply.as_deref())),
            ("judge_attempts", int(self.judge_attempts)),
            ("created_at", int(self.created_at)),
            ("rule_score", real(self.rule_score)),
        ]
    }

    fn from_fields(f: &Fields<'_>) -> Result<Self> {
        Ok(ScoreRecord {
            run_id: f.text("run_id")?,
            job_idx: f.u32("job_idx")?,
            item_id: f.text("item_id")?,
            task_id: f.text("task_id")?,
            model: f.text("model")?,
            sample: f.u32("sample")?,
            evaluator: f.opt_text("evaluator").unwrap_or_default(),
            score: super::unknown::score(f.opt_real("score")),
            detail: f.opt_text("detail").unwrap_or_default(),
            judge: f.opt_text("judge"),
            judge_reply: f.opt_text("judge_reply"),
            judge_attempts: f
                .opt_int("judge_attempts")
                .map_or(0, |v| v.clamp(0, i64::from(u32::MAX)) as u32),
            created_at: f.opt_int("created_at").unwrap_or(0),
            rule_score: super::unknown::score(f.opt_real("rule_score")),
        })
    }
}

impl Store {
    /// Saves scores in one transaction, replacing earlier scores of the same responses.
    pub fn save_scores(&mut self, rs: &[ScoreRecord]) -> Result<()> {
        let tx = self.conn.transaction()?;
        write_scores(&tx, rs)?;
        tx.commit()?;
        Ok(())
    }

    fn score_row(r: &rusqlite::Row<'_>) -> rusqlite::Result<ScoreRecord> {
        super::lane_tables::sqlite_record(r, super::tables::SCORES.cols.len())
    }

    /// Every score of a run (or of every run), in job order.
    pub fn scores(&self, run_id: Option<&str>) -> Result<Vec<ScoreRecord>> {
        let sql = format!(
            "SELECT {} FROM scores WHERE (?1 IS NULL OR run_id = ?1) ORDER BY run_id, job_idx",
            score_cols()
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
        // Columns found by name once, then read by that index on every row (a hot loop).
        let [model, task, item, score] =
            ["model", "task_id", "item_id", "score"].map(|c| st.column_index(c));
        let (model, task, item, score) = (model?, task?, item?, score?);
        let mut rows = st.query([run_id])?;
        let mut n = 0;
        while let Some(r) = rows.next()? {
            f(
                r.get_ref(model)?.as_str()?,
                r.get_ref(task)?.as_str()?,
                r.get_ref(item)?.as_str()?,
                super::unknown::score(r.get_ref(score)?.as_f64_or_null()?),
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
            "SELECT {} FROM scores INDEXED BY scores_group
             WHERE run_id = ?1 AND model = ?2 AND task_id = ?3 AND score IS NOT NULL
             ORDER BY score, job_idx LIMIT 1",
            score_cols()
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
            .prepare_cached("SELECT coalesce(text, 'ERROR: ' || error) AS text FROM responses WHERE run_id = ?1 AND job_idx = ?2")?
            .query_row(params![run_id, s.job_idx], |r| r.get("text"))
            .optional()?
            .flatten();
        Ok(Some((s, text)))
    }

    /// The judges that scored a run.
    pub fn judges(&self, run_id: &str) -> Result<Vec<String>> {
        let mut st = self.conn.prepare_cached(
            "SELECT DISTINCT judge FROM scores WHERE run_id = ?1 AND judge IS NOT NULL ORDER BY judge",
        )?;
        let rows = st.query_map([run_id], |r| r.get("judge"))?;
        Ok(rows.collect::<rusqlite::Result<_>>()?)
    }

    /// The scores of one item across runs and models.
    pub fn scores_for_item(&self, item_id: &str) -> Result<Vec<ScoreRecord>> {
        let sql = format!(
            "SELECT {} FROM scores WHERE item_id = ?1 ORDER BY run_id, job_idx",
            score_cols()
        );
        let mut st = self.conn.prepare(&sql)?;
        let rows = st.query_map([item_id], Self::score_row)?;
        Ok(rows.collect::<rusqlite::Result<_>>()?)
    }
}

/// Writes scores in `tx`, the summaries moving with them in the same transaction.
pub(super) fn write_scores(tx: &rusqlite::Transaction<'_>, rs: &[ScoreRecord]) -> Result<()> {
    static SQL: std::sync::LazyLock<String> =
        std::sync::LazyLock::new(|| super::tables::SCORES.replace_sql());
    super::summaries::save_with(tx, rs, |tx| {
        let mut ins = tx.prepare_cached(&SQL)?;
        for r in rs {
            ins.execute(rusqlite::params_from_iter(r.to_row()))?;
        }
        Ok(())
    })
}
