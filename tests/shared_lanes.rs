//! The other lanes on a shared store (issue 25): `prism autohall`, `selfcheck`, `detect`,
//! `self-detect` with `--db postgres://...` against a real PostgreSQL server and the mock's
//! scripted models. Two "machines" (two data directories, each its own local store): what one
//! machine's lane saves is on the shared store while it runs; killed with kill -9, its run is
//! resumed by the other machine, which asks nothing the first had finished; the shared store
//! ends with every row, read back the same by a third machine and by the TUI's mirror.

mod common;

use std::path::{Path, PathBuf};
use std::process::{Child, Command as StdCommand, Stdio};
use std::time::{Duration, Instant};

use assert_cmd::Command;
use common::{mock, pg::Pg};
use prism::detect::run::Stored;
use prism::store::Store;

fn models(mock: &mock::Mock) -> String {
    format!(
        "[[models]]\nname = \"ahslow\"\nprovider = \"openai\"\nbase_url = \"{u}/v1\"\nmodel = \"autohallslow\"\nmax_concurrency = 2\n\n\
         [[models]]\nname = \"ah\"\nprovider = \"openai\"\nbase_url = \"{u}/v1\"\nmodel = \"autohall\"\nmax_concurrency = 8\n\n\
         [[models]]\nname = \"sc\"\nprovider = \"openai\"\nbase_url = \"{u}/v1\"\nmodel = \"selfcheck\"\n\n\
         [[models]]\nname = \"e\"\nprovider = \"openai\"\nbase_url = \"{u}/v1\"\nmodel = \"echo\"\n\n\
         [[models]]\nname = \"j\"\nprovider = \"openai\"\nbase_url = \"{u}/v1\"\nmodel = \"judge\"\n",
        u = mock.url()
    )
}

/// A machine: its own config and data directory (so its own local store).
struct Machine {
    dir: tempfile::TempDir,
}

impl Machine {
    fn new(mock: &mock::Mock) -> Machine {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("models.toml"), models(mock)).unwrap();
        Machine { dir }
    }

    fn local(&self) -> PathBuf {
        self.dir.path().join("prism.db")
    }

    fn prism(&self) -> Command {
        let mut c = Command::cargo_bin("prism").unwrap();
        c.env("PRISM_CONFIG_DIR", self.dir.path())
            .env("PRISM_DATA_DIR", self.dir.path());
        c
    }
}

fn claims(dir: &Path, n: usize) -> PathBuf {
    let lines: Vec<String> = (0..n)
        .map(|i| {
            format!(
                r#"{{"id": "c{i}", "claim": "Claim number {i} [[conflict2]]", "label": {}, "topic": "t"}}"#,
                i % 2 == 0
            )
        })
        .collect();
    let p = dir.join("claims.jsonl");
    std::fs::write(&p, lines.join("\n")).unwrap();
    p
}

fn client(pg: &Pg) -> postgres::Client {
    postgres::Client::connect(&pg.url(), postgres::NoTls).unwrap()
}

fn count(c: &mut postgres::Client, table: &str, run: &str) -> i64 {
    c.query_one(
        &format!("SELECT count(*) FROM {table} WHERE run_id = $1"),
        &[&run],
    )
    .unwrap()
    .get(0)
}

/// A run of `n` sample items against the mock's echo model, made on the shared store by
/// machine `m`; a client on the store.
fn shared_run(m: &Machine, pg: &Pg, n: usize) -> postgres::Client {
    let n = n.to_string();
    let url = pg.url();
    ok(&m
        .prism()
        .args([
            "run", "--models", "e", "--limit", &n, "--json", "--db", &url,
        ])
        .output()
        .unwrap());
    client(pg)
}

fn ok(out: &std::process::Output) -> String {
    let err = String::from_utf8_lossy(&out.stderr).into_owned();
    assert_eq!(out.status.code(), Some(0), "{err}");
    err
}

/// `prism autohall FILE --db URL` on machine `m` with the slow model (8 claims x K = 6: 48
/// pairs), read until its run started and `pairs` pair verdicts came; the process and the run.
/// What it says goes to `autohall.err` in the machine's directory.
fn slow_autohall(m: &Machine, file: &Path, url: &str, pairs: usize) -> (Child, String) {
    let mut child = StdCommand::new(assert_cmd::cargo::cargo_bin("prism"))
        .arg("autohall")
        .arg(file)
        .args(["--models", "ahslow", "--temperature", "0.5", "-k", "6"])
        .args(["--json", "--db", url])
        .env("PRISM_CONFIG_DIR", m.dir.path())
        .env("PRISM_DATA_DIR", m.dir.path())
        .stdout(Stdio::piped())
        .stderr(std::fs::File::create(m.dir.path().join("autohall.err")).unwrap())
        .spawn()
        .unwrap();
    use std::io::BufRead;
    let mut reader = std::io::BufReader::new(child.stdout.take().unwrap());
    let (mut id, mut seen, mut line) = (String::new(), 0, String::new());
    let start = Instant::now();
    while id.is_empty() || seen < pairs {
        line.clear();
        assert!(reader.read_line(&mut line).unwrap() > 0, "ended early");
        let v: serde_json::Value = serde_json::from_str(&line).unwrap();
        if v["event"] == "started" {
            id = v["detect_id"].as_str().unwrap().to_string();
        }
        if v["event"] == "pair" {
            seen += 1;
        }
        assert!(start.elapsed() < Duration::from_secs(60));
    }
    // The rest of its output is not read: a pipe left full would stall it.
    std::thread::spawn(move || std::io::copy(&mut reader, &mut std::io::sink()));
    (child, id)
}

#[test]
fn autohall_on_a_shared_store_is_pushed_as_it_runs_and_resumed_by_another_machine() {
    let pg = Pg::start();
    let mock = mock::start_background();
    let (a, b, c) = (
        Machine::new(&mock),
        Machine::new(&mock),
        Machine::new(&mock),
    );
    let file = claims(a.dir.path(), 8);
    let url = pg.url();
    let (mut child, id) = slow_autohall(&a, &file, &url, 10);
    // Pushed as it runs: the shared store has the run, its 8 targets and pair verdicts while
    // the lane is still working.
    let mut db = client(&pg);
    let deadline = Instant::now() + Duration::from_secs(10);
    while count(&mut db, "detect_pairs", &id) < 10 {
        assert!(
            Instant::now() < deadline,
            "pairs never reached the shared store"
        );
        std::thread::sleep(Duration::from_millis(100));
    }
    assert_eq!(count(&mut db, "detect_targets", &id), 8);
    child.kill().unwrap();
    child.wait().unwrap();
    // What the team has of A's work is what reached the shared store before the kill (a row
    // A committed in the last moment and had not pushed yet stays on A, pushed when A resumes
    // it): that much B must keep as it is.
    let a_local = Stored::load(&prism::store::Db::file(&a.local()), &id).unwrap();
    let on_shared = a.dir.path().join("shared-at-kill.db");
    a.prism()
        .args(["db", "copy", &url])
        .arg(&on_shared)
        .args(["--run", &id])
        .assert()
        .success();
    let before = Stored::load(&prism::store::Db::file(&on_shared), &id).unwrap();
    assert!(before.pairs.len() >= 10 && before.pairs.len() <= a_local.pairs.len());
    assert!(before.pairs.len() < 48, "killed before the end");
    // Another machine resumes the run from the shared store (the dead holder's lock is taken
    // over: its process is gone); nothing A finished is asked again.
    let requests = mock.requests();
    let out = b
        .prism()
        .args(["autohall", "--resume", &id, "--json", "--db", &url])
        .output()
        .unwrap();
    let err = ok(&out);
    // Every change went as it was saved: none was left for the check at the end.
    assert!(
        err.contains("change(s) pushed as they were saved") && !err.contains("missed row(s)"),
        "{err}"
    );
    assert!(!err.contains(&pg_password(&url)), "{err}");
    let done = Stored::load(&prism::store::Db::file(&b.local()), &id).unwrap();
    assert_eq!(done.samples.len(), 48);
    assert_eq!(done.pairs.len(), 48);
    // Each remaining pair is one request (the judge is the model; samples too): fewer than the
    // whole run's, and A's stored samples and verdicts are unchanged on B.
    let asked = mock.requests() - requests;
    assert!(asked > 0 && asked < 8 + 8 + 48 + 48, "{asked}");
    for s in &before.samples {
        assert!(done.samples.contains(s), "{s:?} kept as A stored it");
    }
    for p in &before.pairs {
        assert!(done.pairs.contains(p), "{p:?} kept as A stored it");
    }
    // The shared store has every row, as B has them: a third machine copies it back.
    assert_eq!(count(&mut db, "detect_samples", &id), 48);
    assert_eq!(count(&mut db, "detect_pairs", &id), 48);
    assert_eq!(
        db.query_one("SELECT count(*) FROM lane_locks", &[])
            .unwrap()
            .get::<_, i64>(0),
        0,
        "the run was let go"
    );
    c.prism()
        .args(["db", "copy", &url, c.local().to_str().unwrap()])
        .assert()
        .success();
    let copied = Stored::load(&prism::store::Db::file(&c.local()), &id).unwrap();
    assert_eq!(copied.targets, done.targets);
    assert_eq!(copied.samples, done.samples);
    assert_eq!(copied.pairs, done.pairs);
    // The TUI's mirror pulls the same into a machine's store.
    let fresh = tempfile::tempdir().unwrap();
    let mirror_db = fresh.path().join("m.db");
    let mirror = prism::store::Db::open(Some(Path::new(&url)), &mirror_db).unwrap();
    let pulled = mirror.pull_all().unwrap().unwrap();
    assert_eq!(pulled.lane_rows, 1 + 8 + 48 + 48, "{pulled:?}");
    assert_eq!(
        mirror.pull_all().unwrap().unwrap().lane_rows,
        0,
        "nothing twice"
    );
    let mirrored = Stored::load(&prism::store::Db::file(&mirror_db), &id).unwrap();
    assert_eq!(mirrored.pairs, done.pairs);
    // The report reads on a third machine straight from the shared store.
    let out = c
        .prism()
        .args(["autohall", "--reread", &id, "--db", &url])
        .output()
        .unwrap();
    ok(&out);
}

/// The password of a test server's URL (none: the test servers trust local connections, so
/// this is the user name, which is at least never printed as part of a URL with a password).
fn pg_password(url: &str) -> String {
    url.split("://")
        .nth(1)
        .and_then(|r| r.split('@').next())
        .and_then(|u| u.split(':').nth(1))
        .unwrap_or("\u{0}no password\u{0}")
        .to_string()
}

#[test]
fn a_run_held_by_a_live_process_is_refused() {
    let pg = Pg::start();
    let mock = mock::start_background();
    let (a, b) = (Machine::new(&mock), Machine::new(&mock));
    let file = claims(a.dir.path(), 8);
    let url = pg.url();
    let (mut child, id) = slow_autohall(&a, &file, &url, 0);
    // Wait for the run to be on the shared store, then try to resume it elsewhere.
    let mut db = client(&pg);
    let deadline = Instant::now() + Duration::from_secs(10);
    while count(&mut db, "detect_targets", &id) == 0 {
        assert!(Instant::now() < deadline);
        std::thread::sleep(Duration::from_millis(100));
    }
    let out = b
        .prism()
        .args(["autohall", "--resume", &id, "--json", "--db", &url])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(
        err.contains(&format!(
            "detection run {id} is being worked on by process {}",
            child.id()
        )),
        "{err}"
    );
    child.kill().unwrap();
    child.wait().unwrap();
}

#[test]
fn self_detection_and_answer_checks_on_a_shared_store() {
    let pg = Pg::start();
    let mock = mock::start_background();
    let (a, b) = (Machine::new(&mock), Machine::new(&mock));
    let url = pg.url();
    // A self-detection run on the sample triples, from machine A.
    let out = a
        .prism()
        .args([
            "selfcheck",
            "--models",
            "sc",
            "--limit",
            "4",
            "--json",
            "--db",
            &url,
        ])
        .output()
        .unwrap();
    ok(&out);
    let local = Store::open(&a.local()).unwrap();
    let run = local.selfcheck_runs().unwrap()[0].id.clone();
    let mut db = client(&pg);
    let items = local.selfcheck_items(&run).unwrap();
    let verdicts = local.selfcheck_verdicts(&run).unwrap();
    assert!(!verdicts.is_empty());
    assert_eq!(count(&mut db, "selfcheck_items", &run), items.len() as i64);
    assert_eq!(
        count(&mut db, "selfcheck_verdicts", &run),
        verdicts.len() as i64
    );
    let status: String = db
        .query_one("SELECT status FROM selfcheck_runs WHERE id = $1", &[&run])
        .unwrap()
        .get(0);
    assert_eq!(status, "finished");
    // A PRISM run shared by machine A; machine B checks its answers (self-detect): the run is
    // pulled, the checks pushed; asked again, nothing is asked (the checks came back from the
    // shared store to a third local store too).
    ok(&a
        .prism()
        .args([
            "run",
            "--models",
            "ah",
            "--filter",
            "KE-FD-Numbers",
            "--limit",
            "3",
        ])
        .args(["--json", "--db", &url])
        .output()
        .unwrap());
    let out = b
        .prism()
        .args(["self-detect", "--json", "--db", &url])
        .output()
        .unwrap();
    ok(&out);
    let prism_run: String = db.query_one("SELECT id FROM runs", &[]).unwrap().get(0);
    assert_eq!(
        count(&mut db, "answer_checks", &prism_run),
        6,
        "3 answers x 2 modes"
    );
    let c = Machine::new(&mock);
    let before = mock.requests();
    ok(&c
        .prism()
        .args(["self-detect", "--json", "--db", &url])
        .output()
        .unwrap());
    assert_eq!(
        mock.requests(),
        before,
        "every check was on the shared store"
    );
}

/// A shared run whose answers wait for a judge is scored from another machine with the
/// command the run's last line gives: the scores land on the shared store, judged.
#[test]
fn a_shared_run_is_scored_from_any_machine() {
    let pg = Pg::start();
    let mock = mock::start_background();
    let (a, b) = (Machine::new(&mock), Machine::new(&mock));
    let url = pg.url();
    let err = ok(&a
        .prism()
        .args([
            "run", "--models", "e", "--limit", "30", "--json", "--db", &url,
        ])
        .output()
        .unwrap());
    assert!(
        err.contains("wait for a judge: prism score --run "),
        "{err}"
    );
    let mut db = client(&pg);
    let run: String = db.query_one("SELECT id FROM runs", &[]).unwrap().get(0);
    let answers = count(&mut db, "responses", &run);
    let judged_before: i64 = db
        .query_one("SELECT count(*) FROM scores WHERE judge = 'j'", &[])
        .unwrap()
        .get(0);
    assert_eq!(judged_before, 0);
    let err = ok(&b
        .prism()
        .args(["score", "--run", &run, "--judge", "j", "--db", &url])
        .output()
        .unwrap());
    assert!(err.contains("score(s) pushed to postgres://"), "{err}");
    assert_eq!(
        count(&mut db, "scores", &run),
        answers,
        "every answer scored"
    );
    let judged: i64 = db
        .query_one("SELECT count(*) FROM scores WHERE judge = 'j'", &[])
        .unwrap()
        .get(0);
    assert!(judged > 0, "the judge's scores are on the shared store");
}

/// The TUI's mirror goes on, next session, from where the last one stopped: a run scored
/// again while no TUI was open, then hundreds of other changes, still reaches this machine.
#[test]
fn a_mirror_goes_on_where_the_last_session_stopped() {
    let pg = Pg::start();
    let mock = mock::start_background();
    let (a, b) = (Machine::new(&mock), Machine::new(&mock));
    let url = pg.url();
    let mut db = shared_run(&a, &pg, 20);
    let first: String = db.query_one("SELECT id FROM runs", &[]).unwrap().get(0);
    let local = b.local();
    let mirror = prism::store::Db::open(Some(Path::new(&url)), &local).unwrap();
    let pulled = mirror.pull_all().unwrap().unwrap();
    assert_eq!(pulled.runs, 1);
    // While this machine's TUI is closed: the run is judged, then another run of 600 answers.
    ok(&a
        .prism()
        .args(["score", "--run", &first, "--judge", "j", "--db", &url])
        .output()
        .unwrap());
    ok(&a
        .prism()
        .args(["run", "--models", "e", "--samples", "2", "--limit", "300"])
        .args(["--json", "--db", &url])
        .output()
        .unwrap());
    let pulled = mirror.pull_all().unwrap().unwrap();
    assert_eq!(pulled.runs, 1, "the second run");
    let mine = Store::open(&local).unwrap().scores(Some(&first)).unwrap();
    let judged = mine
        .iter()
        .filter(|s| s.judge.as_deref() == Some("j"))
        .count();
    let theirs: i64 = db
        .query_one(
            "SELECT count(*) FROM scores WHERE run_id = $1 AND judge = 'j'",
            &[&first],
        )
        .unwrap()
        .get(0);
    assert!(theirs > 0);
    assert_eq!(
        judged as i64, theirs,
        "the scores judged while no mirror ran"
    );
    assert!(
        !mirror.pull_all().unwrap().unwrap().changed(),
        "nothing twice"
    );
}

/// `prism runs`, `report`, and naming, tagging and removing on a shared store, from machines
/// other than the one that ran: listed, named and tagged for every machine, reported, removed.
#[test]
fn shared_runs_are_listed_named_reported_and_removed_from_any_machine() {
    let pg = Pg::start();
    let mock = mock::start_background();
    let (a, b) = (Machine::new(&mock), Machine::new(&mock));
    let url = pg.url();
    let mut db = shared_run(&a, &pg, 20);
    let run: String = db.query_one("SELECT id FROM runs", &[]).unwrap().get(0);
    let listed = |m: &Machine| -> serde_json::Value {
        let out = m
            .prism()
            .args(["runs", "--json", "--db", &url])
            .output()
            .unwrap();
        ok(&out);
        serde_json::from_slice(&out.stdout).unwrap()
    };
    let l = listed(&a);
    assert_eq!(l[0]["id"], run.as_str(), "{l}");
    assert_eq!(l[0]["done"], 20, "{l}");
    // B names and tags it; A, which has a copy already, sees both.
    ok(&b
        .prism()
        .args(["runs", "name", &run, "baseline", "--db", &url])
        .output()
        .unwrap());
    ok(&b
        .prism()
        .args(["runs", "tag", &run, "nightly", "--db", &url])
        .output()
        .unwrap());
    let l = listed(&a);
    assert_eq!(l[0]["name"], "baseline", "{l}");
    assert_eq!(l[0]["tags"], serde_json::json!(["nightly"]), "{l}");
    // A report of the shared run, from B.
    let out = b
        .prism()
        .args(["report", "--run", &run, "--format", "md", "--db", &url])
        .output()
        .unwrap();
    ok(&out);
    let md = String::from_utf8_lossy(&out.stdout);
    assert!(md.contains("| e"), "{md}");
    // Removed for everyone (asked first; refused without a terminal unless --yes).
    let out = b
        .prism()
        .args(["runs", "rm", &run, "--db", &url])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    ok(&b
        .prism()
        .args(["runs", "rm", &run, "--yes", "--db", &url])
        .output()
        .unwrap());
    assert_eq!(count(&mut db, "responses", &run), 0);
    assert_eq!(count(&mut db, "jobs", &run), 0);
    let n: i64 = db
        .query_one("SELECT count(*) FROM runs", &[])
        .unwrap()
        .get(0);
    assert_eq!(n, 0);
}

/// The database stops for 5 s under a lane: its results wait in the local store, go when the
/// server is back, and the shared store ends with every row; told as the database going away.
#[test]
fn a_lane_holds_its_results_while_the_database_is_away() {
    let pg = Pg::start();
    let mock = mock::start_background();
    let a = Machine::new(&mock);
    let file = claims(a.dir.path(), 8);
    let url = pg.url();
    let (child, id) = slow_autohall(&a, &file, &url, 4);
    pg.stop();
    std::thread::sleep(Duration::from_secs(5));
    pg.start_again();
    let out = child.wait_with_output().unwrap();
    assert!(out.status.success(), "{:?}", out.status);
    let err = std::fs::read_to_string(a.dir.path().join("autohall.err")).unwrap();
    assert!(err.contains("cannot reach the shared store"), "{err}");
    assert!(err.contains("the shared store answers again"), "{err}");
    let mut db = client(&pg);
    let local = Stored::load(&prism::store::Db::file(&a.local()), &id).unwrap();
    assert_eq!(local.pairs.len(), 48);
    assert_eq!(count(&mut db, "detect_samples", &id), 48);
    assert_eq!(count(&mut db, "detect_pairs", &id), 48);
    let status: String = db
        .query_one("SELECT status FROM detect_runs WHERE id = $1", &[&id])
        .unwrap()
        .get(0);
    assert_eq!(status, "finished");
}

/// An interrupted lane on a shared store says how to finish it there (`--db` the shared store's
/// URL, never this machine's file); `--analyse` of a run with nothing left to ask says so
/// rather than advising `--resume`.
#[test]
fn hints_keep_the_shared_store() {
    let pg = Pg::start();
    let mock = mock::start_background();
    let a = Machine::new(&mock);
    let file = claims(a.dir.path(), 8);
    let url = pg.url();
    let (mut child, id) = slow_autohall(&a, &file, &url, 4);
    assert_eq!(unsafe { libc::kill(child.id() as i32, libc::SIGTERM) }, 0);
    let status = child.wait().unwrap();
    assert_eq!(status.code(), Some(130));
    let err = std::fs::read_to_string(a.dir.path().join("autohall.err")).unwrap();
    assert!(
        err.contains(&format!(
            "finish it with: prism autohall --resume {id} --db {url}"
        )),
        "{err}"
    );
    assert!(!err.contains("--db /"), "{err}");
    // Finished: --analyse has nothing to advise resuming.
    ok(&a
        .prism()
        .args(["autohall", "--resume", &id, "--json", "--db", &url])
        .output()
        .unwrap());
    let out = a
        .prism()
        .args(["autohall", "--analyse", &id, "--db", &url])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!err.contains("finish it with"), "{err}");
}

/// The TUI's mirror on a server that restarts, then goes away: the restart (its connections
/// dropped and made again) is not news, an outage longer than `mirror::QUIET_OUTAGE` is said
/// once, and the mirror pulls again when the server is back.
#[test]
fn a_mirror_says_an_outage_not_a_restart() {
    use std::sync::{Arc, Mutex};
    let pg = Pg::start();
    let dir = tempfile::tempdir().unwrap();
    let db = prism::store::Db::open(Some(Path::new(&pg.url())), &dir.path().join("m.db")).unwrap();
    let said = Arc::new(Mutex::new(Vec::<String>::new()));
    let to = said.clone();
    let _watch = db
        .mirror(|_| {}, move |e| to.lock().unwrap().push(e))
        .unwrap()
        .expect("a shared store mirrors");
    std::thread::sleep(Duration::from_millis(500));
    pg.restart();
    std::thread::sleep(prism::store::mirror::EVERY * 2);
    assert!(
        said.lock().unwrap().is_empty(),
        "{:?}",
        said.lock().unwrap()
    );
    pg.stop();
    std::thread::sleep(prism::store::mirror::QUIET_OUTAGE + prism::store::mirror::EVERY * 2);
    let during = said.lock().unwrap().clone();
    assert_eq!(during.len(), 1, "said once: {during:?}");
    pg.start_again();
    std::thread::sleep(prism::store::mirror::EVERY * 2);
    assert_eq!(
        said.lock().unwrap().len(),
        1,
        "nothing more once it is back"
    );
}
