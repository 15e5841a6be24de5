//! Behaviour tests of the load balancer side: subnet mappings, tags and labels, attributes,
//! capacity, existing NLBs, empty stacks and refusals.

use std::collections::BTreeMap;

use crate::model::service::test_support::*;
use crate::model::service::{build_service_stack, ExistingNlb, ServiceEnv};
use crate::model::subnets::SubnetInfo;
use crate::model::types::*;

fn subnet(id: &str, az: &str, cidr: &str) -> SubnetInfo {
    SubnetInfo {
        id: id.into(),
        availability_zone: az.into(),
        available_ips: 100,
        cidr_block: cidr.into(),
        tags: BTreeMap::from([
            ("kubernetes.io/role/elb".into(), "1".into()),
            ("kubernetes.io/role/internal-elb".into(), "1".into()),
        ]),
        ..Default::default()
    }
}

fn with_subnets() -> ServiceEnv {
    ServiceEnv {
        subnets: Some(vec![
            subnet("subnet-a", "us-west-2a", "10.0.0.0/24"),
            subnet("subnet-b", "us-west-2b", "10.0.1.0/24"),
        ]),
        ..Default::default()
    }
}

#[test]
fn eips_and_private_addresses_map_onto_resolved_subnets() {
    let public = svc(
        &[
            ("aws-load-balancer-scheme", "internet-facing"),
            (
                "aws-load-balancer-eip-allocations",
                "eipalloc-1, eipalloc-2",
            ),
        ],
        WEB_PORTS,
    );
    let lb = build_service_stack(&public, &cfg(), &with_subnets())
        .unwrap()
        .load_balancer
        .unwrap();
    let eips: Vec<_> = lb
        .subnet_mappings
        .iter()
        .map(|m| (m.subnet_id.as_str(), m.allocation_id.as_deref()))
        .collect();
    assert_eq!(
        eips,
        vec![
            ("subnet-a", Some("eipalloc-1")),
            ("subnet-b", Some("eipalloc-2"))
        ]
    );
    let private = svc(
        &[(
            "aws-load-balancer-private-ipv4-addresses",
            "10.0.1.9,10.0.0.9",
        )],
        WEB_PORTS,
    );
    let lb = build_service_stack(&private, &cfg(), &with_subnets())
        .unwrap()
        .load_balancer
        .unwrap();
    let ips: Vec<_> = lb
        .subnet_mappings
        .iter()
        .map(|m| m.private_ipv4_address.as_deref())
        .collect();
    assert_eq!(ips, vec![Some("10.0.0.9"), Some("10.0.1.9")]);
    let outside = svc(
        &[(
            "aws-load-balancer-private-ipv4-addresses",
            "10.0.0.9,10.0.0.10",
        )],
        WEB_PORTS,
    );
    assert_eq!(
        build_service_stack(&outside, &cfg(), &with_subnets())
            .unwrap_err()
            .to_string(),
        "expect one private IPv4 address configured for subnet: subnet-a"
    );
    let count = svc(
        &[("aws-load-balancer-private-ipv4-addresses", "10.0.0.9")],
        WEB_PORTS,
    );
    assert_eq!(
        build_service_stack(&count, &cfg(), &with_subnets())
            .unwrap_err()
            .to_string(),
        "count of private IPv4 addresses (1) and subnets (2) must match"
    );
    let bad = svc(
        &[(
            "aws-load-balancer-private-ipv4-addresses",
            "10.0.0.x,10.0.1.9",
        )],
        WEB_PORTS,
    );
    assert_eq!(
        err(&bad, &cfg()),
        "private IPv4 addresses must be valid IP address: 10.0.0.x"
    );
    // Offline (no subnets) the lists are validated but mapped later.
    assert!(build(&private, &cfg())
        .load_balancer
        .unwrap()
        .subnet_mappings
        .is_empty());
}

#[test]
fn tags_labels_and_resource_ids_follow_upstream() {
    let mut c = cfg();
    c.default_tags = BTreeMap::from([("team".into(), "net".into())]);
    c.external_managed_tags = vec!["owner".into()];
    let s = svc(
        &[(
            "aws-load-balancer-additional-resource-tags",
            "team=web,env=prod",
        )],
        WEB_PORTS,
    );
    let stack = build(&s, &c);
    let lb = stack.load_balancer.as_ref().unwrap();
    assert_eq!(lb.tags["team"], "net", "--default-tags win");
    assert_eq!(lb.tags["env"], "prod");
    assert_eq!(lb.tags["service.k8s.aws/stack"], "default/svc");
    assert_eq!(lb.tags["service.k8s.aws/resource"], "LoadBalancer");
    assert_eq!(lb.tags["elbv2.k8s.aws/cluster"], "my-cluster");
    assert_eq!(
        tg(&stack, 80).tags["service.k8s.aws/resource"],
        "default/svc:80"
    );
    assert_eq!(stack.listeners[0].tags["service.k8s.aws/resource"], "80");
    let sg = stack.managed_security_group.as_ref().unwrap();
    assert_eq!(
        sg.tags["service.k8s.aws/resource"],
        "ManagedLBSecurityGroup"
    );
    let b = &stack.target_group_bindings[0];
    assert_eq!(
        (b.id.as_str(), &b.name),
        ("default/svc:443", &tg(&stack, 443).name)
    );
    assert_eq!(b.labels["service.k8s.aws/stack-namespace"], "default");
    assert_eq!(b.labels["service.k8s.aws/stack-name"], "svc");
    let mut no_listener_tags = c.clone();
    no_listener_tags
        .feature_gates
        .insert("ListenerRulesTagging".into(), false);
    assert!(build(&s, &no_listener_tags).listeners[0].tags.is_empty());
    let ext = svc(
        &[("aws-load-balancer-additional-resource-tags", "owner=me")],
        WEB_PORTS,
    );
    assert_eq!(
        err(&ext, &c),
        "external managed tag key owner cannot be specified on Service"
    );
}

#[test]
fn load_balancer_attributes_capacity_and_private_link() {
    let s = svc(
        &[
            (
                "aws-load-balancer-attributes",
                "deletion_protection.enabled=true,load_balancing.cross_zone.enabled=false",
            ),
            (
                "aws-load-balancer-cross-zone-load-balancing-enabled",
                "true",
            ),
            ("aws-load-balancer-access-log-enabled", "false"),
            ("aws-load-balancer-access-log-s3-bucket-name", "logs"),
            (
                "aws-load-balancer-minimum-load-balancer-capacity",
                "CapacityUnits=1500",
            ),
            (
                "aws-load-balancer-inbound-sg-rules-on-private-link-traffic",
                "off",
            ),
        ],
        WEB_PORTS,
    );
    let lb = build(&s, &cfg()).load_balancer.unwrap();
    assert_eq!(lb.lb_type, "network");
    assert_eq!(
        lb.attributes["load_balancing.cross_zone.enabled"], "true",
        "the specific annotation wins"
    );
    assert_eq!(lb.attributes["deletion_protection.enabled"], "true");
    assert!(
        !lb.attributes.contains_key("access_logs.s3.bucket"),
        "access-log-enabled false sets nothing"
    );
    assert_eq!(lb.minimum_capacity_units, Some(1500));
    assert_eq!(
        lb.security_groups_inbound_rules_on_private_link.as_deref(),
        Some("off")
    );
    let mut off = cfg();
    off.feature_gates
        .insert("LBCapacityReservation".into(), false);
    assert_eq!(
        build(&s, &off)
            .load_balancer
            .unwrap()
            .minimum_capacity_units,
        None
    );
}

#[test]
fn a_service_that_stops_qualifying_gets_an_empty_stack_unless_protected() {
    let mut s = svc(
        &[(
            "aws-load-balancer-attributes",
            "deletion_protection.enabled=true",
        )],
        WEB_PORTS,
    );
    s.metadata.annotations.as_mut().unwrap().insert(
        "service.beta.kubernetes.io/aws-load-balancer-type".into(),
        "nlb".into(),
    );
    let stack = build(&s, &cfg());
    assert!(stack.load_balancer.is_none() && stack.target_groups.is_empty());
    assert_eq!(stack.stack_id, "default/svc");
    s.metadata.finalizers = Some(vec!["service.k8s.aws/resources".into()]);
    assert_eq!(
        err(&s, &cfg()),
        "deletion_protection is enabled, cannot delete the service: svc"
    );
}

#[test]
fn existing_nlb_keeps_its_scheme_and_its_lack_of_security_groups() {
    let env = ServiceEnv {
        existing_load_balancer: Some(ExistingNlb {
            scheme: LoadBalancerScheme::InternetFacing,
            subnet_ids: vec!["subnet-a".into()],
            security_groups: vec!["sg-1".into()],
        }),
        ..Default::default()
    };
    let s = svc(&[], WEB_PORTS);
    let stack = build_service_stack(&s, &cfg(), &env).unwrap();
    assert_eq!(
        stack.load_balancer.unwrap().scheme,
        LoadBalancerScheme::InternetFacing
    );
    let off = svc(&[("aws-load-balancer-disable-nlb-sg", "true")], WEB_PORTS);
    assert_eq!(
        build_service_stack(&off, &cfg(), &env)
            .unwrap_err()
            .to_string(),
        "conflicting security groups configuration"
    );
    // Explicit SGs without rule management: no node rules at all (the user opens them).
    let explicit = svc(
        &[("aws-load-balancer-security-groups", "sg-1,web")],
        WEB_PORTS,
    );
    let stack = build(&explicit, &cfg());
    let lb = stack.load_balancer.unwrap();
    assert_eq!(lb.security_groups, vec![Token::Literal("sg-1".into())]);
    assert_eq!(lb.security_group_names_or_ids, vec!["web"]);
    assert!(stack.managed_security_group.is_none());
    assert!(stack.target_group_bindings[0].spec.networking.is_empty());
}

// Values and texts of upstream's buildSubnetMappings / EnablePrefixForIpv6SourceNat tables.
#[test]
fn source_nat_prefixes_are_validated_per_subnet_like_upstream() {
    let mut s6 = subnet("subnet-1", "us-west-2a", "10.0.0.0/24");
    s6.ipv6_cidrs = vec!["2600:1f13:837:8500::/64".into()];
    let env = ServiceEnv {
        subnets: Some(vec![s6]),
        ..Default::default()
    };
    let dual = [
        ("aws-load-balancer-ip-address-type", "dualstack"),
        ("aws-load-balancer-enable-prefix-for-ipv6-source-nat", "on"),
    ];
    let run = |prefix: &str| {
        let mut a = dual.to_vec();
        a.push(("aws-load-balancer-source-nat-ipv6-prefixes", prefix));
        build_service_stack(&svc(&a, WEB_PORTS), &cfg(), &env)
    };
    let cases = [
        ("2600:1f13:837:8500:9::/70", "Invalid value in source-nat-ipv6-prefixes: 2600:1f13:837:8500:9::/70. Prefix length must be 80, but 70 is specified."),
        ("2600:1f13:837:87667::/80", "Invalid value in source-nat-ipv6-prefixes: 2600:1f13:837:87667::/80. Value must be a valid IPv6 CIDR."),
        ("2601:1f13:837:8500:009::/80", "Invalid value in source-nat-ipv6-prefixes: 2601:1f13:837:8500:009::/80. Value must be within subnet CIDR range: [2600:1f13:837:8500::/64]."),
    ];
    for (prefix, want) in cases {
        assert_eq!(run(prefix).unwrap_err().to_string(), want);
    }
    let lb = run("2600:1f13:837:8500:9::/80")
        .unwrap()
        .load_balancer
        .unwrap();
    assert_eq!(lb.enable_prefix_for_ipv6_source_nat.as_deref(), Some("on"));
    assert_eq!(
        lb.subnet_mappings[0].source_nat_ipv6_prefix.as_deref(),
        Some("2600:1f13:837:8500:9::/80")
    );
    let v4 = subnet("subnet-1", "us-west-2a", "10.0.0.0/24");
    let no_v6 = ServiceEnv {
        subnets: Some(vec![v4]),
        ..Default::default()
    };
    let on = svc(
        &[("aws-load-balancer-enable-prefix-for-ipv6-source-nat", "on")],
        WEB_PORTS,
    );
    assert_eq!(
        build_service_stack(&on, &cfg(), &no_v6).unwrap_err().to_string(),
        "enable-prefix-for-ipv6-source-nat annotation is only applicable to Network Load Balancers using Dualstack IP address type."
    );
    let bad = svc(
        &[(
            "aws-load-balancer-enable-prefix-for-ipv6-source-nat",
            "randomValue",
        )],
        WEB_PORTS,
    );
    assert_eq!(
        build_service_stack(&bad, &cfg(), &no_v6).unwrap_err().to_string(),
        "Invalid enable-prefix-for-ipv6-source-nat value: randomValue. Valid values are ['on', 'off']."
    );
}
