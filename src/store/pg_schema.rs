//! The shared store's schema: PostgreSQL's migrations, in order, and the described tables
//! (`lane_tables`) made from their descriptions when the database lacks them.

use postgres::Client;

/// Schema migrations, applied in order under an advisory lock (two processes starting at once
/// do not race); `prism_schema` records how many ran.
const MIGRATIONS: &[&str] = &[
    // 1: review decisions and drafts, the quality agent's scores (SQLite migrations 7 and 8).
    r#"
    CREATE TABLE review_decisions (
        seq BIGSERIAL,
        uid TEXT PRIMARY KEY,
        item_id TEXT NOT NULL,
        task_id TEXT NOT NULL,
        reviewer TEXT NOT NULL,
        round INTEGER NOT NULL,
        clarity SMALLINT,
        relevance SMALLINT,
        coherence SMALLINT,
        decision TEXT NOT NULL,
        rationale TEXT NOT NULL,
        edited_question TEXT,
        edited_answer TEXT,
        created_at BIGINT NOT NULL
    );
    CREATE INDEX review_decisions_item ON review_decisions(item_id, round);
    CREATE INDEX review_decisions_seq ON review_decisions(seq);
    CREATE TABLE review_drafts (
        item_id TEXT NOT NULL,
        reviewer TEXT NOT NULL,
        round INTEGER NOT NULL,
        clarity SMALLINT,
        relevance SMALLINT,
        coherence SMALLINT,
        decision TEXT,
        rationale TEXT NOT NULL,
        edited_question TEXT,
        updated_at BIGINT NOT NULL,
        PRIMARY KEY (item_id, reviewer)
    );
    CREATE TABLE quality_scores (
        item_id TEXT NOT NULL,
        model TEXT NOT NULL,
        task_id TEXT NOT NULL,
        factuality SMALLINT,
        discriminability SMALLINT,
        clarity SMALLINT,
        reply TEXT NOT NULL,
        error TEXT,
        attempts INTEGER NOT NULL,
        created_at BIGINT NOT NULL,
        PRIMARY KEY (item_id, model)
    );
    "#,
    // 2: runs shared by many machines (SQLite migrations 1, 2, 6, 10, 11, 14): runs, their
    // jobs, every answer, scores and the cache. A job also carries its lease (`worker`, until
    // `leased_until`) while pending and the worker that answered it once done; the answer's key
    // (run, job) is unique, so two workers that raced on an expired lease store it once.
    // `run_workers` records who joined a run and what each stored or dropped. Answers and
    // scores carry a change number (`seq`, new on every insert or replacement), so a reader
    // (the TUI's mirror) pulls only what changed; saves notify `prism_runs`.
    r#"
    CREATE SEQUENCE prism_changes;
    CREATE TABLE runs (
        id TEXT PRIMARY KEY,
        created_at BIGINT NOT NULL,
        dataset TEXT NOT NULL,
        config TEXT NOT NULL,
        status TEXT NOT NULL,
        name TEXT,
        tags TEXT NOT NULL DEFAULT ''
    );
    CREATE TABLE jobs (
        run_id TEXT NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
        idx BIGINT NOT NULL,
        item_id TEXT NOT NULL,
        task_id TEXT NOT NULL,
        model TEXT NOT NULL,
        sample BIGINT NOT NULL,
        state TEXT NOT NULL DEFAULT 'pending',
        worker TEXT,
        leased_until TIMESTAMPTZ,
        PRIMARY KEY (run_id, idx)
    );
    CREATE INDEX jobs_todo ON jobs(run_id, model, idx) WHERE state = 'pending';
    CREATE TABLE responses (
        run_id TEXT NOT NULL,
        job_idx BIGINT NOT NULL,
        item_id TEXT NOT NULL,
        task_id TEXT NOT NULL,
        model TEXT NOT NULL,
        sample BIGINT NOT NULL,
        text TEXT,
        error TEXT,
        finish_reason TEXT,
        prompt_tokens BIGINT,
        completion_tokens BIGINT,
        latency_ms BIGINT,
        first_token_ms BIGINT,
        attempts BIGINT NOT NULL,
        params TEXT NOT NULL,
        request_hash TEXT NOT NULL,
        cached BOOLEAN NOT NULL DEFAULT FALSE,
        created_at BIGINT NOT NULL,
        cache_key TEXT,
        logprobs BYTEA,
        seq BIGINT NOT NULL DEFAULT nextval('prism_changes'),
        PRIMARY KEY (run_id, job_idx)
    );
    CREATE INDEX responses_seq ON responses(seq);
    CREATE INDEX responses_item ON responses(item_id, model);
    CREATE INDEX responses_cache_key ON responses(cache_key) WHERE cache_key IS NOT NULL;
    CREATE TABLE scores (
        run_id TEXT NOT NULL,
        job_idx BIGINT NOT NULL,
        item_id TEXT NOT NULL,
        task_id TEXT NOT NULL,
        model TEXT NOT NULL,
        sample BIGINT NOT NULL,
        evaluator TEXT NOT NULL,
        score DOUBLE PRECISION,
        detail TEXT NOT NULL,
        judge TEXT,
        judge_reply TEXT,
        judge_attempts BIGINT NOT NULL DEFAULT 0,
        created_at BIGINT NOT NULL,
        rule_score DOUBLE PRECISION,
        seq BIGINT NOT NULL DEFAULT nextval('prism_changes'),
        PRIMARY KEY (run_id, job_idx)
    );
    CREATE INDEX scores_seq ON scores(seq);
    CREATE INDEX scores_item ON scores(item_id, model);
    CREATE TABLE cache (
        key TEXT PRIMARY KEY,
        text TEXT NOT NULL,
        finish_reason TEXT,
        prompt_tokens BIGINT,
        completion_tokens BIGINT,
        latency_ms BIGINT,
        created_at BIGINT NOT NULL,
        logprobs BYTEA
    );
    CREATE TABLE run_workers (
        run_id TEXT NOT NULL,
        worker TEXT NOT NULL,
        host TEXT NOT NULL,
        pid BIGINT NOT NULL,
        joined_at BIGINT NOT NULL,
        heartbeat TIMESTAMPTZ NOT NULL DEFAULT now(),
        stored BIGINT NOT NULL DEFAULT 0,
        dropped BIGINT NOT NULL DEFAULT 0,
        retaken BIGINT NOT NULL DEFAULT 0,
        PRIMARY KEY (run_id, worker)
    );
    "#,
    // 3: the other lanes' tables (`store::lane_tables`), as SQLite's migrations 4, 5, 12, 13,
    // 15 and 16 left them, each row with a change number as answers have (for the mirror);
    // and who works on a lane's run: one process at a time holds it, as SQLite's `run_locks`
    // do, with its heartbeat kept by the database's clock.
    r#"
    CREATE TABLE detect_runs (
        id TEXT PRIMARY KEY,
        created_at BIGINT NOT NULL,
        kind TEXT NOT NULL,
        dataset TEXT NOT NULL,
        config TEXT NOT NULL,
        status TEXT NOT NULL,
        seq BIGINT NOT NULL DEFAULT nextval('prism_changes')
    );
    CREATE TABLE detect_targets (
        run_id TEXT NOT NULL REFERENCES detect_runs(id),
        idx BIGINT NOT NULL,
        item_id TEXT NOT NULL,
        task_id TEXT NOT NULL,
        model TEXT NOT NULL,
        temperature DOUBLE PRECISION,
        source_run TEXT,
        source_job BIGINT,
        prompt TEXT NOT NULL,
        question TEXT NOT NULL,
        params TEXT NOT NULL,
        answer TEXT,
        answer_error TEXT,
        refused BIGINT NOT NULL DEFAULT 0,
        label TEXT,
        class TEXT,
        class_reply TEXT,
        class_error TEXT,
        rounds BIGINT NOT NULL DEFAULT 1,
        seq BIGINT NOT NULL DEFAULT nextval('prism_changes'),
        PRIMARY KEY (run_id, idx)
    );
    CREATE INDEX detect_targets_source ON detect_targets(source_run, source_job);
    CREATE TABLE detect_samples (
        run_id TEXT NOT NULL,
        target BIGINT NOT NULL,
        round BIGINT NOT NULL,
        k BIGINT NOT NULL,
        variant BIGINT NOT NULL,
        text TEXT,
        error TEXT,
        attempts BIGINT NOT NULL,
        cached BIGINT NOT NULL,
        created_at BIGINT NOT NULL,
        seq BIGINT NOT NULL DEFAULT nextval('prism_changes'),
        PRIMARY KEY (run_id, target, round, k)
    );
    CREATE TABLE detect_pairs (
        run_id TEXT NOT NULL,
        target BIGINT NOT NULL,
        round BIGINT NOT NULL,
        k BIGINT NOT NULL,
        wording BIGINT NOT NULL DEFAULT 0,
        judge TEXT NOT NULL,
        verdict TEXT NOT NULL,
        explanation TEXT,
        quote_a TEXT,
        quote_b TEXT,
        reply TEXT,
        error TEXT,
        attempts BIGINT NOT NULL,
        created_at BIGINT NOT NULL,
        seq BIGINT NOT NULL DEFAULT nextval('prism_changes'),
        PRIMARY KEY (run_id, target, round, k, wording)
    );
    CREATE TABLE selfcheck_runs (
        id TEXT PRIMARY KEY,
        created_at BIGINT NOT NULL,
        dataset TEXT NOT NULL,
        config TEXT NOT NULL,
        status TEXT NOT NULL,
        seq BIGINT NOT NULL DEFAULT nextval('prism_changes')
    );
    CREATE TABLE selfcheck_items (
        run_id TEXT NOT NULL REFERENCES selfcheck_runs(id),
        idx BIGINT NOT NULL,
        triple_id TEXT NOT NULL,
        subject TEXT NOT NULL,
        relation TEXT NOT NULL,
        object TEXT NOT NULL,
        source TEXT,
        popularity DOUBLE PRECISION,
        generator TEXT NOT NULL,
        params TEXT NOT NULL,
        shots TEXT NOT NULL,
        true_sentence TEXT,
        true_attempts BIGINT NOT NULL DEFAULT 0,
        false_sentence TEXT,
        false_attempts BIGINT NOT NULL DEFAULT 0,
        set_aside TEXT,
        error TEXT,
        decoy TEXT,
        seq BIGINT NOT NULL DEFAULT nextval('prism_changes'),
        PRIMARY KEY (run_id, idx)
    );
    CREATE TABLE selfcheck_verdicts (
        run_id TEXT NOT NULL,
        item BIGINT NOT NULL,
        sentence TEXT NOT NULL,
        detector TEXT NOT NULL,
        mode TEXT NOT NULL,
        verdict TEXT NOT NULL,
        reply TEXT,
        error TEXT,
        attempts BIGINT NOT NULL,
        created_at BIGINT NOT NULL,
        seq BIGINT NOT NULL DEFAULT nextval('prism_changes'),
        PRIMARY KEY (run_id, item, sentence, detector, mode)
    );
    CREATE TABLE claim_topics (
        claim TEXT NOT NULL,
        model TEXT NOT NULL,
        vocabulary TEXT NOT NULL,
        topic TEXT,
        reply TEXT,
        error TEXT,
        attempts BIGINT NOT NULL,
        created_at BIGINT NOT NULL,
        seq BIGINT NOT NULL DEFAULT nextval('prism_changes'),
        PRIMARY KEY (claim, model, vocabulary)
    );
    CREATE TABLE entailments (
        judge TEXT NOT NULL,
        question TEXT NOT NULL,
        premise TEXT NOT NULL,
        hypothesis TEXT NOT NULL,
        relation TEXT,
        reply TEXT,
        error TEXT,
        attempts BIGINT NOT NULL,
        created_at BIGINT NOT NULL,
        seq BIGINT NOT NULL DEFAULT nextval('prism_changes'),
        PRIMARY KEY (judge, question, premise, hypothesis)
    );
    CREATE INDEX entailments_by_question ON entailments (question);
    CREATE TABLE answer_checks (
        run_id TEXT NOT NULL,
        job_idx BIGINT NOT NULL,
        detector TEXT NOT NULL,
        mode TEXT NOT NULL,
        answer TEXT NOT NULL,
        reply TEXT,
        error TEXT,
        attempts BIGINT NOT NULL,
        created_at BIGINT NOT NULL,
        seq BIGINT NOT NULL DEFAULT nextval('prism_changes'),
        PRIMARY KEY (run_id, job_idx, detector, mode)
    );
    CREATE INDEX detect_runs_seq ON detect_runs(seq);
    CREATE INDEX detect_targets_seq ON detect_targets(seq);
    CREATE INDEX detect_samples_seq ON detect_samples(seq);
    CREATE INDEX detect_pairs_seq ON detect_pairs(seq);
    CREATE INDEX selfcheck_runs_seq ON selfcheck_runs(seq);
    CREATE INDEX selfcheck_items_seq ON selfcheck_items(seq);
    CREATE INDEX selfcheck_verdicts_seq ON selfcheck_verdicts(seq);
    CREATE INDEX claim_topics_seq ON claim_topics(seq);
    CREATE INDEX entailments_seq ON entailments(seq);
    CREATE INDEX answer_checks_seq ON answer_checks(seq);
    CREATE TABLE lane_locks (
        run_id TEXT PRIMARY KEY,
        owner TEXT NOT NULL,
        host TEXT NOT NULL,
        pid BIGINT NOT NULL,
        heartbeat TIMESTAMPTZ NOT NULL DEFAULT now()
    );
    "#,
    // 4: the quality agent's scores as the other described tables (`store::lane_tables`):
    // integers as BIGINT, a change number for the mirrors, so one description reads and
    // writes them on either store.
    r#"
    ALTER TABLE quality_scores
        ALTER COLUMN factuality TYPE BIGINT,
        ALTER COLUMN discriminability TYPE BIGINT,
        ALTER COLUMN clarity TYPE BIGINT,
        ALTER COLUMN attempts TYPE BIGINT,
        ADD COLUMN seq BIGINT NOT NULL DEFAULT nextval('prism_changes');
    CREATE INDEX quality_scores_seq ON quality_scores(seq);
    "#,
    // 5: summaries kept as scores land (`store::summaries`, SQLite migration 19), made here from
    // the scores the store already has; run summaries carry a change number (the mirror pulls
    // them before the answers). Runs are listed newest first, a page at a time, each with its
    // job counts: the jobs not done are indexed apart (as on SQLite).
    r#"
    CREATE INDEX runs_created ON runs(created_at, id);
    CREATE INDEX jobs_open ON jobs(run_id, state) WHERE state <> 'done';
    CREATE INDEX scores_group ON scores(run_id, model, task_id, item_id);
    CREATE INDEX scores_key ON scores(item_id, model, sample, run_id);
    CREATE TABLE run_summaries (
        run_id TEXT NOT NULL,
        model TEXT NOT NULL,
        task_id TEXT NOT NULL,
        scored BIGINT NOT NULL,
        unscored BIGINT NOT NULL,
        sum DOUBLE PRECISION NOT NULL,
        hallucinated BIGINT NOT NULL,
        rows BIGINT NOT NULL,
        seq BIGINT NOT NULL DEFAULT nextval('prism_changes'),
        PRIMARY KEY (run_id, model, task_id)
    );
    CREATE INDEX run_summaries_seq ON run_summaries(seq);
    CREATE TABLE latest_scores (
        item_id TEXT NOT NULL,
        model TEXT NOT NULL,
        sample BIGINT NOT NULL,
        run_id TEXT NOT NULL,
        job_idx BIGINT NOT NULL,
        task_id TEXT NOT NULL,
        score DOUBLE PRECISION,
        PRIMARY KEY (item_id, model, sample)
    );
    CREATE INDEX latest_scores_run ON latest_scores(run_id);
    INSERT INTO run_summaries (run_id, model, task_id, scored, unscored, sum, hallucinated, rows)
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
    SELECT DISTINCT ON (item_id, model, sample) item_id, model, sample, run_id, job_idx,
        task_id, score
    FROM scores ORDER BY item_id, model, sample, run_id DESC;
    "#,
    // 6: the judge on trial (`store::judging`, SQLite migration 20): every judge's verdict per
    // answer and repeat, and people's labels on answers, each row with a change number.
    r#"
    CREATE TABLE judge_verdicts (
        run_id TEXT NOT NULL,
        job_idx BIGINT NOT NULL,
        judge TEXT NOT NULL,
        repeat BIGINT NOT NULL,
        item_id TEXT,
        task_id TEXT,
        model TEXT,
        evaluator TEXT,
        score DOUBLE PRECISION,
        detail TEXT,
        reply TEXT,
        attempts BIGINT,
        fallback BIGINT,
        created_at BIGINT,
        seq BIGINT NOT NULL DEFAULT nextval('prism_changes'),
        PRIMARY KEY (run_id, job_idx, judge, repeat)
    );
    CREATE INDEX judge_verdicts_seq ON judge_verdicts(seq);
    CREATE TABLE answer_labels (
        uid TEXT NOT NULL PRIMARY KEY,
        run_id TEXT,
        job_idx BIGINT,
        item_id TEXT,
        model TEXT,
        reviewer TEXT,
        label TEXT,
        note TEXT,
        created_at BIGINT,
        seq BIGINT NOT NULL DEFAULT nextval('prism_changes')
    );
    CREATE INDEX answer_labels_seq ON answer_labels(seq);
    CREATE INDEX answer_labels_run ON answer_labels(run_id, job_idx);
    "#,
    // 7: `scores_item` (item, model) is a prefix of `scores_key` (item, model, sample, run),
    // which answers the same lookups: one index fewer to keep on every saved score.
    r#"
    DROP INDEX IF EXISTS scores_item;
    "#,
];

/// Brings the schema up to date (under an advisory lock: one migrator at a time).
pub(super) fn migrate(c: &mut Client) -> std::result::Result<(), postgres::Error> {
    let mut tx = c.transaction()?;
    // One migrator at a time across every process on this database.
    tx.execute("SELECT pg_advisory_xact_lock(7263541)", &[])?;
    tx.batch_execute("CREATE TABLE IF NOT EXISTS prism_schema (version INTEGER NOT NULL)")?;
    let found: i64 = tx
        .query_one(
            "SELECT COALESCE(MAX(version), 0)::BIGINT AS version FROM prism_schema",
            &[],
        )?
        .get("version");
    for (i, m) in MIGRATIONS.iter().enumerate().skip(found as usize) {
        tx.batch_execute(m)?;
        tx.execute(
            "INSERT INTO prism_schema (version) VALUES ($1)",
            &[&(i as i32 + 1)],
        )?;
    }
    // A described table added after the last migration has none: it is made from its
    // description (as on SQLite), on the schema the store's connection works in.
    let described = super::lane_tables::all();
    let names: Vec<&str> = described.iter().map(|t| t.name).collect();
    let missing: Vec<String> = tx
        .query(
            "SELECT n FROM unnest($1::TEXT[]) n WHERE to_regclass(n) IS NULL",
            &[&names],
        )?
        .iter()
        .map(|r| r.get("n"))
        .collect();
    for t in described
        .iter()
        .filter(|t| missing.iter().any(|m| m == t.name))
    {
        tx.batch_execute(&t.create_sql(true))?;
    }
    tx.commit()
}
