//! The tables of the other lanes (contradiction detection, self-detection, answer checks,
//! entailments, claims' topics), described once so their rows move between a SQLite store and
//! a PostgreSQL one the same way: `prism db copy`, the TUI's mirror of a shared store, and a
//! lane's run on a shared store (worked on in a local copy, each change pushed as it commits).
//!
//! The schema is the same on both (PostgreSQL migration 3 is SQLite's 4, 5, 12, 13, 15 and 16
//! with INTEGER as BIGINT and REAL as DOUBLE PRECISION). A row is written as an upsert that only
//! ever moves a row forward: a row the target lacks is added, and one it has is replaced only
//! when the target's is behind (a failure, a missing answer, fewer rounds); so a copy run twice,
//! or one that stopped halfway, adds nothing twice and never undoes work.

mod sql;
mod sqlite;

/// Described rows on PostgreSQL.
pub(super) mod pg;

pub use sqlite::{Touched, touched_by_detect, touched_by_selfcheck};
pub(in crate::store) use sqlite::{sqlite_record, sqlite_rows};

/// A column's type (SQLite's affinity; PostgreSQL's BIGINT, DOUBLE PRECISION, TEXT).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Col {
    Int,
    Real,
    Text,
    /// PostgreSQL's BOOLEAN, SQLite's INTEGER 0 or 1 (held as an integer).
    Bool,
    /// Bytes (PostgreSQL's BYTEA, SQLite's BLOB).
    Blob,
}

impl Col {
    /// PostgreSQL's type of such a column, as made (older tables hold some integers
    /// narrower: INTEGER, SMALLINT).
    pub fn pg_type(self) -> &'static str {
        match self {
            Col::Int => "BIGINT",
            Col::Real => "DOUBLE PRECISION",
            Col::Text => "TEXT",
            Col::Bool => "BOOLEAN",
            Col::Blob => "BYTEA",
        }
    }

    /// SQLite's declared type of such a column.
    pub fn sqlite_type(self) -> &'static str {
        match self {
            Col::Int | Col::Bool => "INTEGER",
            Col::Real => "REAL",
            Col::Text => "TEXT",
            Col::Blob => "BLOB",
        }
    }
}

/// A value of a row as stored.
#[derive(Debug, Clone, PartialEq)]
pub enum Val {
    Null,
    Int(i64),
    Real(f64),
    Text(String),
    Blob(Vec<u8>),
}

pub type Row = Vec<Val>;

/// A table: its columns (the key's first), and when a row the target has is behind the one
/// coming (an SQL condition on the target's row, named by the table, and `excluded`). A run's
/// status moves forward too: running, then cancelled, then finished (so a mirror pulling while
/// a lane on the same machine finishes never sets its run back to running; a run resumed
/// elsewhere shows as finished again when it is).
#[derive(Debug)]
pub struct Table {
    pub name: &'static str,
    pub cols: &'static [(&'static str, Col)],
    pub key: usize,
    pub behind: &'static str,
    /// The column naming the run a row belongs to (a detection or self-detection run, or the
    /// run whose answers were checked); none for tables kept across runs.
    pub run_col: Option<&'static str>,
    /// Whether a row on PostgreSQL carries a change number (`seq`, from `prism_changes`,
    /// new on every insert or replacement) the mirrors pull by. Runs, jobs, the cache and
    /// drafts do not (runs and jobs come with their answers; the cache and drafts are not
    /// mirrored); review decisions number themselves (their own sequence).
    pub changes: bool,
}

use Col::{Int, Real, Text};

pub static DETECT_RUNS: Table = Table {
    name: "detect_runs",
    cols: &[
        ("id", Text),
        ("created_at", Int),
        ("kind", Text),
        ("dataset", Text),
        ("config", Text),
        ("status", Text),
    ],
    key: 1,
    behind: concat!(
        "CASE excluded.status WHEN 'finished' THEN 2 WHEN 'cancelled' THEN 1 ELSE 0 END > ",
        "CASE detect_runs.status WHEN 'finished' THEN 2 WHEN 'cancelled' THEN 1 ELSE 0 END"
    ),
    run_col: Some("id"),
    changes: true,
};

pub static DETECT_TARGETS: Table = Table {
    name: "detect_targets",
    cols: &[
        ("run_id", Text),
        ("idx", Int),
        ("item_id", Text),
        ("task_id", Text),
        ("model", Text),
        ("temperature", Real),
        ("source_run", Text),
        ("source_job", Int),
        ("prompt", Text),
        ("question", Text),
        ("params", Text),
        ("answer", Text),
        ("answer_error", Text),
        ("refused", Int),
        ("label", Text),
        ("class", Text),
        ("class_reply", Text),
        ("class_error", Text),
        ("rounds", Int),
    ],
    key: 2,
    behind: "(detect_targets.answer IS NULL AND excluded.answer IS NOT NULL)
        OR (detect_targets.class IS NULL AND excluded.class IS NOT NULL)
        OR excluded.rounds > detect_targets.rounds",
    run_col: Some("run_id"),
    changes: true,
};

pub static DETECT_SAMPLES: Table = Table {
    name: "detect_samples",
    cols: &[
        ("run_id", Text),
        ("target", Int),
        ("round", Int),
        ("k", Int),
        ("variant", Int),
        ("text", Text),
        ("error", Text),
        ("attempts", Int),
        ("cached", Int),
        ("created_at", Int),
    ],
    key: 4,
    behind: "detect_samples.text IS NULL AND excluded.text IS NOT NULL",
    run_col: Some("run_id"),
    changes: true,
};

pub static DETECT_PAIRS: Table = Table {
    name: "detect_pairs",
    cols: &[
        ("run_id", Text),
        ("target", Int),
        ("round", Int),
        ("k", Int),
        ("wording", Int),
        ("judge", Text),
        ("verdict", Text),
        ("explanation", Text),
        ("quote_a", Text),
        ("quote_b", Text),
        ("reply", Text),
        ("error", Text),
        ("attempts", Int),
        ("created_at", Int),
    ],
    key: 5,
    behind: "detect_pairs.verdict = 'failed' AND excluded.verdict <> 'failed'",
    run_col: Some("run_id"),
    changes: true,
};

pub static SELFCHECK_RUNS: Table = Table {
    name: "selfcheck_runs",
    cols: &[
        ("id", Text),
        ("created_at", Int),
        ("dataset", Text),
        ("config", Text),
        ("status", Text),
    ],
    key: 1,
    behind: concat!(
        "CASE excluded.status WHEN 'finished' THEN 2 WHEN 'cancelled' THEN 1 ELSE 0 END > ",
        "CASE selfcheck_runs.status WHEN 'finished' THEN 2 WHEN 'cancelled' THEN 1 ELSE 0 END"
    ),
    run_col: Some("id"),
    changes: true,
};

pub static SELFCHECK_ITEMS: Table = Table {
    name: "selfcheck_items",
    cols: &[
        ("run_id", Text),
        ("idx", Int),
        ("triple_id", Text),
        ("subject", Text),
        ("relation", Text),
        ("object", Text),
        ("source", Text),
        ("popularity", Real),
        ("generator", Text),
        ("params", Text),
        ("shots", Text),
        ("true_sentence", Text),
        ("true_attempts", Int),
        ("false_sentence", Text),
        ("false_attempts", Int),
        ("set_aside", Text),
        ("error", Text),
        ("decoy", Text),
    ],
    key: 2,
    behind: "excluded.true_attempts + excluded.false_attempts
            > selfcheck_items.true_attempts + selfcheck_items.false_attempts
        OR (selfcheck_items.error IS NOT NULL AND excluded.error IS NULL)",
    run_col: Some("run_id"),
    changes: true,
};

pub static SELFCHECK_VERDICTS: Table = Table {
    name: "selfcheck_verdicts",
    cols: &[
        ("run_id", Text),
        ("item", Int),
        ("sentence", Text),
        ("detector", Text),
        ("mode", Text),
        ("verdict", Text),
        ("reply", Text),
        ("error", Text),
        ("attempts", Int),
        ("created_at", Int),
    ],
    key: 5,
    behind: "selfcheck_verdicts.verdict = 'failed' AND excluded.verdict <> 'failed'",
    run_col: Some("run_id"),
    changes: true,
};

pub static ANSWER_CHECKS: Table = Table {
    name: "answer_checks",
    cols: &[
        ("run_id", Text),
        ("job_idx", Int),
        ("detector", Text),
        ("mode", Text),
        ("answer", Text),
        ("reply", Text),
        ("error", Text),
        ("attempts", Int),
        ("created_at", Int),
    ],
    key: 4,
    behind: "answer_checks.answer = 'failed' AND excluded.answer <> 'failed'",
    run_col: Some("run_id"),
    changes: true,
};

pub static ENTAILMENTS: Table = Table {
    name: "entailments",
    cols: &[
        ("judge", Text),
        ("question", Text),
        ("premise", Text),
        ("hypothesis", Text),
        ("relation", Text),
        ("reply", Text),
        ("error", Text),
        ("attempts", Int),
        ("created_at", Int),
    ],
    key: 4,
    behind: "entailments.relation IS NULL AND excluded.relation IS NOT NULL",
    run_col: None,
    changes: true,
};

pub static CLAIM_TOPICS: Table = Table {
    name: "claim_topics",
    cols: &[
        ("claim", Text),
        ("model", Text),
        ("vocabulary", Text),
        ("topic", Text),
        ("reply", Text),
        ("error", Text),
        ("attempts", Int),
        ("created_at", Int),
    ],
    key: 3,
    behind: "claim_topics.topic IS NULL AND excluded.topic IS NOT NULL",
    run_col: None,
    changes: true,
};

/// The quality agent's scores: one row per item and model (a new scoring replaces it; a copy
/// moves a row forward only over one without scores).
pub static QUALITY_SCORES: Table = Table {
    name: "quality_scores",
    cols: &[
        ("item_id", Text),
        ("model", Text),
        ("task_id", Text),
        ("factuality", Int),
        ("discriminability", Int),
        ("clarity", Int),
        ("reply", Text),
        ("error", Text),
        ("attempts", Int),
        ("created_at", Int),
    ],
    key: 2,
    behind: "quality_scores.factuality IS NULL AND excluded.factuality IS NOT NULL",
    run_col: None,
    changes: true,
};

/// Every verdict of every judge on an answer (`store::judging`): one row per answer, judge
/// and repeat; asked again, the row is replaced (a copy moves a row forward only over one the
/// judge could not be reached for).
pub static JUDGE_VERDICTS: Table = Table {
    name: "judge_verdicts",
    cols: &[
        ("run_id", Text),
        ("job_idx", Int),
        ("judge", Text),
        ("repeat", Int),
        ("item_id", Text),
        ("task_id", Text),
        ("model", Text),
        ("evaluator", Text),
        ("score", Real),
        ("detail", Text),
        ("reply", Text),
        ("attempts", Int),
        ("fallback", Int),
        ("created_at", Int),
    ],
    key: 4,
    behind: "judge_verdicts.score IS NULL AND excluded.score IS NOT NULL",
    run_col: Some("run_id"),
    changes: true,
};

/// People's verdicts on answers (`store::judging`): one row per labelling, by its uid, never
/// replaced.
pub static ANSWER_LABELS: Table = Table {
    name: "answer_labels",
    cols: &[
        ("uid", Text),
        ("run_id", Text),
        ("job_idx", Int),
        ("item_id", Text),
        ("model", Text),
        ("reviewer", Text),
        ("label", Text),
        ("note", Text),
        ("created_at", Int),
    ],
    key: 1,
    behind: "false",
    run_col: Some("run_id"),
    changes: true,
};

/// Whether a sample supports a sentence of an answer (`prism sentences`, SelfCheckGPT's prompt
/// variant): one row per judge, sentence and sample text, so a verdict is asked once whichever
/// run or detection the same texts come from (a copy moves a row forward only over one the
/// judge could not be reached for).
pub static SENTENCE_SUPPORT: Table = Table {
    name: "sentence_support",
    cols: &[
        ("judge", Text),
        ("sentence", Text),
        ("context", Text),
        ("verdict", Text),
        ("reply", Text),
        ("error", Text),
        ("attempts", Int),
        ("created_at", Int),
    ],
    key: 3,
    behind: "sentence_support.verdict IS NULL AND excluded.verdict IS NOT NULL",
    run_col: None,
    changes: true,
};

/// People's verdicts on the sentences of answers (`sentences::labels`, SelfCheckGPT's
/// accurate / minor / major inaccurate): one row per labelling, by its uid, never replaced;
/// the sentence by its index in the answer, its byte span and its text (so a label still
/// reads if the splitter changes). `span_start`, `span_end`: `end` is a keyword of SQL.
pub static SENTENCE_LABELS: Table = Table {
    name: "sentence_labels",
    cols: &[
        ("uid", Text),
        ("run_id", Text),
        ("job_idx", Int),
        ("item_id", Text),
        ("model", Text),
        ("sentence", Int),
        ("span_start", Int),
        ("span_end", Int),
        ("text", Text),
        ("reviewer", Text),
        ("label", Text),
        ("note", Text),
        ("created_at", Int),
    ],
    key: 1,
    behind: "false",
    run_col: Some("run_id"),
    changes: true,
};

/// Samples drawn for an answer that had fewer than asked (`prism sentences --samples N`): the
/// model that gave the answer asked its prompt again, sample `k` (1-based after the answer's
/// own); a copy moves a row forward only over one whose call failed.
pub static SENTENCE_SAMPLES: Table = Table {
    name: "sentence_samples",
    cols: &[
        ("run_id", Text),
        ("job_idx", Int),
        ("k", Int),
        ("text", Text),
        ("error", Text),
        ("attempts", Int),
        ("created_at", Int),
    ],
    key: 3,
    behind: "sentence_samples.text IS NULL AND excluded.text IS NOT NULL",
    run_col: Some("run_id"),
    changes: true,
};

/// The samples of a run imported from another tool's log (`prism import`, `foreign::place`):
/// per answer, the item as the tool had it (its id, input, target, choices, category and
/// metadata as JSON) and the tool's own score (`inspect: includes C`), kept beside prism's.
pub static SOURCE_SAMPLES: Table = Table {
    name: "source_samples",
    cols: &[
        ("run_id", Text),
        ("job_idx", Int),
        ("tool", Text),
        ("task", Text),
        ("sample_id", Text),
        ("epoch", Int),
        ("category", Text),
        ("input", Text),
        ("target", Text),
        ("choices", Text),
        ("metadata", Text),
        ("score_name", Text),
        ("score_shown", Text),
        ("score", Real),
        ("explanation", Text),
    ],
    key: 2,
    behind: "false",
    run_col: Some("run_id"),
    changes: true,
};

/// Judges' calibrations against people's labels (`review::calibration`): one row per judge,
/// row (all, or an evaluator, dimension or sub-task) and saving, never replaced; the judge's
/// identity beside its numbers (each estimate with its interval, as JSON).
pub static JUDGE_CALIBRATIONS: Table = Table {
    name: "judge_calibrations",
    cols: &[
        ("uid", Text),
        ("judge", Text),
        ("row_name", Text),
        ("endpoint", Text),
        ("model_id", Text),
        ("template_hash", Text),
        ("temperature", Real),
        ("repeats", Int),
        ("n", Int),
        ("base_rate", Real),
        ("accuracy", Text),
        ("constant_accuracy", Real),
        ("kappa", Text),
        ("ac1", Text),
        ("pabak", Text),
        ("tpr", Real),
        ("tnr", Real),
        ("flip_share", Real),
        ("reviewers", Text),
        ("created_at", Int),
    ],
    key: 1,
    behind: "false",
    run_col: None,
    changes: true,
};

/// The user's own judge prompts (`review::judge_templates`): per label and judge, the newest
/// text a judge named `<model>~<label>` was asked with, and its SHA-256.
pub static JUDGE_TEMPLATES: Table = Table {
    name: "judge_templates",
    cols: &[
        ("label", Text),
        ("judge", Text),
        ("sha256", Text),
        ("text", Text),
        ("created_at", Int),
    ],
    key: 2,
    behind: "judge_templates.created_at < excluded.created_at",
    run_col: None,
    changes: true,
};

/// A kind of lane run: its runs table first, then the tables of its rows (parents first).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LaneKind {
    Detect,
    Selfcheck,
}

impl LaneKind {
    pub const ALL: [LaneKind; 2] = [LaneKind::Detect, LaneKind::Selfcheck];

    pub fn tables(self) -> &'static [&'static Table] {
        match self {
            LaneKind::Detect => &DETECT_TABLES,
            LaneKind::Selfcheck => &SELFCHECK_TABLES,
        }
    }

    pub fn runs_table(self) -> &'static Table {
        self.tables()[0]
    }

    /// What to call its runs in messages.
    pub fn noun(self) -> &'static str {
        match self {
            LaneKind::Detect => "detection",
            LaneKind::Selfcheck => "self-detection",
        }
    }
}

/// Tables kept beside runs rather than in one: copied whole (or, for answer checks, by the
/// runs whose answers they check).
pub static LOOSE: [&Table; 12] = [
    &ANSWER_CHECKS,
    &ENTAILMENTS,
    &CLAIM_TOPICS,
    &QUALITY_SCORES,
    &JUDGE_VERDICTS,
    &ANSWER_LABELS,
    &SENTENCE_SUPPORT,
    &SENTENCE_LABELS,
    &SENTENCE_SAMPLES,
    &SOURCE_SAMPLES,
    &JUDGE_CALIBRATIONS,
    &JUDGE_TEMPLATES,
];

static DETECT_TABLES: [&Table; 4] = [
    &DETECT_RUNS,
    &DETECT_TARGETS,
    &DETECT_SAMPLES,
    &DETECT_PAIRS,
];
static SELFCHECK_TABLES: [&Table; 3] = [&SELFCHECK_RUNS, &SELFCHECK_ITEMS, &SELFCHECK_VERDICTS];

/// The described tables whose rows belong to a run of answers (a loose table with a run
/// column), with that column: they go when the run is removed, on either backend.
pub fn of_answer_runs() -> impl Iterator<Item = (&'static str, &'static str)> {
    LOOSE.iter().filter_map(|t| Some((t.name, t.run_col?)))
}

/// Every table described here, in the order a store's rows are copied.
pub fn all() -> Vec<&'static Table> {
    LaneKind::ALL
        .iter()
        .flat_map(|k| k.tables().iter().copied())
        .chain(LOOSE)
        .collect()
}

/// The one rule for what text the store keeps: every U+0000 becomes U+FFFD (the replacement
/// character), on both backends. PostgreSQL's TEXT cannot hold a NUL at all (the write fails,
/// and a run saving an answer that holds one would retry it forever); SQLite could, but a
/// store must read the same whichever backend holds it, and a copy from one to the other must
/// carry every row. A model's answer or an error message that holds a NUL keeps everything
/// else as it was.
pub fn stored_text(s: &str) -> std::borrow::Cow<'_, str> {
    if s.contains('\0') {
        std::borrow::Cow::Owned(s.replace('\0', "\u{FFFD}"))
    } else {
        std::borrow::Cow::Borrowed(s)
    }
}

#[cfg(test)]
mod tests;
