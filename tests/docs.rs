//! What the README says about the code, held to the code: every keybinding action and screen
//! the config accepts is listed, and nothing the config rejects.

use std::collections::BTreeSet;

fn readme() -> String {
    std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/README.md")).unwrap()
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
    assert_eq!(listed, actions, "README actions vs the keymap's");
    let screens = words_between("replaces them on one (", ")");
    let modes: BTreeSet<String> = prism::tui::keymap::Mode::ALL
        .iter()
        .map(|m| m.name().to_string())
        .collect();
    assert_eq!(screens, modes, "README screens vs the keymap's");
}
