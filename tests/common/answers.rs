//! Answers written into a store by hand, as a finished run would have stored them.
#![allow(dead_code)] // each test file uses some of it

use prism::store::ResponseRecord;

/// A finished answer (`stop`, one attempt, no timings or tokens) of job `job` of `run`.
pub fn stored_answer(
    (run, job): (&str, u32),
    (item, task): (&str, &str),
    model: &str,
    text: &str,
) -> ResponseRecord {
    ResponseRecord {
        run_id: run.into(),
        job_idx: job,
        item_id: item.into(),
        task_id: task.into(),
        model: model.into(),
        sample: 0,
        text: Some(text.into()),
        error: None,
        finish_reason: Some("stop".into()),
        prompt_tokens: None,
        completion_tokens: None,
        latency_ms: None,
        first_token_ms: None,
        attempts: 1,
        params: "{}".into(),
        request_hash: String::new(),
        cached: false,
        created_at: 0,
        cache_key: None,
        logprobs: None,
    }
}
