//! The three wire formats: how a request is written and how each SSE event is read.

use std::borrow::Cow;

use serde_json::{Value, json};

use super::config::{ProviderKind, Secret};
use super::types::{ChatRequest, ProviderError, Role, StreamEvent, TokenLogprob, Usage};

/// A request's URL, its JSON body (serialized) and its headers.
type Built = (String, Vec<u8>, Vec<(&'static str, String)>);

/// URL, JSON body (serialized) and headers for one request.
pub(super) fn build(
    kind: ProviderKind,
    base: &str,
    model: &str,
    req: &ChatRequest,
    key: Option<&Secret>,
) -> Built {
    match kind {
        ProviderKind::Openai | ProviderKind::Local => openai(base, model, req, key),
        ProviderKind::Anthropic => anthropic(base, model, req, key),
        ProviderKind::Gemini => gemini(base, model, req, key),
    }
}

/// OpenAI's chat completions (and every server that speaks it, the local one too).
fn openai(base: &str, model: &str, req: &ChatRequest, key: Option<&Secret>) -> Built {
    let p = &req.params;
    let mut headers = Vec::new();
    let body = serde_json::to_vec(&OpenAiBody {
        model,
        messages: &req.messages,
        stream: true,
        stream_options: StreamOptions {
            include_usage: true,
        },
        temperature: p.temperature,
        top_p: p.top_p,
        max_tokens: p.max_tokens,
        stop: &p.stop,
        seed: p.seed,
        logprobs: p.logprobs.map(|_| true),
        top_logprobs: p.logprobs.filter(|n| *n > 0).map(|n| n.min(20)),
    })
    .unwrap_or_default();
    if let Some(k) = key {
        headers.push(("authorization", format!("Bearer {}", k.expose())));
    }
    (format!("{base}/chat/completions"), body, headers)
}

/// The system messages as one text (Anthropic and Gemini take it apart from the turns), if any.
fn system_text(req: &ChatRequest) -> Option<String> {
    let system: Vec<&str> = req
        .messages
        .iter()
        .filter(|m| m.role == Role::System)
        .map(|m| m.content.as_str())
        .collect();
    (!system.is_empty()).then(|| system.join("\n\n"))
}

/// Anthropic's messages.
fn anthropic(base: &str, model: &str, req: &ChatRequest, key: Option<&Secret>) -> Built {
    let p = &req.params;
    let mut headers = Vec::new();
    let system = system_text(req);
    let mut body = json!({
        "model": model,
        "max_tokens": p.max_tokens.unwrap_or(1024),
        "stream": true,
        "messages": req.messages.iter().filter(|m| m.role != Role::System)
            .map(|m| json!({"role": m.role.as_str(), "content": m.content})).collect::<Vec<_>>(),
    });
    let o = body.as_object_mut().expect("object");
    if let Some(system) = system {
        o.insert("system".into(), json!(system));
    }
    if let Some(t) = p.temperature {
        o.insert("temperature".into(), json!(t));
    }
    if let Some(t) = p.top_p {
        o.insert("top_p".into(), json!(t));
    }
    if !p.stop.is_empty() {
        o.insert("stop_sequences".into(), json!(p.stop));
    }
    headers.push(("anthropic-version", "2023-06-01".to_string()));
    if let Some(k) = key {
        headers.push(("x-api-key", k.expose().to_string()));
    }
    let url = if base.ends_with("/v1") {
        format!("{base}/messages")
    } else {
        format!("{base}/v1/messages")
    };
    (url, serde_json::to_vec(&body).unwrap_or_default(), headers)
}

/// Gemini's streamGenerateContent.
fn gemini(base: &str, model: &str, req: &ChatRequest, key: Option<&Secret>) -> Built {
    let p = &req.params;
    let mut headers = Vec::new();
    let system = system_text(req);
    let contents: Vec<Value> = req
        .messages
        .iter()
        .filter(|m| m.role != Role::System)
        .map(|m| {
            let role = if m.role == Role::Assistant {
                "model"
            } else {
                "user"
            };
            json!({"role": role, "parts": [{"text": m.content}]})
        })
        .collect();
    let mut gen_cfg = serde_json::Map::new();
    if let Some(t) = p.temperature {
        gen_cfg.insert("temperature".into(), json!(t));
    }
    if let Some(t) = p.top_p {
        gen_cfg.insert("topP".into(), json!(t));
    }
    if let Some(m) = p.max_tokens {
        gen_cfg.insert("maxOutputTokens".into(), json!(m));
    }
    if !p.stop.is_empty() {
        gen_cfg.insert("stopSequences".into(), json!(p.stop));
    }
    if let Some(s) = p.seed {
        gen_cfg.insert("seed".into(), json!(s));
    }
    if let Some(n) = p.logprobs {
        gen_cfg.insert("responseLogprobs".into(), json!(true));
        if n > 0 {
            gen_cfg.insert("logprobs".into(), json!(n.min(20)));
        }
    }
    let mut body = json!({"contents": contents, "generationConfig": gen_cfg});
    if let Some(system) = system {
        body.as_object_mut().expect("object").insert(
            "systemInstruction".into(),
            json!({"parts": [{"text": system}]}),
        );
    }
    if let Some(k) = key {
        // A header, not the `key=` query parameter: URLs end up in logs and errors.
        headers.push(("x-goog-api-key", k.expose().to_string()));
    }
    let root = if base.ends_with("/v1beta") || base.ends_with("/v1") {
        base.to_string()
    } else {
        format!("{base}/v1beta")
    };
    (
        format!("{root}/models/{model}:streamGenerateContent?alt=sse"),
        serde_json::to_vec(&body).unwrap_or_default(),
        headers,
    )
}

/// Pulls a readable message out of an error body (`{"error": {"message": ...}}` in all three
/// APIs), else the body itself, cut short.
pub(super) fn error_message(body: &str) -> String {
    let parsed: Option<Value> = serde_json::from_str(body).ok();
    let msg = parsed
        .as_ref()
        .and_then(|v| {
            v.pointer("/error/message")
                .or_else(|| v.get("message"))
                .or_else(|| v.get("error"))
                .and_then(Value::as_str)
        })
        .map(str::to_string)
        .unwrap_or_else(|| body.trim().to_string());
    let msg = crate::text::one_line(&msg);
    if msg.chars().count() > 300 {
        format!("{}…", msg.chars().take(300).collect::<String>())
    } else {
        msg
    }
}

/// Stream events read so far and not yet taken, in order. Text that arrives while the previous
/// piece is still waiting is joined to it: a read from the socket usually holds dozens of
/// events, and handing them on one at a time costs the job a wake-up, a timer and an allocation
/// each for text that arrived at the same instant.
#[derive(Debug, Default)]
pub struct Events {
    queue: std::collections::VecDeque<Result<StreamEvent, ProviderError>>,
}

impl Events {
    pub fn text(&mut self, t: &str) {
        if t.is_empty() {
            return;
        }
        if let Some(Ok(StreamEvent::Delta(d))) = self.queue.back_mut() {
            d.push_str(t);
        } else {
            self.queue.push_back(Ok(StreamEvent::Delta(t.to_string())));
        }
    }

    pub fn push(&mut self, ev: Result<StreamEvent, ProviderError>) {
        self.queue.push_back(ev);
    }

    pub fn pop(&mut self) -> Option<Result<StreamEvent, ProviderError>> {
        self.queue.pop_front()
    }

    fn into_vec(self) -> Vec<Result<StreamEvent, ProviderError>> {
        self.queue.into()
    }
}

/// Reads SSE events of one wire format into stream events.
pub struct Parser {
    kind: ProviderKind,
    usage: Usage,
    finish_reason: Option<String>,
    saw_finish_reason: bool,
    /// Any text at all so far.
    saw_text: bool,
    finished: bool,
    /// A high surrogate escape that ended the last event's text: its low half may open the next
    /// event's (a server that splits UTF-16 code units across events).
    pending_high: Option<u16>,
}

impl Parser {
    pub fn new(kind: ProviderKind) -> Parser {
        Parser {
            kind,
            usage: Usage::default(),
            finish_reason: None,
            saw_finish_reason: false,
            saw_text: false,
            finished: false,
            pending_high: None,
        }
    }

    /// One SSE event's stream events (tests and fuzzing; a stream uses [`Parser::parse_into`]).
    pub fn parse(&mut self, event: &str, data: &str) -> Vec<Result<StreamEvent, ProviderError>> {
        let mut out = Events::default();
        self.parse_into(event, data, &mut out);
        out.into_vec()
    }

    pub fn parse_into(&mut self, event: &str, data: &str, out: &mut Events) {
        let data = data.trim();
        if data.is_empty() {
            return;
        }
        // Lone surrogate escapes are invalid JSON to serde: join a pair split across two events,
        // and make any other lone half U+FFFD, so the answer is kept.
        let prev = self.pending_high.take();
        let fixed = super::surrogates::repair(data, prev);
        if prev.is_some() && !fixed.joined {
            // The low half never came: the high half alone is U+FFFD.
            out.text("\u{FFFD}");
        }
        self.pending_high = fixed.pending;
        let data: &str = &fixed.text;
        match self.kind {
            ProviderKind::Openai | ProviderKind::Local => self.openai(data, out),
            ProviderKind::Anthropic => self.anthropic(event, data, out),
            ProviderKind::Gemini => self.gemini(data, out),
        }
    }

    fn bad(data: &str, e: impl std::fmt::Display, out: &mut Events) {
        let snippet: String = data.chars().take(120).collect();
        // A garbled event usually means a garbled connection (a proxy cut a line, say): treat it
        // as a broken stream, which is retried, rather than as a final answer.
        out.push(Err(ProviderError::Stream(format!(
            "malformed event ({e}): {}",
            crate::text::one_line(&snippet)
        ))));
    }

    fn openai(&mut self, data: &str, out: &mut Events) {
        if data == "[DONE]" {
            if !self.saw_finish_reason && !self.finished {
                // No finish reason, no complete answer: llama-cpp-python's server ends a request
                // this way when another one interrupts it, with or without some text first.
                // Stored as an answer it would be scored (a cut or empty answer counts as wrong);
                // as a broken stream it is asked again.
                self.finished = true;
                return out.push(Err(ProviderError::Stream(if self.saw_text {
                    "the server ended the stream without a finish reason, so the answer may be \
                     cut short ([DONE] before any finish_reason; was the request interrupted by \
                     another?)"
                        .into()
                } else {
                    "the server ended the stream before any answer ([DONE] with no text and no \
                     finish reason; was the request interrupted by another?)"
                        .into()
                })));
            }
            return self.finish(out);
        }
        // The common shape in one pass; anything else typed and borrowing through serde (a
        // chunk is parsed tens of thousands of times a second in a big run, and a generic
        // `Value` costs an allocation per key).
        let mut fixed = None;
        let chunk: OpenAiChunk<'_> = match super::chunk_scan::openai(data) {
            Some(s) => s.into(),
            None => match super::lenient::parse(data, &mut fixed) {
                Ok(v) => v,
                Err(e) => return Self::bad(data, e, out),
            },
        };
        if let Some(err) = chunk.error {
            let msg = err
                .get("message")
                .and_then(Value::as_str)
                .unwrap_or("error in stream");
            return out.push(Err(ProviderError::Stream(msg.to_string())));
        }
        if let Some(u) = chunk.usage {
            self.usage.prompt_tokens = u.prompt_tokens;
            self.usage.completion_tokens = u.completion_tokens;
        }
        if let Some(choice) = chunk.choices {
            if let Some(t) = choice.delta.and_then(|d| d.content).or(choice.text) {
                self.saw_text |= !t.is_empty();
                out.text(&t);
            }
            if let Some(lp) = choice.logprobs.and_then(|l| l.content)
                && !lp.is_empty()
            {
                out.push(Ok(StreamEvent::Tokens(
                    lp.iter().map(openai_token).collect(),
                )));
            }
            if let Some(reason) = choice.finish_reason {
                // Usage may still follow in a last chunk, so the finish itself is emitted at
                // [DONE] (or when the stream ends).
                self.finish_reason = Some(reason.into_owned());
                self.saw_finish_reason = true;
            }
        }
    }

    fn anthropic(&mut self, event: &str, data: &str, out: &mut Events) {
        let mut fixed = None;
        let v: Value = match super::lenient::parse(data, &mut fixed) {
            Ok(v) => v,
            Err(e) => return Self::bad(data, e, out),
        };
        let ty = v.get("type").and_then(Value::as_str).unwrap_or(event);
        match ty {
            "message_start" => {
                self.usage.prompt_tokens = v
                    .pointer("/message/usage/input_tokens")
                    .and_then(Value::as_u64)
                    .map(|x| x as u32);
            }
            "content_block_delta" => {
                if let Some(t) = v.pointer("/delta/text").and_then(Value::as_str) {
                    out.text(t);
                }
            }
            "message_delta" => {
                if let Some(n) = v.pointer("/usage/output_tokens").and_then(Value::as_u64) {
                    self.usage.completion_tokens = Some(n as u32);
                }
                if let Some(r) = v.pointer("/delta/stop_reason").and_then(Value::as_str) {
                    self.finish_reason = Some(r.to_string());
                    self.saw_finish_reason = true;
                }
            }
            "message_stop" => self.finish(out),
            "error" => {
                let kind = v
                    .pointer("/error/type")
                    .and_then(Value::as_str)
                    .unwrap_or("");
                let msg = v
                    .pointer("/error/message")
                    .and_then(Value::as_str)
                    .unwrap_or("error in stream")
                    .to_string();
                if kind == "overloaded_error" || kind == "rate_limit_error" {
                    out.push(Err(ProviderError::Http {
                        status: if kind == "overloaded_error" { 529 } else { 429 },
                        message: msg,
                        retry_after: None,
                    }))
                } else {
                    out.push(Err(ProviderError::Stream(msg)))
                }
            }
            _ => {}
        }
    }

    fn gemini(&mut self, data: &str, out: &mut Events) {
        let mut fixed = None;
        let v: Value = match super::lenient::parse(data, &mut fixed) {
            Ok(v) => v,
            Err(e) => return Self::bad(data, e, out),
        };
        if let Some(err) = v.get("error") {
            let msg = err
                .get("message")
                .and_then(Value::as_str)
                .unwrap_or("error in stream");
            return out.push(Err(ProviderError::Stream(msg.to_string())));
        }
        if let Some(u) = v.get("usageMetadata") {
            self.usage.prompt_tokens = u
                .get("promptTokenCount")
                .and_then(Value::as_u64)
                .map(|x| x as u32);
            self.usage.completion_tokens = u
                .get("candidatesTokenCount")
                .and_then(Value::as_u64)
                .map(|x| x as u32);
        }
        if let Some(c) = v.pointer("/candidates/0") {
            if let Some(parts) = c.pointer("/content/parts").and_then(Value::as_array) {
                for p in parts {
                    if let Some(t) = p.get("text").and_then(Value::as_str) {
                        out.text(t);
                    }
                }
            }
            if let Some(tokens) = c.get("logprobsResult").map(gemini_tokens)
                && !tokens.is_empty()
            {
                out.push(Ok(StreamEvent::Tokens(tokens)));
            }
            if let Some(r) = c.get("finishReason").and_then(Value::as_str) {
                self.finish_reason = Some(r.to_string());
                // Gemini has no end marker: the finish reason is the end.
                self.finish(out);
            }
        }
    }

    /// The connection closed. A stream that gave its finish reason but no end marker is complete
    /// (some servers omit `[DONE]`); one that did not is broken and will be retried.
    pub fn end(&mut self) -> Vec<Result<StreamEvent, ProviderError>> {
        let mut out = Events::default();
        self.end_into(&mut out);
        out.into_vec()
    }

    pub fn end_into(&mut self, out: &mut Events) {
        if self.finished {
        } else if self.saw_finish_reason {
            self.finish(out)
        } else {
            out.push(Err(ProviderError::Stream(
                "connection closed before the answer finished".into(),
            )))
        }
    }

    fn finish(&mut self, out: &mut Events) {
        if self.finished {
            return;
        }
        self.finished = true;
        if self.pending_high.take().is_some() {
            out.text("\u{FFFD}");
        }
        if self.usage != Usage::default() {
            out.push(Ok(StreamEvent::Usage(self.usage)));
        }
        out.push(Ok(StreamEvent::Finish {
            reason: self.finish_reason.take(),
        }));
    }
}

/// Gemini's `logprobsResult`: the chosen token of each step and, at the same index, the top
/// candidates of that step.
fn gemini_tokens(r: &Value) -> Vec<TokenLogprob> {
    let candidate = |c: &Value| -> Option<(String, f32)> {
        Some((
            c.get("token")?.as_str()?.to_string(),
            c.get("logProbability")?.as_f64()? as f32,
        ))
    };
    let chosen = r
        .get("chosenCandidates")
        .and_then(Value::as_array)
        .map(Vec::as_slice)
        .unwrap_or_default();
    let tops = r
        .get("topCandidates")
        .and_then(Value::as_array)
        .map(Vec::as_slice)
        .unwrap_or_default();
    chosen
        .iter()
        .enumerate()
        .map(|(i, c)| {
            // An unreadable chosen token stays, as unreadable (NaN): the engine leaves it out
            // and says how many were.
            let (token, logprob) = candidate(c).unwrap_or((String::new(), f32::NAN));
            let top = tops
                .get(i)
                .and_then(|t| t.get("candidates"))
                .and_then(Value::as_array)
                .map(|cs| {
                    cs.iter()
                        .take(MAX_ALTERNATIVES)
                        .filter_map(candidate)
                        .collect()
                })
                .unwrap_or_default();
            TokenLogprob {
                token,
                logprob,
                top,
            }
        })
        .collect()
}

/// One entry of OpenAI's `logprobs.content`, read leniently: a token or log-probability that
/// does not read (null, a string, a number JSON cannot hold) makes the token unreadable (NaN),
/// which the engine leaves out and counts; an unreadable alternative is dropped. The answer's
/// text never depends on it.
fn openai_token(t: &Value) -> TokenLogprob {
    let pair = |v: &Value| -> Option<(String, f32)> {
        Some((
            v.get("token")?.as_str()?.to_string(),
            v.get("logprob")?.as_f64()? as f32,
        ))
    };
    let (token, logprob) = pair(t).unwrap_or((String::new(), f32::NAN));
    let top = t
        .get("top_logprobs")
        .and_then(Value::as_array)
        .map(|a| a.iter().take(MAX_ALTERNATIVES).filter_map(pair).collect())
        .unwrap_or_default();
    TokenLogprob {
        token,
        logprob,
        top,
    }
}

/// The most alternatives kept per token (the most any API gives is 20).
const MAX_ALTERNATIVES: usize = 20;

#[derive(serde::Deserialize)]
struct OpenAiChunk<'a> {
    /// The first choice (prism asks for one): read in place, the rest skipped, where a `Vec`
    /// was an allocation per chunk.
    #[serde(default, borrow, deserialize_with = "first_choice")]
    choices: Option<OpenAiChoice<'a>>,
    #[serde(default)]
    usage: Option<OpenAiUsage>,
    #[serde(default)]
    error: Option<Value>,
}

impl<'a> From<super::chunk_scan::Scanned<'a>> for OpenAiChunk<'a> {
    fn from(s: super::chunk_scan::Scanned<'a>) -> Self {
        OpenAiChunk {
            choices: s.choice.then(|| OpenAiChoice {
                delta: Some(OpenAiDelta { content: s.content }),
                text: None,
                finish_reason: s.finish_reason.map(Cow::Borrowed),
                logprobs: None,
            }),
            usage: None,
            error: None,
        }
    }
}

/// What serde makes of an OpenAI chunk, in the scanner's terms; `None` when serde refuses it
/// or it says what the scanner's shape cannot (usage, an error, log-probabilities, a legacy
/// `text`). The scanner is checked against this (its tests and the `openai_chunk` fuzz target).
pub(crate) fn serde_scanned(data: &str) -> Option<super::chunk_scan::Scanned<'_>> {
    let c: OpenAiChunk<'_> = serde_json::from_str(data).ok()?;
    if c.usage.is_some() || c.error.is_some() {
        return None;
    }
    let Some(choice) = c.choices else {
        return Some(super::chunk_scan::Scanned::default());
    };
    if choice.text.is_some() || choice.logprobs.is_some() {
        return None;
    }
    Some(super::chunk_scan::Scanned {
        choice: true,
        content: choice.delta.and_then(|d| d.content),
        finish_reason: match choice.finish_reason {
            None => None,
            Some(Cow::Borrowed(r)) => Some(r),
            Some(Cow::Owned(_)) => return None,
        },
    })
}

#[derive(serde::Deserialize)]
struct OpenAiChoice<'a> {
    #[serde(default, borrow)]
    delta: Option<OpenAiDelta<'a>>,
    /// Legacy completions stream `text` instead of `delta.content`.
    #[serde(default, borrow, deserialize_with = "borrowed")]
    text: Option<Cow<'a, str>>,
    #[serde(default, borrow, deserialize_with = "borrowed")]
    finish_reason: Option<Cow<'a, str>>,
    #[serde(default, deserialize_with = "logprobs_or_none")]
    logprobs: Option<OpenAiLogprobs>,
}

/// `choices[].logprobs`, or none when it is not what OpenAI's shape says.
fn logprobs_or_none<'de, D: serde::Deserializer<'de>>(
    d: D,
) -> Result<Option<OpenAiLogprobs>, D::Error> {
    Ok(serde_json::from_value(<Value as serde::Deserialize>::deserialize(d)?).ok())
}

/// `choices[].logprobs` of a chunk: OpenAI, vLLM, llama.cpp's and llama-cpp-python's servers.
/// Each entry is read on its own ([`openai_token`]), so one odd entry loses no other, and a
/// `content` that is not a list loses the tokens, never the chunk.
#[derive(serde::Deserialize)]
struct OpenAiLogprobs {
    #[serde(default, deserialize_with = "list_or_none")]
    content: Option<Vec<Value>>,
}

fn list_or_none<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Option<Vec<Value>>, D::Error> {
    Ok(match <Value as serde::Deserialize>::deserialize(d)? {
        Value::Array(a) => Some(a),
        _ => None,
    })
}

#[derive(serde::Deserialize)]
struct OpenAiDelta<'a> {
    #[serde(default, borrow, deserialize_with = "borrowed")]
    content: Option<Cow<'a, str>>,
}

/// An optional string that borrows from the event when it has no escapes. `#[serde(borrow)]`
/// borrows a `Cow<str>` field only when the field is exactly that type: inside an `Option`
/// serde always copies, which cost every content delta an allocation.
fn borrowed<'de: 'a, 'a, D: serde::Deserializer<'de>>(
    d: D,
) -> Result<Option<Cow<'a, str>>, D::Error> {
    #[derive(serde::Deserialize)]
    struct Borrowed<'a>(#[serde(borrow)] Cow<'a, str>);
    Ok(<Option<Borrowed<'a>> as serde::Deserialize>::deserialize(d)?.map(|b| b.0))
}

/// The answer's choice: the first element of `choices` whose `index` is 0 or absent (none when
/// there is no such element, or `choices` is empty or null); the others are read past.
fn first_choice<'de: 'a, 'a, D: serde::Deserializer<'de>>(
    d: D,
) -> Result<Option<OpenAiChoice<'a>>, D::Error> {
    struct First<'a>(std::marker::PhantomData<&'a ()>);
    impl<'de: 'a, 'a> serde::de::Visitor<'de> for First<'a> {
        type Value = Option<OpenAiChoice<'a>>;
        fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
            f.write_str("a list of choices")
        }
        fn visit_unit<E>(self) -> Result<Self::Value, E> {
            Ok(None)
        }
        fn visit_seq<A: serde::de::SeqAccess<'de>>(
            self,
            mut seq: A,
        ) -> Result<Self::Value, A::Error> {
            use serde::de::Error;
            // Only the index is read first, so a malformed alternative the answer does not
            // need never fails the chunk.
            #[derive(serde::Deserialize)]
            struct Index {
                #[serde(default)]
                index: Option<Value>,
            }
            let mut answer = None;
            while let Some(raw) = seq.next_element::<&'de serde_json::value::RawValue>()? {
                if answer.is_some() {
                    continue;
                }
                let at: Index = serde_json::from_str(raw.get()).map_err(A::Error::custom)?;
                // prism asks for one alternative: choice 0 is the answer (a server that
                // gives no index means it); any other index is another alternative.
                let ours = match at.index {
                    Some(Value::Number(n)) => n.as_f64() == Some(0.0),
                    _ => true,
                };
                if ours {
                    answer = Some(serde_json::from_str(raw.get()).map_err(A::Error::custom)?);
                }
            }
            Ok(answer)
        }
    }
    d.deserialize_any(First(std::marker::PhantomData))
}

#[derive(serde::Deserialize)]
struct OpenAiUsage {
    #[serde(default)]
    prompt_tokens: Option<u32>,
    #[serde(default)]
    completion_tokens: Option<u32>,
}

/// The OpenAI request body, serialized straight from the request (no intermediate map).
#[derive(serde::Serialize)]
struct OpenAiBody<'a> {
    model: &'a str,
    messages: &'a [crate::provider::Message],
    stream: bool,
    stream_options: StreamOptions,
    #[serde(skip_serializing_if = "Option::is_none")]
    temperature: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    top_p: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    max_tokens: Option<u32>,
    #[serde(skip_serializing_if = "<[String]>::is_empty")]
    stop: &'a [String],
    #[serde(skip_serializing_if = "Option::is_none")]
    seed: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    logprobs: Option<bool>,
    #[serde(skip_serializing_if = "Option::is_none")]
    top_logprobs: Option<u8>,
}

#[derive(serde::Serialize)]
struct StreamOptions {
    include_usage: bool,
}

#[cfg(test)]
mod tests;
