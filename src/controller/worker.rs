//! The worker loop of the queue-driven controllers (Services, Gateways, GatewayClasses): take a
//! key, reconcile it, report the pass, and queue it again — after the resync period at low
//! priority (users' changes go first), after its backoff on a failure (doubling per failure, so
//! one failing object never holds up the others).

use std::fmt::Display;
use std::future::Future;
use std::hash::Hash;
use std::time::{Duration, Instant};

use tracing::Instrument;

use super::ingress::queue::{Priority, Queue};
use super::metrics::{Outcome, Reconciles};
use super::Backoff;

/// What one controller's workers share.
pub struct Worker<'a, K> {
    pub queue: &'a Queue<K>,
    pub rec: &'a Reconciles,
    pub backoff: &'a Backoff,
    /// A pass asking to run again after exactly this long is a resync (low priority).
    pub sync_period: Option<Duration>,
    /// The controller's name in the log lines of its passes (upstream's `controller` key).
    pub controller: &'a str,
}

impl<K: Clone + Eq + Hash + Display> Worker<'_, K> {
    /// Reconciles keys with `pass` until the future is dropped; `Ok(Some(d))` asks for another
    /// pass after `d`.
    pub async fn run<F, Fut, E>(&self, mut pass: F)
    where
        F: FnMut(K) -> Fut,
        Fut: Future<Output = Result<Option<Duration>, E>>,
        E: Display,
    {
        loop {
            let (key, waited) = self.queue.next_timed().await;
            let working = self.rec.working(waited);
            let start = Instant::now();
            let id = key.to_string();
            let span = crate::telemetry::reconcile_span(self.controller, &id);
            let outcome = match pass(key.clone()).instrument(span.clone()).await {
                Ok(next) => {
                    self.backoff.succeeded(&id);
                    if let Some(after) = next {
                        let priority = if Some(after) == self.sync_period {
                            Priority::Low
                        } else {
                            Priority::Normal
                        };
                        self.queue.add_after_with(key.clone(), after, priority);
                    }
                    Outcome::Success
                }
                Err(e) => {
                    let after = self.backoff.failed(&id);
                    let error = e.to_string();
                    span.in_scope(
                        || tracing::error!(%error, retry_in = ?after, "Reconciler error"),
                    );
                    self.queue.add_after(key.clone(), after);
                    self.rec.retried();
                    Outcome::Error
                }
            };
            self.rec.reconciled(outcome, start.elapsed().as_secs_f64());
            drop(working);
            self.queue.done(&key);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::sync::Arc;

    #[tokio::test]
    async fn a_failing_key_backs_off_and_a_resync_waits_at_low_priority() {
        let queue: Queue<String> = Queue::default();
        let rec = crate::controller::metrics::ControllerMetrics::default().controller("test");
        let backoff = Backoff::new(Duration::from_millis(5), Duration::from_secs(1));
        let w = Worker {
            queue: &queue,
            rec: &rec,
            backoff: &backoff,
            sync_period: Some(Duration::from_secs(3600)),
            controller: "test",
        };
        let bad = Arc::new(AtomicUsize::new(0));
        let good = Arc::new(AtomicUsize::new(0));
        queue.add("bad".to_string());
        queue.add("good".to_string());
        let (b, g) = (bad.clone(), good.clone());
        let run = w.run(|key: String| {
            let (b, g) = (b.clone(), g.clone());
            async move {
                if key == "bad" {
                    b.fetch_add(1, Ordering::SeqCst);
                    Err("boom")
                } else {
                    g.fetch_add(1, Ordering::SeqCst);
                    Ok(Some(Duration::from_secs(3600)))
                }
            }
        });
        let _ = tokio::time::timeout(Duration::from_millis(300), async {
            tokio::join!(run, queue.run_timers())
        })
        .await;
        assert_eq!(
            good.load(Ordering::SeqCst),
            1,
            "resynced only after the sync period"
        );
        let tries = bad.load(Ordering::SeqCst);
        assert!(tries >= 3, "the failing key is retried: {tries}");
        assert!(
            tries < 60,
            "with a growing backoff, not in a hot loop: {tries}"
        );
    }
}
