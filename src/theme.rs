//! Themes: a dozen semantic colours plus a heatmap gradient, from `themes/*.toml`.
//!
//! The bundled themes are compiled in; a user theme in `<config dir>/themes/NAME.toml` overrides
//! the bundled one of the same name key by key (a user file may set only the colours it changes).
//! A broken user theme never stops the program: it is reported and the bundled theme is used.

use std::collections::BTreeMap;
use std::path::Path;
use std::str::FromStr;

use ratatui::style::{Color, Modifier, Style};
use serde::Deserialize;

use crate::taxonomy::Dimension;

/// The bundled themes, by name. The first is the default.
pub const BUNDLED: [(&str, &str); 3] = [
    ("dark", include_str!("../themes/dark.toml")),
    ("light", include_str!("../themes/light.toml")),
    (
        "high-contrast",
        include_str!("../themes/high-contrast.toml"),
    ),
];

pub const DEFAULT_THEME: &str = "dark";

#[derive(Debug, Clone, PartialEq)]
pub struct Theme {
    pub name: String,
    pub background: Color,
    pub foreground: Color,
    pub muted: Color,
    pub accent: Color,
    pub border: Color,
    pub border_focused: Color,
    pub selection_bg: Color,
    pub selection_fg: Color,
    pub match_bg: Color,
    pub match_fg: Color,
    pub success: Color,
    pub warning: Color,
    pub error: Color,
    pub dimensions: [Color; 4],
    /// Heatmap stops from 0 % to 100 % hallucination.
    pub gradient: Vec<(u8, u8, u8)>,
    /// `NO_COLOR`: every colour is the terminal's own; emphasis comes from modifiers.
    pub monochrome: bool,
}

/// A theme file as written: every key optional, so a user file can override a few.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct ThemeFile {
    name: Option<String>,
    #[serde(default)]
    colors: BTreeMap<String, String>,
    heatmap: Option<HeatmapFile>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct HeatmapFile {
    gradient: Vec<String>,
}

const COLOR_KEYS: [&str; 17] = [
    "background",
    "foreground",
    "muted",
    "accent",
    "border",
    "border_focused",
    "selection_bg",
    "selection_fg",
    "match_bg",
    "match_fg",
    "success",
    "warning",
    "error",
    "ke",
    "km",
    "re",
    "ife",
];

impl Theme {
    /// A bundled theme by name.
    pub fn bundled(name: &str) -> Option<Theme> {
        let (_, text) = BUNDLED.iter().find(|(n, _)| *n == name)?;
        // Bundled themes are tested to parse; fall back to the built-in palette regardless.
        Some(Theme::parse(text, None).unwrap_or_else(|_| Theme::fallback()))
    }

    /// The default theme.
    pub fn default_theme() -> Theme {
        Theme::bundled(DEFAULT_THEME).unwrap_or_else(Theme::fallback)
    }

    /// A palette that needs no file at all (used only if a bundled file were broken).
    fn fallback() -> Theme {
        Theme {
            name: DEFAULT_THEME.into(),
            background: Color::Reset,
            foreground: Color::White,
            muted: Color::DarkGray,
            accent: Color::Cyan,
            border: Color::DarkGray,
            border_focused: Color::Cyan,
            selection_bg: Color::Blue,
            selection_fg: Color::White,
            match_bg: Color::Yellow,
            match_fg: Color::Black,
            success: Color::Green,
            warning: Color::Yellow,
            error: Color::Red,
            dimensions: [Color::Red, Color::Magenta, Color::Blue, Color::Green],
            gradient: vec![(0, 160, 0), (200, 200, 0), (200, 0, 0)],
            monochrome: false,
        }
    }

    /// No colours at all, for `NO_COLOR`.
    pub fn monochrome() -> Theme {
        Theme {
            name: "no-color".into(),
            background: Color::Reset,
            foreground: Color::Reset,
            muted: Color::Reset,
            accent: Color::Reset,
            border: Color::Reset,
            border_focused: Color::Reset,
            selection_bg: Color::Reset,
            selection_fg: Color::Reset,
            match_bg: Color::Reset,
            match_fg: Color::Reset,
            success: Color::Reset,
            warning: Color::Reset,
            error: Color::Reset,
            dimensions: [Color::Reset; 4],
            gradient: Vec::new(),
            monochrome: true,
        }
    }

    /// Parses a theme file; keys it leaves out come from `base` (or are an error without one).
    pub fn parse(text: &str, base: Option<&Theme>) -> Result<Theme, String> {
        let file: ThemeFile = toml::from_str(text).map_err(|e| e.to_string())?;
        let mut t = base.cloned().unwrap_or_else(Theme::fallback);
        if let Some(n) = file.name {
            t.name = n;
        }
        for (key, value) in &file.colors {
            let c = parse_color(value).map_err(|e| format!("colors.{key}: {e}"))?;
            let slot = match key.as_str() {
                "background" => &mut t.background,
                "foreground" => &mut t.foreground,
                "muted" => &mut t.muted,
                "accent" => &mut t.accent,
                "border" => &mut t.border,
                "border_focused" => &mut t.border_focused,
                "selection_bg" => &mut t.selection_bg,
                "selection_fg" => &mut t.selection_fg,
                "match_bg" => &mut t.match_bg,
                "match_fg" => &mut t.match_fg,
                "success" => &mut t.success,
                "warning" => &mut t.warning,
                "error" => &mut t.error,
                "ke" => &mut t.dimensions[0],
                "km" => &mut t.dimensions[1],
                "re" => &mut t.dimensions[2],
                "ife" => &mut t.dimensions[3],
                other => {
                    return Err(format!(
                        "colors.{other}: unknown colour name (known: {})",
                        COLOR_KEYS.join(", ")
                    ));
                }
            };
            *slot = c;
        }
        if base.is_none() {
            let missing: Vec<_> = COLOR_KEYS
                .iter()
                .filter(|k| !file.colors.contains_key(**k))
                .collect();
            if !missing.is_empty() {
                return Err(format!("missing colours: {missing:?}"));
            }
        }
        if let Some(h) = file.heatmap {
            if h.gradient.len() < 2 {
                return Err("heatmap.gradient: needs at least two colours".into());
            }
            t.gradient = h
                .gradient
                .iter()
                .map(|s| match parse_color(s) {
                    Ok(Color::Rgb(r, g, b)) => Ok((r, g, b)),
                    Ok(_) => Err(format!("heatmap.gradient: {s:?} must be #rrggbb")),
                    Err(e) => Err(format!("heatmap.gradient: {e}")),
                })
                .collect::<Result<_, _>>()?;
        } else if base.is_none() {
            return Err("missing [heatmap] gradient".into());
        }
        Ok(t)
    }

    pub fn dimension(&self, d: Dimension) -> Color {
        self.dimensions[d.index()]
    }

    /// The base style of every pane.
    pub fn base(&self) -> Style {
        Style::default().fg(self.foreground).bg(self.background)
    }

    pub fn muted(&self) -> Style {
        if self.monochrome {
            Style::default().add_modifier(Modifier::DIM)
        } else {
            Style::default().fg(self.muted)
        }
    }

    pub fn accent(&self) -> Style {
        Style::default()
            .fg(self.accent)
            .add_modifier(Modifier::BOLD)
    }

    pub fn border(&self, focused: bool) -> Style {
        match (focused, self.monochrome) {
            (true, true) => Style::default().add_modifier(Modifier::BOLD),
            (true, false) => Style::default().fg(self.border_focused),
            (false, _) => Style::default().fg(self.border),
        }
    }

    /// The selected row; in monochrome, reversed video so it reads without colour.
    pub fn selected(&self, focused: bool) -> Style {
        if self.monochrome {
            let s = Style::default().add_modifier(Modifier::REVERSED);
            return if focused {
                s.add_modifier(Modifier::BOLD)
            } else {
                s
            };
        }
        let s = Style::default().fg(self.selection_fg).bg(self.selection_bg);
        if focused {
            s.add_modifier(Modifier::BOLD)
        } else {
            s
        }
    }

    /// A search match inside text.
    pub fn search_match(&self) -> Style {
        if self.monochrome {
            Style::default().add_modifier(Modifier::UNDERLINED | Modifier::BOLD)
        } else {
            Style::default().fg(self.match_fg).bg(self.match_bg)
        }
    }

    pub fn error(&self) -> Style {
        Style::default().fg(self.error)
    }

    pub fn warning(&self) -> Style {
        Style::default().fg(self.warning)
    }

    pub fn success(&self) -> Style {
        Style::default().fg(self.success)
    }

    /// The heatmap colour for a hallucination rate in [0, 100] (linear between stops).
    pub fn heat(&self, rate: f64) -> Color {
        if self.monochrome || self.gradient.is_empty() {
            return Color::Reset;
        }
        let t = (rate / 100.0).clamp(0.0, 1.0) * (self.gradient.len() - 1) as f64;
        let i = (t.floor() as usize).min(self.gradient.len() - 2);
        let f = t - i as f64;
        let (a, b) = (self.gradient[i], self.gradient[i + 1]);
        let mix = |x: u8, y: u8| (x as f64 + (y as f64 - x as f64) * f).round() as u8;
        Color::Rgb(mix(a.0, b.0), mix(a.1, b.1), mix(a.2, b.2))
    }
}

/// Black or white text, whichever reads on `bg` (by perceived luminance); `Reset` on a colour
/// that is not RGB. Shared by the heatmap screen and the HTML report.
pub fn ink_on(bg: Color) -> Color {
    match bg {
        Color::Rgb(r, g, b) if 299 * r as u32 + 587 * g as u32 + 114 * b as u32 > 140_000 => {
            Color::Black
        }
        Color::Rgb(..) => Color::White,
        _ => Color::Reset,
    }
}

fn parse_color(s: &str) -> Result<Color, String> {
    if s.eq_ignore_ascii_case("reset") || s.eq_ignore_ascii_case("default") {
        return Ok(Color::Reset);
    }
    Color::from_str(s).map_err(|_| format!("{s:?} is not a colour (a name, #rrggbb, or 0-255)"))
}

/// The names of every theme available: bundled ones and those in `user_dir`.
pub fn available(user_dir: Option<&Path>) -> Vec<String> {
    let mut names: Vec<String> = BUNDLED.iter().map(|(n, _)| n.to_string()).collect();
    if let Some(dir) = user_dir
        && let Ok(entries) = std::fs::read_dir(dir)
    {
        for e in entries.flatten() {
            let p = e.path();
            if p.extension().is_some_and(|x| x == "toml")
                && let Some(stem) = p.file_stem()
            {
                let s = stem.to_string_lossy().into_owned();
                if !names.contains(&s) {
                    names.push(s);
                }
            }
        }
    }
    names
}

/// Resolves the theme to use. Returns the theme and any warnings for the status bar.
///
/// Order: `NO_COLOR` wins; then the user's file `<user_dir>/<name>.toml` on top of the bundled
/// theme of that name (or of the default theme for a new name); then the bundled theme.
pub fn resolve(name: &str, user_dir: Option<&Path>, no_color: bool) -> (Theme, Vec<String>) {
    if no_color {
        return (Theme::monochrome(), Vec::new());
    }
    let mut warnings = Vec::new();
    let bundled = Theme::bundled(name);
    let user_file = user_dir.map(|d| d.join(format!("{name}.toml")));
    if let Some(path) = user_file.filter(|p| p.is_file()) {
        let base = bundled.clone().unwrap_or_else(Theme::default_theme);
        match std::fs::read_to_string(&path) {
            Ok(text) => match Theme::parse(&text, Some(&base)) {
                Ok(mut t) => {
                    t.name = name.to_string();
                    return (t, warnings);
                }
                Err(e) => warnings.push(format!(
                    "theme {}: {e}; using the bundled {:?} theme",
                    path.display(),
                    base.name
                )),
            },
            Err(e) => warnings.push(format!("theme {}: {e}", path.display())),
        }
        return (base, warnings);
    }
    match bundled {
        Some(t) => (t, warnings),
        None => {
            warnings.push(format!(
                "no theme named {name:?} (available: {}); using {DEFAULT_THEME:?}",
                available(user_dir).join(", ")
            ));
            (Theme::default_theme(), warnings)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_bundled_theme_parses_completely() {
        for (name, text) in BUNDLED {
            let t = Theme::parse(text, None).unwrap_or_else(|e| panic!("{name}: {e}"));
            assert_eq!(t.name, name);
            assert!(t.gradient.len() >= 2);
        }
    }

    #[test]
    fn partial_user_theme_overrides_only_its_keys() {
        let base = Theme::default_theme();
        let t = Theme::parse("[colors]\naccent = \"#ff0000\"\n", Some(&base)).unwrap();
        assert_eq!(t.accent, Color::Rgb(255, 0, 0));
        assert_eq!(t.foreground, base.foreground);
    }

    #[test]
    fn broken_theme_is_an_error_not_a_panic() {
        let base = Theme::default_theme();
        assert!(Theme::parse("[colors]\naccent = \"not-a-colour\"", Some(&base)).is_err());
        assert!(Theme::parse("[colors]\nbogus = \"red\"", Some(&base)).is_err());
        assert!(Theme::parse("this is = = not toml", Some(&base)).is_err());
        assert!(Theme::parse("[colors]\naccent = \"red\"", None).is_err());
    }

    #[test]
    fn heat_interpolates_between_stops() {
        let mut t = Theme::default_theme();
        t.gradient = vec![(0, 0, 0), (200, 100, 0)];
        assert_eq!(t.heat(0.0), Color::Rgb(0, 0, 0));
        assert_eq!(t.heat(50.0), Color::Rgb(100, 50, 0));
        assert_eq!(t.heat(150.0), Color::Rgb(200, 100, 0));
    }
}
