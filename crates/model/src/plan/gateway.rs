//! `plan` for Gateways: collects GatewayClasses, Gateways, HTTPRoutes, TCPRoutes, UDPRoutes and
//! the `gateway.k8s.aws` configuration objects from the manifests and plans every Gateway of a
//! class this controller owns (`gateway.k8s.aws/alb`: ALB from HTTPRoutes; `gateway.k8s.aws/nlb`:
//! NLB from TCPRoutes and UDPRoutes).

use std::path::Path;

use anyhow::Context;
use gateway_api::apis::experimental::tcproutes::TcpRoute;
use gateway_api::apis::experimental::udproutes::UdpRoute;
use gateway_api::apis::standard::gatewayclasses::GatewayClass;
use gateway_api::apis::standard::gateways::Gateway;
use gateway_api::apis::standard::httproutes::HttpRoute;
use serde::Serialize;
use serde_json::Value;

use crate::crd::gateway::{LoadBalancerConfiguration, TargetGroupConfiguration};
use crate::model::gateway::{
    build_alb_gateway_stack, build_nlb_gateway_stack, GatewayInputs, ALB_CONTROLLER_NAME,
    NLB_CONTROLLER_NAME,
};
use crate::model::{BuildEnv, ClusterObjects, ModelConfig, Stack};

/// The Gateway API objects of the manifests.
#[derive(Default)]
pub(super) struct GatewayManifests {
    classes: Vec<GatewayClass>,
    gateways: Vec<Gateway>,
    http_routes: Vec<HttpRoute>,
    tcp_routes: Vec<TcpRoute>,
    udp_routes: Vec<UdpRoute>,
    lb_configs: Vec<LoadBalancerConfiguration>,
    tg_configs: Vec<TargetGroupConfiguration>,
}

fn parse<T: serde::de::DeserializeOwned + kube::ResourceExt>(
    doc: Value,
    file: &Path,
    kind: &str,
) -> anyhow::Result<T> {
    let mut o: T =
        serde_json::from_value(doc).with_context(|| format!("{}: {kind}", file.display()))?;
    if o.meta().namespace.is_none() {
        o.meta_mut().namespace = Some("default".into());
    }
    Ok(o)
}

impl GatewayManifests {
    /// Keeps `doc` when it is one of the Gateway kinds `plan` reads; false otherwise.
    pub(super) fn take(&mut self, doc: &Value, file: &Path) -> anyhow::Result<bool> {
        let kind = doc.get("kind").and_then(Value::as_str).unwrap_or("");
        let doc = doc.clone();
        match kind {
            "GatewayClass" => self.classes.push(
                serde_json::from_value(doc)
                    .with_context(|| format!("{}: GatewayClass", file.display()))?,
            ),
            "Gateway" => self.gateways.push(parse(doc, file, kind)?),
            "HTTPRoute" => self.http_routes.push(parse(doc, file, kind)?),
            "TCPRoute" => self.tcp_routes.push(parse(doc, file, kind)?),
            "UDPRoute" => self.udp_routes.push(parse(doc, file, kind)?),
            "LoadBalancerConfiguration" => self.lb_configs.push(parse(doc, file, kind)?),
            "TargetGroupConfiguration" => self.tg_configs.push(parse(doc, file, kind)?),
            _ => return Ok(false),
        }
        Ok(true)
    }

    fn lb_config(&self, namespace: Option<&str>, name: &str) -> Option<&LoadBalancerConfiguration> {
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
}

/// Plans every Gateway whose class belongs to this controller.
pub(super) fn gateway_plans(
    m: &GatewayManifests,
    objs: &ClusterObjects,
    cfg: &ModelConfig,
    env: &BuildEnv,
) -> Vec<GatewayPlan> {
    let mut plans = Vec::new();
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
        if controller != ALB_CONTROLLER_NAME && controller != NLB_CONTROLLER_NAME {
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
            tcp_routes: &m.tcp_routes,
            udp_routes: &m.udp_routes,
            services: &objs.services,
            namespaces: &objs.namespaces,
            tg_configs: &m.tg_configs,
            ..GatewayInputs::new(gw)
        };
        let built = if controller == ALB_CONTROLLER_NAME {
            build_alb_gateway_stack(&inputs, cfg, env.subnets.as_deref())
        } else {
            build_nlb_gateway_stack(&inputs, cfg, env.subnets.as_deref())
        };
        let (stack, error) = match built {
            Ok(b) => (Some(b.stack), None),
            Err(e) => (None, Some(e.to_string())),
        };
        plans.push(GatewayPlan {
            gateway: key,
            stack,
            error,
        });
    }
    plans.sort_by(|a, b| a.gateway.cmp(&b.gateway));
    plans
}

#[cfg(test)]
#[path = "gateway_tests.rs"]
mod tests;
