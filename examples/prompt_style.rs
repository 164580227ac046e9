//! Which prompt style suits the bundled base model better on the sample data: llama.cpp's chat
//! template ("gemma") or the completion style (`Question ... Answer:`)?
//!
//! `cargo build --release && cargo run --release --example prompt_style -- [GGUF]` (default: the
//! installed default model; the model runs in a worker process of the `prism` binary beside it).
//! Every sample item with a reference answer is asked both ways (greedy, 32 tokens). Reported per
//! style: how often the answer contains the reference (loosely: case, punctuation and spacing
//! ignored; `[NO_INFO]` counts when the model says NO_INFO; option letters are matched on the
//! first standalone A-D), how often the model parrots the task prompt back, and how often it says
//! nothing at all.

use std::time::{Duration, Instant};

use prism::provider::local::LocalModel;
use prism::provider::{Params, StreamEvent};

fn loose(s: &str) -> String {
    s.to_lowercase()
        .chars()
        .map(|c| {
            if ".,;:!?'\"()[]{}".contains(c) {
                ' '
            } else {
                c
            }
        })
        .collect::<String>()
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ")
}

fn first_letter(s: &str) -> Option<char> {
    s.split(|c: char| !c.is_ascii_alphanumeric())
        .find(|w| w.len() == 1 && w.chars().all(|c| ('A'..='D').contains(&c)))
        .and_then(|w| w.chars().next())
}

fn main() {
    // target/<profile>/examples/prompt_style -> target/<profile>/prism
    let prism_bin = std::env::current_exe()
        .ok()
        .and_then(|e| Some(e.parent()?.parent()?.join("prism")))
        .filter(|p| p.is_file())
        .expect("build prism first (cargo build --release): its binary runs the model");
    prism::provider::local::set_worker_program(prism_bin);
    let dirs = prism::config::Dirs::resolve();
    let path = std::env::args()
        .nth(1)
        .map(std::path::PathBuf::from)
        .unwrap_or_else(|| prism::cli::model::default_path(&dirs));
    let ds = prism::dataset::load_sample().dataset;
    let rt = tokio::runtime::Runtime::new().unwrap();
    let threads = std::thread::available_parallelism()
        .map(|n| n.get() as i32)
        .unwrap_or(2);
    println!(
        "model {}; {} threads; greedy, 32 tokens",
        path.display(),
        threads
    );
    println!(
        "{:<11} {:>6} {:>10} {:>8} {:>7} {:>8}",
        "style", "items", "contains", "echoes", "empty", "time"
    );
    for completion in [false, true] {
        let m = LocalModel::load(&path, threads, 4096, 1, completion, None).unwrap();
        let (mut n, mut hit, mut echo, mut empty) = (0, 0, 0, 0);
        let t = Instant::now();
        for (i, item) in ds.items.iter().enumerate() {
            let Some(answer) = item.answer.as_deref() else {
                continue;
            };
            let params = Params {
                temperature: Some(0.0),
                max_tokens: Some(32),
                seed: Some(1),
                ..Params::default()
            };
            let req = prism::prompt::build_request(&ds, i, 0, params);
            let text = rt.block_on(async {
                let mut s = m.stream(&req, Duration::from_secs(120)).await.unwrap();
                let mut out = String::new();
                while let Some(Ok(ev)) = s.next().await {
                    match ev {
                        StreamEvent::Delta(d) => out.push_str(&d),
                        StreamEvent::Finish { .. } => break,
                        _ => {}
                    }
                }
                out
            });
            n += 1;
            let l = loose(&text);
            let ok = if answer == "[NO_INFO]" {
                text.to_uppercase().contains("NO_INFO")
            } else if item.options.is_some() {
                first_letter(&text) == answer.chars().next()
            } else {
                let a = loose(answer);
                !a.is_empty() && l.contains(&a)
            };
            hit += usize::from(ok);
            let prompt_lines = ["# role", "# task", "output format", "return only"];
            echo += usize::from(prompt_lines.iter().any(|p| text.to_lowercase().contains(p)));
            empty += usize::from(text.trim().is_empty());
        }
        println!(
            "{:<11} {:>6} {:>9.1}% {:>7.1}% {:>6.1}% {:>7.1}s",
            if completion { "completion" } else { "chat" },
            n,
            100.0 * hit as f64 / n as f64,
            100.0 * echo as f64 / n as f64,
            100.0 * empty as f64 / n as f64,
            t.elapsed().as_secs_f64()
        );
    }
}
