//! TargetGroupBinding specs of a deployed stack: the model's specs with the target-group ARN
//! and security-group tokens resolved, ready for the reconciler to create/update the objects.

use std::collections::BTreeMap;

use super::error::Result;
use super::resolve::Resolved;
use crate::crd::target_group_binding::{
    NetworkingIngressRule, NetworkingProtocol, ServiceReference, TargetGroupBindingSpec,
    TargetGroupIpAddressType,
};
use crate::crd::tgb_shape;
use crate::model;

/// One TargetGroupBinding to create or update.
#[derive(Debug, Clone, PartialEq)]
pub struct ResolvedTargetGroupBinding {
    /// Model resource id (same as the target group's).
    pub id: String,
    pub name: String,
    pub namespace: String,
    pub labels: BTreeMap<String, String>,
    /// `Some`: the binding's labels and annotations are exactly the stack's (Gateway bindings,
    /// see [`model::TargetGroupBindingResource::annotations`]).
    pub annotations: Option<BTreeMap<String, String>>,
    pub spec: TargetGroupBindingSpec,
}

pub(crate) fn resolve(
    b: &model::TargetGroupBindingResource,
    r: &Resolved,
    vpc_id: &str,
) -> Result<ResolvedTargetGroupBinding> {
    let s = &b.spec;
    // Upstream's shape, never merged, so a binding upstream wrote reads back as exactly what we
    // want: Ingress (and Gateway) one rule per model rule, Service one rule with every port.
    let mut rules: Vec<NetworkingIngressRule> = Vec::new();
    for n in &s.networking {
        let from = [tgb_shape::security_group_peer(
            r.token(&n.from_security_group)?,
        )];
        let port = tgb_shape::port(
            n.protocol.unwrap_or(NetworkingProtocol::Tcp),
            n.port.clone(),
        );
        match rules.last_mut() {
            Some(last) if s.networking_one_rule && last.from == from => last.ports.push(port),
            _ => rules.extend(tgb_shape::rule_per_port(&from, [port])),
        }
    }
    // NLBs without security groups: rules from CIDR blocks, as the model ordered them.
    for c in &s.networking_from_cidrs {
        let from: Vec<_> = c
            .from_cidrs
            .iter()
            .map(|c| tgb_shape::cidr_peer(c.as_str()))
            .collect();
        rules.push(tgb_shape::one_rule(&from, c.ports.clone()));
    }
    let spec = TargetGroupBindingSpec {
        target_group_arn: r.token(&s.target_group_arn)?,
        multi_cluster_target_group: s.multi_cluster_target_group,
        target_type: Some(s.target_type),
        target_group_protocol: Some(s.target_group_protocol.into()),
        service_ref: ServiceReference {
            name: s.service_name.clone(),
            port: s.service_port.clone(),
        },
        networking: tgb_shape::networking(rules),
        node_selector: s.node_selector.clone(),
        ip_address_type: Some(if s.ip_address_type == "ipv6" {
            TargetGroupIpAddressType::Ipv6
        } else {
            TargetGroupIpAddressType::Ipv4
        }),
        vpc_id: s.vpc_id.clone().unwrap_or_else(|| vpc_id.to_string()),
        ..Default::default()
    };
    Ok(ResolvedTargetGroupBinding {
        id: b.id.clone(),
        name: b.name.clone(),
        namespace: b.namespace.clone(),
        labels: b.labels.clone(),
        annotations: b.annotations.clone(),
        spec,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::crd::target_group_binding::NetworkingPort;
    use crate::model::{CidrNetworkingRule, NetworkingRule, Protocol, TargetType, Token};
    use k8s_openapi::apimachinery::pkg::util::intstr::IntOrString;
    use serde_json::json;

    fn binding(
        one_rule: bool,
        cidrs: Vec<CidrNetworkingRule>,
    ) -> model::TargetGroupBindingResource {
        let rule = |proto, port| NetworkingRule {
            from_security_group: Token::Literal("sg-backend".into()),
            port: Some(IntOrString::Int(port)),
            protocol: Some(proto),
        };
        model::TargetGroupBindingResource {
            id: "ns/svc:53".into(),
            name: "k8s-ns-svc-0123456789".into(),
            namespace: "ns".into(),
            labels: Default::default(),
            annotations: None,
            spec: model::TargetGroupBindingModelSpec {
                target_group_arn: Token::Literal("arn:tg/1".into()),
                target_type: TargetType::Ip,
                service_name: "svc".into(),
                service_port: IntOrString::Int(53),
                networking: vec![
                    rule(NetworkingProtocol::Udp, 53),
                    rule(NetworkingProtocol::Tcp, 53),
                    rule(NetworkingProtocol::Tcp, 8080),
                ],
                node_selector: None,
                ip_address_type: "ipv4".into(),
                vpc_id: None,
                multi_cluster_target_group: false,
                target_group_protocol: Protocol::TcpUdp,
                networking_from_cidrs: cidrs,
                networking_one_rule: one_rule,
            },
        }
    }

    fn networking(b: &model::TargetGroupBindingResource) -> serde_json::Value {
        let r = resolve(b, &Resolved::default(), "vpc-1").unwrap();
        serde_json::to_value(r.spec.networking).unwrap()
    }

    #[test]
    fn service_bindings_hold_every_port_in_one_rule_as_upstream() {
        let sg = json!([{"securityGroup": {"groupID": "sg-backend"}}]);
        assert_eq!(
            networking(&binding(true, vec![])),
            json!({"ingress": [{"from": sg, "ports": [
                {"protocol": "UDP", "port": 53}, {"protocol": "TCP", "port": 53},
                {"protocol": "TCP", "port": 8080}]}]})
        );
        // Ingress (and Gateway) bindings: one rule per port, in model order.
        assert_eq!(
            networking(&binding(false, vec![])),
            json!({"ingress": [
                {"from": sg, "ports": [{"protocol": "UDP", "port": 53}]},
                {"from": sg, "ports": [{"protocol": "TCP", "port": 53}]},
                {"from": sg, "ports": [{"protocol": "TCP", "port": 8080}]}]})
        );
    }

    #[test]
    fn nlbs_without_security_groups_get_cidr_peers() {
        let mut b = binding(
            true,
            vec![CidrNetworkingRule {
                from_cidrs: vec!["10.0.0.0/24".into(), "10.0.1.0/24".into()],
                ports: vec![NetworkingPort {
                    protocol: Some(NetworkingProtocol::Tcp),
                    port: Some(IntOrString::Int(31000)),
                }],
            }],
        );
        b.spec.networking.clear();
        assert_eq!(
            networking(&b),
            json!({"ingress": [{"from": [{"ipBlock": {"cidr": "10.0.0.0/24"}}, {"ipBlock": {"cidr": "10.0.1.0/24"}}],
                "ports": [{"protocol": "TCP", "port": 31000}]}]})
        );
    }
}
