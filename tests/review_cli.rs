//! `prism review export | import | stats` (issue 14): two reviewers on different machines merge
//! their decisions through JSONL without duplicates; bad lines are named and the rest loads;
//! stats count rounds and agreement.

use std::path::Path;

use assert_cmd::Command;
use prism::review::{Decision, ReviewRecord};
use prism::store::Store;

fn prism(dir: &Path) -> Command {
    let mut c = Command::cargo_bin("prism").unwrap();
    c.env("PRISM_CONFIG_DIR", dir).env("PRISM_DATA_DIR", dir);
    c
}

fn rec(uid: &str, item: &str, reviewer: &str, d: Decision, clarity: u8, t: i64) -> ReviewRecord {
    ReviewRecord {
        uid: uid.into(),
        item_id: item.into(),
        task_id: "KE-FD-Myths".into(),
        reviewer: reviewer.into(),
        round: 1,
        clarity: Some(clarity),
        relevance: Some(7),
        coherence: None,
        decision: d,
        rationale: format!("{reviewer} on {item}, \"quoted\", comma"),
        edited_question: None,
        edited_answer: None,
        created_at: t,
    }
}

#[test]
fn two_machines_merge_without_duplicates_and_bad_lines_are_named() {
    let dir = tempfile::tempdir().unwrap();
    let (a_db, b_db) = (dir.path().join("a.db"), dir.path().join("b.db"));
    use Decision::*;
    Store::open(&a_db)
        .unwrap()
        .save_decisions(&[
            rec("a1", "i1", "ann", Retain, 8, 1),
            rec("a2", "i2", "ann", Remove, 3, 2),
        ])
        .unwrap();
    Store::open(&b_db)
        .unwrap()
        .save_decisions(&[
            rec("b1", "i1", "bob", Retain, 9, 3),
            rec("b2", "i2", "bob", Retain, 6, 4),
        ])
        .unwrap();
    let export = dir.path().join("bob.jsonl");
    prism(dir.path())
        .args(["review", "export", "--db"])
        .arg(&b_db)
        .arg("-o")
        .arg(&export)
        .assert()
        .success();
    // A hand-edited line and a score out of range among the good ones.
    let mut text = std::fs::read_to_string(&export).unwrap();
    text.push_str("{\"uid\": \"x\", \"item_id\": \"i3\"}\n");
    let mut bad = rec("b9", "i3", "bob", Retain, 5, 5);
    bad.clarity = Some(12);
    text.push_str(&serde_json::to_string(&bad).unwrap());
    text.push('\n');
    std::fs::write(&export, text).unwrap();

    let out = prism(dir.path())
        .args(["review", "import"])
        .arg(&export)
        .arg("--db")
        .arg(&a_db)
        .assert()
        .code(1)
        .get_output()
        .clone();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("bob.jsonl:3: task_id: missing"), "{err}");
    assert!(
        err.contains("bob.jsonl:4: clarity: 12 is not between 1 and 10"),
        "{err}"
    );
    assert!(
        err.contains("2 new decisions, 0 already there, 2 bad lines"),
        "{err}"
    );
    // Again: nothing new.
    let out = prism(dir.path())
        .args(["review", "import"])
        .arg(&export)
        .arg("--db")
        .arg(&a_db)
        .assert()
        .get_output()
        .clone();
    assert!(String::from_utf8_lossy(&out.stderr).contains("0 new decisions, 2 already there"));
    let merged = Store::open(&a_db).unwrap().decisions().unwrap();
    assert_eq!(merged.len(), 4);
    assert_eq!(merged[2], rec("b1", "i1", "bob", Retain, 9, 3));

    // A quality agent's Clarity beside the reviewers': i1 humans 8 and 9 (8.5), agent 9;
    // i2 humans 3 and 6 (4.5), agent 6: deviations 0.5 and 1.5, MAD 1.0, SD 0.5.
    {
        let mut s = Store::open(&a_db).unwrap();
        for (item, c) in [("i1", 9), ("i2", 6)] {
            s.save_quality(&prism::review::quality::QualityRecord {
                item_id: item.into(),
                task_id: "KE-FD-Myths".into(),
                model: "judge".into(),
                scores: Some([8, 8, c]),
                reply: String::new(),
                error: None,
                attempts: 1,
                created_at: 0,
            })
            .unwrap();
        }
    }
    // Stats: i1 converged (retain, retain), i2 disputed; observed agreement 1 of 2 pairs.
    let out = prism(dir.path())
        .args(["review", "stats", "--json", "--db"])
        .arg(&a_db)
        .assert()
        .success()
        .get_output()
        .clone();
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["rounds"]["1"]["retained"], 1);
    assert_eq!(v["rounds"]["1"]["disputed"], 1);
    assert_eq!(v["agreement"]["units"], 2);
    assert_eq!(v["agreement"]["observed"], 0.5);
    // Two reviewers: Cohen's kappa. a = (retain, remove), b = (retain, retain): po 0.5,
    // pe = 0.5 * 1 + 0.5 * 0 = 0.5, kappa 0.
    assert_eq!(v["agreement"]["cohen_kappa"], 0.0);
    assert_eq!(v["reviewers"]["ann"]["decisions"], 2);
    assert_eq!(v["judge_vs_human"]["judge"]["pairs"], 2);
    assert_eq!(v["judge_vs_human"]["judge"]["mad"], 1.0);
    assert_eq!(v["judge_vs_human"]["judge"]["sd"], 0.5);

    // CSV quotes what needs quoting.
    let out = prism(dir.path())
        .args(["review", "export", "--format", "csv", "--db"])
        .arg(&a_db)
        .assert()
        .success()
        .get_output()
        .clone();
    let csv = String::from_utf8_lossy(&out.stdout);
    assert!(
        csv.starts_with("uid,item_id,task_id,reviewer,round"),
        "{csv}"
    );
    assert!(
        csv.contains("\"ann on i1, \"\"quoted\"\", comma\""),
        "{csv}"
    );
}

#[test]
fn the_retained_bank_is_a_release_that_loads_and_validates() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("r.db");
    let mini = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/prism-mini");
    let ds = prism::dataset::load_path(&mini).unwrap().dataset;
    // Two items of the first task, one of the last, one removed, one still disputed.
    let first = &ds.items[0];
    let second = &ds.items[1];
    let last = ds.items.last().unwrap();
    let removed = &ds.items[2];
    let disputed = &ds.items[3];
    let task_of = |it: &prism::dataset::Item| ds.task_of(it).id.clone();
    let mut recs = Vec::new();
    let mut t = 0;
    let mut add =
        |it: &prism::dataset::Item, who: &str, round: u32, d: Decision, q: Option<&str>| {
            t += 1;
            let mut r = rec(&format!("u{t}"), &it.id, who, d, 8, t);
            r.task_id = task_of(it);
            r.round = round;
            r.edited_question = q.map(str::to_string);
            recs.push(r);
        };
    use Decision::*;
    for it in [first, last] {
        add(it, "ann", 1, Retain, None);
        add(it, "bob", 1, Retain, None);
    }
    add(second, "ann", 1, Revise, Some("A clearer question?"));
    add(second, "bob", 1, Revise, None);
    add(second, "ann", 2, Retain, None);
    add(second, "bob", 2, Retain, None);
    add(removed, "ann", 1, Remove, None);
    add(removed, "bob", 1, Remove, None);
    add(disputed, "ann", 1, Retain, None);
    add(disputed, "bob", 1, Remove, None);
    Store::open(&db).unwrap().save_decisions(&recs).unwrap();

    let out = dir.path().join("bank");
    let o = prism(dir.path())
        .args(["review", "bank"])
        .arg(&out)
        .arg("--dataset")
        .arg(&mini)
        .arg("--db")
        .arg(&db)
        .assert()
        .success()
        .get_output()
        .clone();
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains("3 retained items in 2 tasks (1 with a revised question)"),
        "{err}"
    );
    prism(dir.path())
        .arg("validate")
        .arg(&out)
        .assert()
        .success();
    let bank = prism::dataset::load_path(&out).unwrap();
    assert!(bank.problems.is_empty(), "{:?}", bank.problems);
    let ids: Vec<&str> = bank.dataset.items.iter().map(|i| &*i.id).collect();
    assert_eq!(ids, vec![&*first.id, &*second.id, &*last.id]);
    let b2 = bank.dataset.item_by_id(&second.id).unwrap();
    assert_eq!(&*b2.question, "A clearer question?");
    // Everything else about an item is as it was; the prompts came along.
    let b1 = bank.dataset.item_by_id(&first.id).unwrap();
    assert_eq!(b1.answer, first.answer);
    assert_eq!(
        prism::prompt::user_message(&bank.dataset, b1),
        prism::prompt::user_message(&ds, first)
    );
    // A second bank into the same directory is refused, not mixed.
    prism(dir.path())
        .args(["review", "bank"])
        .arg(&out)
        .arg("--dataset")
        .arg(&mini)
        .arg("--db")
        .arg(&db)
        .assert()
        .failure();
}

/// A JSONL dataset (no tasks.json) whose task names climb out (`KE-FD-../../../../victim`) or
/// clash once made safe (`x/y`, `x_y`): the bank writes every retained item inside OUT, each
/// task in its own file, touches nothing beside OUT, and validates.
#[test]
fn a_bank_of_hostile_task_names_stays_inside_out_and_keeps_every_item() {
    let dir = tempfile::tempdir().unwrap();
    let deep = dir.path().join("a/b/c/d");
    std::fs::create_dir_all(&deep).unwrap();
    let victim = deep.join("victim.jsonl");
    std::fs::write(&victim, "precious\n").unwrap();
    let tasks = [
        "KE-FD-../../../../victim",
        "KE-FD-../../../../../../../../../../tmp/prism-bank-escape",
        "KE-FD-x/y",
        "KE-FD-x_y",
        "KE-FD-X_Y",
    ];
    let mut lines = String::new();
    for (n, t) in tasks.iter().enumerate() {
        lines.push_str(
            &serde_json::json!({
                "id": format!("h-{n}"), "task": t, "dimension": "KE", "category": "FD",
                "question": format!("q{n}?"), "answer": "a"
            })
            .to_string(),
        );
        lines.push('\n');
    }
    let ds_path = deep.join("items.jsonl");
    std::fs::write(&ds_path, lines).unwrap();
    let ds = prism::dataset::load_path(&ds_path).unwrap();
    assert_eq!(ds.dataset.items.len(), tasks.len(), "{:?}", ds.problems);
    // `prism validate` names the task names that are not file names (warnings: they load).
    let warned: Vec<String> = ds.problems.iter().map(|p| p.to_string()).collect();
    assert_eq!(warned.len(), 3, "{warned:?}");
    assert!(
        warned[0].contains(r#"the name "../../../../victim" of task "KE-FD-../../../../victim" holds path or odd characters; files written for it are named ".._.._.._.._victim""#),
        "{warned:?}"
    );
    assert!(ds.problems.iter().all(|p| !p.is_error()));
    let db = dir.path().join("r.db");
    let mut recs = Vec::new();
    for (n, t) in tasks.iter().enumerate() {
        for who in ["ann", "bob"] {
            let mut r = rec(
                &format!("{who}{n}"),
                &format!("h-{n}"),
                who,
                Decision::Retain,
                8,
                n as i64,
            );
            r.task_id = t.to_string();
            recs.push(r);
        }
    }
    Store::open(&db).unwrap().save_decisions(&recs).unwrap();
    let out = deep.join("bank");
    prism(dir.path())
        .args(["review", "bank"])
        .arg(&out)
        .arg("--dataset")
        .arg(&ds_path)
        .arg("--db")
        .arg(&db)
        .assert()
        .success();
    assert_eq!(std::fs::read_to_string(&victim).unwrap(), "precious\n");
    assert!(!Path::new("/tmp/prism-bank-escape.jsonl").exists());
    // Nothing new beside OUT: the dataset, the bank, and no other file anywhere up the tree.
    let beside: Vec<String> = std::fs::read_dir(&deep)
        .unwrap()
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect();
    assert_eq!(beside.len(), 3, "{beside:?}"); // items.jsonl, victim.jsonl, bank
    let files: Vec<_> = walk(&out.join("data"));
    assert_eq!(files.len(), tasks.len() + 1, "{files:?}"); // one per task, and tasks.json
    for f in &files {
        assert!(f.starts_with(&out), "{}", f.display());
    }
    let bank = prism::dataset::load_path(&out).unwrap();
    assert!(bank.problems.is_empty(), "{:?}", bank.problems);
    let mut ids: Vec<&str> = bank.dataset.items.iter().map(|i| &*i.id).collect();
    ids.sort();
    assert_eq!(ids, vec!["h-0", "h-1", "h-2", "h-3", "h-4"]);
    prism(dir.path())
        .arg("validate")
        .arg(&out)
        .assert()
        .success();
}

fn walk(dir: &Path) -> Vec<std::path::PathBuf> {
    let mut out = Vec::new();
    for e in std::fs::read_dir(dir).unwrap().flatten() {
        let p = e.path();
        if p.is_dir() {
            out.extend(walk(&p));
        } else {
            out.push(p);
        }
    }
    out
}

/// `prism review import` on hostile files: a draft survives an import that brings nothing new
/// (and old decisions never replace a newer draft), non-regular files are refused at once, an
/// endless line is capped, and values PostgreSQL would change or refuse are named by line and
/// field, as are JSON errors.
#[test]
fn review_import_keeps_drafts_caps_lines_and_names_every_bad_field() {
    use prism::store::Draft;
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("r.db");
    let old = rec("a1", "i1", "ann", Decision::Retain, 8, 1_000);
    Store::open(&db)
        .unwrap()
        .save_decisions(std::slice::from_ref(&old))
        .unwrap();
    let draft = Draft {
        item_id: "i1".into(),
        reviewer: "ann".into(),
        round: 1,
        clarity: Some(3),
        relevance: None,
        coherence: None,
        decision: None,
        rationale: "typed since".into(),
        edited_question: None,
        updated_at: 2_000,
    };
    Store::open(&db).unwrap().save_draft(&draft).unwrap();
    let file = dir.path().join("again.jsonl");
    let older = rec("a0", "i1", "ann", Decision::Remove, 2, 500);
    std::fs::write(
        &file,
        format!(
            "{}\n{}\n",
            serde_json::to_string(&old).unwrap(),
            serde_json::to_string(&older).unwrap()
        ),
    )
    .unwrap();
    let out = prism(dir.path())
        .args(["review", "import"])
        .arg(&file)
        .arg("--db")
        .arg(&db)
        .assert()
        .success()
        .get_output()
        .clone();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("1 new decisions, 1 already there"), "{err}");
    let kept = Store::open(&db).unwrap().draft("i1", "ann").unwrap();
    assert_eq!(kept.map(|d| d.rationale), Some("typed since".into()));

    // Not regular files: refused without reading (a FIFO would block, /dev/zero never ends).
    let fifo = dir.path().join("fifo");
    assert!(
        std::process::Command::new("mkfifo")
            .arg(&fifo)
            .status()
            .unwrap()
            .success()
    );
    for p in [fifo.as_path(), Path::new("/dev/zero")] {
        let out = prism(dir.path())
            .args(["review", "import"])
            .arg(p)
            .arg("--db")
            .arg(&db)
            .timeout(std::time::Duration::from_secs(20))
            .assert()
            .failure()
            .get_output()
            .clone();
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains("not a regular file"), "{err}");
    }

    // A 9 MiB line, then bad values on lines 2-6, then a good line.
    let mut good = rec("g1", "i9", "bob", Decision::Retain, 7, 3_000);
    good.task_id = "KE-FD-Myths".into();
    let mut huge = rec("h1", "i8", "bob", Decision::Retain, 7, 3_000);
    huge.rationale = "x".repeat(9 << 20);
    let mut big_round = rec("r1", "i7", "bob", Decision::Retain, 7, 3_000);
    big_round.round = 3_000_000_000;
    let nul = rec("n1", "i6\u{0}", "bob", Decision::Retain, 7, 3_000);
    let text = [
        serde_json::to_string(&huge).unwrap(),
        serde_json::to_string(&big_round).unwrap(),
        serde_json::to_string(&nul).unwrap(),
        "{uid: 1}".to_string(),
        r#"{"uid":"t","item_id":"i5","task_id":"t","reviewer":"bob","round":"2","clarity":null,"relevance":null,"coherence":null,"decision":"retain","created_at":1}"#.to_string(),
        r#"{"uid":"t","item_id":"i5","task_id":"t","reviewer":"bob","round":1,"clarity":null,"relevance":null,"coherence":null,"decision":"keep","created_at":1}"#.to_string(),
        serde_json::to_string(&good).unwrap(),
    ]
    .join("\n");
    let file = dir.path().join("bad.jsonl");
    std::fs::write(&file, text).unwrap();
    let out = prism(dir.path())
        .args(["review", "import"])
        .arg(&file)
        .arg("--db")
        .arg(&db)
        .assert()
        .code(1)
        .get_output()
        .clone();
    let err = String::from_utf8_lossy(&out.stderr).to_string();
    let f = file.display().to_string();
    for want in [
        format!("{f}:1: -: line is "),
        format!("{f}:2: round: 3000000000 is over the largest round, 2147483647"),
        format!("{f}:3: item_id: holds a NUL character (\\u0000)"),
        format!("{f}:4: -: invalid JSON at column 2: key must be a string"),
        format!("{f}:5: round: invalid type: string \"2\", expected u32"),
        format!("{f}:6: decision: unknown variant `keep`"),
        "1 new decisions, 0 already there, 6 bad lines".to_string(),
    ] {
        assert!(err.contains(&want), "{want}\n---\n{err}");
    }
}

/// `-o` never destroys the store (`review export` and `report`), `-o -` is stdout, and a CSV
/// export holds no formula a spreadsheet would run and no escape sequence a terminal would obey.
#[test]
fn exports_never_overwrite_the_store_and_csv_cells_are_inert() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("s.db");
    let mut hostile = rec("u1", "i1", "ann", Decision::Retain, 8, 1);
    hostile.rationale = "=cmd|' /C calc'!A0".into();
    let mut at = rec("u2", "i2", "@SUM(1+1)", Decision::Remove, 3, 2);
    at.rationale = "+1+1 \u{1b}]0;pwned\u{7} \u{1b}[31mred".into();
    Store::open(&db)
        .unwrap()
        .save_decisions(&[hostile, at])
        .unwrap();
    let before = std::fs::read(&db).unwrap();
    for args in [
        vec!["review", "export", "-o"],
        vec!["review", "export", "--format", "csv", "-o"],
        vec!["report", "--format", "csv", "-o"],
    ] {
        let out = prism(dir.path())
            .args(&args)
            .arg(&db)
            .arg("--db")
            .arg(&db)
            .assert()
            .failure()
            .get_output()
            .clone();
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains("refusing to write over"), "{args:?}: {err}");
    }
    assert_eq!(std::fs::read(&db).unwrap(), before);
    assert_eq!(Store::open(&db).unwrap().decisions().unwrap().len(), 2);

    let out = prism(dir.path())
        .args(["review", "export", "--format", "csv", "-o", "-", "--db"])
        .arg(&db)
        .assert()
        .success()
        .get_output()
        .clone();
    assert!(!dir.path().join("-").exists());
    let csv = String::from_utf8(out.stdout).unwrap();
    assert!(!csv.contains('\u{1b}') && !csv.contains('\u{7}'), "{csv:?}");
    let mut r = csv::Reader::from_reader(csv.as_bytes());
    let rows: Vec<csv::StringRecord> = r.records().map(|r| r.unwrap()).collect();
    let cells: Vec<&str> = rows.iter().flat_map(|r| r.iter()).collect();
    for c in cells {
        assert!(
            !c.starts_with(['=', '+', '@']) || c.parse::<f64>().is_ok(),
            "a live formula cell: {c:?}"
        );
    }
    assert_eq!(&rows[0][9], "'=cmd|' /C calc'!A0");
    assert_eq!(&rows[1][3], "'@SUM(1+1)");
    // JSONL on stdout escapes control characters.
    let out = prism(dir.path())
        .args(["review", "export", "--db"])
        .arg(&db)
        .assert()
        .success()
        .get_output()
        .clone();
    let jsonl = String::from_utf8(out.stdout).unwrap();
    assert!(
        !jsonl.contains('\u{1b}') && jsonl.contains("\\u001b"),
        "{jsonl:?}"
    );
}
