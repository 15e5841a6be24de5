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
            self.rec.talked(&id);
            // A pass that panics fails like any other (retried with backoff); the worker lives.
            let passed = self
                .rec
                .recovering(Box::pin(pass(key.clone())))
                .instrument(span.clone())
                .await;
            let passed = match passed {
                Ok(Ok(next)) => Ok(next),
                Ok(Err(e)) => Err(e.to_string()),
                Err(panicked) => Err(panicked.to_string()),
            };
            let outcome = match passed {
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
                Err(error) => {
                    let after = self.backoff.failed(&id);
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

    /// The value of the sample line that starts with `series`.
    fn value(body: &str, series: &str) -> Option<f64> {
        body.lines()
            .find_map(|l| l.strip_prefix(series)?.strip_prefix(' ')?.parse().ok())
    }

    #[tokio::test]
    async fn a_pass_that_panics_is_counted_and_retried_and_the_worker_goes_on() {
        let mut registry = prometheus_client::registry::Registry::default();
        let metrics = crate::controller::metrics::ControllerMetrics::register(&mut registry);
        let rec = metrics.controller("test");
        rec.start(1);
        let queue: Queue<String> = Queue::default();
        let backoff = Backoff::new(Duration::from_millis(5), Duration::from_secs(1));
        let w = Worker {
            queue: &queue,
            rec: &rec,
            backoff: &backoff,
            sync_period: None,
            controller: "test",
        };
        let tries = Arc::new(AtomicUsize::new(0));
        let done = Arc::new(std::sync::Mutex::new(Vec::<String>::new()));
        queue.add("boom".to_string());
        queue.add("next".to_string());
        let (t, d) = (tries.clone(), done.clone());
        // One worker: if the panic killed it, nothing after it would run.
        let run = w.run(|key: String| {
            let (t, d) = (t.clone(), d.clone());
            async move {
                if key == "boom" && t.fetch_add(1, Ordering::SeqCst) == 0 {
                    panic!("index out of range");
                }
                d.lock().unwrap().push(key);
                Ok::<Option<Duration>, String>(None)
            }
        });
        // Until both passed (the panic hook may take a while to print a backtrace).
        let both = async {
            while done.lock().unwrap().len() < 2 {
                tokio::time::sleep(Duration::from_millis(10)).await;
            }
        };
        let _ = tokio::time::timeout(Duration::from_secs(20), async {
            tokio::select! {
                _ = async { tokio::join!(run, queue.run_timers()) } => {}
                _ = both => {}
            }
        })
        .await;
        let done = done.lock().unwrap().clone();
        assert!(done.contains(&"next".to_string()), "{done:?}");
        assert!(
            done.contains(&"boom".to_string()),
            "the key that panicked is retried (and now passes): {done:?}"
        );
        let out = crate::metrics::render_text(&registry).unwrap();
        for (series, want) in [
            (
                r#"controller_runtime_reconcile_panics_total{controller="test"}"#,
                1.0,
            ),
            (
                r#"controller_runtime_reconcile_errors_total{controller="test"}"#,
                1.0,
            ),
            (
                r#"controller_runtime_reconcile_total{controller="test",result="error"}"#,
                1.0,
            ),
            (
                r#"controller_runtime_reconcile_total{controller="test",result="success"}"#,
                2.0,
            ),
            (
                r#"controller_runtime_terminal_reconcile_errors_total{controller="test"}"#,
                0.0,
            ),
            (
                r#"workqueue_retries_total{name="test",controller="test"}"#,
                1.0,
            ),
            (
                r#"controller_runtime_active_workers{controller="test"}"#,
                0.0,
            ),
        ] {
            assert_eq!(value(&out, series), Some(want), "{series} in\n{out}");
        }
    }
}
