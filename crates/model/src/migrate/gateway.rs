//! The GatewayClass and the Gateways (`translate/gateway.go`): one listener per listen port of
//! the group, the LoadBalancerConfiguration as `spec.infrastructure.parametersRef`, and routes
//! from every namespace allowed when the group spans namespaces.

use super::annotations::ListenPort;
use super::names::section_name;
use super::objects::{
    AllowedRoutes, Gateway, GatewayClass, GatewayClassSpec, GatewayInfrastructure, GatewayListener,
    GatewaySpec, LocalParametersReference, Meta, RouteNamespaces, ALB_GATEWAY_CONTROLLER,
    GATEWAY_API_VERSION,
};
use super::{GATEWAY_CLASS_NAME, LBC_GATEWAY_API_GROUP};
use crate::crd::gateway::LoadBalancerConfiguration;

/// The one GatewayClass of every run: `aws-alb`, controller `gateway.k8s.aws/alb`.
pub fn build_gateway_class() -> GatewayClass {
    GatewayClass {
        api_version: GATEWAY_API_VERSION.into(),
        kind: "GatewayClass".into(),
        metadata: Meta::named(GATEWAY_CLASS_NAME, None),
        spec: GatewayClassSpec {
            controller_name: ALB_GATEWAY_CONTROLLER.into(),
        },
    }
}

/// A Gateway with one listener per listen port (`http-80`, `https-443`); `cross_namespace_group`
/// non-empty lets routes of every namespace attach (`allowedRoutes.namespaces.from: All`).
pub fn build_gateway(
    name: &str,
    namespace: &str,
    lb_config: Option<&LoadBalancerConfiguration>,
    listen_ports: &[ListenPort],
    cross_namespace_group: &str,
) -> Gateway {
    let listeners = listen_ports
        .iter()
        .map(|lp| GatewayListener {
            name: section_name(&lp.protocol, lp.port),
            port: lp.port,
            protocol: to_alb_protocol(&lp.protocol).into(),
            allowed_routes: (!cross_namespace_group.is_empty()).then(|| AllowedRoutes {
                namespaces: Some(RouteNamespaces {
                    from: Some("All".into()),
                }),
            }),
        })
        .collect();
    Gateway {
        api_version: GATEWAY_API_VERSION.into(),
        kind: "Gateway".into(),
        metadata: Meta::named(name, Some(namespace)),
        spec: GatewaySpec {
            gateway_class_name: GATEWAY_CLASS_NAME.into(),
            infrastructure: lb_config.map(|c| GatewayInfrastructure {
                parameters_ref: Some(LocalParametersReference {
                    group: LBC_GATEWAY_API_GROUP.into(),
                    kind: "LoadBalancerConfiguration".into(),
                    name: c.metadata.name.clone().unwrap_or_default(),
                }),
            }),
            listeners,
        },
    }
}

/// HTTPS or HTTP (anything else reads as HTTP: an ALB has no other listener protocol).
pub fn to_alb_protocol(protocol: &str) -> &'static str {
    match protocol {
        "HTTPS" => "HTTPS",
        _ => "HTTP",
    }
}
