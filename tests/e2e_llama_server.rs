//! End to end against a real OpenAI-compatible server nobody here wrote: llama-cpp-python's
//! server running the Gemma 3 270M model from PyPI, on real prism-mini items.
//!
//! Needs `PRISM_LLAMA_PYTHON` (a python with `llama-cpp-python[server]`) and `PRISM_GEMMA_GGUF`
//! (the model file); `.ci/run` installs both, sets them and runs this `#[ignore]`d test with
//! `cargo test -- --ignored` (a plain `cargo test` reports it ignored, with the reason).

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

struct Server(Child);

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

fn requirements() -> (PathBuf, PathBuf) {
    let py = std::env::var_os("PRISM_LLAMA_PYTHON").map(PathBuf::from);
    let gguf = std::env::var_os("PRISM_GEMMA_GGUF").map(PathBuf::from);
    match (py, gguf) {
        (Some(p), Some(g)) if p.exists() && g.exists() => (p, g),
        _ => panic!(
            "PRISM_LLAMA_PYTHON and PRISM_GEMMA_GGUF must name a python with \
             llama-cpp-python[server] and the Gemma GGUF (bash .ci/run sets them up)"
        ),
    }
}

#[test]
#[ignore = "needs PRISM_LLAMA_PYTHON and PRISM_GEMMA_GGUF (bash .ci/run sets them up)"]
fn prism_mini_items_run_against_a_real_llama_cpp_server() {
    let (python, gguf) = requirements();
    let port = free_port();
    let log = tempfile::NamedTempFile::new().unwrap();
    let server = Server(
        Command::new(&python)
            .args(["-m", "llama_cpp.server", "--model"])
            .arg(&gguf)
            .args(["--chat_format", "gemma", "--host", "127.0.0.1", "--port"])
            .arg(port.to_string())
            .args(["--n_ctx", "4096"])
            .stdout(Stdio::null())
            .stderr(log.reopen().unwrap())
            .spawn()
            .expect("starting llama_cpp.server"),
    );
    let base = format!("http://127.0.0.1:{port}");
    let start = Instant::now();
    loop {
        let up = std::net::TcpStream::connect(("127.0.0.1", port)).is_ok();
        if up {
            break;
        }
        assert!(
            start.elapsed() < Duration::from_secs(120),
            "llama_cpp.server did not start: {}",
            std::fs::read_to_string(log.path()).unwrap_or_default()
        );
        std::thread::sleep(Duration::from_millis(250));
    }

    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("models.toml"),
        format!(
            "[[models]]\nname = \"gemma\"\nprovider = \"openai\"\nbase_url = \"{base}/v1\"\nmodel = \"gemma-3-270m\"\nmax_concurrency = 1\nidle_timeout_secs = 120\nfirst_byte_timeout_secs = 300\n\n[[models]]\nname = \"gemma-judge\"\nprovider = \"openai\"\nbase_url = \"{base}/v1\"\nmodel = \"gemma-3-270m\"\nmax_concurrency = 1\nparams = {{ max_tokens = 16, seed = 7 }}\n"
        ),
    )
    .unwrap();
    let mini = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/prism-mini");
    let db = dir.path().join("prism.db");
    let run = |extra: &[&str]| {
        let out = Command::new(env!("CARGO_BIN_EXE_prism"))
            .env("PRISM_CONFIG_DIR", dir.path())
            .env("PRISM_DATA_DIR", dir.path())
            .arg("run")
            .arg(&mini)
            .args([
                "--models",
                "gemma",
                "--filter",
                "KE-FD-DefAn,RE-LF-Critical_Reasoning,IFE-LgC-French",
                "--limit",
                "6",
                "--max-tokens",
                "24",
                "--temperature",
                "0",
                "--seed",
                "7",
                "--json",
                "--db",
            ])
            .arg(&db)
            .args(extra)
            .output()
            .unwrap();
        let stdout = String::from_utf8(out.stdout).unwrap();
        let stderr = String::from_utf8(out.stderr).unwrap();
        assert_eq!(
            out.status.code(),
            Some(0),
            "stdout:\n{stdout}\nstderr:\n{stderr}"
        );
        let last: serde_json::Value = serde_json::from_str(stdout.lines().last().unwrap()).unwrap();
        last
    };
    let first = run(&[]);
    assert_eq!(first["done"], 6, "{first}");
    let run_id = first["run_id"].as_str().unwrap().to_string();
    let store = prism::store::Store::open(&db).unwrap();
    let responses = store.responses(&run_id).unwrap();
    assert_eq!(responses.len(), 6);
    for r in &responses {
        let text = r.text.as_deref().unwrap_or("");
        assert!(!text.trim().is_empty(), "{}: empty answer", r.item_id);
        assert!(r.latency_ms.unwrap() > 0);
        assert_eq!(r.attempts, 1);
    }
    // Greedy decoding with a fixed seed: the same request gives the same answer, and the cache
    // answers an identical re-run without the server.
    let again = run(&[]);
    assert_eq!(again["cache_hits"], 6, "{again}");
    let fresh = run(&["--no-cache"]);
    assert_eq!(fresh["cache_hits"], 0);
    let r2 = store.responses(fresh["run_id"].as_str().unwrap()).unwrap();
    for (a, b) in responses.iter().zip(&r2) {
        assert_eq!(
            a.text, b.text,
            "{}: greedy answers differ between runs",
            a.item_id
        );
    }

    // Token log-probabilities asked for (`--logprobs 3`): the real server's stream gives each
    // token with its three most likely alternatives; they are stored beside each answer, their
    // texts the answer's, and an identical run from the cache has them too.
    let with_lp = run(&["--logprobs", "3"]);
    let lp_run = with_lp["run_id"].as_str().unwrap().to_string();
    assert_eq!(with_lp["cache_hits"], 0, "{with_lp}");
    let answers = store.responses(&lp_run).unwrap();
    let lps = store.logprobs(&lp_run).unwrap();
    assert_eq!(lps.len(), 6);
    for (job, tokens) in &lps {
        let text = answers[*job as usize].text.clone().unwrap();
        assert_eq!(
            tokens.iter().map(|t| t.token.as_str()).collect::<String>(),
            text
        );
        assert!(tokens.iter().all(|t| t.logprob <= 0.0 && t.top.len() == 3));
    }
    let cached = run(&["--logprobs", "3"]);
    assert_eq!(cached["cache_hits"], 6, "{cached}");
    assert_eq!(
        store.logprobs(cached["run_id"].as_str().unwrap()).unwrap(),
        lps
    );
    // Without --logprobs nothing is stored.
    assert!(store.logprobs(&run_id).unwrap().is_empty());

    // Scored, the white-box signals stand beside PRISM's verdicts: six answers are too few for
    // a number, and each cell says so.
    let score_lp = Command::new(env!("CARGO_BIN_EXE_prism"))
        .env("PRISM_CONFIG_DIR", dir.path())
        .env("PRISM_DATA_DIR", dir.path())
        .args(["score", "--run", &lp_run, "--db"])
        .arg(&db)
        .output()
        .unwrap();
    assert_eq!(score_lp.status.code(), Some(0));
    let signals = Command::new(env!("CARGO_BIN_EXE_prism"))
        .env("PRISM_CONFIG_DIR", dir.path())
        .env("PRISM_DATA_DIR", dir.path())
        .args(["signals", &lp_run, "--json", "--db"])
        .arg(&db)
        .output()
        .unwrap();
    let rows: Vec<serde_json::Value> = String::from_utf8(signals.stdout)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str::<serde_json::Value>(l).unwrap()["row"].clone())
        .collect();
    for signal in ["-mean logprob", "-min logprob", "mean entropy"] {
        let all = rows
            .iter()
            .find(|r| r["signal"] == signal && r["cell"] == "all")
            .unwrap_or_else(|| panic!("no {signal} row: {rows:?}"));
        assert_eq!(all["n"], 6, "{all}");
        assert!(all["too_few"].is_string(), "{all}");
    }

    // Scoring with the same server as judge: the rule-scored items need no judge; a judged
    // sub-task (KE-EIC-SelfBuilt, semantic equivalence) asks the real server through the engine
    // and keeps its reply.
    let prism = |args: &[&str]| {
        let out = Command::new(env!("CARGO_BIN_EXE_prism"))
            .env("PRISM_CONFIG_DIR", dir.path())
            .env("PRISM_DATA_DIR", dir.path())
            .args(args)
            .arg("--db")
            .arg(&db)
            .output()
            .unwrap();
        let stdout = String::from_utf8(out.stdout).unwrap();
        assert_eq!(
            out.status.code(),
            Some(0),
            "{stdout}\n{}",
            String::from_utf8_lossy(&out.stderr)
        );
        stdout
    };
    let scored: serde_json::Value = serde_json::from_str(&prism(&[
        "score",
        "--run",
        &run_id,
        "--judge",
        "gemma-judge",
        "--json",
    ]))
    .unwrap();
    assert_eq!(scored["counts"]["by_rule"], 6, "{scored}");
    let judged_run = Command::new(env!("CARGO_BIN_EXE_prism"))
        .env("PRISM_CONFIG_DIR", dir.path())
        .env("PRISM_DATA_DIR", dir.path())
        .arg("run")
        .arg(&mini)
        .args([
            "--models",
            "gemma",
            "--filter",
            "KE-EIC-SelfBuilt",
            "--limit",
            "2",
            "--max-tokens",
            "24",
            "--temperature",
            "0",
            "--json",
            "--db",
        ])
        .arg(&db)
        .output()
        .unwrap();
    let last = String::from_utf8(judged_run.stdout).unwrap();
    let last: serde_json::Value = serde_json::from_str(last.lines().last().unwrap()).unwrap();
    let judged_id = last["run_id"].as_str().unwrap().to_string();
    let scored: serde_json::Value = serde_json::from_str(&prism(&[
        "score",
        "--run",
        &judged_id,
        "--judge",
        "gemma-judge",
        "--json",
    ]))
    .unwrap();
    assert_eq!(scored["counts"]["by_judge"], 2, "{scored}");
    assert_eq!(scored["counts"]["judge_errors"], 0, "{scored}");
    let scores = store.scores(Some(&judged_id)).unwrap();
    assert_eq!(scores.len(), 2);
    for s in &scores {
        assert_eq!(s.judge.as_deref(), Some("gemma-judge"));
        assert!(
            !s.judge_reply.as_deref().unwrap_or("").trim().is_empty(),
            "{s:?}"
        );
        assert!(matches!(s.score, Some(v) if v == 0.0 || v == 1.0), "{s:?}");
    }
    drop(server);
}
