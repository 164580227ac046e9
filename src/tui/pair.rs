//! The pair popup: the answer under test and one sample side by side, the phrases the judge
//! quoted as conflicting marked in both, the verdict and explanation below, the judge's raw
//! reply on demand.

use ratatui::Frame;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::style::{Modifier, Style};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Clear, Paragraph, Wrap};
use regex::{Regex, RegexBuilder};

use crate::store::{PairRecord, SampleRecord, Target, Verdict};
use crate::text::{one_line, sanitize};
use crate::tui::component::{Cmd, Component, Cx, Input, ScreenId};
use crate::tui::keymap::{Action, Mode};
use crate::tui::widgets::{highlight, pane, scrollbar};

pub(crate) struct PairView {
    target: Target,
    sample: SampleRecord,
    pair: Option<PairRecord>,
    pub show_reply: bool,
    pub scroll: u16,
    /// Rows the taller side took at the last draw, and the rows shown.
    drawn: (usize, usize),
}

impl PairView {
    pub(crate) fn new(target: Target, sample: SampleRecord, pair: Option<PairRecord>) -> PairView {
        PairView {
            target,
            sample,
            pair,
            show_reply: false,
            scroll: 0,
            drawn: (0, 0),
        }
    }

    /// Whether the quoted phrase of a side is in its text (marked), as far as can be told.
    pub(crate) fn found(&self) -> (bool, bool) {
        let a = sanitize(self.target.answer.as_deref().unwrap_or("")).into_owned();
        let b = sanitize(self.sample.text.as_deref().unwrap_or("")).into_owned();
        let q = |q: Option<&String>, text: &str| {
            quote_regex(q.map(String::as_str)).is_some_and(|re| re.is_match(text))
        };
        let p = self.pair.as_ref();
        (
            q(p.and_then(|p| p.quote_a.as_ref()), &a),
            q(p.and_then(|p| p.quote_b.as_ref()), &b),
        )
    }
}

/// A case-insensitive, whitespace-tolerant matcher for a quoted phrase (judges re-space and
/// re-case what they quote). `None` for no quote.
pub(crate) fn quote_regex(q: Option<&str>) -> Option<Regex> {
    let q = q?.trim();
    if q.is_empty() {
        return None;
    }
    let pattern = q
        .split_whitespace()
        .map(regex::escape)
        .collect::<Vec<_>>()
        .join(r"\s+");
    RegexBuilder::new(&pattern)
        .case_insensitive(true)
        .size_limit(1 << 20)
        .build()
        .ok()
}

/// A side's lines with the quote marked. The match is made on the whole text (a phrase may
/// span lines), then cut back into lines.
fn marked(text: &str, quote: Option<&str>, base: Style, hit: Style) -> Vec<Line<'static>> {
    let text = sanitize(text).into_owned();
    let re = quote_regex(quote);
    let spans = highlight(&text, re.as_ref(), base, hit);
    let mut lines = vec![Line::default()];
    for s in spans {
        let style = s.style;
        let mut first = true;
        for part in s.content.split('\n') {
            if !first {
                lines.push(Line::default());
            }
            first = false;
            if !part.is_empty()
                && let Some(l) = lines.last_mut()
            {
                l.spans.push(Span::styled(part.to_string(), style));
            }
        }
    }
    lines
}

impl Component for PairView {
    fn id(&self) -> ScreenId {
        ScreenId::Pair
    }

    fn mode(&self) -> Mode {
        Mode::Pair
    }

    fn is_overlay(&self) -> bool {
        true
    }

    fn update(&mut self, input: Input, _cx: &Cx) -> Vec<Cmd> {
        let max = self.drawn.0.saturating_sub(self.drawn.1) as u16;
        match input {
            Input::Action(a) => match a {
                Action::Cancel | Action::Toggle | Action::Back | Action::Quit => {
                    vec![Cmd::ClosePopup]
                }
                Action::ToggleJudge => {
                    self.show_reply = !self.show_reply;
                    Vec::new()
                }
                Action::Down => {
                    self.scroll = (self.scroll + 1).min(max);
                    Vec::new()
                }
                Action::Up => {
                    self.scroll = self.scroll.saturating_sub(1);
                    Vec::new()
                }
                Action::PageDown => {
                    self.scroll = (self.scroll + 10).min(max);
                    Vec::new()
                }
                Action::PageUp => {
                    self.scroll = self.scroll.saturating_sub(10);
                    Vec::new()
                }
                _ => Vec::new(),
            },
            _ => Vec::new(),
        }
    }

    fn draw(&mut self, f: &mut Frame, area: Rect, cx: &Cx) {
        let t = cx.theme;
        // The whole screen: two texts side by side need every column.
        let r = area;
        f.render_widget(Clear, r);
        f.render_widget(Block::default().style(t.base()), r);
        let p = self.pair.as_ref();
        let reply_h = if self.show_reply { 8 } else { 0 };
        let [sides, verdict, reply, status] = Layout::vertical([
            Constraint::Min(4),
            Constraint::Length(3),
            Constraint::Length(reply_h),
            Constraint::Length(1),
        ])
        .areas(r);
        let [left, right] =
            Layout::horizontal([Constraint::Percentage(50), Constraint::Percentage(50)])
                .areas(sides);
        let hit = t.error().add_modifier(Modifier::BOLD | Modifier::REVERSED);
        let a_lines = marked(
            self.target.answer.as_deref().unwrap_or(""),
            p.and_then(|p| p.quote_a.as_deref()),
            t.base(),
            hit,
        );
        let b_lines = marked(
            self.sample.text.as_deref().unwrap_or(""),
            p.and_then(|p| p.quote_b.as_deref()),
            t.base(),
            hit,
        );
        let (found_a, found_b) = self.found();
        let side_title = |name: &str, quote: Option<&str>, found: bool| {
            let mut spans = vec![Span::styled(format!(" {name} "), t.accent())];
            match quote {
                Some(q) if found => spans.push(Span::styled(
                    format!("· marked: “{}” ", one_line(q)),
                    t.muted(),
                )),
                Some(q) => spans.push(Span::styled(
                    format!("· quoted “{}”, not found verbatim ", one_line(q)),
                    t.warning(),
                )),
                None => {}
            }
            Line::from(spans)
        };
        let mut rows = 0;
        for (lines, area, title) in [
            (
                a_lines,
                left,
                side_title(
                    "A: the answer under test",
                    p.and_then(|p| p.quote_a.as_deref()),
                    found_a,
                ),
            ),
            (
                b_lines,
                right,
                side_title(
                    &format!(
                        "B: sample #{} (wording {})",
                        self.sample.k + 1,
                        self.sample.variant
                    ),
                    p.and_then(|p| p.quote_b.as_deref()),
                    found_b,
                ),
            ),
        ] {
            let block = pane(t, title, true);
            let inner = block.inner(area);
            let para = Paragraph::new(lines).wrap(Wrap { trim: false });
            let n = para.line_count(inner.width.max(1));
            rows = rows.max(n);
            f.render_widget(para.scroll((self.scroll, 0)).block(block), area);
            scrollbar(f, area, n, self.scroll as usize, inner.height as usize);
            self.drawn = (rows, inner.height as usize);
        }
        let v = verdict_lines(p, t);
        f.render_widget(Paragraph::new(v).wrap(Wrap { trim: true }), verdict);
        if self.show_reply {
            let text = p
                .and_then(|p| p.reply.as_deref())
                .map(|r| sanitize(r).into_owned())
                .unwrap_or_else(|| "(no reply)".into());
            f.render_widget(
                Paragraph::new(text).wrap(Wrap { trim: false }).block(pane(
                    t,
                    Line::from(" the judge's raw reply "),
                    false,
                )),
                reply,
            );
        }
        let k = |a| cx.keymap.hint(Mode::Pair, a);
        f.render_widget(
            Paragraph::new(Line::styled(
                format!(
                    " ↑↓ scroll  {} {} the judge's reply  {} close",
                    k(Action::ToggleJudge),
                    if self.show_reply { "hides" } else { "shows" },
                    k(Action::Cancel)
                ),
                t.muted(),
            )),
            status,
        );
    }

    fn as_any(&self) -> &dyn std::any::Any {
        self
    }
}

/// The judge's verdict on the pair, and its explanation or error.
fn verdict_lines(p: Option<&PairRecord>, t: &crate::theme::Theme) -> Vec<Line<'static>> {
    let (word, style) = match p.map(|p| p.verdict) {
        Some(Verdict::Conflict) => ("✗ CONFLICT", t.error().add_modifier(Modifier::BOLD)),
        Some(Verdict::Consistent) => ("✓ consistent", t.success().add_modifier(Modifier::BOLD)),
        Some(Verdict::Unparsed) => ("? unreadable verdict", t.warning()),
        Some(Verdict::Failed) => ("! the judge failed", t.error()),
        None => ("… not checked yet", t.muted()),
    };
    let mut v = vec![Line::from(vec![
        Span::styled(format!(" {word} "), style),
        Span::styled(
            p.map(|p| {
                format!(
                    " judge {} · {} attempt{}",
                    one_line(&p.judge),
                    p.attempts,
                    if p.attempts == 1 { "" } else { "s" }
                )
            })
            .unwrap_or_default(),
            t.muted(),
        ),
    ])];
    if let Some(e) = p.and_then(|p| p.explanation.as_deref().or(p.error.as_deref())) {
        v.push(Line::styled(format!(" {}", one_line(e)), t.base()));
    }
    v
}
