//! Scoring speed: `cargo bench --bench scoring`.
//!
//! 1. Deterministic scoring throughput on one thread: 100,000 synthetic responses spread over
//!    every rule evaluator of the sample data's items (exact, fuzzy, choice, abstain,
//!    truth_label, data_format, word_range, ifeval, and the rule path of fact_judge and
//!    answer_match), half right and half wrong; language detection is timed on its own.
//! 2. Rates from the store: 50 models x 9,448 items of scores in a SQLite file (65 tasks), read
//!    back and turned into every task S, dimension and category rate, H-Score and the Spearman
//!    matrix (the heatmap's data).

use std::time::Instant;

use prism::eval::score::{Step, step};
use prism::eval::summary::{Aggregator, Catalogue, Point, dimension_correlations};
use prism::store::{ScoreRecord, Store};
use prism::taxonomy::{CATEGORIES, Dimension, Evaluator};

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(|a, b| a.partial_cmp(b).unwrap());
    v[v.len() / 2]
}

fn synthetic_response(ds: &prism::dataset::Dataset, item: usize, k: usize) -> String {
    let it = &ds.items[item];
    let filler = "The committee reviewed the proposal in detail and agreed to publish its findings next spring after a final round of checks.";
    match (k % 2, it.answer.as_deref()) {
        (0, Some(a)) => format!("Let me think about it.\n{filler}\nThe answer is {a}"),
        _ => format!("{filler} {filler}\nSo my final answer is B"),
    }
}

fn main() {
    // Criterion-style CLI flags are accepted and ignored (cargo bench passes --bench).
    let ds = prism::dataset::load_sample().dataset;
    let rule_items: Vec<usize> = (0..ds.items.len())
        .filter(|&i| {
            let ev = ds.task_of(&ds.items[i]).evaluator;
            !matches!(
                ev,
                Evaluator::Language
                    | Evaluator::JudgeEquiv
                    | Evaluator::JudgeMath
                    | Evaluator::JudgeCode
                    | Evaluator::JudgeClaims
            )
        })
        .collect();
    let lang_items: Vec<usize> = (0..ds.items.len())
        .filter(|&i| ds.task_of(&ds.items[i]).evaluator == Evaluator::Language)
        .collect();
    const N: usize = 100_000;
    let inputs: Vec<(usize, String)> = (0..N)
        .map(|k| {
            let i = rule_items[k % rule_items.len()];
            (i, synthetic_response(&ds, i, k / rule_items.len()))
        })
        .collect();
    let mut evaluators: Vec<&str> = rule_items
        .iter()
        .map(|&i| ds.task_of(&ds.items[i]).evaluator.as_str())
        .collect();
    evaluators.sort();
    evaluators.dedup();

    let mut rates = Vec::new();
    let mut settled = 0;
    for _ in 0..5 {
        let t = Instant::now();
        settled = 0;
        for (i, r) in &inputs {
            if let Step::Done(v) = step(&ds, &ds.items[*i], Some(r)) {
                settled += usize::from(v.score >= 0.0);
            }
        }
        rates.push(N as f64 / t.elapsed().as_secs_f64());
    }
    println!(
        "deterministic scoring, one thread: {:.0} responses/s (median of 5; {N} responses, {} evaluators: {}; {settled} settled by rule)",
        median(rates),
        evaluators.len(),
        evaluators.join(", ")
    );

    let lang_inputs: Vec<(usize, String)> = (0..10_000)
        .map(|k| {
            let i = lang_items[k % lang_items.len()];
            let text = match k % 3 {
                0 => "Aujourd'hui il fait très beau, allons nous promener dans le parc avec les enfants.",
                1 => "今日はとても良い天気なので、公園に散歩に行きましょう。子供たちも一緒です。",
                _ => "The weather is lovely today, so let us take a walk in the park with the children.",
            };
            (i, text.to_string())
        })
        .collect();
    let mut rates = Vec::new();
    for _ in 0..5 {
        let t = Instant::now();
        for (i, r) in &lang_inputs {
            std::hint::black_box(step(&ds, &ds.items[*i], Some(r)));
        }
        rates.push(lang_inputs.len() as f64 / t.elapsed().as_secs_f64());
    }
    println!(
        "language evaluator (langdetect, seed 0), one thread: {:.0} responses/s (median of 5; 10,000 responses of ~80 characters)",
        median(rates)
    );

    // 2. Rates for 50 models x 9,448 items from the store.
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("bench.db");
    let mut store = Store::open(&path).unwrap();
    // 65 tasks spread over the 15 categories like the release (9,448 items in all).
    let tasks: Vec<(String, usize)> = (0..65)
        .map(|t| {
            let c = &CATEGORIES[t % 15];
            (
                format!("{}-{}-T{t:02}", c.dimension.code(), c.code),
                9_448 / 65 + usize::from(t < 9_448 % 65),
            )
        })
        .collect();
    let mut rows = Vec::with_capacity(9_448);
    for m in 0..50 {
        rows.clear();
        let mut k = 0u32;
        for (task, n) in &tasks {
            for j in 0..*n {
                let h = (m as u64 * 1_000_003 + k as u64 * 7_919) % 100;
                rows.push(ScoreRecord {
                    run_id: "bench".into(),
                    job_idx: m * 9_448 + k,
                    item_id: format!("{task}-{j:04}"),
                    task_id: task.clone(),
                    model: format!("model-{m:02}"),
                    sample: 0,
                    evaluator: "exact".into(),
                    score: Some(if h < 70 { 1.0 } else { 0.0 }),
                    detail: "matches the answer".into(),
                    judge: None,
                    judge_reply: None,
                    judge_attempts: 0,
                    created_at: 0,
                    rule_score: None,
                });
                k += 1;
            }
        }
        store.save_scores(&rows).unwrap();
    }
    drop(store);
    let catalogue = Catalogue {
        tasks: tasks
            .iter()
            .map(|(id, n)| {
                let mut p = id.split('-');
                let d: Dimension = p.next().unwrap().parse().unwrap();
                let c = prism::taxonomy::category(d, p.next().unwrap()).unwrap();
                (id.clone(), (d, c.code, *n))
            })
            .collect(),
    };
    let mut times = Vec::new();
    let mut summary = Vec::new();
    let mut points = 0;
    for _ in 0..5 {
        let t = Instant::now();
        let store = Store::open(&path).unwrap();
        let mut agg = Aggregator::default();
        points = store
            .score_points("bench", |model, task, item, score| {
                agg.add(Point {
                    model,
                    task,
                    item,
                    score,
                })
            })
            .unwrap();
        summary = agg.finish(&catalogue);
        std::hint::black_box(dimension_correlations(&summary));
        times.push(t.elapsed().as_secs_f64() * 1000.0);
    }
    assert_eq!(summary.len(), 50);
    assert!(summary[0].h_score().is_some());
    println!(
        "rates from the store, 50 models x 9,448 items ({points} scores): {:.1} ms (median of 5; read, task S, 4 dimension + 15 category rates, H-Score, Spearman 4x4)",
        median(times)
    );
}
