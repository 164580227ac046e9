//! Contradiction detection (AutoHall) throughput against a local stub, next to the stub's raw
//! capacity, and the time per claim on the embedded models.
//!
//! `cargo bench --bench detect` (options: `-- --claims N -k K --concurrency C`, and
//! `--embedded N` to also time N bundled claims on each embedded model at K = 6). It:
//! 1. starts the stub (tests/common/mock.rs, model `autohall`: references, classifications and
//!    pair verdicts scripted from the prompt);
//! 2. runs AutoHall on 1,000 synthetic claims at K = 6 (1 reference + 1 classification + 6
//!    samples + 6 pair checks per claim: 14,000 calls) with the SQLite store on, every result
//!    committed before it is announced;
//! 3. measures the stub's raw capacity with a plain load loop posting the same number of
//!    requests at the same concurrency (no parsing, no store), for the ratio;
//! 4. reports calls/s, the ratio, the heap peak and the process's peak RSS;
//! 5. with `--embedded N`: the seconds per claim for `smol` and `local` (PRISM_SMOL_GGUF /
//!    PRISM_GEMMA_GGUF, else the installed built-ins).
//!
//! First it times reading pair replies with and without taking the prompt's echo out.

#[path = "../tests/common/mock.rs"]
mod mock;

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Instant;

use prism::dataset::claims::{Claim, ClaimSet, Truth};
use prism::detect::run::{self as detect, DetectEvent, DetectOptions};
use prism::detect::targets;
use prism::provider::{ModelConfig, ModelsFile, Params};
use prism::store::{
    DetectConfig, DetectKind, DetectRun, ModelSnapshot, RunStatus, Store, StoreHandle,
};
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

fn claims(n: usize) -> ClaimSet {
    let claims = (0..n)
        .map(|i| Claim {
            id: format!("c{i}"),
            claim: format!(
                "Synthetic claim number {i} about topic {} {}",
                i % 7,
                if i % 3 == 0 { "[[conflict2]]" } else { "" }
            ),
            label: if i % 2 == 0 {
                Truth::True
            } else {
                Truth::False
            },
            topic: format!("t{}", i % 7),
            source_label: String::new(),
            evidence: Vec::new(),
        })
        .collect();
    ClaimSet {
        label: "bench".into(),
        claims,
        topics: Vec::new(),
        skipped: Default::default(),
        labels: Default::default(),
    }
}

fn run_of(models: &[ModelConfig], k: u32, kind: DetectKind) -> DetectRun {
    DetectRun {
        id: prism::store::new_run_id(),
        created_at: prism::store::now_secs(),
        kind,
        dataset: "bench".into(),
        config: DetectConfig {
            k,
            models: models.iter().map(ModelSnapshot::from).collect(),
            temperatures: vec![0.5],
            judge_attempts: 3,
            ..DetectConfig::default()
        },
        status: RunStatus::Running,
    }
}

/// Runs AutoHall and returns (seconds, calls done, calls failed).
async fn autohall(
    set: &ClaimSet,
    models: Vec<ModelConfig>,
    k: u32,
    concurrency: usize,
    factory: prism::engine::BackendFactory,
) -> (f64, usize, usize) {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("bench.db");
    let store = StoreHandle::spawn(Store::open(&db).unwrap(), Some(db.clone()));
    let run = run_of(&models, k, DetectKind::Claims);
    let ts = targets::from_claims(&run.id, set, &models, &[0.5], &Params::default());
    let (tx, mut rx) = mpsc::unbounded_channel();
    let drain = tokio::spawn(async move {
        while let Some(ev) = rx.recv().await {
            if matches!(
                ev,
                DetectEvent::Life(prism::engine::harness::Lifecycle::Finished(_))
            ) {
                break;
            }
        }
    });
    let opts = DetectOptions {
        concurrency,
        use_cache: true,
        stream_deltas: false,
    };
    let t = Instant::now();
    let lane = prism::engine::Lane {
        store,
        factory,
        events: tx,
        cancel: CancellationToken::new(),
    };
    let work = detect::Work {
        run,
        stored: prism::detect::run::Stored {
            targets: ts,
            ..Default::default()
        },
        only: None,
        models,
        judge: None,
    };
    let s = detect::start(lane, work, opts).await.unwrap();
    let secs = t.elapsed().as_secs_f64();
    drain.await.unwrap();
    (secs, s.done, s.failed)
}

/// The stub's capacity for `n` requests at `conc` in flight: plain posts of the requests
/// detection makes, bodies drained.
async fn raw_capacity(url: &str, set: &ClaimSet, n: usize, conc: usize) -> f64 {
    let client = reqwest::Client::builder()
        .pool_max_idle_per_host(conc)
        .build()
        .unwrap();
    // The same mix of requests detection sends: per claim its reference, the classification,
    // K samples and K pair checks over the stub's own replies.
    let body = |req: prism::provider::ChatRequest| {
        serde_json::json!({"model": "autohall", "stream": true, "messages":
            req.messages.iter().map(|m| serde_json::json!({"role": m.role.as_str(), "content": m.content})).collect::<Vec<_>>()})
    };
    let mut all = Vec::new();
    for c in set.claims.iter().take(200) {
        let reference = prism::detect::prompts::reference_request(0, &c.claim, Some(0.5));
        let ref_text = mock::autohall_reply(&reference.messages[0].content);
        all.push(body(reference));
        all.push(body(prism::detect::prompts::classification(
            &c.claim, &ref_text,
        )));
        for k in 0..6 {
            let v = prism::detect::prompts::reference_variant_index(k);
            let sample = prism::detect::prompts::reference_request(v, &c.claim, Some(0.5));
            let sample_text = mock::autohall_reply(&sample.messages[0].content);
            all.push(body(sample));
            all.push(body(prism::detect::prompts::pair_check(
                &format!("Give a reference for the claim: {}", c.claim),
                &ref_text,
                &sample_text,
            )));
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

/// Pair replies read per second, with and without the echo step (`eval::echo`), on the real
/// pair prompt with two 120-word answers and replies of the shapes small models give (a
/// verdict, an echo of the question, an answer quoted back), 64 tokens or so each.
fn reading_speed() {
    use prism::detect::parse::{read_pair, read_pair_to};
    let answer = |who: &str| {
        format!(
            "{who} says the committee reviewed the proposal in detail and agreed to publish its findings next spring after a final round of checks. "
        )
        .repeat(5)
    };
    let req = prism::detect::prompts::pair_check(
        "Is the following claim true? Claim: Polar bears are in danger of extinction.",
        &answer("A"),
        &answer("B"),
    );
    let prompt = prism::detect::prompts::text_of(&req).to_string();
    let replies = [
        "No, the two answers do not contradict each other. They both describe the committee's review and its plan to publish.".to_string(),
        "Claim: Polar bears are in danger of extinction. Do the two answers contradict each other, so that they cannot both be true? Differences in wording, detail or length are not contradictions.".to_string(),
        format!("Answer A: {}", answer("A")),
        "Yes.\nExplanation: A says spring, B says autumn.\nQuote A: \"next spring\"\nQuote B: \"next autumn\"".to_string(),
    ];
    const N: usize = 20_000;
    let time = |with_echo: bool| {
        let t = Instant::now();
        let mut read = 0;
        for i in 0..N {
            let r = &replies[i % replies.len()];
            let got = if with_echo {
                read_pair_to(r, &prompt)
            } else {
                read_pair(r)
            };
            read += usize::from(got.is_some());
        }
        (N as f64 / t.elapsed().as_secs_f64(), read)
    };
    let (plain, read_plain) = time(false);
    let (echo, read_echo) = time(true);
    println!(
        "pair replies read: {plain:.0}/s without the echo step ({read_plain} of {N} read as a verdict), {echo:.0}/s with it ({read_echo} of {N}): {:.2}x the time",
        plain / echo
    );
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    reading_speed();
    let n: usize = arg(&args, "--claims", 1_000);
    let k: u32 = arg(&args, "-k", 6);
    let conc: usize = arg(&args, "--concurrency", 64);
    let embedded: usize = arg(&args, "--embedded", 0);
    let rt = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .unwrap();
    let set = claims(n);
    rt.block_on(async {
        let stub = mock::start(false).await;
        let models: ModelsFile = toml::from_str(&format!(
            "[[models]]\nname = \"stub\"\nprovider = \"openai\"\nbase_url = \"{}/v1\"\nmodel = \"autohall\"\nmax_concurrency = {conc}\n",
            stub.url()
        ))
        .unwrap();
        // Warm up the stub and the connections.
        raw_capacity(&stub.url(), &set, 1_000, conc).await;
        let base_heap = CURRENT.load(Ordering::Relaxed);
        PEAK.store(base_heap, Ordering::Relaxed);
        let (secs, done, failed) = autohall(
            &set,
            models.models.clone(),
            k,
            conc,
            prism::engine::http_backends(),
        )
        .await;
        let peak = PEAK.load(Ordering::Relaxed).saturating_sub(base_heap);
        let raw = raw_capacity(&stub.url(), &set, done, conc).await;
        let rate = done as f64 / secs;
        println!(
            "autohall: {n} claims x K={k} at concurrency {conc}, store on: {done} calls ({failed} failed) in {secs:.2} s = {rate:.0} calls/s"
        );
        println!(
            "stub raw capacity (plain load loop, same calls and concurrency): {raw:.0} req/s; prism at {:.2}x",
            rate / raw
        );
        println!("heap during detection: peak {:.1} MB above the start", peak as f64 / 1e6);
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
        "process peak RSS (stub, load loop and detection, one process): {}",
        hwm.trim_start_matches("VmHWM:").trim()
    );

    if embedded > 0 {
        // The embedded models run in worker processes of the prism binary.
        prism::provider::local::set_worker_program(env!("CARGO_BIN_EXE_prism"));
        let dirs = prism::config::Dirs::resolve();
        let bundled = prism::dataset::claims::sample_claims().set;
        let mut set = bundled.clone();
        set.claims.truncate(embedded);
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
            // Up to 16 calls in flight; the model's own max_concurrency (4 for the built-ins:
            // the K samples of a claim decode together) is the real limit.
            let (secs, done, failed) = rt.block_on(autohall(&set, vec![m], 6, 16, factory));
            println!(
                "embedded {name}: {embedded} claims x K=6: {done} calls ({failed} failed) in {secs:.1} s = {:.1} s per claim, {:.2} s per call",
                secs / embedded as f64,
                secs / done.max(1) as f64
            );
        }
    }
}
