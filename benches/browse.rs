//! Browse benchmarks: loading a synthetic 100,000-item release (time and peak memory), loading
//! prism-mini, and drawing one browse frame at 200x60 with the tree fully expanded.
//!
//! Run: `cargo bench --bench browse`. Peak memory is measured by a counting allocator wrapped
//! around the system allocator, so it counts exactly the heap bytes the loader holds.

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

#[path = "support/synth.rs"]
mod synth;
use synth::synth_release;

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
    let mini = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/prism-mini");
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
    app.act(Action::ExpandAll);
    assert!(app.browse().tree.all_expanded());
    let mut term = Terminal::new(TestBackend::new(200, 60)).unwrap();
    let mut g = c.benchmark_group("render");
    g.bench_function("browse_frame_200x60_expanded", |b| {
        b.iter(|| {
            term.draw(|f| app.draw(f)).unwrap();
        })
    });
    // The same with a search active (highlighting every visible row).
    app.act(Action::Down);
    app.act(Action::Down);
    g.bench_function("browse_frame_200x60_task_selected", |b| {
        b.iter(|| {
            term.draw(|f| app.draw(f)).unwrap();
        })
    });
    g.finish();
}

criterion_group!(browse, benches);
criterion_main!(browse);
