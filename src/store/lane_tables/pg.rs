//! Described rows on PostgreSQL (called on a connection; `PgStore` and the pushers wrap these).

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
pub(crate) fn row_of(t: &Table, r: &postgres::Row, width: usize) -> Result<Row, postgres::Error> {
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
    let seqs: Vec<i64> = rs.iter().map(|r| r.get("seq")).collect();
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
    .map(|r| (r.get("id"), r.get("status")))
    .collect())
}
