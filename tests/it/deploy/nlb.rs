//! NLB (Service) stacks through the deployer on FakeAws: every golden case of the NLB model
//! (both TCP_UDP settings) and Services covering the remaining annotation families deploy with
//! upstream's shape, then redeploy with no write call.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use aws_load_balancer_controller::aws::fake::FakeAws;
use aws_load_balancer_controller::aws::*;
use aws_load_balancer_controller::model::service::{build_service_stack, ServiceEnv};
use aws_load_balancer_controller::model::{
    LoadBalancerScheme, ModelConfig, Stack, StackKind, SubnetInfo, TargetType,
};
use k8s_openapi::api::core::v1::Service;
use serde_json::Value;

use super::functional::deployer;
use super::*;
use crate::support::inventory::{inventory_of, Inventory};

pub const SERVICE_STACK_TAG: &str = "service.k8s.aws/stack";

/// Everything of the Service stack `stack` in the fake.
pub async fn nlb_inventory(fake: &FakeAws, stack: &str) -> Inventory {
    inventory_of(fake, fake, SERVICE_STACK_TAG, stack).await
}

/// The NLB model's golden directory, wherever the model's sources live.
fn golden_dir() -> PathBuf {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let direct = root.join("src/model/service/golden");
    if direct.is_dir() {
        return direct;
    }
    fn find(d: &Path, depth: usize) -> Option<PathBuf> {
        if depth > 6 {
            return None;
        }
        for e in std::fs::read_dir(d).ok()?.flatten() {
            let p = e.path();
            let name = e.file_name().to_string_lossy().to_string();
            if !p.is_dir() || name == "target" || name.starts_with('.') {
                continue;
            }
            if name == "golden" && d.ends_with("service") {
                return Some(p);
            }
            if let Some(f) = find(&p, depth + 1) {
                return Some(f);
            }
        }
        None
    }
    find(root, 0).expect("the NLB model's golden directory")
}

/// (case name, case JSON) of every golden case.
pub fn golden_cases() -> Vec<(String, Value)> {
    let mut out: Vec<(String, Value)> = std::fs::read_dir(golden_dir())
        .unwrap()
        .flatten()
        .filter(|e| e.path().extension().is_some_and(|x| x == "json"))
        .map(|e| {
            let raw = std::fs::read_to_string(e.path()).unwrap();
            let name = e.path().file_stem().unwrap().to_string_lossy().to_string();
            (name, serde_json::from_str(&raw).unwrap())
        })
        .collect();
    out.sort_by(|a, b| a.0.cmp(&b.0));
    out
}

fn flag(v: &Value, k: &str) -> bool {
    v.get(k).and_then(Value::as_bool).unwrap_or(false)
}

/// The builder settings of a golden case, for this cluster and VPC (backend SG auto-created).
pub fn case_config(settings: &Value, tcp_udp: bool, vpc: &str) -> ModelConfig {
    let mut gates = BTreeMap::from([("EnableTCPUDPListener".to_string(), tcp_udp)]);
    if let Some(g) = settings.get("featureGates").and_then(Value::as_object) {
        for (k, v) in g {
            gates.insert(k.clone(), v.as_bool().unwrap());
        }
    }
    let s = |k: &str| settings.get(k).and_then(Value::as_str);
    ModelConfig {
        cluster_name: CLUSTER.into(),
        vpc_id: Some(vpc.into()),
        enable_backend_sg: flag(settings, "enableBackendSG"),
        disable_restricted_sg_rules: flag(settings, "disableRestrictedSGRules"),
        enable_manage_backend_sg_rules: flag(settings, "enableManageBackendSGRules"),
        feature_gates: gates,
        default_scheme: match s("defaultLoadBalancerScheme") {
            Some("internet-facing") => LoadBalancerScheme::InternetFacing,
            _ => LoadBalancerScheme::Internal,
        },
        default_target_type: match s("defaultTargetType") {
            Some("ip") => TargetType::Ip,
            _ => TargetType::Instance,
        },
        ..Default::default()
    }
}

/// The subnets of the VPC as the model sees them.
pub async fn subnet_infos(ec2: &dyn Ec2, vpc: &str) -> Vec<SubnetInfo> {
    ec2.describe_subnets(&Ec2Query::default().filter("vpc-id", [vpc]))
        .await
        .unwrap()
        .into_iter()
        .map(|s| SubnetInfo {
            id: s.id,
            vpc_id: s.vpc_id,
            availability_zone: s.availability_zone,
            zone_type: "availability-zone".into(),
            available_ips: s.available_ip_address_count,
            tags: s.tags,
            ipv6_cidrs: s.ipv6_cidr_blocks,
            cidr_block: s.cidr_block,
            public: None,
        })
        .collect()
}

/// A VPC with role-tagged (public and internal) subnets at these CIDRs in us-west-2a, b, c...,
/// each with an IPv6 /64 `2600:1f13:<i>::/64` when `ipv6`.
pub fn nlb_network(fake: &FakeAws, cidrs: &[&str], ipv6: bool) -> String {
    let vpc = fake.add_vpc("10.0.0.0/8", tags(&[("Name", "nlb")]));
    for (i, cidr) in cidrs.iter().enumerate() {
        let az = format!("us-west-2{}", (b'a' + i as u8) as char);
        let roles = tags(&[
            ("kubernetes.io/role/elb", "1"),
            ("kubernetes.io/role/internal-elb", "1"),
        ]);
        let id = fake.add_subnet(&vpc, cidr, &az, roles).unwrap();
        if ipv6 {
            fake.add_subnet_ipv6_cidr(&id, &format!("2600:1f13:{i}::/64"));
        }
    }
    vpc
}

/// Replaces the `security-groups` annotation's entries with groups created in the fake (ids
/// stay ids, names become `Name` tags), as a user's existing groups.
async fn with_user_sgs(fake: &FakeAws, vpc: &str, svc: &mut Service) {
    let key = "service.beta.kubernetes.io/aws-load-balancer-security-groups";
    let Some(ann) = svc.metadata.annotations.as_mut() else {
        return;
    };
    let Some(list) = ann.get(key).cloned() else {
        return;
    };
    let mut out = Vec::new();
    for (i, entry) in list.split(',').map(str::trim).enumerate() {
        let t = if entry.starts_with("sg-") {
            Tags::new()
        } else {
            tags(&[("Name", entry)])
        };
        let id = fake
            .create_security_group(&CreateSecurityGroup {
                name: format!("user-{i}"),
                description: "user group".into(),
                vpc_id: vpc.into(),
                tags: t,
            })
            .await
            .unwrap();
        out.push(if entry.starts_with("sg-") {
            id
        } else {
            entry.to_string()
        });
    }
    ann.insert(key.into(), out.join(","));
}

/// Builds the stack of a Service against the fake's subnets.
pub async fn service_stack(fake: &FakeAws, vpc: &str, svc: &Service, cfg: &ModelConfig) -> Stack {
    service_stack_in(fake, vpc, svc, cfg).await
}

/// Builds the stack of a Service against the VPC's subnets.
pub async fn service_stack_in(ec2: &dyn Ec2, vpc: &str, svc: &Service, cfg: &ModelConfig) -> Stack {
    let env = ServiceEnv {
        subnets: Some(subnet_infos(ec2, vpc).await),
        existing_load_balancer: None,
        vpc_cidrs: Some(vec!["10.0.0.0/8".into()]),
    };
    let stack = build_service_stack(svc, cfg, &env).unwrap();
    assert_eq!(stack.kind, StackKind::Service);
    stack
}

/// The deployed stack has the model's shape: one NLB with its name, scheme, type and tags,
/// its security groups, one listener per model listener, the model's target groups (TCP
/// health checks without path or matcher).
pub fn assert_nlb_shape(name: &str, inv: &Inventory, stack: &Stack) {
    let want = stack.load_balancer.as_ref().unwrap();
    assert_eq!(inv.lbs.len(), 1, "{name}: {inv:#?}");
    let (lb, lb_tags) = &inv.lbs[0];
    assert_eq!(lb.name, want.name, "{name}");
    assert_eq!(lb.lb_type, "network", "{name}");
    assert_eq!(lb.scheme, want.scheme.as_str(), "{name}");
    assert_eq!(lb_tags, &want.tags, "{name}");
    assert_eq!(lb_tags["service.k8s.aws/resource"], "LoadBalancer");
    let want_sgs = want.security_groups.len() + want.security_group_names_or_ids.len();
    assert_eq!(lb.security_groups.len(), want_sgs, "{name}: NLB SGs");
    assert_eq!(
        inv.sgs.len(),
        usize::from(stack.managed_security_group.is_some()),
        "{name}: managed SG"
    );
    let mut got: Vec<(u16, String)> = inv
        .listeners
        .iter()
        .map(|l| (l.port, l.protocol.clone()))
        .collect();
    got.sort();
    let want_l: Vec<(u16, String)> = stack
        .listeners
        .iter()
        .map(|l| (l.port as u16, l.protocol.as_str().to_string()))
        .collect();
    assert_eq!(got, want_l, "{name}: listeners");
    for l in &stack.listeners {
        let have = inv.listeners.iter().find(|h| i32::from(h.port) == l.port);
        let have = have.unwrap();
        assert_eq!(have.certificates.first(), l.certificates.first(), "{name}");
        if l.ssl_policy.is_some() {
            assert_eq!(have.ssl_policy, l.ssl_policy, "{name}");
        }
    }
    assert_eq!(inv.tgs.len(), stack.target_groups.len(), "{name}: TGs");
    for w in &stack.target_groups {
        let (tg, t) = inv.tgs.iter().find(|(tg, _)| tg.name == w.name).unwrap();
        assert_eq!(t, &w.tags, "{name}: TG tags");
        assert_eq!(tg.protocol.as_deref(), Some(w.protocol.as_str()), "{name}");
        assert_eq!(tg.target_type, w.target_type.as_str(), "{name}");
        assert_eq!(tg.port, Some(w.port as u16), "{name}");
        let hc = &tg.health_check;
        assert_eq!(
            hc.protocol.as_deref(),
            Some(w.health_check.protocol.as_str())
        );
        if w.health_check.protocol.as_str() == "TCP" {
            assert_eq!(hc.path, None, "{name}: a TCP health check has no path");
            assert_eq!(hc.matcher_http_code, None, "{name}");
        } else {
            assert_eq!(hc.path.as_deref(), Some(w.health_check.path.as_str()));
        }
    }
}

/// Deploys `stack`, checks its shape, then deploys it again with a fresh deployer: no write.
pub async fn deploy_twice(name: &str, fake: &Arc<FakeAws>, vpc: &str, stack: &Stack) {
    deployer(fake, vpc)
        .deploy(stack)
        .await
        .unwrap_or_else(|e| panic!("{name}: {e}"));
    let inv = nlb_inventory(fake, &stack.stack_id).await;
    assert_nlb_shape(name, &inv, stack);
    fake.clear_calls();
    deployer(fake, vpc)
        .deploy(stack)
        .await
        .unwrap_or_else(|e| panic!("{name} (second deploy): {e}"));
    assert_eq!(
        write_ops(fake),
        Vec::<String>::new(),
        "{name}: second deploy"
    );
}

#[tokio::test]
async fn every_golden_nlb_stack_deploys_then_redeploys_without_writes() {
    let cases = golden_cases();
    assert!(cases.len() >= 30, "{} golden cases", cases.len());
    for (name, case) in cases {
        let settings = &case["settings"];
        for tcp_udp in [true, false] {
            if !tcp_udp && flag(settings, "skipTcpUdpDisabled") {
                continue;
            }
            let fake = fake();
            let cidrs: Vec<&str> = settings["subnets"]
                .as_array()
                .unwrap()
                .iter()
                .map(|p| p[1].as_str().unwrap())
                .collect();
            let vpc = nlb_network(&fake, &cidrs, flag(settings, "ipv6"));
            let mut svc: Service = serde_json::from_value(case["service"].clone()).unwrap();
            with_user_sgs(&fake, &vpc, &mut svc).await;
            let cfg = case_config(settings, tcp_udp, &vpc);
            let stack = service_stack(&fake, &vpc, &svc, &cfg).await;
            deploy_twice(&format!("{name} (tcp_udp {tcp_udp})"), &fake, &vpc, &stack).await;
        }
    }
}

pub fn svc(yaml: &str) -> Service {
    serde_yaml::from_str(yaml).unwrap()
}

pub fn nlb_config(vpc: &str) -> ModelConfig {
    ModelConfig {
        cluster_name: CLUSTER.into(),
        vpc_id: Some(vpc.into()),
        enable_backend_sg: true,
        ..Default::default()
    }
}

/// Dualstack, internet-facing, ip targets (IPv6 target groups): EIPs, IPv6 addresses and
/// source-NAT prefixes per subnet, TLS with two certificates, an SSL policy and ALPN, TCP_UDP,
/// listener / load-balancer / target-group attributes, proxy protocol, HTTP health checks,
/// capacity reservation, PrivateLink enforcement, ICMP path MTU and extra tags.
pub const EDGE: &str = r#"
metadata:
  name: edge
  namespace: net
  uid: 0d6f5a1e-0000-4000-8000-000000000001
  annotations:
    service.beta.kubernetes.io/aws-load-balancer-type: external
    service.beta.kubernetes.io/aws-load-balancer-nlb-target-type: ip
    service.beta.kubernetes.io/aws-load-balancer-scheme: internet-facing
    service.beta.kubernetes.io/aws-load-balancer-ip-address-type: dualstack
    service.beta.kubernetes.io/aws-load-balancer-eip-allocations: eipalloc-0a,eipalloc-0b,eipalloc-0c
    service.beta.kubernetes.io/aws-load-balancer-ipv6-addresses: 2600:1f13:0::10,2600:1f13:1::10,2600:1f13:2::10
    service.beta.kubernetes.io/aws-load-balancer-enable-prefix-for-ipv6-source-nat: "on"
    service.beta.kubernetes.io/aws-load-balancer-source-nat-ipv6-prefixes: auto_assigned,auto_assigned,auto_assigned
    service.beta.kubernetes.io/aws-load-balancer-ssl-cert: arn:aws:acm:us-west-2:111122223333:certificate/a,arn:aws:acm:us-west-2:111122223333:certificate/b
    service.beta.kubernetes.io/aws-load-balancer-ssl-ports: tls
    service.beta.kubernetes.io/aws-load-balancer-ssl-negotiation-policy: ELBSecurityPolicy-TLS13-1-2-2021-06
    service.beta.kubernetes.io/aws-load-balancer-alpn-policy: HTTP2Preferred
    service.beta.kubernetes.io/aws-load-balancer-backend-protocol: ssl
    service.beta.kubernetes.io/aws-load-balancer-enable-tcp-udp-listener: "true"
    service.beta.kubernetes.io/aws-load-balancer-attributes: load_balancing.cross_zone.enabled=true,dns_record.client_routing_policy=availability_zone_affinity
    service.beta.kubernetes.io/aws-load-balancer-target-group-attributes: deregistration_delay.timeout_seconds=30,stickiness.enabled=true,stickiness.type=source_ip
    service.beta.kubernetes.io/aws-load-balancer-proxy-protocol-per-target-group: "80"
    service.beta.kubernetes.io/aws-load-balancer-listener-attributes.TCP-80: tcp.idle_timeout.seconds=600
    service.beta.kubernetes.io/aws-load-balancer-minimum-load-balancer-capacity: CapacityUnits=100
    service.beta.kubernetes.io/aws-load-balancer-inbound-sg-rules-on-private-link-traffic: "off"
    service.beta.kubernetes.io/aws-load-balancer-healthcheck-protocol: HTTP
    service.beta.kubernetes.io/aws-load-balancer-healthcheck-path: /ready
    service.beta.kubernetes.io/aws-load-balancer-healthcheck-success-codes: 200-299
    service.beta.kubernetes.io/aws-load-balancer-enable-icmp-for-path-mtu-discovery: "on"
    service.beta.kubernetes.io/aws-load-balancer-additional-resource-tags: team=edge
spec:
  type: LoadBalancer
  ipFamilies: [IPv6]
  ports:
  - {name: http, port: 80, targetPort: 8080, protocol: TCP}
  - {name: tls, port: 443, targetPort: 8443, protocol: TCP}
  - {name: dns, port: 53, targetPort: 5353, protocol: UDP}
  - {name: dns-tcp, port: 53, targetPort: 5353, protocol: TCP}
"#;

/// Internal, instance targets with `externalTrafficPolicy: Local`: fixed private IPv4
/// addresses per subnet, source ranges, health check on the health-check node port.
pub const INNER: &str = r#"
metadata:
  name: inner
  namespace: net
  uid: 0d6f5a1e-0000-4000-8000-000000000002
  annotations:
    service.beta.kubernetes.io/aws-load-balancer-type: external
    service.beta.kubernetes.io/aws-load-balancer-nlb-target-type: instance
    service.beta.kubernetes.io/aws-load-balancer-scheme: internal
    service.beta.kubernetes.io/aws-load-balancer-private-ipv4-addresses: 10.0.1.10,10.0.2.10,10.0.3.10
    service.beta.kubernetes.io/aws-load-balancer-target-group-attributes: preserve_client_ip.enabled=true,deregistration_delay.connection_termination.enabled=true
spec:
  type: LoadBalancer
  externalTrafficPolicy: Local
  healthCheckNodePort: 32000
  loadBalancerSourceRanges: [10.0.0.0/8]
  ports:
  - {name: db, port: 5432, targetPort: 5432, nodePort: 30432, protocol: TCP}
"#;

/// An NLB without security groups (`disable-nlb-sg`), UDP, legacy node rules from CIDRs.
pub const LEGACY: &str = r#"
metadata:
  name: legacy
  namespace: net
  uid: 0d6f5a1e-0000-4000-8000-000000000003
  annotations:
    service.beta.kubernetes.io/aws-load-balancer-type: external
    service.beta.kubernetes.io/aws-load-balancer-nlb-target-type: instance
    service.beta.kubernetes.io/aws-load-balancer-scheme: internet-facing
    service.beta.kubernetes.io/aws-load-balancer-disable-nlb-sg: "true"
spec:
  type: LoadBalancer
  ports:
  - {name: syslog, port: 514, targetPort: 514, nodePort: 30514, protocol: UDP}
"#;

pub const SUBNETS: [&str; 3] = ["10.0.1.0/24", "10.0.2.0/24", "10.0.3.0/24"];

#[tokio::test]
async fn nlb_annotation_families_deploy_as_asked_then_redeploy_without_writes() {
    for (name, yaml) in [("edge", EDGE), ("inner", INNER), ("legacy", LEGACY)] {
        let fake = fake();
        let vpc = nlb_network(&fake, &SUBNETS, true);
        let stack = service_stack(&fake, &vpc, &svc(yaml), &nlb_config(&vpc)).await;
        deploy_twice(name, &fake, &vpc, &stack).await;
        let inv = nlb_inventory(&fake, &stack.stack_id).await;
        let (lb, _) = &inv.lbs[0];
        let want = stack.load_balancer.as_ref().unwrap();
        let attrs = fake
            .describe_load_balancer_attributes(&lb.arn)
            .await
            .unwrap();
        for (k, v) in &want.attributes {
            assert_eq!(attrs.get(k), Some(v), "{name}: {k}");
        }
        for l in &inv.listeners {
            let la = fake.describe_listener_attributes(&l.arn).await.unwrap();
            let w = stack.listeners.iter().find(|w| w.port == i32::from(l.port));
            for (k, v) in &w.unwrap().attributes {
                assert_eq!(la.get(k), Some(v), "{name}: listener {} {k}", l.port);
            }
        }
        for (tg, _) in &inv.tgs {
            let ta = fake
                .describe_target_group_attributes(&tg.arn)
                .await
                .unwrap();
            let w = stack.target_groups.iter().find(|w| w.name == tg.name);
            for (k, v) in &w.unwrap().attributes {
                assert_eq!(ta.get(k), Some(v), "{name}: TG {} {k}", tg.name);
            }
        }
        let addresses: Vec<LbAddress> = lb
            .availability_zones
            .iter()
            .flat_map(|z| z.addresses.clone())
            .collect();
        match name {
            "edge" => {
                assert_eq!(lb.ip_address_type, "dualstack");
                assert_eq!(lb.enable_prefix_for_ipv6_source_nat.as_deref(), Some("on"));
                assert_eq!(
                    lb.enforce_private_link_inbound_rules.as_deref(),
                    Some("off")
                );
                let mut eips: Vec<String> = addresses
                    .iter()
                    .filter_map(|a| a.allocation_id.clone())
                    .collect();
                eips.sort();
                assert_eq!(eips, ["eipalloc-0a", "eipalloc-0b", "eipalloc-0c"]);
                assert_eq!(
                    addresses
                        .iter()
                        .filter(|a| a.ipv6_address.is_some())
                        .count(),
                    3
                );
                assert_eq!(
                    fake.describe_capacity_reservation(&lb.arn).await.unwrap(),
                    Some(100)
                );
                let tls = inv.listeners.iter().find(|l| l.port == 443).unwrap();
                assert_eq!(tls.alpn_policy, vec!["HTTP2Preferred".to_string()]);
                let certs = fake.describe_listener_certificates(&tls.arn).await.unwrap();
                assert_eq!(certs.len(), 2, "default + extra certificate: {certs:?}");
                assert!(inv.listeners.iter().any(|l| l.protocol == "TCP_UDP"));
                assert!(inv
                    .tgs
                    .iter()
                    .all(|(t, _)| t.ip_address_type.as_deref() == Some("ipv6")));
            }
            "inner" => {
                let mut ips: Vec<String> = addresses
                    .iter()
                    .filter_map(|a| a.private_ipv4_address.clone())
                    .collect();
                ips.sort();
                assert_eq!(ips, ["10.0.1.10", "10.0.2.10", "10.0.3.10"]);
                let hc = &inv.tgs[0].0.health_check;
                assert_eq!(hc.port.as_deref(), Some("32000"));
                assert_eq!(hc.path.as_deref(), Some("/healthz"));
            }
            _ => assert!(lb.security_groups.is_empty()),
        }
    }
}

#[tokio::test]
async fn an_nlb_created_without_security_groups_never_gets_any() {
    let fake = fake();
    let vpc = nlb_network(&fake, &SUBNETS, false);
    let cfg = nlb_config(&vpc);
    let legacy = service_stack(&fake, &vpc, &svc(LEGACY), &cfg).await;
    deployer(&fake, &vpc).deploy(&legacy).await.unwrap();
    // A stack that asks for security groups on the SG-less NLB (a model built without
    // knowing it exists): AWS cannot add them, so the deployer leaves the NLB's alone.
    let yaml = LEGACY.replace(
        "aws-load-balancer-disable-nlb-sg: \"true\"",
        "aws-load-balancer-disable-nlb-sg: \"false\"",
    );
    let with_sgs = service_stack(&fake, &vpc, &svc(&yaml), &cfg).await;
    assert!(with_sgs.managed_security_group.is_some());
    fake.clear_calls();
    deployer(&fake, &vpc).deploy(&with_sgs).await.unwrap();
    assert!(
        !write_ops(&fake).contains(&"SetSecurityGroups".to_string()),
        "{:?}",
        write_ops(&fake)
    );
    let inv = nlb_inventory(&fake, "net/legacy").await;
    assert!(inv.lbs[0].0.security_groups.is_empty());
    assert_eq!(fake.count("CreateLoadBalancer"), 0, "kept, not replaced");
}
