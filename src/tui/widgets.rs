//! Drawing helpers shared by screens and popups: bordered panes, scrollbars, the title bar, the
//! status line, search highlighting, width-aware truncation and centred popup areas.

use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::style::{Modifier, Style};
use ratatui::text::{Line, Span};
use ratatui::widgets::{
    Block, BorderType, Borders, Paragraph, Scrollbar, ScrollbarOrientation, ScrollbarState,
};
use regex::Regex;

use crate::theme::Theme;

/// A screen's bottom line: the notice, if there is one, as a warning on one line (a message may
/// hold newlines or control characters); otherwise the screen's key hints, muted.
pub fn status_line(
    f: &mut Frame,
    area: Rect,
    theme: &Theme,
    notice: Option<&str>,
    hints: impl FnOnce() -> String,
) {
    let line = match notice {
        Some(n) => Line::styled(crate::text::one_line(n), theme.warning()),
        None => Line::styled(hints(), theme.muted()),
    };
    f.render_widget(Paragraph::new(line), area);
}

/// A notice too long for the status line is never cut silently: the whole of it, wrapped, in a
/// box just above the status line (up to eight lines; the status line keeps its start). It goes
/// with the notice, on the next key press.
pub fn long_notice(f: &mut Frame, area: Rect, theme: &Theme, notice: &str) {
    use ratatui::widgets::{Clear, Wrap};
    use unicode_width::UnicodeWidthStr;
    let text = crate::text::one_line(notice);
    // The status line shows a leading space on some screens: leave a column for it.
    if text.width() + 1 < area.width as usize || area.height < 6 || area.width < 20 {
        return;
    }
    let para = Paragraph::new(Line::styled(text, theme.warning())).wrap(Wrap { trim: true });
    let inner_w = area.width.saturating_sub(2);
    let lines = (para.line_count(inner_w) as u16).clamp(1, 8);
    let h = (lines + 2).min(area.height.saturating_sub(2));
    let r = Rect {
        x: area.x,
        y: area.y + area.height.saturating_sub(1 + h),
        width: area.width,
        height: h,
    };
    f.render_widget(Clear, r);
    let block = Block::default()
        .borders(Borders::ALL)
        .border_style(theme.border(true))
        .title(Span::styled(" message ", theme.warning()))
        .style(theme.base());
    f.render_widget(para.block(block), r);
}

/// A bordered pane: thick border when focused.
pub fn pane<'a>(theme: &Theme, title: Line<'a>, focused: bool) -> Block<'a> {
    Block::default()
        .borders(Borders::ALL)
        .border_type(if focused {
            BorderType::Thick
        } else {
            BorderType::Rounded
        })
        .border_style(theme.border(focused))
        .title(title)
        .style(theme.base())
}

/// The reversed ` prism ` badge that starts every title bar, then `rest`.
pub fn title_line<'a>(theme: &Theme, rest: Vec<Span<'a>>) -> Line<'a> {
    let mut spans = vec![Span::styled(
        " prism ",
        theme.accent().add_modifier(Modifier::REVERSED),
    )];
    spans.extend(rest);
    Line::from(spans)
}

/// A vertical scrollbar on the right border of `area` when `total` rows do not fit.
pub fn scrollbar(f: &mut Frame, area: Rect, total: usize, offset: usize, visible: usize) {
    if total <= visible || area.height < 3 {
        return;
    }
    let mut state = ScrollbarState::new(total.saturating_sub(visible)).position(offset);
    f.render_stateful_widget(
        Scrollbar::new(ScrollbarOrientation::VerticalRight)
            .begin_symbol(None)
            .end_symbol(None),
        area.inner(ratatui::layout::Margin {
            vertical: 1,
            horizontal: 0,
        }),
        &mut state,
    );
}

/// Splits `text` into spans with every match of `re` in `hit` style.
pub fn highlight(text: &str, re: Option<&Regex>, base: Style, hit: Style) -> Vec<Span<'static>> {
    let Some(re) = re else {
        return vec![Span::styled(text.to_string(), base)];
    };
    let mut spans = Vec::new();
    let mut last = 0;
    for m in re.find_iter(text) {
        if m.start() > last {
            spans.push(Span::styled(text[last..m.start()].to_string(), base));
        }
        if m.end() > m.start() {
            spans.push(Span::styled(m.as_str().to_string(), hit));
        }
        last = m.end();
    }
    if last < text.len() {
        spans.push(Span::styled(text[last..].to_string(), base));
    }
    spans
}

/// Cuts `s` to at most `max` terminal columns, marking the cut with `…`.
pub fn truncate(s: &str, max: usize) -> String {
    crate::text::truncate(s, max)
}

/// A centred area of about `w` x `h` inside `area`.
pub fn popup_area(area: Rect, w: u16, h: u16) -> Rect {
    let w = w.min(area.width.saturating_sub(2)).max(10.min(area.width));
    let h = h.min(area.height.saturating_sub(2)).max(3.min(area.height));
    Rect::new(
        area.x + (area.width.saturating_sub(w)) / 2,
        area.y + (area.height.saturating_sub(h)) / 2,
        w,
        h,
    )
}

/// The row inside a bordered `rect` that a mouse row falls on, if any.
pub fn row_in(rect: Rect, row: u16) -> Option<usize> {
    (row > rect.y && row + 1 < rect.y + rect.height).then(|| (row - rect.y - 1) as usize)
}

pub fn clamp_add(v: usize, delta: isize, max: usize) -> usize {
    (v as isize).saturating_add(delta).clamp(0, max as isize) as usize
}

/// The offset that keeps `sel` inside a window of `height` rows starting near `offset`.
pub fn fit(sel: usize, offset: usize, height: usize) -> usize {
    if sel < offset {
        sel
    } else if sel >= offset + height {
        sel + 1 - height
    } else {
        offset
    }
}
