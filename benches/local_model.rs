//! The embedded local model: speed against llama.cpp itself, load time, memory, and the TUI's
//! input latency while it generates.
//!
//! `cargo bench --bench local_model` (needs the default model installed, or `PRISM_GEMMA_GGUF`;
//! the llama.cpp comparison needs `PRISM_LLAMA_PYTHON`, a python with llama-cpp-python, which
//! `.ci/run` sets up). Same file, same thread count, same prompt text, measured in one run:
//! - prompt processing: tokens/s to the first generated token;
//! - generation: tokens/s from the first to the last token, greedy, 128 tokens;
//! - llama.cpp (through llama-cpp-python's low-level streaming API) timed the same way;
//! - load time and peak RSS;
//! - TUI input latency: while the local model streams into the compare screen, keys are sent
//!   every 100 ms and the time to the next completed frame is recorded;
//! - start-up to the first token: prism's worker process (spawn, load, first token) against the
//!   same engine in the bench's own process, as prism ran it before the worker (issue 29);
//! - batches: aggregate generation tokens/s of 1, 4 and 8 requests at once to one worker of 8
//!   sequences (one llama context), 64 tokens each, and one request's latency alone; beside it,
//!   the same prompts decoded by llama-cpp-2 directly, all prompts in one batch and then one
//!   token of each in every step (the most llama.cpp itself makes of batching on this machine
//!   and file: the ceiling for any scheduler built on it);
//! - generation beside busy processes: tokens/s idle and with one busy-looping process per core,
//!   for libgomp's default spin and for prism's (`GOMP_SPINCOUNT`), each in a process of its own;
//! - two models at once (the demo's case): each model's generation tokens/s alone, then both
//!   generating at once in one prism (one thread budget: the cores shared out) and in two
//!   processes (each worker taking every core, as before the budget), with the combined
//!   efficiency (the sum of each model's rate over its rate alone);
//! - AutoHall on one bundled claim as a user runs it (`prism autohall --models M --limit 1 -k 6
//!   --temperature 0.5`, the prism binary, a fresh store, no cache), with `smol` at
//!   `max_concurrency` 1 and 4.
//!
//! `-- --only NAME,...` runs some sections: speed, batches, startup, contended, together,
//! autohall, tui.

use std::io;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use crossterm::event::{Event, KeyCode, KeyEvent, KeyModifiers};
use prism::provider::local::{Engine, Job, LoadSpec, LocalModel, Sink};
use prism::provider::{ChatRequest, Message, Params, StreamEvent};
use ratatui::Terminal;
use ratatui::backend::{Backend, ClearType, TestBackend, WindowSize};
use ratatui::buffer::Cell;
use ratatui::layout::{Position, Size};

const GEN_TOKENS: u32 = 128;

fn prompt_text() -> String {
    // About 400 tokens of a realistic PRISM-style prompt.
    let para = "Read the following context carefully. The committee examined the budget, the \
                schedule and the staffing plan of the new hospital wing, and noted that the \
                contractor had revised the cost estimate twice in six months. ";
    format!(
        "{}\nNow answer: what did the committee note?",
        para.repeat(10)
    )
}

struct Timing {
    prompt_tokens: usize,
    pp_tps: f64,
    gen_tps: f64,
}

fn time_prism(m: &LocalModel, rt: &tokio::runtime::Runtime, text: &str) -> Timing {
    let req = ChatRequest {
        messages: vec![Message::user(text)],
        params: Params {
            temperature: Some(0.0),
            max_tokens: Some(GEN_TOKENS),
            seed: Some(1),
            // No stop: always exactly GEN_TOKENS unless the model ends.
            ..Params::default()
        },
    };
    rt.block_on(async {
        let t0 = Instant::now();
        let mut s = m.stream(&req, Duration::from_secs(300)).await.unwrap();
        let mut first = None;
        let mut last = t0;
        let mut usage = None;
        while let Some(Ok(ev)) = s.next().await {
            match ev {
                StreamEvent::Delta(_) => {
                    let now = Instant::now();
                    first.get_or_insert(now);
                    last = now;
                }
                StreamEvent::Usage(u) => usage = Some(u),
                StreamEvent::Tokens(_) => {}
                StreamEvent::Finish { .. } => break,
            }
        }
        let u = usage.unwrap();
        let pt = u.prompt_tokens.unwrap() as usize;
        let generated = u.completion_tokens.unwrap() as f64;
        let first = first.unwrap();
        Timing {
            prompt_tokens: pt,
            pp_tps: pt as f64 / (first - t0).as_secs_f64(),
            gen_tps: (generated - 1.0) / (last - first).as_secs_f64(),
        }
    })
}

/// llama.cpp timed the same way through llama-cpp-python (tokens in, greedy, no sampling chain).
fn time_llama_cpp(
    python: &PathBuf,
    gguf: &std::path::Path,
    prompt: &str,
    threads: i32,
) -> Option<(f64, f64, usize)> {
    let script = r#"
import sys, time, json
from llama_cpp import Llama
path, threads, n_gen = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
prompt = sys.stdin.read()
llm = Llama(model_path=path, n_ctx=4096, n_threads=threads, n_threads_batch=threads, n_batch=512, verbose=False)
toks = llm.tokenize(prompt.encode(), add_bos=True, special=True)
def run():
    llm.reset()
    t0 = time.perf_counter()
    first = last = None
    n = 0
    for tok in llm.generate(toks, top_k=1, temp=0.0, reset=True):
        now = time.perf_counter()
        if first is None:
            first = now
        last = now
        n += 1
        if n >= n_gen or llm.token_eos() == tok:
            break
    return len(toks) / (first - t0), (n - 1) / (last - first)
run()  # warm-up
runs = [run() for _ in range(5)]
pp = sorted(r[0] for r in runs)[2]
tg = sorted(r[1] for r in runs)[2]
print(json.dumps({"pp": pp, "tg": tg, "prompt_tokens": len(toks)}))
"#;
    let mut child = std::process::Command::new(python)
        .arg("-c")
        .arg(script)
        .arg(gguf)
        .arg(threads.to_string())
        .arg(GEN_TOKENS.to_string())
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null())
        .spawn()
        .ok()?;
    use std::io::Write;
    child.stdin.take()?.write_all(prompt.as_bytes()).ok()?;
    let out = child.wait_with_output().ok()?;
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).ok()?;
    Some((
        v["pp"].as_f64()?,
        v["tg"].as_f64()?,
        v["prompt_tokens"].as_u64()? as usize,
    ))
}

/// The same prompt through llama-cpp-2 directly (the llama.cpp build prism links), with no prism
/// code around it: separates prism's own overhead from differences between llama.cpp builds.
fn time_raw_llama_cpp_2(gguf: &std::path::Path, prompt: &str, threads: i32) -> (f64, f64) {
    use llama_cpp_2::context::params::LlamaContextParams;
    use llama_cpp_2::llama_backend::LlamaBackend;
    use llama_cpp_2::llama_batch::LlamaBatch;
    use llama_cpp_2::model::LlamaModel;
    use llama_cpp_2::model::params::LlamaModelParams;
    use llama_cpp_2::sampling::LlamaSampler;
    // Runs in a child process of its own (`--raw`): llama.cpp's backend is initialised once per
    // process, and prism's is already up in the parent.
    let mut backend = LlamaBackend::init().unwrap();
    backend.void_logs();
    let backend = &backend;
    let model = LlamaModel::load_from_file(backend, gguf, &LlamaModelParams::default()).unwrap();
    let mut runs = Vec::new();
    for _ in 0..6 {
        let mut ctx = model
            .new_context(
                backend,
                LlamaContextParams::default()
                    .with_flash_attention_policy(0)
                    .with_n_ctx(std::num::NonZeroU32::new(4096))
                    .with_n_batch(512)
                    .with_n_threads(threads)
                    .with_n_threads_batch(threads),
            )
            .unwrap();
        let toks = model.vocab().tokenize(prompt.as_bytes(), true, true);
        let t0 = Instant::now();
        let mut batch = LlamaBatch::new(512, 1);
        for (i, &t) in toks.iter().enumerate() {
            batch.add(t, i as i32, &[0], i == toks.len() - 1).unwrap();
        }
        ctx.decode(&mut batch).unwrap();
        let mut sampler = LlamaSampler::greedy();
        let mut tok = sampler.sample(&ctx, batch.n_tokens() - 1);
        let first = Instant::now();
        let mut n = 1;
        let mut pos = toks.len() as i32;
        while n < GEN_TOKENS {
            batch.clear();
            batch.add(tok, pos, &[0], true).unwrap();
            pos += 1;
            ctx.decode(&mut batch).unwrap();
            tok = sampler.sample(&ctx, batch.n_tokens() - 1);
            n += 1;
        }
        let last = Instant::now();
        runs.push((
            toks.len() as f64 / (first - t0).as_secs_f64(),
            (n - 1) as f64 / (last - first).as_secs_f64(),
        ));
    }
    runs.remove(0);
    let mut pp: Vec<f64> = runs.iter().map(|r| r.0).collect();
    let mut tg: Vec<f64> = runs.iter().map(|r| r.1).collect();
    pp.sort_by(|a, b| a.partial_cmp(b).unwrap());
    tg.sort_by(|a, b| a.partial_cmp(b).unwrap());
    (pp[2], tg[2])
}

fn rss_peak_mb() -> f64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines().find(|l| l.starts_with("VmHWM:")).and_then(|l| {
                l.split_whitespace()
                    .nth(1)
                    .and_then(|k| k.parse::<f64>().ok())
            })
        })
        .map(|kb| kb / 1024.0)
        .unwrap_or(0.0)
}

/// A TestBackend that records when each frame is flushed.
struct Timed {
    inner: TestBackend,
    flushes: Arc<Mutex<Vec<Instant>>>,
}

impl Backend for Timed {
    type Error = <TestBackend as Backend>::Error;
    fn draw<'a, I>(&mut self, content: I) -> Result<(), Self::Error>
    where
        I: Iterator<Item = (u16, u16, &'a Cell)>,
    {
        self.inner.draw(content)
    }
    fn hide_cursor(&mut self) -> Result<(), Self::Error> {
        self.inner.hide_cursor()
    }
    fn show_cursor(&mut self) -> Result<(), Self::Error> {
        self.inner.show_cursor()
    }
    fn get_cursor_position(&mut self) -> Result<Position, Self::Error> {
        self.inner.get_cursor_position()
    }
    fn set_cursor_position<P: Into<Position>>(&mut self, p: P) -> Result<(), Self::Error> {
        self.inner.set_cursor_position(p)
    }
    fn clear(&mut self) -> Result<(), Self::Error> {
        self.inner.clear()
    }
    fn clear_region(&mut self, t: ClearType) -> Result<(), Self::Error> {
        self.inner.clear_region(t)
    }
    fn size(&self) -> Result<Size, Self::Error> {
        self.inner.size()
    }
    fn window_size(&mut self) -> Result<WindowSize, Self::Error> {
        self.inner.window_size()
    }
    fn flush(&mut self) -> Result<(), Self::Error> {
        self.flushes.lock().unwrap().push(Instant::now());
        self.inner.flush()
    }
}

/// Load time, prompt and generation speed of one GGUF, against llama.cpp (llama-cpp-python) and
/// against llama-cpp-2 used directly, on the same rendered prompt.
fn speed(gguf: &std::path::Path, threads: i32, rt: &tokio::runtime::Runtime) {
    let t = Instant::now();
    let m = LocalModel::load(gguf, threads, 4096, 1, false, None).unwrap();
    let load = t.elapsed();
    let rendered = m.render(&[Message::user(prompt_text())]).unwrap();
    let _warm = time_prism(&m, rt, &prompt_text());
    // Median of five, as for llama.cpp below.
    let mut runs: Vec<Timing> = (0..5).map(|_| time_prism(&m, rt, &prompt_text())).collect();
    runs.sort_by(|a, b| a.pp_tps.partial_cmp(&b.pp_tps).unwrap());
    let pp_median = runs[2].pp_tps;
    runs.sort_by(|a, b| a.gen_tps.partial_cmp(&b.gen_tps).unwrap());
    let ours = Timing {
        prompt_tokens: runs[2].prompt_tokens,
        pp_tps: pp_median,
        gen_tps: runs[2].gen_tps,
    };
    println!("model {} ({threads} threads)", gguf.display());
    println!("load: {:.0} ms", load.as_secs_f64() * 1000.0);
    println!(
        "prism:     prompt {:>4} tokens at {:>7.1} tok/s; generation {:>6.1} tok/s",
        ours.prompt_tokens, ours.pp_tps, ours.gen_tps
    );
    match std::env::var_os("PRISM_LLAMA_PYTHON").map(PathBuf::from) {
        Some(py) => match time_llama_cpp(&py, gguf, &rendered, threads) {
            Some((pp, tg, n)) => {
                println!(
                    "llama.cpp: prompt {n:>4} tokens at {pp:>7.1} tok/s; generation {tg:>6.1} tok/s (llama-cpp-python)"
                );
                println!(
                    "ratio prism/llama.cpp: prompt {:.2}, generation {:.2}",
                    ours.pp_tps / pp,
                    ours.gen_tps / tg
                );
            }
            None => println!("llama.cpp: the llama-cpp-python run failed"),
        },
        None => println!("llama.cpp: set PRISM_LLAMA_PYTHON to compare"),
    }
    println!(
        "peak RSS after load and generation: {:.0} MB",
        rss_peak_mb()
    );
    let raw = std::process::Command::new(std::env::current_exe().unwrap())
        .arg("--raw")
        .arg(gguf)
        .arg(threads.to_string())
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .and_then(|mut c| {
            use std::io::Write;
            c.stdin.take().unwrap().write_all(rendered.as_bytes())?;
            c.wait_with_output()
        })
        .ok()
        .and_then(|o| String::from_utf8(o.stdout).ok())
        .and_then(|s| {
            let mut it = s.split_whitespace().filter_map(|x| x.parse::<f64>().ok());
            Some((it.next()?, it.next()?))
        });
    if let Some((raw_pp, raw_tg)) = raw {
        println!(
            "llama-cpp-2 directly (prism's llama.cpp build, no prism code): prompt {raw_pp:.1} tok/s; generation {raw_tg:.1} tok/s"
        );
        println!(
            "ratio prism/direct: prompt {:.2}, generation {:.2}",
            ours.pp_tps / raw_pp,
            ours.gen_tps / raw_tg
        );
    }
}

/// A sink that tells the bench when the first token arrived.
struct FirstToken(std::sync::mpsc::Sender<()>);

impl Sink for FirstToken {
    fn send(&self, ev: Result<StreamEvent, prism::provider::ProviderError>) -> bool {
        if matches!(ev, Ok(StreamEvent::Delta(_))) {
            let _ = self.0.send(());
            return false; // one token is all this measures
        }
        true
    }
    fn cancelled(&self) -> bool {
        false
    }
}

/// Load to first token, median of five: through a worker process, and in this process.
fn startup(gguf: &std::path::Path, threads: i32, rt: &tokio::runtime::Runtime) {
    let msg = [Message::user("Name three primary colours.")];
    let params = Params {
        temperature: Some(0.0),
        max_tokens: Some(4),
        ..Params::default()
    };
    let median = |mut v: Vec<f64>| {
        v.sort_by(|a, b| a.partial_cmp(b).unwrap());
        v[v.len() / 2]
    };
    let worker: Vec<f64> = (0..5)
        .map(|_| {
            let t0 = Instant::now();
            let m = LocalModel::load(gguf, threads, 4096, 1, false, None).unwrap();
            let req = ChatRequest {
                messages: msg.to_vec(),
                params: params.clone(),
            };
            rt.block_on(async {
                let mut s = m.stream(&req, Duration::from_secs(60)).await.unwrap();
                while let Some(Ok(ev)) = s.next().await {
                    if matches!(ev, StreamEvent::Delta(_)) {
                        break;
                    }
                }
            });
            t0.elapsed().as_secs_f64() * 1000.0
        })
        .collect();
    let spec = LoadSpec {
        path: gguf.to_path_buf(),
        threads,
        context: 4096,
        workers: 1,
        completion: false,
        template: None,
    };
    let inproc: Vec<f64> = (0..5)
        .map(|_| {
            let t0 = Instant::now();
            let e = Engine::load(&spec).unwrap();
            let (prompt, p) = e.prepare(&msg, &params).unwrap();
            let (tx, rx) = std::sync::mpsc::channel();
            e.submit(Job {
                prompt,
                params: p,
                sink: Box::new(FirstToken(tx)),
            })
            .unwrap();
            rx.recv().unwrap();
            t0.elapsed().as_secs_f64() * 1000.0
        })
        .collect();
    let (w, i) = (median(worker), median(inproc));
    println!(
        "start-up to first token: worker process {w:.0} ms, in-process {i:.0} ms (ratio {:.2})",
        w / i
    );
}

/// Generation tokens/s idle, then with one busy-looping process per core (`yes`), in this
/// process's environment (the caller sets GOMP_SPINCOUNT or not).
fn contended(gguf: &std::path::Path, threads: i32, rt: &tokio::runtime::Runtime) -> (f64, f64) {
    let m = LocalModel::load(gguf, threads, 4096, 1, false, None).unwrap();
    let text = "Write a short story about a lighthouse keeper.";
    let _warm = time_prism(&m, rt, text);
    let median = |m: &LocalModel| {
        let mut v: Vec<f64> = (0..3).map(|_| time_prism(m, rt, text).gen_tps).collect();
        v.sort_by(|a, b| a.partial_cmp(b).unwrap());
        v[1]
    };
    let idle = median(&m);
    let cores = std::thread::available_parallelism().map_or(2, |n| n.get());
    let mut busy: Vec<_> = (0..cores)
        .map(|_| {
            std::process::Command::new("yes")
                .stdout(std::process::Stdio::null())
                .spawn()
                .unwrap()
        })
        .collect();
    std::thread::sleep(Duration::from_millis(200));
    let loaded = median(&m);
    for b in &mut busy {
        let _ = b.kill();
        let _ = b.wait();
    }
    (idle, loaded)
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    if let Some(i) = args.iter().position(|a| a == "--raw-batch") {
        let gguf = PathBuf::from(&args[i + 1]);
        let threads: i32 = args[i + 2].parse().unwrap();
        let mut text = String::new();
        std::io::Read::read_to_string(&mut std::io::stdin(), &mut text).unwrap();
        let prompts: Vec<String> = serde_json::from_str(&text).unwrap();
        for n in [1, 4, 8] {
            println!("{n} {}", raw_batch(&gguf, threads, &prompts[..n]));
        }
        return;
    }
    if let Some(i) = args.iter().position(|a| a == "--generate") {
        // One model generating in a process of its own, started on a line from stdin.
        prism::provider::local::set_worker_program(env!("CARGO_BIN_EXE_prism"));
        let gguf = PathBuf::from(&args[i + 1]);
        let threads: i32 = args[i + 2].parse().unwrap();
        let tokens: u32 = args[i + 3].parse().unwrap();
        let rt = tokio::runtime::Runtime::new().unwrap();
        let m = LocalModel::load(&gguf, threads, 4096, 1, false, None).unwrap();
        let _warm = generation_rate(&m, &rt, 8);
        println!("ready");
        let mut go = String::new();
        std::io::stdin().read_line(&mut go).unwrap();
        println!("{}", generation_rate(&m, &rt, tokens));
        return;
    }
    if let Some(i) = args.iter().position(|a| a == "--contended") {
        prism::provider::local::set_worker_program(env!("CARGO_BIN_EXE_prism"));
        let gguf = PathBuf::from(&args[i + 1]);
        let threads: i32 = args[i + 2].parse().unwrap();
        let rt = tokio::runtime::Runtime::new().unwrap();
        let (idle, loaded) = contended(&gguf, threads, &rt);
        println!("{idle} {loaded}");
        return;
    }
    if let Some(i) = args.iter().position(|a| a == "--raw") {
        let gguf = PathBuf::from(&args[i + 1]);
        let threads: i32 = args[i + 2].parse().unwrap();
        let mut prompt = String::new();
        std::io::Read::read_to_string(&mut std::io::stdin(), &mut prompt).unwrap();
        let (pp, tg) = time_raw_llama_cpp_2(&gguf, &prompt, threads);
        println!("{pp} {tg}");
        return;
    }
    // The models run in worker processes of the prism binary (this bench's executable is not
    // prism).
    prism::provider::local::set_worker_program(env!("CARGO_BIN_EXE_prism"));
    let dirs = prism::config::Dirs::resolve();
    let gguf = std::env::var_os("PRISM_GEMMA_GGUF")
        .map(PathBuf::from)
        .unwrap_or_else(|| prism::cli::model::default_path(&dirs));
    if !gguf.is_file() {
        eprintln!(
            "no model at {}: run `prism model install` or set PRISM_GEMMA_GGUF",
            gguf.display()
        );
        return;
    }
    let threads = std::thread::available_parallelism()
        .map(|n| n.get() as i32)
        .unwrap_or(2);
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();

    let only: Option<Vec<String>> = args
        .iter()
        .position(|a| a == "--only")
        .and_then(|i| args.get(i + 1))
        .map(|s| s.split(',').map(str::to_string).collect());
    let wants = |name: &str| only.as_ref().is_none_or(|o| o.iter().any(|x| x == name));
    let smol = std::env::var_os("PRISM_SMOL_GGUF")
        .map(PathBuf::from)
        .unwrap_or_else(|| prism::cli::model::SMOL.path(&dirs));
    if wants("speed") {
        speed(&gguf, threads, &rt);
        // The second built-in model (SmolLM2 135M Instruct), measured the same way.
        if smol.is_file() {
            println!();
            speed(&smol, threads, &rt);
        } else {
            println!(
                "\nno SmolLM2 at {}: `prism model install smol` or set PRISM_SMOL_GGUF",
                smol.display()
            );
        }
        println!();
    }
    if wants("batches") {
        batch_throughput(&smol_or(&smol, &gguf), threads, &rt);
        if smol.is_file() {
            batch_throughput(&gguf, threads, &rt);
        }
    }
    if wants("startup") {
        startup(&smol_or(&smol, &gguf), threads, &rt);
    }
    if wants("together") && smol.is_file() {
        together(&smol, &gguf, threads, &rt);
    }
    if wants("autohall") {
        // `--prism A,B`: other prism binaries to time beside this build's (e.g. an earlier
        // commit's), alternating.
        let mut bins = vec![PathBuf::from(env!("CARGO_BIN_EXE_prism"))];
        if let Some(i) = args.iter().position(|a| a == "--prism") {
            bins.extend(args[i + 1].split(',').map(PathBuf::from));
        }
        autohall(&smol_or(&smol, &gguf), &bins);
    }
    // Beside busy processes, each setting in a process of its own (the worker inherits it).
    for (label, spin) in [
        ("libgomp's default spin", None),
        (
            "prism's GOMP_SPINCOUNT",
            Some(prism::provider::local::GOMP_SPINCOUNT),
        ),
    ]
    .into_iter()
    .filter(|_| wants("contended"))
    {
        let mut cmd = std::process::Command::new(std::env::current_exe().unwrap());
        cmd.arg("--contended")
            .arg(smol_or(&smol, &gguf))
            .arg(threads.to_string());
        match spin {
            // A value of libgomp's own default, so the worker keeps it.
            None => cmd.env("GOMP_SPINCOUNT", "300000"),
            Some(s) => cmd.env("GOMP_SPINCOUNT", s),
        };
        let out = cmd.output().unwrap();
        let text = String::from_utf8_lossy(&out.stdout);
        let v: Vec<f64> = text
            .split_whitespace()
            .filter_map(|x| x.parse().ok())
            .collect();
        if let [idle, loaded] = v[..] {
            println!(
                "generation beside one busy process per core ({label}): idle {idle:.1} tok/s, busy {loaded:.1} tok/s ({:.2}x)",
                loaded / idle
            );
        }
    }
    println!();
    if !wants("tui") {
        return;
    }

    // TUI input latency while the local model streams.
    let loaded = prism::dataset::load_sample();
    let mut local = prism::cli::run::builtin_local();
    local.path = Some(gguf.clone());
    local.params.max_tokens = Some(200);
    local.threads = Some(threads as u32);
    let mut app = prism::tui::App::new(
        Arc::new(loaded.dataset),
        Arc::new(loaded.problems),
        prism::theme::Theme::default_theme(),
        prism::tui::keymap::Keymap::default(),
    )
    .with_models(vec![local]);
    let dir = tempfile::tempdir().unwrap();
    let mut services = rt
        .block_on(async {
            prism::tui::Services::with_store(
                &dir.path().join("prism.db"),
                prism::engine::backends(gguf.clone()),
                "<sample-data>".into(),
            )
        })
        .unwrap();
    let flushes = Arc::new(Mutex::new(Vec::new()));
    let mut term = Terminal::new(Timed {
        inner: TestBackend::new(120, 40),
        flushes: flushes.clone(),
    })
    .unwrap();
    let sends = Arc::new(Mutex::new(Vec::new()));
    let (tx, rx) = tokio::sync::mpsc::unbounded_channel::<io::Result<Event>>();
    let key = |c: KeyCode| Ok(Event::Key(KeyEvent::new(c, KeyModifiers::NONE)));
    // Start a run of three items, then press keys while it streams.
    for k in [
        KeyCode::Char('j'),
        KeyCode::Enter,
        KeyCode::Char('j'),
        KeyCode::Tab,
        KeyCode::Char(' '),
        KeyCode::Char(' '),
        KeyCode::Char(' '),
        KeyCode::Char('r'),
        KeyCode::Enter,
    ] {
        tx.send(key(k)).unwrap();
    }
    let sends2 = sends.clone();
    std::thread::spawn(move || {
        std::thread::sleep(Duration::from_millis(1500));
        for i in 0..40 {
            let k = if i % 2 == 0 {
                KeyCode::Tab
            } else {
                KeyCode::BackTab
            };
            sends2.lock().unwrap().push(Instant::now());
            if tx.send(key(k)).is_err() {
                break;
            }
            std::thread::sleep(Duration::from_millis(100));
        }
    });
    rt.block_on(async {
        let stream = tokio_stream_from(rx);
        prism::tui::run_loop_with(&mut term, &mut app, stream, &mut services).await
    })
    .unwrap();
    let flushes = flushes.lock().unwrap();
    let mut lat: Vec<f64> = sends
        .lock()
        .unwrap()
        .iter()
        .filter_map(|s| {
            flushes
                .iter()
                .find(|f| *f > s)
                .map(|f| (*f - *s).as_secs_f64() * 1000.0)
        })
        .collect();
    lat.sort_by(|a, b| a.partial_cmp(b).unwrap());
    if !lat.is_empty() {
        println!(
            "TUI key-to-frame latency while the local model streams: p50 {:.1} ms, p99 {:.1} ms, max {:.1} ms ({} keys)",
            lat[lat.len() / 2],
            lat[((lat.len() - 1) as f64 * 0.99) as usize],
            lat[lat.len() - 1],
            lat.len()
        );
    }
}

const TOPICS: [&str; 8] = [
    "the sea",
    "a mountain",
    "a city at night",
    "an old library",
    "a desert",
    "a forest",
    "a river",
    "a small village",
];

fn story(t: &str) -> String {
    format!("Write a long story about {t}.")
}

/// Aggregate generation speed with `n` requests at once (different prompts, greedy, 64 tokens
/// each): tokens generated over the time from sending to the last token. Beside it, the same
/// prompts through llama-cpp-2 directly in a process of its own (`--raw-batch`).
fn batch_throughput(gguf: &std::path::Path, threads: i32, rt: &tokio::runtime::Runtime) {
    let m = LocalModel::load(gguf, threads, 4096, 8, false, None).unwrap();
    println!("batches: {} ({threads} threads)", gguf.display());
    let run = |n: usize| -> (f64, f64) {
        rt.block_on(async {
            let t0 = Instant::now();
            let jobs = TOPICS[..n].iter().map(|t| {
                let req = ChatRequest {
                    messages: vec![Message::user(story(t))],
                    params: Params {
                        temperature: Some(0.0),
                        max_tokens: Some(64),
                        ..Params::default()
                    },
                };
                let m = &m;
                async move {
                    let mut s = m.stream(&req, Duration::from_secs(300)).await.unwrap();
                    let mut tokens = 0u32;
                    while let Some(Ok(ev)) = s.next().await {
                        match ev {
                            StreamEvent::Usage(u) => tokens = u.completion_tokens.unwrap_or(0),
                            StreamEvent::Finish { .. } => break,
                            _ => {}
                        }
                    }
                    tokens
                }
            });
            let tokens: u32 = futures::future::join_all(jobs).await.into_iter().sum();
            let wall = t0.elapsed().as_secs_f64();
            (tokens as f64 / wall, wall)
        })
    };
    let _warm = run(1);
    let (one, one_wall) = run(1);
    let rendered: Vec<String> = TOPICS
        .iter()
        .map(|t| m.render(&[Message::user(story(t))]).unwrap())
        .collect();
    let raw = raw_batch_child(gguf, threads, &rendered);
    for n in [4, 8] {
        let (agg, _) = run(n);
        let ceiling = match (raw.get(&1), raw.get(&n)) {
            (Some(r1), Some(rn)) => format!(
                "; llama.cpp itself: 1 {r1:.1}, {n} {rn:.1} tok/s ({:.2}x); prism at {n} is {:.2} of it",
                rn / r1,
                agg / rn
            ),
            _ => String::new(),
        };
        println!(
            "batches: {n} at once {agg:.1} tok/s aggregate, 1 alone {one:.1} tok/s ({:.2}x){ceiling}",
            agg / one
        );
    }
    println!("batches: one request alone, 64 tokens, {:.2} s", one_wall);
}

/// `--raw-batch` in a child process (llama.cpp's backend is set up once per process): n -> tok/s.
fn raw_batch_child(
    gguf: &std::path::Path,
    threads: i32,
    prompts: &[String],
) -> std::collections::HashMap<usize, f64> {
    let out = std::process::Command::new(std::env::current_exe().unwrap())
        .arg("--raw-batch")
        .arg(gguf)
        .arg(threads.to_string())
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .and_then(|mut c| {
            use std::io::Write;
            c.stdin
                .take()
                .unwrap()
                .write_all(serde_json::to_string(prompts).unwrap().as_bytes())?;
            c.wait_with_output()
        })
        .unwrap();
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter_map(|l| {
            let mut it = l.split_whitespace();
            Some((it.next()?.parse().ok()?, it.next()?.parse().ok()?))
        })
        .collect()
}

/// llama-cpp-2 directly: every prompt in one batch, then 64 greedy steps of one token for each
/// sequence in one batch; tokens generated over the whole time, median of three.
fn raw_batch(gguf: &std::path::Path, threads: i32, prompts: &[String]) -> f64 {
    use llama_cpp_2::context::params::LlamaContextParams;
    use llama_cpp_2::llama_backend::LlamaBackend;
    use llama_cpp_2::llama_batch::LlamaBatch;
    use llama_cpp_2::model::LlamaModel;
    use llama_cpp_2::model::params::LlamaModelParams;
    use llama_cpp_2::sampling::LlamaSampler;
    static BACKEND: std::sync::OnceLock<LlamaBackend> = std::sync::OnceLock::new();
    let backend = BACKEND.get_or_init(|| {
        let mut b = LlamaBackend::init().unwrap();
        b.void_logs();
        b
    });
    let model = LlamaModel::load_from_file(backend, gguf, &LlamaModelParams::default()).unwrap();
    let n = prompts.len();
    let mut rates: Vec<f64> = (0..3)
        .map(|_| {
            let mut ctx = model
                .new_context(
                    backend,
                    LlamaContextParams::default()
                        .with_flash_attention_policy(0)
                        .with_n_ctx(std::num::NonZeroU32::new(4096))
                        .with_n_batch(512)
                        .with_n_threads(threads)
                        .with_n_threads_batch(threads)
                        .with_n_seq_max(n as u32)
                        .with_kv_unified(true),
                )
                .unwrap();
            let toks: Vec<_> = prompts
                .iter()
                .map(|p| model.vocab().tokenize(p.as_bytes(), true, true))
                .collect();
            let t0 = Instant::now();
            let mut batch = LlamaBatch::new(512, 1);
            let mut at = Vec::new();
            for (s, tk) in toks.iter().enumerate() {
                for (i, &t) in tk.iter().enumerate() {
                    batch
                        .add(t, i as i32, &[s as i32], i == tk.len() - 1)
                        .unwrap();
                }
                at.push(batch.n_tokens() - 1);
            }
            ctx.decode(&mut batch).unwrap();
            let mut samplers: Vec<LlamaSampler> = (0..n).map(|_| LlamaSampler::greedy()).collect();
            let mut next: Vec<_> = (0..n).map(|s| samplers[s].sample(&ctx, at[s])).collect();
            for step in 0..63 {
                batch.clear();
                for s in 0..n {
                    let pos = (toks[s].len() + step) as i32;
                    batch.add(next[s], pos, &[s as i32], true).unwrap();
                }
                ctx.decode(&mut batch).unwrap();
                for s in 0..n {
                    next[s] = samplers[s].sample(&ctx, s as i32);
                }
            }
            (64 * n) as f64 / t0.elapsed().as_secs_f64()
        })
        .collect();
    rates.sort_by(|a, b| a.partial_cmp(b).unwrap());
    rates[1]
}

/// Generation tokens/s of one greedy answer of `tokens` tokens (first to last token).
fn generation_rate(m: &LocalModel, rt: &tokio::runtime::Runtime, tokens: u32) -> f64 {
    let req = ChatRequest {
        messages: vec![Message::user(story("a lighthouse keeper"))],
        params: Params {
            temperature: Some(0.0),
            max_tokens: Some(tokens),
            ..Params::default()
        },
    };
    rt.block_on(async {
        let mut s = m.stream(&req, Duration::from_secs(600)).await.unwrap();
        let (mut first, mut last, mut n) = (None, Instant::now(), 0u32);
        while let Some(Ok(ev)) = s.next().await {
            match ev {
                StreamEvent::Delta(_) => {
                    let now = Instant::now();
                    first.get_or_insert(now);
                    last = now;
                }
                StreamEvent::Usage(u) => n = u.completion_tokens.unwrap_or(0),
                StreamEvent::Tokens(_) => {}
                StreamEvent::Finish { .. } => break,
            }
        }
        let first = first.unwrap_or(last);
        f64::from(n.saturating_sub(1)) / (last - first).as_secs_f64().max(1e-9)
    })
}

/// Two models generating at once, the demo's case: in one prism (one thread budget) and in two
/// processes (each worker takes every core, as before the budget), against each alone.
fn together(
    smol: &std::path::Path,
    gemma: &std::path::Path,
    threads: i32,
    rt: &tokio::runtime::Runtime,
) {
    // Token counts that keep both busy for about the same time (smol is about twice as fast).
    let (ns, ng) = (256u32, 128u32);
    let median3 = |f: &dyn Fn() -> f64| {
        let mut v: Vec<f64> = (0..3).map(|_| f()).collect();
        v.sort_by(|a, b| a.partial_cmp(b).unwrap());
        v[1]
    };
    let s = LocalModel::load(smol, threads, 4096, 1, false, None).unwrap();
    let g = LocalModel::load(gemma, threads, 4096, 1, false, None).unwrap();
    let _warm = (generation_rate(&s, rt, 8), generation_rate(&g, rt, 8));
    let s_alone = median3(&|| generation_rate(&s, rt, ns));
    let g_alone = median3(&|| generation_rate(&g, rt, ng));
    let (s_one, g_one) = {
        let mut v: Vec<(f64, f64)> = (0..3)
            .map(|_| {
                std::thread::scope(|sc| {
                    let a = sc.spawn(|| generation_rate(&s, rt, ns));
                    let b = sc.spawn(|| generation_rate(&g, rt, ng));
                    (a.join().unwrap(), b.join().unwrap())
                })
            })
            .collect();
        v.sort_by(|a, b| {
            (a.0 / s_alone + a.1 / g_alone)
                .partial_cmp(&(b.0 / s_alone + b.1 / g_alone))
                .unwrap()
        });
        v[1]
    };
    drop((s, g));
    // Two processes: each with a budget of its own, so each worker takes every core.
    let spawn = |path: &std::path::Path, n: u32| {
        std::process::Command::new(std::env::current_exe().unwrap())
            .arg("--generate")
            .arg(path)
            .arg(threads.to_string())
            .arg(n.to_string())
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .spawn()
            .unwrap()
    };
    let mut two: Vec<(f64, f64)> = (0..3)
        .map(|_| {
            use std::io::{BufRead, Write};
            let mut kids = [spawn(smol, ns), spawn(gemma, ng)];
            let mut outs: Vec<_> = kids
                .iter_mut()
                .map(|k| std::io::BufReader::new(k.stdout.take().unwrap()))
                .collect();
            for o in &mut outs {
                let mut l = String::new();
                o.read_line(&mut l).unwrap(); // ready
            }
            for k in &mut kids {
                k.stdin.as_mut().unwrap().write_all(b"go\n").unwrap();
            }
            let rates: Vec<f64> = outs
                .iter_mut()
                .map(|o| {
                    let mut l = String::new();
                    o.read_line(&mut l).unwrap();
                    l.trim().parse().unwrap()
                })
                .collect();
            for k in &mut kids {
                let _ = k.wait();
            }
            (rates[0], rates[1])
        })
        .collect();
    two.sort_by(|a, b| {
        (a.0 / s_alone + a.1 / g_alone)
            .partial_cmp(&(b.0 / s_alone + b.1 / g_alone))
            .unwrap()
    });
    let (s_two, g_two) = two[1];
    println!("two models at once ({threads} cores; smol {ns} tokens, local {ng}, greedy):");
    println!("  alone: smol {s_alone:.1} tok/s, local {g_alone:.1} tok/s");
    println!(
        "  one prism, one thread budget: smol {s_one:.1}, local {g_one:.1} tok/s; combined efficiency {:.2}",
        s_one / s_alone + g_one / g_alone
    );
    println!(
        "  two processes, every core each: smol {s_two:.1}, local {g_two:.1} tok/s; combined efficiency {:.2}",
        s_two / s_alone + g_two / g_alone
    );
}

/// AutoHall on one bundled claim as a user runs it, through the prism binary: wall time and
/// calls, for `smol` at max_concurrency 1 and 4 (alternating, two rounds), for each binary.
fn autohall(smol: &std::path::Path, bins: &[PathBuf]) {
    let run = |bin: &std::path::Path, conc: u32| -> (f64, u64) {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(
            dir.path().join("models.toml"),
            format!(
                "[[models]]\nname = \"smol\"\nprovider = \"local\"\npath = {:?}\nmax_concurrency = {conc}\nparams = {{ max_tokens = 128 }}\n",
                smol.display().to_string()
            ),
        )
        .unwrap();
        let t0 = Instant::now();
        let out = std::process::Command::new(bin)
            .args(["autohall", "--models", "smol", "--limit", "1", "-k", "6"])
            .args(["--temperature", "0.5", "--no-cache", "--json"])
            .env("PRISM_CONFIG_DIR", dir.path())
            .env("PRISM_DATA_DIR", dir.path())
            .output()
            .unwrap();
        let wall = t0.elapsed().as_secs_f64();
        let text = String::from_utf8_lossy(&out.stdout);
        let done = text
            .lines()
            .filter_map(|l| serde_json::from_str::<serde_json::Value>(l).ok())
            .find(|v| v["event"] == "finished")
            .and_then(|v| v["done"].as_u64())
            .unwrap_or(0);
        (wall, done)
    };
    for round in 1..=2 {
        for bin in bins {
            for conc in [1, 4] {
                let (wall, calls) = run(bin, conc);
                println!(
                    "autohall, one claim, K = 6, T = 0.5, smol at max_concurrency {conc} (round {round}, {}): {wall:.1} s, {calls} calls",
                    bin.display()
                );
            }
        }
    }
}

/// SmolLM2 where it is installed, else the Gemma file.
fn smol_or(smol: &std::path::Path, gguf: &std::path::Path) -> PathBuf {
    if smol.is_file() { smol } else { gguf }.to_path_buf()
}

fn tokio_stream_from(
    mut rx: tokio::sync::mpsc::UnboundedReceiver<io::Result<Event>>,
) -> impl futures::Stream<Item = io::Result<Event>> + Unpin {
    Box::pin(futures::stream::poll_fn(move |cx| rx.poll_recv(cx)))
}
