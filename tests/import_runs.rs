//! `prism import` of other tools' runs (issue 64), on logs the real tools wrote
//! (`tests/fixtures/import/`, made by `scripts/import-fixtures`: inspect_ai 0.3.285 in both log
//! formats, lm-eval 0.4.13, promptfoo 0.121.20, each against a scripted server): each becomes a
//! run, its release items placed and scored by PRISM's rules, the rest under the tool's tree
//! with the tool's scores; imported twice it is one run; compared, gated and labelled as any
//! run; and hostile logs (a zip bomb, a FIFO, a newer format, a sample with no output, a cut
//! file) each named, the rest imported, nothing half-written.

mod common;

use std::io::Write;
use std::path::{Path, PathBuf};

use assert_cmd::Command;
use serde_json::Value;

fn fixtures() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/import")
}

fn sample_data() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("sample-data")
}

/// The fixture log of each kind, by a short name.
fn log(kind: &str) -> PathBuf {
    let find = |dir: &str, ext: &str| {
        let mut v: Vec<PathBuf> = std::fs::read_dir(fixtures().join(dir))
            .unwrap()
            .flatten()
            .map(|e| e.path())
            .filter(|p| p.to_string_lossy().ends_with(ext))
            .collect();
        v.sort();
        v.remove(0)
    };
    match kind {
        "inspect-json" => find("inspect", ".json"),
        "inspect-eval" => find("inspect", ".eval"),
        "lm-eval" => find("lm-eval/stub-model", ".jsonl"),
        "promptfoo" => fixtures().join("promptfoo/results.json"),
        _ => unreachable!(),
    }
}

struct Env {
    dir: tempfile::TempDir,
}

impl Env {
    fn new() -> Env {
        Env {
            dir: tempfile::tempdir().unwrap(),
        }
    }
    fn prism(&self) -> Command {
        let mut c = Command::cargo_bin("prism").unwrap();
        c.env("PRISM_CONFIG_DIR", self.dir.path())
            .env("PRISM_DATA_DIR", self.dir.path())
            .env("NO_COLOR", "1");
        c
    }
    /// Imports `files` with the sample data as the release: (exit code, stdout, stderr).
    fn import(&self, files: &[&Path], more: &[&str]) -> (i32, String, String) {
        let out = self
            .prism()
            .arg("import")
            .args(files)
            .arg("--data")
            .arg(sample_data())
            .args(more)
            .output()
            .unwrap();
        (
            out.status.code().unwrap_or(-1),
            String::from_utf8_lossy(&out.stdout).into_owned(),
            String::from_utf8_lossy(&out.stderr).into_owned(),
        )
    }
    fn json(&self, args: &[&str]) -> Value {
        let out = self.prism().args(args).output().unwrap();
        assert!(
            out.status.success(),
            "{args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        serde_json::from_slice(&out.stdout).unwrap()
    }
    fn runs(&self) -> usize {
        let v = self.json(&["runs", "--json"]);
        v.as_array().map_or(0, Vec::len)
    }
}

/// The source table's rows of a run's report, as (model, tree) → (answers, tool mean).
fn source_rows(env: &Env, run: &str) -> std::collections::BTreeMap<String, (String, String)> {
    let v = env.json(&["report", "--run", run, "--format", "json"]);
    let t = &v["source"][0];
    assert_eq!(t["id"], "source_scores", "{v:#}");
    t["rows"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| {
            (
                r["tree"].as_str().unwrap().to_string(),
                (
                    r["answers"].as_str().unwrap().to_string(),
                    r["tool mean"].as_str().unwrap().to_string(),
                ),
            )
        })
        .collect()
}

#[test]
fn each_tools_own_log_becomes_a_run_with_its_scores_and_prisms() {
    for (kind, tool) in [
        ("inspect-json", "inspect"),
        ("inspect-eval", "inspect"),
        ("lm-eval", "lm-eval"),
        ("promptfoo", "promptfoo"),
    ] {
        let env = Env::new();
        let (code, out, err) = env.import(&[&log(kind)], &[]);
        assert_eq!(code, 0, "{kind}: {err}");
        let run = out.trim().to_string();
        assert!(run.starts_with('r'), "{kind}: {out}");
        // Four of the six samples are items of the sample data: two by id, one (q-moon) by its
        // question's text, one more by id; the other two sit under the tool's tree.
        assert!(
            err.contains("6 answers of") && err.contains("4 on the release's items, 2 under"),
            "{kind}: {err}"
        );
        // The tool's own scores, over its tree: the scripted server is right on bones,
        // logic and arithmetic, wrong on the Moon year, the capital and the made-up loom.
        let rows = source_rows(&env, &run);
        let task = rows
            .iter()
            .find(|(k, _)| k.starts_with(&format!("{tool}/")) && k.matches('/').count() == 1)
            .unwrap_or_else(|| panic!("{kind}: no task row in {rows:?}"));
        assert_eq!(task.1, &("6".to_string(), "0.500".to_string()), "{kind}");
        let cat = |c: &str| {
            rows.iter()
                .find(|(k, _)| k.ends_with(&format!("/{c}")))
                .map(|(_, v)| v.1.clone())
                .unwrap_or_else(|| panic!("{kind}: no {c} in {rows:?}"))
        };
        assert_eq!(cat("facts"), "0.500", "{kind}");
        assert_eq!(cat("arithmetic"), "1.000", "{kind}");
        assert_eq!(cat("geography"), "0.000", "{kind}");
        // PRISM's rules on the release items, and how they agree with the tool.
        let s = env.json(&["score", "--run", &run, "--json"]);
        let text = s.to_string();
        assert!(text.contains("KE"), "{kind}: {s:#}");
        let v = env.json(&["report", "--run", &run, "--format", "json"]);
        let agree = &v["source"][1];
        assert_eq!(agree["id"], "source_agreement", "{kind}: {v:#}");
        let row = &agree["rows"][0];
        assert_eq!(row["answers"], "4", "{kind}: {agree:#}");
        assert_eq!(row["both right"], "2", "{kind}: {agree:#}");
        assert_eq!(row["both wrong"], "2", "{kind}: {agree:#}");
        // The rates: KE-FD-Numbers one of two wrong, the loom made up (KM), the syllogism right.
        // (Partial: the sample data has more sub-tasks than these, so the rate is coverage's.)
        let cov = &v["models"][0]["coverage"];
        let rate = |d: &str| cov[d]["rate"].as_f64();
        assert_eq!(rate("KE"), Some(50.0), "{kind}: {v:#}");
        assert_eq!(rate("KM"), Some(100.0), "{kind}: {v:#}");
        assert_eq!(rate("RE"), Some(0.0), "{kind}: {v:#}");
        // No answer is counted as waiting for a score: the two foreign ones never get one.
        let listed = env.json(&["runs", "--json"]);
        assert_eq!(listed[0]["unscored_answers"], 0, "{kind}: {listed:#}");
    }
}

#[test]
fn a_log_imported_twice_is_one_run() {
    let env = Env::new();
    let (_, first, _) = env.import(&[&log("inspect-json")], &[]);
    let (code, again, err) = env.import(&[&log("inspect-json")], &[]);
    assert_eq!(code, 0, "{err}");
    assert_eq!(first, again, "the same run's id");
    assert!(err.contains("imported before as run"), "{err}");
    assert_eq!(env.runs(), 1);
    // Another tool's log of the same items is another run.
    env.import(&[&log("lm-eval")], &[]);
    assert_eq!(env.runs(), 2);
}

#[test]
fn imported_runs_compare_gate_and_take_labels_like_any_run() {
    let env = Env::new();
    let (_, a, _) = env.import(&[&log("inspect-eval")], &[]);
    let (_, b, _) = env.import(&[&log("promptfoo")], &[]);
    let (a, b) = (a.trim(), b.trim());
    for r in [a, b] {
        env.prism().args(["score", "--run", r]).assert().success();
    }
    let c = env.json(&["compare", a, b, "--format", "json"]);
    let text = c.to_string();
    assert!(text.contains("KE-FD-Numbers"), "{c:#}");
    let out = env.prism().args(["gate", a, b]).output().unwrap();
    assert_eq!(
        out.status.code(),
        Some(0),
        "the same answers gate: {}",
        String::from_utf8_lossy(&out.stdout)
    );
    // A person's verdict on an imported answer (job 0).
    env.prism()
        .args(["labels", "add", a, "0", "hallucinated"])
        .assert()
        .success();
    let listed = env.prism().args(["labels", "list"]).output().unwrap();
    assert!(
        String::from_utf8_lossy(&listed.stdout).contains("hallucinated"),
        "{}",
        String::from_utf8_lossy(&listed.stdout)
    );
}

#[test]
fn a_model_map_names_who_answers_for_an_imported_model() {
    let env = Env::new();
    let (code, out, err) = env.import(
        &[&log("inspect-json")],
        &["--model-map", "openai-api/stub/stub-model=local"],
    );
    assert_eq!(code, 0, "{err}");
    let listed = env.prism().arg("runs").output().unwrap();
    let text = String::from_utf8_lossy(&listed.stdout);
    assert!(text.contains(out.trim()), "{text}");
    assert!(
        text.contains("openai-api/stub/stub-model (new answers from local)"),
        "{text}"
    );
    let (code, _, err) = env.import(&[&log("lm-eval")], &["--model-map", "nonsense"]);
    assert_eq!(code, 1);
    assert!(err.contains("IMPORTED=CONFIGURED"), "{err}");
}

/// The inspect JSON fixture with `edit` applied to its parsed form, written to `dir/name`.
fn edited_inspect(dir: &Path, name: &str, edit: impl FnOnce(&mut Value)) -> PathBuf {
    let mut v: Value =
        serde_json::from_slice(&std::fs::read(log("inspect-json")).unwrap()).unwrap();
    edit(&mut v);
    let p = dir.join(name);
    std::fs::write(&p, serde_json::to_vec(&v).unwrap()).unwrap();
    p
}

#[test]
fn a_sample_with_no_output_is_a_failed_answer_and_a_broken_one_is_named() {
    let env = Env::new();
    let p = edited_inspect(env.dir.path(), "log.json", |v| {
        for s in v["samples"].as_array_mut().unwrap() {
            match s["id"].as_str() {
                Some("KE-FD-Numbers-0001") => {
                    s.as_object_mut().unwrap().remove("output");
                }
                // An epoch that is no number: not a sample inspect writes.
                Some("q-moon") => s["epoch"] = Value::from("many"),
                _ => {}
            }
        }
    });
    let (code, out, err) = env.import(&[&p], &[]);
    assert_eq!(code, 2, "read with problems: {err}");
    assert!(
        err.contains("log.json: sample q-moon:") && err.contains("left out"),
        "named by file and sample: {err}"
    );
    assert!(err.contains("5 answers of"), "{err}");
    let run = out.trim();
    let answers = env
        .prism()
        .args(["export", "--run", run, "--prism-outputs"])
        .arg(env.dir.path().join("out"))
        .output()
        .unwrap();
    assert!(answers.status.success());
    let body = std::fs::read_to_string(
        env.dir
            .path()
            .join("out/openai-api_stub_stub-model/responses/KE-FD-Numbers.jsonl"),
    )
    .unwrap();
    assert!(body.contains("ERROR: no output in the log"), "{body}");
}

#[test]
fn hostile_logs_are_refused_by_name_and_the_rest_imports() {
    let env = Env::new();
    let d = env.dir.path();
    // A newer log format.
    let newer = edited_inspect(d, "newer.json", |v| v["version"] = Value::from(9));
    // A file cut short: nothing of it is written.
    let full = std::fs::read(log("inspect-json")).unwrap();
    let cut = d.join("cut.json");
    std::fs::write(&cut, &full[..full.len() / 2]).unwrap();
    // A FIFO (reading it would wait forever).
    let fifo = d.join("pipe.json");
    assert!(
        std::process::Command::new("mkfifo")
            .arg(&fifo)
            .status()
            .unwrap()
            .success()
    );
    // A zip bomb: a sample entry of 300 MiB of zeros (a few hundred KiB compressed).
    let bomb = d.join("bomb.eval");
    {
        let f = std::fs::File::create(&bomb).unwrap();
        let mut z = zip::ZipWriter::new(f);
        let opts = zip::write::SimpleFileOptions::default()
            .compression_method(zip::CompressionMethod::Deflated)
            .large_file(true);
        let src = std::fs::File::open(log("inspect-eval")).unwrap();
        let mut orig = zip::ZipArchive::new(src).unwrap();
        let mut header = String::new();
        std::io::Read::read_to_string(&mut orig.by_name("header.json").unwrap(), &mut header)
            .unwrap();
        z.start_file("header.json", opts).unwrap();
        z.write_all(header.as_bytes()).unwrap();
        z.start_file("samples/bomb_epoch_1.json", opts).unwrap();
        let zeros = vec![b' '; 1 << 20];
        for _ in 0..300 {
            z.write_all(&zeros).unwrap();
        }
        // One real sample beside it still imports.
        let mut good = String::new();
        let name = orig
            .file_names()
            .filter_map(|n| n.ok().map(|n| n.to_string()))
            .find(|n| n.starts_with("samples/arith"))
            .unwrap();
        std::io::Read::read_to_string(&mut orig.by_name(&name).unwrap(), &mut good).unwrap();
        z.start_file(name, opts).unwrap();
        z.write_all(good.as_bytes()).unwrap();
        z.finish().unwrap();
    }
    let (code, out, err) = env.import(&[&newer, &cut, &fifo, &bomb, &log("promptfoo")], &[]);
    assert_eq!(code, 2, "{err}");
    assert!(
        err.contains("newer.json: inspect_ai log format version 9 is newer"),
        "{err}"
    );
    assert!(
        err.contains("cut.json: does not read as an inspect_ai log"),
        "{err}"
    );
    assert!(err.contains("pipe.json: not a regular file"), "{err}");
    assert!(
        err.contains("bomb.eval: samples/bomb_epoch_1.json:") && err.contains("zip bomb"),
        "{err}"
    );
    // The bomb's good sample and the promptfoo log: two runs, nothing of the others.
    assert_eq!(out.lines().count(), 2, "{out}");
    assert_eq!(env.runs(), 2);
    assert!(err.contains("bomb.eval: 1 answers of"), "{err}");
}

#[test]
fn a_file_no_tool_wrote_is_named_and_format_forces_a_reading() {
    let env = Env::new();
    let odd = env.dir.path().join("notes.json");
    std::fs::write(&odd, "{\"hello\": 1}").unwrap();
    let (code, _, err) = env.import(&[&odd], &[]);
    assert_eq!(code, 1);
    assert!(err.contains("notes.json: not a log prism knows"), "{err}");
    // Read as promptfoo's, on purpose: what is missing is said.
    let (code, _, err) = env.import(&[&odd], &["--format", "promptfoo"]);
    assert_eq!(code, 1);
    assert!(err.contains("notes.json: results: missing"), "{err}");
    // A directory stands for the logs in it (lm-eval's results file is read through its
    // samples file, not twice).
    let (code, out, err) = env.import(&[&fixtures()], &[]);
    assert_eq!(code, 0, "{err}");
    assert_eq!(out.lines().count(), 4, "{out}\n{err}");
}

#[test]
fn a_mapped_model_draws_new_samples_for_imported_answers() {
    let mock = common::mock::start_background();
    let env = Env::new();
    std::fs::write(
        env.dir.path().join("models.toml"),
        format!(
            "[[models]]\nname = \"teller\"\nprovider = \"openai\"\nbase_url = \"{}/v1\"\nmodel = \"echo\"\n",
            mock.url()
        ),
    )
    .unwrap();
    let (code, out, err) = env.import(
        &[&log("inspect-json")],
        &["--model-map", "openai-api/stub/stub-model=teller"],
    );
    assert_eq!(code, 0, "{err}");
    let run = out.trim();
    let drawn = env
        .prism()
        .args(["sentences", run, "--samples", "2", "--json"])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&drawn.stderr);
    assert!(
        drawn.status.success()
            && err.contains("drawing 8 sample(s) for 4 answer(s) of 1 model(s)")
            && err.contains(
                "model openai-api/stub/stub-model (answered by teller, mapped at import): 8 sample(s) drawn, 0 failed"
            ),
        "two more for each answer on a release item: {err}"
    );
    // Without the map there is no endpoint to call, and it says so.
    let env = Env::new();
    let (_, out, _) = env.import(&[&log("inspect-json")], &[]);
    let drawn = env
        .prism()
        .args(["sentences", out.trim(), "--samples", "2", "--json"])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&drawn.stderr);
    assert!(err.contains("was imported from files"), "{err}");
}
