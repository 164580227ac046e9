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

use rusqlite::types::ValueRef;

use super::Store;
use super::error::Result;

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
pub static LOOSE: [&Table; 7] = [
    &ANSWER_CHECKS,
    &ENTAILMENTS,
    &CLAIM_TOPICS,
    &QUALITY_SCORES,
    &JUDGE_VERDICTS,
    &ANSWER_LABELS,
    &SENTENCE_SUPPORT,
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

impl Table {
    pub(crate) fn col_list(&self) -> String {
        self.cols
            .iter()
            .map(|(c, _)| *c)
            .collect::<Vec<_>>()
            .join(", ")
    }

    /// The table's DDL, made from its description (a table described here needs no migration
    /// of its own): `CREATE TABLE IF NOT EXISTS` with its columns (the key's NOT NULL) and key,
    /// and on PostgreSQL the change number the mirrors pull by, with its index.
    pub fn create_sql(&self, postgres: bool) -> String {
        let mut cols: Vec<String> = self
            .cols
            .iter()
            .enumerate()
            .map(|(i, (name, c))| {
                let ty = if postgres {
                    c.pg_type()
                } else {
                    c.sqlite_type()
                };
                let null = if i < self.key { " NOT NULL" } else { "" };
                format!("{name} {ty}{null}")
            })
            .collect();
        if postgres && self.changes {
            cols.push("seq BIGINT NOT NULL DEFAULT nextval('prism_changes')".into());
        }
        cols.push(format!("PRIMARY KEY ({})", self.key_list()));
        let mut sql = format!(
            "CREATE TABLE IF NOT EXISTS {} ({})",
            self.name,
            cols.join(", ")
        );
        if postgres && self.changes {
            sql.push_str(&format!(
                "; CREATE INDEX IF NOT EXISTS {0}_seq ON {0}(seq)",
                self.name
            ));
        }
        sql
    }

    /// The key's columns, comma-separated.
    pub(crate) fn key_list(&self) -> String {
        self.cols[..self.key]
            .iter()
            .map(|(c, _)| *c)
            .collect::<Vec<_>>()
            .join(", ")
    }

    /// A row's key (its first `key` values): what a change to it is told by.
    pub(crate) fn key_of(&self, row: &Row) -> Row {
        row[..self.key.min(row.len())].to_vec()
    }

    /// `SELECT <cols> FROM <table> [WHERE <run_col> = $1] ORDER BY <key>`, with `mark` making
    /// the placeholder (`?1` for SQLite, `$1` for PostgreSQL).
    pub fn select(&self, by_run: bool, mark: &str) -> String {
        let key = self.cols[..self.key]
            .iter()
            .map(|(c, _)| *c)
            .collect::<Vec<_>>()
            .join(", ");
        let filter = match (by_run, self.run_col) {
            (true, Some(c)) => format!(" WHERE {c} = {mark}1"),
            _ => String::new(),
        };
        format!(
            "SELECT {} FROM {}{filter} ORDER BY {key}",
            self.col_list(),
            self.name
        )
    }

    /// The upsert of one row (see the module's comment); `force` replaces the target's row
    /// whatever it holds (a lane's own changes, pushed from the copy it works on); `also` is
    /// set on a replaced row too (PostgreSQL's change number).
    pub fn upsert(&self, mark: &str, force: bool, also: &str) -> String {
        self.upsert_from(&format!("VALUES ({})", self.marks(mark)), force, also)
    }

    /// SQLite's insert of one whole row that replaces the row of its key, if any.
    pub(crate) fn replace_sql(&self) -> String {
        format!(
            "INSERT OR REPLACE INTO {} ({}) VALUES ({})",
            self.name,
            self.col_list(),
            self.marks("?")
        )
    }

    /// The `?1, ?2, ...` (SQLite) or `$1::TEXT, $2::BIGINT, ...` (PostgreSQL) of every
    /// column. PostgreSQL's are typed as the values are sent (an integer as 64 bits), and the
    /// server narrows them to a column's own width (review scores are SMALLINT), so one
    /// conversion serves every table.
    pub fn marks(&self, mark: &str) -> String {
        self.cols
            .iter()
            .enumerate()
            .map(|(i, (_, c))| {
                if mark == "$" {
                    format!("${}::{}", i + 1, c.pg_type())
                } else {
                    format!("{mark}{}", i + 1)
                }
            })
            .collect::<Vec<_>>()
            .join(", ")
    }

    /// The same for many rows at once on PostgreSQL: each parameter is a column's array
    /// (one statement and one round trip for a whole batch).
    pub fn upsert_unnest(&self, force: bool, also: &str) -> String {
        let arrays = self
            .cols
            .iter()
            .enumerate()
            .map(|(i, (_, c))| format!("${}::{}[]", i + 1, c.pg_type()))
            .collect::<Vec<_>>()
            .join(", ");
        self.upsert_from(&format!("SELECT * FROM unnest({arrays})"), force, also)
    }

    fn upsert_from(&self, source: &str, force: bool, also: &str) -> String {
        let key = self.cols[..self.key]
            .iter()
            .map(|(c, _)| *c)
            .collect::<Vec<_>>()
            .join(", ");
        let set = self.cols[self.key..]
            .iter()
            .map(|(c, _)| format!("{c} = excluded.{c}"))
            .collect::<Vec<_>>()
            .join(", ");
        let when = if force {
            String::new()
        } else {
            format!(" WHERE {}", self.behind)
        };
        format!(
            "INSERT INTO {} ({}) {source} ON CONFLICT ({key}) DO UPDATE SET {set}{also}{when}",
            self.name,
            self.col_list()
        )
    }

    /// The select of one row by its key.
    pub fn select_by_key(&self, mark: &str) -> String {
        let cond = self.cols[..self.key]
            .iter()
            .enumerate()
            .map(|(i, (c, _))| format!("{c} = {mark}{}", i + 1))
            .collect::<Vec<_>>()
            .join(" AND ");
        format!("SELECT {} FROM {} WHERE {cond}", self.col_list(), self.name)
    }
}

/// What a lane's write changed: a whole run (the write that made it), or one row by its key.
#[derive(Debug, Clone)]
pub enum Touched {
    Run(LaneKind, String),
    Row(&'static Table, Row),
    /// A run's scores of these jobs (saved or replaced).
    Scores(String, Vec<u32>),
}

fn text(s: &str) -> Val {
    Val::Text(s.to_string())
}

fn int(i: u32) -> Val {
    Val::Int(i64::from(i))
}

/// The rows a detection write changed.
pub fn touched_by_detect(w: &super::DetectWrite) -> Touched {
    use super::DetectWrite as W;
    match w {
        W::CreateRun(run, _) => Touched::Run(LaneKind::Detect, run.id.clone()),
        W::Status(run, _) => Touched::Row(&DETECT_RUNS, vec![text(run)]),
        W::Answer { run, target, .. }
        | W::Class { run, target, .. }
        | W::AddRound { run, target } => {
            Touched::Row(&DETECT_TARGETS, vec![text(run), int(*target)])
        }
        W::Sample(s) => Touched::Row(
            &DETECT_SAMPLES,
            vec![text(&s.run_id), int(s.target), int(s.round), int(s.k)],
        ),
        W::Pair(p) => Touched::Row(
            &DETECT_PAIRS,
            vec![
                text(&p.run_id),
                int(p.target),
                int(p.round),
                int(p.k),
                int(p.wording),
            ],
        ),
    }
}

/// The rows a self-detection write changed.
pub fn touched_by_selfcheck(w: &super::SelfcheckWrite) -> Touched {
    use super::SelfcheckWrite as W;
    match w {
        W::CreateRun(run, _) => Touched::Run(LaneKind::Selfcheck, run.id.clone()),
        W::Status(run, _) => Touched::Row(&SELFCHECK_RUNS, vec![text(run)]),
        W::Item(it) => Touched::Row(&SELFCHECK_ITEMS, vec![text(&it.run_id), int(it.idx)]),
        W::Verdict(v) => Touched::Row(
            &SELFCHECK_VERDICTS,
            vec![
                text(&v.run_id),
                int(v.item),
                text(v.sentence.as_str()),
                text(&v.detector),
                text(v.mode.as_str()),
            ],
        ),
    }
}

pub(super) fn sqlite_val(v: ValueRef<'_>) -> Val {
    match v {
        ValueRef::Null => Val::Null,
        ValueRef::Integer(i) => Val::Int(i),
        ValueRef::Real(f) => Val::Real(f),
        ValueRef::Text(t) => Val::Text(String::from_utf8_lossy(t).into_owned()),
        ValueRef::Blob(b) => Val::Blob(b.to_vec()),
    }
}

impl rusqlite::ToSql for Val {
    fn to_sql(&self) -> rusqlite::Result<rusqlite::types::ToSqlOutput<'_>> {
        use rusqlite::types::{ToSqlOutput, Value};
        Ok(match self {
            Val::Null => ToSqlOutput::Owned(Value::Null),
            Val::Int(i) => ToSqlOutput::Owned(Value::Integer(*i)),
            Val::Real(f) => ToSqlOutput::Owned(Value::Real(*f)),
            // Text that did not come through `record::text` keeps the store's rule too.
            Val::Text(t) => match stored_text(t) {
                std::borrow::Cow::Borrowed(t) => {
                    ToSqlOutput::Borrowed(ValueRef::Text(t.as_bytes()))
                }
                std::borrow::Cow::Owned(t) => ToSqlOutput::Owned(Value::Text(t)),
            },
            Val::Blob(b) => ToSqlOutput::Borrowed(ValueRef::Blob(b)),
        })
    }
}

pub(super) fn sqlite_rows(
    stmt: &mut rusqlite::Statement<'_>,
    args: &[Val],
    width: usize,
) -> Result<Vec<Row>> {
    let rows = stmt
        .query_map(rusqlite::params_from_iter(args), |r| {
            (0..width)
                .map(|i| r.get_ref(i).map(sqlite_val))
                .collect::<rusqlite::Result<Row>>()
        })?
        .collect::<rusqlite::Result<Vec<_>>>()?;
    Ok(rows)
}

/// The lane tables of a SQLite store.
impl Store {
    /// A table's rows (of one run when `run` is given and the table is kept by run).
    pub fn lane_rows(&self, t: &Table, run: Option<&str>) -> Result<Vec<Row>> {
        let by_run = run.is_some() && t.run_col.is_some();
        let mut st = self.conn.prepare(&t.select(by_run, "?"))?;
        let args: Vec<Val> = run
            .filter(|_| by_run)
            .map(|r| Val::Text(r.to_string()))
            .into_iter()
            .collect();
        sqlite_rows(&mut st, &args, t.cols.len())
    }

    /// The rows of `t` with these keys (the ones still there).
    pub fn lane_rows_by_key(&self, t: &Table, keys: &[Row]) -> Result<Vec<Row>> {
        let mut st = self.conn.prepare_cached(&t.select_by_key("?"))?;
        let mut out = Vec::with_capacity(keys.len());
        for k in keys {
            out.extend(sqlite_rows(&mut st, k, t.cols.len())?);
        }
        Ok(out)
    }

    /// Writes rows of several tables in one transaction (see the module's comment); returns
    /// how many rows were added or moved forward.
    pub fn put_lane_rows(&mut self, rows: &[(&Table, Vec<Row>)], force: bool) -> Result<usize> {
        let tx = self.conn.transaction()?;
        let mut n = 0;
        for (t, rs) in rows {
            let mut st = tx.prepare_cached(&t.upsert("?", force, ""))?;
            for r in rs {
                n += st.execute(rusqlite::params_from_iter(r))?;
            }
        }
        tx.commit()?;
        Ok(n)
    }

    /// Makes a described table this store lacks (see [`Table::create_sql`]).
    pub fn ensure_table(&self, t: &Table) -> Result<()> {
        self.conn.execute_batch(&t.create_sql(false))?;
        Ok(())
    }

    /// Every run of a lane: its id and status.
    pub fn lane_statuses(&self, kind: LaneKind) -> Result<Vec<(String, String)>> {
        let mut st = self.conn.prepare(&format!(
            "SELECT id, status FROM {} ORDER BY created_at, id",
            kind.runs_table().name
        ))?;
        let rows = st
            .query_map([], |r| Ok((r.get(0)?, r.get(1)?)))?
            .collect::<rusqlite::Result<Vec<_>>>()?;
        Ok(rows)
    }
}

/// The same on PostgreSQL (called on a connection; `PgStore` and the pushers wrap these).
pub(super) mod pg {
    use super::{Col, Row, Table, Val};
    /// The channel every save of answers, scores or a lane's rows on a shared store notifies
    /// (on commit): the TUI's mirror of the shared store pulls what changed when it hears it.
    pub(crate) const RUNS_CHANNEL: &str = "prism_runs";
    use postgres::GenericClient;
    use postgres::types::ToSql;
    use std::collections::HashMap;

    fn pg_val(r: &postgres::Row, i: usize, c: Col) -> Result<Val, postgres::Error> {
        Ok(match c {
            // An integer of any width (the review tables' SMALLINT and INTEGER too).
            Col::Int => match r.try_get::<_, Option<i64>>(i) {
                Ok(v) => v.map_or(Val::Null, Val::Int),
                Err(_) => match r.try_get::<_, Option<i32>>(i) {
                    Ok(v) => v.map_or(Val::Null, |v| Val::Int(i64::from(v))),
                    Err(_) => r
                        .try_get::<_, Option<i16>>(i)?
                        .map_or(Val::Null, |v| Val::Int(i64::from(v))),
                },
            },
            Col::Bool => r
                .try_get::<_, Option<bool>>(i)?
                .map_or(Val::Null, |b| Val::Int(i64::from(b))),
            Col::Blob => r
                .try_get::<_, Option<Vec<u8>>>(i)?
                .map_or(Val::Null, Val::Blob),
            Col::Real => r.try_get::<_, Option<f64>>(i)?.map_or(Val::Null, Val::Real),
            Col::Text => r
                .try_get::<_, Option<String>>(i)?
                .map_or(Val::Null, Val::Text),
        })
    }

    fn as_int(v: &Val) -> Option<i64> {
        match v {
            Val::Int(i) => Some(*i),
            // SQLite keeps what it is given; a REAL in an INTEGER column stays a number.
            Val::Real(f) => Some(*f as i64),
            Val::Text(t) => t.trim().parse().ok(),
            Val::Null | Val::Blob(_) => None,
        }
    }

    fn as_bool(v: &Val) -> Option<bool> {
        as_int(v).map(|i| i != 0)
    }

    fn as_blob(v: &Val) -> Option<Vec<u8>> {
        match v {
            Val::Blob(b) => Some(b.clone()),
            Val::Text(t) => Some(t.as_bytes().to_vec()),
            _ => None,
        }
    }

    fn as_real(v: &Val) -> Option<f64> {
        match v {
            Val::Int(i) => Some(*i as f64),
            Val::Real(f) => Some(*f),
            Val::Text(t) => t.trim().parse().ok(),
            Val::Null | Val::Blob(_) => None,
        }
    }

    /// A value as PostgreSQL's TEXT takes it: with the store's rule for NUL applied
    /// ([`stored_text`]), so a row from anywhere (a copy of a SQLite store among them)
    /// is never refused for one.
    fn as_text(v: &Val) -> Option<String> {
        match v {
            Val::Int(i) => Some(i.to_string()),
            Val::Real(f) => Some(f.to_string()),
            Val::Text(t) => Some(super::stored_text(t).into_owned()),
            Val::Blob(b) => Some(super::stored_text(&String::from_utf8_lossy(b)).into_owned()),
            Val::Null => None,
        }
    }

    /// A column's values as one array of its type (NULLs included).
    /// One value as a statement's parameter of column type `c`.
    pub(crate) fn param(v: &Val, c: Col) -> Box<dyn ToSql + Sync + Send> {
        match c {
            Col::Int => Box::new(as_int(v)),
            Col::Real => Box::new(as_real(v)),
            Col::Text => Box::new(as_text(v)),
            Col::Bool => Box::new(as_bool(v)),
            Col::Blob => Box::new(as_blob(v)),
        }
    }

    /// A row's values as a statement's parameters, in the table's column order.
    pub(crate) fn params(t: &Table, row: &Row) -> Vec<Box<dyn ToSql + Sync + Send>> {
        t.cols
            .iter()
            .zip(row)
            .map(|((_, c), v)| param(v, *c))
            .collect()
    }

    /// The values of one column of many rows, as one array parameter (for `unnest`).
    pub(crate) fn column<'a>(
        vs: impl Iterator<Item = &'a Val>,
        c: Col,
    ) -> Box<dyn ToSql + Sync + Send> {
        match c {
            Col::Int => Box::new(vs.map(as_int).collect::<Vec<_>>()),
            Col::Real => Box::new(vs.map(as_real).collect::<Vec<_>>()),
            Col::Text => Box::new(vs.map(as_text).collect::<Vec<_>>()),
            Col::Bool => Box::new(vs.map(as_bool).collect::<Vec<_>>()),
            Col::Blob => Box::new(vs.map(as_blob).collect::<Vec<_>>()),
        }
    }

    fn rows_of(t: &Table, rs: Vec<postgres::Row>) -> Result<Vec<Row>, postgres::Error> {
        rs.iter().map(|r| row_of(t, r, t.cols.len())).collect()
    }

    /// A row read back as the first `width` columns of `t` (in that order in the select).
    pub(crate) fn row_of(
        t: &Table,
        r: &postgres::Row,
        width: usize,
    ) -> Result<Row, postgres::Error> {
        t.cols[..width]
            .iter()
            .enumerate()
            .map(|(i, (_, c))| pg_val(r, i, *c))
            .collect()
    }

    pub(crate) fn rows(
        c: &mut impl GenericClient,
        t: &Table,
        run: Option<&str>,
    ) -> Result<Vec<Row>, postgres::Error> {
        let rs = match run.filter(|_| t.run_col.is_some()) {
            Some(run) => c.query(&t.select(true, "$"), &[&run])?,
            None => c.query(&t.select(false, "$"), &[])?,
        };
        rows_of(t, rs)
    }

    pub(crate) fn put(
        c: &mut impl GenericClient,
        rows: &[(&Table, Vec<Row>)],
        force: bool,
    ) -> Result<usize, postgres::Error> {
        let mut tx = c.transaction()?;
        let mut n = 0;
        for (t, rs) in rows {
            if rs.is_empty() {
                continue;
            }
            // A replaced row takes a new change number, so the mirrors pull it again.
            let also = if t.changes {
                ", seq = nextval('prism_changes')"
            } else {
                ""
            };
            let st = tx.prepare(&t.upsert_unnest(force, also))?;
            // One statement cannot touch a row twice: the last of a key's rows stands.
            let mut last: HashMap<String, usize> = HashMap::new();
            for (i, r) in rs.iter().enumerate() {
                last.insert(format!("{:?}", &r[..t.key]), i);
            }
            let mut keep: Vec<usize> = last.into_values().collect();
            keep.sort_unstable();
            for chunk in keep.chunks(5_000) {
                let columns: Vec<Box<dyn ToSql + Sync + Send>> = t
                    .cols
                    .iter()
                    .enumerate()
                    .map(|(col, (_, c))| column(chunk.iter().map(|&i| &rs[i][col]), *c))
                    .collect();
                let refs: Vec<&(dyn ToSql + Sync)> = columns
                    .iter()
                    .map(|b| b.as_ref() as &(dyn ToSql + Sync))
                    .collect();
                n += tx.execute(&st, &refs)? as usize;
            }
        }
        if n > 0 {
            // Delivered at commit: the TUIs watching the store pull what changed.
            tx.execute("SELECT pg_notify($1, '')", &[&RUNS_CHANNEL])?;
        }
        tx.commit()?;
        Ok(n)
    }

    /// Rows changed after change number `after`, oldest change first, at most `limit`.
    pub(crate) fn rows_since(
        c: &mut impl GenericClient,
        t: &Table,
        after: i64,
        limit: i64,
    ) -> Result<Vec<(i64, Row)>, postgres::Error> {
        let rs = c.query(
            &format!(
                "SELECT {}, seq FROM {} WHERE seq > $1 ORDER BY seq LIMIT $2",
                t.col_list(),
                t.name
            ),
            &[&after, &limit],
        )?;
        let seqs: Vec<i64> = rs.iter().map(|r| r.get(t.cols.len())).collect();
        Ok(seqs.into_iter().zip(rows_of(t, rs)?).collect())
    }

    pub(crate) fn statuses(
        c: &mut impl GenericClient,
        t: &Table,
    ) -> Result<Vec<(String, String)>, postgres::Error> {
        Ok(c.query(
            &format!("SELECT id, status FROM {} ORDER BY created_at, id", t.name),
            &[],
        )?
        .iter()
        .map(|r| (r.get(0), r.get(1)))
        .collect())
    }
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
mod tests {
    use super::*;

    #[test]
    fn every_described_table_matches_the_sqlite_schema() {
        let s = Store::open_in_memory().expect("store");
        for t in all() {
            let mut st = s
                .conn
                .prepare(&format!(
                    "SELECT name, type, pk FROM pragma_table_info('{}')",
                    t.name
                ))
                .expect("pragma");
            let cols: Vec<(String, String, i64)> = st
                .query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))
                .expect("query")
                .collect::<rusqlite::Result<_>>()
                .expect("rows");
            assert_eq!(cols.len(), t.cols.len(), "{}: column count", t.name);
            for (name, ty) in t.cols {
                let (_, sql_ty, _) = cols
                    .iter()
                    .find(|(n, _, _)| n == name)
                    .unwrap_or_else(|| panic!("{}: no column {name}", t.name));
                let want = match ty {
                    Col::Int | Col::Bool => "INTEGER",
                    Col::Real => "REAL",
                    Col::Text => "TEXT",
                    Col::Blob => "BLOB",
                };
                assert_eq!(sql_ty, want, "{}.{name}", t.name);
            }
            let mut key: Vec<&str> = cols
                .iter()
                .filter(|c| c.2 > 0)
                .map(|c| c.0.as_str())
                .collect();
            key.sort();
            let mut described: Vec<&str> = t.cols[..t.key].iter().map(|c| c.0).collect();
            described.sort();
            assert_eq!(key, described, "{}: primary key", t.name);
        }
    }

    #[test]
    fn a_runs_status_only_moves_forward() {
        let mut s = Store::open_in_memory().expect("store");
        let run = |status: &str| -> Row {
            vec![
                Val::Text("d1".into()),
                Val::Int(1),
                Val::Text("claims".into()),
                Val::Text("<sample-claims>".into()),
                Val::Text("{}".into()),
                Val::Text(status.into()),
            ]
        };
        let mut put = |status: &str| {
            s.put_lane_rows(&[(&DETECT_RUNS, vec![run(status)])], false)
                .expect("put")
        };
        assert_eq!(put("running"), 1);
        assert_eq!(put("cancelled"), 1);
        assert_eq!(
            put("running"),
            0,
            "a mirror's older copy never sets it back"
        );
        assert_eq!(put("finished"), 1);
        assert_eq!(put("cancelled"), 0);
        assert_eq!(put("running"), 0);
    }

    #[test]
    fn a_row_only_moves_forward() {
        let mut s = Store::open_in_memory().expect("store");
        let row = |text: Option<&str>, error: Option<&str>| -> Row {
            vec![
                Val::Text("d1".into()),
                Val::Int(0),
                Val::Int(0),
                Val::Int(1),
                Val::Int(0),
                text.map_or(Val::Null, |t| Val::Text(t.into())),
                error.map_or(Val::Null, |t| Val::Text(t.into())),
                Val::Int(1),
                Val::Int(0),
                Val::Int(5),
            ]
        };
        let put = |s: &mut Store, r: Row, force: bool| {
            s.put_lane_rows(&[(&DETECT_SAMPLES, vec![r])], force)
                .expect("put")
        };
        assert_eq!(put(&mut s, row(None, Some("timeout")), false), 1);
        assert_eq!(
            put(&mut s, row(Some("Paris"), None), false),
            1,
            "an answer replaces a failure"
        );
        assert_eq!(
            put(&mut s, row(None, Some("timeout")), false),
            0,
            "a failure never replaces an answer"
        );
        assert_eq!(
            put(&mut s, row(Some("Lyon"), None), false),
            0,
            "an answer stays"
        );
        let got = s.lane_rows(&DETECT_SAMPLES, Some("d1")).expect("rows");
        assert_eq!(got, vec![row(Some("Paris"), None)]);
        assert_eq!(
            put(&mut s, row(Some("Lyon"), None), true),
            1,
            "a lane's own write goes in"
        );
        assert_eq!(
            s.lane_rows_by_key(&DETECT_SAMPLES, &[row(None, None)[..4].to_vec()])
                .expect("k"),
            vec![row(Some("Lyon"), None)]
        );
    }
}
