//! The controllers' Prometheus metrics under the names dashboards know: upstream's own
//! (`awslbc_readiness_gate_ready_seconds`, `awslbc_controller_reconcile_errors_total`,
//! `awslbc_controller_reconcile_stage_duration`) and controller-runtime's (`controller_runtime_*`,
//! `workqueue_*`, `leader_election_master_status`), with their labels and buckets.
//!
//! A default [`ControllerMetrics`] is unregistered: it records into families nobody scrapes, so
//! code paths need no `Option`. prometheus-client appends `_total` to counters itself.

use std::collections::{BTreeMap, HashMap};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use prometheus_client::collector::Collector;
use prometheus_client::encoding::{DescriptorEncoder, EncodeLabelSet, EncodeMetric};
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::gauge::Gauge;
use prometheus_client::metrics::histogram::{exponential_buckets, Histogram};
use prometheus_client::registry::Registry;

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
pub struct NamespacedLabels {
    pub namespace: String,
    pub name: String,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
pub struct ErrorLabels {
    pub controller: String,
    pub error_category: String,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
pub struct StageLabels {
    pub controller: String,
    pub reconcile_stage: String,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
pub struct ControllerLabels {
    pub controller: String,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
pub struct ResultLabels {
    pub controller: String,
    pub result: String,
}

/// controller-runtime names each queue after its controller and labels it with both.
#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
pub struct QueueLabels {
    pub name: String,
    pub controller: String,
}

/// `workqueue_depth` also carries `priority` (empty: not a priority queue).
#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
pub struct DepthLabels {
    pub name: String,
    pub controller: String,
    pub priority: String,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
pub struct NameLabels {
    pub name: String,
}

type Hist<L> = Family<L, Histogram, fn() -> Histogram>;

fn gate_buckets() -> Histogram {
    Histogram::new([
        10.0, 30.0, 60.0, 120.0, 180.0, 240.0, 300.0, 360.0, 420.0, 480.0, 540.0, 600.0,
    ])
}

/// Prometheus' default buckets (client_golang `DefBuckets`).
fn default_buckets() -> Histogram {
    Histogram::new([
        0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0,
    ])
}

fn reconcile_time_buckets() -> Histogram {
    Histogram::new([
        0.005, 0.01, 0.025, 0.05, 0.1, 0.15, 0.2, 0.25, 0.3, 0.35, 0.4, 0.45, 0.5, 0.6, 0.7, 0.8,
        0.9, 1.0, 1.25, 1.5, 1.75, 2.0, 2.5, 3.0, 3.5, 4.0, 4.5, 5.0, 6.0, 7.0, 8.0, 9.0, 10.0,
        15.0, 20.0, 25.0, 30.0, 40.0, 50.0, 60.0,
    ])
}

/// client-go's workqueue buckets: 10ns up to 1000s, by tens.
fn queue_buckets() -> Histogram {
    Histogram::new(exponential_buckets(10e-9, 10.0, 12))
}

/// Work in progress per queue, read at scrape time for the two "how long is it taking" gauges.
#[derive(Debug, Default)]
struct InFlight {
    next: AtomicU64,
    started: Mutex<BTreeMap<String, HashMap<u64, Instant>>>,
}

/// Emits `workqueue_unfinished_work_seconds` and `workqueue_longest_running_processor_seconds`.
#[derive(Debug)]
struct InFlightCollector(Arc<InFlight>);

impl Collector for InFlightCollector {
    fn encode(&self, mut encoder: DescriptorEncoder) -> Result<(), std::fmt::Error> {
        let unfinished = Family::<QueueLabels, Gauge<f64, AtomicU64>>::default();
        let longest = Family::<QueueLabels, Gauge<f64, AtomicU64>>::default();
        let now = Instant::now();
        let started = self.0.started.lock().unwrap_or_else(|p| p.into_inner());
        for (queue, items) in started.iter() {
            let labels = QueueLabels {
                name: queue.clone(),
                controller: queue.clone(),
            };
            let ages = items.values().map(|t| now.duration_since(*t).as_secs_f64());
            let total = ages.clone().fold(0.0, |a, b| a + b);
            let max = ages.fold(0.0, f64::max);
            unfinished.get_or_create(&labels).set(total);
            longest.get_or_create(&labels).set(max);
        }
        drop(started);
        unfinished.encode(encoder.encode_descriptor(
            "workqueue_unfinished_work_seconds",
            "How many seconds of work has been done that is in progress and hasn't been observed by work_duration. Large values indicate stuck threads. One can deduce the number of stuck threads by observing the rate at which this increases",
            None,
            unfinished.metric_type(),
        )?)?;
        longest.encode(encoder.encode_descriptor(
            "workqueue_longest_running_processor_seconds",
            "How many seconds has the longest running processor for workqueue been running",
            None,
            longest.metric_type(),
        )?)?;
        Ok(())
    }
}

/// Handles to every controller metric; cheap to clone (clones update the same series).
#[derive(Debug, Clone)]
pub struct ControllerMetrics {
    gate_ready: Hist<NamespacedLabels>,
    reconcile_errors: Family<ErrorLabels, Counter>,
    stage_duration: Hist<StageLabels>,
    reconcile_total: Family<ResultLabels, Counter>,
    runtime_errors: Family<ControllerLabels, Counter>,
    reconcile_time: Hist<ControllerLabels>,
    max_concurrent: Family<ControllerLabels, Gauge>,
    active_workers: Family<ControllerLabels, Gauge>,
    depth: Family<DepthLabels, Gauge>,
    adds: Family<QueueLabels, Counter>,
    queue_duration: Hist<QueueLabels>,
    work_duration: Hist<QueueLabels>,
    retries: Family<QueueLabels, Counter>,
    leader: Family<NameLabels, Gauge>,
    in_flight: Arc<InFlight>,
}

impl Default for ControllerMetrics {
    fn default() -> Self {
        ControllerMetrics {
            gate_ready: Family::new_with_constructor(gate_buckets as fn() -> Histogram),
            reconcile_errors: Family::default(),
            stage_duration: Family::new_with_constructor(default_buckets as fn() -> Histogram),
            reconcile_total: Family::default(),
            runtime_errors: Family::default(),
            reconcile_time: Family::new_with_constructor(
                reconcile_time_buckets as fn() -> Histogram,
            ),
            max_concurrent: Family::default(),
            active_workers: Family::default(),
            depth: Family::default(),
            adds: Family::default(),
            queue_duration: Family::new_with_constructor(queue_buckets as fn() -> Histogram),
            work_duration: Family::new_with_constructor(queue_buckets as fn() -> Histogram),
            retries: Family::default(),
            leader: Family::default(),
            in_flight: Arc::default(),
        }
    }
}

impl ControllerMetrics {
    /// Creates the metrics and registers them under upstream's and controller-runtime's names.
    pub fn register(registry: &mut Registry) -> Self {
        let m = ControllerMetrics::default();
        registry.register(
            "awslbc_readiness_gate_ready_seconds",
            "Latency from pod getting added to the load balancer until the readiness gate is flipped to healthy",
            m.gate_ready.clone(),
        );
        registry.register(
            "awslbc_controller_reconcile_errors",
            "Counts the number of reconcile error, categorized by error type",
            m.reconcile_errors.clone(),
        );
        registry.register(
            "awslbc_controller_reconcile_stage_duration",
            "latencies of different reconcile stages",
            m.stage_duration.clone(),
        );
        registry.register(
            "controller_runtime_reconcile",
            "Total number of reconciliations per controller",
            m.reconcile_total.clone(),
        );
        registry.register(
            "controller_runtime_reconcile_errors",
            "Total number of reconciliation errors per controller",
            m.runtime_errors.clone(),
        );
        registry.register(
            "controller_runtime_reconcile_time_seconds",
            "Length of time per reconciliation per controller",
            m.reconcile_time.clone(),
        );
        registry.register(
            "controller_runtime_max_concurrent_reconciles",
            "Maximum number of concurrent reconciles per controller",
            m.max_concurrent.clone(),
        );
        registry.register(
            "controller_runtime_active_workers",
            "Number of currently used workers per controller",
            m.active_workers.clone(),
        );
        registry.register(
            "workqueue_depth",
            "Current depth of workqueue by workqueue and priority",
            m.depth.clone(),
        );
        registry.register(
            "workqueue_adds",
            "Total number of adds handled by workqueue",
            m.adds.clone(),
        );
        registry.register(
            "workqueue_queue_duration_seconds",
            "How long in seconds an item stays in workqueue before being requested",
            m.queue_duration.clone(),
        );
        registry.register(
            "workqueue_work_duration_seconds",
            "How long in seconds processing an item from workqueue takes",
            m.work_duration.clone(),
        );
        registry.register(
            "workqueue_retries",
            "Total number of retries handled by workqueue",
            m.retries.clone(),
        );
        registry.register(
            "leader_election_master_status",
            "Gauge of if the reporting system is master of the relevant lease, 0 indicates backup, 1 indicates master. 'name' is the string used to identify the lease. Please make sure to group by name",
            m.leader.clone(),
        );
        registry.register_collector(Box::new(InFlightCollector(m.in_flight.clone())));
        m
    }

    /// The handles of one controller (`ingress`, `targetGroupBinding`), its queue named alike.
    pub fn controller(&self, name: &str) -> Reconciles {
        Reconciles {
            metrics: self.clone(),
            name: name.to_string(),
        }
    }

    /// `leader_election_master_status{name}`: 1 while this replica holds lease `name`.
    pub fn leader_status(&self, name: &str, leading: bool) {
        self.leader
            .get_or_create(&NameLabels { name: name.into() })
            .set(i64::from(leading));
    }

    /// A pod's readiness gate turned True `secs` after it last changed (TargetGroupBinding).
    pub fn gate_ready(&self, namespace: &str, binding: &str, secs: f64) {
        self.gate_ready
            .get_or_create(&NamespacedLabels {
                namespace: namespace.into(),
                name: binding.into(),
            })
            .observe(secs);
    }
}

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
        self.metrics
            .depth
            .get_or_create(&DepthLabels {
                name: self.name.clone(),
                controller: self.name.clone(),
                priority: String::new(),
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
        let out = self.stage(stage, work).await;
        if out.is_err() {
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

/// The queue of a kube-runtime controller (whose scheduler is internal), counted as
/// controller-runtime's workqueue would: a key triggered while not already waiting is an add,
/// the wait ends when a worker takes it; a scheduled requeue that fires goes straight to a worker
/// (an add with no wait).
#[derive(Debug)]
pub struct TriggerQueue {
    rec: Reconciles,
    pending: Mutex<HashMap<String, Instant>>,
}

impl TriggerQueue {
    pub fn new(rec: Reconciles) -> Self {
        TriggerQueue {
            rec,
            pending: Mutex::default(),
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<String, Instant>> {
        self.pending.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// A watch event or trigger asked for `key`.
    pub fn added(&self, key: String) {
        let mut pending = self.lock();
        if pending.contains_key(&key) {
            return;
        }
        pending.insert(key, Instant::now());
        let depth = pending.len();
        drop(pending);
        self.rec.added();
        self.rec.set_depth(depth);
    }

    /// A worker took `key`; returns how long it waited.
    pub fn taken(&self, key: &str) -> Duration {
        let mut pending = self.lock();
        match pending.remove(key) {
            Some(at) => {
                let depth = pending.len();
                drop(pending);
                self.rec.set_depth(depth);
                at.elapsed()
            }
            None => {
                drop(pending);
                self.rec.added();
                Duration::ZERO
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn renders_upstream_and_controller_runtime_names() {
        let mut registry = Registry::default();
        let m = ControllerMetrics::register(&mut registry);
        let r = m.controller("ingress");
        r.start(3);
        r.added();
        r.set_depth(1);
        {
            let _w = r.working(Duration::from_millis(5));
            r.stage("build_model", async {}).await;
            let mut out = String::new();
            prometheus_client::encoding::text::encode(&mut out, &registry).unwrap();
            assert!(
                out.contains(r#"controller_runtime_active_workers{controller="ingress"} 1"#),
                "{out}"
            );
            assert!(
                out.contains(r#"workqueue_longest_running_processor_seconds{name="ingress",controller="ingress"}"#),
                "{out}"
            );
        }
        r.error("build_model_error");
        r.reconciled(Outcome::Error, 0.2);
        m.leader_status("lease", true);
        m.gate_ready("ns", "tgb", 42.0);
        let mut out = String::new();
        prometheus_client::encoding::text::encode(&mut out, &registry).unwrap();
        for want in [
            r#"controller_runtime_active_workers{controller="ingress"} 0"#,
            r#"controller_runtime_max_concurrent_reconciles{controller="ingress"} 3"#,
            r#"controller_runtime_reconcile_total{controller="ingress",result="error"} 1"#,
            r#"controller_runtime_reconcile_total{controller="ingress",result="success"} 0"#,
            r#"controller_runtime_reconcile_errors_total{controller="ingress"} 1"#,
            r#"controller_runtime_reconcile_time_seconds_bucket{le="0.25",controller="ingress"} 1"#,
            r#"awslbc_controller_reconcile_errors_total{controller="ingress",error_category="build_model_error"} 1"#,
            r#"awslbc_controller_reconcile_stage_duration_count{controller="ingress",reconcile_stage="build_model"} 1"#,
            r#"awslbc_readiness_gate_ready_seconds_bucket{le="60.0",namespace="ns",name="tgb"} 1"#,
            r#"workqueue_depth{name="ingress",controller="ingress",priority=""} 1"#,
            r#"workqueue_adds_total{name="ingress",controller="ingress"} 1"#,
            r#"workqueue_queue_duration_seconds_count{name="ingress",controller="ingress"} 1"#,
            r#"workqueue_work_duration_seconds_count{name="ingress",controller="ingress"} 1"#,
            r#"workqueue_retries_total{name="ingress",controller="ingress"} 0"#,
            r#"workqueue_unfinished_work_seconds{name="ingress",controller="ingress"} 0.0"#,
            r#"leader_election_master_status{name="lease"} 1"#,
        ] {
            assert!(out.contains(want), "no `{want}` in\n{out}");
        }
    }
}
