//! Browse benchmarks: loading a synthetic 100,000-item release (time and peak memory), loading
//! prism-mini, and drawing one browse frame at 200x60 with the tree fully expanded.
//!
//! Run: `cargo bench --bench browse`. Peak memory is measured by a counting allocator wrapped
//! around the system allocator, so it counts exactly the heap bytes the loader holds.

use std::fmt::Write as _;
use std::fs;
use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::Ordering;

use criterion::{Criterion, criterion_group, criterion_main};
use prism::dataset;
use prism::theme::Theme;
use prism::tui::App;
use prism::tui::keymap::{Action, Keymap};
use ratatui::Terminal;
use ratatui::backend::TestBackend;

#[path = "support/counting_alloc.rs"]
mod counting_alloc;
use counting_alloc::{CURRENT, Counting, PEAK};

#[global_allocator]
static ALLOC: Counting = Counting;

const WORDS: &[&str] = &[
    "the",
    "model",
    "answer",
    "river",
    "capital",
    "founded",
    "century",
    "according",
    "passage",
    "which",
    "following",
    "population",
    "census",
    "reasoning",
    "option",
    "because",
    "therefore",
    "scientist",
    "discovered",
    "element",
    "treaty",
    "signed",
    "mountain",
    "highest",
    "language",
    "official",
    "currency",
    "festival",
    "dynasty",
    "emperor",
    "algorithm",
    "protein",
    "orbit",
];

/// A small deterministic generator (no rand dependency needed for a benchmark corpus).
struct Lcg(u64);
impl Lcg {
    fn next(&mut self) -> u64 {
        self.0 = self
            .0
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        self.0 >> 33
    }
    fn words(&mut self, n: usize) -> String {
        let mut s = String::new();
        for i in 0..n {
            if i > 0 {
                s.push(' ');
            }
            s.push_str(WORDS[self.next() as usize % WORDS.len()]);
        }
        s
    }
}

/// Writes a release of `n` items over 65 tasks spread across all 15 categories, with item shapes
/// like PRISM's (options, word ranges, kwargs, ...). Returns the bytes of data written.
fn synth_release(root: &Path, n: usize) -> u64 {
    let cats: Vec<_> = prism::taxonomy::CATEGORIES.iter().collect();
    let mut tasks = Vec::new();
    let mut rng = Lcg(42);
    let mut bytes = 0u64;
    for t in 0..65 {
        let cat = cats[t % cats.len()];
        let dim = cat.dimension.code();
        let name = format!("Synth{t:02}");
        let task_id = format!("{dim}-{}-{name}", cat.code);
        let (evaluator, shape) = match t % 6 {
            0 => ("choice", 0),
            1 => ("word_range", 1),
            2 => ("ifeval", 2),
            3 => ("abstain", 3),
            4 => ("language", 4),
            _ => ("exact", 5),
        };
        let file = format!("{dim}/{}/{name}.jsonl", cat.code);
        let count = n / 65 + usize::from(t < n % 65);
        let mut out = String::with_capacity(count * 500);
        for i in 0..count {
            let len = 40 + (rng.next() % 80) as usize;
            let q = rng.words(len);
            let extra = match shape {
                0 => format!(
                    r#", "options": ["{}", "{}", "{}", "{}"], "answer": "B""#,
                    rng.words(6),
                    rng.words(6),
                    rng.words(6),
                    rng.words(6)
                ),
                1 => r#", "word_range": [50, 120]"#.to_string(),
                2 => r#", "instruction_id": "keywords:forbidden_words", "kwargs": [{"forbidden_words": ["river", "orbit"]}, {}]"#.to_string(),
                3 => r#", "answer": "[NO_INFO]""#.to_string(),
                4 => r#", "language": "fr""#.to_string(),
                _ => format!(r#", "answer": "{}""#, rng.words(3)),
            };
            let _ = writeln!(
                out,
                r#"{{"id": "{task_id}-{:04}", "task": "{task_id}", "source_id": "{}", "question": "{q}"{extra}}}"#,
                i + 1,
                i + 1
            );
        }
        let path = root.join("data").join(&file);
        fs::create_dir_all(path.parent().unwrap()).unwrap();
        bytes += out.len() as u64;
        fs::write(path, out).unwrap();
        tasks.push(serde_json::json!({
            "index": t + 1, "task_id": task_id, "dimension": dim, "subcategory": cat.code,
            "name": name, "items": count, "evaluator": evaluator, "prompt": "P", "file": file
        }));
    }
    let reg = serde_json::to_string_pretty(&tasks).unwrap();
    bytes += reg.len() as u64;
    fs::write(root.join("data/tasks.json"), reg).unwrap();
    fs::create_dir_all(root.join("prompts/tasks")).unwrap();
    fs::write(root.join("prompts/tasks/P.md"), "Answer the question.").unwrap();
    bytes
}

fn benches(c: &mut Criterion) {
    let dir = tempfile::tempdir().unwrap();
    let on_disk = synth_release(dir.path(), 100_000);

    // Peak memory of one load, against the bytes on disk.
    let before = CURRENT.load(Ordering::Relaxed);
    PEAK.store(before, Ordering::Relaxed);
    let loaded = dataset::load_path(dir.path()).unwrap();
    let peak = PEAK.load(Ordering::Relaxed) - before;
    let retained = CURRENT.load(Ordering::Relaxed) - before;
    assert_eq!(loaded.dataset.items.len(), 100_000);
    assert!(
        loaded.problems.is_empty(),
        "{:?}",
        &loaded.problems[..3.min(loaded.problems.len())]
    );
    println!(
        "synthetic release: {} items, {:.1} MB on disk; load peak heap {:.1} MB ({:.2}x disk), retained {:.1} MB ({:.2}x disk)",
        loaded.dataset.items.len(),
        on_disk as f64 / 1e6,
        peak as f64 / 1e6,
        peak as f64 / on_disk as f64,
        retained as f64 / 1e6,
        retained as f64 / on_disk as f64
    );

    let mut g = c.benchmark_group("load");
    g.sample_size(10);
    g.bench_function("synthetic_100k_load_and_index", |b| {
        b.iter(|| dataset::load_path(dir.path()).unwrap())
    });
    let mini = Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared/prism-mini");
    if mini.exists() {
        g.bench_function("prism_mini_322", |b| {
            b.iter(|| dataset::load_path(&mini).unwrap())
        });
    }
    g.bench_function("bundled_sample", |b| b.iter(dataset::load_sample));
    g.finish();

    // One browse frame at 200x60, tree fully expanded, a dimension node with ~25k items selected.
    let mut app = App::new(
        Arc::new(loaded.dataset),
        Arc::new(loaded.problems),
        Theme::default_theme(),
        Keymap::default(),
    );
    app.area = ratatui::layout::Rect::new(0, 0, 200, 60);
    app.apply(Action::ExpandAll);
    assert!(app.tree.all_expanded());
    let mut term = Terminal::new(TestBackend::new(200, 60)).unwrap();
    let mut g = c.benchmark_group("render");
    g.bench_function("browse_frame_200x60_expanded", |b| {
        b.iter(|| {
            term.draw(|f| prism::tui::view::render(&app, f)).unwrap();
        })
    });
    // The same with a search active (highlighting every visible row).
    app.apply(Action::Down);
    app.apply(Action::Down);
    g.bench_function("browse_frame_200x60_task_selected", |b| {
        b.iter(|| {
            term.draw(|f| prism::tui::view::render(&app, f)).unwrap();
        })
    });
    g.finish();
}

criterion_group!(browse, benches);
criterion_main!(browse);
