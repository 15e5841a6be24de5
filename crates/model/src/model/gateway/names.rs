//! Names and resource ids of a Gateway's AWS resources, hash-for-hash upstream's
//! (`pkg/gateway/model`): `k8s-<8 of ns>-<8 of name>-<10 hex of sha256>`.

use crate::model::naming::{service_scoped_name, sha256_hex};
use crate::model::types::{Protocol, ProtocolVersion, TargetType};

/// A Gateway's load balancer and managed security group are named exactly as a Service's NLB
/// and its group (hashes of cluster, UID and scheme; of cluster, name, namespace and UID).
pub use crate::model::naming::{
    service_load_balancer_name as load_balancer_name, service_managed_sg_name as managed_sg_name,
};

/// Inputs of a Gateway target group name, in upstream's hash order.
#[derive(Debug, Clone)]
pub struct TargetGroupNameInputs<'a> {
    pub cluster: &'a str,
    pub gateway_namespace: &'a str,
    pub gateway_name: &'a str,
    pub route_namespace: &'a str,
    pub route_name: &'a str,
    /// `HTTPRoute`, `TCPRoute`, ...
    pub route_kind: &'a str,
    pub service_namespace: &'a str,
    pub service_name: &'a str,
    /// The node port (instance targets) or the Service port's `targetPort` as written (ip).
    pub port: &'a str,
    pub target_type: TargetType,
    pub protocol: Protocol,
    pub protocol_version: Option<ProtocolVersion>,
    pub target_control_port: Option<i32>,
}

/// Target group name: `k8s-<8 of route ns>-<8 of route name>-<10 hex>`.
pub fn target_group_name(i: &TargetGroupNameInputs<'_>) -> String {
    name_of_type(i, i.target_type.as_str())
}

/// Name of the `alb`-type target group of a Gateway backend: the same hash with target type
/// `alb` (`i.target_type` is not read), the target Gateway where the Service would be and the
/// backendRef port as the port.
pub fn alb_target_group_name(i: &TargetGroupNameInputs<'_>) -> String {
    name_of_type(i, "alb")
}

fn name_of_type(i: &TargetGroupNameInputs<'_>, target_type: &str) -> String {
    let control = i.target_control_port.map(|p| p.to_string());
    let mut parts = vec![
        i.cluster,
        i.gateway_namespace,
        i.gateway_name,
        i.route_namespace,
        i.route_name,
        i.route_kind,
        i.service_namespace,
        i.service_name,
        i.port,
        target_type,
        i.protocol.as_str(),
    ];
    if let Some(v) = i.protocol_version {
        parts.push(v.as_str());
    }
    if let Some(c) = &control {
        parts.push(c);
    }
    service_scoped_name(i.route_namespace, i.route_name, &sha256_hex(&parts))
}

/// Target group resource id:
/// `<gwNs>/<gwName>:<routeNs>-<routeName>:<RouteKind>-<svcNs>-<svcName>:<targetPort>[-<ctl>]`.
pub fn target_group_id(i: &TargetGroupNameInputs<'_>, target_port: &str) -> String {
    let id = format!(
        "{}/{}:{}-{}:{}-{}-{}:{}",
        i.gateway_namespace,
        i.gateway_name,
        i.route_namespace,
        i.route_name,
        i.route_kind,
        i.service_namespace,
        i.service_name,
        target_port
    );
    match i.target_control_port {
        Some(c) => format!("{id}-{c}"),
        None => id,
    }
}
