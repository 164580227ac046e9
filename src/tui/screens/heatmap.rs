//! The heatmap screen: rows are models (every scored answer in the store and this session, plus
//! the paper's published rows on demand), columns the four dimensions and the H-Score, the 15
//! categories, or the sub-tasks. Every cell prints its number on the theme's gradient (so it
//! reads without colour); a cell over answers that still await a judge prints how many are
//! scored instead. A crosshair cursor, sorting by any column, a baseline row for deltas, and a
//! drill-down from a cell to its items (worst first) and on to the compare screen.

use std::collections::HashMap;

use crossterm::event::{MouseButton, MouseEventKind};
use ratatui::Frame;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::style::{Modifier, Style};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, BorderType, Borders, Paragraph};

use crate::report::render::arrow;
use crate::report::{Report, Row, Source, View, build};
use crate::taxonomy::{CATEGORIES, Dimension};
use crate::text::{one_line, sanitize};
use crate::theme::ink_on;
use crate::tui::component::{Cmd, Component, Cx, Input, Open, ScreenId};
use crate::tui::keymap::{Action, Mode};
use crate::tui::popups::{Correlation, Help};
use crate::tui::session::Session;
use crate::tui::widgets::{row_in, title_line, truncate};

mod draw;
mod drill;
use draw::{draw_agreement, draw_drill, flag_rows, share_rows, signal_rows};
pub use drill::Drill;
use drill::{LoadWorst, Worst};

const LABEL_W: usize = 24;

/// Room for `100.00*`, or for `100.00 ▲+100.0` when a baseline adds deltas (dimensions only).
fn cell_w(view: View, deltas: bool) -> usize {
    match (view, deltas) {
        (View::Dimensions, false) => 10,
        (View::Dimensions, true) => 16,
        _ => 9,
    }
}

/// What the cells show.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Metric {
    /// PRISM's hallucination rate (100 - score).
    #[default]
    Rate,
    /// The share of answers flagged by self-contradiction (AutoHall's OR rule), among the
    /// answers whose detection is complete.
    Flags,
    /// Consistency over repeats: the share of items whose samples disagree (some right, some
    /// wrong), among the items with 2 or more scored samples.
    Split,
    /// Which signal predicts PRISM's verdict: a row per model and signal, each cell the
    /// signal's AUROC against the verdicts of the cell's answers (blank with too few).
    Signals,
}

#[derive(Debug, Clone, Default)]
pub struct Heatmap {
    pub metric: Metric,
    /// Every detected answer's flag and score (read when the flag metric is first shown).
    pub flags: Option<Vec<crate::detect::results::AnswerFlag>>,
    /// The signals' AUROC per model and cell (read when the signals metric is first shown).
    pub signals: Option<Vec<crate::detect::signals::SignalRow>>,
    pub view: View,
    /// Cursor: row in display order, column in the view.
    pub row: usize,
    pub col: usize,
    /// First column shown (the sub-task view scrolls horizontally).
    pub col_offset: usize,
    /// Sorted by this column, descending when true.
    pub sort: Option<(usize, bool)>,
    pub refs: bool,
    /// The row everything is compared against.
    pub baseline: Option<String>,
    pub report: Option<Report>,
    /// Display order of the report's rows.
    pub order: Vec<usize>,
    pub drill: Option<Drill>,
    /// The session's scores this report was built from (rebuilt when they change).
    built_from: usize,
    /// What the last frame drew: the grid's inner area, the first row and column shown, and
    /// how many columns fit.
    grid: Rect,
    row_off: usize,
    shown_cols: Vec<usize>,
    /// The width of the model-name column in the last frame (wider than LABEL_W when the
    /// grid leaves room, so names are not cut beside empty columns).
    label_w: usize,
    /// Rows of these stored runs (a row per model and run, chosen in the runs screen) instead
    /// of every model's latest answers; `pinned` holds them once read.
    pub runs: Option<Vec<String>>,
    pinned: Option<Vec<Row>>,
}

impl Heatmap {
    /// The heatmap of stored runs: a row per (model, run), labelled with the run.
    pub fn of_runs(runs: Vec<String>) -> Heatmap {
        Heatmap {
            runs: Some(runs),
            ..Heatmap::default()
        }
    }

    pub fn columns(&self) -> Vec<String> {
        self.report
            .as_ref()
            .map(|r| r.columns(self.view))
            .unwrap_or_default()
    }

    /// The report row under the cursor.
    pub fn current_row(&self) -> Option<&Row> {
        let r = self.report.as_ref()?;
        r.rows.get(*self.order.get(self.row)?)
    }

    fn reorder(&mut self) {
        let Some(rep) = &self.report else { return };
        let mut order: Vec<usize> = (0..rep.rows.len()).collect();
        if let Some((col, desc)) = self.sort {
            let view = self.view;
            order.sort_by(|&a, &b| {
                let va = rep.cell(a, view, col).map(|c| c.value);
                let vb = rep.cell(b, view, col).map(|c| c.value);
                match (va, vb) {
                    (Some(x), Some(y)) if desc => y.total_cmp(&x),
                    (Some(x), Some(y)) => x.total_cmp(&y),
                    // Rows without the value go last either way.
                    (Some(_), None) => std::cmp::Ordering::Less,
                    (None, Some(_)) => std::cmp::Ordering::Greater,
                    (None, None) => std::cmp::Ordering::Equal,
                }
            });
        }
        self.order = order;
        self.row = self.row.min(self.order.len().saturating_sub(1));
    }

    /// Rebuilds the rows from the session's summaries (the same aggregator as `prism score`),
    /// the chosen runs' rows, or, for the other metrics, the detected answers or the repeats.
    fn refresh(&mut self, session: &Session) {
        let mut rows: Vec<Row> = match (self.metric, &self.runs) {
            (Metric::Flags, _) => flag_rows(self.flags.as_deref().unwrap_or(&[])),
            (Metric::Split, _) => share_rows(&session.sample_splits(), "repeats"),
            (Metric::Signals, _) => signal_rows(self.signals.as_deref().unwrap_or(&[])),
            // Chosen runs, in the order chosen (nothing until they are read).
            (Metric::Rate, Some(_)) => self.pinned.clone().unwrap_or_default(),
            (Metric::Rate, None) => {
                let mut rows: Vec<Row> = session
                    .summaries()
                    .map(|s| {
                        Row::from_summary(
                            s,
                            Source::Run {
                                run_id: "store".into(),
                            },
                        )
                    })
                    .collect();
                // Models in name order (published rows after them).
                rows.sort_by(|a, b| a.name.cmp(&b.name));
                rows
            }
        };
        if self.refs && self.metric == Metric::Rate {
            rows.extend(build::bundled_references());
        }
        if let Some(b) = &self.baseline {
            match rows.iter().find(|r| &r.name == b).cloned() {
                Some(base) => build::attach_baseline(&mut rows, &[base]),
                None => self.baseline = None,
            }
        }
        self.built_from = session.version();
        self.report = Some(Report::new(rows, crate::report::Meta::default()));
        let ncols = self.columns().len();
        self.col = self.col.min(ncols.saturating_sub(1));
        self.reorder();
    }

    /// Which tasks (by index) a column of a view covers.
    fn column_tasks(&self, cx: &Cx, view: View, col: usize) -> Vec<bool> {
        let task_id = match view {
            View::Tasks => self.report.as_ref().and_then(|r| r.tasks.get(col)),
            _ => None,
        };
        cx.ds
            .tasks
            .iter()
            .map(|task| match view {
                View::Dimensions if col < 4 => task.dimension == Dimension::ALL[col],
                View::Dimensions => true,
                View::Categories => CATEGORIES
                    .get(col)
                    .is_some_and(|c| c.dimension == task.dimension && c.code == task.category.code),
                View::Tasks => task_id.is_some_and(|id| *id == task.id),
            })
            .collect()
    }

    /// The items of a cell for a model, worst first (mean score over their samples).
    fn drill_items(&self, cx: &Cx, model: &str) -> (String, Vec<(usize, f64)>) {
        let (view, col) = (self.view, self.col);
        let label = match view {
            View::Dimensions if col >= 4 => "all".to_string(),
            _ => self.columns().get(col).cloned().unwrap_or_default(),
        };
        let in_column = self.column_tasks(cx, view, col);
        let keep = |i: usize| in_column[cx.ds.items[i].task as usize];
        let mut per: HashMap<usize, (f64, u32)> = HashMap::new();
        if self.metric == Metric::Flags {
            // Worst first: the items whose answers were flagged most (1 - flagged share).
            for fl in self.flags.iter().flatten() {
                if fl.model == model
                    && !fl.outcome.undecided()
                    && let Some(i) = cx.ds.index_of(&fl.item_id)
                    && keep(i)
                {
                    let e = per.entry(i).or_default();
                    e.0 += if fl.outcome.flagged() { 0.0 } else { 1.0 };
                    e.1 += 1;
                }
            }
        }
        for ((i, m, _), s) in cx
            .session
            .points
            .iter()
            .filter(|_| self.metric == Metric::Rate)
        {
            if let Some(s) = s
                && m == model
                && keep(*i)
            {
                let e = per.entry(*i).or_default();
                e.0 += s;
                e.1 += 1;
            }
        }
        let mut items: Vec<(usize, f64)> = per
            .into_iter()
            .map(|(i, (s, n))| (i, s / n as f64))
            .collect();
        items.sort_by(|a, b| a.1.total_cmp(&b.1).then(a.0.cmp(&b.0)));
        (label, items)
    }

    /// Scored items and items behind the cursor's cell (the status line's coverage), from the
    /// session's summary (tasks x models, not one step per answer).
    fn cell_coverage(&self, cx: &Cx, model: &str) -> (usize, usize) {
        let in_column = self.column_tasks(cx, self.view, self.col);
        let summary = cx.session.summaries().find(|s| s.model == model);
        let (mut scored, mut items) = (0, 0);
        for (_, task) in cx
            .ds
            .tasks
            .iter()
            .enumerate()
            .filter(|(t, _)| in_column[*t])
        {
            items += task.items.len();
            scored += summary
                .and_then(|s| s.tasks.get(&task.id))
                .map_or(0, |r| r.scored);
        }
        (scored, items)
    }

    fn current_row_name(&self) -> Option<String> {
        self.current_row().map(|r| r.name.clone())
    }

    fn select_row(&mut self, name: &str) {
        if let Some(rep) = &self.report
            && let Some(p) = self.order.iter().position(|&i| rep.rows[i].name == name)
        {
            self.row = p;
        }
    }

    fn apply_drill(&mut self, a: Action) -> Vec<Cmd> {
        let Some(d) = self.drill.as_mut() else {
            return Vec::new();
        };
        let n = d.items.len();
        if let Some(sel) = crate::tui::nav::cursor(d.sel, a, n) {
            d.sel = sel;
            return Vec::new();
        }
        match a {
            Action::Quit => return vec![Cmd::Quit],
            Action::Help => return vec![Cmd::Popup(Box::new(Help::new(Mode::Drill)))],
            Action::Toggle | Action::Expand if n > 0 => {
                let items: Vec<usize> = d.items.iter().map(|x| x.0).collect();
                // Back from compare returns here, to the same cell and item.
                return vec![Cmd::Push(Open::Compare { items, pos: d.sel })];
            }
            Action::WhereInAnswer => {
                d.by_sentence = !d.by_sentence;
                if d.by_sentence && d.worst.is_none() {
                    return vec![
                        Cmd::job(LoadWorst {
                            model: d.model.clone(),
                        }),
                        Cmd::Notice("reading each answer's sentences…".into()),
                    ];
                }
                d.order();
            }
            Action::Back | Action::Cancel | Action::Collapse => self.drill = None,
            _ => {}
        }
        Vec::new()
    }

    /// The next metric (rates, flags, split, signals), asking for what it reads the first time.
    fn next_metric(&mut self, cx: &Cx) -> Vec<Cmd> {
        self.metric = match self.metric {
            Metric::Rate => Metric::Flags,
            Metric::Flags => Metric::Split,
            Metric::Split => Metric::Signals,
            Metric::Signals => Metric::Rate,
        };
        self.sort = None;
        self.baseline = None;
        self.drill = None;
        self.refresh(cx.session);
        if self.metric == Metric::Flags && self.flags.is_none() {
            return vec![
                Cmd::job(crate::tui::jobs::signals::LoadFlags),
                Cmd::Notice("reading the detections…".into()),
            ];
        }
        if self.metric == Metric::Signals && self.signals.is_none() {
            return vec![
                Cmd::job(crate::tui::jobs::signals::LoadSignals),
                Cmd::Notice("reading the signals of every stored run…".into()),
            ];
        }
        Vec::new()
    }

    /// The items behind the selected cell, or why a cell of this kind has none to list.
    fn open_drill(&mut self, cx: &Cx) -> Vec<Cmd> {
        let Some(row) = self.current_row().cloned() else {
            return Vec::new();
        };
        if row.is_reference() {
            return vec![Cmd::Notice(
                "published figures: there are no answers behind them".into(),
            )];
        }
        if self.metric == Metric::Signals {
            return vec![Cmd::Notice(
                "a signal's cell is a score over its answers, not a list of items: v shows categories and sub-tasks, prism signals --by task gives intervals"
                    .into(),
            )];
        }
        if self.runs.is_some() {
            return vec![Cmd::Notice(
                "a stored run's row: back in the runs screen, o opens its answers (enter compares two runs, tab opens the flipped items)"
                    .into(),
            )];
        }
        let (label, items) = self.drill_items(cx, &row.name);
        if items.is_empty() {
            return vec![Cmd::Notice(format!(
                "{}: no scored answers in {label}",
                one_line(&row.name)
            ))];
        }
        self.drill = Some(Drill {
            model: row.name,
            label,
            items,
            sel: 0,
            worst: None,
            by_sentence: false,
        });
        Vec::new()
    }

    fn apply(&mut self, a: Action, cx: &Cx) -> Vec<Cmd> {
        if self.drill.is_some() {
            return self.apply_drill(a);
        }
        let ncols = self.columns().len();
        let last_col = ncols.saturating_sub(1);
        let nrows = self.order.len();
        match a {
            Action::Quit => return vec![Cmd::Quit],
            Action::Help => return vec![Cmd::Popup(Box::new(Help::new(Mode::Heatmap)))],
            Action::Down => self.row = (self.row + 1).min(nrows.saturating_sub(1)),
            Action::Up => self.row = self.row.saturating_sub(1),
            Action::Expand => self.col = (self.col + 1).min(last_col),
            Action::Collapse => self.col = self.col.saturating_sub(1),
            Action::Top => self.row = 0,
            Action::Bottom => self.row = nrows.saturating_sub(1),
            Action::PageDown => self.col = (self.col + 10).min(last_col),
            Action::PageUp => self.col = self.col.saturating_sub(10),
            Action::HeatView => {
                self.view = self.view.next();
                self.col = 0;
                self.col_offset = 0;
                self.sort = None;
                self.reorder();
            }
            Action::Sort => {
                let col = self.col;
                let name = self.current_row_name();
                self.sort = match self.sort {
                    Some((c, true)) if c == col => Some((col, false)),
                    Some((c, false)) if c == col => None,
                    _ => Some((col, true)),
                };
                self.reorder();
                // The cursor stays on the same model.
                if let Some(name) = name {
                    self.select_row(&name);
                }
            }
            Action::References => {
                let name = self.current_row_name();
                self.refs = !self.refs;
                self.refresh(cx.session);
                if let Some(name) = name {
                    self.select_row(&name);
                }
            }
            Action::Baseline => {
                let name = self.current_row_name();
                self.baseline = match (&self.baseline, &name) {
                    (Some(b), Some(n)) if b == n => None,
                    _ => name.clone(),
                };
                self.refresh(cx.session);
            }
            Action::Metric if self.runs.is_some() => {
                return vec![Cmd::Notice(
                    "the chosen runs' heatmap shows their rates; the other metrics are in the heatmap from browsing (H)"
                        .into(),
                )];
            }
            Action::Metric => return self.next_metric(cx),
            Action::ToggleJudge => {
                // One run's heatmap tries that run's judges; otherwise every run's.
                let run = match self.runs.as_deref() {
                    Some([one]) => Some(one.clone()),
                    _ => None,
                };
                return vec![Cmd::Push(crate::tui::component::Open::Judges { run })];
            }
            Action::Spearman => {
                if let Some(rep) = &self.report {
                    return vec![Cmd::Popup(Box::new(Correlation::of(rep)))];
                }
            }
            Action::Toggle => return self.open_drill(cx),
            Action::Back | Action::Cancel | Action::Heatmap => return vec![Cmd::Pop],
            _ => {}
        }
        Vec::new()
    }

    fn on_mouse(&mut self, m: crossterm::event::MouseEvent) -> Vec<Cmd> {
        let down = |n: usize, by: usize| n.saturating_add(by);
        match m.kind {
            MouseEventKind::ScrollDown => match self.drill.as_mut() {
                Some(d) => d.sel = down(d.sel, 1).min(d.items.len().saturating_sub(1)),
                None => self.row = down(self.row, 1).min(self.order.len().saturating_sub(1)),
            },
            MouseEventKind::ScrollUp => match self.drill.as_mut() {
                Some(d) => d.sel = d.sel.saturating_sub(1),
                None => self.row = self.row.saturating_sub(1),
            },
            MouseEventKind::Down(MouseButton::Left) if self.drill.is_none() => {
                // The grid's first line is the header; each cell is cell_w columns wide after
                // the label.
                let g = self.grid;
                if let Some(line) = row_in(Rect::new(g.x, g.y - 1, g.width, g.height + 2), m.row)
                    && line > 0
                {
                    let r = self.row_off + line - 1;
                    if r < self.order.len() {
                        self.row = r;
                    }
                    let x = m.column.saturating_sub(g.x) as usize;
                    let cw = cell_w(self.view, self.baseline.is_some());
                    let lw = if self.label_w == 0 {
                        LABEL_W
                    } else {
                        self.label_w
                    };
                    if x >= lw
                        && let Some(&c) = self.shown_cols.get((x - lw) / cw)
                    {
                        self.col = c;
                    }
                }
            }
            _ => {}
        }
        Vec::new()
    }
}

impl Component for Heatmap {
    fn id(&self) -> ScreenId {
        ScreenId::Heatmap
    }

    fn mode(&self) -> Mode {
        if self.drill.is_some() {
            Mode::Drill
        } else {
            Mode::Heatmap
        }
    }

    fn on_open(&mut self, cx: &Cx) -> Vec<Cmd> {
        self.refresh(cx.session);
        if let Some(runs) = &self.runs {
            return vec![Cmd::job(crate::tui::jobs::runs::LoadRunRows {
                runs: runs.clone(),
            })];
        }
        if self.report.as_ref().is_some_and(|r| r.rows.is_empty()) {
            return vec![Cmd::Notice(
                "no scored answers yet: run items (r) or press R for the paper's published rows"
                    .into(),
            )];
        }
        Vec::new()
    }

    fn on_msg(&mut self, msg: &crate::tui::jobs::Msg, cx: &Cx) -> Vec<Cmd> {
        use crate::tui::jobs::Failed;
        use crate::tui::jobs::runs::RunRows;
        use crate::tui::jobs::signals::{Flags, Signals};
        if let Some(Worst(by_id, method)) = msg.get()
            && let Some(d) = self.drill.as_mut()
        {
            let worst: std::collections::HashMap<usize, f64> = by_id
                .iter()
                .filter_map(|(id, w)| Some((cx.ds.index_of(id)?, *w)))
                .collect();
            let found = d.items.iter().filter(|x| worst.contains_key(&x.0)).count();
            d.worst = Some((worst, method));
            d.order();
            return vec![Cmd::Notice(if found == 0 {
                "no answer here has samples to weigh its sentences: run with --samples 5".into()
            } else {
                format!(
                    "{found}/{} items by their worst sentence ({method}); w: by score",
                    d.items.len()
                )
            })];
        }
        // Other workers' answers and scores arrived: the rates again, and the chosen runs' rows
        // read again.
        if msg.get::<crate::store::mirror::Pulled>().is_some() {
            self.refresh(cx.session);
            if let Some(runs) = &self.runs {
                return vec![Cmd::job(crate::tui::jobs::runs::LoadRunRows {
                    runs: runs.clone(),
                })];
            }
            return Vec::new();
        }
        if let Some(Signals(rows)) = msg.get() {
            let empty = rows.is_empty();
            self.signals = Some(rows.clone());
            self.refresh(cx.session);
            if empty {
                return vec![Cmd::Notice(
                    "no answer has both a signal and a PRISM score: score a run, then prism detect, prism entropy or a run with --logprobs"
                        .into(),
                )];
            }
            return vec![Cmd::ClearNotice];
        }
        if let Some(Flags(f)) = msg.get() {
            let n = f.len();
            self.flags = Some(f.clone());
            self.refresh(cx.session);
            if n == 0 {
                return vec![Cmd::Notice(
                    "no detections yet: x on a compare pane, or d on marked items, runs one".into(),
                )];
            }
            return vec![Cmd::ClearNotice];
        }
        if let Some(RunRows { rows, unscored }) = msg.get() {
            self.pinned = Some(rows.clone());
            self.refresh(cx.session);
            if unscored.is_empty() {
                return vec![Cmd::ClearNotice];
            }
            return vec![Cmd::Notice(format!(
                "no scores yet in {} (prism score --run ID)",
                unscored.join(", ")
            ))];
        }
        match msg.get() {
            Some(Failed(e)) => vec![Cmd::Notice(e.clone())],
            None => Vec::new(),
        }
    }

    fn update(&mut self, input: Input, cx: &Cx) -> Vec<Cmd> {
        // Scores that arrived since the last build are in before the key acts.
        if self.built_from != cx.session.version() {
            self.refresh(cx.session);
        }
        match input {
            Input::Action(a) => {
                let mut out = vec![Cmd::ClearNotice];
                out.extend(self.apply(a, cx));
                out
            }
            Input::Mouse(m) => self.on_mouse(m),
            _ => Vec::new(),
        }
    }

    fn draw(&mut self, f: &mut Frame, area: Rect, cx: &Cx) {
        if self.built_from != cx.session.version() {
            self.refresh(cx.session);
        }
        let t = cx.theme;
        f.render_widget(Block::default().style(t.base()), area);
        let status_lines = self.status_lines(cx, area.width as usize);
        let [title, body, status] = Layout::vertical([
            Constraint::Length(1),
            Constraint::Min(3),
            Constraint::Length(status_lines.len() as u16),
        ])
        .areas(area);
        let Some(rep) = &self.report else { return };
        let refs = rep.rows.iter().filter(|r| r.is_reference()).count();
        let mut spans = vec![
            Span::styled(" heatmap ", t.base().add_modifier(Modifier::BOLD)),
            Span::styled(
                format!(
                    "{} · {} · {} model{}{}{}",
                    match self.metric {
                        Metric::Rate => "hallucination rate",
                        Metric::Flags => "self-contradiction flags",
                        Metric::Split => "samples that disagree",
                        Metric::Signals => "signals: AUROC against PRISM's verdict",
                    },
                    self.view.name(),
                    rep.rows.len() - refs,
                    if rep.rows.len() - refs == 1 { "" } else { "s" },
                    if self.runs.is_some() {
                        " of the chosen runs (model @ run)"
                    } else {
                        ""
                    },
                    if refs > 0 {
                        format!(" + {refs} published")
                    } else {
                        String::new()
                    }
                ),
                t.muted(),
            ),
        ];
        if let Some((c, desc)) = self.sort {
            let cols = rep.columns(self.view);
            spans.push(Span::styled(
                format!(
                    " · sorted by {} {}",
                    cols.get(c).map_or("", |s| s),
                    if desc { "↓" } else { "↑" }
                ),
                t.muted(),
            ));
        }
        if let Some(b) = &self.baseline {
            spans.push(Span::styled(
                format!(" · baseline {}", one_line(b)),
                t.warning(),
            ));
        }
        f.render_widget(Paragraph::new(title_line(t, spans)), title);
        match &self.drill {
            Some(d) => draw_drill(cx, f, body, d),
            None if self.metric == Metric::Flags => {
                let agreement =
                    crate::detect::results::agreement(self.flags.as_deref().unwrap_or(&[]));
                let models = agreement.iter().filter(|a| a.dimension == "all").count();
                let [grid, agree] =
                    Layout::vertical([Constraint::Min(4), Constraint::Length(models as u16 + 3)])
                        .areas(body);
                self.draw_grid(cx, f, grid);
                draw_agreement(cx, f, agree, &agreement);
            }
            None => self.draw_grid(cx, f, body),
        }
        f.render_widget(Paragraph::new(status_lines), status);
    }

    fn as_any(&self) -> &dyn std::any::Any {
        self
    }
}

#[cfg(test)]
mod tests;
