//! Conversions between aws-sdk-elasticloadbalancingv2 types and ours: load balancers, target
//! groups, listeners (with the model's mutual authentication), tags and targets.

use aws_sdk_elasticloadbalancingv2::types as et;

use super::rules::{actions_from, cond_from, transform_from};
use crate::aws::error::{AwsError, Result};
use crate::aws::sdk::{os, s};
use crate::aws::types::*;
use crate::model::MutualAuthentication;

pub(super) fn tags_to(t: &Tags) -> Option<Vec<et::Tag>> {
    if t.is_empty() {
        return None;
    }
    Some(
        t.iter()
            .map(|(k, v)| et::Tag::builder().key(k).value(v).build())
            .collect(),
    )
}

pub(super) fn certs_to(arns: &[String]) -> Option<Vec<et::Certificate>> {
    if arns.is_empty() {
        return None;
    }
    Some(
        arns.iter()
            .map(|a| et::Certificate::builder().certificate_arn(a).build())
            .collect(),
    )
}

pub(super) fn mapping_to(m: &SubnetMapping) -> et::SubnetMapping {
    et::SubnetMapping::builder()
        .subnet_id(&m.subnet_id)
        .set_allocation_id(m.allocation_id.clone())
        .set_private_ipv4_address(m.private_ipv4_address.clone())
        .set_ipv6_address(m.ipv6_address.clone())
        .set_source_nat_ipv6_prefix(m.source_nat_ipv6_prefix.clone())
        .build()
}

pub(super) fn target_to(t: &TargetDescription) -> et::TargetDescription {
    et::TargetDescription::builder()
        .id(&t.id)
        .set_port(t.port.map(i32::from))
        .set_availability_zone(t.availability_zone.clone())
        .set_quic_server_id(t.quic_server_id.clone())
        .build()
}

pub(super) fn lb_from(l: &et::LoadBalancer) -> LoadBalancer {
    LoadBalancer {
        arn: s(l.load_balancer_arn()),
        name: s(l.load_balancer_name()),
        dns_name: s(l.dns_name()),
        canonical_hosted_zone_id: s(l.canonical_hosted_zone_id()),
        scheme: s(l.scheme().map(|v| v.as_str())),
        lb_type: s(l.r#type().map(|v| v.as_str())),
        ip_address_type: s(l.ip_address_type().map(|v| v.as_str())),
        vpc_id: s(l.vpc_id()),
        state: s(l.state().and_then(|st| st.code()).map(|v| v.as_str())),
        security_groups: l.security_groups().to_vec(),
        availability_zones: l
            .availability_zones()
            .iter()
            .map(|z| LbZone {
                zone_name: s(z.zone_name()),
                subnet_id: s(z.subnet_id()),
                addresses: z
                    .load_balancer_addresses()
                    .iter()
                    .map(|a| LbAddress {
                        allocation_id: os(a.allocation_id()),
                        private_ipv4_address: os(a.private_ipv4_address()),
                        ipv6_address: os(a.ipv6_address()),
                    })
                    .collect(),
            })
            .collect(),
        enable_prefix_for_ipv6_source_nat: l
            .enable_prefix_for_ipv6_source_nat()
            .map(|v| v.as_str().to_string()),
        enforce_private_link_inbound_rules: os(
            l.enforce_security_group_inbound_rules_on_private_link_traffic()
        ),
        customer_owned_ipv4_pool: os(l.customer_owned_ipv4_pool()),
        ipv4_ipam_pool_id: l.ipam_pools().and_then(|p| os(p.ipv4_ipam_pool_id())),
    }
}

pub(super) fn tg_from(t: &et::TargetGroup) -> TargetGroup {
    TargetGroup {
        arn: s(t.target_group_arn()),
        name: s(t.target_group_name()),
        protocol: t.protocol().map(|p| p.as_str().to_string()),
        protocol_version: os(t.protocol_version()),
        port: t.port().and_then(|p| u16::try_from(p).ok()),
        vpc_id: os(t.vpc_id()),
        target_type: s(t.target_type().map(|v| v.as_str())),
        ip_address_type: t.ip_address_type().map(|v| v.as_str().to_string()),
        health_check: DescribedHealthCheck {
            enabled: t.health_check_enabled(),
            protocol: t.health_check_protocol().map(|p| p.as_str().to_string()),
            port: os(t.health_check_port()),
            path: os(t.health_check_path()),
            interval_seconds: t.health_check_interval_seconds(),
            timeout_seconds: t.health_check_timeout_seconds(),
            healthy_threshold: t.healthy_threshold_count(),
            unhealthy_threshold: t.unhealthy_threshold_count(),
            matcher_http_code: os(t.matcher().and_then(|m| m.http_code())),
            matcher_grpc_code: os(t.matcher().and_then(|m| m.grpc_code())),
        },
        target_control_port: t.target_control_port(),
        load_balancer_arns: t.load_balancer_arns().to_vec(),
    }
}

pub(super) fn health_from(h: &et::TargetHealthDescription) -> TargetHealthDescription {
    let t = h.target();
    let th = h.target_health();
    TargetHealthDescription {
        target: TargetDescription {
            id: s(t.and_then(|t| t.id())),
            port: t.and_then(|t| t.port()).and_then(|p| u16::try_from(p).ok()),
            availability_zone: os(t.and_then(|t| t.availability_zone())),
            quic_server_id: os(t.and_then(|t| t.quic_server_id())),
        },
        health_check_port: os(h.health_check_port()),
        health: TargetHealth {
            state: th
                .and_then(|x| x.state())
                .and_then(|st| TargetHealthState::parse(st.as_str()))
                .unwrap_or(TargetHealthState::Unavailable),
            reason: th.and_then(|x| x.reason()).map(|r| r.as_str().to_string()),
            description: os(th.and_then(|x| x.description())),
        },
    }
}

pub(super) fn listener_from(l: &et::Listener) -> Listener {
    Listener {
        arn: s(l.listener_arn()),
        load_balancer_arn: s(l.load_balancer_arn()),
        port: l
            .port()
            .and_then(|p| u16::try_from(p).ok())
            .unwrap_or_default(),
        protocol: s(l.protocol().map(|p| p.as_str())),
        ssl_policy: os(l.ssl_policy()),
        certificates: l
            .certificates()
            .iter()
            .filter_map(|c| os(c.certificate_arn()))
            .collect(),
        alpn_policy: l.alpn_policy().to_vec(),
        default_actions: actions_from(l.default_actions()),
        mutual_authentication: l.mutual_authentication().map(|m| MutualAuthentication {
            mode: s(m.mode()),
            trust_store: os(m.trust_store_arn()),
            ignore_client_certificate_expiry: m.ignore_client_certificate_expiry(),
            advertise_trust_store_ca_names: m
                .advertise_trust_store_ca_names()
                .map(|v| v.as_str().to_string()),
        }),
    }
}

/// The listener's mutual authentication; its trust store must be an ARN by now (the deployer
/// resolves names with DescribeTrustStores first), a name is refused rather than sent.
pub(super) fn mtls_to(m: &MutualAuthentication) -> Result<et::MutualAuthenticationAttributes> {
    if let Some(name) = m.trust_store.as_deref().filter(|t| !t.starts_with("arn:")) {
        return Err(AwsError::Unresolved(format!(
            "mutual authentication: trust store {name:?} was not resolved to an ARN before the call"
        )));
    }
    Ok(et::MutualAuthenticationAttributes::builder()
        .mode(&m.mode)
        .set_trust_store_arn(m.trust_store.clone())
        .set_ignore_client_certificate_expiry(m.ignore_client_certificate_expiry)
        .set_advertise_trust_store_ca_names(
            m.advertise_trust_store_ca_names
                .as_deref()
                .map(et::AdvertiseTrustStoreCaNamesEnum::from),
        )
        .build())
}

pub(super) fn rule_from(r: &et::Rule) -> Rule {
    Rule {
        arn: s(r.rule_arn()),
        priority: s(r.priority()),
        is_default: r.is_default().unwrap_or(false),
        conditions: r.conditions().iter().filter_map(cond_from).collect(),
        actions: actions_from(r.actions()),
        transforms: r.transforms().iter().map(transform_from).collect(),
    }
}
