//! Model values for tests and benchmarks that create AWS resources directly: the AWS layer's
//! CreateLoadBalancer / CreateTargetGroup take the model's load balancer and target group, as
//! the deployer hands them over. Defaults are AWS's own (health check every 30 s, 5 / 2
//! thresholds), so a resource made here describes as one made with the AWS defaults would.

use std::collections::BTreeMap;

use crate::model::{
    HealthCheck, IpAddressType, LoadBalancer, LoadBalancerScheme, Protocol, Subnets, TargetGroup,
    TargetType, Token,
};

/// AWS's default health check for a target group of `protocol`: HTTP(S) ones on `/` with
/// `200`, the others (TCP, UDP, TLS...) over TCP without path or matcher.
pub fn health_check(protocol: Protocol) -> HealthCheck {
    let http = matches!(protocol, Protocol::Http | Protocol::Https);
    HealthCheck {
        port: "traffic-port".into(),
        protocol: if http { protocol } else { Protocol::Tcp },
        path: if http { "/".into() } else { String::new() },
        matcher: if http {
            [("httpCode".to_string(), "200".to_string())].into()
        } else {
            BTreeMap::new()
        },
        interval_seconds: 30,
        timeout_seconds: if http { 5 } else { 10 },
        healthy_threshold_count: 5,
        unhealthy_threshold_count: 2,
    }
}

/// A target group `name` (also its resource id) of `target_type` on `protocol` / `port`, IPv4,
/// with AWS's default health check, no attributes and no tags.
pub fn target_group(
    name: &str,
    target_type: TargetType,
    protocol: Protocol,
    port: i32,
) -> TargetGroup {
    TargetGroup {
        id: name.to_string(),
        name: name.to_string(),
        target_type,
        port,
        protocol,
        protocol_version: None,
        ip_address_type: "ipv4".into(),
        health_check: health_check(protocol),
        target_control_port: None,
        attributes: BTreeMap::new(),
        tags: BTreeMap::new(),
        service_uid: String::new(),
    }
}

/// An HTTP `ip` target group on `port`.
pub fn ip_target_group(name: &str, port: i32) -> TargetGroup {
    target_group(name, TargetType::Ip, Protocol::Http, port)
}

/// A load balancer `name` of `lb_type` (`application` / `network`) in these subnets with these
/// security group ids, IPv4, no attributes and no tags.
pub fn load_balancer(
    name: &str,
    lb_type: &str,
    scheme: LoadBalancerScheme,
    subnets: &[String],
    security_groups: &[String],
) -> LoadBalancer {
    LoadBalancer {
        id: "LoadBalancer".into(),
        name: name.to_string(),
        lb_type: lb_type.to_string(),
        scheme,
        ip_address_type: IpAddressType::Ipv4,
        subnets: Subnets::Resolved(subnets.to_vec()),
        security_groups: security_groups
            .iter()
            .map(|g| Token::Literal(g.clone()))
            .collect(),
        security_group_names_or_ids: Vec::new(),
        customer_owned_ipv4_pool: None,
        ipv4_ipam_pool_id: None,
        minimum_capacity_units: None,
        attributes: BTreeMap::new(),
        tags: BTreeMap::new(),
        subnet_mappings: Vec::new(),
        enable_prefix_for_ipv6_source_nat: None,
        security_groups_inbound_rules_on_private_link: None,
    }
}

/// An internet-facing ALB.
pub fn alb(name: &str, subnets: &[String], security_groups: &[String]) -> LoadBalancer {
    load_balancer(
        name,
        "application",
        LoadBalancerScheme::InternetFacing,
        subnets,
        security_groups,
    )
}
