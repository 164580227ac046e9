//! The one streaming chat interface every provider speaks.

use std::time::Duration;

use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Role {
    System,
    User,
    Assistant,
}

impl Role {
    pub fn as_str(self) -> &'static str {
        match self {
            Role::System => "system",
            Role::User => "user",
            Role::Assistant => "assistant",
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct Message {
    pub role: Role,
    pub content: String,
}

impl Message {
    pub fn user(content: impl Into<String>) -> Self {
        Message {
            role: Role::User,
            content: content.into(),
        }
    }
    pub fn assistant(content: impl Into<String>) -> Self {
        Message {
            role: Role::Assistant,
            content: content.into(),
        }
    }
}

/// Sampling parameters. `None` leaves the server's default.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Params {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub temperature: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub top_p: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_tokens: Option<u32>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub stop: Vec<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub seed: Option<u64>,
    /// Ask for each generated token's log-probability and this many most likely alternatives
    /// (0 to 20) where the provider can give them (OpenAI-compatible servers, Gemini);
    /// `None` asks for none.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub logprobs: Option<u8>,
}

impl Params {
    /// `self` with every field that `over` sets taken from `over`.
    pub fn overlay(&self, over: &Params) -> Params {
        Params {
            temperature: over.temperature.or(self.temperature),
            top_p: over.top_p.or(self.top_p),
            max_tokens: over.max_tokens.or(self.max_tokens),
            stop: if over.stop.is_empty() {
                self.stop.clone()
            } else {
                over.stop.clone()
            },
            seed: over.seed.or(self.seed),
            logprobs: over.logprobs.or(self.logprobs),
        }
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ChatRequest {
    pub messages: Vec<Message>,
    pub params: Params,
}

#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Usage {
    pub prompt_tokens: Option<u32>,
    pub completion_tokens: Option<u32>,
}

/// One generated token with its natural-log probability, and the most likely alternatives at
/// its position (best first; the chosen token may be among them).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TokenLogprob {
    pub token: String,
    pub logprob: f32,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub top: Vec<(String, f32)>,
}

/// What a provider's stream yields.
#[derive(Debug, Clone, PartialEq)]
pub enum StreamEvent {
    /// More text of the answer.
    Delta(String),
    /// The log-probabilities of the tokens that came with the text so far (when asked for and
    /// the provider gives them), in order.
    Tokens(Vec<TokenLogprob>),
    /// Token counts, when the server reports them (may come before or with the finish).
    Usage(Usage),
    /// The answer is complete.
    Finish { reason: Option<String> },
}

/// Which timeout fired.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TimeoutKind {
    Connect,
    FirstByte,
    Idle,
    /// The whole request (`request_timeout_secs`).
    Total,
}

/// Why a request failed. `retryable` decides whether the engine tries again.
#[derive(Debug, Clone, thiserror::Error)]
pub enum ProviderError {
    #[error("HTTP {status}: {message}")]
    Http {
        status: u16,
        message: String,
        /// From `Retry-After` or `retry-after-ms`.
        retry_after: Option<Duration>,
    },
    #[error("cannot connect to {url}: {message}")]
    Connect { url: String, message: String },
    #[error("{} timeout after {:.1}s", match .kind { TimeoutKind::Connect => "connect", TimeoutKind::FirstByte => "first-byte", TimeoutKind::Idle => "idle-stream", TimeoutKind::Total => "request" }, .after.as_secs_f64())]
    Timeout { kind: TimeoutKind, after: Duration },
    #[error("stream broken: {0}")]
    Stream(String),
    #[error("bad response: {0}")]
    Protocol(String),
    #[error("{0}")]
    Config(String),
    #[error("cancelled")]
    Cancelled,
    /// The local model's worker process died (its reason in words); the next request starts a
    /// fresh one, so a retry can succeed.
    #[error("local model crashed: {0}")]
    Crashed(String),
}

impl ProviderError {
    pub fn retryable(&self) -> bool {
        match self {
            ProviderError::Http { status, .. } => {
                matches!(status, 408 | 409 | 425 | 429 | 500 | 502 | 503 | 504 | 529)
            }
            ProviderError::Connect { .. }
            | ProviderError::Timeout { .. }
            | ProviderError::Stream(_)
            | ProviderError::Crashed(_) => true,
            ProviderError::Protocol(_) | ProviderError::Config(_) | ProviderError::Cancelled => {
                false
            }
        }
    }

    /// Rate limited: the adaptive limiter backs off.
    pub fn is_rate_limit(&self) -> bool {
        matches!(self, ProviderError::Http { status: 429, .. })
    }

    pub fn retry_after(&self) -> Option<Duration> {
        match self {
            ProviderError::Http { retry_after, .. } => *retry_after,
            _ => None,
        }
    }

    /// A short label for status lines ("429", "timeout", "connect").
    pub fn short(&self) -> String {
        match self {
            ProviderError::Http { status, .. } => format!("HTTP {status}"),
            ProviderError::Connect { .. } => "connect failed".into(),
            ProviderError::Timeout { kind, .. } => match kind {
                TimeoutKind::Connect => "connect timeout".into(),
                TimeoutKind::FirstByte => "first-byte timeout".into(),
                TimeoutKind::Idle => "idle timeout".into(),
                TimeoutKind::Total => "request timeout".into(),
            },
            ProviderError::Stream(_) => "stream broken".into(),
            ProviderError::Protocol(_) => "bad response".into(),
            ProviderError::Config(_) => "config".into(),
            ProviderError::Cancelled => "cancelled".into(),
            ProviderError::Crashed(_) => "local model crashed".into(),
        }
    }
}

/// The text of a request's last message (what a prompt asks; judges' replies are read against
/// it).
pub fn text_of(req: &ChatRequest) -> &str {
    req.messages.last().map_or("", |m| m.content.as_str())
}
