//! A record kept as one row of a described table (`lane_tables`): converted to its row and
//! back by column name, once, and the same row written to and read from either backend
//! (SQLite, PostgreSQL) by the table's description. A record type names its table, says how
//! each field becomes a column value and back; a new column is a line in the table's
//! description and a line in each direction here.

use super::error::Result;
use super::lane_tables::{Row, Table, Val};
use super::{Store, StoreError};

/// A record of one described table.
pub trait Record: Sized + Send + Sync + 'static {
    /// Its table.
    fn table() -> &'static Table;
    /// Its fields as (column, value).
    fn fields(&self) -> Vec<(&'static str, Val)>;
    /// The record from a row of its table (`Err` names the column that did not read).
    fn from_fields(f: &Fields<'_>) -> Result<Self>;

    /// Its row, in the table's column order.
    fn to_row(&self) -> Row {
        row_by_name(Self::table(), self.fields())
    }

    fn from_row(row: &Row) -> Result<Self> {
        Self::from_fields(&Fields {
            table: Self::table(),
            row,
        })
    }
}

/// Values placed at their columns' positions (a name the table lacks is a bug, caught by the
/// records' round-trip tests).
pub fn row_by_name(t: &Table, vals: Vec<(&'static str, Val)>) -> Row {
    let mut row = vec![Val::Null; t.cols.len()];
    for (name, v) in vals {
        let i = t
            .cols
            .iter()
            .position(|(c, _)| *c == name)
            .unwrap_or_else(|| panic!("{} has no column {name}", t.name));
        row[i] = v;
    }
    row
}

/// A row's values by column name.
pub struct Fields<'a> {
    table: &'static Table,
    row: &'a Row,
}

impl Fields<'_> {
    fn get(&self, col: &'static str) -> &Val {
        self.table
            .cols
            .iter()
            .position(|(c, _)| *c == col)
            .and_then(|i| self.row.get(i))
            .unwrap_or(&Val::Null)
    }

    fn bad(&self, col: &'static str, value: impl ToString) -> StoreError {
        StoreError::BadValue {
            table: self.table.name,
            what: noun(col),
            value: value.to_string(),
        }
    }

    pub fn opt_text(&self, col: &'static str) -> Option<String> {
        match self.get(col) {
            Val::Text(t) => Some(t.clone()),
            Val::Int(i) => Some(i.to_string()),
            Val::Real(r) => Some(r.to_string()),
            Val::Blob(b) => Some(String::from_utf8_lossy(b).into_owned()),
            Val::Null => None,
        }
    }

    /// Bytes (a BLOB or BYTEA column), or none.
    pub fn opt_blob(&self, col: &'static str) -> Option<Vec<u8>> {
        match self.get(col) {
            Val::Blob(b) => Some(b.clone()),
            Val::Text(t) => Some(t.as_bytes().to_vec()),
            _ => None,
        }
    }

    /// A flag (PostgreSQL's BOOLEAN, SQLite's 0 or 1).
    pub fn flag(&self, col: &'static str) -> bool {
        self.opt_int(col).is_some_and(|v| v != 0)
    }

    pub fn text(&self, col: &'static str) -> Result<String> {
        self.opt_text(col).ok_or_else(|| self.bad(col, "(missing)"))
    }

    pub fn opt_int(&self, col: &'static str) -> Option<i64> {
        match self.get(col) {
            Val::Int(i) => Some(*i),
            Val::Real(r) => Some(*r as i64),
            Val::Text(t) => t.trim().parse().ok(),
            Val::Null | Val::Blob(_) => None,
        }
    }

    pub fn int(&self, col: &'static str) -> Result<i64> {
        self.opt_int(col)
            .ok_or_else(|| self.bad(col, "(not a number)"))
    }

    /// A count or index that must fit 32 bits (a larger one would wrap onto another).
    pub fn u32(&self, col: &'static str) -> Result<u32> {
        let v = self.int(col)?;
        u32::try_from(v).map_err(|_| self.bad(col, v))
    }

    pub fn opt_real(&self, col: &'static str) -> Option<f64> {
        match self.get(col) {
            Val::Int(i) => Some(*i as f64),
            Val::Real(r) => Some(*r),
            Val::Text(t) => t.trim().parse().ok(),
            Val::Null | Val::Blob(_) => None,
        }
    }
}

/// What a column holds, in words (for the notes on values that do not read).
fn noun(col: &'static str) -> &'static str {
    match col {
        "idx" | "job_idx" => "job number",
        "sample" => "sample number",
        c => c,
    }
}

/// A record read from a row, or `None` with the reason noted once (see `store::unknown`):
/// one odd row is left out, the rest still read.
pub(super) fn converted<T>(r: Result<T>) -> Option<T> {
    match r {
        Ok(v) => Some(v),
        Err(StoreError::BadValue { what, value, .. }) => {
            super::unknown::note_refused(what, &value);
            None
        }
        Err(e) => {
            super::unknown::note_refused("value", &e.to_string());
            None
        }
    }
}

/// A text value (or NULL), as the store keeps it (see [`stored_text`]).
pub fn text(s: Option<&str>) -> Val {
    s.map_or(Val::Null, |s| Val::Text(stored_text(s).into_owned()))
}

/// The one rule for what text the store keeps (defined beside the values it applies to).
pub use super::lane_tables::stored_text;

/// An integer value.
pub fn int(i: impl Into<i64>) -> Val {
    Val::Int(i.into())
}

/// An integer value (or NULL).
pub fn opt_int<I: Into<i64>>(i: Option<I>) -> Val {
    i.map_or(Val::Null, |i| Val::Int(i.into()))
}

/// Bytes (or NULL).
pub fn blob(b: Option<&[u8]>) -> Val {
    b.map_or(Val::Null, |b| Val::Blob(b.to_vec()))
}

/// A flag, as an integer 0 or 1 (a BOOLEAN on PostgreSQL).
pub fn flag(b: bool) -> Val {
    Val::Int(i64::from(b))
}

/// A real value (or NULL).
pub fn real(r: Option<f64>) -> Val {
    r.map_or(Val::Null, Val::Real)
}

impl Store {
    /// Saves records (each replacing the row of its key), in one transaction.
    pub fn save_records<R: Record>(&mut self, recs: &[R]) -> Result<()> {
        let rows: Vec<Row> = recs.iter().map(Record::to_row).collect();
        self.put_lane_rows(&[(R::table(), rows)], true)?;
        Ok(())
    }

    /// Every record of `R`'s table whose `col` is `value` (all of them for `None`), in key
    /// order; rows that do not read are left out, each named once (`store::unknown`).
    pub fn records_where<R: Record>(&self, filter: Option<(&str, &str)>) -> Result<Vec<R>> {
        let t = R::table();
        let sql = match filter {
            Some((col, _)) => format!(
                "SELECT {} FROM {} WHERE {col} = ?1 ORDER BY {}",
                t.col_list(),
                t.name,
                t.key_list()
            ),
            None => format!(
                "SELECT {} FROM {} ORDER BY {}",
                t.col_list(),
                t.name,
                t.key_list()
            ),
        };
        let mut st = self.conn.prepare_cached(&sql)?;
        let args: Vec<Val> = filter
            .map(|(_, v)| Val::Text(v.to_string()))
            .into_iter()
            .collect();
        // A row that does not read (written by hand, or by a newer prism) is left out and
        // named once, as on the shared store: the rest still read.
        Ok(
            super::lane_tables::sqlite_rows(&mut st, &args, t.cols.len())?
                .iter()
                .filter_map(|r| converted(R::from_row(r)))
                .collect(),
        )
    }

    /// Records of `R`'s table chosen by `tail` (a `WHERE ... ORDER BY ... LIMIT ...` written
    /// for the indexes the table has, with `?1`, `?2`... for `args`), read the one way.
    pub(crate) fn records_by<R: Record>(&self, tail: &str, args: &[Val]) -> Result<Vec<R>> {
        let t = R::table();
        let sql = format!("SELECT {} FROM {} {tail}", t.col_list(), t.name);
        let mut st = self.conn.prepare_cached(&sql)?;
        Ok(
            super::lane_tables::sqlite_rows(&mut st, args, t.cols.len())?
                .iter()
                .filter_map(|r| converted(R::from_row(r)))
                .collect(),
        )
    }

    /// Records of `R` from a whole statement whose columns are `R`'s table's, in order.
    pub(crate) fn records_from_sql<R: Record>(&self, sql: &str, args: &[Val]) -> Result<Vec<R>> {
        let t = R::table();
        let mut st = self.conn.prepare_cached(sql)?;
        Ok(
            super::lane_tables::sqlite_rows(&mut st, args, t.cols.len())?
                .iter()
                .filter_map(|r| converted(R::from_row(r)))
                .collect(),
        )
    }
}
