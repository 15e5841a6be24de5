//! Protocol and port auto-discovery (upstream's `endpoint_discovery.go`): what a listener left
//! without `protocol` or `portRanges` gets from its one endpoint — a Service's load balancer
//! ports in its status, an Ingress's ALB ports in its status, a Gateway's listeners, or the
//! listeners of the load balancer an EndpointID names (which the controller describes and hands
//! in on the loaded endpoint).

use std::collections::{BTreeMap, BTreeSet};

use gateway_api::apis::standard::gateways::Gateway;
use k8s_openapi::api::core::v1::Service;
use k8s_openapi::api::networking::v1::Ingress;

use super::endpoints::{ElbListener, EndpointResource, LoadedEndpoint};
use super::loader::{ingress_alb_dns, object_key};
use crate::crd::global_accelerator::{GlobalAccelerator, GlobalAcceleratorEndpointType};
use crate::model::types::aga::AgaProtocol;

/// Whether auto-discovery applies (upstream's `canApplyAutoDiscoveryForGA`): exactly one
/// listener, with one endpoint group of one endpoint, lacking `protocol` or `portRanges`, and
/// exactly one loaded endpoint that loaded (an EndpointID with its ARN, the others with their
/// object).
pub fn can_apply_auto_discovery(ga: &GlobalAccelerator, loaded: &[LoadedEndpoint]) -> bool {
    let Some([listener]) = ga.spec.listeners.as_deref() else {
        return false;
    };
    let Some([group]) = listener.endpoint_groups.as_deref() else {
        return false;
    };
    if group.endpoints.as_ref().map_or(0, Vec::len) != 1 {
        return false;
    }
    if listener.protocol.is_some() && listener.port_ranges.is_some() {
        return false;
    }
    let [endpoint] = loaded else {
        return false;
    };
    if !endpoint.is_usable() {
        return false;
    }
    match endpoint.endpoint_type {
        GlobalAcceleratorEndpointType::EndpointID => !endpoint.arn.is_empty(),
        _ => endpoint.resource.is_some(),
    }
}

/// The ports of one protocol an endpoint serves.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProtocolPorts {
    pub protocol: AgaProtocol,
    pub ports: Vec<i32>,
}

/// TCP then UDP, each only when it has ports.
fn by_protocol(tcp: Vec<i32>, udp: Vec<i32>) -> Vec<ProtocolPorts> {
    let mut out = Vec::new();
    if !tcp.is_empty() {
        out.push(ProtocolPorts {
            protocol: AgaProtocol::Tcp,
            ports: tcp,
        });
    }
    if !udp.is_empty() {
        out.push(ProtocolPorts {
            protocol: AgaProtocol::Udp,
            ports: udp,
        });
    }
    out
}

/// The protocols and ports of a loaded endpoint (upstream's `FetchProtocolPortInfo`).
pub fn protocol_ports(endpoint: &LoadedEndpoint) -> Result<Vec<ProtocolPorts>, String> {
    use GlobalAcceleratorEndpointType as T;
    if endpoint.endpoint_type != T::EndpointID && endpoint.resource.is_none() {
        return Err(format!(
            "kubernetes resource not available for endpoint {}/{}",
            endpoint.namespace, endpoint.name
        ));
    }
    let wrong = |kind: &str, got: &EndpointResource| -> Result<Vec<ProtocolPorts>, String> {
        Err(format!(
            "expected {kind} object for endpoint {} but got {}",
            got.key(),
            got.go_type()
        ))
    };
    match (endpoint.endpoint_type, &endpoint.resource) {
        (T::EndpointID, _) => {
            if endpoint.arn.is_empty() {
                return Err(
                    "endpoint ARN is not available for endpoint with EndpointID type".into(),
                );
            }
            load_balancer_protocol_ports(&endpoint.arn, endpoint.listeners.as_ref())
        }
        (T::Service, Some(EndpointResource::Service(svc))) => service_protocol_ports(svc),
        (T::Ingress, Some(EndpointResource::Ingress(ing))) => ingress_protocol_ports(ing),
        (T::Gateway, Some(EndpointResource::Gateway(gw))) => Ok(gateway_protocol_ports(gw)),
        (T::Service, Some(other)) => wrong("Service", other),
        (T::Ingress, Some(other)) => wrong("Ingress", other),
        (T::Gateway, Some(other)) => wrong("Gateway", other),
        (t, None) => Err(format!(
            "auto-discovery not supported for endpoint type {t}"
        )),
    }
}

/// The ports of the first load balancer entry of the Service's status, UDP apart from the rest;
/// one port under two protocols (a TCP_UDP listener) is refused.
pub fn service_protocol_ports(svc: &Service) -> Result<Vec<ProtocolPorts>, String> {
    let key = object_key(&svc.metadata);
    let ports = svc
        .status
        .as_ref()
        .and_then(|s| s.load_balancer.as_ref())
        .and_then(|lb| lb.ingress.as_ref())
        .and_then(|entries| entries.first())
        .and_then(|entry| entry.ports.as_ref())
        .filter(|ports| !ports.is_empty());
    let Some(ports) = ports else {
        return Err(format!(
            "no port information available in service status for endpoint {key}"
        ));
    };
    let mut seen: BTreeMap<i32, usize> = BTreeMap::new();
    for p in ports {
        *seen.entry(p.port).or_default() += 1;
    }
    if let Some((port, _)) = seen.iter().find(|(_, n)| **n > 1) {
        return Err(format!(
            "auto-discovery does not support TCP_UDP services on the same port {port} for endpoint {key}"
        ));
    }
    let (udp, tcp): (Vec<_>, Vec<_>) = ports.iter().partition(|p| p.protocol == "UDP");
    Ok(by_protocol(
        tcp.iter().map(|p| p.port).collect(),
        udp.iter().map(|p| p.port).collect(),
    ))
}

/// TCP on the ports of the status entry of the Ingress's ALB.
pub fn ingress_protocol_ports(ing: &Ingress) -> Result<Vec<ProtocolPorts>, String> {
    let entries = ing
        .status
        .as_ref()
        .and_then(|s| s.load_balancer.as_ref())
        .and_then(|lb| lb.ingress.as_deref())
        .unwrap_or_default();
    let mut tcp = Vec::new();
    if let Some(alb) = ingress_alb_dns(ing) {
        let entry = entries.iter().find(|e| {
            e.hostname.as_deref() == Some(alb) && e.ports.as_ref().is_some_and(|p| !p.is_empty())
        });
        if let Some(ports) = entry.and_then(|e| e.ports.as_ref()) {
            tcp = ports.iter().map(|p| p.port).collect();
        }
    }
    if tcp.is_empty() {
        return Err(format!(
            "no valid ports found for ingress {}",
            object_key(&ing.metadata)
        ));
    }
    Ok(vec![ProtocolPorts {
        protocol: AgaProtocol::Tcp,
        ports: tcp,
    }])
}

/// The Gateway's listener ports: UDP listeners as UDP, every other protocol (HTTP, HTTPS, TLS,
/// TCP) as TCP; none when it has no listeners.
pub fn gateway_protocol_ports(gw: &Gateway) -> Vec<ProtocolPorts> {
    let mut tcp = BTreeSet::new();
    let mut udp = BTreeSet::new();
    for listener in &gw.spec.listeners {
        if listener.protocol == "UDP" {
            udp.insert(listener.port);
        } else {
            tcp.insert(listener.port);
        }
    }
    by_protocol(tcp.into_iter().collect(), udp.into_iter().collect())
}

/// Upstream's `fetchLoadBalancerProtocolPortInfo`: the described listeners of the load balancer
/// `arn`, or why they are not there.
pub fn load_balancer_protocol_ports(
    arn: &str,
    listeners: Option<&Result<Vec<ElbListener>, String>>,
) -> Result<Vec<ProtocolPorts>, String> {
    let described = match listeners {
        Some(Ok(listeners)) => listeners,
        Some(Err(e)) => {
            return Err(format!(
                "failed to describe listeners for load balancer ARN {arn}: failed to describe listeners for load balancer {arn}: {e}"
            ))
        }
        None => {
            return Err(format!(
                "failed to describe listeners for load balancer ARN {arn}: the listeners were not described"
            ))
        }
    };
    let found = elb_listener_protocol_ports(arn, described)
        .map_err(|e| format!("failed to describe listeners for load balancer ARN {arn}: {e}"))?;
    if found.is_empty() {
        return Err(format!("no listeners found for load balancer ARN {arn}"));
    }
    Ok(found)
}

/// ELBv2 listeners as Global Accelerator protocols (upstream's `getProtocolPortFromELBListener`):
/// HTTP, HTTPS, TCP and TLS are TCP, UDP is UDP, anything else is refused.
pub fn elb_listener_protocol_ports(
    arn: &str,
    listeners: &[ElbListener],
) -> Result<Vec<ProtocolPorts>, String> {
    let mut tcp = Vec::new();
    let mut udp = Vec::new();
    for l in listeners {
        match l.protocol.as_str() {
            "HTTP" | "HTTPS" | "TCP" | "TLS" => tcp.push(l.port),
            "UDP" => udp.push(l.port),
            other => {
                return Err(format!(
                    "listener protocol {other} is not supported by Global Accelerator for load balancer {arn}"
                ))
            }
        }
    }
    Ok(by_protocol(tcp, udp))
}

/// The ARN whose listeners the controller must describe before building `ga`: the one
/// EndpointID endpoint, when auto-discovery applies to it ([`LoadedEndpoint::listeners`]).
pub fn listeners_to_describe<'a>(
    ga: &GlobalAccelerator,
    loaded: &'a [LoadedEndpoint],
) -> Option<&'a str> {
    if !can_apply_auto_discovery(ga, loaded) {
        return None;
    }
    loaded
        .first()
        .filter(|e| e.endpoint_type == GlobalAcceleratorEndpointType::EndpointID)
        .map(|e| e.arn.as_str())
}

#[cfg(test)]
#[path = "discovery_tests.rs"]
mod tests;
