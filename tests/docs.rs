//! What the documentation says about the code, held to the code: every keybinding action and
//! screen the config accepts is listed, and nothing the config rejects; the book's CLI reference
//! is the one clap makes today; every chapter is in the book's table of contents and every link
//! between chapters lands on a file and a heading; the README stays a front page.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

fn read(rel: &str) -> String {
    std::fs::read_to_string(root().join(rel)).unwrap_or_else(|e| panic!("{rel}: {e}"))
}

/// The chapter that documents the keybindings.
fn readme() -> String {
    read("docs/src/configuration.md")
}

/// The backquoted words of the README's keybindings paragraph, between `start` and `end`.
fn words_between(start: &str, end: &str) -> BTreeSet<String> {
    let r = readme();
    let from = r.find("- Keybindings:").expect("the keybindings paragraph");
    let para = &r[from..];
    let a = para.find(start).unwrap() + start.len();
    let b = a + para[a..].find(end).unwrap();
    para[a..b]
        .replace(['`', ','], " ")
        .split_whitespace()
        .map(str::to_string)
        .collect()
}

#[test]
fn the_readme_lists_every_keybinding_action_and_screen() {
    let listed = words_between("Actions: `", "`.");
    let actions: BTreeSet<String> = prism::tui::keymap::action_names()
        .map(str::to_string)
        .collect();
    assert_eq!(
        listed, actions,
        "configuration.md's actions vs the keymap's"
    );
    let screens = words_between("replaces them on one (", ")");
    let modes: BTreeSet<String> = prism::tui::keymap::Mode::ALL
        .iter()
        .map(|m| m.name().to_string())
        .collect();
    assert_eq!(screens, modes, "configuration.md's screens vs the keymap's");
}

/// The CLI reference chapter is what `prism man --markdown` makes from the clap definition now:
/// a flag added, renamed or described anew without regenerating it fails here.
#[test]
fn the_cli_reference_chapter_is_current() {
    let committed = read("docs/src/reference/cli.md");
    let now = prism::cli::reference_markdown();
    if committed != now {
        let first = committed
            .lines()
            .zip(now.lines())
            .position(|(a, b)| a != b)
            .unwrap_or(committed.lines().count().min(now.lines().count()));
        panic!(
            "docs/src/reference/cli.md is stale (first difference at line {}): regenerate it with \
             `cargo run -- man --markdown > docs/src/reference/cli.md`",
            first + 1
        );
    }
    // It is the whole CLI: every command clap knows is a heading.
    for cmd in [
        "prism run",
        "prism gate",
        "prism db copy",
        "prism labels add",
        "prism man",
    ] {
        assert!(now.contains(&format!("`{cmd}`")), "{cmd} in the reference");
    }
}

/// Every Markdown file under docs/src, relative to it.
fn chapters() -> Vec<PathBuf> {
    fn walk(dir: &Path, base: &Path, out: &mut Vec<PathBuf>) {
        for e in std::fs::read_dir(dir).unwrap() {
            let p = e.unwrap().path();
            if p.is_dir() {
                walk(&p, base, out);
            } else if p.extension().is_some_and(|x| x == "md") {
                out.push(p.strip_prefix(base).unwrap().to_path_buf());
            }
        }
    }
    let base = root().join("docs/src");
    let mut out = Vec::new();
    walk(&base, &base, &mut out);
    out.sort();
    out
}

/// `[text](target)` links of a Markdown text, outside code.
fn links(md: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut fence = false;
    for line in md.lines() {
        if line.trim_start().starts_with("```") {
            fence = !fence;
            continue;
        }
        if fence {
            continue;
        }
        // Inline code holds no links (`[keys]` tables, `a[0](x)` code).
        let text: String = line.split('`').step_by(2).collect::<Vec<_>>().join(" ");
        let mut rest = text.as_str();
        while let Some(i) = rest.find("](") {
            let after = &rest[i + 2..];
            match after.find(')') {
                Some(j) => {
                    out.push(after[..j].to_string());
                    rest = &after[j..];
                }
                None => break,
            }
        }
    }
    out
}

/// mdBook's id for a heading: lower case, spaces to `-`, other punctuation dropped.
fn heading_id(title: &str) -> String {
    title
        .trim()
        .to_lowercase()
        .chars()
        .filter_map(|c| match c {
            ' ' => Some('-'),
            c if c.is_alphanumeric() || c == '-' || c == '_' => Some(c),
            _ => None,
        })
        .collect()
}

fn heading_ids(md: &str) -> BTreeSet<String> {
    let mut fence = false;
    let mut ids = BTreeSet::new();
    for line in md.lines() {
        if line.trim_start().starts_with("```") {
            fence = !fence;
        } else if !fence && line.starts_with('#') {
            ids.insert(heading_id(
                line.trim_start_matches('#').replace('`', "").as_str(),
            ));
        }
    }
    ids
}

#[test]
fn every_chapter_is_in_the_book_and_every_link_lands() {
    let summary = read("docs/src/SUMMARY.md");
    let listed: BTreeSet<String> = links(&summary).into_iter().collect();
    for ch in chapters() {
        let rel = ch.to_string_lossy().to_string();
        if rel == "SUMMARY.md" {
            continue;
        }
        assert!(listed.contains(&rel), "{rel} is not in docs/src/SUMMARY.md");
    }
    let mut checked = 0;
    for ch in chapters() {
        let dir = root()
            .join("docs/src")
            .join(&ch)
            .parent()
            .unwrap()
            .to_path_buf();
        let md = read(&format!("docs/src/{}", ch.display()));
        // Included files (the screens are the tests' own snapshots): each must exist.
        for inc in md.split("{{#include ").skip(1) {
            let file = inc.split([':', '}']).next().unwrap().trim();
            assert!(
                dir.join(file).is_file(),
                "docs/src/{}: {{{{#include {file}}}}}: no such file",
                ch.display()
            );
        }
        for link in links(&md) {
            if link.starts_with("http://") || link.starts_with("https://") {
                continue;
            }
            let (file, anchor) = link.split_once('#').unwrap_or((&link, ""));
            let target = if file.is_empty() {
                root().join("docs/src").join(&ch)
            } else {
                dir.join(file)
            };
            assert!(
                target.is_file(),
                "docs/src/{}: link {link}: no file {}",
                ch.display(),
                target.display()
            );
            if !anchor.is_empty() {
                let ids = heading_ids(&std::fs::read_to_string(&target).unwrap());
                assert!(
                    ids.contains(anchor),
                    "docs/src/{}: link {link}: no heading #{anchor} there",
                    ch.display()
                );
            }
            checked += 1;
        }
    }
    assert!(
        checked > 40,
        "only {checked} links checked: is the walk broken?"
    );
}

/// The README is the front page: what prism is, the two commands, where to read on.
#[test]
fn the_readme_is_a_front_page_whose_links_land() {
    let readme = read("README.md");
    assert!(
        readme.lines().count() < 200,
        "README.md has {} lines: the detail belongs in the book",
        readme.lines().count()
    );
    for command in ["./scripts/demo", "cargo test --locked"] {
        assert!(readme.contains(command), "the README gives {command}");
    }
    for link in links(&readme) {
        if link.starts_with("http") {
            continue;
        }
        let file = link.split('#').next().unwrap();
        assert!(
            root().join(file).is_file(),
            "README.md: link {link} lands nowhere"
        );
    }
}
