//! Drawing the heatmap screen: the grid (every cell prints its number, coloured from the theme's
//! gradient, so it reads without colour), the crosshair on the cursor's row and column, the
//! drill-down list, and the Spearman popup.

use ratatui::Frame;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::style::{Modifier, Style};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, BorderType, Borders, Clear, Paragraph};

use super::app::App;
use super::keymap::Action;
use super::view::truncate;
use crate::report::View;
use crate::report::render::arrow;
use crate::taxonomy::Dimension;
use crate::text::{one_line, sanitize};
use crate::theme::ink_on;

const LABEL_W: usize = 24;

/// Room for `100.00*`, or for `100.00 ▲+100.0` when a baseline adds deltas (dimensions only).
fn cell_w(view: View, deltas: bool) -> usize {
    match (view, deltas) {
        (View::Dimensions, false) => 10,
        (View::Dimensions, true) => 16,
        _ => 9,
    }
}

pub fn render(app: &App, f: &mut Frame) {
    let t = &app.theme;
    let area = f.area();
    f.render_widget(Block::default().style(t.base()), area);
    let [title, body, status] = Layout::vertical([
        Constraint::Length(1),
        Constraint::Min(3),
        Constraint::Length(1),
    ])
    .areas(area);
    let h = &app.heat;
    let Some(rep) = &h.report else { return };
    let refs = rep.rows.iter().filter(|r| r.is_reference()).count();
    let mut spans = vec![
        Span::styled(" prism ", t.accent().add_modifier(Modifier::REVERSED)),
        Span::styled(" heatmap ", t.base().add_modifier(Modifier::BOLD)),
        Span::styled(
            format!(
                "{} · {} models{}",
                h.view.name(),
                rep.rows.len() - refs,
                if refs > 0 {
                    format!(" + {refs} published")
                } else {
                    String::new()
                }
            ),
            t.muted(),
        ),
    ];
    if let Some((c, desc)) = h.sort {
        let cols = rep.columns(h.view);
        spans.push(Span::styled(
            format!(
                " · sorted by {} {}",
                cols.get(c).map_or("", |s| s),
                if desc { "↓" } else { "↑" }
            ),
            t.muted(),
        ));
    }
    if let Some(b) = &h.baseline {
        spans.push(Span::styled(
            format!(" · baseline {}", sanitize(b)),
            t.warning(),
        ));
    }
    f.render_widget(Paragraph::new(Line::from(spans)), title);

    match &h.drill {
        Some(d) => drill(app, f, body, d),
        None => grid(app, f, body),
    }
    status_line(app, f, status);
    if h.spearman {
        spearman(app, f, area);
    }
}

fn grid(app: &App, f: &mut Frame, area: Rect) {
    let t = &app.theme;
    let h = &app.heat;
    let Some(rep) = &h.report else { return };
    let block = Block::default()
        .borders(Borders::ALL)
        .border_type(BorderType::Rounded)
        .border_style(t.border(true))
        .title(" Hallucination rate % (lower is better) · * partial ");
    let inner = block.inner(area);
    f.render_widget(block, area);
    let cols = rep.columns(h.view);
    let cw = cell_w(h.view, h.baseline.is_some());
    let visible_cols = ((inner.width as usize).saturating_sub(LABEL_W) / cw).max(1);
    // Keep the cursor's column in view.
    let mut off = h.col_offset.min(h.col);
    if h.col >= off + visible_cols {
        off = h.col + 1 - visible_cols;
    }
    let shown: Vec<usize> = (off..cols.len()).take(visible_cols).collect();
    let mut lines = Vec::new();
    // Header: column names, the cursor's column highlighted.
    let mut head = vec![Span::raw(format!(
        "{:<LABEL_W$}",
        if off > 0 { "◀" } else { "" }
    ))];
    for &c in &shown {
        let name = truncate(&cols[c], cw - 1);
        let style = if c == h.col {
            t.accent()
                .add_modifier(Modifier::BOLD | Modifier::UNDERLINED)
        } else {
            t.muted().add_modifier(Modifier::BOLD)
        };
        head.push(Span::styled(format!("{name:>w$} ", w = cw - 1), style));
    }
    if off + visible_cols < cols.len() {
        head.push(Span::styled("▶", t.muted()));
    }
    lines.push(Line::from(head));
    let rows_room = (inner.height as usize).saturating_sub(1);
    let row_off = h.row.saturating_sub(rows_room.saturating_sub(1));
    for (pos, &ri) in h.order.iter().enumerate().skip(row_off).take(rows_room) {
        let row = &rep.rows[ri];
        let on_row = pos == h.row;
        // A reference keeps its marker however long its name.
        let label = if row.is_reference() {
            format!("{} (ref)", truncate(&row.name, LABEL_W - 7))
        } else {
            row.name.clone()
        };
        let label_style = match (on_row, row.is_reference()) {
            (true, _) => t.accent().add_modifier(Modifier::BOLD),
            (false, true) => t.muted().add_modifier(Modifier::ITALIC),
            (false, false) => t.base(),
        };
        let mut spans = vec![Span::styled(
            format!(
                "{:<w$} ",
                truncate(&sanitize(&label), LABEL_W - 1),
                w = LABEL_W - 1
            ),
            label_style,
        )];
        for &c in &shown {
            let cell = rep.cell(ri, h.view, c);
            let mut text = cell.map_or("-".to_string(), |c| c.text());
            if let Some(d) = rep.delta(ri, h.view, c)
                && h.view == View::Dimensions
            {
                text.push(' ');
                text.push_str(&arrow(d));
            }
            let text = format!("{:>w$} ", truncate(&text, cw - 1), w = cw - 1);
            let mut style = match cell {
                Some(cv) if !t.monochrome => {
                    let bg = t.heat(cv.value);
                    Style::default().bg(bg).fg(ink_on(bg))
                }
                Some(_) => t.base(),
                None => t.muted(),
            };
            if on_row || c == h.col {
                style = style.add_modifier(Modifier::BOLD);
            }
            if on_row && c == h.col {
                style = style.add_modifier(Modifier::REVERSED);
            }
            spans.push(Span::styled(text, style));
        }
        lines.push(Line::from(spans));
    }
    if h.order.is_empty() {
        lines.push(Line::styled(
            "No scored answers yet. Run items (r from browsing) or press R for the paper's published rows.",
            t.muted(),
        ));
    }
    f.render_widget(Paragraph::new(lines), inner);
}

fn drill(app: &App, f: &mut Frame, area: Rect, d: &super::heatmap::Drill) {
    let t = &app.theme;
    let block = Block::default()
        .borders(Borders::ALL)
        .border_type(BorderType::Thick)
        .border_style(t.border(true))
        .title(Line::from(vec![
            Span::styled(format!(" {} ", sanitize(&d.model)), t.accent()),
            Span::styled(
                format!("· {} · {} items, worst first ", d.label, d.items.len()),
                t.muted(),
            ),
        ]));
    let inner = block.inner(area);
    f.render_widget(block, area);
    let room = inner.height as usize;
    let off = d.sel.saturating_sub(room.saturating_sub(1));
    let lines: Vec<Line> = d
        .items
        .iter()
        .enumerate()
        .skip(off)
        .take(room)
        .map(|(pos, &(i, score))| {
            let item = &app.ds.items[i];
            let h = 100.0 * (1.0 - score);
            let style = if t.monochrome {
                t.base()
            } else {
                let bg = t.heat(h);
                Style::default().bg(bg).fg(ink_on(bg))
            };
            let line = Line::from(vec![
                Span::styled(format!(" {score:.2} "), style),
                Span::styled(format!(" {:<28} ", item.id), t.accent()),
                Span::styled(one_line(&item.question), t.base()),
            ]);
            if pos == d.sel {
                line.style(t.selected(true))
            } else {
                line
            }
        })
        .collect();
    f.render_widget(Paragraph::new(lines), inner);
}

fn status_line(app: &App, f: &mut Frame, area: Rect) {
    let t = &app.theme;
    let h = &app.heat;
    let k = &app.keymap;
    let line = if let Some(n) = &app.notice {
        Line::styled(format!(" {}", one_line(n)), t.warning())
    } else if h.drill.is_some() {
        Line::styled(
            format!(
                " {} open in compare  {} back to the cell  {} help",
                k.hint(Action::Toggle),
                k.hint(Action::Back),
                k.hint(Action::Help)
            ),
            t.muted(),
        )
    } else {
        let mut spans = Vec::new();
        if let (Some(rep), Some(&ri)) = (&h.report, h.order.get(h.row)) {
            let cols = rep.columns(h.view);
            let row = &rep.rows[ri];
            let col = cols.get(h.col).cloned().unwrap_or_default();
            let what = match rep.cell(ri, h.view, h.col) {
                Some(c) if c.partial => {
                    format!("{} (partial: {} of {} tasks)", c.text(), c.tasks, c.of)
                }
                Some(c) => c.text(),
                None => "-".into(),
            };
            let mut s = format!(" {} · {col} · {what}", sanitize(&row.name));
            if !row.is_reference() {
                let (n, of) = app.cell_coverage(&row.name, h.view, h.col);
                s.push_str(&format!(" · {n}/{of} items scored"));
            }
            if let (Some(d), Some(b)) = (rep.delta(ri, h.view, h.col), &h.baseline) {
                s.push_str(&format!(" · {} vs {}", arrow(d), sanitize(b)));
            }
            spans.push(Span::styled(s, t.base()));
        }
        spans.push(Span::styled(
            format!(
                "   {} items  {} view  {} sort  {} published  {} baseline  {} correlation  {} back",
                k.hint(Action::Toggle),
                k.hint(Action::HeatView),
                k.hint(Action::Sort),
                k.hint(Action::References),
                k.hint(Action::Baseline),
                k.hint(Action::Spearman),
                k.hint(Action::Back)
            ),
            t.muted(),
        ));
        Line::from(spans)
    };
    f.render_widget(Paragraph::new(line), area);
}

fn spearman(app: &App, f: &mut Frame, area: Rect) {
    let t = &app.theme;
    let Some(rep) = &app.heat.report else { return };
    let m = rep.correlations();
    let w = 46.min(area.width);
    let hgt = 10.min(area.height);
    let r = Rect::new(
        area.x + (area.width - w) / 2,
        area.y + (area.height - hgt) / 2,
        w,
        hgt,
    );
    f.render_widget(Clear, r);
    let block = Block::default()
        .borders(Borders::ALL)
        .border_type(BorderType::Rounded)
        .border_style(t.border(true))
        .title(" Spearman ρ between dimensions ")
        .style(t.base());
    let mut lines = vec![Line::from(
        std::iter::once(Span::raw("      "))
            .chain(
                Dimension::ALL
                    .iter()
                    .map(|d| Span::styled(format!("{:>8}", d.code()), t.muted())),
            )
            .collect::<Vec<_>>(),
    )];
    for (i, a) in Dimension::ALL.iter().enumerate() {
        let mut spans = vec![Span::styled(format!("{:<6}", a.code()), t.muted())];
        for v in m[i] {
            spans.push(Span::styled(
                v.map_or(format!("{:>8}", "-"), |v| format!("{v:>8.2}")),
                t.base(),
            ));
        }
        lines.push(Line::from(spans));
    }
    let n = rep
        .rows
        .iter()
        .filter(|r| r.dims.iter().all(|d| d.is_some_and(|d| d.complete())))
        .count();
    lines.push(Line::raw(""));
    lines.push(Line::styled(
        format!(" over {n} complete rows (3 needed)"),
        t.muted(),
    ));
    f.render_widget(Paragraph::new(lines).block(block), r);
}
