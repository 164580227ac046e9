//! Concurrency and rate limits per model.
//!
//! [`AdaptiveLimiter`] is an AIMD limit on requests in flight: it halves on a 429 (at most once a
//! second, so one burst of 429s is one back-off) and grows back by one per "window" of successes,
//! never above the configured maximum. [`RateLimiter`] spaces request starts to a requests-per-
//! minute budget.

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use tokio::sync::Notify;

#[derive(Debug)]
struct State {
    limit: f64,
    in_flight: usize,
    last_decrease: Option<Instant>,
}

#[derive(Debug)]
pub struct AdaptiveLimiter {
    state: Mutex<State>,
    notify: Notify,
    max: usize,
}

/// A slot in flight; dropping it frees the slot.
#[derive(Debug)]
pub struct LimiterPermit {
    limiter: Arc<AdaptiveLimiter>,
}

impl Drop for LimiterPermit {
    fn drop(&mut self) {
        {
            let mut s = self.limiter.lock();
            s.in_flight = s.in_flight.saturating_sub(1);
        }
        self.limiter.notify.notify_waiters();
    }
}

impl AdaptiveLimiter {
    pub fn new(max: usize) -> Arc<AdaptiveLimiter> {
        let max = max.max(1);
        Arc::new(AdaptiveLimiter {
            state: Mutex::new(State {
                limit: max as f64,
                in_flight: 0,
                last_decrease: None,
            }),
            notify: Notify::new(),
            max,
        })
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Waits for a slot.
    pub async fn acquire(self: &Arc<Self>) -> LimiterPermit {
        loop {
            let notified = self.notify.notified();
            tokio::pin!(notified);
            // Register before checking, so a release between the check and the wait is not lost.
            notified.as_mut().enable();
            {
                let mut s = self.lock();
                if s.in_flight < (s.limit.floor() as usize).max(1) {
                    s.in_flight += 1;
                    return LimiterPermit {
                        limiter: self.clone(),
                    };
                }
            }
            notified.await;
        }
    }

    /// The current limit (whole requests).
    pub fn limit(&self) -> usize {
        (self.lock().limit.floor() as usize).max(1)
    }

    pub fn in_flight(&self) -> usize {
        self.lock().in_flight
    }

    /// A request succeeded: grow by about one slot per limit's worth of successes.
    pub fn on_success(&self) {
        let grew = {
            let mut s = self.lock();
            let before = s.limit.floor();
            s.limit = (s.limit + 1.0 / s.limit).min(self.max as f64);
            s.limit.floor() > before
        };
        if grew {
            self.notify.notify_waiters();
        }
    }

    /// The server said 429: halve, at most once a second.
    pub fn on_rate_limited(&self) {
        let mut s = self.lock();
        let now = Instant::now();
        if s.last_decrease
            .is_some_and(|t| now.duration_since(t) < Duration::from_secs(1))
        {
            return;
        }
        s.last_decrease = Some(now);
        s.limit = (s.limit / 2.0).max(1.0);
    }
}

/// Spaces request starts evenly to stay within a requests-per-minute budget.
#[derive(Debug)]
pub struct RateLimiter {
    interval: Duration,
    next: Mutex<Option<Instant>>,
}

impl RateLimiter {
    pub fn per_minute(rpm: u32) -> RateLimiter {
        RateLimiter {
            interval: Duration::from_secs_f64(60.0 / rpm.max(1) as f64),
            next: Mutex::new(None),
        }
    }

    /// Waits for this request's turn.
    pub async fn wait(&self) {
        let at = {
            let mut next = self.next.lock().unwrap_or_else(|e| e.into_inner());
            let now = Instant::now();
            let at = next.map_or(now, |n| n.max(now));
            *next = Some(at + self.interval);
            at
        };
        tokio::time::sleep_until(at.into()).await;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn halves_on_429_and_recovers_on_success() {
        let l = AdaptiveLimiter::new(8);
        assert_eq!(l.limit(), 8);
        l.on_rate_limited();
        assert_eq!(l.limit(), 4);
        // A second 429 in the same burst does not halve again.
        l.on_rate_limited();
        assert_eq!(l.limit(), 4);
        for _ in 0..100 {
            l.on_success();
        }
        assert_eq!(l.limit(), 8, "recovers to the maximum, not past it");
    }

    #[tokio::test]
    async fn never_lets_more_than_the_limit_in() {
        let l = AdaptiveLimiter::new(2);
        let a = l.acquire().await;
        let _b = l.acquire().await;
        let l2 = l.clone();
        let waiter = tokio::spawn(async move {
            let _c = l2.acquire().await;
        });
        tokio::task::yield_now().await;
        assert!(!waiter.is_finished());
        assert_eq!(l.in_flight(), 2);
        drop(a);
        tokio::time::timeout(Duration::from_secs(2), waiter)
            .await
            .expect("released slot wakes the waiter")
            .unwrap();
    }
}
