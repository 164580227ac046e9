//! Actions and the keys bound to them, by mode: each screen and popup has a [`Mode`], and only
//! the actions of the focused mode are looked up, so a key can mean one thing on one screen and
//! another elsewhere without clashing. The defaults are compiled in; the config's `[keys]` table
//! replaces an action's keys in every mode (`quit = ["q", "ctrl-c"]`) and `[keys.<mode>]` in one
//! mode (`[keys.compare]` `next_sample = ["x"]`). The help overlay is generated from this, for
//! the mode it was opened from.

use std::collections::{BTreeMap, HashMap};
use std::fmt;

pub use crate::config::KeyEntry;
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
    ToggleTokens,
    NextToken,
    PrevToken,
    Entropy,
    ChooseJudge,
    Runs,
    Heatmap,
    HeatView,
    Sort,
    Spearman,
    References,
    Baseline,
    MoreSamples,
    FewerSamples,
    Contradictions,
    Detect,
    SampleAgain,
    Metric,
    Models,
    StopRun,
    Copy,
    Label,
    NameRun,
    OpenRun,
    Claims,
    SelfDetect,
    Review,
    Retain,
    Remove,
    Revise,
    SaveDecision,
    EditRationale,
    EditQuestion,
    ReviewNext,
    ReviewPrev,
    StatusFilter,
    PanelFilter,
    Palette,
    Undo,
    WhereInAnswer,
}

/// Declares the modes once: each is a variant, its name in the config (`[keys.compare]`) and
/// what the help overlay calls it. A new screen's mode is one line here.
macro_rules! modes {
    ($($(#[$doc:meta])* $v:ident => ($name:literal, $title:literal),)*) => {
        /// Where input goes: a screen, a sub-state of one, or a popup.
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
        pub enum Mode {
            $($(#[$doc])* $v,)*
        }

        impl Mode {
            pub const ALL: [Mode; [$(stringify!($v),)*].len()] = [$(Mode::$v,)*];

            /// The name used in the config (`[keys.compare]`).
            pub fn name(self) -> &'static str {
                match self {
                    $(Mode::$v => $name,)*
                }
            }

            /// What the help overlay calls it.
            pub fn title(self) -> &'static str {
                match self {
                    $(Mode::$v => $title,)*
                }
            }
        }
    };
}

modes! {
    Browse => ("browse", "browse"),
    Compare => ("compare", "compare answers"),
    Heatmap => ("heatmap", "heatmap"),
    /// The heatmap's list of items behind a cell.
    Drill => ("drill", "heatmap items"),
    /// The heatmap's rank-correlation popup.
    Correlation => ("correlation", "rank correlation"),
    Help => ("help", "help"),
    Problems => ("problems", "problems"),
    Picker => ("picker", "run picker"),
    /// The sampled answers of one answer and their pair verdicts.
    Contradictions => ("contradictions", "contradictions"),
    /// One pair side by side.
    Pair => ("pair", "contradicting pair"),
    /// The claims browser (topic → claim).
    Claims => ("claims", "claims"),
    /// Self-detection: generator × detector scores.
    Selfcheck => ("selfcheck", "self-detection"),
    /// Self-detection: the sentences of one generator × detector pair.
    Sentences => ("sentences", "self-detection sentences"),
    /// Human review: the queue and the current item's decision.
    Review => ("review", "review"),
    /// The runs in the store and the comparison of two.
    Runs => ("runs", "runs"),
    /// A flipped item of a comparison: both runs' answers side by side.
    Flip => ("flip", "flipped item"),
    /// The judges on trial: each judge against people, by evaluator.
    Judges => ("judges", "judges on trial"),
    /// The command palette: the actions of the screen below, searched as you type.
    Palette => ("palette", "command palette"),
    /// Where in the answer: one answer's sentences shaded by how little its samples back them.
    Where => ("where", "where in the answer"),
    /// A run imported from another tool, in that tool's own tree.
    Source => ("source", "imported run"),
}

mod defs;
mod groups;

use defs::DEFS;
pub use defs::action_names;

/// One action: config name, (mode, description) pairs saying where it applies and what it does
/// there, and its default keys.
struct Def {
    action: Action,
    name: &'static str,
    keys: &'static [&'static str],
    uses: &'static [(&'static [Mode], &'static str)],
}

impl Def {
    fn describe(&self, mode: Mode) -> Option<&'static str> {
        // The most specific entry wins (a mode listed alone before a shared list).
        self.uses
            .iter()
            .filter(|(modes, _)| modes.contains(&mode))
            .min_by_key(|(modes, _)| modes.len())
            .map(|(_, d)| *d)
    }
}

/// One action as the command palette lists it.
#[derive(Debug, Clone)]
pub struct PaletteRow {
    pub action: Action,
    /// The config name (`next_sample`), searched too.
    pub name: &'static str,
    /// Its keys in the mode, as the help shows them (empty when unbound).
    pub keys: String,
    pub desc: &'static str,
}

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
    bindings: HashMap<(Mode, Action), Vec<Key>>,
    /// Bindings the config set: they win over a default that uses the same key.
    overridden: std::collections::HashSet<(Mode, Action)>,
}

impl Default for Keymap {
    fn default() -> Self {
        let mut bindings = HashMap::new();
        for d in DEFS {
            let keys: Vec<Key> = d.keys.iter().filter_map(|k| Key::parse(k).ok()).collect();
            for m in Mode::ALL {
                if d.describe(m).is_some() {
                    bindings.insert((m, d.action), keys.clone());
                }
            }
        }
        Keymap {
            bindings,
            overridden: Default::default(),
        }
    }
}

impl Keymap {
    /// Defaults with the config's overrides applied: an action's keys in every mode, then a
    /// mode's own table. Unknown actions or modes and unparsable keys are returned as warnings;
    /// the rest of the config still applies.
    pub fn with_overrides(overrides: &BTreeMap<String, KeyEntry>) -> (Keymap, Vec<String>) {
        let mut km = Keymap::default();
        let mut warnings = Vec::new();
        let known: Vec<&str> = DEFS.iter().map(|d| d.name).collect();
        let apply = |km: &mut Keymap,
                     warnings: &mut Vec<String>,
                     scope: Option<Mode>,
                     name: &str,
                     keys: &[String]| {
            let shown = match scope {
                Some(m) => format!("keys.{}.{name}", m.name()),
                None => format!("keys.{name}"),
            };
            let Some(def) = DEFS.iter().find(|d| d.name == name) else {
                warnings.push(format!(
                    "{shown}: unknown action (known: {})",
                    known.join(", ")
                ));
                return;
            };
            let mut parsed = Vec::new();
            for k in keys {
                match Key::parse(k) {
                    Ok(key) => parsed.push(key),
                    Err(e) => warnings.push(format!("{shown}: {e}")),
                }
            }
            if parsed.is_empty() {
                return;
            }
            let modes: Vec<Mode> = match scope {
                Some(m) if def.describe(m).is_none() => {
                    warnings.push(format!("{shown}: {name} does nothing in {}", m.name()));
                    return;
                }
                Some(m) => vec![m],
                None => Mode::ALL
                    .into_iter()
                    .filter(|m| def.describe(*m).is_some())
                    .collect(),
            };
            for m in modes {
                km.bindings.insert((m, def.action), parsed.clone());
                km.overridden.insert((m, def.action));
            }
        };
        // Every-mode entries first, so a mode's own table wins over them.
        for (name, entry) in overrides {
            if let KeyEntry::Keys(keys) = entry {
                apply(&mut km, &mut warnings, None, name, keys);
            }
        }
        for (name, entry) in overrides {
            if let KeyEntry::Mode(table) = entry {
                match Mode::ALL.into_iter().find(|m| m.name() == name) {
                    Some(m) => {
                        for (action, keys) in table {
                            apply(&mut km, &mut warnings, Some(m), action, keys);
                        }
                    }
                    None => warnings.push(format!(
                        "keys.{name}: not an action or a mode (modes: {})",
                        Mode::ALL.map(Mode::name).join(", ")
                    )),
                }
            }
        }
        (km, warnings)
    }

    /// The action a key does in `mode`, if any.
    pub fn action_for(&self, mode: Mode, e: &KeyEvent) -> Option<Action> {
        let k = Key::from_event(e);
        let bound = |a: &Action| {
            self.bindings
                .get(&(mode, *a))
                .is_some_and(|keys| keys.contains(&k))
        };
        // What the user configured wins over a default on the same key; among equals, help
        // order decides (so a default never silently shadows `quit`).
        DEFS.iter()
            .map(|d| d.action)
            .find(|a| self.overridden.contains(&(mode, *a)) && bound(a))
            .or_else(|| DEFS.iter().map(|d| d.action).find(bound))
    }

    pub fn keys(&self, mode: Mode, a: Action) -> &[Key] {
        self.bindings
            .get(&(mode, a))
            .map(Vec::as_slice)
            .unwrap_or(&[])
    }

    /// The first key of an action in a mode, for hints in the status bar.
    pub fn hint(&self, mode: Mode, a: Action) -> String {
        self.keys(mode, a)
            .first()
            .map(|k| k.to_string())
            .unwrap_or_else(|| "unbound".into())
    }

    /// (keys, description) rows for the help overlay of one mode.
    pub fn help_rows(&self, mode: Mode) -> Vec<(String, &'static str)> {
        self.rows(mode).map(|r| (r.keys, r.desc)).collect()
    }

    /// Every action `mode` has, with its keys there and what it does there, in help order.
    fn rows(&self, mode: Mode) -> impl Iterator<Item = PaletteRow> + '_ {
        DEFS.iter().filter_map(move |d| {
            let desc = d.describe(mode)?;
            let keys: Vec<String> = self
                .keys(mode, d.action)
                .iter()
                .map(|k| k.to_string())
                .collect();
            Some(PaletteRow {
                action: d.action,
                name: d.name,
                keys: keys.join(", "),
                desc,
            })
        })
    }

    /// The command palette's rows for `mode`: every action it has there but the palette itself,
    /// with its config name, its keys and what it does there, in help order.
    pub fn palette_rows(&self, mode: Mode) -> Vec<PaletteRow> {
        self.rows(mode)
            .filter(|r| r.action != Action::Palette)
            .collect()
    }

    /// Keys bound to two actions in one mode (after overrides), for the config check.
    pub fn clashes(&self) -> Vec<String> {
        let mut out = Vec::new();
        for m in Mode::ALL {
            let mut seen: HashMap<Key, Action> = HashMap::new();
            for d in DEFS {
                for k in self.keys(m, d.action) {
                    if let Some(prev) = seen.insert(*k, d.action)
                        && prev != d.action
                    {
                        out.push(format!(
                            "{}: {k} is bound to both {prev:?} and {:?}",
                            m.name(),
                            d.action
                        ));
                    }
                }
            }
        }
        out
    }
}

#[cfg(test)]
mod tests;
