//! The worker loop and the pass wrapper: take a key, reconcile it inside its log span, shadow
//! scope and panic guard, report the pass, and queue it again — after the resync period at low
//! priority (users' changes go first), after the requested delay, or after its backoff on a
//! failure (doubling per failure, so one failing key never holds up the others).

use std::fmt::Display;
use std::future::Future;
use std::sync::Arc;
use std::time::Instant;

use tracing::{Instrument, Span};

use super::{Controller, Next, Priority, Queue, QueueKey};
use crate::controller::metrics::Outcome;

impl Controller {
    /// Reconciles keys of `queue` until the future is dropped.
    pub(super) async fn work<K, C, F, Fut, R, E>(
        &self,
        queue: &Queue<K>,
        ctx: &Arc<C>,
        reconcile: &F,
    ) where
        K: QueueKey,
        F: Fn(Arc<C>, K) -> Fut,
        Fut: Future<Output = Result<R, E>>,
        R: Into<Next>,
        E: Display,
    {
        loop {
            let (key, waited) = queue.next_timed().await;
            let working = self.rec.working(waited);
            let start = Instant::now();
            let id = key.id();
            let span = crate::telemetry::reconcile_span(&self.log_as, &id);
            self.rec.talked(&id);
            let passed = self
                // Boxed where it is made: a controller's pass is a large future, and moved
                // inline through the pass, shadow scope and worker futures it took several
                // hundred KiB of stack per layer in unoptimised builds.
                .pass(&id, Box::pin(reconcile(ctx.clone(), key.clone())))
                .instrument(span.clone())
                .await;
            let outcome = self.settle(queue, &key, &id, passed.map(Into::into), &span);
            self.rec.reconciled(outcome, start.elapsed().as_secs_f64());
            drop(working);
            queue.done(&key);
        }
    }

    /// One pass: a pass that panics fails like any other (retried with backoff) and the worker
    /// lives; in shadow mode (and under `diff`) the writes it plans are its scope's, a failure
    /// (a panic included) recorded with them.
    async fn pass<R, E: Display>(
        &self,
        id: &str,
        reconcile: impl Future<Output = Result<R, E>>,
    ) -> Result<R, String> {
        let recovered = async {
            match self.rec.recovering(reconcile).await {
                Ok(Ok(next)) => Ok(next),
                Ok(Err(e)) => Err(e.to_string()),
                Err(panicked) => Err(panicked.to_string()),
            }
        };
        match self.shadow {
            Some(kind) => crate::aws::shadow::scope(format!("{kind} {id}"), recovered).await,
            None => recovered.await,
        }
    }

    /// Queues `key` again as the pass asks and says how controller-runtime files the pass.
    fn settle<K: QueueKey>(
        &self,
        queue: &Queue<K>,
        key: &K,
        id: &str,
        passed: Result<Next, String>,
        span: &Span,
    ) -> Outcome {
        match passed {
            Ok(Next::Done) => {
                self.backoff.succeeded(id);
                Outcome::Success
            }
            // The periodic resync is controller-runtime's SyncPeriod (low priority), not a
            // requeue.
            Ok(Next::After(after)) if Some(after) == self.resync => {
                self.backoff.succeeded(id);
                queue.add_after_with(key.clone(), after, Priority::Low);
                Outcome::Success
            }
            Ok(Next::After(after)) => {
                self.backoff.succeeded(id);
                queue.add_after(key.clone(), after);
                Outcome::RequeueAfter
            }
            Ok(Next::Backoff) => {
                queue.add_after(key.clone(), self.backoff.failed(id));
                Outcome::RequeueAfter
            }
            Err(error) => {
                let after = self.backoff.failed(id);
                // controller-runtime's line for a failed pass, with the pass's reconcileID.
                span.in_scope(|| tracing::error!(%error, retry_in = ?after, "Reconciler error"));
                queue.add_after(key.clone(), after);
                self.rec.retried();
                Outcome::Error
            }
        }
    }
}
