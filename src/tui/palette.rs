//! The command palette (`:` or `ctrl-p` on any screen): every action the screen below has,
//! fuzzy-searched as you type over what it does, its config name and its keys, each shown with
//! its key, so nothing needs to be remembered. `enter` closes the palette and delivers the
//! action to the screen exactly as its key would (the app's `Cmd::Then`), so the palette can
//! do nothing a key cannot. The rows come from the keymap, the same source as the help overlay.

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use nucleo_matcher::pattern::{CaseMatching, Normalization, Pattern};
use nucleo_matcher::{Config, Matcher, Utf32Str};
use ratatui::Frame;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Clear, Paragraph};

use super::component::{Cmd, Component, Cx, Input, ScreenId};
use super::keymap::{Action, Mode, PaletteRow};
use super::widgets::{pane, popup_area};

pub(crate) struct Palette {
    /// The mode of the screen the palette was opened over: whose actions it lists.
    of: Mode,
    query: String,
    /// Index into the matches of the current query.
    selected: usize,
    /// The first match shown (the list scrolls with the selection).
    top: usize,
    /// Rows drawn last time, for paging the selection.
    shown: usize,
}

/// How well every query word matches a row: 0, each starts a word of the action's config name;
/// 1, each starts a word of the row; 2, each is inside it; 3, only scattered letters.
fn tier(words: &[String], name: &str, hay: &str) -> u8 {
    let split = |s: &str| -> Vec<String> {
        s.split(|c: char| !c.is_alphanumeric())
            .filter(|w| !w.is_empty())
            .map(str::to_lowercase)
            .collect()
    };
    let (name_words, hay_words) = (split(name), split(hay));
    let hay = hay.to_lowercase();
    let starts = |ws: &[String], q: &str| ws.iter().any(|w| w.starts_with(q));
    if words.iter().all(|q| starts(&name_words, q)) {
        0
    } else if words.iter().all(|q| starts(&hay_words, q)) {
        1
    } else if words.iter().all(|q| hay.contains(q.as_str())) {
        2
    } else {
        3
    }
}

impl Palette {
    pub(crate) fn new(of: Mode) -> Palette {
        Palette {
            of,
            query: String::new(),
            selected: 0,
            top: 0,
            shown: 10,
        }
    }

    /// The rows matching the query, best first (all of them, in help order, when it is empty).
    pub(crate) fn matches(&self, cx: &Cx) -> Vec<PaletteRow> {
        let rows = cx.keymap.palette_rows(self.of);
        if self.query.trim().is_empty() {
            return rows;
        }
        let pattern = Pattern::parse(&self.query, CaseMatching::Ignore, Normalization::Smart);
        let mut matcher = Matcher::new(Config::DEFAULT);
        let mut buf = Vec::new();
        let words: Vec<String> = self
            .query
            .split_whitespace()
            .map(str::to_lowercase)
            .collect();
        let mut scored: Vec<(u8, u32, usize, PaletteRow)> = rows
            .into_iter()
            .enumerate()
            .filter_map(|(i, r)| {
                // What it does first: people search for "judge", not for `choose_judge`.
                let hay = format!("{} {} {}", r.desc, r.name.replace('_', " "), r.keys);
                let score = pattern.score(Utf32Str::new(&hay, &mut buf), &mut matcher)?;
                Some((tier(&words, r.name, &hay), score, i, r))
            })
            .collect();
        // A query word that starts a word of the action's name ranks first ("judge": choose a
        // judge before score again), then one starting a word of what it does, then one inside
        // a word; letters merely scattered through a row ("heat" in "t", "esc", "end") are cut
        // when anything matched better.
        let best = scored.iter().map(|x| x.0).min().unwrap_or(3);
        scored.retain(|x| x.0 < 3 || best == 3);
        scored.sort_by(|a, b| a.0.cmp(&b.0).then(b.1.cmp(&a.1)).then(a.2.cmp(&b.2)));
        scored.into_iter().map(|(_, _, _, r)| r).collect()
    }

    fn nav(&mut self, a: Action, n: usize) {
        let last = n.saturating_sub(1);
        self.selected = match a {
            Action::Up => self.selected.saturating_sub(1),
            Action::Down => (self.selected + 1).min(last),
            Action::PageUp => self.selected.saturating_sub(self.shown.max(1)),
            Action::PageDown => (self.selected + self.shown.max(1)).min(last),
            Action::Top => 0,
            Action::Bottom => last,
            _ => self.selected,
        };
    }

    /// A key that is not text: the palette's own bindings (`[keys.palette]`), else ctrl-n/p.
    fn control(&self, k: &KeyEvent, cx: &Cx) -> Option<Action> {
        let plain_char = matches!(k.code, KeyCode::Char(_))
            && !k
                .modifiers
                .intersects(KeyModifiers::CONTROL | KeyModifiers::ALT);
        if plain_char {
            return None;
        }
        if let Some(a) = cx.keymap.action_for(Mode::Palette, k) {
            return Some(a);
        }
        match (k.code, k.modifiers.contains(KeyModifiers::CONTROL)) {
            (KeyCode::Char('n'), true) => Some(Action::Down),
            (KeyCode::Char('p'), true) => Some(Action::Up),
            (KeyCode::Char('c'), true) => Some(Action::Quit),
            _ => None,
        }
    }
}

impl Component for Palette {
    fn id(&self) -> ScreenId {
        ScreenId::Palette
    }
    fn mode(&self) -> Mode {
        Mode::Palette
    }
    fn is_overlay(&self) -> bool {
        true
    }
    /// Every key reaches `update`: letters are the query, even those bound elsewhere (`j`, `q`).
    fn takes_text(&self) -> bool {
        true
    }

    fn update(&mut self, input: Input, cx: &Cx) -> Vec<Cmd> {
        let n = self.matches(cx).len();
        match input {
            Input::Key(k) => {
                if let Some(a) = self.control(&k, cx) {
                    return self.update(Input::Action(a), cx);
                }
                match k.code {
                    KeyCode::Char(c)
                        if !k
                            .modifiers
                            .intersects(KeyModifiers::CONTROL | KeyModifiers::ALT) =>
                    {
                        self.query.push(c);
                        self.selected = 0;
                        self.top = 0;
                    }
                    KeyCode::Backspace => {
                        self.query.pop();
                        self.selected = 0;
                        self.top = 0;
                    }
                    _ => {}
                }
            }
            Input::Paste(text) => {
                self.query.push_str(&crate::text::one_line(&text));
                self.selected = 0;
            }
            Input::Action(Action::Cancel | Action::Quit) => return vec![Cmd::ClosePopup],
            Input::Action(Action::Toggle) => {
                return match self.matches(cx).get(self.selected) {
                    Some(row) => vec![Cmd::ClosePopup, Cmd::Then(row.action)],
                    None => vec![Cmd::Notice(format!(
                        "no action of {} matches {:?}",
                        self.of.title(),
                        self.query
                    ))],
                };
            }
            Input::Action(a) => self.nav(a, n),
            Input::Mouse(m) => {
                use crossterm::event::MouseEventKind;
                match m.kind {
                    MouseEventKind::ScrollDown => self.nav(Action::Down, n),
                    MouseEventKind::ScrollUp => self.nav(Action::Up, n),
                    _ => {}
                }
            }
        }
        Vec::new()
    }

    fn draw(&mut self, f: &mut Frame, area: Rect, cx: &Cx) {
        let t = cx.theme;
        let rows = self.matches(cx);
        let w = 96.min(area.width.saturating_sub(2));
        let h = (rows.len().max(1) as u16 + 7).clamp(10, area.height.saturating_sub(2).max(10));
        let r = popup_area(area, w, h);
        f.render_widget(Clear, r);
        let block = pane(
            t,
            Line::from(format!(
                " Actions: {} ({} of {}) ",
                self.of.title(),
                rows.len(),
                cx.keymap.palette_rows(self.of).len()
            )),
            true,
        );
        let inner = block.inner(r);
        f.render_widget(block, r);
        // The chosen row in full below the list (rows are cut to one line each).
        let [input, list, detail, foot] = Layout::vertical([
            Constraint::Length(1),
            Constraint::Min(1),
            Constraint::Length(2),
            Constraint::Length(1),
        ])
        .areas(inner);
        if let Some(row) = rows.get(self.selected) {
            let text = format!("{} ({}): {}", row.name, keys_or_unbound(row), row.desc);
            let lines: Vec<Line> = crate::text::wrap(&text, inner.width.max(10) as usize)
                .into_iter()
                .take(2)
                .map(|l| Line::styled(l, t.muted()))
                .collect();
            f.render_widget(Paragraph::new(lines), detail);
        }
        f.render_widget(
            Paragraph::new(Line::from(vec![
                Span::styled("> ", t.accent()),
                Span::styled(self.query.clone(), t.base()),
                Span::styled("▏", t.accent()),
            ])),
            input,
        );
        self.shown = list.height as usize;
        if self.selected < self.top {
            self.top = self.selected;
        } else if self.selected >= self.top + self.shown.max(1) {
            self.top = self.selected + 1 - self.shown.max(1);
        }
        const KEYS_W: usize = 16;
        let desc_w = (list.width as usize).saturating_sub(KEYS_W + 2);
        let lines: Vec<Line> = rows
            .iter()
            .enumerate()
            .skip(self.top)
            .take(self.shown)
            .map(|(i, row)| {
                let keys = crate::text::truncate(&keys_or_unbound(row), KEYS_W);
                let desc = crate::text::truncate(row.desc, desc_w);
                let mark = if i == self.selected { "❯" } else { " " };
                let style = if i == self.selected {
                    t.selected(true)
                } else {
                    t.base()
                };
                Line::from(vec![
                    Span::styled(mark, t.accent()),
                    Span::styled(format!("{keys:<KEYS_W$} "), t.accent()),
                    Span::styled(desc, style),
                ])
            })
            .collect();
        if lines.is_empty() {
            f.render_widget(
                Paragraph::new(Line::styled("no action matches", t.muted())),
                list,
            );
        } else {
            f.render_widget(Paragraph::new(lines), list);
        }
        f.render_widget(
            Paragraph::new(Line::styled(
                "type to search · ↑↓ choose · enter do it · esc close",
                t.muted(),
            )),
            foot,
        );
    }

    fn as_any(&self) -> &dyn std::any::Any {
        self
    }
}

fn keys_or_unbound(row: &PaletteRow) -> String {
    if row.keys.is_empty() {
        "unbound".to_string()
    } else {
        row.keys.clone()
    }
}

#[cfg(test)]
mod tests {
    use super::tier;

    #[test]
    fn the_actions_name_ranks_first_and_scattered_letters_last() {
        let q = |s: &str| vec![s.to_string()];
        // "judge": choosing the judge is named for it; scoring again only says it.
        assert_eq!(
            tier(
                &q("judge"),
                "choose_judge",
                "choose the judge choose judge u"
            ),
            0
        );
        assert_eq!(
            tier(
                &q("judge"),
                "rescore",
                "score the item's answers again (and judge them) rescore S"
            ),
            1
        );
        assert_eq!(tier(&q("eat"), "heatmap", "the heatmap heatmap H"), 2);
        // "heat" is only scattered through "go to the last row" (h, e, a, t).
        assert_eq!(
            tier(&q("heat"), "bottom", "go to the last row bottom end, G"),
            3
        );
    }
}
