//! Asking a judge, as a service of the engine: a request sent through a [`Caller`] (the judge
//! model's limits, retries and response cache), asked again while the reply cannot be read, up
//! to a number of attempts. Scoring uses it for PRISM's judges; the contradiction checks and
//! self-detection use it for theirs. Each kind of judge brings its own reader.

use super::Caller;
use crate::provider::ChatRequest;

/// What asking came to.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Asked<T> {
    /// What the first readable reply says; `Ok(None)` when no reply could be read in every
    /// attempt; `Err` when the judge could not be reached (with why).
    pub outcome: Result<Option<T>, String>,
    /// The last reply, when there was one (kept with the verdict, for people to check).
    pub reply: Option<String>,
    /// Requests made (a cached reply counts as an attempt answered without a request).
    pub attempts: u32,
    /// The reply read (or, when none could be read, every reply) came from the response cache.
    pub cached: bool,
}

/// Sends `req` to the judge behind `caller`, up to `attempts` times until `read` understands a
/// reply. The judge model's own parameters (max_tokens, stop, ...) apply under the request's
/// (its temperature wins). Each attempt is cached apart, so asking again after an unreadable
/// reply is never answered by the cache with the same reply.
pub(crate) async fn ask<T>(
    caller: &Caller,
    req: &ChatRequest,
    attempts: u32,
    read: impl Fn(&str) -> Option<T>,
) -> Asked<T> {
    ask_again(caller, req, attempts, 0, read).await
}

/// [`ask`], as a later asking of the same question: its attempts are cached from `first`
/// on (a repeat of judge scoring asks again rather than reading the first asking's replies).
pub(crate) async fn ask_again<T>(
    caller: &Caller,
    req: &ChatRequest,
    attempts: u32,
    first: u32,
    read: impl Fn(&str) -> Option<T>,
) -> Asked<T> {
    let mut req = req.clone();
    req.params = caller.cfg.params.overlay(&req.params);
    let mut last = None;
    let mut all_cached = true;
    for attempt in 0..attempts.max(1) {
        match caller.complete(&req, first + attempt).await {
            Ok(reply) => {
                all_cached &= reply.cached;
                if let Some(v) = read(&reply.text) {
                    return Asked {
                        outcome: Ok(Some(v)),
                        cached: reply.cached,
                        reply: Some(reply.text),
                        attempts: attempt + 1,
                    };
                }
                last = Some(reply.text);
            }
            Err(e) => {
                return Asked {
                    outcome: Err(e),
                    reply: last,
                    attempts: attempt,
                    cached: false,
                };
            }
        }
    }
    Asked {
        outcome: Ok(None),
        reply: last,
        attempts: attempts.max(1),
        cached: all_cached,
    }
}
