//! Runs and their jobs: what was asked, of which models with which settings, and how far each
//! job got.

use std::collections::BTreeMap;

use rusqlite::params;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::Store;
use super::error::{Result, StoreError};
use super::lane_tables::{Table, Val};
use super::record::{self, Fields, Record};
use crate::provider::{ModelConfig, Params, ProviderKind};

/// A run: what was asked. Its config never holds an API key (only the variable's name).
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct RunRecord {
    pub id: String,
    pub created_at: i64,
    /// The dataset path, or `<sample-data>`.
    pub dataset: String,
    pub config: RunConfig,
    pub status: RunStatus,
}

#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
pub struct RunConfig {
    pub models: Vec<ModelSnapshot>,
    #[serde(default)]
    pub samples: u32,
    #[serde(default)]
    pub shots: u32,
    /// The run's own parameter overrides (over the per-task defaults and each model's).
    #[serde(default)]
    pub params: Params,
    #[serde(default)]
    pub filter: Option<String>,
    #[serde(default)]
    pub limit: Option<usize>,
    /// Started with `--no-cache`: every answer fetched anew, so a resume must not take answers
    /// from the cache either (they would be copies of another run's, not new samples).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub no_cache: bool,
    /// Where an imported run came from (another tool's log); none for a run prism made.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub source: Option<RunSource>,
}

/// The log a run was imported from: the tool and its version, the task, the file, its
/// SHA-256 (a second import of the same file finds the run instead of copying it) and when
/// the tool made it.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
#[serde(default)]
pub struct RunSource {
    pub tool: String,
    pub version: String,
    pub task: String,
    pub file: String,
    pub sha256: String,
    pub created: String,
    /// Answers that are not items of a release (under the tool's tree): PRISM's rules never
    /// score them, so they are not counted as waiting for a score.
    pub foreign_answers: usize,
}

/// The settings a model ran with, as the run keeps them. Not the user-facing [`ModelConfig`]
/// (which rejects unknown keys so typos are caught): every field has a default and keys this
/// version does not know are kept as they were, so renaming a config key later never makes an
/// old run unreadable.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
#[serde(default)]
pub struct ModelSnapshot {
    pub name: String,
    /// For an imported model: the configured model that answers in its place when a lane needs
    /// new answers (`prism import --model-map NAME=CONFIGURED`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub answered_by: Option<String>,
    /// `openai`, `anthropic`, `gemini`, `local`; `imported` for answers read from files.
    pub provider: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub base_url: Option<String>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub base_urls: Vec<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub model: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub api_key_env: Option<String>,
    pub max_concurrency: Option<usize>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub requests_per_minute: Option<u32>,
    pub params: Params,
    pub max_retries: Option<u32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub connect_timeout_secs: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub first_byte_timeout_secs: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub idle_timeout_secs: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub request_timeout_secs: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub max_answer_bytes: Option<usize>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub path: Option<std::path::PathBuf>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub completion: Option<bool>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub threads: Option<u32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub context: Option<u32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub chat_template: Option<String>,
    /// Keys this version does not know (written by a later or earlier prism), kept verbatim.
    #[serde(flatten)]
    pub other: BTreeMap<String, Value>,
}

/// The provider name of runs read from an outputs directory (no endpoint was ever called).
pub const IMPORTED: &str = "imported";

impl From<&ModelConfig> for ModelSnapshot {
    fn from(m: &ModelConfig) -> ModelSnapshot {
        ModelSnapshot {
            name: m.name.clone(),
            answered_by: None,
            provider: m.provider.as_str().to_string(),
            base_url: m.base_url.clone(),
            base_urls: m.base_urls.clone(),
            model: m.model.clone(),
            api_key_env: m.api_key_env.clone(),
            max_concurrency: Some(m.max_concurrency),
            requests_per_minute: m.requests_per_minute,
            params: m.params.clone(),
            max_retries: Some(m.max_retries),
            connect_timeout_secs: m.connect_timeout_secs,
            first_byte_timeout_secs: m.first_byte_timeout_secs,
            idle_timeout_secs: m.idle_timeout_secs,
            request_timeout_secs: m.request_timeout_secs,
            max_answer_bytes: m.max_answer_bytes,
            path: m.path.clone(),
            completion: m.completion,
            threads: m.threads,
            context: m.context,
            chat_template: m.chat_template.clone(),
            other: BTreeMap::new(),
        }
    }
}

/// `key=value` for each parameter set in `params` (`temperature=0.2 max_tokens=48`).
fn params_text(params: &Params) -> String {
    let mut s = String::new();
    if let Ok(p) = serde_json::to_value(params)
        && let Some(o) = p.as_object()
    {
        for (k, v) in o {
            if !v.is_null() {
                s.push_str(&format!(" {k}={v}"));
            }
        }
    }
    s
}

impl RunConfig {
    /// What the run asked of its own, over each model's settings, in a few words (`samples=3
    /// shots=1 temperature=0.7 max_tokens=48 filter="KE-FD-*"`); empty when nothing.
    pub fn describe(&self) -> String {
        let mut s = String::new();
        if self.samples > 1 {
            s.push_str(&format!(" samples={}", self.samples));
        }
        if self.shots > 0 {
            s.push_str(&format!(" shots={}", self.shots));
        }
        s.push_str(&params_text(&self.params));
        if let Some(f) = &self.filter {
            s.push_str(&format!(" filter={f:?}"));
        }
        if let Some(l) = self.limit {
            s.push_str(&format!(" limit={l}"));
        }
        if self.no_cache {
            s.push_str(" no_cache");
        }
        if let Some(src) = &self.source {
            s.push_str(&format!(
                " from {} {} {:?}",
                src.tool, src.version, src.task
            ));
        }
        s.trim_start().to_string()
    }
}

impl ModelSnapshot {
    /// Its settings in a few words: provider, model id, and the parameters set (`openai gpt-4o
    /// temperature=0.2`), for listings and reports.
    pub fn describe(&self) -> String {
        let by = self
            .answered_by
            .as_deref()
            .map_or(String::new(), |b| format!(" (new answers from {b})"));
        format!(
            "{} {}{}{by}",
            self.provider,
            self.model.as_deref().unwrap_or(&self.name),
            params_text(&self.params)
        )
    }

    /// A model whose answers were imported from files: it has no endpoint to call.
    pub fn imported(name: &str) -> ModelSnapshot {
        ModelSnapshot {
            name: name.to_string(),
            provider: IMPORTED.into(),
            ..ModelSnapshot::default()
        }
    }

    pub fn is_imported(&self) -> bool {
        self.provider == IMPORTED
    }

    /// The recorded endpoint as a model to call again **without any key**: what `--recorded-endpoints`
    /// asks for when this machine's models file has no model of that name. A store is shared by
    /// people who do not hold the same keys, so nothing read from it may choose a key variable
    /// (or a local model file): the key variable is dropped, a local model is refused, and an
    /// imported model has no endpoint at all. Every other setting (parameters, timeouts) is kept.
    pub fn keyless_endpoint(&self) -> std::result::Result<ModelConfig, String> {
        let provider = match self.provider.as_str() {
            "openai" => ProviderKind::Openai,
            "anthropic" => ProviderKind::Anthropic,
            "gemini" => ProviderKind::Gemini,
            "local" => {
                return Err(format!(
                    "model {:?} is a local model file: only this machine's models file names one",
                    self.name
                ));
            }
            IMPORTED => {
                return Err(format!(
                    "model {:?} was imported from files: there is no endpoint to call; name a \
                     configured model to answer in its place",
                    self.name
                ));
            }
            other => return Err(format!("model {:?}: unknown provider {other:?}", self.name)),
        };
        if self.base_url.is_none() && self.base_urls.is_empty() {
            // A provider's default endpoint is a paid API that always wants a key.
            return Err(format!(
                "model {:?} recorded no endpoint of its own (the provider's default API needs a key)",
                self.name
            ));
        }
        Ok(ModelConfig {
            name: self.name.clone(),
            provider,
            base_url: self.base_url.clone(),
            base_urls: self.base_urls.clone(),
            model: self.model.clone(),
            api_key_env: None,
            max_concurrency: self.max_concurrency.unwrap_or(8).max(1),
            requests_per_minute: self.requests_per_minute,
            params: self.params.clone(),
            max_retries: self.max_retries.unwrap_or(4),
            connect_timeout_secs: self.connect_timeout_secs,
            first_byte_timeout_secs: self.first_byte_timeout_secs,
            idle_timeout_secs: self.idle_timeout_secs,
            request_timeout_secs: self.request_timeout_secs,
            max_answer_bytes: self.max_answer_bytes,
            path: None,
            completion: self.completion,
            threads: None,
            context: None,
            chat_template: None,
        })
    }
}

/// Where a run stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum RunStatus {
    Running,
    Finished,
    Cancelled,
    /// Answers read from an outputs directory.
    Imported,
    /// A status this prism does not know (written by a newer one, or by hand on a shared
    /// store): shown as "unknown", never a reason to stop reading the store.
    #[serde(other)]
    Unknown,
}

impl RunStatus {
    pub fn as_str(self) -> &'static str {
        match self {
            RunStatus::Running => "running",
            RunStatus::Finished => "finished",
            RunStatus::Cancelled => "cancelled",
            RunStatus::Imported => "imported",
            RunStatus::Unknown => "unknown",
        }
    }

    /// The word people read: a run stopped before its end (`q`, Ctrl-C, a signal, `X`) is
    /// "interrupted" everywhere (it resumes with `prism run --resume`); the store keeps
    /// `cancelled`, as older prisms wrote it.
    pub fn word(self) -> &'static str {
        match self {
            RunStatus::Cancelled => "interrupted",
            other => other.as_str(),
        }
    }

    /// A stored status; one this prism does not know reads as [`RunStatus::Unknown`], and is
    /// named once (see [`super::unknown`]).
    pub fn parse(s: &str) -> Result<RunStatus> {
        Ok(match s {
            "running" => RunStatus::Running,
            "finished" => RunStatus::Finished,
            "cancelled" | "interrupted" => RunStatus::Cancelled,
            "imported" => RunStatus::Imported,
            other => {
                super::unknown::note("run status", other);
                RunStatus::Unknown
            }
        })
    }
}

/// Where a job stands. A failed job is tried again on resume.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum JobState {
    Pending,
    Done,
    Failed,
    /// A state this prism does not know: left as it is (never run again, never counted done).
    Unknown,
}

impl JobState {
    pub fn as_str(self) -> &'static str {
        match self {
            JobState::Pending => "pending",
            JobState::Done => "done",
            JobState::Failed => "failed",
            JobState::Unknown => "unknown",
        }
    }

    /// A stored state; one this prism does not know reads as [`JobState::Unknown`], named once.
    pub fn parse(s: &str) -> Result<JobState> {
        Ok(match s {
            "pending" => JobState::Pending,
            "done" => JobState::Done,
            "failed" => JobState::Failed,
            other => {
                super::unknown::note("job state", other);
                JobState::Unknown
            }
        })
    }

    /// Whether a resume (or a worker) answers it: pending or failed.
    pub fn is_todo(self) -> bool {
        matches!(self, JobState::Pending | JobState::Failed)
    }
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct JobRecord {
    pub idx: u32,
    pub item_id: String,
    pub task_id: String,
    pub model: String,
    pub sample: u32,
}

/// A page of runs from their rows, newest first, as both backends fill one: those that asked
/// `f.model` (read from a run's settings), at most `f.limit` (0: all).
pub(crate) fn fill_page(rows: Vec<RunRow>, f: &RunFilter) -> Result<Vec<LabelledRun>> {
    let mut out = Vec::new();
    for row in rows {
        let (name, tags) = (row.name.clone(), row.tag_list());
        let run = row.parsed()?;
        if f.model
            .as_ref()
            .is_some_and(|m| !run.config.models.iter().any(|x| &x.name == m))
        {
            continue;
        }
        out.push((run, name, tags));
        if f.limit > 0 && out.len() == f.limit {
            break;
        }
    }
    Ok(out)
}

/// A run with its name and tags.
pub type LabelledRun = (RunRecord, Option<String>, Vec<String>);

/// Which runs a list shows (see [`Store::runs_page`]).
#[derive(Debug, Clone, Default)]
pub struct RunFilter {
    /// At most this many runs (0: every one).
    pub limit: usize,
    /// Created at or after this time (seconds since the epoch).
    pub since: Option<i64>,
    /// Runs that asked this model.
    pub model: Option<String>,
    /// Runs with every one of these tags.
    pub tags: Vec<String>,
}

/// Job counts of a run.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct JobCounts {
    pub done: usize,
    pub failed: usize,
    pub pending: usize,
    /// Jobs in a state this prism does not know.
    pub unknown: usize,
}

impl JobCounts {
    /// Counts from the jobs not done (state, count) and the run's job count: the rest are done.
    pub(crate) fn of_open(mut open: Vec<(String, i64)>, total: i64) -> Result<JobCounts> {
        let others: i64 = open.iter().map(|s| s.1).sum();
        open.push(("done".to_string(), (total - others).max(0)));
        JobCounts::of_states(open)
    }

    /// Counts from (state, count) rows, as either backend groups them.
    pub(crate) fn of_states(states: impl IntoIterator<Item = (String, i64)>) -> Result<JobCounts> {
        let mut out = JobCounts::default();
        for (s, n) in states {
            match JobState::parse(&s)? {
                JobState::Done => out.done = n as usize,
                JobState::Failed => out.failed = n as usize,
                JobState::Pending => out.pending = n as usize,
                JobState::Unknown => out.unknown += n as usize,
            }
        }
        Ok(out)
    }
}

/// A new run id: sortable by time, readable, unique enough (`r20261129-194512-3fa9`).
pub fn new_run_id() -> String {
    format!(
        "r{}-{:04x}",
        super::time::compact_time(super::time::now_secs()),
        rand::random::<u16>()
    )
}

fn parse_run(mut run: RunRecord, cfg: &str) -> Result<RunRecord> {
    run.config = serde_json::from_str(cfg).map_err(|source| StoreError::RunConfig {
        run: run.id.clone(),
        source,
    })?;
    Ok(run)
}

/// Runs in the order every list shows them: newest first, then by id.
pub(crate) fn newest_first(rows: &mut [RunRow]) {
    rows.sort_by(|a, b| (b.created_at, &b.id).cmp(&(a.created_at, &a.id)));
}

/// A run's row as stored (the one conversion between `runs` rows and runs, for both
/// backends): its config and status still text, which [`RunRow::parsed`] reads, naming what
/// is wrong.
pub(crate) struct RunRow {
    pub(crate) id: String,
    pub(crate) created_at: i64,
    pub(crate) dataset: String,
    pub(crate) config: String,
    pub(crate) status: String,
    pub(crate) name: Option<String>,
    pub(crate) tags: String,
}

impl Record for RunRow {
    fn table() -> &'static Table {
        &super::tables::RUNS
    }

    fn fields(&self) -> Vec<(&'static str, Val)> {
        vec![
            ("id", record::text(Some(&self.id))),
            ("created_at", record::int(self.created_at)),
            ("dataset", record::text(Some(&self.dataset))),
            ("config", record::text(Some(&self.config))),
            ("status", record::text(Some(&self.status))),
            ("name", record::text(self.name.as_deref())),
            ("tags", record::text(Some(&self.tags))),
        ]
    }

    fn from_fields(f: &Fields<'_>) -> Result<Self> {
        Ok(RunRow {
            id: f.text("id")?,
            created_at: f.int("created_at")?,
            dataset: f.text("dataset")?,
            config: f.text("config")?,
            status: f.text("status")?,
            name: f.opt_text("name"),
            tags: f.opt_text("tags").unwrap_or_default(),
        })
    }
}

impl RunRow {
    /// A new run's row (no name, no tags yet).
    pub(crate) fn of(run: &RunRecord) -> Result<RunRow> {
        Ok(RunRow {
            id: run.id.clone(),
            created_at: run.created_at,
            dataset: run.dataset.clone(),
            config: serde_json::to_string(&run.config).map_err(|source| StoreError::Json {
                what: "run config",
                source,
            })?,
            status: run.status.as_str().to_string(),
            name: None,
            tags: String::new(),
        })
    }

    /// The run, its config parsed and its status checked.
    pub(crate) fn parsed(self) -> Result<RunRecord> {
        let run = RunRecord {
            id: self.id,
            created_at: self.created_at,
            dataset: self.dataset,
            config: RunConfig::default(),
            status: RunStatus::parse(&self.status)?,
        };
        parse_run(run, &self.config)
    }

    /// Its tags, one word each.
    pub(crate) fn tag_list(&self) -> Vec<String> {
        self.tags.split_whitespace().map(str::to_string).collect()
    }
}

/// A job's row as stored (the one conversion between `jobs` rows and jobs): its state still
/// text.
pub(crate) struct JobRow {
    pub(crate) run_id: String,
    pub(crate) job: JobRecord,
    pub(crate) state: String,
}

impl JobRow {
    /// A new job's row.
    pub(crate) fn pending(run_id: &str, job: &JobRecord) -> JobRow {
        JobRow {
            run_id: run_id.to_string(),
            job: job.clone(),
            state: JobState::Pending.as_str().to_string(),
        }
    }
}

impl Record for JobRow {
    fn table() -> &'static Table {
        &super::tables::JOBS
    }

    fn fields(&self) -> Vec<(&'static str, Val)> {
        vec![
            ("run_id", record::text(Some(&self.run_id))),
            ("idx", record::int(self.job.idx)),
            ("item_id", record::text(Some(&self.job.item_id))),
            ("task_id", record::text(Some(&self.job.task_id))),
            ("model", record::text(Some(&self.job.model))),
            ("sample", record::int(self.job.sample)),
            ("state", record::text(Some(&self.state))),
        ]
    }

    fn from_fields(f: &Fields<'_>) -> Result<Self> {
        Ok(JobRow {
            run_id: f.text("run_id")?,
            job: JobRecord {
                idx: f.u32("idx")?,
                item_id: f.text("item_id")?,
                task_id: f.text("task_id")?,
                model: f.text("model")?,
                sample: f.u32("sample")?,
            },
            state: f.opt_text("state").unwrap_or_else(|| "pending".into()),
        })
    }
}

impl Store {
    /// Records a new run and all of its jobs in one transaction.
    pub fn create_run(&mut self, run: &RunRecord, jobs: &[JobRecord]) -> Result<()> {
        let row = RunRow::of(run)?.to_row();
        let tx = self.conn.transaction()?;
        {
            let runs = &super::tables::RUNS;
            let mut st = tx.prepare(&format!(
                "INSERT INTO runs ({}) VALUES ({})",
                runs.col_list(),
                runs.marks("?")
            ))?;
            st.execute(rusqlite::params_from_iter(&row))?;
            let t = &super::tables::JOBS;
            let mut st = tx.prepare(&format!(
                "INSERT INTO jobs ({}) VALUES ({})",
                t.col_list(),
                t.marks("?")
            ))?;
            for j in jobs {
                st.execute(rusqlite::params_from_iter(
                    JobRow::pending(&run.id, j).to_row(),
                ))?;
            }
        }
        tx.commit()?;
        Ok(())
    }

    pub fn set_run_status(&self, run_id: &str, status: RunStatus) -> Result<()> {
        self.conn.execute(
            "UPDATE runs SET status = ?2 WHERE id = ?1",
            params![run_id, status.as_str()],
        )?;
        Ok(())
    }

    pub fn run(&self, id: &str) -> Result<Option<RunRecord>> {
        self.records_where::<RunRow>(Some(("id", id)))?
            .into_iter()
            .next()
            .map(RunRow::parsed)
            .transpose()
    }

    /// Runs, newest first.
    pub fn runs(&self) -> Result<Vec<RunRecord>> {
        let mut rows = self.records_where::<RunRow>(None)?;
        newest_first(&mut rows);
        rows.into_iter().map(RunRow::parsed).collect()
    }

    /// A page of runs, newest first: those created at or after `since` with every tag of
    /// `tags` and (when given) the model `model`, at most `limit` of them (0: all). The runs
    /// table's index on the creation time answers it; a run's models are in its settings, read
    /// as the page is filled, so the page stops at `limit` whatever the history holds.
    pub fn runs_page(&self, f: &RunFilter) -> Result<Vec<LabelledRun>> {
        let mut tail = String::from("WHERE created_at >= ?1");
        let mut args = vec![Val::Int(f.since.unwrap_or(i64::MIN))];
        for t in &f.tags {
            args.push(Val::Text(t.clone()));
            tail += &format!(
                " AND instr(' ' || tags || ' ', ' ' || ?{} || ' ') > 0",
                args.len()
            );
        }
        tail += " ORDER BY created_at DESC, id DESC";
        if f.model.is_none() && f.limit > 0 {
            tail += &format!(" LIMIT {}", f.limit);
        }
        fill_page(self.records_by::<RunRow>(&tail, &args)?, f)
    }

    pub fn latest_run(&self) -> Result<Option<RunRecord>> {
        Ok(self.runs()?.into_iter().next())
    }

    pub fn jobs(&self, run_id: &str) -> Result<Vec<(JobRecord, JobState)>> {
        self.records_where::<JobRow>(Some(("run_id", run_id)))?
            .into_iter()
            .map(|j| Ok((j.job, JobState::parse(&j.state)?)))
            .collect()
    }

    /// Jobs still to do: never finished, or failed (a resume tries failures again).
    pub fn unfinished_jobs(&self, run_id: &str) -> Result<Vec<JobRecord>> {
        Ok(self
            .records_where::<JobRow>(Some(("run_id", run_id)))?
            .into_iter()
            .filter(|j| j.state == "pending" || j.state == "failed")
            .map(|j| j.job)
            .collect())
    }

    /// A run's name and tags (`prism runs name`, `prism runs tag`).
    pub fn run_labels(&self, run_id: &str) -> Result<(Option<String>, Vec<String>)> {
        Ok(self
            .records_where::<RunRow>(Some(("id", run_id)))?
            .into_iter()
            .next()
            .map_or((None, Vec::new()), |r| (r.name.clone(), r.tag_list())))
    }

    /// Names a run (`None` takes the name off). Returns whether the run exists.
    pub fn set_run_name(&self, run_id: &str, name: Option<&str>) -> Result<bool> {
        Ok(self.conn.execute(
            "UPDATE runs SET name = ?2 WHERE id = ?1",
            params![run_id, name],
        )? > 0)
    }

    /// Adds (or with `remove`, takes off) a one-word tag. Returns whether the run exists.
    pub fn tag_run(&self, run_id: &str, tag: &str, remove: bool) -> Result<bool> {
        let Some(_) = self.run(run_id)? else {
            return Ok(false);
        };
        let (_, mut tags) = self.run_labels(run_id)?;
        tags.retain(|t| t != tag);
        if !remove {
            tags.push(tag.to_string());
        }
        self.conn.execute(
            "UPDATE runs SET tags = ?2 WHERE id = ?1",
            params![run_id, tags.join(" ")],
        )?;
        Ok(true)
    }

    /// Removes a run with its jobs, answers, scores and lock, in one transaction; nothing of any
    /// other run. Returns the answers removed, or `None` when there is no such run. (Detections
    /// made on its answers are runs of their own and stay.)
    pub fn remove_run(&mut self, run_id: &str) -> Result<Option<usize>> {
        let tx = self.conn.transaction()?;
        if tx.execute("DELETE FROM runs WHERE id = ?1", [run_id])? == 0 {
            return Ok(None);
        }
        let answers = tx.execute("DELETE FROM responses WHERE run_id = ?1", [run_id])?;
        tx.execute("DELETE FROM scores WHERE run_id = ?1", [run_id])?;
        super::summaries::forget_run(&tx, run_id)?;
        for (table, col) in super::lane_tables::of_answer_runs() {
            tx.execute(&format!("DELETE FROM {table} WHERE {col} = ?1"), [run_id])?;
        }
        tx.execute("DELETE FROM jobs WHERE run_id = ?1", [run_id])?;
        tx.execute("DELETE FROM run_locks WHERE run_id = ?1", [run_id])?;
        tx.commit()?;
        Ok(Some(answers))
    }

    /// The distinct items a run asked (read from its jobs: for a run whose jobs are not one per
    /// item, model and sample).
    pub fn run_item_count(&self, run_id: &str) -> Result<usize> {
        Ok(self.conn.query_row(
            "SELECT COUNT(DISTINCT item_id) AS n FROM jobs WHERE run_id = ?1",
            [run_id],
            |r| r.get::<_, i64>("n"),
        )? as usize)
    }

    pub fn job_counts(&self, run_id: &str) -> Result<JobCounts> {
        // A shared run held in part counts as the shared store counted it (`mirror_pending`).
        if let Some(c) = self.pending_counts(run_id)? {
            return Ok(c);
        }
        // A run's jobs are numbered 0..n as it is made, so the key gives n at once; only the
        // jobs not done are counted (a partial index holds just those), so a finished run of
        // any size costs two index lookups, not a walk over its jobs.
        // Apart: SQLite answers MIN or MAX alone from the key, both at once by a scan.
        let end = |f: &str| -> Result<Option<i64>> {
            Ok(self.conn.query_row(
                &format!("SELECT {f}(idx) AS end FROM jobs WHERE run_id = ?1"),
                [run_id],
                |r| r.get("end"),
            )?)
        };
        let (lo, hi) = (end("MIN")?, end("MAX")?);
        let mut states = Vec::new();
        let mut st = self.conn.prepare_cached(
            "SELECT state, COUNT(*) AS n FROM jobs INDEXED BY jobs_open
             WHERE run_id = ?1 AND state != 'done' GROUP BY state",
        )?;
        let rows = st.query_map([run_id], |r| {
            Ok((r.get::<_, String>("state")?, r.get::<_, i64>("n")?))
        })?;
        for row in rows {
            states.push(row?);
        }
        let total = match (lo, hi) {
            (Some(0), Some(hi)) => hi + 1,
            (None, _) => 0,
            // Numbered otherwise (written by hand): counted one by one.
            _ => self.conn.query_row(
                "SELECT COUNT(*) AS n FROM jobs WHERE run_id = ?1",
                [run_id],
                |r| r.get("n"),
            )?,
        };
        JobCounts::of_open(states, total)
    }
}

/// A row of a lane's run table (detection runs, self-detection runs): the columns they share,
/// read the one way, the config parsed (an unreadable one names its run) and the status checked.
pub(crate) struct LaneRun<C> {
    pub(crate) id: String,
    pub(crate) created_at: i64,
    pub(crate) dataset: String,
    pub(crate) config: C,
    pub(crate) status: RunStatus,
    /// The table's own column named in [`Store::lane_runs`], if any (a detection's kind).
    pub(crate) extra: String,
}

impl Store {
    /// Every run of `table`, newest first; `extra`: one more text column to read.
    pub(crate) fn lane_runs<C: serde::de::DeserializeOwned>(
        &self,
        table: &str,
        extra: Option<&str>,
    ) -> Result<Vec<LaneRun<C>>> {
        let mut st = self.conn.prepare(&format!(
            "SELECT id, created_at, dataset, config, status, {} AS extra FROM {table}
             ORDER BY created_at DESC, id DESC",
            extra.unwrap_or("''")
        ))?;
        let rows = st
            .query_map([], |r| {
                Ok((
                    r.get::<_, String>("id")?,
                    r.get::<_, i64>("created_at")?,
                    r.get::<_, String>("dataset")?,
                    r.get::<_, String>("config")?,
                    r.get::<_, String>("status")?,
                    r.get::<_, String>("extra")?,
                ))
            })?
            .collect::<rusqlite::Result<Vec<_>>>()?;
        rows.into_iter()
            .map(|(id, created_at, dataset, config, status, extra)| {
                Ok(LaneRun {
                    config: serde_json::from_str(&config).map_err(|source| {
                        StoreError::RunConfig {
                            run: id.clone(),
                            source,
                        }
                    })?,
                    status: RunStatus::parse(&status)?,
                    id,
                    created_at,
                    dataset,
                    extra,
                })
            })
            .collect()
    }
}

#[cfg(test)]
mod tests;
