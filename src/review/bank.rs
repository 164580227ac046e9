//! The retained item bank as a release directory in PRISM's layout (`data/tasks.json`, one
//! JSONL file per task under `data/<DIM>/<SUBCAT>/`, `prompts/tasks` and `prompts/judges`), so
//! `prism validate`, `prism run` and the official scripts read it like the release. An item is
//! in the bank when its latest round converged on retain; an item revised on the way carries the
//! question of its last revision.

use std::collections::{BTreeMap, HashMap};
use std::path::Path;

use serde_json::{Map, Value, json};

use super::{Decision, ItemStatus, State};
use crate::dataset::{Dataset, Item};

/// What was written.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub(crate) struct BankSummary {
    pub items: usize,
    pub tasks: usize,
    /// Of the items, how many carry a revised question.
    pub revised: usize,
}

/// An item as a release record, with `question` replaced when given.
pub(crate) fn item_json(ds: &Dataset, item: &Item, question: Option<&str>) -> Value {
    let mut m = Map::new();
    m.insert("id".into(), json!(&*item.id));
    m.insert("task".into(), json!(ds.task_of(item).id));
    if let Some(s) = &item.source_id {
        m.insert("source_id".into(), json!(&**s));
    }
    m.insert("question".into(), json!(question.unwrap_or(&item.question)));
    let mut opt = |k: &str, v: Option<Value>| {
        if let Some(v) = v {
            m.insert(k.into(), v);
        }
    };
    opt("answer", item.answer.as_deref().map(|a| json!(a)));
    opt(
        "options",
        item.options
            .as_ref()
            .map(|o| json!(o.iter().map(|s| &**s).collect::<Vec<_>>())),
    );
    opt(
        "procedure",
        item.procedure.as_ref().map(|p| Value::Array(p.to_vec())),
    );
    opt("test_input", item.test_input.as_deref().map(|s| json!(s)));
    opt("test_output", item.test_output.as_deref().map(|s| json!(s)));
    opt("format", item.format.as_deref().map(|s| json!(s)));
    opt("word_range", item.word_range.map(|r| json!(r)));
    opt("language", item.language.as_deref().map(|s| json!(s)));
    opt(
        "instruction_id",
        item.instruction_id.as_deref().map(|s| json!(s)),
    );
    opt(
        "kwargs",
        item.kwargs.as_ref().map(|k| Value::Array(k.to_vec())),
    );
    for (k, v) in item.extra.iter() {
        m.entry(k.to_string()).or_insert_with(|| v.clone());
    }
    Value::Object(m)
}

/// A relative path of plain components (no `..`, not absolute).
fn safe_rel(p: &str) -> bool {
    let path = Path::new(p);
    !p.is_empty()
        && path
            .components()
            .all(|c| matches!(c, std::path::Component::Normal(_)))
}

/// `file`, or `stem-2.jsonl`, `stem-3.jsonl`... when an earlier task already took it.
fn unique_file(used: &mut std::collections::HashSet<String>, file: String) -> String {
    if used.insert(file.to_lowercase()) {
        return file;
    }
    let stem = file.strip_suffix(".jsonl").unwrap_or(&file).to_string();
    (2..)
        .map(|n| format!("{stem}-{n}.jsonl"))
        .find(|f| used.insert(f.to_lowercase()))
        .expect("some suffix is free")
}

/// A file stem: letters, digits, `_`, `-`, `.`, not starting with a dot.
fn safe_stem(s: &str) -> bool {
    !s.is_empty()
        && !s.starts_with('.')
        && s.chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.'))
}

/// Writes the items whose status converged on retain into `out` (created; must be empty or
/// absent, so a bank is never mixed with an older one).
pub(crate) fn write(
    ds: &Dataset,
    status: &HashMap<String, ItemStatus>,
    out: &Path,
) -> std::io::Result<BankSummary> {
    if out.exists() && std::fs::read_dir(out)?.next().is_some() {
        return Err(std::io::Error::new(
            std::io::ErrorKind::AlreadyExists,
            format!("{} is not empty", out.display()),
        ));
    }
    // Retained items by task, in dataset order.
    let mut by_task: BTreeMap<usize, Vec<(usize, Option<&str>)>> = BTreeMap::new();
    for (i, it) in ds.items.iter().enumerate() {
        if let Some(st) = status.get(&*it.id)
            && st.state == State::Converged(Decision::Retain)
        {
            by_task
                .entry(it.task as usize)
                .or_default()
                .push((i, st.edited_question.as_deref()));
        }
    }
    std::fs::create_dir_all(out.join("data"))?;
    std::fs::create_dir_all(out.join("prompts/tasks"))?;
    std::fs::create_dir_all(out.join("prompts/judges"))?;
    let mut tasks = Vec::new();
    let mut used = std::collections::HashSet::new();
    let (mut items, mut revised) = (0, 0);
    for (t, its) in &by_task {
        let task = &ds.tasks[*t];
        // A file or prompt name from a hostile registry or a task name from a JSONL file (`..`,
        // `/`) must not write outside `out`, and two tasks never share a file (the second
        // would replace the first's items).
        let file = task
            .file
            .clone()
            .filter(|f| safe_rel(f))
            .unwrap_or_else(|| {
                format!(
                    "{}/{}/{}.jsonl",
                    task.dimension.code(),
                    task.category.code,
                    crate::text::file_name(&task.name)
                )
            });
        let file = unique_file(&mut used, file);
        let path = out.join("data").join(&file);
        if let Some(dir) = path.parent() {
            std::fs::create_dir_all(dir)?;
        }
        let mut text = String::new();
        for (i, q) in its {
            text.push_str(&item_json(ds, &ds.items[*i], *q).to_string());
            text.push('\n');
            items += 1;
            revised += usize::from(q.is_some());
        }
        std::fs::write(&path, text)?;
        let mut rec = Map::new();
        if let Some(ix) = task.index {
            rec.insert("index".into(), json!(ix));
        }
        rec.insert("task_id".into(), json!(task.id));
        rec.insert("dimension".into(), json!(task.dimension.code()));
        rec.insert("subcategory".into(), json!(task.category.code));
        rec.insert("name".into(), json!(task.name));
        rec.insert("items".into(), json!(its.len()));
        rec.insert("evaluator".into(), json!(task.evaluator.to_string()));
        if let Some(p) = &task.prompt {
            rec.insert("prompt".into(), json!(p));
            if let Some(text) = ds.prompts.tasks.get(p).filter(|_| safe_stem(p)) {
                std::fs::write(out.join("prompts/tasks").join(format!("{p}.md")), text)?;
            }
        }
        rec.insert("file".into(), json!(file));
        tasks.push(Value::Object(rec));
    }
    for (stem, text) in ds.prompts.judges.iter().filter(|(s, _)| safe_stem(s)) {
        std::fs::write(out.join("prompts/judges").join(format!("{stem}.md")), text)?;
    }
    std::fs::write(
        out.join("data/tasks.json"),
        serde_json::to_string_pretty(&tasks).unwrap_or_default() + "\n",
    )?;
    Ok(BankSummary {
        items,
        tasks: tasks.len(),
        revised,
    })
}
