//! Single requests outside a run's job plan (the LLM judges): the same per-model limiter, rate
//! spacing, retries with backoff and response cache as run jobs, without the job bookkeeping.

use std::sync::Arc;
use std::time::Instant;

use tokio_util::sync::CancellationToken;

use super::{BackendFactory, Limits, Outcome, RetryPolicy, read_stream, request_hashes};
use crate::provider::{AdaptiveLimiter, ChatRequest, ModelConfig, RateLimiter};
use crate::store::{Cached, StoreHandle};

/// A finished request.
#[derive(Debug, Clone, PartialEq)]
pub struct Reply {
    pub text: String,
    /// Requests sent (0 when the cache answered).
    pub attempts: u32,
    pub cached: bool,
}

/// What a streaming request tells as it goes.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Delta<'a> {
    /// More text.
    Text(&'a str),
    /// The attempt failed and attempt `attempt` follows: the text so far is void.
    Retry { attempt: u32, reason: &'a str },
}

/// Sends requests to one model, sharing its limits across every concurrent caller.
pub struct Caller {
    pub cfg: ModelConfig,
    backend: Arc<dyn super::Backend>,
    limiter: Arc<AdaptiveLimiter>,
    rate: Option<RateLimiter>,
    retry: RetryPolicy,
    store: Option<StoreHandle>,
    use_cache: bool,
    cancel: CancellationToken,
    /// The judge's API key, only to take it out of what its server sends back.
    key: Option<crate::provider::Secret>,
}

impl Caller {
    pub fn new(
        cfg: &ModelConfig,
        factory: &BackendFactory,
        store: Option<StoreHandle>,
        use_cache: bool,
        cancel: CancellationToken,
    ) -> anyhow::Result<Caller> {
        let backend = factory(cfg).map_err(|e| anyhow::anyhow!("{e}"))?;
        Ok(Caller {
            cfg: cfg.clone(),
            backend,
            limiter: AdaptiveLimiter::new(cfg.max_concurrency),
            rate: cfg.requests_per_minute.map(RateLimiter::per_minute),
            retry: RetryPolicy::default(),
            store,
            use_cache,
            cancel,
            key: cfg.api_key().ok().flatten(),
        })
    }

    /// Sends `req` (retrying what can be retried) and returns the whole reply. `variant`
    /// separates cache entries of repeated asks of one request (a judge asked again after an
    /// unreadable reply must not get the same cached reply).
    pub async fn complete(&self, req: &ChatRequest, variant: u32) -> Result<Reply, String> {
        self.complete_streaming(req, variant, |_| {}).await
    }

    /// [`Caller::complete`], telling `on_delta` each piece of text as it arrives (a cached reply
    /// arrives as one piece) and when a failed attempt is retried (its partial text is void).
    /// Pieces are redacted like the reply.
    pub async fn complete_streaming(
        &self,
        req: &ChatRequest,
        variant: u32,
        mut on_delta: impl FnMut(Delta<'_>),
    ) -> Result<Reply, String> {
        let (_, key) = request_hashes(&self.backend.cache_identity(), req, variant);
        if self.use_cache
            && let Some(store) = &self.store
            && let Some(hit) = store.cache_get(key.clone()).await
        {
            on_delta(Delta::Text(&hit.text));
            return Ok(Reply {
                text: hit.text,
                attempts: 0,
                cached: true,
            });
        }
        let max_attempts = self.cfg.max_retries + 1;
        for attempt in 1..=max_attempts {
            let permit = tokio::select! {
                p = self.limiter.acquire() => p,
                _ = self.cancel.cancelled() => return Err("cancelled".into()),
            };
            if let Some(rate) = &self.rate {
                tokio::select! {
                    _ = rate.wait() => {},
                    _ = self.cancel.cancelled() => return Err("cancelled".into()),
                }
            }
            let t0 = Instant::now();
            let limits = Limits::of(&self.cfg);
            let outcome = read_stream(
                &*self.backend,
                req,
                &self.cancel,
                t0,
                limits,
                |d| {
                    on_delta(Delta::Text(&crate::provider::config::redact(
                        self.key.as_ref(),
                        d,
                    )))
                },
                |_| {},
            )
            .await;
            drop(permit);
            match outcome {
                Outcome::Cancelled => return Err("cancelled".into()),
                Outcome::Ok {
                    text,
                    finish,
                    usage,
                    cut,
                    ..
                } => {
                    self.limiter.on_success();
                    let text =
                        crate::provider::config::redact(self.key.as_ref(), &text).into_owned();
                    if let (Some(store), false) = (&self.store, cut) {
                        let _ = store
                            .cache_put(
                                key,
                                Cached {
                                    text: text.clone(),
                                    finish_reason: finish,
                                    prompt_tokens: usage.prompt_tokens,
                                    completion_tokens: usage.completion_tokens,
                                    latency_ms: Some(t0.elapsed().as_millis() as u64),
                                    logprobs: None,
                                },
                            )
                            .await;
                    }
                    return Ok(Reply {
                        text,
                        attempts: attempt,
                        cached: false,
                    });
                }
                Outcome::Err(e) => {
                    if e.is_rate_limit() {
                        self.limiter.on_rate_limited();
                    }
                    if e.retryable() && attempt < max_attempts {
                        on_delta(Delta::Retry {
                            attempt: attempt + 1,
                            reason: &crate::provider::config::redact(
                                self.key.as_ref(),
                                &e.to_string(),
                            ),
                        });
                        let delay = self.retry.delay(attempt, e.retry_after());
                        tokio::select! {
                            _ = tokio::time::sleep(delay) => {},
                            _ = self.cancel.cancelled() => return Err("cancelled".into()),
                        }
                        continue;
                    }
                    return Err(
                        crate::provider::config::redact(self.key.as_ref(), &e.to_string())
                            .into_owned(),
                    );
                }
            }
        }
        Err("no attempt made".into())
    }
}
