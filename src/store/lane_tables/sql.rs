//! The SQL a described table makes of itself: its DDL on either backend, its select, its
//! upsert that only moves a row forward (see the module above).

use super::{Row, Table};

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
