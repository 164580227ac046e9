//! Runs made by other tools: inspect_ai logs (`.eval` archives and `.json` logs),
//! lm-evaluation-harness's `--log_samples` output and promptfoo's `-o results.json`, read into
//! one shape ([`ForeignRun`]) that `place` turns into a prism run.
//!
//! Reading never trusts the file: each is read by content (its extension only breaks ties),
//! only regular files are opened (a FIFO would wait forever), archives are read entry by entry
//! with a cap on what an entry may inflate to, and a sample that does not read is named and
//! left out while the rest of its file still imports.

use std::io::Read;
use std::path::{Path, PathBuf};

pub mod inspect;
pub mod lm_eval;
pub mod place;
pub mod promptfoo;
pub mod record;

/// The tool a run was made with.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Tool {
    Inspect,
    LmEval,
    Promptfoo,
}

impl Tool {
    pub fn name(self) -> &'static str {
        match self {
            Tool::Inspect => "inspect",
            Tool::LmEval => "lm-eval",
            Tool::Promptfoo => "promptfoo",
        }
    }

    pub fn parse(s: &str) -> Option<Tool> {
        match s.trim().to_ascii_lowercase().as_str() {
            "inspect" | "inspect_ai" | "inspect-ai" => Some(Tool::Inspect),
            "lm-eval" | "lm_eval" | "lm-evaluation-harness" => Some(Tool::LmEval),
            "promptfoo" => Some(Tool::Promptfoo),
            _ => None,
        }
    }
}

/// One run read from a tool's log: where it came from and its samples.
#[derive(Debug, Clone)]
pub struct ForeignRun {
    pub tool: Tool,
    /// The tool's version as the log records it (`unknown` when it does not).
    pub version: String,
    /// The task (inspect, lm-eval) or the eval's description (promptfoo).
    pub task: String,
    pub file: PathBuf,
    /// When the tool made it, as the log says (RFC 3339 or the tool's own text).
    pub created: String,
    pub samples: Vec<ForeignSample>,
}

/// One answer in a tool's log, with the item it answered and the tool's own verdict on it.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ForeignSample {
    /// The sample's id in the log (inspect's `id`, lm-eval's `doc.id` or `doc_id`, promptfoo's
    /// test description or index).
    pub id: String,
    /// inspect's epoch (1-based); 1 elsewhere.
    pub epoch: u32,
    pub model: String,
    /// The question as the model was asked it (the last user message of a chat).
    pub input: String,
    pub target: Option<String>,
    pub choices: Vec<String>,
    /// The sample's category, when the log has one (`metadata.category`, `doc.subject`, ...).
    pub category: Option<String>,
    /// The sample's metadata (inspect), document (lm-eval) or variables (promptfoo), as JSON.
    pub metadata: String,
    pub output: Option<String>,
    /// Why there is no output (the tool's error, or "no output in the log").
    pub error: Option<String>,
    pub score: Option<SourceScore>,
}

/// The tool's own score of an answer, kept as the tool gave it.
#[derive(Debug, Clone, PartialEq)]
pub struct SourceScore {
    /// The scorer or metric (`includes`, `exact_match`, `pass`).
    pub name: String,
    /// The value as the tool shows it (`C`, `1.0`, `pass`).
    pub shown: String,
    /// The value on 0..1 where 1 is right (inspect: C 1, P 0.5, I and N 0), when it has one.
    pub value: Option<f64>,
    pub explanation: Option<String>,
}

impl SourceScore {
    /// How it reads beside prism's own scores: `inspect: includes C`.
    pub fn label(&self, tool: Tool) -> String {
        format!("{}: {} {}", tool.name(), self.name, self.shown)
    }
}

/// What reading a file gave: its runs and the problems met on the way (each naming the file and,
/// where there is one, the sample).
#[derive(Debug, Default)]
pub struct Reading {
    pub runs: Vec<ForeignRun>,
    pub problems: Vec<String>,
}

/// The most an archive entry or a single JSON value of a sample may take once read (a zip bomb
/// inflating past it is refused, its entry named).
pub const MAX_ENTRY_BYTES: u64 = 256 << 20;

/// Which tool wrote `path`, by its content (`None`: none of the three).
pub fn detect(path: &Path) -> std::io::Result<Option<Tool>> {
    let mut head = Vec::with_capacity(64 << 10);
    regular_file(path)?.take(64 << 10).read_to_end(&mut head)?;
    if head.starts_with(b"PK\x03\x04") {
        return Ok(Some(Tool::Inspect));
    }
    let text = String::from_utf8_lossy(&head);
    let has = |k: &str| text.contains(k);
    // lm-eval: a samples line, or a results file.
    let lm_eval = (has("\"doc_id\"") && has("\"resps\""))
        || has("\"lm_eval_version\"")
        || has("\"n-samples\"")
        || has("\"group_subtasks\"");
    Ok(if lm_eval {
        Some(Tool::LmEval)
    } else if has("\"evalId\"") || has("\"promptfooVersion\"") {
        Some(Tool::Promptfoo)
    } else if has("\"eval\"") && (has("\"task_file\"") || has("\"eval_id\"") || has("\"task_id\""))
    {
        Some(Tool::Inspect)
    } else {
        None
    })
}

/// A file to read, refused when it is not a regular file (a FIFO would block the import, a
/// device could be endless).
pub fn regular_file(path: &Path) -> std::io::Result<std::fs::File> {
    let meta = std::fs::metadata(path)?;
    if !meta.is_file() {
        return Err(std::io::Error::other(
            "not a regular file (a FIFO, a device or a directory)",
        ));
    }
    std::fs::File::open(path)
}

/// Reads the files (a directory stands for the logs in it), each as `forced` or by content.
pub fn read(paths: &[PathBuf], forced: Option<Tool>) -> Reading {
    let mut out = Reading::default();
    for path in expand(paths, &mut out.problems) {
        let tool = match forced {
            Some(t) => t,
            None => match detect(&path) {
                Ok(Some(t)) => t,
                Ok(None) => {
                    out.problems.push(format!(
                        "{}: not a log prism knows (inspect_ai .eval or .json, lm-eval samples_*.jsonl or results_*.json, promptfoo results.json): give --format to say which",
                        path.display()
                    ));
                    continue;
                }
                Err(e) => {
                    out.problems.push(format!("{}: {e}", path.display()));
                    continue;
                }
            },
        };
        let got = match tool {
            Tool::Inspect => inspect::read(&path, &mut out.problems),
            Tool::LmEval => lm_eval::read(&path, &mut out.problems),
            Tool::Promptfoo => promptfoo::read(&path, &mut out.problems),
        };
        match got {
            Ok(runs) => out.runs.extend(runs),
            Err(e) => out.problems.push(format!("{}: {e:#}", path.display())),
        }
    }
    out
}

/// The files named, a directory standing for the logs under it (sorted, so imports are in a
/// stable order). lm-eval's results file is read through its samples files, so a directory
/// lists only those.
fn expand(paths: &[PathBuf], problems: &mut Vec<String>) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for p in paths {
        if !p.is_dir() {
            out.push(p.clone());
            continue;
        }
        let mut found = Vec::new();
        walk(p, 0, &mut found, problems);
        found.sort();
        if found.is_empty() {
            problems.push(format!("{}: no logs in this directory", p.display()));
        }
        out.extend(found);
    }
    out
}

fn walk(dir: &Path, depth: u32, found: &mut Vec<PathBuf>, problems: &mut Vec<String>) {
    if depth > 4 {
        return;
    }
    let entries = match std::fs::read_dir(dir) {
        Ok(e) => e,
        Err(e) => {
            problems.push(format!("{}: {e}", dir.display()));
            return;
        }
    };
    for e in entries.flatten() {
        let p = e.path();
        let name = e.file_name().to_string_lossy().into_owned();
        if name.starts_with('.') {
            continue;
        }
        if p.is_dir() {
            walk(&p, depth + 1, found, problems);
        } else if name.ends_with(".eval")
            || (name.starts_with("samples_") && name.ends_with(".jsonl"))
            || (name.ends_with(".json") && !name.starts_with("results_"))
        {
            found.push(p);
        }
    }
}

/// JSON as text for a column (objects kept as written, `null` for none).
pub(crate) fn json_text(v: &serde_json::Value) -> String {
    if v.is_null() {
        "{}".into()
    } else {
        v.to_string()
    }
}

/// A value as the text a person reads: strings as they are, anything else as JSON.
pub(crate) fn plain(v: &serde_json::Value) -> Option<String> {
    match v {
        serde_json::Value::Null => None,
        serde_json::Value::String(s) => Some(s.clone()),
        serde_json::Value::Array(a) if a.iter().all(|x| x.is_string()) => Some(
            a.iter()
                .filter_map(|x| x.as_str())
                .collect::<Vec<_>>()
                .join("\n"),
        ),
        other => Some(other.to_string()),
    }
}

/// The category a sample's metadata names, under the keys tools and datasets use for it.
pub(crate) fn category_of(meta: &serde_json::Value) -> Option<String> {
    [
        "category",
        "subject",
        "subcategory",
        "subtask",
        "topic",
        "domain",
    ]
    .iter()
    .find_map(|k| meta.get(*k).and_then(|v| v.as_str()))
    .map(|s| s.to_string())
}

/// The text of a chat's last user message (content as a string or as parts), or the input
/// itself when it is a string.
pub(crate) fn last_user_text(input: &serde_json::Value) -> String {
    match input {
        serde_json::Value::String(s) => s.clone(),
        serde_json::Value::Array(msgs) => msgs
            .iter()
            .rev()
            .find(|m| m.get("role").and_then(|r| r.as_str()) == Some("user"))
            .or_else(|| msgs.last())
            .map(|m| content_text(m.get("content").unwrap_or(&serde_json::Value::Null)))
            .unwrap_or_default(),
        other => other.to_string(),
    }
}

/// A message's content as text: a string, or its text parts joined.
pub(crate) fn content_text(content: &serde_json::Value) -> String {
    match content {
        serde_json::Value::String(s) => s.clone(),
        serde_json::Value::Array(parts) => parts
            .iter()
            .filter_map(|p| p.get("text").and_then(|t| t.as_str()))
            .collect::<Vec<_>>()
            .join("\n"),
        serde_json::Value::Null => String::new(),
        other => other.to_string(),
    }
}
