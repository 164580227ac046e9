//! Contradiction detection (`prism autohall`, `prism detect`) as a user runs it, against the
//! mock server's scripted `autohall` model: which pairs conflict, what is kept, what the tables
//! say, and that a killed run resumes without asking a finished call again.

mod common;

use std::collections::HashMap;
use std::path::PathBuf;
use std::process::{Command as StdCommand, Stdio};
use std::time::{Duration, Instant};

use assert_cmd::Command;
use common::mock;
use prism::detect::prompts;
use prism::detect::run::Stored;
use prism::store::{Class, Store, Verdict};

struct Env {
    dir: tempfile::TempDir,
    mock: mock::Mock,
}

impl Env {
    fn new() -> Env {
        let mock = mock::start_background();
        let dir = tempfile::tempdir().unwrap();
        let models = format!(
            r#"
[[models]]
name = "ah"
provider = "openai"
base_url = "{url}/v1"
model = "autohall"
max_concurrency = 8

[[models]]
name = "ahslow"
provider = "openai"
base_url = "{url}/v1"
model = "autohallslow"
max_concurrency = 2

[[models]]
name = "teller"
provider = "openai"
base_url = "{url}/v1"
model = "storyteller"
max_concurrency = 1

[[models]]
name = "referee"
provider = "openai"
base_url = "{url}/v1"
model = "autohall"
"#,
            url = mock.url()
        );
        std::fs::write(dir.path().join("models.toml"), models).unwrap();
        Env { dir, mock }
    }

    fn db(&self) -> PathBuf {
        self.dir.path().join("prism.db")
    }

    fn prism(&self) -> Command {
        let mut c = Command::cargo_bin("prism").unwrap();
        c.env("PRISM_CONFIG_DIR", self.dir.path())
            .env("PRISM_DATA_DIR", self.dir.path());
        c
    }

    /// `prism autohall FILE --models ah --temperature 0.5 -k K --json`, which must exit 0; its
    /// events.
    fn autohall(&self, file: &std::path::Path, k: &str) -> Vec<serde_json::Value> {
        let out = self
            .prism()
            .arg("autohall")
            .arg(file)
            .args(["--models", "ah", "--temperature", "0.5", "-k", k, "--json"])
            .output()
            .unwrap();
        exited_ok(&out);
        events(&out.stdout)
    }

    fn claims(&self, lines: &[&str]) -> PathBuf {
        let p = self.dir.path().join("claims.jsonl");
        std::fs::write(&p, lines.join("\n")).unwrap();
        p
    }
}

/// The command exited 0, or the test fails with what it said.
fn exited_ok(out: &std::process::Output) {
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

fn events(out: &[u8]) -> Vec<serde_json::Value> {
    String::from_utf8_lossy(out)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("{e}: {l}")))
        .collect()
}

fn detect_id(evs: &[serde_json::Value]) -> String {
    evs.iter()
        .find(|e| e["event"] == "started")
        .and_then(|e| e["detect_id"].as_str())
        .expect("a started event")
        .to_string()
}

const SCRIPTED: &[&str] = &[
    r#"{"id": "twice", "claim": "The sky is blue [[conflict2]]", "label": true, "topic": "t"}"#,
    r#"{"id": "never", "claim": "Water is wet [[says-false]] [[never]]", "label": true, "topic": "t"}"#,
    r#"{"id": "unreadable", "claim": "Fire is cold [[unreadable]]", "label": false, "topic": "t"}"#,
    r#"{"id": "refused", "claim": "Ice is warm [[refuse]]", "label": false, "topic": "u"}"#,
    r#"{"id": "disputed", "claim": "Something debated", "label": "DISPUTED", "topic": "u"}"#,
];

/// The whole pipeline on scripted replies: a claim whose samples conflict twice, one never, a
/// judge reply unreadable three times, a refusal set aside; every sample and verdict kept, the
/// tables computed from them; the same command again is answered by the cache.
#[test]
fn autohall_on_scripted_claims() {
    let env = Env::new();
    let file = env.claims(SCRIPTED);
    let evs = env.autohall(&file, "6");
    let id = detect_id(&evs);
    let store = Store::open(&env.db()).unwrap();
    let stored = Stored::load(&prism::store::Db::file(&store.path().unwrap()), &id).unwrap();
    let by_item: HashMap<&str, &prism::store::Target> = stored
        .targets
        .iter()
        .map(|t| (t.item_id.as_str(), t))
        .collect();
    // Four true/false claims (the disputed one is left out), one target each.
    assert_eq!(stored.targets.len(), 4);
    assert!(!by_item.contains_key("disputed"));
    let refused = by_item["refused"];
    assert!(refused.refused && refused.class.is_none());
    assert_eq!(by_item["twice"].class, Some(Class::True));
    assert_eq!(by_item["never"].class, Some(Class::False));
    assert!(
        by_item["never"]
            .class_reply
            .as_deref()
            .unwrap()
            .starts_with("Answer: False")
    );
    // Samples: six per answered claim, one wording each (1..=6), none for the refusal.
    for name in ["twice", "never", "unreadable"] {
        let t = by_item[name];
        let mut variants: Vec<u32> = stored
            .samples
            .iter()
            .filter(|s| s.target == t.idx)
            .map(|s| s.variant)
            .collect();
        variants.sort();
        assert_eq!(variants, vec![1, 2, 3, 4, 5, 6], "{name}");
    }
    assert!(!stored.samples.iter().any(|s| s.target == refused.idx));
    let verdicts = |name: &str| -> Vec<Verdict> {
        let t = by_item[name];
        stored
            .pairs
            .iter()
            .filter(|p| p.target == t.idx)
            .map(|p| p.verdict)
            .collect()
    };
    let count = |v: &[Verdict], w: Verdict| v.iter().filter(|x| **x == w).count();
    assert_eq!(count(&verdicts("twice"), Verdict::Conflict), 2);
    assert_eq!(count(&verdicts("twice"), Verdict::Consistent), 4);
    assert_eq!(count(&verdicts("never"), Verdict::Consistent), 6);
    assert_eq!(count(&verdicts("unreadable"), Verdict::Unparsed), 6);
    // A conflict keeps its explanation and both quotes; an unreadable verdict its raw reply,
    // after three attempts.
    let conflict = stored
        .pairs
        .iter()
        .find(|p| p.verdict == Verdict::Conflict)
        .unwrap();
    assert_eq!(
        conflict.explanation.as_deref(),
        Some("the two answers disagree.")
    );
    assert!(conflict.quote_a.as_deref().unwrap().starts_with("Title"));
    assert!(conflict.quote_b.is_some());
    for p in stored
        .pairs
        .iter()
        .filter(|p| p.verdict == Verdict::Unparsed)
    {
        assert_eq!(p.attempts, 3);
        assert!(p.reply.as_deref().unwrap().starts_with("Hmm."));
    }
    // Calls: 4 references, 3 classifications, 18 samples, 12 readable pair checks and 6
    // unreadable ones asked three times each.
    assert_eq!(env.mock.requests(), 4 + 3 + 18 + 12 + 18);

    // The tables.
    let results = evs.iter().find(|e| e["event"] == "results").unwrap();
    let c = &results["claims"]["collection"][0];
    assert_eq!(c["claims"], 4);
    assert_eq!(c["refused"], 1);
    assert_eq!(c["n"], 3);
    assert_eq!(c["h"], 2);
    let d = &results["claims"]["detection"][0];
    // Balanced: both hallucinations and the one factual reference.
    assert_eq!(d["balanced"], 3);
    // The OR rule flags the factual "twice" (FP) and neither hallucination (unreadable pairs
    // never flag): TP 0, FP 1, TN 0, FN 2.
    assert_eq!(d["or_confusion"]["tp"], 0);
    assert_eq!(d["or_confusion"]["fp"], 1);
    assert_eq!(d["or_confusion"]["fn_"], 2);
    assert_eq!(d["or_rule"]["accuracy"], 0.0);

    // The report carries both tables, in every format.
    for (format, needle) in [
        ("table", "AutoHall detection on the balanced set"),
        ("csv", "autohall_collection,ah,0.5,4,0,1,0,3,2,66.7"),
        ("md", "| ah | 0.5 | OR (any conflict) | 3 | 3 | 0.0 |"),
        ("html", "<h2>Detection by self-contradiction</h2>"),
    ] {
        let out = env
            .prism()
            .args(["report", "--detect", &id, "--format", format])
            .output()
            .unwrap();
        let text = String::from_utf8_lossy(&out.stdout);
        assert!(text.contains(needle), "{format}: {text}");
    }
    let out = env
        .prism()
        .args(["report", "--detect", &id, "--format", "json"])
        .output()
        .unwrap();
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(
        v["detection"]["claims"][0]["tables"]["collection"][0]["h"],
        2
    );

    // The same command again: a new run, every call answered by the cache.
    let before = env.mock.requests();
    let out = env
        .prism()
        .arg("autohall")
        .arg(&file)
        .args([
            "--models",
            "ah",
            "--temperature",
            "0.5",
            "-k",
            "6",
            "--json",
        ])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0));
    assert_eq!(env.mock.requests(), before);
    let fin = events(&out.stdout)
        .into_iter()
        .find(|e| e["event"] == "finished")
        .unwrap();
    assert_eq!(fin["cache_hits"], fin["done"]);
}

/// A judge that copies the question back ("Do the two answers contradict each other, ...")
/// gave no verdict: every pair is unreadable after three attempts and the claim is not flagged,
/// where reading the word "contradict" in the echo flagged it.
#[test]
fn a_judge_reply_that_echoes_the_question_is_no_conflict() {
    let env = Env::new();
    let file = env.claims(&[
        r#"{"id": "echoed", "claim": "The sea is salty [[echo]]", "label": true, "topic": "t"}"#,
    ]);
    let evs = env.autohall(&file, "2");
    let id = detect_id(&evs);
    let store = Store::open(&env.db()).unwrap();
    let stored = Stored::load(&prism::store::Db::file(&store.path().unwrap()), &id).unwrap();
    assert_eq!(stored.pairs.len(), 2);
    for p in &stored.pairs {
        assert_eq!(p.verdict, Verdict::Unparsed, "{:?}", p.reply);
        assert_eq!(p.attempts, 3);
        assert!(p.reply.as_deref().unwrap().contains("contradict"));
    }
}

/// `validate` names the labels left out.
#[test]
fn validate_counts_claims_left_out() {
    let env = Env::new();
    let file = env.claims(SCRIPTED);
    let out = env.prism().arg("validate").arg(&file).output().unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("claims"), "{text}");
    assert!(
        text.contains("1 claim(s) labelled \"DISPUTED\" left out"),
        "{text}"
    );
    assert_eq!(out.status.code(), Some(0), "{text}");
}

/// Detection of stored answers: the samples use other framings of the same prompt; the mock
/// answers from the prompt's last line, so the two framings that end differently conflict.
/// `--judge` sends the pair checks to another model.
#[test]
fn detect_on_stored_answers_with_a_judge() {
    let env = Env::new();
    env.prism()
        .args([
            "run",
            "--models",
            "ah",
            "--filter",
            "KE-FD-Numbers",
            "--limit",
            "3",
            "--json",
        ])
        .assert()
        .code(0);
    let out = env
        .prism()
        .args([
            "detect", "--models", "ah", "--judge", "referee", "-k", "7", "--json",
        ])
        .output()
        .unwrap();
    exited_ok(&out);
    let evs = events(&out.stdout);
    let id = detect_id(&evs);
    let store = Store::open(&env.db()).unwrap();
    let stored = Stored::load(&prism::store::Db::file(&store.path().unwrap()), &id).unwrap();
    assert_eq!(stored.targets.len(), 3);
    let run = store.latest_run().unwrap().unwrap();
    for t in &stored.targets {
        assert_eq!(t.source_run.as_deref(), Some(run.id.as_str()));
        assert!(t.answer.as_deref().unwrap().starts_with("ANSWER("));
        let pairs: Vec<_> = stored.pairs.iter().filter(|p| p.target == t.idx).collect();
        assert_eq!(pairs.len(), 7);
        assert!(pairs.iter().all(|p| p.judge == "referee"));
        let conflicts: Vec<u32> = pairs
            .iter()
            .filter(|p| p.verdict == Verdict::Conflict)
            .map(|p| p.k)
            .collect();
        // Framings 6 and 7 (samples 5 and 6) end with their own line.
        assert_eq!(conflicts, vec![5, 6], "{}", t.item_id);
    }
    let res = evs.iter().find(|e| e["event"] == "results").unwrap();
    assert_eq!(res["models"][0]["flagged"], 3);
    // The stored answers were not asked again: 3 run answers, 21 samples, then the pair
    // checks: identical checks (samples 0-4 end alike, so their pairs are the same request at
    // temperature 0) may be answered by the cache when one finished before the next was sent.
    let n = env.mock.requests();
    assert!((3 + 21 + 3 * 3..=3 + 21 + 21).contains(&n), "{n}");
    assert_eq!(stored.samples.len(), 21);

    // Scored by rule (exact: the mock's answers are wrong), the report sets the flag beside
    // PRISM's verdict: all three wrong, all three flagged.
    env.prism().args(["score"]).assert().success();
    let out = env
        .prism()
        .args(["report", "--format", "json"])
        .output()
        .unwrap();
    exited_ok(&out);
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let ke = v["detection"]["answers"]
        .as_array()
        .unwrap()
        .iter()
        .find(|a| a["dimension"] == "KE")
        .unwrap()
        .clone();
    assert_eq!(ke["checked"], 3);
    assert_eq!(ke["flagged"], 3);
    assert_eq!(ke["wrong"], 3);
    assert_eq!(ke["precision"], 100.0);
    assert_eq!(ke["recall"], 100.0);
    assert_eq!(ke["wrong_never_contradicted"], 0);
    let md = env
        .prism()
        .args(["report", "--format", "md"])
        .output()
        .unwrap();
    let md = String::from_utf8_lossy(&md.stdout);
    assert!(
        md.contains("### Self-contradiction flags on stored answers"),
        "{md}"
    );

    // Which signal predicts the verdict: three answers, all wrong, is too few for a number,
    // and the cell says so.
    let out = env.prism().args(["signals", "--json"]).output().unwrap();
    exited_ok(&out);
    let rows: Vec<serde_json::Value> = events(&out.stdout)
        .into_iter()
        .map(|e| e["row"].clone())
        .collect();
    let cells: Vec<&str> = rows.iter().map(|r| r["cell"].as_str().unwrap()).collect();
    assert_eq!(cells, vec!["KE", "all"]);
    for r in &rows {
        assert_eq!(
            (r["signal"].as_str(), r["model"].as_str()),
            (Some("self-contradiction"), Some("ah"))
        );
        assert_eq!(
            (r["n"].as_u64(), r["hallucinated"].as_u64()),
            (Some(3), Some(3))
        );
        assert!(r["auroc"].is_null());
        assert_eq!(r["too_few"], "3 hallucinated, 0 correct (need 5 of each)");
    }
    let out = env.prism().args(["signals", "nope"]).output().unwrap();
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("no run nope"));
}

/// A bad flag value, a model the run does not have, a missing store: exit 1 or 2 (clap) with
/// a message naming the problem.
#[test]
fn wrong_input_is_named() {
    let env = Env::new();
    let out = env.prism().args(["detect", "-k", "0"]).output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("k must be a number from 1 to 20"));
    let out = env
        .prism()
        .args(["detect", "--models", "ah"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("no store"));
    env.prism()
        .args(["run", "--models", "ah", "--limit", "1", "--json"])
        .assert()
        .code(0);
    let out = env
        .prism()
        .args(["detect", "--models", "referee"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("has no model \"referee\""));
    let out = env
        .prism()
        .args(["autohall", "--models", "ah", "--temperature", "7"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("between 0 and 2"));
}

/// kill -9 in the middle of detection, then --resume: everything ends up stored once, and no
/// call whose result was stored before the kill is sent again.
#[test]
fn resume_after_kill_9_repeats_no_finished_call() {
    let env = Env::new();
    let lines: Vec<String> = (0..8)
        .map(|i| {
            format!(
                r#"{{"id": "c{i}", "claim": "Claim number {i} [[conflict2]]", "label": {}, "topic": "t"}}"#,
                i % 2 == 0
            )
        })
        .collect();
    let file = env.claims(&lines.iter().map(String::as_str).collect::<Vec<_>>());
    let bin = assert_cmd::cargo::cargo_bin("prism");
    let mut child = StdCommand::new(&bin)
        .arg("autohall")
        .arg(&file)
        .args([
            "--models",
            "ahslow",
            "--temperature",
            "0.5",
            "-k",
            "6",
            "--json",
        ])
        .env("PRISM_CONFIG_DIR", env.dir.path())
        .env("PRISM_DATA_DIR", env.dir.path())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    use std::io::BufRead;
    let mut reader = std::io::BufReader::new(child.stdout.take().unwrap());
    let mut id = String::new();
    let mut pairs = 0;
    let start = Instant::now();
    let mut line = String::new();
    while pairs < 10 {
        line.clear();
        assert!(reader.read_line(&mut line).unwrap() > 0, "ended early");
        let v: serde_json::Value = serde_json::from_str(&line).unwrap();
        if v["event"] == "started" {
            id = v["detect_id"].as_str().unwrap().to_string();
        }
        if v["event"] == "pair" {
            pairs += 1;
        }
        assert!(start.elapsed() < Duration::from_secs(60));
    }
    child.kill().unwrap();
    child.wait().unwrap();
    let before = Stored::load(&prism::store::Db::file(&env.db()), &id).unwrap();
    assert!(before.pairs.len() >= 10 && before.pairs.len() < 48);

    let out = env
        .prism()
        .args(["autohall", "--resume", &id, "--json"])
        .output()
        .unwrap();
    exited_ok(&out);
    let after = Stored::load(&prism::store::Db::file(&env.db()), &id).unwrap();
    assert_eq!(after.samples.len(), 48);
    assert_eq!(after.pairs.len(), 48);
    assert!(after.targets.iter().all(|t| t.class.is_some()));
    // What was stored before the kill is unchanged, and its request went out once.
    for s in &before.samples {
        let now = after
            .samples
            .iter()
            .find(|x| (x.target, x.round, x.k) == (s.target, s.round, s.k))
            .unwrap();
        assert_eq!(now, s);
        let t = &before.targets[s.target as usize];
        let prompt = prompts::reference_request(s.variant, &t.question, None).messages[0]
            .content
            .clone();
        assert_eq!(
            env.mock.attempts_for("autohallslow", &prompt),
            1,
            "{prompt}"
        );
    }
    for p in &before.pairs {
        let now = after
            .pairs
            .iter()
            .find(|x| (x.target, x.round, x.k) == (p.target, p.round, p.k))
            .unwrap();
        assert_eq!(now, p);
    }
    for t in before.targets.iter().filter(|t| t.answer.is_some()) {
        let prompt = prompts::reference_request(0, &t.question, None).messages[0]
            .content
            .clone();
        assert_eq!(env.mock.attempts_for("autohallslow", &prompt), 1);
    }
}

/// A released GPT-3.5 line in the authors' shape: the request, then the response with its
/// opening lost in the splice (`tail` is what follows the request's temperature).
fn released_line(claim: &str, reference: &str, tail: &str, reply: &str) -> String {
    let content = serde_json::to_string(&format!(
        "Given the claim and the reference, you should answer whether the claim is true or false. Claim: {claim} Reference: {reference}"
    ))
    .unwrap();
    let reply = serde_json::to_string(reply).unwrap();
    format!(
        r#"[{{"model": "gpt-3.5-turbo", "messages": [{{"role": "user", "content": {content}}}], "stream": false, "temperature": 0.5{tail} "object": "chat.completion", "created": 1, "model": "gpt-3.5-turbo-0613", "choices": [{{"index": 0, "message": {{"role": "assistant", "content": {reply}}}, "finish_reason": "stop"}}], "usage": {{}}}}]"#
    )
}

/// `prism autohall --import`: AutoHall's released outputs (every splice the authors' files
/// have, and a line that is no record) stored as a run; the claim's truth from the claims file,
/// else from the released label; #H by the paper's reading and by prism's; the run cannot be
/// resumed.
#[test]
fn released_outputs_import_as_a_stored_run() {
    let env = Env::new();
    let released = [
        released_line(
            "Arctic ice grows.",
            "A 2019 \"study\" says so.",
            r#", "label": "true"},,"#,
            "The claim is false.",
        ),
        released_line(
            "Coral is rock.",
            "It is.",
            r#", "label": "true"}, {"id": ,"#,
            "True.",
        ),
        released_line(
            "Bats fly.",
            "They do.",
            r#", "label": ","#,
            "The claim is true.",
        ),
        released_line(
            "The moon is cheese.",
            "No.",
            r#", "label": "false"},,"#,
            "False. The claim is not true.",
        ),
        "this line is no record".to_string(),
    ];
    let dir = env.dir.path().join("gpt3.5_trubo_data/climate");
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("dataset_0.5.jsonl");
    std::fs::write(&file, released.join("\n")).unwrap();
    let claims = env.dir.path().join("climate_true_or_false.json");
    std::fs::write(
        &claims,
        [
            r#"{"claim_id": "0", "claim": "Arctic ice grows.", "claim_label": "SUPPORTS", "evidences": []}"#,
            r#"{"claim_id": "1", "claim": "Coral is  rock.", "claim_label": "REFUTES", "evidences": []}"#,
            r#"{"claim_id": "2", "claim": "Bats fly.", "claim_label": "SUPPORTS", "evidences": []}"#,
            r#"{"claim_id": "3", "claim": "The moon is cheese.", "claim_label": "REFUTES", "evidences": []}"#,
        ]
        .join("\n"),
    )
    .unwrap();
    let import = |with_claims: bool, reading: &str| {
        let mut cmd = env.prism();
        cmd.arg("autohall");
        if with_claims {
            cmd.arg(&claims);
        }
        let out = cmd
            .arg("--import")
            .arg(&file)
            .args(["--reading", reading, "--json"])
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&out.stderr).to_string();
        assert_eq!(out.status.code(), Some(0), "{err}");
        assert!(err.contains("dataset_0.5.jsonl:5:"), "{err}");
        events(&out.stdout).remove(0)
    };
    let ev = import(true, "paper");
    assert_eq!(ev["summary"]["records"], 4);
    assert_eq!(ev["summary"]["unreadable_lines"], 1);
    assert_eq!(ev["summary"]["truth_from_claims"], 4);
    // Line 4's label says "not hallucinated" because the paper read "not true" as true.
    assert_eq!(ev["summary"]["label_disagrees"], 1);
    let c = &ev["collection"][0];
    assert_eq!(
        (c["model"].as_str(), c["temperature"].as_f64()),
        (Some("gpt-3.5-turbo-0613"), Some(0.5))
    );
    assert_eq!((c["n"].as_u64(), c["h"].as_u64()), (Some(4), Some(3)));
    let by_prism = import(true, "prism");
    let c = &by_prism["collection"][0];
    assert_eq!((c["n"].as_u64(), c["h"].as_u64()), (Some(4), Some(2)));
    // Without the claims file: the truth from the released label where it survived.
    let bare = import(false, "paper");
    assert_eq!(bare["summary"]["truth_from_label"], 3);
    assert_eq!(bare["summary"]["no_truth"], 1);
    let c = &bare["collection"][0];
    assert_eq!((c["n"].as_u64(), c["h"].as_u64()), (Some(3), Some(2)));

    let id = ev["detect_id"].as_str().unwrap();
    let store = Store::open(&env.db()).unwrap();
    let run = store.detect_run(id).unwrap().unwrap();
    assert_eq!(run.status.as_str(), "imported");
    let stored = Stored::load(&prism::store::Db::file(&store.path().unwrap()), id).unwrap();
    assert_eq!(stored.targets[0].item_id, "0");
    assert_eq!(
        stored.targets[0].answer.as_deref(),
        Some("A 2019 \"study\" says so.")
    );
    assert_eq!(
        stored.targets[3].class_reply.as_deref(),
        Some("False. The claim is not true.")
    );
    let out = env
        .prism()
        .args(["autohall", "--resume", id])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("nothing to resume"));
}

/// A Llama 2 line as the authors released it: `text` (the dialogue) JSON-encoded twice over,
/// then `label: ...`.
fn llama_line(text: &str, hallucinated: bool) -> String {
    let once = serde_json::to_string(text).unwrap();
    format!(
        "{}label: {hallucinated}",
        serde_json::to_string(&format!("{once}\n")).unwrap()
    )
}

/// Each model's shape of AutoHall's released files imports: Llama-2-13B's reply after
/// `Response:`, Llama-2-7B's "TRUE"/"FALSE" read as the authors' Llama script reads them, a
/// GPT-3.5 file whose splice ate every label labelled by position (and said so), the balanced
/// set's H% said not to be the paper's; a file of no known shape names the markers it looked for.
#[test]
fn every_released_shape_imports_and_an_unknown_one_names_the_markers() {
    let env = Env::new();
    let root = env.dir.path().join("dataset");
    let write = |model: &str, lines: &[String]| {
        let dir = root.join(format!("{model}_data/wice"));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("dataset_0.5.jsonl");
        std::fs::write(&path, lines.join("\n")).unwrap();
        path
    };
    let q =
        "Given the claim and the reference, you should answer whether the claim is true or false.";
    let thirteen = write(
        "llama2_13b",
        &[
            llama_line(
                &format!(
                    "{q} \"Claim: Glaciers grow. Reference: A survey.\"\n Response:  True. Then Response: False."
                ),
                true,
            ),
            llama_line(
                &format!("{q} \"Claim: Snow is cold. Reference: It is.\"\n Response:  False."),
                false,
            ),
        ],
    );
    let seven = write(
        "llama2_7b",
        &[
            llama_line(
                &format!(
                    "\"System: Always answer true or false.\"\"User: {q} Claim: Rain is dry. Reference: No.\"\"> Assistant:  TRUE"
                ),
                true,
            ),
            llama_line(
                &format!(
                    "\"System: Always answer true or false.\"\"User: {q} Claim: Fire is hot. Reference: Yes.\"\"> Assistant:  FALSE"
                ),
                false,
            ),
        ],
    );
    let gpt = write(
        "gpt3.5_trubo",
        &[
            released_line("Sea is salty.", "No.", r#", "label": ","#, "False."),
            released_line("Sun is cold.", "No.", r#", "label": ","#, "False."),
        ],
    );
    let import = |file: &std::path::Path| {
        let out = env
            .prism()
            .args(["autohall", "--import"])
            .arg(file)
            .arg("--json")
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&out.stderr).to_string();
        assert_eq!(out.status.code(), Some(0), "{err}");
        events(&out.stdout).remove(0)
    };
    for (file, model) in [(&thirteen, "llama2_13b"), (&seven, "llama2_7b")] {
        let ev = import(file);
        let c = &ev["collection"][0];
        assert_eq!(c["model"], model);
        assert_eq!(
            (c["n"].as_u64(), c["h"].as_u64(), c["unparsed"].as_u64()),
            (Some(2), Some(1), Some(0)),
            "{model}: every reply read, #H as the labels say: {ev}"
        );
        assert_eq!(ev["balanced_set"], true);
    }
    let ev = import(&gpt);
    assert_eq!(
        ev["summary"]["labels_by_position"][0],
        gpt.display().to_string()
    );
    let c = &ev["collection"][0];
    assert_eq!((c["n"].as_u64(), c["h"].as_u64()), (Some(2), Some(1)));

    // Said, as to a person: the position, and that the balanced set's H% is not the paper's.
    let notes = ev["notes"].to_string();
    assert!(notes.contains("recovered by position"), "{notes}");
    assert!(notes.contains("not the paper's rate"), "{notes}");

    let odd = env.dir.path().join("odd.jsonl");
    std::fs::write(
        &odd,
        format!(
            "{}\n",
            llama_line("User: Claim: a Reference: b Bot: yes", true)
        ),
    )
    .unwrap();
    let out = env
        .prism()
        .args(["autohall", "--import"])
        .arg(&odd)
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr).to_string();
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(
        err.contains("odd.jsonl:1:") && err.contains("\"Response:\" (Llama-2-13B)"),
        "{err}"
    );
    assert!(
        err.contains("no record could be read") && err.contains("chat.completion"),
        "{err}"
    );
}

/// `prism autohall --analyse RUN` on a finished scripted run: one sweep row per k, recall that
/// never falls as samples are added (the OR rule only gains flags), a histogram that holds every
/// scored reference once, slices by length and topic that add up to the scored set; an imported
/// run (no samples) is refused with the reason.
#[test]
fn analyses_of_a_stored_run() {
    let env = Env::new();
    let file = env.claims(SCRIPTED);
    let evs = env.autohall(&file, "3");
    let id = detect_id(&evs);
    let out = env
        .prism()
        .args(["autohall", "--analyse", &id, "--json"])
        .output()
        .unwrap();
    exited_ok(&out);
    let ev = events(&out.stdout).remove(0);
    let g = &ev["groups"][0];
    let scored = g["scored"].as_u64().unwrap();
    assert!(scored > 0, "{g}");
    let sweep = g["sweep"].as_array().unwrap();
    assert_eq!(sweep.len(), 3);
    let recalls: Vec<f64> = sweep
        .iter()
        .filter_map(|r| r["or_rule"]["recall"].as_f64())
        .collect();
    assert!(recalls.windows(2).all(|w| w[0] <= w[1]), "{recalls:?}");
    let hist = g["histogram"].as_array().unwrap();
    assert_eq!(hist.len(), 4);
    let total: u64 = hist
        .iter()
        .map(|r| r[1].as_u64().unwrap() + r[2].as_u64().unwrap())
        .sum();
    assert_eq!(total, scored);
    for key in ["by_length", "by_topic"] {
        let sum: u64 = g[key]
            .as_array()
            .unwrap()
            .iter()
            .map(|s| s["scored"].as_u64().unwrap())
            .sum();
        assert_eq!(sum, scored, "{key}");
    }
    let released = env.dir.path().join("dataset_0.5.jsonl");
    std::fs::write(
        &released,
        released_line("A.", "B.", r#", "label": "true"},,"#, "True."),
    )
    .unwrap();
    let imp = env
        .prism()
        .args(["autohall", "--json", "--import"])
        .arg(&released)
        .output()
        .unwrap();
    let imp_id = events(&imp.stdout).remove(0)["detect_id"]
        .as_str()
        .unwrap()
        .to_string();
    let out = env
        .prism()
        .args(["autohall", "--analyse", &imp_id])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("holds no samples"));
}

/// `--prompts FILE` rewords the pair check, the classification and the reference requests:
/// the server is asked in the user's words only, the run records them; a template without its
/// placeholders is refused, naming the file and the template.
#[test]
fn the_prompts_are_the_users_when_given() {
    let env = Env::new();
    let file = env.claims(&SCRIPTED[..2]);
    let prompts = env.dir.path().join("prompts.toml");
    std::fs::write(
        &prompts,
        r#"pair_check = "Question: {question}\nAnswer A: {a}\nAnswer B: {b}\n\nDo the two answers contradict each other? Wording P3."
classification = "Claim: {claim}\nReference: {reference}\nBased on the reference, is the claim true or false? (P3)"
references = ["Cite one source about this claim (P3): {claim}"]
"#,
    )
    .unwrap();
    let out = env
        .prism()
        .arg("autohall")
        .arg(&file)
        .args([
            "--models",
            "ah",
            "--temperature",
            "0.5",
            "-k",
            "2",
            "--json",
        ])
        .arg("--prompts")
        .arg(&prompts)
        .output()
        .unwrap();
    exited_ok(&out);
    let id = detect_id(&events(&out.stdout));
    // One reference wording for every sample: the mock gives a claim's samples one text, so
    // its two pair checks are one request, and the second may come from the cache (a race).
    // At least one per claim reaches the server; the stored run holds all four.
    assert!(env.mock.attempts_for("autohall", "Wording P3.") >= 2);
    assert!(env.mock.attempts_for("autohall", "true or false? (P3)") >= 2);
    assert!(
        env.mock
            .attempts_for("autohall", "Cite one source about this claim (P3)")
            >= 2
    );
    assert_eq!(
        env.mock
            .attempts_for("autohall", "Two answers were given to the same question"),
        0
    );
    let store = Store::open(&env.db()).unwrap();
    assert_eq!(
        Stored::load(&prism::store::Db::file(&store.path().unwrap()), &id)
            .unwrap()
            .pairs
            .len(),
        4
    );
    let run = store.detect_run(&id).unwrap().unwrap();
    assert!(
        run.config
            .templates
            .pair_check
            .unwrap()
            .contains("Wording P3")
    );

    std::fs::write(&prompts, "pair_check = \"Do {a} and {b} clash?\"\n").unwrap();
    let out = env
        .prism()
        .arg("autohall")
        .arg(&file)
        .args(["--models", "ah", "--prompts"])
        .arg(&prompts)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("prompts.toml") && err.contains("lacks the placeholder {question}"),
        "{err}"
    );
}

/// `pair_variants` checks every pair once per wording beside the first: the server is asked in
/// each, the verdicts are stored per wording, the claims table reports detection per wording,
/// and a resume asks nothing again.
#[test]
fn pair_wordings_side_by_side() {
    let env = Env::new();
    let file = env.claims(&SCRIPTED[..2]);
    let prompts = env.dir.path().join("prompts.toml");
    std::fs::write(
        &prompts,
        r#"pair_variants = [
  "Question: {question}\nAnswer A: {a}\nAnswer B: {b}\n\nDo the two answers contradict each other? (lenient wording)",
  "Question: {question}\nAnswer A: {a}\nAnswer B: {b}\n\nDo the two answers contradict each other? Reply Yes or No (strict wording)",
]
"#,
    )
    .unwrap();
    let out = env
        .prism()
        .arg("autohall")
        .arg(&file)
        .args([
            "--models",
            "ah",
            "--temperature",
            "0.5",
            "-k",
            "6",
            "--json",
            "--prompts",
        ])
        .arg(&prompts)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr).to_string();
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    let evs = events(&out.stdout);
    let id = detect_id(&evs);
    // Two references with K = 6 samples each: 12 pair checks per wording.
    assert_eq!(env.mock.attempts_for("autohall", "(lenient wording)"), 12);
    assert_eq!(env.mock.attempts_for("autohall", "(strict wording)"), 12);
    let store = Store::open(&env.db()).unwrap();
    let stored = Stored::load(&prism::store::Db::file(&store.path().unwrap()), &id).unwrap();
    assert_eq!(stored.pairs.len(), 36);
    let conflicts = |w: u32| {
        stored
            .pairs
            .iter()
            .filter(|p| p.wording == w && p.verdict == Verdict::Conflict)
            .count()
    };
    // [[conflict2]]: two conflicts of six in prism's wording and in the strict one, none in the
    // lenient one.
    assert_eq!((conflicts(0), conflicts(1), conflicts(2)), (2, 0, 2));
    // The balanced set: "never" hallucinated (classified false, labelled true) and "twice"
    // factual; the conflicts flag the factual one in W0 and W2 (a false alarm), none in W1.
    let results = evs.iter().find(|e| e["event"] == "results").unwrap();
    let by_wording = results["claims"]["by_wording"].as_array().unwrap();
    let fp: Vec<u64> = by_wording
        .iter()
        .map(|d| d["or_confusion"]["fp"].as_u64().unwrap())
        .collect();
    assert_eq!(fp, vec![1, 0, 1], "{by_wording:?}");
    assert_eq!(
        results["claims"]["detection"][0]["or_confusion"],
        by_wording[0]["or_confusion"]
    );

    let out = env
        .prism()
        .args(["autohall", "--analyse", &id])
        .output()
        .unwrap();
    // Piped, the analyses are JSON; they carry the same table.
    let analysis = &events(&out.stdout)[0];
    assert_eq!(analysis["by_wording"], results["claims"]["by_wording"]);

    let before = env.mock.attempts_for("autohall", "contradict each other");
    let out = env
        .prism()
        .args(["autohall", "--resume", &id, "--json"])
        .output()
        .unwrap();
    exited_ok(&out);
    assert_eq!(
        env.mock.attempts_for("autohall", "contradict each other"),
        before
    );
}

/// `--analyse RUN --topics-by MODEL`: one call per claim for its topic, kept in the store; a
/// second analysis asks nothing; a reply that only copies the list is no topic; a list of one
/// topic is refused.
#[test]
fn topics_assigned_by_a_model_once_per_claim() {
    let env = Env::new();
    let file = env.claims(&[
        r#"{"id": "a", "claim": "The sky is blue [[conflict2]] [[topic:Law]]", "label": true, "topic": "t"}"#,
        r#"{"id": "d", "claim": "Grass is green [[topic:Law]]", "label": true, "topic": "t"}"#,
        r#"{"id": "b", "claim": "Water is wet [[says-false]] [[never]]", "label": true, "topic": "t"}"#,
        r#"{"id": "c", "claim": "Fire is cold [[no-topic]]", "label": false, "topic": "t"}"#,
    ]);
    let id = detect_id(&env.autohall(&file, "2"));
    let analyse = |extra: &[&str]| {
        let out = env
            .prism()
            .args(["autohall", "--analyse", &id, "--json"])
            .args(extra)
            .output()
            .unwrap();
        exited_ok(&out);
        events(&out.stdout).remove(0)
    };
    let topics = |a: &serde_json::Value| -> Vec<(String, u64, u64)> {
        a["groups"][0]["by_topic"]
            .as_array()
            .unwrap()
            .iter()
            .map(|s| {
                (
                    s["name"].as_str().unwrap().to_string(),
                    s["scored"].as_u64().unwrap(),
                    s["hallucinated"].as_u64().unwrap(),
                )
            })
            .collect()
    };
    // From the data: one topic.
    let a = analyse(&[]);
    assert_eq!(a["topics_by"], "data");
    assert_eq!(topics(&a), vec![("t".to_string(), 4, 2)]);

    let ask = "Which one of these topics is the claim about?";
    let a = analyse(&["--topics-by", "referee"]);
    assert_eq!(a["topics_by"], "referee");
    assert_eq!(
        topics(&a),
        vec![
            ("(no topic read)".to_string(), 1, 1),
            ("Law".to_string(), 2, 0),
            ("Science".to_string(), 1, 1),
        ]
    );
    // One call per claim, and the unreadable one asked its attempts (2).
    assert_eq!(env.mock.attempts_for("autohall", ask), 5);
    let store = Store::open(&env.db()).unwrap();
    let vocab = prism::detect::topics::vocabulary(
        &prism::detect::topics::AUTOHALL_TOPICS.map(String::from),
    );
    let kept = store.topics("referee", &vocab).unwrap();
    assert_eq!(kept.len(), 4);
    assert!(kept.iter().all(|r| r.error.is_none()));

    // Again: everything is stored, nothing is asked.
    let again = analyse(&["--topics-by", "referee"]);
    assert_eq!(topics(&again), topics(&a));
    assert_eq!(env.mock.attempts_for("autohall", ask), 5);

    // Another list is another question.
    let a = analyse(&[
        "--topics-by",
        "referee",
        "--topic-list",
        "Law, Science, Health",
    ]);
    assert_eq!(env.mock.attempts_for("autohall", ask), 10);
    assert_eq!(topics(&a).len(), 3);

    let out = env
        .prism()
        .args(["autohall", "--analyse", &id, "--topics-by", "referee"])
        .args(["--topic-list", "Law"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("at least two topics"));
}

/// `--reread RUN`: verdicts stored under an older reader are read again from their replies, no
/// model asked; a second reading changes nothing.
#[test]
fn a_run_is_read_again_from_its_replies() {
    let env = Env::new();
    let file = env.claims(&SCRIPTED[..3]);
    let id = detect_id(&env.autohall(&file, "4"));
    let mut store = Store::open(&env.db()).unwrap();
    let stored = Stored::load(&prism::store::Db::file(&store.path().unwrap()), &id).unwrap();
    let right: Vec<_> = stored.pairs.clone();
    // As an older reader might have stored them: a conflict read as consistent, an unreadable
    // reply read as a conflict.
    let mut c = right
        .iter()
        .find(|p| p.verdict == Verdict::Conflict)
        .unwrap()
        .clone();
    c.verdict = Verdict::Consistent;
    let mut u = right
        .iter()
        .find(|p| p.verdict == Verdict::Unparsed)
        .unwrap()
        .clone();
    u.verdict = Verdict::Conflict;
    store
        .apply_detect(&[
            prism::store::DetectWrite::Pair(c),
            prism::store::DetectWrite::Pair(u),
        ])
        .unwrap();
    drop(store);
    let calls = env.mock.attempts_for("autohall", "");
    let reread = || {
        let out = env
            .prism()
            .args(["autohall", "--reread", &id, "--json"])
            .output()
            .unwrap();
        exited_ok(&out);
        events(&out.stdout).remove(0)
    };
    let r = reread();
    assert_eq!(r["changed"], 2, "{r}");
    assert_eq!(r["reread"]["pair_changes"]["consistent → conflict"], 1);
    assert_eq!(r["reread"]["pair_changes"]["conflict → unparsed"], 1);
    let store = Store::open(&env.db()).unwrap();
    let now = Stored::load(&prism::store::Db::file(&store.path().unwrap()), &id)
        .unwrap()
        .pairs;
    assert_eq!(
        now.iter().map(|p| p.verdict).collect::<Vec<_>>(),
        right.iter().map(|p| p.verdict).collect::<Vec<_>>()
    );
    assert_eq!(reread()["changed"], 0);
    assert_eq!(env.mock.attempts_for("autohall", ""), calls);
}

/// Semantic entropy (`prism entropy`) over what items already have, with the mock's judge:
/// identical answers cost no call, the rest are clustered once and the verdicts reused, the
/// entropy is the hand-computed one, and `prism signals` scores it against PRISM's verdict.
#[test]
fn semantic_entropy_clusters_answers_once() {
    let env = Env::new();
    let entropy = |args: &[&str]| {
        let out = env
            .prism()
            .arg("entropy")
            .args(args)
            .args(["--judge", "referee", "--json"])
            .output()
            .unwrap();
        (
            out.status.code(),
            events(&out.stdout),
            String::from_utf8_lossy(&out.stderr).to_string(),
        )
    };
    // A run of 3 samples per item: the mock answers each alike, so one meaning and no call.
    env.prism()
        .args([
            "run",
            "--models",
            "ah",
            "--filter",
            "KE-FD-Numbers",
            "--limit",
            "2",
            "--samples",
            "3",
            "--json",
        ])
        .assert()
        .code(0);
    let run = Store::open(&env.db())
        .unwrap()
        .latest_run()
        .unwrap()
        .unwrap()
        .id;
    let before = env.mock.requests();
    let (code, evs, err) = entropy(&[&run]);
    assert_eq!(code, Some(0), "{err}");
    assert_eq!(evs.len(), 2);
    for e in &evs {
        assert_eq!(e["entropy"]["clusters"], 1);
        assert_eq!(e["entropy"]["discrete"], 0.0);
        assert_eq!(e["group"]["answers"].as_array().unwrap().len(), 3);
    }
    assert_eq!(env.mock.requests(), before, "equal answers need no judge");

    // A detection with K = 7: samples 0-4 say what the answer says, 5 and 6 their own things.
    let out = env
        .prism()
        .args([
            "detect", "--models", "ah", "--judge", "referee", "-k", "7", "--json",
        ])
        .output()
        .unwrap();
    exited_ok(&out);
    let detection = detect_id(&events(&out.stdout));
    let before = env.mock.requests();
    let (code, evs, err) = entropy(&[&detection]);
    assert_eq!(code, Some(0), "{err}");
    // Six targets (each of the run's answers); per target: sample 5 against the first
    // meaning, sample 6 against both. The three answers of an item are one text, so their
    // targets ask the same three questions: six verdicts stored, each asked once unless two
    // targets asked it at the same moment.
    assert_eq!(evs.len(), 6);
    let asked = env.mock.requests() - before;
    assert!((6..=18).contains(&asked), "{asked} {err}");
    assert_eq!(
        Store::open(&env.db())
            .unwrap()
            .entailments(Some("referee"))
            .unwrap()
            .len(),
        6
    );
    let want = -(0.75f64 * 0.75f64.ln() + 2.0 * 0.125 * 0.125f64.ln());
    for e in &evs {
        assert_eq!(e["entropy"]["answers"], 8);
        assert_eq!(e["entropy"]["clusters"], 3);
        assert!((e["entropy"]["discrete"].as_f64().unwrap() - want).abs() < 1e-9);
        assert_eq!(
            e["clusters"],
            serde_json::json!([[0, 1, 2, 3, 4, 5], [6], [7]])
        );
        assert!(e["entropy"]["weighted"].is_null());
    }
    // Again: every verdict is stored, nothing is asked.
    let before = env.mock.requests();
    let (code, evs2, _) = entropy(&[&detection]);
    assert_eq!((code, env.mock.requests()), (Some(0), before));
    assert_eq!(evs2, evs);

    // Scored (the mock's answers are wrong), the signal has its rows: too few correct answers
    // for a number, and it says so.
    env.prism().args(["score"]).assert().success();
    let out = env.prism().args(["signals", "--json"]).output().unwrap();
    exited_ok(&out);
    let rows: Vec<serde_json::Value> = events(&out.stdout)
        .into_iter()
        .map(|e| e["row"].clone())
        .filter(|r| r["signal"] == "semantic entropy")
        .collect();
    assert_eq!(rows.len(), 2, "KE and all");
    // Six answers: for the first sample of each item, in the run's group (3 answers) and a
    // detection's (8), the larger counts, so each answer counts once.
    assert_eq!(rows[1]["n"], 6);

    // Claims: one meaning when the judge says every reference entails the others; an
    // unreadable verdict keeps answers apart (each its own meaning).
    let file = env.claims(&[
        r#"{"id": "one", "claim": "The sky is blue [[one-meaning]]", "label": true, "topic": "t"}"#,
        r#"{"id": "unread", "claim": "Fire is cold [[unreadable]]", "label": false, "topic": "t"}"#,
    ]);
    let claims_run = detect_id(&env.autohall(&file, "3"));
    let (code, evs, err) = entropy(&[&claims_run]);
    assert_eq!(code, Some(0), "{err}");
    let by = |id: &str| {
        evs.iter()
            .find(|e| e["group"]["item_id"] == id)
            .unwrap()
            .clone()
    };
    assert_eq!(by("one")["entropy"]["clusters"], 1);
    assert_eq!(by("unread")["entropy"]["clusters"], 4);
    assert!((by("unread")["entropy"]["discrete"].as_f64().unwrap() - 4f64.ln()).abs() < 1e-9);
    assert!(
        err.contains("unreadable (counted as not entailing)"),
        "{err}"
    );

    // Wrong input is named.
    let (code, _, err) = entropy(&["nope"]);
    assert_eq!(code, Some(1));
    assert!(err.contains("no run or detection run nope"), "{err}");
}

/// `prism report --item ID`: one item's page with every stored answer of the run, the tokens of
/// answers run with `--logprobs` shaded (the mock gives 0.9, 0.5, 0.1 in turn), hover text with
/// the alternatives; an unknown item is named.
#[test]
fn an_item_page_shows_shaded_tokens() {
    let env = Env::new();
    env.prism()
        .args([
            "run",
            "--models",
            "ah",
            "--filter",
            "KE-FD-Numbers",
            "--limit",
            "1",
            "--logprobs",
            "2",
            "--json",
        ])
        .assert()
        .code(0);
    let store = Store::open(&env.db()).unwrap();
    let r = &store
        .responses(&store.latest_run().unwrap().unwrap().id)
        .unwrap()[0];
    let page = env.dir.path().join("item.html");
    let out = env
        .prism()
        .args(["report", "--item", &r.item_id, "-o"])
        .arg(&page)
        .output()
        .unwrap();
    exited_ok(&out);
    let h = std::fs::read_to_string(&page).unwrap();
    assert!(h.contains("<span class=\"t p1\" title=\"p 0.900"), "{h}");
    // 0.5 as an f32 log-probability comes back a hair below 0.5: underlined.
    assert!(h.contains("<span class=\"t p3\" title=\"p 0.500"), "{h}");
    assert!(h.contains("<span class=\"t p4\" title=\"p 0.100"), "{h}");
    assert!(h.contains("perplexity"), "{h}");
    // The tokens spell the stored answer, escaped.
    let spelled: String = h
        .split("<span class=\"t ")
        .skip(1)
        .map(|s| {
            s.split_once('>')
                .unwrap()
                .1
                .split("</span>")
                .next()
                .unwrap()
        })
        .collect();
    assert_eq!(
        spelled,
        r.text
            .as_deref()
            .unwrap()
            .replace('<', "&lt;")
            .replace('>', "&gt;")
    );
    let out = env
        .prism()
        .args(["report", "--item", "nope"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("no answer to item \"nope\""));
}

/// Self-detection on stored answers (`prism self-detect`): each answer's own model asked,
/// directly and with chain-of-thought; the verdicts stored, asked once; the summary against
/// PRISM's verdict; and `prism signals` lists them as signals.
#[test]
fn self_detection_of_stored_answers() {
    let env = Env::new();
    env.prism()
        .args([
            "run",
            "--models",
            "ah",
            "--filter",
            "KE-FD-Numbers",
            "--limit",
            "3",
            "--json",
        ])
        .assert()
        .code(0);
    env.prism().args(["score"]).assert().success();
    let before = env.mock.requests();
    let out = env
        .prism()
        .args(["self-detect", "--json"])
        .output()
        .unwrap();
    exited_ok(&out);
    assert_eq!(env.mock.requests() - before, 6, "3 answers x 2 modes");
    let rows = events(&out.stdout);
    assert_eq!(rows.len(), 2);
    for r in &rows {
        assert_eq!(r["detector"], "ah");
        assert_eq!(r["checked"], 3);
        // One question is about bones: that answer is said to hold false information.
        assert_eq!(r["false_information"], 1, "{r}");
        assert_eq!(r["unparsed"], 0);
        // The mock's answers are all wrong by PRISM's rules.
        assert_eq!(
            (r["wrong"].as_u64(), r["wrong_detected"].as_u64()),
            (Some(3), Some(1))
        );
    }
    let store = Store::open(&env.db()).unwrap();
    let run = store.latest_run().unwrap().unwrap().id;
    let checks = store.answer_checks(&run).unwrap();
    assert_eq!(checks.len(), 6);
    assert!(
        checks
            .iter()
            .all(|c| c.reply.is_some() && c.error.is_none())
    );
    // Again: nothing is asked.
    let before = env.mock.requests();
    let out = env
        .prism()
        .args(["self-detect", "--json"])
        .output()
        .unwrap();
    exited_ok(&out);
    assert_eq!(env.mock.requests(), before);
    // The signals: both modes, three answers each (too few correct ones for a number).
    let out = env.prism().args(["signals", "--json"]).output().unwrap();
    exited_ok(&out);
    let sig: Vec<serde_json::Value> = events(&out.stdout)
        .into_iter()
        .map(|e| e["row"].clone())
        .filter(|r| r["cell"] == "all")
        .collect();
    let names: Vec<&str> = sig.iter().map(|r| r["signal"].as_str().unwrap()).collect();
    assert_eq!(names, vec!["self-detection", "self-detection (CoT)"]);
    assert!(sig.iter().all(|r| r["n"] == 3));
    // A detector that is not configured is named.
    let out = env
        .prism()
        .args(["self-detect", "--detector", "nope"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("nope"));
}

/// Where in the answer (`prism sentences`): a run's first answer to each item cut into sentences,
/// each scored against the run's other samples by the judge (the mock says Yes when every word of
/// the sentence is in the sample), by unigram and by the answer's tokens; the count of calls is
/// said before; every verdict is stored, so a second run asks nothing. The `teller` model's
/// first answer makes up its last sentence, which its later samples leave out.
#[test]
fn sentences_are_scored_against_the_samples_and_asked_once() {
    let env = Env::new();
    env.prism()
        .args([
            "run",
            "--models",
            "teller",
            "--filter",
            "KE-FD-Numbers",
            "--limit",
            "1",
            "--samples",
            "3",
            "--logprobs",
            "1",
            "--json",
        ])
        .assert()
        .code(0);
    let sentences = |args: &[&str]| {
        let out = env
            .prism()
            .arg("sentences")
            .args(args)
            .arg("--json")
            .output()
            .unwrap();
        (
            out.status.code(),
            events(&out.stdout),
            String::from_utf8_lossy(&out.stderr).to_string(),
        )
    };
    // The prompt method without a judge is refused, with what to do.
    let (code, _, err) = sentences(&["--methods", "prompt"]);
    assert_ne!(code, Some(0));
    assert!(err.contains("--judge"), "{err}");
    let (code, _, err) = sentences(&["--methods", "vibes"]);
    assert_ne!(code, Some(0));
    assert!(err.contains("vibes"), "{err}");

    let before = env.mock.requests();
    let (code, evs, err) = sentences(&["--judge", "referee"]);
    assert_eq!(code, Some(0), "{err}");
    assert_eq!(evs.len(), 1, "{err}");
    let e = &evs[0];
    assert_eq!(e["samples"], 2, "{e}");
    let s = e["sentences"].as_array().unwrap();
    let texts: Vec<&str> = s.iter().map(|x| x["text"].as_str().unwrap()).collect();
    assert_eq!(
        texts,
        [
            "Paris is the capital of France.",
            "The Eiffel Tower is in Paris.",
            "It was built by Martians in 1066."
        ]
    );
    assert_eq!(s[2]["start"], 62);
    assert_eq!(s[2]["end"], 95);
    let prompt: Vec<f64> = s
        .iter()
        .map(|x| x["scores"]["prompt"].as_f64().unwrap())
        .collect();
    assert_eq!(prompt, [0.0, 0.0, 1.0]);
    assert!((e["answer"]["prompt"].as_f64().unwrap() - 1.0 / 3.0).abs() < 1e-12);
    // The made-up sentence's words are the rarest; every sentence has tokens of its own.
    let uni = |i: usize| s[i]["scores"]["unigram"].as_f64().unwrap();
    assert!(uni(2) > uni(0) && uni(2) > uni(1), "{e}");
    for x in s {
        assert!(x["scores"]["logprob_avg"].as_f64().unwrap() > 0.0, "{x}");
        assert!(x["scores"]["logprob_max"].as_f64() >= x["scores"]["logprob_avg"].as_f64());
    }
    // The two samples are one text: each sentence is asked against it once.
    assert!(
        err.contains("6 sentence×sample checks (0 stored, 3 to ask referee; 3 repeat a sentence and sample asked already)"),
        "{err}"
    );
    assert_eq!(env.mock.requests() - before, 3, "{err}");
    let stored = Store::open(&env.db())
        .unwrap()
        .records_where::<prism::sentences::SupportRecord>(Some(("judge", "referee")))
        .unwrap();
    assert_eq!(stored.len(), 3);
    assert!(
        stored
            .iter()
            .all(|r| r.verdict.is_some() && r.error.is_none())
    );

    // Again: every verdict is stored, nothing is asked, the same scores come out.
    let before = env.mock.requests();
    let (code, evs2, err) = sentences(&["--judge", "referee"]);
    assert_eq!((code, env.mock.requests()), (Some(0), before), "{err}");
    assert!(err.contains("(6 stored, 0 to ask"), "{err}");
    assert_eq!(evs2, evs);
    // One sample only: half the checks, all stored already; fewer than asked is said.
    let (code, evs4, err) = sentences(&["--judge", "referee", "--samples", "1"]);
    assert_eq!(code, Some(0), "{err}");
    assert_eq!(evs4[0]["samples"], 1);
    assert!(
        err.contains("3 sentence×sample checks (3 stored, 0 to ask"),
        "{err}"
    );
    // Without a judge: the methods that need no model.
    let (code, evs3, _) = sentences(&[]);
    assert_eq!(code, Some(0));
    assert!(evs3[0]["sentences"][0]["scores"]["prompt"].is_null());
    assert_eq!(
        evs3[0]["sentences"][2]["scores"]["unigram"],
        s[2]["scores"]["unigram"]
    );
    // Four samples: the two missing are drawn from the model that answered.
    let (code, evs5, err) = sentences(&["--samples", "4"]);
    assert_eq!(code, Some(0), "{err}");
    assert!(err.contains("drawing 2 sample(s) for 1 answer(s)"), "{err}");
    assert_eq!(evs5[0]["samples"], 4);
}

/// People grade sentences (`prism labels import`, as the TUI's `L` writes them): the grades
/// export and import again without a copy, a bad line is named and the rest load, and
/// `prism signals` says how well each sentence method finds the made-up sentences.
#[test]
fn graded_sentences_say_which_sentence_method_tells() {
    let env = Env::new();
    env.prism()
        .args([
            "run",
            "--models",
            "teller",
            "--limit",
            "6",
            "--samples",
            "3",
            "--concurrency",
            "1",
            "--json",
        ])
        .assert()
        .code(0);
    let out = env
        .prism()
        .args(["sentences", "--judge", "referee", "--json"])
        .output()
        .unwrap();
    let evs = events(&out.stdout);
    assert_eq!(evs.len(), 6, "{}", String::from_utf8_lossy(&out.stderr));
    // Each made-up sentence graded major, the others accurate; one line names a span past the
    // answer's end.
    let mut lines = String::new();
    for e in &evs {
        for (i, s) in e["sentences"].as_array().unwrap().iter().enumerate() {
            let made_up = s["text"].as_str().unwrap().contains("Martians");
            lines.push_str(
                &serde_json::json!({
                    "run": e["run"], "job": e["job"], "reviewer": "ann",
                    "sentence": i, "start": s["start"], "end": s["end"],
                    "label": if made_up { "major" } else { "accurate" },
                })
                .to_string(),
            );
            lines.push('\n');
        }
    }
    lines.push_str(
        &serde_json::json!({"run": evs[0]["run"], "job": evs[0]["job"], "reviewer": "ann",
            "sentence": 9, "start": 90, "end": 4000, "label": "minor"})
        .to_string(),
    );
    lines.push('\n');
    let file = env.dir.path().join("grades.jsonl");
    std::fs::write(&file, &lines).unwrap();
    let out = env
        .prism()
        .args(["labels", "import"])
        .arg(&file)
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr).to_string();
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(
        err.contains("grades.jsonl:19: end: bytes 90..4000"),
        "{err}"
    );
    assert!(err.contains("19 label(s) read, 18 new"), "{err}");
    // Exported with their sentence; imported again, nothing is new.
    let exported = env.prism().args(["labels", "export"]).output().unwrap();
    let rows = events(&exported.stdout);
    assert_eq!(rows.len(), 18);
    assert!(
        rows.iter()
            .all(|r| r["sentence"].is_u64() && r["text"].is_string())
    );
    assert_eq!(
        rows.iter()
            .filter(|r| r["label"] == "major_inaccurate")
            .count(),
        6
    );
    let again = env.dir.path().join("again.jsonl");
    std::fs::write(&again, &exported.stdout).unwrap();
    let out = env
        .prism()
        .args(["labels", "import"])
        .arg(&again)
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr).to_string();
    assert!(
        err.contains("18 label(s) read, 0 new, 18 already here"),
        "{err}"
    );

    let out = env.prism().args(["signals", "--json"]).output().unwrap();
    let rows: Vec<serde_json::Value> = events(&out.stdout)
        .into_iter()
        .filter(|e| e["event"] == "sentence_signal")
        .collect();
    let row = |m: &str| {
        rows.iter()
            .find(|r| r["row"]["method"] == m)
            .unwrap_or_else(|| panic!("no {m} row: {rows:?}"))["row"]
            .clone()
    };
    let prompt = row("prompt");
    assert_eq!(prompt["non_factual"]["n"], 18);
    assert_eq!(prompt["non_factual"]["hallucinated"], 6);
    assert_eq!(prompt["non_factual"]["auprc"], 100.0);
    assert_eq!(prompt["factual_auprc"], 100.0);
    assert!((prompt["non_factual_baseline"].as_f64().unwrap() - 100.0 / 3.0).abs() < 1e-9);
    // Every answer holds one made-up sentence of three: the share never moves, so there is
    // no correlation to give.
    assert_eq!(prompt["answers"], 6);
    assert!(prompt["pearson"].is_null());
    let unigram = row("unigram");
    assert_eq!(unigram["non_factual"]["auroc"], 100.0, "{unigram}");

    // The report draws the answers with their most doubtful sentences, shaded (HTML), and
    // carries every sentence with its scores (JSON, CSV).
    let report = |format: &str| {
        let out = env
            .prism()
            .args(["report", "--format", format])
            .output()
            .unwrap();
        assert_eq!(
            out.status.code(),
            Some(0),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8(out.stdout).unwrap()
    };
    let json: serde_json::Value = serde_json::from_str(&report("json")).unwrap();
    let sec = &json["sentences"];
    assert_eq!(sec["method"], "prompt", "{sec}");
    assert_eq!(sec["judge"], "referee");
    let answers = sec["answers"].as_array().unwrap();
    assert_eq!(answers.len(), 6);
    assert_eq!(answers[0]["worst"], 1.0);
    assert_eq!(answers[0]["sentences"][2]["scores"]["prompt"], 1.0);
    assert_eq!(answers[0]["sentences"][2]["start"], 62);
    let html = report("html");
    assert!(html.contains("Where in the answer"), "{html}");
    assert!(
        html.contains("[3·!!]</span> <span class=\"s4\"")
            && html.contains("Martians in 1066.</span>"),
        "the made-up sentence shaded darkest"
    );
    assert!(html.contains("[1·ok]</span> <span class=\"s1\""));
    let csv = report("csv");
    assert!(
        csv.lines()
            .any(|l| l.starts_with("sentences,") && l.contains("Martians")),
        "{csv}"
    );
}

/// `--samples N` on a run made without samples draws the missing ones from the model that
/// answered (its prompt again), saves them, and never draws them twice.
#[test]
fn sentences_draw_the_samples_an_answer_lacks_once() {
    let env = Env::new();
    env.prism()
        .args(["run", "--models", "teller", "--limit", "2", "--json"])
        .assert()
        .code(0);
    // Without samples, and without --samples: what to do is said.
    let out = env.prism().args(["sentences", "--json"]).output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr).to_string();
    assert_ne!(out.status.code(), Some(0));
    assert!(err.contains("--samples 5"), "{err}");
    let before = env.mock.requests();
    let out = env
        .prism()
        .args([
            "sentences",
            "--samples",
            "2",
            "--judge",
            "referee",
            "--json",
        ])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr).to_string();
    assert_eq!(out.status.code(), Some(0), "{err}");
    assert!(
        err.contains("drawing 4 sample(s) for 2 answer(s) of 1 model(s)"),
        "{err}"
    );
    assert!(
        err.contains("model teller: 4 sample(s) drawn, 0 failed"),
        "{err}"
    );
    let evs = events(&out.stdout);
    assert_eq!(evs.len(), 2);
    for e in &evs {
        assert_eq!(e["samples"], 2, "{e}");
        // The drawn samples leave the made-up sentence out: it alone is not backed.
        let prompt: Vec<f64> = e["sentences"]
            .as_array()
            .unwrap()
            .iter()
            .map(|s| s["scores"]["prompt"].as_f64().unwrap())
            .collect();
        assert_eq!(prompt, [0.0, 0.0, 1.0], "{e}");
    }
    let drawn = env.mock.requests() - before;
    // 4 samples, then the judge: 3 sentences against one sample text (the two are alike).
    assert_eq!(drawn, 4 + 3, "{err}");
    let stored = Store::open(&env.db())
        .unwrap()
        .records_where::<prism::sentences::draw::Drawn>(None)
        .unwrap();
    assert_eq!(stored.len(), 4);
    assert!(
        stored
            .iter()
            .all(|d| d.text.is_some() && d.k >= 1 && d.k <= 2)
    );
    // Again, and without --samples: nothing drawn or asked, the drawn samples are used.
    let before = env.mock.requests();
    for args in [&["--samples", "2"][..], &[]] {
        let out = env
            .prism()
            .arg("sentences")
            .args(args)
            .args(["--judge", "referee", "--json"])
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&out.stderr).to_string();
        assert_eq!(out.status.code(), Some(0), "{err}");
        assert!(!err.contains("drawing"), "{err}");
        assert_eq!(events(&out.stdout)[0]["samples"], 2);
    }
    assert_eq!(env.mock.requests(), before);
    // Three samples: one more each.
    let out = env
        .prism()
        .args(["sentences", "--samples", "3", "--json"])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr).to_string();
    assert!(err.contains("drawing 2 sample(s) for 2 answer(s)"), "{err}");
    assert_eq!(events(&out.stdout)[0]["samples"], 3);
}
