//! The answers a detection run tests: answers stored by a run, items whose answer the run asks
//! for first, or claims (one target per claim, model and generation temperature). Each target
//! carries its prompt, question and sampling parameters, so a run resumes without its dataset.

use crate::dataset::Dataset;
use crate::dataset::claims::ClaimSet;
use crate::prompt;
use crate::provider::{ModelConfig, Params};
use crate::store::{ResponseRecord, Target};

fn blank(run_id: &str, idx: u32) -> Target {
    Target {
        run_id: run_id.to_string(),
        idx,
        item_id: String::new(),
        task_id: String::new(),
        model: String::new(),
        temperature: None,
        source_run: None,
        source_job: None,
        prompt: String::new(),
        question: String::new(),
        params: "{}".into(),
        answer: None,
        answer_error: None,
        refused: false,
        label: None,
        class: None,
        class_reply: None,
        class_error: None,
        rounds: 1,
    }
}

/// The task prompt of an item's sub-task (empty when it has none).
fn task_prompt(ds: &Dataset, item: usize) -> String {
    let task = ds.task_of(&ds.items[item]);
    task.prompt
        .as_ref()
        .and_then(|p| ds.prompts.tasks.get(p))
        .cloned()
        .unwrap_or_default()
}

/// Targets for stored answers (failed ones are skipped). Answers whose item is not in `ds` are
/// returned apart, by item id, for the caller to name.
pub fn from_answers(
    run_id: &str,
    ds: &Dataset,
    responses: &[ResponseRecord],
) -> (Vec<Target>, Vec<String>) {
    let mut out = Vec::new();
    let mut unknown = Vec::new();
    for r in responses {
        let Some(text) = &r.text else { continue };
        let Some(item) = ds.index_of(&r.item_id) else {
            unknown.push(r.item_id.clone());
            continue;
        };
        let mut t = blank(run_id, out.len() as u32);
        t.item_id = r.item_id.clone();
        t.task_id = r.task_id.clone();
        t.model = r.model.clone();
        t.source_run = Some(r.run_id.clone());
        t.source_job = Some(r.job_idx);
        t.prompt = task_prompt(ds, item);
        t.question = prompt::format_question(&ds.items[item]);
        // The samples are asked as the answer was (its temperature, top-p, length).
        t.params = if r.params.trim().is_empty() {
            "{}".into()
        } else {
            r.params.clone()
        };
        t.answer = Some(text.clone());
        out.push(t);
    }
    (out, unknown)
}

/// Targets for items with no stored answer to test: the run asks for one first, exactly as a
/// run would (the sub-task's parameters under the model's and `over`).
pub fn from_items(
    run_id: &str,
    ds: &Dataset,
    items: &[usize],
    models: &[ModelConfig],
    over: &Params,
) -> Vec<Target> {
    let mut out = Vec::new();
    for &i in items {
        let item = &ds.items[i];
        let task = ds.task_of(item);
        for m in models {
            let mut t = blank(run_id, out.len() as u32);
            t.item_id = item.id.to_string();
            t.task_id = task.id.clone();
            t.model = m.name.clone();
            t.prompt = task_prompt(ds, i);
            t.question = prompt::format_question(item);
            let params = prompt::default_params(task)
                .overlay(&m.params)
                .overlay(over);
            t.params = serde_json::to_string(&params).unwrap_or_else(|_| "{}".into());
            out.push(t);
        }
    }
    out
}

/// Targets for claims: one per claim, model and generation temperature (AutoHall).
pub fn from_claims(
    run_id: &str,
    set: &ClaimSet,
    models: &[ModelConfig],
    temperatures: &[f64],
    over: &Params,
) -> Vec<Target> {
    let mut out = Vec::new();
    for &temp in temperatures {
        for m in models {
            for c in &set.claims {
                let mut t = blank(run_id, out.len() as u32);
                t.item_id = c.id.clone();
                t.task_id = c.topic.clone();
                t.model = m.name.clone();
                t.temperature = Some(temp);
                t.question = c.claim.clone();
                t.label = Some(c.label);
                let params = m.params.overlay(over).overlay(&Params {
                    temperature: Some(temp),
                    ..Params::default()
                });
                t.params = serde_json::to_string(&params).unwrap_or_else(|_| "{}".into());
                out.push(t);
            }
        }
    }
    out
}
