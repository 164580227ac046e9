//! The heatmap screen's state: rows are models (their scored answers in the store and this
//! session, plus the paper's published rows on demand), columns the four dimensions and the
//! H-Score, the 15 categories, or the sub-tasks. A cell cursor with a crosshair, sorting by any
//! column, a baseline row for deltas, and a drill-down from a cell to its items (worst first)
//! and on to the compare screen.

use std::collections::{BTreeMap, HashMap};

use super::app::{App, Command, Screen};
use super::keymap::Action;
use crate::dataset::Dataset;
use crate::eval::summary::Catalogue;
use crate::report::{Report, Row, Source, View, build};
use crate::taxonomy::{CATEGORIES, Dimension};

/// The items behind one cell, worst first.
#[derive(Debug, Clone, Default)]
pub struct Drill {
    pub model: String,
    /// What the cell is (`KE`, `KE-FD`, a task id, `all`).
    pub label: String,
    /// (item index, mean score over its samples).
    pub items: Vec<(usize, f64)>,
    pub sel: usize,
    pub offset: usize,
}

#[derive(Debug, Clone, Default)]
pub struct Heat {
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
    pub spearman: bool,
    /// Scores arrived since the rows were built.
    pub dirty: bool,
}

/// Rows from the running per-(task, model) sums the app keeps as scores arrive, so opening or
/// refreshing the heatmap costs tasks x models, not one step per answer (472,400 answers: see
/// BENCHMARKS.md). Task S is the mean over the task's scored answers.
pub fn rows_from_task_scores(
    ds: &Dataset,
    task_scores: &HashMap<(usize, String), (f64, usize)>,
) -> Vec<Row> {
    let cat = Catalogue::of(ds);
    let expected = cat.per_dimension();
    let mut per_model: BTreeMap<&str, BTreeMap<String, f64>> = BTreeMap::new();
    for ((task, model), (sum, n)) in task_scores {
        if *n > 0 {
            per_model
                .entry(model)
                .or_default()
                .insert(ds.tasks[*task].id.clone(), 100.0 * sum / *n as f64);
        }
    }
    per_model
        .into_iter()
        .map(|(model, scores)| {
            let source = Source::Run {
                run_id: "store".into(),
            };
            build::row_from_task_scores(model, scores, source, &cat, &expected)
        })
        .collect()
}

impl Heat {
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
}

impl App {
    /// Before a frame: the heatmap on screen reflects every score that has arrived.
    pub fn before_draw(&mut self) {
        if self.heat.dirty && self.screen == Screen::Heatmap {
            self.refresh_heat();
        }
    }

    /// Rebuilds the heatmap's rows from the scores known now.
    pub fn refresh_heat(&mut self) {
        let mut rows = rows_from_task_scores(&self.ds, &self.runs.task_scores);
        if self.heat.refs {
            rows.extend(build::bundled_references());
        }
        if let Some(b) = &self.heat.baseline {
            match rows.iter().find(|r| &r.name == b).cloned() {
                Some(base) => build::attach_baseline(&mut rows, &[base]),
                None => self.heat.baseline = None,
            }
        }
        self.heat.dirty = false;
        let meta = crate::report::Meta::default();
        self.heat.report = Some(Report::new(rows, meta));
        let ncols = self.heat.columns().len();
        self.heat.col = self.heat.col.min(ncols.saturating_sub(1));
        self.heat.reorder();
    }

    pub fn open_heatmap(&mut self) {
        self.refresh_heat();
        self.screen = Screen::Heatmap;
        if self.heat.report.as_ref().is_some_and(|r| r.rows.is_empty()) {
            self.notice = Some(
                "no scored answers yet: run items (r) or press R for the paper's published rows"
                    .into(),
            );
        }
    }

    /// The items of a cell for a model, worst first.
    /// Which tasks (by index) a column of a view covers.
    fn column_tasks(&self, view: View, col: usize) -> Vec<bool> {
        let task_id = match view {
            View::Tasks => self.heat.report.as_ref().and_then(|r| r.tasks.get(col)),
            _ => None,
        };
        self.ds
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

    fn drill_items(&self, model: &str, view: View, col: usize) -> (String, Vec<(usize, f64)>) {
        let label = match view {
            View::Dimensions if col >= 4 => "all".to_string(),
            _ => self.heat.columns().get(col).cloned().unwrap_or_default(),
        };
        let in_column = self.column_tasks(view, col);
        let keep = |i: usize| in_column[self.ds.items[i].task as usize];
        let mut per: HashMap<usize, (f64, u32)> = HashMap::new();
        for ((i, m, _), s) in &self.runs.scores {
            if m == model && keep(*i) {
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

    pub fn apply_heatmap(&mut self, a: Action) {
        if self.heat.spearman {
            if matches!(
                a,
                Action::Spearman | Action::Cancel | Action::Back | Action::Quit
            ) {
                self.heat.spearman = false;
            }
            return;
        }
        if let Some(d) = self.heat.drill.as_mut() {
            let n = d.items.len();
            match a {
                Action::Quit => self.quit = true,
                Action::Help => self.popup = Some(super::app::Popup::Help { scroll: 0 }),
                Action::Down => d.sel = (d.sel + 1).min(n.saturating_sub(1)),
                Action::Up => d.sel = d.sel.saturating_sub(1),
                Action::PageDown => d.sel = (d.sel + 10).min(n.saturating_sub(1)),
                Action::PageUp => d.sel = d.sel.saturating_sub(10),
                Action::Top => d.sel = 0,
                Action::Bottom => d.sel = n.saturating_sub(1),
                Action::Toggle | Action::Expand if n > 0 => {
                    let items: Vec<usize> = d.items.iter().map(|x| x.0).collect();
                    let pos = d.sel;
                    self.compare = super::app::Compare {
                        items,
                        pos,
                        return_to: Some(Screen::Heatmap),
                        ..Default::default()
                    };
                    if let Some(i) = self.compare.item() {
                        self.commands.push(Command::LoadStored(i));
                    }
                    self.screen = Screen::Compare;
                }
                Action::Back | Action::Cancel | Action::Collapse => self.heat.drill = None,
                _ => {}
            }
            return;
        }
        let ncols = self.heat.columns().len();
        let nrows = self.heat.order.len();
        match a {
            Action::Quit => self.quit = true,
            Action::Help => self.popup = Some(super::app::Popup::Help { scroll: 0 }),
            Action::Down => self.heat.row = (self.heat.row + 1).min(nrows.saturating_sub(1)),
            Action::Up => self.heat.row = self.heat.row.saturating_sub(1),
            Action::Expand => self.heat.col = (self.heat.col + 1).min(ncols.saturating_sub(1)),
            Action::Collapse => self.heat.col = self.heat.col.saturating_sub(1),
            Action::Top => self.heat.row = 0,
            Action::Bottom => self.heat.row = nrows.saturating_sub(1),
            Action::PageDown => self.heat.col = (self.heat.col + 10).min(ncols.saturating_sub(1)),
            Action::PageUp => self.heat.col = self.heat.col.saturating_sub(10),
            Action::HeatView => {
                self.heat.view = self.heat.view.next();
                self.heat.col = 0;
                self.heat.col_offset = 0;
                self.heat.sort = None;
                self.heat.reorder();
            }
            Action::Sort => {
                let col = self.heat.col;
                let name = self.current_row_name();
                self.heat.sort = match self.heat.sort {
                    Some((c, true)) if c == col => Some((col, false)),
                    Some((c, false)) if c == col => None,
                    _ => Some((col, true)),
                };
                self.heat.reorder();
                // The cursor stays on the same model.
                if let Some(name) = name {
                    self.select_row(&name);
                }
            }
            Action::References => {
                let name = self.current_row_name();
                self.heat.refs = !self.heat.refs;
                self.refresh_heat();
                if let Some(name) = name {
                    self.select_row(&name);
                }
            }
            Action::Baseline => {
                let name = self.current_row_name();
                self.heat.baseline = match (&self.heat.baseline, &name) {
                    (Some(b), Some(n)) if b == n => None,
                    _ => name.clone(),
                };
                self.refresh_heat();
            }
            Action::Spearman => self.heat.spearman = true,
            Action::Toggle => {
                let Some(row) = self.heat.current_row().cloned() else {
                    return;
                };
                if row.is_reference() {
                    self.notice =
                        Some("published figures: there are no answers behind them".into());
                    return;
                }
                let (label, items) = self.drill_items(&row.name, self.heat.view, self.heat.col);
                if items.is_empty() {
                    self.notice = Some(format!("{}: no scored answers in {label}", row.name));
                    return;
                }
                self.heat.drill = Some(Drill {
                    model: row.name,
                    label,
                    items,
                    sel: 0,
                    offset: 0,
                });
            }
            Action::Back | Action::Cancel | Action::Heatmap => self.screen = Screen::Browse,
            _ => {}
        }
    }

    /// Scored answers and items behind a cell of a model (for the status line's coverage).
    pub fn cell_coverage(&self, model: &str, view: View, col: usize) -> (usize, usize) {
        let in_column = self.column_tasks(view, col);
        let tasks: Vec<usize> = (0..self.ds.tasks.len()).filter(|&t| in_column[t]).collect();
        let scored = tasks
            .iter()
            .filter_map(|&t| self.runs.task_scores.get(&(t, model.to_string())))
            .map(|(_, n)| n)
            .sum();
        let items = tasks.iter().map(|&t| self.ds.tasks[t].items.len()).sum();
        (scored, items)
    }

    fn current_row_name(&self) -> Option<String> {
        self.heat.current_row().map(|r| r.name.clone())
    }

    fn select_row(&mut self, name: &str) {
        if let Some(rep) = &self.heat.report
            && let Some(p) = self
                .heat
                .order
                .iter()
                .position(|&i| rep.rows[i].name == name)
        {
            self.heat.row = p;
        }
    }
}
