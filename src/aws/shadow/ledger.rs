//! The ledger of shadow mode (`--dry-run`) and of `diff`: which reconcile planned which write.
//! Each planned write is logged with the stack it belongs to, and
//! `awslbc_dry_run_pending_writes{resource_kind,operation}` holds the writes the latest reconcile
//! of every stack planned: a reconcile replaces its stack's share, so the gauge falls back to 0
//! once the owner has made AWS and the cluster match.

use std::cell::RefCell;
use std::collections::{BTreeMap, BTreeSet};
use std::future::Future;
use std::sync::{Mutex, OnceLock};

use prometheus_client::encoding::EncodeLabelSet;
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::gauge::Gauge;
use prometheus_client::registry::Registry;

/// Metric name (the registry prefixes nothing).
pub const PENDING_WRITES: &str = "awslbc_dry_run_pending_writes";

#[derive(Clone, Debug, Hash, PartialEq, Eq, PartialOrd, Ord, EncodeLabelSet)]
struct Labels {
    resource_kind: String,
    operation: String,
}

struct Scope {
    key: String,
    planned: RefCell<Vec<Labels>>,
    /// The writes themselves, for `diff` (see [`collect`]).
    writes: RefCell<Vec<super::Write>>,
    error: RefCell<Option<String>>,
}

/// One finished reconcile scope: its key, the writes it planned, and its error if it failed.
pub type Collected = (String, Vec<super::Write>, Option<String>);

/// Where finished scopes go while `diff` runs a reconciler (see [`collect`]).
static SINK: OnceLock<Mutex<Vec<Collected>>> = OnceLock::new();

/// From now on every finished scope is kept for [`collected`] (used by `diff`).
pub fn collect() {
    SINK.get_or_init(|| Mutex::new(Vec::new()));
}

/// The scopes finished since [`collect`].
pub fn collected() -> Vec<Collected> {
    SINK.get()
        .map(|s| s.lock().unwrap().clone())
        .unwrap_or_default()
}

tokio::task_local! {
    static SCOPE: Scope;
}

struct Shadow {
    gauge: Family<Labels, Gauge>,
    /// Planned writes by stack (scope key), from its latest reconcile.
    pending: Mutex<BTreeMap<String, Vec<Labels>>>,
    /// Every label set ever reported, so a series falls to 0 instead of vanishing.
    seen: Mutex<BTreeSet<Labels>>,
}

static SHADOW: OnceLock<Shadow> = OnceLock::new();

/// Turns shadow mode's bookkeeping on and registers the gauge (once per process).
pub fn register(registry: &mut Registry) {
    let shadow = SHADOW.get_or_init(|| Shadow {
        gauge: Family::default(),
        pending: Mutex::new(BTreeMap::new()),
        seen: Mutex::new(BTreeSet::new()),
    });
    registry.register(
        PENDING_WRITES,
        "Writes the dry-run controller would make now, by resource kind and operation",
        shadow.gauge.clone(),
    );
}

/// Whether shadow bookkeeping is on in this process.
pub fn enabled() -> bool {
    SHADOW.get().is_some()
}

/// Runs one reconcile of `key` (an Ingress group, a TargetGroupBinding); the writes it plans
/// replace what `key` had pending. Outside shadow mode and `diff` this is just `fut`.
pub async fn scope<T, E: std::fmt::Display>(
    key: String,
    fut: impl Future<Output = Result<T, E>>,
) -> Result<T, E> {
    if SHADOW.get().is_none() && SINK.get().is_none() {
        return fut.await;
    }
    let state = Scope {
        key: key.clone(),
        planned: RefCell::new(Vec::new()),
        writes: RefCell::new(Vec::new()),
        error: RefCell::new(None),
    };
    let (out, planned, writes, error) = SCOPE
        .scope(state, async {
            let out = fut.await;
            SCOPE.with(|s| {
                let error = out.as_ref().err().map(|e| e.to_string());
                (
                    out,
                    s.planned.take(),
                    s.writes.take(),
                    error.or(s.error.take()),
                )
            })
        })
        .await;
    if let Some(shadow) = SHADOW.get() {
        shadow.settle(key.clone(), planned);
    }
    if let Some(sink) = SINK.get() {
        sink.lock().unwrap().push((key, writes, error));
    }
    out
}

impl Shadow {
    fn settle(&self, key: String, planned: Vec<Labels>) {
        let mut pending = self.pending.lock().unwrap();
        if planned.is_empty() {
            pending.remove(&key);
        } else {
            pending.insert(key, planned);
        }
        let mut counts: BTreeMap<&Labels, i64> = BTreeMap::new();
        for l in pending.values().flatten() {
            *counts.entry(l).or_default() += 1;
        }
        let mut seen = self.seen.lock().unwrap();
        seen.extend(counts.keys().map(|l| (*l).clone()));
        for l in seen.iter() {
            self.gauge
                .get_or_create(l)
                .set(counts.get(l).copied().unwrap_or(0));
        }
    }
}

/// Notes one intercepted write: inside a reconcile scope it is kept for that scope (and, in
/// shadow mode, logged with the stack and counted); returns false outside any scope.
pub fn capture(resource_kind: &str, write: &super::Write) -> bool {
    let operation = write.call.rsplit(':').next().unwrap_or(&write.call);
    let labels = Labels {
        resource_kind: resource_kind.to_string(),
        operation: operation.to_string(),
    };
    SCOPE
        .try_with(|s| {
            if SHADOW.get().is_some() {
                tracing::info!(stack = %s.key, resource_kind, operation, resource = %write.resource, "dry-run: planned write");
            }
            s.planned.borrow_mut().push(labels.clone());
            s.writes.borrow_mut().push(write.clone());
        })
        .is_ok()
}

/// Notes one intercepted write of the shadow: captured in its scope, else logged and pending
/// under its own resource until replaced.
pub fn note(resource_kind: &str, write: &super::Write) {
    if capture(resource_kind, write) {
        return;
    }
    let operation = write.call.rsplit(':').next().unwrap_or(&write.call);
    let resource = write.resource.as_str();
    tracing::info!(resource_kind, operation, resource, "dry-run: planned write");
    if let Some(shadow) = SHADOW.get() {
        let labels = Labels {
            resource_kind: resource_kind.to_string(),
            operation: operation.to_string(),
        };
        shadow.settle(format!("{operation} {resource}"), vec![labels]);
    }
}

/// The AWS resource kind of an ARN or id, as the gauge labels it.
pub fn aws_kind(resource: &str) -> &'static str {
    // Global Accelerator's ARNs nest: accelerator/<id>/listener/<id>/endpoint-group/<id>.
    if resource.starts_with("arn:aws:globalaccelerator:") {
        if resource.contains("/endpoint-group/") {
            "GlobalAcceleratorEndpointGroup"
        } else if resource.contains("/listener/") {
            "GlobalAcceleratorListener"
        } else {
            "GlobalAccelerator"
        }
    } else if resource.starts_with("sg-") {
        "SecurityGroup"
    } else if resource.contains(":listener-rule/") {
        "ListenerRule"
    } else if resource.contains(":listener/") {
        "Listener"
    } else if resource.contains(":targetgroup/") {
        "TargetGroup"
    } else if resource.contains(":loadbalancer/") {
        "LoadBalancer"
    } else if resource.contains(":certificate/") {
        "Certificate"
    } else if resource.contains("hostedzone/") {
        // A validation record written into the zone.
        "ResourceRecordSet"
    } else {
        "Other"
    }
}
