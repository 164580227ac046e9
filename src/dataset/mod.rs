//! Datasets: the item model, the loaders (PRISM release directory, plain JSONL) and the counts.
//!
//! A [`Dataset`] is immutable once loaded and is shared behind an `Arc` by every front-end.
//! Loading never panics and never gives up on the first problem: each problem is recorded with its
//! file, line and field, the line it is on is skipped, and everything else still loads.

pub mod claims;
mod item;
mod json_lines;
mod jsonl;
pub(crate) mod lines;
mod problem;
pub(crate) mod python_json;
mod release;
mod source;
pub mod triples;

use std::collections::{BTreeMap, HashMap};
use std::ops::Range;
use std::path::Path;

use rayon::prelude::*;
use serde_json::Value;

pub use item::{Item, LineError, Record};
pub use lines::{Line, LineReader};
pub use problem::{Problem, Severity};
pub use source::{SAMPLE_DATA, Source};

use crate::taxonomy::{self, Category, Dimension, Evaluator};

/// The longest line a loader will hold in memory. Real PRISM lines are under 100 KB; anything
/// beyond this is reported and skipped without being buffered.
pub const MAX_LINE_BYTES: usize = 8 << 20;
/// The largest `tasks.json` or prompt file read.
const MAX_SMALL_FILE: u64 = 16 << 20;

/// What kind of input a dataset was read from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum DatasetKind {
    /// A PRISM release: `data/tasks.json` plus one JSONL per sub-task.
    Release,
    /// JSONL items carrying their own `dimension` and `category`.
    Jsonl,
}

/// One sub-task.
#[derive(Debug, Clone)]
pub struct Task {
    /// `<DIM>-<CAT>-<Name>`, e.g. `KE-FD-DefAn`.
    pub id: String,
    /// The release's 1-based `index`, when it has one.
    pub index: Option<u32>,
    pub dimension: Dimension,
    pub category: &'static Category,
    pub name: String,
    /// The item count the registry declares (the full release may have more than a slice holds).
    pub declared_items: Option<u64>,
    pub evaluator: Evaluator,
    /// Stem of the task prompt under `prompts/tasks/`.
    pub prompt: Option<String>,
    /// Data file, relative to the dataset's data directory.
    pub file: Option<String>,
    /// The task's items, as a range of `Dataset::items`.
    pub items: Range<usize>,
    /// Registry fields PRISM does not define, kept as they were.
    pub extra: Vec<(String, Value)>,
}

/// Task and judge prompt templates that travel with the dataset.
#[derive(Debug, Clone, Default)]
pub struct Prompts {
    /// `prompts/tasks/<stem>.md`, by stem.
    pub tasks: BTreeMap<String, String>,
    /// `prompts/judges/<stem>.md`, by stem.
    pub judges: BTreeMap<String, String>,
    /// The user's own wordings (`--judge-template`), by judge name: asked before the
    /// dataset's, for every task (never loaded from a dataset).
    pub judge_overrides: BTreeMap<String, String>,
}

/// A task the dataset's registry names, whether or not its items loaded: a dimension's rate is
/// complete only when every registered task of it is scored (PRISM-FORMAT.md).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Registered {
    pub id: String,
    pub dimension: Dimension,
    pub category: &'static Category,
}

#[derive(Debug, Clone)]
pub struct Dataset {
    /// Where it came from, for titles and reports.
    pub label: String,
    pub kind: DatasetKind,
    /// Every task the registry (`tasks.json`) names, loaded or not; for plain JSONL, the tasks
    /// that loaded.
    pub registry: Vec<Registered>,
    /// Tasks in display order: dimension, then category, then registry index or name.
    pub tasks: Vec<Task>,
    /// Items grouped by task (in task order), each task's items in file order.
    pub items: Vec<Item>,
    pub prompts: Prompts,
    id_index: HashMap<Box<str>, u32>,
}

/// A loaded dataset and everything that was wrong with its files.
#[derive(Debug)]
pub struct Loaded {
    pub dataset: Dataset,
    pub problems: Vec<Problem>,
}

impl Loaded {
    pub fn errors(&self) -> usize {
        self.problems.iter().filter(|p| p.is_error()).count()
    }

    /// What the errors are, in a few words a user can act on ("10 task files missing, 3 item
    /// lines skipped"), most common first. Empty when there are none.
    pub fn error_kinds(&self) -> String {
        let mut kinds: Vec<(&str, usize)> = Vec::new();
        let mut add = |k: &'static str| match kinds.iter_mut().find(|(n, _)| *n == k) {
            Some((_, c)) => *c += 1,
            None => kinds.push((k, 1)),
        };
        for p in self.problems.iter().filter(|p| p.is_error()) {
            let registry = p.file.ends_with("tasks.json");
            add(match p.field.as_str() {
                "file" if registry && p.reason.ends_with("does not exist") => {
                    "task file(s) missing"
                }
                "prompt" if registry => "task(s) without their prompt file",
                _ if registry => "registry entries skipped",
                "task" if p.line == 0 => "data file(s) no tasks.json entry names",
                _ if p.line > 0 => "item line(s) skipped",
                _ => "file(s) unreadable or empty",
            });
        }
        kinds.sort_by_key(|k| std::cmp::Reverse(k.1));
        kinds
            .iter()
            .map(|(k, n)| format!("{n} {k}"))
            .collect::<Vec<_>>()
            .join(", ")
    }
}

/// The first JSON record of a `.jsonl` file, or of the first `.jsonl` file of a directory that
/// is not a PRISM release: what kind of data a path holds (claims, triples) is read from it.
pub fn first_record(path: &Path) -> Option<serde_json::Value> {
    let file = if path.is_file() {
        path.to_path_buf()
    } else if path.is_dir()
        && !path.join("data").join("tasks.json").is_file()
        && !path.join("tasks.json").is_file()
    {
        path.join(
            source::Source::Dir(path.to_path_buf())
                .files_with_ext("", "jsonl")
                .first()?,
        )
    } else {
        return None;
    };
    let f = std::fs::File::open(&file).ok()?;
    let mut lines = LineReader::new(std::io::BufReader::new(f), MAX_LINE_BYTES);
    // The kind is read from the fields of the first record that can be read: an over-long
    // line, a broken one or one that is not an object says nothing of it. Python's NaN is read
    // as null (python_json). Only the first lines are tried, so a file that is not JSONL at all
    // is not read to its end.
    let mut tried = 0;
    while let Ok(Some((_, line))) = lines.next_line() {
        let Line::Text(t) = line else { continue };
        let Ok(t) = std::str::from_utf8(t) else {
            continue;
        };
        if t.trim().is_empty() {
            continue;
        }
        if let Ok((v @ serde_json::Value::Object(_), _)) = python_json::parse(t) {
            return Some(v);
        }
        tried += 1;
        if tried == FIRST_RECORD_TRIES {
            break;
        }
    }
    None
}

/// How many unreadable lines `first_record` reads past.
const FIRST_RECORD_TRIES: usize = 20;

/// Why nothing at all could be loaded.
#[derive(Debug, thiserror::Error)]
pub enum LoadError {
    #[error("{0}: no such file or directory")]
    NotFound(String),
    #[error(
        "{0}: not a PRISM release (no data/tasks.json), a .jsonl file, or a directory of .jsonl files"
    )]
    Unrecognised(String),
}

/// Loads whatever `path` is: a PRISM release directory (or its `data/` directory, or its
/// `tasks.json`), a JSONL file, or a directory of JSONL files.
pub fn load_path(path: &Path) -> Result<Loaded, LoadError> {
    let shown = path.display().to_string();
    if !path.exists() {
        return Err(LoadError::NotFound(shown));
    }
    if path.is_file() {
        let parent = path
            .parent()
            .filter(|p| !p.as_os_str().is_empty())
            .unwrap_or(Path::new("."));
        let name = path
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        let source = Source::Dir(parent.to_path_buf());
        if name == "tasks.json" {
            // Pointed at the registry itself: the release root is one level up when it is `data/`.
            return Ok(load_from_dir_path(parent));
        }
        if name.ends_with(".jsonl") || name.ends_with(".json") {
            let mut loaded = jsonl::load(&source, vec![name], "");
            sort_problems(&mut loaded.problems);
            loaded.dataset.label = shown;
            return Ok(loaded);
        }
        return Err(LoadError::Unrecognised(shown));
    }
    let loaded = load_from_dir_path(path);
    if loaded.dataset.items.is_empty()
        && loaded.problems.is_empty()
        && loaded.dataset.tasks.is_empty()
    {
        return Err(LoadError::Unrecognised(shown));
    }
    Ok(loaded)
}

fn load_from_dir_path(path: &Path) -> Loaded {
    // `prism-mini/data` (has tasks.json, prompts one level up) is read as `prism-mini`.
    if path.join("tasks.json").is_file()
        && !path.join("data/tasks.json").is_file()
        && let Some(parent) = path.parent()
        && path.file_name().is_some_and(|n| n == "data")
    {
        let mut l = load_source(Source::Dir(parent.to_path_buf()));
        l.dataset.label = parent.display().to_string();
        return l;
    }
    let mut l = load_source(Source::Dir(path.to_path_buf()));
    l.dataset.label = path.display().to_string();
    l
}

/// Loads the bundled sample release.
pub fn load_sample() -> Loaded {
    load_source(Source::sample())
}

/// Loads a source as a release when it has a registry, else as JSONL items.
pub fn load_source(source: Source) -> Loaded {
    let mut loaded = if source.is_file("data/tasks.json") {
        release::load(&source, "data")
    } else if source.is_file("tasks.json") {
        release::load(&source, "")
    } else {
        let files: Vec<String> = source
            .files_with_ext("", "jsonl")
            .into_iter()
            .filter(|f| !f.starts_with("prompts/"))
            .collect();
        jsonl::load(&source, files, "")
    };
    // What the walk refused is named, never skipped in silence.
    for rel in source.files_and_refused("", "jsonl").1 {
        loaded.problems.push(Problem::error(
            source.display(&rel),
            0,
            "file",
            "a symlink leads out of the dataset directory; not read",
        ));
    }
    sort_problems(&mut loaded.problems);
    loaded
}

/// Problems in reading order: by file, then line (stable, so one line's problems keep their order).
fn sort_problems(problems: &mut [Problem]) {
    problems.sort_by(|a, b| a.file.cmp(&b.file).then(a.line.cmp(&b.line)));
}

/// Lines read from one JSONL file: the records that parsed, and the problems found.
struct FileRecords {
    records: Vec<(u32, Record)>,
    problems: Vec<Problem>,
    lines: usize,
}

/// Reads every line of a JSONL file into records. Lines that are not a JSON object, are not
/// UTF-8, are too long or have a field of the wrong type become problems and are skipped.
fn read_records(source: &Source, rel: &str, shown: &str) -> FileRecords {
    let mut out = FileRecords {
        records: Vec::new(),
        problems: Vec::new(),
        lines: 0,
    };
    let reader = match source.open(rel) {
        Ok(r) => r,
        Err(e) => {
            out.problems.push(Problem::error(
                shown,
                0,
                "file",
                format!("cannot read: {e}"),
            ));
            return out;
        }
    };
    let mut lines = LineReader::new(reader, MAX_LINE_BYTES);
    let mut non_blank = 0usize;
    loop {
        let (no, line) = match lines.next_line() {
            Ok(Some(l)) => l,
            Ok(None) => break,
            Err(e) => {
                out.problems.push(Problem::error(
                    shown,
                    lines.line_no + 1,
                    "-",
                    format!("read error, rest of file skipped: {e}"),
                ));
                break;
            }
        };
        let bytes = match line {
            Line::TooLong(n) => {
                non_blank += 1;
                out.problems.push(Problem::error(
                    shown,
                    no,
                    "-",
                    format!(
                        "line is {n} bytes, over the {} MiB limit; skipped",
                        MAX_LINE_BYTES >> 20
                    ),
                ));
                continue;
            }
            Line::Text(t) => t,
        };
        if bytes.iter().all(|b| b.is_ascii_whitespace()) {
            continue;
        }
        non_blank += 1;
        // A byte-order mark (some editors write one) is not part of the first record.
        let bytes = if no == 1 {
            bytes.strip_prefix(b"\xef\xbb\xbf").unwrap_or(bytes)
        } else {
            bytes
        };
        let text = match std::str::from_utf8(bytes) {
            Ok(t) => t,
            Err(e) => {
                out.problems.push(Problem::error(
                    shown,
                    no,
                    "-",
                    format!("invalid UTF-8 at byte {}", e.valid_up_to() + 1),
                ));
                continue;
            }
        };
        match Record::parse(text) {
            Ok(rec) if rec.field_errors.is_empty() => out.records.push((no as u32, rec)),
            Ok(rec) => {
                for (field, reason) in rec.field_errors {
                    out.problems.push(Problem::error(shown, no, field, reason));
                }
            }
            Err(e) => out
                .problems
                .push(Problem::error(shown, no, "-", e.to_string())),
        }
    }
    out.lines = lines.line_no;
    if non_blank == 0 {
        out.problems
            .push(Problem::error(shown, 0, "-", "empty file: no items"));
    }
    out
}

/// Reads several files in parallel (they are independent), keeping their order.
fn read_all(source: &Source, files: &[(String, String)]) -> Vec<FileRecords> {
    files
        .par_iter()
        .map(|(rel, shown)| read_records(source, rel, shown))
        .collect()
}

/// Checks a record's own fields (id, question, what the evaluator needs) and turns it into an
/// item of task `task_idx`. Returns `None`, with problems recorded, when the line must be skipped.
fn record_to_item(
    rec: Record,
    line: u32,
    task_idx: u32,
    evaluator: Evaluator,
    shown: &str,
    problems: &mut Vec<Problem>,
) -> Option<Item> {
    let before = problems.len();
    let l = line as usize;
    if rec.id.as_deref().is_none_or(|s| s.trim().is_empty()) {
        problems.push(Problem::error(shown, l, "id", "missing"));
    }
    if rec.question.is_none() {
        problems.push(Problem::error(shown, l, "question", "missing"));
    }
    let item = Item {
        id: rec.id.unwrap_or_default(),
        task: task_idx,
        source_id: rec.source_id,
        question: rec.question.unwrap_or_default(),
        answer: rec.answer,
        options: rec.options,
        procedure: rec.procedure,
        test_input: rec.test_input,
        test_output: rec.test_output,
        format: rec.format,
        word_range: rec.word_range,
        language: rec.language,
        instruction_id: rec.instruction_id,
        kwargs: rec.kwargs,
        extra: rec.extra.into_boxed_slice(),
        line,
    };
    for field in evaluator.required_fields() {
        if !item.has_field(field) {
            problems.push(Problem::error(
                shown,
                l,
                *field,
                format!("missing, and the {evaluator} evaluator needs it"),
            ));
        }
    }
    if evaluator == Evaluator::Choice
        && let (Some(ans), Some(opts)) = (&item.answer, &item.options)
    {
        let ans = ans.trim();
        let letters = opts.len().max(4);
        match (0..letters).position(|i| taxonomy::option_letter(i) == ans) {
            Some(i) if i >= taxonomy::choice_letters(opts.len()) => {
                problems.push(Problem::warning(
                    shown,
                    l,
                    "answer",
                    format!(
                        "{ans:?} is beyond H, the last letter PRISM's extraction considers: no \
                         response can match it"
                    ),
                ));
            }
            Some(_) => {}
            None => problems.push(Problem::error(
                shown,
                l,
                "answer",
                format!(
                    "{ans:?} is not an option letter (A..{})",
                    taxonomy::option_letter(letters - 1)
                ),
            )),
        }
    }
    // Warnings keep the item; an error skips its line.
    problems[before..]
        .iter()
        .all(|p| !p.is_error())
        .then_some(item)
}

/// A task before its items are attached.
struct TaskDraft {
    task: Task,
    items: Vec<Item>,
}

impl Dataset {
    /// Orders tasks for display, lays items out contiguously by task, drops duplicate ids (the
    /// first one wins, the others are reported) and builds the id index.
    fn assemble(
        label: String,
        kind: DatasetKind,
        mut drafts: Vec<TaskDraft>,
        prompts: Prompts,
        registry: Option<Vec<Registered>>,
        problems: &mut Vec<Problem>,
        shown_file: impl Fn(&Task) -> String,
    ) -> Dataset {
        drafts.sort_by(|a, b| {
            let key = |t: &Task| {
                (
                    t.dimension,
                    taxonomy::category_index(t.category),
                    t.index.unwrap_or(u32::MAX),
                    t.name.clone(),
                )
            };
            key(&a.task).cmp(&key(&b.task))
        });
        let total: usize = drafts.iter().map(|d| d.items.len()).sum();
        let mut items = Vec::with_capacity(total);
        let mut tasks = Vec::with_capacity(drafts.len());
        let mut id_index: HashMap<Box<str>, u32> = HashMap::with_capacity(total);
        let mut first_seen: HashMap<u32, (String, u32)> = HashMap::new();
        for (ti, draft) in drafts.into_iter().enumerate() {
            let mut task = draft.task;
            let start = items.len();
            let file = shown_file(&task);
            for mut item in draft.items {
                if let Some(&prev) = id_index.get(&item.id) {
                    let (pfile, pline) = first_seen
                        .get(&prev)
                        .cloned()
                        .unwrap_or_else(|| (String::from("?"), 0));
                    problems.push(Problem::error(
                        &file,
                        item.line as usize,
                        "id",
                        format!(
                            "duplicate id {:?}, first at {pfile}:{pline}; skipped",
                            item.id
                        ),
                    ));
                    continue;
                }
                item.task = ti as u32;
                let idx = items.len() as u32;
                id_index.insert(item.id.clone(), idx);
                first_seen.insert(idx, (file.clone(), item.line));
                items.push(item);
            }
            task.items = start..items.len();
            tasks.push(task);
        }
        let registry = registry.unwrap_or_else(|| {
            tasks
                .iter()
                .map(|t| Registered {
                    id: t.id.clone(),
                    dimension: t.dimension,
                    category: t.category,
                })
                .collect()
        });
        Dataset {
            label,
            kind,
            registry,
            tasks,
            items,
            prompts,
            id_index,
        }
    }

    pub fn item_by_id(&self, id: &str) -> Option<&Item> {
        self.id_index.get(id).map(|&i| &self.items[i as usize])
    }

    pub fn index_of(&self, id: &str) -> Option<usize> {
        self.id_index.get(id).map(|&i| i as usize)
    }

    pub fn task_of(&self, item: &Item) -> &Task {
        &self.tasks[item.task as usize]
    }

    /// Sum of the registry's declared counts, when every task declares one.
    pub fn declared_items(&self) -> Option<u64> {
        self.tasks.iter().map(|t| t.declared_items).sum()
    }

    pub fn counts(&self) -> Counts {
        let mut c = Counts::default();
        for t in &self.tasks {
            let n = t.items.len();
            *c.per_dimension
                .entry(t.dimension.code().into())
                .or_default() += n;
            *c.per_category
                .entry(format!("{}-{}", t.dimension.code(), t.category.code))
                .or_default() += n;
            c.per_task.insert(t.id.clone(), n);
        }
        c
    }
}

/// Item counts by dimension, category (`DIM-CAT`) and task.
#[derive(Debug, Default, Clone, serde::Serialize)]
pub struct Counts {
    pub per_dimension: BTreeMap<String, usize>,
    pub per_category: BTreeMap<String, usize>,
    pub per_task: BTreeMap<String, usize>,
}

/// Loads `prompts/tasks/*.md` and `prompts/judges/*.md` under `root_rel`.
fn load_prompts(source: &Source, root_rel: &str, problems: &mut Vec<Problem>) -> Prompts {
    let mut prompts = Prompts::default();
    for (sub, map) in [
        ("tasks", &mut prompts.tasks),
        ("judges", &mut prompts.judges),
    ] {
        let dir = join(root_rel, &format!("prompts/{sub}"));
        for rel in source.files_with_ext(&dir, "md") {
            let stem = rel
                .rsplit('/')
                .next()
                .unwrap_or(&rel)
                .trim_end_matches(".md")
                .to_string();
            match source.read_bytes(&rel, MAX_SMALL_FILE) {
                Ok(bytes) => match String::from_utf8(bytes) {
                    Ok(text) => {
                        map.insert(stem, text);
                    }
                    Err(e) => problems.push(Problem::error(
                        source.display(&rel),
                        line_of(e.as_bytes(), e.utf8_error().valid_up_to()),
                        "-",
                        "invalid UTF-8 in prompt",
                    )),
                },
                Err(e) => problems.push(Problem::error(
                    source.display(&rel),
                    0,
                    "-",
                    format!("cannot read prompt: {e}"),
                )),
            }
        }
    }
    prompts
}

/// 1-based line holding byte `offset`.
fn line_of(bytes: &[u8], offset: usize) -> usize {
    memchr::memchr_iter(b'\n', &bytes[..offset.min(bytes.len())]).count() + 1
}

fn join(a: &str, b: &str) -> String {
    if a.is_empty() {
        b.to_string()
    } else {
        format!("{a}/{b}")
    }
}
