//! `/mutate-v1-pod`: readiness-gate injection for pods behind ip TargetGroupBindings.
//!
//! The patch is computed on the pod JSON the API server sent and contains only `remove`s of
//! legacy gates and `add`s of ours, so fields this build does not know can never be dropped
//! (upstream once stripped gRPC probes by re-serialising a typed pod).
//!
//! Pods are read borrowed (labels and gate types as slices of the body, the rest skipped), every
//! pod creation in the cluster passes here; anything that does not read so goes the generic way.

use super::borrowed::{self, Str, Strings};
use super::pod_index::PodGateIndex;
use super::{AdmissionRequest, Decision, Handler, Operation, Quick};
use json_patch::jsonptr::PointerBuf;
use json_patch::{AddOperation, PatchOperation, RemoveOperation};
use serde::Deserialize;
use serde_json::Value;
use std::time::Duration;

pub const PATH: &str = "/mutate-v1-pod";
/// Condition type prefix of our gates: `target-health.elbv2.k8s.aws/<binding name>`.
pub use crate::crd::names::GATE_PREFIX;
// Gates of the v1 ALB ingress controller, dropped when we add ours.
use crate::crd::names::LEGACY_GATE_DOMAIN;

pub struct PodReadinessGateInjector {
    pub enabled: bool,
    pub index: PodGateIndex,
    /// How long a pod may wait for the first sync of the indexes (only right after start).
    pub sync_wait: Duration,
}

/// The fields of a pod the injector reads, borrowed from the review.
#[derive(Deserialize)]
struct PodView<'a> {
    #[serde(borrow)]
    metadata: Option<MetaView<'a>>,
    #[serde(borrow)]
    spec: Option<SpecView<'a>>,
}

#[derive(Deserialize)]
struct MetaView<'a> {
    #[serde(borrow)]
    labels: Option<Strings<'a>>,
}

#[derive(Deserialize)]
struct SpecView<'a> {
    #[serde(rename = "readinessGates", borrow)]
    readiness_gates: Option<Vec<GateView<'a>>>,
}

#[derive(Deserialize)]
struct GateView<'a> {
    #[serde(rename = "conditionType", borrow)]
    condition_type: Option<Str<'a>>,
}

fn pointer(path: &str) -> PointerBuf {
    PointerBuf::parse(path).expect("static JSON pointer")
}

/// `spec.readinessGates` condition types of a pod as sent (`""` for a gate without one), or
/// `None` when the pod has no gate list.
fn existing_gates(pod: &Value) -> Option<Vec<&str>> {
    // `get` rather than `Value::pointer`, which allocates two strings per path segment.
    let present = pod
        .get("spec")
        .and_then(|s| s.get("readinessGates"))
        .and_then(Value::as_array)?;
    Some(
        present
            .iter()
            .map(|g| g.get("conditionType").and_then(Value::as_str).unwrap_or(""))
            .collect(),
    )
}

/// The patch that adds `gates` to a pod whose gate condition types are `existing` (`None`: no
/// gate list), or nothing if every gate is already there.
pub fn gate_patch(existing: Option<&[&str]>, gates: &[String]) -> Vec<PatchOperation> {
    if gates.is_empty() {
        return Vec::new();
    }
    let gate = |t: &str| serde_json::json!({ "conditionType": t });
    let Some(existing) = existing else {
        let mut unique: Vec<&String> = Vec::new();
        for g in gates {
            if !unique.contains(&g) {
                unique.push(g);
            }
        }
        let value = Value::Array(unique.into_iter().map(|g| gate(g)).collect());
        return vec![PatchOperation::Add(AddOperation {
            path: pointer("/spec/readinessGates"),
            value,
        })];
    };
    let mut ops = Vec::new();
    let mut kept: Vec<&str> = Vec::new();
    // Remove from the highest index down so earlier indexes stay valid within the patch.
    for (i, t) in existing.iter().enumerate().rev() {
        if t.starts_with(LEGACY_GATE_DOMAIN) {
            ops.push(PatchOperation::Remove(RemoveOperation {
                path: pointer(&format!("/spec/readinessGates/{i}")),
            }));
        }
    }
    kept.extend(
        existing
            .iter()
            .filter(|t| !t.starts_with(LEGACY_GATE_DOMAIN)),
    );
    for g in gates {
        if !kept.contains(&g.as_str()) {
            kept.push(g);
            ops.push(PatchOperation::Add(AddOperation {
                path: pointer("/spec/readinessGates/-"),
                value: gate(g),
            }));
        }
    }
    // Legacy gates are dropped only when we add a gate of our own, as upstream does.
    if ops.iter().any(|op| matches!(op, PatchOperation::Add(_))) {
        ops
    } else {
        Vec::new()
    }
}

fn no_pod() -> Decision {
    Decision::errored("decodePod", "admission request carries no pod with a spec")
}

fn no_namespace() -> Decision {
    Decision::errored("decodePod", "admission request has no namespace")
}

impl PodReadinessGateInjector {
    /// Whether a request with this operation is left alone.
    fn passes(&self, operation: Operation) -> bool {
        operation != Operation::Create || !self.enabled
    }

    /// The decision for a pod created in `namespace` with the index synced: `label` looks a pod
    /// label up on the pod as sent, `existing` are its gate condition types.
    fn decide<'l>(
        &self,
        namespace: &str,
        label: impl Fn(&str) -> Option<&'l str>,
        existing: Option<&[&str]>,
    ) -> Decision {
        let gates = self.index.gates_for(namespace, label);
        Decision::Patch(gate_patch(existing, &gates))
    }
}

#[async_trait::async_trait]
impl Handler for PodReadinessGateInjector {
    fn mutating(&self) -> bool {
        true
    }

    async fn admit(&self, req: &AdmissionRequest) -> Decision {
        if self.passes(req.operation) {
            return Decision::Patch(Vec::new());
        }
        let Some(pod) = req
            .object
            .as_ref()
            .filter(|p| p.get("spec").is_some_and(Value::is_object))
        else {
            return no_pod();
        };
        // Pods made from generateName may carry no namespace: the request's is authoritative.
        let Some(namespace) = req.namespace.as_deref() else {
            return no_namespace();
        };
        if !self.index.synced() {
            let deadline = tokio::time::Instant::now() + self.sync_wait;
            while !self.index.synced() && tokio::time::Instant::now() < deadline {
                tokio::time::sleep(Duration::from_millis(20)).await;
            }
            if !self.index.synced() {
                return Decision::deny(
                    "listTargetGroupBindings",
                    "unable to determine targetHealth readinessGates: TargetGroupBinding and Service caches have not synced yet",
                );
            }
        }
        let labels = pod
            .get("metadata")
            .and_then(|m| m.get("labels"))
            .and_then(Value::as_object);
        let label = |k: &str| labels?.get(k)?.as_str();
        self.decide(namespace, label, existing_gates(pod).as_deref())
    }

    /// The same steps as [`Self::admit`] on the borrowed pod; before the first sync, the generic
    /// path waits for it.
    fn admit_borrowed<'b>(&self, body: &'b [u8]) -> Option<Quick<'b>> {
        let review = borrowed::read::<PodView>(body)?;
        let quick = |decision| Quick {
            uid: review.uid.clone(),
            operation: review.operation,
            decision,
        };
        if review.operation.admits_unread() || self.passes(review.operation) {
            return Some(quick(Decision::Patch(Vec::new())));
        }
        let Some((pod, spec)) = review
            .object
            .as_ref()
            .and_then(|p| Some((p, p.spec.as_ref()?)))
        else {
            return Some(quick(no_pod()));
        };
        let Some(namespace) = review.namespace.as_deref() else {
            return Some(quick(no_namespace()));
        };
        if !self.index.synced() {
            return None;
        }
        let labels = pod.metadata.as_ref().and_then(|m| m.labels.as_ref());
        let label = |k: &str| labels?.get(k);
        let existing: Option<Vec<&str>> = spec.readiness_gates.as_ref().map(|gates| {
            gates
                .iter()
                .map(|g| g.condition_type.as_ref().map_or("", Str::as_str))
                .collect()
        });
        Some(quick(self.decide(namespace, label, existing.as_deref())))
    }
}

#[cfg(test)]
#[path = "pod_readiness_tests.rs"]
mod tests;
