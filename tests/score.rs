//! `prism score` as a user runs it: on an official outputs directory of real prism-mini items
//! (without a judge, then with one served by the mock), and on a store.

mod common;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use assert_cmd::Command;
use common::mock;
use prism::dataset::{self, Dataset};
use serde_json::{Value, json};

fn mini() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/prism-mini")
}

fn load_mini() -> Dataset {
    dataset::load_path(&mini()).unwrap().dataset
}

struct Env {
    dir: tempfile::TempDir,
    mock: mock::Mock,
}

impl Env {
    fn new() -> Env {
        let mock = mock::start_background();
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(
            dir.path().join("models.toml"),
            format!(
                "[[models]]\nname = \"j\"\nprovider = \"openai\"\nbase_url = \"{}/v1\"\nmodel = \"judge\"\nmax_retries = 0\n",
                mock.url()
            ),
        )
        .unwrap();
        Env { dir, mock }
    }

    fn prism(&self) -> Command {
        let mut c = Command::cargo_bin("prism").unwrap();
        c.env("PRISM_CONFIG_DIR", self.dir.path())
            .env("PRISM_DATA_DIR", self.dir.path());
        c
    }

    fn out(&self) -> PathBuf {
        self.dir.path().join("outputs")
    }
}

/// Answers for eight real tasks, written as the official scripts would.
fn write_responses(ds: &Dataset, out: &Path) -> BTreeMap<String, Vec<(String, String)>> {
    let mut by_task: BTreeMap<String, Vec<(String, String)>> = BTreeMap::new();
    for it in &ds.items {
        let task = ds.task_of(it).id.clone();
        let answer = it.answer.as_deref().unwrap_or("");
        let n = by_task.get(&task).map_or(0, Vec::len);
        let response = match task.as_str() {
            // The first answer is an API error: scores 0, stays in the denominator.
            "KE-FD-DefAn" if n == 0 => "ERROR: HTTP 500".to_string(),
            "KE-FD-DefAn" => format!("  {}\n", answer.to_uppercase()),
            "RE-LF-Critical_Reasoning" => format!("Let me think.\nThe answer is **{answer}**"),
            "KM-FK-Dynasty" if n == 1 => "It was founded in 1402.".to_string(),
            "KM-FK-Dynasty" => "I have no record of that. [NO_INFO]".to_string(),
            "KE-EIC-SelfBuilt" if n == 0 => "[[same]] the answer".to_string(),
            "KE-EIC-SelfBuilt" => "something else".to_string(),
            "RE-MRF-Code_Generation" => "def f(x):\n    return x".to_string(),
            "RE-IIF-Summarize" => "A summary.".to_string(),
            "RE-MRF-Mathematics" if n == 0 => "[[truncated]] 42".to_string(),
            "RE-MRF-Mathematics" if n == 1 => "[[garbage-once]] 42".to_string(),
            "RE-MRF-Mathematics" => "42".to_string(),
            "IFE-CCL-No_Comma" if n == 0 => "One, two".to_string(),
            _ => continue,
        };
        by_task
            .entry(task)
            .or_default()
            .push((it.id.to_string(), response));
    }
    let dir = out.join("m").join("responses");
    std::fs::create_dir_all(&dir).unwrap();
    for (task, rows) in &by_task {
        let body: String = rows
            .iter()
            .map(|(id, r)| format!("{}\n", json!({"id": id, "response": r})))
            .collect();
        std::fs::write(dir.join(format!("{task}.jsonl")), body).unwrap();
    }
    by_task
}

fn scores(out: &Path, task: &str) -> Vec<Value> {
    let p = out.join("m/scores").join(format!("{task}.jsonl"));
    std::fs::read_to_string(&p)
        .unwrap_or_default()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

#[test]
fn outputs_without_a_judge_score_by_rule_and_leave_judged_items_unscored() {
    let env = Env::new();
    let ds = load_mini();
    let written = write_responses(&ds, &env.out());
    let a = score_outputs_json(&env);
    let out = a.get_output();
    let summary: Value = serde_json::from_slice(&out.stdout).unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    let on_disk: Value =
        serde_json::from_str(&std::fs::read_to_string(env.out().join("m/summary.json")).unwrap())
            .unwrap();
    assert_eq!(summary, on_disk);
    assert_eq!(summary["model"], "m");

    // exact: the API error scores 0 and stays in the denominator; case and spaces are normalised.
    let n = written["KE-FD-DefAn"].len() as f64;
    let s = summary["task_scores"]["KE-FD-DefAn"].as_f64().unwrap();
    assert!((s - 100.0 * (n - 1.0) / n).abs() < 1e-3, "{s}");
    let defan = scores(&env.out(), "KE-FD-DefAn");
    assert_eq!(defan[0]["score"], 0.0);
    assert_eq!(defan[0]["detail"], "failed response (API error)");
    // choice, including the two-option questions.
    assert_eq!(summary["task_scores"]["RE-LF-Critical_Reasoning"], 100.0);
    // abstain: one answered instead of abstaining.
    let fk = written["KM-FK-Dynasty"].len() as f64;
    let s = summary["task_scores"]["KM-FK-Dynasty"].as_f64().unwrap();
    assert!((s - 100.0 * (fk - 1.0) / fk).abs() < 1e-3);
    // ifeval: the comma fails with its instruction named.
    let nc = scores(&env.out(), "IFE-CCL-No_Comma");
    assert_eq!(nc[0]["score"], 0.0);
    assert!(
        nc[0]["detail"]
            .as_str()
            .unwrap()
            .contains("punctuation:no_comma")
    );

    // Judged tasks: unscored, listed, never written as wrong.
    for task in [
        "KE-EIC-SelfBuilt",
        "RE-MRF-Code_Generation",
        "RE-IIF-Summarize",
        "RE-MRF-Mathematics",
    ] {
        assert!(scores(&env.out(), task).is_empty(), "{task}");
        assert!(summary["task_scores"].get(task).is_none(), "{task}");
        assert!(summary["unscored_items_by_task"][task].as_u64().unwrap() > 0);
    }
    assert!(stderr.contains("left unscored"), "{stderr}");
    assert!(stderr.contains("KE-EIC-SelfBuilt-"), "{stderr}");
    // Partial dimensions have no official rate and no H-Score, but say how partial they are.
    assert!(summary["dimension_hallucination_rates"]["KE"].is_null());
    assert!(summary["partial_rates"]["KE"].as_f64().is_some());
    assert_eq!(summary["coverage"]["KE"]["of"], 15);
    assert!(summary["h_score"].is_null());
    assert_eq!(env.mock.requests(), 0);
}

#[test]
fn outputs_with_a_judge_go_through_the_engine_and_keep_the_reply() {
    let env = Env::new();
    let ds = load_mini();
    write_responses(&ds, &env.out());
    let run = || {
        env.prism()
            .args(["score", "--json", "--model", "m", "--judge", "j", "--data"])
            .arg(mini())
            .arg("--prism-outputs")
            .arg(env.out())
            .assert()
            .success()
    };
    let a = run();
    let summary: Value = serde_json::from_slice(&a.get_output().stdout).unwrap();
    assert_eq!(summary["judge"], "j");
    // Semantic equivalence: YES only for the marked answer.
    let eq = scores(&env.out(), "KE-EIC-SelfBuilt");
    assert_eq!(eq[0]["score"], 1.0);
    assert_eq!(eq[0]["judge_reply"], "YES");
    assert_eq!(eq[1]["score"], 0.0);
    // Code: 5+5+5+5 → 2.5 → 2 (halves to even), not the judge's own total of 5.
    let code = scores(&env.out(), "RE-MRF-Code_Generation");
    assert!(code.iter().all(|c| c["score"] == 0.4), "{code:?}");
    assert!(
        code[0]["judge_reply"]
            .as_str()
            .unwrap()
            .contains("\"total\":5")
    );
    // Claims from a fenced reply: 1 of 4 hallucinated.
    let claims = scores(&env.out(), "RE-IIF-Summarize");
    assert!(claims.iter().all(|c| c["score"] == 0.75));
    // Math: truncated JSON three times → fallback incorrect; garbage once → read on attempt 2.
    let math = scores(&env.out(), "RE-MRF-Mathematics");
    assert_eq!(
        (
            math[0]["score"].as_f64(),
            math[0]["judge_attempts"].as_u64()
        ),
        (Some(0.0), Some(3))
    );
    assert!(math[0]["detail"].as_str().unwrap().contains("fallback"));
    assert_eq!(
        (
            math[1]["score"].as_f64(),
            math[1]["judge_attempts"].as_u64()
        ),
        (Some(1.0), Some(2))
    );
    assert_eq!(math[2]["score"], 1.0);
    assert_eq!(math[2]["judge_attempts"], 1);
    assert!(
        summary["task_scores"]["RE-MRF-Mathematics"]
            .as_f64()
            .is_some()
    );
    assert!(
        summary["unscored_items_by_task"]
            .as_object()
            .unwrap()
            .is_empty()
    );

    // Scoring again reuses the judge's cached replies: no new request.
    let before = env.mock.requests();
    assert!(before > 0);
    let again: Value = serde_json::from_slice(&run().get_output().stdout).unwrap();
    assert_eq!(env.mock.requests(), before);
    assert_eq!(again["task_scores"], summary["task_scores"]);
}

#[test]
fn a_store_is_rescored_in_place_and_reported_per_model() {
    let env = Env::new();
    let ds = load_mini();
    write_responses(&ds, &env.out());
    let db = env.dir.path().join("s.db");
    let a = env
        .prism()
        .args(["import", "--prism-outputs"])
        .arg(env.out())
        .arg("--db")
        .arg(&db)
        .arg("--dataset")
        .arg(mini())
        .assert()
        .success();
    let run_id = String::from_utf8_lossy(&a.get_output().stdout)
        .trim()
        .to_string();
    let score = |judge: bool| -> Value {
        let mut c = env.prism();
        c.args(["score", "--json", "--db"])
            .arg(&db)
            .args(["--run", &run_id]);
        if judge {
            c.args(["--judge", "j"]);
        }
        serde_json::from_slice(&c.assert().success().get_output().stdout).unwrap()
    };
    let first = score(false);
    assert_eq!(first["run"], run_id.as_str());
    let c = &first["counts"];
    assert!(c["unscored"].as_u64().unwrap() > 0);
    assert_eq!(c["by_judge"], 0);
    let second = score(true);
    assert_eq!(second["counts"]["unscored"], 0);
    assert!(second["counts"]["by_judge"].as_u64().unwrap() > 0);
    assert_eq!(second["counts"]["fallbacks"], 1);
    // The store holds one score per response, replaced by the re-score.
    let store = prism::store::Store::open(&db).unwrap();
    let all = store.scores(Some(&run_id)).unwrap();
    assert_eq!(all.len(), store.responses(&run_id).unwrap().len());
    assert!(all.iter().all(|s| s.score.is_some()));
    let judged: Vec<_> = all.iter().filter(|s| s.judge.is_some()).collect();
    assert!(judged.iter().all(|s| s.judge_reply.is_some()));
    // The table form names the models and marks partial rates.
    let t = env
        .prism()
        .args(["score", "--db"])
        .arg(&db)
        .args(["--run", &run_id])
        .assert()
        .success();
    let text = String::from_utf8_lossy(&t.get_output().stdout).to_string();
    assert!(text.contains("H-Score") && text.contains("\nm "), "{text}");
    assert!(text.contains("* partial: KE"), "{text}");
}

#[test]
fn every_ifeval_instruction_in_prism_mini_is_supported() {
    let ds = load_mini();
    let mut seen = 0;
    for it in &ds.items {
        if ds.task_of(it).evaluator != prism::taxonomy::Evaluator::Ifeval {
            continue;
        }
        let (list, notes) = prism::eval::ifeval::instructions_for(
            it.instruction_id.as_deref(),
            it.kwargs.as_deref(),
            &it.question,
        );
        assert!(
            notes
                .iter()
                .all(|n| n.contains("scored with the check's default")),
            "{}: {notes:?}",
            it.id
        );
        assert!(!list.is_empty(), "{}", it.id);
        for i in &list {
            assert!(
                prism::eval::ifeval::SUPPORTED.contains(&i.id.as_str()),
                "{}: {}",
                it.id,
                i.id
            );
            // Every argument the check needs is there: an empty answer fails for a reason other
            // than a missing argument.
            if let Err(why) = prism::eval::ifeval::check(i, "x") {
                assert!(
                    !why.contains("missing from kwargs"),
                    "{}: {} {why}",
                    it.id,
                    i.id
                );
            }
        }
        seen += list.len();
    }
    assert!(seen >= 40, "{seen}");
}

#[test]
fn a_bad_outputs_line_is_reported_and_the_rest_scored() {
    let env = Env::new();
    let dir = env.out().join("m/responses");
    std::fs::create_dir_all(&dir).unwrap();
    let ds = load_mini();
    let id = ds
        .items
        .iter()
        .find(|i| &*ds.task_of(i).id == "KE-FD-DefAn")
        .unwrap();
    std::fs::write(
        dir.join("KE-FD-DefAn.jsonl"),
        format!(
            "{}\nnot json\n{}\n",
            json!({"id": id.id, "response": id.answer}),
            json!({"id": "KE-FD-DefAn-9999", "response": "x"})
        ),
    )
    .unwrap();
    let a = env
        .prism()
        .args(["score", "--model", "m", "--data"])
        .arg(mini())
        .arg("--prism-outputs")
        .arg(env.out())
        .assert()
        .code(2);
    let err = String::from_utf8_lossy(&a.get_output().stderr).to_string();
    assert!(
        err.contains("KE-FD-DefAn.jsonl:2: -: invalid JSON"),
        "{err}"
    );
    assert!(err.contains("KE-FD-DefAn-9999"), "{err}");
    // The line that could not be read leaves its item without a response: like every other
    // item of the task with none, it is scored as failed (PRISM's evaluation loops over the
    // data file), never dropped.
    let rows = scores(&env.out(), "KE-FD-DefAn");
    let in_task = ds
        .items
        .iter()
        .filter(|i| &*ds.task_of(i).id == "KE-FD-DefAn")
        .count();
    assert_eq!(rows.len(), in_task);
    assert_eq!(rows[0]["score"].as_f64(), Some(1.0), "{}", rows[0]);
    for r in &rows[1..] {
        assert_eq!(r["score"].as_f64(), Some(0.0), "{r}");
        assert!(r["detail"].as_str().unwrap().contains("no response"), "{r}");
    }
}

#[test]
fn the_judge_can_come_from_the_config_and_an_unknown_one_is_named() {
    let env = Env::new();
    let ds = load_mini();
    write_responses(&ds, &env.out());
    std::fs::write(env.dir.path().join("config.toml"), "judge = \"j\"\n").unwrap();
    let a = score_outputs_json(&env);
    let summary: Value = serde_json::from_slice(&a.get_output().stdout).unwrap();
    assert_eq!(summary["judge"], "j");
    assert!(env.mock.requests() > 0);
    let a = env
        .prism()
        .args(["score", "--model", "m", "--judge", "nobody", "--data"])
        .arg(mini())
        .arg("--prism-outputs")
        .arg(env.out())
        .assert()
        .failure();
    let err = String::from_utf8_lossy(&a.get_output().stderr).to_string();
    assert!(
        err.contains("no model \"nobody\" to judge with (configured: local, smol, j)"),
        "{err}"
    );
}

/// Copies prism-mini (data and prompts) into `dir`, leaving out the data files of `drop`.
fn copy_mini(dir: &Path, drop: &[&str]) -> PathBuf {
    let dst = dir.join("release");
    fn copy(src: &Path, dst: &Path, drop: &[&str]) {
        std::fs::create_dir_all(dst).unwrap();
        for e in std::fs::read_dir(src).unwrap().flatten() {
            let p = e.path();
            let to = dst.join(e.file_name());
            if p.is_dir() {
                copy(&p, &to, drop);
            } else if !drop.iter().any(|d| p.ends_with(d)) {
                std::fs::copy(&p, &to).unwrap();
            }
        }
    }
    copy(&mini(), &dst, drop);
    dst
}

/// Writes `outputs/m/responses/<task>.jsonl` from (item id, response) rows.
fn write_rows(out: &Path, rows: &[(String, String)]) {
    let dir = out.join("m").join("responses");
    std::fs::create_dir_all(&dir).unwrap();
    let mut by_task: BTreeMap<String, String> = BTreeMap::new();
    for (id, r) in rows {
        let task = id.rsplit_once('-').unwrap().0.to_string();
        by_task
            .entry(task)
            .or_default()
            .push_str(&format!("{}\n", json!({"id": id, "response": r})));
    }
    for (task, body) in by_task {
        std::fs::write(dir.join(format!("{task}.jsonl")), body).unwrap();
    }
}

/// `prism score --json` of model `m` in the outputs directory, on prism-mini; it must succeed.
fn score_outputs_json(env: &Env) -> assert_cmd::assert::Assert {
    env.prism()
        .args(["score", "--json", "--model", "m", "--data"])
        .arg(mini())
        .arg("--prism-outputs")
        .arg(env.out())
        .assert()
        .success()
}

fn score_of(out: &Path, id: &str) -> Value {
    let task = id.rsplit_once('-').unwrap().0;
    scores(out, task)
        .into_iter()
        .find(|s| s["id"] == id)
        .unwrap_or_else(|| panic!("no score for {id}"))
}

/// The close cases of PRISM-FORMAT.md ("Details that decide close cases"), scored by `prism score`
/// on real prism-mini items as the official evaluators score them.
#[test]
fn close_cases_score_as_the_official_evaluators_do() {
    let env = Env::new();
    let ds = load_mini();
    let first = |task: &str, k: usize| -> String {
        ds.items
            .iter()
            .filter(|it| ds.task_of(it).id == task)
            .nth(k)
            .unwrap_or_else(|| panic!("{task} has no item {k}"))
            .id
            .to_string()
    };
    let de = first("IFE-LgC-German", 0);
    let de2 = first("IFE-LgC-German", 1);
    let ru = first("IFE-LgC-Russian", 0);
    let es = first("IFE-LgC-Spanish", 0);
    let fr = first("IFE-LgC-French", 0);
    let ja = first("IFE-LgC-Japanese", 0);
    let zh = first("IFE-LgC-Chinese", 0);
    // The IFEval checks with empty kwargs (IFE-EF-Text_Structure) and their questions' counts.
    let text_structure: Vec<(String, String)> = ds
        .items
        .iter()
        .filter(|it| ds.task_of(it).id == "IFE-EF-Text_Structure")
        .map(|it| {
            (
                it.id.to_string(),
                it.instruction_id.as_deref().unwrap_or("").to_string(),
            )
        })
        .collect();
    let with = |instr: &str| -> String {
        text_structure
            .iter()
            .find(|(_, i)| i == instr)
            .unwrap_or_else(|| panic!("no {instr} item"))
            .0
            .clone()
    };
    let bullets = with("detectable_format:number_bullet_lists");
    let highlights = with("detectable_format:number_highlighted_sections");
    let sections = with("detectable_format:multiple_sections");
    let choice = first("RE-LF-Critical_Reasoning", 0);
    // A two-option item (answer B): PRISM takes the topmost match in the last five lines.
    let two = "RE-LF-Contextual_Inference-0002".to_string();
    let two_item = ds.items.iter().find(|it| *it.id == *two).unwrap();
    assert_eq!(two_item.options.as_ref().map(|o| o.len()), Some(2));
    assert_eq!(two_item.answer.as_deref(), Some("B"));
    let letters = first("RE-LF-Cognitive_Traps", 0);
    let rows: Vec<(String, String)> = vec![
        // langdetect with seed 0 labels these as Python does (tests/fixtures/langdetect.jsonl).
        (de.clone(), "B.".into()),                 // de: passes German
        (de2.clone(), "Answer: [NO_INFO]".into()), // de as well
        (ru.clone(), "Привет".into()),             // bg: fails Russian
        (es.clone(), "Hola amigo".into()),         // so: fails Spanish
        (fr.clone(), "Bonjour".into()),            // fr
        (ja.clone(), "こんにちは".into()),         // ja
        (zh.clone(), "你好".into()),               // zh-cn counts as zh
        // One bullet passes the default "at least 1" although the question asks for more.
        (bullets.clone(), "* only one bullet".into()),
        (highlights.clone(), "one *highlight* only".into()),
        (sections.clone(), "Paragraph 1\nAll in one.".into()),
        // Four options: E is not a letter the extraction considers.
        (choice.clone(), "The answer is E.".into()),
        (two.clone(), "A\nB\nC\nD\nE\nF".into()),
        (letters.clone(), "**A**\n**C**".into()),
    ];
    write_rows(&env.out(), &rows);
    let a = score_outputs_json(&env);
    let _summary: Value = serde_json::from_slice(&a.get_output().stdout).unwrap();
    let expect = [
        (&de, 1.0),
        (&de2, 1.0),
        (&ru, 0.0),
        (&es, 0.0),
        (&fr, 1.0),
        (&ja, 1.0),
        (&zh, 1.0),
        (&bullets, 1.0),
        (&highlights, 1.0),
        (&sections, 1.0),
        (&choice, 0.0),
        (&two, 1.0),
        (&letters, 1.0), // answer A
    ];
    for (id, want) in expect {
        let s = score_of(&env.out(), id);
        assert_eq!(s["score"].as_f64(), Some(want), "{id}: {s}");
        let detail = s["detail"].as_str().unwrap_or("");
        assert!(!detail.contains("not checked"), "{id}: {detail}");
    }
    let d = score_of(&env.out(), &bullets);
    assert!(
        d["detail"]
            .as_str()
            .unwrap()
            .contains("scored with the check's default"),
        "{d}"
    );
    assert_eq!(
        score_of(&env.out(), &ru)["detail"],
        "detected Bulgarian, expected Russian"
    );
    assert_eq!(
        score_of(&env.out(), &choice)["detail"],
        "no option letter found"
    );
}

/// A dimension is complete only when every task the registry names is scored: with seven task
/// files missing from the release, KE is 14 of 15 and there is no H-Score.
#[test]
fn completeness_is_relative_to_the_registry() {
    let env = Env::new();
    let dropped = [
        "KE/FD/DefAn.jsonl",
        "KM/FK/Dynasty.jsonl",
        "KM/FK/Phone.jsonl",
        "RE/LF/Cognitive_Traps.jsonl",
        "IFE/LgC/German.jsonl",
        "IFE/LC/Approximate.jsonl",
        "IFE/CCL/No_Comma.jsonl",
    ];
    let release = copy_mini(env.dir.path(), &dropped);
    let loaded = dataset::load_path(&release).unwrap();
    assert_eq!(loaded.dataset.tasks.len(), 58);
    assert_eq!(loaded.dataset.registry.len(), 65);
    // Every loaded item answered by rule or failed, so every loaded task is complete.
    let rows: Vec<(String, String)> = loaded
        .dataset
        .items
        .iter()
        .map(|it| (it.id.to_string(), "ERROR: HTTP 500".to_string()))
        .collect();
    write_rows(&env.out(), &rows);
    let a = env
        .prism()
        .args(["score", "--json", "--model", "m", "--data"])
        .arg(&release)
        .arg("--prism-outputs")
        .arg(env.out())
        .assert()
        .success();
    let summary: Value = serde_json::from_slice(&a.get_output().stdout).unwrap();
    // The warning says what the problems are and that nothing that loaded was left out.
    let err = String::from_utf8_lossy(&a.get_output().stderr).to_string();
    assert!(
        err.contains("7 problem(s) in the dataset (7 task file(s) missing); every item that loaded is used (287 items in 58 tasks)"),
        "{err}"
    );
    assert!(!err.contains("lines are skipped"), "{err}");
    assert!(!err.contains("registry is not the official one"), "{err}");
    assert_eq!(summary["coverage"]["KE"], json!({"tasks": 14, "of": 15}));
    assert_eq!(summary["coverage"]["KM"]["of"], 22);
    assert!(summary["dimension_hallucination_rates"]["KE"].is_null());
    assert!(summary["h_score"].is_null(), "{summary}");

    // A summary.json without coverage, holding one KE task, is KE 1 of 15: partial.
    let lone = env.dir.path().join("lone.json");
    std::fs::write(
        &lone,
        json!({"model": "x", "task_scores": {"KE-FD-DefAn": 80.0}}).to_string(),
    )
    .unwrap();
    let a = env
        .prism()
        .args(["report", "--format", "json", "--summary"])
        .arg(&lone)
        .assert()
        .success();
    let report: Value = serde_json::from_slice(&a.get_output().stdout).unwrap();
    let m = &report["models"][0];
    assert_eq!(m["coverage"]["KE"]["tasks"], 1, "{m}");
    assert_eq!(m["coverage"]["KE"]["of"], 15, "{m}");
    assert!(m["dimension_hallucination_rates"]["KE"].is_null(), "{m}");
    assert!(m["h_score"].is_null(), "{m}");
}

/// A registry of 41 sub-tasks (not the official 65) is named as such by `prism validate` and
/// `prism score`; prompt files missing are counted as what they are; a dimension with no
/// answers says of how many tasks it has none.
#[test]
fn a_registry_that_is_not_the_official_one_is_named_and_coverage_counts_its_tasks() {
    let env = Env::new();
    let release = copy_mini(env.dir.path(), &["prompts/tasks/KE-FD.md"]);
    let reg = release.join("data/tasks.json");
    let tasks: Vec<Value> = serde_json::from_str(&std::fs::read_to_string(&reg).unwrap()).unwrap();
    let kept: Vec<&Value> = tasks.iter().take(41).collect();
    std::fs::write(&reg, serde_json::to_string_pretty(&kept).unwrap()).unwrap();
    let loaded = dataset::load_path(&release).unwrap();
    let ke_items: Vec<(String, String)> = loaded
        .dataset
        .items
        .iter()
        .filter(|it| it.id.starts_with("KE-"))
        .map(|it| (it.id.to_string(), "ERROR: HTTP 500".to_string()))
        .collect();
    assert!(!ke_items.is_empty());
    write_rows(&env.out(), &ke_items);
    let a = env
        .prism()
        .args(["score", "--json", "--model", "m", "--data"])
        .arg(&release)
        .arg("--prism-outputs")
        .arg(env.out())
        .assert();
    let err = String::from_utf8_lossy(&a.get_output().stderr).to_string();
    assert!(
        err.contains("it lists 41 of the release's 65 sub-tasks"),
        "{err}"
    );
    assert!(err.contains("task(s) without their prompt file"), "{err}");
    assert!(
        err.contains("data file(s) no tasks.json entry names"),
        "{err}"
    );
    let summary: Value = serde_json::from_slice(&a.get_output().stdout).unwrap();
    let per_dim = |d: &str| {
        kept.iter()
            .filter(|t| t["task_id"].as_str().unwrap().starts_with(&format!("{d}-")))
            .count()
    };
    for d in ["KM", "RE", "IFE"] {
        assert_eq!(
            summary["coverage"][d],
            json!({"tasks": 0, "of": per_dim(d)}),
            "{d}: {summary}"
        );
    }
    let v = env
        .prism()
        .args(["validate", "--json"])
        .arg(&release)
        .assert();
    let report: Value = serde_json::from_slice(&v.get_output().stdout).unwrap();
    assert!(
        report["registry_note"]
            .as_str()
            .unwrap()
            .contains("not comparable with the paper's"),
        "{report}"
    );
    // The official registry gets no such note.
    let v = env
        .prism()
        .args(["validate", "--json"])
        .arg(mini())
        .assert();
    let report: Value = serde_json::from_slice(&v.get_output().stdout).unwrap();
    assert!(report.get("registry_note").is_none(), "{report}");
}

/// Review's "rule and judge disagree" signal (issue 21): a fact_judge answer that says the
/// opposite yes/no of the reference is still judged (PRISM's rule), and the judge may pass it;
/// the rule's own verdict is stored beside the judge's, and the review queue flags the item.
/// The score itself is the judge's, as PRISM scores it.
#[test]
fn the_rule_verdict_is_kept_beside_the_judges_and_flags_disagreement() {
    let env = Env::new();
    let ds = load_mini();
    let yes_no: Vec<&prism::dataset::Item> = ds
        .items
        .iter()
        .filter(|it| ds.task_of(it).evaluator == prism::taxonomy::Evaluator::FactJudge)
        .filter(|it| prism::eval::score::yes_no(it.answer.as_deref().unwrap_or("")).is_some())
        .take(2)
        .collect();
    assert_eq!(
        yes_no.len(),
        2,
        "prism-mini has fact_judge items with yes/no references"
    );
    let opposite =
        |it: &prism::dataset::Item| match prism::eval::score::yes_no(it.answer.as_deref().unwrap())
        {
            Some("yes") => "No",
            _ => "Yes",
        };
    // The first: the opposite word, and the judge passes it ([[same]] steers the mock).
    // The second: the opposite word, and the judge fails it: rule and judge agree.
    let rows = vec![
        (
            yes_no[0].id.to_string(),
            format!("{}, that is the point [[same]]", opposite(yes_no[0])),
        ),
        (yes_no[1].id.to_string(), opposite(yes_no[1]).to_string()),
    ];
    write_rows(&env.out(), &rows);
    let db = env.dir.path().join("s.db");
    let a = env
        .prism()
        .args(["import", "--prism-outputs"])
        .arg(env.out())
        .arg("--db")
        .arg(&db)
        .arg("--dataset")
        .arg(mini())
        .assert()
        .success();
    let run_id = String::from_utf8_lossy(&a.get_output().stdout)
        .trim()
        .to_string();
    env.prism()
        .args(["score", "--json", "--judge", "j", "--db"])
        .arg(&db)
        .args(["--run", &run_id])
        .assert()
        .success();
    let store = prism::store::Store::open(&db).unwrap();
    let all = store.scores(Some(&run_id)).unwrap();
    let of = |id: &str| all.iter().find(|s| s.item_id == id).unwrap();
    let (first, second) = (of(&yes_no[0].id), of(&yes_no[1].id));
    assert_eq!((first.score, first.rule_score), (Some(1.0), Some(0.0)));
    assert_eq!((second.score, second.rule_score), (Some(0.0), Some(0.0)));
    let data =
        prism::review::load::ReviewData::load(&prism::store::Db::file(&db), "ann", None).unwrap();
    let signals = |id: &str| data.signals.get(id).copied().unwrap_or_default();
    assert_eq!(signals(&yes_no[0].id).rule_judge, 1);
    assert!(
        signals(&yes_no[0].id)
            .labels()
            .contains(&"rule and judge disagree")
    );
    assert_eq!(signals(&yes_no[1].id).rule_judge, 0);
}

/// Fidelity round three, through `prism score --prism-outputs` on real prism-mini items:
/// the choice letter as PRISM-FORMAT.md spells it (a letter glued to a letter of any script is
/// no choice, only the first letter of "The answer is" may change case, nothing need follow the
/// letter), Python's whitespace (U+001C-U+001F split words), and a missing response scored as
/// failed, in the denominator, and said.
#[test]
fn choice_letters_whitespace_and_missing_responses_score_as_prism_does() {
    let env = Env::new();
    let ds = load_mini();
    let items_of = |task: &str| -> Vec<&prism::dataset::Item> {
        ds.items
            .iter()
            .filter(|it| ds.task_of(it).id == task)
            .collect()
    };
    // Four-option choice items by their answer.
    let choice: Vec<&prism::dataset::Item> = [
        "RE-LF-Critical_Reasoning",
        "RE-LF-Cognitive_Traps",
        "RE-LF-Contextual_Inference",
    ]
    .iter()
    .flat_map(|t| items_of(t))
    .filter(|it| it.options.as_ref().is_some_and(|o| o.len() == 4))
    .collect();
    let mut used = std::collections::HashSet::new();
    let mut with_answer = |a: &str| -> String {
        let it = choice
            .iter()
            .find(|it| it.answer.as_deref() == Some(a) && !used.contains(&*it.id))
            .unwrap_or_else(|| panic!("no unused choice item with answer {a}"));
        used.insert(it.id.to_string());
        it.id.to_string()
    };
    // (item, response, the score PRISM gives)
    let mut cases: Vec<(String, String, f64)> = vec![
        (with_answer("B"), "答案是B。".into(), 0.0),
        (with_answer("B"), "ОтветB".into(), 0.0),
        (with_answer("B"), "I choose B\n所以答案是C".into(), 1.0),
        (with_answer("D"), "The answer is Definitely C".into(), 1.0),
        (
            with_answer("C"),
            "THE ANSWER IS B but maybe C is also fine".into(),
            1.0,
        ),
        (with_answer("C"), "Answer C\nbut I also like D".into(), 1.0),
        (
            with_answer("B"),
            "My answer\nB is the one, and D is wrong".into(),
            1.0,
        ),
        (with_answer("A"), "A\nx\nx\nx\nx\nx\nB .".into(), 1.0),
    ];
    // exact: `a\x1fb` is `a b` to Python's str.split().
    let who = items_of("KE-EIC-WhoQA_Entity");
    let answer = who[0].answer.clone().unwrap();
    cases.push((
        who[0].id.to_string(),
        answer.replace(' ', "\u{1f}") + "\u{1c}",
        1.0,
    ));
    // word_range: words separated by U+001F count one by one.
    let lower = items_of("IFE-LC-Lower_Bound");
    let words = (1..=400).map(|i| format!("w{i}")).collect::<Vec<_>>();
    cases.push((lower[0].id.to_string(), words.join("\u{1f}"), 1.0));
    let rows: Vec<(String, String)> = cases
        .iter()
        .map(|(id, r, _)| (id.clone(), r.clone()))
        .collect();
    write_rows(&env.out(), &rows);
    let a = score_outputs_json(&env);
    let summary: Value = serde_json::from_slice(&a.get_output().stdout).unwrap();
    let err = String::from_utf8_lossy(&a.get_output().stderr).to_string();
    for (id, response, want) in &cases {
        let s = score_of(&env.out(), id);
        assert_eq!(s["score"].as_f64(), Some(*want), "{id} {response:?}: {s}");
    }
    // Every other item of the tasks answered has no response: failed, 0, counted.
    let who_scores = scores(&env.out(), "KE-EIC-WhoQA_Entity");
    assert_eq!(
        who_scores.len(),
        who.len(),
        "every item of the task is scored"
    );
    let absent = &who_scores[1];
    assert_eq!(absent["score"].as_f64(), Some(0.0), "{absent}");
    let want_rate = 100.0 / who.len() as f64;
    let got = summary["task_scores"]["KE-EIC-WhoQA_Entity"]
        .as_f64()
        .unwrap();
    assert!((got - want_rate).abs() < 0.01, "{got} vs {want_rate}");
    let missing = summary["missing_responses"]["count"].as_u64().unwrap() as usize;
    let in_tasks: usize = [
        "KE-EIC-WhoQA_Entity",
        "IFE-LC-Lower_Bound",
        "RE-LF-Critical_Reasoning",
        "RE-LF-Cognitive_Traps",
        "RE-LF-Contextual_Inference",
    ]
    .iter()
    .filter(|t| rows.iter().any(|(id, _)| id.starts_with(*t)))
    .map(|t| items_of(t).len())
    .sum();
    assert_eq!(missing, in_tasks - rows.len());
    assert!(
        err.contains(&format!(
            "{missing} item(s) of the answered tasks have no response"
        )),
        "{err}"
    );
}

/// `english_lowercase` fails a title-case letter, as Python's `str.islower` does.
#[test]
fn a_title_case_letter_is_not_lower_case() {
    let text = "this is a plain answer written in simple english words about the weather";
    let kw = [json!({})];
    let pass =
        prism::eval::ifeval::ifeval(text, Some("change_case:english_lowercase"), Some(&kw), "");
    assert_eq!(pass.score, 1.0, "{}", pass.detail);
    let titled = format!("{text} \u{1c5}");
    let fail = prism::eval::ifeval::ifeval(
        &titled,
        Some("change_case:english_lowercase"),
        Some(&kw),
        "",
    );
    assert_eq!(fail.score, 0.0, "{}", fail.detail);
}

/// An import with its dataset keeps the items of an answered task that have no response as
/// failed answers, so the run's rates count them as PRISM does, and says how many.
#[test]
fn an_import_keeps_items_without_a_response_as_failed_answers() {
    let env = Env::new();
    let ds = load_mini();
    let who: Vec<_> = ds
        .items
        .iter()
        .filter(|it| &*ds.task_of(it).id == "KE-EIC-WhoQA_Entity")
        .collect();
    write_rows(
        &env.out(),
        &[(
            who[0].id.to_string(),
            who[0].answer.clone().unwrap().to_string(),
        )],
    );
    let db = env.out().join("imported.db");
    let a = env
        .prism()
        .args(["import", "--prism-outputs"])
        .arg(env.out())
        .arg("--dataset")
        .arg(mini())
        .arg("--db")
        .arg(&db)
        .assert()
        .success();
    let err = String::from_utf8_lossy(&a.get_output().stderr).to_string();
    let missing = who.len() - 1;
    assert!(
        err.contains(&format!(
            "{missing} item(s) of the answered tasks have no response"
        )),
        "{err}"
    );
    let run = String::from_utf8_lossy(&a.get_output().stdout)
        .trim()
        .to_string();
    let s = prism::store::Store::open(&db).unwrap();
    let rs = s.responses(&run).unwrap();
    assert_eq!(rs.len(), who.len());
    assert_eq!(rs.iter().filter(|r| !r.is_ok()).count(), missing);
    // Scored, the task's rate holds every item: one right of all.
    let a = env
        .prism()
        .args(["score", "--json", "--data"])
        .arg(mini())
        .arg("--db")
        .arg(&db)
        .assert()
        .success();
    let v: Value = serde_json::from_slice(&a.get_output().stdout).unwrap();
    let got = v["models"][0]["task_scores"]["KE-EIC-WhoQA_Entity"]
        .as_f64()
        .unwrap_or_else(|| panic!("{v}"));
    assert!((got - 100.0 / who.len() as f64).abs() < 0.01, "{got}");
}
