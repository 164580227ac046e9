//! What a list of runs reads (`prism runs`, the runs screen), from whichever store holds the
//! runs: a page of them, their job counts and their summaries (`store::summaries`). A shared
//! store answers it itself, so a new machine lists a team's history without pulling an answer.

use super::error::Result;

/// What a list of runs reads, from whichever store holds them: a page of runs, their job
/// counts and their summaries. A shared store answers it itself, so a new machine lists a
/// team's history without pulling a single answer first.
pub trait History {
    fn runs_page(&self, f: &super::RunFilter) -> Result<Vec<super::LabelledRun>>;
    fn job_counts(&self, run: &str) -> Result<super::JobCounts>;
    /// The distinct items a run asked.
    fn run_item_count(&self, run: &str) -> Result<usize>;
    fn run_summaries(&self, run: &str) -> Result<Vec<super::summaries::TaskSummary>>;
}

impl History for super::Store {
    fn runs_page(&self, f: &super::RunFilter) -> Result<Vec<super::LabelledRun>> {
        super::Store::runs_page(self, f)
    }
    fn job_counts(&self, run: &str) -> Result<super::JobCounts> {
        super::Store::job_counts(self, run)
    }
    fn run_item_count(&self, run: &str) -> Result<usize> {
        super::Store::run_item_count(self, run)
    }
    fn run_summaries(&self, run: &str) -> Result<Vec<super::summaries::TaskSummary>> {
        super::Store::run_summaries(self, Some(run))
    }
}

impl History for super::pg::PgStore {
    fn runs_page(&self, f: &super::RunFilter) -> Result<Vec<super::LabelledRun>> {
        super::pg::PgStore::runs_page(self, f)
    }
    fn job_counts(&self, run: &str) -> Result<super::JobCounts> {
        let run = run.to_string();
        let (open, total) = self.call(move |c| super::pg_runs::job_states(c, &run))?;
        super::JobCounts::of_open(open, total)
    }
    fn run_item_count(&self, run: &str) -> Result<usize> {
        let run = run.to_string();
        self.call(move |c| {
            c.query_one(
                "SELECT COUNT(DISTINCT item_id) FROM jobs WHERE run_id = $1",
                &[&run],
            )
            .map(|r| r.get::<_, i64>(0) as usize)
        })
    }
    fn run_summaries(&self, run: &str) -> Result<Vec<super::summaries::TaskSummary>> {
        let run = run.to_string();
        self.call(move |c| {
            let kept = super::pg_runs::run_summaries(c, &run)?;
            if !kept.is_empty() {
                return Ok(kept);
            }
            // Scores written by hand, not by prism: made from them as they are read.
            super::pg_runs::summaries_from_scores(
                c,
                &super::summaries::summarize("run_id = $1"),
                &run,
            )
        })
    }
}
