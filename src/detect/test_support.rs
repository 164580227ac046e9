//! Targets and pair verdicts built by hand, for the detection tests (results, analyses, the
//! claims browser).

use crate::dataset::claims::Truth;
use crate::store::{Class, PairRecord, Target, Verdict};

/// A claim's target: classified `class` against `label`, with a reference.
pub(crate) fn target(idx: u32, label: Truth, class: Class) -> Target {
    Target {
        run_id: "d".into(),
        idx,
        item_id: format!("c{idx}"),
        task_id: "topic".into(),
        model: "m".into(),
        temperature: Some(0.5),
        source_run: None,
        source_job: None,
        prompt: String::new(),
        question: "claim".into(),
        params: "{}".into(),
        answer: Some("a reference".into()),
        answer_error: None,
        refused: false,
        label: Some(label),
        class: Some(class),
        class_reply: None,
        class_error: None,
        rounds: 1,
    }
}

pub(crate) fn pair(target: u32, round: u32, k: u32, verdict: Verdict) -> PairRecord {
    PairRecord {
        run_id: "d".into(),
        target,
        round,
        k,
        wording: 0,
        judge: "m".into(),
        verdict,
        explanation: None,
        quote_a: None,
        quote_b: None,
        reply: None,
        error: None,
        attempts: 1,
        created_at: 0,
    }
}
