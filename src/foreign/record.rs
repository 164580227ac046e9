//! An imported answer's source: the item as the tool had it and the tool's own score, one row
//! of `source_samples` per job of the imported run.

use crate::store::lane_tables::{SOURCE_SAMPLES, Table, Val};
use crate::store::record::{Fields, Record, int, real, text};

#[derive(Debug, Clone, PartialEq)]
pub struct SourceRecord {
    pub run_id: String,
    pub job_idx: u32,
    pub tool: String,
    pub task: String,
    pub sample_id: String,
    pub epoch: u32,
    pub category: Option<String>,
    pub input: String,
    pub target: Option<String>,
    /// The choices as a JSON list (empty when the item had none).
    pub choices: String,
    pub metadata: String,
    pub score_name: Option<String>,
    pub score_shown: Option<String>,
    pub score: Option<f64>,
    pub explanation: Option<String>,
}

impl SourceRecord {
    /// The tool's verdict as it reads beside prism's own (`inspect: includes C`).
    pub fn verdict(&self) -> Option<String> {
        Some(format!(
            "{}: {} {}",
            self.tool,
            self.score_name.as_deref()?,
            self.score_shown.as_deref().unwrap_or("-")
        ))
    }

    pub fn choice_list(&self) -> Vec<String> {
        serde_json::from_str(&self.choices).unwrap_or_default()
    }
}

impl Record for SourceRecord {
    fn table() -> &'static Table {
        &SOURCE_SAMPLES
    }

    fn fields(&self) -> Vec<(&'static str, Val)> {
        vec![
            ("run_id", text(Some(&self.run_id))),
            ("job_idx", int(self.job_idx)),
            ("tool", text(Some(&self.tool))),
            ("task", text(Some(&self.task))),
            ("sample_id", text(Some(&self.sample_id))),
            ("epoch", int(self.epoch)),
            ("category", text(self.category.as_deref())),
            ("input", text(Some(&self.input))),
            ("target", text(self.target.as_deref())),
            ("choices", text(Some(&self.choices))),
            ("metadata", text(Some(&self.metadata))),
            ("score_name", text(self.score_name.as_deref())),
            ("score_shown", text(self.score_shown.as_deref())),
            ("score", real(self.score)),
            ("explanation", text(self.explanation.as_deref())),
        ]
    }

    fn from_fields(f: &Fields<'_>) -> crate::store::Result<Self> {
        Ok(SourceRecord {
            run_id: f.text("run_id")?,
            job_idx: f.u32("job_idx")?,
            tool: f.text("tool")?,
            task: f.opt_text("task").unwrap_or_default(),
            sample_id: f.text("sample_id")?,
            epoch: f.u32("epoch").unwrap_or(1),
            category: f.opt_text("category"),
            input: f.opt_text("input").unwrap_or_default(),
            target: f.opt_text("target"),
            choices: f.opt_text("choices").unwrap_or_else(|| "[]".into()),
            metadata: f.opt_text("metadata").unwrap_or_else(|| "{}".into()),
            score_name: f.opt_text("score_name"),
            score_shown: f.opt_text("score_shown"),
            score: f.opt_real("score"),
            explanation: f.opt_text("explanation"),
        })
    }
}

/// The source rows of a run, by job.
pub fn of_run(
    db: &crate::store::Db,
    run_id: &str,
) -> crate::store::Result<std::collections::BTreeMap<u32, SourceRecord>> {
    let store = db.read()?;
    Ok(store
        .records_where::<SourceRecord>(Some(("run_id", run_id)))?
        .into_iter()
        .map(|r| (r.job_idx, r))
        .collect())
}
