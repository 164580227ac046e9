//! What can go wrong in the store, with the file or record it concerns.

use std::path::PathBuf;

#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    #[error("{0}")]
    Sqlite(#[from] rusqlite::Error),
    #[error("{0}")]
    Value(#[from] rusqlite::types::FromSqlError),
    #[error("opening store {path}: {source}")]
    Open {
        path: PathBuf,
        source: Box<StoreError>,
    },
    #[error("creating {path}: {source}")]
    Io {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("this store was written by a newer prism (schema {found}, this one knows {known})")]
    NewerSchema { found: usize, known: usize },
    #[error("run {run}: unreadable config: {source}")]
    RunConfig {
        run: String,
        source: serde_json::Error,
    },
    #[error("{what}: {source}")]
    Json {
        what: &'static str,
        source: serde_json::Error,
    },
    /// The shared (PostgreSQL) store; the message never holds a password.
    #[error("{0}")]
    Shared(String),
    /// A PostgreSQL URL where a SQLite store is needed (shown without its password).
    #[error(
        "{0} is a PostgreSQL database; this command keeps its data in a SQLite store (a file): PostgreSQL holds the review panel's decisions and quality scores (prism review, prism quality, the review screen)"
    )]
    NotSqlite(String),
    /// A run of this store that a shared store also holds, made elsewhere (see `store::links`).
    #[error(
        "run {run} is on {store} already, made elsewhere (this machine never pulled it from there nor pushed it): not mixed with this machine's run of that id"
    )]
    ForeignRun { run: String, store: String },
    #[error("unknown {what} {value:?} in the store")]
    Unknown { what: &'static str, value: String },
    /// A stored value this prism cannot hold as its record does (a job number past 2^32, a
    /// missing required column): the row is left out by whoever reads it.
    #[error("out-of-range {what} {value} in {table}")]
    BadValue {
        table: &'static str,
        what: &'static str,
        value: String,
    },
}

pub type Result<T> = std::result::Result<T, StoreError>;
