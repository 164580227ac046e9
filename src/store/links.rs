//! Which runs of this store are shared with which shared store: pulled from it, or pushed to
//! it. A shared store is written by every member of a team, and not all of them are trusted
//! with this machine's own work, so a row pulled from it (an answer, a score, a status, a name,
//! a detection result) is taken only for a run this store got from there or gave to it. A row
//! for a run that exists only on this machine is refused and counted, never applied: otherwise
//! anyone who can write to the team's database could rewrite a colleague's local report, or
//! mark failed jobs done so that `--resume` never redoes them.
//!
//! Stores mirrored before this table existed (SQLite migration 18) trust, once, the runs they
//! hold in common with a shared store they had already mirrored (migration 18 leaves a
//! [`LEGACY`] mark for each), as they trusted them before.

use std::collections::{BTreeMap, HashSet};

use rusqlite::params;

use super::Store;
use super::error::Result;
use super::lane_tables::{LaneKind, Row, Table, Val};

/// The kind of run a row belongs to: run ids are unique only within their own table, so a
/// link names the table too (a planted detection run with the id of a local answers run links
/// nothing but itself).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum RunKind {
    Answers,
    Detect,
    Selfcheck,
}

impl RunKind {
    fn as_str(self) -> &'static str {
        match self {
            RunKind::Answers => "runs",
            RunKind::Detect => "detect_runs",
            RunKind::Selfcheck => "selfcheck_runs",
        }
    }

    fn parse(s: &str) -> Option<RunKind> {
        Some(match s {
            "runs" => RunKind::Answers,
            "detect_runs" => RunKind::Detect,
            "selfcheck_runs" => RunKind::Selfcheck,
            _ => return None,
        })
    }

    pub fn of_lane(kind: LaneKind) -> RunKind {
        match kind {
            LaneKind::Detect => RunKind::Detect,
            LaneKind::Selfcheck => RunKind::Selfcheck,
        }
    }

    /// The run a lane table's rows belong to (`None`: the table is kept across runs, as
    /// entailments and topics are).
    pub fn of_table(t: &Table) -> Option<RunKind> {
        t.run_col?;
        Some(if t.name.starts_with("detect_") {
            RunKind::Detect
        } else if t.name.starts_with("selfcheck_") {
            RunKind::Selfcheck
        } else {
            // answer_checks: the run whose answers were checked.
            RunKind::Answers
        })
    }
}

/// The mark migration 18 leaves for a shared store mirrored before links were kept.
pub(super) const LEGACY: &str = "*legacy*";

/// Admits or refuses the rows pulled from one shared store into this one (see the module's
/// notes). New links are kept in memory until [`Gate::save`].
#[derive(Debug)]
pub struct Gate {
    store: String,
    linked: HashSet<(RunKind, String)>,
    local: HashSet<(RunKind, String)>,
    fresh: Vec<(RunKind, String)>,
    /// Rows refused per run that exists only on this machine.
    pub refused: BTreeMap<(RunKind, String), usize>,
    /// Whether the store still holds the one-time trust of a store mirrored before links.
    pub legacy: bool,
}

impl Gate {
    /// The gate for rows coming from the shared store shown as `store` into `local`.
    pub fn open(local: &Store, store: &str) -> Result<Gate> {
        let mut linked = HashSet::new();
        let mut legacy = false;
        {
            let mut st = local
                .conn
                .prepare("SELECT kind, run_id FROM shared_links WHERE store = ?1")?;
            let rows = st.query_map([store], |r| {
                Ok((r.get::<_, String>("kind")?, r.get::<_, String>("run_id")?))
            })?;
            for row in rows {
                let (kind, id) = row?;
                match RunKind::parse(&kind) {
                    Some(k) => {
                        linked.insert((k, id));
                    }
                    None if kind == LEGACY => legacy = true,
                    None => {}
                }
            }
        }
        let mut local_runs = HashSet::new();
        for kind in [RunKind::Answers, RunKind::Detect, RunKind::Selfcheck] {
            let mut st = local
                .conn
                .prepare(&format!("SELECT id FROM {}", kind.as_str()))?;
            for id in st.query_map([], |r| r.get::<_, String>("id"))? {
                local_runs.insert((kind, id?));
            }
        }
        Ok(Gate {
            store: store.to_string(),
            linked,
            local: local_runs,
            fresh: Vec::new(),
            refused: BTreeMap::new(),
            legacy,
        })
    }

    /// A whole run arriving: admitted (and linked) when this store lacks it or got it from
    /// there; a run that exists only on this machine is refused.
    pub fn admit_run(&mut self, kind: RunKind, id: &str) -> bool {
        let key = (kind, id.to_string());
        if self.linked.contains(&key) {
            return true;
        }
        if self.local.contains(&key) {
            *self.refused.entry(key).or_default() += 1;
            return false;
        }
        self.linked.insert(key.clone());
        self.local.insert(key.clone());
        self.fresh.push(key);
        true
    }

    /// A row of run `id`: admitted only when the run is linked to this shared store.
    pub fn admits(&mut self, kind: RunKind, id: &str) -> bool {
        let key = (kind, id.to_string());
        if self.linked.contains(&key) {
            return true;
        }
        *self.refused.entry(key).or_default() += 1;
        false
    }

    /// Whether run `id` is linked (no counting).
    pub fn is_linked(&self, kind: RunKind, id: &str) -> bool {
        self.linked.contains(&(kind, id.to_string()))
    }

    /// Links `id` as pushed to (or explicitly taken from) this shared store.
    pub fn link(&mut self, kind: RunKind, id: &str) {
        let key = (kind, id.to_string());
        if self.linked.insert(key.clone()) {
            self.local.insert(key.clone());
            self.fresh.push(key);
        }
    }

    /// The lane rows this gate admits: rows of a lane's runs table are whole runs (a new run
    /// is linked), other rows are admitted by their run; tables kept across runs pass.
    pub fn lane_rows(&mut self, t: &Table, rows: Vec<Row>) -> Vec<Row> {
        let Some(kind) = RunKind::of_table(t) else {
            return rows;
        };
        let runs_table = LaneKind::ALL.iter().any(|k| k.runs_table().name == t.name);
        rows.into_iter()
            .filter(|r| match run_of(t, r) {
                Some(id) if runs_table => self.admit_run(kind, id),
                Some(id) => self.admits(kind, id),
                None => false,
            })
            .collect()
    }

    /// The one-time trust of a store mirrored before links were kept: links every run both
    /// stores hold (`theirs`), then drops the mark. How many it linked.
    pub fn trust_legacy(&mut self, theirs: &[(RunKind, String)]) -> usize {
        if !self.legacy {
            return 0;
        }
        let mut n = 0;
        for key in theirs {
            if self.local.contains(key) && !self.linked.contains(key) {
                self.link(key.0, &key.1);
                n += 1;
            }
        }
        n
    }

    /// Keeps the new links (and drops a legacy mark once it was used).
    pub fn save(&mut self, local: &mut Store) -> Result<()> {
        if self.fresh.is_empty() && !self.legacy {
            return Ok(());
        }
        let tx = local.conn.transaction()?;
        {
            let mut st = tx.prepare_cached(
                "INSERT OR IGNORE INTO shared_links (store, kind, run_id) VALUES (?1, ?2, ?3)",
            )?;
            for (kind, id) in &self.fresh {
                st.execute(params![self.store, kind.as_str(), id])?;
            }
            if self.legacy {
                tx.execute(
                    "DELETE FROM shared_links WHERE store = ?1 AND kind = ?2",
                    params![self.store, LEGACY],
                )?;
            }
        }
        tx.commit()?;
        self.fresh.clear();
        self.legacy = false;
        Ok(())
    }

    /// The refusals since the last call, each run once: (kind, run id, rows refused).
    pub fn take_refused(&mut self) -> Vec<(RunKind, String, usize)> {
        std::mem::take(&mut self.refused)
            .into_iter()
            .map(|((k, id), n)| (k, id, n))
            .collect()
    }
}

/// The run a lane row belongs to, by the table's run column.
fn run_of<'a>(t: &Table, row: &'a Row) -> Option<&'a str> {
    let col = t.run_col?;
    let i = t.cols.iter().position(|(c, _)| *c == col)?;
    match row.get(i) {
        Some(Val::Text(s)) => Some(s),
        _ => None,
    }
}

impl Store {
    /// Records that runs of this store are shared with `store` (pushed to it, or pulled from
    /// it by name).
    pub fn link_runs(&self, store: &str, runs: &[(RunKind, &str)]) -> Result<()> {
        let tx = self.conn.unchecked_transaction()?;
        {
            let mut st = tx.prepare_cached(
                "INSERT OR IGNORE INTO shared_links (store, kind, run_id) VALUES (?1, ?2, ?3)",
            )?;
            for (kind, id) in runs {
                st.execute(params![store, kind.as_str(), id])?;
            }
        }
        tx.commit()?;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::lane_tables::{ANSWER_CHECKS, DETECT_RUNS, DETECT_TARGETS, ENTAILMENTS};

    fn store_with_run(id: &str) -> Store {
        let s = Store::open_in_memory().unwrap();
        s.conn
            .execute(
                "INSERT INTO runs (id, created_at, dataset, config, status) VALUES (?1, 0, 'd', '{}', 'finished')",
                [id],
            )
            .unwrap();
        s
    }

    #[test]
    fn only_runs_from_the_shared_store_take_its_rows() {
        let mut s = store_with_run("mine");
        let mut g = Gate::open(&s, "postgres://team@db/x").unwrap();
        // This machine's own run: neither whole nor row by row.
        assert!(!g.admit_run(RunKind::Answers, "mine"));
        assert!(!g.admits(RunKind::Answers, "mine"));
        // A run this store lacks comes whole and is linked; its rows follow.
        assert!(g.admit_run(RunKind::Answers, "theirs"));
        assert!(g.admits(RunKind::Answers, "theirs"));
        // A detection run named like a local answers run links only itself.
        assert!(g.admit_run(RunKind::Detect, "mine"));
        assert!(!g.admits(RunKind::Answers, "mine"));
        assert_eq!(
            g.take_refused(),
            vec![(RunKind::Answers, "mine".to_string(), 3)]
        );
        g.save(&mut s).unwrap();
        let g = Gate::open(&s, "postgres://team@db/x").unwrap();
        assert!(g.is_linked(RunKind::Answers, "theirs"));
        assert!(!g.is_linked(RunKind::Answers, "mine"));
        // Another shared store has linked nothing.
        let g = Gate::open(&s, "postgres://other@db/y").unwrap();
        assert!(!g.is_linked(RunKind::Answers, "theirs"));
    }

    #[test]
    fn a_pushed_run_takes_rows_and_lane_rows_go_by_their_run() {
        let s = store_with_run("mine");
        s.link_runs("pg", &[(RunKind::Answers, "mine")]).unwrap();
        let mut g = Gate::open(&s, "pg").unwrap();
        assert!(g.admits(RunKind::Answers, "mine"));
        let check = |run: &str| {
            let mut r = vec![Val::Null; ANSWER_CHECKS.cols.len()];
            r[0] = Val::Text(run.into());
            r
        };
        let kept = g.lane_rows(&ANSWER_CHECKS, vec![check("mine"), check("stranger")]);
        assert_eq!(kept, vec![check("mine")]);
        // A new detection run is linked with its first row, then its targets pass.
        let run = |id: &str| {
            let mut r = vec![Val::Null; DETECT_RUNS.cols.len()];
            r[0] = Val::Text(id.into());
            r
        };
        assert_eq!(g.lane_rows(&DETECT_RUNS, vec![run("d1")]).len(), 1);
        let target = |id: &str| {
            let mut r = vec![Val::Null; DETECT_TARGETS.cols.len()];
            r[0] = Val::Text(id.into());
            r
        };
        assert_eq!(g.lane_rows(&DETECT_TARGETS, vec![target("d1")]).len(), 1);
        assert_eq!(g.lane_rows(&DETECT_TARGETS, vec![target("d2")]).len(), 0);
        // Entailments are kept across runs: they pass.
        let e = vec![Val::Null; ENTAILMENTS.cols.len()];
        assert_eq!(g.lane_rows(&ENTAILMENTS, vec![e]).len(), 1);
    }

    #[test]
    fn a_store_mirrored_before_links_trusts_the_runs_it_shares_once() {
        let mut s = store_with_run("old");
        s.conn
            .execute(
                "INSERT INTO shared_links (store, kind, run_id) VALUES ('pg', ?1, '')",
                [LEGACY],
            )
            .unwrap();
        let mut g = Gate::open(&s, "pg").unwrap();
        assert!(g.legacy);
        let theirs = vec![
            (RunKind::Answers, "old".to_string()),
            (RunKind::Answers, "new".to_string()),
        ];
        assert_eq!(g.trust_legacy(&theirs), 1);
        g.save(&mut s).unwrap();
        let mut g = Gate::open(&s, "pg").unwrap();
        assert!(!g.legacy && g.is_linked(RunKind::Answers, "old"));
        assert_eq!(g.trust_legacy(&theirs), 0);
    }
}
