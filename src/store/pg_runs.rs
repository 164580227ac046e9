//! Runs on the shared PostgreSQL store: the statements behind a run that many workers share
//! (`prism run --db postgres://...`, `prism work RUN`).
//!
//! PostgreSQL is the queue: a worker leases a batch of a model's pending jobs with `FOR UPDATE
//! SKIP LOCKED` (two workers never lease the same job), renews its leases while it works, and
//! lets them go when it stops. A worker that dies stops renewing; once its leases run out
//! (`leased_until`, the server's clock, so machines' clocks do not matter) another worker
//! leases those jobs. An answer's key is its (run, job): if the worker whose lease ran out
//! answers after all, its answer is dropped (counted in `run_workers.dropped`) unless it
//! replaces a stored failure. A job's `worker` is the lease holder while pending and the worker
//! whose answer was stored once done; a score is stored only by that worker, so a dropped
//! answer's score never replaces the stored answer's.

use postgres::{Client, GenericClient, ToStatement};

use super::cache::CacheEntry;
use super::lane_tables::pg::params;
use super::record::{Record, converted};
use super::runs::{JobRow, RunRow};
use super::unknown::index;
use super::{Cached, ResponseRecord, RunStatus, ScoreRecord};

pub(crate) use super::lane_tables::pg::RUNS_CHANNEL;

type PgResult<T> = std::result::Result<T, postgres::Error>;

/// Records a run and its jobs in one transaction.
pub(crate) fn create_run(c: &mut Client, run: &RunRow, jobs: &[JobRow]) -> PgResult<()> {
    let mut tx = c.transaction()?;
    insert_run(&mut tx, run, "")?;
    // One statement per thousands of jobs (arrays unnested), not one round trip per job: a
    // full PRISM pass is tens of thousands.
    for chunk in jobs.chunks(10_000) {
        put_jobs(&mut tx, chunk)?;
    }
    tx.commit()
}

/// Inserts a run's row (`conflict`: what to do when there is one already).
fn insert_run(c: &mut impl GenericClient, run: &RunRow, conflict: &str) -> PgResult<u64> {
    let t = &super::tables::RUNS;
    c.execute(
        &format!(
            "INSERT INTO runs ({}) VALUES ({}) {conflict}",
            t.col_list(),
            t.marks("$")
        ),
        &refs(&params(t, &run.to_row())),
    )
}

/// Inserts jobs, in one statement (a stored job's state moves on to done, never back).
fn put_jobs(c: &mut impl GenericClient, jobs: &[JobRow]) -> PgResult<u64> {
    let t = &super::tables::JOBS;
    let rows: Vec<_> = jobs.iter().map(Record::to_row).collect();
    let arrays: Vec<_> = t
        .cols
        .iter()
        .enumerate()
        .map(|(i, (_, ty))| super::lane_tables::pg::column(rows.iter().map(|r| &r[i]), *ty))
        .collect();
    c.execute(&t.upsert_unnest(false, ""), &refs(&arrays))
}

/// A worker joins a run (or joins it again): recorded in `run_workers`. Jobs that failed go
/// back to pending, as `prism run --resume` tries failures again.
pub(crate) fn join(c: &mut Client, run: &str, worker: &str) -> PgResult<()> {
    let mut tx = c.transaction()?;
    tx.execute(
        "INSERT INTO run_workers (run_id, worker, host, pid, joined_at) VALUES ($1, $2, $3, $4, $5)
         ON CONFLICT (run_id, worker) DO UPDATE SET heartbeat = now()",
        &[
            &run,
            &worker,
            &super::host_name(),
            &i64::from(std::process::id()),
            &super::now_secs(),
        ],
    )?;
    tx.execute(
        "UPDATE jobs SET state = 'pending', worker = NULL, leased_until = NULL
         WHERE run_id = $1 AND state = 'failed'",
        &[&run],
    )?;
    tx.commit()
}

/// What a lease came to: the jobs now this worker's, and (when there were none to lease) how
/// many of the model's pending jobs other workers hold: they may yet come free if one dies.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Leased {
    pub jobs: Vec<u32>,
    pub held_elsewhere: usize,
    /// Of `jobs`, those another worker had leased before its lease ran out.
    pub retaken: usize,
}

/// Leases up to `n` of `model`'s pending jobs in `run` for `secs` seconds: free ones, or ones
/// whose lease ran out (counted as retaken).
pub(crate) const LEASE: &str = "WITH picked AS (
             SELECT idx, worker AS prev FROM jobs
             WHERE run_id = $1 AND model = $2 AND state = 'pending'
               AND (leased_until IS NULL OR leased_until < now())
             ORDER BY idx LIMIT $3 FOR UPDATE SKIP LOCKED)
         UPDATE jobs j SET worker = $4, leased_until = now() + make_interval(secs => $5)
         FROM picked WHERE j.run_id = $1 AND j.idx = picked.idx
         RETURNING j.idx, picked.prev";

pub(crate) fn lease<S: ToStatement + ?Sized>(
    c: &mut Client,
    st: &S,
    run: &str,
    model: &str,
    worker: &str,
    n: usize,
    secs: f64,
) -> PgResult<Leased> {
    let mut tx = c.transaction()?;
    let rows = tx.query(st, &[&run, &model, &(n as i64), &worker, &secs])?;
    let retaken = rows
        .iter()
        .filter(|r| r.get::<_, Option<String>>(1).is_some_and(|p| p != worker))
        .count() as i64;
    if retaken > 0 {
        tx.execute(
            "UPDATE run_workers SET retaken = retaken + $3 WHERE run_id = $1 AND worker = $2",
            &[&run, &worker, &retaken],
        )?;
    }
    // Only asked when nothing could be leased (the count reads every pending job's row).
    let held: i64 = if rows.is_empty() {
        tx.query_one(
            "SELECT count(*) AS n FROM jobs WHERE run_id = $1 AND model = $2 AND state = 'pending'
             AND leased_until >= now() AND worker IS DISTINCT FROM $3",
            &[&run, &model, &worker],
        )?
        .get("n")
    } else {
        0
    };
    tx.commit()?;
    let mut jobs: Vec<u32> = rows
        .iter()
        .filter_map(|r| index(r.get("idx"), "job number"))
        .collect();
    jobs.sort_unstable();
    Ok(Leased {
        jobs,
        held_elsewhere: held as usize,
        retaken: retaken as usize,
    })
}

/// Renews every lease `worker` holds in `runs` for `secs` more seconds, and its heartbeat.
pub(crate) fn renew(c: &mut Client, runs: &[&str], worker: &str, secs: f64) -> PgResult<()> {
    let runs: Vec<&str> = runs.to_vec();
    c.execute(
        "UPDATE jobs SET leased_until = now() + make_interval(secs => $3)
         WHERE run_id = ANY($1) AND worker = $2 AND state = 'pending'",
        &[&runs, &worker, &secs],
    )?;
    c.execute(
        "UPDATE run_workers SET heartbeat = now() WHERE run_id = ANY($1) AND worker = $2",
        &[&runs, &worker],
    )?;
    Ok(())
}

/// Lets go of `worker`'s leases in `run` (it stops: cancelled, or out of work), so others
/// take those jobs now rather than after the timeout.
pub(crate) fn release(c: &mut Client, run: &str, worker: &str) -> PgResult<()> {
    c.execute(
        "UPDATE jobs SET worker = NULL, leased_until = NULL
         WHERE run_id = $1 AND worker = $2 AND state = 'pending'",
        &[&run, &worker],
    )?;
    Ok(())
}

/// Saves answers in one transaction, each by the worker that leased it (`workers[i]` for
/// `rs[i]`). Returns how many were dropped: another worker's answer was there first (a
/// failure is replaced by an answer; nothing else is).
///
/// A handful of statements whatever the number of answers (arrays unnested): one round trip
/// per answer is what made a worker on PostgreSQL a tenth as fast as one on SQLite.
pub(crate) const SAVE: &str = "INSERT INTO responses (run_id, job_idx, item_id, task_id, model, sample, text, error,
         finish_reason, prompt_tokens, completion_tokens, latency_ms, first_token_ms, attempts,
         params, request_hash, cached, created_at, cache_key, logprobs)
         SELECT * FROM unnest($1::TEXT[], $2::BIGINT[], $3::TEXT[], $4::TEXT[], $5::TEXT[],
             $6::BIGINT[], $7::TEXT[], $8::TEXT[], $9::TEXT[], $10::BIGINT[], $11::BIGINT[],
             $12::BIGINT[], $13::BIGINT[], $14::BIGINT[], $15::TEXT[], $16::TEXT[], $17::BOOL[],
             $18::BIGINT[], $19::TEXT[], $20::BYTEA[])
         ON CONFLICT (run_id, job_idx) DO UPDATE SET text = EXCLUDED.text, error = EXCLUDED.error,
         finish_reason = EXCLUDED.finish_reason, prompt_tokens = EXCLUDED.prompt_tokens,
         completion_tokens = EXCLUDED.completion_tokens, latency_ms = EXCLUDED.latency_ms,
         first_token_ms = EXCLUDED.first_token_ms, attempts = EXCLUDED.attempts,
         params = EXCLUDED.params, request_hash = EXCLUDED.request_hash, cached = EXCLUDED.cached,
         created_at = EXCLUDED.created_at, cache_key = EXCLUDED.cache_key, logprobs = EXCLUDED.logprobs,
         seq = nextval('prism_changes')
         WHERE responses.error IS NOT NULL AND EXCLUDED.error IS NULL
         RETURNING run_id, job_idx";

/// The stored answers' jobs marked done or failed. A job already so (a copy brings its jobs
/// in their final state) is left as it is: rewriting it anyway made every copied job a dead
/// row and a fifth of `db copy`'s time.
pub(crate) const SAVE_JOBS: &str = "UPDATE jobs j SET state = u.state, worker = u.worker, leased_until = NULL
             FROM unnest($1::TEXT[], $2::BIGINT[], $3::TEXT[], $4::TEXT[]) AS u(run_id, idx, state, worker)
             WHERE j.run_id = u.run_id AND j.idx = u.idx
               AND (j.state IS DISTINCT FROM u.state OR j.worker IS DISTINCT FROM u.worker
                    OR j.leased_until IS NOT NULL)";

pub(crate) fn save_responses<S: ToStatement + ?Sized, J: ToStatement + ?Sized>(
    c: &mut impl GenericClient,
    (ins, jobs): (&S, &J),
    rs: &[ResponseRecord],
    workers: &[Option<String>],
) -> PgResult<usize> {
    // One answer per job in a statement (an upsert may not touch a row twice): a later answer
    // to the same job in the group goes the way a later worker's would.
    let mut seen = std::collections::HashSet::new();
    let mut first: Vec<usize> = Vec::with_capacity(rs.len());
    for (i, r) in rs.iter().enumerate() {
        if seen.insert((r.run_id.as_str(), r.job_idx)) {
            first.push(i);
        }
    }
    // Each column of the answers as one array (the one conversion, `ResponseRecord`'s).
    let t = &super::tables::RESPONSES;
    let rows: Vec<super::lane_tables::Row> = first.iter().map(|&i| rs[i].to_row()).collect();
    let arrays: Vec<Box<dyn postgres::types::ToSql + Sync + Send>> = t
        .cols
        .iter()
        .enumerate()
        .map(|(col, (_, c))| super::lane_tables::pg::column(rows.iter().map(|r| &r[col]), *c))
        .collect();
    let mut tx = c.transaction()?;
    let stored = tx.query(ins, &refs(&arrays))?;
    let stored: std::collections::HashSet<(String, i64)> = stored
        .iter()
        .map(|r| (r.get("run_id"), r.get("job_idx")))
        .collect();
    let dropped = rs.len() - stored.len();
    // The stored answers' jobs: done or failed, answered by their worker.
    let (mut j_run, mut j_idx, mut j_state, mut j_worker) = (vec![], vec![], vec![], vec![]);
    let mut per_worker: std::collections::BTreeMap<(&str, &str), (i64, i64)> = Default::default();
    let mut is_first = vec![false; rs.len()];
    for &i in &first {
        is_first[i] = true;
    }
    for (i, r) in rs.iter().enumerate() {
        let is_stored = is_first[i] && stored.contains(&(r.run_id.clone(), i64::from(r.job_idx)));
        if is_stored {
            j_run.push(r.run_id.as_str());
            j_idx.push(i64::from(r.job_idx));
            j_state.push(if r.is_ok() { "done" } else { "failed" });
            j_worker.push(workers[i].as_deref());
        }
        if let Some(w) = &workers[i] {
            let e = per_worker.entry((&r.run_id, w)).or_default();
            if is_stored {
                e.0 += 1;
            } else {
                e.1 += 1;
            }
        }
    }
    if !j_run.is_empty() {
        tx.execute(jobs, &[&j_run, &j_idx, &j_state, &j_worker])?;
    }
    for ((run, w), (s, d)) in per_worker {
        tx.execute(
            "UPDATE run_workers SET stored = stored + $3, dropped = dropped + $4
             WHERE run_id = $1 AND worker = $2",
            &[&run, &w, &s, &d],
        )?;
    }
    if !stored.is_empty() {
        tx.batch_execute(&format!("NOTIFY {}", RUNS_CHANNEL))?;
    }
    tx.commit()?;
    Ok(dropped)
}

/// Saves scores, replacing earlier ones of the same answers; with `worker`, only scores of
/// answers that worker's answer is the stored one of (see the module's notes).
pub(crate) fn save_scores(
    c: &mut impl GenericClient,
    rs: &[ScoreRecord],
    worker: &dyn Fn(&str) -> Option<String>,
) -> PgResult<()> {
    let mut tx = c.transaction()?;
    // Every group these scores may touch, locked before any row is written (see `lock`).
    super::summaries::pg::lock(&mut tx, &super::summaries::Touched::of(rs))?;
    let ins = tx.prepare(
        "INSERT INTO scores (run_id, job_idx, item_id, task_id, model, sample, evaluator, score,
         detail, judge, judge_reply, judge_attempts, created_at, rule_score)
         SELECT $1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14
         WHERE $15::TEXT IS NULL OR EXISTS (SELECT 1 FROM jobs WHERE run_id = $1 AND idx = $2 AND worker = $15)
         ON CONFLICT (run_id, job_idx) DO UPDATE SET evaluator = EXCLUDED.evaluator,
         score = EXCLUDED.score, detail = EXCLUDED.detail, judge = EXCLUDED.judge,
         judge_reply = EXCLUDED.judge_reply, judge_attempts = EXCLUDED.judge_attempts,
         created_at = EXCLUDED.created_at, rule_score = EXCLUDED.rule_score,
         seq = nextval('prism_changes')",
    )?;
    let mut saved = Vec::new();
    for r in rs {
        let w = worker(&r.run_id);
        let owned = score_params(r);
        let mut p = refs(&owned);
        p.push(&w);
        if tx.execute(&ins, &p)? > 0 {
            saved.push(r);
        }
    }
    // The summaries move with the scores, in the same transaction.
    super::summaries::pg::refresh(&mut tx, &super::summaries::Touched::of(saved))?;
    if !rs.is_empty() {
        tx.batch_execute(&format!("NOTIFY {}", RUNS_CHANNEL))?;
    }
    tx.commit()
}

pub(crate) fn cache_put(c: &mut Client, key: &str, v: &Cached) -> PgResult<()> {
    let t = &super::tables::CACHE;
    let e = CacheEntry {
        key: key.to_string(),
        cached: v.clone(),
        created_at: super::now_secs(),
    };
    c.execute(&t.upsert("$", true, ""), &refs(&params(t, &e.to_row())))?;
    Ok(())
}

/// A worker stopped: `Running` marks the run running; a worker's end marks it finished only
/// when no job is left pending, and cancelled only when no other worker holds a lease (the
/// others are still at it otherwise).
pub(crate) fn set_status(c: &mut Client, run: &str, status: RunStatus) -> PgResult<()> {
    c.execute(
        "UPDATE runs SET status = CASE
             WHEN $2 = 'running' THEN 'running'
             WHEN NOT EXISTS (SELECT 1 FROM jobs WHERE run_id = $1 AND state = 'pending') THEN 'finished'
             WHEN EXISTS (SELECT 1 FROM jobs WHERE run_id = $1 AND state = 'pending' AND leased_until >= now()) THEN 'running'
             ELSE $2 END
         WHERE id = $1",
        &[&run, &status.as_str()],
    )?;
    Ok(())
}

/// A run as stored (its config unparsed).
pub(crate) fn run(c: &mut Client, id: &str) -> PgResult<Option<RunRow>> {
    let t = &super::tables::RUNS;
    Ok(c.query_opt(
        &format!("SELECT {} FROM runs WHERE id = $1", t.col_list()),
        &[&id],
    )?
    .and_then(|r| run_row(&r)))
}

/// Every run, newest first (config unparsed).
pub(crate) fn runs(c: &mut Client) -> PgResult<Vec<RunRow>> {
    let t = &super::tables::RUNS;
    let mut rows: Vec<RunRow> = c
        .query(&format!("SELECT {} FROM runs", t.col_list()), &[])?
        .iter()
        .filter_map(run_row)
        .collect();
    super::runs::newest_first(&mut rows);
    Ok(rows)
}

/// A page of runs, newest first (see `Store::runs_page`: the same filter, the same order).
pub(crate) fn runs_page(
    c: &mut Client,
    since: i64,
    tags: &[String],
    limit: Option<i64>,
) -> PgResult<Vec<RunRow>> {
    let t = &super::tables::RUNS;
    let mut sql = format!("SELECT {} FROM runs WHERE created_at >= $1", t.col_list());
    let mut args: Vec<Box<dyn postgres::types::ToSql + Sync + Send>> = vec![Box::new(since)];
    for tag in tags {
        args.push(Box::new(tag.clone()));
        sql += &format!(
            " AND position(' ' || ${}::TEXT || ' ' IN ' ' || tags || ' ') > 0",
            args.len()
        );
    }
    sql += " ORDER BY created_at DESC, id DESC";
    if let Some(n) = limit {
        sql += &format!(" LIMIT {n}");
    }
    Ok(c.query(&sql, &refs(&args))?
        .iter()
        .filter_map(run_row)
        .collect())
}

/// The states of a run's jobs not done (unparsed, counted by their partial index) and its job
/// count (from the highest job number: jobs are numbered 0..n as a run is made), so a finished
/// run costs two index lookups, not a walk over its jobs.
pub(crate) fn job_states(c: &mut Client, run: &str) -> PgResult<(Vec<(String, i64)>, i64)> {
    let ends = c.query_one(
        "SELECT MIN(idx)::BIGINT AS lo, MAX(idx)::BIGINT AS hi FROM jobs WHERE run_id = $1",
        &[&run],
    )?;
    let (lo, hi): (Option<i64>, Option<i64>) = (ends.get("lo"), ends.get("hi"));
    let states: Vec<(String, i64)> = c
        .query(
            "SELECT state, COUNT(*) AS n FROM jobs WHERE run_id = $1 AND state <> 'done' GROUP BY state",
            &[&run],
        )?
        .iter()
        .map(|r| (r.get("state"), r.get("n")))
        .collect();
    let total = match (lo, hi) {
        (Some(0), Some(hi)) => hi + 1,
        (None, _) => 0,
        // Numbered otherwise (written by hand): counted one by one.
        _ => c
            .query_one("SELECT COUNT(*) AS n FROM jobs WHERE run_id = $1", &[&run])?
            .get("n"),
    };
    Ok((states, total))
}

/// A run's summaries.
pub(crate) fn run_summaries(
    c: &mut Client,
    run: &str,
) -> PgResult<Vec<super::summaries::TaskSummary>> {
    let t = &super::tables::RUN_SUMMARIES;
    Ok(c.query(
        &format!(
            "SELECT {} FROM run_summaries WHERE run_id = $1 ORDER BY model, task_id",
            t.col_list()
        ),
        &[&run],
    )?
    .iter()
    .filter_map(|r| {
        let row = super::lane_tables::pg::row_of(t, r, t.cols.len()).ok()?;
        converted(super::summaries::TaskSummary::from_row(&row))
    })
    .collect())
}

/// A run's summaries made from its scores by `sql` (`store::summaries`' own statement).
pub(crate) fn summaries_from_scores(
    c: &mut Client,
    sql: &str,
    run: &str,
) -> PgResult<Vec<super::summaries::TaskSummary>> {
    let t = &super::tables::RUN_SUMMARIES;
    // Sums come back as NUMERIC from PostgreSQL: each column cast to the table's type.
    let names: Vec<&str> = t.cols.iter().map(|(n, _)| *n).collect();
    let cast: Vec<String> = t
        .cols
        .iter()
        .map(|(n, c)| format!("{n}::{}", c.pg_type()))
        .collect();
    let sql = format!(
        "SELECT {} FROM ({sql}) AS s({})",
        cast.join(", "),
        names.join(", ")
    );
    Ok(c.query(&sql, &[&run])?
        .iter()
        .filter_map(|r| {
            let row = super::lane_tables::pg::row_of(t, r, t.cols.len()).ok()?;
            converted(super::summaries::TaskSummary::from_row(&row))
        })
        .collect())
}

fn run_row(r: &postgres::Row) -> Option<RunRow> {
    let t = &super::tables::RUNS;
    let row = super::lane_tables::pg::row_of(t, r, t.cols.len()).ok()?;
    converted(RunRow::from_row(&row))
}

/// A run's jobs in order, with the worker that holds or answered each.
pub(crate) fn jobs(c: &mut Client, run: &str) -> PgResult<Vec<(JobRow, Option<String>)>> {
    let t = &super::tables::JOBS;
    let width = t.cols.len();
    Ok(c.query(
        &format!(
            "SELECT {}, worker FROM jobs WHERE run_id = $1 ORDER BY idx",
            t.col_list()
        ),
        &[&run],
    )?
    .iter()
    .filter_map(|r| {
        let row = super::lane_tables::pg::row_of(t, r, width).ok()?;
        Some((converted(JobRow::from_row(&row))?, r.get("worker")))
    })
    .collect())
}

/// An answer's columns, as [`response_row`] reads them (every one: cache key and tokens too).
fn response_cols() -> String {
    super::tables::RESPONSES.col_list()
}

/// An answer read from the shared store (the one conversion, `ResponseRecord`'s); `None`
/// (noted once) when it cannot be one: a job or sample number out of range, which would wrap
/// onto another job's.
fn response_row(r: &postgres::Row) -> Option<ResponseRecord> {
    let t = &super::tables::RESPONSES;
    let row = super::lane_tables::pg::row_of(t, r, t.cols.len()).ok()?;
    converted(ResponseRecord::from_row(&row))
}

/// A run's answers in job order, with their cache keys and tokens.
pub(crate) fn responses(c: &mut Client, run: &str) -> PgResult<Vec<ResponseRecord>> {
    Ok(c.query(
        &format!(
            "SELECT {} FROM responses WHERE run_id = $1 ORDER BY job_idx",
            response_cols()
        ),
        &[&run],
    )?
    .iter()
    .filter_map(response_row)
    .collect())
}

/// A run's answers without a score (see `Store::unscored_responses`).
pub(crate) fn unscored_responses(c: &mut Client, run: &str) -> PgResult<Vec<ResponseRecord>> {
    Ok(c.query(
        &format!(
            "SELECT {} FROM responses r WHERE run_id = $1 AND NOT EXISTS
             (SELECT 1 FROM scores s WHERE s.run_id = r.run_id AND s.job_idx = r.job_idx)
             ORDER BY job_idx",
            response_cols()
        ),
        &[&run],
    )?
    .iter()
    .filter_map(response_row)
    .collect())
}

/// Who worked on a run: (worker, host, pid, stored, dropped, retaken, seconds since its
/// heartbeat).
pub(crate) type WorkerRow = (String, String, i64, i64, i64, i64, f64);

pub(crate) fn workers(c: &mut Client, run: &str) -> PgResult<Vec<WorkerRow>> {
    Ok(c.query(
        "SELECT worker, host, pid, stored, dropped, retaken,
         EXTRACT(EPOCH FROM now() - heartbeat)::DOUBLE PRECISION AS age
         FROM run_workers WHERE run_id = $1 ORDER BY joined_at, worker",
        &[&run],
    )?
    .iter()
    .map(|r| {
        (
            r.get("worker"),
            r.get("host"),
            r.get("pid"),
            r.get("stored"),
            r.get("dropped"),
            r.get("retaken"),
            r.get("age"),
        )
    })
    .collect())
}

/// Everything stored of a run (`store::bundle`) as the shared store holds it: the run's row
/// and its jobs' states unparsed (`PgStore::run_bundle` parses them, naming what is wrong).
pub(crate) struct RawBundle {
    pub(crate) run: RunRow,
    pub(crate) jobs: Vec<JobRow>,
    pub(crate) responses: Vec<ResponseRecord>,
    pub(crate) scores: Vec<ScoreRecord>,
}

/// The part of a run's bundle whose jobs are numbered in `jobs` (see `Store::run_bundle_part`).
pub(crate) fn bundle(
    c: &mut Client,
    id: &str,
    jobs: std::ops::Range<u32>,
) -> PgResult<Option<RawBundle>> {
    let Some(run) = run(c, id)? else {
        return Ok(None);
    };
    let (lo, hi) = (i64::from(jobs.start), i64::from(jobs.end));
    let range = "WHERE run_id = $1 AND job_idx >= $2 AND job_idx < $3 ORDER BY job_idx";
    let responses = c
        .query(
            &format!("SELECT {} FROM responses {range}", response_cols()),
            &[&id, &lo, &hi],
        )?
        .iter()
        .filter_map(response_row)
        .collect();
    let scores = c
        .query(
            &format!(
                "SELECT {} FROM scores {range}",
                super::tables::SCORES.col_list()
            ),
            &[&id, &lo, &hi],
        )?
        .iter()
        .filter_map(score_row)
        .collect();
    let t = &super::tables::JOBS;
    let jobs = c
        .query(
            &format!(
                "SELECT {} FROM jobs WHERE run_id = $1 AND idx >= $2 AND idx < $3 ORDER BY idx",
                t.col_list()
            ),
            &[&id, &lo, &hi],
        )?
        .iter()
        .filter_map(|r| {
            let row = super::lane_tables::pg::row_of(t, r, t.cols.len()).ok()?;
            converted(JobRow::from_row(&row))
        })
        .collect();
    Ok(Some(RawBundle {
        run,
        jobs,
        responses,
        scores,
    }))
}

/// Adds what the shared store lacks of a run (the rules of `store::bundle`).
pub(crate) fn put_bundle(
    c: &mut Client,
    b: &super::RunBundle,
    run: &RunRow,
) -> PgResult<super::bundle::Added> {
    let mut tx = c.transaction()?;
    // The groups its scores touch, locked before any row is written (`summaries::pg::lock`).
    super::summaries::pg::lock(&mut tx, &super::summaries::Touched::of(&b.scores))?;
    let mut added = super::bundle::Added {
        runs: insert_run(&mut tx, run, "ON CONFLICT (id) DO NOTHING")? as usize,
        ..Default::default()
    };
    let jobs: Vec<JobRow> = b.job_rows().collect();
    for chunk in jobs.chunks(10_000) {
        put_jobs(&mut tx, chunk)?;
    }
    // The answers go in as workers' answers do: a failure is replaced by an answer, else
    // what is there stays.
    let none = vec![None; b.responses.len()];
    let dropped = save_responses(&mut tx, (SAVE, SAVE_JOBS), &b.responses, &none)?;
    added.responses = b.responses.len() - dropped;
    // The scores as one array per column: one statement for the bundle, not one per score.
    let t = &super::tables::SCORES;
    for chunk in b.scores.chunks(10_000) {
        let rows: Vec<super::lane_tables::Row> = chunk.iter().map(|r| r.to_row()).collect();
        let arrays: Vec<Box<dyn postgres::types::ToSql + Sync + Send>> = t
            .cols
            .iter()
            .enumerate()
            .map(|(col, (_, c))| super::lane_tables::pg::column(rows.iter().map(|r| &r[col]), *c))
            .collect();
        let unnest = t
            .cols
            .iter()
            .enumerate()
            .map(|(i, (_, c))| format!("${}::{}[]", i + 1, c.pg_type()))
            .collect::<Vec<_>>()
            .join(", ");
        added.scores += tx.execute(
            &format!(
                "INSERT INTO scores ({}) SELECT * FROM unnest({unnest})
                 ON CONFLICT (run_id, job_idx) DO NOTHING",
                t.col_list()
            ),
            &refs(&arrays),
        )? as usize;
    }
    if added.scores > 0 {
        // Only added scores (never a changed one): the groups and keys they touch.
        super::summaries::pg::refresh(&mut tx, &super::summaries::Touched::of(&b.scores))?;
    }
    tx.commit()?;
    Ok(added)
}

/// Every entry of the response cache.
pub(crate) fn cache_entries(c: &mut Client) -> PgResult<Vec<(String, Cached)>> {
    let t = &super::tables::CACHE;
    Ok(c.query(
        &format!("SELECT {} FROM cache ORDER BY key", t.col_list()),
        &[],
    )?
    .iter()
    .filter_map(|r| {
        let row = super::lane_tables::pg::row_of(t, r, t.cols.len()).ok()?;
        converted(CacheEntry::from_row(&row))
    })
    .map(|e| (e.key, e.cached))
    .collect())
}

/// Adds the cache entries the shared store lacks; returns how many.
pub(crate) fn put_cache_entries(c: &mut Client, es: &[(String, Cached)]) -> PgResult<usize> {
    let t = &super::tables::CACHE;
    let mut tx = c.transaction()?;
    let st = tx.prepare(&format!(
        "INSERT INTO cache ({}) VALUES ({}) ON CONFLICT (key) DO NOTHING",
        t.col_list(),
        t.marks("$")
    ))?;
    let now = super::now_secs();
    let mut n = 0;
    for (key, cached) in es {
        let e = CacheEntry {
            key: key.clone(),
            cached: cached.clone(),
            created_at: now,
        };
        n += tx.execute(&st, &refs(&params(t, &e.to_row())))? as usize;
    }
    tx.commit()?;
    Ok(n)
}

/// Answers changed after change number `after` (oldest change first, at most `limit`), each
/// with its change number, cache key and tokens.
pub(crate) fn responses_since(
    c: &mut Client,
    after: i64,
    limit: i64,
) -> PgResult<Vec<(i64, ResponseRecord)>> {
    Ok(c.query(
        &format!(
            "SELECT {}, seq FROM responses WHERE seq > $1 ORDER BY seq LIMIT $2",
            response_cols()
        ),
        &[&after, &limit],
    )?
    .iter()
    .filter_map(|r| Some((r.get("seq"), response_row(r)?)))
    .collect())
}

/// Scores changed after change number `after`, as [`responses_since`].
pub(crate) fn scores_since(
    c: &mut Client,
    after: i64,
    limit: i64,
) -> PgResult<Vec<(i64, ScoreRecord)>> {
    Ok(c.query(
        "SELECT run_id, job_idx, item_id, task_id, model, sample, evaluator, score, detail,
         judge, judge_reply, judge_attempts, created_at, rule_score, seq
         FROM scores WHERE seq > $1 ORDER BY seq LIMIT $2",
        &[&after, &limit],
    )?
    .iter()
    .filter_map(|r| Some((r.get("seq"), score_row(r)?)))
    .collect())
}

/// Every run's id and status.
pub(crate) fn statuses(c: &mut Client) -> PgResult<Vec<(String, String)>> {
    Ok(c.query("SELECT id, status FROM runs", &[])?
        .iter()
        .map(|r| (r.get("id"), r.get("status")))
        .collect())
}

/// A score read from the shared store (the one conversion, `ScoreRecord`'s); `None` (noted
/// once) when its job or sample number is out of range. A score outside 0..1 reads as none.
fn score_row(r: &postgres::Row) -> Option<ScoreRecord> {
    let t = &super::tables::SCORES;
    let row = super::lane_tables::pg::row_of(t, r, t.cols.len()).ok()?;
    converted(ScoreRecord::from_row(&row))
}

/// The workers that answered some of a run's jobs (those with one).
pub(crate) fn job_workers(c: &mut Client, run: &str, idxs: &[i64]) -> PgResult<Vec<(u32, String)>> {
    Ok(c.query(
        "SELECT idx, worker FROM jobs WHERE run_id = $1 AND idx = ANY($2) AND worker IS NOT NULL",
        &[&run, &idxs],
    )?
    .iter()
    .filter_map(|r| Some((index(r.get("idx"), "job number")?, r.get("worker"))))
    .collect())
}

/// A score's values in table order (`run_id` .. `rule_score`), as the inserts bind them.
fn score_params(r: &ScoreRecord) -> Vec<Box<dyn postgres::types::ToSql + Sync + Send>> {
    super::lane_tables::pg::params(&super::tables::SCORES, &r.to_row())
}

/// Parameters as the driver takes them.
pub(crate) fn refs(
    p: &[Box<dyn postgres::types::ToSql + Sync + Send>],
) -> Vec<&(dyn postgres::types::ToSql + Sync)> {
    p.iter()
        .map(|b| b.as_ref() as &(dyn postgres::types::ToSql + Sync))
        .collect()
}

/// Every run's name and tags (the mirror brings a rename or a tag to every machine).
pub(crate) fn labels(c: &mut Client) -> PgResult<Vec<(String, Option<String>, String)>> {
    Ok(c.query("SELECT id, name, tags FROM runs", &[])?
        .iter()
        .map(|r| (r.get("id"), r.get("name"), r.get("tags")))
        .collect())
}

/// Names a run (`None` takes the name off); false: no such run.
pub(crate) fn set_name(c: &mut Client, id: &str, name: Option<&str>) -> PgResult<bool> {
    let n = c.execute("UPDATE runs SET name = $2 WHERE id = $1", &[&id, &name])?;
    if n > 0 {
        c.batch_execute(&format!("NOTIFY {RUNS_CHANNEL}"))?;
    }
    Ok(n > 0)
}

/// Sets a run's tags (space-separated, as SQLite keeps them); false: no such run.
pub(crate) fn set_tags(c: &mut Client, id: &str, tags: &str) -> PgResult<bool> {
    let n = c.execute("UPDATE runs SET tags = $2 WHERE id = $1", &[&id, &tags])?;
    if n > 0 {
        c.batch_execute(&format!("NOTIFY {RUNS_CHANNEL}"))?;
    }
    Ok(n > 0)
}

/// Workers heard from within `secs` on a run that is not finished (a removal waits for them).
pub(crate) fn active_workers(c: &mut Client, id: &str, secs: f64) -> PgResult<i64> {
    Ok(c.query_one(
        "SELECT count(*) AS n FROM run_workers w JOIN runs r ON r.id = w.run_id
         WHERE w.run_id = $1 AND r.status = 'running'
           AND w.heartbeat > now() - make_interval(secs => $2)",
        &[&id, &secs],
    )?
    .get("n"))
}

/// Removes a run with its jobs, answers, scores, the rows of described tables kept by its
/// answers (answer checks, judges' verdicts, labels: `lane_tables::of_answer_runs`) and
/// workers, in one transaction; the answers removed, or `None` when there is no such run.
pub(crate) fn remove_run(c: &mut Client, id: &str) -> PgResult<Option<u64>> {
    let mut tx = c.transaction()?;
    let answers = tx.execute("DELETE FROM responses WHERE run_id = $1", &[&id])?;
    tx.execute("DELETE FROM scores WHERE run_id = $1", &[&id])?;
    super::summaries::pg::forget_run(&mut tx, id)?;
    for (table, col) in super::lane_tables::of_answer_runs() {
        tx.execute(&format!("DELETE FROM {table} WHERE {col} = $1"), &[&id])?;
    }
    tx.execute("DELETE FROM run_workers WHERE run_id = $1", &[&id])?;
    // Jobs go with the run (ON DELETE CASCADE).
    if tx.execute("DELETE FROM runs WHERE id = $1", &[&id])? == 0 {
        return Ok(None);
    }
    tx.commit()?;
    Ok(Some(answers))
}
