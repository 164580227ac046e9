//! Run-engine throughput against a local stub server, next to the stub's raw capacity.
//!
//! `cargo bench --bench run_throughput` (add `-- --jobs N` for another size). It:
//! 1. starts the stub (tests/common/mock.rs, model `bench32`: a 32-token reply written at once);
//! 2. measures the stub's raw capacity with a plain load loop: 256 concurrent reqwest clients
//!    posting the same requests and reading whole bodies (no parsing, no store);
//! 3. runs 20,000 jobs through the engine at concurrency 256 with the SQLite store on (every
//!    response committed before it is announced; cache looked up and filled);
//! 4. reports jobs/s against the raw capacity, p50/p99 of the per-job overhead (from the request
//!    being sent to the committed result announced, minus the HTTP time the engine measured),
//!    and the heap: peak, and sampled every 2,000 jobs to show it stays flat;
//! 5. times `prism run --resume` logic on a 200,000-job run whose jobs are all done.

#[path = "../tests/common/mock.rs"]
mod mock;

use std::collections::HashMap;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Instant;

use prism::engine::{self, Event, RunSpec};
use prism::provider::ModelsFile;
use prism::store::{JobRecord, ResponseRecord, RunConfig, RunRecord, Store, StoreHandle};
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

#[path = "support/counting_alloc.rs"]
mod counting_alloc;
use counting_alloc::{CURRENT, Counting, PEAK};

#[global_allocator]
static ALLOC: Counting = Counting;

fn mb(b: usize) -> f64 {
    b as f64 / 1e6
}

fn percentile(v: &mut [f64], p: f64) -> f64 {
    if v.is_empty() {
        return 0.0;
    }
    v.sort_by(|a, b| a.partial_cmp(b).unwrap());
    v[((v.len() - 1) as f64 * p).round() as usize]
}

/// Raw capacity: 256 workers posting prism's own requests and draining the bodies.
async fn raw_capacity(url: &str, ds: &prism::dataset::Dataset, n: usize, conc: usize) -> f64 {
    let client = reqwest::Client::builder()
        .pool_max_idle_per_host(conc)
        .build()
        .unwrap();
    let bodies: Arc<Vec<serde_json::Value>> = Arc::new(
        (0..ds.items.len())
            .map(|i| {
                let req = prism::prompt::build_request(ds, i, 0, Default::default());
                serde_json::json!({"model": "bench32", "stream": true, "messages":
                    req.messages.iter().map(|m| serde_json::json!({"role": m.role.as_str(), "content": m.content})).collect::<Vec<_>>()})
            })
            .collect(),
    );
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
    let jobs_wanted: usize = args
        .iter()
        .position(|a| a == "--jobs")
        .and_then(|i| args.get(i + 1))
        .and_then(|s| s.parse().ok())
        .unwrap_or(20_000);
    let conc = 256;
    let rt = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .unwrap();
    let ds = Arc::new(prism::dataset::load_sample().dataset);
    let samples = jobs_wanted.div_ceil(ds.items.len()) as u32;

    rt.block_on(async {
        let stub = mock::start(false).await;
        // Warm up connections and the stub.
        raw_capacity(&stub.url(), &ds, 2_000, conc).await;
        let raw = raw_capacity(&stub.url(), &ds, jobs_wanted, conc).await;

        let dir = tempfile::tempdir().unwrap();
        let db = dir.path().join("bench.db");
        let store = StoreHandle::spawn(Store::open(&db).unwrap(), Some(db.clone()));
        let models: ModelsFile = toml::from_str(&format!(
            "[[models]]\nname = \"stub\"\nprovider = \"openai\"\nbase_url = \"{}/v1\"\nmodel = \"bench32\"\nmax_concurrency = {conc}\n",
            stub.url()
        ))
        .unwrap();
        let mut spec = RunSpec::new(ds.clone(), "<sample-data>".into(), (0..ds.items.len()).collect(), models.models);
        spec.samples = samples;
        spec.concurrency = conc;
        // As `prism run` does: no per-token events headless.
        spec.stream_deltas = false;
        // The engine alone (see the resume below).
        spec.score = None;
        let total = spec.plan().len();

        let base_heap = CURRENT.load(Ordering::Relaxed);
        PEAK.store(base_heap, Ordering::Relaxed);
        let (tx, mut rx) = mpsc::unbounded_channel();
        let collector = tokio::spawn(async move {
            let mut sent: HashMap<u32, Instant> = HashMap::new();
            let mut overheads = Vec::new();
            let mut heap_series = Vec::new();
            let mut done = 0usize;
            while let Some(ev) = rx.recv().await {
                match ev {
                    Event::Sending { job, .. } => {
                        sent.insert(job, Instant::now());
                    }
                    Event::Done { job, response } => {
                        done += 1;
                        if let (Some(t0), Some(ms)) = (sent.remove(&job), response.latency_ms) {
                            let total_ms = t0.elapsed().as_secs_f64() * 1000.0;
                            overheads.push((total_ms - ms as f64).max(0.0));
                        }
                        if done.is_multiple_of(2_000) {
                            heap_series.push(CURRENT.load(Ordering::Relaxed));
                        }
                    }
                    Event::Life(prism::engine::harness::Lifecycle::Finished(_)) => break,
                    _ => {}
                }
            }
            (overheads, heap_series)
        });
        let t = Instant::now();
        let summary = engine::run(spec, store, engine::http_backends(), tx, CancellationToken::new())
            .await
            .unwrap();
        let secs = t.elapsed().as_secs_f64();
        let (mut overheads, heap_series) = collector.await.unwrap();
        assert_eq!(summary.done, total, "{summary:?}");
        let rate = total as f64 / secs;
        let peak = PEAK.load(Ordering::Relaxed).saturating_sub(base_heap);
        println!("stub raw capacity (plain load loop, {conc} concurrent): {raw:.0} req/s");
        println!(
            "prism run: {total} jobs at concurrency {conc}, store on: {secs:.2} s = {rate:.0} jobs/s ({:.2}x raw)",
            rate / raw
        );
        println!(
            "per-job overhead (sent -> committed and announced, minus HTTP): p50 {:.2} ms, p99 {:.2} ms",
            percentile(&mut overheads, 0.5),
            percentile(&mut overheads, 0.99)
        );
        println!(
            "heap during the run: peak {:.1} MB above the start; every 2,000 jobs: {}",
            mb(peak),
            heap_series
                .iter()
                .map(|b| format!("{:.1}", mb(b.saturating_sub(base_heap))))
                .collect::<Vec<_>>()
                .join(" ")
        );
        drop(stub);
    });
    let hwm = std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("VmHWM:"))
                .map(|l| l.to_string())
        })
        .unwrap_or_default();
    println!(
        "process peak RSS (stub server, load loop and run, one process): {}",
        hwm.trim_start_matches("VmHWM:").trim()
    );

    // Resume of a 200,000-job run whose jobs are all done.
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("resume.db");
    let n_jobs = 200_000usize;
    let per_item = n_jobs.div_ceil(ds.items.len());
    let own: ModelsFile = toml::from_str(
        "[[models]]\nname = \"stub\"\nprovider = \"openai\"\nbase_url = \"http://127.0.0.1:9/v1\"\n",
    )
    .unwrap();
    let own = own.models;
    {
        let mut s = Store::open(&db).unwrap();
        let models: ModelsFile = toml::from_str(
            "[[models]]\nname = \"stub\"\nprovider = \"openai\"\nbase_url = \"http://127.0.0.1:9/v1\"\n",
        )
        .unwrap();
        let mut jobs = Vec::with_capacity(n_jobs);
        let mut responses = Vec::with_capacity(n_jobs);
        for i in 0..n_jobs {
            let item = &ds.items[i / per_item];
            let job = JobRecord {
                idx: i as u32,
                item_id: item.id.to_string(),
                task_id: ds.task_of(item).id.clone(),
                model: "stub".into(),
                sample: (i % per_item) as u32,
            };
            responses.push(ResponseRecord {
                run_id: "big".into(),
                job_idx: i as u32,
                item_id: job.item_id.clone(),
                task_id: job.task_id.clone(),
                model: "stub".into(),
                sample: job.sample,
                text: Some("answer".into()),
                error: None,
                finish_reason: None,
                prompt_tokens: None,
                completion_tokens: None,
                latency_ms: Some(1),
                first_token_ms: None,
                attempts: 1,
                params: "{}".into(),
                request_hash: String::new(),
                cached: false,
                created_at: 0,
                cache_key: None,
                logprobs: None,
            });
            jobs.push(job);
        }
        let run = RunRecord {
            id: "big".into(),
            created_at: 0,
            dataset: "<sample-data>".into(),
            config: RunConfig {
                models: models
                    .models
                    .iter()
                    .map(prism::store::ModelSnapshot::from)
                    .collect(),
                samples: per_item as u32,
                ..RunConfig::default()
            },
            status: prism::store::RunStatus::Finished,
        };
        s.create_run(&run, &jobs).unwrap();
        s.save_responses(&responses).unwrap();
    }
    let t = Instant::now();
    let rt2 = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .unwrap();
    let summary = rt2.block_on(async {
        // The same steps as `prism run --resume`: open, find what is left, resume.
        let s = Store::open(&db).unwrap();
        let run = s.run("big").unwrap().unwrap();
        let unfinished = s.unfinished_jobs("big").unwrap();
        let all: Vec<_> = s.jobs("big").unwrap().into_iter().map(|(j, _)| j).collect();
        let (tx, _rx) = mpsc::unbounded_channel();
        let handle = StoreHandle::spawn(s, Some(db.clone()));
        let lane = engine::Lane {
            store: handle,
            factory: engine::http_backends(),
            events: tx,
            cancel: CancellationToken::new(),
        };
        engine::resume(
            lane,
            &run,
            // This machine's own model of the run's name (a store never names the endpoint).
            engine::resume_models(&run, &[], &own, false)
                .unwrap()
                .models,
            engine::ResumeJobs {
                dataset: ds.clone(),
                unfinished,
                all,
                unscored: Vec::new(),
            },
            // The engine's own throughput, as before scoring moved into it; what scoring as
            // answers arrive costs is measured by process_run (prism run as users run it).
            engine::ResumeOptions {
                concurrency: 64,
                stream_deltas: false,
                score: None,
            },
        )
        .await
        .unwrap()
    });
    let secs = t.elapsed();
    assert_eq!(summary.total, 0);
    println!(
        "resume of a {n_jobs}-job run with every job done: {:.0} ms",
        secs.as_secs_f64() * 1000.0
    );
}
