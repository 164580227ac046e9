//! The shared store on PostgreSQL (`--db postgres://...`): reviewers on different machines
//! decide on one database (review decisions, drafts, the quality agent's scores), and runs are
//! shared by the workers that join them (runs, jobs with their leases, answers, scores, the
//! cache: `pg_runs`), with the same tables as SQLite; the other lanes' tables too
//! (`lane_tables`: detection, self-detection, answer checks, entailments, topics).
//!
//! The client runs on a thread of its own: the synchronous `postgres` client drives a runtime
//! of its own, which cannot be entered from the TUI's async tasks, so every call is sent to
//! that thread and its answer waited for.
//!
//! Credentials come from the URL, `PGPASSWORD`, or a pgpass file (`PGPASSFILE` or
//! `~/.pgpass`); they are never stored, and every message shows the URL without its password.

use std::sync::mpsc;

use postgres::Client;

use super::Draft;
use super::error::{Result, StoreError};
use super::record::Record;
use super::review_records::{QualityRecord, ReviewRecord};

/// Schema migrations, applied in order under an advisory lock (two processes starting at once
/// do not race); `prism_schema` records how many ran.
/// The notification channel every decision save sends on, in its own transaction (delivered
/// on commit): open review screens listen on it (`review::watch`).
pub(crate) const REVIEW_CHANNEL: &str = "prism_review";

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

/// A call on the connection's thread; it is handed a way to connect again.
type Job = Box<dyn FnOnce(&mut Client, &dyn Fn() -> Option<Client>) + Send>;

/// A connection to the shared store. A clone shares the connection's thread (calls from clones
/// run one after another on it).
#[derive(Clone)]
pub struct PgStore {
    jobs: mpsc::Sender<Job>,
    /// The URL without its password, for messages.
    shown: String,
    /// What it connected with (password included), for the review watcher's own connection.
    cfg: Box<postgres::Config>,
    /// The same, for the async client.
    async_cfg: Box<tokio_postgres::Config>,
}

/// Whether `s` names a PostgreSQL database rather than a SQLite file: a `postgres://` or
/// `postgresql://` URL, or a libpq key=value connection string (`host=db user=ann ...`). Either
/// may hold a password, so such a value is never used as a file name.
pub(crate) fn is_url(s: &str) -> bool {
    let t = s.trim_start();
    let lower = t.get(..13).unwrap_or(t).to_ascii_lowercase();
    lower.starts_with("postgres://") || lower.starts_with("postgresql://") || is_conninfo(t)
}

/// A libpq connection string: its first word is `keyword=` with a keyword libpq knows.
fn is_conninfo(s: &str) -> bool {
    const KEYS: [&str; 12] = [
        "host",
        "hostaddr",
        "port",
        "dbname",
        "user",
        "password",
        "passfile",
        "service",
        "sslmode",
        "connect_timeout",
        "application_name",
        "options",
    ];
    s.split_once('=')
        .is_some_and(|(k, _)| KEYS.contains(&k.trim().to_ascii_lowercase().as_str()))
}

/// The `db_url` fuzz target (`crate::fuzzing`): a `--db` value told apart from a SQLite path,
/// shown without its password, and parsed as the PostgreSQL driver parses it. A password the
/// driver reads, when it is long enough to be told apart from the rest and appears once, never
/// shows in the redacted text.
#[doc(hidden)]
pub(crate) fn fuzz_db_url(data: &[u8]) {
    let t = String::from_utf8_lossy(data);
    let _ = is_url(&t);
    let shown = redact_url(&t);
    // The leak check holds for what can reach the redaction: a `--db` that is not valid UTF-8
    // is never taken for a URL (`to_str` fails, so it is a path), and U+FFFD from the lossy
    // conversion makes look-alike "passwords" out of unrelated bytes.
    if std::str::from_utf8(data).is_err() {
        return;
    }
    if let Ok(cfg) = t.parse::<postgres::Config>()
        && let Some(pw) = cfg.get_password()
        && let Ok(pw) = std::str::from_utf8(pw)
        && pw.len() >= 8
        && t.matches(pw).count() == 1
        && !pw.contains("***")
        && is_url(&t)
    {
        // The redaction's own marker is no leak: a "password" like `assword=*` is a piece of
        // `password=***` (a false alarm the fuzzer found), so the text is cut at the markers and
        // each piece looked at alone (taking the markers out instead joined the user to the
        // host, and `/pd/bdbs` + `\x05` read as the password `/pd/bdbs\x05`: another false alarm).
        let leaked = shown
            .split(":***@")
            .flat_map(|piece| piece.split("password=***"))
            .any(|piece| piece.contains(pw));
        assert!(!leaked, "password {pw:?} shown in {shown:?}");
    }
}

/// `url` with every password replaced by `***`: in the user info (`user:pw@host`, the password
/// may hold `@`), in a `password=` query parameter, and in a key=value connection string.
pub(crate) fn redact_url(url: &str) -> String {
    let shown = redact_text(url);
    // Whatever the text redaction missed (the db_url fuzz target keeps finding forms the
    // driver reads a password from): the password the driver would use is looked for in what
    // is shown, and if it is there the URL is shown rebuilt from its parts, without it.
    let Ok(cfg) = url.parse::<postgres::Config>() else {
        return shown;
    };
    match cfg.get_password() {
        Some(pw) if pw.len() >= 4 && contains(shown.as_bytes(), pw) => rebuilt(&cfg, pw),
        _ => shown,
    }
}

/// `postgres://user@host:port,…/dbname` from a parsed URL, any copy of `pw` in it as `***`
/// (a user named like the password), or a placeholder when even that would show it.
fn rebuilt(cfg: &postgres::Config, pw: &[u8]) -> String {
    let hosts: Vec<String> = cfg
        .get_hosts()
        .iter()
        .enumerate()
        .map(|(i, h)| {
            let name = match h {
                postgres::config::Host::Tcp(n) => n.clone(),
                postgres::config::Host::Unix(p) => p.display().to_string(),
            };
            match cfg.get_ports().get(i).or(cfg.get_ports().first()) {
                Some(port) => format!("{name}:{port}"),
                None => name,
            }
        })
        .collect();
    let user = cfg.get_user().map(|u| format!("{u}@")).unwrap_or_default();
    let db = cfg.get_dbname().unwrap_or("");
    let text = format!("postgres://{user}{}/{db}", hosts.join(","));
    let text = match std::str::from_utf8(pw) {
        Ok(p) => text.replace(p, "***"),
        Err(_) => text,
    };
    if contains(text.as_bytes(), pw) {
        "<a postgres url (not shown: it holds its password)>".into()
    } else {
        text
    }
}

fn contains(hay: &[u8], needle: &[u8]) -> bool {
    !needle.is_empty() && hay.windows(needle.len()).any(|w| w == needle)
}

/// The text redaction: every password form the driver reads, replaced where it is written.
fn redact_text(url: &str) -> String {
    // Which form it is goes by how it starts: a key=value string may hold `://` in a value
    // (`host=x://y password=...`, found by the db_url fuzz target) and is still redacted as one.
    let trimmed = url.trim_start();
    let lower = trimmed.get(..13).unwrap_or(trimmed).to_ascii_lowercase();
    let is_uri = lower.starts_with("postgres://") || lower.starts_with("postgresql://");
    let split = if is_uri { url.split_once("://") } else { None };
    let Some((scheme, rest)) = split else {
        return if is_conninfo(trimmed) {
            redact_conninfo(url)
        } else {
            "<not a postgres url>".into()
        };
    };
    // The user info ends at the last `@`: a password may hold `@` (libpq takes it so).
    let rest = match rest.rsplit_once('@') {
        Some((cred, host)) => match cred.split_once(':') {
            Some((user, _)) => format!("{user}:***@{host}"),
            None => format!("{cred}@{host}"),
        },
        None => rest.to_string(),
    };
    // Every `password=` parameter, wherever a `?` or `&` opens one: the user info may hold a
    // `?` of its own (the db_url fuzz target found that), so the query's start is not
    // trusted; a value runs to the next `&`, as the driver reads it.
    // The driver percent-decodes parameter names, so `p%61ssword=` is a password too. A
    // password's value runs to the next `&` (it may hold `?`); any other parameter is read
    // only up to its `=`, so a later `?password=` inside it is still found.
    let rest = redact_password_params(&rest);
    format!("{scheme}://{rest}")
}

/// Every `password=` parameter opened by a `?` or `&`, anywhere in `s`, with its value (to the
/// next `&`) replaced by `***`.
fn redact_password_params(s: &str) -> String {
    let b = s.as_bytes();
    let mut out = String::with_capacity(s.len());
    let (mut i, mut copied) = (0, 0);
    while i < b.len() {
        if matches!(b[i], b'?' | b'&') {
            let key_start = i + 1;
            let key_end = b[key_start..]
                .iter()
                .position(|&c| matches!(c, b'=' | b'&' | b'?'))
                .map(|p| key_start + p);
            if let Some(eq) = key_end.filter(|&e| b[e] == b'=')
                && percent_decoded(&s[key_start..eq]).eq_ignore_ascii_case("password")
            {
                let value_end = b[eq + 1..]
                    .iter()
                    .position(|&c| c == b'&')
                    .map_or(b.len(), |p| eq + 1 + p);
                out.push_str(&s[copied..=eq]);
                out.push_str("***");
                copied = value_end;
                i = value_end;
                continue;
            }
        }
        i += 1;
    }
    out.push_str(&s[copied..]);
    out
}

/// `%XX` escapes decoded (bytes that do not decode are kept as they are).
fn percent_decoded(s: &str) -> String {
    let b = s.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        let hex = |c: u8| (c as char).to_digit(16);
        if b[i] == b'%'
            && let (Some(h), Some(l)) = (
                b.get(i + 1).and_then(|&c| hex(c)),
                b.get(i + 2).and_then(|&c| hex(c)),
            )
        {
            out.push((h * 16 + l) as u8);
            i += 3;
        } else {
            out.push(b[i]);
            i += 1;
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// A key=value connection string with every `password` value as `***`, read as the driver
/// reads it: `key = value` pairs, a value bare (to the next whitespace, `\\` escaping) or
/// single-quoted (`\\'` escaping). A value that only looks like a key (`user= password=x`:
/// the user is `password=x`) is a value. From a point the string cannot be read on, the rest
/// is hidden.
fn redact_conninfo(s: &str) -> String {
    // By characters, as the driver reads it: its whitespace is Unicode's (U+00A0 included).
    let cs: Vec<(usize, char)> = s.char_indices().collect();
    let at = |k: usize| cs.get(k).map_or(s.len(), |c| c.0);
    let ws = |k: usize| cs.get(k).is_some_and(|c| c.1.is_whitespace());
    let is = |k: usize, ch: char| cs.get(k).is_some_and(|c| c.1 == ch);
    let n = cs.len();
    let mut out = String::with_capacity(s.len());
    let mut i = 0;
    loop {
        let start = i;
        while i < n && ws(i) {
            i += 1;
        }
        if i >= n {
            out.push_str(&s[at(start)..]);
            return out;
        }
        let key_start = i;
        while i < n && !ws(i) && !is(i, '=') {
            i += 1;
        }
        let key = &s[at(key_start)..at(i)];
        while i < n && ws(i) {
            i += 1;
        }
        if !is(i, '=') {
            out.push_str(&s[at(start)..at(key_start)]);
            out.push_str("***");
            return out;
        }
        i += 1;
        while i < n && ws(i) {
            i += 1;
        }
        let value_start = i;
        if is(i, '\'') {
            i += 1;
            let mut closed = false;
            while i < n {
                if is(i, '\\') {
                    i += 2;
                } else if is(i, '\'') {
                    i += 1;
                    closed = true;
                    break;
                } else {
                    i += 1;
                }
            }
            if !closed {
                out.push_str(&s[at(start)..at(value_start)]);
                out.push_str("***");
                return out;
            }
        } else {
            while i < n && !ws(i) {
                i += if is(i, '\\') { 2 } else { 1 };
            }
        }
        let i_end = i.min(n);
        out.push_str(&s[at(start)..at(value_start)]);
        if key.eq_ignore_ascii_case("password") {
            out.push_str("***");
        } else {
            out.push_str(&s[at(value_start)..at(i_end)]);
        }
        i = i_end;
    }
}

/// How every connection to a shared store is made: TLS when the URL asks for it
/// (`sslmode=require`; `prefer`, libpq's default, tries it first), the server's certificate
/// checked against the system's roots and, if set, the PEM file in `PGSSLROOTCERT` (libpq's
/// variable: a team's own CA). Stricter than libpq's `require`, which encrypts without checking
/// who answers: a man in the middle would get the password.
pub(crate) fn tls() -> tokio_postgres_rustls::MakeRustlsConnect {
    use rustls_pki_types::pem::PemObject;
    static CONFIG: std::sync::OnceLock<rustls::ClientConfig> = std::sync::OnceLock::new();
    let cfg = CONFIG.get_or_init(|| {
        let mut roots = rustls::RootCertStore::empty();
        for c in rustls_native_certs::load_native_certs().certs {
            let _ = roots.add(c);
        }
        if let Some(path) = std::env::var_os("PGSSLROOTCERT") {
            match rustls_pki_types::CertificateDer::pem_file_iter(&path) {
                Ok(certs) => {
                    for c in certs.flatten() {
                        let _ = roots.add(c);
                    }
                }
                Err(e) => crate::warn!(
                    "PGSSLROOTCERT {}: {e}; only the system's roots are trusted",
                    std::path::Path::new(&path).display()
                ),
            }
        }
        let provider = std::sync::Arc::new(rustls::crypto::aws_lc_rs::default_provider());
        rustls::ClientConfig::builder_with_provider(provider)
            .with_safe_default_protocol_versions()
            .expect("the bundled TLS provider supports the default protocol versions")
            .with_root_certificates(roots)
            .with_no_client_auth()
    });
    tokio_postgres_rustls::MakeRustlsConnect::new(cfg.clone())
}

fn pg_err(shown: &str, e: impl std::fmt::Display) -> StoreError {
    // The driver's messages name the host and user at most, never the password.
    StoreError::Shared(format!("{shown}: {e}"))
}

/// A driver error with its causes ("error connecting to server: Connection refused").
pub(super) fn chain(e: &postgres::Error) -> String {
    let mut s = e.to_string();
    let mut cur: Option<&dyn std::error::Error> = std::error::Error::source(e);
    while let Some(c) = cur {
        let m = c.to_string();
        if !s.contains(&m) {
            s.push_str(": ");
            s.push_str(&m);
        }
        cur = c.source();
    }
    s
}

/// The password for `cfg` from a pgpass file (`host:port:database:user:password`, `*` matching
/// anything), when the URL and the environment give none.
fn pgpass(cfg: &postgres::Config, passfile: Option<std::path::PathBuf>) -> Option<String> {
    let path = passfile
        .or_else(|| std::env::var_os("PGPASSFILE").map(std::path::PathBuf::from))
        .or_else(|| std::env::var_os("HOME").map(|h| std::path::Path::new(&h).join(".pgpass")))?;
    let host = cfg
        .get_hosts()
        .first()
        .map(|h| match h {
            postgres::config::Host::Tcp(s) => s.clone(),
            #[cfg(unix)]
            postgres::config::Host::Unix(p) => p.display().to_string(),
        })
        .unwrap_or_else(|| "localhost".into());
    let port = cfg.get_ports().first().copied().unwrap_or(5432).to_string();
    let user = cfg.get_user().unwrap_or("");
    let db = cfg.get_dbname().unwrap_or(user);
    super::pg_conninfo::pgpass_lookup(&path, [&host, &port, db, user], |w| crate::warn!("{w}"))
}

impl PgStore {
    /// Connects and brings the schema up to date.
    pub fn connect(url: &str) -> Result<PgStore> {
        let shown = redact_url(url);
        // libpq's service files, SSL modes and passfile, which the driver does not read.
        let prepared = super::pg_conninfo::prepare(url)
            .map_err(|e| pg_err(&shown, format!("not a valid PostgreSQL URL: {e}")))?;
        let mut cfg: postgres::Config = prepared
            .text
            .parse()
            .map_err(|e| pg_err(&shown, format!("not a valid PostgreSQL URL ({e})")))?;
        if cfg.get_password().is_none() {
            if let Ok(p) = std::env::var("PGPASSWORD") {
                cfg.password(p);
            } else if let Some(p) = pgpass(&cfg, prepared.passfile) {
                cfg.password(p);
            }
        }
        cfg.connect_timeout(std::time::Duration::from_secs(10));
        // The same settings for the async client (cache lookups on the engine's runtime).
        let mut async_cfg: tokio_postgres::Config = prepared
            .text
            .parse()
            .map_err(|e| pg_err(&shown, format!("not a valid PostgreSQL URL ({e})")))?;
        if let Some(p) = cfg.get_password() {
            async_cfg.password(p);
        }
        async_cfg.connect_timeout(std::time::Duration::from_secs(10));
        let (jobs, rx) = mpsc::channel::<Job>();
        let (ready_tx, ready_rx) = mpsc::channel::<Result<()>>();
        let shown2 = shown.clone();
        let kept = cfg.clone();
        std::thread::Builder::new()
            .name("prism-pg".into())
            .spawn(move || {
                let mut client = match cfg.connect(tls()) {
                    Ok(c) => c,
                    Err(e) => {
                        let _ = ready_tx.send(Err(pg_err(&shown2, chain(&e))));
                        return;
                    }
                };
                let _ = ready_tx.send(migrate(&mut client).map_err(|e| pg_err(&shown2, chain(&e))));
                for job in rx {
                    // A dropped connection (server restart, network) is made again before the
                    // next call; if that fails too, the call reports the closed connection.
                    if client.is_closed()
                        && let Ok(c) = cfg.connect(tls())
                    {
                        client = c;
                    }
                    job(&mut client, &|| cfg.connect(tls()).ok());
                }
            })
            .map_err(|e| pg_err(&shown, e))?;
        ready_rx
            .recv()
            .map_err(|_| pg_err(&shown, "the connection thread ended"))??;
        Ok(PgStore {
            jobs,
            shown,
            cfg: Box::new(kept),
            async_cfg: Box::new(async_cfg),
        })
    }

    /// Runs `f` on the connection's thread and waits for its result.
    pub(super) fn call<T: Send + 'static>(
        &self,
        f: impl Fn(&mut Client) -> std::result::Result<T, postgres::Error> + Send + 'static,
    ) -> Result<T> {
        let (tx, rx) = mpsc::channel();
        let job: Job = Box::new(move |c, reconnect| {
            let mut r = f(c);
            // The server went away under the connection (a restart): the call is made once
            // more on a new one, so the first call after a restart does not fail. Every call
            // here can be repeated: saves skip what is there and upserts write the same row.
            if r.is_err()
                && c.is_closed()
                && let Some(new) = reconnect()
            {
                *c = new;
                r = f(c);
            }
            let _ = tx.send(r);
        });
        self.jobs
            .send(job)
            .map_err(|_| pg_err(&self.shown, "the connection thread ended"))?;
        rx.recv()
            .map_err(|_| pg_err(&self.shown, "the connection thread ended"))?
            .map_err(|e| pg_err(&self.shown, chain(&e)))
    }

    /// How this store connects, for an async client (holds the password: never shown).
    pub(crate) fn async_config(&self) -> Box<tokio_postgres::Config> {
        self.async_cfg.clone()
    }

    pub fn shown(&self) -> &str {
        &self.shown
    }

    /// How this store connects (for a watcher's connection of its own; holds the password, so
    /// it is never shown).
    pub fn connect_config(&self) -> Box<postgres::Config> {
        self.cfg.clone()
    }

    /// Saves decisions in one transaction; ones already there (same uid) are skipped. Returns
    /// how many were new. The reviewers' drafts of the decided items go in the same transaction.
    pub fn save_decisions(&self, rs: &[ReviewRecord]) -> Result<usize> {
        let rs = rs.to_vec();
        self.call(move |c| {
            let mut tx = c.transaction()?;
            let t = &super::tables::REVIEW_DECISIONS;
            let ins = tx.prepare(&format!(
                "INSERT INTO {} ({}) VALUES ({}) ON CONFLICT (uid) DO NOTHING",
                t.name,
                t.col_list(),
                t.marks("$")
            ))?;
            // As in SQLite: only a new decision replaces a draft, and never a newer draft.
            let del = tx.prepare(
                "DELETE FROM review_drafts WHERE item_id = $1 AND reviewer = $2 AND updated_at <= $3",
            )?;
            let mut added = 0;
            for r in &rs {
                let p = super::lane_tables::pg::params(t, &r.to_row());
                let new = tx.execute(&ins, &super::pg_runs::refs(&p))? as usize;
                if new > 0 {
                    tx.execute(&del, &[&r.item_id, &r.reviewer, &r.created_at])?;
                }
                added += new;
            }
            // Open review screens hear of it when this commits (review::watch).
            if added > 0 {
                tx.batch_execute(&format!("NOTIFY {REVIEW_CHANNEL}"))?;
            }
            tx.commit()?;
            Ok(added)
        })
    }

    /// Every decision, oldest first.
    pub fn decisions(&self) -> Result<Vec<ReviewRecord>> {
        let (mut v, _) = self.decisions_after(0)?;
        super::review::oldest_first(&mut v);
        Ok(v)
    }

    /// Decisions stored after `seq` (in storing order), and the last seq seen. Sequence values
    /// are taken at insert time, so a slow transaction can commit a lower one after a higher one
    /// is visible: callers ask again from a little before what they saw and drop the uids they
    /// have.
    pub fn decisions_after(&self, seq: i64) -> Result<(Vec<ReviewRecord>, i64)> {
        self.call(move |c| {
            let t = &super::tables::REVIEW_DECISIONS;
            let width = t.cols.len();
            let rows = c.query(
                &format!(
                    "SELECT {}, seq FROM review_decisions WHERE seq > $1 ORDER BY seq",
                    t.col_list()
                ),
                &[&seq],
            )?;
            let last = rows.last().map_or(seq, |r| r.get::<_, i64>(width));
            let out = rows
                .iter()
                .filter_map(|r| {
                    let row = super::lane_tables::pg::row_of(t, r, width).ok()?;
                    super::record::converted(ReviewRecord::from_row(&row))
                })
                .collect();
            Ok((out, last.max(seq)))
        })
    }

    /// Saves (replaces) a reviewer's draft of an item.
    pub fn save_draft(&self, d: &Draft) -> Result<()> {
        let row = d.to_row();
        self.call(move |c| {
            let t = Draft::table();
            let p = super::lane_tables::pg::params(t, &row);
            c.execute(&t.upsert("$", true, ""), &super::pg_runs::refs(&p))?;
            Ok(())
        })
    }

    /// Every draft of a reviewer.
    pub fn drafts(&self, reviewer: &str) -> Result<Vec<Draft>> {
        let reviewer = reviewer.to_string();
        self.call(move |c| {
            let t = Draft::table();
            let rows = c.query(
                &format!(
                    "SELECT {} FROM review_drafts WHERE reviewer = $1 ORDER BY item_id",
                    t.col_list()
                ),
                &[&reviewer],
            )?;
            Ok(rows
                .iter()
                .filter_map(|r| {
                    let row = super::lane_tables::pg::row_of(t, r, t.cols.len()).ok()?;
                    super::record::converted(Draft::from_row(&row))
                })
                .collect())
        })
    }

    pub fn save_quality(&self, q: &QualityRecord) -> Result<()> {
        use super::record::Record;
        let row = q.to_row();
        self.call(move |c| {
            super::lane_tables::pg::put(c, &[(QualityRecord::table(), vec![row.clone()])], true)
                .map(|_| ())
        })
    }

    pub fn quality(&self, model: Option<&str>) -> Result<Vec<QualityRecord>> {
        use super::record::Record;
        let rows = self.lane_rows(QualityRecord::table(), None)?;
        let mut out = Vec::new();
        for r in &rows {
            let q = QualityRecord::from_row(r)?;
            if model.is_none_or(|m| m == q.model) {
                out.push(q);
            }
        }
        Ok(out)
    }
}

/// Shared runs, read (`pg_runs` has the statements; the workers write through
/// `StoreHandle::spawn_pg`).
impl PgStore {
    pub fn run(&self, id: &str) -> Result<Option<super::RunRecord>> {
        let id = id.to_string();
        self.call(move |c| super::pg_runs::run(c, &id))?
            .map(super::runs::RunRow::parsed)
            .transpose()
    }

    /// Whether anything is stored under run `id` of `kind` (for answers runs: the run, or
    /// answers or scores written for that id without one; the lanes' rows need their run): a
    /// run of that id was made, or planted, elsewhere.
    pub fn holds_run(&self, kind: super::links::RunKind, id: &str) -> Result<bool> {
        use super::links::RunKind;
        let sql = match kind {
            RunKind::Answers => {
                "SELECT EXISTS (SELECT 1 FROM runs WHERE id = $1)
                     OR EXISTS (SELECT 1 FROM responses WHERE run_id = $1)
                     OR EXISTS (SELECT 1 FROM scores WHERE run_id = $1)"
            }
            RunKind::Detect => "SELECT EXISTS (SELECT 1 FROM detect_runs WHERE id = $1)",
            RunKind::Selfcheck => "SELECT EXISTS (SELECT 1 FROM selfcheck_runs WHERE id = $1)",
        };
        let id = id.to_string();
        self.call(move |c| Ok(c.query_one(sql, &[&id])?.get(0)))
    }

    /// Every run, newest first.
    pub fn runs(&self) -> Result<Vec<super::RunRecord>> {
        self.call(super::pg_runs::runs)?
            .into_iter()
            .map(super::runs::RunRow::parsed)
            .collect()
    }

    /// A run's jobs in order, with their state and the worker that holds or answered each.
    pub fn jobs(
        &self,
        run: &str,
    ) -> Result<Vec<(super::JobRecord, super::JobState, Option<String>)>> {
        let run = run.to_string();
        self.call(move |c| super::pg_runs::jobs(c, &run))?
            .into_iter()
            .map(|(j, w)| Ok((j.job, super::JobState::parse(&j.state)?, w)))
            .collect()
    }

    /// A run's answers in job order.
    pub fn responses(&self, run: &str) -> Result<Vec<super::ResponseRecord>> {
        let run = run.to_string();
        self.call(move |c| super::pg_runs::responses(c, &run))
    }

    /// Makes a run's summaries again from its scores (see `Store::repair_summaries`).
    pub fn repair_summaries(&self, run: &str) -> Result<usize> {
        let run = run.to_string();
        self.call(move |c| {
            let mut tx = c.transaction()?;
            let n = super::summaries::pg::repair(&mut tx, &run)?;
            tx.commit()?;
            Ok(n)
        })
    }

    /// A run's answers without a score.
    pub fn unscored_responses(&self, run: &str) -> Result<Vec<super::ResponseRecord>> {
        let run = run.to_string();
        self.call(move |c| super::pg_runs::unscored_responses(c, &run))
    }

    /// A page of runs, newest first, parsed, with their labels.
    pub fn runs_page(&self, f: &super::RunFilter) -> Result<Vec<super::LabelledRun>> {
        let (since, tags) = (f.since.unwrap_or(i64::MIN), f.tags.clone());
        let limit = (f.model.is_none() && f.limit > 0).then_some(f.limit as i64);
        let rows = self.call(move |c| super::pg_runs::runs_page(c, since, &tags, limit))?;
        super::runs::fill_page(rows, f)
    }

    /// Everything stored of a run (`store::bundle`).
    pub fn run_bundle(&self, id: &str) -> Result<Option<super::RunBundle>> {
        self.run_bundle_part(id, 0..u32::MAX)
    }

    /// The part of a run's bundle whose jobs are numbered in `jobs`.
    pub fn run_bundle_part(
        &self,
        id: &str,
        jobs: std::ops::Range<u32>,
    ) -> Result<Option<super::RunBundle>> {
        let id = id.to_string();
        let Some(raw) = self.call(move |c| super::pg_runs::bundle(c, &id, jobs.clone()))? else {
            return Ok(None);
        };
        Ok(Some(super::RunBundle {
            name: raw.run.name.clone(),
            tags: raw.run.tags.clone(),
            run: raw.run.parsed()?,
            jobs: raw
                .jobs
                .into_iter()
                .map(|j| Ok((j.job, super::JobState::parse(&j.state)?)))
                .collect::<Result<_>>()?,
            responses: raw.responses,
            scores: raw.scores,
        }))
    }

    /// Adds what this store lacks of a run.
    pub fn put_run_bundle(&self, b: &super::RunBundle) -> Result<super::Added> {
        let run = b.run_row()?;
        let b = b.clone();
        self.call(move |c| super::pg_runs::put_bundle(c, &b, &run))
    }

    pub fn cache_entries(&self) -> Result<Vec<(String, super::Cached)>> {
        self.call(super::pg_runs::cache_entries)
    }

    pub fn put_cache_entries(&self, es: &[(String, super::Cached)]) -> Result<usize> {
        let es = es.to_vec();
        self.call(move |c| super::pg_runs::put_cache_entries(c, &es))
    }

    /// Saves scores, each replacing the one stored for its answer (`prism score` again).
    pub fn save_scores(&self, rs: &[super::ScoreRecord]) -> Result<()> {
        let rs = rs.to_vec();
        self.call(move |c| super::pg_runs::save_scores(c, &rs, &|_| None))
    }

    /// Every run's name and tags.
    pub fn labels(&self) -> Result<Vec<(String, Option<String>, String)>> {
        self.call(super::pg_runs::labels)
    }

    /// Names a run (`None` takes the name off); false: no such run.
    pub fn set_run_name(&self, id: &str, name: Option<&str>) -> Result<bool> {
        let (id, name) = (id.to_string(), name.map(str::to_string));
        self.call(move |c| super::pg_runs::set_name(c, &id, name.as_deref()))
    }

    /// Sets a run's tags (space-separated); false: no such run.
    pub fn set_run_tags(&self, id: &str, tags: &[String]) -> Result<bool> {
        let (id, tags) = (id.to_string(), tags.join(" "));
        self.call(move |c| super::pg_runs::set_tags(c, &id, &tags))
    }

    /// Workers heard from within `secs` on the run, if it is not finished.
    pub fn active_workers(&self, id: &str, secs: i64) -> Result<i64> {
        let id = id.to_string();
        self.call(move |c| super::pg_runs::active_workers(c, &id, secs as f64))
    }

    /// Removes a run and everything stored of it; the answers removed (`None`: no such run).
    pub fn remove_run(&self, id: &str) -> Result<Option<u64>> {
        let id = id.to_string();
        self.call(move |c| super::pg_runs::remove_run(c, &id))
    }

    /// The latest change number given to any row (0: none yet).
    pub fn last_change(&self) -> Result<i64> {
        self.call(|c| {
            let r = c.query_one(
                "SELECT CASE WHEN is_called THEN last_value ELSE 0 END FROM prism_changes",
                &[],
            )?;
            Ok(r.get(0))
        })
    }

    /// The latest change numbers of answers and of scores (0: none).
    pub fn max_changes(&self) -> Result<(i64, i64)> {
        self.call(|c| {
            let r = c.query_one(
                "SELECT COALESCE((SELECT max(seq) FROM responses), 0),
                        COALESCE((SELECT max(seq) FROM scores), 0)",
                &[],
            )?;
            Ok((r.get(0), r.get(1)))
        })
    }

    /// Every run's id and status.
    pub fn statuses(&self) -> Result<Vec<(String, String)>> {
        self.call(super::pg_runs::statuses)
    }

    /// Answers changed after change number `after` (see `store::mirror`).
    pub fn answers_since(
        &self,
        after: i64,
        limit: i64,
    ) -> Result<Vec<(i64, super::ResponseRecord)>> {
        self.call(move |c| super::pg_runs::responses_since(c, after, limit))
    }

    pub fn scores_since(&self, after: i64, limit: i64) -> Result<Vec<(i64, super::ScoreRecord)>> {
        self.call(move |c| super::pg_runs::scores_since(c, after, limit))
    }

    /// The workers that answered the given jobs of a run.
    pub fn job_workers(&self, run: &str, idxs: &[u32]) -> Result<Vec<(u32, String)>> {
        let run = run.to_string();
        let idxs: Vec<i64> = idxs.iter().map(|&i| i64::from(i)).collect();
        self.call(move |c| super::pg_runs::job_workers(c, &run, &idxs))
    }

    /// Who worked on a run and what each stored.
    pub fn workers(&self, run: &str) -> Result<Vec<super::pg_runs::WorkerRow>> {
        let run = run.to_string();
        self.call(move |c| super::pg_runs::workers(c, &run))
    }
}

/// The other lanes' tables (`lane_tables`), read and written row by row.
impl PgStore {
    /// A table's rows (of one run when `run` is given and the table is kept by run).
    pub fn lane_rows(
        &self,
        t: &'static super::lane_tables::Table,
        run: Option<&str>,
    ) -> Result<Vec<super::lane_tables::Row>> {
        let run = run.map(str::to_string);
        self.call(move |c| super::lane_tables::pg::rows(c, t, run.as_deref()))
    }

    /// Writes rows of several tables in one transaction (`lane_tables`); how many were added
    /// or moved forward.
    pub fn put_lane_rows(
        &self,
        rows: Vec<(
            &'static super::lane_tables::Table,
            Vec<super::lane_tables::Row>,
        )>,
        force: bool,
    ) -> Result<usize> {
        self.call(move |c| super::lane_tables::pg::put(c, &rows, force))
    }

    /// A lane table's rows changed after change number `after` (see `store::mirror`).
    pub fn lane_rows_since(
        &self,
        t: &'static super::lane_tables::Table,
        after: i64,
        limit: i64,
    ) -> Result<Vec<(i64, super::lane_tables::Row)>> {
        self.call(move |c| super::lane_tables::pg::rows_since(c, t, after, limit))
    }

    /// Takes a lane's run for `who` (see `store::lane_push`), unless another process holds it.
    pub fn take_lane(
        &self,
        run: &str,
        who: &super::Holder,
    ) -> Result<std::result::Result<(), super::lane_locks::LaneHeld>> {
        let (run, who) = (run.to_string(), who.clone());
        self.call(move |c| super::lane_locks::pg::take(c, &run, &who, super::pid_alive))
    }

    /// Keeps a lane's run held; false when another process took it over.
    pub fn beat_lane(&self, run: &str, owner: &str) -> Result<bool> {
        let (run, owner) = (run.to_string(), owner.to_string());
        self.call(move |c| super::lane_locks::pg::beat(c, &run, &owner))
    }

    pub fn release_lane(&self, run: &str, owner: &str) -> Result<()> {
        let (run, owner) = (run.to_string(), owner.to_string());
        self.call(move |c| super::lane_locks::pg::release(c, &run, &owner))
    }

    /// Every run of a lane: its id and status.
    /// Makes a described table the shared store lacks (see `lane_tables::Table::create_sql`).
    pub fn ensure_table(&self, t: &'static super::lane_tables::Table) -> Result<()> {
        self.call(move |c| c.batch_execute(&t.create_sql(true)))
    }

    pub fn lane_statuses(
        &self,
        kind: super::lane_tables::LaneKind,
    ) -> Result<Vec<(String, String)>> {
        self.call(move |c| super::lane_tables::pg::statuses(c, kind.runs_table()))
    }
}

fn migrate(c: &mut Client) -> std::result::Result<(), postgres::Error> {
    let mut tx = c.transaction()?;
    // One migrator at a time across every process on this database.
    tx.execute("SELECT pg_advisory_xact_lock(7263541)", &[])?;
    tx.batch_execute("CREATE TABLE IF NOT EXISTS prism_schema (version INTEGER NOT NULL)")?;
    let found: i64 = tx
        .query_one(
            "SELECT COALESCE(MAX(version), 0)::BIGINT FROM prism_schema",
            &[],
        )?
        .get(0);
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn urls_are_shown_without_their_password() {
        assert_eq!(
            redact_url("postgres://ann:s3cret@db.lab:5432/review"),
            "postgres://ann:***@db.lab:5432/review"
        );
        assert_eq!(
            redact_url("postgresql://ann@db.lab/review"),
            "postgresql://ann@db.lab/review"
        );
        assert!(is_url("postgres://x") && is_url("postgresql://x") && !is_url("/tmp/p.db"));
        let e = PgStore::connect("postgres://ann:s3cret@127.0.0.1:1/none")
            .err()
            .unwrap();
        let msg = e.to_string();
        assert!(!msg.contains("s3cret"), "{msg}");
        assert!(msg.contains("postgres://ann:***@127.0.0.1:1/none"), "{msg}");
    }

    #[test]
    fn every_form_of_password_is_redacted() {
        let cases = [
            // A password holding `@` (libpq splits at the last one).
            (
                "postgres://ann:p@ss@db:5432/r",
                "postgres://ann:***@db:5432/r",
            ),
            ("postgres://ann:a@b@c@db/r", "postgres://ann:***@db/r"),
            (
                "postgres://ann@db/r?password=s3cret",
                "postgres://ann@db/r?password=***",
            ),
            (
                "postgresql://db/r?sslmode=disable&PASSWORD=s3cret&application_name=x",
                "postgresql://db/r?sslmode=disable&PASSWORD=***&application_name=x",
            ),
            ("POSTGRES://ann:s3cret@db/r", "POSTGRES://ann:***@db/r"),
            (
                "host=db user=ann password=s3cret dbname=r",
                "host=db user=ann password=*** dbname=r",
            ),
            ("host=db password = s3cret", "host=db password = ***"),
            (
                "host=db password='s3 \\'cret' dbname=r",
                "host=db password=*** dbname=r",
            ),
            ("dbname=r Password=s3cret", "dbname=r Password=***"),
        ];
        for (url, want) in cases {
            assert!(is_url(url), "{url}");
            let shown = redact_url(url);
            assert_eq!(shown, want, "{url}");
            assert!(!shown.contains("s3") && !shown.contains("ss@"), "{shown}");
        }
        assert!(is_url("host=db dbname=r") && is_url("  postgres://x"));
        // A `?` in the user info does not hide a later `?password=` (the db_url fuzz target).
        assert_eq!(
            redact_url("postgres://a?b:c@db/r?password=s3cretpw&x=1"),
            "postgres://a?b:***@db/r?password=***&x=1"
        );
        assert_eq!(
            redact_url("postgres://db/r?p%61ssword=s3cretpw"),
            "postgres://db/r?p%61ssword=***"
        );
        // A value that looks like a key is a value; the password after it is hidden (fuzz).
        assert_eq!(
            redact_url("host=db user= password=x password=s3cretpw"),
            "host=db user= password=x password=***"
        );
        assert_eq!(
            redact_url("host=db password='unclosed s3cretpw"),
            "host=db password=***"
        );
        // A key=value string with `://` in a value is still one (the db_url fuzz target).
        // (`postgres://x:5432` is no key=value pair: from there on nothing is shown.)
        let shown = redact_url("host=/t postgres://x:5432 password=s3cretpw");
        assert_eq!(shown, "host=/t ***");
        assert!(!is_url("runs.db") && !is_url("./a=b.db") && !is_url("my-host=x.db"));
    }

    /// The safety net under the text redaction: when the password the driver reads is still
    /// in the text, the URL is shown rebuilt from its parts without it.
    #[test]
    fn a_password_left_in_the_text_is_caught() {
        // The user is named like the password: the text redaction leaves it; the net hides it.
        assert_eq!(
            redact_url("postgres://s3cretpw:s3cretpw@db:6543/r"),
            "postgres://***@db:6543/r"
        );
        let cfg: postgres::Config = "host=db1,db2 port=1,2 user=ann dbname=r".parse().unwrap();
        assert_eq!(rebuilt(&cfg, b"zzzz"), "postgres://ann@db1:1,db2:2/r");
        // A password with stars in it is still taken out.
        let cfg: postgres::Config = "host=db user=a**b".parse().unwrap();
        assert_eq!(rebuilt(&cfg, b"a**b"), "postgres://***@db/");
        // Short passwords are left to the text redaction (a 1-letter "password" would star
        // out every such letter of the host).
        assert_eq!(
            redact_url("postgres://ann:x@db.example/r"),
            "postgres://ann:***@db.example/r"
        );
    }
}
