//! Actions and the keys bound to them. The defaults are compiled in; the config's `[keys]` table
//! replaces an action's keys (`quit = ["q", "ctrl-c"]`). The help overlay is generated from this.

use std::collections::BTreeMap;
use std::fmt;

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};

/// Everything a key can do.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Action {
    Quit,
    Help,
    Up,
    Down,
    PageUp,
    PageDown,
    Top,
    Bottom,
    Collapse,
    Expand,
    Toggle,
    ExpandAll,
    NextPane,
    PrevPane,
    Search,
    NextMatch,
    PrevMatch,
    Problems,
    Cancel,
    Mark,
    Run,
    NextItem,
    PrevItem,
    NextSample,
    Back,
    Rescore,
    ToggleJudge,
    Heatmap,
    HeatView,
    Sort,
    Spearman,
    References,
    Baseline,
}

/// (action, config name, description, default keys), in help order.
const ACTIONS: &[(Action, &str, &str, &[&str])] = &[
    (Action::Up, "up", "move up", &["up", "k"]),
    (Action::Down, "down", "move down", &["down", "j"]),
    (Action::PageUp, "page_up", "page up", &["pageup", "ctrl-u"]),
    (
        Action::PageDown,
        "page_down",
        "page down",
        &["pagedown", "ctrl-d"],
    ),
    (Action::Top, "top", "go to the first row", &["home", "g"]),
    (
        Action::Bottom,
        "bottom",
        "go to the last row",
        &["end", "G"],
    ),
    (
        Action::Collapse,
        "collapse",
        "collapse node / go to parent / previous pane",
        &["left", "h"],
    ),
    (
        Action::Expand,
        "expand",
        "expand node / next pane",
        &["right", "l"],
    ),
    (
        Action::Toggle,
        "toggle",
        "open or close the node; open the item",
        &["enter"],
    ),
    (
        Action::ExpandAll,
        "expand_all",
        "expand or collapse the whole tree",
        &["e"],
    ),
    (
        Action::NextPane,
        "next_pane",
        "focus the next pane",
        &["tab"],
    ),
    (
        Action::PrevPane,
        "prev_pane",
        "focus the previous pane",
        &["backtab"],
    ),
    (Action::Search, "search", "search ids and text", &["/"]),
    (
        Action::NextMatch,
        "next_match",
        "jump to the next match",
        &["n"],
    ),
    (
        Action::PrevMatch,
        "prev_match",
        "jump to the previous match",
        &["N"],
    ),
    (
        Action::Mark,
        "mark",
        "mark the item, or every item under the node, for a run",
        &["space"],
    ),
    (
        Action::Run,
        "run",
        "run the marked items (or the selection) against chosen models",
        &["r"],
    ),
    (Action::NextItem, "next_item", "compare: next item", &["]"]),
    (
        Action::PrevItem,
        "prev_item",
        "compare: previous item",
        &["["],
    ),
    (
        Action::NextSample,
        "next_sample",
        "compare: next sample",
        &["s"],
    ),
    (
        Action::Rescore,
        "rescore",
        "score the item's answers again (and judge them)",
        &["S"],
    ),
    (
        Action::ToggleJudge,
        "toggle_judge",
        "compare: show or hide the judges' replies",
        &["J"],
    ),
    (
        Action::Heatmap,
        "heatmap",
        "the heatmap of hallucination rates per model",
        &["H"],
    ),
    (
        Action::HeatView,
        "heat_view",
        "heatmap: dimensions, categories or sub-tasks",
        &["v"],
    ),
    (
        Action::Sort,
        "sort",
        "heatmap: sort by the column (again: flip, off)",
        &["o"],
    ),
    (
        Action::Spearman,
        "spearman",
        "heatmap: rank correlation between dimensions",
        &["c"],
    ),
    (
        Action::References,
        "references",
        "heatmap: the paper's published rows, on or off",
        &["R"],
    ),
    (
        Action::Baseline,
        "baseline",
        "heatmap: compare every row with this one",
        &["B"],
    ),
    (
        Action::Back,
        "back",
        "compare: back to browsing (a run goes on)",
        &["backspace", "b"],
    ),
    (
        Action::Problems,
        "problems",
        "show the problems found while loading",
        &["!"],
    ),
    (Action::Help, "help", "show this help", &["?", "f1"]),
    (
        Action::Cancel,
        "cancel",
        "close the popup / clear the search / cancel the run",
        &["esc"],
    ),
    (Action::Quit, "quit", "quit", &["q", "ctrl-c"]),
];

/// A key with its modifiers, as written in the config (`ctrl-d`, `G`, `enter`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Key {
    pub code: KeyCode,
    pub ctrl: bool,
    pub alt: bool,
}

impl Key {
    pub fn from_event(e: &KeyEvent) -> Key {
        // Shift is folded into the character itself ('G'), except for BackTab which carries it.
        Key {
            code: e.code,
            ctrl: e.modifiers.contains(KeyModifiers::CONTROL),
            alt: e.modifiers.contains(KeyModifiers::ALT),
        }
    }

    pub fn parse(s: &str) -> Result<Key, String> {
        let mut ctrl = false;
        let mut alt = false;
        let mut rest = s.trim();
        loop {
            let lower = rest.to_ascii_lowercase();
            if rest.len() > 1 && (lower.starts_with("ctrl-") || lower.starts_with("ctrl+")) {
                ctrl = true;
                rest = &rest[5..];
            } else if rest.len() > 1 && (lower.starts_with("alt-") || lower.starts_with("alt+")) {
                alt = true;
                rest = &rest[4..];
            } else {
                break;
            }
        }
        let code = match rest.to_ascii_lowercase().as_str() {
            "enter" | "return" => KeyCode::Enter,
            "esc" | "escape" => KeyCode::Esc,
            "tab" => KeyCode::Tab,
            "backtab" | "shift-tab" => KeyCode::BackTab,
            "space" => KeyCode::Char(' '),
            "up" => KeyCode::Up,
            "down" => KeyCode::Down,
            "left" => KeyCode::Left,
            "right" => KeyCode::Right,
            "pageup" | "pgup" => KeyCode::PageUp,
            "pagedown" | "pgdn" => KeyCode::PageDown,
            "home" => KeyCode::Home,
            "end" => KeyCode::End,
            "backspace" => KeyCode::Backspace,
            "delete" | "del" => KeyCode::Delete,
            f if f.len() >= 2 && f.starts_with('f') && f[1..].parse::<u8>().is_ok() => {
                KeyCode::F(f[1..].parse().unwrap_or(1))
            }
            _ => {
                let mut chars = rest.chars();
                match (chars.next(), chars.next()) {
                    (Some(c), None) => KeyCode::Char(if ctrl { c.to_ascii_lowercase() } else { c }),
                    _ => return Err(format!("{s:?} is not a key")),
                }
            }
        };
        Ok(Key { code, ctrl, alt })
    }
}

impl fmt::Display for Key {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.ctrl {
            f.write_str("ctrl-")?;
        }
        if self.alt {
            f.write_str("alt-")?;
        }
        match self.code {
            KeyCode::Char(' ') => f.write_str("space"),
            KeyCode::Char(c) => write!(f, "{c}"),
            KeyCode::Enter => f.write_str("enter"),
            KeyCode::Esc => f.write_str("esc"),
            KeyCode::Tab => f.write_str("tab"),
            KeyCode::BackTab => f.write_str("shift-tab"),
            KeyCode::Up => f.write_str("↑"),
            KeyCode::Down => f.write_str("↓"),
            KeyCode::Left => f.write_str("←"),
            KeyCode::Right => f.write_str("→"),
            KeyCode::PageUp => f.write_str("pgup"),
            KeyCode::PageDown => f.write_str("pgdn"),
            KeyCode::Home => f.write_str("home"),
            KeyCode::End => f.write_str("end"),
            KeyCode::F(n) => write!(f, "f{n}"),
            KeyCode::Backspace => f.write_str("backspace"),
            KeyCode::Delete => f.write_str("delete"),
            other => write!(f, "{other:?}"),
        }
    }
}

#[derive(Debug, Clone)]
pub struct Keymap {
    bindings: BTreeMap<Action, Vec<Key>>,
}

impl Default for Keymap {
    fn default() -> Self {
        Keymap {
            bindings: ACTIONS
                .iter()
                .map(|(a, _, _, keys)| {
                    (*a, keys.iter().filter_map(|k| Key::parse(k).ok()).collect())
                })
                .collect(),
        }
    }
}

impl Keymap {
    /// Defaults with the config's overrides applied. Unknown actions and unparsable keys are
    /// returned as warnings; the rest of the config still applies.
    pub fn with_overrides(overrides: &BTreeMap<String, Vec<String>>) -> (Keymap, Vec<String>) {
        let mut km = Keymap::default();
        let mut warnings = Vec::new();
        for (name, keys) in overrides {
            let Some((action, ..)) = ACTIONS.iter().find(|(_, n, _, _)| n == name) else {
                let known: Vec<_> = ACTIONS.iter().map(|(_, n, _, _)| *n).collect();
                warnings.push(format!(
                    "keys.{name}: unknown action (known: {})",
                    known.join(", ")
                ));
                continue;
            };
            let mut parsed = Vec::new();
            for k in keys {
                match Key::parse(k) {
                    Ok(key) => parsed.push(key),
                    Err(e) => warnings.push(format!("keys.{name}: {e}")),
                }
            }
            if !parsed.is_empty() {
                km.bindings.insert(*action, parsed);
            }
        }
        (km, warnings)
    }

    pub fn action_for(&self, e: &KeyEvent) -> Option<Action> {
        let k = Key::from_event(e);
        // Bindings are checked in help order, so an override never silently shadows `quit`.
        ACTIONS
            .iter()
            .map(|(a, ..)| *a)
            .find(|a| self.bindings.get(a).is_some_and(|keys| keys.contains(&k)))
    }

    pub fn keys(&self, a: Action) -> &[Key] {
        self.bindings.get(&a).map(Vec::as_slice).unwrap_or(&[])
    }

    /// The first key of an action, for hints in the status bar.
    pub fn hint(&self, a: Action) -> String {
        self.keys(a)
            .first()
            .map(|k| k.to_string())
            .unwrap_or_else(|| "unbound".into())
    }

    /// (keys, description) rows for the help overlay.
    pub fn help_rows(&self) -> Vec<(String, &'static str)> {
        ACTIONS
            .iter()
            .map(|(a, _, desc, _)| {
                let keys: Vec<String> = self.keys(*a).iter().map(|k| k.to_string()).collect();
                (keys.join(", "), *desc)
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ev(code: KeyCode, m: KeyModifiers) -> KeyEvent {
        KeyEvent::new(code, m)
    }

    #[test]
    fn defaults_map_common_keys() {
        let km = Keymap::default();
        assert_eq!(
            km.action_for(&ev(KeyCode::Char('q'), KeyModifiers::NONE)),
            Some(Action::Quit)
        );
        assert_eq!(
            km.action_for(&ev(KeyCode::Char('c'), KeyModifiers::CONTROL)),
            Some(Action::Quit)
        );
        assert_eq!(
            km.action_for(&ev(KeyCode::Char('N'), KeyModifiers::SHIFT)),
            Some(Action::PrevMatch)
        );
        assert_eq!(
            km.action_for(&ev(KeyCode::Char('n'), KeyModifiers::NONE)),
            Some(Action::NextMatch)
        );
        assert_eq!(
            km.action_for(&ev(KeyCode::Char('z'), KeyModifiers::NONE)),
            None
        );
    }

    #[test]
    fn overrides_replace_an_actions_keys_and_report_mistakes() {
        let mut o = BTreeMap::new();
        o.insert(
            "quit".to_string(),
            vec!["x".to_string(), "ctrl-q".to_string()],
        );
        o.insert("fly".to_string(), vec!["f".to_string()]);
        o.insert("down".to_string(), vec!["notakey".to_string()]);
        let (km, warnings) = Keymap::with_overrides(&o);
        assert_eq!(
            km.action_for(&ev(KeyCode::Char('x'), KeyModifiers::NONE)),
            Some(Action::Quit)
        );
        assert_eq!(
            km.action_for(&ev(KeyCode::Char('q'), KeyModifiers::CONTROL)),
            Some(Action::Quit)
        );
        assert_eq!(
            km.action_for(&ev(KeyCode::Char('q'), KeyModifiers::NONE)),
            None
        );
        // A bad override leaves the defaults in place.
        assert_eq!(
            km.action_for(&ev(KeyCode::Char('j'), KeyModifiers::NONE)),
            Some(Action::Down)
        );
        assert_eq!(warnings.len(), 2);
    }

    #[test]
    fn keys_round_trip_through_display() {
        for s in ["ctrl-d", "G", "enter", "f1", "space", "/"] {
            let k = Key::parse(s).unwrap();
            assert_eq!(
                Key::parse(&k.to_string().replace('↑', "up")).unwrap(),
                k,
                "{s}"
            );
        }
    }
}
