//! Namespace selectors of the Gateway API kinds (a listener's `allowedRoutes`, a Gateway's
//! `allowedListeners`) as Kubernetes label selectors, which the Ingress class's
//! `namespaceSelector` matching then applies.

use k8s_openapi::apimachinery::pkg::apis::meta::v1::LabelSelector;

/// A Gateway API namespace selector as a Kubernetes label selector (the schemas are field for
/// field the same; each generated kind has its own Rust type).
pub(super) fn as_label_selector<T: serde::Serialize>(s: &T) -> Option<LabelSelector> {
    serde_json::to_value(s)
        .and_then(serde_json::from_value)
        .ok()
}
