//! No module imports one that imports it back: data flows one way (dataset → engine → store →
//! front-ends; inside the TUI, app → screens → shared pieces).
//!
//! Edges are the `use` and inline paths (`crate::a::b`, `super::c`) of each file under `src/`,
//! resolved to the module file they name. A module declaring or re-exporting its own children
//! is how Rust builds a module tree, not a dependency, so edges into one's own descendants are
//! left out; every other edge (to a parent, sibling or cousin) counts.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

fn files(dir: &Path, out: &mut Vec<PathBuf>) {
    for e in std::fs::read_dir(dir).unwrap().flatten() {
        let p = e.path();
        if p.is_dir() {
            files(&p, out);
        } else if p.extension().is_some_and(|x| x == "rs") {
            out.push(p);
        }
    }
}

/// `src/tui/screens/browse.rs` → `tui::screens::browse`; `src/store/mod.rs` → `store`.
fn module_of(src: &Path, file: &Path) -> String {
    let rel = file.strip_prefix(src).unwrap().with_extension("");
    let mut parts: Vec<String> = rel
        .components()
        .map(|c| c.as_os_str().to_string_lossy().into_owned())
        .collect();
    if matches!(
        parts.last().map(String::as_str),
        Some("mod" | "lib" | "main")
    ) {
        parts.pop();
    }
    parts.join("::")
}

/// Code without comments and string literals (a path in a doc comment is not an import).
fn code_only(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for line in text.lines() {
        let mut in_str = false;
        let mut prev = ' ';
        let mut kept = String::new();
        let chars: Vec<char> = line.chars().collect();
        let mut i = 0;
        while i < chars.len() {
            let c = chars[i];
            if !in_str && c == '/' && chars.get(i + 1) == Some(&'/') {
                break;
            }
            if c == '"' && prev != '\\' {
                in_str = !in_str;
            } else if !in_str {
                kept.push(c);
            }
            prev = c;
            i += 1;
        }
        out.push_str(&kept);
        out.push('\n');
    }
    out
}

fn resolve(from: &str, path: &[&str], modules: &BTreeSet<String>) -> Option<String> {
    let mut abs: Vec<String> = match path.first().copied() {
        Some("crate") => Vec::new(),
        Some("super") => {
            let mut base: Vec<String> = from.split("::").map(str::to_string).collect();
            let mut rest = path;
            while rest.first() == Some(&"super") {
                base.pop();
                rest = &rest[1..];
            }
            let mut v = base;
            v.extend(rest.iter().map(|s| s.to_string()));
            return longest(&v, modules);
        }
        Some("self") => from.split("::").map(str::to_string).collect(),
        _ => return None,
    };
    abs.extend(path[1..].iter().map(|s| s.to_string()));
    longest(&abs, modules)
}

fn longest(path: &[String], modules: &BTreeSet<String>) -> Option<String> {
    (1..=path.len())
        .rev()
        .map(|n| path[..n].join("::"))
        .find(|m| modules.contains(m))
}

#[test]
fn no_module_imports_one_that_imports_it_back() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut all = Vec::new();
    files(&src, &mut all);
    let modules: BTreeSet<String> = all.iter().map(|f| module_of(&src, f)).collect();
    let path_re =
        regex::Regex::new(r"\b((?:crate|super|self)(?:::(?:super|[A-Za-z_][A-Za-z0-9_]*))+)")
            .unwrap();
    let group_re =
        regex::Regex::new(r"\b((?:crate|super|self)(?:::[A-Za-z_][A-Za-z0-9_]*)*)::\{([^}]*)\}")
            .unwrap();
    let mut edges: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for f in &all {
        let from = module_of(&src, f);
        let code = code_only(&std::fs::read_to_string(f).unwrap());
        let mut paths: Vec<String> = path_re
            .captures_iter(&code)
            .map(|c| c[1].to_string())
            .collect();
        // `use super::{a, b::C}` names several modules at once.
        for c in group_re.captures_iter(&code) {
            for part in c[2].split(',') {
                let part = part.trim().split(" as ").next().unwrap_or("").trim();
                if !part.is_empty() && part != "self" {
                    paths.push(format!("{}::{part}", &c[1]));
                }
            }
        }
        for p in paths {
            let parts: Vec<&str> = p.split("::").collect();
            let Some(to) = resolve(&from, &parts, &modules) else {
                continue;
            };
            let descendant = to.starts_with(&format!("{from}::")) || from.is_empty();
            if to != from && !descendant && !to.is_empty() {
                edges.entry(from.clone()).or_default().insert(to);
            }
        }
    }
    // Any cycle: a path from a module back to itself.
    let mut cycles = Vec::new();
    for start in edges.keys() {
        let mut stack = vec![(start.clone(), vec![start.clone()])];
        let mut seen = BTreeSet::new();
        while let Some((m, trail)) = stack.pop() {
            for next in edges.get(&m).into_iter().flatten() {
                if next == start {
                    let mut c = trail.clone();
                    c.push(start.clone());
                    cycles.push(c.join(" → "));
                } else if seen.insert(next.clone()) {
                    let mut t = trail.clone();
                    t.push(next.clone());
                    stack.push((next.clone(), t));
                }
            }
        }
    }
    cycles.sort();
    cycles.dedup();
    assert!(cycles.is_empty(), "import cycles:\n{}", cycles.join("\n"));
    // The check sees edges at all (a broken parser would pass vacuously).
    assert!(
        edges
            .get("tui::app")
            .is_some_and(|e| e.contains("tui::screens"))
    );
    assert!(edges.values().map(BTreeSet::len).sum::<usize>() > 100);
}
