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

/// Key hints (`"k what  k what  ..."`, pieces two spaces apart) packed onto as few lines of
/// `width` columns as they need, broken only between pieces: a hint line is never cut.
pub(crate) fn wrap_hints(hints: &str, width: u16) -> Vec<String> {
    use unicode_width::UnicodeWidthStr;
    let width = (width as usize).max(10);
    let mut lines = Vec::new();
    let mut cur = String::new();
    for piece in hints.split("  ").map(str::trim).filter(|p| !p.is_empty()) {
        if !cur.is_empty() && cur.width() + 2 + piece.width() + 1 > width {
            lines.push(std::mem::take(&mut cur));
        }
        if !cur.is_empty() {
            cur.push_str("  ");
        }
        cur.push_str(piece);
    }
    if !cur.is_empty() || lines.is_empty() {
        lines.push(cur);
    }
    lines.into_iter().map(|l| format!(" {l}")).collect()
}

/// How many rows a screen's status needs for `hints` at `width` (a notice takes one more; the
/// long notice box shows the rest of it).
pub(crate) fn status_rows(notice: Option<&str>, hints: &str, width: u16) -> u16 {
    // A notice takes a row of its own: the key hints stay in sight under it.
    u16::from(notice.is_some()) + wrap_hints(hints, width).len() as u16
}

/// [`status_line`] over as many rows as [`status_rows`] gave: the hints wrapped, never cut.
pub(crate) fn status_lines(
    f: &mut Frame,
    area: Rect,
    theme: &Theme,
    notice: Option<&str>,
    hints: &str,
) {
    let mut lines: Vec<Line> = notice
        .map(|n| Line::styled(crate::text::one_line(n), theme.warning()))
        .into_iter()
        .collect();
    lines.extend(
        wrap_hints(hints, area.width)
            .into_iter()
            .map(|l| Line::styled(l, theme.muted())),
    );
    f.render_widget(Paragraph::new(lines), area);
}

/// A notice too long for the status line is never cut silently: the whole of it, wrapped, in a
/// box at the top (up to eight lines; the status line keeps its start). It goes with the
/// notice: on the next key press, or by itself once read.
pub(crate) fn long_notice(f: &mut Frame, area: Rect, theme: &Theme, notice: &str) {
    use ratatui::widgets::{Clear, Wrap};
    use unicode_width::UnicodeWidthStr;
    let text = crate::text::one_line(notice);
    // A notice of several lines (a TOML error with its caret) is one too long too.
    let several = notice.trim_end().contains('\n');
    // The status line shows a leading space on some screens: leave a column for it.
    if (!several && text.width() + 1 < area.width as usize) || area.height < 6 || area.width < 20 {
        return;
    }
    // Its own lines kept (each made safe to draw), so an error with a caret reads as it was
    // written; no trimming, so the caret stays under its column.
    let shown: Vec<Line> = notice
        .trim_end()
        .lines()
        .map(|l| Line::styled(crate::text::sanitize(l).into_owned(), theme.warning()))
        .collect();
    let para = Paragraph::new(shown).wrap(Wrap { trim: false });
    let inner_w = area.width.saturating_sub(2);
    let lines = (para.line_count(inner_w) as u16).clamp(1, 12);
    let h = (lines + 2).min(area.height.saturating_sub(2));
    // At the top, under the title line: the key hints at the bottom stay in sight, and the
    // panes' contents (the verdicts a message talks about) are covered the least; it leaves
    // by itself (`App::notice_ttl`).
    let r = Rect {
        x: area.x,
        y: area.y + 1,
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
pub(crate) fn pane<'a>(theme: &Theme, title: Line<'a>, focused: bool) -> Block<'a> {
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
pub(crate) fn title_line<'a>(theme: &Theme, rest: Vec<Span<'a>>) -> Line<'a> {
    let mut spans = vec![Span::styled(
        " prism ",
        theme.accent().add_modifier(Modifier::REVERSED),
    )];
    spans.extend(rest);
    Line::from(spans)
}

/// A vertical scrollbar on the right border of `area` when `total` rows do not fit.
pub(crate) fn scrollbar(f: &mut Frame, area: Rect, total: usize, offset: usize, visible: usize) {
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
pub(crate) fn highlight(
    text: &str,
    re: Option<&Regex>,
    base: Style,
    hit: Style,
) -> Vec<Span<'static>> {
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
pub(crate) fn truncate(s: &str, max: usize) -> String {
    crate::text::truncate(s, max)
}

/// A centred area of about `w` x `h` inside `area`.
pub(crate) fn popup_area(area: Rect, w: u16, h: u16) -> Rect {
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
pub(crate) fn row_in(rect: Rect, row: u16) -> Option<usize> {
    (row > rect.y && row + 1 < rect.y + rect.height).then(|| (row - rect.y - 1) as usize)
}

pub(crate) fn clamp_add(v: usize, delta: isize, max: usize) -> usize {
    (v as isize).saturating_add(delta).clamp(0, max as isize) as usize
}

/// The offset that keeps `sel` inside a window of `height` rows starting near `offset`.
pub(crate) fn fit(sel: usize, offset: usize, height: usize) -> usize {
    if sel < offset {
        sel
    } else if sel >= offset + height {
        sel + 1 - height
    } else {
        offset
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hints_wrap_between_pieces_and_never_lose_one() {
        let h = "space mark  d AutoHall on marked  enter contradictions  r models  backspace back";
        let lines = wrap_hints(h, 40);
        assert!(lines.len() > 1);
        assert!(
            lines
                .iter()
                .all(|l| unicode_width::UnicodeWidthStr::width(l.as_str()) <= 40)
        );
        let joined: Vec<String> = lines.iter().map(|l| l.trim().to_string()).collect();
        assert_eq!(joined.join("  "), h);
        assert_eq!(wrap_hints(h, 200).len(), 1);
        assert_eq!(wrap_hints("", 80), vec![" ".to_string()]);
    }
}
