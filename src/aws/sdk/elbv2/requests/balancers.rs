//! Load balancer and target group requests: the one conversion per write call from the model value the deployer hands over to the SDK
//! request: CreateLoadBalancer, CreateTargetGroup and ModifyTargetGroup (health check). Pure
//! functions returning the SDK input builder (sent with `send_with`), so the tests below check
//! without a network that every model field upstream sends in each call reaches the request.
//! Each conversion takes its model structs apart without `..`: a field added to the model is a
//! compile error here until it is sent or listed as sent elsewhere.

use aws_sdk_elasticloadbalancingv2::operation::create_load_balancer::builders::CreateLoadBalancerInputBuilder;
use aws_sdk_elasticloadbalancingv2::operation::create_load_balancer::CreateLoadBalancerInput;
use aws_sdk_elasticloadbalancingv2::operation::create_target_group::builders::CreateTargetGroupInputBuilder;
use aws_sdk_elasticloadbalancingv2::operation::create_target_group::CreateTargetGroupInput;
use aws_sdk_elasticloadbalancingv2::operation::modify_target_group::builders::ModifyTargetGroupInputBuilder;
use aws_sdk_elasticloadbalancingv2::operation::modify_target_group::ModifyTargetGroupInput;
use aws_sdk_elasticloadbalancingv2::types as et;

use crate::aws::error::Result;
use crate::aws::sdk::elbv2::convert::{mapping_to, tags_to};
use crate::aws::sdk::non_empty;
use crate::aws::types::*;
use crate::model;

/// Sets the health-check parameters, which CreateTargetGroup and ModifyTargetGroup share (two
/// SDK builder types with the same setters). Upstream always enables the health check.
macro_rules! with_health_check {
    ($b:expr, $hc:expr) => {{
        let hc: &model::HealthCheck = $hc;
        let (http_code, grpc_code) = matcher_codes(hc)?;
        let model::HealthCheck {
            port,
            protocol,
            path: _,    // below: none for TCP health checks
            matcher: _, // below: `HttpCode` / `GrpcCode`
            interval_seconds,
            timeout_seconds,
            healthy_threshold_count,
            unhealthy_threshold_count,
        } = hc;
        let matcher = (http_code.is_some() || grpc_code.is_some()).then(|| {
            et::Matcher::builder()
                .set_http_code(http_code)
                .set_grpc_code(grpc_code)
                .build()
        });
        $b.health_check_enabled(true)
            .health_check_port(port)
            .health_check_protocol(et::ProtocolEnum::from(protocol.as_str()))
            .set_health_check_path(health_check_path(hc))
            .set_matcher(matcher)
            .health_check_interval_seconds(*interval_seconds)
            .health_check_timeout_seconds(*timeout_seconds)
            .healthy_threshold_count(*healthy_threshold_count)
            .unhealthy_threshold_count(*unhealthy_threshold_count)
    }};
}

/// CreateLoadBalancer of the model's load balancer (subnets chosen, security groups resolved).
pub(crate) fn create_load_balancer(
    lb: &model::LoadBalancer,
) -> Result<CreateLoadBalancerInputBuilder> {
    let model::LoadBalancer {
        id: _, // the resource id: a tag, in `tags`
        name,
        lb_type,
        scheme,
        ip_address_type,
        subnets: _,                     // with `subnet_mappings`: below
        security_groups: _,             // literal ids: below
        security_group_names_or_ids: _, // looked up by the deployer; refused below if left
        customer_owned_ipv4_pool,
        ipv4_ipam_pool_id,
        minimum_capacity_units: _, // ModifyCapacityReservation, the deploy's last step
        attributes: _,             // ModifyLoadBalancerAttributes, after the create
        tags,
        subnet_mappings: _, // below
        enable_prefix_for_ipv6_source_nat,
        security_groups_inbound_rules_on_private_link: _, // SetSecurityGroups after the create
    } = lb;
    let mappings: Vec<et::SubnetMapping> = lb_subnet_mappings(lb)?.iter().map(mapping_to).collect();
    let security_groups = lb_security_groups(lb)?;
    let ipam = ipv4_ipam_pool_id
        .as_ref()
        .filter(|id| !id.is_empty())
        .map(|id| et::IpamPools::builder().ipv4_ipam_pool_id(id).build());
    Ok(CreateLoadBalancerInput::builder()
        .name(name)
        .r#type(et::LoadBalancerTypeEnum::from(lb_type.as_str()))
        .scheme(et::LoadBalancerSchemeEnum::from(scheme.as_str()))
        .ip_address_type(et::IpAddressType::from(ip_address_type.as_str()))
        .set_subnet_mappings(non_empty(&mappings))
        .set_security_groups(non_empty(&security_groups))
        .set_enable_prefix_for_ipv6_source_nat(
            enable_prefix_for_ipv6_source_nat
                .as_deref()
                .map(et::EnablePrefixForIpv6SourceNatEnum::from),
        )
        .set_customer_owned_ipv4_pool(customer_owned_ipv4_pool.clone())
        .set_ipam_pools(ipam)
        .set_tags(tags_to(tags)))
}

/// CreateTargetGroup of one of the model's target groups in `vpc_id`.
pub(crate) fn create_target_group(
    tg: NewTargetGroup<'_>,
    vpc_id: &str,
) -> Result<CreateTargetGroupInputBuilder> {
    let b = CreateTargetGroupInput::builder().vpc_id(vpc_id);
    let b = match tg {
        NewTargetGroup::Service(t) => {
            let model::TargetGroup {
                id: _, // the resource id: a tag, in `tags`
                name,
                target_type,
                port,
                protocol,
                protocol_version,
                ip_address_type,
                health_check,
                target_control_port,
                attributes: _, // ModifyTargetGroupAttributes, after the create
                tags,
                service_uid: _, // hashed into `name`
            } = t;
            let b = b
                .name(name)
                .target_type(et::TargetTypeEnum::from(target_type.as_str()))
                .port(*port)
                .protocol(et::ProtocolEnum::from(protocol.as_str()))
                .set_protocol_version(protocol_version.map(|v| v.as_str().to_string()))
                .set_target_control_port(*target_control_port)
                .set_ip_address_type(
                    tg_ip_address_type(ip_address_type).map(et::TargetGroupIpAddressTypeEnum::from),
                )
                .set_tags(tags_to(tags));
            with_health_check!(b, health_check)
        }
        NewTargetGroup::Alb(t) => {
            let model::AlbTargetGroup {
                id: _, // the resource id: a tag, in `tags`
                name,
                port,
                protocol,
                ip_address_type,
                health_check,
                tags,
                target_port: _, // RegisterTargets of the ALB, after the create
                target_arn: _,  // the same
                attributes: _,  // ModifyTargetGroupAttributes, after the create
            } = t;
            let b = b
                .name(name)
                .target_type(et::TargetTypeEnum::Alb)
                .port(*port)
                .protocol(et::ProtocolEnum::from(protocol.as_str()))
                .set_ip_address_type(
                    tg_ip_address_type(ip_address_type).map(et::TargetGroupIpAddressTypeEnum::from),
                )
                .set_tags(tags_to(tags));
            with_health_check!(b, health_check)
        }
    };
    Ok(b)
}

/// ModifyTargetGroup: the target group's health check set to the model's.
pub(crate) fn modify_target_group(
    arn: &str,
    hc: &model::HealthCheck,
) -> Result<ModifyTargetGroupInputBuilder> {
    let b = ModifyTargetGroupInput::builder().target_group_arn(arn);
    Ok(with_health_check!(b, hc))
}

#[cfg(test)]
mod tests {
    //! "Every field reaches the SDK": for each write call, a model value with every field
    //! upstream sends in that call set to a non-default value, converted, and each field looked
    //! for in the request. The model structs are taken apart without `..`, so a field added to
    //! the model fails to compile here until it is listed (sent, or why not).
    //!
    //! Per call, the model fields upstream sends (`pkg/deploy/elbv2/load_balancer_manager.go`,
    //! `target_group_manager.go`):
    //! - CreateLoadBalancer (10): name, type, scheme, ipAddressType, subnet mappings (subnet,
    //!   EIP allocation, private IPv4, IPv6, source-NAT IPv6 prefix), security groups,
    //!   enablePrefixForIpv6SourceNat, customerOwnedIPv4Pool, ipv4IPAMPool, tags. Not in this
    //!   call: attributes (ModifyLoadBalancerAttributes), minimum capacity
    //!   (ModifyCapacityReservation), PrivateLink inbound rules (SetSecurityGroups); the id is
    //!   a tag.
    //! - CreateTargetGroup (10 + the VPC + 8 health-check fields): name, targetType, port,
    //!   protocol, protocolVersion, targetControlPort, ipAddressType, tags, healthCheckConfig
    //!   (port, protocol, path, matcher, interval, timeout, healthy and unhealthy thresholds;
    //!   HealthCheckEnabled true), the VPC. Not in this call: attributes
    //!   (ModifyTargetGroupAttributes); the id is a tag, the Service UID is in the name.
    //! - ModifyTargetGroup (8): the health check's port, protocol, path, matcher, interval,
    //!   timeout, healthy and unhealthy thresholds (HealthCheckEnabled true).

    use std::collections::BTreeMap;

    use super::*;
    use crate::model::{
        AlbTargetGroup, HealthCheck, IpAddressType, LoadBalancerScheme, Protocol, ProtocolVersion,
        SubnetMapping, Subnets, TargetGroup, TargetType, Token,
    };

    fn tag_pairs(tags: &Option<Vec<et::Tag>>) -> Vec<(String, String)> {
        tags.iter()
            .flatten()
            .map(|t| {
                (
                    t.key().unwrap_or_default().to_string(),
                    t.value().unwrap_or_default().to_string(),
                )
            })
            .collect()
    }

    /// Every health-check field set off its default (HTTP with a gRPC matcher, a fixed port).
    fn full_health_check() -> HealthCheck {
        HealthCheck {
            port: "8443".into(),
            protocol: Protocol::Https,
            path: "/AWS.ALB/healthcheck".into(),
            matcher: [("grpcCode".to_string(), "0-99".to_string())].into(),
            interval_seconds: 17,
            timeout_seconds: 7,
            healthy_threshold_count: 4,
            unhealthy_threshold_count: 6,
        }
    }

    /// The health check as the builder carries it; `$b` is either input builder.
    macro_rules! assert_health_check {
        ($b:expr, $hc:expr) => {{
            let HealthCheck {
                port,
                protocol,
                path,
                matcher,
                interval_seconds,
                timeout_seconds,
                healthy_threshold_count,
                unhealthy_threshold_count,
            } = $hc;
            let b = &$b;
            assert_eq!(b.get_health_check_enabled(), &Some(true));
            assert_eq!(b.get_health_check_port().as_deref(), Some(port.as_str()));
            assert_eq!(
                b.get_health_check_protocol().as_ref().map(|p| p.as_str()),
                Some(protocol.as_str())
            );
            assert_eq!(b.get_health_check_path().as_deref(), Some(path.as_str()));
            let m = b.get_matcher().as_ref().expect("matcher");
            assert_eq!(m.grpc_code(), matcher.get("grpcCode").map(String::as_str));
            assert_eq!(m.http_code(), matcher.get("httpCode").map(String::as_str));
            assert_eq!(
                b.get_health_check_interval_seconds(),
                &Some(*interval_seconds)
            );
            assert_eq!(
                b.get_health_check_timeout_seconds(),
                &Some(*timeout_seconds)
            );
            assert_eq!(
                b.get_healthy_threshold_count(),
                &Some(*healthy_threshold_count)
            );
            assert_eq!(
                b.get_unhealthy_threshold_count(),
                &Some(*unhealthy_threshold_count)
            );
            8
        }};
    }

    #[test]
    fn every_load_balancer_field_reaches_create_load_balancer() {
        let lb = model::LoadBalancer {
            id: "LoadBalancer".into(),
            name: "k8s-every-field".into(),
            lb_type: "network".into(),
            scheme: LoadBalancerScheme::Internal,
            ip_address_type: IpAddressType::DualStack,
            subnets: Subnets::Resolved(vec!["subnet-a".into(), "subnet-b".into()]),
            security_groups: vec![Token::Literal("sg-1".into()), Token::Literal("sg-2".into())],
            security_group_names_or_ids: vec![],
            customer_owned_ipv4_pool: Some("ipv4pool-coip-1".into()),
            ipv4_ipam_pool_id: Some("ipam-pool-1".into()),
            minimum_capacity_units: Some(100),
            attributes: [(
                "deletion_protection.enabled".to_string(),
                "true".to_string(),
            )]
            .into(),
            tags: [("team".to_string(), "web".to_string())].into(),
            subnet_mappings: vec![SubnetMapping {
                subnet_id: "subnet-a".into(),
                allocation_id: Some("eipalloc-1".into()),
                private_ipv4_address: Some("10.0.0.9".into()),
                ipv6_address: Some("2600::9".into()),
                source_nat_ipv6_prefix: Some("auto_assigned".into()),
            }],
            enable_prefix_for_ipv6_source_nat: Some("on".into()),
            security_groups_inbound_rules_on_private_link: Some("off".into()),
        };
        let b = create_load_balancer(&lb).unwrap();
        let model::LoadBalancer {
            id: _,
            name,
            lb_type,
            scheme,
            ip_address_type,
            subnets: _,
            security_groups: _,
            security_group_names_or_ids: _,
            customer_owned_ipv4_pool,
            ipv4_ipam_pool_id,
            minimum_capacity_units: _,
            attributes: _,
            tags,
            subnet_mappings,
            enable_prefix_for_ipv6_source_nat,
            security_groups_inbound_rules_on_private_link: _,
        } = &lb;
        let mut covered = 0;
        let mut check = |ok: bool, field: &str| {
            assert!(ok, "{field} did not reach CreateLoadBalancer: {b:?}");
            covered += 1;
        };
        check(b.get_name().as_deref() == Some(name.as_str()), "name");
        check(
            b.get_type().as_ref().map(|t| t.as_str()) == Some(lb_type.as_str()),
            "type",
        );
        check(
            b.get_scheme().as_ref().map(|s| s.as_str()) == Some(scheme.as_str()),
            "scheme",
        );
        check(
            b.get_ip_address_type().as_ref().map(|t| t.as_str()) == Some(ip_address_type.as_str()),
            "ipAddressType",
        );
        let sent = b.get_subnet_mappings().clone().unwrap_or_default();
        let want = &subnet_mappings[0];
        check(
            sent.len() == 2
                && sent[0].subnet_id() == Some("subnet-a")
                && sent[0].allocation_id() == want.allocation_id.as_deref()
                && sent[0].private_ipv4_address() == want.private_ipv4_address.as_deref()
                && sent[0].ipv6_address() == want.ipv6_address.as_deref()
                && sent[0].source_nat_ipv6_prefix() == want.source_nat_ipv6_prefix.as_deref()
                && sent[1].subnet_id() == Some("subnet-b")
                && sent[1].allocation_id().is_none(),
            "subnetMappings",
        );
        check(
            b.get_security_groups().as_deref()
                == Some(&["sg-1".to_string(), "sg-2".to_string()][..]),
            "securityGroups",
        );
        check(
            b.get_enable_prefix_for_ipv6_source_nat()
                .as_ref()
                .map(|v| v.as_str())
                == enable_prefix_for_ipv6_source_nat.as_deref(),
            "enablePrefixForIpv6SourceNat",
        );
        check(
            b.get_customer_owned_ipv4_pool() == customer_owned_ipv4_pool,
            "customerOwnedIPv4Pool",
        );
        check(
            b.get_ipam_pools()
                .as_ref()
                .and_then(|p| p.ipv4_ipam_pool_id())
                == ipv4_ipam_pool_id.as_deref(),
            "ipv4IPAMPool",
        );
        let want_tags: Vec<(String, String)> =
            tags.iter().map(|(k, v)| (k.clone(), v.clone())).collect();
        check(tag_pairs(b.get_tags()) == want_tags, "tags");
        assert_eq!(covered, 10, "fields of CreateLoadBalancer covered");
    }

    #[test]
    fn an_unfinished_load_balancer_is_refused() {
        let mut lb: model::LoadBalancer = serde_json::from_value(serde_json::json!({
            "id": "LoadBalancer", "name": "k8s-x", "type": "application",
            "scheme": "internal", "ipAddressType": "ipv4", "subnets": {"resolved": ["s-1"]},
            "securityGroups": ["managedSecurityGroupId"], "attributes": {}, "tags": {}
        }))
        .unwrap();
        let err = create_load_balancer(&lb).unwrap_err();
        assert!(err.to_string().contains("still a reference"), "{err}");
        lb.security_groups = vec![Token::Literal("sg-1".into())];
        lb.subnets = Subnets::NamesOrIds(vec!["public".into()]);
        assert!(create_load_balancer(&lb).is_err());
    }

    fn full_target_group() -> TargetGroup {
        TargetGroup {
            id: "ns/ing-svc:80".into(),
            name: "k8s-ns-svc-0123456789".into(),
            target_type: TargetType::Ip,
            port: 8080,
            protocol: Protocol::Https,
            protocol_version: Some(ProtocolVersion::GRPC),
            ip_address_type: "ipv6".into(),
            health_check: full_health_check(),
            target_control_port: Some(3000),
            attributes: [("slow_start.duration_seconds".to_string(), "30".to_string())].into(),
            tags: [("team".to_string(), "web".to_string())].into(),
            service_uid: "uid-1".into(),
        }
    }

    #[test]
    fn every_target_group_field_reaches_create_target_group() {
        let tg = full_target_group();
        let b = create_target_group((&tg).into(), "vpc-1").unwrap();
        let TargetGroup {
            id: _,
            name,
            target_type,
            port,
            protocol,
            protocol_version,
            ip_address_type,
            health_check,
            target_control_port,
            attributes: _,
            tags,
            service_uid: _,
        } = &tg;
        let mut covered = 0;
        let mut check = |ok: bool, field: &str| {
            assert!(ok, "{field} did not reach CreateTargetGroup: {b:?}");
            covered += 1;
        };
        check(b.get_name().as_deref() == Some(name.as_str()), "name");
        check(
            b.get_target_type().as_ref().map(|t| t.as_str()) == Some(target_type.as_str()),
            "targetType",
        );
        check(b.get_port() == &Some(*port), "port");
        check(
            b.get_protocol().as_ref().map(|p| p.as_str()) == Some(protocol.as_str()),
            "protocol",
        );
        check(
            b.get_protocol_version().as_deref() == protocol_version.map(|v| v.as_str()),
            "protocolVersion",
        );
        check(
            b.get_target_control_port() == target_control_port,
            "targetControlPort",
        );
        check(
            b.get_ip_address_type().as_ref().map(|t| t.as_str()) == Some(ip_address_type.as_str()),
            "ipAddressType",
        );
        let want_tags: Vec<(String, String)> =
            tags.iter().map(|(k, v)| (k.clone(), v.clone())).collect();
        check(tag_pairs(b.get_tags()) == want_tags, "tags");
        check(b.get_vpc_id().as_deref() == Some("vpc-1"), "vpcId");
        let hc_fields = assert_health_check!(b, health_check);
        check(true, "healthCheckConfig");
        assert_eq!(covered, 10, "fields of CreateTargetGroup covered");
        assert_eq!(hc_fields, 8, "health-check fields covered");
    }

    #[test]
    fn every_alb_target_group_field_reaches_create_target_group() {
        let tg = AlbTargetGroup {
            id: "FrontendNlb-tg-TCP-80".into(),
            name: "k8s-fe-0123456789".into(),
            port: 80,
            protocol: Protocol::Tcp,
            ip_address_type: "ipv6".into(),
            health_check: full_health_check(),
            tags: [("team".to_string(), "web".to_string())].into(),
            target_port: 8080,
            target_arn: Some("arn:alb".into()),
            attributes: BTreeMap::new(),
        };
        let b = create_target_group((&tg).into(), "vpc-1").unwrap();
        let AlbTargetGroup {
            id: _,
            name,
            port,
            protocol,
            ip_address_type,
            health_check,
            tags,
            target_port: _,
            target_arn: _,
            attributes: _,
        } = &tg;
        assert_eq!(b.get_name().as_deref(), Some(name.as_str()));
        assert_eq!(b.get_target_type(), &Some(et::TargetTypeEnum::Alb));
        assert_eq!(b.get_port(), &Some(*port));
        assert_eq!(
            b.get_protocol().as_ref().map(|p| p.as_str()),
            Some(protocol.as_str())
        );
        assert_eq!(
            b.get_ip_address_type().as_ref().map(|t| t.as_str()),
            Some(ip_address_type.as_str())
        );
        let want_tags: Vec<(String, String)> =
            tags.iter().map(|(k, v)| (k.clone(), v.clone())).collect();
        assert_eq!(tag_pairs(b.get_tags()), want_tags);
        assert_eq!(b.get_vpc_id().as_deref(), Some("vpc-1"));
        assert_eq!(b.get_target_control_port(), &None);
        assert_eq!(assert_health_check!(b, health_check), 8);
    }

    #[test]
    fn defaults_upstream_leaves_out_are_left_out() {
        let mut tg = full_target_group();
        tg.ip_address_type = "ipv4".into();
        tg.target_control_port = None;
        tg.protocol_version = None;
        tg.health_check.protocol = Protocol::Tcp;
        tg.health_check.path = String::new();
        tg.health_check.matcher.clear();
        let b = create_target_group((&tg).into(), "vpc-1").unwrap();
        assert_eq!(b.get_ip_address_type(), &None);
        assert_eq!(b.get_target_control_port(), &None);
        assert_eq!(b.get_protocol_version(), &None);
        // AWS refuses a path or a matcher on a TCP health check.
        assert_eq!(b.get_health_check_path(), &None);
        assert_eq!(b.get_matcher(), &None);
    }

    #[test]
    fn every_health_check_field_reaches_modify_target_group() {
        let hc = full_health_check();
        let b = modify_target_group("arn:tg", &hc).unwrap();
        assert_eq!(b.get_target_group_arn().as_deref(), Some("arn:tg"));
        assert_eq!(assert_health_check!(b, &hc), 8);
    }
}
