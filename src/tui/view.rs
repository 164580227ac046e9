//! Drawing the browse screen and its popups. Nothing here changes state.

use ratatui::Frame;
use ratatui::layout::{Alignment, Constraint, Layout, Rect};
use ratatui::style::{Modifier, Style};
use ratatui::text::{Line, Span, Text};
use ratatui::widgets::{
    Block, BorderType, Borders, Clear, Paragraph, Row, Scrollbar, ScrollbarOrientation,
    ScrollbarState, Table, Wrap,
};
use regex::Regex;

use super::app::{App, Focus, Popup};
use super::keymap::Action;
use super::tree::NodeId;
use crate::dataset::{Dataset, Item};
use crate::taxonomy::CATEGORIES;
use crate::text::{one_line, sanitize};
use crate::theme::Theme;

pub fn render(app: &App, f: &mut Frame) {
    if app.screen == super::app::Screen::Compare {
        super::view_compare::render(app, f);
        return;
    }
    if app.screen == super::app::Screen::Heatmap {
        super::view_heatmap::render(app, f);
        if let Some(Popup::Help { scroll }) = app.popup {
            help_popup(app, f, f.area(), scroll);
        }
        return;
    }
    let area = f.area();
    let a = super::layout::Areas::new(area);
    f.render_widget(Block::default().style(app.theme.base()), area);
    title_bar(app, f, a.title);
    tree_pane(app, f, a.tree);
    items_pane(app, f, a.items);
    detail_pane(app, f, a.detail);
    status_bar(app, f, a.status);
    match app.popup {
        Some(Popup::Help { scroll }) => help_popup(app, f, area, scroll),
        Some(Popup::Problems { scroll }) => problems_popup(app, f, area, scroll),
        Some(Popup::Models { cursor }) => models_popup(app, f, area, cursor),
        None => {}
    }
}

fn pane<'a>(theme: &Theme, title: Line<'a>, focused: bool) -> Block<'a> {
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

fn title_bar(app: &App, f: &mut Frame, area: Rect) {
    let t = &app.theme;
    let ds = &app.ds;
    let mut spans = vec![
        Span::styled(" prism ", t.accent().add_modifier(Modifier::REVERSED)),
        Span::raw(" "),
        Span::styled(sanitize(&ds.label).into_owned(), t.base()),
        Span::styled(
            format!("  {} items · {} tasks", ds.items.len(), ds.tasks.len()),
            t.muted(),
        ),
    ];
    let errors = app.error_count();
    if errors > 0 {
        spans.push(Span::styled(
            format!(
                "  ⚠ {errors} skipped ({} for details)",
                app.keymap.hint(Action::Problems)
            ),
            t.warning(),
        ));
    }
    f.render_widget(Paragraph::new(Line::from(spans)).style(t.base()), area);
}

fn tree_pane(app: &App, f: &mut Frame, area: Rect) {
    let t = &app.theme;
    let focused = app.focus == Focus::Tree;
    // Once answers are scored, each node shows the hallucination rate of up to three models
    // (named in the title, in column order).
    let rate_models: Vec<&String> = app.runs.scored_models.iter().take(3).collect();
    let title = if rate_models.is_empty() {
        Line::from(" Taxonomy ")
    } else {
        let names: Vec<String> = rate_models
            .iter()
            .map(|m| sanitize(m).into_owned())
            .collect();
        Line::from(vec![
            Span::raw(" Taxonomy "),
            Span::styled(format!("· H% {} ", names.join(" | ")), t.muted()),
        ])
    };
    let block = pane(t, title, focused);
    let inner = block.inner(area);
    f.render_widget(block, area);
    let height = inner.height as usize;
    let count_w = 6usize + 6 * rate_models.len();
    let rows: Vec<Line> = app
        .tree
        .visible
        .iter()
        .enumerate()
        .skip(app.tree_offset)
        .take(height)
        .map(|(row, &n)| {
            let node = &app.tree.nodes[n];
            let marker = if !app.tree.has_children(n) {
                "  "
            } else if app.tree.is_expanded(n) {
                "▾ "
            } else {
                "▸ "
            };
            let indent = "  ".repeat(node.depth as usize);
            let (label, style) = match node.id {
                NodeId::Dim(d) => (
                    format!("{} {}", d.code(), d.name()),
                    Style::default()
                        .fg(t.dimension(d))
                        .add_modifier(Modifier::BOLD),
                ),
                NodeId::Cat(c) => {
                    let cat = &CATEGORIES[c];
                    (
                        format!("{} {}", cat.code, cat.name),
                        Style::default().fg(t.dimension(cat.dimension)),
                    )
                }
                NodeId::Task(ti) => (app.ds.tasks[ti].name.clone(), t.base()),
            };
            // The count column: run progress when a run covers the node, else the item count;
            // marked items are flagged after the label.
            let tasks = app.tree.tasks_under(n);
            let progress = app.runs.active.as_ref().and_then(|run| {
                let (d, t) = tasks
                    .iter()
                    .filter_map(|t| run.per_task.get(t))
                    .fold((0, 0), |(a, b), (d, t)| (a + d, b + t));
                (t > 0).then_some((d, t))
            });
            let marked: usize = tasks.iter().map(|&t| app.marked_per_task[t]).sum();
            let count = match progress {
                Some((d, t)) => format!("{d}/{t}"),
                None => node.items.len().to_string(),
            };
            let count_style = match progress {
                Some((d, t)) if d == t => t_success(t_theme(app)),
                Some(_) => t.accent(),
                None => t.muted(),
            };
            let label = if marked > 0 {
                format!("{label} ✓{marked}")
            } else {
                label
            };
            let rates: Vec<Span> = rate_models
                .iter()
                .map(|m| match app.runs.rate(&tasks, m) {
                    Some((r, _)) => {
                        Span::styled(format!("{r:>5.1} "), Style::default().fg(t.heat(r)))
                    }
                    None => Span::styled("    - ", t.muted()),
                })
                .collect();
            let rates_w = 6 * rates.len();
            let used = indent.chars().count() + 2;
            let room = (inner.width as usize).saturating_sub(used + count_w);
            let label = truncate(&label, room);
            let pad = (inner.width as usize).saturating_sub(
                used + unicode_width::UnicodeWidthStr::width(label.as_str())
                    + count.len()
                    + rates_w,
            );
            let mut spans = vec![
                Span::raw(indent),
                Span::styled(marker, t.muted()),
                Span::styled(label, style),
                Span::raw(" ".repeat(pad)),
            ];
            spans.extend(rates);
            spans.push(Span::styled(count, count_style));
            let line = Line::from(spans);
            if row == app.tree_sel {
                line.style(t.selected(focused))
            } else {
                line
            }
        })
        .collect();
    f.render_widget(Paragraph::new(rows), inner);
    scrollbar(f, area, app.tree.visible.len(), app.tree_offset, height);
}

fn items_pane(app: &App, f: &mut Frame, area: Rect) {
    let t = &app.theme;
    let focused = app.focus == Focus::Items;
    let range = app.current_range();
    let node_title = app
        .tree
        .visible
        .get(app.tree_sel)
        .map(|&n| app.node_title(app.tree.nodes[n].id))
        .unwrap_or_default();
    let title = Line::from(vec![
        Span::raw(" "),
        Span::styled(
            truncate(&node_title, area.width.saturating_sub(14) as usize),
            t.accent(),
        ),
        Span::styled(format!(" {} ", range.len()), t.muted()),
    ]);
    let block = pane(t, title, focused);
    let inner = block.inner(area);
    f.render_widget(block, area);
    let height = inner.height as usize;
    let re = app.search.regex.as_ref();
    let id_w = range
        .clone()
        .skip(app.item_offset)
        .take(height)
        .map(|i| app.ds.items[i].id.chars().count())
        .max()
        .unwrap_or(0)
        .min(inner.width as usize / 2);
    let rows: Vec<Line> = range
        .clone()
        .enumerate()
        .skip(app.item_offset)
        .take(height)
        .map(|(row, i)| {
            let item = &app.ds.items[i];
            let id = truncate(&item.id, id_w);
            let pad = " ".repeat(
                id_w.saturating_sub(unicode_width::UnicodeWidthStr::width(id.as_str())) + 1,
            );
            let preview = one_line(&item.question);
            let room = (inner.width as usize).saturating_sub(id_w + 2);
            let mark = if app.marked[i] { "✓" } else { " " };
            let mut spans = vec![Span::styled(mark, t.success())];
            spans.extend(highlight(&id, re, t.accent(), t.search_match()));
            spans.push(Span::raw(pad));
            spans.extend(highlight(
                &truncate(&preview, room),
                re,
                t.base(),
                t.search_match(),
            ));
            let line = Line::from(spans);
            if row == app.item_sel {
                line.style(t.selected(focused))
            } else {
                line
            }
        })
        .collect();
    if rows.is_empty() {
        f.render_widget(
            Paragraph::new(Line::styled("no items here", t.muted())).alignment(Alignment::Center),
            inner,
        );
    } else {
        f.render_widget(Paragraph::new(rows), inner);
    }
    scrollbar(f, area, range.len(), app.item_offset, height);
}

/// The detail of the selected item, as lines (shared by drawing and scroll limits).
pub fn detail_lines(app: &App) -> Vec<Line<'static>> {
    let Some(idx) = app.current_item() else {
        return vec![Line::styled("Select an item.", app.theme.muted())];
    };
    item_detail(
        &app.ds,
        &app.ds.items[idx],
        &app.theme,
        app.search.regex.as_ref(),
    )
}

/// How many rows the detail takes when wrapped to `width`.
pub fn detail_line_count(app: &App, width: u16) -> usize {
    Paragraph::new(detail_lines(app))
        .wrap(Wrap { trim: false })
        .line_count(width.max(1))
}

fn item_detail(ds: &Dataset, item: &Item, t: &Theme, re: Option<&Regex>) -> Vec<Line<'static>> {
    let task = ds.task_of(item);
    let mut out: Vec<Line<'static>> = Vec::new();
    let label = |s: &str| Span::styled(format!("{s:<12}"), t.muted());
    let hl = |s: &str, base: Style| highlight(&sanitize(s), re, base, t.search_match());
    let mut id_line = vec![label("id")];
    id_line.extend(hl(&item.id, t.accent()));
    out.push(Line::from(id_line));
    out.push(Line::from(vec![
        label("task"),
        Span::styled(task.id.clone(), t.base()),
        Span::styled(
            format!(
                "  {} {} · {}",
                task.dimension.code(),
                task.category.name,
                task.dimension.name()
            ),
            Style::default().fg(t.dimension(task.dimension)),
        ),
    ]));
    out.push(Line::from(vec![
        label("evaluator"),
        Span::styled(
            task.evaluator.to_string(),
            t.base().add_modifier(Modifier::BOLD),
        ),
        Span::styled(format!("  {}", task.evaluator.describe()), t.muted()),
    ]));
    if let Some(s) = &item.source_id {
        let mut l = vec![label("source id")];
        l.extend(hl(s, t.base()));
        out.push(Line::from(l));
    }
    if let Some(a) = &item.answer {
        let mut l = vec![label("reference")];
        l.extend(hl(a, t.success().add_modifier(Modifier::BOLD)));
        out.push(Line::from(l));
    }
    // Constraints: what the evaluator will check beyond the answer.
    if let Some([lo, hi]) = item.word_range {
        out.push(Line::from(vec![
            label("word range"),
            Span::styled(format!("{lo}–{hi} words"), t.warning()),
        ]));
    }
    if let Some(lang) = &item.language {
        out.push(Line::from(vec![
            label("language"),
            Span::styled(
                format!("{} ({})", sanitize(lang), language_name(lang)),
                t.warning(),
            ),
        ]));
    }
    if let Some(fmt) = &item.format {
        out.push(Line::from(vec![
            label("format"),
            Span::styled(sanitize(fmt).into_owned(), t.warning()),
        ]));
    }
    if let Some(id) = &item.instruction_id {
        out.push(Line::from(vec![
            label("instruction"),
            Span::styled(sanitize(id).into_owned(), t.warning()),
        ]));
    }
    if let Some(kw) = item.kwargs.as_ref().filter(|k| {
        k.iter()
            .any(|o| o.as_object().is_some_and(|m| !m.is_empty()))
    }) {
        for o in kw
            .iter()
            .filter(|o| o.as_object().is_some_and(|m| !m.is_empty()))
        {
            out.push(Line::from(vec![
                label("  kwargs"),
                Span::styled(sanitize(&o.to_string()).into_owned(), t.warning()),
            ]));
        }
    }
    if let Some(exp) = &item.test_output {
        out.push(Line::from(vec![
            label("expected"),
            Span::styled(sanitize(exp).into_owned(), t.success()),
        ]));
    }
    for (k, v) in item.extra.iter() {
        let shown = match v {
            serde_json::Value::String(s) => s.clone(),
            other => other.to_string(),
        };
        out.push(Line::from(vec![
            label(&sanitize(k)),
            Span::styled(one_line(&shown), t.base()),
        ]));
    }
    out.push(Line::raw(""));
    let prompt_note = match &task.prompt {
        Some(p) if ds.prompts.tasks.contains_key(p) => format!("prompt {p}.md + question"),
        Some(p) => format!("prompt {p}.md is missing: question only"),
        None => "no task prompt: question only".into(),
    };
    out.push(Line::from(vec![
        Span::styled("── as the model sees it ", t.accent()),
        Span::styled(format!("({prompt_note}) "), t.muted()),
    ]));
    // The task prompt is shared by every item of the task, so it is dimmed; the question, which
    // is what differs, stands out. Together they are exactly the message sent.
    if let Some(prompt) = task.prompt.as_ref().and_then(|p| ds.prompts.tasks.get(p)) {
        for line in sanitize(prompt.trim_end()).lines() {
            out.push(Line::styled(line.to_string(), t.muted()));
        }
        out.push(Line::raw(""));
    }
    let question = crate::prompt::format_question(item);
    for line in sanitize(&question).lines() {
        out.push(Line::from(highlight(line, re, t.base(), t.search_match())));
    }
    out
}

fn language_name(code: &str) -> &'static str {
    match code.trim().to_ascii_lowercase().as_str() {
        "zh" | "zh-cn" | "zh-tw" => "Chinese",
        "ja" => "Japanese",
        "fr" => "French",
        "de" => "German",
        "ru" => "Russian",
        "es" => "Spanish",
        "en" => "English",
        "ko" => "Korean",
        "it" => "Italian",
        "pt" => "Portuguese",
        "ar" => "Arabic",
        "bg" => "Bulgarian",
        _ => "other",
    }
}

fn detail_pane(app: &App, f: &mut Frame, area: Rect) {
    let t = &app.theme;
    let focused = app.focus == Focus::Detail;
    let block = pane(t, Line::from(" Item "), focused);
    let inner = block.inner(area);
    let lines = detail_lines(app);
    let para = Paragraph::new(lines).wrap(Wrap { trim: false });
    let total = para.line_count(inner.width.max(1));
    let max = total.saturating_sub(inner.height as usize);
    let scroll = (app.detail_scroll as usize).min(max);
    f.render_widget(para.scroll((scroll as u16, 0)).block(block), area);
    scrollbar(f, area, total, scroll, inner.height as usize);
}

fn status_bar(app: &App, f: &mut Frame, area: Rect) {
    let t = &app.theme;
    if let Some(input) = &app.search.input {
        let [label, field, count] = Layout::horizontal([
            Constraint::Length(2),
            Constraint::Min(10),
            Constraint::Length(18),
        ])
        .areas(area);
        f.render_widget(Paragraph::new(Span::styled("/", t.accent())), label);
        let mut ta = input.clone();
        ta.set_style(t.base());
        ta.set_cursor_line_style(Style::default());
        f.render_widget(&ta, field);
        f.render_widget(
            Paragraph::new(Span::styled(match_count(app), t.muted())).alignment(Alignment::Right),
            count,
        );
        return;
    }
    let line = if let Some(n) = &app.notice {
        Line::styled(format!(" {}", one_line(n)), t.warning())
    } else {
        let k = &app.keymap;
        let mut spans = Vec::new();
        if app.search.regex.is_some() {
            spans.push(Span::styled(
                format!(" /{} ", one_line(&app.search.query)),
                t.accent(),
            ));
            spans.push(Span::styled(
                format!(
                    "{}  {}/{} next/prev · {} clear  ",
                    match_count(app),
                    k.hint(Action::NextMatch),
                    k.hint(Action::PrevMatch),
                    k.hint(Action::Cancel)
                ),
                t.muted(),
            ));
        }
        spans.push(Span::styled(
            format!(
                " {} move  {} open  {} pane  {} search  {} expand all  {} help  {} quit",
                "↑↓",
                k.hint(Action::Toggle),
                k.hint(Action::NextPane),
                k.hint(Action::Search),
                k.hint(Action::ExpandAll),
                k.hint(Action::Help),
                k.hint(Action::Quit)
            ),
            t.muted(),
        ));
        Line::from(spans)
    };
    f.render_widget(Paragraph::new(line).style(t.base()), area);
}

fn match_count(app: &App) -> String {
    let n = app.search.matches.len();
    match (n, app.search.current) {
        (0, _) if app.search.query.trim().is_empty() => String::new(),
        (0, _) => "no matches".into(),
        (n, Some(c)) => format!("match {}/{}", c + 1, n),
        (n, None) => format!("{n} matches"),
    }
}

fn popup_area(area: Rect, w: u16, h: u16) -> Rect {
    let w = w.min(area.width.saturating_sub(2)).max(10.min(area.width));
    let h = h.min(area.height.saturating_sub(2)).max(3.min(area.height));
    Rect::new(
        area.x + (area.width.saturating_sub(w)) / 2,
        area.y + (area.height.saturating_sub(h)) / 2,
        w,
        h,
    )
}

pub(super) fn help_popup(app: &App, f: &mut Frame, area: Rect, scroll: u16) {
    let t = &app.theme;
    let rows = app.keymap.help_rows();
    let r = popup_area(area, 72, rows.len() as u16 + 6);
    f.render_widget(Clear, r);
    let block = pane(t, Line::from(" Keys (esc to close) "), true);
    let inner = block.inner(r);
    f.render_widget(block, r);
    let table_rows: Vec<Row> = rows
        .into_iter()
        .skip(scroll as usize)
        .map(|(keys, desc)| {
            Row::new(vec![
                Span::styled(keys, t.accent()),
                Span::styled(desc, t.base()),
            ])
        })
        .collect();
    let [table_area, foot] =
        Layout::vertical([Constraint::Min(1), Constraint::Length(2)]).areas(inner);
    f.render_widget(
        Table::new(table_rows, [Constraint::Length(20), Constraint::Min(10)]).style(t.base()),
        table_area,
    );
    f.render_widget(
        Paragraph::new(Text::from(vec![
            Line::raw(""),
            Line::styled(
                "Mouse: wheel scrolls the pane under it; click selects; click again opens.",
                t.muted(),
            ),
        ])),
        foot,
    );
}

fn problems_popup(app: &App, f: &mut Frame, area: Rect, scroll: u16) {
    let t = &app.theme;
    let r = popup_area(
        area,
        area.width.saturating_sub(8),
        area.height.saturating_sub(4),
    );
    f.render_widget(Clear, r);
    let n = app.problems.len();
    let block = pane(
        t,
        Line::from(format!(
            " {n} problem{} found while loading (esc to close) ",
            if n == 1 { "" } else { "s" }
        )),
        true,
    );
    let lines: Vec<Line> = if app.problems.is_empty() {
        vec![Line::styled("Every line loaded. No problems.", t.success())]
    } else {
        app.problems
            .iter()
            .map(|p| {
                Line::styled(
                    one_line(&p.to_string()),
                    if p.is_error() { t.error() } else { t.warning() },
                )
            })
            .collect()
    };
    f.render_widget(
        Paragraph::new(lines)
            .wrap(Wrap { trim: false })
            .scroll((scroll, 0))
            .block(block),
        r,
    );
}

fn scrollbar(f: &mut Frame, area: Rect, total: usize, offset: usize, visible: usize) {
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
pub(super) fn truncate(s: &str, max: usize) -> String {
    use unicode_width::{UnicodeWidthChar, UnicodeWidthStr};
    if s.width() <= max {
        return s.to_string();
    }
    if max == 0 {
        return String::new();
    }
    let mut out = String::new();
    let mut w = 0;
    for c in s.chars() {
        let cw = c.width().unwrap_or(0);
        if w + cw > max - 1 {
            break;
        }
        w += cw;
        out.push(c);
    }
    out.push('…');
    out
}

fn t_theme(app: &App) -> &Theme {
    &app.theme
}

fn t_success(t: &Theme) -> Style {
    t.success()
}

pub(super) fn models_popup(app: &App, f: &mut Frame, area: Rect, cursor: usize) {
    let t = &app.theme;
    let items = app.run_items();
    let r = popup_area(area, 76, app.models.len() as u16 + 7);
    f.render_widget(Clear, r);
    let chosen = app.chosen.iter().filter(|c| **c).count();
    let block = pane(
        t,
        Line::from(format!(
            " Run {} item{} × {chosen} model{} ",
            items.len(),
            if items.len() == 1 { "" } else { "s" },
            if chosen == 1 { "" } else { "s" }
        )),
        true,
    );
    let inner = block.inner(r);
    f.render_widget(block, r);
    let mut lines: Vec<Line> = app
        .models
        .iter()
        .enumerate()
        .map(|(i, m)| {
            let check = if app.chosen.get(i).copied().unwrap_or(false) {
                "[x]"
            } else {
                "[ ]"
            };
            let key = match m.key_status() {
                crate::provider::config::KeyStatus::Missing(v) => format!("  {v} not set"),
                _ => String::new(),
            };
            let line = Line::from(vec![
                Span::styled(format!("{check} "), t.accent()),
                Span::styled(format!("{:<18}", sanitize(&m.name)), t.base()),
                Span::styled(
                    format!("{} {}", m.provider.as_str(), sanitize(m.model_id())),
                    t.muted(),
                ),
                Span::styled(key, t.error()),
            ]);
            if i == cursor {
                line.style(t.selected(true))
            } else {
                line
            }
        })
        .collect();
    lines.push(Line::raw(""));
    lines.push(Line::styled(
        format!(
            "{} choose · {} start · {} cancel",
            app.keymap.hint(Action::Mark),
            app.keymap.hint(Action::Toggle),
            app.keymap.hint(Action::Cancel)
        ),
        t.muted(),
    ));
    f.render_widget(Paragraph::new(lines), inner);
}
