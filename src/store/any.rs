//! A store of runs wherever it is: this machine's SQLite file or a shared PostgreSQL database.
//! What runs need of either (a run, its jobs, a handle to work through, whole runs to move
//! between stores) goes through here; the rest of prism reads the SQLite store directly.

use super::Location;
use super::lane_tables::{LaneKind, Row, Table};
use super::links::{Gate, RunKind};
use super::pg::PgStore;
use super::{Added, Cached, JobRecord, JobState, Result, RunBundle, RunRecord, Store};

pub enum AnyStore {
    Local(Store),
    Shared(PgStore),
}

impl AnyStore {
    /// The one place a backend is chosen: what `loc` names, connected (a SQLite file is
    /// made if missing; a shared store's tables are made or brought up to date).
    pub(crate) fn connect(loc: &Location) -> Result<AnyStore> {
        Ok(match loc {
            Location::Shared(url) => AnyStore::Shared(PgStore::connect(url)?),
            Location::File(path) => AnyStore::Local(Store::open(path)?),
        })
    }

    pub fn is_shared(&self) -> bool {
        matches!(self, AnyStore::Shared(_))
    }

    pub fn run(&self, id: &str) -> Result<Option<RunRecord>> {
        match self {
            AnyStore::Local(s) => s.run(id),
            AnyStore::Shared(p) => p.run(id),
        }
    }

    /// Every run, newest first.
    pub fn runs(&self) -> Result<Vec<RunRecord>> {
        match self {
            AnyStore::Local(s) => s.runs(),
            AnyStore::Shared(p) => p.runs(),
        }
    }

    /// A run's jobs in order, with their state.
    pub fn jobs(&self, id: &str) -> Result<Vec<(JobRecord, JobState)>> {
        match self {
            AnyStore::Local(s) => s.jobs(id),
            AnyStore::Shared(p) => Ok(p.jobs(id)?.into_iter().map(|(j, s, _)| (j, s)).collect()),
        }
    }

    pub fn run_bundle(&self, id: &str) -> Result<Option<RunBundle>> {
        match self {
            AnyStore::Local(s) => s.run_bundle(id),
            AnyStore::Shared(p) => p.run_bundle(id),
        }
    }

    pub fn run_bundle_part(
        &self,
        id: &str,
        jobs: std::ops::Range<u32>,
    ) -> Result<Option<RunBundle>> {
        match self {
            AnyStore::Local(s) => s.run_bundle_part(id, jobs),
            AnyStore::Shared(p) => p.run_bundle_part(id, jobs),
        }
    }

    pub fn put_run_bundle(&mut self, b: &RunBundle) -> Result<Added> {
        match self {
            AnyStore::Local(s) => s.put_run_bundle(b),
            AnyStore::Shared(p) => p.put_run_bundle(b),
        }
    }

    pub fn cache_entries(&self) -> Result<Vec<(String, Cached)>> {
        match self {
            AnyStore::Local(s) => s.cache_entries(),
            AnyStore::Shared(p) => p.cache_entries(),
        }
    }

    pub fn put_cache_entries(&mut self, es: &[(String, Cached)]) -> Result<usize> {
        match self {
            AnyStore::Local(s) => s.put_cache_entries(es),
            AnyStore::Shared(p) => p.put_cache_entries(es),
        }
    }

    /// A lane table's rows (of one run when given; see `lane_tables`).
    pub fn lane_rows(&self, t: &'static Table, run: Option<&str>) -> Result<Vec<Row>> {
        match self {
            AnyStore::Local(s) => s.lane_rows(t, run),
            AnyStore::Shared(p) => p.lane_rows(t, run),
        }
    }

    /// Rows of several lane tables in one transaction, each only moved forward.
    pub fn put_lane_rows(&mut self, rows: Vec<(&'static Table, Vec<Row>)>) -> Result<usize> {
        match self {
            AnyStore::Local(s) => s.put_lane_rows(&rows, false),
            AnyStore::Shared(p) => p.put_lane_rows(rows, false),
        }
    }

    /// Every run of a lane: its id and status.
    pub fn lane_statuses(&self, kind: LaneKind) -> Result<Vec<(String, String)>> {
        match self {
            AnyStore::Local(s) => s.lane_statuses(kind),
            AnyStore::Shared(p) => p.lane_statuses(kind),
        }
    }

    /// Everything of one lane run, table by table (parents first).
    pub fn lane_run(&self, kind: LaneKind, id: &str) -> Result<Vec<(&'static Table, Vec<Row>)>> {
        kind.tables()
            .iter()
            .map(|t| Ok((*t, self.lane_rows(t, Some(id))?)))
            .collect()
    }
}

/// Which runs a copy between two stores may touch (see `store::links`). Copying from a shared
/// store into a SQLite one takes a run only if the SQLite store lacks it or got it from there
/// (then it is linked); copying a SQLite store's run to a shared store links it there, unless
/// the shared store holds a run of that id made elsewhere (then it is left alone). Between two
/// stores of one kind nothing is checked: both are the user's own files, or both shared.
pub struct CopyLinks {
    /// Pulling into a SQLite store: the gate over what comes.
    pulling: Option<Gate>,
    /// Pushing from a SQLite store: the gate naming what went before.
    pushing: Option<Gate>,
}

impl CopyLinks {
    pub fn open(source: &AnyStore, target: &AnyStore) -> Result<CopyLinks> {
        Ok(match (source, target) {
            (AnyStore::Shared(p), AnyStore::Local(s)) => CopyLinks {
                pulling: Some(Gate::open(s, p.shown())?),
                pushing: None,
            },
            (AnyStore::Local(s), AnyStore::Shared(p)) => CopyLinks {
                pulling: None,
                pushing: Some(Gate::open(s, p.shown())?),
            },
            _ => CopyLinks {
                pulling: None,
                pushing: None,
            },
        })
    }

    /// Whether run `id` may be copied (and, if so, it is linked: kept at once, so a copy that
    /// stops keeps what it linked).
    pub fn admit(
        &mut self,
        kind: RunKind,
        id: &str,
        source: &mut AnyStore,
        target: &mut AnyStore,
    ) -> Result<bool> {
        if let (Some(g), AnyStore::Local(s)) = (&mut self.pulling, &mut *target) {
            if !g.admit_run(kind, id) {
                return Ok(false);
            }
            g.save(s)?;
        }
        if let (Some(g), AnyStore::Local(s), AnyStore::Shared(p)) =
            (&mut self.pushing, &mut *source, &*target)
            && !g.is_linked(kind, id)
        {
            let there = p.holds_run(kind, id)?;
            if there {
                return Ok(false);
            }
            g.link(kind, id);
            g.save(s)?;
        }
        Ok(true)
    }

    /// The rows of a table kept beside runs that may be copied (answer checks go by their run).
    pub fn lane_rows(&mut self, t: &Table, rows: Vec<Row>) -> Vec<Row> {
        match &mut self.pulling {
            Some(g) => g.lane_rows(t, rows),
            None => rows,
        }
    }
}
