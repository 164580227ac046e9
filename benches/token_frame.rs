//! Drawing the compare screen with token shading on (issue 27): three models' answers of 400
//! tokens each, every token with five alternatives, at 200x60, the token cursor on an unlikely
//! token of the focused pane; beside the same frame unshaded. Target: under 2 ms a frame.
//!
//! Run: `cargo bench --bench token_frame`.

use std::sync::Arc;

use criterion::{Criterion, criterion_group, criterion_main};
use prism::dataset;
use prism::provider::TokenLogprob;
use prism::store::ResponseRecord;
use prism::theme::Theme;
use prism::tui::App;
use prism::tui::component::Open;
use prism::tui::keymap::{Action, Keymap};
use ratatui::Terminal;
use ratatui::backend::TestBackend;

const TOKENS: usize = 400;

/// An answer of `TOKENS` tokens whose probabilities sweep from likely to unlikely (every
/// shade is drawn), each with five alternatives; a newline every 40 tokens.
fn tokens(seed: usize) -> Vec<TokenLogprob> {
    (0..TOKENS)
        .map(|i| {
            let p = 0.02 + 0.97 * (((i * 37 + seed * 11) % 100) as f64 / 100.0);
            let token = if i % 40 == 39 {
                "\n".to_string()
            } else {
                format!(" word{}", i % 97)
            };
            TokenLogprob {
                token,
                logprob: p.ln() as f32,
                top: (0..5)
                    .map(|k| (format!(" alt{k}"), ((1.0 - p) / 6.0).ln() as f32))
                    .collect(),
            }
        })
        .collect()
}

fn benches(c: &mut Criterion) {
    let ds = Arc::new(dataset::load_sample().dataset);
    let mut app = App::new(
        ds.clone(),
        Arc::new(Vec::new()),
        Theme::default_theme(),
        Keymap::default(),
    );
    app.area = ratatui::layout::Rect::new(0, 0, 200, 60);
    let item = &ds.items[0];
    let records: Vec<ResponseRecord> = (0..3)
        .map(|m| {
            let toks = tokens(m);
            ResponseRecord {
                run_id: "r".into(),
                job_idx: m as u32,
                item_id: item.id.to_string(),
                task_id: ds.task_of(item).id.clone(),
                model: format!("model-{m}"),
                sample: 0,
                text: Some(toks.iter().map(|t| t.token.as_str()).collect()),
                error: None,
                finish_reason: Some("stop".into()),
                prompt_tokens: None,
                completion_tokens: Some(TOKENS as u32),
                latency_ms: Some(1200),
                first_token_ms: None,
                attempts: 1,
                params: "{}".into(),
                request_hash: String::new(),
                cached: false,
                created_at: 0,
                cache_key: None,
                logprobs: Some(prism::store::logprobs::encode(&toks)),
            }
        })
        .collect();
    app.session.load_stored(0, &records);
    app.push(Open::Compare {
        items: vec![0],
        pos: 0,
    });
    let mut term = Terminal::new(TestBackend::new(200, 60)).unwrap();
    let mut g = c.benchmark_group("render");
    g.bench_function("compare_frame_200x60_plain", |b| {
        b.iter(|| {
            term.draw(|f| app.draw(f)).unwrap();
        })
    });
    app.act(Action::NextToken);
    app.act(Action::NextToken);
    g.bench_function("compare_frame_200x60_tokens_shaded", |b| {
        b.iter(|| {
            term.draw(|f| app.draw(f)).unwrap();
        })
    });
    g.finish();
    // The frame really is shaded: the cursor's token is drawn reversed.
    term.draw(|f| app.draw(f)).unwrap();
    let reversed = term
        .backend()
        .buffer()
        .content()
        .iter()
        .filter(|c| c.modifier.contains(ratatui::style::Modifier::REVERSED))
        .count();
    assert!(reversed > 0, "no token under the cursor was drawn");
}

criterion_group!(token_frame, benches);
criterion_main!(token_frame);
