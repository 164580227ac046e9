//! Several embedded models in one prism share one thread budget: a model working alone decodes
//! with its `threads` setting, two working at once split the cores, and a model that stops gives
//! its cores back. Real workers of the SmolLM2 model (`PRISM_SMOL_GGUF`, set by `.ci/run`).
//!
//! A file of its own: the budget is the whole process's, and the other local-model tests would
//! take shares of it while these run.
#![cfg(feature = "local")]

use std::path::PathBuf;
use std::time::{Duration, Instant};

use prism::provider::local::LocalModel;
use prism::provider::local::budget::shares;
use prism::provider::{ChatRequest, ChatStream, Message, Params, StreamEvent};

fn smol_gguf() -> PathBuf {
    prism::provider::local::set_worker_program(env!("CARGO_BIN_EXE_prism"));
    match std::env::var_os("PRISM_SMOL_GGUF").map(PathBuf::from) {
        Some(p) if p.is_file() => p,
        _ => panic!("PRISM_SMOL_GGUF must name the SmolLM2 GGUF (bash .ci/run sets it up)"),
    }
}

/// One test at a time: the budget is the process's, shared by both tests' workers.
static ONE_AT_A_TIME: tokio::sync::Mutex<()> = tokio::sync::Mutex::const_new(());

/// A long greedy answer, streaming until its stream is dropped.
async fn start(m: &LocalModel) -> ChatStream {
    let req = ChatRequest {
        messages: vec![Message::user(
            "Write a very long story about a lighthouse keeper.",
        )],
        params: Params {
            temperature: Some(0.0),
            max_tokens: Some(1000),
            ..Params::default()
        },
    };
    let mut s = m.stream(&req, Duration::from_secs(120)).await.unwrap();
    // Working: its first token is out.
    loop {
        match s.next().await {
            Some(Ok(StreamEvent::Delta(_))) => return s,
            Some(Ok(_)) => {}
            other => panic!("no answer: {other:?}"),
        }
    }
}

/// Waits until the worker says it decodes with `n` threads.
async fn threads_become(m: &LocalModel, n: usize, what: &str) {
    let deadline = Instant::now() + Duration::from_secs(10);
    while m.threads_now() != n {
        assert!(
            Instant::now() < deadline,
            "{what}: the worker decodes with {} threads, not {n}",
            m.threads_now()
        );
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "needs PRISM_SMOL_GGUF (bash .ci/run sets it up)"]
async fn two_local_models_at_once_share_the_cores_and_give_them_back() {
    let _one = ONE_AT_A_TIME.lock().await;
    let p = smol_gguf();
    let cores = std::thread::available_parallelism().map_or(2, |n| n.get());
    // Each model's setting is every core (the default); two workers of their own.
    let a = LocalModel::load(&p, cores as i32, 2048, 1, false, None).unwrap();
    let b = LocalModel::load(&p, cores as i32, 2048, 1, false, None).unwrap();
    assert_ne!(a.worker_pid(), b.worker_pid());
    let split = shares(cores, &[(cores, true), (cores, true)]);

    // A alone: every core.
    let sa = start(&a).await;
    threads_become(&a, cores, "A working alone").await;
    // B starts too: the cores are split between them.
    let sb = start(&b).await;
    threads_become(&a, split[0], "A beside B").await;
    threads_become(&b, split[1], "B beside A").await;
    // B stops (its stream dropped: cancelled): A gets every core back.
    drop(sb);
    threads_become(&a, cores, "A after B stopped").await;
    // Both still answer whole after all of that.
    drop(sa);
    for m in [&a, &b] {
        let req = ChatRequest {
            messages: vec![Message::user("Name a colour.")],
            params: Params {
                temperature: Some(0.0),
                max_tokens: Some(8),
                ..Params::default()
            },
        };
        let mut s = m.stream(&req, Duration::from_secs(60)).await.unwrap();
        let mut finished = false;
        while let Some(ev) = s.next().await {
            if let StreamEvent::Finish { .. } = ev.unwrap() {
                finished = true;
                break;
            }
        }
        assert!(finished);
    }
}

/// A model's own `threads` setting caps its share, and what it cannot use goes to the other.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "needs PRISM_SMOL_GGUF (bash .ci/run sets it up)"]
async fn a_model_set_to_one_thread_leaves_the_rest_to_the_other() {
    let _one = ONE_AT_A_TIME.lock().await;
    let p = smol_gguf();
    let cores = std::thread::available_parallelism().map_or(2, |n| n.get());
    let one = LocalModel::load(&p, 1, 2048, 1, false, None).unwrap();
    let all = LocalModel::load(&p, cores as i32, 2048, 1, false, None).unwrap();
    let _s1 = start(&one).await;
    let _s2 = start(&all).await;
    threads_become(&one, 1, "the model set to one thread").await;
    threads_become(&all, cores.saturating_sub(1).max(1), "the other").await;
}
