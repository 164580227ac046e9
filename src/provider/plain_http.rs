//! The client for `http://` endpoints, the local inference servers (llama.cpp, vLLM, Ollama, a
//! bench's nginx): HTTP/1.1 over connections this module keeps itself, at most one per request
//! slot.
//!
//! Why not reqwest here: its pool hands a finished connection back from a task of its own, and
//! when that task runs late the next request opens another connection (a run at concurrency 256
//! opened 257-355); it has no cap on open connections, and a connector layer cannot see one
//! close. Here the request that reads an answer to its end puts the connection back itself,
//! before its slot is free, so the next request finds it idle: a run never opens more
//! connections than it sends requests at once. `https://` and proxied endpoints stay on reqwest
//! (TLS, HTTP/2, proxy settings), where a remote API's rate limit, not the client, sets the pace.

use std::pin::Pin;
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};
use std::time::Duration;

use bytes::Bytes;
use futures::Stream;
use http::header::{self, HeaderValue};
use http_body_util::Full;
use hyper::body::{Body as _, Incoming};
use hyper::client::conn::http1::SendRequest;
use tokio::sync::{OwnedSemaphorePermit, Semaphore};

type Sender = SendRequest<Full<Bytes>>;

/// Connections to one `http://` origin.
pub(crate) struct PlainHttp {
    /// `host:port`, as connected to.
    addr: String,
    /// The `Host` header.
    host: HeaderValue,
    /// Length of `http://host[:port]` in the URLs this origin is asked for.
    origin_len: usize,
    inner: Arc<Inner>,
    connect_timeout: Duration,
}

struct Inner {
    /// Connections whose last answer was read to its end, most recent last.
    idle: Mutex<Vec<Sender>>,
    /// One permit per request under way: a connection is opened only by a request holding one
    /// and finding none idle, so open connections never outnumber the permits.
    slots: Arc<Semaphore>,
}

/// Why a request got no response.
#[derive(Debug)]
pub(crate) enum SendError {
    /// No connection could be made (refused, unreachable).
    Connect(String),
    /// No connection within the connect timeout.
    ConnectTimeout,
    /// The request cannot be built (a URL not under this origin, a header value with a line
    /// break in it).
    BadRequest(String),
    /// The connection broke before the response headers.
    Http(hyper::Error),
}

impl std::fmt::Debug for PlainHttp {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PlainHttp")
            .field("addr", &self.addr)
            .finish()
    }
}

/// Whether an environment variable would send plain HTTP through a proxy (reqwest honours them,
/// with `NO_PROXY`; such endpoints are left to it).
fn proxy_configured() -> bool {
    ["http_proxy", "HTTP_PROXY", "all_proxy", "ALL_PROXY"]
        .iter()
        .any(|k| std::env::var_os(k).is_some_and(|v| !v.is_empty()))
}

impl PlainHttp {
    /// The client for `base` when it is a plain `http://` URL without credentials and no proxy
    /// is configured; `None` leaves it to reqwest.
    pub(crate) fn for_base(
        base: &str,
        max_requests: usize,
        connect_timeout: Duration,
    ) -> Option<PlainHttp> {
        if proxy_configured() {
            return None;
        }
        Self::parse(base, max_requests, connect_timeout)
    }

    fn parse(base: &str, max_requests: usize, connect_timeout: Duration) -> Option<PlainHttp> {
        let uri: http::Uri = base.parse().ok()?;
        if uri.scheme() != Some(&http::uri::Scheme::HTTP) {
            return None;
        }
        let auth = uri.authority()?;
        if auth.as_str().contains('@') || auth.host().is_empty() {
            return None;
        }
        let port = auth.port_u16().unwrap_or(80);
        let host = auth.host();
        Some(PlainHttp {
            addr: format!("{host}:{port}"),
            host: HeaderValue::from_str(auth.as_str()).ok()?,
            origin_len: "http://".len() + auth.as_str().len(),
            inner: Arc::new(Inner {
                idle: Mutex::new(Vec::new()),
                slots: Arc::new(Semaphore::new(max_requests.max(1))),
            }),
            connect_timeout,
        })
    }

    /// Posts `body` to `url` (a URL under this origin's base) and returns the response, whose
    /// body gives the connection back when it has been read to its end.
    pub(crate) async fn post(
        &self,
        url: &str,
        body: Vec<u8>,
        headers: &[(&'static str, String)],
    ) -> Result<http::Response<Body>, SendError> {
        let mut req = http::Request::post(self.request_uri(url).map_err(SendError::BadRequest)?)
            .header(header::HOST, self.host.clone())
            .header(
                header::CONTENT_TYPE,
                HeaderValue::from_static("application/json"),
            )
            .header(header::ACCEPT, HeaderValue::from_static("*/*"))
            .header(
                header::USER_AGENT,
                HeaderValue::from_static(concat!("prism/", env!("CARGO_PKG_VERSION"))),
            );
        for (k, v) in headers {
            req = req.header(*k, v.as_str());
        }
        let mut req = req
            .body(Full::new(Bytes::from(body)))
            .map_err(|e| SendError::BadRequest(e.to_string()))?;
        let slot = self
            .inner
            .slots
            .clone()
            .acquire_owned()
            .await
            .expect("the semaphore is never closed");
        loop {
            let (mut send, reused) = match self.take_idle() {
                Some(s) => (s, true),
                None => (self.connect().await?, false),
            };
            if send.ready().await.is_err() {
                // Closed while idle (the server's keep-alive ran out): try the next.
                if reused {
                    continue;
                }
                return Err(SendError::Connect("the connection closed at once".into()));
            }
            match send.try_send_request(req).await {
                Ok(resp) => {
                    let (parts, incoming) = resp.into_parts();
                    let mut body = Body {
                        incoming,
                        lease: Some(Lease {
                            send,
                            inner: self.inner.clone(),
                            _slot: slot,
                        }),
                    };
                    // A body with nothing in it (an error status, say) is done already.
                    body.give_back_if_ended();
                    return Ok(http::Response::from_parts(parts, body));
                }
                Err(mut e) => match e.take_message() {
                    // Never sent: an idle connection the server had closed. Try another.
                    Some(r) if reused => req = r,
                    _ => return Err(SendError::Http(e.into_error())),
                },
            }
        }
    }

    /// The path and query of `url` (a URL under this origin) as sent. What `http::Uri` takes
    /// as it is (the common case) is not parsed again; anything else (a space in a model id,
    /// say) is percent-encoded as reqwest would, by the URL standard.
    fn request_uri(&self, url: &str) -> Result<http::Uri, String> {
        let path = url
            .get(self.origin_len..)
            .filter(|p| p.starts_with('/'))
            .ok_or_else(|| format!("{url} is not under http://{}", self.addr))?;
        if let Ok(u) = path.parse() {
            return Ok(u);
        }
        let parsed = reqwest::Url::parse(url).map_err(|e| format!("{url}: {e}"))?;
        let mut encoded = parsed.path().to_string();
        if let Some(q) = parsed.query() {
            encoded.push('?');
            encoded.push_str(q);
        }
        encoded.parse().map_err(|e| format!("{url}: {e}"))
    }

    fn take_idle(&self) -> Option<Sender> {
        let mut idle = self.inner.idle.lock().unwrap_or_else(|e| e.into_inner());
        while let Some(s) = idle.pop() {
            if !s.is_closed() {
                return Some(s);
            }
        }
        None
    }

    async fn connect(&self) -> Result<Sender, SendError> {
        let tcp = tokio::time::timeout(
            self.connect_timeout,
            tokio::net::TcpStream::connect(&self.addr),
        )
        .await
        .map_err(|_| SendError::ConnectTimeout)?
        .map_err(|e| SendError::Connect(e.to_string()))?;
        // Requests are small and written at once: no reason to wait for an ACK.
        let _ = tcp.set_nodelay(true);
        let (send, conn) = hyper::client::conn::http1::handshake::<_, Full<Bytes>>(
            hyper_util::rt::TokioIo::new(tcp),
        )
        .await
        .map_err(SendError::Http)?;
        // The connection's own task: it ends when the server closes or every sender is gone.
        tokio::spawn(async move {
            let _ = conn.await;
        });
        Ok(send)
    }
}

/// A connection lent to one request, with the request's slot.
struct Lease {
    send: Sender,
    inner: Arc<Inner>,
    _slot: OwnedSemaphorePermit,
}

/// A response body. Read to its end, it puts its connection back for the next request before
/// its slot is released; dropped early, the connection is closed (the rest of an answer nobody
/// reads must not be read by the next request).
pub(crate) struct Body {
    incoming: Incoming,
    lease: Option<Lease>,
}

impl Body {
    fn give_back_if_ended(&mut self) {
        if self.incoming.is_end_stream()
            && let Some(lease) = self.lease.take()
        {
            let Lease { send, inner, _slot } = lease;
            inner
                .idle
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .push(send);
            // `_slot` is released here, after the connection is back.
        }
    }
}

impl Stream for Body {
    type Item = Result<Bytes, hyper::Error>;

    fn poll_next(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        loop {
            let frame = match Pin::new(&mut self.incoming).poll_frame(cx) {
                Poll::Pending => return Poll::Pending,
                Poll::Ready(f) => f,
            };
            match frame {
                Some(Ok(f)) => {
                    // Given back as soon as the last bytes are in, whether or not the reader
                    // asks again.
                    self.give_back_if_ended();
                    if let Ok(data) = f.into_data() {
                        return Poll::Ready(Some(Ok(data)));
                    }
                    // Trailers: nothing for us.
                }
                Some(Err(e)) => {
                    self.lease = None;
                    return Poll::Ready(Some(Err(e)));
                }
                None => {
                    self.give_back_if_ended();
                    return Poll::Ready(None);
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_plain_http_without_credentials_is_taken() {
        let t = Duration::from_secs(1);
        let p = PlainHttp::parse("http://127.0.0.1:8080/v1", 4, t).unwrap();
        assert_eq!(p.addr, "127.0.0.1:8080");
        assert_eq!(p.host, "127.0.0.1:8080");
        assert_eq!(
            &"http://127.0.0.1:8080/v1/chat/completions"[p.origin_len..],
            "/v1/chat/completions"
        );
        let p = PlainHttp::parse("http://localhost", 4, t).unwrap();
        assert_eq!(p.addr, "localhost:80");
        let p = PlainHttp::parse("http://[::1]:9000/v1", 4, t).unwrap();
        assert_eq!(p.addr, "[::1]:9000");
        assert_eq!(
            p.request_uri("http://[::1]:9000/v1/models/my model:go?alt=sse")
                .unwrap(),
            "/v1/models/my%20model:go?alt=sse"
        );
        assert!(p.request_uri("http://elsewhere:9000/v1").is_err());
        for other in [
            "https://api.openai.com/v1",
            "http://user:pw@127.0.0.1:8080/v1",
            "not a url",
            "ftp://127.0.0.1/v1",
        ] {
            assert!(PlainHttp::parse(other, 4, t).is_none(), "{other}");
        }
    }
}
