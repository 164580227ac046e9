//! The two backends hold the same thing (issue 42): every lane and every command that takes
//! `--db` is run twice against the mock's scripted models, once on a SQLite file and once on
//! a real PostgreSQL server (from another machine's data directory), and the two stores are
//! compared row for row, every table of both descriptions (`store::tables::every`). What
//! differs by nature is left out of the comparison: run ids (new each run: mapped to their
//! order), times, latencies and PostgreSQL's own columns. The reading commands (`runs`,
//! `report`, `signals`, `compare`, `export`) must print the same on both.

mod common;

use std::collections::BTreeMap;
use std::path::Path;

use assert_cmd::Command;
use common::rows::{rows, same_ids};
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
        m("j", "judge"),
        m("sc", "selfcheck"),
        m("q", "quality"),
    ]
    .concat()
}

/// One side: a data directory of its own and the store its commands name.
struct Side {
    dir: tempfile::TempDir,
    db: String,
}

impl Side {
    fn new(mock: &mock::Mock, db: Option<String>) -> Side {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("models.toml"), models(mock)).unwrap();
        let db = db.unwrap_or_else(|| dir.path().join("store.db").display().to_string());
        Side { dir, db }
    }

    /// A command on this side's store; its stdout. Lanes ask one call at a time: two equal
    /// calls in flight at once may both ask or one find the other's reply cached, which would
    /// differ between any two runs, on any backend.
    fn prism(&self, args: &[&str]) -> String {
        let one_at_a_time = [
            "detect",
            "autohall",
            "entropy",
            "sentences",
            "self-detect",
            "selfcheck",
            "quality",
        ]
        .contains(&args[0])
            && !args.contains(&"--analyse");
        let out = Command::cargo_bin("prism")
            .unwrap()
            .env("PRISM_CONFIG_DIR", self.dir.path())
            .env("PRISM_DATA_DIR", self.dir.path())
            .args(args)
            .args(["--db", &self.db])
            .args(if one_at_a_time {
                &["--concurrency", "1"][..]
            } else {
                &[]
            })
            .output()
            .unwrap();
        assert!(
            matches!(out.status.code(), Some(0 | 2)),
            "{args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8_lossy(&out.stdout).into_owned()
    }

    /// The run of a kind (`runs`, `detect_runs`, `selfcheck_runs`) the last command made:
    /// the newest not in `known` (two made in one second are told apart so), as the store
    /// the commands name holds it.
    fn newest(&self, table: &str, known: &[String]) -> String {
        let sql = format!("SELECT id FROM {table} ORDER BY created_at DESC");
        let ids: Vec<String> = if self.db.starts_with("postgres") {
            let mut c = postgres::Client::connect(&self.db, postgres::NoTls).unwrap();
            c.query(&sql, &[])
                .unwrap()
                .iter()
                .map(|r| r.get(0))
                .collect()
        } else {
            let c = rusqlite::Connection::open(&self.db).unwrap();
            let mut st = c.prepare(&sql).unwrap();
            st.query_map([], |r| r.get(0))
                .unwrap()
                .map(Result::unwrap)
                .collect()
        };
        ids.into_iter().find(|id| !known.contains(id)).unwrap()
    }
}

/// What each command printed, in order, and the run ids it made (in order of making).
struct Script {
    printed: Vec<String>,
    ids: Vec<String>,
}

/// Every lane and every command that takes `--db`, in the order a user would.
fn script(s: &Side, dir: &Path) -> Script {
    let mut printed = Vec::new();
    let mut ids = Vec::new();
    let claims = dir.join("claims.jsonl");
    let decisions = dir.join("decisions.jsonl");
    let outputs = s.dir.path().join("outputs");
    let outputs = outputs.display().to_string();
    // Answers, two samples each, scored with the judge where the rules cannot.
    s.prism(&[
        "run",
        "--models",
        "e,ah",
        "--filter",
        "KE-FD-*",
        "--limit",
        "4",
        "--samples",
        "2",
        "--json",
    ]);
    let run = s.newest("runs", &ids);
    ids.push(run.clone());
    s.prism(&["score", "--run", &run, "--judge", "j"]);
    // People's labels on two answers, and the judge put beside them.
    let labels = s.dir.path().join("labels.jsonl");
    let label = |uid: &str, job: u32, l: &str| {
        format!(
            r#"{{"uid": "{uid}", "run": "{run}", "job": {job}, "reviewer": "ann", "label": "{l}", "note": "ünï", "created_at": 1700000000000}}"#
        )
    };
    std::fs::write(
        &labels,
        [label("l1", 0, "hallucinated"), label("l2", 1, "correct")].join("\n"),
    )
    .unwrap();
    s.prism(&["labels", "import", labels.to_str().unwrap()]);
    printed.push(s.prism(&["judges", &run, "--json"]));
    // The judges' calibrations on those labels, kept.
    s.prism(&[
        "judges",
        &run,
        "--save-calibration",
        "--judge-floor-labels",
        "1",
    ]);
    // A wording of the judge's own, tried on the same labels (its verdicts and text kept).
    let wording = s.dir.path().join("terse.md");
    std::fs::write(&wording, "{model_answer} vs {reference}: YES or NO?").unwrap();
    s.prism(&[
        "judges",
        &run,
        "--judge",
        "j",
        "--try-template",
        wording.to_str().unwrap(),
    ]);
    // Detection (AutoHall on the run's answers), semantic entropy, self-detection.
    s.prism(&[
        "detect", "--run", &run, "--models", "ah", "-k", "7", "--judge", "ah", "--limit", "4",
        "--json",
    ]);
    let detect = s.newest("detect_runs", &ids);
    ids.push(detect.clone());
    s.prism(&["entropy", &run, "--judge", "j", "--json"]);
    // Over a detection's answer and samples (they differ: the judge is asked).
    printed.push(s.prism(&["entropy", &detect, "--judge", "ah", "--json"]));
    // Where in the answer: the detection's answers under test against their samples.
    printed.push(s.prism(&["sentences", &detect, "--judge", "ah", "--json"]));
    // People's grades of two of the run's sentences (the span taken from the answer), and
    // which sentence method tells.
    let grades = s.dir.path().join("grades.jsonl");
    let grade = |uid: &str, job: u32, label: &str| {
        format!(
            r#"{{"uid": "{uid}", "run": "{run}", "job": {job}, "reviewer": "ann", "sentence": 0, "start": 0, "end": 4, "label": "{label}", "created_at": 1700000000000}}"#
        )
    };
    std::fs::write(
        &grades,
        [grade("g1", 0, "major"), grade("g2", 1, "accurate")].join("\n"),
    )
    .unwrap();
    s.prism(&["labels", "import", grades.to_str().unwrap()]);
    // One more sample for each of the run's answers, drawn (the run has two each).
    printed.push(s.prism(&["sentences", &run, "--samples", "2", "--json"]));
    printed.push(s.prism(&["signals", &run, "--json"]));
    s.prism(&["self-detect", &run, "--json"]);
    // AutoHall on claims, its topics; self-detection on facts.
    s.prism(&[
        "autohall",
        claims.to_str().unwrap(),
        "--models",
        "ah",
        "-k",
        "2",
        "--json",
    ]);
    let autohall = s.newest("detect_runs", &ids);
    ids.push(autohall.clone());
    printed.push(s.prism(&["autohall", "--analyse", &autohall, "--topics-by", "ah"]));
    s.prism(&["selfcheck", "--models", "sc", "--limit", "4", "--json"]);
    ids.push(s.newest("selfcheck_runs", &ids));
    // The quality agent and human review.
    printed.push(s.prism(&[
        "quality",
        "--model",
        "q",
        "--filter",
        "KE-FD-Myths",
        "--json",
    ]));
    s.prism(&["review", "import", decisions.to_str().unwrap()]);
    printed.push(s.prism(&["review", "stats"]));
    // Answers out and in again (a run of their own), names and tags.
    s.prism(&["export", "--run", &run, "--prism-outputs", &outputs]);
    s.prism(&["import", "--prism-outputs", &outputs]);
    let imported = s.newest("runs", &ids);
    ids.push(imported.clone());
    // Another tool's log (inspect_ai), its samples and the tool's scores.
    let inspect_log = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/import/inspect/2026-12-06T23-54-09-00-00_prism-fixture_V9UKtc9HxfuKRzzqu6Qz4k.json");
    s.prism(&["import", inspect_log.to_str().unwrap()]);
    ids.push(s.newest("runs", &ids));
    s.prism(&["runs", "name", &run, "first"]);
    s.prism(&["runs", "tag", &run, "baseline"]);
    // What the reading commands print.
    printed.push(s.prism(&["runs"]));
    printed.push(s.prism(&["report", "--run", &run, "--format", "json"]));
    printed.push(s.prism(&["signals", &run, "--json"]));
    printed.push(s.prism(&["compare", &format!("{run}:e"), &format!("{run}:ah")]));
    Script { printed, ids }
}

fn write_inputs(dir: &Path) {
    let claims: Vec<String> = (0..4)
        .map(|i| {
            format!(
                r#"{{"id": "c{i}", "claim": "Claim number {i} [[conflict2]]", "label": {}, "topic": "t"}}"#,
                i % 2 == 0
            )
        })
        .collect();
    std::fs::write(dir.join("claims.jsonl"), claims.join("\n")).unwrap();
    let decision = |uid: &str, item: &str, who: &str, d: &str| {
        format!(
            r#"{{"uid": "{uid}", "item_id": "{item}", "task_id": "KE-FD-Myths", "reviewer": "{who}", "round": 1, "clarity": 7, "relevance": 8, "coherence": 9, "decision": "{d}", "rationale": "why", "created_at": 1700000000000}}"#
        )
    };
    std::fs::write(
        dir.join("decisions.jsonl"),
        [
            decision("u1", "KE-FD-Myths-0002", "ann", "remove"),
            decision("u2", "KE-FD-Myths-0002", "bob", "remove"),
            decision("u3", "KE-FD-Myths-0001", "ann", "retain"),
        ]
        .join("\n"),
    )
    .unwrap();
}

#[test]
fn every_command_leaves_the_same_rows_on_sqlite_and_on_postgres() {
    // One mock for both (a cache key holds the server's address), its memory of attempts
    // forgotten between the two (its scripts count them: a reply unreadable the first time).
    let mock = mock::start_background();
    let pg = Pg::start();
    let inputs = tempfile::tempdir().unwrap();
    write_inputs(inputs.path());
    let lite = Side::new(&mock, None);
    let shared = Side::new(&mock, Some(pg.url()));
    let a = script(&lite, inputs.path());
    mock.reset();
    let b = script(&shared, inputs.path());
    assert_eq!(a.ids.len(), b.ids.len());
    // Line for line (events come as calls end, in any order).
    let lines = |text: &str, ids: &[String]| {
        let mut v: Vec<String> = same_ids(text, ids).lines().map(str::to_string).collect();
        v.sort();
        v
    };
    for (x, y) in a.printed.iter().zip(&b.printed) {
        assert_eq!(
            lines(x, &a.ids),
            lines(y, &b.ids),
            "a command printed the same"
        );
    }
    // The shared store as a third machine sees it: copied whole into a file of its own.
    let copy = inputs.path().join("from-postgres.db");
    Command::cargo_bin("prism")
        .unwrap()
        .args(["db", "copy", &pg.url(), copy.to_str().unwrap()])
        .assert()
        .success();
    let (want, got) = (rows(Path::new(&lite.db), &a.ids), rows(&copy, &b.ids));
    let counts = |m: &BTreeMap<&str, Vec<String>>| {
        m.iter()
            .map(|(t, r)| format!("{t} {}", r.len()))
            .collect::<Vec<_>>()
    };
    for (t, w) in &want {
        let g = &got[t];
        let only_w: Vec<_> = w.iter().filter(|r| !g.contains(r)).collect();
        let only_g: Vec<_> = g.iter().filter(|r| !w.contains(r)).collect();
        if !only_w.is_empty() || !only_g.is_empty() {
            eprintln!("{t}: only on SQLite {only_w:#?}\nonly on PostgreSQL {only_g:#?}");
        }
    }
    assert_eq!(counts(&want), counts(&got), "as many rows in every table");
    let mut filled = 0;
    for (table, want_rows) in &want {
        let got_rows = &got[table];
        if !want_rows.is_empty() {
            filled += 1;
        }
        for (x, y) in want_rows.iter().zip(got_rows) {
            assert_eq!(x, y, "{table}: the first row that differs");
        }
        assert_eq!(
            want_rows.len(),
            got_rows.len(),
            "{table}: as many rows on both"
        );
    }
    // Every table but the ones no command here writes (drafts are typed in the review
    // screen; run_locks are not described) holds rows, so the comparison compared something.
    let empty: Vec<_> = want
        .iter()
        .filter(|(_, r)| r.is_empty())
        .map(|(t, _)| *t)
        .collect();
    assert_eq!(empty, ["review_drafts"], "tables no command filled");
    assert!(filled >= 15, "{filled} tables compared");
    // And the machine that worked on the shared store holds the same as the shared store.
    // (Review decisions are the panel's: written to the shared store and read from it live
    // by every reviewer, never kept apart on a machine.)
    let mut local = rows(&shared.dir.path().join("prism.db"), &b.ids);
    assert!(local["review_decisions"].is_empty());
    local.insert("review_decisions", got["review_decisions"].clone());
    assert_eq!(
        counts(&local),
        counts(&got),
        "the worker's own store holds what it shared"
    );
    assert_eq!(local, got, "the worker's own store holds what it shared");
}
