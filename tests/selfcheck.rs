//! Self-detection (`prism selfcheck`) as a user runs it, against the mock's scripted
//! `selfcheck` model: sentences written and checked (a retry, a triple set aside), verdicts
//! direct and with chain-of-thought (unclean ones counted), the metrics, a second detector, the
//! report, and a resume after kill -9 that asks nothing twice.

mod common;

use std::path::PathBuf;
use std::process::{Command as StdCommand, Stdio};
use std::time::{Duration, Instant};

use assert_cmd::Command;
use common::mock;
use prism::selfcheck::results::Stored;
use prism::store::{Answer, Mode, Sentence, Store};

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
                "[[models]]\nname = \"sc\"\nprovider = \"openai\"\nbase_url = \"{u}/v1\"\nmodel = \"selfcheck\"\n\n\
                 [[models]]\nname = \"referee\"\nprovider = \"openai\"\nbase_url = \"{u}/v1\"\nmodel = \"selfcheck\"\n\n\
                 [[models]]\nname = \"scslow\"\nprovider = \"openai\"\nbase_url = \"{u}/v1\"\nmodel = \"selfcheckslow\"\nmax_concurrency = 2\n",
                u = mock.url()
            ),
        )
        .unwrap();
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

    fn triples(&self, lines: &[String]) -> PathBuf {
        let p = self.dir.path().join("triples.jsonl");
        std::fs::write(&p, lines.join("\n")).unwrap();
        p
    }
}

fn triple(id: &str, subject: &str, relation: &str, object: &str, pop: f64) -> String {
    serde_json::json!({"id": id, "subject": subject, "relation": relation, "object": object,
                       "sentence": format!("{object} is the {relation} of {subject}."), "popularity": pop})
    .to_string()
}

fn run_id(stdout: &[u8]) -> (String, Vec<serde_json::Value>) {
    let evs: Vec<serde_json::Value> = String::from_utf8_lossy(stdout)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let id = evs
        .iter()
        .find(|e| e["event"] == "started")
        .and_then(|e| e["run_id"].as_str())
        .unwrap()
        .to_string();
    (id, evs)
}

#[test]
fn selfcheck_on_scripted_triples() {
    let env = Env::new();
    let file = env.triples(&[
        triple("a", "Ada", "home", "London", 10.0),
        triple("b", "Bob [[retry-once]]", "home", "Paris", 20.0),
        triple("c", "Cy [[no-object]]", "home", "Rome", 30.0),
        triple("d", "Dee [[chatty]]", "pet", "cat", 40.0),
    ]);
    let out = env
        .prism()
        .arg("selfcheck")
        .arg(&file)
        .args(["--models", "sc", "--shots", "2", "--json"])
        .output()
        .unwrap();
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let (id, evs) = run_id(&out.stdout);
    let store = Store::open(&env.db()).unwrap();
    let s = Stored::load(&prism::store::Db::file(&store.path().unwrap()), &id).unwrap();
    let by = |t: &str| s.items.iter().find(|i| i.triple_id == t).unwrap();
    assert_eq!(
        by("a").true_sentence.as_deref(),
        Some("Ada has home London.")
    );
    assert_eq!(
        by("a").false_sentence.as_deref(),
        Some("Ada has home Wrongville.")
    );
    assert_eq!(
        by("b").true_attempts,
        2,
        "retried once for the missing object"
    );
    let c = by("c");
    assert_eq!(c.true_attempts, 3);
    assert!(
        c.set_aside
            .as_deref()
            .unwrap()
            .contains("does not contain the object"),
        "{c:?}"
    );
    assert!(c.false_sentence.is_none());
    // Verdicts: 4 per answered triple, none for the set-aside one.
    assert_eq!(s.verdicts.len(), 12);
    let v = |t: &str, sent, mode| s.verdict(by(t).idx, sent, "sc", mode).unwrap().answer;
    assert_eq!(v("a", Sentence::False, Mode::Direct), Answer::Yes);
    assert_eq!(v("a", Sentence::True, Mode::Cot), Answer::No);
    assert_eq!(v("d", Sentence::True, Mode::Direct), Answer::Unparsed);
    assert_eq!(v("d", Sentence::False, Mode::Cot), Answer::Unparsed);
    // Calls: a 1+1+4, b 2+1+4, c 3, d 1+1+4.
    assert_eq!(env.mock.requests(), 22);
    // Metrics, direct: TP a, b, d (unclean counts as detected); FP d; TN a, b.
    let rows = &evs.iter().find(|e| e["event"] == "results").unwrap()["rows"];
    let r = &rows[0];
    assert_eq!(r["items"], 3);
    assert_eq!(r["set_aside"], 1);
    let d = &r["direct"];
    assert_eq!(d["confusion"]["tp"], 3);
    assert_eq!(d["confusion"]["fp"], 1);
    assert_eq!(d["confusion"]["tn"], 2);
    assert_eq!(d["scores"]["recall"], 100.0);
    assert_eq!(d["scores"]["precision"], 75.0);
    assert_eq!(d["unparsed"], 2);
    assert_eq!(d["parsed_only"]["accuracy"], 100.0);
    let home = r["relations"]
        .as_array()
        .unwrap()
        .iter()
        .find(|x| x["relation"] == "home")
        .unwrap();
    assert_eq!(home["n"], 2);
    // The same again: all from the cache.
    let before = env.mock.requests();
    let out = env
        .prism()
        .arg("selfcheck")
        .arg(&file)
        .args(["--models", "sc", "--shots", "2", "--json"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0));
    assert_eq!(env.mock.requests(), before);

    // The report.
    let out = env
        .prism()
        .args(["report", "--selfcheck", &id, "--format", "md"])
        .output()
        .unwrap();
    let md = String::from_utf8_lossy(&out.stdout);
    assert!(
        md.contains("Self-detection"),
        "{md}{} {:?}",
        String::from_utf8_lossy(&out.stderr),
        out.status
    );
    assert!(md.contains("| sc | sc | 3 | 1 |"), "{md}");
}

#[test]
fn another_detector_judges_every_generators_sentences() {
    let env = Env::new();
    let file = env.triples(&[
        triple("a", "Ada", "home", "London", 1.0),
        triple("b", "Bo", "home", "Oslo", 2.0),
    ]);
    let out = env
        .prism()
        .arg("selfcheck")
        .arg(&file)
        .args(["--models", "sc", "--detector", "referee,sc", "--json"])
        .output()
        .unwrap();
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let (id, evs) = run_id(&out.stdout);
    let s = Stored::load(&prism::store::Db::file(&env.db()), &id).unwrap();
    assert_eq!(
        s.verdicts.len(),
        2 * 2 * 2 * 2,
        "2 triples x 2 sentences x 2 detectors x 2 modes"
    );
    let rows = evs.iter().find(|e| e["event"] == "results").unwrap()["rows"]
        .as_array()
        .unwrap()
        .clone();
    let pairs: Vec<(String, String)> = rows
        .iter()
        .map(|r| {
            (
                r["generator"].as_str().unwrap().to_string(),
                r["detector"].as_str().unwrap().to_string(),
            )
        })
        .collect();
    assert_eq!(
        pairs,
        vec![
            ("sc".to_string(), "referee".to_string()),
            ("sc".to_string(), "sc".to_string())
        ]
    );
}

/// `--false-by swap`: the false sentence is the true one with the object swapped for another
/// object of the same relation (from the whole dataset, even past `--limit`); no rewrite is
/// asked; a relation with one object has nothing to swap in and is set aside with the reason.
#[test]
fn swap_writes_false_sentences_from_other_objects_of_the_relation() {
    let env = Env::new();
    let file = env.triples(&[
        triple("a", "Ada", "home", "London", 1.0),
        triple("b", "Bo", "home", "Oslo", 2.0),
        triple("c", "Cy", "home", "Rome", 3.0),
        triple("d", "Dee", "tool", "Hammer", 4.0),
    ]);
    let out = env
        .prism()
        .arg("selfcheck")
        .arg(&file)
        .args(["--models", "sc", "--false-by", "swap", "--json"])
        .output()
        .unwrap();
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let (id, _) = run_id(&out.stdout);
    let store = Store::open(&env.db()).unwrap();
    let run = store.selfcheck_run(&id).unwrap().unwrap();
    assert_eq!(run.config.false_by, prism::store::FalseBy::Swap);
    let s = Stored::load(&prism::store::Db::file(&store.path().unwrap()), &id).unwrap();
    let homes = ["London", "Oslo", "Rome"];
    for it in &s.items {
        let t = it.true_sentence.as_deref().unwrap();
        if it.relation == "tool" {
            assert!(it.false_sentence.is_none());
            assert!(
                it.set_aside
                    .as_deref()
                    .unwrap()
                    .contains("no other object of the relation \"tool\""),
                "{:?}",
                it.set_aside
            );
            continue;
        }
        let d = it.decoy.as_deref().unwrap();
        assert!(homes.contains(&d) && d != it.object, "{d}");
        assert_eq!(
            it.false_sentence.as_deref().unwrap(),
            t.replace(&it.object, d)
        );
        assert_eq!(it.false_attempts, 0, "no rewrite was asked");
    }
    // 4 true sentences, then 3 triples x 2 sentences x 2 modes of verdicts.
    assert_eq!(env.mock.requests(), 4 + 12);
    // The mock's detector only flags "Wrongville": a swapped object goes unnoticed.
    let store = Store::open(&env.db()).unwrap();
    let rows = prism::selfcheck::results::rows(
        &run,
        &Stored::load(&prism::store::Db::file(&store.path().unwrap()), &id).unwrap(),
    );
    assert_eq!((rows[0].items, rows[0].set_aside), (3, 1));
    assert_eq!(rows[0].direct.scores.recall, Some(0.0));
}

#[test]
fn resume_after_kill_9_asks_nothing_twice() {
    let env = Env::new();
    let lines: Vec<String> = (0..10)
        .map(|i| {
            triple(
                &format!("t{i}"),
                &format!("Subject{i}"),
                "home",
                &format!("Town{i}"),
                i as f64,
            )
        })
        .collect();
    let file = env.triples(&lines);
    let mut child = StdCommand::new(assert_cmd::cargo::cargo_bin("prism"))
        .arg("selfcheck")
        .arg(&file)
        .args(["--models", "scslow", "--json"])
        .env("PRISM_CONFIG_DIR", env.dir.path())
        .env("PRISM_DATA_DIR", env.dir.path())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    use std::io::BufRead;
    let mut reader = std::io::BufReader::new(child.stdout.take().unwrap());
    let (mut id, mut verdicts, mut line) = (String::new(), 0, String::new());
    let start = Instant::now();
    while verdicts < 8 {
        line.clear();
        assert!(reader.read_line(&mut line).unwrap() > 0, "ended early");
        let v: serde_json::Value = serde_json::from_str(&line).unwrap();
        if v["event"] == "started" {
            id = v["run_id"].as_str().unwrap().to_string();
        }
        if v["event"] == "verdict" {
            verdicts += 1;
        }
        assert!(start.elapsed() < Duration::from_secs(60));
    }
    child.kill().unwrap();
    child.wait().unwrap();
    let before = Stored::load(&prism::store::Db::file(&env.db()), &id).unwrap();
    assert!(before.verdicts.len() >= 8 && before.verdicts.len() < 40);
    let out = env
        .prism()
        .args(["selfcheck", "--resume", &id, "--json"])
        .output()
        .unwrap();
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let after = Stored::load(&prism::store::Db::file(&env.db()), &id).unwrap();
    assert_eq!(after.verdicts.len(), 40);
    for v in &before.verdicts {
        let now = after
            .verdicts
            .iter()
            .find(|x| {
                (x.item, x.sentence, &x.detector, x.mode)
                    == (v.item, v.sentence, &v.detector, v.mode)
            })
            .unwrap();
        assert_eq!(now, v, "a verdict stored before the kill is unchanged");
    }
    // Every sentence written before the kill was asked once.
    for it in before.items.iter().filter(|i| i.true_sentence.is_some()) {
        assert_eq!(
            env.mock
                .attempts_for("selfcheckslow", &format!("Subject: {}\n", it.subject)),
            1,
            "{}",
            it.subject
        );
    }
}

/// `validate` reads triples.
#[test]
fn validate_reads_triples() {
    let env = Env::new();
    let file = env.triples(&[
        triple("a", "Ada", "home", "London", 1.0),
        "{\"id\": \"b\", \"subject\": \"B\"}".to_string(),
    ]);
    let out = env.prism().arg("validate").arg(&file).output().unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("1 triples in 1 relations"), "{text}");
    assert!(text.contains(":2: object: missing"), "{text}");
    assert_eq!(out.status.code(), Some(1));
}

/// `--areas FILE`: recall per area with the relations of an area pooled, in the results event;
/// a malformed areas file is refused before any call, naming the file.
#[test]
fn recall_by_area_from_a_map() {
    let env = Env::new();
    let file = env.triples(&[
        triple("a", "Ada", "home", "London", 10.0),
        triple("b", "Bob", "birthplace", "Paris", 20.0),
        triple("d", "Dee", "pet", "cat", 40.0),
    ]);
    let areas = env.dir.path().join("areas.json");
    std::fs::write(&areas, r#"{"home": "place", "birthplace": "place"}"#).unwrap();
    let out = env
        .prism()
        .arg("selfcheck")
        .arg(&file)
        .args(["--models", "sc", "--json", "--areas"])
        .arg(&areas)
        .output()
        .unwrap();
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let (_, evs) = run_id(&out.stdout);
    let res = evs.iter().find(|e| e["event"] == "results").unwrap();
    let rel_n: u64 = res["rows"][0]["relations"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["n"].as_u64().unwrap())
        .sum();
    let by_area = res["areas"][0].as_array().unwrap();
    let names: Vec<&str> = by_area
        .iter()
        .map(|a| a["relation"].as_str().unwrap())
        .collect();
    assert_eq!(names, vec!["(not in the map)", "place"]);
    let area_n: u64 = by_area.iter().map(|a| a["n"].as_u64().unwrap()).sum();
    assert_eq!(area_n, rel_n);
    assert_eq!(by_area[1]["n"], 2);

    std::fs::write(&areas, "[\"home\"]").unwrap();
    let before = env.mock.requests();
    let out = env
        .prism()
        .arg("selfcheck")
        .arg(&file)
        .args(["--models", "sc", "--areas"])
        .arg(&areas)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("areas.json:1:"));
    assert_eq!(env.mock.requests(), before);
}
