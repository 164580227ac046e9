//! The one way into a store. A command names its store (`--db`, or the config's `db`) and gets
//! a [`Db`]; whether that is a SQLite file or a shared PostgreSQL database is this module's
//! business, and nothing outside `src/store/` asks.
//!
//! The sharing model, the same everywhere: **every command works on this machine's store** (a
//! SQLite file; with a shared store, the copy the TUI mirrors the team's runs into), and one
//! sync component moves rows between it and the shared store. What a command needs is pulled
//! first ([`Db::sync`], [`Db::pull_run`], [`Db::pull_lane`], [`Db::pull_table`]); what it
//! writes goes back as it is saved: a lane's handle ([`Db::lane_handle`],
//! [`Db::records_handle`]) tells the pusher each commit (detection and self-detection runs,
//! topics, entailment verdicts, answer checks, quality scores), and what a command keeps in
//! memory until it ends is pushed then ([`Db::push_table`], [`Db::push_scores`]). The one
//! exception is the answers of a shared run (`prism run --db URL`, `prism work`): the shared
//! store decides which worker answers each job (leases, `FOR UPDATE SKIP LOCKED`) and which
//! answer stands, so those go to it directly ([`Db::run_handle`]) and reach this machine's copy
//! through the mirror like every other row. Review decisions are the panel's, read and written
//! where it keeps them (`db_review.rs`).
//!
//! Code outside the store holds a `Db` and nothing else of it: reads go through [`Db::read`]
//! (`db_read.rs`), whole writes a command makes through a `Db` method (`db_write.rs`), a lane's
//! answers and records through the writer a `Db` hands out.

use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::time::Duration;

use anyhow::{Context, bail};

use super::Location;
use super::lane_push::{self, Pusher};
use super::lane_tables::{LaneKind, Table};
use super::links::{Gate, RunKind};
use super::pg::PgStore;
use super::{Holder, JobRecord, JobState, RunRecord, Store, StoreHandle};

/// How long the end of a command waits for a shared store that went away, to push what is
/// left, before saying how to push it later.
const FINISH_PATIENCE: Duration = Duration::from_secs(30);

/// A store as a command named it: this machine's SQLite store, and the shared store beside it
/// when the name was one.
pub struct Db {
    /// This machine's store: what every command works on.
    local: PathBuf,
    shared: Option<Shared>,
    /// This machine's store opened for reading, on the first read (see `db_read.rs`).
    pub(super) reader: super::db_read::Reader,
    /// The review panel's store, opened on first use (see `db_review.rs`).
    pub(super) review: Mutex<Option<super::Panel>>,
    /// Lists of runs read from the shared store itself ([`Db::listing_shared`]), not from
    /// this machine's copy.
    pub(super) lists_shared: bool,
}

struct Shared {
    pg: PgStore,
    holder: Holder,
    working: Mutex<Option<Working>>,
}

/// The lane run (or records lock) a command is pushing.
struct Working {
    pusher: Pusher,
    /// A detection or self-detection run (checked whole again after an outage); `None` for a
    /// records lane, whose rows are all told as they commit.
    kind: Option<LaneKind>,
    /// What a records lane's rows are called in messages.
    noun: &'static str,
    run: String,
}

/// A store's name as messages show it: a file's path, or a URL without its password.
pub fn shown_name(name: &Path) -> String {
    Location::of(name).shown()
}

impl Db {
    /// The store `arg` names (`None`: `default_local`). A shared store's URL connects to it
    /// (its tables are made or brought up to date) and works through `default_local`.
    pub fn open(arg: Option<&Path>, default_local: &Path) -> anyhow::Result<Db> {
        let url = match arg.map(Location::of) {
            Some(Location::Shared(url)) => url,
            Some(Location::File(local)) => return Ok(Db::file(&local)),
            None => return Ok(Db::file(default_local)),
        };
        Ok(Db::of(
            default_local,
            Some(Shared {
                pg: PgStore::connect(&url)?,
                holder: Holder {
                    owner: format!("{}-{}", super::host_name(), super::new_run_id()),
                    host: super::host_name(),
                    pid: i64::from(std::process::id()),
                },
                working: Mutex::new(None),
            }),
        ))
    }

    /// A `Db` on `local` (and `shared`), nothing opened yet.
    fn of(local: &Path, shared: Option<Shared>) -> Db {
        Db {
            local: local.to_path_buf(),
            shared,
            reader: Default::default(),
            review: Mutex::new(None),
            lists_shared: false,
        }
    }

    /// What a command that works with the team uses (the TUI, the review panel, the quality
    /// agent): `arg`, else the config's `db` when it names a shared store, else this machine's
    /// store. Not connected: see [`Db::open`].
    pub fn configured(arg: Option<&Path>, config_db: Option<&str>) -> Option<PathBuf> {
        arg.map(Path::to_path_buf).or_else(|| {
            let d = PathBuf::from(config_db?);
            Location::of(&d).is_shared().then_some(d)
        })
    }

    /// This machine's store at `path`, a file (what a command that takes no shared store, or
    /// the TUI's own connections, open).
    pub fn file(path: &Path) -> Db {
        Db::of(path, None)
    }

    /// Another `Db` on the same stores with connections of its own, for another thread (the
    /// TUI's store thread). What this one is pushing stays this one's.
    pub fn again(&self) -> Db {
        let shared = self.shared.as_ref().map(|s| Shared {
            pg: s.pg.clone(),
            holder: s.holder.clone(),
            working: Mutex::new(None),
        });
        Db::of(&self.local, shared)
    }

    /// The same store, whose lists of runs ([`Db::runs_page`] and the rest of what a list
    /// reads) a shared store answers itself: a new machine lists a team's history without
    /// pulling its answers (`prism runs`). Everything else still reads this machine's store.
    pub fn listing_shared(mut self) -> Db {
        self.lists_shared = true;
        self
    }

    /// A shared store only: a file is refused with `refusal` (given the file's name).
    pub fn open_shared(
        arg: &str,
        default_local: &Path,
        refusal: impl FnOnce(&str) -> String,
    ) -> anyhow::Result<Db> {
        if !Location::of(Path::new(arg)).is_shared() {
            bail!("{}", refusal(arg));
        }
        Db::open(Some(Path::new(arg)), default_local)
    }

    /// This machine's store.
    pub fn local(&self) -> &Path {
        &self.local
    }

    pub fn is_shared(&self) -> bool {
        self.shared.is_some()
    }

    /// What messages call the store the command was given: the shared store's URL (without
    /// its password), or the file.
    pub fn shown(&self) -> String {
        match &self.shared {
            Some(s) => s.pg.shown().to_string(),
            None => self.local.display().to_string(),
        }
    }

    /// This machine's store, opened (made if missing): a connection of its own, for the
    /// store's own work (a writer, a mirror, a push). Code outside the store reads through
    /// [`Db::read`] and writes through a writer or a `Db` method.
    pub(super) fn store(&self) -> super::Result<Store> {
        Store::open(&self.local)
    }

    pub(super) fn pg(&self) -> Option<&PgStore> {
        self.shared.as_ref().map(|s| &s.pg)
    }

    /// Says the command works through this machine's store (once, at its start).
    pub fn say_working(&self) {
        if let Some(pg) = self.pg() {
            crate::warn!(
                "working on {} through this machine's store {} (pulled from it first, every \
                 result pushed to it as it is saved)",
                pg.shown(),
                self.local.display()
            );
        }
    }

    /// Brings this machine's store up to date with the shared store (what it lacks, and what
    /// changed since it last looked), as the TUI's mirror does; says what came.
    pub fn sync(&self) -> anyhow::Result<()> {
        let Some(pg) = self.pg() else {
            return Ok(());
        };
        let p = super::mirror::Mirror::new(pg.clone(), self.store()?)
            .pull()
            .with_context(|| format!("reading the runs of {}", pg.shown()))?;
        crate::warn!(
            "{} is read through this machine's store {}: {} new run(s), {} answer(s), {} score(s), {} other result(s) pulled",
            pg.shown(),
            self.local.display(),
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
        Ok(())
    }

    /// Makes a described table (`lane_tables::Table`) in this machine's store and on the
    /// shared store, where they lack it: a lane's new table needs no migration of its own.
    pub fn ensure_table(&self, t: &'static Table) -> anyhow::Result<()> {
        self.store()?.ensure_table(t)?;
        if let Some(pg) = self.pg() {
            pg.ensure_table(t)?;
        }
        Ok(())
    }

    /// One pull of the shared store into this machine's store (what [`Db::sync`] does, without
    /// saying it): what came; `None` on a store that is not shared.
    pub fn pull_all(&self) -> anyhow::Result<Option<super::mirror::Pulled>> {
        let Some(pg) = self.pg() else {
            return Ok(None);
        };
        Ok(Some(
            super::mirror::Mirror::new(pg.clone(), self.store()?).pull()?,
        ))
    }

    /// One bounded pull (see [`super::mirror::Mirror::pull_some`]): every new run's head, and
    /// at most `pages` pages of the runs held in part; `None` on a store that is not shared.
    pub fn pull_some(&self, pages: usize) -> anyhow::Result<Option<super::mirror::Pulled>> {
        let Some(pg) = self.pg() else {
            return Ok(None);
        };
        Ok(Some(
            super::mirror::Mirror::new(pg.clone(), self.store()?).pull_some(Some(pages))?,
        ))
    }

    /// Brings run `id` (or the shared store's newest) into this machine's store, with what it
    /// lacks of its answers and scores; its id (`id` itself on a store that is not shared).
    pub fn pull_run(&self, id: Option<&str>) -> anyhow::Result<Option<String>> {
        let Some(pg) = self.pg() else {
            return Ok(id.map(str::to_string));
        };
        let id = match id {
            Some(id) => id.to_string(),
            None => pg
                .runs()?
                .into_iter()
                .next()
                .map(|r| r.id)
                .with_context(|| format!("no runs in {}", pg.shown()))?,
        };
        let bundle = pg
            .run_bundle(&id)?
            .with_context(|| format!("no run {id} in {}", pg.shown()))?;
        let mut local = self.store()?;
        self.admit_whole(&mut local, RunKind::Answers, &id)?;
        let added = local.put_run_bundle(&bundle)?;
        // Whole now, if a mirror held it in part.
        if local.pending_runs()?.iter().any(|(p, _)| *p == id) {
            local.finish_pending_run(&id)?;
        }
        crate::warn!(
            "run {id} from {}: {} answer(s), {} score(s) new here",
            pg.shown(),
            added.responses,
            added.scores
        );
        Ok(Some(id))
    }

    /// Brings a detection or self-detection run into this machine's store (each row only
    /// moved forward: what this machine has further along stays).
    pub fn pull_lane(&self, kind: LaneKind, id: &str) -> anyhow::Result<()> {
        let Some(pg) = self.pg() else {
            return Ok(());
        };
        let rows = kind
            .tables()
            .iter()
            .map(|t| Ok((*t, pg.lane_rows(t, Some(id))?)))
            .collect::<anyhow::Result<Vec<_>>>()?;
        if rows[0].1.is_empty() {
            bail!("no {} run {id} in {}", kind.noun(), pg.shown());
        }
        let mut local = self.store()?;
        self.admit_whole(&mut local, RunKind::of_lane(kind), id)?;
        local.put_lane_rows(&rows, false)?;
        Ok(())
    }

    /// A whole run taken from the shared store by name: refused when this machine has a run of
    /// that id that never came from there nor went there (see `store::links`); else linked.
    fn admit_whole(&self, local: &mut Store, kind: RunKind, id: &str) -> anyhow::Result<()> {
        let Some(pg) = self.pg() else {
            return Ok(());
        };
        let mut gate = Gate::open(local, pg.shown())?;
        if !gate.admit_run(kind, id) {
            bail!(
                "run {} exists on this machine and was never pulled from or pushed to {}: its \
                 rows there are not taken into this machine's run (work on it with --db {})",
                crate::text::one_line(id),
                pg.shown(),
                self.local.display()
            );
        }
        gate.save(local)?;
        Ok(())
    }

    /// Records that a run of this machine's store is on the shared store (pushed from here), so
    /// the rows others add to it there come back.
    fn link(&self, kind: RunKind, id: &str) -> anyhow::Result<()> {
        if let Some(pg) = self.pg() {
            self.store()?.link_runs(pg.shown(), &[(kind, id)])?;
        }
        Ok(())
    }

    /// Brings a table kept beside runs (entailments, topics) or a run's rows of one (answer
    /// checks) into this machine's store: what is known is never asked again.
    pub fn pull_table(&self, t: &'static Table, run: Option<&str>) -> anyhow::Result<()> {
        let Some(pg) = self.pg() else {
            return Ok(());
        };
        let rows = pg.lane_rows(t, run)?;
        let mut local = self.store()?;
        let mut gate = Gate::open(&local, pg.shown())?;
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
    /// store.
    pub fn push_table(&self, t: &'static Table, run: Option<&str>) -> anyhow::Result<()> {
        let Some(pg) = self.pg() else {
            return Ok(());
        };
        let rows = self.store()?.lane_rows(t, run)?;
        let n = pg.put_lane_rows(vec![(t, rows)], false).with_context(|| {
            format!(
                "pushing {} to the shared store (they are kept in {}; push them later with \
                 prism db copy {} URL)",
                t.name,
                self.local.display(),
                self.local.display()
            )
        })?;
        crate::warn!("{n} row(s) of {} pushed to {}", t.name, pg.shown());
        Ok(())
    }

    /// Puts a run's scores on the shared store, each replacing the one there (a run scored
    /// again with another judge or rules).
    pub fn push_scores(&self, scores: &[super::ScoreRecord]) -> anyhow::Result<()> {
        let Some(pg) = self.pg() else {
            return Ok(());
        };
        pg.save_scores(scores).with_context(|| {
            format!(
                "pushing the scores to the shared store (they are kept in {})",
                self.local.display()
            )
        })?;
        crate::warn!("{} score(s) pushed to {}", scores.len(), pg.shown());
        Ok(())
    }

    /// Pushes a lane run as this machine's store has it (a run imported or read again here):
    /// the rows the shared store lacks or has behind.
    pub fn push_lane(&self, kind: LaneKind, id: &str) -> anyhow::Result<()> {
        let Some(pg) = self.pg() else {
            return Ok(());
        };
        self.link(RunKind::of_lane(kind), id)?;
        lane_push::reconcile(&self.store()?, pg, kind, id)?;
        Ok(())
    }

    /// The handle a lane's run works through: on this machine's store, each commit pushed to
    /// the shared store. The run is held there first (one process at a time).
    pub fn lane_handle(&self, kind: LaneKind, run: &str) -> anyhow::Result<StoreHandle> {
        self.pushing_handle(Ok(kind), run)
    }

    /// The handle a records lane (topics, entropy, answer checks, quality, scores) works
    /// through, under its lock `lock`: each record pushed to the shared store as it commits.
    /// `noun` is what the records are called when the pushes are said ("score(s)").
    pub fn records_handle(&self, lock: &str, noun: &'static str) -> anyhow::Result<StoreHandle> {
        self.pushing_handle(Err(noun), lock)
    }

    /// `what`: the lane run's kind, or what a records lane's records are called.
    fn pushing_handle(
        &self,
        what: Result<LaneKind, &'static str>,
        run: &str,
    ) -> anyhow::Result<StoreHandle> {
        let store = self.store()?;
        let kind = what.ok();
        let Some(s) = &self.shared else {
            return Ok(StoreHandle::spawn(store, Some(self.local.clone())));
        };
        let said = kind.map_or_else(|| "records".to_string(), |k| format!("{} run", k.noun()));
        if let Err(h) = s.pg.take_lane(run, &s.holder)? {
            bail!(
                "{said} {run} is being worked on by process {} on {} (heard from {} s ago); \
                 wait for it, or resume after it stops ({} s without a heartbeat)",
                h.pid,
                crate::text::one_line(&h.host),
                h.age,
                super::STALE_AFTER_SECS
            );
        }
        if let Some(kind) = kind {
            self.link(RunKind::of_lane(kind), run)?;
            // The run as it stands here goes first, whatever an earlier session left unpushed.
            let ahead = lane_push::reconcile(&store, &s.pg, kind, run)?;
            if ahead > 0 {
                crate::warn!("{ahead} row(s) of {run} kept here from before pushed");
            }
        }
        let pusher = Pusher::start(
            &self.local,
            s.pg.clone(),
            run.to_string(),
            s.holder.clone(),
            |m| crate::warn!("{m}"),
        )?;
        let push = pusher.sender();
        *s.working.lock().unwrap_or_else(|e| e.into_inner()) = Some(Working {
            pusher,
            kind,
            noun: what.err().unwrap_or("row(s)"),
            run: run.to_string(),
        });
        Ok(StoreHandle::spawn_pushing(
            store,
            Some(self.local.clone()),
            Some(push),
        ))
    }

    /// After the lane: what is left pushed (after an outage, a lane run checked against the
    /// shared store once more), the run let go. Says what went; an error says how to push it
    /// later.
    pub fn finish(&self) -> anyhow::Result<()> {
        let Some(s) = &self.shared else {
            return Ok(());
        };
        let Some(w) = s.working.lock().unwrap_or_else(|e| e.into_inner()).take() else {
            return Ok(());
        };
        let later = format!(
            "the results are kept in {}; push them with prism db copy {} {}{}",
            self.local.display(),
            self.local.display(),
            s.pg.shown(),
            if w.kind.is_some() {
                format!(" --run {}", w.run)
            } else {
                String::new()
            }
        );
        let done = w
            .pusher
            .finish(FINISH_PATIENCE)
            .with_context(|| later.clone())?;
        // After an outage a lane run is checked once more (each row only moved forward).
        let rest = match w.kind {
            Some(kind) if !done.clean => lane_push::reconcile(&self.store()?, &s.pg, kind, &w.run)
                .with_context(|| later.clone())?,
            _ => 0,
        };
        // A lane that stopped before it made its run (a model file missing) pushed nothing.
        if done.changes + rest == 0 {
            return Ok(());
        }
        let missed = if rest > 0 {
            format!(", {rest} missed row(s) at the end")
        } else {
            String::new()
        };
        match w.kind {
            Some(kind) => crate::warn!(
                "{} run {} is on {}: {} change(s) pushed as they were saved{missed}",
                kind.noun(),
                w.run,
                s.pg.shown(),
                done.changes,
            ),
            None => crate::warn!(
                "{} {} pushed to {} as they were saved",
                done.changes,
                w.noun,
                s.pg.shown()
            ),
        }
        Ok(())
    }

    /// A run as the store it lives on has it: the shared store's own for a shared store (the
    /// answers lane works on it directly), else this machine's.
    pub fn run(&self, id: &str) -> anyhow::Result<Option<RunRecord>> {
        Ok(match self.pg() {
            Some(pg) => pg.run(id)?,
            None => self.store()?.run(id)?,
        })
    }

    /// A run's jobs in order with their state, from the store it lives on (see [`Db::run`]).
    pub fn jobs(&self, id: &str) -> anyhow::Result<Vec<(JobRecord, JobState)>> {
        Ok(match self.pg() {
            Some(pg) => pg.jobs(id)?.into_iter().map(|(j, s, _)| (j, s)).collect(),
            None => self.store()?.jobs(id)?,
        })
    }

    /// Makes a run's summaries again from its scores: on the shared store (for everyone) and
    /// in this machine's store (its copy, or the store itself). Returns the groups made.
    pub fn repair_summaries(&self, id: &str) -> anyhow::Result<usize> {
        let mut n = 0;
        if let Some(pg) = self.pg() {
            n = pg.repair_summaries(id)?;
        }
        if self.local.is_file() {
            let local = self.store()?.repair_summaries(id)?;
            if self.pg().is_none() {
                n = local;
            }
        }
        Ok(n)
    }

    /// A run's answers that have no score yet, from the store it lives on (a resumed run
    /// scores them first: its last process may have died between an answer and its score).
    pub fn unscored_answers(&self, id: &str) -> anyhow::Result<Vec<super::ResponseRecord>> {
        Ok(match self.pg() {
            Some(pg) => pg.unscored_responses(id)?,
            None => self.store()?.unscored_responses_of(id)?,
        })
    }

    /// This machine's writer (one thread, group commit, and the checkpoint thread beside it).
    pub fn writer(&self) -> anyhow::Result<StoreHandle> {
        Ok(StoreHandle::spawn(self.store()?, Some(self.local.clone())))
    }

    /// The handle the answers lane works through: this machine's writer, or, on a shared
    /// store, a worker's connection to it holding leases of `lease` at a time (see the
    /// module's notes).
    pub fn run_handle(&self, lease: Duration) -> anyhow::Result<StoreHandle> {
        Ok(match self.pg() {
            Some(pg) => StoreHandle::spawn_pg(pg, lease)?,
            None => self.writer()?,
        })
    }

    /// A shared run's jobs with their state and the worker that holds or answered each
    /// (empty on a store that is not shared).
    pub fn shared_jobs(
        &self,
        run: &str,
    ) -> anyhow::Result<Vec<(JobRecord, JobState, Option<String>)>> {
        Ok(match self.pg() {
            Some(pg) => pg.jobs(run)?,
            None => Vec::new(),
        })
    }

    /// A shared run's workers and progress (`prism db workers`).
    pub fn workers(&self, run: &str) -> anyhow::Result<Vec<super::pg_runs::WorkerRow>> {
        match self.pg() {
            Some(pg) => Ok(pg.workers(run)?),
            None => bail!("workers share a run on a shared store: --db postgres://..."),
        }
    }

    /// A shared run before it is removed: the run, its answers and the workers heard from
    /// within the last minute (`None`: no such run there).
    pub fn shared_run_to_remove(
        &self,
        id: &str,
    ) -> anyhow::Result<Option<(RunRecord, usize, i64)>> {
        let Some(pg) = self.pg() else {
            return Ok(None);
        };
        let Some(run) = pg.run(id)? else {
            return Ok(None);
        };
        let answers = pg.responses(id)?.len();
        let workers = pg.active_workers(id, super::STALE_AFTER_SECS)?;
        Ok(Some((run, answers, workers)))
    }

    /// Copies a run of this machine's store to the shared store whole (an import into a
    /// shared store), linking it there; how many answers went.
    pub fn push_run(&self, id: &str) -> anyhow::Result<usize> {
        let Some(pg) = self.pg() else {
            return Ok(0);
        };
        let store = self.store()?;
        let bundle = store
            .run_bundle(id)?
            .with_context(|| format!("run {id} was not stored"))?;
        // A new run: linked to the shared store, so what others add to it there comes back.
        store.link_runs(pg.shown(), &[(RunKind::Answers, id)])?;
        let answers = pg.put_run_bundle(&bundle)?.responses;
        // And its rows of every described table that belongs to a run (an imported run's
        // sources, its labels, checks...): a run is pushed whole, whatever tables a lane added.
        for t in super::lane_tables::LOOSE
            .iter()
            .filter(|t| t.run_col.is_some())
        {
            let rows = store.lane_rows(t, Some(id))?;
            if !rows.is_empty() {
                pg.put_lane_rows(vec![(*t, rows)], false)?;
            }
        }
        Ok(answers)
    }

    /// Adds people's labels (on answers, `AnswerLabel`; on sentences, `SentenceLabel`): on a
    /// shared store there first (every reviewer's screen sees them), then here. A label
    /// already kept (its uid) is not added twice; returns how many were new where they were
    /// first put.
    pub fn add_labels<R: super::record::Record>(&self, labels: &[R]) -> anyhow::Result<usize> {
        let rows: Vec<_> = labels.iter().map(R::to_row).collect();
        let shared = match self.pg() {
            Some(pg) => Some(pg.put_lane_rows(vec![(R::table(), rows)], false)?),
            None => None,
        };
        let here = self.store()?.add_labels(labels)?;
        Ok(shared.unwrap_or(here))
    }

    /// Mirrors the shared store into this machine's store on a thread of its own for as long
    /// as the returned watch lives (see `store::mirror`); `None` on a store that is not shared.
    pub fn mirror(
        &self,
        on_pull: impl Fn(super::mirror::Pulled) + Send + 'static,
        on_error: impl Fn(String) + Send + 'static,
    ) -> anyhow::Result<Option<super::mirror::MirrorWatch>> {
        let Some(pg) = self.pg() else {
            return Ok(None);
        };
        let m = super::mirror::Mirror::new(pg.clone(), self.store()?);
        Ok(Some(m.watch(on_pull, on_error)?))
    }

    /// A run made on this machine (of any lane) put on the shared store when it ends: what the
    /// run was and how many rows went; `None` when there is nothing to push (no such run here,
    /// or a store that is not shared).
    pub fn push_finished_run(&self, id: &str) -> anyhow::Result<Option<(&'static str, usize)>> {
        let Some(pg) = self.pg() else {
            return Ok(None);
        };
        Ok(lane_push::push_run(&self.store()?, pg, id)?)
    }

    /// The shared store's newest run (`None` on a store that is not shared, or an empty one).
    pub fn newest_shared_run(&self) -> anyhow::Result<Option<String>> {
        Ok(match self.pg() {
            Some(pg) => pg.runs()?.into_iter().next().map(|r| r.id),
            None => None,
        })
    }
}

impl Drop for Db {
    /// A command that stopped on an error still pushes what its lane saved.
    fn drop(&mut self) {
        if let Err(e) = self.finish() {
            crate::warn!("{e:#}");
        }
    }
}
