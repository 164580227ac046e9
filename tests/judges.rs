//! The judge on trial, as a user runs it: answers imported into a store, scored by a panel of
//! three mock judges asked three times each (`prism score --judge j,f,c --judge-repeats 3`),
//! labelled by people (`prism labels import`), then `prism judges`. The mock's judges are built
//! so the truth is known: `judge` reads the answer's `[[same]]` (YES) or not (NO); `judgeflip`
//! flips on every asking of the answers holding `[[flip]]`; `judgecontrary` says the opposite
//! of `judge` on the answers holding `[[contrary]]`.

mod common;

use std::collections::BTreeMap;
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
    mock: mock::Mock,
}

impl Env {
    fn new() -> Env {
        let mock = mock::start_background();
        let dir = tempfile::tempdir().unwrap();
        let m = |name: &str, model: &str| {
            format!(
                "[[models]]\nname = \"{name}\"\nprovider = \"openai\"\nbase_url = \"{}/v1\"\nmodel = \"{model}\"\nmax_retries = 0\n\n",
                mock.url()
            )
        };
        std::fs::write(
            dir.path().join("models.toml"),
            [
                m("j", "judge"),
                m("f", "judgeflip"),
                m("c", "judgecontrary"),
            ]
            .concat(),
        )
        .unwrap();
        Env { dir, mock }
    }

    fn prism(&self) -> Command {
        let mut c = Command::cargo_bin("prism").unwrap();
        c.env("PRISM_CONFIG_DIR", self.dir.path())
            .env("PRISM_DATA_DIR", self.dir.path())
            .env("USER", "tester");
        c
    }

    fn db(&self) -> PathBuf {
        self.dir.path().join("prism.db")
    }

    fn stdout(&self, args: &[&str]) -> String {
        let out = self.prism().args(args).output().unwrap();
        assert!(
            out.status.success(),
            "prism {args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8(out.stdout).unwrap()
    }
}

/// What the answer `i` holds, so each judge's verdict is known.
#[derive(Debug, Clone, Copy)]
struct Plan {
    same: bool,
    flip: bool,
    contrary: bool,
}

fn plan(i: usize) -> Plan {
    Plan {
        same: i.is_multiple_of(2),
        flip: i.is_multiple_of(5),
        contrary: i % 4 == 1 || i.is_multiple_of(7),
    }
}

impl Plan {
    /// Hallucinated, per judge, as each answers once; `f` asked three times says YES, NO, YES.
    fn j(self) -> bool {
        !self.same
    }
    fn f(self) -> bool {
        if self.flip { false } else { self.j() }
    }
    fn c(self) -> bool {
        self.j() ^ self.contrary
    }
}

/// Writes an outputs directory with one answer per item of the judged fact tasks; returns each
/// answer's plan by item id.
fn write_answers(out: &Path) -> BTreeMap<String, Plan> {
    let ds = dataset::load_path(&mini()).unwrap().dataset;
    let mut by_task: BTreeMap<String, Vec<Value>> = BTreeMap::new();
    let mut plans = BTreeMap::new();
    let mut i = 0;
    for it in &ds.items {
        let task = ds.task_of(it);
        if task.evaluator.as_str() != "fact_judge" && task.evaluator.as_str() != "judge_equiv" {
            continue;
        }
        let p = plan(i);
        i += 1;
        let mut text = format!("A claim about {}", it.id);
        for (on, mark) in [
            (p.same, " [[same]]"),
            (p.flip, " [[flip]]"),
            (p.contrary, " [[contrary]]"),
        ] {
            if on {
                text.push_str(mark);
            }
        }
        by_task
            .entry(task.id.clone())
            .or_default()
            .push(json!({"id": it.id.to_string(), "response": text}));
        plans.insert(it.id.to_string(), p);
    }
    let dir = out.join("m").join("responses");
    std::fs::create_dir_all(&dir).unwrap();
    for (task, rows) in by_task {
        let body: String = rows.iter().map(|r| format!("{r}\n")).collect();
        std::fs::write(dir.join(format!("{task}.jsonl")), body).unwrap();
    }
    plans
}

#[test]
fn a_panel_with_repeats_keeps_every_verdict_and_the_trial_reports_the_known_truth() {
    let env = Env::new();
    let out = env.dir.path().join("outputs");
    let plans = write_answers(&out);
    assert!(plans.len() >= 40, "{} answers", plans.len());
    let db = env.db();
    let db = db.to_str().unwrap();
    env.prism()
        .args(["import", "--db", db, "--dataset"])
        .arg(mini())
        .arg("--prism-outputs")
        .arg(&out)
        .assert()
        .success();

    // The panel: three judges, three askings each, majority.
    let scored = env.stdout(&[
        "score",
        "--db",
        db,
        "--data",
        mini().to_str().unwrap(),
        "--judge",
        "j,f,c",
        "--judge-repeats",
        "3",
        "--json",
    ]);
    let report: Value = serde_json::from_str(&scored).unwrap();
    assert_eq!(report["judge"], "j+f+c (majority) x3");
    assert_eq!(report["counts"]["by_judge"], plans.len());
    let asked = env.mock.requests();
    // Every judge asked every answer three times (each asking its own request).
    assert_eq!(asked, 9 * plans.len());

    // Each answer's score follows the majority of the three judges.
    let store = prism::store::Store::open(Path::new(db)).unwrap();
    let run = store.latest_run().unwrap().unwrap().id;
    let scores = store.scores(Some(&run)).unwrap();
    assert_eq!(scores.len(), plans.len());
    for s in &scores {
        let p = plans[&s.item_id];
        let votes = [p.j(), p.f(), p.c()].iter().filter(|h| **h).count();
        let want = if votes >= 2 { 0.0 } else { 1.0 };
        assert_eq!(s.score, Some(want), "{}: {p:?} {}", s.item_id, s.detail);
        assert_eq!(s.judge.as_deref(), Some("j+f+c (majority) x3"));
    }
    let verdicts = store.judge_verdicts(Some(&run)).unwrap();
    assert_eq!(verdicts.len(), 9 * plans.len());

    // Scoring again asks nobody: every asking is cached apart.
    env.stdout(&[
        "score",
        "--db",
        db,
        "--data",
        mini().to_str().unwrap(),
        "--judge",
        "j,f,c",
        "--judge-repeats",
        "3",
        "--json",
    ]);
    assert_eq!(env.mock.requests(), asked);

    // People label every answer as `judge` reads it; one line of the file is bad.
    let rows = store.responses(&run).unwrap();
    let mut labels = String::new();
    for r in &rows {
        let p = plans[&r.item_id];
        labels.push_str(&format!(
            "{}\n",
            json!({"run": run, "job": r.job_idx, "reviewer": "ann",
                   "label": if p.j() { "hallucinated" } else { "correct" }})
        ));
    }
    labels.push_str("{\"run\": \"x\", \"job\": 1, \"reviewer\": \"ann\", \"label\": \"maybe\"}\n");
    let file = env.dir.path().join("labels.jsonl");
    std::fs::write(&file, &labels).unwrap();
    let imported = env
        .prism()
        .args(["labels", "--db", db, "import"])
        .arg(&file)
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&imported.stderr);
    assert_eq!(imported.status.code(), Some(1), "{err}");
    assert!(
        err.contains(&format!(
            "{}:{}: label: \"maybe\" is not hallucinated, correct, cant_tell or withdrawn",
            file.display(),
            rows.len() + 1
        )),
        "{err}"
    );
    assert!(err.contains(&format!("{} new", rows.len())), "{err}");
    // Imported again: nothing twice.
    let again = env
        .prism()
        .args(["labels", "--db", db, "import"])
        .arg(&file)
        .output()
        .unwrap();
    assert!(String::from_utf8_lossy(&again.stderr).contains(" 0 new"));

    let trial: Value =
        serde_json::from_str(&env.stdout(&["judges", "--db", db, "--json", "--min-labels", "5"]))
            .unwrap();
    assert_eq!(trial["judges"], json!(["j", "f", "c"]));
    let all = &trial["groups"][0];
    assert_eq!(all["name"], "all");
    assert_eq!(all["judged"], plans.len());
    assert_eq!(all["labelled"], plans.len());
    let n = plans.len() as f64;
    let count = |f: &dyn Fn(&Plan) -> bool| plans.values().filter(|p| f(p)).count();
    // j agrees with people everywhere.
    let j = &all["vs_people"][0];
    assert_eq!(j["accuracy"]["value"], 1.0);
    assert_eq!(j["kappa"]["value"], 1.0);
    // c disagrees exactly where it was told to: the confusion counts by hand.
    let c = &all["vs_people"][2];
    assert_eq!(
        c["judge_hallucinated_people_correct"],
        count(&|p| p.contrary && !p.j())
    );
    assert_eq!(
        c["judge_correct_people_hallucinated"],
        count(&|p| p.contrary && p.j())
    );
    let c_acc = c["accuracy"]["value"].as_f64().unwrap();
    assert!((c_acc - (1.0 - count(&|p| p.contrary) as f64 / n)).abs() < 1e-12);
    let (lo, hi) = (
        c["accuracy"]["low"].as_f64().unwrap(),
        c["accuracy"]["high"].as_f64().unwrap(),
    );
    assert!(lo <= c_acc && c_acc <= hi, "{lo} {c_acc} {hi}");
    // f flips on exactly the [[flip]] answers; j and c never do.
    let flips = &all["flips"];
    assert_eq!(flips[1]["flipped"], count(&|p| p.flip));
    assert_eq!(flips[1]["n"], plans.len());
    assert_eq!(flips[0]["flipped"], 0);
    assert_eq!(flips[2]["flipped"], 0);
    // Among judges: every answer decided by all three.
    assert_eq!(all["among"]["n"], plans.len());
    assert!(all["among"]["krippendorff_alpha"].as_f64().unwrap() < 1.0);
    // Per evaluator after the row of all.
    let names: Vec<&str> = trial["groups"]
        .as_array()
        .unwrap()
        .iter()
        .map(|g| g["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["all", "fact_judge", "judge_equiv"]);
    // Under j alone, the KE rate is the share j calls hallucinated (every answer is KE).
    let readings = &trial["models"][0]["readings"];
    assert_eq!(readings[0]["under"], "stored");
    assert_eq!(readings[1]["under"], "j");
    let ke_j = readings[1]["rates"][0][0].as_f64().unwrap();
    let want = 100.0 * count(&|p| p.j()) as f64 / n;
    // Rates are means of sub-task rates: equal to the share only when the sub-tasks are even,
    // as here (5 answers each).
    assert!((ke_j - want).abs() < 1e-9, "{ke_j} {want}");

    // The terminal table names the cells.
    let table = env.stdout(&["judges", "--db", db, "--min-labels", "5"]);
    assert!(table.contains("against people"), "{table}");
    assert!(table.contains("within a judge, asked again"), "{table}");
    assert!(table.contains("the choice of judge moves its"), "{table}");
    // With the default 10 labels per cell, the judge_equiv row (5 answers) has too few.
    let table = env.stdout(&["judges", "--db", db]);
    assert!(table.contains("too few labels"), "{table}");

    // The run's report carries the same numbers: HTML section and JSON.
    let html = env.stdout(&["report", "--db", db, "--format", "html"]);
    assert!(html.contains("<h2>Judges on trial</h2>"), "{html}");
    for id in ["judges", "judges-among", "judges-flips", "judges-readings"] {
        assert!(html.contains(&format!("id=\"{id}\"")), "{id}");
    }
    let json: Value =
        serde_json::from_str(&env.stdout(&["report", "--db", db, "--format", "json"])).unwrap();
    assert_eq!(json["judges"]["judges"], json!(["j", "f", "c"]));
    assert_eq!(
        json["judges"]["groups"][0]["flips"][1]["flipped"],
        count(&|p| p.flip)
    );
}

#[test]
fn labels_are_added_listed_and_exported_and_a_wrong_label_is_refused() {
    let env = Env::new();
    let out = env.dir.path().join("outputs");
    write_answers(&out);
    let db = env.db();
    let db = db.to_str().unwrap();
    env.prism()
        .args(["import", "--db", db, "--dataset"])
        .arg(mini())
        .arg("--prism-outputs")
        .arg(&out)
        .assert()
        .success();
    let store = prism::store::Store::open(Path::new(db)).unwrap();
    let run = store.latest_run().unwrap().unwrap().id;
    env.prism()
        .args([
            "labels", "--db", db, "add", &run, "0", "h", "--note", "made up",
        ])
        .assert()
        .success();
    env.prism()
        .args(["labels", "--db", db, "add", &run, "0", "correct"])
        .assert()
        .success();
    let bad = env
        .prism()
        .args(["labels", "--db", db, "add", &run, "0", "perhaps"])
        .output()
        .unwrap();
    assert!(!bad.status.success());
    assert!(String::from_utf8_lossy(&bad.stderr).contains("label \"perhaps\""));
    let missing = env
        .prism()
        .args(["labels", "--db", db, "add", &run, "9999", "h"])
        .output()
        .unwrap();
    assert!(String::from_utf8_lossy(&missing.stderr).contains("no answer 9999"));
    let exported = env.stdout(&["labels", "--db", db, "export"]);
    let lines: Vec<Value> = exported
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    // Both kept, oldest first, by the login name.
    assert_eq!(lines.len(), 2);
    assert_eq!(lines[0]["label"], "hallucinated");
    assert_eq!(lines[0]["note"], "made up");
    assert_eq!(lines[1]["label"], "correct");
    assert_eq!(lines[1]["reviewer"], "tester");
    assert!(lines[0]["item_id"].as_str().unwrap().starts_with("KE-"));
    let listed = env.stdout(&["labels", "--db", db, "list"]);
    assert_eq!(listed.lines().count(), 2, "{listed}");
}

/// The judges screen, as a user reaches it: `H` for the heatmap, `J` for the judges. The grid
/// shows each judge's kappa against people; `enter` on the contrary judge's cell lists the
/// answers it and people disagree on, with every judge's verdict and every label; `L` labels
/// the answer shown, and the label is in the store.
#[test]
fn the_judges_screen_lists_a_judges_disagreements_and_labels_from_there() {
    use common::screen::{code, key, play, runtime};
    use crossterm::event::KeyCode;
    let env = Env::new();
    let out = env.dir.path().join("outputs");
    let plans = write_answers(&out);
    let db = env.db();
    let dbs = db.to_str().unwrap();
    env.prism()
        .args(["import", "--db", dbs, "--dataset"])
        .arg(mini())
        .arg("--prism-outputs")
        .arg(&out)
        .assert()
        .success();
    env.stdout(&[
        "score",
        "--db",
        dbs,
        "--data",
        mini().to_str().unwrap(),
        "--judge",
        "j,f,c",
        "--json",
    ]);
    let store = prism::store::Store::open(&db).unwrap();
    let run = store.latest_run().unwrap().unwrap().id;
    let rows = store.responses(&run).unwrap();
    let labels: String = rows
        .iter()
        .map(|r| {
            let p = plans[&r.item_id];
            format!(
                "{}\n",
                json!({"run": run, "job": r.job_idx, "reviewer": "ann",
                       "label": if p.j() { "hallucinated" } else { "correct" }})
            )
        })
        .collect();
    let file = env.dir.path().join("labels.jsonl");
    std::fs::write(&file, labels).unwrap();
    env.prism()
        .args(["labels", "--db", dbs, "import"])
        .arg(&file)
        .assert()
        .success();
    drop(store);

    let rt = runtime();
    let (_, mut services) = common::screen::session(&rt, &db, Vec::new());
    let ds = dataset::load_path(&mini()).unwrap().dataset;
    let mut app = prism::tui::App::new(
        std::sync::Arc::new(ds),
        std::sync::Arc::new(Vec::new()),
        prism::theme::Theme::default_theme(),
        prism::tui::keymap::Keymap::default(),
    );
    let grid = play(
        &rt,
        &mut app,
        &mut services,
        vec![vec![key('H')], vec![key('J')], vec![]],
        (140, 40),
    );
    assert!(grid.contains("judges on trial"), "{grid}");
    // j reads as people do on every answer: kappa 1.
    assert!(grid.contains("κ 1.00"), "{grid}");
    for name in ["all", "fact_judge", "judge_equiv", "Fleiss"] {
        assert!(grid.contains(name), "{name}: {grid}");
    }
    // What the cells are is said: what a kappa means, and that n counts answers both decided.
    assert!(grid.contains("1 perfect, 0 chance"), "{grid}");
    assert!(grid.contains("50 of them with people's verdict"), "{grid}");
    // At 80 columns the three judges' cells fit, and the judges among themselves move below
    // (never run into a judge's column).
    let narrow = play(&rt, &mut app, &mut services, vec![vec![]], (80, 24));
    assert!(!narrow.contains("among: Fleiss"), "{narrow}");
    assert!(narrow.contains("among the judges:"), "{narrow}");
    assert!(narrow.contains("κ 1.00"), "{narrow}");
    // The chosen cell says how the judge stands: nothing saved yet, and AC1 beside kappa.
    assert!(grid.contains("calibration: not calibrated"), "{grid}");
    assert!(grid.contains("AC1 1.00"), "{grid}");
    let count = |f: &dyn Fn(&Plan) -> bool| plans.values().filter(|p| f(p)).count();
    let disagree = count(&|p| p.contrary);
    // Two judges to the right (c), its disagreements.
    let list = play(
        &rt,
        &mut app,
        &mut services,
        vec![vec![key('l'), key('l')], vec![code(KeyCode::Enter)], vec![]],
        (140, 40),
    );
    assert!(
        list.contains(&format!("c vs people on all: 1/{disagree}")),
        "{list}"
    );
    let shown = app
        .find::<prism::tui::screens::Judges>()
        .and_then(|j| j.shown().cloned())
        .expect("an answer shown");
    assert_eq!(shown.verdicts.len(), 3, "every judge's verdict");
    assert_eq!(shown.labels.len(), 1);
    assert!(plans[&shown.item_id].contrary);
    // The list names the answer by its item.
    assert!(
        list.contains(&format!(" {} #{}", shown.item_id, shown.job_idx)),
        "{list}"
    );
    for part in ["question", "answer", "judges", "people", "ann"] {
        assert!(list.contains(part), "{part}: {list}");
    }
    // L, then enter: labelled (the first choice, hallucinated) with a note.
    let before = prism::store::Store::open(&db)
        .unwrap()
        .answer_labels(Some(&run))
        .unwrap()
        .len();
    play(
        &rt,
        &mut app,
        &mut services,
        vec![
            vec![key('L')],
            "second look".chars().map(key).collect(),
            vec![code(KeyCode::Enter)],
            vec![],
        ],
        (140, 40),
    );
    let labels = prism::store::Store::open(&db)
        .unwrap()
        .answer_labels(Some(&run))
        .unwrap();
    assert_eq!(labels.len(), before + 1);
    let new = labels.iter().find(|l| l.note == "second look").unwrap();
    assert_eq!(
        (new.job_idx, new.label),
        (shown.job_idx, prism::store::Label::Hallucinated)
    );
}

/// The labels committed with the README's example (tests/fixtures/demo-labels) are read whole by
/// the importer: every line a label, kept as written on a store without their runs.
#[test]
fn the_committed_demo_labels_import_whole() {
    let env = Env::new();
    let file =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/demo-labels/labels.jsonl");
    let db = env.db();
    let out = env
        .prism()
        .args(["labels", "--db", db.to_str().unwrap(), "import"])
        .arg(&file)
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{err}");
    assert!(err.contains("100 label(s) read, 100 new"), "{err}");
    let labels = prism::store::Store::open(&db)
        .unwrap()
        .answer_labels(None)
        .unwrap();
    let count = |l: prism::store::Label| labels.iter().filter(|x| x.label == l).count();
    assert_eq!(
        (
            count(prism::store::Label::Hallucinated),
            count(prism::store::Label::Correct),
            count(prism::store::Label::CantTell)
        ),
        (83, 13, 4)
    );
    assert!(
        labels
            .iter()
            .all(|l| !l.note.is_empty() && !l.model.is_empty())
    );
}

/// Where the judge decides the ranking (issue 46): model `m` (half its answers right by `j`)
/// against model `n`, whose every answer `j` and `f` call hallucinated and the contrary judge
/// `c` calls right. Stored (the panel's majority), `n` is worse; under `c` alone it is better:
/// `prism compare` shows B − A under each judge and says the sign changes.
#[test]
fn compare_says_where_the_judge_decides_the_ranking() {
    let env = Env::new();
    let db = env.db();
    let db = db.to_str().unwrap();
    let out_m = env.dir.path().join("outputs-m");
    let plans = write_answers(&out_m);
    // n: the same items, every answer marked [[contrary]] only.
    let out_n = env.dir.path().join("outputs-n");
    let dir_n = out_n.join("n").join("responses");
    std::fs::create_dir_all(&dir_n).unwrap();
    for f in std::fs::read_dir(out_m.join("m").join("responses")).unwrap() {
        let f = f.unwrap().path();
        let body: String = std::fs::read_to_string(&f)
            .unwrap()
            .lines()
            .map(|l| {
                let mut v: Value = serde_json::from_str(l).unwrap();
                let id = v["id"].as_str().unwrap().to_string();
                v["response"] = json!(format!("A claim about {id} [[contrary]]"));
                format!("{v}\n")
            })
            .collect();
        std::fs::write(dir_n.join(f.file_name().unwrap()), body).unwrap();
    }
    let mut runs = Vec::new();
    for out in [&out_m, &out_n] {
        // The import prints the new run's id (two imports in one second: "the latest run"
        // would be either).
        let run = env
            .stdout(&[
                "import",
                "--db",
                db,
                "--dataset",
                mini().to_str().unwrap(),
                "--prism-outputs",
                out.to_str().unwrap(),
            ])
            .trim()
            .to_string();
        env.stdout(&[
            "score",
            "--db",
            db,
            "--run",
            &run,
            "--data",
            mini().to_str().unwrap(),
            "--judge",
            "j,f,c",
            "--judge-repeats",
            "3",
        ]);
        runs.push(run);
    }
    let a = format!("{}:m", runs[0]);
    let b = format!("{}:n", runs[1]);
    let json: Value =
        serde_json::from_str(&env.stdout(&["compare", &a, &b, "--db", db, "--format", "json"]))
            .unwrap();
    let j = &json["judges"];
    assert_eq!(j["judges"], json!(["c", "f", "j"]), "{j}");
    assert_eq!(j["paired"], json!([plans.len(), plans.len(), plans.len()]));
    // Each dimension row, by hand: n is 100% hallucinated under j, f and the panel, 0% under c;
    // m is neither.
    let mut checked = 0;
    for row in j["rows"].as_array().unwrap() {
        // A dimension with no judged item has no rate on either side.
        if row["level"] != "dimension" || row["stored"].is_null() {
            continue;
        }
        let stored = row["stored"].as_f64().unwrap();
        let under: Vec<f64> = row["under"]
            .as_array()
            .unwrap()
            .iter()
            .map(|v| v.as_f64().unwrap())
            .collect();
        assert!(stored > 0.0, "{row}");
        assert!(under[0] < 0.0, "under c, n is the better: {row}");
        assert!(under[2] > 0.0, "under j, n is the worse: {row}");
        assert_eq!(row["sign_holds"], false, "{row}");
        assert_eq!(row["within_judge_spread"], true, "{row}");
        checked += 1;
    }
    assert!(checked >= 1, "{j}");
    // The table says it in words.
    let table = env.stdout(&["compare", &a, &b, "--db", db]);
    assert!(table.contains("under each judge alone"), "{table}");
    assert!(
        table.contains("the judge decides: the sign changes"),
        "{table}"
    );
    // So does the HTML page.
    let html = env.stdout(&["compare", &a, &b, "--db", db, "--format", "html"]);
    assert!(html.contains("<table id=\"compare-judges\">"), "{html}");
    assert!(
        html.contains("the judge decides: the sign changes"),
        "{html}"
    );
}

/// A panel of four judges on four servers that all call their model `judge`: each server is
/// asked every answer, and each judge's verdicts are its own server's (were the cache keyed by
/// the model id alone, the first server would answer for all four and the panel would agree
/// with itself).
#[test]
fn a_panel_of_judges_sharing_a_model_id_asks_each_server() {
    let mocks: Vec<mock::Mock> = (0..4).map(|_| mock::start_background()).collect();
    let dir = tempfile::tempdir().unwrap();
    let models: String = mocks
        .iter()
        .zip(["a", "b", "c", "d"])
        .map(|(m, name)| {
            format!(
                "[[models]]\nname = \"{name}\"\nprovider = \"openai\"\nbase_url = \"{}/v1\"\nmodel = \"judge\"\nmax_retries = 0\n\n",
                m.url()
            )
        })
        .collect();
    std::fs::write(dir.path().join("models.toml"), models).unwrap();
    let prism = || {
        let mut c = Command::cargo_bin("prism").unwrap();
        c.env("PRISM_CONFIG_DIR", dir.path())
            .env("PRISM_DATA_DIR", dir.path());
        c
    };
    let out = dir.path().join("outputs");
    let plans = write_answers(&out);
    let db = dir.path().join("prism.db");
    prism()
        .arg("import")
        .arg("--db")
        .arg(&db)
        .arg("--dataset")
        .arg(mini())
        .arg("--prism-outputs")
        .arg(&out)
        .assert()
        .success();
    prism()
        .arg("score")
        .arg("--db")
        .arg(&db)
        .arg("--data")
        .arg(mini())
        .args(["--judge", "a,b,c,d", "--json"])
        .assert()
        .success();
    for (m, name) in mocks.iter().zip(["a", "b", "c", "d"]) {
        assert_eq!(m.requests(), plans.len(), "judge {name}'s server");
    }
    let store = prism::store::Store::open(&db).unwrap();
    let run = store.latest_run().unwrap().unwrap().id;
    let verdicts = store.judge_verdicts(Some(&run)).unwrap();
    assert_eq!(verdicts.len(), 4 * plans.len());
}

/// An equivalence judge whose replies say two things or none: PRISM's reading scores them (a
/// YES anywhere is the same meaning), each is marked in its verdict, `prism judges` counts
/// them per judge, and the strict reading (in the trial, and when scoring) decides none.
#[test]
fn equivalence_replies_that_say_two_things_or_none_are_marked_and_counted() {
    let mock = mock::start_background();
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("models.toml"),
        format!(
            "[[models]]\nname = \"o\"\nprovider = \"openai\"\nbase_url = \"{}/v1\"\nmodel = \"judgeodd\"\nmax_retries = 0\n",
            mock.url()
        ),
    )
    .unwrap();
    let prism = || {
        let mut c = Command::cargo_bin("prism").unwrap();
        c.env("PRISM_CONFIG_DIR", dir.path())
            .env("PRISM_DATA_DIR", dir.path())
            .env("USER", "tester");
        c
    };
    // Answers to the judged fact tasks: by their number, a plain YES or NO, or one of the
    // three odd replies.
    let ds = dataset::load_path(&mini()).unwrap().dataset;
    let marks = ["[[same]]", "", "[[both]]", "[[yesterday]]", "[[neither]]"];
    let mut by_task: BTreeMap<String, String> = BTreeMap::new();
    let mut n = 0;
    for it in &ds.items {
        let task = ds.task_of(it);
        if task.evaluator.as_str() != "fact_judge" && task.evaluator.as_str() != "judge_equiv" {
            continue;
        }
        let text = format!("A claim about {} {}", it.id, marks[n % marks.len()]);
        n += 1;
        by_task
            .entry(task.id.clone())
            .or_default()
            .push_str(&format!(
                "{}\n",
                json!({"id": it.id.to_string(), "response": text})
            ));
    }
    assert!(n >= 10, "{n} answers");
    let out = dir.path().join("outputs");
    let resp = out.join("m").join("responses");
    std::fs::create_dir_all(&resp).unwrap();
    for (task, body) in &by_task {
        std::fs::write(resp.join(format!("{task}.jsonl")), body).unwrap();
    }
    let db = dir.path().join("prism.db");
    prism()
        .arg("import")
        .arg("--db")
        .arg(&db)
        .arg("--dataset")
        .arg(mini())
        .arg("--prism-outputs")
        .arg(&out)
        .assert()
        .success();
    let score = |reading: &str| {
        prism()
            .arg("score")
            .arg("--db")
            .arg(&db)
            .arg("--data")
            .arg(mini())
            .args(["--judge", "o", "--judge-reading", reading, "--json"])
            .assert()
            .success();
        let store = prism::store::Store::open(&db).unwrap();
        let run = store.latest_run().unwrap().unwrap().id;
        (
            store.scores(Some(&run)).unwrap(),
            store.responses(&run).unwrap(),
            run,
        )
    };
    let (scores, answers, run) = score("prism");
    let text_of = |job: u32| {
        answers
            .iter()
            .find(|r| r.job_idx == job)
            .and_then(|r| r.text.clone())
            .unwrap()
    };
    let (mut both, mut yesterday, mut neither) = (0, 0, 0);
    for s in &scores {
        let text = text_of(s.job_idx);
        // PRISM's reading: a YES anywhere (both words, "yesterday") is the same meaning.
        let (want, mark) = if text.contains("[[both]]") {
            both += 1;
            (1.0, Some("reply holds both yes and no"))
        } else if text.contains("[[yesterday]]") {
            yesterday += 1;
            (1.0, Some("reply's only YES is inside a word"))
        } else if text.contains("[[neither]]") {
            neither += 1;
            (0.0, Some("reply holds neither yes nor no"))
        } else if text.contains("[[same]]") {
            (1.0, None)
        } else {
            (0.0, None)
        };
        assert_eq!(s.score, Some(want), "{text}: {}", s.detail);
        match mark {
            Some(m) => assert!(s.detail.contains(m), "{text}: {}", s.detail),
            None => assert!(!s.detail.contains("reply"), "{text}: {}", s.detail),
        }
    }
    // People say what the answer's own words mean: the odd ones are all hallucinated.
    let mut labels = String::new();
    for r in &answers {
        let t = r.text.as_deref().unwrap();
        let h = !t.contains("[[same]]");
        labels.push_str(&format!(
            "{}\n",
            json!({"run": run, "job": r.job_idx, "reviewer": "ann",
                   "label": if h { "hallucinated" } else { "correct" }})
        ));
    }
    let file = dir.path().join("labels.jsonl");
    std::fs::write(&file, labels).unwrap();
    prism()
        .arg("labels")
        .arg("--db")
        .arg(&db)
        .arg("import")
        .arg(&file)
        .assert()
        .success();
    let trial = |reading: &str| -> Value {
        let out = prism()
            .arg("judges")
            .arg("--db")
            .arg(&db)
            .args(["--json", "--min-labels", "2", "--reading", reading])
            .output()
            .unwrap();
        assert!(out.status.success());
        serde_json::from_slice(&out.stdout).unwrap()
    };
    let prism_t = trial("prism");
    let r = &prism_t["replies"][0];
    assert_eq!(r["judge"], "o");
    assert_eq!(r["read"], answers.len());
    assert_eq!(
        (
            r["both"].as_u64(),
            r["yes_inside_word"].as_u64(),
            r["neither"].as_u64()
        ),
        (Some(both), Some(yesterday), Some(neither))
    );
    assert_eq!(r["strict_differs"], both + yesterday + neither);
    // Under PRISM's reading the judge calls the both / yesterday answers correct where
    // people say hallucinated; strictly, those are no verdict, and what is left agrees.
    let vs = &prism_t["groups"][0]["vs_people"][0];
    assert_eq!(vs["n"], answers.len());
    assert_eq!(vs["judge_correct_people_hallucinated"], both + yesterday);
    let strict_t = trial("strict");
    let vs = &strict_t["groups"][0]["vs_people"][0];
    assert_eq!(vs["n"], answers.len() as u64 - both - yesterday - neither);
    assert_eq!(vs["accuracy"]["value"], 1.0);
    let text = String::from_utf8(
        prism()
            .arg("judges")
            .arg("--db")
            .arg(&db)
            .args(["--min-labels", "2"])
            .output()
            .unwrap()
            .stdout,
    )
    .unwrap();
    assert!(text.contains("equivalence replies (read prism"), "{text}");
    assert!(text.contains("YES in word"), "{text}");

    // Scored strictly: the odd replies are asked again, never read, and fall back.
    let (scores, _, _) = score("strict");
    for s in &scores {
        let text = text_of(s.job_idx);
        if text.contains("[[both]]")
            || text.contains("[[yesterday]]")
            || text.contains("[[neither]]")
        {
            assert_eq!(s.score, Some(0.0), "{text}");
            assert!(s.detail.contains("fallback"), "{text}: {}", s.detail);
        }
        assert_eq!(s.judge.as_deref(), Some("o (strict)"));
    }
}

/// A labels file is read a line at a time: a device or FIFO is refused by name, a line or a
/// note over its cap is left out by name, a label on a job its run does not have is left out,
/// and one on a run this store does not hold is kept and said; a large file imports whole.
#[test]
fn labels_import_is_bounded_and_says_what_it_left_out() {
    let env = Env::new();
    let out = env.dir.path().join("outputs");
    write_answers(&out);
    let db = env.db();
    let db = db.to_str().unwrap();
    env.prism()
        .args(["import", "--db", db, "--dataset"])
        .arg(mini())
        .arg("--prism-outputs")
        .arg(&out)
        .assert()
        .success();
    let store = prism::store::Store::open(Path::new(db)).unwrap();
    let run = store.latest_run().unwrap().unwrap().id;
    let import = |file: &Path| {
        let o = env
            .prism()
            .args(["labels", "--db", db, "import"])
            .arg(file)
            .timeout(std::time::Duration::from_secs(60))
            .output()
            .unwrap();
        (
            o.status.code(),
            String::from_utf8_lossy(&o.stderr).to_string(),
        )
    };
    let (code, err) = import(Path::new("/dev/zero"));
    assert_eq!(code, Some(1), "{err}");
    assert!(err.contains("/dev/zero: not a regular file"), "{err}");

    let file = env.dir.path().join("labels.jsonl");
    let label = |job: u32, run: &str, note: &str| {
        json!({"run": run, "job": job, "reviewer": "ann", "label": "correct", "note": note})
            .to_string()
    };
    let lines = [
        label(0, &run, "fine"),
        label(1, &run, &"n".repeat(20_000)),
        format!("{{\"x\": \"{}\"}}", "y".repeat(2 << 20)),
        label(9999, &run, ""),
        label(0, "a-run-from-elsewhere", ""),
    ];
    std::fs::write(&file, lines.join("\n") + "\n").unwrap();
    let (code, err) = import(&file);
    assert_eq!(code, Some(1), "{err}");
    let f = file.display();
    assert!(
        err.contains(&format!(
            "{f}:2: note: 20000 characters (a note is at most 10000)"
        )),
        "{err}"
    );
    assert!(err.contains(&format!("{f}:3: a line of")), "{err}");
    assert!(
        err.contains(&format!("{f}:4: job: run {run} has no answer 9999")),
        "{err}"
    );
    assert!(
        err.contains("1 label(s) name a run this store does not hold"),
        "{err}"
    );
    assert!(
        err.contains("5 label(s) read, 2 new, 0 already here, 3 line(s) left out"),
        "{err}"
    );

    // 20,000 labels (four batches) import whole.
    let many: String = (0..20_000)
        .map(|i| {
            json!({"run": "elsewhere", "job": i, "reviewer": "bob", "label": "correct"}).to_string()
                + "\n"
        })
        .collect();
    std::fs::write(&file, many).unwrap();
    let (code, err) = import(&file);
    assert_eq!(code, Some(0), "{err}");
    assert!(err.contains("20000 label(s) read, 20000 new"), "{err}");
}
