//! Plain JSONL items (a file, or a directory of them) with no registry: each record carries its
//! own `dimension` and `category`, and optionally `evaluator` and `prompt`. Tasks are formed from
//! the records' `task` ids, in the order first seen.

use std::collections::HashMap;

use super::{
    DatasetKind, Loaded, Problem, Record, Source, Task, TaskDraft, load_prompts, read_all,
    record_to_item, release::short_name,
};
use crate::taxonomy::{self, Dimension, Evaluator};

pub(super) fn load(source: &Source, files: Vec<String>, root_rel: &str) -> Loaded {
    let mut problems = Vec::new();
    let prompts = load_prompts(source, root_rel, &mut problems);
    let files: Vec<(String, String)> = files
        .into_iter()
        .map(|rel| {
            let shown = source.display(&rel);
            (rel, shown)
        })
        .collect();
    if files.is_empty() {
        problems.push(Problem::error(
            source.label(),
            0,
            "-",
            "no data/tasks.json and no .jsonl files",
        ));
    }
    let read = read_all(source, &files);

    let mut drafts: Vec<TaskDraft> = Vec::new();
    let mut by_id: HashMap<String, (usize, String, usize)> = HashMap::new();
    let mut task_files: HashMap<String, String> = HashMap::new();
    for (fr, (_, shown)) in read.into_iter().zip(&files) {
        problems.extend(fr.problems);
        for (line, rec) in fr.records {
            let l = line as usize;
            let Some(placed) = place(&rec, shown, l, &mut problems) else {
                continue;
            };
            let (dim, cat, evaluator, task_id) = placed;
            let idx = match by_id.get(&task_id) {
                Some((idx, first_file, first_line)) => {
                    let t = &drafts[*idx].task;
                    let mut clash = |field: &str, ours: String, theirs: String| {
                        problems.push(Problem::error(
                            shown,
                            l,
                            field,
                            format!(
                                "{ours} disagrees with {theirs} given for task {task_id:?} at {first_file}:{first_line}"
                            ),
                        ));
                    };
                    if t.dimension != dim || t.category.code != cat.code {
                        clash(
                            "category",
                            format!("{dim}-{}", cat.code),
                            format!("{}-{}", t.dimension, t.category.code),
                        );
                        continue;
                    }
                    if t.evaluator != evaluator {
                        clash("evaluator", evaluator.to_string(), t.evaluator.to_string());
                        continue;
                    }
                    *idx
                }
                None => {
                    let name = short_name(&task_id);
                    let safe = crate::text::file_name(&name);
                    if safe != name {
                        // Files written per task (scores, a review bank) use the safe form, so
                        // a name like `../../x` never climbs out of the directory it goes to.
                        problems.push(Problem::warning(
                            shown,
                            l,
                            "task",
                            format!(
                                "the name {name:?} of task {task_id:?} holds path or odd characters; files written for it are named {safe:?}"
                            ),
                        ));
                    }
                    let prompt = rec
                        .prompt
                        .as_deref()
                        .map(str::to_string)
                        .or_else(|| default_prompt(&prompts.tasks, &task_id, dim, cat.code));
                    drafts.push(TaskDraft {
                        task: Task {
                            id: task_id.clone(),
                            index: None,
                            dimension: dim,
                            category: cat,
                            name,
                            declared_items: None,
                            evaluator,
                            prompt,
                            file: None,
                            items: 0..0,
                            extra: Vec::new(),
                        },
                        items: Vec::new(),
                    });
                    by_id.insert(task_id.clone(), (drafts.len() - 1, shown.clone(), l));
                    task_files.insert(task_id.clone(), shown.clone());
                    drafts.len() - 1
                }
            };
            if let Some(item) = record_to_item(rec, line, 0, evaluator, shown, &mut problems) {
                drafts[idx].items.push(item);
            }
        }
    }
    let dataset = super::Dataset::assemble(
        source.label(),
        DatasetKind::Jsonl,
        drafts,
        prompts,
        None,
        &mut problems,
        |t| task_files.get(&t.id).cloned().unwrap_or_default(),
    );
    Loaded { dataset, problems }
}

/// Where a record sits: its dimension, category, evaluator and task id.
fn place(
    rec: &Record,
    shown: &str,
    line: usize,
    problems: &mut Vec<Problem>,
) -> Option<(Dimension, &'static taxonomy::Category, Evaluator, String)> {
    let before = problems.len();
    let dim = match rec.dimension.as_deref() {
        Some(d) => match d.parse::<Dimension>() {
            Ok(d) => Some(d),
            Err(e) => {
                problems.push(Problem::error(shown, line, "dimension", e));
                None
            }
        },
        None => {
            problems.push(Problem::error(
                shown,
                line,
                "dimension",
                "missing (needed when there is no tasks.json)",
            ));
            None
        }
    };
    let cat = match (dim, rec.category.as_deref()) {
        (Some(d), Some(c)) => match taxonomy::category_or_reason(d, c) {
            Ok(cat) => Some(cat),
            Err(reason) => {
                problems.push(Problem::error(shown, line, "category", reason));
                None
            }
        },
        (_, None) => {
            problems.push(Problem::error(
                shown,
                line,
                "category",
                "missing (needed when there is no tasks.json)",
            ));
            None
        }
        _ => None,
    };
    let evaluator = match rec.evaluator.as_deref() {
        Some(e) => match e.parse::<Evaluator>() {
            Ok(e) => Some(e),
            Err(msg) => {
                problems.push(Problem::error(shown, line, "evaluator", msg));
                None
            }
        },
        None => Some(infer_evaluator(rec)),
    };
    let task = match rec.task.as_deref().map(str::trim) {
        Some(t) if !t.is_empty() => Some(t.to_string()),
        _ => {
            problems.push(Problem::error(shown, line, "task", "missing"));
            None
        }
    };
    if problems.len() != before {
        return None;
    }
    Some((dim?, cat?, evaluator?, task?))
}

/// The evaluator a record's fields imply when it names none, in the same spirit as the release:
/// the most specific field decides.
pub(super) fn infer_evaluator(rec: &Record) -> Evaluator {
    let answer = rec.answer.as_deref().map(|a| a.trim().to_ascii_uppercase());
    if rec.instruction_id.is_some() && rec.format.is_none() {
        Evaluator::Ifeval
    } else if rec.format.is_some() {
        Evaluator::DataFormat
    } else if rec.word_range.is_some() {
        Evaluator::WordRange
    } else if rec.language.is_some() {
        Evaluator::Language
    } else if rec.options.is_some() {
        Evaluator::Choice
    } else if rec.test_input.is_some() {
        Evaluator::JudgeCode
    } else {
        match answer.as_deref() {
            Some("[NO_INFO]") => Evaluator::Abstain,
            Some("[TRUE]") | Some("[FALSE]") => Evaluator::TruthLabel,
            Some(_) => Evaluator::AnswerMatch,
            None => Evaluator::JudgeClaims,
        }
    }
}

/// The task prompt to use when a record names none: the task's own, else its category's.
fn default_prompt(
    prompts: &std::collections::BTreeMap<String, String>,
    task_id: &str,
    dim: Dimension,
    cat: &str,
) -> Option<String> {
    let by_cat = format!("{dim}-{cat}");
    [task_id.to_string(), by_cat]
        .into_iter()
        .find(|k| prompts.contains_key(k))
}
