//! Described rows on a SQLite store: values in and out, and the store's reads and writes of
//! any described table; what a lane's write changed (for the pusher).

use rusqlite::types::ValueRef;

use super::super::Store;
use super::super::error::Result;
use super::*;

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
pub fn touched_by_detect(w: &super::super::DetectWrite) -> Touched {
    use super::super::DetectWrite as W;
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
pub fn touched_by_selfcheck(w: &super::super::SelfcheckWrite) -> Touched {
    use super::super::SelfcheckWrite as W;
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

fn sqlite_val(v: ValueRef<'_>) -> Val {
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

/// A record from a row whose first `width` columns are its table's, in the description's order
/// (a select made from the description): converted by column name in [`super::super::record`].
pub(in crate::store) fn sqlite_record<R: super::super::record::Record>(
    r: &rusqlite::Row<'_>,
    width: usize,
) -> rusqlite::Result<R> {
    let row = (0..width)
        .map(|i| r.get_ref(i).map(sqlite_val))
        .collect::<rusqlite::Result<Row>>()?;
    R::from_row(&row).map_err(|e| {
        rusqlite::Error::FromSqlConversionFailure(0, rusqlite::types::Type::Null, Box::new(e))
    })
}

pub(in crate::store) fn sqlite_rows(
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
            .query_map([], |r| Ok((r.get("id")?, r.get("status")?)))?
            .collect::<rusqlite::Result<Vec<_>>>()?;
        Ok(rows)
    }
}
