//! Shared fixtures of the NLB (Service) deploy tests — golden cases, fake VPCs, stack building,
//! the shape check — and the golden test: every golden case of the NLB model (both TCP_UDP
//! settings) deploys on FakeAws with upstream's shape, then redeploys with no write call.

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
        ..Default::default()
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

pub const SUBNETS: [&str; 3] = ["10.0.1.0/24", "10.0.2.0/24", "10.0.3.0/24"];

/// Ports 80 (TCP) and 53 (UDP), ip targets, managed SG.
pub const TWO_PORTS: &str = r#"
metadata:
  name: dns
  namespace: net
  uid: 0d6f5a1e-0000-4000-8000-000000000010
  annotations:
    service.beta.kubernetes.io/aws-load-balancer-type: nlb-ip
    service.beta.kubernetes.io/aws-load-balancer-scheme: internet-facing
spec:
  type: LoadBalancer
  ports:
  - {name: http, port: 80, targetPort: 8080, protocol: TCP}
  - {name: dns, port: 53, targetPort: 5353, protocol: UDP}
"#;

pub async fn two_ports(fake: &Arc<FakeAws>) -> (String, Stack) {
    let vpc = nlb_network(fake, &SUBNETS, false);
    let stack = service_stack(fake, &vpc, &svc(TWO_PORTS), &nlb_config(&vpc)).await;
    (vpc, stack)
}

/// Exactly one deploy's worth of resources, and nothing else in the account.
pub async fn assert_converged(fake: &Arc<FakeAws>, stack: &Stack) {
    let inv = nlb_inventory(fake, &stack.stack_id).await;
    assert_nlb_shape("converged", &inv, stack);
    let all_lbs = fake.describe_load_balancers(&Default::default()).await;
    assert_eq!(all_lbs.unwrap().len(), 1);
    let all_tgs = fake.describe_target_groups(&Default::default()).await;
    assert_eq!(all_tgs.unwrap().len(), stack.target_groups.len());
    let all_sgs = fake.describe_security_groups(&Ec2Query::default()).await;
    assert_eq!(all_sgs.unwrap().len(), 2, "managed + backend SG");
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
