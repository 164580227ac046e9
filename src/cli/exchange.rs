//! `prism export` and `prism import`: the official results layout,
//! `outputs/<model>/responses/<task_id>.jsonl` with `{"id", "response"}` per line.

use std::collections::BTreeMap;
use std::io::{BufReader, Write};
use std::path::Path;

use crate::dataset::{Line, LineReader, MAX_LINE_BYTES};
use anyhow::{Context, bail};
use serde_json::json;

use crate::store::{
    JobRecord, ModelSnapshot, ResponseRecord, RunConfig, RunRecord, RunStatus, new_run_id, now_secs,
};

/// A model name as a directory name: path separators and odd characters become `_`.
pub(crate) fn dir_name(model: &str) -> String {
    crate::text::file_name(model)
}

/// Writes one responses file per model and task. Sample 0 is the answer (the official layout has
/// one response per item); a failed job is written as `ERROR: reason`, as the official scripts do.
/// Folder names for names that may clash once made safe (`x/y` and `x_y` are both `x_y`): the
/// first keeps it, the next get `-2`, `-3`... Returns the names, and a note per renamed one.
pub(crate) fn unique_names<'a>(
    names: impl IntoIterator<Item = &'a str>,
) -> (std::collections::HashMap<String, String>, Vec<String>) {
    let mut taken = std::collections::HashSet::new();
    let mut out = std::collections::HashMap::new();
    let mut notes = Vec::new();
    for n in names {
        if out.contains_key(n) {
            continue;
        }
        let base = dir_name(n);
        let mut name = base.clone();
        let mut k = 2;
        while !taken.insert(name.to_lowercase()) {
            name = format!("{base}-{k}");
            k += 1;
        }
        if name != base {
            notes.push(format!(
                "{n:?} is written as {name:?}: {base:?} was taken by another name"
            ));
        }
        out.insert(n.to_string(), name);
    }
    (out, notes)
}

pub(crate) fn export(
    db: &crate::store::Db,
    run_id: Option<&str>,
    out: &Path,
) -> anyhow::Result<(String, usize, Vec<String>)> {
    let store = db.read()?;
    let run = match run_id {
        Some(id) => store
            .run(id)?
            .ok_or_else(|| anyhow::anyhow!("no run {id} in the store"))?,
        None => store
            .latest_run()?
            .ok_or_else(|| anyhow::anyhow!("the store has no runs"))?,
    };
    let responses = store.responses(&run.id)?;
    let mut files: BTreeMap<(String, String), Vec<(String, String)>> = BTreeMap::new();
    for r in responses.into_iter().filter(|r| r.sample == 0) {
        let text = match (&r.text, &r.error) {
            (Some(t), None) => t.clone(),
            (_, Some(e)) => format!("ERROR: {e}"),
            (None, None) => String::new(),
        };
        files
            .entry((r.model.clone(), r.task_id.clone()))
            .or_default()
            .push((r.item_id, text));
    }
    let (model_dirs, mut notes) = unique_names(files.keys().map(|(m, _)| m.as_str()));
    let (task_files, task_notes) = unique_names(files.keys().map(|(_, t)| t.as_str()));
    notes.extend(task_notes);
    let mut n = 0;
    for ((model, task), rows) in files {
        let dir = out.join(&model_dirs[&model]).join("responses");
        std::fs::create_dir_all(&dir).with_context(|| format!("creating {}", dir.display()))?;
        let path = dir.join(format!("{}.jsonl", task_files[&task]));
        let mut f = std::io::BufWriter::new(
            std::fs::File::create(&path).with_context(|| format!("writing {}", path.display()))?,
        );
        for (id, response) in rows {
            writeln!(f, "{}", json!({"id": id, "response": response}))?;
            n += 1;
        }
        f.flush()?;
    }
    Ok((run.id, n, notes))
}

/// Reads `DIR/<model>/responses/*.jsonl` into a new run (status `imported`), so answers produced
/// elsewhere can be browsed and scored. Lines that are not `{"id", "response"}` are reported by
/// file and line and skipped.
/// One line of an official `responses/<task_id>.jsonl`.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct OfficialResponse {
    pub task: String,
    pub id: String,
    /// As written: an API error is a text starting with `ERROR:`.
    pub response: String,
}

/// What a `responses/` directory holds: its lines, and the tasks it has a file for (a task whose
/// file holds no line is still one the model was run on).
pub(crate) struct ResponsesDir {
    pub rows: Vec<OfficialResponse>,
    pub tasks: Vec<String>,
}

impl ResponsesDir {
    /// The dataset's items of the tasks this directory has a file for that no line answers, in
    /// dataset order, as (task, item id). PRISM's evaluation loops over every item of a task's
    /// data file and scores an absent response as failed (0, in the denominator), so prism
    /// counts these as failed answers too; a task with no file at all is a task not run (left
    /// out of the rates, its dimension partial) and is not listed here.
    pub(crate) fn missing(&self, ds: &crate::dataset::Dataset) -> Vec<(String, String)> {
        let tasks: std::collections::HashSet<&str> =
            self.tasks.iter().map(String::as_str).collect();
        let answered: std::collections::HashSet<(&str, &str)> = self
            .rows
            .iter()
            .map(|r| (r.task.as_str(), r.id.as_str()))
            .collect();
        ds.items
            .iter()
            .filter_map(|it| {
                let task = &*ds.task_of(it).id;
                (tasks.contains(task) && !answered.contains(&(task, &*it.id)))
                    .then(|| (task.to_string(), it.id.to_string()))
            })
            .collect()
    }
}

/// The error a missing response is stored and scored with.
pub(crate) fn no_response(task: &str) -> String {
    format!("{}responses/{task}.jsonl", crate::eval::score::NO_RESPONSE)
}

/// Reads every `*.jsonl` in a `responses/` directory; bad lines become `file:line: field: reason`
/// problems and the rest still loads.
pub(crate) fn read_responses(
    dir: &Path,
    problems: &mut Vec<String>,
) -> anyhow::Result<ResponsesDir> {
    let mut files: Vec<_> = std::fs::read_dir(dir)
        .with_context(|| format!("reading {}", dir.display()))?
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|x| x == "jsonl"))
        .collect();
    files.sort();
    let mut out = Vec::new();
    let mut tasks = Vec::new();
    for path in files {
        // Regular files only (a link to one too): a FIFO named X.jsonl would wait forever, and
        // a link to /dev/zero is one endless line.
        if !path.is_file() {
            problems.push(format!(
                "{}: -: not a regular file (a FIFO, a device or a broken link): skipped",
                path.display()
            ));
            continue;
        }
        let task = path
            .file_stem()
            .map(|s| s.to_string_lossy().into_owned())
            .unwrap_or_default();
        tasks.push(task.clone());
        let f =
            std::fs::File::open(&path).with_context(|| format!("opening {}", path.display()))?;
        let mut lines = LineReader::new(BufReader::new(f), MAX_LINE_BYTES);
        loop {
            let (i, line) = match lines.next_line() {
                Ok(Some(l)) => l,
                Ok(None) => break,
                Err(e) => {
                    problems.push(format!("{}: -: {e}", path.display()));
                    break;
                }
            };
            let shown = format!("{}:{i}", path.display());
            let line = match line {
                Line::Text(t) => String::from_utf8_lossy(t).into_owned(),
                Line::TooLong(n) => {
                    problems.push(format!(
                        "{shown}: -: a line of {n} bytes, over the {} MiB a line may have: skipped",
                        MAX_LINE_BYTES >> 20
                    ));
                    continue;
                }
            };
            if line.trim().is_empty() {
                continue;
            }
            let v: serde_json::Value = match serde_json::from_str(&line) {
                Ok(v) => v,
                Err(e) => {
                    problems.push(format!("{shown}: -: invalid JSON: {e}"));
                    continue;
                }
            };
            let Some(id) = v.get("id").and_then(|x| x.as_str()) else {
                problems.push(format!("{shown}: id: missing or not text"));
                continue;
            };
            // A null response is a missing answer: it scores 0 like any failed one.
            let response = match v.get("response") {
                Some(serde_json::Value::String(r)) => r.clone(),
                Some(serde_json::Value::Null) | None => String::new(),
                Some(_) => {
                    problems.push(format!("{shown}: response: not text"));
                    continue;
                }
            };
            out.push(OfficialResponse {
                task: task.clone(),
                id: id.to_string(),
                response,
            });
        }
    }
    Ok(ResponsesDir { rows: out, tasks })
}

/// What `prism import` made: the run, its answers, the lines it could not read, and the
/// answers it added as failed for items with no response (with a dataset to know them by).
pub(crate) struct Imported {
    pub run_id: String,
    pub answers: usize,
    pub problems: Vec<String>,
    pub missing: usize,
}

pub(crate) fn import(
    db: &crate::store::Db,
    dir: &Path,
    dataset_ref: &str,
    ds: Option<&crate::dataset::Dataset>,
) -> anyhow::Result<Imported> {
    let mut models = Vec::new();
    let mut jobs = Vec::new();
    let mut responses = Vec::new();
    let mut problems = Vec::new();
    let mut missing = 0;
    let run_id = new_run_id();
    let mut entries: Vec<_> = std::fs::read_dir(dir)
        .with_context(|| format!("reading {}", dir.display()))?
        .flatten()
        .filter(|e| e.path().join("responses").is_dir())
        .collect();
    entries.sort_by_key(|e| e.file_name());
    for entry in entries {
        let model = entry.file_name().to_string_lossy().into_owned();
        // Answers read from files: no endpoint was called, and none may be on resume.
        models.push(ModelSnapshot::imported(&model));
        let read = read_responses(&entry.path().join("responses"), &mut problems)?;
        // Items of an answered task with no line: failed answers, as PRISM scores them.
        let absent: Vec<OfficialResponse> = ds
            .map(|ds| read.missing(ds))
            .unwrap_or_default()
            .into_iter()
            .map(|(task, id)| OfficialResponse {
                response: format!("ERROR: {}", no_response(&task)),
                task,
                id,
            })
            .collect();
        missing += absent.len();
        for r in read.rows.into_iter().chain(absent) {
            let job = JobRecord {
                idx: jobs.len() as u32,
                item_id: r.id,
                task_id: r.task,
                model: model.clone(),
                sample: 0,
            };
            let (text, error) = match r.response.strip_prefix("ERROR:") {
                Some(e) => (None, Some(e.trim().to_string())),
                None => (Some(r.response), None),
            };
            responses.push(ResponseRecord::imported(&run_id, &job, text, error));
            jobs.push(job);
        }
    }
    if models.is_empty() {
        bail!("{}: no <model>/responses/ directories", dir.display());
    }
    let run = RunRecord {
        id: run_id.clone(),
        created_at: now_secs(),
        dataset: dataset_ref.to_string(),
        config: RunConfig {
            models,
            samples: 1,
            ..RunConfig::default()
        },
        status: RunStatus::Imported,
    };
    db.import_run::<crate::store::ResponseRecord>(&run, &jobs, &responses, &[])?;
    Ok(Imported {
        run_id,
        answers: responses.len() - missing,
        problems,
        missing,
    })
}

/// `prism export`: a stored run as PRISM's outputs/ layout.
pub(crate) fn export_cmd(
    db: Option<std::path::PathBuf>,
    run_id: Option<&str>,
    prism_outputs: &Path,
    dirs: &crate::config::Dirs,
) -> anyhow::Result<i32> {
    // A shared store's run is exported from this machine's copy, brought up to date first.
    let db = super::lane_flags::synced(db.as_ref(), dirs)?;
    let (id, n, notes) = export(&db, run_id, prism_outputs)?;
    for note in notes {
        crate::warn!("note: {note}");
    }
    crate::warn!(
        "exported {n} responses of run {id} to {}",
        prism_outputs.display()
    );
    // A run whose pull from a shared store is not finished is exported as far as it is here,
    // and said: exit 2, as for a partial result.
    if let Some((here, all)) = db.pulled_in_part(&id)? {
        crate::warn!(
            "run {id} is only in part on this machine: {here} of {all} answers (its pull from the shared store is not finished: export with --db URL to go on with it)"
        );
        return Ok(2);
    }
    Ok(0)
}

/// `prism import`: PRISM's outputs/ as a stored run. Exit 2 when some lines could not be read.
pub(crate) fn import_cmd(
    prism_outputs: &Path,
    db: Option<std::path::PathBuf>,
    dataset: Option<std::path::PathBuf>,
    dirs: &crate::config::Dirs,
) -> anyhow::Result<i32> {
    // Into a shared store: imported here, then the run copied there whole.
    let db = crate::store::Db::open(db.as_deref(), &super::run::default_db(dirs))?;
    // With the dataset, items of an answered task that have no response are known, and kept
    // as failed answers (PRISM scores them 0, in the denominator).
    let ds = match &dataset {
        Some(d) => Some(super::run::open_dataset(Some(d.as_path()))?.0),
        None => None,
    };
    let dataset_ref = dataset
        .map(|d| std::fs::canonicalize(&d).unwrap_or(d).display().to_string())
        .unwrap_or_else(|| "<unknown>".into());
    let Imported {
        run_id: id,
        answers: n,
        problems,
        missing,
    } = import(&db, prism_outputs, &dataset_ref, ds.as_deref())?;
    for p in &problems {
        crate::warn!("{p}");
    }
    crate::warn!("imported {n} responses as run {id}");
    if missing > 0 {
        crate::warn!(
            "{missing} item(s) of the answered tasks have no response: kept as failed answers (they score 0 and count, as PRISM scores them)"
        );
    } else if ds.is_none() {
        crate::warn!(
            "note: without --data, items that have no response cannot be known (PRISM scores them 0): give the dataset to keep them as failed answers"
        );
    }
    if db.is_shared() {
        let answers = db.push_run(&id)?;
        crate::warn!("run {id} copied to {}: {answers} answers", db.shown());
    }
    crate::say!("{id}");
    Ok(if problems.is_empty() { 0 } else { 2 })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_that_clash_once_made_safe_get_their_own_folder() {
        let (m, notes) = unique_names(["x/y", "x_y", "X_Y", "z"]);
        assert_eq!(m["x/y"], "x_y");
        assert_eq!(m["x_y"], "x_y-2");
        assert_eq!(m["X_Y"], "X_Y-3", "case-insensitive file systems too");
        assert_eq!(m["z"], "z");
        assert_eq!(notes.len(), 2);
    }

    #[test]
    fn model_names_become_safe_directory_names() {
        assert_eq!(dir_name("meta-llama/Llama-3-8B"), "meta-llama_Llama-3-8B");
        assert_eq!(dir_name(".."), "_");
        assert_eq!(dir_name("gpt-4o"), "gpt-4o");
    }
}
