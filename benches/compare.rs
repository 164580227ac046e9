//! Comparing two runs (issue 26): two runs of 9,448 items × 3 samples each (PRISM's size),
//! scores stored in a SQLite store, then `prism compare`'s work as the CLI does it: each side's
//! scores read from the store, paired, and compared with 2,000 bootstrap resamples. Target:
//! under 200 ms.
//!
//! `cargo bench --bench compare [-- --items N --resamples N]`

use std::time::Instant;

use prism::eval::compare;
use prism::store::{JobRecord, RunConfig, RunRecord, RunStatus, ScoreRecord, Store};

fn arg(name: &str, default: usize) -> usize {
    let args: Vec<String> = std::env::args().collect();
    args.iter()
        .position(|a| a == name)
        .and_then(|i| args.get(i + 1))
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

fn main() {
    let items = arg("--items", 9448);
    let resamples = arg("--resamples", 2000);
    let samples = 3u32;
    let dir = tempfile::tempdir().unwrap();
    let mut store = Store::open(&dir.path().join("c.db")).unwrap();
    // 65 sub-tasks over the four dimensions, as PRISM has.
    let dims = ["KE", "KM", "RE", "IFE"];
    let task = |i: usize| format!("{}-T-{}", dims[(i / 7) % 4], (i / 7) % 65);
    for (run, seed) in [("ra", 3usize), ("rb", 5usize)] {
        let mut jobs = Vec::new();
        let mut scores = Vec::new();
        for i in 0..items {
            for s in 0..samples {
                let idx = jobs.len() as u32;
                jobs.push(JobRecord {
                    idx,
                    item_id: format!("item-{i}"),
                    task_id: task(i),
                    model: "m".into(),
                    sample: s,
                });
                scores.push(ScoreRecord {
                    run_id: run.into(),
                    job_idx: idx,
                    item_id: format!("item-{i}"),
                    task_id: task(i),
                    model: "m".into(),
                    sample: s,
                    evaluator: "exact".into(),
                    score: Some(f64::from(!(i * seed + s as usize).is_multiple_of(3))),
                    detail: String::new(),
                    judge: None,
                    judge_reply: None,
                    judge_attempts: 0,
                    created_at: 0,
                    rule_score: None,
                });
            }
        }
        let mut cfg = RunConfig::default();
        cfg.models.push(prism::store::ModelSnapshot {
            name: "m".into(),
            provider: "openai".into(),
            ..Default::default()
        });
        cfg.samples = samples;
        store
            .create_run(
                &RunRecord {
                    id: run.into(),
                    created_at: 0,
                    dataset: "synthetic".into(),
                    config: cfg,
                    status: RunStatus::Finished,
                },
                &jobs,
            )
            .unwrap();
        store.save_scores(&scores).unwrap();
    }
    let mut times = Vec::new();
    for _ in 0..7 {
        let t = Instant::now();
        let a = prism::runs::resolve_side(&prism::store::Db::file(&store.path().unwrap()), "ra")
            .unwrap();
        let b = prism::runs::resolve_side(&prism::store::Db::file(&store.path().unwrap()), "rb")
            .unwrap();
        let sa =
            prism::runs::side_scores(&prism::store::Db::file(&store.path().unwrap()), &a).unwrap();
        let sb =
            prism::runs::side_scores(&prism::store::Db::file(&store.path().unwrap()), &b).unwrap();
        let read = t.elapsed();
        let c = compare::compare(("ra", &sa), ("rb", &sb), resamples, 0);
        let all = t.elapsed();
        assert_eq!(c.paired, items);
        times.push((all.as_secs_f64() * 1e3, read.as_secs_f64() * 1e3));
    }
    times.sort_by(|x, y| x.0.total_cmp(&y.0));
    let (total, read) = times[times.len() / 2];
    println!(
        "compare: 2 runs x {items} items x {samples} samples, {resamples} resamples: median {total:.1} ms \
         (reading both sides {read:.1} ms, the statistics {:.1} ms); min {:.1}, max {:.1} ms",
        total - read,
        times[0].0,
        times[times.len() - 1].0
    );
}
