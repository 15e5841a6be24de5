//! `/mutate-alb-target-control-namespace-v1-pod` and `/mutate-alb-target-control-object-v1-pod`
//! (gate `ALBTargetControlAgent`): the ALB target control agent sidecar added to new pods, as
//! upstream's injector adds it. Both paths are the same mutator, as upstream registers them;
//! their webhook configurations differ only in which pods they send (a labelled namespace, or a
//! pod labelled `elbv2.k8s.aws/alb-target-control-agent-inject: "true"` elsewhere).
//!
//! A pod gets the agent when its own label says `"true"`, or, without that label (`"false"`
//! refuses), when its namespace's injection label is `enabled`; and when it has no container of
//! the agent's name yet and an ALBTargetControlConfig applies (its namespace's, else
//! `kube-system`'s). The patch holds only `add`s, computed on the pod JSON the API server sent:
//! the container appended to `spec.containers` and the `…-injected: "true"` annotation. Nothing
//! the pod carries is dropped or moved (upstream re-serialises a typed pod).

use std::collections::BTreeMap;
use std::time::Duration;

use json_patch::jsonptr::PointerBuf;
use json_patch::{AddOperation, PatchOperation};
use serde_json::{json, Value};

use super::target_control_agent::{Agent, AgentError, CONTAINER_NAME};
use super::target_control_index::{NamespaceLabel, TargetControlIndex, NAMESPACE_ENABLED};
use super::{AdmissionRequest, Decision, Handler, Operation};

/// The namespace-selected webhook's path.
pub const NAMESPACE_PATH: &str = "/mutate-alb-target-control-namespace-v1-pod";
/// The pod-selected webhook's path.
pub const OBJECT_PATH: &str = "/mutate-alb-target-control-object-v1-pod";

/// The pod label that forces injection (`"true"`) or refuses it (`"false"`), whatever the
/// namespace says.
pub const INJECT_LABEL: &str = "elbv2.k8s.aws/alb-target-control-agent-inject";
/// Set to `"true"` on a pod the agent was added to.
pub const INJECTED_ANNOTATION: &str = "elbv2.k8s.aws/alb-target-control-agent-injected";
/// [`INJECTED_ANNOTATION`] as a JSON pointer below `/metadata/annotations`.
const INJECTED_POINTER: &str =
    "/metadata/annotations/elbv2.k8s.aws~1alb-target-control-agent-injected";

/// Upstream's error category for everything this mutator refuses
/// (`awslbc_webhook_mutation_failure_total`).
pub const CATEGORY: &str = "albTargetControlAgentInjector";

pub struct TargetControlInjector {
    pub index: TargetControlIndex,
    /// How long a pod may wait for the first sync of the index (only right after start).
    pub sync_wait: Duration,
}

/// What the injector reads of a pod, from the JSON as sent.
struct PodView<'p> {
    /// `metadata` is an object (else the patch adds one).
    has_metadata: bool,
    labels: BTreeMap<&'p str, &'p str>,
    /// `None`: the pod has no annotation map.
    annotations: Option<BTreeMap<&'p str, &'p str>>,
    /// `spec` is an object (else the patch adds one).
    has_spec: bool,
    /// Names of `spec.containers`; `None` when the pod has no container list.
    containers: Option<Vec<&'p str>>,
}

/// A string map (`metadata.labels` / `metadata.annotations`): `None` when absent or null, an
/// error when not a map of strings (a typed decode, as upstream's, refuses it too).
fn strings<'p>(meta: &'p Value, key: &str) -> Result<Option<BTreeMap<&'p str, &'p str>>, String> {
    match meta.get(key) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::Object(map)) => map
            .iter()
            .map(|(k, v)| match v {
                Value::String(s) => Ok((k.as_str(), s.as_str())),
                _ => Err(format!("metadata.{key}[{k:?}] must be a string")),
            })
            .collect::<Result<_, _>>()
            .map(Some),
        Some(_) => Err(format!("metadata.{key} must be a map of strings")),
    }
}

impl<'p> PodView<'p> {
    fn read(pod: &'p Value) -> Result<PodView<'p>, String> {
        let meta = pod.get("metadata").filter(|m| !m.is_null());
        let has_metadata = match meta {
            None => false,
            Some(m) if m.is_object() => true,
            Some(_) => return Err("metadata must be an object".into()),
        };
        let (labels, annotations) = match meta {
            Some(m) => (
                strings(m, "labels")?.unwrap_or_default(),
                strings(m, "annotations")?,
            ),
            None => (BTreeMap::new(), None),
        };
        let spec = pod.get("spec").filter(|s| !s.is_null());
        let has_spec = match spec {
            None => false,
            Some(s) if s.is_object() => true,
            Some(_) => return Err("spec must be an object".into()),
        };
        let containers = match spec.and_then(|s| s.get("containers")) {
            None | Some(Value::Null) => None,
            Some(Value::Array(list)) => Some(
                list.iter()
                    .map(|c| c.get("name").and_then(Value::as_str).unwrap_or(""))
                    .collect(),
            ),
            Some(_) => return Err("spec.containers must be a list".into()),
        };
        Ok(PodView {
            has_metadata,
            labels,
            annotations,
            has_spec,
            containers,
        })
    }
}

/// Whether a pod of `namespace` with `pod_label` (its [`INJECT_LABEL`]) gets the agent, as
/// upstream decides: the pod's own `"true"`/`"false"` first, else the namespace's label.
fn injection_enabled(pod_label: Option<&str>, namespace: NamespaceLabel) -> bool {
    match pod_label {
        Some("true") => return true,
        Some("false") => return false,
        _ => {}
    }
    matches!(namespace, NamespaceLabel::Value(v) if v == NAMESPACE_ENABLED)
}

fn add(path: &str, value: Value) -> PatchOperation {
    PatchOperation::Add(AddOperation {
        path: PointerBuf::parse(path).expect("pointer built from fixed segments"),
        value,
    })
}

/// The `add`s that append `container` and mark the pod injected; nothing else of it changes.
fn patch(pod: &PodView, container: Value) -> Vec<PatchOperation> {
    let mut ops = Vec::with_capacity(2);
    ops.push(match (pod.has_spec, &pod.containers) {
        (false, _) => add("/spec", json!({ "containers": [container] })),
        (true, None) => add("/spec/containers", json!([container])),
        (true, Some(_)) => add("/spec/containers/-", container),
    });
    let marked = json!({ INJECTED_ANNOTATION: "true" });
    match (pod.has_metadata, &pod.annotations) {
        (false, _) => ops.push(add("/metadata", json!({ "annotations": marked }))),
        (true, None) => ops.push(add("/metadata/annotations", marked)),
        // Already marked: upstream's write of the same value changes nothing.
        (true, Some(a)) if a.get(INJECTED_ANNOTATION) == Some(&"true") => {}
        (true, Some(_)) => ops.push(add(INJECTED_POINTER, json!("true"))),
    }
    ops
}

impl TargetControlInjector {
    pub fn new(index: TargetControlIndex) -> Self {
        TargetControlInjector {
            index,
            sync_wait: Duration::from_secs(2),
        }
    }

    /// The patch for a pod created in `namespace`, from the synced index.
    fn decide(&self, namespace: &str, pod: &PodView) -> Result<Vec<PatchOperation>, AgentError> {
        let pod_label = pod.labels.get(INJECT_LABEL).copied();
        if !injection_enabled(pod_label, self.index.namespace_label(namespace)) {
            return Ok(Vec::new());
        }
        if pod
            .containers
            .as_ref()
            .is_some_and(|names| names.contains(&CONTAINER_NAME))
        {
            tracing::debug!("the pod has an ALB target control agent already");
            return Ok(Vec::new());
        }
        let Some(config) = self.index.config_for(namespace) else {
            tracing::debug!(
                namespace,
                "no ALBTargetControlConfig in the pod's namespace or kube-system: no injection"
            );
            return Ok(Vec::new());
        };
        let no_annotations = BTreeMap::new();
        let agent = Agent::new(&config, pod.annotations.as_ref().unwrap_or(&no_annotations))?;
        for (annotation, value) in &agent.ignored {
            tracing::warn!(
                namespace,
                annotation,
                value,
                "not a resource quantity: left out of the ALB target control agent, as upstream does"
            );
        }
        Ok(patch(pod, agent.container()))
    }

    /// Waits (at most `sync_wait`) for the index's first lists.
    async fn synced(&self) -> bool {
        let deadline = tokio::time::Instant::now() + self.sync_wait;
        while !self.index.synced() {
            if tokio::time::Instant::now() >= deadline {
                return false;
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        true
    }
}

#[async_trait::async_trait]
impl Handler for TargetControlInjector {
    fn mutating(&self) -> bool {
        true
    }

    async fn admit(&self, req: &AdmissionRequest) -> Decision {
        // Upstream mutates new pods only.
        if req.operation != Operation::Create {
            return Decision::Patch(Vec::new());
        }
        let Some(pod) = req.object.as_ref().filter(|p| p.is_object()) else {
            return Decision::errored("decodePod", "admission request carries no pod");
        };
        // Pods made from generateName may carry no namespace: the request's is authoritative.
        let Some(namespace) = req.namespace.as_deref() else {
            return Decision::errored("decodePod", "admission request has no namespace");
        };
        let view = match PodView::read(pod) {
            Ok(view) => view,
            Err(message) => return Decision::errored("decodePod", message),
        };
        // A pod that refuses the agent needs nothing from the index.
        if view.labels.get(INJECT_LABEL) == Some(&"false") {
            return Decision::Patch(Vec::new());
        }
        if !self.synced().await {
            return Decision::deny(
                CATEGORY,
                "unable to inject the ALB target control agent: the Namespace and \
                 ALBTargetControlConfig caches have not synced yet",
            );
        }
        match self.decide(namespace, &view) {
            Ok(ops) => Decision::Patch(ops),
            Err(refusal) => Decision::deny(CATEGORY, refusal.to_string()),
        }
    }
}

#[cfg(test)]
#[path = "target_control_tests.rs"]
mod tests;
