//! Loader tests: the real PRISM slice, the bundled sample data, and every kind of bad input.

use std::collections::BTreeSet;
use std::fs;
use std::path::{Path, PathBuf};

use prism::dataset::{self, DatasetKind, Loaded, Problem};
use prism::taxonomy::{CATEGORIES, Dimension, Evaluator};

fn prism_mini() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/prism-mini")
}

fn errors(l: &Loaded) -> Vec<&Problem> {
    l.problems.iter().filter(|p| p.is_error()).collect()
}

/// Asserts exactly one error matches (file suffix, line, field) and returns it.
fn expect_error<'a>(l: &'a Loaded, file: &str, line: usize, field: &str) -> &'a Problem {
    let hits: Vec<_> = errors(l)
        .into_iter()
        .filter(|p| p.file.ends_with(file) && p.line == line && p.field == field)
        .collect();
    assert_eq!(
        hits.len(),
        1,
        "expected one error at {file}:{line}: {field}; got {:#?}",
        l.problems
    );
    hits[0]
}

#[test]
fn prism_mini_loads_every_item_and_task() {
    let l = dataset::load_path(&prism_mini()).unwrap();
    assert!(l.problems.is_empty(), "{:#?}", l.problems);
    let ds = &l.dataset;
    assert_eq!(ds.kind, DatasetKind::Release);
    assert_eq!(ds.items.len(), 322);
    assert_eq!(ds.tasks.len(), 65);
    // The registry declares the full release, more than the slice holds.
    assert_eq!(ds.declared_items(), Some(9448));
    let c = ds.counts();
    assert_eq!(c.per_dimension["KE"], 75);
    assert_eq!(c.per_dimension["KM"], 110);
    assert_eq!(c.per_dimension["RE"], 47);
    assert_eq!(c.per_dimension["IFE"], 90);
    assert_eq!(c.per_task["RE-PF-Subquestion"], 2);
    // Every one of the 15 categories is present.
    assert_eq!(c.per_category.len(), 15);
    // Prompts travel with the dataset.
    assert!(ds.prompts.tasks.contains_key("KE-FD"));
    assert!(ds.prompts.judges.contains_key("semantic_equivalence"));
    assert_eq!(ds.prompts.judges.len(), 6);
}

#[test]
fn prism_mini_keeps_every_field_of_the_source() {
    let l = dataset::load_path(&prism_mini()).unwrap();
    let ds = &l.dataset;
    let lf = ds.item_by_id("RE-LF-Cognitive_Traps-0001").unwrap();
    assert_eq!(lf.answer.as_deref(), Some("A"));
    assert_eq!(lf.options.as_ref().unwrap().len(), 4);
    let code = ds.item_by_id("RE-MRF-Code_Generation-0001").unwrap();
    assert!(code.test_input.is_some() && code.test_output.is_some());
    let pf = ds.item_by_id("RE-PF-Triplet_Hopping-0001").unwrap();
    assert!(pf.procedure.is_some());
    let lc = ds.item_by_id("IFE-LC-Approximate-0001").unwrap();
    assert_eq!(lc.word_range, Some([10, 140]));
    let lg = ds.item_by_id("IFE-LgC-Japanese-0001").unwrap();
    assert_eq!(lg.language.as_deref(), Some("ja"));
    let two = ds.item_by_id("IFE-CCL-Two_Responses-0002").unwrap();
    assert_eq!(two.kwargs.as_ref().unwrap().len(), 2);
    let ts = ds.item_by_id("IFE-EF-Text_Structure-0001").unwrap();
    assert_eq!(ts.format.as_deref(), Some("Strict Format"));
    assert_eq!(
        ts.instruction_id.as_deref(),
        Some("detectable_format:number_highlighted_sections")
    );
    // Task metadata from the registry.
    let t = ds.task_of(lf);
    assert_eq!(t.evaluator, Evaluator::Choice);
    assert_eq!(t.prompt.as_deref(), Some("RE-LF-Cognitive_Traps"));
    assert_eq!(t.category.code, "LF");
    // Two-option questions are real in this slice and load like any other.
    assert!(
        ds.items
            .iter()
            .any(|i| i.options.as_ref().is_some_and(|o| o.len() == 2))
    );
}

#[test]
fn prism_mini_data_dir_and_tasks_json_resolve_to_the_release() {
    for p in [
        prism_mini().join("data"),
        prism_mini().join("data/tasks.json"),
    ] {
        let l = dataset::load_path(&p).unwrap();
        assert_eq!(l.dataset.items.len(), 322, "{}", p.display());
        assert!(l.dataset.prompts.tasks.contains_key("KE-FD"));
    }
}

#[test]
fn prompt_is_built_exactly_as_the_format_says() {
    let l = dataset::load_path(&prism_mini()).unwrap();
    let ds = &l.dataset;
    let lf = ds.item_by_id("RE-LF-Cognitive_Traps-0001").unwrap();
    let msg = prism::prompt::user_message(ds, lf);
    let prompt = &ds.prompts.tasks["RE-LF-Cognitive_Traps"];
    assert!(msg.starts_with(prompt.trim_end()));
    assert!(msg.contains(&format!("\n\n{}", lf.question)));
    let opts = lf.options.as_ref().unwrap();
    assert!(msg.ends_with(&format!(
        "\n\nOptions:\nA. {}\nB. {}\nC. {}\nD. {}",
        opts[0], opts[1], opts[2], opts[3]
    )));
    let pf = ds.item_by_id("RE-PF-Triplet_Hopping-0001").unwrap();
    assert!(
        prism::prompt::user_message(ds, pf).ends_with("\n\nProcedure:\nHobart country Australia")
    );
    let code = ds.item_by_id("RE-MRF-Code_Generation-0001").unwrap();
    let m = prism::prompt::user_message(ds, code);
    assert!(m.ends_with(&format!(
        "\n\nTest Input:\n{}",
        code.test_input.as_ref().unwrap()
    )));
}

#[test]
fn sample_data_covers_every_category_and_evaluator_without_problems() {
    let l = dataset::load_sample();
    assert!(l.problems.is_empty(), "{:#?}", l.problems);
    let ds = &l.dataset;
    assert!(
        ds.items.len() >= 75,
        "about 80 items, got {}",
        ds.items.len()
    );
    let c = ds.counts();
    for cat in CATEGORIES.iter() {
        let key = format!("{}-{}", cat.dimension, cat.code);
        let n = c.per_category.get(&key).copied().unwrap_or(0);
        assert!(n >= 4, "{key} has {n} items, want at least 4");
    }
    let used: BTreeSet<Evaluator> = ds.tasks.iter().map(|t| t.evaluator).collect();
    for e in Evaluator::ALL {
        assert!(used.contains(&e), "no sample task uses {e}");
    }
    // Every task prompt and the judge prompts the evaluators need are present.
    for t in &ds.tasks {
        let p = t.prompt.as_ref().unwrap();
        assert!(
            ds.prompts.tasks.contains_key(p),
            "{} has no prompt {p}",
            t.id
        );
    }
    for j in ["semantic_equivalence", "math_equivalence"] {
        assert!(ds.prompts.judges.contains_key(j));
    }
    // The bundled copy is the one in the repository.
    let on_disk =
        dataset::load_path(&Path::new(env!("CARGO_MANIFEST_DIR")).join("sample-data")).unwrap();
    assert_eq!(on_disk.dataset.items.len(), ds.items.len());
}

// ----- bad input -----

/// A small valid release to break in different ways.
struct Fixture {
    dir: tempfile::TempDir,
}

impl Fixture {
    fn new() -> Fixture {
        let dir = tempfile::tempdir().unwrap();
        let f = Fixture { dir };
        f.write(
            "data/tasks.json",
            r#"[
 {"index": 1, "task_id": "KE-FD-Alpha", "dimension": "KE", "subcategory": "FD", "name": "Alpha",
  "items": 3, "evaluator": "exact", "prompt": "KE-FD", "file": "KE/FD/Alpha.jsonl"},
 {"index": 2, "task_id": "RE-LF-Beta", "dimension": "RE", "subcategory": "LF", "name": "Beta",
  "items": 2, "evaluator": "choice", "prompt": "RE-LF", "file": "RE/LF/Beta.jsonl"}
]
"#,
        );
        f.write(
            "data/KE/FD/Alpha.jsonl",
            &[
                r#"{"id": "KE-FD-Alpha-0001", "task": "KE-FD-Alpha", "source_id": "1", "question": "Q1", "answer": "a"}"#,
                r#"{"id": "KE-FD-Alpha-0002", "task": "KE-FD-Alpha", "source_id": "2", "question": "Q2", "answer": "b"}"#,
                r#"{"id": "KE-FD-Alpha-0003", "task": "KE-FD-Alpha", "source_id": "3", "question": "Q3", "answer": "c"}"#,
            ]
            .join("\n"),
        );
        f.write(
            "data/RE/LF/Beta.jsonl",
            &[
                r#"{"id": "RE-LF-Beta-0001", "task": "RE-LF-Beta", "question": "Q", "options": ["x", "y"], "answer": "B"}"#,
                r#"{"id": "RE-LF-Beta-0002", "task": "RE-LF-Beta", "question": "Q", "options": ["x", "y", "z"], "answer": "A"}"#,
            ]
            .join("\n"),
        );
        f.write("prompts/tasks/KE-FD.md", "Answer.");
        f.write("prompts/tasks/RE-LF.md", "Pick one.");
        f
    }

    fn path(&self) -> &Path {
        self.dir.path()
    }

    fn write(&self, rel: &str, text: &str) {
        self.write_bytes(rel, text.as_bytes());
    }

    fn write_bytes(&self, rel: &str, bytes: &[u8]) {
        let p = self.dir.path().join(rel);
        fs::create_dir_all(p.parent().unwrap()).unwrap();
        fs::write(p, bytes).unwrap();
    }

    /// Replaces line `n` (1-based) of a file.
    fn set_line(&self, rel: &str, n: usize, text: &str) {
        let p = self.dir.path().join(rel);
        let mut lines: Vec<String> = fs::read_to_string(&p)
            .unwrap()
            .lines()
            .map(str::to_string)
            .collect();
        lines[n - 1] = text.to_string();
        fs::write(p, lines.join("\n")).unwrap();
    }

    fn load(&self) -> Loaded {
        dataset::load_path(self.path()).unwrap()
    }
}

#[test]
fn the_fixture_itself_is_clean() {
    let l = Fixture::new().load();
    assert!(l.problems.is_empty(), "{:#?}", l.problems);
    assert_eq!(l.dataset.items.len(), 5);
}

#[test]
fn bad_json_is_reported_and_the_rest_loads() {
    let f = Fixture::new();
    f.set_line(
        "data/KE/FD/Alpha.jsonl",
        2,
        r#"{"id": "KE-FD-Alpha-0002", "task": "#,
    );
    let l = f.load();
    let p = expect_error(&l, "Alpha.jsonl", 2, "-");
    assert!(p.reason.contains("invalid JSON"), "{}", p.reason);
    assert_eq!(l.dataset.items.len(), 4);
    assert!(l.dataset.item_by_id("KE-FD-Alpha-0003").is_some());
}

#[test]
fn a_line_that_is_not_an_object_is_reported() {
    let f = Fixture::new();
    f.set_line("data/KE/FD/Alpha.jsonl", 1, r#"["a", "list"]"#);
    let l = f.load();
    let p = expect_error(&l, "Alpha.jsonl", 1, "-");
    assert!(p.reason.contains("expected a JSON object"));
}

#[test]
fn invalid_utf8_is_reported_with_its_line() {
    let f = Fixture::new();
    let mut bytes = Vec::new();
    bytes.extend_from_slice(
        br#"{"id": "KE-FD-Alpha-0001", "task": "KE-FD-Alpha", "question": "Q1", "answer": "a"}"#,
    );
    bytes.extend_from_slice(b"\n{\"id\": \"KE-FD-Alpha-0002\", \"question\": \"\xff\xfe\"}\n");
    f.write_bytes("data/KE/FD/Alpha.jsonl", &bytes);
    let l = f.load();
    let p = expect_error(&l, "Alpha.jsonl", 2, "-");
    assert!(p.reason.contains("invalid UTF-8"));
    assert_eq!(l.dataset.items.len(), 3);
}

#[test]
fn record_task_must_match_its_file() {
    let f = Fixture::new();
    f.set_line(
        "data/KE/FD/Alpha.jsonl",
        3,
        r#"{"id": "KE-FD-Alpha-0003", "task": "KE-FD-Other", "question": "Q3", "answer": "c"}"#,
    );
    let l = f.load();
    let p = expect_error(&l, "Alpha.jsonl", 3, "task");
    assert!(p.reason.contains("does not match"));
    assert!(l.dataset.item_by_id("KE-FD-Alpha-0003").is_none());
}

#[test]
fn unknown_dimension_category_and_evaluator_in_the_registry() {
    let f = Fixture::new();
    let tasks = fs::read_to_string(f.path().join("data/tasks.json"))
        .unwrap()
        .replace(r#""dimension": "RE""#, r#""dimension": "XX""#);
    f.write("data/tasks.json", &tasks);
    let l = f.load();
    let p = expect_error(&l, "tasks.json", 4, "dimension");
    assert!(p.reason.contains("unknown dimension"));

    let f = Fixture::new();
    let tasks = fs::read_to_string(f.path().join("data/tasks.json"))
        .unwrap()
        .replace(r#""subcategory": "LF""#, r#""subcategory": "FD""#)
        .replace(r#""evaluator": "exact""#, r#""evaluator": "vibes""#);
    f.write("data/tasks.json", &tasks);
    let l = f.load();
    let p = expect_error(&l, "tasks.json", 2, "evaluator");
    assert!(p.reason.contains("vibes"));
    let p = expect_error(&l, "tasks.json", 4, "subcategory");
    assert!(p.reason.contains("unknown category \"FD\" for RE"));
    // With both tasks invalid nothing loads, and their files are not orphans: the registry names
    // them, so each is reported once, on its registry entry.
    assert_eq!(l.dataset.items.len(), 0);
}

#[test]
fn duplicate_ids_keep_the_first() {
    let f = Fixture::new();
    f.set_line(
        "data/KE/FD/Alpha.jsonl",
        3,
        r#"{"id": "KE-FD-Alpha-0001", "task": "KE-FD-Alpha", "question": "again", "answer": "c"}"#,
    );
    let l = f.load();
    let p = expect_error(&l, "Alpha.jsonl", 3, "id");
    assert!(
        p.reason.contains("duplicate id") && p.reason.contains(":1"),
        "{}",
        p.reason
    );
    assert_eq!(
        &*l.dataset.item_by_id("KE-FD-Alpha-0001").unwrap().question,
        "Q1"
    );
}

#[test]
fn missing_fields_the_evaluator_needs() {
    let f = Fixture::new();
    f.set_line(
        "data/RE/LF/Beta.jsonl",
        1,
        r#"{"id": "RE-LF-Beta-0001", "task": "RE-LF-Beta", "question": "Q", "answer": "B"}"#,
    );
    f.set_line(
        "data/RE/LF/Beta.jsonl",
        2,
        r#"{"id": "RE-LF-Beta-0002", "task": "RE-LF-Beta", "question": "Q", "options": ["x"], "answer": "Q"}"#,
    );
    f.set_line(
        "data/KE/FD/Alpha.jsonl",
        1,
        r#"{"task": "KE-FD-Alpha", "question": "Q1"}"#,
    );
    let l = f.load();
    assert!(
        expect_error(&l, "Beta.jsonl", 1, "options")
            .reason
            .contains("choice")
    );
    assert!(
        expect_error(&l, "Beta.jsonl", 2, "answer")
            .reason
            .contains("not an option letter")
    );
    expect_error(&l, "Alpha.jsonl", 1, "id");
    expect_error(&l, "Alpha.jsonl", 1, "answer");
}

#[test]
fn wrong_field_types_name_the_field() {
    let f = Fixture::new();
    f.set_line(
        "data/KE/FD/Alpha.jsonl",
        2,
        r#"{"id": "KE-FD-Alpha-0002", "task": "KE-FD-Alpha", "question": ["not", "text"], "answer": "b"}"#,
    );
    let l = f.load();
    assert!(
        expect_error(&l, "Alpha.jsonl", 2, "question")
            .reason
            .contains("expected a string, found a list")
    );
}

#[test]
fn empty_file_missing_file_and_orphan_file() {
    let f = Fixture::new();
    f.write("data/RE/LF/Beta.jsonl", "\n\n");
    f.write("data/KE/FD/Stray.jsonl", "{}\n");
    let l = f.load();
    assert!(
        expect_error(&l, "Beta.jsonl", 0, "-")
            .reason
            .contains("empty file")
    );
    assert!(
        expect_error(&l, "Stray.jsonl", 0, "task")
            .reason
            .contains("no tasks.json entry")
    );
    assert_eq!(l.dataset.items.len(), 3);

    let f = Fixture::new();
    fs::remove_file(f.path().join("data/RE/LF/Beta.jsonl")).unwrap();
    let l = f.load();
    assert!(
        expect_error(&l, "tasks.json", 4, "file")
            .reason
            .contains("does not exist")
    );
    assert_eq!(l.dataset.items.len(), 3);
}

#[test]
fn broken_registry_is_reported_not_fatal() {
    let f = Fixture::new();
    f.write("data/tasks.json", "[\n {\"task_id\": \"KE-FD-Alpha\",\n");
    let l = f.load();
    assert!(
        errors(&l)
            .iter()
            .any(|p| p.file.ends_with("tasks.json") && p.reason.contains("invalid JSON"))
    );
    f.write(
        "data/tasks.json",
        "[\n {\"task_id\": \"KE-FD-Alpha\"}, 7\n]",
    );
    let l = f.load();
    // Missing keys of the first entry, and the number that is not an entry, each by line.
    expect_error(&l, "tasks.json", 2, "dimension");
    expect_error(&l, "tasks.json", 2, "-");
}

#[test]
fn missing_prompt_file_is_reported() {
    let f = Fixture::new();
    fs::remove_file(f.path().join("prompts/tasks/RE-LF.md")).unwrap();
    let l = f.load();
    assert!(
        expect_error(&l, "tasks.json", 4, "prompt")
            .reason
            .contains("RE-LF.md")
    );
}

#[test]
fn a_50_mb_line_is_skipped_without_buffering_it() {
    let f = Fixture::new();
    let mut big = Vec::with_capacity(51 << 20);
    big.extend_from_slice(br#"{"id": "KE-FD-Alpha-0009", "task": "KE-FD-Alpha", "question": ""#);
    big.resize(50 << 20, b'x');
    big.extend_from_slice(b"\"}\n");
    big.extend_from_slice(
        br#"{"id": "KE-FD-Alpha-0001", "task": "KE-FD-Alpha", "question": "Q1", "answer": "a"}"#,
    );
    f.write_bytes("data/KE/FD/Alpha.jsonl", &big);
    drop(big);
    let l = f.load();
    let p = expect_error(&l, "Alpha.jsonl", 1, "-");
    assert!(p.reason.contains("over the"), "{}", p.reason);
    assert!(l.dataset.item_by_id("KE-FD-Alpha-0001").is_some());
}

#[test]
fn garbage_never_panics() {
    // A spread of hostile inputs; the only requirement is a clean result.
    let inputs: Vec<&[u8]> = vec![
        b"",
        b"\0\0\0",
        b"{",
        b"}}}}",
        b"null",
        b"{\"id\": 1e999}",
        b"{\"word_range\": [1]}",
        b"{\"word_range\": [\"a\", 2]}",
        b"{\"kwargs\": 5}",
        b"{\"options\": [{}]}",
        b"{\"procedure\": \"x\"}",
        b"\xef\xbb\xbf{\"id\":\"x\"}",
        b"[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[",
    ];
    for input in inputs {
        let f = Fixture::new();
        f.write_bytes("data/KE/FD/Alpha.jsonl", input);
        f.write_bytes("data/tasks.json", input);
        let _ = f.load();
        let _ = dataset::load_path(&f.path().join("data/KE/FD/Alpha.jsonl"));
    }
}

// ----- plain JSONL -----

#[test]
fn plain_jsonl_file_and_directory() {
    let dir = tempfile::tempdir().unwrap();
    let a = dir.path().join("mine.jsonl");
    fs::write(
        &a,
        [
            r#"{"id": "m1", "task": "KM-FK-Mine", "dimension": "KM", "category": "FK", "question": "Who?", "answer": "[NO_INFO]"}"#,
            r#"{"id": "m2", "task": "KM-FK-Mine", "dimension": "KM", "category": "FK", "question": "What?", "answer": "[NO_INFO]"}"#,
            r#"{"id": "m3", "task": "IFE-LC-Short", "dimension": "IFE", "category": "lc", "question": "Write.", "word_range": [1, 5], "notes": "kept"}"#,
            r#"{"id": "m4", "task": "IFE-LC-Short", "dimension": "IFE", "category": "XX", "question": "Write."}"#,
            r#"{"id": "m5", "task": "RE-LF-Mine", "category": "LF", "question": "?"}"#,
            r#"{"id": "m6", "task": "KM-FK-Mine", "dimension": "KM", "category": "FK", "question": "Q", "evaluator": "nonsense"}"#,
        ]
        .join("\n"),
    )
    .unwrap();
    let l = dataset::load_path(&a).unwrap();
    let ds = &l.dataset;
    assert_eq!(ds.kind, DatasetKind::Jsonl);
    assert_eq!(ds.items.len(), 3);
    assert_eq!(ds.tasks.len(), 2);
    let fk = ds.task_of(ds.item_by_id("m1").unwrap());
    assert_eq!(fk.evaluator, Evaluator::Abstain, "inferred from [NO_INFO]");
    assert_eq!(fk.dimension, Dimension::KM);
    assert_eq!(fk.name, "Mine");
    let lc = ds.item_by_id("m3").unwrap();
    assert_eq!(ds.task_of(lc).evaluator, Evaluator::WordRange);
    assert_eq!(&*lc.extra[0].0, "notes");
    expect_error(&l, "mine.jsonl", 4, "category");
    expect_error(&l, "mine.jsonl", 5, "dimension");
    expect_error(&l, "mine.jsonl", 6, "evaluator");

    // A directory of them, the same.
    fs::write(
        dir.path().join("more.jsonl"),
        r#"{"id": "m7", "task": "KM-FK-Mine", "dimension": "KM", "category": "FK", "question": "Q", "answer": "[NO_INFO]"}"#,
    )
    .unwrap();
    let l = dataset::load_path(dir.path()).unwrap();
    assert_eq!(l.dataset.items.len(), 4);
    assert_eq!(l.dataset.counts().per_task["KM-FK-Mine"], 3);
}

#[test]
fn missing_path_is_a_clear_error() {
    let e = dataset::load_path(Path::new("/no/such/prism/dir")).unwrap_err();
    assert!(e.to_string().contains("/no/such/prism/dir"));
}

#[test]
fn a_byte_order_mark_is_not_an_error() {
    let f = Fixture::new();
    let text = fs::read(f.path().join("data/KE/FD/Alpha.jsonl")).unwrap();
    let mut with_bom = b"\xef\xbb\xbf".to_vec();
    with_bom.extend_from_slice(&text);
    f.write_bytes("data/KE/FD/Alpha.jsonl", &with_bom);
    let reg = fs::read(f.path().join("data/tasks.json")).unwrap();
    let mut reg_bom = b"\xef\xbb\xbf".to_vec();
    reg_bom.extend_from_slice(&reg);
    f.write_bytes("data/tasks.json", &reg_bom);
    let l = f.load();
    assert!(l.problems.is_empty(), "{:#?}", l.problems);
    assert_eq!(l.dataset.items.len(), 5);
}
