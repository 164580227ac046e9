//! kill -9 of every lane on a shared store, then the lane finished from another machine
//! (issue 42): what the killed process had saved reached the shared store as it was saved,
//! the second machine asks only what is missing, and the shared store ends with exactly the
//! rows an uninterrupted run on a SQLite file leaves (nothing lost, nothing twice). The
//! records lanes (self-detection's answer checks, semantic entropy's verdicts, the quality
//! agent's scores, claims' topics, the sentences' support verdicts) are finished by running the same command again; the run
//! lanes (detection, self-detection on facts) by `--resume`.

mod common;

use std::path::{Path, PathBuf};
use std::process::{Child, Command as StdCommand, Stdio};
use std::time::{Duration, Instant};

use common::rows::{rows_without, shared_rows};
use common::{mock, pg::Pg};

fn models(mock: &mock::Mock) -> String {
    let m = |name: &str, model: &str| {
        format!(
            "[[models]]\nname = \"{name}\"\nprovider = \"openai\"\nbase_url = \"{}/v1\"\nmodel = \"{model}\"\n\n",
            mock.url()
        )
    };
    [
        m("e", "echo"),
        m("ah", "autohall"),
        m("ahs", "autohallslow"),
        m("js", "judgeslow"),
        m("qs", "qualityslow"),
        m("scs", "selfcheckslow"),
    ]
    .concat()
}

/// A machine: a data directory of its own, and the store its commands name.
struct Machine {
    dir: tempfile::TempDir,
    db: String,
}

impl Machine {
    fn new(mock: &mock::Mock, db: Option<String>) -> Machine {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("models.toml"), models(mock)).unwrap();
        let db = db.unwrap_or_else(|| dir.path().join("store.db").display().to_string());
        Machine { dir, db }
    }

    fn cmd(&self, args: &[String]) -> StdCommand {
        let mut c = StdCommand::new(assert_cmd::cargo::cargo_bin("prism"));
        c.args(args)
            .args(["--db", &self.db])
            .env("PRISM_CONFIG_DIR", self.dir.path())
            .env("PRISM_DATA_DIR", self.dir.path());
        c
    }

    /// Runs a command to its end.
    fn prism(&self, args: &[String]) {
        let out = self.cmd(args).output().unwrap();
        assert!(
            matches!(out.status.code(), Some(0 | 2)),
            "{args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    }

    /// Starts a command, its output thrown away but for what it says (`started.err`).
    fn start(&self, args: &[String]) -> Child {
        self.cmd(args)
            .stdout(Stdio::null())
            .stderr(std::fs::File::create(self.dir.path().join("started.err")).unwrap())
            .spawn()
            .unwrap()
    }
}

fn strs(v: &[&str]) -> Vec<String> {
    v.iter().map(|s| s.to_string()).collect()
}

fn claims(dir: &Path) -> PathBuf {
    let lines: Vec<String> = (0..24)
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

/// Rows of a table on the shared store.
fn count(pg: &Pg, table: &str) -> i64 {
    postgres::Client::connect(&pg.url(), postgres::NoTls)
        .unwrap()
        .query_one(&format!("SELECT count(*) FROM {table}"), &[])
        .unwrap()
        .get(0)
}

/// The newest id of a run table, on the shared store or a file, not among `known`.
fn newest(db: &str, table: &str, known: &[String]) -> String {
    let sql = format!("SELECT id FROM {table} ORDER BY created_at DESC");
    let ids: Vec<String> = if db.starts_with("postgres") {
        let mut c = postgres::Client::connect(db, postgres::NoTls).unwrap();
        c.query(&sql, &[])
            .unwrap()
            .iter()
            .map(|r| r.get(0))
            .collect()
    } else {
        let c = rusqlite::Connection::open(db).unwrap();
        let mut st = c.prepare(&sql).unwrap();
        st.query_map([], |r| r.get(0))
            .unwrap()
            .map(Result::unwrap)
            .collect()
    };
    ids.into_iter().find(|id| !known.contains(id)).unwrap()
}

/// The answers, detection and AutoHall run the lanes work on; their ids, in order.
fn setup(m: &Machine, claims: &Path) -> Vec<String> {
    let mut ids = Vec::new();
    m.prism(&strs(&[
        "run", "--models", "e,ah", "--filter", "KE-FD-*", "--limit", "8", "--json",
    ]));
    ids.push(newest(&m.db, "runs", &ids));
    m.prism(&strs(&[
        "detect",
        "--run",
        &ids[0],
        "--models",
        "ah",
        "-k",
        "7",
        "--judge",
        "ah",
        "--concurrency",
        "1",
        "--json",
    ]));
    ids.push(newest(&m.db, "detect_runs", &ids));
    m.prism(&strs(&[
        "autohall",
        claims.to_str().unwrap(),
        "--models",
        "ah",
        "-k",
        "1",
        "--concurrency",
        "1",
        "--json",
    ]));
    ids.push(newest(&m.db, "detect_runs", &ids));
    ids
}

/// (Each asks without the cache, so an uninterrupted run's calls are the whole lane's.)
/// A lane: its command (given the setup's ids), the table it fills, the run table a new run
/// of it goes in (run lanes: finished with `--resume ID`), and the columns that differ
/// between two runs by nature.
struct Lane {
    name: &'static str,
    args: fn(&[String]) -> Vec<String>,
    table: &'static str,
    run_table: Option<&'static str>,
    also: &'static [&'static str],
}

fn lanes() -> Vec<Lane> {
    vec![
        Lane {
            name: "self-detect",
            args: |ids| {
                strs(&[
                    "self-detect",
                    &ids[0],
                    "--detector",
                    "js",
                    "--concurrency",
                    "1",
                    "--json",
                    "--no-cache",
                ])
            },
            table: "answer_checks",
            run_table: None,
            also: &[],
        },
        Lane {
            name: "entropy",
            args: |ids| {
                strs(&[
                    "entropy",
                    &ids[1],
                    "--judge",
                    "ahs",
                    "--concurrency",
                    "1",
                    "--json",
                    "--no-cache",
                ])
            },
            table: "entailments",
            run_table: None,
            also: &[],
        },
        Lane {
            name: "sentences",
            args: |ids| {
                strs(&[
                    "sentences",
                    &ids[1],
                    "--judge",
                    "ahs",
                    "--concurrency",
                    "1",
                    "--json",
                    "--no-cache",
                ])
            },
            table: "sentence_support",
            run_table: None,
            also: &[],
        },
        Lane {
            name: "quality",
            args: |_| {
                strs(&[
                    "quality",
                    "--model",
                    "qs",
                    "--limit",
                    "24",
                    "--concurrency",
                    "1",
                    "--json",
                ])
            },
            table: "quality_scores",
            run_table: None,
            // The mock reads one item's reply only at the second attempt, counted per mock:
            // the killed process may have made the first.
            also: &["attempts"],
        },
        Lane {
            name: "topics",
            args: |ids| {
                strs(&[
                    "autohall",
                    "--analyse",
                    &ids[2],
                    "--topics-by",
                    "ahs",
                    "--concurrency",
                    "1",
                    "--no-cache",
                ])
            },
            table: "claim_topics",
            run_table: None,
            also: &[],
        },
        Lane {
            name: "detect",
            args: |ids| {
                strs(&[
                    "detect",
                    "--run",
                    &ids[0],
                    "--models",
                    "ah",
                    "--judge",
                    "ahs",
                    "-k",
                    "3",
                    "--concurrency",
                    "1",
                    "--json",
                    "--no-cache",
                ])
            },
            table: "detect_pairs",
            run_table: Some("detect_runs"),
            also: &[],
        },
        Lane {
            name: "selfcheck",
            args: |_| {
                strs(&[
                    "selfcheck",
                    "--models",
                    "scs",
                    "--limit",
                    "10",
                    "--concurrency",
                    "1",
                    "--json",
                    "--no-cache",
                ])
            },
            table: "selfcheck_verdicts",
            run_table: Some("selfcheck_runs"),
            also: &[],
        },
    ]
}

/// Starts the lane on machine `a` and kills it (kill -9) once `at` rows of its table are on
/// the shared store; the rows there then.
fn kill_midway(a: &Machine, pg: &Pg, lane: &Lane, ids: &[String], at: i64) -> i64 {
    let before = count(pg, lane.table);
    let mut child = a.start(&(lane.args)(ids));
    let start = Instant::now();
    while count(pg, lane.table) < before + at {
        assert!(
            child.try_wait().unwrap().is_none(),
            "{}: ended before it was killed: {}",
            lane.name,
            std::fs::read_to_string(a.dir.path().join("started.err")).unwrap_or_default()
        );
        assert!(start.elapsed() < Duration::from_secs(60), "{}", lane.name);
        std::thread::sleep(Duration::from_millis(20));
    }
    child.kill().unwrap();
    child.wait().unwrap();
    count(pg, lane.table)
}

#[test]
fn every_lane_killed_on_a_shared_store_is_finished_by_another_machine() {
    let pg = Pg::start();
    let inputs = tempfile::tempdir().unwrap();
    let claims = claims(inputs.path());
    // The team's two machines share a mock; the reference machine has its own (the mock's
    // scripts count attempts).
    let (mock, mock_ref) = (mock::start_background(), mock::start_background());
    let (a, b) = (
        Machine::new(&mock, Some(pg.url())),
        Machine::new(&mock, Some(pg.url())),
    );
    let reference = Machine::new(&mock_ref, None);
    let mut ids = setup(&a, &claims);
    let mut ref_ids = setup(&reference, &claims);
    for lane in lanes() {
        let at_kill = kill_midway(&a, &pg, &lane, &ids, 6);
        let args = match lane.run_table {
            Some(t) => {
                let killed = newest(&a.db, t, &ids);
                ids.push(killed.clone());
                let mut args = (lane.args)(&ids);
                args.truncate(1);
                args.extend(strs(&[
                    "--resume",
                    &killed,
                    "--concurrency",
                    "1",
                    "--json",
                    "--no-cache",
                ]));
                args
            }
            None => (lane.args)(&ids),
        };
        let asked = mock.requests();
        b.prism(&args);
        let asked = mock.requests() - asked;
        // The same lane, uninterrupted, on a file.
        let ref_asked = mock_ref.requests();
        reference.prism(&(lane.args)(&ref_ids));
        let ref_asked = mock_ref.requests() - ref_asked;
        if let Some(t) = lane.run_table {
            ref_ids.push(newest(&reference.db, t, &ref_ids));
        }
        let got = shared_rows(&pg.url(), &ids, lane.also);
        let want = rows_without(Path::new(&reference.db), &ref_ids, lane.also);
        assert!(
            !want[lane.table].is_empty(),
            "{}: rows to compare",
            lane.name
        );
        assert!(
            (at_kill as usize) < want[lane.table].len(),
            "{}: killed before the end",
            lane.name
        );
        assert_eq!(
            got[lane.table], want[lane.table],
            "{}: the shared store ends with an uninterrupted run's rows",
            lane.name
        );
        // What was shared before the kill is not asked again: fewer calls than the whole
        // lane took uninterrupted (never more).
        assert!(
            asked < ref_asked,
            "{}: {asked} calls to finish, {ref_asked} for the whole lane",
            lane.name
        );
        if let Some(t) = lane.run_table {
            assert_eq!(
                got[t], want[t],
                "{}: the run itself finished the same",
                lane.name
            );
        }
    }
}
