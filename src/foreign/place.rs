//! Where an imported run's answers sit, and the run written: with a PRISM release, a sample
//! that is one of its items (by id, else by the exact question text) lands in that item's
//! sub-task and is scored by PRISM's rules like any answer; the rest sit under the tool's own
//! tree, `<tool>/<task>/<category>`, with the tool's score beside each answer.

use std::collections::{BTreeMap, HashMap, HashSet};

use anyhow::Context;

use super::record::SourceRecord;
use super::{ForeignRun, ForeignSample};
use crate::dataset::Dataset;
use crate::store::{
    Db, JobRecord, ModelSnapshot, ResponseRecord, RunConfig, RunRecord, RunSource, RunStatus,
    new_run_id, now_secs,
};

/// How to place a run's samples.
#[derive(Default)]
pub struct Options<'a> {
    /// The release whose items samples are matched to.
    pub dataset: Option<&'a Dataset>,
    /// What the run records as its dataset (the release's path, or `<none>`).
    pub dataset_ref: String,
    /// An imported model name → the configured model that answers in its place.
    pub model_map: BTreeMap<String, String>,
}

/// What an import made (or found already made).
#[derive(Debug)]
pub struct Placed {
    pub run_id: String,
    /// The same file was imported before: this is that run, nothing written.
    pub already: bool,
    pub answers: usize,
    /// Answers placed on items of the release.
    pub matched: usize,
    pub models: Vec<String>,
    /// Samples left out, each with the reason (a second answer for the same item and model).
    pub problems: Vec<String>,
}

/// The task a sample not in the release sits under: the tool's own tree.
pub fn foreign_task(tool: &str, task: &str, category: Option<&str>) -> String {
    let mut t = format!("{tool}/{task}");
    if let Some(c) = category.filter(|c| !c.is_empty()) {
        t.push('/');
        t.push_str(c);
    }
    t
}

/// Whether a task id is one of the tool trees (not a PRISM sub-task).
pub fn is_foreign_task(task_id: &str) -> bool {
    task_id.contains('/')
}

/// The SHA-256 of a log (a regular file only: a FIFO would never end).
pub fn file_sha256(path: &std::path::Path) -> anyhow::Result<String> {
    super::regular_file(path)?;
    Ok(crate::files::sha256_file(path)?)
}

/// Writes `run` into the store as one prism run, or finds the run a former import of the same
/// file (and task) made.
pub fn import(db: &Db, run: &ForeignRun, opts: &Options) -> anyhow::Result<Placed> {
    let sha = file_sha256(&run.file).with_context(|| format!("{}", run.file.display()))?;
    if let Some(old) = db.read()?.runs()?.into_iter().find(|r| {
        r.config
            .source
            .as_ref()
            .is_some_and(|s| s.sha256 == sha && s.task == run.task && s.tool == run.tool.name())
    }) {
        return Ok(Placed {
            run_id: old.id,
            already: true,
            answers: 0,
            matched: 0,
            models: old.config.models.iter().map(|m| m.name.clone()).collect(),
            problems: Vec::new(),
        });
    }
    let run_id = new_run_id();
    let by_question: HashMap<&str, usize> = opts
        .dataset
        .map(|ds| {
            ds.items
                .iter()
                .enumerate()
                .map(|(i, it)| (it.question.trim(), i))
                .collect()
        })
        .unwrap_or_default();
    let mut jobs = Vec::new();
    let mut responses = Vec::new();
    let mut sources = Vec::new();
    let mut models: Vec<String> = Vec::new();
    let mut seen = HashSet::new();
    let mut problems = Vec::new();
    let mut matched = 0;
    let mut max_epoch = 1;
    for s in &run.samples {
        let (item_id, task_id, on_item) = match place(s, opts.dataset, &by_question) {
            Some((item, task)) => (item, task, true),
            None => (
                s.id.clone(),
                foreign_task(run.tool.name(), &run.task, s.category.as_deref()),
                false,
            ),
        };
        let sample = s.epoch.saturating_sub(1);
        if !seen.insert((item_id.clone(), s.model.clone(), sample)) {
            problems.push(format!(
                "{}: sample {}: a second answer of {} for item {item_id} (epoch {}): left out",
                run.file.display(),
                s.id,
                s.model,
                s.epoch
            ));
            continue;
        }
        matched += usize::from(on_item);
        max_epoch = max_epoch.max(s.epoch);
        if !models.contains(&s.model) {
            models.push(s.model.clone());
        }
        let job = JobRecord {
            idx: jobs.len() as u32,
            item_id,
            task_id,
            model: s.model.clone(),
            sample,
        };
        let (text, error) = answer(s);
        responses.push(ResponseRecord::imported(&run_id, &job, text, error));
        sources.push(source(&run_id, job.idx, run, s));
        jobs.push(job);
    }
    if jobs.is_empty() {
        anyhow::bail!(
            "{}: no sample to import (every one was left out, or the log has none)",
            run.file.display()
        );
    }
    let record = RunRecord {
        id: run_id.clone(),
        created_at: now_secs(),
        dataset: opts.dataset_ref.clone(),
        config: RunConfig {
            models: models
                .iter()
                .map(|m| ModelSnapshot {
                    answered_by: opts.model_map.get(m).cloned(),
                    ..ModelSnapshot::imported(m)
                })
                .collect(),
            samples: max_epoch,
            source: Some(RunSource {
                tool: run.tool.name().into(),
                version: run.version.clone(),
                task: run.task.clone(),
                file: std::fs::canonicalize(&run.file)
                    .unwrap_or_else(|_| run.file.clone())
                    .display()
                    .to_string(),
                sha256: sha,
                created: run.created.clone(),
                foreign_answers: responses.len() - matched,
            }),
            ..RunConfig::default()
        },
        status: RunStatus::Imported,
    };
    // Run, answers and sources in one go each; a failure part-way leaves a run `prism runs rm`
    // removes whole, never answers without their run.
    db.import_run(&record, &jobs, &responses, &sources)?;
    Ok(Placed {
        run_id,
        already: false,
        answers: responses.len(),
        matched,
        models,
        problems,
    })
}

/// The release item a sample is: by id, else by its exact question text.
fn place(
    s: &ForeignSample,
    ds: Option<&Dataset>,
    by_question: &HashMap<&str, usize>,
) -> Option<(String, String)> {
    let ds = ds?;
    let item = ds
        .item_by_id(&s.id)
        .or_else(|| by_question.get(s.input.trim()).map(|&i| &ds.items[i]))?;
    Some((item.id.to_string(), ds.task_of(item).id.clone()))
}

/// The answer's text, or why there is none.
fn answer(s: &ForeignSample) -> (Option<String>, Option<String>) {
    match &s.output {
        Some(t) => (Some(t.clone()), None),
        None => (None, s.error.clone()),
    }
}

fn source(run_id: &str, idx: u32, run: &ForeignRun, s: &ForeignSample) -> SourceRecord {
    SourceRecord {
        run_id: run_id.to_string(),
        job_idx: idx,
        tool: run.tool.name().into(),
        task: run.task.clone(),
        sample_id: s.id.clone(),
        epoch: s.epoch,
        category: s.category.clone(),
        input: s.input.clone(),
        target: s.target.clone(),
        choices: serde_json::to_string(&s.choices).unwrap_or_else(|_| "[]".into()),
        metadata: s.metadata.clone(),
        score_name: s.score.as_ref().map(|x| x.name.clone()),
        score_shown: s.score.as_ref().map(|x| x.shown.clone()),
        score: s.score.as_ref().and_then(|x| x.value),
        explanation: s.score.as_ref().and_then(|x| x.explanation.clone()),
    }
}
