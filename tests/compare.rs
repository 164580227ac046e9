//! `prism runs` and `prism compare` as a user runs them (issue 26): two runs of real prism-mini
//! items imported from outputs directories and scored by rule; the list with names and tags;
//! the comparison's rates, McNemar counts and flipped items against what the answers make; the
//! same seed giving the same intervals; `runs rm` removing one run and nothing of the other.

use std::path::{Path, PathBuf};

use assert_cmd::Command;
use prism::dataset;
use serde_json::{Value, json};

fn mini() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/prism-mini")
}

struct Env {
    dir: tempfile::TempDir,
}

impl Env {
    fn prism(&self) -> Command {
        let mut c = Command::cargo_bin("prism").unwrap();
        c.env("PRISM_CONFIG_DIR", self.dir.path())
            .env("PRISM_DATA_DIR", self.dir.path());
        c
    }
    fn db(&self) -> PathBuf {
        self.dir.path().join("c.db")
    }
    /// Imports answers (right where `right(k)` on the k-th item of an exact-match task) as a
    /// run, scores it, returns its id.
    fn run(&self, name: &str, right: impl Fn(usize) -> bool) -> String {
        self.run_saying(name, right, "zzz")
    }
    /// The same, the wrong answers saying `wrong`.
    fn run_saying(&self, name: &str, right: impl Fn(usize) -> bool, wrong: &str) -> String {
        let ds = dataset::load_path(&mini()).unwrap().dataset;
        let out = self.dir.path().join(name);
        let mut by_task: std::collections::BTreeMap<String, String> = Default::default();
        for (k, it) in exact_items(&ds).into_iter().enumerate() {
            let answer = it.answer.clone().unwrap_or_default();
            let response = if right(k) { answer } else { wrong.into() };
            by_task
                .entry(ds.task_of(it).id.clone())
                .or_default()
                .push_str(&format!(
                    "{}\n",
                    json!({"id": it.id.to_string(), "response": response})
                ));
        }
        let dir = out.join("m").join("responses");
        std::fs::create_dir_all(&dir).unwrap();
        for (t, body) in by_task {
            std::fs::write(dir.join(format!("{t}.jsonl")), body).unwrap();
        }
        let a = self
            .prism()
            .args(["import", "--prism-outputs"])
            .arg(&out)
            .arg("--db")
            .arg(self.db())
            .arg("--dataset")
            .arg(mini())
            .assert()
            .success();
        let id = String::from_utf8_lossy(&a.get_output().stdout)
            .trim()
            .to_string();
        self.prism()
            .args(["score", "--db"])
            .arg(self.db())
            .args(["--run", &id])
            .assert()
            .success();
        id
    }
}

/// Items whose evaluator is exact match (scored by rule, no judge), in dataset order.
fn exact_items(ds: &dataset::Dataset) -> Vec<&dataset::Item> {
    ds.items
        .iter()
        .filter(|it| ds.task_of(it).evaluator == prism::taxonomy::Evaluator::Exact)
        .filter(|it| it.answer.as_deref().is_some_and(|a| !a.trim().is_empty()))
        .collect()
}

#[test]
fn two_runs_listed_named_compared_and_one_removed() {
    let env = Env {
        dir: tempfile::tempdir().unwrap(),
    };
    let ds = dataset::load_path(&mini()).unwrap().dataset;
    let n = exact_items(&ds).len();
    assert!(n >= 20, "prism-mini has exact-match items: {n}");
    // A: right on even items; B: right on every item but each fourth.
    let a = env.run("a", |k| k % 2 == 0);
    let b = env.run("b", |k| k % 4 != 3);
    let db = env.db();
    env.prism()
        .args(["runs", "name", &a, "baseline prompt"])
        .arg("--db")
        .arg(&db)
        .assert()
        .success();
    env.prism()
        .args(["runs", "tag", &b, "v2"])
        .arg("--db")
        .arg(&db)
        .assert()
        .success();
    let listed: Value = serde_json::from_slice(
        &env.prism()
            .args(["runs", "--json", "--db"])
            .arg(&db)
            .assert()
            .success()
            .get_output()
            .stdout,
    )
    .unwrap();
    let runs = listed.as_array().unwrap();
    assert_eq!(runs.len(), 2);
    let of = |id: &str| runs.iter().find(|r| r["id"] == id).unwrap().clone();
    assert_eq!(of(&a)["name"], "baseline prompt");
    assert_eq!(of(&b)["tags"], json!(["v2"]));
    assert_eq!(of(&a)["items"], n);
    // The expected counts, from the answers as written: right on A only, on B only.
    let (mut a_only, mut b_only) = (0, 0);
    for k in 0..n {
        match (k % 2 == 0, k % 4 != 3) {
            (true, false) => a_only += 1,
            (false, true) => b_only += 1,
            _ => {}
        }
    }
    let compare = |seed: &str| -> Value {
        serde_json::from_slice(
            &env.prism()
                .args([
                    "compare", &a, &b, "--format", "json", "--seed", seed, "--db",
                ])
                .arg(&db)
                .assert()
                .success()
                .get_output()
                .stdout,
        )
        .unwrap()
    };
    let c = compare("3");
    assert_eq!(c["paired"], n);
    let all = &c["rows"][0];
    assert_eq!(all["level"], "h-score");
    assert_eq!(all["mcnemar"]["a_only"], a_only);
    assert_eq!(all["mcnemar"]["b_only"], b_only);
    let flips = c["flips"].as_array().unwrap();
    assert_eq!(flips.len(), a_only + b_only);
    assert!(flips[0]["fixed"].as_bool().unwrap(), "fixed come first");
    // Each dimension's rates are 100 − the share right, over its sub-tasks.
    for r in c["rows"].as_array().unwrap() {
        if r["level"] == "task" {
            let (ra, rb) = (r["rate_a"].as_f64().unwrap(), r["rate_b"].as_f64().unwrap());
            assert!((r["diff"].as_f64().unwrap() - (rb - ra)).abs() < 1e-9);
        }
    }
    // The same seed, the same intervals.
    assert_eq!(compare("3")["rows"], c["rows"]);
    // The table names both sides and marks what is beyond noise.
    let t = env
        .prism()
        .args(["compare", &a, &b, "--db"])
        .arg(&db)
        .assert()
        .success();
    let text = String::from_utf8_lossy(&t.get_output().stdout).to_string();
    assert!(
        text.contains(&format!("A = {a}:m")) && text.contains("H-Score"),
        "{text}"
    );
    assert!(text.contains("flipped:"), "{text}");
    // Too many resamples is refused before any work.
    let e = env
        .prism()
        .args(["compare", &a, &b, "--resamples", "100000000", "--db"])
        .arg(&db)
        .assert()
        .failure();
    assert!(String::from_utf8_lossy(&e.get_output().stderr).contains("at most 100,000"));
    // A run against itself, an unknown run, an unknown model: said, not crashed.
    for (x, y, want) in [
        (a.as_str(), a.as_str(), "against itself"),
        ("nope", b.as_str(), "no run nope"),
        (&*format!("{a}:zz"), b.as_str(), "has no model \"zz\""),
    ] {
        let e = env
            .prism()
            .args(["compare", x, y, "--db"])
            .arg(&db)
            .assert()
            .failure();
        let err = String::from_utf8_lossy(&e.get_output().stderr).to_string();
        assert!(err.contains(want), "{want}: {err}");
    }
    // A run another live process holds is not removed under it.
    {
        let mut store = prism::store::Store::open(&db).unwrap();
        let other = prism::store::Holder {
            owner: "another-prism".into(),
            host: prism::store::host_name(),
            pid: i64::from(std::process::id()),
        };
        store
            .lock_run(&b, &other, prism::store::now_secs(), |_| true)
            .unwrap()
            .unwrap();
    }
    let e = env
        .prism()
        .args(["runs", "rm", &b, "--yes", "--db"])
        .arg(&db)
        .assert()
        .failure();
    let err = String::from_utf8_lossy(&e.get_output().stderr).to_string();
    assert!(err.contains("is being run by another prism"), "{err}");
    // rm without --yes and without a terminal refuses; with --yes it removes A only.
    env.prism()
        .args(["runs", "rm", &a, "--db"])
        .arg(&db)
        .assert()
        .failure();
    env.prism()
        .args(["runs", "rm", &a, "--yes", "--db"])
        .arg(&db)
        .assert()
        .success();
    let store = prism::store::Store::open(&db).unwrap();
    assert!(store.run(&a).unwrap().is_none());
    assert!(store.responses(&a).unwrap().is_empty());
    assert!(store.scores(Some(&a)).unwrap().is_empty());
    assert_eq!(store.responses(&b).unwrap().len(), n);
    assert_eq!(store.scores(Some(&b)).unwrap().len(), n);
}

/// `prism runs` lists a page, newest first, filtered by --since, --tag and --model.
#[test]
fn runs_list_a_page_newest_first_filtered_by_time_tag_and_model() {
    let env = Env {
        dir: tempfile::tempdir().unwrap(),
    };
    let ids: Vec<String> = ["a", "b", "c"]
        .iter()
        .enumerate()
        .map(|(i, n)| env.run(n, |k| k % (i + 2) == 0))
        .collect();
    let db = env.db();
    for id in &ids[1..] {
        env.prism()
            .args(["runs", "tag", id, "v2", "--db"])
            .arg(&db)
            .assert()
            .success();
    }
    let listed = |args: &[&str]| -> Vec<String> {
        let out = env
            .prism()
            .args(["runs", "--json", "--db"])
            .arg(&db)
            .args(args)
            .assert()
            .success()
            .get_output()
            .stdout
            .clone();
        let v: Value = serde_json::from_slice(&out).unwrap();
        v.as_array()
            .unwrap()
            .iter()
            .map(|r| r["id"].as_str().unwrap().to_string())
            .collect()
    };
    let all = listed(&["--limit", "0"]);
    assert_eq!(all.len(), 3);
    // Newest first: by creation time, then id (ids start with the time).
    let mut sorted = all.clone();
    sorted.sort_by(|a, b| b.cmp(a));
    assert_eq!(all, sorted);
    assert_eq!(listed(&["--limit", "2"]), all[..2].to_vec());
    assert_eq!(listed(&[]), all, "the default page holds 20");
    let mut tagged = listed(&["--tag", "v2"]);
    tagged.sort();
    let mut want = ids[1..].to_vec();
    want.sort();
    assert_eq!(tagged, want);
    assert!(listed(&["--tag", "v2", "--tag", "other"]).is_empty());
    assert_eq!(listed(&["--since", "1d"]), all);
    assert!(listed(&["--since", "2099-01-01"]).is_empty());
    assert_eq!(
        listed(&["--model", "m", "--limit", "1"]),
        vec![all[0].clone()]
    );
    assert!(listed(&["--model", "nobody"]).is_empty());
    let none = env
        .prism()
        .args(["runs", "--since", "2099-01-01 10:00", "--db"])
        .arg(&db)
        .assert()
        .success();
    assert!(
        String::from_utf8_lossy(&none.get_output().stderr).contains("no run matches")
            || String::from_utf8_lossy(&none.get_output().stdout).contains("no run matches")
    );
    let page = env
        .prism()
        .args(["runs", "--limit", "1", "--db"])
        .arg(&db)
        .assert()
        .success();
    let said = format!(
        "{}{}",
        String::from_utf8_lossy(&page.get_output().stdout),
        String::from_utf8_lossy(&page.get_output().stderr)
    );
    assert!(said.contains("--limit 0 for every one"), "{said}");
    let bad = env
        .prism()
        .args(["runs", "--since", "last tuesday", "--db"])
        .arg(&db)
        .assert()
        .failure();
    assert!(String::from_utf8_lossy(&bad.get_output().stderr).contains("--since"));
    // --db before the subcommand, as every other command takes it (issue 45).
    env.prism()
        .arg("runs")
        .arg("--db")
        .arg(&db)
        .args(["name", &ids[0], "first of three"])
        .assert()
        .success();
    let named = env
        .prism()
        .args(["runs", "--json", "--limit", "0", "--db"])
        .arg(&db)
        .assert()
        .success();
    assert!(String::from_utf8_lossy(&named.get_output().stdout).contains("first of three"));
    // What only a list reads does not go with a subcommand.
    let mixed = env
        .prism()
        .args(["runs", "--model", "m", "tag", &ids[0], "x", "--db"])
        .arg(&db)
        .assert()
        .failure();
    assert!(String::from_utf8_lossy(&mixed.get_output().stderr).contains("--model is for listing"));
}

/// `prism compare --format html -o FILE`: one page naming both runs with their model settings,
/// the table, and each flipped item with both answers side by side, every model text escaped.
#[test]
fn the_html_comparison_shows_flipped_answers_escaped() {
    let env = Env {
        dir: tempfile::tempdir().unwrap(),
    };
    let a = env.run("a", |_| true);
    let hostile = "<script>alert('x')</script> & \u{1b}[31mred";
    let b = env.run_saying("b", |k| k % 3 != 0, hostile);
    let db = env.db();
    env.prism()
        .args(["runs", "name", &b, "<b>new</b> prompt"])
        .arg("--db")
        .arg(&db)
        .assert()
        .success();
    let out = env.dir.path().join("cmp.html");
    env.prism()
        .args(["compare", &a, &b, "--format", "html", "--flips", "3", "-o"])
        .arg(&out)
        .arg("--db")
        .arg(&db)
        .assert()
        .success();
    let html = std::fs::read_to_string(&out).unwrap();
    assert!(html.starts_with("<!DOCTYPE html>"));
    assert!(html.contains(&format!("{a}:m")) && html.contains(&format!("{b}:m")));
    // The run's name and the model's settings, escaped.
    assert!(html.contains("&lt;b&gt;new&lt;/b&gt; prompt"), "{html}");
    assert!(!html.contains("<script>") && !html.contains('\u{1b}'));
    assert!(html.contains("&lt;script&gt;alert(&#39;x&#39;)&lt;/script&gt; &amp;"));
    // Three flipped items listed with both sides' answers (the right one on A, the hostile one
    // on B), and the count of all of them.
    assert_eq!(html.matches("<div class=\"pair\">").count(), 3, "{html}");
    assert!(html.contains("broken"));
    // -o onto the store is refused, and the store is untouched.
    let before = std::fs::read(&db).unwrap();
    let e = env
        .prism()
        .args(["compare", &a, &b, "--format", "html", "-o"])
        .arg(&db)
        .arg("--db")
        .arg(&db)
        .assert()
        .failure();
    assert!(
        !String::from_utf8_lossy(&e.get_output().stderr).is_empty(),
        "said why"
    );
    assert_eq!(std::fs::read(&db).unwrap(), before);
}

/// `prism gate` (issue 43) where the truth is known: a candidate wrong on a third of the items
/// the baseline got right fails (exit 1) on the H-Score with those items named, in Markdown (also
/// into $GITHUB_STEP_SUMMARY), JUnit and JSON; one wrong on a single item passes (within noise);
/// a baseline file written by `prism compare --save-baseline` gates without the store; a broken
/// baseline file cannot decide (exit 2, the file and line named).
#[test]
fn the_gate_fails_a_regression_beyond_noise_and_passes_noise() {
    let env = Env {
        dir: tempfile::tempdir().unwrap(),
    };
    let base = env.run("base", |_| true);
    let worse = env.run("worse", |k| k % 3 != 0);
    let near = env.run("near", |k| k != 0);
    let summary = env.dir.path().join("summary.md");
    let junit = env.dir.path().join("junit.xml");
    let out = env
        .prism()
        .args(["gate", &base, &worse, "--db"])
        .arg(env.db())
        .arg("--junit")
        .arg(&junit)
        .env("GITHUB_STEP_SUMMARY", &summary)
        .output()
        .unwrap();
    let md = String::from_utf8_lossy(&out.stdout).to_string();
    assert_eq!(out.status.code(), Some(1), "{md}");
    assert!(md.contains("prism gate: FAILED"), "{md}");
    // The Markdown as a CI page renders it, run ids (random) named by role.
    insta::assert_snapshot!(
        "gate_failed_markdown",
        md.replace(&base, "BASE").replace(&worse, "WORSE")
    );
    // prism-mini's exact-match items cover part of each dimension: no H-Score, and the
    // dimension rows decide.
    let failed: Vec<&str> = md.lines().filter(|l| l.starts_with("| ❌")).collect();
    assert!(!failed.is_empty(), "{md}");
    assert!(failed.iter().all(|l| l.contains("worse by")), "{md}");
    assert!(md.contains("items broken"), "{md}");
    let written = std::fs::read_to_string(&summary).unwrap();
    assert!(
        written.contains("prism gate: FAILED") && md.contains(written.trim()),
        "{written}"
    );
    let xml = std::fs::read_to_string(&junit).unwrap();
    assert!(xml.starts_with("<?xml") && xml.contains("<testsuites name=\"prism gate\""));
    assert!(xml.contains("<testcase classname=\"prism.h-score\" name=\"H-Score\">"));
    assert!(xml.contains("classname=\"prism.dimension\""));
    assert!(xml.contains("<failure message=\"worse by"), "{xml}");
    assert_eq!(
        xml.matches("<testcase").count(),
        xml.matches("</testcase>").count()
    );

    // Within noise: passes, and says why.
    let ok = env
        .prism()
        .args(["gate", &base, &near, "--db"])
        .arg(env.db())
        .args(["--json"])
        .output()
        .unwrap();
    assert_eq!(
        ok.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&ok.stderr)
    );
    let g: Value = serde_json::from_slice(&ok.stdout).unwrap();
    assert_eq!(g["failed"], false);
    let verdicts: Vec<&str> = g["rows"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["verdict"].as_str().unwrap())
        .collect();
    assert!(
        verdicts
            .iter()
            .any(|v| v.contains("within noise") || v.contains("not below")),
        "{verdicts:?}"
    );

    // A practical threshold above the increase lets the regression pass.
    let big = env
        .prism()
        .args(["gate", &base, &worse, "--max-increase", "99", "--db"])
        .arg(env.db())
        .output()
        .unwrap();
    assert_eq!(big.status.code(), Some(0));

    // Baseline files: no store needed.
    let fb = env.dir.path().join("base.json");
    let fw = env.dir.path().join("worse.json");
    for (run, f) in [(&base, &fb), (&worse, &fw)] {
        env.prism()
            .args(["compare", run, "--save-baseline"])
            .arg(f)
            .arg("--db")
            .arg(env.db())
            .assert()
            .success();
    }
    let files = env
        .prism()
        .arg("gate")
        .arg(&fb)
        .arg(&fw)
        .args(["--db", "/nonexistent/dir/none.db"])
        .output()
        .unwrap();
    assert_eq!(
        files.status.code(),
        Some(1),
        "{}",
        String::from_utf8_lossy(&files.stderr)
    );
    std::fs::write(&fw, "{\"prism_baseline\": 1,\n \"side\": 3}").unwrap();
    let bad = env.prism().arg("gate").arg(&fb).arg(&fw).output().unwrap();
    assert_eq!(bad.status.code(), Some(2));
    let err = String::from_utf8_lossy(&bad.stderr);
    assert!(
        err.contains("worse.json:2:") && err.contains("not a prism baseline file"),
        "{err}"
    );
}

/// `prism gate --junit` validates against the JUnit schema CI systems read (committed:
/// tests/fixtures/junit/junit.xsd), failing and passing alike; and the check can fail: a test
/// case without its name does not validate.
#[test]
#[ignore = "needs xmllint (libxml2-utils), which .ci/run installs"]
fn the_gates_junit_validates_against_the_junit_schema() {
    let env = Env {
        dir: tempfile::tempdir().unwrap(),
    };
    let base = env.run("base", |_| true);
    let worse = env.run("worse", |k| k % 3 != 0);
    let near = env.run("near", |k| k != 0);
    let xsd = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/fixtures/junit/junit.xsd"
    );
    let validate = |file: &std::path::Path| {
        std::process::Command::new("xmllint")
            .args(["--noout", "--schema", xsd])
            .arg(file)
            .output()
            .expect("xmllint (libxml2-utils)")
    };
    for (cand, code) in [(&worse, 1), (&near, 0)] {
        let junit = env.dir.path().join(format!("{code}.xml"));
        let out = env
            .prism()
            .args(["gate", &base, cand, "--by", "task", "--db"])
            .arg(env.db())
            .arg("--junit")
            .arg(&junit)
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(code));
        let v = validate(&junit);
        assert!(
            v.status.success(),
            "{}: {}",
            junit.display(),
            String::from_utf8_lossy(&v.stderr)
        );
        if code == 1 {
            let xml = std::fs::read_to_string(&junit).unwrap();
            assert!(xml.contains("<failure"), "{xml}");
            // The same file with a test case's name taken out does not validate.
            let broken = env.dir.path().join("broken.xml");
            std::fs::write(
                &broken,
                xml.replacen(
                    "<testcase classname=\"prism.h-score\" name=",
                    "<testcase classname=\"prism.h-score\" title=",
                    1,
                ),
            )
            .unwrap();
            assert!(
                !validate(&broken).status.success(),
                "the schema checks names"
            );
        }
    }
}

/// A gate passes only when it decided something, on scores that are scores, under the tasks
/// the items belong to: a baseline filing items under a path, means outside 0..1, or every item
/// under another sub-task is never a pass (exit 2, saying why).
#[test]
fn a_gate_on_a_baseline_that_decides_nothing_is_never_a_pass() {
    let env = Env {
        dir: tempfile::tempdir().unwrap(),
    };
    let base = env.run("base", |_| true);
    let cand = env.run("cand", |k| k % 3 != 0);
    let file = env.dir.path().join("base.json");
    env.prism()
        .args(["compare", &base, "--save-baseline"])
        .arg(&file)
        .arg("--db")
        .arg(env.db())
        .assert()
        .success();
    let good: Value = serde_json::from_str(&std::fs::read_to_string(&file).unwrap()).unwrap();
    // A committed file names the dataset by its folder, not this machine's path to it.
    let settings = good["settings"].as_str().unwrap();
    assert!(settings.contains(" · prism-mini · "), "{settings}");
    assert!(!settings.contains(env!("CARGO_MANIFEST_DIR")), "{settings}");
    let gate = |edit: &dyn Fn(&mut Value)| {
        let mut b = good.clone();
        for s in b["scores"].as_object_mut().unwrap().values_mut() {
            edit(s);
        }
        let f = env.dir.path().join("edited.json");
        std::fs::write(&f, serde_json::to_string_pretty(&b).unwrap()).unwrap();
        let o = env
            .prism()
            .arg("gate")
            .arg(&f)
            .arg(&cand)
            .arg("--db")
            .arg(env.db())
            .output()
            .unwrap();
        (
            o.status.code(),
            format!(
                "{}{}",
                String::from_utf8_lossy(&o.stdout),
                String::from_utf8_lossy(&o.stderr)
            ),
        )
    };
    // As saved: decided (the candidate is worse).
    let (code, text) = gate(&|_| {});
    assert_eq!(code, Some(1), "{text}");
    let (code, text) = gate(&|s| s["task"] = json!("../../etc"));
    assert_eq!(code, Some(2), "{text}");
    assert!(
        text.contains(".task: \"../../etc\" is not a sub-task id"),
        "{text}"
    );
    for mean in [-5.0, 1000.0] {
        let (code, text) = gate(&|s| s["mean"] = json!(mean));
        assert_eq!(code, Some(2), "{text}");
        assert!(
            text.contains(".mean:") && text.contains("is not a score (0 to 1)"),
            "{text}"
        );
    }
    // Every item under another sub-task: none is paired under a task both sides give it.
    let (code, text) = gate(&|s| s["task"] = json!("KM-FK-Relabel"));
    assert_eq!(code, Some(2), "{text}");
    assert!(
        text.contains(
            "no item scored on both (an item counts only under the sub-task both sides give it)"
        ),
        "{text}"
    );
}
