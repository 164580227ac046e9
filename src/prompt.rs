//! Building the request a model sees for an item, exactly as PRISM-FORMAT.md states: one user
//! message made of the task prompt, a blank line, then the formatted question.

use serde_json::Value;

use crate::dataset::{Dataset, Item, Task};
use crate::provider::{ChatRequest, Message, Params};
use crate::taxonomy::{Dimension, Evaluator};

/// The formatted question: the item's question plus its options, procedure or test input.
pub fn format_question(item: &Item) -> String {
    let mut q = String::with_capacity(item.question.len() + 64);
    q.push_str(&item.question);
    if let Some(opts) = item.options.as_ref().filter(|o| !o.is_empty()) {
        q.push_str("\n\nOptions:");
        for (i, o) in opts.iter().enumerate() {
            q.push('\n');
            q.push_str(&option_letter(i));
            q.push_str(". ");
            q.push_str(o);
        }
    }
    if let Some(steps) = item.procedure.as_ref().filter(|s| !s.is_empty()) {
        q.push_str("\n\nProcedure:");
        for s in steps.iter() {
            q.push('\n');
            q.push_str(&step_text(s));
        }
    }
    if let Some(input) = &item.test_input {
        q.push_str("\n\nTest Input:\n");
        q.push_str(input);
    }
    q
}

/// The whole user message for `item`: task prompt, blank line, formatted question. Without a
/// task prompt (a JSONL dataset with none), the formatted question alone.
pub fn user_message(dataset: &Dataset, item: &Item) -> String {
    let task = dataset.task_of(item);
    let question = format_question(item);
    match task
        .prompt
        .as_ref()
        .and_then(|p| dataset.prompts.tasks.get(p))
    {
        Some(prompt) => format!("{}\n\n{}", prompt.trim_end(), question),
        None => question,
    }
}

pub use crate::taxonomy::option_letter;

/// A procedure step: a string as is; a list (often a triple) joined by spaces.
pub fn step_text(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        Value::Array(a) => a.iter().map(step_text).collect::<Vec<_>>().join(" "),
        Value::Null => String::new(),
        other => other.to_string(),
    }
}

/// Open-ended tasks (judged against a rubric, no single answer): RE-IIF-* and code generation.
pub fn is_open_ended(task: &Task) -> bool {
    matches!(
        task.evaluator,
        Evaluator::JudgeClaims | Evaluator::JudgeCode
    ) || task.id.starts_with("RE-IIF-")
        || task.id == "RE-MRF-Code_Generation"
}

/// The paper's sampling parameters: KE, KM, IFE and open-ended tasks temperature 0.8, top-p 0.8;
/// closed-ended RE temperature 0.4, top-p 0.95.
pub fn default_params(task: &Task) -> Params {
    let (temperature, top_p) = if task.dimension == Dimension::RE && !is_open_ended(task) {
        (0.4, 0.95)
    } else {
        (0.8, 0.8)
    };
    Params {
        temperature: Some(temperature),
        top_p: Some(top_p),
        ..Params::default()
    }
}

/// Up to `k` in-context examples for `item`: other items of the same sub-task that have a
/// reference answer, chosen deterministically (the same every run, different per item), never
/// the item itself.
pub fn shot_examples(ds: &Dataset, item_idx: usize, k: usize) -> Vec<usize> {
    if k == 0 {
        return Vec::new();
    }
    let item = &ds.items[item_idx];
    let task = ds.task_of(item);
    let mut candidates: Vec<(u64, usize)> = task
        .items
        .clone()
        .filter(|&i| i != item_idx && ds.items[i].answer.is_some())
        .map(|i| {
            (
                fnv1a(&[item.id.as_bytes(), b"\0", ds.items[i].id.as_bytes()]),
                i,
            )
        })
        .collect();
    candidates.sort_unstable();
    candidates.into_iter().take(k).map(|(_, i)| i).collect()
}

/// The chat request for one item: each example as a user turn (built exactly like the real
/// request) answered by an assistant turn holding its reference answer, then the item.
pub fn build_request(ds: &Dataset, item_idx: usize, shots: usize, params: Params) -> ChatRequest {
    let mut messages = Vec::with_capacity(shots * 2 + 1);
    for ex in shot_examples(ds, item_idx, shots) {
        let e = &ds.items[ex];
        messages.push(Message::user(user_message(ds, e)));
        messages.push(Message::assistant(e.answer.as_deref().unwrap_or_default()));
    }
    messages.push(Message::user(user_message(ds, &ds.items[item_idx])));
    ChatRequest { messages, params }
}

/// FNV-1a: a stable hash (the same on every platform and Rust version), for deterministic picks.
fn fnv1a(parts: &[&[u8]]) -> u64 {
    let mut h: u64 = 0xcbf29ce484222325;
    for p in parts {
        for &b in *p {
            h ^= b as u64;
            h = h.wrapping_mul(0x100000001b3);
        }
    }
    h
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn letters_continue_past_z() {
        assert_eq!(option_letter(0), "A");
        assert_eq!(option_letter(25), "Z");
        assert_eq!(option_letter(26), "AA");
    }

    #[test]
    fn triples_are_joined_by_spaces() {
        let v: Value = serde_json::json!(["Hobart", "country", "Australia"]);
        assert_eq!(step_text(&v), "Hobart country Australia");
    }

    #[test]
    fn shots_are_deterministic_from_the_same_task_and_never_the_item() {
        let ds = crate::dataset::load_sample().dataset;
        let idx = ds.index_of("KE-FD-Myths-0002").unwrap();
        let a = shot_examples(&ds, idx, 3);
        assert_eq!(a.len(), 3);
        assert_eq!(a, shot_examples(&ds, idx, 3));
        assert!(!a.contains(&idx));
        for &e in &a {
            assert_eq!(ds.items[e].task, ds.items[idx].task);
        }
        let one = shot_examples(&ds, idx, 1);
        assert_eq!(one[0], a[0], "1-shot is the first of the 3-shot examples");
        let req = build_request(&ds, idx, 1, Params::default());
        assert_eq!(req.messages.len(), 3);
        assert_eq!(
            req.messages[1].content,
            ds.items[a[0]].answer.as_deref().unwrap()
        );
        assert_eq!(req.messages[2].content, user_message(&ds, &ds.items[idx]));
    }

    #[test]
    fn sampling_defaults_follow_the_paper() {
        let ds = crate::dataset::load_sample().dataset;
        let p = |id: &str| default_params(ds.task_of(ds.item_by_id(id).unwrap()));
        assert_eq!(p("KE-FD-Myths-0001").temperature, Some(0.8));
        assert_eq!(p("RE-LF-Syllogisms-0001").temperature, Some(0.4));
        assert_eq!(p("RE-LF-Syllogisms-0001").top_p, Some(0.95));
        assert_eq!(p("RE-IIF-Summaries-0001").temperature, Some(0.8));
        assert_eq!(p("RE-MRF-Code-0001").top_p, Some(0.8));
    }
}
