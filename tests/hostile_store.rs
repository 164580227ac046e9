//! A shared store is a trust boundary (issue 41): anyone who can write to the team's database
//! can plant rows in it. Two "machines" (two data directories), a real PostgreSQL server and a
//! mock model server that logs the key headers it receives:
//! - a planted run never makes a worker call an endpoint its own models file does not name,
//!   nor read a key variable the store names (`prism work`, `prism run --resume` of a pulled
//!   run); `--recorded-endpoints` calls the recorded endpoint with no key at all;
//! - rows planted for a run that exists only on this machine never change it (the mirror,
//!   `prism db copy`), while a shared run's rows still arrive.

mod common;

use std::path::{Path, PathBuf};

use assert_cmd::Command;
use common::{mock, pg::Pg};
use serde_json::{Value, json};

/// A machine: its own config and data directory (so its own local store).
struct Machine {
    dir: tempfile::TempDir,
}

impl Machine {
    fn new(models: &str) -> Machine {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("models.toml"), models).unwrap();
        Machine { dir }
    }

    fn local(&self) -> PathBuf {
        self.dir.path().join("prism.db")
    }

    fn prism(&self) -> Command {
        let mut c = Command::cargo_bin("prism").unwrap();
        c.env("PRISM_CONFIG_DIR", self.dir.path())
            .env("PRISM_DATA_DIR", self.dir.path())
            .env_remove("PGPASSWORD");
        c
    }
}

fn good_models(mock: &mock::Mock) -> String {
    format!(
        "[[models]]\nname = \"good\"\nprovider = \"openai\"\nbase_url = \"{u}/v1\"\nmodel = \"echo\"\n\n\
         [[models]]\nname = \"bad\"\nprovider = \"openai\"\nbase_url = \"{u}/v1\"\nmodel = \"always500\"\nmax_retries = 0\n",
        u = mock.url()
    )
}

fn client(pg: &Pg) -> postgres::Client {
    postgres::Client::connect(&pg.url(), postgres::NoTls).unwrap()
}

fn out(o: &std::process::Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    )
}

/// A real run made on the shared store by a colleague (machine A): 2 items of `good`.
fn shared_run(a: &Machine, url: &str) -> String {
    let o = a
        .prism()
        .args(["run", "--db", url, "--models", "good", "--limit", "2"])
        .args(["--no-score", "--json"])
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", out(&o));
    let mut c = postgres::Client::connect(url, postgres::NoTls).unwrap();
    c.query_one("SELECT id FROM runs ORDER BY created_at DESC LIMIT 1", &[])
        .unwrap()
        .get(0)
}

/// Plants run `id` on the shared store: `real`'s config and jobs, its models replaced by
/// `models`, every job pending and given to the first of them.
fn plant_run(c: &mut postgres::Client, real: &str, id: &str, models: Vec<Value>) {
    let cfg: String = c
        .query_one("SELECT config FROM runs WHERE id = $1", &[&real])
        .unwrap()
        .get(0);
    let mut cfg: Value = serde_json::from_str(&cfg).unwrap();
    let first = models[0]["name"].as_str().unwrap().to_string();
    cfg["models"] = Value::Array(models);
    c.execute(
        "INSERT INTO runs (id, created_at, dataset, config, status)
         SELECT $2, created_at + 1, dataset, $3, 'running' FROM runs WHERE id = $1",
        &[&real, &id, &cfg.to_string()],
    )
    .unwrap();
    c.execute(
        "INSERT INTO jobs (run_id, idx, item_id, task_id, model, sample, state)
         SELECT $2, idx, item_id, task_id, $3, sample, 'pending' FROM jobs WHERE run_id = $1",
        &[&real, &id, &first],
    )
    .unwrap();
}

/// A model as a run records it; each provider's answers are its own (the mock's `closing` for
/// OpenAI, `slow` for Anthropic, never the real run's `echo`), so none comes from the cache.
fn planted_model(name: &str, provider: &str, url: &str, key_var: &str) -> Value {
    let id = if provider == "openai" {
        "closing"
    } else {
        "slow"
    };
    json!({
        "name": name, "provider": provider, "base_url": url, "model": id,
        "api_key_env": key_var, "max_concurrency": 2, "params": {}, "max_retries": 0
    })
}

#[test]
fn a_planted_run_never_sends_a_workers_secrets_anywhere() {
    let pg = Pg::start();
    let url = pg.url();
    let ours = mock::start_background();
    let planter = mock::start_background();
    let a = Machine::new(&good_models(&ours));
    let real = shared_run(&a, &url);
    let mut c = client(&pg);
    let openai_url = format!("{}/v1", planter.url());
    plant_run(
        &mut c,
        &real,
        "rX-exfil",
        vec![planted_model(
            "exfil",
            "openai",
            &openai_url,
            "MY_SECRET_VAR",
        )],
    );
    plant_run(
        &mut c,
        &real,
        "rX-anthropic",
        vec![planted_model(
            "exfil",
            "anthropic",
            &planter.url(),
            "PGPASSWORD",
        )],
    );

    // Machine B has only `good`: the planted model is skipped, nothing is called.
    let b = Machine::new(&good_models(&ours));
    for run in ["rX-exfil", "rX-anthropic"] {
        let o = b
            .prism()
            .args(["work", run, "--db", &url, "--no-score", "--json"])
            .env("MY_SECRET_VAR", "topsecret")
            .env("PGPASSWORD", "db-password")
            .output()
            .unwrap();
        let text = out(&o);
        assert!(!o.status.success(), "{text}");
        assert!(
            text.contains("none of its models can answer here")
                && text.contains("not in this machine's models file"),
            "{text}"
        );
        assert!(!text.contains("topsecret") && !text.contains("db-password"));
    }
    assert_eq!(planter.requests(), 0, "the planter's server was called");

    // With --recorded-endpoints the recorded endpoint is called, without any key.
    for run in ["rX-exfil", "rX-anthropic"] {
        let o = b
            .prism()
            .args(["work", run, "--db", &url, "--no-score", "--json"])
            .arg("--recorded-endpoints")
            .env("MY_SECRET_VAR", "topsecret")
            .env("PGPASSWORD", "db-password")
            .output()
            .unwrap();
        let text = out(&o);
        assert!(o.status.success(), "{text}");
        assert!(
            text.contains("at the endpoint the run recorded, without an API key: exfil"),
            "{text}"
        );
    }
    assert_eq!(planter.requests(), 4, "2 jobs of each planted run");
    let seen = planter.state.auth_seen.lock().unwrap().clone();
    assert!(
        seen.is_empty(),
        "keys sent to the recorded endpoint: {seen:?}"
    );

    // A run mixing ours and a planted model: ours answers, the planted one's jobs stay.
    let mixed = vec![
        planted_model("exfil", "openai", &openai_url, "MY_SECRET_VAR"),
        json!({"name": "good", "provider": "openai", "base_url": openai_url,
               "model": "echo", "api_key_env": "MY_SECRET_VAR", "params": {}}),
    ];
    plant_run(&mut c, &real, "rX-mixed", mixed);
    c.execute(
        "UPDATE jobs SET model = 'good' WHERE run_id = 'rX-mixed' AND idx = 1",
        &[],
    )
    .unwrap();
    let o = b
        .prism()
        .args(["work", "rX-mixed", "--db", &url, "--no-score", "--json"])
        .env("MY_SECRET_VAR", "topsecret")
        .output()
        .unwrap();
    let text = out(&o);
    assert!(
        text.contains("skipped model exfil") && text.contains("stay pending"),
        "{text}"
    );
    // ... and which models file was read, so a worker that mounts it elsewhere learns why.
    assert!(
        text.contains("this machine's models file: ")
            && text.contains("models.toml (from PRISM_CONFIG_DIR)"),
        "{text}"
    );
    // `good` answered as this machine's models file says (here from the cache of the real
    // run's identical request), never at the endpoint the run recorded.
    assert!(
        text.contains("models from this machine's models file: good"),
        "{text}"
    );
    assert_eq!(planter.requests(), 4, "{text}");
    let states: Vec<(i64, String)> = c
        .query(
            "SELECT idx, state FROM jobs WHERE run_id = 'rX-mixed' ORDER BY idx",
            &[],
        )
        .unwrap()
        .iter()
        .map(|r| (r.get(0), r.get(1)))
        .collect();
    assert_eq!(
        states,
        vec![(0, "pending".to_string()), (1, "done".to_string())]
    );

    // A pulled run resumed on this machine's own store: the same rule.
    let copy = b
        .prism()
        .args(["db", "copy", &url])
        .arg(b.local())
        .args(["--run", "rX-anthropic"])
        .output()
        .unwrap();
    assert!(copy.status.success(), "{}", out(&copy));
    let cl = rusqlite_reset(&b.local(), "rX-anthropic");
    cl.execute("DELETE FROM responses WHERE run_id = 'rX-anthropic'", [])
        .unwrap();
    let o = b
        .prism()
        .args(["run", "--resume", "rX-anthropic", "--db"])
        .arg(b.local())
        .args(["--no-score", "--json"])
        .env("PGPASSWORD", "db-password")
        .output()
        .unwrap();
    let text = out(&o);
    assert!(text.contains("not in this machine's models file"), "{text}");
    assert_eq!(planter.requests(), 4, "{text}");
}

/// Sets every job of `run` in a SQLite store back to pending (as a run cut short leaves them).
fn rusqlite_reset(db: &Path, run: &str) -> rusqlite::Connection {
    let c = rusqlite::Connection::open(db).unwrap();
    c.execute("UPDATE jobs SET state = 'pending' WHERE run_id = ?1", [run])
        .unwrap();
    c
}

/// A run as a store holds it: its answers (job, text, error), its jobs' states and its scores.
type RunState = (
    Vec<(i64, Option<String>, Option<String>)>,
    Vec<(i64, String)>,
    Vec<(i64, Option<f64>)>,
);

/// A victim's local run as its store holds it.
fn local_state(db: &Path, run: &str) -> RunState {
    let c = rusqlite::Connection::open(db).unwrap();
    let answers = c
        .prepare("SELECT job_idx, text, error FROM responses WHERE run_id = ?1 ORDER BY job_idx")
        .unwrap()
        .query_map([run], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))
        .unwrap()
        .collect::<Result<Vec<_>, _>>()
        .unwrap();
    let jobs = c
        .prepare("SELECT idx, state FROM jobs WHERE run_id = ?1 ORDER BY idx")
        .unwrap()
        .query_map([run], |r| Ok((r.get(0)?, r.get(1)?)))
        .unwrap()
        .collect::<Result<Vec<_>, _>>()
        .unwrap();
    let scores = c
        .prepare("SELECT job_idx, score FROM scores WHERE run_id = ?1 ORDER BY job_idx")
        .unwrap()
        .query_map([run], |r| Ok((r.get(0)?, r.get(1)?)))
        .unwrap()
        .collect::<Result<Vec<_>, _>>()
        .unwrap();
    (answers, jobs, scores)
}

#[test]
fn planted_rows_never_rewrite_a_run_that_exists_only_on_this_machine() {
    let pg = Pg::start();
    let url = pg.url();
    let m = mock::start_background();
    let victim = Machine::new(&good_models(&m));
    // The victim's own run, on its own store: `good` answers, `bad` fails.
    let o = victim
        .prism()
        .args([
            "run", "--models", "good,bad", "--filter", "KE-*", "--limit", "3",
        ])
        .args(["--json"])
        .output()
        .unwrap();
    let mine: String = String::from_utf8_lossy(&o.stdout)
        .lines()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .find_map(|v| v["run_id"].as_str().map(str::to_string))
        .unwrap_or_else(|| panic!("no run id: {}", out(&o)));
    let before = local_state(&victim.local(), &mine);
    assert!(before.1.iter().any(|(_, s)| s == "failed"), "{before:?}");

    // A colleague's real shared run, then rows planted for the victim's run id.
    let a = Machine::new(&good_models(&m));
    let shared = shared_run(&a, &url);
    let mut c = client(&pg);
    for (idx, _) in before.1.iter().filter(|(_, s)| s == "failed") {
        c.execute(
            "INSERT INTO responses (run_id, job_idx, item_id, task_id, model, sample, text,
                 attempts, params, request_hash, cached, created_at)
             VALUES ($1, $2, 'x', 'KE-FD-01', 'bad', 0, 'PLANTED ANSWER', 1, '{}', '', false, 0)",
            &[&mine, idx],
        )
        .unwrap();
    }
    for (idx, _) in &before.1 {
        c.execute(
            "INSERT INTO scores (run_id, job_idx, item_id, task_id, model, sample, evaluator,
                 score, detail, judge_attempts, created_at)
             VALUES ($1, $2, 'x', 'KE-FD-01', 'good', 0, 'planted', 1.0, 'planted', 0, 0)",
            &[&mine, idx],
        )
        .unwrap();
    }

    // The victim works on the team's runs through its copy (tagging one pulls first; `prism
    // runs` lists the shared store itself): the shared run arrives, its own run is untouched.
    let o = victim
        .prism()
        .args(["runs", "tag", &shared, "seen", "--db", &url])
        .output()
        .unwrap();
    let text = out(&o);
    assert!(o.status.success(), "{text}");
    assert!(text.contains(&shared), "{text}");
    assert!(
        text.contains("refused rows for run(s) that exist only on this machine")
            && text.contains(&mine),
        "{text}"
    );
    assert_eq!(local_state(&victim.local(), &mine), before);

    // The same through `prism db copy` from the shared store.
    let o = victim
        .prism()
        .args(["db", "copy", &url])
        .arg(victim.local())
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", out(&o));
    assert_eq!(local_state(&victim.local(), &mine), before);
    assert!(!out(&o).contains("PLANTED"), "{}", out(&o));

    // A shared run still takes the team's rows: a score given there arrives.
    c.execute(
        "UPDATE scores SET score = 0.0, detail = 'rescored' WHERE run_id = $1 AND job_idx = 0",
        &[&shared],
    )
    .unwrap();
    let n: i64 = c
        .query_one("SELECT count(*) FROM scores WHERE run_id = $1", &[&shared])
        .unwrap()
        .get(0);
    if n == 0 {
        c.execute(
            "INSERT INTO scores (run_id, job_idx, item_id, task_id, model, sample, evaluator,
                 score, detail, judge_attempts, created_at)
             SELECT run_id, job_idx, item_id, task_id, model, sample, 'exact', 0.0, 'rescored', 0, 0
             FROM responses WHERE run_id = $1 AND job_idx = 0",
            &[&shared],
        )
        .unwrap();
    }
    let o = victim
        .prism()
        .args(["runs", "tag", &shared, "again", "--db", &url])
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", out(&o));
    let theirs = local_state(&victim.local(), &shared);
    assert_eq!(theirs.2.first().map(|s| s.1), Some(Some(0.0)), "{theirs:?}");

    // Pushed to the shared store, the victim's run is linked: rows added there come back.
    // (The planted rows make the id taken there: the push is refused, not mixed.)
    let o = victim
        .prism()
        .args(["db", "copy"])
        .arg(victim.local())
        .arg(&url)
        .args(["--run", &mine])
        .output()
        .unwrap();
    let text = out(&o);
    assert!(
        text.contains("left alone") && text.contains(&mine),
        "{text}"
    );
    assert_eq!(local_state(&victim.local(), &mine), before);
}

/// One odd value on the shared store (a status or job state a newer prism might write, a job
/// number past 2^32, a score of 5.0 or NaN) breaks no reader: it reads as "unknown", or the
/// row is refused by name, and every command goes on.
#[test]
fn odd_values_on_a_shared_store_break_no_reader() {
    let pg = Pg::start();
    let url = pg.url();
    let m = mock::start_background();
    let a = Machine::new(&good_models(&m));
    let run = shared_run(&a, &url);
    let mut c = client(&pg);
    c.batch_execute(&format!(
        "UPDATE runs SET status = 'zombie' WHERE id = '{run}';
         UPDATE jobs SET state = 'weird' WHERE run_id = '{run}' AND idx = 0;
         UPDATE jobs SET state = 'pending' WHERE run_id = '{run}' AND idx = 1;
         DELETE FROM responses WHERE run_id = '{run}' AND job_idx = 1;
         INSERT INTO scores (run_id, job_idx, item_id, task_id, model, sample, evaluator, score,
             detail, judge_attempts, created_at)
         SELECT run_id, v.idx, item_id, task_id, model, sample, 'planted', v.score, 'planted', 0, 0
         FROM responses, (VALUES (4294967296, 1.0::float8), (-1, 1.0::float8)) AS v(idx, score)
         WHERE run_id = '{run}' AND job_idx = 0;
         INSERT INTO scores (run_id, job_idx, item_id, task_id, model, sample, evaluator, score,
             detail, judge_attempts, created_at)
         SELECT run_id, job_idx, item_id, task_id, model, sample, 'planted', 5.0, 'planted', 0, 0
         FROM responses WHERE run_id = '{run}' AND job_idx = 0
         ON CONFLICT (run_id, job_idx) DO UPDATE SET score = 5.0;"
    ))
    .unwrap();
    let b = Machine::new(&good_models(&m));
    let copy = b.dir.path().join("copy.db");
    let copy_s = copy.display().to_string();
    let exports = b.dir.path().join("out");
    let exports_s = exports.display().to_string();
    for args in [
        vec!["runs", "--db", &url],
        vec!["report", "--db", &url],
        vec!["signals", "--db", &url],
        vec![
            "export",
            "--run",
            &run,
            "--prism-outputs",
            &exports_s,
            "--db",
            &url,
        ],
        vec!["db", "copy", &url, &copy_s],
    ] {
        let o = b.prism().args(&args).output().unwrap();
        let text = out(&o);
        assert!(o.status.success(), "{args:?}: {text}");
        if args[0] == "runs" {
            // Listed from the shared store itself: the odd status is read as unknown.
            assert!(text.contains("unknown"), "{text}");
        }
        if args[0] == "report" {
            let pulled = text
                .lines()
                .find(|l| l.contains("is read through"))
                .unwrap();
            assert!(!pulled.contains("  "), "{pulled}");
            assert_eq!(
                text.matches("unknown run status \"zombie\"").count(),
                1,
                "named once: {text}"
            );
            assert!(
                text.contains("out-of-range job number 4294967296"),
                "{text}"
            );
            assert!(text.contains("out-of-range score 5"), "{text}");
        }
    }
    // The local copy holds no wrapped job and no score outside 0..1.
    let l = rusqlite::Connection::open(b.local()).unwrap();
    let bad: i64 = l
        .query_row(
            "SELECT count(*) FROM scores WHERE run_id = ?1 AND (score > 1 OR score < 0 OR evaluator = 'planted' AND job_idx != 0)",
            [&run],
            |r| r.get(0),
        )
        .unwrap();
    assert_eq!(bad, 0);
    // A worker meets the odd job state and goes on with the pending job.
    let o = b
        .prism()
        .args(["work", &run, "--db", &url, "--no-score", "--json"])
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", out(&o));
    let state: String = c
        .query_one(
            "SELECT state FROM jobs WHERE run_id = $1 AND idx = 1",
            &[&run],
        )
        .unwrap()
        .get(0);
    assert_eq!(state, "done");
}

/// An answer as stored: its item, text and error.
type Stored = (String, Option<String>, Option<String>);

/// A NUL in an answer, an error message, a label's note, and in a SQLite store copied to
/// PostgreSQL (whose TEXT cannot hold one): stored as U+FFFD on both backends, the same text,
/// and nothing stalls or is refused.
#[test]
fn a_nul_is_stored_the_same_on_both_backends_and_never_stalls_a_run() {
    let pg = Pg::start();
    let mock = mock::start_background();
    let m = Machine::new(&format!(
        "[[models]]\nname = \"n\"\nprovider = \"openai\"\nbase_url = \"{}/v1\"\nmodel = \"nul\"\nmax_retries = 0\n",
        mock.url()
    ));
    let url = pg.url();
    let local = m.local();
    let texts =
        |rs: Vec<prism::store::ResponseRecord>| -> Vec<(String, Option<String>, Option<String>)> {
            rs.into_iter()
                .map(|r| (r.item_id, r.text, r.error))
                .collect()
        };
    let mut stored: Vec<Vec<Stored>> = Vec::new();
    for db in [url.as_str(), local.to_str().unwrap()] {
        let o = m
            .prism()
            .args([
                "run",
                "--db",
                db,
                "--models",
                "n",
                "--filter",
                "KE-FD-Myths",
                "--json",
            ])
            .timeout(std::time::Duration::from_secs(60))
            .output()
            .unwrap();
        // One job fails (the 400), the others answer: no stall, no retry of the store.
        assert_eq!(o.status.code(), Some(2), "{}", out(&o));
        assert!(
            !out(&o).contains("holding them and retrying"),
            "{}",
            out(&o)
        );
        let rs = if db.starts_with("postgres") {
            let mut c = client(&pg);
            let run: String = c
                .query_one("SELECT id FROM runs ORDER BY created_at DESC LIMIT 1", &[])
                .unwrap()
                .get(0);
            c.query(
                "SELECT item_id, text, error FROM responses WHERE run_id = $1 ORDER BY job_idx",
                &[&run],
            )
            .unwrap()
            .iter()
            .map(|r| (r.get(0), r.get(1), r.get(2)))
            .collect()
        } else {
            let s = prism::store::Store::open(&local).unwrap();
            let run = s.latest_run().unwrap().unwrap().id;
            texts(s.responses(&run).unwrap())
        };
        assert_eq!(rs.len(), 6);
        stored.push(rs);
    }
    assert_eq!(stored[0], stored[1], "the same text on both backends");
    for (item, text, error) in &stored[0] {
        let t = text.as_deref().or(error.as_deref()).unwrap();
        assert!(!t.contains('\0'), "{item}: {t:?}");
        // An answer keeps the place of its NUL; a server's error message is stripped of
        // control characters before it is recorded at all.
        match text {
            Some(t) => assert!(t.contains("\u{FFFD}after a NUL"), "{item}: {t:?}"),
            None => assert!(t.contains("HTTP 400: badrequest"), "{item}: {t:?}"),
        }
    }
    assert_eq!(stored[0].iter().filter(|r| r.2.is_some()).count(), 1);

    // A store written before the rule (a NUL kept raw by SQLite) copies to PostgreSQL whole.
    let old = m.dir.path().join("old.db");
    std::fs::copy(&local, &old).unwrap();
    {
        let c = rusqlite::Connection::open(&old).unwrap();
        c.execute(
            "UPDATE responses SET text = 'raw' || char(0) || 'nul' WHERE text IS NOT NULL",
            [],
        )
        .unwrap();
    }
    let pg2 = Pg::start();
    let o = m
        .prism()
        .args(["db", "copy", old.to_str().unwrap(), &pg2.url()])
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", out(&o));
    let n: i64 = postgres::Client::connect(&pg2.url(), postgres::NoTls)
        .unwrap()
        .query_one(
            "SELECT count(*) FROM responses WHERE text = 'raw' || chr(65533) || 'nul'",
            &[],
        )
        .unwrap()
        .get(0);
    assert_eq!(n, 5, "every answer copied, its NUL as U+FFFD");

    // A label whose note holds a NUL, imported to the shared store.
    let run: String = client(&pg)
        .query_one("SELECT id FROM runs LIMIT 1", &[])
        .unwrap()
        .get(0);
    let file = m.dir.path().join("labels.jsonl");
    std::fs::write(
        &file,
        format!(
            "{}\n",
            json!({"run": run, "job": 0, "reviewer": "ann", "label": "correct", "note": "a\u{0}b"})
        ),
    )
    .unwrap();
    let o = m
        .prism()
        .args(["labels", "--db", &url, "import"])
        .arg(&file)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", out(&o));
    let note: String = client(&pg)
        .query_one("SELECT note FROM answer_labels", &[])
        .unwrap()
        .get(0);
    assert_eq!(note, "a\u{FFFD}b");
}
