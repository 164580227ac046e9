//! Two runs (or two models of one run) side by side: per dimension and sub-task, each side's
//! hallucination rate, the difference, and whether it is more than noise.
//!
//! - **Pairing.** Only items scored on both sides count (an item with an unscored sample on
//!   either side is left out and counted). An item's score is the mean over its samples.
//! - **Rates** as PRISM computes them, over the paired items (a sub-task counts with the items
//!   scored on both sides, so a comparison can be made before every item is judged): task S =
//!   100 × mean item score,
//!   a dimension's rate = mean of 100 − S over its tasks, the H-Score = mean of the four rates
//!   (only when all four dimensions have paired items).
//! - **McNemar's exact test** on the items made binary (right = score ≥ 0.5): with `b` items
//!   right only on A and `c` right only on B, two-sided p = min(1, 2·P(X ≤ min(b, c))) for X ~
//!   Binomial(b + c, ½).
//! - **A paired bootstrap** 95% interval for each difference (B − A): items resampled with
//!   replacement within each task (the rates are macro over tasks, so every task keeps its
//!   size), both sides from the same draw, percentile interval; `resamples` draws from a seeded
//!   generator, so an interval is reproducible with its seed.
//! - **Flips**: items right on one side and wrong on the other, fixed (wrong on A, right on B)
//!   and broken.
//!
//! The statistics take each side's scores (`crate::runs` reads them from the store).

use std::collections::{BTreeMap, HashMap};

use crate::taxonomy::Dimension;

/// One side: a run, and the model in it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Side {
    pub run_id: String,
    pub model: String,
}

impl Side {
    pub fn label(&self) -> String {
        format!("{}:{}", self.run_id, self.model)
    }
}

/// An item's task and mean score over its samples (`None`: not every sample scored).
#[derive(Debug, Clone, Default, serde::Serialize, serde::Deserialize)]
pub struct Scored {
    pub task: String,
    pub mean: Option<f64>,
    /// Its scored samples.
    pub samples: u32,
    /// Its samples disagree: some right (score >= 0.5), some wrong.
    pub split: bool,
    /// The judges whose verdicts its score stands on (none: scored by rule).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub judges: Vec<String>,
}

/// McNemar's exact test on paired binary outcomes.
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize)]
pub struct McNemar {
    /// Right on A only.
    pub a_only: usize,
    /// Right on B only.
    pub b_only: usize,
    /// Two-sided exact p.
    pub p: f64,
}

impl McNemar {
    pub fn of(a_only: usize, b_only: usize) -> McNemar {
        McNemar {
            a_only,
            b_only,
            p: mcnemar_exact(a_only, b_only),
        }
    }
}

/// Two-sided exact McNemar p: min(1, 2·P(X ≤ min(b, c))), X ~ Binomial(b + c, ½), summed in
/// logs (n can be thousands).
pub fn mcnemar_exact(b: usize, c: usize) -> f64 {
    let n = b + c;
    if n == 0 {
        return 1.0;
    }
    let k = b.min(c);
    let mut log_pmf = n as f64 * 0.5f64.ln();
    let mut logs = Vec::with_capacity(k + 1);
    logs.push(log_pmf);
    for i in 0..k {
        log_pmf += ((n - i) as f64 / (i + 1) as f64).ln();
        logs.push(log_pmf);
    }
    let max = logs.iter().cloned().fold(f64::NEG_INFINITY, f64::max);
    let tail = max.exp() * logs.iter().map(|l| (l - max).exp()).sum::<f64>();
    (2.0 * tail).min(1.0)
}

/// What a row of the comparison covers.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Level {
    #[serde(rename = "h-score")]
    HScore,
    Dimension,
    Task,
}

#[derive(Debug, Clone, serde::Serialize)]
pub struct Row {
    pub level: Level,
    pub name: String,
    /// Paired items under it.
    pub items: usize,
    pub rate_a: Option<f64>,
    pub rate_b: Option<f64>,
    /// B − A, in rate points (positive: B hallucinates more).
    pub diff: Option<f64>,
    /// The bootstrap 95% interval of `diff`.
    pub ci: Option<(f64, f64)>,
    pub mcnemar: McNemar,
    /// The spread over repeats: of the row's items with 2 or more scored samples on that side,
    /// the share whose samples disagree (some right, some wrong); `None` without repeats.
    pub split_a: Option<f64>,
    pub split_b: Option<f64>,
}

impl Row {
    /// More than noise: the interval leaves 0 out *and* McNemar's p is under 0.05. Both, because
    /// each fails alone somewhere: a bootstrap within sub-tasks of one or two items has no
    /// spread to show (its interval shrinks to the estimate), and McNemar sees only items that
    /// changed sides of 0.5, not partial scores.
    pub fn significant(&self) -> bool {
        self.ci.is_some_and(|(lo, hi)| lo > 0.0 || hi < 0.0) && self.mcnemar.p < 0.05
    }

    /// The spread over repeats as printed: `A 12% · B 30% split`, empty without repeats.
    pub fn split_text(&self) -> String {
        let pct = |x: Option<f64>| x.map_or("-".into(), |v| format!("{:.0}%", 100.0 * v));
        if self.split_a.is_none() && self.split_b.is_none() {
            return String::new();
        }
        format!("{} / {}", pct(self.split_a), pct(self.split_b))
    }

    /// The interval as printed (`[-1.20, +3.40]`, `-` without one).
    pub fn ci_text(&self) -> String {
        self.ci
            .map_or("-".into(), |(lo, hi)| format!("[{lo:+.2}, {hi:+.2}]"))
    }

    /// McNemar's p as printed (`-` when no item changed sides).
    pub fn p_text(&self) -> String {
        if self.mcnemar.a_only + self.mcnemar.b_only == 0 {
            "-".into()
        } else {
            format!("{:.4}", self.mcnemar.p)
        }
    }
}

#[derive(Debug, Clone, serde::Serialize)]
pub struct Flip {
    pub item_id: String,
    pub task_id: String,
    pub score_a: f64,
    pub score_b: f64,
    /// Wrong on A, right on B.
    pub fixed: bool,
}

#[derive(Debug, Clone, serde::Serialize)]
pub struct Comparison {
    pub a: String,
    pub b: String,
    pub paired: usize,
    /// Items scored on one side only, or with an unscored sample on either.
    pub unpaired: usize,
    pub resamples: usize,
    pub seed: u64,
    pub rows: Vec<Row>,
    pub flips: Vec<Flip>,
    /// The two sides as runs and models, when they came from a store (the TUI opens a flipped
    /// item's answers from them).
    #[serde(skip)]
    pub sides: Option<[Side; 2]>,
    /// The same comparison under each judge alone, where a panel's verdicts are stored.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub judges: Option<JudgeSensitivity>,
}

/// Where the judge decides the ranking: the comparison's difference (B − A) on the H-Score and
/// each dimension, as stored and with each judge's verdicts alone in place of the judged
/// scores (`prism score --judge a,b,c` stores every judge's).
#[derive(Debug, Clone, serde::Serialize)]
pub struct JudgeSensitivity {
    pub judges: Vec<String>,
    /// Items scored on both sides under each judge (a judge without a verdict on an item
    /// leaves it out).
    pub paired: Vec<usize>,
    pub rows: Vec<SensitivityRow>,
}

#[derive(Debug, Clone, serde::Serialize)]
pub struct SensitivityRow {
    pub level: Level,
    pub name: String,
    /// B − A as stored.
    pub stored: Option<f64>,
    /// B − A under each judge (in `judges` order).
    pub under: Vec<Option<f64>>,
    /// Every judge gives the difference the stored sign (none of them zero or missing).
    pub sign_holds: bool,
    /// The stored difference is no larger than what changing the judge moves it by (the
    /// range of `under`), or its sign does not hold: the judge, not the models, may decide
    /// this row.
    pub within_judge_spread: bool,
}

impl SensitivityRow {
    /// The row's verdict in words (the table, Markdown and HTML say the same).
    pub fn words(&self) -> &'static str {
        match (self.sign_holds, self.within_judge_spread) {
            (false, _) => "the judge decides: the sign changes",
            (true, true) => "holds, but within what the judge moves",
            (true, false) => "holds under every judge",
        }
    }

    pub fn new(level: Level, name: &str, stored: Option<f64>, under: Vec<Option<f64>>) -> Self {
        let sign = |v: f64| (v > 0.0) as i8 - (v < 0.0) as i8;
        let sign_holds = stored.is_some_and(|d| {
            sign(d) != 0 && under.iter().all(|u| u.is_some_and(|u| sign(u) == sign(d)))
        });
        let got: Vec<f64> = under.iter().flatten().copied().collect();
        let range = match (
            got.iter().copied().reduce(f64::min),
            got.iter().copied().reduce(f64::max),
        ) {
            (Some(lo), Some(hi)) => hi - lo,
            _ => 0.0,
        };
        let within_judge_spread =
            !sign_holds || stored.is_some_and(|d| got.len() >= 2 && d.abs() <= range);
        SensitivityRow {
            level,
            name: name.to_string(),
            stored,
            under,
            sign_holds,
            within_judge_spread,
        }
    }
}

/// Compares two sides' item scores.
pub fn compare(
    a: (&str, &HashMap<String, Scored>),
    b: (&str, &HashMap<String, Scored>),
    resamples: usize,
    seed: u64,
) -> Comparison {
    let (by_task, unpaired) = paired(a.1, b.1);
    let tasks: Vec<(&String, &Vec<Pair>)> = by_task.iter().collect();
    let dim_of = |t: &str| super::metrics::dimension_of(t);

    // The point estimates: per task S on each side.
    let s = |v: &[Pair], side: usize| -> f64 {
        let sum: f64 = v.iter().map(|p| if side == 0 { p.1 } else { p.2 }).sum();
        100.0 * sum / v.len() as f64
    };
    let point = estimate(&tasks, &|ti, side| s(tasks[ti].1, side));

    let draws = bootstrap(&tasks, resamples, seed);
    let interval = |f: &dyn Fn(&Estimates) -> Option<f64>| -> Option<(f64, f64)> {
        let mut d: Vec<f64> = draws.iter().filter_map(f).collect();
        if d.is_empty() {
            return None;
        }
        d.sort_by(f64::total_cmp);
        let at = |q: f64| d[((d.len() - 1) as f64 * q).round() as usize];
        Some((at(0.025), at(0.975)))
    };
    let spread = spread_of(&tasks, a.1, b.1);
    let split_over = |tis: &mut dyn Iterator<Item = usize>| -> [Option<f64>; 2] {
        let mut c = [(0usize, 0usize); 2];
        for ti in tis {
            for k in 0..2 {
                c[k].0 += spread[ti][k].0;
                c[k].1 += spread[ti][k].1;
            }
        }
        c.map(|(n, split)| (n > 0).then(|| split as f64 / n as f64))
    };

    let mut rows = Vec::new();
    let all = || tasks.iter().flat_map(|(_, v)| v.iter());
    rows.push(Row {
        level: Level::HScore,
        name: "H-Score".into(),
        items: all().count(),
        rate_a: point.h.map(|h| h[0]),
        rate_b: point.h.map(|h| h[1]),
        diff: point.h.map(|h| h[1] - h[0]),
        ci: interval(&|e| e.h.map(|h| h[1] - h[0])),
        mcnemar: mcnemar_over(&mut all()),
        split_a: split_over(&mut (0..tasks.len()))[0],
        split_b: split_over(&mut (0..tasks.len()))[1],
    });
    let dim_tasks: [Vec<usize>; 4] = std::array::from_fn(|i| {
        (0..tasks.len())
            .filter(|&ti| dim_of(tasks[ti].0).map(|d| d.index()) == Some(i))
            .collect()
    });
    for d in Dimension::ALL {
        let i = d.index();
        let under = || {
            tasks
                .iter()
                .filter(move |(t, _)| dim_of(t) == Some(d))
                .flat_map(|(_, v)| v.iter())
        };
        rows.push(Row {
            level: Level::Dimension,
            name: d.code().to_string(),
            items: under().count(),
            rate_a: point.dims[i].map(|r| r[0]),
            rate_b: point.dims[i].map(|r| r[1]),
            diff: point.dims[i].map(|r| r[1] - r[0]),
            ci: interval(&|e| e.dims[i].map(|r| r[1] - r[0])),
            mcnemar: mcnemar_over(&mut under()),
            split_a: split_over(&mut dim_tasks[i].iter().copied())[0],
            split_b: split_over(&mut dim_tasks[i].iter().copied())[1],
        });
    }
    // Sub-tasks in dimension order (KE, KM, RE, IFE), then by id.
    let mut order: Vec<usize> = (0..tasks.len()).collect();
    order.sort_by_key(|&ti| (dim_of(tasks[ti].0).map_or(4, |d| d.index()), tasks[ti].0));
    for ti in order {
        let (t, v) = tasks[ti];
        let [ra, rb] = point.per_task[ti];
        rows.push(Row {
            level: Level::Task,
            name: t.clone(),
            items: v.len(),
            rate_a: Some(ra),
            rate_b: Some(rb),
            diff: Some(rb - ra),
            ci: interval(&|e| Some(e.per_task[ti][1] - e.per_task[ti][0])),
            mcnemar: mcnemar_over(&mut v.iter()),
            split_a: split_over(&mut std::iter::once(ti))[0],
            split_b: split_over(&mut std::iter::once(ti))[1],
        });
    }
    let flips = flips_of(&tasks);
    Comparison {
        a: a.0.to_string(),
        b: b.0.to_string(),
        paired: all().count(),
        unpaired,
        resamples,
        seed,
        rows,
        flips,
        sides: None,
        judges: None,
    }
}

/// Items scored on both sides, grouped by task (each task's sorted, so the draws are
/// reproducible), and how many items only one side scored.
fn paired(
    a: &HashMap<String, Scored>,
    b: &HashMap<String, Scored>,
) -> (BTreeMap<String, Vec<Pair>>, usize) {
    let mut by_task: BTreeMap<String, Vec<Pair>> = BTreeMap::new();
    let mut unpaired = 0;
    for (item, sa) in a {
        // An item is compared only under a task both sides give it: a side that files its
        // items under other tasks (a baseline written by hand) would otherwise move them
        // between sub-tasks and dimensions.
        let b_mean = b
            .get(item)
            .filter(|sb| sb.task == sa.task)
            .and_then(|sb| sb.mean);
        match (sa.mean, b_mean) {
            (Some(x), Some(y)) => {
                by_task
                    .entry(sa.task.clone())
                    .or_default()
                    .push((item.clone(), x, y))
            }
            _ => unpaired += 1,
        }
    }
    unpaired += b.keys().filter(|k| !a.contains_key(*k)).count();
    for v in by_task.values_mut() {
        v.sort_by(|p, q| p.0.cmp(&q.0));
    }
    (by_task, unpaired)
}

/// McNemar's test on the items right (score >= 0.5) on one side only.
fn mcnemar_over(pairs: &mut dyn Iterator<Item = &Pair>) -> McNemar {
    let (mut ao, mut bo) = (0, 0);
    for p in pairs {
        match (p.1 >= 0.5, p.2 >= 0.5) {
            (true, false) => ao += 1,
            (false, true) => bo += 1,
            _ => {}
        }
    }
    McNemar::of(ao, bo)
}

/// The spread over repeats, per task and side: (items with 2+ samples, of them split). Counted
/// once (one lookup per item and side) and summed per row by the caller.
fn spread_of(
    tasks: &[(&String, &Vec<Pair>)],
    a: &HashMap<String, Scored>,
    b: &HashMap<String, Scored>,
) -> Vec<[(usize, usize); 2]> {
    let repeats = a.values().chain(b.values()).any(|s| s.samples >= 2);
    tasks
        .iter()
        .map(|(_, v)| {
            let mut c = [(0, 0); 2];
            if repeats {
                for p in v.iter() {
                    for (k, side) in [a, b].into_iter().enumerate() {
                        if let Some(x) = side.get(&p.0).filter(|x| x.samples >= 2) {
                            c[k].0 += 1;
                            c[k].1 += usize::from(x.split);
                        }
                    }
                }
            }
            c
        })
        .collect()
}

/// The rates of each side from a per-task S (`task_s(task, side)`, in percent): per task, per
/// dimension, and the H-Score when every dimension has tasks.
fn estimate(tasks: &[(&String, &Vec<Pair>)], task_s: &dyn Fn(usize, usize) -> f64) -> Estimates {
    let dim_of = |t: &str| super::metrics::dimension_of(t);
    let mut dims = [[0.0f64; 2]; 4];
    let mut n = [0usize; 4];
    let mut per_task = Vec::with_capacity(tasks.len());
    for (ti, (t, _)) in tasks.iter().enumerate() {
        let (sa, sb) = (task_s(ti, 0), task_s(ti, 1));
        per_task.push([100.0 - sa, 100.0 - sb]);
        if let Some(d) = dim_of(t) {
            dims[d.index()][0] += 100.0 - sa;
            dims[d.index()][1] += 100.0 - sb;
            n[d.index()] += 1;
        }
    }
    let dims: [Option<[f64; 2]>; 4] = std::array::from_fn(|i| {
        (n[i] > 0).then(|| [dims[i][0] / n[i] as f64, dims[i][1] / n[i] as f64])
    });
    let h = if dims.iter().all(Option::is_some) {
        let mut h = [0.0; 2];
        for d in dims.iter().flatten() {
            h[0] += d[0] / 4.0;
            h[1] += d[1] / 4.0;
        }
        Some(h)
    } else {
        None
    };
    Estimates { per_task, dims, h }
}

/// The bootstrap: every task resampled to its own size, both sides from one draw, `resamples`
/// times from `seed`.
fn bootstrap(tasks: &[(&String, &Vec<Pair>)], resamples: usize, seed: u64) -> Vec<Estimates> {
    let mut rng = SplitMix64(seed);
    let mut draws: Vec<Estimates> = Vec::with_capacity(resamples);
    let mut sums = vec![[0.0f64; 2]; tasks.len()];
    for _ in 0..resamples {
        for (ti, (_, v)) in tasks.iter().enumerate() {
            let (mut x, mut y) = (0.0, 0.0);
            for _ in 0..v.len() {
                let p = &v[rng.below(v.len())];
                x += p.1;
                y += p.2;
            }
            sums[ti] = [100.0 * x / v.len() as f64, 100.0 * y / v.len() as f64];
        }
        draws.push(estimate(tasks, &|ti, side| sums[ti][side]));
    }
    draws
}

/// The items whose verdict differs between the sides: fixed first, then broken, each in item
/// order.
fn flips_of(tasks: &[(&String, &Vec<Pair>)]) -> Vec<Flip> {
    let mut flips: Vec<Flip> = tasks
        .iter()
        .flat_map(|(_, v)| v.iter())
        .filter(|p| (p.1 >= 0.5) != (p.2 >= 0.5))
        .map(|p| Flip {
            item_id: p.0.clone(),
            task_id: tasks
                .iter()
                .find(|(_, v)| v.iter().any(|q| q.0 == p.0))
                .map(|(t, _)| (*t).clone())
                .unwrap_or_default(),
            score_a: p.1,
            score_b: p.2,
            fixed: p.2 >= 0.5,
        })
        .collect();
    flips.sort_by(|x, y| y.fixed.cmp(&x.fixed).then(x.item_id.cmp(&y.item_id)));
    flips
}

/// The bootstrap's generator: SplitMix64 (Steele, Lea and Flood 2014), written out here so an
/// interval is the same for a seed in every version of prism and on every machine, and fast
/// (a comparison of PRISM's size draws about 19 million indices).
pub(crate) struct SplitMix64(pub(crate) u64);

impl SplitMix64 {
    pub(crate) fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    /// Uniform in 0..n (Lemire's multiply-shift; the bias is below 2^-32 for any n a dataset
    /// has).
    pub(crate) fn below(&mut self, n: usize) -> usize {
        ((self.next() >> 32).wrapping_mul(n as u64) >> 32) as usize
    }
}

/// A paired item: its id and each side's score.
type Pair = (String, f64, f64);

/// Rates of one draw (or the point estimate): per task [A, B], per dimension, the H-Score.
struct Estimates {
    per_task: Vec<[f64; 2]>,
    dims: [Option<[f64; 2]>; 4],
    h: Option<[f64; 2]>,
}

/// One sample of one side of an item: its answer (or why there is none) and its score.
#[derive(Debug, Clone)]
pub struct SampleAnswer {
    pub sample: u32,
    pub text: String,
    /// No answer: `text` is the error.
    pub failed: bool,
    pub score: Option<f64>,
    /// The evaluator's words about the score.
    pub detail: String,
}

/// An item's answers on both sides of a comparison, each side's samples in order.
#[derive(Debug, Clone)]
pub struct PairAnswers {
    pub item_id: String,
    pub task_id: String,
    pub sides: [Vec<SampleAnswer>; 2],
}

/// Repeated answers grouped by what they say (PRISM's `loose` form: case, the usual
/// punctuation and spacing do not split a group): (how many, the first as written, its sample numbers), most
/// frequent first, then in sample order. Failed samples are a group of their own.
pub fn answer_groups(samples: &[SampleAnswer]) -> Vec<(usize, String, Vec<u32>)> {
    let mut groups: Vec<(String, usize, String, Vec<u32>)> = Vec::new();
    for s in samples {
        let key = if s.failed {
            "\u{0}failed".to_string()
        } else {
            super::text::loose(&s.text)
        };
        match groups.iter_mut().find(|g| g.0 == key) {
            Some(g) => {
                g.1 += 1;
                g.3.push(s.sample);
            }
            None => groups.push((key, 1, s.text.clone(), vec![s.sample])),
        }
    }
    // Stable: ties keep the order of their first sample.
    groups.sort_by_key(|g| std::cmp::Reverse(g.1));
    groups.into_iter().map(|(_, n, t, s)| (n, t, s)).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mcnemar_exact_matches_hand_computed_values() {
        // b = 1, c = 9: 2 × (1 + 10) / 1024.
        assert!((mcnemar_exact(1, 9) - 22.0 / 1024.0).abs() < 1e-12);
        assert!((mcnemar_exact(9, 1) - 22.0 / 1024.0).abs() < 1e-12);
        // Equal counts: p = 1 (capped).
        assert_eq!(mcnemar_exact(5, 5), 1.0);
        assert_eq!(mcnemar_exact(0, 0), 1.0);
        // b = 0, c = 6: 2 / 64.
        assert!((mcnemar_exact(0, 6) - 2.0 / 64.0).abs() < 1e-12);
        // Large n stays finite and tiny: 100 against 200.
        let p = mcnemar_exact(100, 200);
        assert!(p > 0.0 && p < 1e-6, "{p}");
    }

    fn side(scores: &[(&str, &str, f64)]) -> HashMap<String, Scored> {
        scores
            .iter()
            .map(|(i, t, s)| {
                (
                    i.to_string(),
                    Scored {
                        task: t.to_string(),
                        mean: Some(*s),
                        ..Scored::default()
                    },
                )
            })
            .collect()
    }

    #[test]
    fn rates_flips_and_a_reproducible_interval() {
        let mut a = Vec::new();
        let mut b = Vec::new();
        let names: Vec<String> = (0..40).map(|k| format!("i{k:02}")).collect();
        for (k, n) in names.iter().enumerate() {
            let task = [
                "KE-FD-Myths",
                "KM-FK-Inventions",
                "RE-LF-Syllogisms",
                "IFE-EF-Formats",
            ][k % 4];
            // A right on 20 of 40; B right on the same 20 and 10 more.
            a.push((n.as_str(), task, f64::from(k < 20)));
            b.push((n.as_str(), task, f64::from(k < 30)));
        }
        let (sa, sb) = (side(&a), side(&b));
        let c = compare(("A", &sa), ("B", &sb), 500, 7);
        assert_eq!(c.paired, 40);
        let h = &c.rows[0];
        assert_eq!(h.level, Level::HScore);
        assert!((h.rate_a.unwrap() - 50.0).abs() < 1e-9);
        assert!((h.rate_b.unwrap() - 25.0).abs() < 1e-9);
        assert!((h.diff.unwrap() + 25.0).abs() < 1e-9);
        assert_eq!((h.mcnemar.a_only, h.mcnemar.b_only), (0, 10));
        assert!((h.mcnemar.p - 2.0 / 1024.0).abs() < 1e-12);
        let (lo, hi) = h.ci.unwrap();
        assert!(
            lo <= -25.0 && -25.0 <= hi,
            "the interval holds the estimate: {lo}..{hi}"
        );
        assert!(hi < 0.0, "B is better beyond noise: {lo}..{hi}");
        assert!(h.significant());
        // The same seed, the same interval; another seed, another draw.
        assert_eq!(compare(("A", &sa), ("B", &sb), 500, 7).rows[0].ci, h.ci);
        assert_eq!(c.flips.len(), 10);
        assert!(c.flips.iter().all(|f| f.fixed));
        // Four dimensions and four tasks.
        assert_eq!(c.rows.len(), 1 + 4 + 4);
    }

    #[test]
    fn the_interval_covers_the_true_difference_about_95_percent_of_the_time() {
        use rand::{Rng, SeedableRng};
        // Simulated: 200 items in one task per dimension, A right with p = 0.6, B with 0.5,
        // independent; the true difference in rate is +10 points on every dimension.
        let mut rng = rand::rngs::StdRng::seed_from_u64(1);
        let tasks = ["KE-a", "KM-a", "RE-a", "IFE-a"];
        let mut covered = 0;
        let trials = 200;
        for trial in 0..trials {
            let (mut a, mut b) = (HashMap::new(), HashMap::new());
            for k in 0..200 {
                let t = tasks[k % 4];
                let id = format!("{trial}-{k}");
                let x = f64::from(rng.random_bool(0.6));
                let y = f64::from(rng.random_bool(0.5));
                a.insert(
                    id.clone(),
                    Scored {
                        task: t.into(),
                        mean: Some(x),
                        ..Scored::default()
                    },
                );
                b.insert(
                    id,
                    Scored {
                        task: t.into(),
                        mean: Some(y),
                        ..Scored::default()
                    },
                );
            }
            let c = compare(("A", &a), ("B", &b), 400, trial as u64);
            let (lo, hi) = c.rows[0].ci.unwrap();
            if lo <= 10.0 && 10.0 <= hi {
                covered += 1;
            }
        }
        let share = covered as f64 / trials as f64;
        assert!((0.90..=0.99).contains(&share), "coverage {share}");
    }

    fn s(sample: u32, text: &str) -> SampleAnswer {
        SampleAnswer {
            sample,
            text: text.into(),
            failed: false,
            score: None,
            detail: String::new(),
        }
    }

    #[test]
    fn repeats_group_by_what_they_say_most_frequent_first() {
        let samples = [
            s(0, "Lyon."),
            s(1, "Paris"),
            s(2, "  paris. "),
            s(3, "PARIS!"),
            s(4, "Lyon"),
            s(5, "Marseille"),
        ];
        let g = answer_groups(&samples);
        assert_eq!(g.len(), 3);
        assert_eq!(
            (g[0].0, g[0].1.as_str(), g[0].2.clone()),
            (3, "Paris", vec![1, 2, 3])
        );
        assert_eq!(
            (g[1].0, g[1].1.as_str(), g[1].2.clone()),
            (2, "Lyon.", vec![0, 4])
        );
        assert_eq!(g[2].0, 1);
        // A failed sample is never grouped with an answer that happens to read the same.
        let mut f = s(6, "Paris");
        f.failed = true;
        let g = answer_groups(&[s(0, "Paris"), f]);
        assert_eq!(g.len(), 2);
    }

    #[test]
    fn the_spread_over_repeats_is_the_share_of_items_whose_samples_disagree() {
        let item = |task: &str, mean: f64, samples: u32, split: bool| Scored {
            task: task.into(),
            mean: Some(mean),
            samples,
            split,
            judges: Vec::new(),
        };
        let mut a = HashMap::new();
        let mut b = HashMap::new();
        // A: 4 items with 3 samples each, one split; B: the same items, three split.
        for (k, (sa, sb)) in [(false, true), (true, true), (false, true), (false, false)]
            .into_iter()
            .enumerate()
        {
            a.insert(format!("i{k}"), item("KE-x", 1.0, 3, sa));
            b.insert(format!("i{k}"), item("KE-x", 0.67, 3, sb));
        }
        let c = compare(("A", &a), ("B", &b), 100, 0);
        let h = &c.rows[0];
        assert_eq!((h.split_a, h.split_b), (Some(0.25), Some(0.75)));
        assert_eq!(h.split_text(), "25% / 75%");
        // One sample per item: no spread to show.
        let one: HashMap<String, Scored> = a
            .iter()
            .map(|(k, v)| {
                (
                    k.clone(),
                    Scored {
                        samples: 1,
                        ..v.clone()
                    },
                )
            })
            .collect();
        let c = compare(("A", &one), ("B", &one), 100, 0);
        assert_eq!((c.rows[0].split_a, c.rows[0].split_b), (None, None));
        assert_eq!(c.rows[0].split_text(), "");
    }
}
