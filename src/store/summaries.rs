//! What a screen or a list shows of a history, kept as results land so reading it costs what
//! is shown, not what is stored (issue 47):
//!
//! - `run_summaries`: per run x model x sub-task, the items scored (every sample), the items
//!   waiting (a sample without a score: a judge is needed), the sum of the scored items' means
//!   (task S = 100 x sum / scored), the items hallucinated (mean below 0.5) and the score rows.
//!   Every rate of a run (`prism runs`, `runs --model`, the heatmap of runs, reports' rates) is
//!   made from these rows, as the aggregator makes it from points.
//! - `latest_scores`: per item x model x sample, the score of the newest run that has one (the
//!   greatest run id, as the TUI's tree has always taken them): what the tree opens on.
//!
//! Both are recomputed from `scores` for exactly the groups and keys a write touched, in the
//! transaction that writes the scores (on either backend), so they can never disagree with
//! them; a run's removal takes its rows away and recomputes the keys it was newest for. The SQL
//! below is the same on SQLite and PostgreSQL.

use std::collections::BTreeSet;

use super::error::Result;
use super::lane_tables::{Table, Val};
use super::record::{self, Fields, Record};

/// One run's results for one model in one sub-task.
#[derive(Debug, Clone, PartialEq)]
pub struct TaskSummary {
    pub run_id: String,
    pub model: String,
    pub task_id: String,
    /// Items with every sample scored.
    pub scored: u32,
    /// Items with a sample that has no score (waiting for a judge).
    pub unscored: u32,
    /// The sum of the scored items' mean scores.
    pub sum: f64,
    /// Scored items whose mean is below 0.5.
    pub hallucinated: u32,
    /// Score rows.
    pub rows: u32,
}

impl TaskSummary {
    /// Task S (0-100) over the scored items.
    pub fn s(&self) -> Option<f64> {
        (self.scored > 0).then(|| 100.0 * self.sum / f64::from(self.scored))
    }
}

impl Record for TaskSummary {
    fn table() -> &'static Table {
        &super::tables::RUN_SUMMARIES
    }

    fn fields(&self) -> Vec<(&'static str, Val)> {
        vec![
            ("run_id", record::text(Some(&self.run_id))),
            ("model", record::text(Some(&self.model))),
            ("task_id", record::text(Some(&self.task_id))),
            ("scored", record::int(self.scored)),
            ("unscored", record::int(self.unscored)),
            ("sum", record::real(Some(self.sum))),
            ("hallucinated", record::int(self.hallucinated)),
            ("rows", record::int(self.rows)),
        ]
    }

    fn from_fields(f: &Fields<'_>) -> Result<Self> {
        Ok(TaskSummary {
            run_id: f.text("run_id")?,
            model: f.text("model")?,
            task_id: f.text("task_id")?,
            scored: f.u32("scored")?,
            unscored: f.u32("unscored")?,
            sum: f.opt_real("sum").unwrap_or(0.0),
            hallucinated: f.u32("hallucinated")?,
            rows: f.u32("rows")?,
        })
    }
}

/// The newest run's score of one sample of an item by a model.
#[derive(Debug, Clone, PartialEq)]
pub struct LatestScore {
    pub item_id: String,
    pub model: String,
    pub sample: u32,
    pub run_id: String,
    pub job_idx: u32,
    pub task_id: String,
    /// `None`: answered, not scored yet.
    pub score: Option<f64>,
}

impl Record for LatestScore {
    fn table() -> &'static Table {
        &super::tables::LATEST_SCORES
    }

    fn fields(&self) -> Vec<(&'static str, Val)> {
        vec![
            ("item_id", record::text(Some(&self.item_id))),
            ("model", record::text(Some(&self.model))),
            ("sample", record::int(self.sample)),
            ("run_id", record::text(Some(&self.run_id))),
            ("job_idx", record::int(self.job_idx)),
            ("task_id", record::text(Some(&self.task_id))),
            ("score", record::real(self.score)),
        ]
    }

    fn from_fields(f: &Fields<'_>) -> Result<Self> {
        Ok(LatestScore {
            item_id: f.text("item_id")?,
            model: f.text("model")?,
            sample: f.u32("sample")?,
            run_id: f.text("run_id")?,
            job_idx: f.u32("job_idx")?,
            task_id: f.text("task_id")?,
            score: super::unknown::score(f.opt_real("score")),
        })
    }
}

/// What a write to `scores` touched: (run, model, task) groups and (item, model, sample) keys.
#[derive(Debug, Default)]
pub(crate) struct Touched {
    pub(crate) groups: BTreeSet<(String, String, String)>,
    pub(crate) keys: BTreeSet<(String, String, u32)>,
}

impl Touched {
    pub(crate) fn of<'a>(scores: impl IntoIterator<Item = &'a super::ScoreRecord>) -> Touched {
        let mut t = Touched::default();
        for s in scores {
            t.groups
                .insert((s.run_id.clone(), s.model.clone(), s.task_id.clone()));
            t.keys
                .insert((s.item_id.clone(), s.model.clone(), s.sample));
        }
        t
    }
}

/// The summary rows of the scores `WHERE`'s condition selects, grouped by run, model and
/// task. A score outside 0..1 (NaN, 5.0: written by hand) counts as no score, as every reader
/// reads it.
pub(super) fn summarize(cond: &str) -> String {
    summarize_from("scores", cond)
}

/// [`summarize`] reading `from` (SQLite names the index it must use: see [`Sql::new`]).
fn summarize_from(from: &str, cond: &str) -> String {
    format!(
        "SELECT run_id, model, task_id,
           SUM(CASE WHEN u = 0 AND n > 0 THEN 1 ELSE 0 END),
           SUM(CASE WHEN u > 0 THEN 1 ELSE 0 END),
           SUM(CASE WHEN u = 0 AND n > 0 THEN s / n ELSE 0 END),
           SUM(CASE WHEN u = 0 AND n > 0 AND s / n < 0.5 THEN 1 ELSE 0 END),
           SUM(n + u)
         FROM (SELECT run_id, model, task_id, item_id, SUM(v) AS s, COUNT(v) AS n,
                 COUNT(*) - COUNT(v) AS u
               FROM (SELECT run_id, model, task_id, item_id,
                       CASE WHEN score >= 0 AND score <= 1 THEN score END AS v
                     FROM {from} WHERE {cond}) x
               GROUP BY run_id, model, task_id, item_id) y
         GROUP BY run_id, model, task_id"
    )
}

/// The statements, in a dialect's marks (`?` or `$`).
pub(crate) struct Sql {
    /// Replaces one group's summary ($1 run, $2 model, $3 task).
    pub(crate) group: String,
    /// Takes a group's summary away ($1 run, $2 model, $3 task): run before `group`, which
    /// writes it again when the group still has scores.
    pub(crate) drop_group: String,
    /// Takes one key's newest score away ($1 item, $2 model, $3 sample).
    pub(crate) drop_key: String,
    /// Writes one key's newest score ($1 item, $2 model, $3 sample), if it has one.
    pub(crate) key: String,
}

impl Sql {
    pub(crate) fn new(mark: &str) -> Sql {
        let m = |i: usize| {
            if mark == "$" {
                format!("${i}")
            } else {
                format!("?{i}")
            }
        };
        let sums = &super::tables::RUN_SUMMARIES;
        let latest = &super::tables::LATEST_SCORES;
        let ints = if mark == "$" { "::BIGINT" } else { "" };
        // SQLite without statistics reads a group's or a key's scores by the primary key's run
        // prefix (a walk over the whole run): the indexes made for them are named.
        let (group_from, key_from) = if mark == "$" {
            ("scores", "scores")
        } else {
            (
                "scores INDEXED BY scores_group",
                "scores INDEXED BY scores_key",
            )
        };
        Sql {
            group: format!(
                "INSERT INTO {} ({}) {}",
                sums.name,
                sums.col_list(),
                summarize_from(
                    group_from,
                    &format!(
                        "run_id = {} AND model = {} AND task_id = {}",
                        m(1),
                        m(2),
                        m(3)
                    )
                )
            ),
            drop_group: format!(
                "DELETE FROM {} WHERE run_id = {} AND model = {} AND task_id = {}",
                sums.name,
                m(1),
                m(2),
                m(3)
            ),
            drop_key: format!(
                "DELETE FROM {} WHERE item_id = {} AND model = {} AND sample = {}{ints}",
                latest.name,
                m(1),
                m(2),
                m(3)
            ),
            key: format!(
                "INSERT INTO {} ({})
                 SELECT item_id, model, sample, run_id, job_idx, task_id, score FROM {key_from}
                 WHERE item_id = {} AND model = {} AND sample = {}{ints}
                 ORDER BY run_id DESC LIMIT 1",
                latest.name,
                latest.col_list(),
                m(1),
                m(2),
                m(3)
            ),
        }
    }
}

/// SQLite: brings the summaries and newest scores of what a write touched up to date, in the
/// write's transaction.
pub(super) fn refresh(tx: &rusqlite::Transaction<'_>, t: &Touched) -> Result<()> {
    thread_local! {
        static SQL: Sql = Sql::new("?");
    }
    SQL.with(|sql| -> Result<()> {
        let mut drop = tx.prepare_cached(&sql.drop_group)?;
        let mut put = tx.prepare_cached(&sql.group)?;
        for (run, model, task) in &t.groups {
            // A shared run held in part keeps the shared store's summaries until its last
            // page lands (`store::mirror_pending`).
            if held_in_part(tx, run)? {
                continue;
            }
            drop.execute([run, model, task])?;
            put.execute([run, model, task])?;
        }
        let mut drop = tx.prepare_cached(&sql.drop_key)?;
        let mut put = tx.prepare_cached(&sql.key)?;
        for (item, model, sample) in &t.keys {
            drop.execute(rusqlite::params![item, model, sample])?;
            put.execute(rusqlite::params![item, model, sample])?;
        }
        Ok(())
    })
}

/// Whether `run` is a shared run this store holds in part (`store::mirror_pending`): its
/// summaries are the shared store's until its last page lands.
pub(super) fn held_in_part(tx: &rusqlite::Transaction<'_>, run: &str) -> Result<bool> {
    let mut st = tx.prepare_cached("SELECT 1 FROM mirror_pending WHERE run_id = ?1")?;
    Ok(st.exists([run])?)
}

/// One item's part of its group's summary (its samples' scores in one run).
#[derive(Debug, Clone, Copy, Default)]
struct ItemPart {
    scored: i64,
    unscored: i64,
    sum: f64,
    hallucinated: i64,
    rows: i64,
}

impl ItemPart {
    fn of(s: Option<f64>, n: i64, u: i64) -> ItemPart {
        let done = u == 0 && n > 0;
        let mean = if done {
            s.unwrap_or(0.0) / n as f64
        } else {
            0.0
        };
        ItemPart {
            scored: i64::from(done),
            unscored: i64::from(u > 0),
            sum: mean,
            hallucinated: i64::from(done && mean < 0.5),
            rows: n + u,
        }
    }
}

impl ItemPart {
    /// The part of an item whose samples have these scores (as `scores` holds them: a score
    /// outside 0..=1, NaN included, counts as not scored, as SQLite's `CASE` reads it).
    fn of_scores(scores: impl Iterator<Item = Option<f64>>) -> ItemPart {
        let (mut sum, mut n, mut u) = (0.0, 0, 0);
        for s in scores {
            match s.filter(|v| (0.0..=1.0).contains(v)) {
                Some(v) => {
                    sum += v;
                    n += 1;
                }
                None => u += 1,
            }
        }
        ItemPart::of((n > 0).then_some(sum), n, u)
    }
}

/// An item of a run (run, model, task, item), borrowed from the scores being saved.
type ItemKey<'a> = (&'a str, &'a str, &'a str, &'a str);

/// An item's scores by job (job, score).
type JobScores = Vec<(u32, Option<f64>)>;

/// The scores `items` (run, model, task, item) have in `tx`, by job: read before a write, what
/// the items come to after it is this plus the write's own scores, with no second read. The
/// group index is named: without statistics SQLite chose the primary key's run prefix, a walk
/// over the whole run for every item.
fn item_scores<'a>(
    tx: &rusqlite::Transaction<'_>,
    items: impl Iterator<Item = ItemKey<'a>>,
) -> Result<Vec<JobScores>> {
    let mut st = tx.prepare_cached(
        "SELECT job_idx, score FROM scores INDEXED BY scores_group
         WHERE run_id = ?1 AND model = ?2 AND task_id = ?3 AND item_id = ?4",
    )?;
    let mut out = Vec::new();
    for (run, model, task, item) in items {
        let rows = st.query_map([run, model, task, item], |r| {
            // As the summaries' SQL reads a score: a number or nothing (text written by hand
            // into a store falls outside 0..=1 there, and is no score here).
            let score = match r.get_ref("score")? {
                rusqlite::types::ValueRef::Integer(i) => Some(i as f64),
                rusqlite::types::ValueRef::Real(f) => Some(f),
                _ => None,
            };
            Ok((r.get("job_idx")?, score))
        })?;
        out.push(rows.collect::<rusqlite::Result<Vec<_>>>()?);
    }
    Ok(out)
}

/// SQLite, the hot path (every score a run saves): `write` saves `scores` in `tx`, and the
/// summaries move by what changed: each touched item's scores read before (a few rows by the
/// group index), its part before and after (the same with the new scores in place) told apart,
/// the difference added to its group, and each score made the newest of its key unless a newer
/// run holds it. Recomputing a group from all its scores on every save made a run of 20,000
/// items in one sub-task 2.3x the CPU per job (process_run bench); reading each item again
/// after the write was a fifth of the summaries' cost.
pub(super) fn save_with(
    tx: &rusqlite::Transaction<'_>,
    scores: &[super::ScoreRecord],
    write: impl FnOnce(&rusqlite::Transaction<'_>) -> Result<()>,
) -> Result<()> {
    // Each item's new scores, in the order they are written.
    let mut items: std::collections::BTreeMap<ItemKey<'_>, JobScores> = Default::default();
    for s in scores {
        items
            .entry((&s.run_id, &s.model, &s.task_id, &s.item_id))
            .or_default()
            .push((s.job_idx, s.score));
    }
    let before = item_scores(tx, items.keys().copied())?;
    write(tx)?;
    let mut groups: std::collections::BTreeMap<(&str, &str, &str), ItemPart> = Default::default();
    for (((run, model, task, _), new), rows) in items.iter().zip(before) {
        let b = ItemPart::of_scores(rows.iter().map(|r| r.1));
        // The item's scores after the write: each saved score replaces its job's row (the
        // last one saved wins, as the writes run in order) or joins the item.
        let mut after = rows;
        for &(job, score) in new {
            match after.iter_mut().find(|r| r.0 == job) {
                Some(r) => r.1 = score,
                None => after.push((job, score)),
            }
        }
        let a = ItemPart::of_scores(after.iter().map(|r| r.1));
        let g = groups.entry((run, model, task)).or_default();
        g.scored += a.scored - b.scored;
        g.unscored += a.unscored - b.unscored;
        g.sum += a.sum - b.sum;
        g.hallucinated += a.hallucinated - b.hallucinated;
        g.rows += a.rows - b.rows;
    }
    let mut add = tx.prepare_cached(
        "INSERT INTO run_summaries (run_id, model, task_id, scored, unscored, sum, hallucinated, rows)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)
         ON CONFLICT (run_id, model, task_id) DO UPDATE SET
           scored = scored + excluded.scored, unscored = unscored + excluded.unscored,
           sum = sum + excluded.sum, hallucinated = hallucinated + excluded.hallucinated,
           rows = rows + excluded.rows",
    )?;
    for ((run, model, task), d) in &groups {
        add.execute(rusqlite::params![
            run,
            model,
            task,
            d.scored,
            d.unscored,
            d.sum,
            d.hallucinated,
            d.rows
        ])?;
    }
    let mut newest = tx.prepare_cached(
        "INSERT INTO latest_scores (item_id, model, sample, run_id, job_idx, task_id, score)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)
         ON CONFLICT (item_id, model, sample) DO UPDATE SET run_id = excluded.run_id,
           job_idx = excluded.job_idx, task_id = excluded.task_id, score = excluded.score
         WHERE excluded.run_id >= latest_scores.run_id",
    )?;
    for s in scores {
        newest.execute(rusqlite::params![
            s.item_id, s.model, s.sample, s.run_id, s.job_idx, s.task_id, s.score
        ])?;
    }
    Ok(())
}

/// SQLite: a run removed: its summaries go, and every key it was newest for is recomputed from
/// the runs that stay. Called in the removal's transaction, after its scores are deleted.
pub(super) fn forget_run(tx: &rusqlite::Transaction<'_>, run: &str) -> Result<()> {
    tx.execute("DELETE FROM run_summaries WHERE run_id = ?1", [run])?;
    tx.execute("DELETE FROM mirror_pending WHERE run_id = ?1", [run])?;
    let keys: BTreeSet<(String, String, u32)> = {
        // A read of the whole table (no index on the run: migration 23), one row per key.
        let mut st = tx
            .prepare_cached("SELECT item_id, model, sample FROM latest_scores WHERE run_id = ?1")?;
        st.query_map([run], |r| {
            Ok((r.get("item_id")?, r.get("model")?, r.get("sample")?))
        })?
        .collect::<rusqlite::Result<_>>()?
    };
    refresh(
        tx,
        &Touched {
            groups: BTreeSet::new(),
            keys,
        },
    )
}

impl super::Store {
    /// The summaries of a run (every run's for `None`).
    pub fn run_summaries(&self, run: Option<&str>) -> Result<Vec<TaskSummary>> {
        let kept: Vec<TaskSummary> = self.records_where(run.map(|r| ("run_id", r)))?;
        match run {
            // A run with scores but no summary (its scores written by hand, not by prism):
            // made from its scores as it is read, the same rows a write would have kept.
            Some(r) if kept.is_empty() => self.records_from_sql(
                &summarize("run_id = ?1"),
                &[super::lane_tables::Val::Text(r.to_string())],
            ),
            _ => Ok(kept),
        }
    }

    /// A run's summaries as its scores make them now (what `run_summaries` must equal).
    pub fn recount_summaries(&self, run: &str) -> Result<Vec<TaskSummary>> {
        self.records_from_sql(
            &summarize("run_id = ?1"),
            &[super::lane_tables::Val::Text(run.to_string())],
        )
    }

    /// Makes a run's summaries again from its scores (`prism runs repair`: rows changed or
    /// deleted by hand); returns how many groups it holds.
    pub fn repair_summaries(&mut self, run: &str) -> Result<usize> {
        let tx = self.conn.transaction()?;
        tx.execute("DELETE FROM run_summaries WHERE run_id = ?1", [run])?;
        let n = tx.execute(
            &format!(
                "INSERT INTO {} ({}) {}",
                super::tables::RUN_SUMMARIES.name,
                super::tables::RUN_SUMMARIES.col_list(),
                summarize("run_id = ?1")
            ),
            [run],
        )?;
        tx.commit()?;
        Ok(n)
    }

    /// The newest run's score of every item, model and sample (what the TUI's tree shows).
    pub fn latest_scores(&self) -> Result<Vec<LatestScore>> {
        self.records_where(None)
    }
}

/// The same on PostgreSQL, in the write's transaction.
pub(crate) mod pg {
    use std::collections::BTreeSet;

    use postgres::Transaction;

    use super::Touched;

    type PgResult<T> = std::result::Result<T, postgres::Error>;

    /// A handful of statements whatever was touched (the groups and keys go as arrays): one
    /// round trip per group and per key made a copy or a worker's scores wait on the network.
    ///
    /// Several workers save scores of one group at once. A group's summary is made again from
    /// its scores, so two transactions must not make it side by side: each would miss the
    /// other's uncommitted scores, and both would insert the row (the loser's whole batch of
    /// scores rolled back on `run_summaries_pkey`). So each touched group is locked first
    /// (a transaction advisory lock, held to the commit, taken in one order so two never wait
    /// on each other); the summary is then made under the lock, from every committed score.
    /// The newest score of a key needs no lock: an upsert that keeps the newer run is right
    /// whatever commits in between.
    pub(crate) fn refresh(tx: &mut Transaction<'_>, t: &Touched) -> PgResult<()> {
        if !t.groups.is_empty() {
            lock(tx, t)?;
            let mut cols: [Vec<&str>; 3] = Default::default();
            for (run, model, task) in &t.groups {
                cols[0].push(run);
                cols[1].push(model);
                cols[2].push(task);
            }
            let g = "unnest($1::TEXT[], $2::TEXT[], $3::TEXT[]) AS g(r, m, t)";
            tx.execute(
                &format!(
                    "DELETE FROM run_summaries s USING {g}
                     WHERE s.run_id = g.r AND s.model = g.m AND s.task_id = g.t"
                ),
                &[&cols[0], &cols[1], &cols[2]],
            )?;
            tx.execute(
                &format!(
                    "INSERT INTO {} ({}) {}",
                    super::super::tables::RUN_SUMMARIES.name,
                    super::super::tables::RUN_SUMMARIES.col_list(),
                    super::summarize(&format!(
                        "(run_id, model, task_id) IN (SELECT r, m, t FROM {g})"
                    ))
                ),
                &[&cols[0], &cols[1], &cols[2]],
            )?;
        }
        if !t.keys.is_empty() {
            let (mut items, mut models, mut samples) = (vec![], vec![], vec![]);
            for (item, model, sample) in &t.keys {
                items.push(item.as_str());
                models.push(model.as_str());
                samples.push(i64::from(*sample));
            }
            let k = "unnest($1::TEXT[], $2::TEXT[], $3::BIGINT[]) AS k(i, m, s)";
            let latest = &super::super::tables::LATEST_SCORES;
            tx.execute(
                &format!(
                    "INSERT INTO {name} ({cols})
                     SELECT DISTINCT ON (item_id, model, sample)
                       item_id, model, sample, run_id, job_idx, task_id, score
                     FROM scores WHERE (item_id, model, sample) IN (SELECT i, m, s FROM {k})
                     ORDER BY item_id, model, sample, run_id DESC
                     ON CONFLICT (item_id, model, sample) DO UPDATE SET run_id = EXCLUDED.run_id,
                       job_idx = EXCLUDED.job_idx, task_id = EXCLUDED.task_id,
                       score = EXCLUDED.score
                     WHERE EXCLUDED.run_id >= {name}.run_id",
                    name = latest.name,
                    cols = latest.col_list()
                ),
                &[&items, &models, &samples],
            )?;
        }
        Ok(())
    }

    /// Takes the touched groups' locks (held to the commit; taken again by [`refresh`], which
    /// a lock already held lets through). A transaction that saves scores takes them before
    /// it writes any row: two saves of the same answers (two workers scoring one run) then
    /// wait for each other at the lock, holding nothing; took after the rows, each held a row
    /// the other waited for while waiting for the other's lock, and the server broke the
    /// deadlock by failing one (issue: scores lost between workers).
    pub(crate) fn lock(tx: &mut Transaction<'_>, t: &Touched) -> PgResult<()> {
        if t.groups.is_empty() {
            return Ok(());
        }
        tx.execute(
            "SELECT pg_advisory_xact_lock($1::INT, g) FROM unnest($2::INT[]) AS g",
            &[&GROUP_LOCKS, &group_locks(&t.groups)],
        )?;
        Ok(())
    }

    /// The advisory lock class of a run summary's group (any number: it only has to differ
    /// from the other users of advisory locks on the server; "ps" in ASCII).
    const GROUP_LOCKS: i32 = 0x7073;

    /// The locks of the touched groups: a stable hash of each (the same in every process and
    /// version: FNV-1a), sorted and distinct, so every transaction takes them in one order.
    fn group_locks(groups: &BTreeSet<(String, String, String)>) -> Vec<i32> {
        let mut locks: Vec<i32> = groups
            .iter()
            .map(|(r, m, t)| {
                let mut h: u32 = 0x811c_9dc5;
                for b in [r, m, t].iter().flat_map(|s| s.bytes().chain([0])) {
                    h = (h ^ u32::from(b)).wrapping_mul(0x0100_0193);
                }
                h as i32
            })
            .collect();
        locks.sort_unstable();
        locks.dedup();
        locks
    }

    /// Makes a run's summaries again from its scores (each group locked as a save locks it).
    pub(crate) fn repair(tx: &mut Transaction<'_>, run: &str) -> PgResult<usize> {
        let groups: BTreeSet<(String, String, String)> = tx
            .query(
                "SELECT DISTINCT run_id, model, task_id FROM scores WHERE run_id = $1
                 UNION SELECT run_id, model, task_id FROM run_summaries WHERE run_id = $1",
                &[&run],
            )?
            .iter()
            .map(|r| (r.get("run_id"), r.get("model"), r.get("task_id")))
            .collect();
        tx.execute(
            "SELECT pg_advisory_xact_lock($1::INT, g) FROM unnest($2::INT[]) AS g",
            &[&GROUP_LOCKS, &group_locks(&groups)],
        )?;
        tx.execute("DELETE FROM run_summaries WHERE run_id = $1", &[&run])?;
        let n = tx.execute(
            &format!(
                "INSERT INTO {} ({}) {}",
                super::super::tables::RUN_SUMMARIES.name,
                super::super::tables::RUN_SUMMARIES.col_list(),
                super::summarize("run_id = $1")
            ),
            &[&run],
        )?;
        Ok(n as usize)
    }

    /// A run removed (its scores already deleted in `tx`): its summaries go, and the keys it
    /// was newest for are recomputed from the runs that stay.
    pub(crate) fn forget_run(tx: &mut Transaction<'_>, run: &str) -> PgResult<()> {
        tx.execute("DELETE FROM run_summaries WHERE run_id = $1", &[&run])?;
        let keys = keys_where(tx, "latest_scores", run)?;
        // The run's newest scores go; the refresh puts the newest of the runs that stay.
        tx.execute("DELETE FROM latest_scores WHERE run_id = $1", &[&run])?;
        refresh(
            tx,
            &Touched {
                groups: BTreeSet::new(),
                keys,
            },
        )
    }

    fn keys_where(
        tx: &mut Transaction<'_>,
        table: &str,
        run: &str,
    ) -> PgResult<BTreeSet<(String, String, u32)>> {
        Ok(tx
            .query(
                &format!("SELECT item_id, model, sample FROM {table} WHERE run_id = $1"),
                &[&run],
            )?
            .iter()
            .filter_map(|r| {
                let sample: i64 = r.get("sample");
                Some((
                    r.get("item_id"),
                    r.get("model"),
                    u32::try_from(sample).ok()?,
                ))
            })
            .collect())
    }
}
