//! Self-detection throughput against a local stub, next to the stub's raw capacity, and the
//! time per triple on the embedded models.
//!
//! `cargo bench --bench selfcheck` (options: `-- --triples N --concurrency C`, and
//! `--embedded N` to also time N bundled triples on each embedded model, false sentences by
//! swap). It:
//! 1. starts the stub (tests/common/mock.rs, model `selfcheck`: sentences and verdicts
//!    scripted from the prompt);
//! 2. runs self-detection on 1,000 synthetic triples over 20 relations (a true sentence, a
//!    false one, and four verdicts per triple; one triple in ten needs a second try at its true
//!    sentence and one in ten gets unclean replies: 6,100 calls) with the SQLite store on,
//!    every result committed before it is announced;
//! 3. measures the stub's raw capacity with a plain load loop posting the same mix of requests
//!    at the same concurrency (no parsing, no store), for the ratio;
//! 4. reports calls/s, the ratio, the heap peak and the process's peak RSS;
//! 5. with `--embedded N`: the seconds per triple for `smol` and `local`.

#[path = "../tests/common/mock.rs"]
mod mock;

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Instant;

use prism::dataset::triples::{Triple, TripleSet};
use prism::provider::{ChatRequest, ModelConfig, ModelsFile};
use prism::selfcheck::prompts;
use prism::selfcheck::run::{self as engine, Options, Plan, SelfcheckEvent};
use prism::store::{FalseBy, Store, StoreHandle};
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

#[path = "support/counting_alloc.rs"]
mod counting_alloc;
use counting_alloc::{CURRENT, Counting, PEAK};

#[global_allocator]
static ALLOC: Counting = Counting;

fn arg<T: std::str::FromStr>(args: &[String], name: &str, default: T) -> T {
    args.iter()
        .position(|a| a == name)
        .and_then(|i| args.get(i + 1))
        .and_then(|s| s.parse().ok())
        .unwrap_or(default)
}

fn triples(n: usize) -> TripleSet {
    let triples = (0..n)
        .map(|i| {
            let marker = match i % 10 {
                3 => " [[retry-once]]",
                7 => " [[chatty]]",
                _ => "",
            };
            let (subject, relation, object) = (
                format!("Subject{i}{marker}"),
                format!("relation{}", i % 20),
                format!("Object{}", i % 97),
            );
            Triple {
                id: format!("t{i}"),
                sentence: Some(format!("{subject} has {relation} {object}.")),
                subject,
                relation,
                object,
                popularity: Some((i % 100) as f64),
            }
        })
        .collect();
    let mut set = TripleSet {
        label: "bench".into(),
        triples,
        relations: Vec::new(),
    };
    set.regroup();
    set
}

/// Runs self-detection and returns (seconds, calls done, calls failed).
async fn selfcheck(
    set: &TripleSet,
    models: Vec<ModelConfig>,
    false_by: FalseBy,
    concurrency: usize,
    factory: prism::engine::BackendFactory,
) -> (f64, usize, usize) {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("bench.db");
    let store = StoreHandle::spawn(Store::open(&db).unwrap(), Some(db.clone()));
    let (run, items, models) = engine::plan(
        "bench".into(),
        set,
        &set.triples,
        models,
        Vec::new(),
        Plan {
            false_by,
            ..Plan::default()
        },
    );
    let (tx, mut rx) = mpsc::unbounded_channel();
    let drain = tokio::spawn(async move {
        while let Some(ev) = rx.recv().await {
            if matches!(
                ev,
                SelfcheckEvent::Life(prism::engine::harness::Lifecycle::Finished(_))
            ) {
                break;
            }
        }
    });
    let opts = Options {
        concurrency,
        use_cache: true,
    };
    let t = Instant::now();
    let lane = prism::engine::Lane {
        store,
        factory,
        events: tx,
        cancel: CancellationToken::new(),
    };
    let s = engine::start(lane, run, items, models, opts).await.unwrap();
    let secs = t.elapsed().as_secs_f64();
    drain.await.unwrap();
    (secs, s.done, s.failed)
}

/// The stub's capacity for `n` requests at `conc` in flight: plain posts of the requests
/// self-detection makes, bodies drained.
async fn raw_capacity(url: &str, set: &TripleSet, n: usize, conc: usize) -> f64 {
    let client = reqwest::Client::builder()
        .pool_max_idle_per_host(conc)
        .build()
        .unwrap();
    let body = |req: ChatRequest| {
        serde_json::json!({"model": "selfcheck", "stream": true, "messages":
            req.messages.iter().map(|m| serde_json::json!({"role": m.role.as_str(), "content": m.content})).collect::<Vec<_>>()})
    };
    // The items one generator gets (the examples are what makes the prompts long).
    let m: ModelsFile = toml::from_str(
        "[[models]]\nname = \"g\"\nprovider = \"openai\"\nbase_url = \"http://127.0.0.1:1/v1\"\nmodel = \"selfcheck\"\n",
    )
    .unwrap();
    let items = engine::items(
        "raw",
        set,
        &set.triples,
        &set.triples,
        &m.models,
        3,
        &Default::default(),
    );
    let mut all = Vec::new();
    for it in items.iter().take(300) {
        let shots: Vec<prompts::Shot> = serde_json::from_str(&it.shots).unwrap();
        let fact = prompts::fact(&it.subject, &it.relation, &it.object, it.source.as_deref());
        let t_req = prompts::true_sentence(&fact, &it.object, &shots, Default::default());
        let t_text = mock::selfcheck_reply(&t_req.messages.last().unwrap().content, 2);
        let f_req = prompts::false_sentence(
            &t_text,
            &it.relation,
            &it.object,
            &shots,
            Default::default(),
        );
        let f_text = mock::selfcheck_reply(&f_req.messages.last().unwrap().content, 1);
        all.push(body(t_req));
        all.push(body(f_req));
        for s in [&t_text, &f_text] {
            all.push(body(prompts::direct(s)));
            all.push(body(prompts::cot(s)));
        }
    }
    let bodies = Arc::new(all);
    let next = Arc::new(AtomicUsize::new(0));
    let t = Instant::now();
    let mut hs = Vec::new();
    for _ in 0..conc {
        let (client, bodies, next, url) = (
            client.clone(),
            bodies.clone(),
            next.clone(),
            url.to_string(),
        );
        hs.push(tokio::spawn(async move {
            loop {
                let i = next.fetch_add(1, Ordering::Relaxed);
                if i >= n {
                    break;
                }
                let r = client
                    .post(format!("{url}/v1/chat/completions"))
                    .json(&bodies[i % bodies.len()])
                    .send()
                    .await
                    .unwrap();
                let _ = r.bytes().await.unwrap();
            }
        }));
    }
    for h in hs {
        h.await.unwrap();
    }
    n as f64 / t.elapsed().as_secs_f64()
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let n: usize = arg(&args, "--triples", 1_000);
    let conc: usize = arg(&args, "--concurrency", 64);
    let embedded: usize = arg(&args, "--embedded", 0);
    let rt = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .unwrap();
    let set = triples(n);
    rt.block_on(async {
        let stub = mock::start(false).await;
        let models: ModelsFile = toml::from_str(&format!(
            "[[models]]\nname = \"stub\"\nprovider = \"openai\"\nbase_url = \"{}/v1\"\nmodel = \"selfcheck\"\nmax_concurrency = {conc}\n",
            stub.url()
        ))
        .unwrap();
        // Warm up the stub and the connections.
        raw_capacity(&stub.url(), &set, 1_000, conc).await;
        let base_heap = CURRENT.load(Ordering::Relaxed);
        PEAK.store(base_heap, Ordering::Relaxed);
        let (secs, done, failed) = selfcheck(
            &set,
            models.models.clone(),
            FalseBy::Model,
            conc,
            prism::engine::http_backends(),
        )
        .await;
        let peak = PEAK.load(Ordering::Relaxed).saturating_sub(base_heap);
        let raw = raw_capacity(&stub.url(), &set, done, conc).await;
        let rate = done as f64 / secs;
        println!(
            "selfcheck: {n} triples at concurrency {conc}, store on: {done} calls ({failed} failed) in {secs:.2} s = {rate:.0} calls/s"
        );
        println!(
            "stub raw capacity (plain load loop, same calls and concurrency): {raw:.0} req/s; prism at {:.2}x",
            rate / raw
        );
        println!(
            "heap during self-detection: peak {:.1} MB above the start",
            peak as f64 / 1e6
        );
    });
    let hwm = std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("VmHWM:"))
                .map(str::to_string)
        })
        .unwrap_or_default();
    println!(
        "process peak RSS (stub, load loop and self-detection, one process): {}",
        hwm.trim_start_matches("VmHWM:").trim()
    );

    if embedded > 0 {
        // The embedded models run in worker processes of the prism binary.
        prism::provider::local::set_worker_program(env!("CARGO_BIN_EXE_prism"));
        let dirs = prism::config::Dirs::resolve();
        let mut set = prism::dataset::triples::sample_triples().set;
        let pool = set.triples.clone();
        set.spread(embedded);
        let mut smol = prism::cli::run::builtin_smol(&dirs);
        let mut local = prism::cli::run::builtin_local();
        if let Some(p) = std::env::var_os("PRISM_SMOL_GGUF") {
            smol.path = Some(p.into());
        }
        local.path = Some(
            std::env::var_os("PRISM_GEMMA_GGUF")
                .map(Into::into)
                .unwrap_or_else(|| prism::cli::model::default_path(&dirs)),
        );
        for m in [smol, local] {
            let name = m.name.clone();
            let factory = prism::cli::run::factory(&dirs);
            let t = Instant::now();
            let (run, items, models) = engine::plan(
                "<sample-triples>".into(),
                &set,
                &pool,
                vec![m],
                Vec::new(),
                Plan {
                    false_by: FalseBy::Swap,
                    ..Plan::default()
                },
            );
            let dir = tempfile::tempdir().unwrap();
            let db = dir.path().join("bench.db");
            let store = StoreHandle::spawn(Store::open(&db).unwrap(), Some(db.clone()));
            let (tx, _rx) = mpsc::unbounded_channel();
            let s = rt
                .block_on(engine::start(
                    prism::engine::Lane {
                        store,
                        factory,
                        events: tx,
                        cancel: CancellationToken::new(),
                    },
                    run,
                    items,
                    models,
                    Options {
                        // The model's own max_concurrency is the real limit.
                        concurrency: 16,
                        use_cache: false,
                    },
                ))
                .unwrap();
            let secs = t.elapsed().as_secs_f64();
            println!(
                "embedded {name}: {embedded} triples (false sentences by swap): {} calls ({} failed) in {secs:.1} s = {:.1} s per triple, {:.2} s per call",
                s.done,
                s.failed,
                secs / embedded as f64,
                secs / s.done.max(1) as f64
            );
        }
    }
}
