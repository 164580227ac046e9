//! The writes a command makes to this machine's store outside a lane's writer, one method per
//! kind: an import (a run bundle, a detection's records), a detection read again, a stored
//! topic read otherwise, a run named, tagged or removed. Each writes this machine's store in
//! its own transaction; a command on a shared store pushes what it wrote after (as a lane's
//! rows are pushed), or writes the shared store first where the store's notes say so.

use super::record::Record;
use super::{Added, DetectWrite, JobRecord, ResponseRecord, Result, RunBundle, RunRecord, Store};
use super::{Db, TopicRecord};

impl Db {
    /// Runs `f` on a connection of its own to this machine's store.
    fn write_here<T>(&self, f: impl FnOnce(&mut Store) -> Result<T>) -> Result<T> {
        f(&mut self.store()?)
    }

    /// A detection run's writes (an import's new run and its targets, a reread's verdicts).
    pub fn apply_detect(&self, writes: &[DetectWrite]) -> Result<()> {
        self.write_here(|s| s.apply_detect(writes))
    }

    /// A topic reply kept from an earlier analysis, read again as this prism reads it.
    pub fn save_topic(&self, t: &TopicRecord) -> Result<()> {
        self.write_here(|s| s.save_topic(t))
    }

    /// A whole run (an import from another tool or another prism): what was added.
    pub fn put_run_bundle(&self, b: &RunBundle) -> Result<Added> {
        self.write_here(|s| s.put_run_bundle(b))
    }

    /// A run made whole from another tool's (or PRISM's) outputs: the run and its jobs, its
    /// answers, and the rows of another table that go with them (`extra`: the other tool's
    /// verdicts). The run first: a failure part-way leaves a run `prism runs rm` removes whole,
    /// never answers without their run.
    pub fn import_run<R: Record>(
        &self,
        run: &RunRecord,
        jobs: &[JobRecord],
        responses: &[ResponseRecord],
        extra: &[R],
    ) -> Result<()> {
        self.write_here(|s| {
            s.create_run(run, jobs)?;
            s.save_responses(responses)?;
            s.save_records(extra)
        })
    }

    /// Names a run (`None` takes the name away): on the shared store first (every machine's
    /// mirror takes it), then here. False when the store holding it has no such run.
    pub fn name_run(&self, id: &str, name: Option<&str>) -> anyhow::Result<bool> {
        if let Some(pg) = self.pg()
            && !pg.set_run_name(id, name)?
        {
            return Ok(false);
        }
        let here = self.write_here(|s| s.set_run_name(id, name))?;
        Ok(here || self.is_shared())
    }

    /// Adds (or with `remove`, takes away) a tag here, then gives the shared store the run's
    /// tags as they are now (this machine's copy was brought up to date first: its tags are
    /// the shared ones). The run's tags; `None` when it has no such run.
    pub fn tag_run(
        &self,
        id: &str,
        tag: &str,
        remove: bool,
    ) -> anyhow::Result<Option<Vec<String>>> {
        let tags = self.write_here(|s| {
            Ok(match s.tag_run(id, tag, remove)? {
                true => Some(s.run_labels(id)?.1),
                false => None,
            })
        })?;
        if let (Some(pg), Some(t)) = (self.pg(), &tags)
            && !pg.set_run_tags(id, t)?
        {
            return Ok(None);
        }
        Ok(tags)
    }

    /// Removes a run, its answers and everything made from them: on the shared store (its
    /// answers counted there), then here. A run of this machine that another prism is running
    /// is refused (its answers would land in a run that is gone): the removal takes the run's
    /// lock first, as a resume does. The answers removed.
    pub fn remove_run(&self, id: &str) -> anyhow::Result<usize> {
        if let Some(pg) = self.pg() {
            let removed = pg.remove_run(id)?.unwrap_or(0);
            self.write_here(|s| s.remove_run(id))?;
            return Ok(removed as usize);
        }
        let me = super::Holder {
            owner: format!("prism-runs-rm-{}", std::process::id()),
            host: super::host_name(),
            pid: i64::from(std::process::id()),
        };
        self.write_here(|s| {
            if let Err(held) = s.lock_run(id, &me, super::now_secs(), super::pid_alive)? {
                return Ok(Err(held));
            }
            Ok(Ok(s.remove_run(id)?.unwrap_or(0)))
        })?
        .map_err(|held| {
            anyhow::anyhow!(
                "run {id} is being run by another prism (pid {}, seen {} s ago): stop it (or wait) before removing it",
                held.pid,
                held.age
            )
        })
    }
}
