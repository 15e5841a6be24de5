//! `/mutate-v1-pod`: readiness-gate injection for pods behind ip TargetGroupBindings.
//!
//! The patch is computed on the pod JSON the API server sent and contains only `remove`s of
//! legacy gates and `add`s of ours, so fields this build does not know can never be dropped
//! (upstream once stripped gRPC probes by re-serialising a typed pod).

use super::pod_index::PodGateIndex;
use super::{AdmissionRequest, Decision, Handler, Operation};
use json_patch::jsonptr::PointerBuf;
use json_patch::{AddOperation, PatchOperation, RemoveOperation};
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

fn pointer(path: &str) -> PointerBuf {
    PointerBuf::parse(path).expect("static JSON pointer")
}

/// The patch that adds `gates` to `pod`, or nothing if every gate is already there.
pub fn gate_patch(pod: &Value, gates: &[String]) -> Vec<PatchOperation> {
    if gates.is_empty() {
        return Vec::new();
    }
    // `get` rather than `Value::pointer`, which allocates two strings per path segment.
    let present = pod
        .get("spec")
        .and_then(|s| s.get("readinessGates"))
        .and_then(Value::as_array);
    let existing: Vec<&str> = present
        .map(|gates| {
            gates
                .iter()
                .map(|g| g.get("conditionType").and_then(Value::as_str).unwrap_or(""))
                .collect()
        })
        .unwrap_or_default();
    let gate = |t: &str| serde_json::json!({ "conditionType": t });
    if present.is_none() {
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
    }
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

#[async_trait::async_trait]
impl Handler for PodReadinessGateInjector {
    fn mutating(&self) -> bool {
        true
    }

    async fn admit(&self, req: &AdmissionRequest) -> Decision {
        if req.operation != Operation::Create || !self.enabled {
            return Decision::Patch(Vec::new());
        }
        let Some(pod) = req
            .object
            .as_ref()
            .filter(|p| p.get("spec").is_some_and(Value::is_object))
        else {
            return Decision::errored("decodePod", "admission request carries no pod with a spec");
        };
        // Pods made from generateName may carry no namespace: the request's is authoritative.
        let Some(namespace) = req.namespace.as_deref() else {
            return Decision::errored("decodePod", "admission request has no namespace");
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
        let gates = self.index.gates_for(namespace, label);
        Decision::Patch(gate_patch(pod, &gates))
    }
}

#[cfg(test)]
#[path = "pod_readiness_tests.rs"]
mod tests;
