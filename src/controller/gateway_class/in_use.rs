//! Who uses a configuration object, as upstream's deletion checks see it
//! (`gatewayutils/lb_config_utils.go`, `routeutils/listener_rule_config_utils.go`): pure
//! functions over the watched objects.

use std::sync::Arc;

use gateway_api::apis::standard::gatewayclasses::GatewayClass;
use gateway_api::apis::standard::gateways::Gateway;
use serde::Serialize;
use serde_json::Value;

use crate::crd::gateway::LoadBalancerConfiguration;
use crate::model::gateway::{ALB_CONTROLLER_NAME, NLB_CONTROLLER_NAME};

/// Kind a `parametersRef` names a LoadBalancerConfiguration with.
pub const LBC_KIND: &str = "LoadBalancerConfiguration";
/// Group and kind of a ListenerRuleConfiguration `ExtensionRef` filter.
pub const LRC_GROUP: &str = "gateway.k8s.aws";
pub const LRC_KIND: &str = "ListenerRuleConfiguration";

/// Either Gateway controller of this project (upstream's `FullGatewayControllerSet`): deletion
/// checks count users of both, whichever gates are on.
pub fn is_ours(controller_name: &str) -> bool {
    controller_name == ALB_CONTROLLER_NAME || controller_name == NLB_CONTROLLER_NAME
}

fn ns_of(meta: &k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta) -> &str {
    meta.namespace.as_deref().unwrap_or("default")
}

/// Whether the class's `parametersRef` names LoadBalancerConfiguration `ns/name` (kind
/// LoadBalancerConfiguration, namespace set).
pub fn class_names_lbc(class: &GatewayClass, ns: &str, name: &str) -> bool {
    class
        .spec
        .parameters_ref
        .as_ref()
        .is_some_and(|p| p.kind == LBC_KIND && p.namespace.as_deref() == Some(ns) && p.name == name)
}

/// Classes of `controllers` whose `parametersRef` names `ns/name`.
pub fn classes_using<'a>(
    classes: &'a [Arc<GatewayClass>],
    ns: &str,
    name: &str,
    controllers: impl Fn(&str) -> bool,
) -> Vec<&'a Arc<GatewayClass>> {
    classes
        .iter()
        .filter(|c| controllers(&c.spec.controller_name) && class_names_lbc(c, ns, name))
        .collect()
}

/// A Gateway whose class exists and belongs to one of our controllers.
pub fn gateway_is_ours(gw: &Gateway, classes: &[Arc<GatewayClass>]) -> bool {
    classes.iter().any(|c| {
        c.metadata.name.as_deref() == Some(gw.spec.gateway_class_name.as_str())
            && is_ours(&c.spec.controller_name)
    })
}

/// Whether LoadBalancerConfiguration `lbc` is used by a class or a Gateway of ours.
pub fn lbc_in_use(
    lbc: &LoadBalancerConfiguration,
    classes: &[Arc<GatewayClass>],
    gateways: &[Arc<Gateway>],
) -> bool {
    let ns = ns_of(&lbc.metadata);
    let name = lbc.metadata.name.as_deref().unwrap_or_default();
    if !classes_using(classes, ns, name, is_ours).is_empty() {
        return true;
    }
    gateways.iter().any(|gw| {
        ns_of(&gw.metadata) == ns
            && gw
                .spec
                .infrastructure
                .as_ref()
                .and_then(|i| i.parameters_ref.as_ref())
                .is_some_and(|p| p.kind == LBC_KIND && p.name == name)
            && gateway_is_ours(gw, classes)
    })
}

/// `ns/name` of each Gateway of ours whose `Accepted` condition is True.
pub fn accepted_gateways(gateways: &[Arc<Gateway>], classes: &[Arc<GatewayClass>]) -> Vec<String> {
    gateways
        .iter()
        .filter(|gw| gateway_is_ours(gw, classes))
        .filter(|gw| {
            gw.status
                .as_ref()
                .and_then(|s| s.conditions.as_ref())
                .is_some_and(|cs| {
                    cs.iter()
                        .any(|c| c.type_ == "Accepted" && c.status == "True")
                })
        })
        .map(|gw| {
            format!(
                "{}/{}",
                ns_of(&gw.metadata),
                gw.metadata.name.as_deref().unwrap_or_default()
            )
        })
        .collect()
}

/// Names of the ListenerRuleConfigurations a route's rules reference through `ExtensionRef`
/// filters (HTTPRoute and GRPCRoute rules share the shape).
pub fn rule_config_refs<S: Serialize>(spec: &S) -> Vec<String> {
    let spec = serde_json::to_value(spec).unwrap_or(Value::Null);
    let rules = spec.get("rules").and_then(Value::as_array);
    rules
        .into_iter()
        .flatten()
        .filter_map(|r| r.get("filters").and_then(Value::as_array))
        .flatten()
        .filter(|f| f.get("type").and_then(Value::as_str) == Some("ExtensionRef"))
        .filter_map(|f| f.get("extensionRef"))
        .filter(|e| {
            e.get("group").and_then(Value::as_str) == Some(LRC_GROUP)
                && e.get("kind").and_then(Value::as_str) == Some(LRC_KIND)
        })
        .filter_map(|e| e.get("name").and_then(Value::as_str).map(String::from))
        .collect()
}
