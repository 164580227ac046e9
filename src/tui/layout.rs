//! Where each pane goes for a given terminal size. Shared by rendering and by mouse hit-testing,
//! so a click always lands on what was drawn there.

use ratatui::layout::{Constraint, Direction, Layout, Rect};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Areas {
    pub title: Rect,
    pub tree: Rect,
    pub items: Rect,
    pub detail: Rect,
    pub status: Rect,
}

/// At or above this width the three panes sit side by side; below it the item list sits above the
/// detail on the right.
pub(crate) const WIDE: u16 = 140;

impl Areas {
    pub fn new(area: Rect) -> Areas {
        let [title, body, status] = Layout::vertical([
            Constraint::Length(1),
            Constraint::Min(3),
            Constraint::Length(1),
        ])
        .areas(area);
        let tree_w = if area.width >= WIDE {
            42
        } else {
            (area.width * 2 / 5).clamp(24, 38)
        };
        let [tree, right] =
            Layout::horizontal([Constraint::Length(tree_w), Constraint::Min(10)]).areas(body);
        let (items, detail) = if area.width >= WIDE {
            let [i, d] =
                Layout::horizontal([Constraint::Percentage(42), Constraint::Percentage(58)])
                    .areas(right);
            (i, d)
        } else {
            let [i, d] = Layout::default()
                .direction(Direction::Vertical)
                .constraints([Constraint::Percentage(40), Constraint::Percentage(60)])
                .areas(right);
            (i, d)
        };
        Areas {
            title,
            tree,
            items,
            detail,
            status,
        }
    }
}

/// The compare screen: the item on top, one pane per model side by side, the run gauge below.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CompareAreas {
    pub title: Rect,
    pub header: Rect,
    pub panes: Vec<Rect>,
    pub gauge: Rect,
    pub status: Rect,
}

impl CompareAreas {
    /// `status_h`: the rows the key hints need at this width (they wrap, never cut).
    pub fn new(area: Rect, n_panes: usize, status_h: u16) -> CompareAreas {
        let header_h = if area.height >= 30 { 8 } else { 5 };
        let [title, header, body, gauge, status] = Layout::vertical([
            Constraint::Length(1),
            Constraint::Length(header_h),
            Constraint::Min(3),
            Constraint::Length(1),
            Constraint::Length(status_h.max(1)),
        ])
        .areas(area);
        let n = n_panes.max(1);
        let panes = Layout::horizontal(vec![Constraint::Fill(1); n])
            .split(body)
            .to_vec();
        CompareAreas {
            title,
            header,
            panes,
            gauge,
            status,
        }
    }
}
