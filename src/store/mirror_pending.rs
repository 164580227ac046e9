//! A shared store's runs that this machine's store holds only in part (schema 22): what a
//! mirror catching up in bulk writes first (the run, its summaries and job counts as the
//! shared store has them), the page of jobs it goes on from, and the last page's step, which
//! makes the run's summaries from its own scores again and forgets the row.
//!
//! While a run is pending, the summaries of its groups are not recomputed from the scores
//! pulled so far (`summaries::refresh` leaves them alone), and its job counts are the ones
//! noted here, so `prism runs`, the runs screen and the heatmap show the whole run from the
//! first second; the items behind a number arrive as their pages land.

use rusqlite::{OptionalExtension, params};

use super::record::Record;
use super::summaries::TaskSummary;
use super::{JobCounts, Result, RunBundle, Store};

impl Store {
    /// Writes a shared run's head: its row and labels (`head`'s jobs, answers and scores are
    /// not written), `sums` as its summaries and `counts` as its job counts, and marks it
    /// pending from job 0. A run this store already holds is left alone (`false`).
    pub fn put_pending_run(
        &mut self,
        head: &RunBundle,
        sums: &[TaskSummary],
        counts: &JobCounts,
    ) -> Result<bool> {
        let run = head.run_row()?;
        let tx = self.conn.transaction()?;
        let added = tx.execute(
            &format!(
                "INSERT OR IGNORE INTO runs ({}) VALUES ({})",
                super::tables::RUNS.col_list(),
                super::tables::RUNS.marks("?")
            ),
            rusqlite::params_from_iter(run.to_row()),
        )? == 1;
        if added {
            tx.execute(
                "INSERT OR REPLACE INTO mirror_pending (run_id, next_job) VALUES (?1, 0)",
                [&head.run.id],
            )?;
            put_head(&tx, &head.run.id, sums, counts)?;
        }
        tx.commit()?;
        Ok(added)
    }

    /// The runs held in part, each with the first job not pulled yet.
    pub fn pending_runs(&self) -> Result<Vec<(String, u32)>> {
        let mut st = self
            .conn
            .prepare_cached("SELECT run_id, next_job FROM mirror_pending ORDER BY run_id DESC")?;
        let rows = st.query_map([], |r| Ok((r.get("run_id")?, r.get("next_job")?)))?;
        Ok(rows.collect::<rusqlite::Result<_>>()?)
    }

    /// A pending run's summaries and counts as the shared store has them now (it is still
    /// running there); nothing for a run that is not pending.
    pub fn refresh_pending_run(
        &mut self,
        run: &str,
        sums: &[TaskSummary],
        counts: &JobCounts,
    ) -> Result<()> {
        let tx = self.conn.transaction()?;
        if super::summaries::held_in_part(&tx, run)? {
            put_head(&tx, run, sums, counts)?;
        }
        tx.commit()?;
        Ok(())
    }

    /// A page of a pending run landed: the next one starts at `next`.
    pub fn advance_pending_run(&mut self, run: &str, next: u32) -> Result<()> {
        self.conn.execute(
            "UPDATE mirror_pending SET next_job = ?2 WHERE run_id = ?1",
            params![run, next],
        )?;
        Ok(())
    }

    /// The last page of a pending run landed: its summaries are made from its scores (as
    /// every run's are) and it is pending no more.
    pub fn finish_pending_run(&mut self, run: &str) -> Result<()> {
        let tx = self.conn.transaction()?;
        tx.execute("DELETE FROM mirror_pending WHERE run_id = ?1", [run])?;
        tx.execute("DELETE FROM run_summaries WHERE run_id = ?1", [run])?;
        tx.execute(
            &format!(
                "INSERT INTO run_summaries ({}) {}",
                super::tables::RUN_SUMMARIES.col_list(),
                super::summaries::summarize("run_id = ?1")
            ),
            [run],
        )?;
        tx.commit()?;
        Ok(())
    }

    /// A pending run's job counts as noted (`None`: the run is not pending).
    /// A shared run this store holds only in part (its pull not finished: interrupted, or
    /// still going): the answers here and the answers the shared store has.
    pub fn pulled_in_part(&self, run: &str) -> Result<Option<(usize, usize)>> {
        let Some(c) = self.pending_counts(run)? else {
            return Ok(None);
        };
        let here: i64 = self.conn.query_row(
            "SELECT COUNT(*) AS n FROM responses WHERE run_id = ?1",
            [run],
            |r| r.get("n"),
        )?;
        // Every answer here (the pull's last page landed, its bookkeeping not yet cleared): not
        // in part.
        let (here, all) = (here.max(0) as usize, c.done + c.failed);
        Ok((here < all).then_some((here, all)))
    }

    pub(super) fn pending_counts(&self, run: &str) -> Result<Option<JobCounts>> {
        let mut st = self.conn.prepare_cached(
            "SELECT done, failed, pending, unknown FROM mirror_pending WHERE run_id = ?1",
        )?;
        Ok(st
            .query_row([run], |r| {
                let n = |c: &str| r.get::<_, i64>(c).map(|v| v.max(0) as usize);
                Ok(JobCounts {
                    done: n("done")?,
                    failed: n("failed")?,
                    pending: n("pending")?,
                    unknown: n("unknown")?,
                })
            })
            .optional()?)
    }
}

/// A pending run's summaries replaced by `sums` and its counts by `counts`.
fn put_head(
    tx: &rusqlite::Transaction<'_>,
    run: &str,
    sums: &[TaskSummary],
    counts: &JobCounts,
) -> Result<()> {
    tx.execute("DELETE FROM run_summaries WHERE run_id = ?1", [run])?;
    {
        let t = &super::tables::RUN_SUMMARIES;
        let mut st = tx.prepare_cached(&format!(
            "INSERT OR REPLACE INTO {} ({}) VALUES ({})",
            t.name,
            t.col_list(),
            t.marks("?")
        ))?;
        // Rows of another run are not this run's to write.
        for s in sums.iter().filter(|s| s.run_id == run) {
            st.execute(rusqlite::params_from_iter(s.to_row()))?;
        }
    }
    let n = |v: usize| v as i64;
    tx.execute(
        "UPDATE mirror_pending SET done = ?2, failed = ?3, pending = ?4, unknown = ?5
         WHERE run_id = ?1",
        params![
            run,
            n(counts.done),
            n(counts.failed),
            n(counts.pending),
            n(counts.unknown)
        ],
    )?;
    Ok(())
}
