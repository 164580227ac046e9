//! A run with everything stored of it, to move between stores (`prism db copy`): the run, its
//! jobs with their state, every answer (its cache key and token log-probabilities included) and
//! every score. Writing one adds only what the target lacks (keyed as the tables are), in one
//! transaction per run, so a copy that stops half-way is finished by running it again and two
//! copies never duplicate a row. One rule decides where both stores have an answer: a stored
//! failure is replaced by an answer, nothing else is (as on a shared store).

use super::cache::CacheEntry;
use super::error::Result;
use super::record::Record;
use super::runs::{JobRow, RunRow};
use super::{Cached, JobRecord, JobState, ResponseRecord, RunRecord, ScoreRecord, Store};

/// Everything stored of one run.
#[derive(Debug, Clone, PartialEq)]
pub struct RunBundle {
    pub run: RunRecord,
    pub name: Option<String>,
    pub tags: String,
    pub jobs: Vec<(JobRecord, JobState)>,
    /// With `cache_key` and `logprobs`.
    pub responses: Vec<ResponseRecord>,
    pub scores: Vec<ScoreRecord>,
}

/// What writing a bundle added.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Added {
    pub runs: usize,
    pub responses: usize,
    pub scores: usize,
}

impl std::ops::AddAssign for Added {
    fn add_assign(&mut self, o: Added) {
        self.runs += o.runs;
        self.responses += o.responses;
        self.scores += o.scores;
    }
}

impl RunBundle {
    /// The run's row, its name and tags with it.
    pub(crate) fn run_row(&self) -> Result<RunRow> {
        Ok(RunRow {
            name: self.name.clone(),
            tags: self.tags.clone(),
            ..RunRow::of(&self.run)?
        })
    }

    /// The jobs' rows.
    pub(crate) fn job_rows(&self) -> impl Iterator<Item = JobRow> + '_ {
        self.jobs.iter().map(|(j, s)| JobRow {
            run_id: self.run.id.clone(),
            job: j.clone(),
            state: s.as_str().to_string(),
        })
    }
}

impl Store {
    /// Everything stored of `run_id` (`None`: no such run).
    pub fn run_bundle(&self, run_id: &str) -> Result<Option<RunBundle>> {
        self.run_bundle_part(run_id, 0..u32::MAX)
    }

    /// The part of a run's bundle whose jobs are numbered in `jobs` (the run's row and labels
    /// with every part): a copy moves a run a part at a time, so its memory is bounded by the
    /// part, not the run.
    pub fn run_bundle_part(
        &self,
        run_id: &str,
        jobs: std::ops::Range<u32>,
    ) -> Result<Option<RunBundle>> {
        use super::lane_tables::Val;
        let Some(run) = self.run(run_id)? else {
            return Ok(None);
        };
        let (name, tags) = self.run_labels(run_id)?;
        let args = [
            Val::Text(run_id.to_string()),
            Val::Int(i64::from(jobs.start)),
            Val::Int(i64::from(jobs.end)),
        ];
        let range = "WHERE run_id = ?1 AND job_idx >= ?2 AND job_idx < ?3 ORDER BY job_idx";
        // Whole answers, their cache keys and tokens too.
        let responses: Vec<ResponseRecord> = self.records_by(range, &args)?;
        let scores: Vec<ScoreRecord> = self.records_by(range, &args)?;
        let job_rows: Vec<JobRow> = self.records_by(
            "WHERE run_id = ?1 AND idx >= ?2 AND idx < ?3 ORDER BY idx",
            &args,
        )?;
        Ok(Some(RunBundle {
            run,
            name,
            tags: tags.join(" "),
            jobs: job_rows
                .into_iter()
                .map(|j| Ok((j.job, JobState::parse(&j.state)?)))
                .collect::<Result<_>>()?,
            responses,
            scores,
        }))
    }

    /// Adds what this store lacks of `b` (see the module's notes).
    pub fn put_run_bundle(&mut self, b: &RunBundle) -> Result<Added> {
        let run = b.run_row()?;
        let tx = self.conn.transaction()?;
        let runs = tx.execute(
            &format!(
                "INSERT OR IGNORE INTO runs ({}) VALUES ({})",
                super::tables::RUNS.col_list(),
                super::tables::RUNS.marks("?")
            ),
            rusqlite::params_from_iter(run.to_row()),
        )?;
        let mut added = Added {
            runs,
            ..Added::default()
        };
        {
            // A job's state moves on to done, never back.
            let mut job = tx.prepare(&super::tables::JOBS.upsert("?", false, ""))?;
            for row in b.job_rows() {
                job.execute(rusqlite::params_from_iter(row.to_row()))?;
            }
            added.responses = upsert_responses(&tx, &b.responses)?;
            let mut score = tx.prepare(&format!(
                "INSERT OR IGNORE INTO scores ({}) VALUES ({})",
                super::tables::SCORES.col_list(),
                super::tables::SCORES.marks("?")
            ))?;
            for r in &b.scores {
                added.scores += score.execute(rusqlite::params_from_iter(r.to_row()))?;
            }
        }
        if added.scores > 0 {
            // Only added scores (never a changed one): the groups and keys they touch.
            super::summaries::refresh(&tx, &super::summaries::Touched::of(&b.scores))?;
        }
        tx.commit()?;
        Ok(added)
    }

    /// Adds answers (a stored failure gives way to an answer, nothing else is replaced) and
    /// marks their jobs; returns how many were added or replaced.
    pub fn put_answers(&mut self, rs: &[ResponseRecord]) -> Result<usize> {
        let tx = self.conn.transaction()?;
        let n = upsert_responses(&tx, rs)?;
        {
            let mut job = tx.prepare_cached(
                "UPDATE jobs SET state = ?3 WHERE run_id = ?1 AND idx = ?2 AND state != 'done'",
            )?;
            for r in rs {
                let state = if r.is_ok() {
                    JobState::Done
                } else {
                    JobState::Failed
                };
                job.execute(rusqlite::params![r.run_id, r.job_idx, state.as_str()])?;
            }
        }
        tx.commit()?;
        Ok(n)
    }

    /// Adds scores, replacing a stored one only when it differs; returns how many changed.
    pub fn put_new_scores(&mut self, rs: &[ScoreRecord]) -> Result<usize> {
        let tx = self.conn.transaction()?;
        let mut n = 0;
        {
            let mut st = tx.prepare_cached(&format!(
                "INSERT INTO scores ({}) VALUES ({})
                 ON CONFLICT (run_id, job_idx) DO UPDATE SET evaluator = excluded.evaluator,
                 score = excluded.score, detail = excluded.detail, judge = excluded.judge,
                 judge_reply = excluded.judge_reply, judge_attempts = excluded.judge_attempts,
                 created_at = excluded.created_at, rule_score = excluded.rule_score
                 WHERE scores.score IS NOT excluded.score OR scores.detail IS NOT excluded.detail
                 OR scores.evaluator IS NOT excluded.evaluator OR scores.judge IS NOT excluded.judge
                 OR scores.judge_reply IS NOT excluded.judge_reply
                 OR scores.rule_score IS NOT excluded.rule_score",
                super::tables::SCORES.col_list(),
                super::tables::SCORES.marks("?")
            ))?;
            for r in rs {
                n += st.execute(rusqlite::params_from_iter(r.to_row()))?;
            }
        }
        if n > 0 {
            super::summaries::refresh(&tx, &super::summaries::Touched::of(rs))?;
        }
        tx.commit()?;
        Ok(n)
    }

    /// Every entry of the response cache (the judges' single calls).
    pub fn cache_entries(&self) -> Result<Vec<(String, Cached)>> {
        Ok(self
            .records_where::<CacheEntry>(None)?
            .into_iter()
            .map(|e| (e.key, e.cached))
            .collect())
    }

    /// Adds the cache entries this store lacks; returns how many.
    pub fn put_cache_entries(&mut self, es: &[(String, Cached)]) -> Result<usize> {
        let t = &super::tables::CACHE;
        let tx = self.conn.transaction()?;
        let mut n = 0;
        {
            let mut st = tx.prepare(&format!(
                "INSERT OR IGNORE INTO cache ({}) VALUES ({})",
                t.col_list(),
                t.marks("?")
            ))?;
            let now = super::now_secs();
            for (k, c) in es {
                let e = CacheEntry {
                    key: k.clone(),
                    cached: c.clone(),
                    created_at: now,
                };
                n += st.execute(rusqlite::params_from_iter(e.to_row()))?;
            }
        }
        tx.commit()?;
        Ok(n)
    }
}

/// Inserts answers by the rule of the module's notes; returns how many were added or replaced.
fn upsert_responses(tx: &rusqlite::Transaction<'_>, rs: &[ResponseRecord]) -> Result<usize> {
    // A stored failure gives way to an answer; nothing else is replaced (the table's rule).
    let mut resp = tx.prepare_cached(&super::tables::RESPONSES.upsert("?", false, ""))?;
    let mut n = 0;
    for r in rs {
        n += resp.execute(rusqlite::params_from_iter(r.to_row()))?;
    }
    Ok(n)
}
