//! Model providers behind one streaming chat interface: OpenAI-compatible chat completions,
//! Anthropic Messages and Google Gemini, all over SSE. (The embedded local model plugs into the
//! same [`ChatStream`].)
//!
//! A provider only speaks its wire format; retries, limits and storage belong to the engine.

pub mod config;
mod limiter;
#[cfg(feature = "local")]
pub mod local;
mod types;
mod wire;

use std::pin::Pin;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use eventsource_stream::Eventsource;
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
}

impl Default for Timeouts {
    fn default() -> Self {
        Timeouts {
            connect: Duration::from_secs(10),
            first_byte: Duration::from_secs(120),
            idle: Duration::from_secs(60),
        }
    }
}

/// One base URL of a model, with the number of requests in flight to it (for least-loaded
/// spreading across replicas).
#[derive(Debug)]
struct Endpoint {
    url: String,
    in_flight: AtomicUsize,
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
}

/// A streaming answer. Dropping it cancels the request.
pub struct ChatStream {
    inner: Pin<Box<dyn Stream<Item = Result<StreamEvent, ProviderError>> + Send>>,
    idle: Duration,
    _guard: Option<InFlight>,
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
            .build()
            .map_err(|e| ProviderError::Config(format!("model {:?}: {e}", cfg.name)))?;
        Ok(Provider {
            kind: cfg.provider,
            model_id: cfg.model_id().to_string(),
            endpoints: urls
                .into_iter()
                .map(|u| {
                    Arc::new(Endpoint {
                        url: u.trim_end_matches('/').to_string(),
                        in_flight: AtomicUsize::new(0),
                    })
                })
                .collect(),
            key,
            client,
            timeouts,
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
        let mut rb = self
            .client
            .post(&url)
            .header(reqwest::header::CONTENT_TYPE, "application/json")
            .body(body);
        for (k, v) in headers {
            rb = rb.header(k, v);
        }
        let sent = tokio::time::timeout(self.timeouts.first_byte, rb.send()).await;
        let resp = match sent {
            Err(_) => {
                return Err(ProviderError::Timeout {
                    kind: TimeoutKind::FirstByte,
                    after: self.timeouts.first_byte,
                });
            }
            Ok(Err(e)) => return Err(classify(&e, &ep.url, self.timeouts)),
            Ok(Ok(r)) => r,
        };
        let status = resp.status();
        if !status.is_success() {
            let retry_after = retry_after(resp.headers());
            let body = read_capped(resp, 4096).await;
            return Err(ProviderError::Http {
                status: status.as_u16(),
                message: wire::error_message(&body),
                retry_after,
            });
        }
        let parser = Arc::new(std::sync::Mutex::new(wire::Parser::new(self.kind)));
        let at_end = parser.clone();
        let events = resp
            .bytes_stream()
            .eventsource()
            .map(move |ev| {
                let mut p = parser.lock().unwrap_or_else(|e| e.into_inner());
                match ev {
                    Ok(ev) => p.parse(&ev.event, &ev.data),
                    Err(e) => vec![Err(ProviderError::Stream(root_cause(&e)))],
                }
            })
            .chain(futures::stream::once(async move {
                at_end.lock().unwrap_or_else(|e| e.into_inner()).end()
            }))
            .flat_map(futures::stream::iter);
        Ok(ChatStream {
            inner: Box::pin(events),
            idle: self.timeouts.idle,
            _guard: Some(guard),
        })
    }
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

/// `retry-after-ms` (milliseconds, OpenAI) wins over `Retry-After` (seconds).
pub fn retry_after(h: &reqwest::header::HeaderMap) -> Option<Duration> {
    let get = |k: &str| h.get(k).and_then(|v| v.to_str().ok()).map(str::trim);
    if let Some(ms) = get("retry-after-ms").and_then(|v| v.parse::<f64>().ok()) {
        return Some(Duration::from_secs_f64((ms / 1000.0).clamp(0.0, 3600.0)));
    }
    get("retry-after")
        .and_then(|v| v.parse::<f64>().ok())
        .map(|s| Duration::from_secs_f64(s.clamp(0.0, 3600.0)))
}

async fn read_capped(resp: reqwest::Response, max: usize) -> String {
    let mut out = Vec::new();
    let mut s = resp.bytes_stream();
    while let Some(Ok(chunk)) = s.next().await {
        out.extend_from_slice(&chunk);
        if out.len() >= max {
            out.truncate(max);
            break;
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}
