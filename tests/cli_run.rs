//! `prism run`, `models`, `export` and `import` as a user runs them, against the mock server.

mod common;

use std::path::{Path, PathBuf};
use std::process::{Command as StdCommand, Stdio};
use std::time::{Duration, Instant};

use assert_cmd::Command;
use common::mock;
use prism::store::Store;

struct Env {
    dir: tempfile::TempDir,
    mock: mock::Mock,
}

impl Env {
    fn new() -> Env {
        let mock = mock::start_background();
        let dir = tempfile::tempdir().unwrap();
        let models = format!(
            r#"
[[models]]
name = "stub"
provider = "openai"
base_url = "{url}/v1"
model = "echo"
api_key_env = "PRISM_CLI_STUB_KEY"
max_concurrency = 64

[[models]]
name = "flaky"
provider = "openai"
base_url = "{url}/v1"
model = "flaky500"

[[models]]
name = "broken"
provider = "openai"
base_url = "{url}/v1"
model = "always500"
max_retries = 1

[[models]]
name = "slow"
provider = "openai"
base_url = "{url}/v1"
model = "slow"
max_concurrency = 2

[[models]]
name = "claude"
provider = "anthropic"
base_url = "{url}"
model = "echo"
api_key_env = "PRISM_CLI_UNSET_KEY"
"#,
            url = mock.url()
        );
        std::fs::write(dir.path().join("models.toml"), models).unwrap();
        Env { dir, mock }
    }

    /// `prism run ARGS` as a child process on this environment, its stdout piped.
    fn spawn(&self, args: &[&str], stderr: Stdio) -> std::process::Child {
        StdCommand::new(assert_cmd::cargo::cargo_bin("prism"))
            .args(args)
            .env("PRISM_CONFIG_DIR", self.dir.path())
            .env("PRISM_DATA_DIR", self.dir.path())
            .stdout(Stdio::piped())
            .stderr(stderr)
            .spawn()
            .unwrap()
    }

    fn db(&self) -> PathBuf {
        self.dir.path().join("prism.db")
    }

    fn prism(&self) -> Command {
        let mut c = Command::cargo_bin("prism").unwrap();
        c.env("PRISM_CONFIG_DIR", self.dir.path())
            .env("PRISM_DATA_DIR", self.dir.path())
            .env("PRISM_CLI_STUB_KEY", "sk-cli-SECRET-777")
            .env_remove("PRISM_CLI_UNSET_KEY");
        c
    }
}

fn stdout(out: &assert_cmd::assert::Assert) -> String {
    String::from_utf8(out.get_output().stdout.clone()).unwrap()
}

fn stderr(out: &assert_cmd::assert::Assert) -> String {
    String::from_utf8(out.get_output().stderr.clone()).unwrap()
}

#[test]
fn models_lists_key_status_but_never_the_key() {
    let env = Env::new();
    let out = env.prism().arg("models").assert().success();
    let s = stdout(&out);
    assert!(s.contains("PRISM_CLI_STUB_KEY set"), "{s}");
    assert!(s.contains("PRISM_CLI_UNSET_KEY NOT SET"), "{s}");
    assert!(!s.contains("sk-cli-SECRET-777"));
}

#[test]
fn models_prints_one_row_per_model_whatever_its_name_holds() {
    let env = Env::new();
    std::fs::write(
        env.dir.path().join("models.toml"),
        "[[models]]\nname = \"a\\nb  openai  forged  http://evil\\r\\n\"\nprovider = \"openai\"\n\
         base_url = \"http://127.0.0.1:9/v1\"\nmodel = \"id\\nwith a break\"\n",
    )
    .unwrap();
    let out = env.prism().arg("models").assert().success();
    let s = stdout(&out);
    // Every row ends with its key's status: no line break in a name or id starts a row of its
    // own (the built-in local models are listed too).
    for row in s.lines().skip(1) {
        assert!(row.ends_with("not needed"), "a forged row: {row:?} in {s}");
    }
    assert!(s.contains("a b  openai  forged"), "{s}");
    assert!(s.contains("id with a break"), "{s}");
}

#[test]
fn run_prints_json_events_and_exits_0_then_the_cache_answers() {
    let env = Env::new();
    let out = env
        .prism()
        .args([
            "run", "--models", "stub", "--filter", "KE-FD-*", "--limit", "5", "--json",
        ])
        .assert()
        .code(0);
    let lines: Vec<serde_json::Value> = stdout(&out)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(lines[0]["event"], "started");
    assert_eq!(lines[0]["jobs"], 5);
    let last = lines.last().unwrap();
    assert_eq!(last["event"], "finished");
    assert_eq!(last["done"], 5);
    let run_id = last["run_id"].as_str().unwrap().to_string();
    assert_eq!(lines.iter().filter(|l| l["event"] == "done").count(), 5);
    let requests = env.mock.requests();
    assert_eq!(requests, 5);

    // The same run again costs nothing.
    let out = env
        .prism()
        .args([
            "run", "--models", "stub", "--filter", "KE-FD-*", "--limit", "5", "--json",
        ])
        .assert()
        .code(0);
    let last: serde_json::Value =
        serde_json::from_str(stdout(&out).lines().last().unwrap()).unwrap();
    assert_eq!(last["cache_hits"], 5);
    assert_eq!(env.mock.requests(), requests);

    // The key is nowhere in the store (nor in its WAL, if one is left).
    for f in [env.db(), env.db().with_extension("db-wal")] {
        let bytes = std::fs::read(&f).unwrap_or_default();
        assert!(!bytes.windows(8).any(|w| w == b"sk-cli-S"), "{f:?}");
    }
    let s = Store::open(&env.db()).unwrap();
    assert_eq!(s.responses(&run_id).unwrap().len(), 5);
    // Each answer was scored as it arrived: a score line after its answer, the score stored,
    // and the summary says what they came to.
    let scored: Vec<_> = lines.iter().filter(|l| l["event"] == "scored").collect();
    assert_eq!(scored.len(), 5, "{lines:?}");
    for sc in &scored {
        let at = |f: &dyn Fn(&serde_json::Value) -> bool| lines.iter().position(f).unwrap();
        let done = at(&|l| l["event"] == "done" && l["job"] == sc["job"]);
        assert!(done < at(&|l| l == *sc), "{sc}");
    }
    assert_eq!(s.scores(Some(&run_id)).unwrap().len(), 5);
    assert!(stderr(&out).contains("scores: "), "{}", stderr(&out));

    // --no-score leaves them to `prism score`; a judge that is not configured is named.
    let out = env
        .prism()
        .args([
            "run",
            "--models",
            "stub",
            "--limit",
            "2",
            "--json",
            "--no-score",
        ])
        .assert()
        .code(0);
    assert!(!stdout(&out).contains("\"scored\""), "{}", stdout(&out));
    let out = env
        .prism()
        .args([
            "run", "--models", "stub", "--limit", "2", "--judge", "nosuch",
        ])
        .assert()
        .code(1);
    assert!(
        stderr(&out).contains("no model \"nosuch\" to judge with"),
        "{}",
        stderr(&out)
    );
}

/// Plain-HTTP endpoints get a client of prism's own, unless the environment names an HTTP
/// proxy: then requests go through the proxy, as they would with any other tool.
#[test]
fn an_http_proxy_from_the_environment_is_used() {
    let env = Env::new();
    let proxy = mock::start_background();
    let out = env
        .prism()
        .env("http_proxy", proxy.url())
        .env_remove("HTTP_PROXY")
        .env_remove("no_proxy")
        .env_remove("NO_PROXY")
        .args(["run", "--models", "stub", "--limit", "3", "--json"])
        .assert()
        .code(0);
    let last: serde_json::Value =
        serde_json::from_str(stdout(&out).lines().last().unwrap()).unwrap();
    assert_eq!(last["done"], 3);
    assert_eq!(proxy.requests(), 3, "every request went through the proxy");
    assert_eq!(env.mock.requests(), 0);
}

#[test]
fn exit_2_lists_failures_and_1_when_it_cannot_start() {
    let env = Env::new();
    let out = env
        .prism()
        .args(["run", "--models", "stub,broken", "--limit", "2"])
        .assert()
        .code(2);
    let err = stderr(&out);
    assert!(err.contains("2 failed"), "{err}");
    assert!(err.contains("failed: KE-FD-Myths-0001 on broken"), "{err}");
    assert!(err.contains("HTTP 500"), "{err}");

    let out = env
        .prism()
        .args(["run", "--models", "nope"])
        .assert()
        .code(1);
    assert!(stderr(&out).contains("unknown model \"nope\""));
    let out = env
        .prism()
        .args(["run", "--models", "claude"])
        .assert()
        .code(1);
    let err = stderr(&out);
    assert!(
        err.contains("claude") && err.contains("PRISM_CLI_UNSET_KEY"),
        "{err}"
    );
    let out = env
        .prism()
        .args(["run", "--models", "stub", "--filter", "ZZ-*"])
        .assert()
        .code(1);
    assert!(stderr(&out).contains("no items match"));
    env.prism()
        .args(["run", "--models", "stub", "--shots", "2"])
        .assert()
        .code(2); // clap usage error
}

#[test]
fn retries_show_as_events() {
    let env = Env::new();
    let out = env
        .prism()
        .args(["run", "--models", "flaky", "--limit", "2", "--json"])
        .assert()
        .code(0);
    let s = stdout(&out);
    assert_eq!(s.matches("\"event\":\"retrying\"").count(), 2, "{s}");
    assert!(s.contains("HTTP 500"));
}

#[test]
fn export_then_import_round_trips_the_official_layout() {
    let env = Env::new();
    let out = env
        .prism()
        .args([
            "run",
            "--models",
            "stub,broken",
            "--filter",
            "RE-LF-*,IFE-LC-*",
            "--json",
        ])
        .assert()
        .code(2);
    let last: serde_json::Value =
        serde_json::from_str(stdout(&out).lines().last().unwrap()).unwrap();
    let run_id = last["run_id"].as_str().unwrap();
    let outdir = env.dir.path().join("outputs");
    env.prism()
        .args(["export", "--run", run_id, "--prism-outputs"])
        .arg(&outdir)
        .assert()
        .success();
    let f = outdir.join("stub/responses/RE-LF-Syllogisms.jsonl");
    let text = std::fs::read_to_string(&f).unwrap();
    let rows: Vec<serde_json::Value> = text
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(rows.len(), 5);
    assert_eq!(rows[0]["id"], "RE-LF-Syllogisms-0001");
    assert!(rows[0]["response"].as_str().unwrap().starts_with("ANSWER("));
    let broken =
        std::fs::read_to_string(outdir.join("broken/responses/IFE-LC-WordBudget.jsonl")).unwrap();
    assert!(broken.contains("\"ERROR: HTTP 500"), "{broken}");

    // Import into a fresh store: same answers, errors kept as errors.
    let db2 = env.dir.path().join("other.db");
    let out = env
        .prism()
        .args(["import", "--prism-outputs"])
        .arg(&outdir)
        .arg("--db")
        .arg(&db2)
        .assert()
        .success();
    let new_id = stdout(&out).trim().to_string();
    let s = Store::open(&db2).unwrap();
    let rs = s.responses(&new_id).unwrap();
    assert_eq!(rs.len(), 18);
    assert_eq!(rs.iter().filter(|r| !r.is_ok()).count(), 9);
    let run = s.run(&new_id).unwrap().unwrap();
    assert_eq!(run.status, prism::store::RunStatus::Imported);
    assert!(run.config.models.iter().all(|m| m.is_imported()));
    let names: Vec<_> = run.config.models.iter().map(|m| m.name.as_str()).collect();
    assert_eq!(names, vec!["broken", "stub"]);

    // A malformed line is reported by file and line; the rest imports.
    std::fs::write(
        outdir.join("stub/responses/RE-LF-Syllogisms.jsonl"),
        "{\"id\": \"x\", \"response\": \"y\"}\nnope\n",
    )
    .unwrap();
    let out = env
        .prism()
        .args(["import", "--prism-outputs"])
        .arg(&outdir)
        .arg("--db")
        .arg(&db2)
        .assert()
        .code(2);
    assert!(
        stderr(&out).contains("RE-LF-Syllogisms.jsonl:2: -: invalid JSON"),
        "{}",
        stderr(&out)
    );
}

/// Counts rows with a given state, straight from SQLite.
/// Reads a `prism run --json` child's events until `n` answers are done; returns the run id and
/// the child's stdout, which the caller keeps open (a closed pipe would fail the child's next
/// event).
fn run_id_after_done(
    child: &mut std::process::Child,
    n: usize,
) -> (String, std::io::BufReader<std::process::ChildStdout>) {
    use std::io::BufRead;
    let mut reader = std::io::BufReader::new(child.stdout.take().unwrap());
    let (mut run_id, mut done, mut line) = (String::new(), 0, String::new());
    while done < n {
        line.clear();
        assert!(reader.read_line(&mut line).unwrap() > 0, "run ended early");
        let v: serde_json::Value = serde_json::from_str(&line).unwrap();
        if v["event"] == "started" {
            run_id = v["run_id"].as_str().unwrap().to_string();
        }
        if v["event"] == "done" {
            done += 1;
        }
    }
    (run_id, reader)
}

fn job_states(db: &Path, run: &str) -> (usize, usize, usize) {
    let c = Store::open(db).unwrap().job_counts(run).unwrap();
    (c.done, c.failed, c.pending)
}

#[test]
fn resume_after_kill_9_finishes_without_redoing_finished_jobs() {
    let env = Env::new();
    let mut child = env.spawn(
        &["run", "--models", "slow", "--limit", "40", "--json"],
        Stdio::null(),
    );
    // Read events until some jobs are done, then kill -9.
    use std::io::BufRead;
    let mut reader = std::io::BufReader::new(child.stdout.take().unwrap());
    let mut run_id = String::new();
    let mut done = 0;
    let start = Instant::now();
    let mut line = String::new();
    while done < 6 {
        line.clear();
        assert!(reader.read_line(&mut line).unwrap() > 0, "run ended early");
        let v: serde_json::Value = serde_json::from_str(&line).unwrap();
        if v["event"] == "started" {
            run_id = v["run_id"].as_str().unwrap().to_string();
        }
        if v["event"] == "done" {
            done += 1;
        }
        assert!(start.elapsed() < Duration::from_secs(30));
    }
    child.kill().unwrap(); // SIGKILL
    child.wait().unwrap();
    let (d, f, pending) = job_states(&env.db(), &run_id);
    assert!(
        d >= 6 && pending > 0 && f == 0,
        "done {d} pending {pending}"
    );
    let before: Vec<(String, usize)> = Store::open(&env.db())
        .unwrap()
        .responses(&run_id)
        .unwrap()
        .iter()
        .map(|r| {
            let q = r.item_id.clone();
            (q, 0)
        })
        .collect();
    let requests_before = env.mock.requests();

    env.prism()
        .args(["run", "--resume", &run_id, "--json"])
        .assert()
        .code(0);
    assert_eq!(job_states(&env.db(), &run_id), (40, 0, 0));
    // Exactly the unfinished jobs were requested again.
    assert_eq!(env.mock.requests() - requests_before, 40 - d);
    // And the finished ones kept their first answer (one request each in total).
    for (item, _) in before {
        let s = Store::open(&env.db()).unwrap();
        let r = s.responses_for_item(&item).unwrap();
        assert_eq!(r.len(), 1);
        assert_eq!(r[0].attempts, 1);
    }
}

/// Two `--resume` of one run: the second refuses (the first holds the run's lock) instead of
/// sending every pending job again.
#[test]
fn a_run_is_resumed_by_one_process_at_a_time() {
    let env = Env::new();
    // A slow run, interrupted: its jobs stay pending.
    let mut child = env.spawn(
        &["run", "--models", "slow", "--limit", "30", "--json"],
        Stdio::null(),
    );
    use std::io::BufRead;
    let mut reader = std::io::BufReader::new(child.stdout.take().unwrap());
    let mut line = String::new();
    reader.read_line(&mut line).unwrap();
    let started: serde_json::Value = serde_json::from_str(&line).unwrap();
    let run_id = started["run_id"].as_str().unwrap().to_string();
    // While it runs, a resume of the same run is refused, naming the holder, with the exit
    // code that says "run it again later" (75, EX_TEMPFAIL), not "fix something" (1).
    let out = env
        .prism()
        .args(["run", "--resume", &run_id, "--json"])
        .assert()
        .code(75);
    let err = stderr(&out);
    assert!(
        err.contains("is being run by another prism")
            && err.contains(&format!("pid {}", child.id())),
        "{err}"
    );
    // Killed (-9): the lock's holder is gone, so the resume goes ahead at once.
    child.kill().unwrap();
    child.wait().unwrap();
    let requests_before = env.mock.requests();
    let (d, _, _) = job_states(&env.db(), &run_id);
    env.prism()
        .args(["run", "--resume", &run_id, "--json"])
        .assert()
        .code(0);
    assert_eq!(job_states(&env.db(), &run_id), (30, 0, 0));
    assert_eq!(env.mock.requests() - requests_before, 30 - d);
}

/// An imported run has no endpoint: resuming it without naming a model is refused (it never
/// falls back to a public API); with --models, the named model answers what failed.
#[test]
fn an_imported_run_resumes_only_with_a_model_the_user_names() {
    let env = Env::new();
    let outdir = env.dir.path().join("outputs");
    let dir = outdir.join("gpt-4o/responses");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(
        dir.join("KE-FD-Myths.jsonl"),
        "{\"id\": \"KE-FD-Myths-0001\", \"response\": \"No.\"}\n{\"id\": \"KE-FD-Myths-0002\", \"response\": \"ERROR: HTTP 500\"}\n",
    )
    .unwrap();
    let out = env
        .prism()
        .args(["import", "--prism-outputs"])
        .arg(&outdir)
        .assert()
        .success();
    let id = stdout(&out).trim().to_string();
    let requests = env.mock.requests();
    let out = env
        .prism()
        .args(["run", "--resume", &id, "--json"])
        .assert()
        .code(1);
    let err = stderr(&out);
    assert!(
        err.contains("\"gpt-4o\" was imported from files") && err.contains("--models NAME"),
        "{err}"
    );
    assert_eq!(env.mock.requests(), requests, "nothing was sent anywhere");
    env.prism()
        .args(["run", "--resume", &id, "--models", "stub", "--json"])
        .assert()
        .code(0);
    assert_eq!(env.mock.requests(), requests + 1, "only the failed job");
    let s = Store::open(&env.db()).unwrap();
    let rs = s.responses(&id).unwrap();
    let redone = rs.iter().find(|r| r.item_id == "KE-FD-Myths-0002").unwrap();
    assert_eq!(redone.model, "gpt-4o", "answers keep the run's model name");
    assert!(redone.text.as_deref().unwrap().starts_with("ANSWER("));
}

/// SIGTERM (`kill`, a shutdown) and SIGHUP (the ssh session closed) stop `prism run` as ctrl-c
/// does: exit 130, the run marked interrupted (`cancelled`, resumable) rather than left
/// `running`, what finished kept; `--resume` then finishes it.
#[test]
fn sigterm_and_sighup_interrupt_a_run_that_then_resumes() {
    use std::io::BufRead;
    for sig in [libc::SIGTERM, libc::SIGHUP] {
        let env = Env::new();
        let mut child = env.spawn(
            &["run", "--models", "slow", "--limit", "30", "--json"],
            Stdio::piped(),
        );
        let mut reader = std::io::BufReader::new(child.stdout.take().unwrap());
        let (mut run_id, mut done, mut line) = (String::new(), 0, String::new());
        while done < 3 {
            line.clear();
            assert!(reader.read_line(&mut line).unwrap() > 0, "run ended early");
            let v: serde_json::Value = serde_json::from_str(&line).unwrap();
            if v["event"] == "started" {
                run_id = v["run_id"].as_str().unwrap().to_string();
            }
            done += usize::from(v["event"] == "done");
        }
        assert_eq!(unsafe { libc::kill(child.id() as i32, sig) }, 0);
        let mut rest = String::new();
        std::io::Read::read_to_string(&mut reader, &mut rest).unwrap();
        let out = child.wait_with_output().unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(130), "signal {sig}: {err}");
        assert!(
            err.contains("interrupted; finish it with: prism run --resume"),
            "{err}"
        );
        let run = Store::open(&env.db())
            .unwrap()
            .run(&run_id)
            .unwrap()
            .unwrap();
        assert_eq!(
            run.status,
            prism::store::RunStatus::Cancelled,
            "signal {sig}"
        );
        let (d, f, pending) = job_states(&env.db(), &run_id);
        assert!(
            d >= 3 && f == 0 && pending > 0,
            "done {d} pending {pending}"
        );
        env.prism()
            .args(["run", "--resume", &run_id, "--json"])
            .assert()
            .code(0);
        assert_eq!(job_states(&env.db(), &run_id), (30, 0, 0));
    }
}

/// A run started with `--no-cache` resumes without the cache as well: its resumed jobs are
/// fetched anew, not copied from another run's answers in the cache.
#[test]
fn a_no_cache_run_resumes_without_the_cache() {
    let env = Env::new();
    // A finished run fills the cache for the first 30 items.
    env.prism()
        .args(["run", "--models", "slow", "--limit", "30", "--json"])
        .assert()
        .code(0);
    // The same items with --no-cache, killed after a few answers.
    let mut child = env.spawn(
        &[
            "run",
            "--models",
            "slow",
            "--limit",
            "30",
            "--no-cache",
            "--json",
        ],
        Stdio::null(),
    );
    let (run_id, _events) = run_id_after_done(&mut child, 4);
    child.kill().unwrap();
    child.wait().unwrap();
    let (d, _, pending) = job_states(&env.db(), &run_id);
    assert!(pending > 0, "done {d}");
    let requests_before = env.mock.requests();
    let out = env
        .prism()
        .args(["run", "--resume", &run_id])
        .assert()
        .code(0);
    let err = stderr(&out);
    assert!(err.contains("(0 from cache)"), "{err}");
    assert_eq!(job_states(&env.db(), &run_id), (30, 0, 0));
    assert_eq!(env.mock.requests() - requests_before, 30 - d);
}

/// A run that loses its lock while it works (it stalled past the lock's staleness and a
/// `--resume` elsewhere took the run over, as after `kill -STOP` for a minute) stops at its next
/// write instead of finishing the run beside the new holder, and says why.
#[test]
fn a_run_whose_lock_is_taken_over_stops_writing_and_says_so() {
    let env = Env::new();
    let mut child = env.spawn(
        &["run", "--models", "slow", "--limit", "200", "--json"],
        Stdio::piped(),
    );
    let (run_id, _events) = run_id_after_done(&mut child, 4);
    // Another prism takes the lock over as a resume does once the lock is stale.
    let mut store = Store::open(&env.db()).unwrap();
    let thief = prism::store::Holder {
        owner: "another-prism".into(),
        host: "elsewhere".into(),
        pid: 1,
    };
    let later = prism::store::now_secs() + prism::store::STALE_AFTER_SECS + 1;
    assert_eq!(
        store.lock_run(&run_id, &thief, later, |_| true).unwrap(),
        Ok(())
    );
    let (at_takeover, _, _) = job_states(&env.db(), &run_id);
    let mut err = String::new();
    std::io::Read::read_to_string(&mut child.stderr.take().unwrap(), &mut err).unwrap();
    let status = child.wait().unwrap();
    assert_eq!(status.code(), Some(1), "{err}");
    assert!(
        err.contains(&format!("run {run_id} was taken over by another prism")),
        "{err}"
    );
    // At most the group commit already under way when the lock changed hands landed after.
    let (after, _, pending) = job_states(&env.db(), &run_id);
    assert!(
        after <= at_takeover + 2 && pending >= 50,
        "done {at_takeover} at the takeover, {after} after, {pending} pending"
    );
    // The lock and the run's status stay the new holder's.
    assert_eq!(
        store.lock_owner(&run_id).unwrap().as_deref(),
        Some("another-prism")
    );
}

/// A job that failed after its retries is an answer that failed: it scores 0 and stays in the
/// denominator (PRISM-FORMAT.md), so a model whose every job failed hallucinates on all of them.
#[test]
fn a_failed_job_scores_zero_and_counts() {
    let env = Env::new();
    env.prism()
        .args([
            "run",
            "--models",
            "stub,broken",
            "--filter",
            "KE-FD-*",
            "--limit",
            "3",
        ])
        .assert()
        .code(2);
    let out = env.prism().args(["score", "--json"]).assert().success();
    let v: serde_json::Value = serde_json::from_str(&stdout(&out)).unwrap();
    let broken = v["models"]
        .as_array()
        .unwrap()
        .iter()
        .find(|m| m["model"] == "broken")
        .unwrap_or_else(|| panic!("{v}"));
    let tasks = broken["task_scores"].as_object().unwrap();
    assert!(!tasks.is_empty(), "{broken}");
    assert!(tasks.values().all(|s| s.as_f64() == Some(0.0)), "{broken}");
}
