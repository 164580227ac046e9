//! The official PRISM release layout: `data/tasks.json` plus one JSONL file per sub-task, and the
//! task and judge prompts under `prompts/`.

use std::collections::{HashMap, HashSet};

use serde_json::{Map, Value, value::RawValue};

use super::{
    DatasetKind, Loaded, MAX_SMALL_FILE, Problem, Source, Task, TaskDraft, join, line_of,
    load_prompts, read_all, record_to_item,
};
use crate::taxonomy::{self, Dimension, Evaluator};

/// Loads a release whose registry is `<data_rel>/tasks.json`.
/// The data file a registry entry names (relative to the source), or why it is not read.
fn entry_file(source: &Source, data_rel: &str, file: &str) -> Result<String, String> {
    let rel = join(data_rel, file);
    let why = if super::source::escapes(file) {
        Some(format!(
            "{file:?} is outside the dataset directory (absolute or with `..`)"
        ))
    } else {
        source.outside(&rel)
    };
    if let Some(why) = why {
        return Err(format!("{why}; skipped"));
    }
    if !source.is_file(&rel) {
        return Err(format!("{} does not exist", source.display(&rel)));
    }
    Ok(rel)
}

/// Data files that no registry entry names: each is a problem (it is not loaded).
fn unnamed_files(
    source: &Source,
    data_rel: &str,
    drafts: &[(TaskDraft, String)],
    problems: &mut Vec<Problem>,
) {
    let named: HashSet<&str> = drafts.iter().map(|(_, rel)| rel.as_str()).collect();
    let data_dir = if data_rel.is_empty() { "" } else { data_rel };
    for rel in source.files_with_ext(data_dir, "jsonl") {
        if !named.contains(rel.as_str()) && !rel.starts_with("prompts/") {
            problems.push(Problem::error(
                source.display(&rel),
                0,
                "task",
                "no tasks.json entry names this file; not loaded",
            ));
        }
    }
}

pub(super) fn load(source: &Source, data_rel: &str) -> Loaded {
    let mut problems = Vec::new();
    let registry_rel = join(data_rel, "tasks.json");
    let registry_shown = source.display(&registry_rel);
    let prompts = load_prompts(source, "", &mut problems);
    let entries = read_registry(source, &registry_rel, &registry_shown, &mut problems);

    // Validate each registry entry; keep the good ones as drafts.
    let mut drafts: Vec<(TaskDraft, String)> = Vec::new();
    let mut seen_ids: HashMap<String, usize> = HashMap::new();
    let mut seen_files: HashMap<String, usize> = HashMap::new();
    // Every valid entry counts for completeness, even when its file is missing or skipped.
    let mut registry = Vec::new();
    for (line, obj) in entries {
        let Some(task) = registry_task(&obj, line, &registry_shown, &mut problems) else {
            continue;
        };
        if !seen_ids.contains_key(&task.id) {
            registry.push(super::Registered {
                id: task.id.clone(),
                dimension: task.dimension,
                category: task.category,
            });
        }
        if let Some(prev) = seen_ids.insert(task.id.clone(), line) {
            problems.push(Problem::error(
                &registry_shown,
                line,
                "task_id",
                format!(
                    "duplicate task {:?}, first at line {prev}; skipped",
                    task.id
                ),
            ));
            continue;
        }
        let file = task.file.clone().unwrap_or_default();
        if let Some(prev) = seen_files.insert(file.clone(), line) {
            problems.push(Problem::error(
                &registry_shown,
                line,
                "file",
                format!("{file:?} is already the file of the task at line {prev}; skipped"),
            ));
            continue;
        }
        let rel = match entry_file(source, data_rel, &file) {
            Ok(rel) => rel,
            Err(why) => {
                problems.push(Problem::error(&registry_shown, line, "file", why));
                continue;
            }
        };
        if let Some(p) = &task.prompt
            && !prompts.tasks.contains_key(p)
        {
            problems.push(Problem::error(
                &registry_shown,
                line,
                "prompt",
                format!("no prompts/tasks/{p}.md"),
            ));
        }
        drafts.push((
            TaskDraft {
                task,
                items: Vec::new(),
            },
            rel,
        ));
    }

    unnamed_files(source, data_rel, &drafts, &mut problems);

    // Read every task's file in parallel, then check each record against its task.
    let files: Vec<(String, String)> = drafts
        .iter()
        .map(|(_, rel)| (rel.clone(), source.display(rel)))
        .collect();
    let read = read_all(source, &files);
    for ((draft, _), (fr, (_, shown))) in drafts.iter_mut().zip(read.into_iter().zip(&files)) {
        problems.extend(fr.problems);
        let task = &draft.task;
        for (line, rec) in fr.records {
            let before = problems.len();
            match rec.task.as_deref() {
                Some(t) if t == task.id => {}
                Some(t) => problems.push(Problem::error(
                    shown,
                    line as usize,
                    "task",
                    format!("{t:?} does not match the file's task {:?}", task.id),
                )),
                None => problems.push(Problem::error(shown, line as usize, "task", "missing")),
            }
            let item = record_to_item(rec, line, 0, task.evaluator, shown, &mut problems);
            if let (Some(item), true) = (item, problems[before..].iter().all(|p| !p.is_error())) {
                draft.items.push(item);
            }
        }
    }

    let tasks_shown: HashMap<String, String> = drafts
        .iter()
        .map(|(d, rel)| (d.task.id.clone(), source.display(rel)))
        .collect();
    let dataset = super::Dataset::assemble(
        source.label(),
        DatasetKind::Release,
        drafts.into_iter().map(|(d, _)| d).collect(),
        prompts,
        Some(registry),
        &mut problems,
        |t| tasks_shown.get(&t.id).cloned().unwrap_or_default(),
    );
    Loaded { dataset, problems }
}

/// Reads `tasks.json` into its entries, each with the line it starts on.
fn read_registry(
    source: &Source,
    rel: &str,
    shown: &str,
    problems: &mut Vec<Problem>,
) -> Vec<(usize, Map<String, Value>)> {
    let bytes = match source.read_bytes(rel, MAX_SMALL_FILE) {
        Ok(b) => b,
        Err(e) => {
            problems.push(Problem::error(shown, 0, "-", format!("cannot read: {e}")));
            return Vec::new();
        }
    };
    let bytes = match bytes.strip_prefix(b"\xef\xbb\xbf") {
        Some(rest) => rest.to_vec(),
        None => bytes,
    };
    let text = match std::str::from_utf8(&bytes) {
        Ok(t) => t,
        Err(e) => {
            problems.push(Problem::error(
                shown,
                line_of(&bytes, e.valid_up_to()),
                "-",
                "invalid UTF-8",
            ));
            return Vec::new();
        }
    };
    // Raw entries first, so one bad entry does not hide the others and each keeps its position.
    let raw: Vec<&RawValue> = match serde_json::from_str(text) {
        Ok(r) => r,
        Err(e) => {
            problems.push(Problem::error(
                shown,
                e.line(),
                "-",
                format!("invalid JSON (expected a list of task objects): {e}"),
            ));
            return Vec::new();
        }
    };
    if raw.is_empty() {
        problems.push(Problem::error(shown, 0, "-", "empty registry: no tasks"));
    }
    let base = text.as_ptr() as usize;
    raw.into_iter()
        .filter_map(|r| {
            let line = line_of(bytes.as_slice(), r.get().as_ptr() as usize - base);
            match serde_json::from_str::<Value>(r.get()) {
                Ok(Value::Object(m)) => Some((line, m)),
                _ => {
                    problems.push(Problem::error(
                        shown,
                        line,
                        "-",
                        "task entry is not a JSON object; skipped",
                    ));
                    None
                }
            }
        })
        .collect()
}

/// Turns one registry entry into a task, or records why it cannot be one.
fn registry_task(
    obj: &Map<String, Value>,
    line: usize,
    shown: &str,
    problems: &mut Vec<Problem>,
) -> Option<Task> {
    let before = problems.len();
    let text = |k: &str, problems: &mut Vec<Problem>| -> Option<String> {
        match obj.get(k) {
            Some(Value::String(s)) if !s.trim().is_empty() => Some(s.clone()),
            Some(Value::String(_)) | None | Some(Value::Null) => {
                problems.push(Problem::error(shown, line, k, "missing"));
                None
            }
            Some(_) => {
                problems.push(Problem::error(shown, line, k, "expected a string"));
                None
            }
        }
    };
    let id = text("task_id", problems);
    let dim = text("dimension", problems).and_then(|d| match d.parse::<Dimension>() {
        Ok(d) => Some(d),
        Err(e) => {
            problems.push(Problem::error(shown, line, "dimension", e));
            None
        }
    });
    let cat_code = text("subcategory", problems);
    let category = match (dim, &cat_code) {
        (Some(d), Some(c)) => match taxonomy::category_or_reason(d, c) {
            Ok(cat) => Some(cat),
            Err(reason) => {
                problems.push(Problem::error(shown, line, "subcategory", reason));
                None
            }
        },
        _ => None,
    };
    let evaluator = text("evaluator", problems).and_then(|e| match e.parse::<Evaluator>() {
        Ok(e) => Some(e),
        Err(msg) => {
            problems.push(Problem::error(shown, line, "evaluator", msg));
            None
        }
    });
    let file = text("file", problems);
    let name = obj
        .get("name")
        .and_then(Value::as_str)
        .map(str::to_string)
        .or_else(|| id.as_deref().map(short_name));
    let prompt = obj
        .get("prompt")
        .and_then(Value::as_str)
        .map(str::to_string);
    let index = obj.get("index").and_then(Value::as_u64).map(|i| i as u32);
    let declared_items = obj.get("items").and_then(Value::as_u64);
    if problems.len() != before {
        return None;
    }
    let known = [
        "index",
        "task_id",
        "dimension",
        "subcategory",
        "name",
        "items",
        "evaluator",
        "prompt",
        "file",
    ];
    let extra = obj
        .iter()
        .filter(|(k, _)| !known.contains(&k.as_str()))
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect();
    Some(Task {
        id: id?,
        index,
        dimension: dim?,
        category: category?,
        name: name.unwrap_or_default(),
        declared_items,
        evaluator: evaluator?,
        prompt,
        file,
        items: 0..0,
        extra,
    })
}

/// `KE-FD-DefAn` → `DefAn`; ids without the `DIM-CAT-` prefix are their own name.
pub(super) fn short_name(task_id: &str) -> String {
    let mut parts = task_id.splitn(3, '-');
    match (parts.next(), parts.next(), parts.next()) {
        (Some(d), Some(_), Some(rest)) if d.parse::<Dimension>().is_ok() => rest.to_string(),
        _ => task_id.to_string(),
    }
}
