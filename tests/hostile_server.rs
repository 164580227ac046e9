//! A server made to hurt, met through `prism run` as a user runs it: a line that never ends, an
//! answer that never stops, `Retry-After: nan`, a redirect to another host, a key echoed back,
//! and HTTP itself broken (not HTTP, a head cut off, a bad chunk, an endless head, silence).

mod common;

use std::path::PathBuf;
use std::time::Duration;

use assert_cmd::Command;
use common::mock;
use prism::store::Store;

const KEY: &str = "sk-hostile-SECRET-1234567890";

struct Env {
    dir: tempfile::TempDir,
}

impl Env {
    fn new(models: &str) -> Env {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("models.toml"), models).unwrap();
        Env { dir }
    }

    /// Each model's runs go to a store of their own.
    fn db(&self, model: &str) -> PathBuf {
        self.dir.path().join(format!("{model}.db"))
    }

    fn prism(&self) -> Command {
        let mut c = Command::cargo_bin("prism").unwrap();
        c.env("PRISM_CONFIG_DIR", self.dir.path())
            .env("PRISM_DATA_DIR", self.dir.path())
            .env("HOSTILE_KEY", KEY)
            .timeout(Duration::from_secs(120));
        c
    }

    /// Runs one sample item on `model`; returns (exit code, stdout + stderr, stored responses).
    fn run(&self, model: &str) -> (i32, String, Vec<prism::store::ResponseRecord>) {
        let out = self
            .prism()
            .args([
                "run",
                "--models",
                model,
                "--filter",
                "KE-FD-Myths-0001",
                "--db",
            ])
            .arg(self.db(model))
            .output()
            .unwrap();
        let text = format!(
            "{}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        let s = Store::open(&self.db(model)).unwrap();
        let run = s.latest_run().unwrap().expect("a run was recorded");
        (
            out.status.code().unwrap_or(-1),
            text,
            s.responses(&run.id).unwrap(),
        )
    }
}

fn model(name: &str, url: &str, id: &str, extra: &str) -> String {
    format!(
        "[[models]]\nname = \"{name}\"\nprovider = \"openai\"\nbase_url = \"{url}/v1\"\nmodel = \"{id}\"\napi_key_env = \"HOSTILE_KEY\"\nmax_retries = 1\n{extra}\n"
    )
}

#[test]
fn a_line_that_never_ends_fails_the_job_naming_the_limit() {
    let m = mock::start_background();
    let env = Env::new(&model("m", &m.url(), "endless", ""));
    let (code, text, rs) = env.run("m");
    assert_eq!(code, 2, "{text}");
    let e = rs[0].error.as_deref().unwrap();
    assert!(e.contains("SSE line longer than"), "{e}");
    // Not retried: the server broke the protocol.
    assert_eq!(rs[0].attempts, 1);
}

#[test]
fn an_answer_that_never_stops_is_cut_at_the_cap_and_a_request_at_its_deadline() {
    let m = mock::start_background();
    let models = model("capped", &m.url(), "flood", "max_answer_bytes = 100000")
        + &model(
            "timed",
            &m.url(),
            "flood",
            "max_answer_bytes = 1000000000\nrequest_timeout_secs = 2",
        );
    let env = Env::new(&models);
    let (code, text, rs) = env.run("capped");
    assert_eq!(code, 0, "{text}");
    let r = &rs[0];
    assert_eq!(r.text.as_deref().unwrap().len(), 100_000);
    assert!(
        r.finish_reason.as_deref().unwrap().contains("100000 bytes"),
        "{:?}",
        r.finish_reason
    );
    let (code, text, rs) = env.run("timed");
    assert_eq!(code, 2, "{text}");
    assert!(
        rs[0]
            .error
            .as_deref()
            .unwrap()
            .contains("request timeout after 2.0s"),
        "{:?}",
        rs[0].error
    );
}

#[test]
fn retry_after_nan_is_ignored_not_a_panic() {
    let m = mock::start_background();
    let env =
        Env::new(&(model("a", &m.url(), "nanretry", "") + &model("b", &m.url(), "nanretryms", "")));
    for name in ["a", "b"] {
        let (code, text, rs) = env.run(name);
        assert_eq!(code, 0, "{name}: {text}");
        assert_eq!(rs[0].attempts, 2, "retried after the default backoff");
        assert!(!text.contains("panicked"), "{text}");
    }
}

#[test]
fn keys_are_never_sent_to_another_origin_on_redirect() {
    let m = mock::start_background();
    let other = mock::start_background();
    *m.state.redirect_to.lock().unwrap() = Some(format!("{}/v1/messages", other.url()));
    let env = Env::new(&format!(
        "[[models]]\nname = \"claude\"\nprovider = \"anthropic\"\nbase_url = \"{}\"\nmodel = \"redirect\"\napi_key_env = \"HOSTILE_KEY\"\nmax_retries = 0\n",
        m.url()
    ));
    let (code, _, rs) = env.run("claude");
    assert_eq!(code, 2);
    assert!(
        rs[0].error.as_deref().unwrap().contains("307"),
        "{:?}",
        rs[0].error
    );
    assert_eq!(other.requests(), 0, "the redirect was not followed");
    assert!(other.state.auth_seen.lock().unwrap().is_empty());
    // The first server did get the key (it is the configured endpoint).
    assert!(m.state.auth_seen.lock().unwrap().iter().any(|k| k == KEY));
}

#[test]
fn a_key_echoed_back_is_redacted_everywhere() {
    let m = mock::start_background();
    let env = Env::new(
        &(model("err", &m.url(), "echokey", "") + &model("ok", &m.url(), "echokeyok", "")),
    );
    let (_, text, rs) = env.run("err");
    let e = rs[0].error.as_deref().unwrap();
    assert!(e.contains("invalid key *** for this model"), "{e}");
    assert!(!text.contains(KEY), "{text}");
    let (_, text, rs) = env.run("ok");
    assert!(rs[0].error.is_none(), "{:?}", rs[0].error);
    assert_eq!(rs[0].text.as_deref(), Some("your key is ***, keep it safe"));
    assert!(!text.contains(KEY));
    // Nothing in the store holds it: responses, cache, runs.
    let mut files = Vec::new();
    for m in ["err", "ok"] {
        files.push(std::fs::read(env.db(m)).unwrap());
        files.push(std::fs::read(env.db(m).with_extension("db-wal")).unwrap_or_default());
    }
    for bytes in files {
        assert!(
            !bytes.windows(KEY.len()).any(|w| w == KEY.as_bytes()),
            "the key reached the store"
        );
    }
    // Nor the exports.
    let out = env.dir.path().join("outputs");
    env.prism()
        .args(["export", "--db"])
        .arg(env.db("ok"))
        .arg("--prism-outputs")
        .arg(&out)
        .assert()
        .success();
    for f in walk(&out) {
        assert!(!std::fs::read_to_string(&f).unwrap().contains(KEY), "{f:?}");
    }
}

fn walk(d: &std::path::Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for e in std::fs::read_dir(d).unwrap().flatten() {
        let p = e.path();
        if p.is_dir() {
            out.extend(walk(&p));
        } else {
            out.push(p);
        }
    }
    out
}

/// A server that breaks HTTP itself, one way per path, on raw TCP (no HTTP library between it
/// and the client): every job fails with a reason, promptly, and nothing hangs or panics.
fn broken_http_server() -> String {
    use std::io::{Read, Write};
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap();
    std::thread::spawn(move || {
        for conn in listener.incoming() {
            let Ok(mut c) = conn else { continue };
            std::thread::spawn(move || {
                // The request head is enough to know the way to break.
                let mut head = Vec::new();
                let mut b = [0u8; 4096];
                while !head.windows(4).any(|w| w == b"\r\n\r\n") {
                    match c.read(&mut b) {
                        Ok(0) | Err(_) => return,
                        Ok(n) => head.extend_from_slice(&b[..n]),
                    }
                }
                let head = String::from_utf8_lossy(&head).to_string();
                let _ = if head.contains("/garbage/") {
                    c.write_all(b"THIS IS NOT HTTP\r\n\r\n")
                } else if head.contains("/cut/") {
                    c.write_all(b"HTTP/1.1 200 OK\r\nContent-Ty")
                } else if head.contains("/badchunk/") {
                    c.write_all(
                        b"HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nTransfer-Encoding: chunked\r\n\r\nZZZ\r\nhello\r\n",
                    )
                } else if head.contains("/hugehead/") {
                    let mut r = c.write_all(b"HTTP/1.1 200 OK\r\n");
                    let line = format!("X-Pad: {}\r\n", "a".repeat(8000));
                    for _ in 0..2_000 {
                        r = r.and_then(|_| c.write_all(line.as_bytes()));
                        if r.is_err() {
                            break;
                        }
                    }
                    r
                } else {
                    // `/silent/`: accepts, reads, never answers.
                    std::thread::sleep(Duration::from_secs(30));
                    Ok(())
                };
            });
        }
    });
    format!("http://{addr}")
}

#[test]
fn a_server_that_breaks_http_fails_each_job_with_a_reason_and_nothing_hangs() {
    let base = broken_http_server();
    let fast = "first_byte_timeout_secs = 2\nconnect_timeout_secs = 2";
    let models = ["garbage", "cut", "badchunk", "hugehead", "silent"]
        .iter()
        .map(|way| model(way, &format!("{base}/{way}"), "x", fast))
        .collect::<String>();
    let env = Env::new(&models);
    for way in ["garbage", "cut", "badchunk", "hugehead", "silent"] {
        let t = std::time::Instant::now();
        let (code, text, rs) = env.run(way);
        assert_eq!(code, 2, "{way}: {text}");
        assert_eq!(rs.len(), 1, "{way}");
        let e = rs[0].error.as_deref().unwrap_or_default();
        assert!(!e.is_empty() && rs[0].text.is_none(), "{way}: {e}");
        assert!(!e.contains(KEY), "{way}: {e}");
        // Two attempts, each bounded by the first-byte timeout at most.
        assert!(
            t.elapsed() < Duration::from_secs(30),
            "{way} took {:?}",
            t.elapsed()
        );
    }
}

/// Token log-probabilities are untrusted text: unreadable values (`-Infinity` as Python writes
/// it, `null`, `-1e400`), 200,000 entries for a short answer, tokens that spell something else
/// and half a surrogate pair in a token never lose or change the answer; what reads is kept,
/// bounded by the answer, and what was left out is said with it.
#[test]
fn hostile_token_logprobs_never_lose_or_change_the_answer() {
    let m = mock::start_background();
    let url = m.url();
    let models: String = ["lp-python", "lp-flood", "lp-claimed", "lp-surrogate"]
        .iter()
        .map(|id| model(id, &url, id, ""))
        .collect();
    let env = Env::new(&models);
    for id in ["lp-python", "lp-flood", "lp-claimed", "lp-surrogate"] {
        let out = env
            .prism()
            .args([
                "run",
                "--models",
                id,
                "--filter",
                "KE-FD-Myths-0001",
                "--logprobs",
                "3",
            ])
            .arg("--db")
            .arg(env.db(id))
            .output()
            .unwrap();
        let text = format!(
            "{}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        assert_eq!(out.status.code(), Some(0), "{id}: {text}");
        let s = Store::open(&env.db(id)).unwrap();
        let run = s.latest_run().unwrap().unwrap();
        let r = &s.responses(&run.id).unwrap()[0];
        let answer = r.text.clone().unwrap_or_default();
        assert!(
            answer.starts_with("ANSWER(") && answer.ends_with(')'),
            "{id}: {answer:?}"
        );
        assert!(!answer.contains('\u{FFFD}'), "{id}: {answer:?}");
        let blob = s
            .logprobs(&run.id)
            .unwrap()
            .into_iter()
            .next()
            .map(|(_, t)| t)
            .unwrap_or_default();
        assert!(
            blob.len() <= answer.len() + 64,
            "{id}: {} tokens",
            blob.len()
        );
        assert!(
            blob.iter()
                .all(|t| t.logprob.is_finite() && t.logprob <= 0.0),
            "{id}: {blob:?}"
        );
        let (shown, note) = prism::eval::whitebox::shown_tokens(Some(blob.clone()), None, &answer);
        match id {
            // Three of the four tokens' log-probabilities could not be read: one kept.
            "lp-python" => assert_eq!(blob.len(), 1, "{blob:?}"),
            "lp-claimed" => {
                assert!(shown.is_none());
                assert_eq!(note.as_deref(), Some("tokens do not match the answer"));
            }
            "lp-flood" => assert!(!blob.is_empty()),
            _ => {}
        }
        let _ = shown;
    }
}

/// Two servers that call their models by one id (llama.cpp's and vLLM's servers often do) are
/// two models: the second is asked, never handed the first one's cached answers.
#[test]
fn two_servers_sharing_a_model_id_never_share_cached_answers() {
    let (a, b) = (mock::start_background(), mock::start_background());
    let env = Env::new(&(model("x", &a.url(), "echo", "") + &model("y", &b.url(), "echo", "")));
    let db = env.dir.path().join("shared.db");
    let seen = std::cell::RefCell::new(Vec::<String>::new());
    let run = |name: &str| {
        let out = env
            .prism()
            .args(["run", "--models", name, "--filter", "KE-FD-*", "--db"])
            .arg(&db)
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        // The run this command made: the one not seen before (two runs may share a second).
        let s = Store::open(&db).unwrap();
        let id = s
            .runs()
            .unwrap()
            .into_iter()
            .map(|r| r.id)
            .find(|id| !seen.borrow().contains(id))
            .expect("a new run");
        seen.borrow_mut().push(id.clone());
        s.responses(&id).unwrap()
    };
    let xs = run("x");
    assert!(xs.len() >= 5, "{} answers", xs.len());
    assert_eq!(a.requests(), xs.len());
    let ys = run("y");
    assert_eq!(b.requests(), ys.len(), "y's own server answered every item");
    assert!(
        ys.iter().all(|r| !r.cached),
        "no answer of x's was taken for y"
    );
    // The same model on the same server again is the cache's to answer.
    let again = run("y");
    assert_eq!(b.requests(), ys.len());
    assert!(again.iter().all(|r| r.cached));
}
