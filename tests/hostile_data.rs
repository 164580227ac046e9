//! A dataset someone else wrote, made to hurt: paths that lead out of it, symlink loops, task
//! ids that are paths, option letters past Z.

use std::path::Path;

use assert_cmd::Command;
use prism::dataset;
use serde_json::json;

fn write(p: &Path, text: &str) {
    std::fs::create_dir_all(p.parent().unwrap()).unwrap();
    std::fs::write(p, text).unwrap();
}

fn task(id: &str, file: &str) -> serde_json::Value {
    let mut p = id.splitn(3, '-');
    json!({"index": 1, "task_id": id, "dimension": p.next().unwrap(), "subcategory": p.next().unwrap(),
           "name": p.next().unwrap_or(""), "items": 1, "evaluator": "exact", "prompt": "none", "file": file})
}

fn item(id: &str, task: &str) -> String {
    format!(
        "{}\n",
        json!({"id": id, "task": task, "question": "q?", "answer": "a"})
    )
}

#[test]
fn registry_files_outside_the_dataset_are_refused_and_named() {
    let root = tempfile::tempdir().unwrap();
    let secret = root.path().join("secret/private.jsonl");
    write(&secret, &item("KE-FD-Leak-0001", "KE-FD-Leak"));
    let rel = root.path().join("release");
    let outside_link = rel.join("data/KE/FD/Linked.jsonl");
    write(
        &rel.join("data/tasks.json"),
        &serde_json::to_string_pretty(&vec![
            task("KE-FD-Leak", "../../secret/private.jsonl"),
            task("KE-FD-Abs", secret.to_str().unwrap()),
            task("KE-FD-Passwd", "../../../../../../etc/passwd"),
            task("KE-FD-Linked", "KE/FD/Linked.jsonl"),
            task("KE-FD-Fine", "KE/FD/Fine.jsonl"),
        ])
        .unwrap(),
    );
    write(
        &rel.join("data/KE/FD/Fine.jsonl"),
        &item("KE-FD-Fine-0001", "KE-FD-Fine"),
    );
    // A symlink inside the dataset that leads out of it.
    std::os::unix::fs::symlink(&secret, &outside_link).unwrap();
    let loaded = dataset::load_path(&rel).unwrap();
    let ids: Vec<&str> = loaded.dataset.items.iter().map(|i| &*i.id).collect();
    assert_eq!(
        ids,
        vec!["KE-FD-Fine-0001"],
        "nothing from outside was read"
    );
    let problems: Vec<String> = loaded.problems.iter().map(|p| p.to_string()).collect();
    let text = problems.join("\n");
    let named = |why: &str| {
        problems
            .iter()
            .filter(|p| p.contains("tasks.json:") && p.contains(": file:") && p.contains(why))
            .count()
    };
    assert_eq!(
        named("outside the dataset directory (absolute or with `..`)"),
        3,
        "{text}"
    );
    assert_eq!(
        named("outside the dataset directory (a symlink leads out of it)"),
        1,
        "{text}"
    );
    // The tasks still count in the registry (their dimension is incomplete, not silently whole).
    assert_eq!(loaded.dataset.registry.len(), 5);
}

#[test]
fn symlink_loops_neither_repeat_files_nor_hang() {
    let root = tempfile::tempdir().unwrap();
    let d = root.path();
    write(
        &d.join("a/items.jsonl"),
        &format!(
            "{}",
            json!({"id": "x-1", "task": "KE-FD-X", "dimension": "KE", "category": "FD", "question": "q", "answer": "a"})
        ),
    );
    std::os::unix::fs::symlink(".", d.join("a/loop")).unwrap();
    std::os::unix::fs::symlink("..", d.join("a/up")).unwrap();
    std::os::unix::fs::symlink(d.join("a"), d.join("again")).unwrap();
    let loaded = dataset::load_path(d).unwrap();
    assert_eq!(loaded.dataset.items.len(), 1, "{:?}", loaded.problems);
    Command::cargo_bin("prism")
        .unwrap()
        .arg("validate")
        .arg(d)
        .timeout(std::time::Duration::from_secs(20))
        .assert()
        .success();
}

#[test]
fn task_ids_that_are_paths_never_write_outside_the_outputs_directory() {
    let root = tempfile::tempdir().unwrap();
    let rel = root.path().join("release");
    // A task id that climbs out, written by a hostile registry.
    let evil = "KE-FD-../../../../escaped";
    write(
        &rel.join("data/tasks.json"),
        &serde_json::to_string(&vec![task(evil, "KE/FD/Evil.jsonl")]).unwrap(),
    );
    write(&rel.join("data/KE/FD/Evil.jsonl"), &item("e-1", evil));
    let out = root.path().join("outputs");
    write(
        &out.join("m/responses/x.jsonl"),
        &format!("{}\n", json!({"id": "e-1", "response": "a"})),
    );
    Command::cargo_bin("prism")
        .unwrap()
        .env("PRISM_CONFIG_DIR", root.path())
        .env("PRISM_DATA_DIR", root.path())
        .args(["score", "--model", "m", "--data"])
        .arg(&rel)
        .arg("--prism-outputs")
        .arg(&out)
        .assert()
        .success();
    let scores = out.join("m/scores");
    let written: Vec<_> = std::fs::read_dir(&scores)
        .unwrap()
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect();
    assert_eq!(written.len(), 1, "{written:?}");
    assert!(!written[0].contains('/'));
    assert!(!root.path().join("escaped.jsonl").exists());
    assert!(!out.join("escaped.jsonl").exists());
}

#[test]
fn two_hundred_options_and_an_answer_past_z_load_and_score() {
    let root = tempfile::tempdir().unwrap();
    let options: Vec<String> = (0..200).map(|i| format!("option {i}")).collect();
    let p = root.path().join("items.jsonl");
    write(
        &p,
        &format!(
            "{}\n{}\n",
            json!({"id": "c-1", "task": "RE-LF-Many", "dimension": "RE", "category": "LF", "question": "pick",
                   "options": options, "answer": "AA", "evaluator": "choice"}),
            json!({"id": "c-2", "task": "RE-LF-Many", "dimension": "RE", "category": "LF", "question": "pick",
                   "options": options, "answer": "ZZZ", "evaluator": "choice"}),
        ),
    );
    let loaded = dataset::load_path(&p).unwrap();
    // "AA" is option 27: a real letter, beyond what PRISM's extraction considers (a warning);
    // "ZZZ" is no option letter at all (an error naming the range).
    assert_eq!(loaded.dataset.items.len(), 1);
    let text: Vec<String> = loaded.problems.iter().map(|p| p.to_string()).collect();
    assert!(text.iter().any(|p| p.contains("beyond H")), "{text:?}");
    assert!(
        text.iter()
            .any(|p| p.contains("\"ZZZ\" is not an option letter (A..GR)")),
        "{text:?}"
    );
    let it = &loaded.dataset.items[0];
    let r = prism::eval::score::step(&loaded.dataset, it, Some("AA"));
    match r {
        prism::eval::score::Step::Done(v) => assert_eq!(v.score, 0.0),
        other => panic!("{other:?}"),
    }
    // The request lists every option with its letter.
    let q = prism::prompt::format_question(it);
    assert!(
        q.contains("AA. option 26") && q.contains("GR. option 199"),
        "{q}"
    );
}

#[test]
fn escape_sequences_and_bidi_controls_never_reach_the_terminal_from_the_cli() {
    let root = tempfile::tempdir().unwrap();
    let p = root.path().join("evil.jsonl");
    write(
        &p,
        &format!(
            "{}\n{}\n",
            json!({"id": "x\u{1b}]0;pwned\u{7}-1", "task": "KE-FD-\u{202e}evil", "dimension": "KE",
                   "category": "FD", "question": "q", "answer": "a"}),
            json!({"id": "x-2", "task": "KE-FD-\u{1b}[2Jclear", "dimension": "KE", "category": "XX",
                   "question": "q", "answer": "a"}),
        ),
    );
    for args in [vec!["validate"], vec!["validate", "--json"]] {
        let out = Command::cargo_bin("prism")
            .unwrap()
            .args(&args)
            .arg(&p)
            .output()
            .unwrap();
        let all = [out.stdout, out.stderr].concat();
        let text = String::from_utf8_lossy(&all);
        for bad in ['\u{1b}', '\u{7}', '\u{202e}'] {
            assert!(!text.contains(bad), "{args:?}: {bad:?} in {text}");
        }
        assert!(text.contains("evil") || text.contains("\\u202e"), "{text}");
    }
}

/// Symlinks in a JSONL directory (items, claims) that lead out of it are refused and named by
/// `prism validate`, never skipped in silence; a claims file whose first line is over the 8 MiB
/// line cap is still read as claims (the cap skips the line, the next record says the kind).
#[test]
fn symlinks_that_lead_out_are_named_and_an_overlong_first_line_keeps_the_kind() {
    let root = tempfile::tempdir().unwrap();
    let outside = root.path().join("outside/secret.jsonl");
    write(&outside, &item("s-1", "KE-FD-Secret"));
    for (name, first) in [
        ("items", item("i-1", "KE-FD-Myths")),
        (
            "claims",
            format!(
                "{}\n",
                json!({"claim": "The sky is green.", "label": "false"})
            ),
        ),
    ] {
        let dir = root.path().join(name);
        let mut body = first.clone();
        if name == "items" {
            body = format!(
                "{}",
                json!({"id": "i-1", "task": "KE-FD-Myths", "dimension": "KE", "category": "FD",
                        "question": "q?", "answer": "a"})
            ) + "\n";
        }
        write(&dir.join("data.jsonl"), &body);
        std::os::unix::fs::symlink(&outside, dir.join("leak.jsonl")).unwrap();
        let out = Command::cargo_bin("prism")
            .unwrap()
            .env("PRISM_CONFIG_DIR", root.path())
            .env("PRISM_DATA_DIR", root.path())
            .arg("validate")
            .arg(&dir)
            .assert()
            .code(1)
            .get_output()
            .clone();
        let text = String::from_utf8_lossy(&out.stdout);
        assert!(
            text.contains(
                "leak.jsonl:0: file: a symlink leads out of the dataset directory; not read"
            ),
            "{name}: {text}"
        );
        assert!(!text.contains("s-1"), "{name}: {text}");
    }
    // A claims file: a 9 MiB first line, then claims.
    let claims = root.path().join("big-claims.jsonl");
    let huge = format!(
        "{}\n",
        json!({"claim": "x".repeat(9 << 20), "label": "true"})
    );
    let rest = format!(
        "{}\n{}\n",
        json!({"claim": "Water is wet.", "label": "true"}),
        json!({"claim": "Fire is cold.", "label": "false"})
    );
    write(&claims, &(huge + &rest));
    assert!(prism::dataset::claims::is_claims_path(&claims));
    let out = Command::cargo_bin("prism")
        .unwrap()
        .env("PRISM_CONFIG_DIR", root.path())
        .env("PRISM_DATA_DIR", root.path())
        .args(["validate", "--json"])
        .arg(&claims)
        .assert()
        .code(1)
        .get_output()
        .clone();
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["claims"], 2, "{v}");
}

/// PRISM outputs where `X.jsonl` is a FIFO or a link to /dev/zero: `prism import` and `prism
/// score --prism-outputs` name them and read the rest, instead of waiting forever or trying to
/// hold an endless line in memory.
#[cfg(unix)]
#[test]
fn outputs_that_are_not_regular_files_are_skipped_by_name() {
    let dir = tempfile::tempdir().unwrap();
    let responses = dir.path().join("outputs/m/responses");
    std::fs::create_dir_all(&responses).unwrap();
    write(
        &responses.join("KE-FD-Myths.jsonl"),
        "{\"id\": \"KE-FD-Myths-0001\", \"response\": \"yes\"}\n",
    );
    let fifo = responses.join("X.jsonl");
    let made = std::process::Command::new("mkfifo")
        .arg(&fifo)
        .status()
        .unwrap();
    assert!(made.success());
    std::os::unix::fs::symlink("/dev/zero", responses.join("Zero.jsonl")).unwrap();
    for args in [
        vec!["import", "--prism-outputs"],
        vec!["score", "--prism-outputs"],
    ] {
        let mut c = Command::cargo_bin("prism").unwrap();
        c.args(&args)
            .arg(dir.path().join("outputs"))
            .env("PRISM_CONFIG_DIR", dir.path())
            .env("PRISM_DATA_DIR", dir.path())
            .timeout(std::time::Duration::from_secs(60));
        if args[0] == "score" {
            c.args(["--model", "m"]);
        }
        let out = c.output().unwrap();
        let text = format!(
            "{}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        assert!(out.status.code().is_some(), "{args:?} timed out: {text}");
        assert!(
            text.contains("X.jsonl: -: not a regular file")
                && text.contains("Zero.jsonl: -: not a regular file"),
            "{args:?}: {text}"
        );
    }
}

/// Names from a store reach a terminal stripped of escapes on every path: a CSV report and
/// `prism db copy` run in a pseudo-terminal (`script`) print no ESC or C1 byte of a model name
/// or a run id; piped, the CSV keeps the data's own bytes; JSON escapes C1 controls.
#[cfg(unix)]
#[test]
fn escapes_in_names_never_reach_a_terminal() {
    let dir = tempfile::tempdir().unwrap();
    let m = dir.path().join("models.toml");
    std::fs::write(&m, "").unwrap();
    let db = dir.path().join("a.db");
    let prism = assert_cmd::cargo::cargo_bin("prism");
    // A run of the sample data answered by nobody: imported from one answer file.
    let outputs = dir.path().join("outputs/good/responses");
    std::fs::create_dir_all(&outputs).unwrap();
    write(
        &outputs.join("KE-FD-Myths.jsonl"),
        "{\"id\": \"KE-FD-Myths-0001\", \"response\": \"yes\"}\n",
    );
    let o = Command::new(&prism)
        .args(["import", "--prism-outputs"])
        .arg(dir.path().join("outputs"))
        .arg("--db")
        .arg(&db)
        .env("PRISM_CONFIG_DIR", dir.path())
        .env("PRISM_DATA_DIR", dir.path())
        .output()
        .unwrap();
    assert!(o.status.success(), "{o:?}");
    let evil_model = "m\u{1b}]0;pwned\u{7}\u{1b}[31mred\u{9b}2J";
    let evil_id = "r\u{1b}[2Jx";
    {
        let c = rusqlite::Connection::open(&db).unwrap();
        for t in ["responses", "jobs", "scores"] {
            c.execute(&format!("UPDATE {t} SET model = ?1"), [evil_model])
                .unwrap();
        }
        for (t, col) in [
            ("runs", "id"),
            ("responses", "run_id"),
            ("jobs", "run_id"),
            ("scores", "run_id"),
        ] {
            c.execute(&format!("UPDATE {t} SET {col} = ?1"), [evil_id])
                .unwrap();
        }
        c.execute(
            "INSERT INTO scores (run_id, job_idx, item_id, task_id, model, sample, evaluator, score, detail, created_at)
             SELECT run_id, job_idx, item_id, task_id, model, sample, 'exact', 1.0, '', 0 FROM responses",
            [],
        )
        .unwrap();
    }
    let in_pty = |cmd: String| -> Vec<u8> {
        let o = std::process::Command::new("script")
            .args(["-qec", &cmd, "/dev/null"])
            .env("PRISM_CONFIG_DIR", dir.path())
            .env("PRISM_DATA_DIR", dir.path())
            .output()
            .unwrap();
        [o.stdout, o.stderr].concat()
    };
    let q = |p: &Path| prism::text::shell_quote(&p.display().to_string());
    let csv = in_pty(format!("{} report --format csv --db {}", q(&prism), q(&db)));
    let copy = in_pty(format!(
        "{} db copy {} {}",
        q(&prism),
        q(&db),
        q(&dir.path().join("b.db"))
    ));
    for (what, bytes) in [("csv", &csv), ("db copy", &copy)] {
        let text = String::from_utf8_lossy(bytes);
        assert!(
            !text.contains("pwned") || !text.contains('\u{1b}'),
            "{what}: {text:?}"
        );
        assert!(
            !text.contains("\u{1b}]0;")
                && !text.contains("\u{1b}[31m")
                && !text.contains("\u{1b}[2J")
                && !text.contains('\u{9b}'),
            "{what}: {text:?}"
        );
    }
    assert!(
        String::from_utf8_lossy(&csv).contains("red"),
        "{:?}",
        String::from_utf8_lossy(&csv)
    );
    // Piped, the CSV holds the name as stored; JSON escapes the C1 control.
    let piped = Command::new(&prism)
        .args(["report", "--format", "csv", "--db"])
        .arg(&db)
        .output()
        .unwrap();
    assert!(String::from_utf8_lossy(&piped.stdout).contains(evil_model));
    let json = Command::new(&prism)
        .args(["report", "--format", "json", "--db"])
        .arg(&db)
        .output()
        .unwrap();
    let j = String::from_utf8_lossy(&json.stdout);
    assert!(!j.contains('\u{9b}') && j.contains("\\u009b"), "{j}");
}
