//! Reports: the rows a heatmap or a shared report shows (the user's models from a store, official
//! summaries or outputs directories, and published reference rows), their cells in three views
//! (dimensions, categories, sub-tasks), baseline deltas, and the renderers (terminal table, CSV,
//! Markdown, JSON, self-contained HTML).

pub mod build;
pub(crate) mod detection;
pub mod html;
pub mod item;
pub mod judges;
pub(crate) mod render;
pub(crate) mod selfcheck;
pub mod sentences;
pub(crate) mod source;
pub(crate) mod tables;

use std::collections::BTreeMap;

use crate::eval::metrics::DimRate;
use crate::eval::summary::ModelSummary;
use crate::taxonomy::{CATEGORIES, Dimension};

/// Where a row comes from.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Source {
    /// A run in the store.
    Run { run_id: String },
    /// An official `summary.json` or outputs directory.
    File { path: String },
    /// Published figures (not run here).
    Reference { source: String },
}

/// One failure shown as an example.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct Example {
    pub item_id: String,
    pub question: String,
    pub answer: String,
    pub score: f64,
    pub detail: String,
}

/// A sub-task among a model's worst.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct Worst {
    pub task: String,
    /// Task H (100 - S).
    pub rate: f64,
    pub example: Option<Example>,
}

/// One model's numbers.
#[derive(Debug, Clone, PartialEq)]
pub struct Row {
    pub name: String,
    pub source: Source,
    /// Per dimension (Dimension::ALL order).
    pub dims: [Option<DimRate>; 4],
    /// Per category (CATEGORIES order).
    pub categories: Vec<Option<DimRate>>,
    /// Task S by task id (complete tasks).
    pub task_scores: BTreeMap<String, f64>,
    pub worst: Vec<Worst>,
    /// The same model in the baseline, for deltas.
    pub baseline: Option<Box<Row>>,
    /// Tasks whose answers are not all scored yet (a judge is needed): items scored, items
    /// answered. Their rate is not final, so a cell covering them says how far scoring got.
    pub pending: BTreeMap<String, (usize, usize)>,
}

impl Row {
    pub fn from_summary(s: &ModelSummary, source: Source) -> Row {
        Row {
            name: s.model.clone(),
            source,
            dims: s.rates.dims,
            categories: s.categories.iter().map(|c| c.1).collect(),
            task_scores: s.task_scores(),
            worst: Vec::new(),
            baseline: None,
            pending: pending_of(s),
        }
    }

    /// Items scored and answered over the pending tasks a column covers, if any.
    pub fn pending_in(&self, view: View, col: usize, tasks: &[String]) -> Option<(usize, usize)> {
        let covers = |t: &str| {
            let mut p = t.splitn(3, '-');
            let d = p.next().and_then(|d| d.parse::<Dimension>().ok());
            let c = p.next().unwrap_or("");
            match view {
                View::Dimensions if col < 4 => d == Some(Dimension::ALL[col]),
                View::Dimensions => true,
                View::Categories => CATEGORIES
                    .get(col)
                    .is_some_and(|cat| d == Some(cat.dimension) && cat.code == c),
                View::Tasks => tasks.get(col).is_some_and(|id| id == t),
            }
        };
        let (mut scored, mut answered, mut any) = (0, 0, false);
        for (t, (s, a)) in &self.pending {
            if covers(t) {
                scored += s;
                answered += a;
                any = true;
            }
        }
        any.then_some((scored, answered))
    }

    /// The H-Score: only when all four dimensions are complete.
    pub fn h_score(&self) -> Option<f64> {
        let mut sum = 0.0;
        for d in &self.dims {
            let d = d.as_ref().filter(|d| d.complete())?;
            sum += d.rate;
        }
        Some(sum / 4.0)
    }

    pub fn is_reference(&self) -> bool {
        matches!(self.source, Source::Reference { .. })
    }

    /// The value of a column in a view.
    pub fn cell(&self, view: View, col: usize, tasks: &[String]) -> Option<Cell> {
        match view {
            View::Dimensions if col < 4 => self.dims[col].map(Cell::of),
            View::Dimensions => self.h_score().map(|v| Cell {
                value: v,
                partial: false,
                tasks: 0,
                of: 0,
            }),
            View::Categories => self.categories.get(col).copied().flatten().map(Cell::of),
            View::Tasks => {
                let s = self.task_scores.get(tasks.get(col)?)?;
                Some(Cell {
                    value: 100.0 - s,
                    partial: false,
                    tasks: 1,
                    of: 1,
                })
            }
        }
    }

    /// Change against the baseline in a cell.
    pub fn delta(&self, view: View, col: usize, tasks: &[String]) -> Option<f64> {
        let b = self.baseline.as_ref()?.cell(view, col, tasks)?;
        Some(self.cell(view, col, tasks)?.value - b.value)
    }
}

/// The tasks of a summary with unscored answers: (items scored, items answered).
pub fn pending_of(s: &ModelSummary) -> BTreeMap<String, (usize, usize)> {
    s.tasks
        .iter()
        .filter(|(_, t)| t.unscored > 0)
        .map(|(k, t)| (k.clone(), (t.scored, t.scored + t.unscored)))
        .collect()
}

/// A cell: a hallucination rate (lower is better), and whether it covers every task.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Cell {
    pub value: f64,
    pub partial: bool,
    pub tasks: usize,
    pub of: usize,
}

impl Cell {
    fn of(r: DimRate) -> Cell {
        Cell {
            value: r.rate,
            partial: !r.complete(),
            tasks: r.tasks,
            of: r.of,
        }
    }

    /// The number as printed everywhere: two decimals (as the paper), `*` when partial.
    pub fn text(&self) -> String {
        format!("{:.2}{}", self.value, if self.partial { "*" } else { "" })
    }
}

/// Which columns a heatmap shows.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum View {
    #[default]
    Dimensions,
    Categories,
    Tasks,
}

impl View {
    pub fn next(self) -> View {
        match self {
            View::Dimensions => View::Categories,
            View::Categories => View::Tasks,
            View::Tasks => View::Dimensions,
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            View::Dimensions => "dimensions",
            View::Categories => "categories",
            View::Tasks => "sub-tasks",
        }
    }
}

/// Run metadata for the report's header.
#[derive(Debug, Clone, Default, PartialEq, serde::Serialize)]
pub struct Meta {
    /// The run the rows come from: its id, and its name if it has one (`prism runs name`).
    pub run: Option<String>,
    pub run_name: Option<String>,
    pub dataset: Option<String>,
    pub date: Option<String>,
    pub judges: Vec<String>,
    /// Per model: provider, model id and parameters, as configured for the run.
    pub models: Vec<(String, String)>,
    pub samples: Option<u32>,
    pub shots: Option<u32>,
    /// What the run asked of its own over the models' settings (parameters, filter, limit),
    /// in words; `None` when nothing.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub run_settings: Option<String>,
    pub prism_version: String,
}

#[derive(Debug, Clone, PartialEq)]
pub struct Report {
    pub rows: Vec<Row>,
    /// Detection by self-contradiction, when the report carries it.
    pub detections: detection::Detections,
    /// Self-detection runs, when the report carries them.
    pub selfcheck: Vec<selfcheck::Section>,
    /// The judges on trial over the reported run's judged answers, when any were kept.
    pub judges: Option<crate::review::judges::Trial>,
    /// Where in the answer: the run's answers with the most doubtful sentences, when the run
    /// has samples.
    pub sentences: Option<sentences::Section>,
    /// A run imported from another tool: its own scores over its tree, and how they agree with
    /// PRISM's rules.
    pub(crate) source: Vec<tables::Table>,
    /// Every sub-task with a score in any row, in taxonomy order.
    pub tasks: Vec<String>,
    pub meta: Meta,
}

impl Report {
    pub fn new(rows: Vec<Row>, meta: Meta) -> Report {
        // Unique first, then sorted: with many rows (the heatmap of 100 runs × 8 models has
        // 52,000 task keys over 65 tasks) sorting every key was most of the heatmap's time.
        let unique: std::collections::HashSet<&String> = rows
            .iter()
            .flat_map(|r| r.task_scores.keys().chain(r.pending.keys()))
            .collect();
        let mut tasks: Vec<String> = unique.into_iter().cloned().collect();
        tasks.sort_by_cached_key(|t| task_order(t));
        Report {
            rows,
            tasks,
            meta,
            detections: detection::Detections::default(),
            selfcheck: Vec::new(),
            judges: None,
            sentences: None,
            source: Vec::new(),
        }
    }

    pub fn columns(&self, view: View) -> Vec<String> {
        match view {
            View::Dimensions => Dimension::ALL
                .iter()
                .map(|d| d.code().to_string())
                .chain(["H-Score".to_string()])
                .collect(),
            View::Categories => CATEGORIES
                .iter()
                .map(|c| format!("{}-{}", c.dimension.code(), c.code))
                .collect(),
            View::Tasks => self.tasks.clone(),
        }
    }

    pub fn cell(&self, row: usize, view: View, col: usize) -> Option<Cell> {
        self.rows.get(row)?.cell(view, col, &self.tasks)
    }

    pub fn delta(&self, row: usize, view: View, col: usize) -> Option<f64> {
        self.rows.get(row)?.delta(view, col, &self.tasks)
    }

    pub fn pending(&self, row: usize, view: View, col: usize) -> Option<(usize, usize)> {
        self.rows.get(row)?.pending_in(view, col, &self.tasks)
    }

    /// Spearman correlation of the rows' rankings between every pair of dimensions (rows with
    /// complete rates, references included: the paper's Figure 4 is over its 24 models).
    pub fn correlations(&self) -> [[Option<f64>; 4]; 4] {
        let rows: Vec<[Option<f64>; 4]> = self
            .rows
            .iter()
            .map(|r| std::array::from_fn(|d| r.dims[d].filter(DimRate::complete).map(|x| x.rate)))
            .collect();
        crate::eval::metrics::dimension_correlations(&rows)
    }
}

/// Taxonomy order of a task id: dimension, then category, then name.
fn task_order(t: &str) -> (usize, usize, String) {
    let mut p = t.splitn(3, '-');
    let d = p.next().and_then(|d| d.parse::<Dimension>().ok());
    let c = d.and_then(|d| crate::taxonomy::category(d, p.next().unwrap_or("")));
    (
        d.map_or(9, |d| d.index()),
        c.map_or(99, crate::taxonomy::category_index),
        t.to_string(),
    )
}
