//! Heatmap and report speed: `cargo bench --bench report`.
//!
//! 1. Draw the heatmap screen for 50 models x 65 sub-tasks at 200x60 (the sub-task view, the
//!    widest), and the time to rebuild its rows from 472,400 scores when it opens.
//! 2. Build the HTML report for 50 models x 9,448 items from a SQLite store: read the scores,
//!    every rate, the Spearman matrix, each model's five worst sub-tasks with an example failure
//!    (question and answer), and the document itself.

#[path = "support/synth.rs"]
mod synth;

use std::time::Instant;

use prism::report::{Report, build, html};
use prism::store::{JobRecord, ResponseRecord, RunConfig, RunRecord, ScoreRecord, Store};
use prism::theme::Theme;
use prism::tui::App;
use prism::tui::keymap::{Action, Keymap};
use ratatui::Terminal;
use ratatui::backend::TestBackend;

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(|a, b| a.partial_cmp(b).unwrap());
    v[v.len() / 2]
}

fn score_of(m: usize, k: usize) -> f64 {
    // Per model a different share right, varying by item.
    f64::from(((m * 7 + k * 13) % 100) as u32 >= 20 + (m as u32 % 50))
}

fn main() {
    let dir = tempfile::tempdir().unwrap();
    synth::synth_release(dir.path(), 9_448);
    let ds = prism::dataset::load_path(dir.path()).unwrap().dataset;
    assert_eq!(ds.items.len(), 9_448);
    assert_eq!(ds.tasks.len(), 65);
    let models: Vec<String> = (0..50).map(|m| format!("model-{m:02}")).collect();

    // 1. The heatmap.
    let mut app = App::new(
        std::sync::Arc::new(ds.clone()),
        std::sync::Arc::new(Vec::new()),
        Theme::default_theme(),
        Keymap::default(),
    );
    for (m, model) in models.iter().enumerate() {
        for (k, it) in ds.items.iter().enumerate() {
            app.session.apply_score(ScoreRecord {
                run_id: "bench".into(),
                job_idx: (m * 9_448 + k) as u32,
                item_id: it.id.to_string(),
                task_id: ds.task_of(it).id.clone(),
                model: model.clone(),
                sample: 0,
                evaluator: "exact".into(),
                score: Some(score_of(m, k)),
                detail: String::new(),
                judge: None,
                judge_reply: None,
                judge_attempts: 0,
                created_at: 0,
                rule_score: None,
            });
        }
    }
    // What a frame costs after a score arrives: the summaries (the same aggregator as `prism
    // score`) are rebuilt from every answer's state.
    app.before_draw();
    let mut refresh = Vec::new();
    for i in 0..5 {
        let it = &ds.items[i];
        app.session.apply_score(ScoreRecord {
            run_id: "bench".into(),
            job_idx: i as u32,
            item_id: it.id.to_string(),
            task_id: ds.task_of(it).id.clone(),
            model: models[0].clone(),
            sample: 0,
            evaluator: "exact".into(),
            score: Some(1.0 - score_of(0, i)),
            detail: String::new(),
            judge: None,
            judge_reply: None,
            judge_attempts: 0,
            created_at: 0,
            rule_score: None,
        });
        let t = Instant::now();
        assert!(app.session.refresh());
        refresh.push(t.elapsed().as_secs_f64() * 1000.0);
    }
    app.act(Action::Heatmap);
    app.act(Action::HeatView);
    app.act(Action::HeatView);
    let mut term = Terminal::new(TestBackend::new(200, 60)).unwrap();
    let mut frames = Vec::new();
    for i in 0..300 {
        // Move the cursor so frames differ (crosshair, horizontal scroll).
        app.act(if i % 2 == 0 {
            Action::Expand
        } else {
            Action::Down
        });
        let t = Instant::now();
        term.draw(|f| app.draw(f)).unwrap();
        frames.push(t.elapsed().as_secs_f64() * 1000.0);
    }
    let cols = app.heatmap().unwrap().columns().len();
    println!(
        "heatmap frame, 50 models x {cols} sub-tasks at 200x60: {:.3} ms (median of 300 frames; p99 {:.3} ms)",
        median(frames.clone()),
        {
            frames.sort_by(|a, b| a.partial_cmp(b).unwrap());
            frames[(frames.len() - 1) * 99 / 100]
        }
    );
    println!(
        "summaries (tree, heatmap) rebuilt after a score arrives, {} answers: {:.1} ms (median of 5)",
        app.session.points.len(),
        median(refresh)
    );

    // 2. The HTML report from a store.
    let path = dir.path().join("bench.db");
    let mut store = Store::open(&path).unwrap();
    store
        .create_run(
            &RunRecord {
                id: "bench".into(),
                created_at: 1_796_000_000,
                dataset: dir.path().display().to_string(),
                config: RunConfig::default(),
                status: prism::store::RunStatus::Finished,
            },
            &Vec::<JobRecord>::new(),
        )
        .unwrap();
    for (m, model) in models.iter().enumerate() {
        let mut scores = Vec::with_capacity(9_448);
        let mut responses = Vec::with_capacity(9_448);
        for (k, it) in ds.items.iter().enumerate() {
            let job = (m * 9_448 + k) as u32;
            let task = ds.task_of(it).id.clone();
            scores.push(ScoreRecord {
                run_id: "bench".into(),
                job_idx: job,
                item_id: it.id.to_string(),
                task_id: task.clone(),
                model: model.clone(),
                sample: 0,
                evaluator: "exact".into(),
                score: Some(score_of(m, k)),
                detail: "expected \"x\"".into(),
                judge: None,
                judge_reply: None,
                judge_attempts: 0,
                created_at: 0,
                rule_score: None,
            });
            responses.push(ResponseRecord {
                run_id: "bench".into(),
                job_idx: job,
                item_id: it.id.to_string(),
                task_id: task,
                model: model.clone(),
                sample: 0,
                text: Some("An answer of a few words <b>with markup</b> to escape.".into()),
                error: None,
                finish_reason: None,
                prompt_tokens: None,
                completion_tokens: None,
                latency_ms: None,
                first_token_ms: None,
                attempts: 1,
                params: "{}".into(),
                request_hash: String::new(),
                cached: false,
                created_at: 0,
                cache_key: None,
                logprobs: None,
            });
        }
        store.save_scores(&scores).unwrap();
        store.save_responses(&responses).unwrap();
    }
    drop(store);
    let mut times = Vec::new();
    let mut size = 0;
    for _ in 0..5 {
        let t = Instant::now();
        let store = Store::open(&path).unwrap();
        let (rows, meta) = build::from_store(
            &prism::store::Db::file(&store.path().unwrap()),
            "bench",
            Some(&ds),
        )
        .unwrap();
        let rep = Report::new(rows, meta);
        let doc = html::html(&rep, &Theme::default_theme());
        size = doc.len();
        times.push(t.elapsed().as_secs_f64() * 1000.0);
    }
    println!(
        "HTML report, 50 models x 9,448 items from the store: {:.0} ms (median of 5; {:.0} KB, self-contained)",
        median(times),
        size as f64 / 1024.0
    );
}
