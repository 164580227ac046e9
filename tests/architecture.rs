//! The shape of the code, checked so it does not drift back (issue 42): one way into the store,
//! layers that only look down, and the lint wall's exceptions named. Reads the source as text.

use std::path::{Path, PathBuf};

fn rust_files(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for e in std::fs::read_dir(dir).unwrap().flatten() {
        let p = e.path();
        if p.is_dir() {
            out.extend(rust_files(&p));
        } else if p.extension().is_some_and(|x| x == "rs") {
            out.push(p);
        }
    }
    out
}

fn src() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("src")
}

/// The code of a file without its comments (a comment may name anything).
fn code(p: &Path) -> String {
    std::fs::read_to_string(p)
        .unwrap()
        .lines()
        .map(|l| match l.find("//") {
            Some(i) => &l[..i],
            None => l,
        })
        .collect::<Vec<_>>()
        .join("\n")
}

fn offenders(dir: &str, words: &[&str], except: &[&str]) -> Vec<String> {
    let root = src();
    let mut found = Vec::new();
    for f in rust_files(&root.join(dir)) {
        let rel = f.strip_prefix(&root).unwrap().display().to_string();
        if except.iter().any(|e| rel.starts_with(e)) {
            continue;
        }
        let text = code(&f);
        for w in words {
            if text.contains(w) {
                found.push(format!("{rel}: {w}"));
            }
        }
    }
    found
}

#[test]
fn nothing_outside_the_store_knows_its_backend() {
    let found = offenders(
        "",
        &[
            "rusqlite",
            "postgres::",
            "tokio_postgres",
            "PgStore",
            "AnyStore",
            "ReviewDb",
            "is_url",
        ],
        &["store/"],
    );
    assert!(found.is_empty(), "{found:#?}");
}

#[test]
fn layers_only_look_down() {
    // The store holds records: no lane, scoring, review logic or front-end above it.
    let found = offenders(
        "store",
        &[
            "crate::detect",
            "crate::selfcheck",
            "crate::eval",
            "crate::review",
            "crate::engine",
            "crate::tui",
            "crate::cli",
            "crate::report",
        ],
        &[],
    );
    assert!(found.is_empty(), "{found:#?}");
    // The statistics take records; they do not read the store.
    let found = offenders("eval", &["crate::store::Store", "Store::open"], &[]);
    assert!(found.is_empty(), "{found:#?}");
    // What detection and self-detection share lives below both.
    let found = offenders("detect", &["crate::selfcheck"], &[]);
    assert!(found.is_empty(), "{found:#?}");
    let found = offenders("selfcheck", &["crate::detect"], &[]);
    assert!(found.is_empty(), "{found:#?}");
}

#[test]
fn the_lint_wall_has_one_named_exception() {
    let lib = std::fs::read_to_string(src().join("lib.rs")).unwrap();
    assert!(
        lib.contains("clippy::too_many_lines") && lib.contains("deny(clippy::too_many_arguments)"),
        "{lib}"
    );
    let clippy =
        std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("clippy.toml")).unwrap();
    assert!(
        clippy.contains("too-many-lines-threshold = 120"),
        "{clippy}"
    );
    let found = offenders(
        "",
        &[
            "allow(clippy::too_many_arguments)",
            "allow(clippy::too_many_lines)",
        ],
        &["eval/ifeval.rs"],
    );
    assert!(found.is_empty(), "{found:#?}");
}

/// The parameters of a function whose signature starts at `sig` (`fn name(`): top-level
/// commas between its parentheses, generics and closures' own commas not counted.
fn arity(text: &str, sig: usize) -> usize {
    let open = sig + text[sig..].find('(').unwrap();
    let (mut depth, mut n, mut any, mut prev) = (0i32, 0, false, ' ');
    for c in text[open..].chars() {
        let arrow = c == '>' && prev == '-';
        prev = c;
        if arrow {
            continue;
        }
        match c {
            '(' | '<' | '[' | '{' => depth += 1,
            ')' | '>' | ']' | '}' => {
                depth -= 1;
                if depth == 0 {
                    break;
                }
            }
            ',' if depth == 1 => n += 1,
            c if depth == 1 && !c.is_whitespace() => any = true,
            _ => {}
        }
    }
    // A trailing comma (rustfmt's) does not start a parameter.
    let trailing = text[open..]
        .split_once(')')
        .is_some_and(|(inside, _)| inside.trim_end().ends_with(','));
    match (any, trailing) {
        (false, _) => 0,
        (true, true) => n,
        (true, false) => n + 1,
    }
}

/// Every lane's entry takes one lane context and at most 5 arguments in all (issue 42): the
/// answers run, detection, self-detection, the records lanes, scoring.
#[test]
fn lane_entries_take_at_most_five_arguments() {
    let entries = [
        ("engine/mod.rs", ["async fn run(", "async fn resume("]),
        ("engine/records.rs", ["async fn run<", "async fn run("]),
        (
            "engine/score.rs",
            ["async fn score_all(", "async fn score_all<"],
        ),
        ("detect/run.rs", ["async fn start(", "async fn resume("]),
        ("selfcheck/run.rs", ["async fn start(", "async fn resume("]),
    ];
    let mut checked = 0;
    let mut over = Vec::new();
    for (file, names) in entries {
        let text = code(&src().join(file));
        for name in names {
            for (at, _) in text.match_indices(name) {
                checked += 1;
                let n = arity(&text, at);
                if n > 5 {
                    over.push(format!("{file}: {name}...) takes {n}"));
                }
            }
        }
    }
    assert_eq!(checked, 8, "the entries were found");
    assert!(over.is_empty(), "{over:#?}");
}

fn lines(rel: &str) -> usize {
    std::fs::read_to_string(src().join(rel))
        .unwrap()
        .lines()
        .count()
}

/// The TUI's background work is jobs (issue 60): each feature's job is a type of its own under
/// `tui/jobs/`, the hub runs them and routes their results, and neither the hub nor the app
/// knows a lane. A new lane's work is a new type, not a new variant of a central enum.
#[test]
fn the_tui_hub_runs_jobs_it_does_not_know() {
    for (file, most) in [("tui/jobs.rs", 450), ("tui/app.rs", 450)] {
        let n = lines(file);
        assert!(n < most, "{file} is {n} lines (under {most} wanted)");
    }
    let lanes = [
        "crate::detect",
        "crate::selfcheck",
        "crate::review",
        "crate::runs",
        "crate::eval",
        "JobRequest",
        "enum Msg",
    ];
    for file in ["tui/jobs.rs", "tui/app.rs"] {
        let text = code(&src().join(file));
        let named: Vec<_> = lanes.iter().filter(|w| text.contains(*w)).collect();
        assert!(named.is_empty(), "{file} names {named:?}");
    }
    // Every screen asks for work by a job type, none by a central request enum.
    let found = offenders("tui", &["JobRequest", "Msg::Failed(", "Msg::Detect"], &[]);
    assert!(found.is_empty(), "{found:#?}");
}

/// Sizes (issue 60): no file in `src/` over 1,000 lines but IFEval's table of checks, and at most
/// eight over 800; a file that grows past them is split by what its parts do.
#[test]
fn no_file_grows_past_a_thousand_lines() {
    let root = src();
    let mut over_800 = Vec::new();
    for f in rust_files(&root) {
        let rel = f.strip_prefix(&root).unwrap().display().to_string();
        let n = std::fs::read_to_string(&f).unwrap().lines().count();
        if rel == "eval/ifeval.rs" {
            continue;
        }
        assert!(n <= 1000, "{rel} is {n} lines");
        if n > 800 {
            over_800.push(format!("{rel} ({n})"));
        }
    }
    assert!(
        over_800.len() <= 8,
        "{} files over 800 lines: {over_800:#?}",
        over_800.len()
    );
}

/// One way to open a store (issue 60): through `Db` (`Db::open` for what a command names,
/// `Db::file` for this machine's file); nothing outside the store opens a connection itself:
/// reads, the review panel and the writer are had from a `Db` (`read`, the review methods,
/// `writer`, `run_handle`), never made (tests may make an in-memory store).
#[test]
fn nothing_outside_the_store_opens_a_connection() {
    let root = src();
    let made = [
        "Store::open(",
        "Store::open_in_memory(",
        "fn existing_store",
        "StoreHandle::spawn",
        "Panel::local(",
        "Panel::open(",
        "PgStore::",
    ];
    let mut found = Vec::new();
    for f in rust_files(&root) {
        let rel = f.strip_prefix(&root).unwrap().display().to_string();
        if rel.starts_with("store/") {
            continue;
        }
        let text = code_before_tests(&f);
        found.extend(
            made.iter()
                .filter(|w| text.contains(*w))
                .map(|w| format!("{rel}: {w}")),
        );
    }
    assert!(found.is_empty(), "{found:#?}");
}

/// The code of a file before its test module (`#[cfg(test)]` and what follows), where a test
/// may read a count by position.
fn code_before_tests(p: &Path) -> String {
    let text = code(p);
    match text.find("#[cfg(test)]") {
        Some(i) => text[..i].to_string(),
        None => text,
    }
}

/// Every row is read by column name (issue 60): a record through its table's description
/// (`store::record`), any other read by the name its SELECT gives the column. A read by
/// position breaks silently when a SELECT gains or moves a column.
#[test]
fn the_store_reads_no_column_by_position() {
    let positional =
        regex::Regex::new(r"\b(r|row|ends)\.(get|get_ref|try_get)(::<[^>]*>)?\(\s*\d+\s*\)")
            .unwrap();
    let root = src();
    let mut found = Vec::new();
    for f in rust_files(&root.join("store")) {
        let rel = f.strip_prefix(&root).unwrap().display().to_string();
        if rel.ends_with("/tests.rs") {
            continue;
        }
        let text = code_before_tests(&f);
        for (n, line) in text.lines().enumerate() {
            if positional.is_match(line) {
                found.push(format!("{rel}:{}: {}", n + 1, line.trim()));
            }
        }
    }
    assert!(found.is_empty(), "{found:#?}");
}

/// A store's name is parsed once (issue 60): `store::Location` says whether it is a file or a
/// shared store, and everything else matches on that value instead of asking the string again.
#[test]
fn a_store_name_is_parsed_in_one_place() {
    let found = offenders("", &["is_url("], &["store/location.rs", "store/pg_url.rs"]);
    assert!(found.is_empty(), "{found:#?}");
}

/// The names code outside `src/store/` reaches through `crate::store::` (its `use` lists and
/// qualified paths), outside tests: each path's segments after `store::`.
fn store_names(text: &str) -> Vec<String> {
    let path = regex::Regex::new(r"\bcrate::store::(\{[^}]*\}|[\w:]+)").unwrap();
    let mut names = Vec::new();
    for c in path.captures_iter(text) {
        let list = c[1].trim_start_matches('{').trim_end_matches('}');
        for item in list.split(',') {
            for seg in item.split("::") {
                let seg = seg.trim().trim_start_matches('{').trim();
                if !seg.is_empty() {
                    names.push(seg.to_string());
                }
            }
        }
    }
    names
}

/// One store type outside the store (issue 60): code names `Db` (what a command names and
/// everything is reached through: reads, the review panel, lists of runs, the writer) and the
/// records, never a connection (`Store`), the review panel's store (`Panel`), the lists'
/// backends (`History`) or a backend. The writer a `Db` hands out (`StoreHandle`) is named
/// where the engine holds it: a write-only handle, cheap to clone into every task, that can
/// neither read nor open anything.
#[test]
fn outside_the_store_one_store_type_is_named() {
    let root = src();
    let inner = [
        "Store", "Panel", "History", "history", "PgStore", "AnyStore", "pg", "panel",
    ];
    let mut found = Vec::new();
    for f in rust_files(&root) {
        let rel = f.strip_prefix(&root).unwrap().display().to_string();
        if rel.starts_with("store/") {
            continue;
        }
        for n in store_names(&code_before_tests(&f)) {
            if inner.contains(&n.as_str()) {
                found.push(format!("{rel}: store::{n}"));
            }
        }
    }
    assert!(found.is_empty(), "{found:#?}");
    // The check sees what it is meant to.
    let seen =
        store_names("use crate::store::{Db, Store};\nfn f(s: &crate::store::history::History) {}");
    assert_eq!(seen, ["Db", "Store", "history", "History"]);
}
