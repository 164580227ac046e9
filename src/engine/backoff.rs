//! Exponential backoff with jitter, honouring the server's `Retry-After`.

use std::time::Duration;

#[derive(Debug, Clone, Copy, PartialEq)]
pub struct RetryPolicy {
    /// The first delay (before jitter).
    pub base: Duration,
    /// No delay is longer than this (a server's Retry-After included).
    pub cap: Duration,
}

impl Default for RetryPolicy {
    fn default() -> Self {
        RetryPolicy {
            base: Duration::from_millis(500),
            cap: Duration::from_secs(60),
        }
    }
}

impl RetryPolicy {
    /// The wait before attempt `attempt + 1`: the server's Retry-After when given, else
    /// `base * 2^(attempt-1)` with "equal jitter" (half fixed, half random) so that many jobs hit
    /// by the same outage do not retry in lockstep.
    pub fn delay(&self, attempt: u32, retry_after: Option<Duration>) -> Duration {
        if let Some(ra) = retry_after {
            return ra.min(self.cap);
        }
        let exp = self
            .base
            .saturating_mul(1u32 << attempt.saturating_sub(1).min(16))
            .min(self.cap);
        let half = exp / 2;
        half + half.mul_f64(rand::random::<f64>())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn grows_exponentially_within_jitter_and_cap() {
        let p = RetryPolicy {
            base: Duration::from_millis(100),
            cap: Duration::from_secs(1),
        };
        for attempt in 1..=6 {
            let full = (100u64 << (attempt - 1)).min(1000);
            let d = p.delay(attempt, None).as_millis() as u64;
            assert!(
                d >= full / 2 && d <= full,
                "attempt {attempt}: {d} not in [{}, {full}]",
                full / 2
            );
        }
    }

    #[test]
    fn retry_after_wins_but_is_capped() {
        let p = RetryPolicy::default();
        assert_eq!(
            p.delay(1, Some(Duration::from_secs(2))),
            Duration::from_secs(2)
        );
        assert_eq!(p.delay(1, Some(Duration::from_secs(3600))), p.cap);
    }
}
