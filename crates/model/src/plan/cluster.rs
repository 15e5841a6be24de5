//! What the cluster adds to the manifests `plan` reads, so that it plans them as the
//! controller will see them: the chart's Service mutator webhook (a LoadBalancer Service without
//! a class is given `--load-balancer-class` when created), the IngressClass the chart creates,
//! and the finalizer the controller put on a Service whose manifest shows it being deleted.

use std::borrow::Cow;

use k8s_openapi::api::core::v1::Service;
use k8s_openapi::api::networking::v1::{IngressClass, IngressClassSpec};
use serde_json::Value;

use crate::model::group::INGRESS_CLASS_CONTROLLER;
use crate::model::service::mutator::{default_class_on_create, needs_class};
use crate::model::service::{self, SERVICE_FINALIZER};
use crate::model::{ClusterObjects, ModelConfig};

/// `doc` (any manifest) as the chart's Service mutator webhook admits it, with a note when it is
/// a Service the webhook acts on. The webhook acts on create only: a Service the manifest shows
/// as already created (`metadata.uid` or `creationTimestamp`, a dump of the cluster) keeps what
/// it has.
pub(super) fn admit_service(doc: &mut Value, class: &str) -> Option<String> {
    if doc.get("kind").and_then(Value::as_str) != Some("Service") || !needs_class(doc) {
        return None;
    }
    let meta = |k: &str| {
        doc.pointer(&format!("/metadata/{k}"))
            .and_then(Value::as_str)
            .map(str::to_string)
    };
    let key = format!(
        "{}/{}",
        meta("namespace").unwrap_or_else(|| "default".into()),
        meta("name").unwrap_or_default()
    );
    if meta("uid").is_some() || meta("creationTimestamp").is_some() {
        return Some(format!(
            "Service {key} exists (metadata.uid or creationTimestamp) without a spec.loadBalancerClass: the chart's Service mutator webhook acts on create only, so plan leaves it without one"
        ));
    }
    default_class_on_create(doc, class).then(|| {
        format!(
            "Service {key} has no spec.loadBalancerClass: plan gives it {class}, as the chart's Service mutator webhook does when it is created (enableServiceMutatorWebhook; --enable-service-mutator-webhook=false plans it as written)"
        )
    })
}

/// Adds the IngressClass the chart creates (`createIngressClassResource`: named after
/// `--ingress-class`, controller `ingress.k8s.aws/alb`, no parameters) unless the manifests
/// define one of that name; a note when an Ingress names it.
pub(crate) fn add_chart_ingress_class(objs: &mut ClusterObjects, name: &str) -> Option<String> {
    if name.is_empty()
        || objs
            .ingress_classes
            .iter()
            .any(|c| c.metadata.name.as_deref() == Some(name))
    {
        return None;
    }
    let mut class = IngressClass::default();
    class.metadata.name = Some(name.into());
    class.spec = Some(IngressClassSpec {
        controller: Some(INGRESS_CLASS_CONTROLLER.into()),
        parameters: None,
    });
    objs.ingress_classes.push(class);
    let named = objs.ingresses.iter().any(|i| {
        i.spec
            .as_ref()
            .and_then(|s| s.ingress_class_name.as_deref())
            == Some(name)
    });
    named.then(|| {
        format!(
            "IngressClass {name} is not in the manifests: plan uses the one the chart creates (createIngressClassResource: controller {INGRESS_CLASS_CONTROLLER}, no parameters; --create-ingress-class-resource=false plans without it)"
        )
    })
}

/// Why the Service controller takes a Service's stack apart (its plan is an empty stack).
pub(super) const BEING_DELETED: &str = "is being deleted (metadata.deletionTimestamp)";
/// See [`BEING_DELETED`].
pub(super) const NO_LONGER_QUALIFIES: &str =
    "no longer qualifies but holds the controller's finalizer";

/// The Service as the Service controller reconciles it, or None when the controller leaves it
/// alone (upstream: neither supported nor holding its finalizer); with why its stack is taken
/// apart, if it is. A manifest of a Service being deleted may leave out the finalizer the
/// controller put on it when it deployed the NLB: one that would qualify but for its deletion
/// is given it, so that its deletion is checked (deletion protection) as in the cluster.
pub(super) fn reconciled<'a>(
    svc: &'a Service,
    cfg: &ModelConfig,
) -> Option<(Cow<'a, Service>, Option<&'static str>)> {
    if service::is_service_supported(svc, cfg) {
        return Some((Cow::Borrowed(svc), None));
    }
    let deleting = svc.metadata.deletion_timestamp.is_some();
    let why = if deleting {
        BEING_DELETED
    } else {
        NO_LONGER_QUALIFIES
    };
    if service::is_pending_finalization(svc) {
        return Some((Cow::Borrowed(svc), Some(why)));
    }
    if !deleting {
        return None;
    }
    let mut alive = svc.clone();
    alive.metadata.deletion_timestamp = None;
    if !service::is_service_supported(&alive, cfg) {
        return None;
    }
    let mut held = svc.clone();
    held.metadata
        .finalizers
        .get_or_insert_with(Vec::new)
        .push(SERVICE_FINALIZER.into());
    Some((Cow::Owned(held), Some(why)))
}

#[cfg(test)]
#[path = "cluster_tests.rs"]
mod tests;
