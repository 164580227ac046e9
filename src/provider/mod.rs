//! Model providers behind one streaming chat interface: OpenAI-compatible chat completions,
//! Anthropic Messages and Google Gemini, all over SSE. (The embedded local model plugs into the
//! same [`ChatStream`].)
//!
//! A provider only speaks its wire format; retries, limits and storage belong to the engine.

pub(crate) mod chunk_check;
mod chunk_scan;
pub(crate) mod config;
mod lenient;
mod limiter;
#[cfg(feature = "local")]
pub mod local;
mod plain_http;
pub(crate) mod sse;
mod surrogates;
mod types;
mod wire;

use std::pin::Pin;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use futures::{Stream, StreamExt};

pub use config::{ModelConfig, ModelsFile, ProviderKind, Secret};
pub use limiter::{AdaptiveLimiter, LimiterPermit, RateLimiter};
pub use types::*;

/// Timeouts for one request.
#[derive(Debug, Clone, Copy)]
pub struct Timeouts {
    pub connect: Duration,
    /// From sending the request to the response headers.
    pub first_byte: Duration,
    /// The longest gap between two pieces of the stream.
    pub idle: Duration,
    /// The whole request, from sending it to the last byte: a server that keeps sending never
    /// holds a job forever.
    pub total: Duration,
}

impl Default for Timeouts {
    fn default() -> Self {
        Timeouts {
            connect: Duration::from_secs(10),
            first_byte: Duration::from_secs(120),
            idle: Duration::from_secs(60),
            total: Duration::from_secs(600),
        }
    }
}

/// The longest answer kept by default; beyond it the answer is stored cut, with the reason.
pub const MAX_ANSWER_BYTES: usize = 1 << 20;

/// One base URL of a model, with the number of requests in flight to it (for least-loaded
/// spreading across replicas).
#[derive(Debug)]
struct Endpoint {
    url: String,
    in_flight: AtomicUsize,
    /// The client of its own for a plain `http://` URL; `None` for reqwest's.
    plain: Option<plain_http::PlainHttp>,
}

/// A configured model, ready to send requests.
#[derive(Debug)]
pub struct Provider {
    pub kind: ProviderKind,
    /// The id sent to the server.
    pub model_id: String,
    endpoints: Vec<Arc<Endpoint>>,
    key: Option<Secret>,
    client: reqwest::Client,
    pub timeouts: Timeouts,
    /// The longest SSE line accepted.
    max_line: usize,
}

/// A streaming answer. Dropping it cancels the request.
pub struct ChatStream {
    inner: Pin<Box<dyn Stream<Item = Result<StreamEvent, ProviderError>> + Send>>,
    idle: Duration,
    _guard: Option<InFlight>,
    /// Scheduler turns to give after the body's end so the client's pool takes the connection
    /// back before the caller's next request (reqwest's pool does it from tasks of its own).
    hand_back_turns: u8,
}

impl ChatStream {
    /// A stream from any source of events (the local model uses this).
    pub fn new(
        inner: Pin<Box<dyn Stream<Item = Result<StreamEvent, ProviderError>> + Send>>,
        idle: Duration,
    ) -> Self {
        ChatStream {
            inner,
            idle,
            _guard: None,
            hand_back_turns: 0,
        }
    }

    /// After the answer's finish: reads what is left of the body (the end of the SSE stream, the
    /// chunked terminator) so its connection can serve the next request; dropped unread, the
    /// connection would be closed and the next request would open another. Bounded: a server
    /// that keeps the body open after the end marker is not waited for.
    pub async fn close_after_finish(mut self) {
        use futures::FutureExt;
        let mut ended = false;
        for _ in 0..8 {
            match self.inner.next().now_or_never() {
                Some(Some(_)) => continue,
                Some(None) => {
                    ended = true;
                    break;
                }
                None => break,
            }
        }
        if !ended {
            // Not here yet: it usually follows within a packet.
            let _ = tokio::time::timeout(Duration::from_millis(2), async {
                for _ in 0..8 {
                    if self.inner.next().await.is_none() {
                        break;
                    }
                }
            })
            .await;
        }
        let turns = self.hand_back_turns;
        drop(self);
        for _ in 0..turns {
            tokio::task::yield_now().await;
        }
    }

    /// The next event, or an idle timeout if none comes in time. `None` at the end.
    pub async fn next(&mut self) -> Option<Result<StreamEvent, ProviderError>> {
        match tokio::time::timeout(self.idle, self.inner.next()).await {
            Ok(ev) => ev,
            Err(_) => Some(Err(ProviderError::Timeout {
                kind: TimeoutKind::Idle,
                after: self.idle,
            })),
        }
    }
}

struct InFlight(Arc<Endpoint>);

impl Drop for InFlight {
    fn drop(&mut self) {
        self.0.in_flight.fetch_sub(1, Ordering::Relaxed);
    }
}

impl Provider {
    /// What identifies this provider's answers in cache keys: the kind, the model id and every
    /// endpoint (sorted: replicas listed in another order serve the same model). The model id
    /// alone is not enough: two servers often report one id (`stub`, a file name) for two
    /// different models. Only hashed into keys, never stored as it is.
    pub fn cache_identity(&self) -> String {
        let mut urls: Vec<&str> = self.endpoints.iter().map(|e| e.url.as_str()).collect();
        urls.sort_unstable();
        urls.dedup();
        format!(
            "{}:{}@{}",
            self.kind.as_str(),
            self.model_id,
            urls.join(",")
        )
    }

    /// Builds a provider from its config, reading the API key from the environment.
    pub fn from_config(cfg: &ModelConfig) -> Result<Provider, ProviderError> {
        let urls = cfg.urls();
        if urls.is_empty() {
            return Err(ProviderError::Config(format!(
                "model {:?}: no base_url",
                cfg.name
            )));
        }
        let key = cfg.api_key()?;
        let timeouts = cfg.timeouts();
        let client = reqwest::Client::builder()
            .connect_timeout(timeouts.connect)
            .pool_max_idle_per_host(cfg.max_concurrency.max(1))
            .user_agent(concat!("prism/", env!("CARGO_PKG_VERSION")))
            // API calls never follow redirects: reqwest drops `Authorization` on a cross-host
            // redirect but would re-send `x-api-key` and `x-goog-api-key` to the new host, even
            // from https to http. A redirect is reported as the HTTP status it is.
            .redirect(reqwest::redirect::Policy::none())
            .build()
            .map_err(|e| ProviderError::Config(format!("model {:?}: {e}", cfg.name)))?;
        Ok(Provider {
            kind: cfg.provider,
            model_id: cfg.model_id().to_string(),
            endpoints: urls
                .into_iter()
                .map(|u| {
                    let url = u.trim_end_matches('/').to_string();
                    Arc::new(Endpoint {
                        plain: plain_http::PlainHttp::for_base(
                            &url,
                            cfg.max_concurrency,
                            timeouts.connect,
                        ),
                        url,
                        in_flight: AtomicUsize::new(0),
                    })
                })
                .collect(),
            key,
            client,
            timeouts,
            max_line: sse::MAX_LINE.max(cfg.max_answer_bytes()),
        })
    }

    /// The least-loaded endpoint; ties go to the first.
    fn pick(&self) -> Arc<Endpoint> {
        let e = self
            .endpoints
            .iter()
            .min_by_key(|e| e.in_flight.load(Ordering::Relaxed))
            .expect("a provider has at least one endpoint")
            .clone();
        e.in_flight.fetch_add(1, Ordering::Relaxed);
        e
    }

    /// Requests in flight per base URL (for tests and the status line).
    pub fn in_flight(&self) -> Vec<usize> {
        self.endpoints
            .iter()
            .map(|e| e.in_flight.load(Ordering::Relaxed))
            .collect()
    }

    /// Sends the request and returns the answer as a stream.
    pub async fn stream(&self, req: &ChatRequest) -> Result<ChatStream, ProviderError> {
        let ep = self.pick();
        let guard = InFlight(ep.clone());
        let (url, body, headers) =
            wire::build(self.kind, &ep.url, &self.model_id, req, self.key.as_ref());
        let first_byte = |_| ProviderError::Timeout {
            kind: TimeoutKind::FirstByte,
            after: self.timeouts.first_byte,
        };
        let parser = wire::Parser::new(self.kind);
        if let Some(plain) = &ep.plain {
            let sent =
                tokio::time::timeout(self.timeouts.first_byte, plain.post(&url, body, &headers))
                    .await
                    .map_err(first_byte)?;
            let resp = match sent {
                Ok(r) => r,
                Err(plain_http::SendError::Connect(message)) => {
                    return Err(ProviderError::Connect {
                        url: ep.url.clone(),
                        message,
                    });
                }
                Err(plain_http::SendError::ConnectTimeout) => {
                    return Err(ProviderError::Timeout {
                        kind: TimeoutKind::Connect,
                        after: self.timeouts.connect,
                    });
                }
                Err(plain_http::SendError::BadRequest(message)) => {
                    return Err(ProviderError::Config(format!(
                        "model {:?}: cannot build the request: {message}",
                        self.model_id
                    )));
                }
                Err(plain_http::SendError::Http(e)) => {
                    return Err(ProviderError::Stream(root_cause(&e)));
                }
            };
            let (parts, body) = resp.into_parts();
            let retry = failed_retry_after(parts.status, &parts.headers);
            return self
                .answer(parts.status, retry, body, parser, guard, 0)
                .await;
        }
        let mut rb = self
            .client
            .post(&url)
            .header(reqwest::header::CONTENT_TYPE, "application/json")
            .body(body);
        for (k, v) in headers {
            rb = rb.header(k, v);
        }
        let resp = tokio::time::timeout(self.timeouts.first_byte, rb.send())
            .await
            .map_err(first_byte)?
            .map_err(|e| classify(&e, &ep.url, self.timeouts))?;
        let status = resp.status();
        let retry = failed_retry_after(status, resp.headers());
        // Four turns: reqwest's hand-back is two hops (the connection task sees the body's end,
        // then a task waiting for it to be ready returns it to the pool).
        self.answer(status, retry, resp.bytes_stream(), parser, guard, 4)
            .await
    }

    /// The response as a stream of events, or its error status as an error (with the wait the
    /// server asked for, `retry_after`).
    async fn answer<S, E>(
        &self,
        status: http::StatusCode,
        retry_after: Option<Duration>,
        body: S,
        parser: wire::Parser,
        guard: InFlight,
        hand_back_turns: u8,
    ) -> Result<ChatStream, ProviderError>
    where
        S: Stream<Item = Result<bytes::Bytes, E>> + Send + Unpin + 'static,
        E: std::error::Error + 'static,
    {
        if !status.is_success() {
            let body = read_capped(body, 4096).await;
            return Err(ProviderError::Http {
                status: status.as_u16(),
                message: wire::error_message(&body),
                retry_after,
            });
        }
        Ok(ChatStream {
            inner: Box::pin(sse_events(body, parser, self.max_line)),
            idle: self.timeouts.idle,
            _guard: Some(guard),
            hand_back_turns,
        })
    }
}

/// A wire format's event reader (for the fuzz targets).
#[doc(hidden)]
pub fn wire_parser(kind: ProviderKind) -> wire::Parser {
    wire::Parser::new(kind)
}

/// Reading a response body as provider events: bytes → SSE events (bounded lines) → the wire
/// format's events, in order, ending with the parser's own end-of-stream check. Everything one
/// read from the socket holds is decoded at once and its text handed on as one piece.
struct SseState<S> {
    bytes: S,
    decoder: sse::Decoder,
    parser: wire::Parser,
    events: wire::Events,
    ended: bool,
}

fn sse_events<S, E>(
    bytes: S,
    parser: wire::Parser,
    max_line: usize,
) -> impl Stream<Item = Result<StreamEvent, ProviderError>> + Send
where
    S: Stream<Item = Result<bytes::Bytes, E>> + Send + Unpin,
    E: std::error::Error + 'static,
{
    let state = SseState {
        bytes,
        decoder: sse::Decoder::new(max_line),
        parser,
        events: wire::Events::default(),
        ended: false,
    };
    futures::stream::unfold(state, |mut st| async move {
        loop {
            if let Some(x) = st.events.pop() {
                return Some((x, st));
            }
            if st.ended {
                return None;
            }
            let SseState {
                bytes,
                decoder,
                parser,
                events,
                ended,
            } = &mut st;
            match bytes.next().await {
                Some(Ok(chunk)) => {
                    let fed =
                        decoder.feed_with(&chunk, |ev, data| parser.parse_into(ev, data, events));
                    if let Err(e) = fed {
                        // A protocol violation, not a glitch: not retried.
                        events.push(Err(ProviderError::Protocol(e.to_string())));
                        *ended = true;
                    }
                }
                Some(Err(e)) => {
                    events.push(Err(ProviderError::Stream(root_cause(&e))));
                    *ended = true;
                }
                None => {
                    decoder.finish_with(|ev, data| parser.parse_into(ev, data, events));
                    parser.end_into(events);
                    *ended = true;
                }
            }
        }
    })
}

/// Turns a reqwest error into ours, without the URL's query (it may hold a key).
fn classify(e: &reqwest::Error, url: &str, t: Timeouts) -> ProviderError {
    if e.is_connect() {
        ProviderError::Connect {
            url: url.to_string(),
            message: root_cause(e),
        }
    } else if e.is_timeout() {
        ProviderError::Timeout {
            kind: TimeoutKind::Connect,
            after: t.connect,
        }
    } else {
        ProviderError::Stream(root_cause(e))
    }
}

fn root_cause(e: &(dyn std::error::Error + 'static)) -> String {
    let mut cur = e;
    while let Some(next) = cur.source() {
        cur = next;
    }
    cur.to_string()
}

/// The wait a failed response asks for; a successful one's headers are not read for it.
fn failed_retry_after(status: http::StatusCode, h: &http::HeaderMap) -> Option<Duration> {
    (!status.is_success()).then(|| retry_after(h)).flatten()
}

/// The longest wait a server can ask for.
const MAX_RETRY_AFTER: Duration = Duration::from_secs(3600);

/// How long the server asks us to wait: `retry-after-ms` (milliseconds, OpenAI) wins over
/// `Retry-After`, which RFC 9110 writes as whole seconds or an HTTP date. Clamped to an hour;
/// anything else (`nan`, `-1`, `inf`, words) is ignored, never a panic.
pub fn retry_after(h: &reqwest::header::HeaderMap) -> Option<Duration> {
    let get = |k: &str| h.get(k).and_then(|v| v.to_str().ok()).map(str::trim);
    let secs = |s: f64| (s.is_finite() && s >= 0.0).then(|| Duration::from_secs_f64(s.min(3600.0)));
    if let Some(d) = get("retry-after-ms")
        .and_then(|v| v.parse::<f64>().ok())
        .and_then(|ms| secs(ms / 1000.0))
    {
        return Some(d);
    }
    let v = get("retry-after")?;
    if let Ok(s) = v.parse::<u64>() {
        return Some(Duration::from_secs(s).min(MAX_RETRY_AFTER));
    }
    // Fractions are not in the RFC but servers send them.
    if let Some(d) = v.parse::<f64>().ok().and_then(secs) {
        return Some(d);
    }
    let when = httpdate::parse_http_date(v).ok()?;
    Some(
        when.duration_since(std::time::SystemTime::now())
            .unwrap_or(Duration::ZERO)
            .min(MAX_RETRY_AFTER),
    )
}

async fn read_capped<S, E>(mut s: S, max: usize) -> String
where
    S: Stream<Item = Result<bytes::Bytes, E>> + Unpin,
{
    let mut out = Vec::new();
    while let Some(Ok(chunk)) = s.next().await {
        out.extend_from_slice(&chunk);
        if out.len() >= max {
            out.truncate(max);
            break;
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;
    use reqwest::header::{HeaderMap, HeaderValue};

    fn h(pairs: &[(&'static str, &str)]) -> HeaderMap {
        let mut m = HeaderMap::new();
        for (k, v) in pairs {
            m.insert(*k, HeaderValue::from_str(v).unwrap());
        }
        m
    }

    /// Everything the stream yields for a body arriving in `reads`.
    fn read_stream(reads: &[&str]) -> Vec<Result<StreamEvent, ProviderError>> {
        let bytes: Vec<Result<bytes::Bytes, reqwest::Error>> = reads
            .iter()
            .map(|r| Ok(bytes::Bytes::copy_from_slice(r.as_bytes())))
            .collect();
        let events = sse_events(
            futures::stream::iter(bytes),
            wire::Parser::new(ProviderKind::Openai),
            1 << 16,
        );
        futures::executor::block_on(events.collect())
    }

    fn chunk(t: &str) -> String {
        format!(
            "data: {}\n\n",
            serde_json::json!({"choices": [{"delta": {"content": t}}]})
        )
    }

    #[test]
    fn text_that_arrives_in_one_read_is_one_piece_and_order_is_kept() {
        let one_read = format!(
            "{}{}{}data: {{\"choices\":[{{\"delta\":{{}},\"finish_reason\":\"stop\"}}]}}\n\ndata: [DONE]\n\n",
            chunk("Hel"),
            chunk("lo, "),
            chunk("wörld")
        );
        let evs = read_stream(&[&one_read]);
        assert_eq!(evs.len(), 2, "{evs:?}");
        assert!(matches!(&evs[0], Ok(StreamEvent::Delta(d)) if d == "Hello, wörld"));
        assert!(
            matches!(&evs[1], Ok(StreamEvent::Finish { reason }) if reason.as_deref() == Some("stop"))
        );

        // Split across reads (mid-event too), the text is the same and still in order; an error
        // in the middle is not merged away.
        let (a, b) = one_read.split_at(20);
        let evs = read_stream(&[a, b]);
        let text: String = evs
            .iter()
            .filter_map(|e| match e {
                Ok(StreamEvent::Delta(d)) => Some(d.as_str()),
                _ => None,
            })
            .collect();
        assert_eq!(text, "Hello, wörld");
        let bad = format!("{}data: {{oops\n\n{}", chunk("a"), chunk("b"));
        let evs = read_stream(&[&bad]);
        assert!(matches!(&evs[0], Ok(StreamEvent::Delta(d)) if d == "a"));
        assert!(matches!(&evs[1], Err(ProviderError::Stream(_))));
        assert!(matches!(&evs[2], Ok(StreamEvent::Delta(d)) if d == "b"));
    }

    #[test]
    fn retry_after_reads_seconds_dates_and_milliseconds_and_ignores_garbage() {
        assert_eq!(
            retry_after(&h(&[("retry-after", "7")])),
            Some(Duration::from_secs(7))
        );
        assert_eq!(
            retry_after(&h(&[("retry-after-ms", "250")])),
            Some(Duration::from_millis(250))
        );
        assert_eq!(
            retry_after(&h(&[("retry-after", "0.5")])),
            Some(Duration::from_millis(500))
        );
        // Clamped to an hour.
        assert_eq!(
            retry_after(&h(&[("retry-after", "99999999999")])),
            Some(Duration::from_secs(3600))
        );
        // An HTTP date: in the past means now, in the future the wait until then.
        assert_eq!(
            retry_after(&h(&[("retry-after", "Wed, 21 Oct 2015 07:28:00 GMT")])),
            Some(Duration::ZERO)
        );
        let soon = httpdate::fmt_http_date(std::time::SystemTime::now() + Duration::from_secs(120));
        let d = retry_after(&h(&[("retry-after", &soon)])).unwrap();
        assert!(
            d > Duration::from_secs(100) && d <= Duration::from_secs(120),
            "{d:?}"
        );
        for bad in ["nan", "NaN", "inf", "-1", "-inf", "soon", "", "1e400"] {
            assert_eq!(retry_after(&h(&[("retry-after", bad)])), None, "{bad}");
            assert_eq!(retry_after(&h(&[("retry-after-ms", bad)])), None, "{bad}");
        }
        // A bad ms value falls back to Retry-After.
        assert_eq!(
            retry_after(&h(&[("retry-after-ms", "NaN"), ("retry-after", "3")])),
            Some(Duration::from_secs(3))
        );
    }
}
