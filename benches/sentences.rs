//! Where in the answer (`prism sentences`): how fast sentences are scored.
//!
//! `cargo bench --bench sentences` (options: `-- --answers N --sentences S --samples K
//! --concurrency C`). It:
//! 1. cuts N synthetic answers of S sentences into sentences and scores each by the unigram
//!    method against its K samples (no model): sentences split and scored per second;
//! 2. runs the prompt method's records lane (every sentence against every sample, each verdict
//!    stored in a SQLite store as it arrives) against the local stub (tests/common/mock.rs, model
//!    `autohall`, which answers SelfCheckGPT's question), C calls in flight: judge calls per
//!    second, and this process's CPU time per call (getrusage: the stub runs in this process
//!    too, so this is prism's and the stub's together, an upper bound on prism's).
//!
//! The prompt method is limited by the judge: its calls per second are the stub's, not prism's;
//! the CPU per call is what prism adds to each.

#[path = "../tests/common/mock.rs"]
mod mock;

use std::sync::Arc;
use std::time::Instant;

use prism::detect::semantic::{Group, Via};
use prism::provider::ModelsFile;
use prism::sentences::{Answer, Known, Method, SentenceEvent, Support};
use prism::store::{Store, StoreHandle};
use tokio_util::sync::CancellationToken;

fn arg<T: std::str::FromStr>(args: &[String], name: &str, default: T) -> T {
    args.iter()
        .position(|a| a == name)
        .and_then(|i| args.get(i + 1))
        .and_then(|s| s.parse().ok())
        .unwrap_or(default)
}

/// This process's user + system CPU seconds so far.
fn cpu_secs() -> f64 {
    let mut u: libc::rusage = unsafe { std::mem::zeroed() };
    // SAFETY: getrusage fills the struct it is given.
    unsafe { libc::getrusage(libc::RUSAGE_SELF, &mut u) };
    let t = |v: libc::timeval| v.tv_sec as f64 + v.tv_usec as f64 / 1e6;
    t(u.ru_utime) + t(u.ru_stime)
}

/// `n` answers of `s` sentences, each with `k` samples that restate all but its last sentence
/// (each answer's words its own, so no two checks are one text).
fn answers(n: usize, s: usize, k: usize) -> Vec<Answer> {
    (0..n)
        .map(|i| {
            let sentence = |j: usize| {
                format!(
                    "Fact {j} of answer {i} says the value is {}.{} units.",
                    i * 7 + j,
                    j % 10
                )
            };
            let text: Vec<String> = (0..s).map(sentence).collect();
            let told: Vec<String> = (0..s.saturating_sub(1)).map(sentence).collect();
            let mut all = vec![text.join(" ")];
            all.extend((0..k).map(|x| format!("{} Sample {x}.", told.join(" "))));
            Answer::new(
                Group {
                    via: Via::Samples,
                    source_run: Some("bench".into()),
                    source_job: Some(i as u32),
                    item_id: format!("item-{i}"),
                    task_id: "KE-FD-Numbers".into(),
                    model: "m".into(),
                    question: String::new(),
                    loglik: vec![None; k + 1],
                    answers: all,
                },
                None,
            )
        })
        .collect()
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let n: usize = arg(&args, "--answers", 2_000);
    let s: usize = arg(&args, "--sentences", 5);
    let k: usize = arg(&args, "--samples", 5);
    let conc: usize = arg(&args, "--concurrency", 32);

    // 1. Splitting and the unigram method, no model.
    let t = Instant::now();
    let set = answers(n, s, k);
    let split = t.elapsed().as_secs_f64();
    let sentences: usize = set.iter().map(|a| a.sentences.len()).sum();
    assert_eq!(sentences, n * s, "every synthetic sentence is one sentence");
    let known = Known::default();
    let t = Instant::now();
    let mut check = 0.0;
    for a in &set {
        for x in a.score(&[Method::Unigram], &known) {
            check += x.scores.unigram.unwrap_or(0.0);
        }
    }
    let unigram = t.elapsed().as_secs_f64();
    println!(
        "split: {sentences} sentences of {n} answers in {:.1} ms ({:.0} sentences/s)",
        split * 1e3,
        sentences as f64 / split
    );
    println!(
        "unigram: {sentences} sentences against {k} samples each in {:.1} ms ({:.0} sentences/s; checksum {check:.1})",
        unigram * 1e3,
        sentences as f64 / unigram
    );

    // 2. The prompt method against the stub.
    let rt = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .unwrap();
    let m = mock::start_background();
    let judge = toml::from_str::<ModelsFile>(&format!(
        "[[models]]\nname = \"j\"\nprovider = \"openai\"\nbase_url = \"{}/v1\"\nmodel = \"autohall\"\nmax_concurrency = {conc}\n",
        m.url()
    ))
    .unwrap()
    .models
    .remove(0);
    let few: Vec<Answer> = set.into_iter().take((n / 10).max(1)).collect();
    let (todo, _) = prism::sentences::to_ask(&few, &Known::default());
    let calls = todo.len();
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("bench.db");
    let (secs, cpu) = rt.block_on(async {
        let store = StoreHandle::spawn(Store::open(&db).unwrap(), Some(db.clone()));
        let factory = prism::engine::http_backends();
        let cancel = CancellationToken::new();
        let caller = Arc::new(
            prism::engine::Caller::new(
                &judge,
                &factory,
                Some(store.clone()),
                false,
                cancel.clone(),
            )
            .unwrap(),
        );
        let unit = Arc::new(Support {
            answers: Arc::new(few),
            caller,
            known: std::sync::Mutex::new(Known::default()),
        });
        let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel::<SentenceEvent>();
        let drain = tokio::spawn(async move { while rx.recv().await.is_some() {} });
        let lane = prism::engine::Lane {
            store,
            factory,
            events: tx,
            cancel,
        };
        let (t, c) = (Instant::now(), cpu_secs());
        let lock = unit.lock("bench");
        prism::engine::records::run(lane, conc, &lock, unit, todo)
            .await
            .unwrap();
        let out = (t.elapsed().as_secs_f64(), cpu_secs() - c);
        drain.await.unwrap();
        out
    });
    let stored = Store::open(&db)
        .unwrap()
        .records_where::<prism::sentences::SupportRecord>(None)
        .unwrap()
        .len();
    assert_eq!(stored, calls, "every verdict stored");
    println!(
        "prompt: {calls} judge calls at {conc} in flight in {secs:.2} s ({:.0} calls/s, {:.0} sentences/s); CPU {:.3} ms per call (prism and the stub, one process)",
        calls as f64 / secs,
        (calls / k) as f64 / secs,
        cpu / calls as f64 * 1e3
    );
}
