//! One controller's handles: reconcile results and times, upstream's stages and error
//! categories, its queue's `workqueue_*` series, its top talkers, and the recovery of a pass
//! that panics.

use std::any::Any;
use std::future::Future;
use std::panic::AssertUnwindSafe;
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

use futures::FutureExt;

use super::{ControllerLabels, ControllerMetrics, DepthLabels, ErrorLabels, QueueLabels};
use super::{ResultLabels, StageLabels};

/// How controller-runtime files one reconcile's outcome under `result`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Outcome {
    Success,
    /// Asked to run again after a delay (not the periodic resync).
    RequeueAfter,
    Error,
}

/// One controller's metrics and its queue's.
#[derive(Debug, Clone)]
pub struct Reconciles {
    metrics: ControllerMetrics,
    name: String,
    /// The controller's name in `awslbc_controller_top_talkers` (`None`: not counted, as
    /// upstream counts only its load-balancer and binding controllers).
    talker: Option<&'static str>,
}

/// A pass that panicked, recovered as controller-runtime recovers it: the pass fails with
/// this error (counted, logged and retried with backoff like any failure) and the worker goes
/// on with the next key.
#[derive(Debug, thiserror::Error)]
#[error("panic: {0} [recovered]")]
pub struct Panicked(pub String);

/// The text of a panic's payload (`panic!` gives a `&str` or a `String`).
fn panic_text(payload: &(dyn Any + Send)) -> String {
    if let Some(s) = payload.downcast_ref::<&str>() {
        (*s).to_string()
    } else if let Some(s) = payload.downcast_ref::<String>() {
        s.clone()
    } else {
        "non-string panic payload".to_string()
    }
}

/// A reconcile in progress: counts as an active worker and unfinished work until dropped.
pub struct Working<'a> {
    owner: &'a Reconciles,
    id: u64,
    start: Instant,
}

impl Drop for Working<'_> {
    fn drop(&mut self) {
        let o = self.owner;
        o.metrics
            .work_duration
            .get_or_create(&o.queue())
            .observe(self.start.elapsed().as_secs_f64());
        o.metrics.active_workers.get_or_create(&o.ctl()).dec();
        let mut started = o
            .metrics
            .in_flight
            .started
            .lock()
            .unwrap_or_else(|p| p.into_inner());
        if let Some(items) = started.get_mut(&o.name) {
            items.remove(&self.id);
        }
    }
}

impl Reconciles {
    pub(super) fn new(metrics: ControllerMetrics, name: &str) -> Self {
        Reconciles {
            metrics,
            name: name.to_string(),
            talker: None,
        }
    }

    /// Counts this controller's reconciles per object in `awslbc_controller_top_talkers` under
    /// upstream's name for it (`service`, `ingress`, `targetgroupbinding`, `albgateway`,
    /// `nlbgateway`).
    pub fn talkers(mut self, controller: &'static str) -> Self {
        self.talker = Some(controller);
        self
    }

    /// A pass of `key` (`namespace/name`, or a bare name) starts: one more reconcile of that
    /// object for the top talkers.
    pub fn talked(&self, key: &str) {
        if let Some(controller) = self.talker {
            self.metrics.talkers.record(controller, key);
        }
    }

    /// Runs one pass, recovering a panic as controller-runtime does by default: counted in
    /// `controller_runtime_reconcile_panics_total`, logged (`Observed a panic`) and returned as
    /// [`Panicked`] for the caller to handle as a failed pass. The worker survives.
    pub async fn recovering<T>(&self, pass: impl Future<Output = T>) -> Result<T, Panicked> {
        // Boxed: a pass is a deep state machine, and moving it by value through one more
        // wrapper overflowed a 2 MiB stack in unoptimised builds.
        match AssertUnwindSafe(Box::pin(pass)).catch_unwind().await {
            Ok(out) => Ok(out),
            Err(payload) => {
                self.metrics.panics.get_or_create(&self.ctl()).inc();
                let panic = panic_text(&*payload);
                tracing::error!(%panic, "Observed a panic");
                Err(Panicked(panic))
            }
        }
    }

    fn ctl(&self) -> ControllerLabels {
        ControllerLabels {
            controller: self.name.clone(),
        }
    }

    fn queue(&self) -> QueueLabels {
        QueueLabels {
            name: self.name.clone(),
            controller: self.name.clone(),
        }
    }

    /// Called once at start: the worker count and zeroed series, as controller-runtime shows
    /// them before the first reconcile.
    pub fn start(&self, workers: usize) {
        let m = &self.metrics;
        m.max_concurrent
            .get_or_create(&self.ctl())
            .set(workers as i64);
        m.active_workers.get_or_create(&self.ctl()).set(0);
        self.set_depth(0);
        // Creating a series is enough to show it at 0; the guards are not needed.
        drop(m.adds.get_or_create(&self.queue()));
        drop(m.retries.get_or_create(&self.queue()));
        drop(m.runtime_errors.get_or_create(&self.ctl()));
        // No error of ours is terminal (upstream returns none): every failure is retried, so
        // this stays 0, shown as controller-runtime shows it.
        drop(m.terminal_errors.get_or_create(&self.ctl()));
        drop(m.panics.get_or_create(&self.ctl()));
        drop(m.timeouts.get_or_create(&self.ctl()));
        for result in ["success", "error", "requeue", "requeue_after"] {
            drop(m.reconcile_total.get_or_create(&ResultLabels {
                controller: self.name.clone(),
                result: result.into(),
            }));
        }
    }

    /// A key entered the queue (not counted when it was already waiting).
    pub fn added(&self) {
        self.metrics.adds.get_or_create(&self.queue()).inc();
    }

    pub fn set_depth(&self, depth: usize) {
        self.set_priority_depth("", depth);
    }

    /// The depth of one priority of a priority queue (`priority` as controller-runtime writes
    /// it: "0", "-100"; empty for a plain queue).
    pub fn set_priority_depth(&self, priority: &str, depth: usize) {
        self.metrics
            .depth
            .get_or_create(&DepthLabels {
                name: self.name.clone(),
                controller: self.name.clone(),
                priority: priority.to_string(),
            })
            .set(depth as i64);
    }

    /// A failed key was put back with backoff.
    pub fn retried(&self) {
        self.metrics.retries.get_or_create(&self.queue()).inc();
    }

    /// A worker took a key that waited `waited` in the queue; hold the guard while working.
    pub fn working(&self, waited: Duration) -> Working<'_> {
        let m = &self.metrics;
        m.queue_duration
            .get_or_create(&self.queue())
            .observe(waited.as_secs_f64());
        m.active_workers.get_or_create(&self.ctl()).inc();
        let id = m.in_flight.next.fetch_add(1, Ordering::Relaxed);
        let start = Instant::now();
        m.in_flight
            .started
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .entry(self.name.clone())
            .or_default()
            .insert(id, start);
        Working {
            owner: self,
            id,
            start,
        }
    }

    /// One reconcile ended after `secs`.
    pub fn reconciled(&self, outcome: Outcome, secs: f64) {
        let m = &self.metrics;
        let result = match outcome {
            Outcome::Success => "success",
            Outcome::RequeueAfter => "requeue_after",
            Outcome::Error => "error",
        };
        m.reconcile_total
            .get_or_create(&ResultLabels {
                controller: self.name.clone(),
                result: result.into(),
            })
            .inc();
        if outcome == Outcome::Error {
            m.runtime_errors.get_or_create(&self.ctl()).inc();
        }
        m.reconcile_time.get_or_create(&self.ctl()).observe(secs);
    }

    /// Times one reconcile stage (`awslbc_controller_reconcile_stage_duration`).
    pub async fn stage<T>(&self, stage: &str, work: impl std::future::Future<Output = T>) -> T {
        let start = Instant::now();
        let out = work.await;
        self.stage_took(stage, start.elapsed());
        out
    }

    /// A stage timed by the caller took `took`.
    pub fn stage_took(&self, stage: &str, took: Duration) {
        self.metrics
            .stage_duration
            .get_or_create(&StageLabels {
                controller: self.name.clone(),
                reconcile_stage: stage.into(),
            })
            .observe(took.as_secs_f64());
    }

    /// [`Reconciles::stage`] of a fallible step; a failure also counts as upstream's error
    /// category `<stage>_error` (`awslbc_controller_reconcile_errors_total`).
    pub async fn staged<T, E>(
        &self,
        stage: &str,
        work: impl std::future::Future<Output = Result<T, E>>,
    ) -> Result<T, E> {
        self.staged_unless(stage, work, |_| false).await
    }

    /// As [`Reconciles::staged`], except that an error `requeue` says is a wait (a load
    /// balancer still provisioning: upstream's `RequeueNeededAfter`) is not counted as one.
    pub async fn staged_unless<T, E>(
        &self,
        stage: &str,
        work: impl std::future::Future<Output = Result<T, E>>,
        requeue: impl Fn(&E) -> bool,
    ) -> Result<T, E> {
        let out = self.stage(stage, work).await;
        if out.as_ref().is_err_and(|e| !requeue(e)) {
            self.error(&format!("{stage}_error"));
        }
        out
    }

    /// `awslbc_readiness_gate_ready_seconds{namespace, name}` of binding `namespace/name`.
    pub fn gate_ready(&self, namespace: &str, binding: &str, secs: f64) {
        self.metrics.gate_ready(namespace, binding, secs);
    }

    /// Counts a failed stage as upstream does: category `<stage>_error`.
    pub fn error(&self, category: &str) {
        self.metrics
            .reconcile_errors
            .get_or_create(&ErrorLabels {
                controller: self.name.clone(),
                error_category: category.into(),
            })
            .inc();
    }
}
