//! The wrapper every AWS request goes through, in the SDK implementation and in the fake alike:
//! one throttle token per attempt, retries with jittered backoff, metrics per finished call, and
//! the leader [`Fence`] checked before every write attempt.

use std::future::Future;
use std::sync::Arc;

use tokio::time::Instant;

use super::error::{AwsError, Result};
use super::fence::Fence;
use super::metrics::AwsMetrics;
use super::retry::RetryPolicy;
use super::throttle::{effective_rules, ThrottleRule, Throttler};
use super::types::Service;

/// Shared limiter, retry policy and metrics of one AWS client set. Cheap to clone.
#[derive(Debug, Clone)]
pub struct Caller {
    throttler: Arc<Throttler>,
    retry: RetryPolicy,
    metrics: Option<AwsMetrics>,
    fence: Fence,
}

impl Default for Caller {
    /// No limits, no retries, no metrics: the raw behaviour, for unit tests.
    fn default() -> Self {
        Self {
            throttler: Arc::new(Throttler::unlimited()),
            retry: RetryPolicy {
                max_retries: 0,
                ..RetryPolicy::default()
            },
            metrics: None,
            fence: Fence::default(),
        }
    }
}

impl Caller {
    pub fn new(throttler: Throttler, retry: RetryPolicy, metrics: Option<AwsMetrics>) -> Self {
        Self {
            throttler: Arc::new(throttler),
            retry,
            metrics,
            fence: Fence::default(),
        }
    }

    /// Writes go out only while `fence` is open (the leader's fence; reads are never fenced).
    pub fn with_fence(mut self, fence: Fence) -> Self {
        self.fence = fence;
        self
    }

    /// Built from the flag values: `--aws-api-throttle` (over upstream's defaults) and
    /// `--aws-max-retries`.
    pub fn from_flags(
        api_throttle: &[ThrottleRule],
        max_retries: u32,
        metrics: Option<AwsMetrics>,
    ) -> Self {
        Self::new(
            Throttler::new(&effective_rules(api_throttle)),
            RetryPolicy::with_max_retries(max_retries),
            metrics,
        )
    }

    pub fn retry_policy(&self) -> RetryPolicy {
        self.retry
    }

    /// Runs one AWS request: `attempt` is called once per try.
    pub async fn call<T, F, Fut>(
        &self,
        service: Service,
        operation: &'static str,
        mut attempt: F,
    ) -> Result<T>
    where
        F: FnMut() -> Fut,
        Fut: Future<Output = Result<T>>,
    {
        let start = Instant::now();
        let mut retries = 0u32;
        loop {
            self.throttler.acquire(service, operation).await;
            // Checked per attempt, after any throttling wait: a write (or its retry) must not
            // go out once the lease is lost.
            let finish_by = self.fence.check(operation)?;
            let sent = Instant::now();
            let result = match finish_by {
                None => attempt().await,
                Some(at) => tokio::time::timeout_at(at.into(), attempt())
                    .await
                    .unwrap_or_else(|_| {
                        Err(AwsError::NotLeader(format!(
                            "{operation} abandoned: the leader lease may have passed to another replica"
                        )))
                    }),
            };
            if let Some(m) = &self.metrics {
                let r = result.as_ref().map(|_| ());
                m.observe_request(service, operation, r, sent.elapsed().as_secs_f64());
            }
            match result {
                Err(e) if e.is_retryable() && retries < self.retry.max_retries => {
                    let wait = self.retry.backoff(retries);
                    tracing::debug!(service = service.id(), operation, error = %e, retry = retries + 1, ?wait, "retrying AWS call");
                    tokio::time::sleep(wait).await;
                    retries += 1;
                }
                other => {
                    if let Some(m) = &self.metrics {
                        let r: std::result::Result<(), &AwsError> = other.as_ref().map(|_| ());
                        m.observe(
                            service,
                            operation,
                            r,
                            start.elapsed().as_secs_f64(),
                            retries,
                        );
                    }
                    return other;
                }
            }
        }
    }
}
