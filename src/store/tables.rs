//! The tables every run has (runs, jobs, answers, scores, the cache, the review panel's
//! decisions and drafts), described once as `lane_tables` describes the lanes' tables: their
//! columns as both backends hold them (PostgreSQL keeps some more of its own: a change number,
//! a job's lease), types and key. Answers and scores are converted to and from their rows by
//! these descriptions (`store::record`), for both backends; a test checks every description
//! against both schemas (SQLite's migrations, PostgreSQL's), so a column added to one and not
//! the other, or to neither description, fails.

use super::lane_tables::{Col, Table};

use Col::{Blob, Bool, Int, Real, Text};

pub static RUNS: Table = Table {
    name: "runs",
    cols: &[
        ("id", Text),
        ("created_at", Int),
        ("dataset", Text),
        ("config", Text),
        ("status", Text),
        ("name", Text),
        ("tags", Text),
    ],
    key: 1,
    behind: "false",
    run_col: Some("id"),
    changes: false,
};

pub static JOBS: Table = Table {
    name: "jobs",
    cols: &[
        ("run_id", Text),
        ("idx", Int),
        ("item_id", Text),
        ("task_id", Text),
        ("model", Text),
        ("sample", Int),
        ("state", Text),
    ],
    key: 2,
    behind: "jobs.state <> 'done' AND excluded.state = 'done'",
    run_col: Some("run_id"),
    changes: false,
};

pub static RESPONSES: Table = Table {
    name: "responses",
    cols: &[
        ("run_id", Text),
        ("job_idx", Int),
        ("item_id", Text),
        ("task_id", Text),
        ("model", Text),
        ("sample", Int),
        ("text", Text),
        ("error", Text),
        ("finish_reason", Text),
        ("prompt_tokens", Int),
        ("completion_tokens", Int),
        ("latency_ms", Int),
        ("first_token_ms", Int),
        ("attempts", Int),
        ("params", Text),
        ("request_hash", Text),
        ("cached", Bool),
        ("created_at", Int),
        // The answer as its own cache entry, and its tokens: read apart (they are big).
        ("cache_key", Text),
        ("logprobs", Blob),
    ],
    key: 2,
    behind: "responses.error IS NOT NULL AND excluded.error IS NULL",
    run_col: Some("run_id"),
    changes: true,
};

/// How many of [`RESPONSES`]' columns an answer is read with when its tokens are not wanted.
pub const RESPONSE_READ: usize = 18;

pub static SCORES: Table = Table {
    name: "scores",
    cols: &[
        ("run_id", Text),
        ("job_idx", Int),
        ("item_id", Text),
        ("task_id", Text),
        ("model", Text),
        ("sample", Int),
        ("evaluator", Text),
        ("score", Real),
        ("detail", Text),
        ("judge", Text),
        ("judge_reply", Text),
        ("judge_attempts", Int),
        ("created_at", Int),
        ("rule_score", Real),
    ],
    key: 2,
    behind: "false",
    run_col: Some("run_id"),
    changes: true,
};

pub static CACHE: Table = Table {
    name: "cache",
    cols: &[
        ("key", Text),
        ("text", Text),
        ("finish_reason", Text),
        ("prompt_tokens", Int),
        ("completion_tokens", Int),
        ("latency_ms", Int),
        ("created_at", Int),
        ("logprobs", Blob),
    ],
    key: 1,
    behind: "false",
    run_col: None,
    changes: false,
};

pub static REVIEW_DECISIONS: Table = Table {
    name: "review_decisions",
    cols: &[
        ("uid", Text),
        ("item_id", Text),
        ("task_id", Text),
        ("reviewer", Text),
        ("round", Int),
        ("clarity", Int),
        ("relevance", Int),
        ("coherence", Int),
        ("decision", Text),
        ("rationale", Text),
        ("edited_question", Text),
        ("edited_answer", Text),
        ("created_at", Int),
    ],
    key: 1,
    behind: "false",
    run_col: None,
    changes: false,
};

pub static REVIEW_DRAFTS: Table = Table {
    name: "review_drafts",
    cols: &[
        ("item_id", Text),
        ("reviewer", Text),
        ("round", Int),
        ("clarity", Int),
        ("relevance", Int),
        ("coherence", Int),
        ("decision", Text),
        ("rationale", Text),
        ("edited_question", Text),
        ("updated_at", Int),
    ],
    key: 2,
    behind: "false",
    run_col: None,
    changes: false,
};

/// Per run x model x sub-task, what its scores come to (`store::summaries`): kept with the
/// scores, read by every list and rate.
pub static RUN_SUMMARIES: Table = Table {
    name: "run_summaries",
    cols: &[
        ("run_id", Text),
        ("model", Text),
        ("task_id", Text),
        ("scored", Int),
        ("unscored", Int),
        ("sum", Real),
        ("hallucinated", Int),
        ("rows", Int),
    ],
    key: 3,
    behind: "false",
    run_col: Some("run_id"),
    changes: true,
};

/// Per item x model x sample, the newest run's score (`store::summaries`): what the TUI's tree
/// opens on.
pub static LATEST_SCORES: Table = Table {
    name: "latest_scores",
    cols: &[
        ("item_id", Text),
        ("model", Text),
        ("sample", Int),
        ("run_id", Text),
        ("job_idx", Int),
        ("task_id", Text),
        ("score", Real),
    ],
    key: 3,
    behind: "false",
    run_col: None,
    changes: false,
};

/// Every table described here.
pub static CORE: [&Table; 9] = [
    &RUNS,
    &JOBS,
    &RESPONSES,
    &SCORES,
    &CACHE,
    &REVIEW_DECISIONS,
    &REVIEW_DRAFTS,
    &RUN_SUMMARIES,
    &LATEST_SCORES,
];

/// Every table of a store: these, and the lanes' (`lane_tables::all`).
pub fn every() -> Vec<&'static Table> {
    CORE.iter()
        .copied()
        .chain(super::lane_tables::all())
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::Store;

    #[test]
    fn every_table_is_described_as_sqlite_holds_it() {
        let s = Store::open_in_memory().unwrap();
        for t in every() {
            let cols: Vec<(String, String, i64)> = s
                .conn
                .prepare(&format!(
                    "SELECT name, type, pk FROM pragma_table_info('{}')",
                    t.name
                ))
                .unwrap()
                .query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))
                .unwrap()
                .collect::<Result<_, _>>()
                .unwrap();
            assert_eq!(cols.len(), t.cols.len(), "{}: {cols:?}", t.name);
            for (name, ty) in t.cols {
                assert!(
                    cols.iter()
                        .any(|(n, d, _)| n == name && d.eq_ignore_ascii_case(ty.sqlite_type())),
                    "{}.{name} is {}: {cols:?}",
                    t.name,
                    ty.sqlite_type()
                );
            }
            let mut key: Vec<&str> = cols
                .iter()
                .filter(|(_, _, pk)| *pk > 0)
                .map(|(n, _, _)| n.as_str())
                .collect();
            key.sort_unstable();
            let mut want: Vec<&str> = t.cols[..t.key].iter().map(|c| c.0).collect();
            want.sort_unstable();
            assert_eq!(key, want, "{}: primary key", t.name);
        }
    }
}
