//! The run engine against the mock server: three wire formats, faults and retries, the cache,
//! samples, cancellation and resume, replicas, and secrets.

mod common;

use std::sync::Arc;
use std::time::Duration;

use common::mock;
use prism::dataset::{self, Dataset};
use prism::engine::{self, Event, RetryPolicy, RunSpec, RunSummary};
use prism::provider::{ModelConfig, ModelsFile};
use prism::store::{Store, StoreHandle};
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

fn sample() -> Arc<Dataset> {
    Arc::new(dataset::load_sample().dataset)
}

fn model(toml_body: &str) -> ModelConfig {
    let f: ModelsFile = toml::from_str(&format!("[[models]]\n{toml_body}")).unwrap();
    f.models.into_iter().next().unwrap()
}

fn openai(name: &str, url: &str, model_id: &str) -> ModelConfig {
    model(&format!(
        "name = \"{name}\"\nprovider = \"openai\"\nbase_url = \"{url}/v1\"\nmodel = \"{model_id}\"\nidle_timeout_secs = 0.5\nmax_retries = 3"
    ))
}

fn first_items(ds: &Dataset, n: usize) -> Vec<usize> {
    (0..n)
        .collect::<Vec<_>>()
        .into_iter()
        .filter(|&i| i < ds.items.len())
        .collect()
}

struct Ran {
    summary: RunSummary,
    events: Vec<Event>,
}

async fn run_spec(spec: RunSpec, store: StoreHandle) -> Ran {
    let (tx, mut rx) = mpsc::unbounded_channel();
    let summary = engine::run(
        spec,
        store,
        engine::http_backends(),
        tx,
        CancellationToken::new(),
    )
    .await
    .unwrap();
    let mut events = Vec::new();
    while let Ok(e) = rx.try_recv() {
        events.push(e);
    }
    Ran { summary, events }
}

fn fast(mut spec: RunSpec) -> RunSpec {
    spec.retry = RetryPolicy {
        base: Duration::from_millis(5),
        cap: Duration::from_secs(2),
    };
    spec
}

fn memory_store() -> (StoreHandle, tempfile::TempDir, std::path::PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("prism.db");
    let store = Store::open(&path).unwrap();
    (StoreHandle::spawn(store, Some(path.clone())), dir, path)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn three_wire_formats_stream_and_store_answers() {
    let m = mock::start(true).await;
    let ds = sample();
    let models = vec![
        openai("oa", &m.url(), "echo"),
        model(&format!(
            "name = \"claude\"\nprovider = \"anthropic\"\nbase_url = \"{}\"\nmodel = \"echo\"",
            m.url()
        )),
        model(&format!(
            "name = \"gem\"\nprovider = \"gemini\"\nbase_url = \"{}\"\nmodel = \"echo\"",
            m.url()
        )),
    ];
    let (store, _dir, path) = memory_store();
    let items = first_items(&ds, 3);
    let spec = fast(RunSpec::new(
        ds.clone(),
        "<sample-data>".into(),
        items.clone(),
        models,
    ));
    let ran = run_spec(spec, store).await;
    assert_eq!(ran.summary.done, 9, "{:?}", ran.summary);
    assert_eq!(ran.summary.failed, 0);
    let s = Store::open(&path).unwrap();
    let rs = s.responses(&ran.summary.run_id).unwrap();
    assert_eq!(rs.len(), 9);
    for r in &rs {
        let item = ds.item_by_id(&r.item_id).unwrap();
        let tail: String = item
            .question
            .lines()
            .last()
            .unwrap()
            .chars()
            .take(24)
            .collect();
        assert_eq!(
            r.text.as_deref(),
            Some(format!("ANSWER({tail})").as_str()),
            "{}",
            r.model
        );
        assert_eq!(r.completion_tokens, Some(4), "{}", r.model);
        assert!(r.latency_ms.is_some());
        assert_eq!(r.attempts, 1);
    }
    // Deltas concatenate to the stored text.
    let job0_text: String = ran
        .events
        .iter()
        .filter_map(|e| match e {
            Event::Delta { job: 0, text } => Some(text.as_str()),
            _ => None,
        })
        .collect();
    assert_eq!(Some(job0_text.as_str()), rs[0].text.as_deref());
    // Parameters follow the paper's per-dimension defaults (the first items are KE: 0.8/0.8).
    let bodies = m.state.bodies.lock().unwrap();
    let oa = bodies
        .iter()
        .find(|b| b["model"] == "echo" && b.get("stream_options").is_some())
        .unwrap();
    assert_eq!(oa["temperature"], 0.8);
    assert_eq!(oa["top_p"], 0.8);
    assert_eq!(oa["stream"], true);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_fault_is_retried_and_nothing_is_lost_or_duplicated() {
    let m = mock::start(false).await;
    let ds = sample();
    let faults = [
        "flaky429", "flaky500", "flaky503", "drop", "badsse", "stall",
    ];
    let models: Vec<ModelConfig> = faults.iter().map(|f| openai(f, &m.url(), f)).collect();
    let (store, _dir, path) = memory_store();
    let items = first_items(&ds, 4);
    let spec = fast(RunSpec::new(
        ds.clone(),
        "<sample-data>".into(),
        items,
        models,
    ));
    let ran = run_spec(spec, store).await;
    assert_eq!(ran.summary.done, 24, "{:?}", ran.summary);
    assert_eq!(ran.summary.failed, 0);
    let s = Store::open(&path).unwrap();
    let rs = s.responses(&ran.summary.run_id).unwrap();
    assert_eq!(rs.len(), 24, "one response per job, no duplicates");
    for r in &rs {
        assert_eq!(
            r.attempts, 2,
            "{}: the first attempt failed, the second worked",
            r.model
        );
        let text = r.text.as_deref().unwrap();
        assert!(
            text.starts_with("ANSWER(") && text.ends_with(')'),
            "{}: {text}",
            r.model
        );
        assert_eq!(
            text.matches("ANSWER(").count(),
            1,
            "partial text of the failed attempt is dropped"
        );
    }
    // Each fault produced a retry event with its reason.
    let reasons: Vec<String> = ran
        .events
        .iter()
        .filter_map(|e| match e {
            Event::Retrying { reason, .. } => Some(reason.clone()),
            _ => None,
        })
        .collect();
    assert_eq!(reasons.len(), 24);
    assert!(reasons.iter().any(|r| r.contains("HTTP 429")));
    assert!(reasons.iter().any(|r| r.contains("HTTP 503")));
    assert!(reasons.iter().any(|r| r.contains("idle-stream timeout")));
    assert!(reasons.iter().any(|r| r.contains("malformed event")));
    assert!(reasons.iter().any(|r| r.contains("stream")), "{reasons:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn retry_after_seconds_is_honoured() {
    let m = mock::start(false).await;
    let ds = sample();
    let (store, _dir, _) = memory_store();
    let spec = fast(RunSpec::new(
        ds.clone(),
        "<sample-data>".into(),
        vec![0],
        vec![openai("m", &m.url(), "flaky429s")],
    ));
    let t = std::time::Instant::now();
    let ran = run_spec(spec, store).await;
    assert_eq!(ran.summary.done, 1);
    let delay = ran
        .events
        .iter()
        .find_map(|e| match e {
            Event::Retrying { delay, .. } => Some(*delay),
            _ => None,
        })
        .unwrap();
    assert_eq!(
        delay,
        Duration::from_secs(1),
        "Retry-After: 1, not the 5 ms backoff"
    );
    assert!(t.elapsed() >= Duration::from_secs(1));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn permanent_failures_are_recorded_with_their_reason() {
    let m = mock::start(false).await;
    let ds = sample();
    let (store, _dir, path) = memory_store();
    let spec = fast(RunSpec::new(
        ds.clone(),
        "<sample-data>".into(),
        vec![0, 1],
        vec![
            openai("bad", &m.url(), "always500"),
            openai("good", &m.url(), "echo"),
        ],
    ));
    let ran = run_spec(spec, store).await;
    assert_eq!(ran.summary.done, 2);
    assert_eq!(ran.summary.failed, 2);
    assert_eq!(
        m.attempts_for("always500", ""),
        2 * 4,
        "max_retries 3 = 4 attempts each"
    );
    let s = Store::open(&path).unwrap();
    let failed: Vec<_> = s
        .responses(&ran.summary.run_id)
        .unwrap()
        .into_iter()
        .filter(|r| !r.is_ok())
        .collect();
    assert_eq!(failed.len(), 2);
    assert!(failed[0].error.as_deref().unwrap().contains("HTTP 500"));
    assert_eq!(failed[0].attempts, 4);
    let c = s.job_counts(&ran.summary.run_id).unwrap();
    assert_eq!((c.done, c.failed, c.pending), (2, 2, 0));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_cache_makes_a_rerun_free_but_keeps_samples_independent_and_skips_errors() {
    let m = mock::start(false).await;
    let ds = sample();
    let (store, _dir, _) = memory_store();
    let models = vec![
        openai("m", &m.url(), "echo"),
        openai("x", &m.url(), "always500"),
    ];
    let mut spec = fast(RunSpec::new(
        ds.clone(),
        "<sample-data>".into(),
        vec![0, 1, 2],
        models,
    ));
    spec.samples = 2;
    let first = run_spec(spec.clone(), store.clone()).await;
    assert_eq!(first.summary.done, 6);
    let echo_requests = m.attempts_for("echo", "");
    assert_eq!(
        echo_requests, 6,
        "two samples of three items are six requests"
    );
    let failing = m.attempts_for("always500", "");

    let second = run_spec(spec.clone(), store.clone()).await;
    assert_eq!(second.summary.done, 6);
    assert_eq!(second.summary.cache_hits, 6);
    assert_eq!(m.attempts_for("echo", ""), echo_requests, "no new requests");
    assert!(
        m.attempts_for("always500", "") > failing,
        "errors are never cached"
    );

    spec.use_cache = false;
    let third = run_spec(spec, store).await;
    assert_eq!(third.summary.cache_hits, 0);
    assert_eq!(m.attempts_for("echo", ""), echo_requests + 6);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cancel_keeps_finished_results_and_resume_finishes_the_rest() {
    let m = mock::start(false).await;
    let ds = sample();
    let (store, _dir, path) = memory_store();
    let mut model = openai("m", &m.url(), "slow");
    model.max_concurrency = 2;
    let items: Vec<usize> = (0..20).collect();
    let spec = fast(RunSpec::new(
        ds.clone(),
        "<sample-data>".into(),
        items,
        vec![model.clone()],
    ));
    let (tx, mut rx) = mpsc::unbounded_channel();
    let cancel = CancellationToken::new();
    let c2 = cancel.clone();
    let handle = tokio::spawn(engine::run(
        spec,
        store.clone(),
        engine::http_backends(),
        tx,
        c2,
    ));
    // Cancel after a few jobs are done.
    let mut done = 0;
    while let Some(e) = rx.recv().await {
        if matches!(e, Event::Done { .. }) {
            done += 1;
            if done == 4 {
                cancel.cancel();
                break;
            }
        }
    }
    let summary = handle.await.unwrap().unwrap();
    assert!(summary.cancelled > 0, "{summary:?}");
    assert!(summary.done >= 4);
    let s = Store::open(&path).unwrap();
    let run = s.run(&summary.run_id).unwrap().unwrap();
    assert_eq!(run.status, prism::store::RunStatus::Cancelled);
    let c = s.job_counts(&run.id).unwrap();
    assert_eq!(c.done, summary.done);
    assert_eq!(c.pending, 20 - c.done);
    let requests_before = m.requests();

    let unfinished = s.unfinished_jobs(&run.id).unwrap();
    let all: Vec<_> = s
        .jobs(&run.id)
        .unwrap()
        .into_iter()
        .map(|(j, _)| j)
        .collect();
    let (tx, _rx) = mpsc::unbounded_channel();
    let lane = engine::Lane {
        store,
        factory: engine::http_backends(),
        events: tx,
        cancel: CancellationToken::new(),
    };
    let resumed = engine::resume(
        lane,
        &run,
        engine::resume_models(&run, &[], &[model], false)
            .unwrap()
            .models,
        engine::ResumeJobs {
            dataset: ds,
            unfinished: unfinished.clone(),
            all,
            unscored: Vec::new(),
        },
        engine::ResumeOptions {
            concurrency: 8,
            stream_deltas: true,
            ..Default::default()
        },
    )
    .await
    .unwrap();
    assert_eq!(resumed.done, unfinished.len());
    let c = s.job_counts(&run.id).unwrap();
    assert_eq!((c.done, c.failed, c.pending), (20, 0, 0));
    // Only the unfinished jobs were sent again (in-flight ones at cancel time are among them).
    assert_eq!(m.requests() - requests_before, unfinished.len());
    assert_eq!(
        s.run(&run.id).unwrap().unwrap().status,
        prism::store::RunStatus::Finished
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn replicas_share_the_load() {
    let a = mock::start(false).await;
    let b = mock::start(false).await;
    let ds = sample();
    let (store, _dir, _) = memory_store();
    let mut cfg = model(&format!(
        "name = \"fleet\"\nprovider = \"openai\"\nbase_urls = [\"{}/v1\", \"{}/v1\"]\nmodel = \"slow\"\nmax_concurrency = 4",
        a.url(),
        b.url()
    ));
    cfg.max_retries = 0;
    let spec = fast(RunSpec::new(
        ds.clone(),
        "<sample-data>".into(),
        (0..16).collect(),
        vec![cfg],
    ));
    let ran = run_spec(spec, store).await;
    assert_eq!(ran.summary.done, 16);
    assert!(
        a.requests() >= 4 && b.requests() >= 4,
        "a {} b {}",
        a.requests(),
        b.requests()
    );
    assert_eq!(a.requests() + b.requests(), 16);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn api_keys_are_sent_but_never_stored() {
    let m = mock::start(false).await;
    let ds = sample();
    let secret = "sk-test-SECRET-4242";
    // SAFETY: this test owns this variable name; no other test reads or writes it.
    unsafe { std::env::set_var("PRISM_TEST_ENGINE_KEY", secret) };
    let mut cfg = openai("keyed", &m.url(), "flaky500");
    cfg.api_key_env = Some("PRISM_TEST_ENGINE_KEY".into());
    let (store, dir, path) = memory_store();
    let spec = fast(RunSpec::new(
        ds.clone(),
        "<sample-data>".into(),
        vec![0, 1],
        vec![cfg],
    ));
    let ran = run_spec(spec, store).await;
    assert_eq!(ran.summary.done, 2);
    assert!(
        m.state
            .auth_seen
            .lock()
            .unwrap()
            .iter()
            .all(|h| h == &format!("Bearer {secret}"))
    );
    // Nothing in the store directory (db, WAL) holds the key; errors and events neither.
    drop(Store::open(&path).unwrap());
    for entry in std::fs::read_dir(dir.path()).unwrap().flatten() {
        let bytes = std::fs::read(entry.path()).unwrap();
        assert!(
            !bytes.windows(secret.len()).any(|w| w == secret.as_bytes()),
            "{} contains the key",
            entry.path().display()
        );
    }
    let dump = format!("{:?}", ran.events);
    assert!(!dump.contains(secret));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_missing_key_or_dead_server_is_a_clear_message_naming_the_model() {
    let ds = sample();
    let (store, _dir, _) = memory_store();
    let mut cfg = openai("needs-key", "http://127.0.0.1:9", "echo");
    cfg.api_key_env = Some("PRISM_TEST_SURELY_UNSET_KEY".into());
    let spec = RunSpec::new(ds.clone(), "<sample-data>".into(), vec![0], vec![cfg]);
    let (tx, _rx) = mpsc::unbounded_channel();
    let err = engine::run(
        spec,
        store.clone(),
        engine::http_backends(),
        tx,
        CancellationToken::new(),
    )
    .await
    .unwrap_err()
    .to_string();
    assert!(
        err.contains("needs-key") && err.contains("PRISM_TEST_SURELY_UNSET_KEY"),
        "{err}"
    );

    // Port 9 (discard) is closed here: connecting fails fast and the job fails with the reason.
    let mut cfg = openai("dead", "http://127.0.0.1:9", "echo");
    cfg.max_retries = 1;
    let spec = fast(RunSpec::new(ds, "<sample-data>".into(), vec![0], vec![cfg]));
    let ran = run_spec(spec, store).await;
    assert_eq!(ran.summary.failed, 1);
    let reason = ran
        .events
        .iter()
        .find_map(|e| match e {
            Event::Failed { response, .. } => response.error.clone(),
            _ => None,
        })
        .unwrap();
    assert!(reason.contains("127.0.0.1:9"), "{reason}");
}

/// A backend with a bug: it panics on one item. The job is recorded as failed with the panic's
/// message, the others finish, and the run ends as usual (no job counted as cancelled).
struct Buggy(Arc<dyn engine::Backend>);

impl engine::Backend for Buggy {
    fn stream<'a>(
        &'a self,
        req: &'a prism::provider::ChatRequest,
    ) -> futures::future::BoxFuture<
        'a,
        Result<prism::provider::ChatStream, prism::provider::ProviderError>,
    > {
        let last = req
            .messages
            .last()
            .map(|m| m.content.clone())
            .unwrap_or_default();
        if last.contains("Einstein") {
            panic!("a bug met Einstein");
        }
        self.0.stream(req)
    }
    fn cache_identity(&self) -> String {
        self.0.cache_identity()
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_panicking_job_is_recorded_as_failed_and_the_run_goes_on() {
    let m = mock::start(false).await;
    let (store, _dir, path) = memory_store();
    let ds = sample();
    let items = first_items(&ds, 3);
    let spec = fast(RunSpec::new(
        ds.clone(),
        "<sample-data>".into(),
        items,
        vec![openai("m", &m.url(), "echo")],
    ));
    let http = engine::http_backends();
    let factory: engine::BackendFactory =
        Arc::new(move |cfg| Ok(Arc::new(Buggy(http(cfg)?)) as Arc<dyn engine::Backend>));
    let (tx, _rx) = mpsc::unbounded_channel();
    let summary = engine::run(spec, store, factory, tx, CancellationToken::new())
        .await
        .unwrap();
    assert_eq!((summary.done, summary.failed, summary.cancelled), (2, 1, 0));
    let s = Store::open(&path).unwrap();
    let failed: Vec<_> = s
        .responses(&summary.run_id)
        .unwrap()
        .into_iter()
        .filter(|r| !r.is_ok())
        .collect();
    assert_eq!(failed.len(), 1);
    let e = failed[0].error.as_deref().unwrap();
    assert!(
        e.contains("internal error") && e.contains("a bug met Einstein"),
        "{e}"
    );
    assert_eq!(
        s.run(&summary.run_id).unwrap().unwrap().status,
        prism::store::RunStatus::Finished
    );
}

/// A full disk: answers that cannot be saved are held and saving is retried; the user is told
/// once; no new job starts meanwhile; when space comes back everything is saved, nothing failed,
/// and no model was asked twice.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_full_disk_holds_answers_until_space_comes_back() {
    let m = mock::start(false).await;
    let (store, _dir, path) = memory_store();
    let ds = sample();
    let items = first_items(&ds, 60);
    let mut spec = fast(RunSpec::new(
        ds.clone(),
        "<sample-data>".into(),
        items,
        vec![openai("m", &m.url(), "slow")],
    ));
    spec.concurrency = 2;
    // The store may not grow past its size when the limit is set (SQLite raises a limit below
    // the current size to it): the run's record fits, soon nothing more does.
    let pages = 1;
    let (tx, mut rx) = mpsc::unbounded_channel();
    let handle = {
        let store = store.clone();
        tokio::spawn(async move {
            engine::run(
                spec,
                store,
                engine::http_backends(),
                tx,
                CancellationToken::new(),
            )
            .await
        })
    };
    let mut downs = 0;
    let mut ups = 0;
    let mut requests_when_down = None;
    let mut events = Vec::new();
    while let Some(ev) = rx.recv().await {
        match &ev {
            Event::Started { .. } => store.set_max_pages(pages).await.unwrap(),
            Event::Life(prism::engine::harness::Lifecycle::StoreDown { reason }) => {
                downs += 1;
                assert!(reason.contains("full"), "{reason}");
                requests_when_down = Some(m.requests());
                // Space comes back a moment later.
                let store = store.clone();
                tokio::spawn(async move {
                    tokio::time::sleep(Duration::from_millis(500)).await;
                    store.set_max_pages(1 << 30).await.unwrap();
                });
            }
            Event::Life(prism::engine::harness::Lifecycle::StoreUp) => {
                ups += 1;
                // While saving failed, only the jobs already in flight went out.
                assert!(m.requests() <= requests_when_down.unwrap() + 2);
            }
            _ => {}
        }
        let finished = matches!(
            ev,
            Event::Life(prism::engine::harness::Lifecycle::Finished(_))
        );
        events.push(ev);
        if finished {
            break;
        }
    }
    let summary = handle.await.unwrap().unwrap();
    assert_eq!(downs, 1, "told once");
    assert_eq!(ups, 1);
    assert_eq!(
        (summary.done, summary.failed, summary.cancelled),
        (60, 0, 0)
    );
    assert!(requests_when_down.unwrap() < 60);
    assert_eq!(m.requests(), 60, "no model was asked twice");
    let s = Store::open(&path).unwrap();
    assert_eq!(s.responses(&summary.run_id).unwrap().len(), 60);
}

/// A run opens no more connections than it sends requests at once: each answer read to its end
/// leaves its connection for the next request (the HTTP client used before opened a new one
/// whenever its pool task ran late).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_run_opens_no_more_connections_than_its_concurrency() {
    let m = mock::start_background();
    let ds = sample();
    let (store, _dir, path) = memory_store();
    let mut model = openai("oa", &m.url(), "bench32");
    model.max_concurrency = 64;
    let mut spec = fast(RunSpec::new(
        ds.clone(),
        "<sample-data>".into(),
        (0..ds.items.len()).collect(),
        vec![model],
    ));
    spec.samples = 24;
    spec.concurrency = 64;
    let ran = run_spec(spec, store).await;
    let total = ds.items.len() * 24;
    assert_eq!(ran.summary.done, total, "{:?}", ran.summary);
    assert_eq!(m.requests(), total);
    let conns = m.connections();
    assert!(
        (1..=64).contains(&conns),
        "{conns} connections for {total} requests at concurrency 64"
    );
    let s = Store::open(&path).unwrap();
    let rs = s.responses(&ran.summary.run_id).unwrap();
    assert_eq!(rs.len(), total);
    assert!(rs.iter().all(|r| r.attempts == 1 && r.text.is_some()));
}

/// A server that closes each connection after its answer (or a kept-alive connection it closed
/// while idle) costs a new connection, never a failed or retried job.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn connections_the_server_closes_are_replaced_without_an_error() {
    let m = mock::start_background();
    let ds = sample();
    let (store, _dir, path) = memory_store();
    let mut spec = fast(RunSpec::new(
        ds.clone(),
        "<sample-data>".into(),
        first_items(&ds, 40),
        // By name, not address: the name is resolved for each new connection.
        vec![openai(
            "oa",
            &m.url().replace("127.0.0.1", "localhost"),
            "closing",
        )],
    ));
    spec.concurrency = 4;
    let ran = run_spec(spec, store).await;
    assert_eq!(ran.summary.done, 40, "{:?}", ran.summary);
    assert_eq!(ran.summary.failed, 0);
    assert_eq!(m.requests(), 40, "no request was sent twice");
    assert_eq!(m.connections(), 40);
    let s = Store::open(&path).unwrap();
    let rs = s.responses(&ran.summary.run_id).unwrap();
    assert!(rs.iter().all(|r| r.attempts == 1), "no job needed a retry");
}

/// Scoring as answers arrive is the answers lane's policy (issue 24): every answer's score is
/// saved and announced after its answer and before the run finishes; `score: None` leaves the
/// answers unscored.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn answers_are_scored_as_they_arrive_and_the_run_waits_for_their_scores() {
    let m = mock::start(true).await;
    let ds = sample();
    let (store, _dir, path) = memory_store();
    let items = first_items(&ds, 8);
    let spec = fast(RunSpec::new(
        ds.clone(),
        "<sample-data>".into(),
        items.clone(),
        vec![openai("oa", &m.url(), "echo")],
    ));
    let ran = run_spec(spec, store.clone()).await;
    assert_eq!(ran.summary.done, 8, "{:?}", ran.summary);
    let pos = |f: &dyn Fn(&Event) -> bool| ran.events.iter().position(f);
    let finished = pos(&|e| {
        matches!(
            e,
            Event::Life(prism::engine::harness::Lifecycle::Finished(_))
        )
    })
    .expect("finished");
    let mut scored = std::collections::HashSet::new();
    for (i, e) in ran.events.iter().enumerate() {
        if let Event::Scored(r) = e {
            assert!(i < finished, "a score after the run finished");
            let done = pos(&|e| matches!(e, Event::Done { job, .. } if *job == r.job_idx))
                .expect("its answer");
            assert!(
                done < i,
                "job {}: the score came before the answer",
                r.job_idx
            );
            assert!(scored.insert(r.job_idx), "job {} scored twice", r.job_idx);
            assert_eq!(r.run_id, ran.summary.run_id);
        }
    }
    assert_eq!(scored.len(), 8, "every answer scored once");
    let s = Store::open(&path).unwrap();
    let stored = s.scores(Some(&ran.summary.run_id)).unwrap();
    assert_eq!(stored.len(), 8, "{stored:?}");
    // The rules settled what they could, and said why where they could not.
    assert!(
        stored
            .iter()
            .all(|r| r.score.is_some() || !r.detail.is_empty())
    );

    let mut spec = fast(RunSpec::new(
        ds.clone(),
        "<sample-data>".into(),
        items,
        vec![openai("oa", &m.url(), "echo")],
    ));
    spec.score = None;
    let ran = run_spec(spec, store).await;
    assert!(!ran.events.iter().any(|e| matches!(e, Event::Scored(_))));
    assert!(s.scores(Some(&ran.summary.run_id)).unwrap().is_empty());
}

/// Asked for log-probabilities, a streaming run hands the tokens to the front-end as they
/// arrive (so the compare screen shades an answer while it streams): every token before the
/// answer is done, spelling its text, then stored; without asking, no token event at all.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tokens_stream_live_when_asked() {
    let m = mock::start(false).await;
    let ds = sample();
    for asked in [true, false] {
        let (store, _dir, path) = memory_store();
        let mut spec = fast(RunSpec::new(
            ds.clone(),
            "<sample-data>".into(),
            first_items(&ds, 2),
            vec![openai("oa", &m.url(), "echo")],
        ));
        spec.stream_deltas = true;
        spec.use_cache = false;
        if asked {
            spec.params.logprobs = Some(1);
        }
        let ran = run_spec(spec, store).await;
        assert_eq!(ran.summary.done, 2);
        let mut live: std::collections::HashMap<u32, String> = Default::default();
        let mut done = std::collections::HashSet::new();
        for e in &ran.events {
            match e {
                Event::Tokens { job, tokens } => {
                    assert!(!done.contains(job), "tokens after the answer was done");
                    for t in tokens {
                        live.entry(*job).or_default().push_str(&t.token);
                    }
                }
                Event::Done { job, .. } => {
                    done.insert(*job);
                }
                _ => {}
            }
        }
        let s = Store::open(&path).unwrap();
        let stored = s.responses(&ran.summary.run_id).unwrap();
        if asked {
            assert_eq!(live.len(), 2);
            for r in &stored {
                assert_eq!(live.get(&r.job_idx), r.text.as_ref());
            }
            assert_eq!(s.logprobs(&ran.summary.run_id).unwrap().len(), 2);
        } else {
            assert!(live.is_empty());
        }
    }
}

/// A judge chosen while a run goes (the TUI's `u`) judges every answer that arrives after it;
/// the ones before waited, unscored, for it (issue 62: they had stayed unscored to the end).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_judge_set_while_the_run_goes_judges_the_answers_after() {
    let m = mock::start(true).await;
    let ds = sample();
    // The Myths items: open answers the rules leave to the semantic-equivalence judge. One at
    // a time, each taking a moment (`slow`), so the judge arrives part-way.
    let items: Vec<usize> = (0..ds.items.len())
        .filter(|&i| ds.task_of(&ds.items[i]).id == "KE-FD-Myths")
        .collect();
    assert!(items.len() >= 4);
    let mut answerer = openai("a", &m.url(), "slow");
    answerer.max_concurrency = 1;
    let (store, _dir, path) = memory_store();
    let judge = engine::Caller::new(
        &openai("j", &m.url(), "judge"),
        &engine::http_backends(),
        Some(store.clone()),
        true,
        CancellationToken::new(),
    )
    .unwrap();
    let mut spec = fast(RunSpec::new(
        ds.clone(),
        "<sample-data>".into(),
        items.clone(),
        vec![answerer],
    ));
    spec.concurrency = 1;
    let slot = engine::JudgeSlot::default();
    spec.score = Some(engine::Scoring {
        judge: slot.clone(),
    });
    let (tx, mut rx) = mpsc::unbounded_channel();
    let run = tokio::spawn(engine::run(
        spec,
        store,
        engine::http_backends(),
        tx,
        CancellationToken::new(),
    ));
    // After the first answer, the judge is chosen.
    let mut before = 0;
    while let Some(e) = rx.recv().await {
        if let Event::Done { .. } = e {
            before += 1;
            slot.set(Some(Arc::new(judge)));
            break;
        }
    }
    let summary = run.await.unwrap().unwrap();
    assert_eq!(summary.done, items.len());
    let scores = Store::open(&path)
        .unwrap()
        .scores(Some(&summary.run_id))
        .unwrap();
    let judged = scores
        .iter()
        .filter(|s| s.judge.as_deref() == Some("j"))
        .count();
    assert!(
        judged >= items.len() - before - 1,
        "the answers after the judge was chosen are judged: {judged} of {}: {scores:?}",
        items.len()
    );
    assert!(judged >= 2, "{scores:?}");
}
