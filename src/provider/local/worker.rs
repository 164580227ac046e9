//! The worker process: `prism __local-worker`, started by prism itself (never by hand). It loads
//! one model, then answers requests from its stdin on its stdout until stdin closes (prism quit
//! or died), then exits. llama.cpp runs only here, so whatever kills it (an illegal instruction,
//! a segfault, a `GGML_ASSERT` abort, the out-of-memory killer) costs prism the jobs in flight,
//! which it retries on a fresh worker, and nothing else. Ollama runs llama.cpp the same way.

use std::collections::HashMap;
use std::io::{BufRead, Write};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

use super::decoder::{Counters, Job, Sink};
use super::engine::Engine;
use super::protocol::{FailKind, Reply, Request};
use crate::provider::{ProviderError, StreamEvent};

/// The hidden subcommand that runs a worker.
pub const SUBCOMMAND: &str = "__local-worker";
/// Test-only: abort (as a failed `GGML_ASSERT` does) once this many tokens were generated.
pub const ABORT_AFTER_FLAG: &str = "--abort-after-tokens";

/// Replies go out one line at a time from several generation threads.
#[derive(Clone)]
struct Out(Arc<Mutex<std::io::Stdout>>);

impl Out {
    fn send(&self, reply: &Reply) {
        let mut line = match serde_json::to_string(reply) {
            Ok(l) => l,
            Err(_) => return,
        };
        line.push('\n');
        let mut out = self.0.lock().unwrap_or_else(|e| e.into_inner());
        if out
            .write_all(line.as_bytes())
            .and_then(|_| out.flush())
            .is_err()
        {
            // prism is gone: nobody is left to answer.
            std::process::exit(0);
        }
    }
}

type Cancels = Arc<Mutex<HashMap<u64, Arc<AtomicBool>>>>;

struct PipeSink {
    id: u64,
    out: Out,
    cancelled: Arc<AtomicBool>,
    cancels: Cancels,
    counters: Arc<Counters>,
    abort_after: Option<u64>,
}

impl Sink for PipeSink {
    fn send(&self, ev: Result<StreamEvent, ProviderError>) -> bool {
        if self.cancelled.load(Ordering::Relaxed) {
            return false;
        }
        let generated = self.counters.generated.load(Ordering::Relaxed);
        if self.abort_after.is_some_and(|n| generated >= n) {
            std::process::abort();
        }
        let last = matches!(ev, Ok(StreamEvent::Finish { .. }) | Err(_));
        let mut reply = Reply::event(self.id, ev, generated);
        if let Reply::Usage {
            prompt_read,
            prompt_reused,
            ..
        } = &mut reply
        {
            *prompt_read = self.counters.prompt_read.load(Ordering::Relaxed);
            *prompt_reused = self.counters.prompt_reused.load(Ordering::Relaxed);
        }
        self.out.send(&reply);
        if last {
            self.cancels
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .remove(&self.id);
        }
        true
    }

    fn cancelled(&self) -> bool {
        self.cancelled.load(Ordering::Relaxed)
    }
}

/// Runs the worker; returns the exit code.
pub fn main(args: &[String]) -> i32 {
    let abort_after = args
        .iter()
        .position(|a| a == ABORT_AFTER_FLAG)
        .and_then(|i| args.get(i + 1))
        .and_then(|n| n.parse::<u64>().ok());
    let out = Out(Arc::new(Mutex::new(std::io::stdout())));
    let stdin = std::io::stdin();
    let mut lines = stdin.lock().lines();
    let spec = match lines.next() {
        Some(Ok(line)) => match serde_json::from_str::<Request>(&line) {
            Ok(Request::Load(spec)) => spec,
            _ => {
                eprintln!("{SUBCOMMAND}: the first request must load a model");
                return 2;
            }
        },
        _ => return 0,
    };
    let engine = match Engine::load(&spec) {
        Ok(e) => e,
        Err(e) => {
            let (kind, message) = FailKind::of(&e);
            out.send(&Reply::LoadFailed { kind, message });
            return 0;
        }
    };
    let (completion, template) = match engine.style() {
        super::PromptStyle::Completion => (true, None),
        super::PromptStyle::Chat(t) => (false, Some(t.clone())),
    };
    out.send(&Reply::Loaded {
        completion,
        template,
        identity: engine.identity().to_string(),
    });
    let cancels: Cancels = Arc::default();
    for line in lines {
        let Ok(line) = line else { break };
        let Ok(req) = serde_json::from_str::<Request>(&line) else {
            eprintln!("{SUBCOMMAND}: unreadable request ignored");
            continue;
        };
        match req {
            Request::Generate {
                id,
                messages,
                params,
            } => {
                let fail = |e: ProviderError| {
                    out.send(&Reply::event(id, Err(e), engine.generated_tokens()));
                };
                let (prompt, params) = match engine.prepare(&messages, &params) {
                    Ok(p) => p,
                    Err(e) => {
                        fail(e);
                        continue;
                    }
                };
                let flag = Arc::new(AtomicBool::new(false));
                cancels
                    .lock()
                    .unwrap_or_else(|e| e.into_inner())
                    .insert(id, flag.clone());
                let sink = PipeSink {
                    id,
                    out: out.clone(),
                    cancelled: flag,
                    cancels: cancels.clone(),
                    counters: engine.counters(),
                    abort_after,
                };
                if let Err(e) = engine.submit(Job {
                    prompt,
                    params,
                    sink: Box::new(sink),
                }) {
                    fail(e);
                }
            }
            Request::Render { id, messages } => {
                let (text, error) = match engine.render(&messages) {
                    Ok(t) => (Some(t), None),
                    Err(e) => (None, Some(e.to_string())),
                };
                out.send(&Reply::Rendered { id, text, error });
            }
            Request::Cancel { id } => {
                if let Some(f) = cancels
                    .lock()
                    .unwrap_or_else(|e| e.into_inner())
                    .remove(&id)
                {
                    f.store(true, Ordering::Relaxed);
                }
            }
            Request::Threads { n } => {
                let out = out.clone();
                let applied = move |n| out.send(&Reply::Threads { n });
                if let Err(e) = engine.set_threads(n, applied) {
                    eprintln!("{SUBCOMMAND}: {e}");
                }
            }
            Request::Load(_) => eprintln!("{SUBCOMMAND}: a model is loaded already"),
        }
    }
    // stdin closed: prism quit or died. Generations still running end with the process.
    0
}
