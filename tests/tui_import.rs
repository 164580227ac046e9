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
