//! `plan` for Gateways: collects GatewayClasses, Gateways, HTTPRoutes, GRPCRoutes, TCPRoutes,
//! UDPRoutes, TLSRoutes, ReferenceGrants (v1 or v1beta1) and the `gateway.k8s.aws` configuration
//! objects from the manifests and plans every Gateway of a class this controller owns
//! (`gateway.k8s.aws/alb`: ALB from HTTPRoutes and GRPCRoutes; `gateway.k8s.aws/nlb`: NLB from
//! TCPRoutes, UDPRoutes and TLSRoutes), with what route status would report.

use std::path::Path;

use anyhow::Context;
use gateway_api::apis::experimental::tcproutes::TcpRoute;
use gateway_api::apis::experimental::udproutes::UdpRoute;
use gateway_api::apis::standard::gatewayclasses::GatewayClass;
use gateway_api::apis::standard::gateways::Gateway;
use gateway_api::apis::standard::grpcroutes::GrpcRoute;
use gateway_api::apis::standard::httproutes::HttpRoute;
use gateway_api::apis::standard::listenersets::ListenerSet;
use gateway_api::apis::standard::referencegrants::ReferenceGrant;
use gateway_api::apis::standard::tlsroutes::TlsRoute;
use serde::Serialize;
use serde_json::Value;

use crate::crd::gateway::listener_rule_configuration::ListenerRuleConfigurationStatus;
use crate::crd::gateway::{
    ListenerRuleConfiguration, LoadBalancerConfiguration, TargetGroupConfiguration,
};
use crate::model::gateway::{
    build_alb_gateway_stack, build_nlb_gateway_stack, normalize_gateway, GatewayBuild,
    GatewayInputs, ALB_CONTROLLER_NAME, NLB_CONTROLLER_NAME,
};
use crate::model::{BuildEnv, ClusterObjects, ModelConfig, Stack};

/// The Gateway API objects of the manifests.
#[derive(Default)]
pub(crate) struct GatewayManifests {
    pub(crate) classes: Vec<GatewayClass>,
    pub(crate) gateways: Vec<Gateway>,
    pub(crate) http_routes: Vec<HttpRoute>,
    pub(crate) grpc_routes: Vec<GrpcRoute>,
    pub(crate) tcp_routes: Vec<TcpRoute>,
    pub(crate) udp_routes: Vec<UdpRoute>,
    pub(crate) tls_routes: Vec<TlsRoute>,
    pub(crate) reference_grants: Vec<ReferenceGrant>,
    pub(crate) lb_configs: Vec<LoadBalancerConfiguration>,
    pub(crate) tg_configs: Vec<TargetGroupConfiguration>,
    pub(crate) rule_configs: Vec<ListenerRuleConfiguration>,
    pub(crate) listener_sets: Vec<ListenerSet>,
}

fn parse<T: serde::de::DeserializeOwned + serde::Serialize + kube::ResourceExt>(
    doc: Value,
    file: &Path,
    kind: &str,
) -> anyhow::Result<T> {
    // Noting the fields the type drops, so the plan warns of them as the controller does.
    let mut o: T = crate::model::gateway::dropped::decode_noting_dropped(doc)
        .with_context(|| format!("{}: {kind}", file.display()))?;
    if o.meta().namespace.is_none() {
        o.meta_mut().namespace = Some("default".into());
    }
    Ok(o)
}

impl GatewayManifests {
    /// Keeps `doc` when it is one of the Gateway kinds `plan` reads; false otherwise.
    pub(crate) fn take(&mut self, doc: &Value, file: &Path) -> anyhow::Result<bool> {
        let kind = doc.get("kind").and_then(Value::as_str).unwrap_or("");
        let mut doc = doc.clone();
        match kind {
            "GatewayClass" => self.classes.push(
                serde_json::from_value(doc)
                    .with_context(|| format!("{}: GatewayClass", file.display()))?,
            ),
            "Gateway" => {
                normalize_gateway(&mut doc);
                self.gateways.push(parse(doc, file, kind)?)
            }
            "HTTPRoute" => self.http_routes.push(parse(doc, file, kind)?),
            "GRPCRoute" => self.grpc_routes.push(parse(doc, file, kind)?),
            "TCPRoute" => self.tcp_routes.push(parse(doc, file, kind)?),
            "UDPRoute" => self.udp_routes.push(parse(doc, file, kind)?),
            "TLSRoute" => self.tls_routes.push(parse(doc, file, kind)?),
            // v1beta1 (what upstream reads) and v1 have the same shape.
            "ReferenceGrant" => self.reference_grants.push(parse(doc, file, kind)?),
            "LoadBalancerConfiguration" => self.lb_configs.push(parse(doc, file, kind)?),
            "TargetGroupConfiguration" => self.tg_configs.push(parse(doc, file, kind)?),
            "ListenerRuleConfiguration" => self.rule_configs.push(parse(doc, file, kind)?),
            "ListenerSet" => self.listener_sets.push(parse(doc, file, kind)?),
            _ => return Ok(false),
        }
        Ok(true)
    }

    pub(crate) fn lb_config(
        &self,
        namespace: Option<&str>,
        name: &str,
    ) -> Option<&LoadBalancerConfiguration> {
        self.lb_configs.iter().find(|c| {
            c.metadata.name.as_deref() == Some(name) && c.metadata.namespace.as_deref() == namespace
        })
    }
}

/// One Gateway's plan.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
pub(super) struct GatewayPlan {
    gateway: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    stack: Option<Stack>,
    #[serde(skip_serializing_if = "Option::is_none")]
    error: Option<String>,
    /// What route status would report: refused attachments and left-out references.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    route_problems: Vec<RouteNote>,
}

impl GatewayPlan {
    /// Whether the Gateway failed its model build. Refused route attachments do not count: route
    /// status reports them and the Gateway is deployed without those routes, as in the cluster.
    pub(super) fn failed(&self) -> bool {
        self.error.is_some()
    }
}

/// One route status problem: `Kind ns/name`, upstream's reason and message.
#[derive(Serialize)]
pub(super) struct RouteNote {
    route: String,
    reason: String,
    message: String,
}

fn route_notes(b: &GatewayBuild) -> Vec<RouteNote> {
    let refused = b.attachment.refusals.iter().map(|r| RouteNote {
        route: format!("{} {}", r.kind.as_str(), r.route),
        reason: r.reason.into(),
        message: r.message.into(),
    });
    let problems = b.route_problems.iter().map(|p| RouteNote {
        route: format!(
            "{} {}/{}",
            p.route.kind.as_str(),
            p.route.namespace,
            p.route.name
        ),
        reason: p.reason.into(),
        message: p.message.clone(),
    });
    refused.chain(problems).collect()
}

/// What the ListenerRuleConfiguration reconciler would have written into a manifest's status:
/// accepted unless an OIDC action's Secret (in the configuration's namespace) is missing.
pub(crate) fn accept_rule_configs(
    configs: &[ListenerRuleConfiguration],
    objs: &ClusterObjects,
) -> Vec<ListenerRuleConfiguration> {
    configs
        .iter()
        .map(|c| {
            let mut c = c.clone();
            if c.status.as_ref().and_then(|s| s.accepted).is_none() {
                let ns = c
                    .metadata
                    .namespace
                    .clone()
                    .unwrap_or_else(|| "default".into());
                let missing = c
                    .spec
                    .actions
                    .iter()
                    .filter_map(|a| a.authenticate_oidc_config.as_ref())
                    .map(|o| o.secret.name.as_str())
                    .find(|name| objs.secret(&ns, name).is_none());
                c.status = Some(ListenerRuleConfigurationStatus {
                    observed_generation: None,
                    accepted: Some(missing.is_none()),
                    message: Some(match missing {
                        Some(name) => format!("secret [{ns}/{name}] not found"),
                        None => "Accepted".into(),
                    }),
                });
            }
            c
        })
        .collect()
}

/// Plans every Gateway whose class belongs to this controller; `vpc_cidrs` (`--vpc-file`) are
/// the node-rule sources of internal NLBs without security groups, as for Services.
pub(super) fn gateway_plans(
    m: &GatewayManifests,
    objs: &ClusterObjects,
    cfg: &ModelConfig,
    env: &BuildEnv,
    vpc_cidrs: Option<&[String]>,
) -> Vec<GatewayPlan> {
    let mut plans = Vec::new();
    let rule_configs = accept_rule_configs(&m.rule_configs, objs);
    for gw in &m.gateways {
        let ns = gw.metadata.namespace.as_deref().unwrap_or("default");
        let key = format!("{ns}/{}", gw.metadata.name.as_deref().unwrap_or_default());
        let Some(class) = m
            .classes
            .iter()
            .find(|c| c.metadata.name.as_deref() == Some(gw.spec.gateway_class_name.as_str()))
        else {
            continue;
        };
        let controller = class.spec.controller_name.as_str();
        // Gates `ALBGatewayAPI` / `NLBGatewayAPI`: off, that controller does not run.
        let gate_on = match controller {
            ALB_CONTROLLER_NAME => cfg.gate("ALBGatewayAPI"),
            NLB_CONTROLLER_NAME => cfg.gate("NLBGatewayAPI"),
            _ => false,
        };
        if !gate_on {
            continue;
        }
        let class_config = class
            .spec
            .parameters_ref
            .as_ref()
            .and_then(|p| m.lb_config(p.namespace.as_deref(), &p.name));
        let gateway_config = gw
            .spec
            .infrastructure
            .as_ref()
            .and_then(|i| i.parameters_ref.as_ref())
            .and_then(|p| m.lb_config(Some(ns), &p.name));
        let inputs = GatewayInputs {
            gateway: gw,
            class_config,
            gateway_config,
            http_routes: &m.http_routes,
            grpc_routes: &m.grpc_routes,
            tcp_routes: &m.tcp_routes,
            udp_routes: &m.udp_routes,
            tls_routes: &m.tls_routes,
            services: &objs.services,
            namespaces: &objs.namespaces,
            tg_configs: &m.tg_configs,
            reference_grants: &m.reference_grants,
            rule_configs: &rule_configs,
            secrets: &objs.secrets,
            // Chaining reads the target Gateway's status as the manifests give it; no
            // TargetGroupName is looked up (no AWS), so such a backend fails the plan.
            gateways: &m.gateways,
            // As the controller: ListenerSets only with the `GatewayListenerSet` gate.
            listener_sets: if cfg.gate("GatewayListenerSet") {
                &m.listener_sets
            } else {
                &[]
            },
            vpc_cidrs,
            ..GatewayInputs::new(gw)
        };
        let built = if controller == ALB_CONTROLLER_NAME {
            build_alb_gateway_stack(&inputs, cfg, env.subnets.as_deref())
        } else {
            build_nlb_gateway_stack(&inputs, cfg, env.subnets.as_deref())
        };
        let (stack, error, route_problems) = match built {
            Ok(b) => {
                let notes = route_notes(&b);
                (Some(b.stack), None, notes)
            }
            Err(e) => (None, Some(e.to_string()), Vec::new()),
        };
        plans.push(GatewayPlan {
            gateway: key,
            stack,
            error,
            route_problems,
        });
    }
    plans.sort_by(|a, b| a.gateway.cmp(&b.gateway));
    plans
}

#[cfg(test)]
#[path = "gateway_tests.rs"]
mod tests;
