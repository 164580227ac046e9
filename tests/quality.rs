//! `prism quality` (issue 14) against the mock's scripted `quality` model: scores read from
//! plain and markdown replies, an unreadable reply asked again, every score stored, a second run
//! asking nothing, and the rejection recall against human decisions at PRISM's 7.0 and beyond.

mod common;

use assert_cmd::Command;
use common::mock;
use prism::review::{Decision, ReviewRecord};
use prism::store::Store;

fn decision(uid: &str, item: &str, reviewer: &str, d: Decision) -> ReviewRecord {
    ReviewRecord {
        uid: uid.into(),
        item_id: item.into(),
        task_id: "KE-FD-Myths".into(),
        reviewer: reviewer.into(),
        round: 1,
        clarity: None,
        relevance: None,
        coherence: None,
        decision: d,
        rationale: String::new(),
        edited_question: None,
        edited_answer: None,
        created_at: 1,
    }
}

#[test]
fn the_quality_agent_scores_stores_and_sweeps_against_reviewers() {
    let mock = mock::start_background();
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("models.toml"),
        format!(
            "[[models]]\nname = \"q\"\nprovider = \"openai\"\nbase_url = \"{}/v1\"\nmodel = \"quality\"\n",
            mock.url()
        ),
    )
    .unwrap();
    let db = dir.path().join("prism.db");
    use Decision::*;
    Store::open(&db)
        .unwrap()
        .save_decisions(&[
            decision("1", "KE-FD-Myths-0002", "ann", Remove),
            decision("2", "KE-FD-Myths-0002", "bob", Remove),
            decision("3", "KE-FD-Myths-0004", "ann", Remove),
            decision("4", "KE-FD-Myths-0004", "bob", Remove),
            decision("5", "KE-FD-Myths-0001", "ann", Retain),
            decision("6", "KE-FD-Myths-0001", "bob", Retain),
        ])
        .unwrap();
    let prism = || {
        let mut c = Command::cargo_bin("prism").unwrap();
        c.env("PRISM_CONFIG_DIR", dir.path())
            .env("PRISM_DATA_DIR", dir.path())
            .args([
                "quality",
                "--model",
                "q",
                "--filter",
                "KE-FD-Myths",
                "--json",
            ]);
        c
    };
    let out = prism().assert().success().get_output().clone();
    let lines: Vec<serde_json::Value> = String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let summary = lines.last().unwrap();
    assert_eq!(summary["items"], 6);
    assert_eq!(summary["scored"], 6);
    // At 7.0: -0002 (5 8 8) and -0003 (8 6 9) filtered, the rest kept.
    assert_eq!(summary["kept"], 4);
    assert_eq!(summary["human_removed"], 2);
    let at = |t: f64| {
        summary["sweep"]
            .as_array()
            .unwrap()
            .iter()
            .find(|r| r["threshold"] == t)
            .unwrap()
            .clone()
    };
    assert_eq!(at(7.0)["rejection_recall"], 0.5);
    assert_eq!(at(7.0)["retained_filtered"], 0);
    // At 8.0 the 8 8 8 items go too: both removed items filtered; -0001 (9 9 9) still kept.
    assert_eq!(at(8.0)["rejection_recall"], 1.0);
    assert_eq!(at(8.0)["retained_filtered"], 0);
    assert_eq!(at(9.0)["retained_filtered"], 1);
    // 6 items, one asked twice.
    assert_eq!(mock.requests(), 7);
    let stored = Store::open(&db).unwrap().quality(Some("q")).unwrap();
    let third = stored
        .iter()
        .find(|r| r.item_id == "KE-FD-Myths-0003")
        .unwrap();
    assert_eq!((third.scores, third.attempts), (Some([8, 6, 9]), 2));
    let second = stored
        .iter()
        .find(|r| r.item_id == "KE-FD-Myths-0002")
        .unwrap();
    assert!((second.weighted().unwrap() - (2.5 + 2.4 + 1.6)).abs() < 1e-9);

    // Again: everything is stored, nothing is asked.
    prism().assert().success();
    assert_eq!(mock.requests(), 7);

    // The table.
    let out = Command::cargo_bin("prism")
        .unwrap()
        .env("PRISM_CONFIG_DIR", dir.path())
        .env("PRISM_DATA_DIR", dir.path())
        .args(["quality", "--model", "q", "--filter", "KE-FD-Myths"])
        .assert()
        .success()
        .get_output()
        .clone();
    let table = String::from_utf8_lossy(&out.stdout);
    assert!(table.contains("kept at T = 7: 4 of 6"), "{table}");
    assert!(
        table.contains("against 2 items reviewers removed"),
        "{table}"
    );
    assert!(table.contains("50.0%"), "{table}");
}
