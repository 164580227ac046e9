//! The browse screen drawn: the title bar, the tree with its rates, the items, the detail and the status bar.

use super::*;
use regex::Regex;

pub(super) fn title_bar(cx: &Cx, f: &mut Frame, area: Rect) {
    let t = cx.theme;
    let ds = cx.ds;
    let mut spans = vec![
        Span::raw(" "),
        Span::styled(sanitize(&ds.label).into_owned(), t.base()),
        Span::styled(
            format!("  {} items · {} tasks", ds.items.len(), ds.tasks.len()),
            t.muted(),
        ),
    ];
    let errors = cx.problems.iter().filter(|p| p.is_error()).count();
    if errors > 0 {
        spans.push(Span::styled(
            format!(
                "  ⚠ {errors} skipped ({} for details)",
                cx.keymap.hint(Mode::Browse, Action::Problems)
            ),
            t.warning(),
        ));
    }
    f.render_widget(Paragraph::new(title_line(t, spans)).style(t.base()), area);
}

impl Browse {
    pub(super) fn tree_pane(&self, cx: &Cx, f: &mut Frame, area: Rect) {
        let t = cx.theme;
        let focused = self.focus == Focus::Tree;
        let inner_w = area.width.saturating_sub(2) as usize;
        let height = area.height.saturating_sub(2) as usize;
        let shown: Vec<usize> = self
            .tree
            .visible
            .iter()
            .skip(self.tree_offset)
            .take(height)
            .copied()
            .collect();
        // The count column (run progress, else items), right-aligned, as wide as its widest.
        let counts: Vec<(String, Style)> = shown.iter().map(|&n| self.count_cell(cx, n)).collect();
        let count_w = counts.iter().map(|c| c.0.len()).max().unwrap_or(5).max(5);
        // Once answers are scored, each node shows the hallucination rate of as many models
        // as fit beside a readable label, each column as wide as its widest number (nothing is
        // cut); the title names them in column order and how many more `M` brings in.
        let models = &cx.session.scored_models;
        let (cols, title) = self.rate_columns(cx, &shown, inner_w, count_w);
        self.models_shown.set(cols.len());
        let block = pane(t, title, focused);
        let inner = block.inner(area);
        f.render_widget(block, area);
        if self.tree.visible.is_empty() {
            f.render_widget(
                Paragraph::new(Line::styled("no tasks in this dataset", t.muted())),
                inner,
            );
            return;
        }
        let rates_w: usize = cols.iter().map(|c| c.width + 1).sum();
        let _ = models;
        let rows: Vec<Line> = shown
            .iter()
            .zip(counts)
            .enumerate()
            .map(|(k, (&n, (count, count_style)))| {
                let row = self.tree_offset + k;
                let node = &self.tree.nodes[n];
                let marker = if !self.tree.has_children(n) {
                    "  "
                } else if self.tree.is_expanded(n) {
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
                    NodeId::Task(ti) => (sanitize(&cx.ds.tasks[ti].name).into_owned(), t.base()),
                };
                let marked: usize = self
                    .tree
                    .tasks_under(n)
                    .iter()
                    .map(|&t| self.marked_per_task[t])
                    .sum();
                let label = if marked > 0 {
                    format!("{label} ✓{marked}")
                } else {
                    label
                };
                let count = format!("{count:>count_w$}");
                let used = indent.chars().count() + 2;
                let room = inner_w.saturating_sub(used + count_w + rates_w + 1);
                let label = truncate(&label, room);
                let pad = inner_w.saturating_sub(
                    used + unicode_width::UnicodeWidthStr::width(label.as_str())
                        + count_w
                        + rates_w,
                );
                let mut spans = vec![
                    Span::raw(indent),
                    Span::styled(marker, t.muted()),
                    Span::styled(label, style),
                    Span::raw(" ".repeat(pad)),
                ];
                for col in &cols {
                    let (text, st) = &col.cells[k];
                    spans.push(Span::styled(format!("{text:>w$} ", w = col.width), *st));
                }
                spans.push(Span::styled(count, count_style));
                let line = Line::from(spans);
                if row == self.tree_sel {
                    line.style(t.selected(focused))
                } else {
                    line
                }
            })
            .collect();
        f.render_widget(Paragraph::new(rows), inner);
        scrollbar(f, area, self.tree.visible.len(), self.tree_offset, height);
    }

    /// A node's count cell: run progress when a run covers it, else its item count.
    pub(super) fn count_cell(&self, cx: &Cx, n: usize) -> (String, Style) {
        let t = cx.theme;
        let tasks = self.tree.tasks_under(n);
        let progress = cx.session.active.as_ref().and_then(|run| {
            let (d, t) = tasks
                .iter()
                .filter_map(|t| run.per_task.get(t))
                .fold((0, 0), |(a, b), (d, t)| (a + d, b + t));
            (t > 0).then_some((d, t))
        });
        match progress {
            Some((d, tt)) if d == tt => (format!("{d}/{tt}"), t.success()),
            Some((d, tt)) => (format!("{d}/{tt}"), t.accent()),
            None => (self.tree.nodes[n].items.len().to_string(), t.muted()),
        }
    }

    /// The rate columns that fit beside a readable label (from `model_offset` on, wrapping),
    /// with their cells for the `shown` nodes, and the pane's title naming them.
    fn rate_columns(
        &self,
        cx: &Cx,
        shown: &[usize],
        inner_w: usize,
        count_w: usize,
    ) -> (Vec<RateColumn>, Line<'static>) {
        let t = cx.theme;
        let models = &cx.session.scored_models;
        if models.is_empty() {
            return (Vec::new(), Line::from(" Taxonomy "));
        }
        // A label keeps this much room (with its indent and marker) before a column is added.
        const LABEL_MIN: usize = 12;
        let mut cols: Vec<RateColumn> = Vec::new();
        let mut used = LABEL_MIN + count_w;
        for k in 0..models.len() {
            let m = &models[(self.model_offset + k) % models.len()];
            let cells: Vec<(String, Style)> = shown
                .iter()
                .map(|&n| rate_cell(cx.session.node_rate(&self.tree.tasks_under(n), m), t))
                .collect();
            let width = cells
                .iter()
                .map(|c| c.0.chars().count())
                .max()
                .unwrap_or(1)
                .max(5);
            // The first column is always shown: at worst the label gives way.
            if !cols.is_empty() && used + width + 1 > inner_w {
                break;
            }
            used += width + 1;
            cols.push(RateColumn {
                model: m.clone(),
                width,
                cells,
            });
        }
        let more = models.len() - cols.len();
        let key = cx.keymap.hint(Mode::Browse, Action::Models);
        // The fullest title that fits: names share what is left after the words around them
        // (a long one is shortened, never a number); then "Taxonomy" goes, then "more".
        let variants = [
            (" Taxonomy · H% ", format!(" +{more} more ({key})")),
            (" H% ", format!(" +{more} more ({key})")),
            (" H% ", format!(" +{more} ({key})")),
        ];
        let seps = 3 * (cols.len() - 1) + 1;
        let mut chosen = None;
        for (head, tail) in &variants {
            let tail = if more > 0 {
                tail.clone()
            } else {
                String::new()
            };
            let fixed = head.chars().count() + tail.chars().count() + seps;
            let each = inner_w.saturating_sub(fixed) / cols.len();
            if each >= 4 || head == &" H% " && tail.contains(" (") && !tail.contains("more") {
                chosen = Some((*head, tail, each.max(3)));
                break;
            }
        }
        let (head, tail, each) = chosen.unwrap_or((" H% ", String::new(), 3));
        let all: Vec<String> = models.iter().map(|m| sanitize(m).into_owned()).collect();
        let names: Vec<String> = cols
            .iter()
            .map(|c| short_name(&sanitize(&c.model), &all, each))
            .collect();
        let title = if head.starts_with(" Taxonomy") {
            Line::from(vec![
                Span::raw(" Taxonomy "),
                Span::styled(format!("· H% {}{tail} ", names.join(" | ")), t.muted()),
            ])
        } else {
            Line::from(Span::styled(
                format!("{head}{}{tail} ", names.join(" | ")),
                t.muted(),
            ))
        };
        (cols, title)
    }

    pub(super) fn items_pane(&self, cx: &Cx, f: &mut Frame, area: Rect) {
        let t = cx.theme;
        let focused = self.focus == Focus::Items;
        let range = self.current_range();
        let node_title = self
            .node()
            .map(|n| self.node_title(cx.ds, self.tree.nodes[n].id))
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
        let re = self.search.regex.as_ref();
        let ids: Vec<(usize, String)> = range
            .clone()
            .enumerate()
            .skip(self.item_offset)
            .take(height)
            .map(|(row, i)| (row, one_line(&cx.ds.items[i].id)))
            .collect();
        let id_w = ids
            .iter()
            .map(|(_, id)| unicode_width::UnicodeWidthStr::width(id.as_str()))
            .max()
            .unwrap_or(0)
            .min(inner.width as usize / 2);
        let rows: Vec<Line> = ids
            .into_iter()
            .map(|(row, id)| {
                let i = range.start + row;
                let item = &cx.ds.items[i];
                let id = truncate(&id, id_w);
                let pad = " ".repeat(
                    id_w.saturating_sub(unicode_width::UnicodeWidthStr::width(id.as_str())) + 1,
                );
                let preview = one_line(&item.question);
                let room = (inner.width as usize).saturating_sub(id_w + 2);
                let mark = if self.marked[i] { "✓" } else { " " };
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
                if row == self.item_sel {
                    line.style(t.selected(focused))
                } else {
                    line
                }
            })
            .collect();
        if rows.is_empty() {
            f.render_widget(
                Paragraph::new(Line::styled("no items here", t.muted()))
                    .alignment(Alignment::Center),
                inner,
            );
        } else {
            f.render_widget(Paragraph::new(rows), inner);
        }
        scrollbar(f, area, range.len(), self.item_offset, height);
    }

    /// Draws the detail and returns how far it can scroll at this size.
    pub(super) fn detail_pane(&self, cx: &Cx, f: &mut Frame, area: Rect) -> usize {
        let t = cx.theme;
        let focused = self.focus == Focus::Detail;
        let block = pane(t, Line::from(" Item "), focused);
        let inner = block.inner(area);
        let lines = match self.current_item() {
            Some(idx) => item_detail(cx.ds, &cx.ds.items[idx], t, self.search.regex.as_ref()),
            None => vec![Line::styled("Select an item.", t.muted())],
        };
        let para = Paragraph::new(lines).wrap(Wrap { trim: false });
        let total = para.line_count(inner.width.max(1));
        let max = total.saturating_sub(inner.height as usize);
        let scroll = (self.detail_scroll as usize).min(max);
        f.render_widget(para.scroll((scroll as u16, 0)).block(block), area);
        scrollbar(f, area, total, scroll, inner.height as usize);
        max
    }

    pub(super) fn status_bar(&self, cx: &Cx, f: &mut Frame, area: Rect) {
        let t = cx.theme;
        if let Some(input) = &self.search.input {
            let [label, field, count] = Layout::horizontal([
                Constraint::Length(2),
                Constraint::Min(10),
                Constraint::Length(18),
            ])
            .areas(area);
            f.render_widget(Paragraph::new(Span::styled("/", t.accent())), label);
            input.clone().draw(f, field, t);
            f.render_widget(
                Paragraph::new(Span::styled(self.match_count(), t.muted()))
                    .alignment(Alignment::Right),
                count,
            );
            return;
        }
        let line = if let Some(n) = cx.notice {
            Line::styled(format!(" {}", one_line(n)), t.warning())
        } else {
            let k = |a| cx.keymap.hint(Mode::Browse, a);
            let mut spans = Vec::new();
            // A run left with esc goes on: its progress here, and the way back to it.
            if let Some(run) = cx.session.active.as_ref().filter(|r| r.running()) {
                spans.push(Span::styled(
                    format!(
                        " {} {}/{} running · {} back to it ",
                        one_line(&run.run_id),
                        run.done + run.failed,
                        run.total,
                        k(Action::Back)
                    ),
                    t.accent(),
                ));
            }
            if self.search.regex.is_some() {
                spans.push(Span::styled(
                    format!(" /{} ", one_line(&self.search.query)),
                    t.accent(),
                ));
                spans.push(Span::styled(
                    format!(
                        "{}  {}/{} next/prev · {} clear  ",
                        self.match_count(),
                        k(Action::NextMatch),
                        k(Action::PrevMatch),
                        k(Action::Cancel)
                    ),
                    t.muted(),
                ));
            }
            spans.push(Span::styled(
                format!(
                    " {} move  {} open  {} pane  {} search  {} expand all  {} help  {} quit",
                    "↑↓",
                    k(Action::Toggle),
                    k(Action::NextPane),
                    k(Action::Search),
                    k(Action::ExpandAll),
                    k(Action::Help),
                    k(Action::Quit)
                ),
                t.muted(),
            ));
            Line::from(spans)
        };
        f.render_widget(Paragraph::new(line).style(t.base()), area);
    }

    pub(super) fn match_count(&self) -> String {
        let n = self.search.matches.len();
        match (n, self.search.current) {
            (0, _) if self.search.query.trim().is_empty() => String::new(),
            (0, _) => "no matches".into(),
            (n, Some(c)) => format!("match {}/{}", c + 1, n),
            (1, None) => "1 match".into(),
            (n, None) => format!("{n} matches"),
        }
    }
}

/// A tree cell: the rate, or how many answers are scored while some await a judge.
/// A model's name in at most `width` columns, told apart from the `others`: when it must be
/// shortened, what every name shares at its start and end goes first (`model-00-of-a-team`
/// and `model-01-of-a-team` become `…00…` and `…01…`), then the rest is cut.
pub(super) fn short_name(name: &str, others: &[String], width: usize) -> String {
    use unicode_width::UnicodeWidthStr;
    if name.width() <= width || others.len() < 2 {
        return truncate(name, width);
    }
    let chars: Vec<char> = name.chars().collect();
    let common = |rev: bool| {
        let mut n = chars.len();
        for o in others {
            let oc: Vec<char> = o.chars().collect();
            let same = if rev {
                chars
                    .iter()
                    .rev()
                    .zip(oc.iter().rev())
                    .take_while(|(a, b)| a == b)
                    .count()
            } else {
                chars
                    .iter()
                    .zip(oc.iter())
                    .take_while(|(a, b)| a == b)
                    .count()
            };
            n = n.min(same);
        }
        n
    };
    let pre = common(false);
    let suf = common(true).min(chars.len().saturating_sub(pre));
    let middle: String = chars[pre..chars.len() - suf].iter().collect();
    if middle.is_empty() {
        return truncate(name, width);
    }
    let marked = format!(
        "{}{middle}{}",
        if pre > 0 { "…" } else { "" },
        if suf > 0 { "…" } else { "" }
    );
    truncate(&marked, width)
}

/// One model's rate column in the tree.
struct RateColumn {
    model: String,
    width: usize,
    cells: Vec<(String, Style)>,
}

/// A node's rate for one model: the rate, or `scored/answered` while some answers wait for a
/// judge (whole: the column widens to it), or `-`.
pub(super) fn rate_cell(rate: Option<NodeRate>, t: &Theme) -> (String, Style) {
    match rate {
        Some(NodeRate::Rate(r)) => (format!("{r:.1}"), Style::default().fg(t.heat(r))),
        // A count, never a rate: marked (the status line says what the mark means).
        Some(NodeRate::Partial { scored, answered }) => {
            (format!("⧗{scored}/{answered}"), t.warning())
        }
        None => ("-".to_string(), t.muted()),
    }
}

/// Every item any of whose searchable fields matches, in dataset order.
pub fn find_matches(ds: &Dataset, re: &Regex) -> Vec<usize> {
    ds.items
        .iter()
        .enumerate()
        .filter(|(_, it)| it.search_fields().any(|f| re.is_match(f)))
        .map(|(i, _)| i)
        .collect()
}

/// The item detail: its fields, what the evaluator checks, and the message sent.
pub fn item_detail(ds: &Dataset, item: &Item, t: &Theme, re: Option<&Regex>) -> Vec<Line<'static>> {
    let task = ds.task_of(item);
    let mut out: Vec<Line<'static>> = Vec::new();
    let label = |s: &str| Span::styled(format!("{s:<12}"), t.muted());
    let hl = |s: &str, base: Style| highlight(&one_line(s), re, base, t.search_match());
    let mut id_line = vec![label("id")];
    id_line.extend(hl(&item.id, t.accent()));
    out.push(Line::from(id_line));
    out.push(Line::from(vec![
        label("task"),
        Span::styled(one_line(&task.id), t.base()),
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
                format!("{} ({})", one_line(lang), crate::eval::language::name(lang)),
                t.warning(),
            ),
        ]));
    }
    if let Some(fmt) = &item.format {
        out.push(Line::from(vec![
            label("format"),
            Span::styled(one_line(fmt), t.warning()),
        ]));
    }
    if let Some(id) = &item.instruction_id {
        out.push(Line::from(vec![
            label("instruction"),
            Span::styled(one_line(id), t.warning()),
        ]));
    }
    if let Some(kw) = &item.kwargs {
        for o in kw
            .iter()
            .filter(|o| o.as_object().is_some_and(|m| !m.is_empty()))
        {
            out.push(Line::from(vec![
                label("  kwargs"),
                Span::styled(one_line(&o.to_string()), t.warning()),
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
            label(&one_line(k)),
            Span::styled(one_line(&shown), t.base()),
        ]));
    }
    out.push(Line::raw(""));
    let prompt_note = match &task.prompt {
        Some(p) if ds.prompts.tasks.contains_key(p) => {
            format!("prompt {}.md + question", one_line(p))
        }
        Some(p) => format!("prompt {}.md is missing: question only", one_line(p)),
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
