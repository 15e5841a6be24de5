//! Golden tests: cases of upstream's `pkg/service/model_builder_test.go` (the Service, the
//! builder settings, and the stack upstream expects, in `../golden/*.json`) replayed through our
//! model and compared with upstream's expected JSON via `upstream_json::render`, names and
//! hashes included. Each case runs with TCP_UDP merging on and off, as upstream's table does.

use std::collections::BTreeMap;

use k8s_openapi::api::core::v1::Service;
use serde_json::Value;

use crate::model::config::ModelConfig;
use crate::model::service::{build_service_stack, ExistingNlb, ServiceEnv};
use crate::model::subnets::SubnetInfo;
use crate::model::types::{LoadBalancerScheme, TargetType};
use crate::model::upstream_json::{render, PlanFacts};

const CASES: &[(&str, &str)] = &[
    ("additional_resource_tags", include_str!("../golden/additional_resource_tags.json")),
    ("additional_resource_tags_with_sg", include_str!("../golden/additional_resource_tags_with_sg.json")),
    ("default_ip_target", include_str!("../golden/default_ip_target.json")),
    ("disable_sg_annotation_should_disable_sg_management_without_the_feature_flag", include_str!("../golden/disable_sg_annotation_should_disable_sg_management_without_the_feature_flag.json")),
    ("dualstack_service", include_str!("../golden/dualstack_service.json")),
    ("dualstack_service_with_sg", include_str!("../golden/dualstack_service_with_sg.json")),
    ("instance_mode_external_traffic_policy_cluster", include_str!("../golden/instance_mode_external_traffic_policy_cluster.json")),
    ("instance_mode_external_traffic_policy_cluster_with_sg", include_str!("../golden/instance_mode_external_traffic_policy_cluster_with_sg.json")),
    ("instance_mode_external_traffic_policy_local", include_str!("../golden/instance_mode_external_traffic_policy_local.json")),
    ("instance_mode_external_traffic_policy_local_udp_as_protocol_with_sg", include_str!("../golden/instance_mode_external_traffic_policy_local_udp_as_protocol_with_sg.json")),
    ("instance_mode_external_traffic_policy_local_with_sg", include_str!("../golden/instance_mode_external_traffic_policy_local_with_sg.json")),
    ("instance_mode_tcp_udp_same_port_test", include_str!("../golden/instance_mode_tcp_udp_same_port_test.json")),
    ("ip_target_preserve_client_ip_scheme_internal", include_str!("../golden/ip_target_preserve_client_ip_scheme_internal.json")),
    ("ip_target_preserve_client_ip_scheme_internal_with_sg", include_str!("../golden/ip_target_preserve_client_ip_scheme_internal_with_sg.json")),
    ("ipv6_for_nlb", include_str!("../golden/ipv6_for_nlb.json")),
    ("ipv6_for_nlb_internet_facing_scheme", include_str!("../golden/ipv6_for_nlb_internet_facing_scheme.json")),
    ("ipv6_for_nlb_internet_facing_scheme_with_sg", include_str!("../golden/ipv6_for_nlb_internet_facing_scheme_with_sg.json")),
    ("ipv6_for_nlb_with_sg", include_str!("../golden/ipv6_for_nlb_with_sg.json")),
    ("manage_backend_rules_with_manual_security_groups", include_str!("../golden/manage_backend_rules_with_manual_security_groups.json")),
    ("multiple_listeners_multiple_target_groups", include_str!("../golden/multiple_listeners_multiple_target_groups.json")),
    ("multiple_listeners_multiple_target_groups_with_sg", include_str!("../golden/multiple_listeners_multiple_target_groups_with_sg.json")),
    ("simple_service", include_str!("../golden/simple_service.json")),
    ("simple_service_with_default_load_balancer_scheme_internet_facing", include_str!("../golden/simple_service_with_default_load_balancer_scheme_internet_facing.json")),
    ("simple_service_with_nlb_sg", include_str!("../golden/simple_service_with_nlb_sg.json")),
    ("spec_loadbalancerclass_specified", include_str!("../golden/spec_loadbalancerclass_specified.json")),
    ("spec_loadbalancerclass_specified_with_sg", include_str!("../golden/spec_loadbalancerclass_specified_with_sg.json")),
    ("tls_and_access_logging_annotations", include_str!("../golden/tls_and_access_logging_annotations.json")),
    ("tls_and_access_logging_annotations_with_sg", include_str!("../golden/tls_and_access_logging_annotations_with_sg.json")),
    ("with_backend_sg_rule_management_disabled_for_legacy_nlb", include_str!("../golden/with_backend_sg_rule_management_disabled_for_legacy_nlb.json")),
    ("with_security_groups_annotation", include_str!("../golden/with_security_groups_annotation.json")),
];

fn s<'a>(v: &'a Value, k: &str) -> Option<&'a str> {
    v.get(k).and_then(Value::as_str)
}

fn flag(v: &Value, k: &str) -> bool {
    v.get(k).and_then(Value::as_bool).unwrap_or(false)
}

/// The builder settings upstream's table passes (cluster `my-cluster`, VPC `vpc-xxx`).
fn config(settings: &Value, tcp_udp: bool) -> ModelConfig {
    let mut gates = BTreeMap::from([("EnableTCPUDPListener".to_string(), tcp_udp)]);
    if let Some(g) = settings.get("featureGates").and_then(Value::as_object) {
        for (k, v) in g {
            gates.insert(k.clone(), v.as_bool().unwrap());
        }
    }
    ModelConfig {
        cluster_name: "my-cluster".into(),
        vpc_id: Some("vpc-xxx".into()),
        enable_backend_sg: flag(settings, "enableBackendSG"),
        backend_sg_id: s(settings, "backendSecurityGroup").map(String::from),
        disable_restricted_sg_rules: flag(settings, "disableRestrictedSGRules"),
        enable_manage_backend_sg_rules: flag(settings, "enableManageBackendSGRules"),
        feature_gates: gates,
        default_scheme: match s(settings, "defaultLoadBalancerScheme") {
            Some("internet-facing") => LoadBalancerScheme::InternetFacing,
            _ => LoadBalancerScheme::Internal,
        },
        default_target_type: match s(settings, "defaultTargetType") {
            Some("ip") => TargetType::Ip,
            _ => TargetType::Instance,
        },
        ..Default::default()
    }
}

/// Upstream's mocked subnet resolver returns these subnets whatever the criteria; ours
/// discovers them, so each carries both role tags and its own AZ.
fn env(settings: &Value) -> ServiceEnv {
    let ipv6 = flag(settings, "ipv6");
    let subnets: Vec<SubnetInfo> = settings["subnets"]
        .as_array()
        .unwrap()
        .iter()
        .enumerate()
        .map(|(i, p)| SubnetInfo {
            id: p[0].as_str().unwrap().into(),
            cidr_block: p[1].as_str().unwrap().into(),
            availability_zone: format!("us-west-2{}", (b'a' + i as u8) as char),
            available_ips: 100,
            tags: BTreeMap::from([
                ("kubernetes.io/role/elb".into(), "1".into()),
                ("kubernetes.io/role/internal-elb".into(), "1".into()),
            ]),
            ipv6_cidrs: if ipv6 {
                vec![format!("2600:1f13:{i}::/64")]
            } else {
                vec![]
            },
            ..Default::default()
        })
        .collect();
    let existing = settings.get("existing").map(|e| ExistingNlb {
        scheme: serde_json::from_value(e["scheme"].clone()).unwrap(),
        subnet_ids: subnets.iter().map(|s| s.id.clone()).collect(),
        security_groups: serde_json::from_value(e["securityGroups"].clone()).unwrap(),
    });
    ServiceEnv {
        subnets: Some(subnets),
        existing_load_balancer: existing,
        vpc_cidrs: settings
            .get("vpcCidrs")
            .map(|v| serde_json::from_value(v.clone()).unwrap()),
        ..Default::default()
    }
}

/// Security-group names resolve at deploy time in our model; the test applies the resolution
/// upstream's mock did, and compares the NLB's SGs as the set AWS treats them as.
fn normalize(v: &mut Value, names: Option<&Value>) {
    let Some(sgs) = v
        .pointer_mut(
            "/resources/AWS::ElasticLoadBalancingV2::LoadBalancer/LoadBalancer/spec/securityGroups",
        )
        .and_then(Value::as_array_mut)
    else {
        return;
    };
    for sg in sgs.iter_mut() {
        if let Some(id) = sg.as_str().and_then(|n| names.and_then(|m| m.get(n))) {
            *sg = id.clone();
        }
    }
    if sgs.iter().all(Value::is_string) {
        sgs.sort_by(|a, b| a.as_str().cmp(&b.as_str()));
    }
}

#[test]
fn upstream_model_builder_cases_match() {
    let mut failures = Vec::new();
    for (name, raw) in CASES {
        let case: Value = serde_json::from_str(raw).unwrap();
        let svc: Service = serde_json::from_value(case["service"].clone()).unwrap();
        for tcp_udp in [true, false] {
            if !tcp_udp && flag(&case["settings"], "skipTcpUdpDisabled") {
                continue;
            }
            let cfg = config(&case["settings"], tcp_udp);
            let stack = match build_service_stack(&svc, &cfg, &env(&case["settings"])) {
                Ok(s) => s,
                Err(e) => {
                    failures.push(format!("{name} (tcp_udp {tcp_udp}): error {e}"));
                    continue;
                }
            };
            let names = case["settings"].get("sgNames");
            let mut got = render(&stack, &PlanFacts::default());
            let mut want = case["expected"].clone();
            normalize(&mut got, names);
            normalize(&mut want, names);
            if got != want {
                failures.push(format!(
                    "{name} (tcp_udp {tcp_udp}):\n got: {}\nwant: {}",
                    serde_json::to_string(&got).unwrap(),
                    serde_json::to_string(&want).unwrap()
                ));
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}

/// A Service from a small YAML manifest, for the error and feature cases below.
fn svc(yaml: &str) -> Service {
    serde_yaml::from_str(yaml).unwrap()
}

fn build_err(yaml: &str, cfg: &ModelConfig) -> String {
    build_service_stack(&svc(yaml), cfg, &ServiceEnv::default())
        .unwrap_err()
        .to_string()
}

fn cfg() -> ModelConfig {
    ModelConfig {
        cluster_name: "my-cluster".into(),
        enable_backend_sg: true,
        backend_sg_id: Some("sg-backend".into()),
        ..Default::default()
    }
}

const BASE: &str = r#"
metadata:
  name: svc
  namespace: default
  uid: 7ab4be33-11c2-4a7b-b655-7add8affab36
  annotations:
    service.beta.kubernetes.io/aws-load-balancer-type: nlb-ip
"#;

fn with(annotations: &[(&str, &str)], spec: &str) -> String {
    let mut y = BASE.to_string();
    for (k, v) in annotations {
        y.push_str(&format!("    service.beta.kubernetes.io/{k}: \"{v}\"\n"));
    }
    y.push_str(spec);
    y
}

const ONE_PORT: &str =
    "spec:\n  type: LoadBalancer\n  ports: [{port: 80, targetPort: 8080, protocol: TCP}]\n";

// Upstream's error cases of the same table ("... backend sg not enabled", "ipv6 source ranges,
// but lb not dual stack", "ipv6 service without dualstask", "enableIPTargetType false").
#[test]
fn upstream_error_cases_fail_with_upstream_messages() {
    let mut no_backend = cfg();
    no_backend.enable_backend_sg = false;
    let y = with(
        &[
            ("aws-load-balancer-security-groups", "sg-id1"),
            (
                "aws-load-balancer-manage-backend-security-group-rules",
                "true",
            ),
        ],
        ONE_PORT,
    );
    assert_eq!(
        build_err(&y, &no_backend),
        "backendSG feature is required to manage worker node SG rules when frontendSG is manually specified"
    );
    let y = with(
        &[],
        &format!("{ONE_PORT}  loadBalancerSourceRanges: [\"2001:db8::/64\"]\n"),
    );
    assert_eq!(
        build_err(&y, &cfg()),
        "unsupported v6 cidr 2001:db8::/64 when lb is not dualstack"
    );
    let y = with(&[], &format!("{ONE_PORT}  ipFamilies: [IPv6]\n"));
    assert_eq!(
        build_err(&y, &cfg()),
        "unsupported IPv6 configuration, lb not dual-stack"
    );
    let mut no_ip = cfg();
    no_ip
        .feature_gates
        .insert("EnableIPTargetType".into(), false);
    let y = with(&[("aws-load-balancer-nlb-target-type", "ip")], ONE_PORT);
    assert_eq!(
        build_err(&y, &no_ip),
        "unsupported targetType: ip when EnableIPTargetType is false"
    );
}

#[test]
fn invalid_annotation_values_fail_before_any_aws_call() {
    let cases: &[(&str, &str, &str)] = &[
        ("aws-load-balancer-scheme", "public", "unknown scheme: public"),
        ("aws-load-balancer-ip-address-type", "dualstack-without-public-ipv4", "unknown IPAddressType: dualstack-without-public-ipv4"),
        ("aws-load-balancer-name", "a-name-that-is-much-longer-than-32-chars", "load balancer name cannot be longer than 32 characters"),
        ("aws-load-balancer-proxy-protocol", "80", "invalid value 80 for Load Balancer proxy protocol v2 annotation, only value currently supported is *"),
        ("aws-load-balancer-proxy-protocol-per-target-group", "80,http", "invalid port number in proxy-protocol-per-target-group: http"),
        ("aws-load-balancer-healthcheck-protocol", "grpc", "unsupported health check protocol grpc"),
        ("aws-load-balancer-healthcheck-interval", "ten", "failed to parse int32 annotation, service.beta.kubernetes.io/aws-load-balancer-healthcheck-interval: ten: strconv.ParseInt: parsing \"ten\": invalid syntax"),
        ("aws-load-balancer-ssl-ports", "443", "Unused port in ssl-ports annotation [443]"),
        ("aws-load-balancer-inbound-sg-rules-on-private-link-traffic", "yes", "Invalid value for securityGroupsInboundRulesOnPrivateLink status: yes, value must be one of [on, off]"),
        ("aws-load-balancer-minimum-load-balancer-capacity", "Units=5", "invalid key to set the capacity: Units, Expected key: CapacityUnits"),
        ("aws-load-balancer-eip-allocations", "eipalloc-1", "EIP allocations can only be set for internet facing load balancers"),
        ("aws-load-balancer-ipv6-addresses", "2001:db8::1", "IPv6 addresses can only be set for dualstack load balancers"),
        ("aws-load-balancer-quic-enabled-ports", "80", "Unsupported QUIC upgrade for protocol TCP"),
        ("aws-load-balancer-target-group-attributes", "preserve_client_ip.enabled=maybe", "failed to parse attribute preserve_client_ip.enabled=maybe: strconv.ParseBool: parsing \"maybe\": invalid syntax"),
        ("aws-load-balancer-additional-resource-tags", "=x", "failed to parse stringMap annotation, service.beta.kubernetes.io/aws-load-balancer-additional-resource-tags: =x"),
        ("aws-load-balancer-attributes", "dns_record.client_routing_policy=nearest", "invalid dns_record.client_routing_policy set in annotation aws-load-balancer-attributes: got 'nearest' expected one of ['any_availability_zone', 'partial_availability_zone_affinity', 'availability_zone_affinity']"),
    ];
    for (k, v, want) in cases {
        assert_eq!(
            build_err(&with(&[(k, v)], ONE_PORT), &cfg()),
            *want,
            "{k}={v}"
        );
    }
    let tls = with(
        &[
            ("aws-load-balancer-ssl-cert", "arn:cert"),
            ("aws-load-balancer-alpn-policy", "HTTP3"),
        ],
        ONE_PORT,
    );
    assert_eq!(
        build_err(&tls, &cfg()),
        "invalid ALPN policy HTTP3, policy must be one of [None, HTTP1Only, HTTP2Only, HTTP2Optional, HTTP2Preferred]"
    );
}
