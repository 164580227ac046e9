//! Moving through a list or a text pane: the same keys do the same thing on every screen, so
//! each screen asks here instead of writing the moves again.

use super::keymap::Action;

/// Rows a page key moves.
pub(crate) const PAGE: usize = 10;

/// A list's cursor over `len` rows, moved by a navigation key (one row, a page, the first or
/// the last row); `None` for any other action.
pub(crate) fn cursor(sel: usize, a: Action, len: usize) -> Option<usize> {
    let last = len.saturating_sub(1);
    Some(match a {
        Action::Down => (sel + 1).min(last),
        Action::Up => sel.saturating_sub(1),
        Action::PageDown => (sel + PAGE).min(last),
        Action::PageUp => sel.saturating_sub(PAGE),
        Action::Top => 0,
        Action::Bottom => last,
        _ => return None,
    })
}

/// A text pane's scroll moved by a page key; `None` for any other action (a pane whose up and
/// down keys move a cursor still pages its text).
pub(crate) fn page(scroll: u16, a: Action) -> Option<u16> {
    Some(match a {
        Action::PageDown => scroll.saturating_add(PAGE as u16),
        Action::PageUp => scroll.saturating_sub(PAGE as u16),
        _ => return None,
    })
}

/// A text pane's scroll moved by a line, a page or to the top; `None` for any other action.
pub(crate) fn scroll(s: u16, a: Action) -> Option<u16> {
    Some(match a {
        Action::Down => s.saturating_add(1),
        Action::Up => s.saturating_sub(1),
        Action::Top => 0,
        _ => return page(s, a),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_cursor_stays_on_the_list() {
        assert_eq!(cursor(0, Action::Up, 5), Some(0));
        assert_eq!(cursor(4, Action::Down, 5), Some(4));
        assert_eq!(cursor(2, Action::PageDown, 5), Some(4));
        assert_eq!(cursor(12, Action::PageUp, 30), Some(2));
        assert_eq!(cursor(3, Action::Bottom, 5), Some(4));
        assert_eq!(cursor(3, Action::Top, 5), Some(0));
        // An empty list keeps its cursor at 0.
        assert_eq!(cursor(0, Action::Down, 0), Some(0));
        assert_eq!(cursor(1, Action::Toggle, 5), None);
    }

    #[test]
    fn a_pane_scrolls_by_lines_and_pages() {
        assert_eq!(scroll(0, Action::Up), Some(0));
        assert_eq!(scroll(3, Action::Down), Some(4));
        assert_eq!(scroll(3, Action::PageDown), Some(13));
        assert_eq!(scroll(13, Action::Top), Some(0));
        assert_eq!(page(5, Action::Down), None);
        assert_eq!(page(5, Action::PageUp), Some(0));
    }
}
