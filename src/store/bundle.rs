//! A run with everything stored of it, to move between stores (`prism db copy`): the run, its
//! jobs with their state, every answer (its cache key and token log-probabilities included) and
//! every score. Writing one adds only what the target lacks (keyed as the tables are), in one
//! transaction per run, so a copy that stops half-way is finished by running it again and two
//! copies never duplicate a row. One rule decides where both stores have an answer: a stored
//! failure is replaced by an answer, nothing else is (as on a shared store).

use rusqlite::params;

use super::error::Result;
use super::responses::{response_times, response_values};
use super::scores::{SCORE_COLS, score_values};
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

impl Store {
    /// Everything stored of `run_id` (`None`: no such run).
    pub fn run_bundle(&self, run_id: &str) -> Result<Option<RunBundle>> {
        let Some(run) = self.run(run_id)? else {
            return Ok(None);
        };
        let (name, tags) = self.run_labels(run_id)?;
        let mut st = self.conn.prepare(&format!(
            "SELECT {}, cache_key, logprobs FROM responses WHERE run_id = ?1 ORDER BY job_idx",
            Self::RESPONSE_COLS
        ))?;
        let responses = st
            .query_map([run_id], |r| {
                let mut rec = Self::response_row(r)?;
                rec.cache_key = r.get(18)?;
                rec.logprobs = r.get(19)?;
                Ok(rec)
            })?
            .collect::<rusqlite::Result<Vec<_>>>()?;
        Ok(Some(RunBundle {
            run,
            name,
            tags: tags.join(" "),
            jobs: self.jobs(run_id)?,
            responses,
            scores: self.scores(Some(run_id))?,
        }))
    }

    /// Adds what this store lacks of `b` (see the module's notes).
    pub fn put_run_bundle(&mut self, b: &RunBundle) -> Result<Added> {
        let config =
            serde_json::to_string(&b.run.config).map_err(|source| super::StoreError::Json {
                what: "run config",
                source,
            })?;
        let tx = self.conn.transaction()?;
        let runs = tx.execute(
            "INSERT OR IGNORE INTO runs (id, created_at, dataset, config, status, name, tags)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)",
            params![
                b.run.id,
                b.run.created_at,
                b.run.dataset,
                config,
                b.run.status.as_str(),
                b.name,
                b.tags
            ],
        )?;
        let mut added = Added {
            runs,
            ..Added::default()
        };
        {
            let mut job = tx.prepare(
                "INSERT INTO jobs (run_id, idx, item_id, task_id, model, sample, state)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)
                 ON CONFLICT (run_id, idx) DO UPDATE SET state = excluded.state
                 WHERE jobs.state != 'done' AND excluded.state = 'done'",
            )?;
            for (j, s) in &b.jobs {
                job.execute(params![
                    b.run.id,
                    j.idx,
                    j.item_id,
                    j.task_id,
                    j.model,
                    j.sample,
                    s.as_str()
                ])?;
            }
            added.responses = upsert_responses(&tx, &b.responses)?;
            let mut score = tx.prepare(&format!(
                "INSERT OR IGNORE INTO scores ({SCORE_COLS})
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14)"
            ))?;
            for r in &b.scores {
                added.scores += score.execute(score_values(r))?;
            }
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
                job.execute(params![r.run_id, r.job_idx, state.as_str()])?;
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
                "INSERT INTO scores ({SCORE_COLS})
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14)
                 ON CONFLICT (run_id, job_idx) DO UPDATE SET evaluator = excluded.evaluator,
                 score = excluded.score, detail = excluded.detail, judge = excluded.judge,
                 judge_reply = excluded.judge_reply, judge_attempts = excluded.judge_attempts,
                 created_at = excluded.created_at, rule_score = excluded.rule_score
                 WHERE scores.score IS NOT excluded.score OR scores.detail IS NOT excluded.detail
                 OR scores.evaluator IS NOT excluded.evaluator OR scores.judge IS NOT excluded.judge
                 OR scores.judge_reply IS NOT excluded.judge_reply
                 OR scores.rule_score IS NOT excluded.rule_score"
            ))?;
            for r in rs {
                n += st.execute(score_values(r))?;
            }
        }
        tx.commit()?;
        Ok(n)
    }

    /// Every entry of the response cache (the judges' single calls).
    pub fn cache_entries(&self) -> Result<Vec<(String, Cached)>> {
        let mut st = self.conn.prepare(
            "SELECT key, text, finish_reason, prompt_tokens, completion_tokens, latency_ms, logprobs
             FROM cache ORDER BY key",
        )?;
        let rows = st
            .query_map([], |r| {
                Ok((
                    r.get(0)?,
                    Cached {
                        text: r.get(1)?,
                        finish_reason: r.get(2)?,
                        prompt_tokens: r.get(3)?,
                        completion_tokens: r.get(4)?,
                        latency_ms: r.get::<_, Option<i64>>(5)?.map(|v| v as u64),
                        logprobs: r.get(6)?,
                    },
                ))
            })?
            .collect::<rusqlite::Result<Vec<_>>>()?;
        Ok(rows)
    }

    /// Adds the cache entries this store lacks; returns how many.
    pub fn put_cache_entries(&mut self, es: &[(String, Cached)]) -> Result<usize> {
        let tx = self.conn.transaction()?;
        let mut n = 0;
        {
            let mut st = tx.prepare(
                "INSERT OR IGNORE INTO cache (key, text, finish_reason, prompt_tokens,
                 completion_tokens, latency_ms, created_at, logprobs)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)",
            )?;
            for (k, c) in es {
                n += st.execute(params![
                    k,
                    c.text,
                    c.finish_reason,
                    c.prompt_tokens,
                    c.completion_tokens,
                    c.latency_ms.map(|v| v as i64),
                    super::now_secs(),
                    c.logprobs
                ])?;
            }
        }
        tx.commit()?;
        Ok(n)
    }
}

/// Inserts answers by the rule of the module's notes; returns how many were added or replaced.
fn upsert_responses(tx: &rusqlite::Transaction<'_>, rs: &[ResponseRecord]) -> Result<usize> {
    let mut resp = tx.prepare_cached(
        "INSERT INTO responses (run_id, job_idx, item_id, task_id, model, sample, text, error,
         finish_reason, prompt_tokens, completion_tokens, latency_ms, first_token_ms, attempts,
         params, request_hash, cached, created_at, cache_key, logprobs)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16, ?17, ?18, ?19, ?20)
         ON CONFLICT (run_id, job_idx) DO UPDATE SET text = excluded.text,
         error = excluded.error, finish_reason = excluded.finish_reason,
         prompt_tokens = excluded.prompt_tokens, completion_tokens = excluded.completion_tokens,
         latency_ms = excluded.latency_ms, first_token_ms = excluded.first_token_ms,
         attempts = excluded.attempts, params = excluded.params,
         request_hash = excluded.request_hash, cached = excluded.cached,
         created_at = excluded.created_at, cache_key = excluded.cache_key,
         logprobs = excluded.logprobs
         WHERE responses.error IS NOT NULL AND excluded.error IS NULL",
    )?;
    let mut n = 0;
    for r in rs {
        let times = response_times(r);
        n += resp.execute(response_values(r, &times, r.cache_key.as_ref()))?;
    }
    Ok(n)
}
