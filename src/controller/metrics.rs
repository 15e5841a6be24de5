//! The controllers' Prometheus metrics under the names dashboards know: upstream's own
//! (`awslbc_readiness_gate_ready_seconds`, `awslbc_controller_reconcile_errors_total`,
//! `awslbc_controller_reconcile_stage_duration`, `awslbc_controller_top_talkers`,
//! `awslbc_controller_cache_object_total`) and controller-runtime's (`controller_runtime_*`,
//! `workqueue_*`, `leader_election_master_status`), with their labels and buckets.
//!
//! A default [`ControllerMetrics`] is unregistered: it records into families nobody scrapes, so
//! code paths need no `Option`. prometheus-client appends `_total` to counters itself.

use std::collections::{BTreeMap, HashMap};
use std::sync::atomic::AtomicU64;
use std::sync::{Arc, Mutex};
use std::time::Instant;

use prometheus_client::collector::Collector;
use prometheus_client::encoding::{DescriptorEncoder, EncodeLabelSet, EncodeMetric};
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::gauge::Gauge;
use prometheus_client::metrics::histogram::Histogram;
use prometheus_client::registry::Registry;

mod cache_objects;
mod reconciles;
mod talkers;
pub use cache_objects::CacheObjects;
pub use reconciles::{Outcome, Panicked, Reconciles, Working};
pub use talkers::{
    interval_from_env as top_talkers_interval, TOP_TALKERS_INTERVAL, TOP_TALKERS_INTERVAL_ENV,
};

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

/// `awslbc_controller_top_talkers`: the controller as upstream's counters name it, the object.
#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
pub struct TalkerLabels {
    pub controller: String,
    pub namespace: String,
    pub name: String,
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

/// controller-runtime's workqueue buckets, `ExponentialBuckets(10e-9, 10, 12)`: 10ns up to
/// 1000s, by tens, computed as Go does (its `le="9.999999999999999e-06"` included).
fn queue_buckets() -> Histogram {
    Histogram::new(crate::metrics::go_exponential_buckets(10e-9, 10.0, 12))
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
    top_talkers: Family<TalkerLabels, Gauge>,
    talkers: Arc<talkers::Talkers>,
    reconcile_total: Family<ResultLabels, Counter>,
    runtime_errors: Family<ControllerLabels, Counter>,
    terminal_errors: Family<ControllerLabels, Counter>,
    panics: Family<ControllerLabels, Counter>,
    timeouts: Family<ControllerLabels, Counter>,
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
            top_talkers: Family::default(),
            talkers: Arc::default(),
            reconcile_total: Family::default(),
            runtime_errors: Family::default(),
            terminal_errors: Family::default(),
            panics: Family::default(),
            timeouts: Family::default(),
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
            "Latency from pod getting added to the load balancer until the readiness gate is flipped to healthy.",
            m.gate_ready.clone(),
        );
        registry.register(
            "awslbc_controller_reconcile_errors",
            "Counts the number of reconcile error, categorized by error type.",
            m.reconcile_errors.clone(),
        );
        registry.register(
            "awslbc_controller_reconcile_stage_duration",
            "latencies of different reconcile stages.",
            m.stage_duration.clone(),
        );
        registry.register(
            "awslbc_controller_top_talkers",
            "Counts the number of reconciliations triggered per resource",
            m.top_talkers.clone(),
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
            "controller_runtime_terminal_reconcile_errors",
            "Total number of terminal reconciliation errors per controller",
            m.terminal_errors.clone(),
        );
        registry.register(
            "controller_runtime_reconcile_panics",
            "Total number of reconciliation panics per controller",
            m.panics.clone(),
        );
        // Never counted: like upstream, which sets no ReconciliationTimeout, no pass is cut short
        // by a deadline; the series shows at 0 per controller as controller-runtime's does.
        registry.register(
            "controller_runtime_reconcile_timeouts",
            "Total number of reconciliation timeouts per controller",
            m.timeouts.clone(),
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
            "How long in seconds processing an item from workqueue takes.",
            m.work_duration.clone(),
        );
        registry.register(
            "workqueue_retries",
            "Total number of retries handled by workqueue",
            m.retries.clone(),
        );
        registry.register(
            "leader_election_master_status",
            "Gauge of if the reporting system is master of the relevant lease, 0 indicates backup, 1 indicates master. 'name' is the string used to identify the lease. Please make sure to group by name.",
            m.leader.clone(),
        );
        registry.register_collector(Box::new(InFlightCollector(m.in_flight.clone())));
        m
    }

    /// The handles of one controller (`ingress`, `targetGroupBinding`), its queue named alike.
    pub fn controller(&self, name: &str) -> Reconciles {
        Reconciles::new(self.clone(), name)
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

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

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
            let out = crate::metrics::render_text(&registry).unwrap();
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
        // As served: text 0.0.4, numbers (and `le`, written last) as Go spells them.
        let out = crate::metrics::render_text(&registry).unwrap();
        for want in [
            r#"controller_runtime_active_workers{controller="ingress"} 0"#,
            r#"controller_runtime_max_concurrent_reconciles{controller="ingress"} 3"#,
            r#"controller_runtime_reconcile_total{controller="ingress",result="error"} 1"#,
            r#"controller_runtime_reconcile_total{controller="ingress",result="success"} 0"#,
            r#"controller_runtime_reconcile_errors_total{controller="ingress"} 1"#,
            r#"controller_runtime_terminal_reconcile_errors_total{controller="ingress"} 0"#,
            r#"controller_runtime_reconcile_panics_total{controller="ingress"} 0"#,
            r#"controller_runtime_reconcile_timeouts_total{controller="ingress"} 0"#,
            "# HELP controller_runtime_reconcile_panics_total Total number of reconciliation panics per controller\n",
            "# TYPE controller_runtime_terminal_reconcile_errors_total counter\n",
            r#"controller_runtime_reconcile_time_seconds_bucket{controller="ingress",le="0.25"} 1"#,
            r#"awslbc_controller_reconcile_errors_total{controller="ingress",error_category="build_model_error"} 1"#,
            r#"awslbc_controller_reconcile_stage_duration_count{controller="ingress",reconcile_stage="build_model"} 1"#,
            r#"awslbc_readiness_gate_ready_seconds_bucket{namespace="ns",name="tgb",le="60"} 1"#,
            r#"workqueue_depth{name="ingress",controller="ingress",priority=""} 1"#,
            r#"workqueue_adds_total{name="ingress",controller="ingress"} 1"#,
            r#"workqueue_queue_duration_seconds_count{name="ingress",controller="ingress"} 1"#,
            r#"workqueue_work_duration_seconds_count{name="ingress",controller="ingress"} 1"#,
            r#"workqueue_retries_total{name="ingress",controller="ingress"} 0"#,
            r#"workqueue_unfinished_work_seconds{name="ingress",controller="ingress"} 0"#,
            r#"leader_election_master_status{name="lease"} 1"#,
            r#"# TYPE workqueue_adds_total counter"#,
            r#"workqueue_queue_duration_seconds_bucket{name="ingress",controller="ingress",le="9.999999999999999e-06"}"#,
        ] {
            assert!(out.contains(want), "no `{want}` in\n{out}");
        }
    }
}
