//! Desired state of a Gateway: an ALB from a Gateway of an `gateway.k8s.aws/alb` class and its
//! HTTPRoutes and GRPCRoutes (an NLB from the TCPRoutes, UDPRoutes and TLSRoutes of a
//! `gateway.k8s.aws/nlb` class), as pure functions of the Gateway API objects (types of the
//! `gateway-api` crate), the `gateway.k8s.aws` configuration objects, ReferenceGrants, Services
//! and Secrets — names and tags hash-identical to
//! upstream's `pkg/gateway/model`, rule order as `routeutils/route_rule_precedence.go`.
//!
//! This module holds what a Gateway's stack is built from (`GatewayInputs`), the floor every
//! step below stands on. One small module per concept: `routes` (what a route says, defaults
//! applied), `listeners` (Gateway listeners validated and grouped by port), `listener_sets`
//! (ListenerSets lending the Gateway listeners), `selectors` (namespace selectors), `attach`
//! (which route attaches to which listener, with the refusals route status reports), `offered`
//! (the listeners step: all of those together), `precedence` (rule order), `conditions`
//! (match → ALB conditions), `grants` (ReferenceGrants), `backends` and `load` (what attached
//! routes reference: rule configurations and Service, Gateway and TargetGroupName backends,
//! with the problems route status reports), `actions` and `transforms` (filters and
//! ListenerRuleConfigurations → rule actions and transforms), `load_balancer` (the load
//! balancer step, with `lb_config`, `lb_security` and `lb_subnets`), `tg_context` and
//! `target_groups` (the target groups step: backends → target groups and bindings; `alb`-type
//! target groups for Gateway backends), `alb` and `l4` (the listeners and rules step of each
//! load balancer kind), `certificates` (their certificates, or the hosts ACM discovery covers),
//! `names`, `unread`, `unread_config`, `unread_props` and `unread_rules` (Warnings for inputs
//! upstream accepts and ignores), and `build` on top (the steps in order).

mod actions;
pub mod addons;
mod alb;
mod alb_health;
mod alb_targets;
pub mod attach;
pub mod backends;
pub mod build;
mod certificates;
pub mod conditions;
pub mod dropped;
pub mod grants;
mod l4;
mod lb_config;
mod lb_security;
mod lb_subnets;
pub mod listener_sets;
pub mod listeners;
pub mod load;
mod load_balancer;
pub mod names;
mod offered;
pub mod precedence;
pub mod refused;
pub mod routes;
mod selectors;
pub mod target_groups;
mod tg_context;
mod tg_props;
mod tgb_networking;
mod transforms;
mod unread;
mod unread_config;
mod unread_props;
mod unread_rules;

use std::collections::BTreeMap;

use gateway_api::apis::experimental::tcproutes::TcpRoute;
use gateway_api::apis::experimental::udproutes::UdpRoute;
use gateway_api::apis::standard::gateways::Gateway;
use gateway_api::apis::standard::grpcroutes::GrpcRoute;
use gateway_api::apis::standard::httproutes::HttpRoute;
use gateway_api::apis::standard::listenersets::ListenerSet;
use gateway_api::apis::standard::referencegrants::ReferenceGrant;
use gateway_api::apis::standard::tlsroutes::TlsRoute;
use k8s_openapi::api::core::v1::{Namespace, Secret, Service};

use crate::crd::gateway::{
    ListenerRuleConfiguration, LoadBalancerConfiguration, TargetGroupConfiguration,
};
use crate::model::env::ExistingNlb;

pub use build::{build_alb_gateway_stack, build_nlb_gateway_stack, gateway_routes, GatewayBuild};

/// Controller name of ALB GatewayClasses.
pub const ALB_CONTROLLER_NAME: &str = "gateway.k8s.aws/alb";
/// Controller name of NLB GatewayClasses.
pub const NLB_CONTROLLER_NAME: &str = "gateway.k8s.aws/nlb";

/// Finalizer of ALB Gateways (upstream's controller name doubles as its finalizer).
pub const ALB_GATEWAY_FINALIZER: &str = "gateway.k8s.aws/alb";
/// Finalizer of NLB Gateways.
pub const NLB_GATEWAY_FINALIZER: &str = "gateway.k8s.aws/nlb";
/// Finalizer of GatewayClasses this controller accepted.
pub const GATEWAY_CLASS_FINALIZER: &str = "gateway.k8s.aws/gatewayclass";
/// Finalizers of the configuration objects a Gateway or class uses.
pub const LOAD_BALANCER_CONFIGURATION_FINALIZER: &str =
    "gateway.k8s.aws/loadbalancerconfigurations";
pub const TARGET_GROUP_CONFIGURATION_FINALIZER: &str = "gateway.k8s.aws/targetgroupconfigurations";
pub const LISTENER_RULE_CONFIGURATION_FINALIZER: &str =
    "gateway.k8s.aws/listenerruleconfigurations";
/// GatewayClass annotation: the configuration version the class last processed; a Gateway
/// waits until it equals [`processed_config_version`] of the class's current configuration.
pub const LAST_PROCESSED_CONFIG_ANNOTATION: &str = "elbv2.k8s.aws/last-processed-config";
/// GatewayClass annotation: when (unix seconds) it last processed a configuration.
pub const LAST_PROCESSED_CONFIG_TIMESTAMP_ANNOTATION: &str =
    "elbv2.k8s.aws/last-processed-config-timestamp";
/// Gateway annotation asking for a plan instead of a deploy, and where the plan is written.
pub const DRY_RUN_ANNOTATION: &str = "gateway.k8s.aws/dry-run";
pub const DRY_RUN_PLAN_ANNOTATION: &str = "gateway.k8s.aws/dry-run-plan";

/// Upstream's processed-configuration version of a class: "" without a LoadBalancerConfiguration,
/// else its resourceVersion, followed by `-<resourceVersion>` of the default
/// TargetGroupConfiguration it names, if any.
pub fn processed_config_version(
    lbc: Option<&LoadBalancerConfiguration>,
    default_tgc: Option<&TargetGroupConfiguration>,
) -> String {
    let Some(lbc) = lbc else {
        return String::new();
    };
    let mut v = lbc.metadata.resource_version.clone().unwrap_or_default();
    if let Some(tgc) = default_tgc {
        v.push('-');
        v.push_str(tgc.metadata.resource_version.as_deref().unwrap_or_default());
    }
    v
}

/// Rewrites what the `gateway-api` crate cannot read in a Gateway manifest (JSON) into its
/// equivalent: `allowedRoutes.namespaces.from: None` (the crate's enum lacks it) becomes
/// `Selector` without a selector, which upstream and [`attach`] refuse for every namespace too.
pub fn normalize_gateway(doc: &mut serde_json::Value) {
    let listeners = doc
        .pointer_mut("/spec/listeners")
        .and_then(|l| l.as_array_mut());
    for l in listeners.into_iter().flatten() {
        let Some(ns) = l.pointer_mut("/allowedRoutes/namespaces") else {
            continue;
        };
        if ns.get("from").and_then(|f| f.as_str()) == Some("None") {
            ns["from"] = "Selector".into();
            if let Some(o) = ns.as_object_mut() {
                o.remove("selector");
            }
        }
    }
}

/// Everything one Gateway's stack is built from.
#[derive(Debug, Clone, Copy)]
pub struct GatewayInputs<'a> {
    pub gateway: &'a Gateway,
    /// The LoadBalancerConfiguration the GatewayClass's `parametersRef` names, if any.
    pub class_config: Option<&'a LoadBalancerConfiguration>,
    /// The LoadBalancerConfiguration the Gateway's `spec.infrastructure.parametersRef` names.
    pub gateway_config: Option<&'a LoadBalancerConfiguration>,
    pub http_routes: &'a [HttpRoute],
    /// TCPRoutes and UDPRoutes (NLB Gateways).
    pub tcp_routes: &'a [TcpRoute],
    pub udp_routes: &'a [UdpRoute],
    /// GRPCRoutes (ALB Gateways).
    pub grpc_routes: &'a [GrpcRoute],
    /// TLSRoutes (NLB Gateways).
    pub tls_routes: &'a [TlsRoute],
    pub services: &'a [Service],
    pub namespaces: &'a [Namespace],
    pub tg_configs: &'a [TargetGroupConfiguration],
    /// ReferenceGrants of every namespace (cross-namespace backendRefs need one).
    pub reference_grants: &'a [ReferenceGrant],
    /// ListenerRuleConfigurations (ExtensionRef filters of HTTPRoute/GRPCRoute rules).
    pub rule_configs: &'a [ListenerRuleConfiguration],
    /// Secrets the rule configurations' OIDC actions name (client id and secret).
    pub secrets: &'a [Secret],
    /// Gateways that routes name as backends (kind `Gateway`, NLB → ALB chaining): the ALB's
    /// ARN is read from their `Programmed=True` condition message.
    pub gateways: &'a [Gateway],
    /// ARNs of the existing target groups that `TargetGroupName` backends name, as the
    /// controller looked them up by name before the build (`Err`: why the lookup failed).
    pub target_group_arns: &'a BTreeMap<String, Result<String, String>>,
    /// ListenerSets (empty unless the `GatewayListenerSet` gate is on); those naming the
    /// Gateway that it allows add their listeners.
    pub listener_sets: &'a [ListenerSet],
    /// The VPC's CIDR blocks (node rules of an internal NLB without security groups); None
    /// when unknown (a plan from manifests).
    pub vpc_cidrs: Option<&'a [String]>,
    /// The NLB already tagged with the Gateway's stack (NLB Gateways; None in a plan from
    /// manifests): AWS limits how its security groups may change.
    pub existing_load_balancer: Option<&'a ExistingNlb>,
}

/// No target group looked up (the default of [`GatewayInputs::new`]).
static NO_TARGET_GROUP_ARNS: BTreeMap<String, Result<String, String>> = BTreeMap::new();

impl<'a> GatewayInputs<'a> {
    /// Inputs of `gateway` with no configuration, route or other object yet; callers fill what
    /// they have with struct update syntax (`GatewayInputs { http_routes: &r, ..GatewayInputs::new(&gw) }`).
    pub fn new(gateway: &'a Gateway) -> Self {
        Self {
            gateway,
            class_config: None,
            gateway_config: None,
            http_routes: &[],
            tcp_routes: &[],
            udp_routes: &[],
            grpc_routes: &[],
            tls_routes: &[],
            services: &[],
            namespaces: &[],
            tg_configs: &[],
            reference_grants: &[],
            rule_configs: &[],
            secrets: &[],
            gateways: &[],
            target_group_arns: &NO_TARGET_GROUP_ARNS,
            listener_sets: &[],
            vpc_cidrs: None,
            existing_load_balancer: None,
        }
    }
    fn service(&self, namespace: &str, name: &str) -> Option<&'a Service> {
        self.services.iter().find(|s| {
            s.metadata.namespace.as_deref().unwrap_or("default") == namespace
                && s.metadata.name.as_deref() == Some(name)
        })
    }

    fn namespace_labels(&self, namespace: &str) -> BTreeMap<String, String> {
        self.namespaces
            .iter()
            .find(|n| n.metadata.name.as_deref() == Some(namespace))
            .and_then(|n| n.metadata.labels.clone())
            .unwrap_or_default()
    }

    /// `ns/name` of the Gateway: its stack id.
    pub fn key(&self) -> String {
        format!("{}/{}", self.gateway_namespace(), self.gateway_name())
    }

    fn gateway_namespace(&self) -> &str {
        self.gateway
            .metadata
            .namespace
            .as_deref()
            .unwrap_or("default")
    }

    fn gateway_name(&self) -> &str {
        self.gateway.metadata.name.as_deref().unwrap_or_default()
    }
}

#[cfg(test)]
mod tests;
