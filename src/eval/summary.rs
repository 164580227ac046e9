//! From item scores to per-model summaries: task S (items averaged over their samples first),
//! per-dimension and per-category rates with coverage, the H-Score, and the official
//! `summary.json` form. Fed by plain points so the store, imported outputs and benchmarks all
//! share one path.

use std::collections::{BTreeMap, HashMap};

use serde_json::{Value, json};

use super::metrics::{self, DimRate, Rates};
use crate::dataset::Dataset;
use crate::taxonomy::{CATEGORIES, Dimension};

/// Which tasks exist, for coverage: per task its dimension and category code, and how many
/// items it has.
#[derive(Debug, Clone, Default)]
pub struct Catalogue {
    pub tasks: BTreeMap<String, (Dimension, &'static str, usize)>,
}

/// The official release's 65 task ids, in registry order (a copy of its `tasks.json` ids):
/// the registry a `summary.json` is read against when it does not say how many tasks each
/// dimension has.
const OFFICIAL_TASKS: &str = include_str!("../../sample-data/references/prism-tasks.txt");

impl Catalogue {
    /// The dataset's registry: every task `tasks.json` names, with the items of those that
    /// loaded (0 for a task whose file is missing, which still counts for completeness).
    pub fn of(ds: &Dataset) -> Catalogue {
        let mut tasks: BTreeMap<String, (Dimension, &'static str, usize)> = ds
            .registry
            .iter()
            .map(|t| (t.id.clone(), (t.dimension, t.category.code, 0)))
            .collect();
        for t in &ds.tasks {
            tasks.insert(t.id.clone(), (t.dimension, t.category.code, t.items.len()));
        }
        Catalogue { tasks }
    }

    /// The official PRISM release's registry (65 tasks; item counts unknown here).
    pub fn official() -> Catalogue {
        let tasks = OFFICIAL_TASKS
            .lines()
            .map(str::trim)
            .filter(|l| !l.is_empty())
            .filter_map(|id| {
                let mut p = id.split('-');
                let d: Dimension = p.next()?.parse().ok()?;
                let c = crate::taxonomy::category(d, p.next()?)?;
                Some((id.to_string(), (d, c.code, 0)))
            })
            .collect();
        Catalogue { tasks }
    }

    /// Tasks per dimension, in `Dimension::ALL` order.
    pub fn per_dimension(&self) -> [usize; 4] {
        let mut n = [0; 4];
        for (d, _, _) in self.tasks.values() {
            n[d.index()] += 1;
        }
        n
    }

    fn category_of(&self, task: &str) -> Option<&'static str> {
        self.tasks.get(task).map(|t| t.1).or_else(|| {
            let mut parts = task.split('-');
            let d: Dimension = parts.next()?.parse().ok()?;
            crate::taxonomy::category(d, parts.next()?).map(|c| c.code)
        })
    }
}

/// A word for a registry that is not the official one: an H-Score "complete" against it is
/// complete for that registry only, not comparable with the paper's 65 sub-tasks. None for the
/// official registry, and for plain JSONL (which has no registry of its own).
pub fn registry_note(ds: &Dataset) -> Option<String> {
    if ds.kind != crate::dataset::DatasetKind::Release {
        return None;
    }
    let official = Catalogue::official();
    let total = official.tasks.len();
    let ours: std::collections::BTreeSet<&str> =
        ds.registry.iter().map(|t| t.id.as_str()).collect();
    let known = ours
        .iter()
        .filter(|id| official.tasks.contains_key(**id))
        .count();
    if known == total && ours.len() == total {
        return None;
    }
    let extra = ours.len() - known;
    let extra = if extra > 0 {
        format!(", and {extra} that the release does not have")
    } else {
        String::new()
    };
    Some(format!(
        "this registry is not the official one: it lists {known} of the release's {total} sub-tasks{extra}; a complete H-Score here is complete for this registry only, not comparable with the paper's"
    ))
}

/// One task of one model.
#[derive(Debug, Clone, PartialEq)]
pub struct TaskResult {
    /// S over the scored items.
    pub s: f64,
    /// Items with a score.
    pub scored: usize,
    /// Items with an unscored answer (judge needed).
    pub unscored: usize,
    /// Items the task has (0 when unknown).
    pub of: usize,
}

impl TaskResult {
    /// Every answered item is scored (a subset of items still counts: the run chose them).
    pub fn complete(&self) -> bool {
        self.unscored == 0 && self.scored > 0
    }
}

#[derive(Debug, Clone, PartialEq)]
pub struct ModelSummary {
    pub model: String,
    pub tasks: BTreeMap<String, TaskResult>,
    pub rates: Rates,
    /// Per category code (in CATEGORIES order): the mean task H and its coverage.
    pub categories: Vec<(&'static str, Option<DimRate>)>,
    /// Tasks the registry has per dimension (`Dimension::ALL` order), so coverage says "0 of 22"
    /// for a dimension nothing was answered in; None when the registry is unknown.
    pub registry_tasks: Option<[usize; 4]>,
}

impl ModelSummary {
    /// A model's summary from its tasks' (sum of the scored items' means, items scored, items
    /// waiting): the one place task S, rates, coverage and categories are made, from points
    /// (the aggregator) or from stored summaries (`store::summaries`) alike.
    pub fn from_tasks(
        model: &str,
        tasks: BTreeMap<String, (f64, usize, usize)>,
        cat: &Catalogue,
    ) -> ModelSummary {
        let expected = cat.per_dimension();
        let expected = (!cat.tasks.is_empty()).then_some(&expected);
        let tasks: BTreeMap<String, TaskResult> = tasks
            .into_iter()
            .map(|(t, (sum, scored, unscored))| {
                let of = cat.tasks.get(&t).map_or(0, |t| t.2);
                (
                    t,
                    TaskResult {
                        s: if scored > 0 {
                            100.0 * sum / scored as f64
                        } else {
                            0.0
                        },
                        scored,
                        unscored,
                        of,
                    },
                )
            })
            .collect();
        let mut s = ModelSummary {
            model: model.to_string(),
            tasks,
            rates: Rates { dims: [None; 4] },
            categories: Vec::new(),
            registry_tasks: expected.copied(),
        };
        let complete = s.task_scores();
        s.rates = metrics::rates(&complete, expected);
        s.categories = category_rates(cat, &complete);
        s
    }

    /// Task S of the complete tasks, as the official summary has them.
    pub fn task_scores(&self) -> BTreeMap<String, f64> {
        self.tasks
            .iter()
            .filter(|(_, t)| t.complete())
            .map(|(k, t)| (k.clone(), t.s))
            .collect()
    }

    pub fn h_score(&self) -> Option<f64> {
        self.rates.h_score()
    }

    /// The official `summary.json`, plus `coverage` and `partial_rates` so a partial dimension
    /// is never mistaken for a complete one (its official rate is null).
    pub fn to_json(&self, judge: Option<&str>) -> Value {
        let mut rates = serde_json::Map::new();
        let mut partial = serde_json::Map::new();
        let mut coverage = serde_json::Map::new();
        for d in Dimension::ALL {
            let r = self.rates.get(d);
            rates.insert(
                d.code().into(),
                r.filter(DimRate::complete).map(|r| round4(r.rate)).into(),
            );
            if let Some(r) = r.filter(|r| !r.complete()) {
                partial.insert(d.code().into(), round4(r.rate).into());
            }
            let of = r
                .map(|r| r.of)
                .or(self.registry_tasks.map(|n| n[d.index()]))
                .unwrap_or(0);
            coverage.insert(
                d.code().into(),
                json!({"tasks": r.map_or(0, |r| r.tasks), "of": of}),
            );
        }
        let unscored: BTreeMap<&String, usize> = self
            .tasks
            .iter()
            .filter(|(_, t)| t.unscored > 0)
            .map(|(k, t)| (k, t.unscored))
            .collect();
        let categories: serde_json::Map<String, Value> = self
            .categories
            .iter()
            .filter_map(|(code, r)| {
                let r = r.as_ref()?;
                let key = CATEGORIES
                    .iter()
                    .find(|c| c.code == *code)
                    .map_or(code.to_string(), |c| {
                        format!("{}-{}", c.dimension.code(), c.code)
                    });
                Some((
                    key,
                    json!({"rate": round4(r.rate), "tasks": r.tasks, "of": r.of}),
                ))
            })
            .collect();
        json!({
            "model": self.model,
            "judge": judge,
            "task_scores": self.task_scores().into_iter().map(|(k, v)| (k, round4(v))).collect::<BTreeMap<_, _>>(),
            "dimension_hallucination_rates": rates,
            "h_score": self.h_score().map(round4),
            "coverage": coverage,
            "partial_rates": partial,
            "category_hallucination_rates": categories,
            "unscored_items_by_task": unscored,
        })
    }
}

fn round4(v: f64) -> f64 {
    (v * 10_000.0).round() / 10_000.0
}

/// One scored answer.
pub struct Point<'a> {
    pub model: &'a str,
    pub task: &'a str,
    pub item: &'a str,
    pub score: Option<f64>,
}

/// Accumulates points, then summarises each model. The one way rates are computed: `prism
/// score`, `prism report`, the TUI's tree, compare header and heatmap all go through it, so they
/// cannot disagree.
///
/// Built for the heatmap's scale (50 models x 9,448 items from the store in well under 200 ms):
/// names are interned once, consecutive points of one model or task skip the lookup, and the
/// per-answer cells are a dense table indexed by model and item. The TUI keeps one alive and
/// [`update`](Aggregator::update)s it as answers finish and scores arrive.
#[derive(Default, Clone)]
pub struct Aggregator {
    models: Vec<String>,
    model_ix: HashMap<String, u32>,
    tasks: Vec<String>,
    task_ix: HashMap<String, u32>,
    items: HashMap<String, u32>,
    last_model: Option<(String, u32)>,
    last_task: Option<(String, u32)>,
    /// Per model, per item: (task, sum, samples scored, samples unscored); task u32::MAX = no
    /// answer.
    cells: Vec<Vec<Cell>>,
}

#[derive(Clone, Copy)]
struct Cell {
    task: u32,
    sum: f64,
    n: u32,
    unscored: u32,
}

const EMPTY: Cell = Cell {
    task: u32::MAX,
    sum: 0.0,
    n: 0,
    unscored: 0,
};

fn intern(names: &mut Vec<String>, ix: &mut HashMap<String, u32>, s: &str) -> u32 {
    if let Some(&i) = ix.get(s) {
        return i;
    }
    let i = names.len() as u32;
    names.push(s.to_string());
    ix.insert(s.to_string(), i);
    i
}

/// Interns with a one-entry memo: runs of one name (rows come grouped) cost a string compare.
fn memo(
    last: &mut Option<(String, u32)>,
    names: &mut Vec<String>,
    ix: &mut HashMap<String, u32>,
    s: &str,
) -> u32 {
    if let Some((name, i)) = last
        && name == s
    {
        return *i;
    }
    let i = intern(names, ix, s);
    match last {
        Some((name, j)) => {
            name.clear();
            name.push_str(s);
            *j = i;
        }
        None => *last = Some((s.to_string(), i)),
    }
    i
}

impl Aggregator {
    /// Counts one more answer (a sample) with its score, or unscored.
    pub fn add(&mut self, p: Point<'_>) {
        let score = p.score;
        self.update(p, None, score);
    }

    /// Changes what one answer counts for: `old` is its earlier state (`None` when it was not
    /// counted yet; `Some(None)` when it was counted unscored), `new` its score now (`None`:
    /// finished but unscored). `p.score` is ignored.
    pub fn update(&mut self, p: Point<'_>, old: Option<Option<f64>>, new: Option<f64>) {
        let m = memo(
            &mut self.last_model,
            &mut self.models,
            &mut self.model_ix,
            p.model,
        ) as usize;
        let t = memo(
            &mut self.last_task,
            &mut self.tasks,
            &mut self.task_ix,
            p.task,
        );
        let next = self.items.len() as u32;
        let i = match self.items.get(p.item) {
            Some(&i) => i,
            None => {
                self.items.insert(p.item.to_string(), next);
                next
            }
        } as usize;
        if self.cells.len() <= m {
            self.cells.resize_with(m + 1, Vec::new);
        }
        let row = &mut self.cells[m];
        if row.len() <= i {
            row.resize(i + 1, EMPTY);
        }
        let c = &mut row[i];
        c.task = t;
        match old {
            Some(Some(s)) => {
                c.sum -= s;
                c.n = c.n.saturating_sub(1);
            }
            Some(None) => c.unscored = c.unscored.saturating_sub(1),
            None => {}
        }
        match new {
            Some(s) => {
                c.sum += s;
                c.n += 1;
            }
            None => c.unscored += 1,
        }
    }

    /// Summaries in the order models were first seen.
    pub fn finish(self, cat: &Catalogue) -> Vec<ModelSummary> {
        self.summarize(cat)
    }

    /// Summaries in the order models were first seen, leaving the aggregator as it is (the TUI
    /// keeps updating it).
    pub fn summarize(&self, cat: &Catalogue) -> Vec<ModelSummary> {
        let nt = self.tasks.len();
        self.models
            .iter()
            .enumerate()
            .map(|(m, name)| {
                // Per task: (sum of item means, items scored, items unscored).
                let mut per = vec![(0.0f64, 0usize, 0usize); nt];
                for c in self.cells.get(m).map(Vec::as_slice).unwrap_or_default() {
                    if c.task == u32::MAX {
                        continue;
                    }
                    let e = &mut per[c.task as usize];
                    if c.unscored > 0 {
                        e.2 += 1;
                    } else if c.n > 0 {
                        e.0 += c.sum / c.n as f64;
                        e.1 += 1;
                    }
                }
                let tasks = per
                    .iter()
                    .enumerate()
                    .filter(|(_, (_, scored, unscored))| scored + unscored > 0)
                    .map(|(t, &task)| (self.tasks[t].clone(), task))
                    .collect();
                ModelSummary::from_tasks(name, tasks, cat)
            })
            .collect()
    }
}

pub fn category_rates(
    cat: &Catalogue,
    scores: &BTreeMap<String, f64>,
) -> Vec<(&'static str, Option<DimRate>)> {
    CATEGORIES
        .iter()
        .map(|c| {
            let mut sum = 0.0;
            let mut n = 0;
            for (task, s) in scores {
                if metrics::dimension_of(task) == Some(c.dimension)
                    && cat.category_of(task) == Some(c.code)
                {
                    sum += 100.0 - s;
                    n += 1;
                }
            }
            let of = cat
                .tasks
                .values()
                .filter(|(d, code, _)| *d == c.dimension && *code == c.code)
                .count();
            let rate = (n > 0).then(|| DimRate {
                rate: sum / n as f64,
                tasks: n,
                of: if cat.tasks.is_empty() { n } else { of },
            });
            (c.code, rate)
        })
        .collect()
}

/// Judge-versus-human agreement: the mean absolute deviation of judge from human scores, and the
/// standard deviation of those deviations. `None` without pairs.
pub fn agreement(pairs: &[(f64, f64)]) -> Option<(f64, f64)> {
    if pairs.is_empty() {
        return None;
    }
    let devs: Vec<f64> = pairs.iter().map(|(j, h)| (j - h).abs()).collect();
    let n = devs.len() as f64;
    let mad = devs.iter().sum::<f64>() / n;
    let sd = (devs.iter().map(|d| (d - mad).powi(2)).sum::<f64>() / n).sqrt();
    Some((mad, sd))
}

/// An item's hallucination rate over its scored answers (all models and samples): 100 × (1 −
/// mean score).
pub fn item_rate(scores: &[f64]) -> Option<f64> {
    metrics::task_score(scores).map(|s| 100.0 - s)
}

/// The Spearman correlation between every pair of dimensions over the models' rates (paper
/// Figure 4); `None` where fewer than three models have both rates.
pub fn dimension_correlations(models: &[ModelSummary]) -> [[Option<f64>; 4]; 4] {
    let rows: Vec<[Option<f64>; 4]> = models
        .iter()
        .map(|s| std::array::from_fn(|d| s.rates.dims[d].map(|r| r.rate)))
        .collect();
    metrics::dimension_correlations(&rows)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn agg(points: &[(&str, &str, &str, Option<f64>)]) -> Vec<ModelSummary> {
        let mut a = Aggregator::default();
        for (m, t, i, s) in points {
            a.add(Point {
                model: m,
                task: t,
                item: i,
                score: *s,
            });
        }
        a.finish(&Catalogue::default())
    }

    #[test]
    fn coverage_says_of_how_many_even_for_a_dimension_with_no_answers() {
        let mut a = Aggregator::default();
        a.add(Point {
            model: "m",
            task: "KE-FD-TruthfulQA",
            item: "1",
            score: Some(1.0),
        });
        let s = a.finish(&Catalogue::official());
        let j = s[0].to_json(None);
        // The official registry: 15 KE, 22 KM, 10 RE, 18 IFE tasks.
        assert_eq!(j["coverage"]["KE"], json!({"tasks": 1, "of": 15}));
        assert_eq!(j["coverage"]["KM"], json!({"tasks": 0, "of": 22}));
        assert_eq!(j["coverage"]["IFE"], json!({"tasks": 0, "of": 18}));
        // No registry: nothing to say of how many.
        let s = agg(&[("m", "KE-FD-A", "1", Some(1.0))]);
        assert_eq!(
            s[0].to_json(None)["coverage"]["KM"],
            json!({"tasks": 0, "of": 0})
        );
    }

    #[test]
    fn samples_average_per_item_then_items_per_task() {
        let s = agg(&[
            ("m", "KE-FD-A", "1", Some(1.0)),
            ("m", "KE-FD-A", "1", Some(0.0)),
            ("m", "KE-FD-A", "1", Some(1.0)),
            ("m", "KE-FD-A", "2", Some(0.0)),
        ]);
        // item 1: 2/3, item 2: 0 → S = 100 * (2/3) / 2.
        let t = &s[0].tasks["KE-FD-A"];
        assert!((t.s - 100.0 / 3.0).abs() < 1e-9);
        assert!(t.complete());
        assert_eq!(s[0].rates.get(Dimension::KE).unwrap().rate, 100.0 - t.s);
    }

    #[test]
    fn unscored_items_make_a_task_incomplete_not_wrong() {
        let s = agg(&[
            ("m", "KE-FD-A", "1", Some(1.0)),
            ("m", "KE-FD-A", "2", None),
            ("m", "KE-EIC-B", "3", Some(0.0)),
        ]);
        let t = &s[0].tasks["KE-FD-A"];
        assert_eq!((t.scored, t.unscored, t.s), (1, 1, 100.0));
        assert!(!t.complete());
        assert_eq!(s[0].task_scores().len(), 1);
        assert_eq!(s[0].rates.get(Dimension::KE).unwrap().rate, 100.0);
        let j = s[0].to_json(None);
        assert_eq!(j["unscored_items_by_task"]["KE-FD-A"], 1);
        assert!(j["h_score"].is_null());
    }

    #[test]
    fn categories_and_agreement() {
        let s = agg(&[
            ("m", "KE-FD-A", "1", Some(1.0)),
            ("m", "KE-FD-B", "2", Some(0.5)),
            ("m", "KE-EIC-C", "3", Some(0.0)),
        ]);
        let fd = s[0]
            .categories
            .iter()
            .find(|c| c.0 == "FD")
            .unwrap()
            .1
            .unwrap();
        assert_eq!((fd.rate, fd.tasks), (25.0, 2));
        let (mad, sd) = agreement(&[(1.0, 1.0), (0.5, 1.0), (0.0, 1.0)]).unwrap();
        assert!((mad - 0.5).abs() < 1e-12);
        assert!((sd - (1.0f64 / 6.0).sqrt()).abs() < 1e-12);
        assert_eq!(agreement(&[]), None);
        assert_eq!(item_rate(&[1.0, 0.0, 0.0, 0.0]), Some(75.0));
    }
}
