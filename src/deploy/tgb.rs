//! TargetGroupBinding specs of a deployed stack: the model's specs with the target-group ARN
//! and security-group tokens resolved, ready for the reconciler to create/update the objects.

use std::collections::BTreeMap;

use k8s_openapi::apimachinery::pkg::apis::meta::v1::LabelSelector;

use super::error::Result;
use super::normalize::Resolved;
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
    pub spec: TargetGroupBindingSpec,
}

pub(crate) fn resolve(
    b: &model::TargetGroupBindingResource,
    r: &Resolved,
    vpc_id: &str,
) -> Result<ResolvedTargetGroupBinding> {
    let s = &b.spec;
    // Upstream's shape: one rule per model rule (one port each), never merged, so a binding
    // upstream wrote reads back as exactly what we want.
    let mut rules: Vec<NetworkingIngressRule> = Vec::new();
    for n in &s.networking {
        let from = [tgb_shape::security_group_peer(
            r.token(&n.from_security_group)?,
        )];
        rules.extend(tgb_shape::rule_per_port(
            &from,
            [tgb_shape::port(
                n.protocol.unwrap_or(NetworkingProtocol::Tcp),
                n.port.clone(),
            )],
        ));
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
        node_selector: s.node_selector.as_ref().map(|m| LabelSelector {
            match_labels: Some(m.clone()),
            match_expressions: None,
        }),
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
        spec,
    })
}
