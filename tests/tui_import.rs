//! An imported run (issue 64) in the TUI: opened from the runs list as any stored run, the
//! compare pane shows the tool's answer, PRISM's verdict and the tool's own verdict beside it.

mod common;

use assert_cmd::Command;
use common::screen::{play, runtime, session};
use prism::tui::component::{Open, ScreenId};

#[test]
fn an_imported_answer_shows_the_tools_verdict_beside_prisms() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("prism.db");
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    let log = std::fs::read_dir(root.join("tests/fixtures/import/inspect"))
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .find(|p| p.extension().is_some_and(|x| x == "eval"))
        .unwrap();
    let prism = || {
        let mut c = Command::cargo_bin("prism").unwrap();
        c.env("PRISM_CONFIG_DIR", dir.path())
            .env("PRISM_DATA_DIR", dir.path());
        c
    };
    let out = prism()
        .arg("import")
        .arg(&log)
        .arg("--data")
        .arg(root.join("sample-data"))
        .assert()
        .success();
    let run = String::from_utf8_lossy(&out.get_output().stdout)
        .trim()
        .to_string();
    prism().args(["score", "--run", &run]).assert().success();
    let ds = prism::dataset::load_sample().dataset;
    let items: Vec<usize> = ["KE-FD-Numbers-0001", "KE-FD-Numbers-0002"]
        .iter()
        .map(|id| ds.index_of(id).unwrap())
        .collect();
    let rt = runtime();
    for size in [(80, 24), (120, 40)] {
        let (mut app, mut services) = session(&rt, &db, Vec::new());
        app.push(Open::RunAnswers {
            run: run.clone(),
            items: items.clone(),
        });
        let s = play(&rt, &mut app, &mut services, vec![vec![]], size);
        assert_eq!(app.top(), ScreenId::Compare);
        assert!(s.contains("inspect: includes C"), "{size:?}\n{s}");
        assert!(s.contains("206"), "{s}");
        assert!(
            s.contains("1.00 matches the answer"),
            "PRISM's verdict too\n{s}"
        );
        // The second item: the Moon landing, 1972 (wrong by both).
        let s = play(
            &rt,
            &mut app,
            &mut services,
            vec![vec![common::screen::key(']')]],
            size,
        );
        assert!(s.contains("1972"), "{s}");
        assert!(s.contains("inspect: includes I"), "{size:?}\n{s}");
    }
}

/// An imported run opens in the tool's own tree (`o` in the runs screen): its tasks and the
/// samples' categories with each model's rate from the tool's scores, the samples, and the
/// chosen one as the tool had it; `o` there opens the samples that are items of the release in
/// the compare screen. At 80x24 and 120x40.
#[test]
fn an_imported_run_browses_in_the_tools_own_tree() {
    use common::screen::{code, key};
    use crossterm::event::KeyCode;
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("prism.db");
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    let out = Command::cargo_bin("prism")
        .unwrap()
        .env("PRISM_CONFIG_DIR", dir.path())
        .env("PRISM_DATA_DIR", dir.path())
        .arg("import")
        .arg(root.join("tests/fixtures/import/promptfoo/results.json"))
        .arg("--data")
        .arg(root.join("sample-data"))
        .assert()
        .success();
    let run = String::from_utf8_lossy(&out.get_output().stdout)
        .trim()
        .to_string();
    let rt = runtime();
    for size in [(80, 24), (120, 40)] {
        let (mut app, mut services) = session(&rt, &db, Vec::new());
        play(&rt, &mut app, &mut services, vec![vec![key('R')]], size);
        let s = play(&rt, &mut app, &mut services, vec![vec![key('o')]], size);
        assert_eq!(app.top(), ScreenId::Source, "{s}");
        assert!(s.contains(&format!("imported run {run}")), "{size:?}\n{s}");
        assert!(s.contains("promptfoo/prism"), "{size:?}\n{s}");
        // Categories under the task, each with the tool's rate (100 × (1 − mean score)).
        for row in ["arithmetic", "facts", "geography", "unknowable"] {
            assert!(s.contains(row), "{row}: {size:?}\n{s}");
        }
        let line = |s: &str, what: &str| {
            s.lines()
                .find(|l| l.contains(what))
                .map(str::to_string)
                .unwrap_or_default()
        };
        assert!(line(&s, "facts").contains("50.0"), "{s}");
        assert!(line(&s, "geography").contains("100.0"), "{s}");
        // The first sample as the tool had it: target, answer, the tool's verdict.
        assert!(s.contains("target  206"), "{size:?}\n{s}");
        assert!(s.contains("assertions pass"), "{size:?}\n{s}");
        // Down the tree to geography: its one sample, the capital question, failed.
        let s = play(
            &rt,
            &mut app,
            &mut services,
            vec![vec![key('j'), key('j'), key('j')]],
            size,
        );
        assert!(s.contains("capital of Australia"), "{size:?}\n{s}");
        assert!(s.contains("assertions fail"), "{size:?}\n{s}");
        // o: the samples that are items of the release, with PRISM's scores.
        play(&rt, &mut app, &mut services, vec![vec![key('o')]], size);
        assert_eq!(app.top(), ScreenId::Compare);
        play(
            &rt,
            &mut app,
            &mut services,
            vec![vec![code(KeyCode::Esc)]],
            size,
        );
        assert_eq!(app.top(), ScreenId::Source);
    }
}
