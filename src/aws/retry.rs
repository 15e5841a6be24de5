//! Retry policy: full-jitter exponential backoff on throttling, 5xx and transport errors, up to
//! `--aws-max-retries` retries (the SDK's own retries are switched off so ours are the only ones).

use std::time::Duration;

use rand::Rng;

/// When and how long to wait before retrying a failed request.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RetryPolicy {
    /// Retries after the first attempt (`--aws-max-retries`, default 10).
    pub max_retries: u32,
    /// Upper bound of the first backoff; doubles per retry.
    pub base_delay: Duration,
    /// Cap of any single backoff.
    pub max_delay: Duration,
}

impl Default for RetryPolicy {
    fn default() -> Self {
        // The AWS SDKs' standard mode: 1 s base with full jitter, capped at 20 s.
        Self {
            max_retries: 10,
            base_delay: Duration::from_secs(1),
            max_delay: Duration::from_secs(20),
        }
    }
}

impl RetryPolicy {
    pub fn with_max_retries(max_retries: u32) -> Self {
        Self {
            max_retries,
            ..Self::default()
        }
    }

    /// The largest backoff before retry number `retry` (0-based).
    pub fn ceiling(&self, retry: u32) -> Duration {
        let factor = 1u32.checked_shl(retry.min(31)).unwrap_or(u32::MAX);
        self.base_delay.saturating_mul(factor).min(self.max_delay)
    }

    /// A random backoff in `[0, ceiling(retry)]` (full jitter spreads retrying clients apart).
    pub fn backoff(&self, retry: u32) -> Duration {
        let ceil = self.ceiling(retry);
        if ceil.is_zero() {
            return ceil;
        }
        let f: f64 = rand::rng().random_range(0.0..=1.0);
        ceil.mul_f64(f)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn backoff_grows_and_is_capped() {
        let p = RetryPolicy::default();
        assert_eq!(p.ceiling(0), Duration::from_secs(1));
        assert_eq!(p.ceiling(3), Duration::from_secs(8));
        assert_eq!(p.ceiling(10), Duration::from_secs(20));
        assert_eq!(p.ceiling(100), Duration::from_secs(20));
        for r in 0..12 {
            assert!(p.backoff(r) <= p.ceiling(r));
        }
        // Jitter: 50 draws are not all the same value.
        let draws: std::collections::BTreeSet<_> = (0..50).map(|_| p.backoff(4)).collect();
        assert!(draws.len() > 1);
    }
}
