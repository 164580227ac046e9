//! Building the request a model sees for an item, exactly as PRISM-FORMAT.md states: one user
//! message made of the task prompt, a blank line, then the formatted question.

use serde_json::Value;

use crate::dataset::{Dataset, Item};

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

/// `A`, `B`, ... `Z`, then `AA` for the (unlikely) 27th option.
pub fn option_letter(i: usize) -> String {
    if i < 26 {
        ((b'A' + i as u8) as char).to_string()
    } else {
        format!("{}{}", option_letter(i / 26 - 1), option_letter(i % 26))
    }
}

/// A procedure step: a string as is; a list (often a triple) joined by spaces.
pub fn step_text(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        Value::Array(a) => a.iter().map(step_text).collect::<Vec<_>>().join(" "),
        Value::Null => String::new(),
        other => other.to_string(),
    }
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
}
