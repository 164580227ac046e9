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
    /// A run's summaries as its scores make them now: what the kept ones must equal.
    fn recount_summaries(&self, run: &str) -> Result<Vec<super::summaries::TaskSummary>>;
    /// A run held only in part (a shared run whose pull is not finished): the answers here
    /// and all of them. A shared store holds every run whole.
    fn pulled_in_part(&self, _run: &str) -> Result<Option<(usize, usize)>> {
        Ok(None)
    }
}

/// Where a run's kept summaries and its scores part: the groups (model, task) whose kept row
/// differs from the one its scores make, or that only one side has.
pub fn summaries_disagree(h: &dyn History, run: &str) -> Result<Vec<(String, String)>> {
    use super::summaries::TaskSummary;
    let key = |s: &TaskSummary| (s.model.clone(), s.task_id.clone());
    let kept: std::collections::BTreeMap<_, _> = h
        .run_summaries(run)?
        .into_iter()
        .map(|s| (key(&s), s))
        .collect();
    let want: std::collections::BTreeMap<_, _> = h
        .recount_summaries(run)?
        .into_iter()
        .map(|s| (key(&s), s))
        .collect();
    let same = |a: &TaskSummary, b: &TaskSummary| {
        (a.scored, a.unscored, a.hallucinated, a.rows)
            == (b.scored, b.unscored, b.hallucinated, b.rows)
            && (a.sum - b.sum).abs() <= 1e-9 * a.sum.abs().max(1.0)
    };
    let mut keys: Vec<&(String, String)> = kept.keys().chain(want.keys()).collect();
    keys.sort();
    keys.dedup();
    Ok(keys
        .into_iter()
        .filter(|k| match (kept.get(*k), want.get(*k)) {
            (Some(a), Some(b)) => !same(a, b),
            _ => true,
        })
        .cloned()
        .collect())
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
    fn recount_summaries(&self, run: &str) -> Result<Vec<super::summaries::TaskSummary>> {
        super::Store::recount_summaries(self, run)
    }
    fn pulled_in_part(&self, run: &str) -> Result<Option<(usize, usize)>> {
        super::Store::pulled_in_part(self, run)
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
                "SELECT COUNT(DISTINCT item_id) AS n FROM jobs WHERE run_id = $1",
                &[&run],
            )
            .map(|r| r.get::<_, i64>("n") as usize)
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
    fn recount_summaries(&self, run: &str) -> Result<Vec<super::summaries::TaskSummary>> {
        let run = run.to_string();
        self.call(move |c| {
            super::pg_runs::summaries_from_scores(
                c,
                &super::summaries::summarize("run_id = $1"),
                &run,
            )
        })
    }
}
