//! The commands other than `prism run` on a shared store (`--db postgres://...`): the lanes
//! (`detect`, `autohall`, `selfcheck`, `self-detect`, `entropy`), `score`, and the readers
//! (`runs`, `compare`, `report`). They plan, resume and report through
//! SQLite, so they work on this machine's store (the one the TUI mirrors the team's runs into):
//! what they need is pulled from the shared store first, and what they write goes back to it:
//! a detection or self-detection run's rows as they commit (`store::lane_push`), answer checks,
//! entailments and topics when the command ends. Either way the shared store ends with every
//! row, and the team's TUIs show them as they arrive.

use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::time::Duration;

use anyhow::{Context, bail};

use crate::store::lane_push::{self, Pusher};
use crate::store::lane_tables::{LaneKind, Table};
use crate::store::links::{Gate, RunKind};
use crate::store::pg::PgStore;
use crate::store::{Holder, Store, StoreHandle};

use super::run::default_db;
use crate::config::Dirs;

/// How long the end of a command waits for a shared store that went away, to push what is
/// left, before saying how to push it later.
const FINISH_PATIENCE: Duration = Duration::from_secs(30);

/// A lane command's shared store.
pub(super) struct SharedLane {
    pg: PgStore,
    /// This machine's store, which the lane works on.
    local: PathBuf,
    holder: Holder,
    working: Mutex<Option<Working>>,
}

struct Working {
    pusher: Pusher,
    kind: LaneKind,
    run: String,
}

/// `--db` when it names a shared store (a URL or a libpq key=value string).
pub(super) fn shared_url(db: Option<&PathBuf>) -> Option<&str> {
    db.and_then(|d| d.to_str())
        .filter(|s| crate::store::pg::is_url(s))
}

/// The store a lane command works on: `db` itself, or, when `db` names a shared store, this
/// machine's store with the shared one beside it.
pub(super) fn open(
    db: Option<&PathBuf>,
    dirs: &Dirs,
) -> anyhow::Result<(PathBuf, Option<SharedLane>)> {
    let Some(url) = shared_url(db) else {
        return Ok((db.cloned().unwrap_or_else(|| default_db(dirs)), None));
    };
    let pg = PgStore::connect(url)?;
    let local = default_db(dirs);
    crate::warn!(
        "working on {} through this machine's store {} (pulled from it first, every result \
         pushed to it as it is saved)",
        pg.shown(),
        local.display()
    );
    let holder = Holder {
        owner: format!(
            "{}-{}",
            crate::store::host_name(),
            crate::store::new_run_id()
        ),
        host: crate::store::host_name(),
        pid: i64::from(std::process::id()),
    };
    Ok((
        local.clone(),
        Some(SharedLane {
            pg,
            local,
            holder,
            working: Mutex::new(None),
        }),
    ))
}

/// For the commands that read runs (`prism runs`, `compare`, `report`): `db` itself, or, when
/// it names a shared store, this machine's store brought up to date from it first (as the
/// TUI's mirror does: what it lacks, and what changed since it last looked).
pub(super) fn synced(
    db: Option<&PathBuf>,
    dirs: &Dirs,
) -> anyhow::Result<(PathBuf, Option<PgStore>)> {
    let Some(url) = shared_url(db) else {
        return Ok((db.cloned().unwrap_or_else(|| default_db(dirs)), None));
    };
    let pg = PgStore::connect(url)?;
    let local = default_db(dirs);
    let p = crate::store::mirror::Mirror::new(pg.clone(), Store::open(&local)?)
        .pull()
        .with_context(|| format!("reading the runs of {}", pg.shown()))?;
    crate::warn!(
        "{} is read through this machine's store {}: {} new run(s), {} answer(s), {} score(s), {} other result(s) pulled",
        pg.shown(),
        local.display(),
        p.runs,
        p.answers,
        p.scores,
        p.lane_rows
    );
    if p.trusted > 0 {
        crate::warn!(
            "{} run(s) held by both stores are now linked to {} (this store mirrored it before prism kept links)",
            p.trusted,
            pg.shown()
        );
    }
    if let Some(r) = p.refused_words() {
        crate::warn!("{r}: {} row(s) in all, left out", p.refused_rows);
    }
    Ok((local, Some(pg)))
}

impl SharedLane {
    pub(super) fn shown(&self) -> &str {
        self.pg.shown()
    }

    fn local_store(&self) -> anyhow::Result<Store> {
        Ok(Store::open(&self.local)?)
    }

    /// Brings run `id` (or the shared store's newest) into this machine's store, with what it
    /// lacks of its answers and scores; its id.
    pub(super) fn pull_run(&self, id: Option<&str>) -> anyhow::Result<String> {
        let id = match id {
            Some(id) => id.to_string(),
            None => self
                .pg
                .runs()?
                .into_iter()
                .next()
                .map(|r| r.id)
                .with_context(|| format!("no runs in {}", self.pg.shown()))?,
        };
        let bundle = self
            .pg
            .run_bundle(&id)?
            .with_context(|| format!("no run {id} in {}", self.pg.shown()))?;
        let mut local = self.local_store()?;
        self.admit_whole(&mut local, RunKind::Answers, &id)?;
        let added = local.put_run_bundle(&bundle)?;
        crate::warn!(
            "run {id} from {}: {} answer(s), {} score(s) new here",
            self.pg.shown(),
            added.responses,
            added.scores
        );
        Ok(id)
    }

    /// Brings a detection or self-detection run into this machine's store (each row only
    /// moved forward: what this machine has further along stays).
    pub(super) fn pull_lane(&self, kind: LaneKind, id: &str) -> anyhow::Result<()> {
        let rows = kind
            .tables()
            .iter()
            .map(|t| Ok((*t, self.pg.lane_rows(t, Some(id))?)))
            .collect::<anyhow::Result<Vec<_>>>()?;
        if rows[0].1.is_empty() {
            bail!("no {} run {id} in {}", kind.noun(), self.pg.shown());
        }
        let mut local = self.local_store()?;
        self.admit_whole(&mut local, RunKind::of_lane(kind), id)?;
        local.put_lane_rows(&rows, false)?;
        Ok(())
    }

    /// A whole run taken from the shared store by name: refused when this machine has a run of
    /// that id that never came from there nor went there (see `store::links`); else linked.
    fn admit_whole(&self, local: &mut Store, kind: RunKind, id: &str) -> anyhow::Result<()> {
        let mut gate = Gate::open(local, self.pg.shown())?;
        if !gate.admit_run(kind, id) {
            bail!(
                "run {} exists on this machine and was never pulled from or pushed to {}: its \
                 rows there are not taken into this machine's run (work on it with --db {})",
                crate::text::one_line(id),
                self.pg.shown(),
                self.local.display()
            );
        }
        gate.save(local)?;
        Ok(())
    }

    /// Records that a run of this machine's store is on the shared store (pushed from here), so
    /// the rows others add to it there come back.
    fn link(&self, kind: RunKind, id: &str) -> anyhow::Result<()> {
        self.local_store()?
            .link_runs(self.pg.shown(), &[(kind, id)])?;
        Ok(())
    }

    /// Brings a table kept beside runs (entailments, topics) or a run's rows of one (answer
    /// checks) into this machine's store: what is known is never asked again.
    pub(super) fn pull_table(&self, t: &'static Table, run: Option<&str>) -> anyhow::Result<()> {
        let rows = self.pg.lane_rows(t, run)?;
        let mut local = self.local_store()?;
        let mut gate = Gate::open(&local, self.pg.shown())?;
        let rows = gate.lane_rows(t, rows);
        for (_, id, n) in gate.take_refused() {
            crate::warn!(
                "{n} row(s) of {} for run {} left out: that run exists only on this machine",
                t.name,
                crate::text::one_line(&id)
            );
        }
        local.put_lane_rows(&[(t, rows)], false)?;
        Ok(())
    }

    /// Pushes what this machine's store has of a table (of one run when given) to the shared
    /// store; how many rows were new or further along.
    pub(super) fn push_table(&self, t: &'static Table, run: Option<&str>) -> anyhow::Result<()> {
        let rows = self.local_store()?.lane_rows(t, run)?;
        let n = self
            .pg
            .put_lane_rows(vec![(t, rows)], false)
            .with_context(|| {
                format!(
                    "pushing {} to the shared store (they are kept in {}; push them later with \
                     prism db copy {} URL)",
                    t.name,
                    self.local.display(),
                    self.local.display()
                )
            })?;
        crate::warn!("{n} row(s) of {} pushed to {}", t.name, self.pg.shown());
        Ok(())
    }

    /// Puts a run's scores on the shared store, each replacing the one there (a run scored
    /// again with another judge or rules).
    pub(super) fn push_scores(&self, scores: &[crate::store::ScoreRecord]) -> anyhow::Result<()> {
        self.pg.save_scores(scores).with_context(|| {
            format!(
                "pushing the scores to the shared store (they are kept in {})",
                self.local.display()
            )
        })?;
        crate::warn!("{} score(s) pushed to {}", scores.len(), self.pg.shown());
        Ok(())
    }

    /// Pushes a lane run as this machine's store has it (a run imported or read again here):
    /// the rows the shared store lacks or has behind; how many.
    pub(super) fn push_lane(&self, kind: LaneKind, id: &str) -> anyhow::Result<usize> {
        self.link(RunKind::of_lane(kind), id)?;
        Ok(lane_push::reconcile(
            &self.local_store()?,
            &self.pg,
            kind,
            id,
        )?)
    }

    /// The handle a lane's run works through: on this machine's store, each commit pushed to
    /// the shared store. The run is held there first (one process at a time).
    pub(super) fn handle(
        &self,
        store: Store,
        kind: LaneKind,
        run: &str,
    ) -> anyhow::Result<StoreHandle> {
        if let Err(h) = self.pg.take_lane(run, &self.holder)? {
            bail!(
                "{} run {run} is being worked on by process {} on {} (heard from {} s ago); \
                 wait for it, or resume after it stops ({} s without a heartbeat)",
                kind.noun(),
                h.pid,
                crate::text::one_line(&h.host),
                h.age,
                crate::store::STALE_AFTER_SECS
            );
        }
        self.link(RunKind::of_lane(kind), run)?;
        // The run as it stands here goes first, whatever an earlier session here left unpushed.
        let ahead = lane_push::reconcile(&store, &self.pg, kind, run)?;
        if ahead > 0 {
            crate::warn!("{ahead} row(s) of {run} kept here from before pushed");
        }
        let pusher = Pusher::start(
            &self.local,
            self.pg.clone(),
            run.to_string(),
            self.holder.clone(),
            |m| crate::warn!("{m}"),
        )?;
        let push = pusher.sender();
        *self.working.lock().unwrap_or_else(|e| e.into_inner()) = Some(Working {
            pusher,
            kind,
            run: run.to_string(),
        });
        Ok(StoreHandle::spawn_pushing(
            store,
            Some(self.local.clone()),
            Some(push),
        ))
    }

    /// After the lane: what is left pushed (after an outage, the whole run checked against
    /// the shared store once more), the run let go. Says what went; an error says how to push
    /// it later.
    pub(super) fn finish(&self) -> anyhow::Result<()> {
        let Some(w) = self
            .working
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .take()
        else {
            return Ok(());
        };
        let later = format!(
            "the results are kept in {}; push them with prism db copy {} {} --run {}",
            self.local.display(),
            self.local.display(),
            self.pg.shown(),
            w.run
        );
        let done = w
            .pusher
            .finish(FINISH_PATIENCE)
            .with_context(|| later.clone())?;
        let pushed = done.changes;
        // After an outage the whole run is checked once more (each row only moved forward).
        let rest = if done.clean {
            0
        } else {
            lane_push::reconcile(&self.local_store()?, &self.pg, w.kind, &w.run)
                .with_context(|| later.clone())?
        };
        // A lane that stopped before it made its run (a model file missing) pushed nothing:
        // nothing to say.
        if pushed + rest == 0 {
            return Ok(());
        }
        crate::warn!(
            "{} run {} is on {}: {} change(s) pushed as they were saved{}",
            w.kind.noun(),
            w.run,
            self.pg.shown(),
            pushed,
            if rest > 0 {
                format!(", {rest} missed row(s) at the end")
            } else {
                String::new()
            }
        );
        Ok(())
    }
}

impl Drop for SharedLane {
    /// A command that stopped on an error still pushes what its run saved.
    fn drop(&mut self) {
        if let Err(e) = self.finish() {
            crate::warn!("{e:#}");
        }
    }
}

/// The handle of a lane run on `db`, pushed to the shared store when there is one.
pub(super) fn handle(
    shared: Option<&SharedLane>,
    store: Store,
    db: &Path,
    kind: LaneKind,
    run: &str,
) -> anyhow::Result<StoreHandle> {
    match shared {
        Some(s) => s.handle(store, kind, run),
        None => Ok(StoreHandle::spawn(store, Some(db.to_path_buf()))),
    }
}
