//! The controller's own Gateway API configuration CRDs, group `gateway.k8s.aws`:
//! LoadBalancerConfiguration, TargetGroupConfiguration and ListenerRuleConfiguration. `v1` is the
//! storage version; `v1beta1` is served with the same schema and upstream's deprecation warning,
//! so objects written by upstream through either version keep working.

pub mod listener_rule_configuration;
pub mod load_balancer_configuration;
pub mod target_group_configuration;

use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
use kube::CustomResourceExt;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

pub use listener_rule_configuration::{
    ListenerRuleConfiguration, ListenerRuleConfigurationSpec, ListenerRuleConfigurationStatus,
};
pub use load_balancer_configuration::{
    LoadBalancerConfiguration, LoadBalancerConfigurationSpec, LoadBalancerConfigurationStatus,
};
pub use target_group_configuration::{
    TargetGroupConfiguration, TargetGroupConfigurationSpec, TargetGroupConfigurationStatus,
};

/// The API group of the three configuration kinds.
pub const GROUP: &str = "gateway.k8s.aws";

/// What a `parametersRef` (`field`, of a GatewayClass or a Gateway's `spec.infrastructure`)
/// naming `group`/`kind` gets told when that is not a LoadBalancerConfiguration: as upstream, the
/// reference is read by name as one anyway (a Warning, not a refusal, so no class or Gateway
/// changes state on a switch); `None` when it names a LoadBalancerConfiguration.
pub fn foreign_parameters_ref(field: &str, group: &str, kind: &str, name: &str) -> Option<String> {
    (group != GROUP || kind != LOAD_BALANCER_CONFIGURATION_KIND).then(|| {
        format!(
            "{field} names {kind} {name:?} of group {group:?}: only {LOAD_BALANCER_CONFIGURATION_KIND} ({GROUP}) parameters are read, so the {LOAD_BALANCER_CONFIGURATION_KIND} named {name:?} is looked up instead"
        )
    })
}

/// The kind `parametersRef`s name.
pub const LOAD_BALANCER_CONFIGURATION_KIND: &str = "LoadBalancerConfiguration";

/// A load balancer, listener or target group attribute.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, Eq, Default, JsonSchema)]
pub struct KeyValue {
    /// The attribute key.
    pub key: String,
    /// The attribute value.
    pub value: String,
}

/// The three CRDs, each with its `v1` (storage) version and a served `v1beta1` copy.
pub fn crds() -> Vec<CustomResourceDefinition> {
    vec![
        with_deprecated_v1beta1(ListenerRuleConfiguration::crd()),
        with_deprecated_v1beta1(LoadBalancerConfiguration::crd()),
        with_deprecated_v1beta1(TargetGroupConfiguration::crd()),
    ]
}

/// Adds the `v1beta1` version upstream still serves: the `v1` schema, not stored, deprecated with
/// upstream's warning. Also makes `spec` optional at the root as upstream's schema has it (its
/// Go field is `omitempty`).
fn with_deprecated_v1beta1(mut crd: CustomResourceDefinition) -> CustomResourceDefinition {
    let kind = crd.spec.names.kind.clone();
    for version in &mut crd.spec.versions {
        if let Some(root) = version
            .schema
            .as_mut()
            .and_then(|s| s.open_api_v3_schema.as_mut())
        {
            if let Some(required) = root.required.as_mut() {
                required.retain(|r| r != "spec");
                if required.is_empty() {
                    root.required = None;
                }
            }
        }
    }
    mark_label_selectors_atomic(&mut crd);
    let mut beta = crd.spec.versions[0].clone();
    beta.name = "v1beta1".into();
    beta.storage = false;
    beta.served = true;
    beta.deprecated = Some(true);
    beta.deprecation_warning = Some(format!(
        "{GROUP}/v1beta1 {kind} is deprecated; use {GROUP}/v1 instead"
    ));
    crd.spec.versions.push(beta);
    crd
}

/// controller-gen marks `metav1.LabelSelector` (here `nodeSelector`) atomic; k8s-openapi's schema
/// lacks the markers, so add them where a LabelSelector-shaped object appears.
fn mark_label_selectors_atomic(crd: &mut CustomResourceDefinition) {
    fn walk(v: &mut serde_json::Value) {
        let Some(map) = v.as_object_mut() else {
            if let Some(items) = v.as_array_mut() {
                items.iter_mut().for_each(walk);
            }
            return;
        };
        let is_selector = map
            .get("properties")
            .and_then(|p| p.as_object())
            .is_some_and(|p| p.contains_key("matchExpressions") && p.contains_key("matchLabels"));
        if is_selector {
            map.insert("x-kubernetes-map-type".into(), "atomic".into());
            if let Some(exprs) = map
                .get_mut("properties")
                .and_then(|p| p.get_mut("matchExpressions"))
            {
                exprs["x-kubernetes-list-type"] = "atomic".into();
                if let Some(values) = exprs
                    .get_mut("items")
                    .and_then(|i| i.get_mut("properties"))
                    .and_then(|p| p.get_mut("values"))
                {
                    values["x-kubernetes-list-type"] = "atomic".into();
                }
            }
        }
        map.values_mut().for_each(walk);
    }
    for version in &mut crd.spec.versions {
        let Some(schema) = version.schema.as_mut() else {
            continue;
        };
        let Ok(mut value) = serde_json::to_value(&*schema) else {
            continue;
        };
        walk(&mut value);
        if let Ok(marked) = serde_json::from_value(value) {
            *schema = marked;
        }
    }
}

#[cfg(test)]
mod tests;
