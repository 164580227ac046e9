//! The judge earns its vote (issue 65): `prism judges --save-calibration` keeps each judge's
//! numbers against people with what the judge is; a changed endpoint, model or temperature
//! makes it stale; `prism gate` counts a row standing on a judge only while that judge is
//! calibrated above the floor, else the row is advisory in Markdown, JUnit and JSON; a baseline
//! file carries the calibrations. The mock's judges make the truth known: `judge` reads the
//! answer's `[[same]]`, `judgecontrary` says the opposite on answers holding `[[contrary]]`.

mod common;

use std::path::{Path, PathBuf};

use assert_cmd::Command;
use common::mock;
use prism::dataset;
use serde_json::{Value, json};

fn mini() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/prism-mini")
}

struct Env {
    dir: tempfile::TempDir,
    url: String,
    _mock: mock::Mock,
}

impl Env {
    fn new() -> Env {
        let mock = mock::start_background();
        let env = Env {
            dir: tempfile::tempdir().unwrap(),
            url: mock.url(),
            _mock: mock,
        };
        env.models(&format!("{}/v1", env.url));
        env
    }
    /// The models file, `j` at `j_url`.
    fn models(&self, j_url: &str) {
        let m = |name: &str, url: &str, model: &str| {
            format!(
                "[[models]]\nname = \"{name}\"\nprovider = \"openai\"\nbase_url = \"{url}\"\nmodel = \"{model}\"\nmax_retries = 0\n\n"
            )
        };
        std::fs::write(
            self.dir.path().join("models.toml"),
            [
                m("j", j_url, "judge"),
                m("c", &format!("{}/v1", self.url), "judgecontrary"),
            ]
            .concat(),
        )
        .unwrap();
    }
    fn prism(&self) -> Command {
        let mut c = Command::cargo_bin("prism").unwrap();
        c.env("PRISM_CONFIG_DIR", self.dir.path())
            .env("PRISM_DATA_DIR", self.dir.path())
            .env("USER", "tester");
        c
    }
    fn out(&self, args: &[&str]) -> (i32, String, String) {
        let o = self.prism().args(args).output().unwrap();
        (
            o.status.code().unwrap_or(-1),
            String::from_utf8_lossy(&o.stdout).into_owned(),
            String::from_utf8_lossy(&o.stderr).into_owned(),
        )
    }
    /// The judged answers imported as a run and scored by `judge`; the run's id.
    fn run_judged_by(&self, judge: &str) -> String {
        let out = self.dir.path().join(format!("outputs-{judge}"));
        write_answers(&out);
        let (code, id, err) = self.out(&[
            "import",
            "--dataset",
            mini().to_str().unwrap(),
            "--prism-outputs",
            out.to_str().unwrap(),
        ]);
        assert_eq!(code, 0, "{err}");
        let id = id.trim().to_string();
        let (code, _, err) = self.out(&[
            "score",
            "--run",
            &id,
            "--data",
            mini().to_str().unwrap(),
            "--judge",
            judge,
        ]);
        assert_eq!(code, 0, "{err}");
        id
    }
}

/// One answer per item of the judged fact tasks: every other one `[[same]]` (correct by
/// `judge`), every fourth from the second `[[contrary]]`.
fn write_answers(out: &Path) {
    let ds = dataset::load_path(&mini()).unwrap().dataset;
    let mut by_task: std::collections::BTreeMap<String, String> = Default::default();
    let mut i = 0;
    for it in &ds.items {
        let task = ds.task_of(it);
        if task.evaluator.as_str() != "fact_judge" && task.evaluator.as_str() != "judge_equiv" {
            continue;
        }
        let mut text = format!("A claim about {}", it.id);
        if i % 2 == 0 {
            text.push_str(" [[same]]");
        }
        if i % 4 == 1 {
            text.push_str(" [[contrary]]");
        }
        i += 1;
        by_task
            .entry(task.id.clone())
            .or_default()
            .push_str(&format!(
                "{}\n",
                json!({"id": it.id.to_string(), "response": text})
            ));
    }
    let dir = out.join("m").join("responses");
    std::fs::create_dir_all(&dir).unwrap();
    for (task, body) in by_task {
        std::fs::write(dir.join(format!("{task}.jsonl")), body).unwrap();
    }
}

/// People label every answer of `run` as `judge` reads it.
fn label_as_judge_reads(env: &Env, run: &str) {
    let store = prism::store::Store::open(&env.dir.path().join("prism.db")).unwrap();
    let mut lines = String::new();
    for r in store.responses(run).unwrap() {
        let hallucinated = !r.text.unwrap_or_default().contains("[[same]]");
        lines.push_str(&format!(
            "{}\n",
            json!({"run": run, "job": r.job_idx, "reviewer": "ann",
                   "label": if hallucinated { "hallucinated" } else { "correct" }})
        ));
    }
    let file = env.dir.path().join("labels.jsonl");
    std::fs::write(&file, lines).unwrap();
    let (code, _, err) = env.out(&["labels", "import", file.to_str().unwrap()]);
    assert_eq!(code, 0, "{err}");
}

#[test]
fn a_calibration_is_saved_goes_stale_and_decides_which_gate_rows_count() {
    let env = Env::new();
    let base = env.run_judged_by("j");
    label_as_judge_reads(&env, &base);
    let floor = ["--judge-floor-labels", "10"];

    // Before any is saved: not calibrated.
    let (_, table, _) = env.out(&["judges", &base, floor[0], floor[1]]);
    assert!(table.contains("j              not calibrated"), "{table}");
    assert!(table.contains("AC1") && table.contains("PABAK"), "{table}");

    let (code, _, err) = env.out(&["judges", &base, "--save-calibration", floor[0], floor[1]]);
    assert_eq!(code, 0, "{err}");
    assert!(err.contains("saved"), "{err}");
    let (_, v, _) = env.out(&["judges", &base, "--json", floor[0], floor[1]]);
    let v: Value = serde_json::from_str(&v).unwrap();
    assert_eq!(v["calibration"][0]["judge"], "j");
    assert_eq!(
        v["calibration"][0]["standing"]["status"], "calibrated",
        "{v:#}"
    );
    let j = &v["groups"][0]["vs_people"][0];
    assert_eq!(j["ac1"]["value"], 1.0);
    assert_eq!(j["pabak"]["value"], 1.0);
    assert_eq!(j["tpr"], 1.0);
    let b = j["base_rate"].as_f64().unwrap();
    assert!((j["constant_accuracy"].as_f64().unwrap() - b.max(1.0 - b)).abs() < 1e-12);

    // The same name at another endpoint is another judge: stale, and said why.
    env.models(&format!("{}/v2", env.url));
    let (_, table, _) = env.out(&["judges", &base, floor[0], floor[1]]);
    assert!(table.contains("stale: the endpoint changed"), "{table}");
    // The run's report says it too.
    let (code, rep, err) = env.out(&["report", "--run", &base, "--format", "json"]);
    assert_eq!(code, 0, "{err}");
    let rep: Value = serde_json::from_str(&rep).unwrap();
    let said = rep["calibration"][0]["rows"][0]["calibration"]
        .as_str()
        .unwrap();
    assert!(said.starts_with("stale: the endpoint changed"), "{rep:#}");
    env.models(&format!("{}/v1", env.url));
    // A floor wanting more labels than there are (50).
    let (_, table, _) = env.out(&["judges", &base, "--judge-floor-labels", "60"]);
    assert!(
        table.contains("below the floor: kappa 1.00, AC1 1.00 on 50 labels"),
        "{table}"
    );

    // The gate: the baseline's KE rests on `c`, never calibrated: advisory everywhere.
    let cand = env.run_judged_by("c");
    let junit = env.dir.path().join("gate.xml");
    let (code, md, err) = env.out(&[
        "gate",
        &cand,
        &base,
        floor[0],
        floor[1],
        "--junit",
        junit.to_str().unwrap(),
    ]);
    assert_eq!(code, 0, "advisory rows never fail: {md}{err}");
    assert!(md.contains("⚠️ advisory"), "{md}");
    assert!(md.contains("judge c: not calibrated"), "{md}");
    assert!(!md.contains("judge j:"), "j is calibrated\n{md}");
    let xml = std::fs::read_to_string(&junit).unwrap();
    assert!(xml.contains("<skipped message=\"advisory"), "{xml}");
    let xsd = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/junit/junit.xsd");
    let valid = std::process::Command::new("xmllint")
        .args(["--noout", "--schema"])
        .arg(&xsd)
        .arg(&junit)
        .output()
        .expect("xmllint (libxml2-utils) runs the JUnit schema check");
    assert!(
        valid.status.success(),
        "{}",
        String::from_utf8_lossy(&valid.stderr)
    );
    let (_, js, _) = env.out(&["gate", &cand, &base, "--json", floor[0], floor[1]]);
    let g: Value = serde_json::from_str(&js).unwrap();
    let ke = g["rows"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["name"] == "KE")
        .unwrap();
    assert!(
        ke["advisory"].as_str().unwrap().contains("judge c"),
        "{ke:#}"
    );
    assert_eq!(ke["failed"], false);
    // c calls correct what j calls hallucinated on the [[contrary]] ones: read by j, the
    // candidate looks worse, and trusting every judge makes the gate fail on it.
    assert_eq!(ke["would_fail"], true, "{ke:#}");
    let (code, md, _) = env.out(&["gate", &cand, &base, "--trust-uncalibrated-judges"]);
    assert_eq!(code, 1, "{md}");
    assert!(!md.contains("advisory"), "{md}");

    // A baseline file carries the calibrations of the judges its scores stand on.
    let file = env.dir.path().join("baseline.json");
    let (code, _, err) = env.out(&["compare", &base, "--save-baseline", file.to_str().unwrap()]);
    assert_eq!(code, 0, "{err}");
    let b: Value = serde_json::from_str(&std::fs::read_to_string(&file).unwrap()).unwrap();
    assert_eq!(b["calibrations"][0]["identity"]["judge"], "j", "{b:#}");
    assert!(
        !b["calibrations"][0]["identity"]["endpoint"]
            .as_str()
            .unwrap()
            .is_empty()
    );
    // Gated against itself from the file alone, j's rows count (calibrated by the file's).
    let (code, md, err) = env.out(&["gate", file.to_str().unwrap(), &base, floor[0], floor[1]]);
    assert_eq!(code, 0, "{md}{err}");
    assert!(!md.contains("advisory"), "{md}");
}

/// Your own judge prompt, tried on the same labels: `prism judges --try-template` asks the
/// judge with each wording and the dataset's on the labelled answers, keeps each as a judge of
/// its own (`c~plain`), leaves the scores alone and says which wording agrees with people;
/// `prism score --judge-template` scores with one; an edited wording makes its calibration
/// stale. The mock's `judgecontrary` flips its verdict on prompts holding `[[contrary]]`, so a
/// wording holding it is wrong everywhere and the dataset's is wrong on a quarter.
#[test]
fn wordings_of_a_judge_are_tried_on_the_same_labels_and_bound_to_their_text() {
    let env = Env::new();
    let base = env.run_judged_by("c");
    label_as_judge_reads(&env, &base);
    let body = "Question: {question}\nAnswer: {model_answer}\nReference: {reference}\nSame meaning? Say YES or NO.";
    let plain = env.dir.path().join("plain.md");
    std::fs::write(&plain, body).unwrap();
    let contrary = env.dir.path().join("contrary.md");
    std::fs::write(&contrary, format!("[[contrary]] {body}")).unwrap();
    let floor = ["--judge-floor-labels", "10"];
    let store_path = env.dir.path().join("prism.db");
    let judged_by = |run: &str| -> Vec<Option<String>> {
        let store = prism::store::Store::open(&store_path).unwrap();
        let mut j: Vec<_> = store
            .scores(Some(run))
            .unwrap()
            .into_iter()
            .map(|s| s.judge)
            .filter(Option::is_some)
            .collect();
        j.dedup();
        j
    };
    assert_eq!(judged_by(&base), [Some("c".to_string())]);

    let (code, out, err) = env.out(&[
        "judges",
        &base,
        "--judge",
        "c",
        "--try-template",
        plain.to_str().unwrap(),
        "--try-template",
        contrary.to_str().unwrap(),
        floor[0],
        floor[1],
    ]);
    assert_eq!(code, 0, "{err}");
    assert!(err.contains("c~plain: 50 answer(s) judged"), "{err}");
    assert!(out.contains("Wordings of one judge"), "{out}");
    assert!(
        out.contains("c agrees with people more than c~contrary"),
        "{out}"
    );
    assert!(
        out.contains("c and c~plain agree with people on the same 50 answers"),
        "{out}"
    );
    assert!(
        out.contains("c~plain agrees with people more than c~contrary"),
        "{out}"
    );
    // Scores stay as they stood.
    assert_eq!(judged_by(&base), [Some("c".to_string())]);

    let (_, v, _) = env.out(&["judges", &base, "--json", floor[0], floor[1]]);
    let v: Value = serde_json::from_str(&v).unwrap();
    let pair = v["templates"]
        .as_array()
        .unwrap()
        .iter()
        .find(|p| p["a"] == "c" && p["b"] == "c~contrary")
        .unwrap_or_else(|| panic!("{v:#}"));
    assert_eq!(pair["n"], 50);
    assert_eq!(pair["accuracy_b"], 0.0, "wrong on every answer: {pair:#}");
    let a = pair["accuracy_a"].as_f64().unwrap();
    assert!(
        a > 0.6 && a < 0.9,
        "wrong on the [[contrary]] quarter: {pair:#}"
    );
    assert!(pair["p_value"].as_f64().unwrap() < 0.001, "{pair:#}");
    assert!(
        pair["difference"]["high"].as_f64().unwrap() < 0.0,
        "{pair:#}"
    );
    // The store keeps the wordings' text.
    let store = prism::store::Store::open(&store_path).unwrap();
    let kept: Vec<prism::review::judge_templates::JudgeTemplate> =
        store.records_where(None).unwrap();
    assert_eq!(kept.len(), 2);
    assert!(kept.iter().any(|t| t.label == "plain" && t.text == body));
    drop(store);

    // Scoring with a wording: another judge, named so.
    let score_with_plain = || {
        let (code, _, err) = env.out(&[
            "score",
            "--run",
            &base,
            "--data",
            mini().to_str().unwrap(),
            "--judge",
            "c",
            "--judge-template",
            plain.to_str().unwrap(),
        ]);
        assert_eq!(code, 0, "{err}");
    };
    score_with_plain();
    assert_eq!(judged_by(&base), [Some("c~plain".to_string())]);

    // Calibrated, then the wording is edited and scored with again: stale, and why.
    let (code, _, err) = env.out(&["judges", &base, "--save-calibration", floor[0], floor[1]]);
    assert_eq!(code, 0, "{err}");
    let (_, table, _) = env.out(&["judges", &base, floor[0], floor[1]]);
    let line = |t: &str, j: &str| {
        let standings = t.split("\ncalibration (").nth(1).unwrap_or_default();
        standings
            .lines()
            .find(|l| l.starts_with(&format!("{j} ")))
            .map(str::to_string)
            .unwrap_or_else(|| panic!("no standing of {j}:\n{t}"))
    };
    assert!(!line(&table, "c~plain").contains("stale"), "{table}");
    std::fs::write(&plain, format!("{body}\nThink first.")).unwrap();
    score_with_plain();
    let (_, table, _) = env.out(&["judges", &base, floor[0], floor[1]]);
    assert!(
        line(&table, "c~plain").contains("stale: the template changed"),
        "{table}"
    );
    assert!(!line(&table, "c").contains("stale"), "{table}");

    // A wording without the answer, or for no judge, is refused before any judge is asked.
    let bad = env.dir.path().join("bad.md");
    std::fs::write(&bad, "Is {reference} right?").unwrap();
    let (code, _, err) = env.out(&[
        "score",
        "--run",
        &base,
        "--judge",
        "c",
        "--judge-template",
        bad.to_str().unwrap(),
    ]);
    assert_ne!(code, 0);
    assert!(err.contains("has no {model_answer}"), "{err}");
}
