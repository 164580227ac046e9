//! The schema and its migrations. A table described in `lane_tables` needs no migration: a
//! store without it makes it from its description when it opens (on PostgreSQL too). Any other
//! change is a migration appended here (and in `pg.rs`); `PRAGMA user_version` records how many
//! ran. Every migration that is due runs in one `IMMEDIATE`
//! transaction, so two processes opening a new store at once do not race: the second waits for
//! the first (busy timeout) and then finds nothing left to do.

use rusqlite::{Connection, TransactionBehavior};

use super::error::{Result, StoreError};

/// Schema migrations, applied in order.
pub(super) const MIGRATIONS: &[&str] = &[
    // 1: runs, jobs, responses, cache.
    r#"
    CREATE TABLE runs (
        id TEXT PRIMARY KEY,
        created_at INTEGER NOT NULL,
        dataset TEXT NOT NULL,
        config TEXT NOT NULL,
        status TEXT NOT NULL
    );
    CREATE TABLE jobs (
        run_id TEXT NOT NULL,
        idx INTEGER NOT NULL,
        item_id TEXT NOT NULL,
        task_id TEXT NOT NULL,
        model TEXT NOT NULL,
        sample INTEGER NOT NULL,
        state TEXT NOT NULL DEFAULT 'pending',
        PRIMARY KEY (run_id, idx)
    ) WITHOUT ROWID;
    CREATE INDEX jobs_state ON jobs(run_id, state);
    CREATE TABLE responses (
        run_id TEXT NOT NULL,
        job_idx INTEGER NOT NULL,
        item_id TEXT NOT NULL,
        task_id TEXT NOT NULL,
        model TEXT NOT NULL,
        sample INTEGER NOT NULL,
        text TEXT,
        error TEXT,
        finish_reason TEXT,
        prompt_tokens INTEGER,
        completion_tokens INTEGER,
        latency_ms INTEGER,
        first_token_ms INTEGER,
        attempts INTEGER NOT NULL,
        params TEXT NOT NULL,
        request_hash TEXT NOT NULL,
        cached INTEGER NOT NULL DEFAULT 0,
        created_at INTEGER NOT NULL,
        PRIMARY KEY (run_id, job_idx)
    );
    CREATE INDEX responses_item ON responses(item_id, model);
    CREATE TABLE cache (
        key TEXT PRIMARY KEY,
        text TEXT NOT NULL,
        finish_reason TEXT,
        prompt_tokens INTEGER,
        completion_tokens INTEGER,
        latency_ms INTEGER,
        created_at INTEGER NOT NULL
    ) WITHOUT ROWID;
    "#,
    // 2: scores, derived from responses and replaced on re-scoring (responses are never touched).
    r#"
    CREATE TABLE scores (
        run_id TEXT NOT NULL,
        job_idx INTEGER NOT NULL,
        item_id TEXT NOT NULL,
        task_id TEXT NOT NULL,
        model TEXT NOT NULL,
        sample INTEGER NOT NULL,
        evaluator TEXT NOT NULL,
        score REAL,
        detail TEXT NOT NULL,
        judge TEXT,
        judge_reply TEXT,
        judge_attempts INTEGER NOT NULL DEFAULT 0,
        created_at INTEGER NOT NULL,
        PRIMARY KEY (run_id, job_idx)
    ) WITHOUT ROWID;
    CREATE INDEX scores_item ON scores(item_id, model);
    CREATE INDEX scores_task ON scores(run_id, model, task_id, score);
    "#,
    // 3: who is running a run (two `--resume` of one run must not send every job twice).
    r#"
    CREATE TABLE run_locks (
        run_id TEXT PRIMARY KEY,
        owner TEXT NOT NULL,
        host TEXT NOT NULL,
        pid INTEGER NOT NULL,
        heartbeat INTEGER NOT NULL
    ) WITHOUT ROWID;
    "#,
    // 4: contradiction detection (AutoHall): the answers under test (stored answers, or claims'
    // references with their classification), every sampled answer, every pair verdict.
    r#"
    CREATE TABLE detect_runs (
        id TEXT PRIMARY KEY,
        created_at INTEGER NOT NULL,
        kind TEXT NOT NULL,
        dataset TEXT NOT NULL,
        config TEXT NOT NULL,
        status TEXT NOT NULL
    );
    CREATE TABLE detect_targets (
        run_id TEXT NOT NULL REFERENCES detect_runs(id),
        idx INTEGER NOT NULL,
        item_id TEXT NOT NULL,
        task_id TEXT NOT NULL,
        model TEXT NOT NULL,
        temperature REAL,
        source_run TEXT,
        source_job INTEGER,
        prompt TEXT NOT NULL,
        question TEXT NOT NULL,
        params TEXT NOT NULL,
        answer TEXT,
        answer_error TEXT,
        refused INTEGER NOT NULL DEFAULT 0,
        label TEXT,
        class TEXT,
        class_reply TEXT,
        class_error TEXT,
        rounds INTEGER NOT NULL DEFAULT 1,
        PRIMARY KEY (run_id, idx)
    ) WITHOUT ROWID;
    CREATE INDEX detect_targets_source ON detect_targets(source_run, source_job);
    CREATE TABLE detect_samples (
        run_id TEXT NOT NULL,
        target INTEGER NOT NULL,
        round INTEGER NOT NULL,
        k INTEGER NOT NULL,
        variant INTEGER NOT NULL,
        text TEXT,
        error TEXT,
        attempts INTEGER NOT NULL,
        cached INTEGER NOT NULL,
        created_at INTEGER NOT NULL,
        PRIMARY KEY (run_id, target, round, k)
    ) WITHOUT ROWID;
    CREATE TABLE detect_pairs (
        run_id TEXT NOT NULL,
        target INTEGER NOT NULL,
        round INTEGER NOT NULL,
        k INTEGER NOT NULL,
        judge TEXT NOT NULL,
        verdict TEXT NOT NULL,
        explanation TEXT,
        quote_a TEXT,
        quote_b TEXT,
        reply TEXT,
        error TEXT,
        attempts INTEGER NOT NULL,
        created_at INTEGER NOT NULL,
        PRIMARY KEY (run_id, target, round, k)
    ) WITHOUT ROWID;
    "#,
    // 5: self-detection (Kadotani et al.): the triples' generated true and false sentences, and
    // each detector's verdict on each, directly and with chain-of-thought.
    r#"
    CREATE TABLE selfcheck_runs (
        id TEXT PRIMARY KEY,
        created_at INTEGER NOT NULL,
        dataset TEXT NOT NULL,
        config TEXT NOT NULL,
        status TEXT NOT NULL
    );
    CREATE TABLE selfcheck_items (
        run_id TEXT NOT NULL REFERENCES selfcheck_runs(id),
        idx INTEGER NOT NULL,
        triple_id TEXT NOT NULL,
        subject TEXT NOT NULL,
        relation TEXT NOT NULL,
        object TEXT NOT NULL,
        source TEXT,
        popularity REAL,
        generator TEXT NOT NULL,
        params TEXT NOT NULL,
        shots TEXT NOT NULL,
        true_sentence TEXT,
        true_attempts INTEGER NOT NULL DEFAULT 0,
        false_sentence TEXT,
        false_attempts INTEGER NOT NULL DEFAULT 0,
        set_aside TEXT,
        error TEXT,
        decoy TEXT,
        PRIMARY KEY (run_id, idx)
    ) WITHOUT ROWID;
    CREATE TABLE selfcheck_verdicts (
        run_id TEXT NOT NULL,
        item INTEGER NOT NULL,
        sentence TEXT NOT NULL,
        detector TEXT NOT NULL,
        mode TEXT NOT NULL,
        verdict TEXT NOT NULL,
        reply TEXT,
        error TEXT,
        attempts INTEGER NOT NULL,
        created_at INTEGER NOT NULL,
        PRIMARY KEY (run_id, item, sentence, detector, mode)
    ) WITHOUT ROWID;
    "#,
    // 6: a run's answer is its own cache entry (the key on the row, indexed) instead of a
    // second copy of its text in `cache`: half the bytes written per answer.
    r#"
    ALTER TABLE responses ADD COLUMN cache_key TEXT;
    CREATE INDEX responses_cache_key ON responses(cache_key) WHERE cache_key IS NOT NULL;
    "#,
    // 7: human review. Decisions are only ever inserted (the uid, unique across machines, makes
    // an import idempotent); a draft is the one row per item and reviewer that typing replaces.
    r#"
    CREATE TABLE review_decisions (
        uid TEXT PRIMARY KEY,
        item_id TEXT NOT NULL,
        task_id TEXT NOT NULL,
        reviewer TEXT NOT NULL,
        round INTEGER NOT NULL,
        clarity INTEGER,
        relevance INTEGER,
        coherence INTEGER,
        decision TEXT NOT NULL,
        rationale TEXT NOT NULL,
        edited_question TEXT,
        edited_answer TEXT,
        created_at INTEGER NOT NULL
    );
    CREATE INDEX review_decisions_item ON review_decisions(item_id, round);
    CREATE TABLE review_drafts (
        item_id TEXT NOT NULL,
        reviewer TEXT NOT NULL,
        round INTEGER NOT NULL,
        clarity INTEGER,
        relevance INTEGER,
        coherence INTEGER,
        decision TEXT,
        rationale TEXT NOT NULL,
        edited_question TEXT,
        updated_at INTEGER NOT NULL,
        PRIMARY KEY (item_id, reviewer)
    ) WITHOUT ROWID;
    "#,
    // 8: the quality agent's scores, one row per item and model (a new run replaces it).
    r#"
    CREATE TABLE quality_scores (
        item_id TEXT NOT NULL,
        model TEXT NOT NULL,
        task_id TEXT NOT NULL,
        factuality INTEGER,
        discriminability INTEGER,
        clarity INTEGER,
        reply TEXT NOT NULL,
        error TEXT,
        attempts INTEGER NOT NULL,
        created_at INTEGER NOT NULL,
        PRIMARY KEY (item_id, model)
    ) WITHOUT ROWID;
    "#,
    // 9: no index on a job's state. Every saved answer moved the job's entry in it (a delete
    // and an insert per job), and the one query on state (what a resume has left) reads the
    // run's jobs in order by the primary key anyway.
    r#"
    DROP INDEX IF EXISTS jobs_state;
    "#,
    // 10: the rule's own verdict where a rule had one and the judge still decided (fact_judge:
    // answer and reference commit to opposite yes/no). Review triage shows the two disagreeing.
    r#"
    ALTER TABLE scores ADD COLUMN rule_score REAL;
    "#,
    // 11: runs a user can find again: a name and tags (space-separated words).
    r#"
    ALTER TABLE runs ADD COLUMN name TEXT;
    ALTER TABLE runs ADD COLUMN tags TEXT NOT NULL DEFAULT '';
    "#,
    // 12: a pair is checked once per wording of the pair prompt (AutoHall's prompt-sensitivity
    // study): the wording joins the key. SQLite cannot change a key in place, so the table is
    // made again and every stored verdict copied as wording 0.
    r#"
    CREATE TABLE detect_pairs_w (
        run_id TEXT NOT NULL,
        target INTEGER NOT NULL,
        round INTEGER NOT NULL,
        k INTEGER NOT NULL,
        wording INTEGER NOT NULL DEFAULT 0,
        judge TEXT NOT NULL,
        verdict TEXT NOT NULL,
        explanation TEXT,
        quote_a TEXT,
        quote_b TEXT,
        reply TEXT,
        error TEXT,
        attempts INTEGER NOT NULL,
        created_at INTEGER NOT NULL,
        PRIMARY KEY (run_id, target, round, k, wording)
    ) WITHOUT ROWID;
    INSERT INTO detect_pairs_w (run_id, target, round, k, wording, judge, verdict, explanation,
        quote_a, quote_b, reply, error, attempts, created_at)
        SELECT run_id, target, round, k, 0, judge, verdict, explanation, quote_a, quote_b, reply,
        error, attempts, created_at FROM detect_pairs;
    DROP TABLE detect_pairs;
    ALTER TABLE detect_pairs_w RENAME TO detect_pairs;
    "#,
    // 13: claims' topics as a model assigned them from a list (AutoHall's topic analysis), kept
    // across runs: keyed by the claim's text, the model and the list offered.
    r#"
    CREATE TABLE claim_topics (
        claim TEXT NOT NULL,
        model TEXT NOT NULL,
        vocabulary TEXT NOT NULL,
        topic TEXT,
        reply TEXT,
        error TEXT,
        attempts INTEGER NOT NULL,
        created_at INTEGER NOT NULL,
        PRIMARY KEY (claim, model, vocabulary)
    ) WITHOUT ROWID;
    "#,
    // 14: token log-probabilities beside an answer (encoded, `store::logprobs`), when asked for;
    // the cache keeps them too, so an answer from the cache has them as the first had.
    r#"
    ALTER TABLE responses ADD COLUMN logprobs BLOB;
    ALTER TABLE cache ADD COLUMN logprobs BLOB;
    "#,
    // 15: entailment verdicts between answers to one question, for semantic entropy: kept
    // across runs, keyed by the judge, the question and the ordered pair of answers.
    r#"
    CREATE TABLE entailments (
        judge TEXT NOT NULL,
        question TEXT NOT NULL,
        premise TEXT NOT NULL,
        hypothesis TEXT NOT NULL,
        relation TEXT,
        reply TEXT,
        error TEXT,
        attempts INTEGER NOT NULL,
        created_at INTEGER NOT NULL,
        PRIMARY KEY (judge, question, premise, hypothesis)
    ) WITHOUT ROWID;
    CREATE INDEX entailments_by_question ON entailments (question);
    "#,
    // 16: self-detection on stored answers: a detector's "does this answer contain false
    // information?" per answer of a run, detector and mode (direct, chain-of-thought).
    r#"
    CREATE TABLE answer_checks (
        run_id TEXT NOT NULL,
        job_idx INTEGER NOT NULL,
        detector TEXT NOT NULL,
        mode TEXT NOT NULL,
        answer TEXT NOT NULL,
        reply TEXT,
        error TEXT,
        attempts INTEGER NOT NULL,
        created_at INTEGER NOT NULL,
        PRIMARY KEY (run_id, job_idx, detector, mode)
    ) WITHOUT ROWID;
    "#,
    // 17: how far this store has mirrored a shared store (`store::mirror`): the last change
    // number pulled of each kind, so the next session goes on from there.
    r#"
    CREATE TABLE mirror_marks (
        store TEXT NOT NULL,
        what TEXT NOT NULL,
        seen INTEGER NOT NULL,
        PRIMARY KEY (store, what)
    ) WITHOUT ROWID;
    "#,
    // 18: which runs are shared with which shared store (pulled from it or pushed to it), so
    // rows pulled from a shared store change only those (`store::links`). A store that had
    // mirrored one before trusts, once, the runs it holds in common with it (the legacy mark).
    r#"
    CREATE TABLE shared_links (
        store TEXT NOT NULL,
        kind TEXT NOT NULL,
        run_id TEXT NOT NULL,
        PRIMARY KEY (store, kind, run_id)
    ) WITHOUT ROWID;
    INSERT INTO shared_links (store, kind, run_id)
        SELECT DISTINCT store, '*legacy*', '' FROM mirror_marks;
    "#,
    // 19: summaries kept as scores land (`store::summaries`): per run x model x sub-task what
    // its scores come to, and per item x model x sample the newest run's score; made here from
    // the scores a store already has. Runs are listed newest first, a page at a time, each
    // with its job counts: the jobs not done are indexed (a finished run has no entry, and a
    // saved answer only takes its job's entry out), the rest is the run's job count.
    r#"
    CREATE INDEX runs_created ON runs(created_at, id);
    CREATE INDEX jobs_open ON jobs(run_id, state) WHERE state != 'done';
    CREATE INDEX scores_group ON scores(run_id, model, task_id, item_id);
    CREATE INDEX scores_key ON scores(item_id, model, sample, run_id);
    CREATE TABLE run_summaries (
        run_id TEXT NOT NULL,
        model TEXT NOT NULL,
        task_id TEXT NOT NULL,
        scored INTEGER NOT NULL,
        unscored INTEGER NOT NULL,
        sum REAL NOT NULL,
        hallucinated INTEGER NOT NULL,
        rows INTEGER NOT NULL,
        PRIMARY KEY (run_id, model, task_id)
    ) WITHOUT ROWID;
    CREATE TABLE latest_scores (
        item_id TEXT NOT NULL,
        model TEXT NOT NULL,
        sample INTEGER NOT NULL,
        run_id TEXT NOT NULL,
        job_idx INTEGER NOT NULL,
        task_id TEXT NOT NULL,
        score REAL,
        PRIMARY KEY (item_id, model, sample)
    ) WITHOUT ROWID;
    CREATE INDEX latest_scores_run ON latest_scores(run_id);
    INSERT INTO run_summaries
    SELECT run_id, model, task_id,
      SUM(CASE WHEN u = 0 AND n > 0 THEN 1 ELSE 0 END),
      SUM(CASE WHEN u > 0 THEN 1 ELSE 0 END),
      SUM(CASE WHEN u = 0 AND n > 0 THEN s / n ELSE 0 END),
      SUM(CASE WHEN u = 0 AND n > 0 AND s / n < 0.5 THEN 1 ELSE 0 END),
      SUM(n + u)
    FROM (SELECT run_id, model, task_id, item_id, SUM(v) AS s, COUNT(v) AS n,
            COUNT(*) - COUNT(v) AS u
          FROM (SELECT run_id, model, task_id, item_id,
                  CASE WHEN score >= 0 AND score <= 1 THEN score END AS v FROM scores) x
          GROUP BY run_id, model, task_id, item_id) y
    GROUP BY run_id, model, task_id;
    INSERT INTO latest_scores
    SELECT item_id, model, sample, run_id, job_idx, task_id, score FROM scores s
    WHERE run_id = (SELECT MAX(run_id) FROM scores t
                    WHERE t.item_id = s.item_id AND t.model = s.model AND t.sample = s.sample);
    "#,
    // 20: the judge on trial (`store::judging`): every judge's verdict on an answer, per judge
    // and repeat, and people's labels on answers (never replaced: one row per labelling).
    r#"
    CREATE TABLE judge_verdicts (
        run_id TEXT NOT NULL,
        job_idx INTEGER NOT NULL,
        judge TEXT NOT NULL,
        repeat INTEGER NOT NULL,
        item_id TEXT,
        task_id TEXT,
        model TEXT,
        evaluator TEXT,
        score REAL,
        detail TEXT,
        reply TEXT,
        attempts INTEGER,
        fallback INTEGER,
        created_at INTEGER,
        PRIMARY KEY (run_id, job_idx, judge, repeat)
    ) WITHOUT ROWID;
    CREATE TABLE answer_labels (
        uid TEXT NOT NULL PRIMARY KEY,
        run_id TEXT,
        job_idx INTEGER,
        item_id TEXT,
        model TEXT,
        reviewer TEXT,
        label TEXT,
        note TEXT,
        created_at INTEGER
    );
    CREATE INDEX answer_labels_run ON answer_labels(run_id, job_idx);
    "#,
    // 21: indexes no query needs any more, each one more B-tree written for every answer or
    // score a run saves (issue 47: `prism run`'s CPU per job): `jobs_state` (the jobs not done
    // are in `jobs_open` since 19, and nothing else reads jobs by state), `scores_item` (a
    // prefix of `scores_key`), `scores_task` (a sub-task's worst answer is found through
    // `scores_group`, among the few hundred scores of the group).
    r#"
    DROP INDEX IF EXISTS jobs_state;
    DROP INDEX IF EXISTS scores_item;
    DROP INDEX IF EXISTS scores_task;
    "#,
    // 22: a shared store's runs that this machine's mirror holds only in part (issue 47, a new
    // machine catches up in bulk): the run, its summaries and its job counts come first, as
    // the shared store has them, and its jobs with their answers and scores follow a page at a
    // time from `next_job`. While a run is here its summaries and counts are the shared
    // store's (nothing recomputes them from the scores pulled so far); the last page recomputes
    // them from the scores and takes the row away. A session stopped half-way goes on from
    // `next_job`.
    r#"
    CREATE TABLE mirror_pending (
        run_id TEXT PRIMARY KEY,
        next_job INTEGER NOT NULL DEFAULT 0,
        done INTEGER NOT NULL DEFAULT 0,
        failed INTEGER NOT NULL DEFAULT 0,
        pending INTEGER NOT NULL DEFAULT 0,
        unknown INTEGER NOT NULL DEFAULT 0
    );
    "#,
    // 23: `latest_scores_run` was one more B-tree written with every score a run saves (issue
    // 47: `prism run`'s CPU per job), read only when a run is removed, to find the keys it was
    // newest for. Removal now reads the whole table instead: one row per item x model x
    // sample, whatever the number of runs (77,280 rows for PRISM's 9,660 items and 8 models,
    // tens of milliseconds), and removals are rare. PostgreSQL keeps its index: its writes go
    // in bulk (`store::pg`).
    r#"
    DROP INDEX IF EXISTS latest_scores_run;
    "#,
];

fn version(conn: &Connection) -> Result<usize> {
    Ok(
        conn.pragma_query_value(None, "user_version", |r| r.get::<_, i64>("user_version"))?
            as usize,
    )
}

/// The described tables (`lane_tables`) this store lacks. A table added after migration 18 has
/// no migration: it is made from its description when a store without it opens.
fn described_missing(conn: &Connection) -> Result<Vec<&'static super::lane_tables::Table>> {
    let mut st = conn.prepare("SELECT name FROM sqlite_master WHERE type = 'table'")?;
    let have: std::collections::HashSet<String> = st
        .query_map([], |r| r.get::<_, String>("name"))?
        .collect::<rusqlite::Result<_>>()?;
    Ok(super::lane_tables::all()
        .into_iter()
        .filter(|t| !have.contains(t.name))
        .collect())
}

/// Brings the schema up to date: the migrations, then the described tables it lacks.
pub(super) fn migrate(conn: &mut Connection) -> Result<()> {
    // A quick look first: an up-to-date store takes no write lock at all.
    if version(conn)? == MIGRATIONS.len() && described_missing(conn)?.is_empty() {
        return Ok(());
    }
    let tx = conn.transaction_with_behavior(TransactionBehavior::Immediate)?;
    let found = version(&tx)?;
    if found > MIGRATIONS.len() {
        return Err(StoreError::NewerSchema {
            found,
            known: MIGRATIONS.len(),
        });
    }
    for m in MIGRATIONS.iter().skip(found) {
        tx.execute_batch(m)?;
    }
    for t in described_missing(&tx)? {
        tx.execute_batch(&t.create_sql(false))?;
    }
    tx.pragma_update(None, "user_version", MIGRATIONS.len() as i64)?;
    tx.commit()?;
    Ok(())
}

pub(super) fn schema_version(conn: &Connection) -> i64 {
    conn.pragma_query_value(None, "user_version", |r| r.get("user_version"))
        .unwrap_or(0)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::Store;

    /// A table described in `lane_tables` but made by no migration (as a new lane's is) is made
    /// from its description when a store without it opens, and holds rows after.
    #[test]
    fn a_described_table_a_store_lacks_is_made_when_it_opens() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("p.db");
        drop(Store::open(&path).unwrap());
        {
            let c = Connection::open(&path).unwrap();
            c.execute_batch("DROP TABLE answer_labels").unwrap();
            assert_eq!(described_missing(&c).unwrap().len(), 1);
        }
        let mut s = Store::open(&path).unwrap();
        assert!(described_missing(&s.conn).unwrap().is_empty());
        assert_eq!(schema_version(&s.conn), MIGRATIONS.len() as i64);
        let label = crate::store::AnswerLabel {
            uid: "u1".into(),
            run_id: "r".into(),
            job_idx: 0,
            item_id: "KE-1".into(),
            model: "m".into(),
            reviewer: "ann".into(),
            label: crate::store::Label::Correct,
            note: String::new(),
            created_at: 1,
        };
        s.add_labels(std::slice::from_ref(&label)).unwrap();
        assert_eq!(s.answer_labels(None).unwrap(), vec![label]);
    }

    /// A store written by the schema before this one (17 migrations: every table but the
    /// shared links) opens with everything in it readable through today's descriptions, and
    /// the runs it had mirrored keep taking rows from their shared store (the legacy mark).
    #[test]
    fn a_store_of_the_previous_schema_opens_with_everything_readable() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("old.db");
        {
            let c = Connection::open(&path).unwrap();
            for m in &MIGRATIONS[..17] {
                c.execute_batch(m).unwrap();
            }
            c.pragma_update(None, "user_version", 17).unwrap();
            c.execute_batch(
                r#"
                INSERT INTO runs (id, created_at, dataset, config, status, name, tags)
                    VALUES ('r-old', 5, 'd.jsonl', '{"models":[],"samples":1}', 'finished', 'old', 'a b');
                INSERT INTO jobs (run_id, idx, item_id, task_id, model, sample, state)
                    VALUES ('r-old', 0, 'KE-1', 'KE-FD-Myths', 'm', 0, 'done');
                INSERT INTO responses (run_id, job_idx, item_id, task_id, model, sample, text,
                    attempts, params, request_hash, cached, created_at, cache_key)
                    VALUES ('r-old', 0, 'KE-1', 'KE-FD-Myths', 'm', 0, 'an answer', 1, '{}', 'h', 0, 6, 'k1');
                INSERT INTO scores (run_id, job_idx, item_id, task_id, model, sample, evaluator,
                    score, detail, judge_attempts, created_at)
                    VALUES ('r-old', 0, 'KE-1', 'KE-FD-Myths', 'm', 0, 'rule', 1.0, 'ok', 0, 7);
                INSERT INTO cache (key, text, created_at) VALUES ('j1', 'a judge said', 8);
                INSERT INTO review_decisions (uid, item_id, task_id, reviewer, round, clarity,
                    relevance, coherence, decision, rationale, created_at)
                    VALUES ('u1', 'KE-1', 'KE-FD-Myths', 'ann', 1, 7, 8, 9, 'retain', 'fine', 9);
                INSERT INTO quality_scores (item_id, model, task_id, factuality, discriminability,
                    clarity, reply, attempts, created_at)
                    VALUES ('KE-1', 'q', 'KE-FD-Myths', 9, 8, 7, 'F 9', 1, 10);
                INSERT INTO mirror_marks (store, what, seen) VALUES ('postgres://team', 'responses', 42);
                "#,
            )
            .unwrap();
        }
        let s = Store::open(&path).unwrap();
        assert_eq!(schema_version(&s.conn), MIGRATIONS.len() as i64);
        let run = s.run("r-old").unwrap().unwrap();
        assert_eq!((run.created_at, run.config.samples), (5, 1));
        assert_eq!(
            s.run_labels("r-old").unwrap(),
            (Some("old".into()), vec!["a".into(), "b".into()])
        );
        let b = s.run_bundle("r-old").unwrap().unwrap();
        assert_eq!(b.jobs.len(), 1);
        assert_eq!(b.responses[0].text.as_deref(), Some("an answer"));
        assert_eq!(b.responses[0].cache_key.as_deref(), Some("k1"));
        assert_eq!(b.scores[0].score, Some(1.0));
        assert_eq!(s.cache_entries().unwrap()[0].1.text, "a judge said");
        let d = &s.decisions().unwrap()[0];
        assert_eq!(
            (d.clarity, d.relevance, d.coherence),
            (Some(7), Some(8), Some(9))
        );
        assert_eq!(s.quality(None).unwrap()[0].scores, Some([9, 8, 7]));
        let legacy: i64 = s
            .conn
            .query_row(
                "SELECT count(*) FROM shared_links WHERE store = 'postgres://team' AND kind = '*legacy*'",
                [],
                |r| r.get(0),
            )
            .unwrap();
        assert_eq!(legacy, 1, "runs mirrored before keep their shared store");
    }
}
