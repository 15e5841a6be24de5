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
use std::io::Write as _;
use std::time::Duration;

pub const PATH: &str = "/mutate-v1-pod";
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

/// What a pod's gate list needs: the whole list when it has none, else legacy gates removed
/// (indexes, highest first, so earlier ones stay valid within the patch) and missing gates
/// appended. Legacy gates are dropped only when a gate of ours is added, as upstream does.
enum GatePlan<'g> {
    Unchanged,
    NewList(Vec<&'g str>),
    Edit {
        removes: Vec<usize>,
        adds: Vec<&'g str>,
    },
}

impl<'g> GatePlan<'g> {
    fn of(existing: Option<&[&'g str]>, gates: &'g [String]) -> GatePlan<'g> {
        let mut wanted: Vec<&'g str> = Vec::new();
        for g in gates {
            if !wanted.contains(&g.as_str()) {
                wanted.push(g);
            }
        }
        let Some(existing) = existing else {
            return if wanted.is_empty() {
                GatePlan::Unchanged
            } else {
                GatePlan::NewList(wanted)
            };
        };
        let adds: Vec<&str> = wanted
            .into_iter()
            .filter(|g| {
                !existing
                    .iter()
                    .any(|t| t == g && !t.starts_with(LEGACY_GATE_DOMAIN))
            })
            .collect();
        if adds.is_empty() {
            return GatePlan::Unchanged;
        }
        let removes = (0..existing.len())
            .rev()
            .filter(|&i| existing[i].starts_with(LEGACY_GATE_DOMAIN))
            .collect();
        GatePlan::Edit { removes, adds }
    }
}

/// The patch that adds `gates` to a pod whose gate condition types are `existing` (`None`: no
/// gate list), or nothing if every gate is already there.
pub fn gate_patch(existing: Option<&[&str]>, gates: &[String]) -> Vec<PatchOperation> {
    let gate = |t: &str| serde_json::json!({ "conditionType": t });
    match GatePlan::of(existing, gates) {
        GatePlan::Unchanged => Vec::new(),
        GatePlan::NewList(all) => vec![PatchOperation::Add(AddOperation {
            path: pointer("/spec/readinessGates"),
            value: Value::Array(all.into_iter().map(gate).collect()),
        })],
        GatePlan::Edit { removes, adds } => {
            let removes = removes.into_iter().map(|i| {
                PatchOperation::Remove(RemoveOperation {
                    path: pointer(&format!("/spec/readinessGates/{i}")),
                })
            });
            let adds = adds.into_iter().map(|g| {
                PatchOperation::Add(AddOperation {
                    path: pointer("/spec/readinessGates/-"),
                    value: gate(g),
                })
            });
            removes.chain(adds).collect()
        }
    }
}

/// [`gate_patch`] written straight as JSON: the bytes serde writes for those operations (gate
/// names escaped by serde_json), without building JSON values and pointers first. The borrowed
/// path answers every pod creation with it: a request finds this code and its allocations cold,
/// where each avoided allocation and serde layer is about half a microsecond (#24).
pub fn gate_patch_json(existing: Option<&[&str]>, gates: &[String]) -> Vec<u8> {
    fn gate(out: &mut Vec<u8>, t: &str) {
        out.extend_from_slice(br#"{"conditionType":"#);
        serde_json::to_writer(&mut *out, t).expect("a string always serialises");
        out.push(b'}');
    }
    let plan = GatePlan::of(existing, gates);
    let mut out = Vec::with_capacity(match &plan {
        GatePlan::Unchanged => 0,
        _ => 128 + 96 * gates.len(),
    });
    match plan {
        GatePlan::Unchanged => {}
        GatePlan::NewList(all) => {
            out.extend_from_slice(br#"[{"op":"add","path":"/spec/readinessGates","value":["#);
            for (i, g) in all.into_iter().enumerate() {
                if i > 0 {
                    out.push(b',');
                }
                gate(&mut out, g);
            }
            out.extend_from_slice(b"]}]");
        }
        GatePlan::Edit { removes, adds } => {
            out.push(b'[');
            for i in removes {
                out.extend_from_slice(br#"{"op":"remove","path":"/spec/readinessGates/"#);
                // Writing into a Vec cannot fail.
                let _ = write!(out, "{i}");
                out.extend_from_slice(br#""},"#);
            }
            for g in adds {
                out.extend_from_slice(br#"{"op":"add","path":"/spec/readinessGates/-","value":"#);
                gate(&mut out, g);
                out.extend_from_slice(b"},");
            }
            // The last operation's comma closes the list instead.
            if let Some(last) = out.last_mut() {
                *last = b']';
            }
        }
    }
    out
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
        let gates = self.index.gates_for(namespace, label);
        let patch = gate_patch_json(existing.as_deref(), &gates);
        Some(quick(if patch.is_empty() {
            Decision::Patch(Vec::new())
        } else {
            Decision::PatchJson(patch)
        }))
    }
}

#[cfg(test)]
#[path = "pod_readiness_tests.rs"]
mod tests;
