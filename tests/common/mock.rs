//! A mock LLM server for tests (and the run benchmark): OpenAI chat completions, Anthropic
//! Messages and Gemini streamGenerateContent, all streaming SSE, on 127.0.0.1 only.
//!
//! The model id picks the behaviour; faults hit the *first* attempt of each distinct prompt, so a
//! retry succeeds:
//! - `echo`: answers `ANSWER(<last user message, first 24 chars>)` in a few chunks.
//! - `flaky429`: 429 with `retry-after-ms: 20` first. `flaky429s`: 429 with `Retry-After: 1`.
//! - `flaky500`, `flaky503`: that status first.
//! - `drop`: two chunks, then the connection is dropped.
//! - `badsse`: a malformed data line first.
//! - `stall`: one chunk, then silence for 5 s.
//! - `always500`: 500 every time.
//! - `slow`: `echo`, with 40 ms between chunks; `crawl`, 400 ms (an answer takes 1.6 s).
//! - `wait200`: `echo`, all at once after 200 ms (a model that is the bottleneck: benches).
//! - `bench32`: a 32-token reply, every event in one write (for the throughput bench).
//! - `closing`: `echo` in one write, then the server closes the connection (`Connection: close`).
//! - `judge`: answers like a PRISM judge, from the prompt (see [`judge_reply`]).
//! - `autohall`: scripted contradiction detection (see [`autohall_reply`]); `autohallslow`, the
//!   same 30 ms per chunk.
//! - `selfcheck`: scripted self-detection (see [`selfcheck_reply`]); `selfcheckslow`, 30 ms per
//!   chunk.
//!
//! Hostile ones (every attempt):
//! - `endless`: one SSE line that never ends (64 KiB chunks of `x`, forever).
//! - `flood`: valid 1 KiB deltas forever, never a finish.
//! - `nanretry` / `nanretryms`: 429 with `Retry-After: nan` / `retry-after-ms: NaN` first.
//! - `redirect`: 307 to [`MockState::redirect_to`] (another origin).
//! - `echokey`: 400 whose error message quotes the request's API key header.
//! - `echokeyok`: an answer that quotes the request's API key header.
//! - `nul`: `echo`'s answer with a NUL and more text after it; a 400 whose message holds a NUL
//!   on prompts holding "goldfish".
#![allow(dead_code)]

use std::collections::HashMap;
use std::convert::Infallible;
use std::net::SocketAddr;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use axum::Router;
use axum::body::{Body, Bytes};
use axum::extract::{Path, State};
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::post;
use futures::StreamExt;
use serde_json::{Value, json};

#[derive(Default)]
pub struct MockState {
    /// Requests per (model, prompt).
    pub attempts: Mutex<HashMap<(String, String), usize>>,
    pub requests: AtomicUsize,
    /// TCP connections accepted.
    pub connections: AtomicUsize,
    /// Authorization-like headers seen (to check keys are sent).
    pub auth_seen: Mutex<Vec<String>>,
    /// Bodies received (to check parameters).
    pub bodies: Mutex<Vec<Value>>,
    pub keep_bodies: bool,
    /// Where `redirect` sends clients.
    pub redirect_to: Mutex<Option<String>>,
}

pub struct Mock {
    pub addr: SocketAddr,
    pub state: Arc<MockState>,
}

impl Mock {
    pub fn url(&self) -> String {
        format!("http://{}", self.addr)
    }
    pub fn requests(&self) -> usize {
        self.state.requests.load(Ordering::SeqCst)
    }
    /// TCP connections accepted so far.
    pub fn connections(&self) -> usize {
        self.state.connections.load(Ordering::SeqCst)
    }
    /// Forgets every request seen, so the mock's scripts (a reply unreadable the first time)
    /// start over: two stores filled one after the other against one server (the cache keys
    /// hold the server's address) get the same replies.
    pub fn reset(&self) {
        self.state.attempts.lock().unwrap().clear();
        self.state.requests.store(0, Ordering::SeqCst);
        self.state.bodies.lock().unwrap().clear();
        self.state.auth_seen.lock().unwrap().clear();
    }

    /// How many requests a prompt (by a substring of its last message) received from a model.
    pub fn attempts_for(&self, model: &str, needle: &str) -> usize {
        self.state
            .attempts
            .lock()
            .unwrap()
            .iter()
            .filter(|((m, p), _)| m == model && p.contains(needle))
            .map(|(_, n)| *n)
            .sum()
    }
}

/// Starts the mock on a free port of 127.0.0.1, on the current tokio runtime.
pub async fn start(keep_bodies: bool) -> Mock {
    start_on(0, keep_bodies).await
}

/// Starts the mock on a given port of 127.0.0.1 (0: any free port).
pub async fn start_on(port: u16, keep_bodies: bool) -> Mock {
    let state = Arc::new(MockState {
        keep_bodies,
        ..Default::default()
    });
    let app = Router::new()
        .route("/v1/chat/completions", post(openai))
        .route("/v1/messages", post(anthropic))
        .route("/v1beta/models/{model_action}", post(gemini))
        .with_state(state.clone());
    let listener = tokio::net::TcpListener::bind(("127.0.0.1", port))
        .await
        .unwrap();
    let addr = listener.local_addr().unwrap();
    let counted = state.clone();
    let listener = axum::serve::ListenerExt::tap_io(listener, move |_| {
        counted.connections.fetch_add(1, Ordering::SeqCst);
    });
    tokio::spawn(async move {
        let _ = axum::serve(listener, app).await;
    });
    Mock { addr, state }
}

/// Starts the mock on its own thread and runtime (for tests whose runtime is busy or absent).
pub fn start_background() -> Mock {
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let rt = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .enable_all()
            .build()
            .unwrap();
        rt.block_on(async move {
            let m = start(false).await;
            tx.send(Mock {
                addr: m.addr,
                state: m.state.clone(),
            })
            .unwrap();
            std::future::pending::<()>().await;
        });
    });
    rx.recv().unwrap()
}

fn last_user(messages: &[Value]) -> String {
    messages
        .iter()
        .rev()
        .find(|m| m["role"] == "user")
        .and_then(|m| {
            m["content"]
                .as_str()
                .map(str::to_string)
                .or_else(|| m["parts"][0]["text"].as_str().map(str::to_string))
        })
        .unwrap_or_default()
}

fn answer_for(prompt: &str) -> String {
    let tail: String = prompt
        .lines()
        .last()
        .unwrap_or("")
        .chars()
        .take(24)
        .collect();
    format!("ANSWER({tail})")
}

/// A judge's reply to a PRISM judge prompt, steered by markers in the judged answer:
/// `[[same]]` makes the semantic judge say YES (else NO); `[[truncated]]` cuts the JSON short
/// every time; `[[garbage-once]]` answers without JSON on the first attempt only. The code
/// judge gives 5/10 on all four dimensions (a total of 2.5 that must round to 2), in chatty
/// prose; the claim judge a fenced `{4 claims, 1 hallucinated}`; the math judge `{"correct": 1}`.
/// The `quality` model (the quality agent): scores by the item's number, `Item X-0001:` 9 9 9,
/// `-0002` 5 8 8 (filtered at 7), `-0003` unreadable at first then 8 6 9, anything else 8 8 8.
pub fn quality_reply(prompt: &str, attempt: usize) -> String {
    let id = prompt
        .split("\nItem ")
        .nth(1)
        .and_then(|r| r.split(':').next())
        .unwrap_or("");
    if id.ends_with("-0001") {
        "Factuality: 9\nDiscriminability: 9\nClarity: 9\nReason: clean.".into()
    } else if id.ends_with("-0002") {
        "**Factuality:** 5/10\n**Discriminability:** 8\n**Clarity:** 8\nReason: dubious reference."
            .into()
    } else if id.ends_with("-0003") && attempt <= 1 {
        "I think this item is quite good overall.".into()
    } else if id.ends_with("-0003") {
        "Factuality: 8\nDiscriminability: 6\nClarity: 9".into()
    } else {
        "Factuality: 8\nDiscriminability: 8\nClarity: 8".into()
    }
}

pub fn judge_reply(prompt: &str, attempt: usize) -> String {
    if prompt.contains("[[garbage-once]]") && attempt == 1 {
        return "Let me think about this carefully.".into();
    }
    let truncated = prompt.contains("[[truncated]]");
    let json = if prompt.contains("total_claims") {
        "```json\n{ \"total_claims\": 4, \"hallucinated_claims\": 1, \"hallucination_rate\": 0.25 }\n```".to_string()
    } else if prompt.contains("correctness") {
        "Here is my evaluation: {\"correctness\":5,\"completeness\":5,\"efficiency\":5,\"readability\":5,\"total\":5} Hope this helps {really}.".to_string()
    } else if prompt.contains("\"correct\"") {
        "{\"correct\": 1}".to_string()
    } else {
        return if prompt.contains("[[same]]") {
            "YES"
        } else {
            "NO"
        }
        .into();
    };
    if truncated {
        json[..json.len() / 2].to_string()
    } else {
        json
    }
}

/// The judges of the judge-on-trial tests, on the semantic-equivalence prompt (else as `judge`):
/// - `judgeflip` says what `judge` says, except on prompts holding `[[flip]]`, where it says
///   YES on its 1st, 3rd, ... asking and NO on the others (it flips when asked again);
/// - `judgecontrary` says the opposite of `judge` on prompts holding `[[contrary]]`;
/// - `judgeodd` says what `judge` says, except `Yes. No.` for `[[both]]`, `No, not as of
///   yesterday.` for `[[yesterday]]` and an escape sequence with broken JSON for `[[neither]]`.
pub fn trial_judge_reply(model: &str, prompt: &str, attempt: usize) -> String {
    let plain = judge_reply(prompt, attempt);
    if plain != "YES" && plain != "NO" {
        return plain;
    }
    let flip = |r: &str| if r == "YES" { "NO" } else { "YES" }.to_string();
    match model {
        // Replies PRISM's reading takes without noticing: both words, a YES inside a word,
        // an escape sequence and a broken JSON.
        "judgeodd" if prompt.contains("[[both]]") => "Yes. No.".into(),
        "judgeodd" if prompt.contains("[[yesterday]]") => "No, not as of yesterday.".into(),
        "judgeodd" if prompt.contains("[[neither]]") => "\u{1b}]0;x\u{7}{\"verdict\": NaN}".into(),
        "judgeflip" if prompt.contains("[[flip]]") => {
            if attempt % 2 == 1 { "YES" } else { "NO" }.into()
        }
        "judgecontrary" if prompt.contains("[[contrary]]") => flip(&plain),
        _ => plain,
    }
}

/// Which reference wording a request uses (the longest matching start of the eight).
fn reference_variant(prompt: &str) -> Option<usize> {
    prism::detect::prompts::REFERENCE_VARIANTS
        .iter()
        .enumerate()
        .filter_map(|(i, t)| {
            let head = t.split("{claim}").next().unwrap_or("");
            (!head.is_empty() && prompt.starts_with(head)).then_some((head.len(), i))
        })
        .max()
        .map(|(_, i)| i)
}

fn section<'a>(prompt: &'a str, start: &str, end: &str) -> &'a str {
    let from = prompt.find(start).map(|i| i + start.len()).unwrap_or(0);
    let rest = &prompt[from..];
    rest.find(end).map(|i| &rest[..i]).unwrap_or(rest).trim()
}

/// The `autohall` model, steered by markers in the claim or question:
/// - a reference request answers `Title/Source/Summary: variant V ...` (V: which wording);
///   `[[refuse]]` makes the reference under test (wording 0) a refusal;
/// - the classification says `Answer: False` for `[[says-false]]`, else `Answer: True`;
/// - a pair check says CONFLICT, with quotes, when `[[conflict2]]` and sample B is of wording 1
///   or 2 (so K = 6 gives two conflicts); CONSISTENT for `[[never]]`; `[[unreadable]]` gets a
///   reply with no verdict every time; `[[echo]]` one that copies the question back (with the word
///   "contradict" in it); otherwise CONFLICT when the two answers differ; a wording of the pair
///   check holding `(lenient wording)` is always answered CONSISTENT;
/// - asked for a claim's topic, the topic in a `[[topic:NAME]]` marker, else `Science`;
///   `[[no-topic]]` copies the list back (no choice);
/// - asked whether one answer entails another (semantic entropy): "Entailment." when the
///   question holds `[[one-meaning]]`, a reply naming no relation for `[[unreadable]]`, else
///   "Neutral: they say different things.";
/// - asked whether a sentence is supported by a context (SelfCheckGPT): Yes when every word of
///   the sentence is in the context, else No; `[[chatty]]` gets neither;
/// - asked whether an answer contains false information (self-detection on answers): yes when
///   its question mentions bones, else no (chain-of-thought: a unit list, then `Answer: ...`);
/// - anything else is answered like `echo`.
pub fn autohall_reply(prompt: &str) -> String {
    if prompt.contains("Is the sentence supported by the context above?") {
        // SelfCheckGPT's question: "Yes" when every word of the sentence is in the context, else
        // "No"; `[[chatty]]` in the sentence gets a reply that is neither.
        let context = section(prompt, "Context: ", "\n\nSentence: ").to_lowercase();
        let sentence = section(prompt, "\n\nSentence: ", "\n\nIs the sentence").to_lowercase();
        if sentence.contains("[[chatty]]") {
            return "Well, partly.".into();
        }
        let words = |t: &str| -> Vec<String> {
            t.split(|c: char| !c.is_alphanumeric())
                .filter(|w| !w.is_empty())
                .map(str::to_string)
                .collect()
        };
        let have = words(&context);
        return if words(&sentence).iter().all(|w| have.contains(w)) {
            "Yes".into()
        } else {
            "No".into()
        };
    }
    if prompt.contains("Does the answer contain false information?") {
        // Self-detection on answers: "false information" when the question is about bones
        // (so two of three KE-FD-Numbers answers are judged correct), chain-of-thought with
        // its unit list and last line; `[[chatty]]` anywhere gets an unreadable direct reply.
        let question = section(prompt, "Question: ", "\n\nAnswer: ");
        let yes = question.contains("bones");
        return if prompt.contains("units of meaning") {
            format!(
                "1. The subject: checked.\n2. The number: {}.\nAnswer: {}",
                if yes { "wrong" } else { "right" },
                if yes { "yes" } else { "no" }
            )
        } else if prompt.contains("[[chatty]]") {
            "Well, it depends on how you read it.".into()
        } else if yes {
            "Yes.".into()
        } else {
            "No.".into()
        };
    }
    if prompt.contains("semantically entail Possible Answer 2?") {
        let question = section(prompt, "answers to the question \"", "\"\nHere are");
        return if question.contains("[[one-meaning]]") {
            "Entailment.".into()
        } else if question.contains("[[unreadable]]") {
            "Hmm, hard to say.".into()
        } else {
            "Neutral: they say different things.".into()
        };
    }
    if prompt.contains("Which one of these topics is the claim about?") {
        if prompt.contains("[[no-topic]]") {
            return "Topics: Education, Technology, Literature, Geography".into();
        }
        return match prompt
            .split("[[topic:")
            .nth(1)
            .and_then(|r| r.split("]]").next())
        {
            Some(t) => format!("{t}."),
            None => "Science".into(),
        };
    }
    if prompt.contains("Do the two answers contradict each other") {
        let question = section(prompt, "Question: ", "\nAnswer A: ");
        let a = section(prompt, "\nAnswer A: ", "\nAnswer B: ");
        let b = section(prompt, "\nAnswer B: ", "\n\nDo the two answers");
        if question.contains("[[unreadable]]") {
            return "Hmm. Both texts are about the same topic and I will think about it.".into();
        }
        if question.contains("[[echo]]") {
            // What SmolLM2 135M really replied on AutoHall's Climate-FEVER claims: the claim and
            // the question copied back, cut off mid-sentence. It holds "contradict".
            return format!(
                "Claim: {question} Do the two answers contradict each other, so that they cannot both be true? Differences in"
            );
        }
        let conflict = if question.contains("[[never]]") || prompt.contains("(lenient wording)") {
            false
        } else if question.contains("[[conflict2]]") {
            b.contains("variant 1 ") || b.contains("variant 2 ")
        } else {
            a != b
        };
        return if conflict {
            format!(
                "Yes.\nExplanation: the two answers disagree.\nQuote A: \"{}\"\nQuote B: \"{}\"",
                a.chars().take(20).collect::<String>(),
                b.chars().take(20).collect::<String>()
            )
        } else {
            "No.\nExplanation: they say the same.\nQuote A: \"\"\nQuote B: \"\"".into()
        };
    }
    if prompt.contains("Based on the reference, is the claim true or false?") {
        return if prompt.contains("[[says-false]]") {
            "Answer: False\nThe reference says otherwise."
        } else {
            "Answer: True\nThe reference supports it."
        }
        .into();
    }
    if let Some(v) = reference_variant(prompt) {
        if v == 0 && prompt.contains("[[refuse]]") {
            return "I'm sorry, I cannot provide a specific reference for this claim.".into();
        }
        return format!(
            "Title: Notes on the claim\nSource: Mock Journal\nSummary: variant {v} discusses the claim and its evidence in one paragraph."
        );
    }
    answer_for(prompt)
}

fn line_after<'a>(prompt: &'a str, label: &str) -> &'a str {
    prompt
        .lines()
        .rev()
        .find_map(|l| l.strip_prefix(label))
        .unwrap_or("")
        .trim()
}

/// The `selfcheck` model, steered by markers in the subject (they travel into the sentences):
/// - a true sentence is `<subject> has <relation> <object>.`; `[[no-object]]` never names the
///   object (set aside after the attempts); `[[retry-once]]` leaves it out on the first attempt;
/// - a false sentence replaces the object with `Wrongville`; `[[keep-object]]` keeps it (set
///   aside);
/// - a detector says yes for a sentence with `Wrongville`, else no (directly "Yes."/"No.", with
///   chain-of-thought a unit list and `Answer: yes|no`); `[[chatty]]` gets an unclean reply.
///
/// `n`: how many times this exact prompt was asked (1 the first time).
pub fn selfcheck_reply(prompt: &str, n: usize) -> String {
    if prompt.contains("Write one sentence that states the fact below") {
        let subject = line_after(prompt, "Subject: ");
        let relation = line_after(prompt, "Relation: ");
        let object = line_after(prompt, "Object: ");
        if subject.contains("[[no-object]]") || (subject.contains("[[retry-once]]") && n == 1) {
            return format!("{subject} has {relation} something.");
        }
        return format!("{subject} has {relation} {object}.");
    }
    if prompt.contains("Rewrite the sentence below so that it becomes false") {
        let sentence = line_after(prompt, "Sentence: ");
        let object = prompt
            .split("replace \"")
            .nth(1)
            .and_then(|r| r.split('"').next())
            .unwrap_or("");
        if sentence.contains("[[keep-object]]") || object.is_empty() {
            return sentence.to_string();
        }
        return sentence.replace(object, "Wrongville");
    }
    let sentence = line_after(prompt, "Sentence: ");
    let yes = sentence.contains("Wrongville");
    if prompt.contains("Answer with yes or no only") {
        if sentence.contains("[[chatty]]") {
            return "I think so.".into();
        }
        return if yes { "Yes." } else { "No." }.into();
    }
    if prompt.contains("First break the sentence into its units") {
        if sentence.contains("[[chatty]]") {
            return "It depends on the source.".into();
        }
        return format!(
            "1. The subject: fine.\n2. The object: {}.\nAnswer: {}",
            if yes { "wrong" } else { "right" },
            if yes { "yes" } else { "no" }
        );
    }
    answer_for(prompt)
}

enum Plan {
    Ok {
        delay: Duration,
    },
    /// Everything in one body write.
    AtOnce,
    /// Everything in one body write, after a wait.
    Wait(Duration),
    Status(u16, Vec<(&'static str, String)>),
    Drop,
    Closing,
    BadSse,
    Stall,
    Endless,
    Flood,
    Redirect(String),
}

fn plan(state: &MockState, model: &str, prompt: &str) -> Plan {
    state.requests.fetch_add(1, Ordering::SeqCst);
    let n = {
        let mut a = state.attempts.lock().unwrap();
        let e = a
            .entry((model.to_string(), prompt.to_string()))
            .or_insert(0);
        *e += 1;
        *e
    };
    let first = n == 1;
    match model {
        "flaky429" if first => Plan::Status(429, vec![("retry-after-ms", "20".into())]),
        "flaky429s" if first => Plan::Status(429, vec![("retry-after", "1".into())]),
        "nanretry" if first => Plan::Status(429, vec![("retry-after", "nan".into())]),
        "nanretryms" if first => Plan::Status(429, vec![("retry-after-ms", "NaN".into())]),
        "endless" => Plan::Endless,
        "flood" => Plan::Flood,
        "redirect" => Plan::Redirect(
            state
                .redirect_to
                .lock()
                .unwrap()
                .clone()
                .unwrap_or_default(),
        ),
        "flaky500" if first => Plan::Status(500, vec![]),
        "flaky503" if first => Plan::Status(503, vec![]),
        "always500" => Plan::Status(500, vec![]),
        "drop" if first => Plan::Drop,
        "badsse" if first => Plan::BadSse,
        "stall" if first => Plan::Stall,
        "bench32" => Plan::AtOnce,
        "wait200" => Plan::Wait(Duration::from_millis(200)),
        "closing" => Plan::Closing,
        "slow" => Plan::Ok {
            delay: Duration::from_millis(40),
        },
        "crawl" => Plan::Ok {
            delay: Duration::from_millis(400),
        },
        "autohallslow" | "selfcheckslow" | "judgeslow" | "qualityslow" => Plan::Ok {
            delay: Duration::from_millis(30),
        },
        _ => Plan::Ok {
            delay: Duration::ZERO,
        },
    }
}

fn chunks(text: &str) -> Vec<String> {
    // Split into 4 pieces at char boundaries.
    let chars: Vec<char> = text.chars().collect();
    let n = chars.len().div_ceil(4).max(1);
    chars.chunks(n).map(|c| c.iter().collect()).collect()
}

/// Builds an SSE body from pre-rendered events, with the fault of `plan`.
fn sse(events: Vec<String>, plan: Plan) -> Response {
    match plan {
        Plan::Status(code, headers) => {
            let mut r = (
                StatusCode::from_u16(code).unwrap(),
                json!({"error": {"message": format!("mock says {code}"), "type": "mock"}})
                    .to_string(),
            )
                .into_response();
            for (k, v) in headers {
                r.headers_mut().insert(k, v.parse().unwrap());
            }
            r
        }
        Plan::Ok { delay } => {
            let s = futures::stream::iter(events).then(move |e| async move {
                if !delay.is_zero() {
                    tokio::time::sleep(delay).await;
                }
                Ok::<_, Infallible>(Bytes::from(e))
            });
            stream_response(Body::from_stream(s))
        }
        Plan::AtOnce => stream_response(Body::from(events.concat())),
        Plan::Wait(d) => {
            let all = events.concat();
            let s = futures::stream::once(async move {
                tokio::time::sleep(d).await;
                Ok::<_, Infallible>(Bytes::from(all))
            });
            stream_response(Body::from_stream(s))
        }
        Plan::Closing => {
            let mut r = stream_response(Body::from(events.concat()));
            r.headers_mut()
                .insert("connection", axum::http::HeaderValue::from_static("close"));
            r
        }
        Plan::Drop => {
            let head: Vec<Result<Bytes, std::io::Error>> = events
                .into_iter()
                .take(2)
                .map(|e| Ok(Bytes::from(e)))
                .chain(std::iter::once(Err(std::io::Error::other(
                    "mock drops the connection",
                ))))
                .collect();
            stream_response(Body::from_stream(futures::stream::iter(head)))
        }
        Plan::BadSse => {
            let mut ev =
                vec!["data: {\"choices\": [{\"delta\": {\"content\": \"par\"\n\n".to_string()];
            ev.extend(events);
            let s = futures::stream::iter(ev).map(|e| Ok::<_, Infallible>(Bytes::from(e)));
            stream_response(Body::from_stream(s))
        }
        Plan::Endless => {
            let head = futures::stream::once(async { Ok::<_, Infallible>(Bytes::from("data: {")) });
            let tail = futures::stream::repeat_with(|| Ok(Bytes::from(vec![b'x'; 64 << 10])));
            stream_response(Body::from_stream(head.chain(tail)))
        }
        Plan::Flood => {
            let delta = format!(
                "data: {}\n\n",
                json!({"choices": [{"index": 0, "delta": {"content": "y".repeat(1024)}, "finish_reason": null}]})
            );
            let s = futures::stream::repeat_with(move || {
                Ok::<_, Infallible>(Bytes::from(delta.clone()))
            })
            .then(|b| async move {
                tokio::task::yield_now().await;
                b
            });
            stream_response(Body::from_stream(s))
        }
        Plan::Redirect(to) => Response::builder()
            .status(307)
            .header("location", to)
            .body(Body::empty())
            .unwrap(),
        Plan::Stall => {
            let first = events.into_iter().next().unwrap_or_default();
            let s = futures::stream::once(async move { Ok::<_, Infallible>(Bytes::from(first)) })
                .chain(futures::stream::once(async {
                    tokio::time::sleep(Duration::from_secs(5)).await;
                    Ok::<_, Infallible>(Bytes::from_static(b""))
                }));
            stream_response(Body::from_stream(s))
        }
    }
}

fn stream_response(body: Body) -> Response {
    Response::builder()
        .header("content-type", "text/event-stream")
        .header("cache-control", "no-cache")
        .body(body)
        .unwrap()
}

fn record(state: &MockState, headers: &HeaderMap, body: &Value) {
    for h in ["authorization", "x-api-key", "x-goog-api-key"] {
        if let Some(v) = headers.get(h) {
            state
                .auth_seen
                .lock()
                .unwrap()
                .push(v.to_str().unwrap_or("").to_string());
        }
    }
    if state.keep_bodies {
        state.bodies.lock().unwrap().push(body.clone());
    }
}

async fn openai(
    State(st): State<Arc<MockState>>,
    headers: HeaderMap,
    body: axum::Json<Value>,
) -> Response {
    record(&st, &headers, &body);
    let model = body["model"].as_str().unwrap_or("").to_string();
    let prompt = last_user(
        body["messages"]
            .as_array()
            .map(Vec::as_slice)
            .unwrap_or(&[]),
    );
    let key = headers
        .get("authorization")
        .and_then(|v| v.to_str().ok())
        .unwrap_or("")
        .trim_start_matches("Bearer ")
        .to_string();
    if model == "echokey" {
        st.requests.fetch_add(1, Ordering::SeqCst);
        return (
            StatusCode::BAD_REQUEST,
            json!({"error": {"message": format!("invalid key {key} for this model")}}).to_string(),
        )
            .into_response();
    }
    // A NUL in an error message, on the prompts holding "goldfish".
    if model == "nul" && prompt.contains("goldfish") {
        st.requests.fetch_add(1, Ordering::SeqCst);
        return (
            StatusCode::BAD_REQUEST,
            json!({"error": {"message": "bad\u{0}request"}}).to_string(),
        )
            .into_response();
    }
    let p = plan(&st, &model, &prompt);
    let pieces: Vec<String> = if model == "echokeyok" {
        chunks(&format!("your key is {key}, keep it safe"))
    } else if matches!(p, Plan::AtOnce) {
        (0..32).map(|i| format!("tok{i} ")).collect()
    } else if model.starts_with("autohall") {
        chunks(&autohall_reply(&prompt))
    } else if model.starts_with("selfcheck") {
        let n = st.attempts.lock().unwrap()[&(model.clone(), prompt.clone())];
        chunks(&selfcheck_reply(&prompt, n))
    } else if model == "storyteller" {
        // Its first answer to a prompt makes something up in its last sentence; the answers
        // after it (a run's further samples) leave it out.
        let n = st.attempts.lock().unwrap()[&(model.clone(), prompt.clone())];
        let told = "Paris is the capital of France. The Eiffel Tower is in Paris.";
        chunks(&if n == 1 {
            format!("{told} It was built by Martians in 1066.")
        } else {
            told.to_string()
        })
    } else if model == "nul" {
        chunks(&format!("{}\u{0}after a NUL", answer_for(&prompt)))
    } else if model == "judge" || model == "judgeslow" {
        let n = st.attempts.lock().unwrap()[&(model.clone(), prompt.clone())];
        chunks(&judge_reply(&prompt, n))
    } else if model == "judgeflip" || model == "judgecontrary" || model == "judgeodd" {
        let n = st.attempts.lock().unwrap()[&(model.clone(), prompt.clone())];
        chunks(&trial_judge_reply(&model, &prompt, n))
    } else if model == "quality" || model == "qualityslow" {
        let n = st.attempts.lock().unwrap()[&(model.clone(), prompt.clone())];
        chunks(&quality_reply(&prompt, n))
    } else {
        chunks(&answer_for(&prompt))
    };
    if let Some(events) = hostile_logprobs(&model, &answer_for(&prompt)) {
        return sse(events, Plan::AtOnce);
    }
    // Asked for log-probabilities, each chunk is one token of probability 0.9, 0.5, 0.1, ...
    // in turn, with one alternative, as OpenAI-compatible servers send them.
    let logprobs = body["logprobs"] == json!(true);
    let mut events: Vec<String> = pieces
        .into_iter()
        .enumerate()
        .map(|(i, c)| {
            let mut choice = json!({"index": 0, "delta": {"content": c}, "finish_reason": null});
            if logprobs {
                let p = [0.9f64, 0.5, 0.1][i % 3];
                choice["logprobs"] = json!({"content": [{"token": c, "logprob": p.ln(),
                    "top_logprobs": [{"token": c, "logprob": p.ln()}]}]});
            }
            format!("data: {}\n\n", json!({"choices": [choice]}))
        })
        .collect();
    events.push(format!(
        "data: {}\n\n",
        json!({"choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]})
    ));
    events.push(format!(
        "data: {}\n\n",
        json!({"choices": [], "usage": {"prompt_tokens": prompt.split_whitespace().count(), "completion_tokens": 4}})
    ));
    events.push("data: [DONE]\n\n".into());
    sse(events, p)
}

/// Hostile token log-probabilities (every attempt), the answer's text itself fine:
/// - `lp-python`: `-Infinity` (as Python's json writes it), `null` and `-1e400` among them;
/// - `lp-flood`: 200,000 token entries for the answer;
/// - `lp-claimed`: tokens that spell something else than the answer;
/// - `lp-surrogate`: a token ending with half a surrogate pair.
fn hostile_logprobs(model: &str, answer: &str) -> Option<Vec<String>> {
    let pieces = chunks(answer);
    let text = |c: &str| json!(c).to_string();
    let entries: Vec<String> = match model {
        "lp-python" => ["-Infinity", "null", "-1e400", "-0.5"]
            .iter()
            .zip(&pieces)
            .map(|(lp, c)| {
                format!(
                    r#"[{{"token":{},"logprob":{lp},"top_logprobs":[]}}]"#,
                    text(c)
                )
            })
            .collect(),
        "lp-flood" => pieces
            .iter()
            .map(|_| {
                let one = r#"{"token":"o","logprob":-0.1,"top_logprobs":[]}"#;
                format!("[{}]", vec![one; 50_000].join(","))
            })
            .collect(),
        "lp-claimed" => ["foo", "bar", "baz", "quxzz"]
            .iter()
            .map(|t| format!(r#"[{{"token":"{t}","logprob":-0.2,"top_logprobs":[]}}]"#))
            .collect(),
        "lp-surrogate" => pieces
            .iter()
            .enumerate()
            .map(|(i, c)| {
                let tok = if i == 1 {
                    r#""\ud83d""#.to_string()
                } else {
                    text(c)
                };
                format!(r#"[{{"token":{tok},"logprob":-0.3,"top_logprobs":[]}}]"#)
            })
            .collect(),
        _ => return None,
    };
    let mut events: Vec<String> = pieces
        .iter()
        .zip(entries)
        .map(|(c, lp)| {
            format!(
                "data: {{\"choices\":[{{\"index\":0,\"delta\":{{\"content\":{}}},\"logprobs\":{{\"content\":{lp}}},\"finish_reason\":null}}]}}\n\n",
                text(c)
            )
        })
        .collect();
    events.push(format!(
        "data: {}\n\n",
        json!({"choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]})
    ));
    events.push("data: [DONE]\n\n".into());
    Some(events)
}

async fn anthropic(
    State(st): State<Arc<MockState>>,
    headers: HeaderMap,
    body: axum::Json<Value>,
) -> Response {
    record(&st, &headers, &body);
    let model = body["model"].as_str().unwrap_or("").to_string();
    let prompt = last_user(
        body["messages"]
            .as_array()
            .map(Vec::as_slice)
            .unwrap_or(&[]),
    );
    let answer = answer_for(&prompt);
    let p = plan(&st, &model, &prompt);
    let mut events = vec![format!(
        "event: message_start\ndata: {}\n\n",
        json!({"type": "message_start", "message": {"usage": {"input_tokens": 11}}})
    )];
    for c in chunks(&answer) {
        events.push(format!(
            "event: content_block_delta\ndata: {}\n\n",
            json!({"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": c}})
        ));
    }
    events.push(format!(
        "event: message_delta\ndata: {}\n\n",
        json!({"type": "message_delta", "delta": {"stop_reason": "end_turn"}, "usage": {"output_tokens": 4}})
    ));
    events.push("event: message_stop\ndata: {\"type\": \"message_stop\"}\n\n".into());
    sse(events, p)
}

async fn gemini(
    State(st): State<Arc<MockState>>,
    Path(model_action): Path<String>,
    headers: HeaderMap,
    body: axum::Json<Value>,
) -> Response {
    record(&st, &headers, &body);
    let model = model_action.split(':').next().unwrap_or("").to_string();
    let prompt = last_user(
        body["contents"]
            .as_array()
            .map(Vec::as_slice)
            .unwrap_or(&[]),
    );
    let answer = answer_for(&prompt);
    let p = plan(&st, &model, &prompt);
    let parts = chunks(&answer);
    let last = parts.len() - 1;
    let events = parts
        .into_iter()
        .enumerate()
        .map(|(i, c)| {
            let mut v =
                json!({"candidates": [{"content": {"role": "model", "parts": [{"text": c}]}}]});
            if i == last {
                v["candidates"][0]["finishReason"] = json!("STOP");
                v["usageMetadata"] = json!({"promptTokenCount": 9, "candidatesTokenCount": 4});
            }
            format!("data: {v}\n\n")
        })
        .collect();
    sse(events, p)
}
