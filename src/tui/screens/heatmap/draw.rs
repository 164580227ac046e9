//! The heatmap drawn: the grid of rates (or flags, shares, signals), the drill-down and the agreement table.

use super::*;

impl Heatmap {
    /// What the grid says when it has no row: what the view needs that is missing.
    pub(super) fn nothing_to_show(&self) -> &'static str {
        match self.metric {
            Metric::Signals if self.signals.is_none() => "Reading the signals…",
            Metric::Signals => {
                "No answer has both a signal and a PRISM score yet: score a run (S, or prism score), then check its answers (x, d or prism detect), cluster its samples (prism entropy) or run it with --logprobs."
            }
            // Each view says what it needs that is missing (a view with nothing to
            // show while answers are scored once said "no scored answers yet").
            Metric::Split => {
                "No item has 2 or more scored samples yet: run items with more samples (+ in the run picker, or prism run --samples K)."
            }
            Metric::Flags if self.flags.is_none() => "Reading the detections…",
            Metric::Flags => {
                "No answer has been checked for contradictions yet: x on an answer, d on marked items, or prism detect."
            }
            Metric::Rate => {
                "No scored answers yet. Run items (r from browsing) or press R for the paper's published rows."
            }
        }
    }

    /// What the grid shows, in its border.
    fn grid_title(&self, rep: &crate::report::Report) -> String {
        match self.metric {
            // A cell of answers that wait for a judge is a count, never a rate: marked, and
            // the mark said here.
            Metric::Rate if rep.rows.iter().any(|r| !r.pending.is_empty()) => {
                " Hallucination rate % (lower is better) · * partial · ⧗2/6: 2 of 6 answered items scored, the rest wait for a judge (u) ".to_string()
            }
            Metric::Rate => " Hallucination rate % (lower is better) · * partial ".to_string(),
            Metric::Flags => {
                let undecided = self
                    .flags
                    .iter()
                    .flatten()
                    .filter(|f| f.outcome.undecided())
                    .count();
                format!(
                    " Answers flagged by self-contradiction % (any of K pairs conflicts){} · H-Score column: mean of the four ",
                    if undecided > 0 {
                        format!(" · {undecided} undecided left out (no verdict read)")
                    } else {
                        String::new()
                    }
                )
            }
            Metric::Split => {
                " Items whose samples disagree % (some right, some wrong; items with 2+ samples) · H-Score column: mean of the four ".to_string()
            }
            Metric::Signals => {
                " AUROC % of each signal against PRISM's verdict (higher predicts better, 50 chance; H-Score column: mean of the four) · - too few of a class · intervals: prism signals ".to_string()
            }
        }
    }

    pub(super) fn draw_grid(&mut self, cx: &Cx, f: &mut Frame, area: Rect) {
        let t = cx.theme;
        let Some(rep) = &self.report else { return };
        let block = Block::default()
            .borders(Borders::ALL)
            .border_type(BorderType::Rounded)
            .border_style(t.border(true))
            .title(self.grid_title(rep));
        let inner = block.inner(area);
        f.render_widget(block, area);
        let cols = rep.columns(self.view);
        let cw = cell_w(self.view, self.baseline.is_some());
        // The name column takes what the cells leave, up to the longest name: a long model
        // name is cut only when the grid needs the room.
        let longest = self
            .order
            .iter()
            .map(|&ri| {
                let r = &rep.rows[ri];
                let extra = if r.is_reference() { 6 } else { 0 };
                unicode_width::UnicodeWidthStr::width(one_line(&r.name).as_str()) + extra + 1
            })
            .max()
            .unwrap_or(0);
        let room = (inner.width as usize).saturating_sub(cols.len() * cw);
        let label_w = longest.clamp(LABEL_W, room.max(LABEL_W));
        self.label_w = label_w;
        let visible_cols = ((inner.width as usize).saturating_sub(label_w) / cw).max(1);
        // Keep the cursor's column in view.
        let mut off = self.col_offset.min(self.col);
        if self.col >= off + visible_cols {
            off = self.col + 1 - visible_cols;
        }
        self.col_offset = off;
        let shown: Vec<usize> = (off..cols.len()).take(visible_cols).collect();
        let mut lines = Vec::new();
        // Header: column names, the cursor's column highlighted.
        let mut head = vec![Span::raw(format!(
            "{:<label_w$}",
            if off > 0 { "◀" } else { "" }
        ))];
        for &c in &shown {
            let name = truncate(&cols[c], cw - 1);
            let style = if c == self.col {
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
        let row_off = self.row.saturating_sub(rows_room.saturating_sub(1));
        for (pos, &ri) in self.order.iter().enumerate().skip(row_off).take(rows_room) {
            let row = &rep.rows[ri];
            let on_row = pos == self.row;
            // A reference keeps its marker however long its name.
            let label = if row.is_reference() {
                format!("{} (ref)", truncate(&row.name, label_w - 7))
            } else {
                row.name.clone()
            };
            let label_style = match (on_row, row.is_reference()) {
                (true, _) => t.accent().add_modifier(Modifier::BOLD),
                (false, true) => t.muted().add_modifier(Modifier::ITALIC),
                (false, false) => t.base(),
            };
            let mut spans = vec![Span::styled(
                format!("{} ", crate::text::cell(&label, label_w - 1)),
                label_style,
            )];
            for &c in &shown {
                let cell = rep.cell(ri, self.view, c);
                let pending = rep.pending(ri, self.view, c);
                let mut text = match (pending, cell) {
                    // Answers await a judge here: how far scoring got, no rate.
                    (Some((s, a)), _) => format!("⧗{s}/{a}"),
                    (None, Some(c)) => c.text(),
                    (None, None) => "-".to_string(),
                };
                if pending.is_none()
                    && let Some(d) = rep.delta(ri, self.view, c)
                    && self.view == View::Dimensions
                {
                    text.push(' ');
                    text.push_str(&arrow(d));
                }
                let text = format!("{:>w$} ", truncate(&text, cw - 1), w = cw - 1);
                let mut style = match (pending, cell) {
                    (Some(_), _) => t.warning(),
                    (None, Some(cv)) if !t.monochrome => {
                        // An AUROC is good when high: its colour runs the other way.
                        let bg = t.heat(if self.metric == Metric::Signals {
                            100.0 - cv.value
                        } else {
                            cv.value
                        });
                        Style::default().bg(bg).fg(ink_on(bg))
                    }
                    (None, Some(_)) => t.base(),
                    (None, None) => t.muted(),
                };
                if on_row || c == self.col {
                    style = style.add_modifier(Modifier::BOLD);
                }
                if on_row && c == self.col {
                    style = style.add_modifier(Modifier::REVERSED);
                }
                spans.push(Span::styled(text, style));
            }
            lines.push(Line::from(spans));
        }
        if self.order.is_empty() {
            lines.push(Line::styled(self.nothing_to_show(), t.muted()));
        }
        f.render_widget(Paragraph::new(lines), inner);
        self.grid = inner;
        self.row_off = row_off;
        self.shown_cols = shown;
    }

    /// The status rows for a screen `width` columns wide.
    pub(super) fn status_lines(&self, cx: &Cx, width: usize) -> Vec<Line<'static>> {
        let t = cx.theme;
        let k = |a| cx.keymap.hint(self.mode(), a);
        let line = if let Some(n) = cx.notice {
            Line::styled(format!(" {}", one_line(n)), t.warning())
        } else if self.drill.is_some() {
            Line::styled(
                format!(
                    " {} open in compare  {} back to the cell  {} help",
                    k(Action::Toggle),
                    k(Action::Back),
                    k(Action::Help)
                ),
                t.muted(),
            )
        } else {
            let mut spans = Vec::new();
            if let (Some(rep), Some(&ri)) = (&self.report, self.order.get(self.row)) {
                let cols = rep.columns(self.view);
                let row = &rep.rows[ri];
                let col = cols.get(self.col).cloned().unwrap_or_default();
                let what = match (
                    rep.pending(ri, self.view, self.col),
                    rep.cell(ri, self.view, self.col),
                ) {
                    (Some((s, a)), _) => {
                        format!("{s}/{a} answered items scored, the rest await a judge")
                    }
                    (None, Some(c)) if c.partial => {
                        format!("{} (partial: {} of {} tasks)", c.text(), c.tasks, c.of)
                    }
                    (None, Some(c)) => c.text(),
                    (None, None) => "-".into(),
                };
                let mut s = format!(" {} · {col} · {what}", one_line(&row.name));
                if !row.is_reference() && self.metric == Metric::Rate {
                    let (n, of) = self.cell_coverage(cx, &row.name);
                    s.push_str(&format!(" · {n}/{of} items scored"));
                }
                if let (Some(d), Some(b)) = (rep.delta(ri, self.view, self.col), &self.baseline) {
                    s.push_str(&format!(" · {} vs {}", arrow(d), sanitize(b)));
                }
                spans.push(Span::styled(s, t.base()));
            }
            let pieces = [
                (Action::Toggle, "items"),
                (Action::Metric, "metric"),
                (Action::HeatView, "view"),
                (Action::Sort, "sort"),
                (Action::References, "published"),
                (Action::Baseline, "baseline"),
                (Action::Spearman, "correlation"),
                (Action::ToggleJudge, "judges"),
                (Action::Back, "back"),
            ]
            .map(|(a, what)| format!("{} {what}", k(a)));
            // The cell's facts and the keys on one line when they fit, else the keys on lines
            // of their own, as many as they need (the caller gives the status those rows):
            // never cut.
            let info: usize = spans.iter().map(|s| s.width()).sum();
            let all = pieces.join("  ");
            if info + 3 + all.len() <= width {
                spans.push(Span::styled(format!("   {all}"), t.muted()));
                return vec![Line::from(spans)];
            }
            let mut lines = vec![Line::from(spans)];
            let mut cur = String::new();
            for p in pieces {
                if !cur.is_empty() && cur.len() + 2 + p.len() + 1 > width {
                    lines.push(Line::styled(format!(" {cur}"), t.muted()));
                    cur.clear();
                }
                if !cur.is_empty() {
                    cur.push_str("  ");
                }
                cur.push_str(&p);
            }
            lines.push(Line::styled(format!(" {cur}"), t.muted()));
            return lines;
        };
        vec![line]
    }
}

pub(super) fn draw_drill(cx: &Cx, f: &mut Frame, area: Rect, d: &Drill) {
    let t = cx.theme;
    let block = Block::default()
        .borders(Borders::ALL)
        .border_type(BorderType::Thick)
        .border_style(t.border(true))
        .title(Line::from(vec![
            Span::styled(format!(" {} ", one_line(&d.model)), t.accent()),
            Span::styled(
                format!(
                    "· {} · {} items, {} ",
                    d.label,
                    d.items.len(),
                    match (&d.worst, d.by_sentence) {
                        (Some((_, m)), true) => format!("worst sentence first ({m})"),
                        (None, true) => "reading sentences…".to_string(),
                        _ => "worst first".to_string(),
                    }
                ),
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
            let item = &cx.ds.items[i];
            let h = 100.0 * (1.0 - score);
            let style = if t.monochrome {
                t.base()
            } else {
                let bg = t.heat(h);
                Style::default().bg(bg).fg(ink_on(bg))
            };
            let mut spans = vec![Span::styled(format!(" {score:.2} "), style)];
            // The worst sentence's score, when ranked by it (`-`: no samples to weigh it).
            if let (Some((w, _)), true) = (&d.worst, d.by_sentence) {
                spans.push(Span::styled(
                    w.get(&i)
                        .map_or(" s -    ".to_string(), |v| format!(" s {v:<5.2}")),
                    t.warning(),
                ));
            }
            spans.push(Span::styled(
                format!(" {:<28} ", one_line(&item.id)),
                t.accent(),
            ));
            spans.push(Span::styled(one_line(&item.question), t.base()));
            let line = Line::from(spans);
            if pos == d.sel {
                line.style(t.selected(true))
            } else {
                line
            }
        })
        .collect();
    f.render_widget(Paragraph::new(lines), inner);
}

/// The flag metric's rows: per model, the share of detected answers flagged, pooled over the
/// answers of each sub-task, category and dimension (a cell over more answers weighs them
/// all, unlike the rate's mean of task rates: flags are per answer, not per task score).
pub(super) fn flag_rows(flags: &[crate::detect::results::AnswerFlag]) -> Vec<Row> {
    let mut per: Shares = Shares::new();
    // An answer with no readable verdict is neither flagged nor cleared: left out (the
    // title says how many).
    for f in flags.iter().filter(|f| !f.outcome.undecided()) {
        let e = per
            .entry(f.model.clone())
            .or_default()
            .entry(f.task_id.clone())
            .or_default();
        e.0 += usize::from(f.outcome.flagged());
        e.1 += 1;
    }
    share_rows(&per, "detections")
}

/// Per model and sub-task: (hits, out of).
type Shares =
    std::collections::BTreeMap<String, std::collections::BTreeMap<String, (usize, usize)>>;

/// Heatmap rows of a share (flagged answers, items whose samples disagree): each cell the
/// share in %, pooled over the cell's sub-tasks; `task_scores` hold 100 − the share, as the
/// rate rows hold S, so every view reads them the same way.
pub(super) fn share_rows(per: &Shares, source: &str) -> Vec<Row> {
    use crate::eval::metrics::DimRate;
    use std::collections::BTreeMap;
    let pooled = |tasks: &BTreeMap<String, (usize, usize)>, keep: &dyn Fn(&str) -> bool| {
        let (mut fl, mut n, mut t) = (0, 0, 0);
        for (task, (a, b)) in tasks {
            if keep(task) {
                fl += a;
                n += b;
                t += 1;
            }
        }
        (n > 0).then(|| DimRate {
            rate: 100.0 * fl as f64 / n as f64,
            tasks: t,
            of: t,
        })
    };
    per.iter()
        .map(|(model, tasks)| {
            let dim_of = |t: &str| crate::eval::metrics::dimension_of(t);
            let dims =
                std::array::from_fn(|d| pooled(tasks, &|t| dim_of(t) == Some(Dimension::ALL[d])));
            let categories = CATEGORIES
                .iter()
                .map(|c| {
                    pooled(tasks, &|t| {
                        let mut p = t.splitn(3, '-');
                        p.next().and_then(|d| d.parse::<Dimension>().ok()) == Some(c.dimension)
                            && p.next() == Some(c.code)
                    })
                })
                .collect();
            let task_scores = tasks
                .iter()
                .map(|(t, (a, b))| (t.to_string(), 100.0 - 100.0 * *a as f64 / *b as f64))
                .collect();
            Row {
                name: model.to_string(),
                source: Source::Run {
                    run_id: source.into(),
                },
                dims,
                categories,
                task_scores,
                worst: Vec::new(),
                baseline: None,
                pending: Default::default(),
            }
        })
        .collect()
}

/// Heatmap rows of the signals: one per model and signal ("smol · semantic entropy"), each
/// cell the AUROC (%); `task_scores` hold 100 − AUROC, as the rate rows hold S, so every view
/// reads them the same way. A cell with too few of a class has no value.
pub(super) fn signal_rows(rows: &[crate::detect::signals::SignalRow]) -> Vec<Row> {
    use crate::eval::metrics::DimRate;
    use std::collections::BTreeMap;
    let mut per: BTreeMap<(String, String), BTreeMap<String, f64>> = BTreeMap::new();
    for r in rows {
        if let Some(a) = r.score.auroc {
            per.entry((r.model.clone(), r.signal.clone()))
                .or_default()
                .insert(r.cell.clone(), a);
        } else {
            per.entry((r.model.clone(), r.signal.clone())).or_default();
        }
    }
    let one = |v: Option<&f64>| {
        v.map(|&rate| DimRate {
            rate,
            tasks: 1,
            of: 1,
        })
    };
    per.into_iter()
        .map(|((model, signal), cells)| Row {
            name: format!("{model} · {signal}"),
            source: Source::Run {
                run_id: "signals".into(),
            },
            dims: std::array::from_fn(|d| one(cells.get(Dimension::ALL[d].code()))),
            categories: CATEGORIES
                .iter()
                .map(|c| one(cells.get(&format!("{}-{}", c.dimension.code(), c.code))))
                .collect(),
            task_scores: cells
                .iter()
                .filter(|(k, _)| k.matches('-').count() >= 2)
                .map(|(k, v)| (k.clone(), 100.0 - v))
                .collect(),
            worst: Vec::new(),
            baseline: None,
            pending: Default::default(),
        })
        .collect()
}

/// How far the flag agrees with PRISM's verdicts, per model and dimension: precision, recall,
/// and how many answers PRISM scored wrong that no pair contradicted.
pub(super) fn draw_agreement(
    cx: &Cx,
    f: &mut Frame,
    area: Rect,
    rows: &[crate::detect::results::Agreement],
) {
    let t = cx.theme;
    let block = Block::default()
        .borders(Borders::ALL)
        .border_type(BorderType::Rounded)
        .border_style(t.border(false))
        .title(" Flag vs PRISM's verdict (answers with both): precision / recall / wrong but never contradicted ");
    let inner = block.inner(area);
    f.render_widget(block, area);
    let pct = |v: Option<f64>| v.map_or("-".to_string(), |v| format!("{v:.0}"));
    let mut lines = vec![Line::styled(
        format!(
            "{:<LABEL_W$}{}",
            "",
            ["KE", "KM", "RE", "IFE", "all"]
                .iter()
                .map(|d| format!("{d:>16}"))
                .collect::<String>()
        ),
        t.muted().add_modifier(Modifier::BOLD),
    )];
    let mut models: Vec<&str> = rows.iter().map(|r| r.model.as_str()).collect();
    models.dedup();
    for m in models {
        let mut s = format!(
            "{:<w$} ",
            truncate(&one_line(m), LABEL_W - 1),
            w = LABEL_W - 1
        );
        for d in ["KE", "KM", "RE", "IFE", "all"] {
            let cell = rows
                .iter()
                .find(|r| r.model == m && r.dimension == d)
                .filter(|r| r.scored > 0)
                .map(|r| {
                    format!(
                        "{}/{}/{}",
                        pct(r.precision),
                        pct(r.recall),
                        r.wrong_never_contradicted
                    )
                })
                .unwrap_or_else(|| "-".into());
            s.push_str(&format!("{cell:>16}"));
        }
        lines.push(Line::styled(s, t.base()));
    }
    if rows.is_empty() {
        lines.push(Line::styled(
            "no answer has both a complete detection and a score yet",
            t.muted(),
        ));
    }
    f.render_widget(Paragraph::new(lines), inner);
}
