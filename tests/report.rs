//! `prism report` as a user runs it: the paper's numbers from a summary and from Table 2, a
//! fixture store in every format, baselines, and the HTML report rendered by headless Chromium.

mod common;

use std::path::{Path, PathBuf};
use std::process::Command as StdCommand;

use assert_cmd::Command;
use prism::store::{JobRecord, RunConfig, RunRecord, ScoreRecord, Store};
use serde_json::Value;

fn reference(p: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures")
        .join(p)
}

fn prism(dir: &Path) -> Command {
    let mut c = Command::cargo_bin("prism").unwrap();
    c.env("PRISM_CONFIG_DIR", dir).env("PRISM_DATA_DIR", dir);
    c
}

fn out(a: &assert_cmd::assert::Assert) -> String {
    String::from_utf8(a.get_output().stdout.clone()).unwrap()
}

#[test]
fn the_gpt_5_2_summary_reports_the_papers_rates() {
    let dir = tempfile::tempdir().unwrap();
    let a = prism(dir.path())
        .args(["report", "--summary"])
        .arg(reference("reference/gpt-5.2-summary.json"))
        .assert()
        .success();
    let text = out(&a);
    let line = text.lines().find(|l| l.starts_with("GPT-5.2")).unwrap();
    let nums: Vec<&str> = line.split_whitespace().skip(1).collect();
    assert_eq!(nums, ["17.83", "5.57", "24.67", "15.35", "15.85"], "{text}");
}

#[test]
fn table_2_as_references_reproduces_every_h_score() {
    let dir = tempfile::tempdir().unwrap();
    let csv = Path::new(env!("CARGO_MANIFEST_DIR")).join("sample-data/references/paper-table2.csv");
    // The shipped copy is the paper's table as given.
    assert_eq!(
        std::fs::read_to_string(&csv).unwrap(),
        std::fs::read_to_string(reference("reference/paper-table2.csv")).unwrap()
    );
    let a = prism(dir.path())
        .args(["report", "--format", "json", "--references"])
        .arg(&csv)
        .assert()
        .success();
    let v: Value = serde_json::from_str(&out(&a)).unwrap();
    let models = v["models"].as_array().unwrap();
    assert_eq!(models.len(), 24);
    let mut rd = csv::Reader::from_path(&csv).unwrap();
    for (rec, m) in rd.records().map(Result::unwrap).zip(models) {
        assert_eq!(m["model"], rec.get(0).unwrap());
        assert_eq!(m["reference"], true);
        let published: f64 = rec.get(8).unwrap().parse().unwrap();
        let h = m["h_score"].as_f64().unwrap();
        assert!(
            (h - published).abs() <= 0.02,
            "{}: {h} vs {published}",
            rec.get(0).unwrap()
        );
    }
    // 24 models: the Spearman matrix is there, 1 on the diagonal.
    assert_eq!(v["dimension_correlations"]["KE"]["KE"], 1.0);
    assert!(v["dimension_correlations"]["KE"]["RE"].as_f64().is_some());
}

/// A store with a scored run: model `all-right` scores 1 everywhere, `all-wrong` 0, `half` 0.5,
/// `partial` only on KE tasks; `half` answered one item with HTML in it.
fn fixture(db: &Path, run_id: &str, half_score: f64) {
    let ds = prism::dataset::load_sample().dataset;
    let mut store = Store::open(db).unwrap();
    let models = ["all-right", "all-wrong", "half", "partial"];
    let mut jobs = Vec::new();
    let mut responses = Vec::new();
    let mut scores = Vec::new();
    for (mi, model) in models.iter().enumerate() {
        for it in &ds.items {
            let task = ds.task_of(it);
            if *model == "partial" && task.dimension != prism::taxonomy::Dimension::KE {
                continue;
            }
            let idx = jobs.len() as u32;
            jobs.push(JobRecord {
                idx,
                item_id: it.id.to_string(),
                task_id: task.id.clone(),
                model: model.to_string(),
                sample: 0,
            });
            let mut answer = common::answers::stored_answer(
                (run_id, idx),
                (&it.id, &task.id),
                model,
                &format!("<script>alert('{model}')</script> answer {}", it.id),
            );
            answer.finish_reason = None;
            responses.push(answer);
            let score = match mi {
                0 | 3 => 1.0,
                1 => 0.0,
                _ => half_score,
            };
            scores.push(ScoreRecord {
                run_id: run_id.into(),
                job_idx: idx,
                item_id: it.id.to_string(),
                task_id: task.id.clone(),
                model: model.to_string(),
                sample: 0,
                evaluator: task.evaluator.as_str().into(),
                score: Some(score),
                detail: "a <b>detail</b>".into(),
                judge: None,
                judge_reply: None,
                judge_attempts: 0,
                created_at: 0,
                rule_score: None,
            });
        }
    }
    store
        .create_run(
            &RunRecord {
                id: run_id.into(),
                created_at: 1_796_000_000,
                dataset: "<sample-data>".into(),
                config: RunConfig {
                    models: models
                        .iter()
                        .map(|m| {
                            serde_json::from_value(serde_json::json!({
                                "name": m, "provider": "openai", "model": format!("{m}-v1"),
                                "params": {"temperature": 0.2},
                            }))
                            .unwrap()
                        })
                        .collect(),
                    ..RunConfig::default()
                },
                status: prism::store::RunStatus::Finished,
            },
            &jobs,
        )
        .unwrap();
    store.save_responses(&responses).unwrap();
    store.save_scores(&scores).unwrap();
}

#[test]
fn a_fixture_store_in_every_format() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("f.db");
    fixture(&db, "run-a", 0.5);
    let report = |fmt: &str| {
        out(&prism(dir.path())
            .args(["report", "--run", "run-a", "--format", fmt, "--db"])
            .arg(&db)
            .assert()
            .success())
    };
    // CSV: exact values; the partial model has only KE, complete.
    let csv = report("csv");
    let lines: Vec<&str> = csv.lines().collect();
    assert_eq!(lines[0], "model,kind,KE,KM,RE,IFE,h_score,partial");
    assert_eq!(lines[1], "all-right,run,0.00,0.00,0.00,0.00,0.00,");
    assert_eq!(
        lines[2],
        "all-wrong,run,100.00,100.00,100.00,100.00,100.00,"
    );
    assert_eq!(lines[3], "half,run,50.00,50.00,50.00,50.00,50.00,");
    assert_eq!(lines[4], "partial,run,0.00,,,,,");
    // JSON: per model task scores, rates (null when missing) with coverage, H-Score.
    let v: Value = serde_json::from_str(&report("json")).unwrap();
    let half = &v["models"][2];
    assert_eq!(half["model"], "half");
    assert_eq!(half["task_scores"].as_object().unwrap().len(), 19);
    assert_eq!(half["task_scores"]["KE-FD-Myths"], 50.0);
    assert_eq!(half["dimension_hallucination_rates"]["RE"], 50.0);
    assert_eq!(half["coverage"]["KE"]["of"], 4);
    assert_eq!(half["h_score"], 50.0);
    assert_eq!(half["category_hallucination_rates"]["KE-FD"]["rate"], 50.0);
    assert_eq!(half["worst_subtasks"].as_array().unwrap().len(), 5);
    assert!(
        half["worst_subtasks"][0]["example"]["answer"]
            .as_str()
            .unwrap()
            .contains("<script>")
    );
    assert!(v["models"][3]["h_score"].is_null());
    assert!(v["models"][3]["dimension_hallucination_rates"]["KM"].is_null());
    assert_eq!(v["meta"]["date"], "2026-11-30 00:53 UTC");
    // The report names its run, and each model's settings in words (it once said "openai {}").
    assert!(v["meta"]["run"].as_str().is_some_and(|r| !r.is_empty()));
    assert_eq!(v["meta"]["run"], "run-a");
    assert_eq!(
        v["meta"]["models"][0],
        serde_json::json!(["all-right", "openai all-right-v1 temperature=0.2"])
    );
    // Markdown table.
    let md = report("md");
    assert!(
        md.starts_with(
            "| model | KE | KM | RE | IFE | H-Score |\n|---|---:|---:|---:|---:|---:|\n"
        ),
        "{md}"
    );
    assert!(
        md.contains("| half | 50.00 | 50.00 | 50.00 | 50.00 | 50.00 |"),
        "{md}"
    );
    assert!(md.contains("| partial | 0.00 | - | - | - | - |"), "{md}");
    // HTML: self-contained, model text escaped, the heatmap cells carry their values.
    let html = report("html");
    assert!(!html.contains("<script"), "model text must be escaped");
    assert!(html.contains("&lt;script&gt;alert(&#39;half&#39;)&lt;/script&gt;"));
    assert!(html.contains("a &lt;b&gt;detail&lt;/b&gt;"));
    // Self-contained: nothing is fetched (the only URL is the SVG namespace, which is a name).
    let fetched = ["<link", "src=", "@import", "url("];
    assert!(fetched.iter().all(|f| !html.contains(f)), "self-contained");
    assert_eq!(
        html.matches("http").count(),
        html.matches("http://www.w3.org/2000/svg").count()
    );
    assert!(html.contains("data-model=\"half\" data-col=\"H-Score\" data-value=\"50.00\""));
    assert_eq!(html.matches("<g class=\"cell").count(), 4 * 5);
}

#[test]
fn a_baseline_run_gives_deltas() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("f.db");
    fixture(&db, "run-a", 0.5);
    fixture(&db, "run-b", 0.25);
    let a = prism(dir.path())
        .args([
            "report",
            "--run",
            "run-b",
            "--baseline",
            "run-a",
            "--format",
            "json",
            "--db",
        ])
        .arg(&db)
        .assert()
        .success();
    let v: Value = serde_json::from_str(&out(&a)).unwrap();
    assert_eq!(v["models"][2]["baseline_delta"]["KE"], 25.0);
    assert_eq!(v["models"][2]["baseline_delta"]["h_score"], 25.0);
    assert_eq!(v["models"][0]["baseline_delta"]["KE"], 0.0);
    let t = out(&prism(dir.path())
        .args(["report", "--run", "run-b", "--baseline", "run-a", "--db"])
        .arg(&db)
        .assert()
        .success());
    assert!(t.contains("75.00 ▲+25.0"), "{t}");
    // Against one model of the report.
    let t = out(&prism(dir.path())
        .args([
            "report",
            "--run",
            "run-b",
            "--baseline",
            "all-wrong",
            "--db",
        ])
        .arg(&db)
        .assert()
        .success());
    assert!(
        t.lines()
            .any(|l| l.starts_with("all-right") && l.contains("▼-100.0")),
        "{t}"
    );
    prism(dir.path())
        .args(["report", "--run", "run-b", "--baseline", "nope", "--db"])
        .arg(&db)
        .assert()
        .failure()
        .stderr(predicates::str::contains(
            "--baseline nope: no run or model of that name",
        ));
}

fn chromium() -> Option<&'static str> {
    ["chromium-headless-shell", "chromium", "chromium-browser"]
        .into_iter()
        .find(|b| {
            StdCommand::new(b)
                .arg("--version")
                .output()
                .is_ok_and(|o| o.status.success())
        })
}

#[test]
#[ignore = "needs headless Chromium (bash .ci/run installs it)"]
fn the_html_report_renders_in_headless_chromium() {
    let browser = chromium().expect("headless Chromium (bash .ci/run installs it)");
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("f.db");
    fixture(&db, "run-a", 0.5);
    let html = dir.path().join("report.html");
    prism(dir.path())
        .args(["report", "--run", "run-a", "--format", "html", "-o"])
        .arg(&html)
        .arg("--references")
        .arg(reference("reference/paper-table2.csv"))
        .arg("--db")
        .arg(&db)
        .assert()
        .success();
    let outdir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("report-html");
    std::fs::create_dir_all(&outdir).unwrap();
    let png = outdir.join("report.png");
    let _ = std::fs::remove_file(&png);
    let url = format!("file://{}", html.display());
    let common = [
        "--no-sandbox",
        "--disable-gpu",
        "--headless",
        "--window-size=1300,1800",
    ];
    let shot = StdCommand::new(browser)
        .args(common)
        .arg(format!("--screenshot={}", png.display()))
        .arg(&url)
        .output()
        .unwrap();
    assert!(
        shot.status.success(),
        "{}",
        String::from_utf8_lossy(&shot.stderr)
    );
    let bytes = std::fs::read(&png).unwrap();
    assert!(
        bytes.starts_with(b"\x89PNG") && bytes.len() > 20_000,
        "a real screenshot: {} bytes",
        bytes.len()
    );
    let dom = StdCommand::new(browser)
        .args(common)
        .arg("--dump-dom")
        .arg(&url)
        .output()
        .unwrap();
    let dom = String::from_utf8_lossy(&dom.stdout);
    // The browser parsed the document: the heatmap cells, tables and escaped text are in its DOM.
    assert!(dom.contains("<svg id=\"heatmap\""), "{dom}");
    assert_eq!(dom.matches("class=\"cell").count(), (4 + 24) * 5);
    assert!(dom.contains("data-model=\"GPT-5.2\" data-col=\"KE\" data-value=\"17.83\""));
    assert!(dom.contains("<table id=\"spearman\">"));
    assert!(dom.contains("&lt;script&gt;alert"));
    assert!(!dom.contains("<script>alert"));
    eprintln!("screenshot: {}", png.display());
}

#[test]
fn the_html_heatmap_follows_the_chosen_theme() {
    let dir = tempfile::tempdir().unwrap();
    let html = |theme: &str| {
        out(&prism(dir.path())
            .args(["report", "--format", "html", "--theme", theme, "--summary"])
            .arg(reference("reference/gpt-5.2-summary.json"))
            .assert()
            .success())
    };
    let fill = |doc: &str| {
        let at = doc.find("data-col=\"KE\"").unwrap();
        let rest = &doc[at..];
        let f = rest.find("fill=\"").unwrap() + 6;
        rest[f..f + 7].to_string()
    };
    let (dark, light) = (html("dark"), html("light"));
    assert_ne!(fill(&dark), fill(&light));
    assert!(dark.contains("data-value=\"17.83\"") && light.contains("data-value=\"17.83\""));
}

/// A run with answers and no scores: the hint names the command that scores it with the `--db`
/// given, so following it works.
#[test]
fn the_hint_for_an_unscored_run_repeats_the_db_it_was_given() {
    let dir = tempfile::tempdir().unwrap();
    let ds = prism::dataset::load_sample().dataset;
    let it = &ds.items[0];
    let outputs = dir.path().join("outputs/m/responses");
    std::fs::create_dir_all(&outputs).unwrap();
    std::fs::write(
        outputs.join(format!("{}.jsonl", ds.task_of(it).id)),
        format!("{}\n", serde_json::json!({"id": &*it.id, "response": "x"})),
    )
    .unwrap();
    let db = dir.path().join("my store.db");
    prism(dir.path())
        .args(["import", "--prism-outputs"])
        .arg(dir.path().join("outputs"))
        .arg("--db")
        .arg(&db)
        .assert()
        .success();
    let a = prism(dir.path())
        .arg("report")
        .arg("--db")
        .arg(&db)
        .assert()
        .failure();
    let err = String::from_utf8_lossy(&a.get_output().stderr).to_string();
    assert!(err.contains("has no scores yet"), "{err}");
    assert!(
        err.contains(&format!("--db '{}'` first", db.display())),
        "{err}"
    );
}

/// With fewer than three complete models the Spearman table cannot be filled: the report says
/// why, with the counts, instead of a table of dashes.
#[test]
fn an_empty_spearman_table_says_why() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("r.html");
    prism(dir.path())
        .args(["report", "--format", "html", "--summary"])
        .arg(reference("reference/gpt-5.2-summary.json"))
        .arg("-o")
        .arg(&out)
        .assert()
        .success();
    let html = std::fs::read_to_string(&out).unwrap();
    assert!(
        html.contains("fewer than three models have complete rates in both dimensions")
            && html.contains("models with complete rates per dimension: KE 1, KM 1, RE 1, IFE 1"),
        "{}",
        &html[html.find("spearman").unwrap_or(0)..][..600.min(html.len())]
    );
}
