//! LoadBalancerConfiguration fields against upstream's `pkg/gateway/model` and
//! `config_resolver.go`: explicit `securityGroups` with `manageBackendSecurityGroupRules`,
//! `loadBalancerSubnetsSelector`, the ALB-only address pools, and `defaultTargetGroupConfiguration`
//! merged under the Services' own TargetGroupConfigurations — configurations as manifests.

use serde_json::{json, Value};

use super::{cfg, gateway, services, yaml, UID};
use crate::fixtures::TestObject;
use crate::model::gateway::listeners::LbKind;
use crate::model::gateway::*;
use crate::model::subnets::SubnetInfo;
use crate::model::types::{Subnets, TargetType, Token};
use crate::model::{ModelConfig, ModelError};
use gateway_api::apis::experimental::{tcproutes::TcpRoute, udproutes::UdpRoute};

/// `my-route-ns/my-route` on listener `http` of `my-gw-ns/my-gw`, to `my-svc` port 80.
fn route() -> Vec<HttpRoute> {
    let route = HttpRoute::test("my-route-ns", "my-route")
        .parent_with("my-gw", |p| p.namespace("my-gw-ns").section("http"))
        .rule(|r| r.backend("my-svc", 80));
    vec![route.build()]
}

/// A LoadBalancerConfiguration `name` in `namespace` with `spec` (YAML flow mapping).
pub(super) fn lbc(namespace: &str, name: &str, spec: &str) -> LoadBalancerConfiguration {
    yaml(&format!(
        "apiVersion: gateway.k8s.aws/v1\nkind: LoadBalancerConfiguration\nmetadata: {{name: {name}, namespace: {namespace}}}\nspec: {spec}\n"
    ))
}

pub(super) struct Case {
    pub(super) class: Option<LoadBalancerConfiguration>,
    pub(super) gateway: Option<LoadBalancerConfiguration>,
    pub(super) tg_configs: String,
    pub(super) cfg: ModelConfig,
    pub(super) subnets: Option<Vec<SubnetInfo>>,
    /// The Gateway built (`gateway()` unless said).
    pub(super) gw: Gateway,
}

impl Default for Case {
    fn default() -> Self {
        Self {
            class: None,
            gateway: None,
            tg_configs: "[]".into(),
            cfg: cfg(),
            subnets: None,
            gw: gateway(),
        }
    }
}

impl Case {
    pub(super) fn build(&self, lb: LbKind) -> Result<GatewayBuild, ModelError> {
        let routes = route();
        let services = services();
        let tg_configs: Vec<TargetGroupConfiguration> = yaml(&self.tg_configs);
        let inputs = GatewayInputs {
            class_config: self.class.as_ref(),
            gateway_config: self.gateway.as_ref(),
            http_routes: &routes,
            services: &services,
            tg_configs: &tg_configs,
            ..GatewayInputs::new(&self.gw)
        };
        let subnets = self.subnets.as_deref();
        match lb {
            LbKind::Alb => build_alb_gateway_stack(&inputs, &self.cfg, subnets),
            LbKind::Nlb => build_nlb_gateway_stack(&inputs, &self.cfg, subnets),
        }
    }

    pub(super) fn alb(&self) -> GatewayBuild {
        self.build(LbKind::Alb).unwrap()
    }

    fn alb_error(&self) -> String {
        self.build(LbKind::Alb).unwrap_err().to_string()
    }
}

pub(super) fn with_gateway(spec: &str) -> Case {
    Case {
        gateway: Some(lbc("my-gw-ns", "lbc", spec)),
        ..Case::default()
    }
}

fn without_backend_sg() -> ModelConfig {
    ModelConfig {
        enable_backend_sg: false,
        ..cfg()
    }
}

#[test]
fn explicit_security_groups_replace_the_managed_one_and_leave_node_ports_to_the_user() {
    let b = with_gateway("{securityGroups: [sg-0123456789abcdef0, web-frontend]}").alb();
    let s = &b.stack;
    assert!(s.managed_security_group.is_none(), "no managed SG");
    assert!(s.backend_security_group.is_none());
    let lb = s.load_balancer.as_ref().unwrap();
    assert!(lb.security_groups.is_empty(), "{:?}", lb.security_groups);
    assert_eq!(
        lb.security_group_names_or_ids,
        vec!["sg-0123456789abcdef0", "web-frontend"],
        "ids and Name tags, resolved by the deployer"
    );
    let tgb = &s.target_group_bindings[0];
    assert!(
        tgb.spec.networking.is_empty(),
        "no backend SG: upstream leaves the TGB without networking"
    );

    // An empty list is no list: the managed group, as upstream.
    let b = with_gateway("{securityGroups: []}").alb();
    assert!(b.stack.managed_security_group.is_some());
}

#[test]
fn manage_backend_security_group_rules_adds_the_shared_backend_group_or_upstreams_error() {
    let spec = "{securityGroups: [sg-1], manageBackendSecurityGroupRules: true}";
    let e = Case {
        cfg: without_backend_sg(),
        ..with_gateway(spec)
    }
    .alb_error();
    assert!(
        e.contains(
            "backendSG feature is required to manage worker node SG rules when frontendSG manually specified"
        ),
        "{e}"
    );
    assert!(cfg().enable_backend_sg);
    let b = with_gateway(spec).alb();
    let s = &b.stack;
    assert!(s.managed_security_group.is_none());
    assert!(s.backend_security_group.is_some());
    let lb = s.load_balancer.as_ref().unwrap();
    assert_eq!(lb.security_groups, vec![Token::BackendSecurityGroupId]);
    assert_eq!(lb.security_group_names_or_ids, vec!["sg-1"]);
    let sources: Vec<&Token> = s.target_group_bindings[0]
        .spec
        .networking
        .iter()
        .map(|r| &r.from_security_group)
        .collect();
    assert!(!sources.is_empty());
    assert!(sources.iter().all(|t| **t == Token::BackendSecurityGroupId));

    // Without explicit groups the flag changes nothing: managed + backend as before.
    let b = with_gateway("{manageBackendSecurityGroupRules: true}").alb();
    let lb = b.stack.load_balancer.as_ref().unwrap();
    assert_eq!(
        lb.security_groups,
        vec![Token::ManagedSecurityGroupId, Token::BackendSecurityGroupId]
    );
}

#[test]
fn disable_restricted_sg_rules_opens_every_node_port_from_the_backend_group() {
    use crate::crd::target_group_binding::NetworkingProtocol::Tcp;
    let rules = |cfg: ModelConfig| {
        let b = Case {
            cfg,
            ..Case::default()
        }
        .alb();
        let tgb = &b.stack.target_group_bindings[0];
        assert!(tgb
            .spec
            .networking
            .iter()
            .all(|r| r.from_security_group == Token::BackendSecurityGroupId));
        tgb.spec
            .networking
            .iter()
            .map(|r| (r.protocol, r.port.clone()))
            .collect::<Vec<_>>()
    };
    let restricted = rules(cfg());
    assert!(
        !restricted.is_empty()
            && restricted
                .iter()
                .all(|(p, port)| *p == Some(Tcp) && port.is_some()),
        "{restricted:?}"
    );
    let open = rules(ModelConfig {
        disable_restricted_sg_rules: true,
        ..cfg()
    });
    assert_eq!(
        open,
        vec![(Some(Tcp), None)],
        "--disable-restricted-sg-rules"
    );
}

fn subnet(id: &str, az: &str, tags: &[(&str, &str)]) -> SubnetInfo {
    SubnetInfo {
        id: id.into(),
        vpc_id: "vpc-1".into(),
        availability_zone: az.into(),
        available_ips: 100,
        tags: tags
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect(),
        ..SubnetInfo::default()
    }
}

#[test]
fn an_nlb_gateway_needs_one_subnet_an_alb_gateway_two() {
    let one = SubnetInfo {
        zone_type: "availability-zone".into(),
        ..subnet(
            "subnet-a",
            "az1",
            &[("kubernetes.io/role/internal-elb", "1")],
        )
    };
    let case = Case {
        subnets: Some(vec![one]),
        ..Case::default()
    };
    let b = case.build(LbKind::Nlb).unwrap();
    assert_eq!(
        b.stack.load_balancer.unwrap().subnets,
        Subnets::Resolved(vec!["subnet-a".into()])
    );
    let e = case.alb_error();
    assert!(
        e.contains("subnets count less than minimal required count: 1 < 2"),
        "{e}"
    );
}

#[test]
fn the_subnet_selector_picks_tagged_subnets_and_identifiers_win_over_it() {
    let role = ("kubernetes.io/role/elb", "1");
    let vpc = vec![
        subnet("subnet-a", "az1", &[role]),
        subnet("subnet-b", "az2", &[role]),
        subnet("subnet-c", "az1", &[("tier", "edge")]),
        subnet("subnet-d", "az2", &[("tier", "edge-2")]),
        subnet("subnet-e", "az3", &[("tier", "core")]),
    ];
    let selector = "{loadBalancerSubnetsSelector: {tier: [edge, edge-2]}}";
    let b = Case {
        subnets: Some(vpc.clone()),
        ..with_gateway(selector)
    }
    .alb();
    let lb = b.stack.load_balancer.unwrap();
    assert_eq!(
        lb.subnets,
        Subnets::Resolved(vec!["subnet-c".into(), "subnet-d".into()]),
        "the selector, not the role tag"
    );

    // Without the VPC's subnets the plan shows the selector.
    let lb = with_gateway(selector).alb().stack.load_balancer.unwrap();
    assert_eq!(
        lb.subnets,
        Subnets::Selector {
            ids: vec![],
            tags: [("tier".to_string(), vec!["edge".into(), "edge-2".into()])].into(),
        }
    );

    let both = "{loadBalancerSubnets: [{identifier: subnet-a}, {identifier: subnet-b}], loadBalancerSubnetsSelector: {tier: [edge]}}";
    let b = Case {
        subnets: Some(vpc),
        ..with_gateway(both)
    }
    .alb();
    assert_eq!(
        b.stack.load_balancer.unwrap().subnets,
        Subnets::Resolved(vec!["subnet-a".into(), "subnet-b".into()])
    );
}

#[test]
fn address_pools_go_to_albs_and_are_a_warning_on_nlbs() {
    let spec = "{customerOwnedIpv4Pool: ipv4pool-coip-1, ipv4IPAMPoolId: ipam-pool-1}";
    let lb = with_gateway(spec).alb().stack.load_balancer.unwrap();
    assert_eq!(
        lb.customer_owned_ipv4_pool.as_deref(),
        Some("ipv4pool-coip-1")
    );
    assert_eq!(lb.ipv4_ipam_pool_id.as_deref(), Some("ipam-pool-1"));

    let b = with_gateway(spec).build(LbKind::Nlb).unwrap();
    let lb = b.stack.load_balancer.as_ref().unwrap();
    assert_eq!(
        (&lb.customer_owned_ipv4_pool, &lb.ipv4_ipam_pool_id),
        (&None, &None)
    );
    let warnings: Vec<&str> = b
        .stack
        .warnings
        .iter()
        .map(|w| w.message.as_str())
        .collect();
    assert_eq!(warnings.len(), 2, "{warnings:?}");
    assert!(
        warnings[0].contains("customerOwnedIpv4Pool"),
        "{warnings:?}"
    );
    assert!(warnings[1].contains("ipv4IPAMPoolId"), "{warnings:?}");
}

/// The class's default (namespace infra).
const CLASS_DEFAULTS: &str = r#"
- apiVersion: gateway.k8s.aws/v1
  kind: TargetGroupConfiguration
  metadata: {name: class-defaults, namespace: infra}
  spec:
    defaultConfiguration:
      targetType: ip
      healthCheckConfig: {healthCheckPath: /class}
      tags: {team: class, tier: web}
      targetGroupAttributes: [{key: deregistration_delay.timeout_seconds, value: "30"}]
    routeConfigurations:
    - routeIdentifier: {kind: HTTPRoute}
      targetGroupProps: {tags: {route: http}}
"#;

/// The Gateway's default (my-gw-ns) and the Service's own configuration.
const GW_DEFAULTS_AND_SVC: &str = r#"
- apiVersion: gateway.k8s.aws/v1
  kind: TargetGroupConfiguration
  metadata: {name: gw-defaults, namespace: my-gw-ns}
  spec:
    defaultConfiguration:
      healthCheckConfig: {healthCheckPath: /gw}
      enableMultiCluster: true
      tags: {team: gw, owner: gw}
- apiVersion: gateway.k8s.aws/v1
  kind: TargetGroupConfiguration
  metadata: {name: svc, namespace: my-route-ns}
  spec:
    targetReference: {name: my-svc}
    defaultConfiguration:
      tags: {team: svc}
      targetGroupAttributes: [{key: slow_start.duration_seconds, value: "10"}]
"#;

fn defaults(mode: &str) -> Case {
    Case {
        class: Some(lbc(
            "infra",
            "class-lbc",
            &format!("{{mergingMode: {mode}, defaultTargetGroupConfiguration: {{name: class-defaults}}}}"),
        )),
        gateway: Some(lbc(
            "my-gw-ns",
            "gw-lbc",
            "{defaultTargetGroupConfiguration: {name: gw-defaults}}",
        )),
        tg_configs: format!("{CLASS_DEFAULTS}{GW_DEFAULTS_AND_SVC}"),
        ..Case::default()
    }
}

#[test]
fn default_target_group_configurations_merge_by_mode_under_the_services_own() {
    let b = defaults("prefer-gateway-class").alb();
    let tg = &b.stack.target_groups[0];
    // The class's default wins field-wise over the Gateway's and keeps its route configuration;
    // the Service's configuration wins over both.
    assert_eq!(tg.target_type, TargetType::Ip);
    assert_eq!(tg.health_check.path, "/class");
    let tag = |k: &str| tg.tags.get(k).map(String::as_str);
    assert_eq!(tag("team"), Some("svc"));
    assert_eq!(tag("tier"), Some("web"));
    assert_eq!(tag("owner"), Some("gw"));
    assert_eq!(tag("route"), Some("http"));
    assert_eq!(
        tg.attributes.keys().collect::<Vec<_>>(),
        vec![
            "deregistration_delay.timeout_seconds",
            "slow_start.duration_seconds"
        ]
    );
    assert!(
        b.stack.target_group_bindings[0]
            .spec
            .multi_cluster_target_group,
        "a field only the Gateway's default sets"
    );

    // prefer-gateway: the Gateway's default wins and its (absent) route configurations are used.
    let b = defaults("prefer-gateway").alb();
    let tg = &b.stack.target_groups[0];
    assert_eq!(tg.health_check.path, "/gw");
    assert_eq!(tg.target_type, TargetType::Ip, "still from the class's");
    assert_eq!(tg.tags.get("route"), None);
    assert_eq!(tg.tags.get("team").map(String::as_str), Some("svc"));

    // The default alone (no configuration of the Service's own) applies as it is.
    let mut only = defaults("prefer-gateway-class");
    only.gateway = None;
    only.tg_configs = CLASS_DEFAULTS.into();
    let b = only.alb();
    let tg = &b.stack.target_groups[0];
    assert_eq!(tg.tags.get("team").map(String::as_str), Some("class"));
    assert_eq!(tg.target_type, TargetType::Ip);
}

#[test]
fn a_default_target_group_configuration_missing_or_with_a_target_is_upstreams_error() {
    let mut missing = defaults("prefer-gateway-class");
    missing.tg_configs = "[]".into();
    assert!(missing.alb_error().contains(
        "failed to resolve default TargetGroupConfiguration for GatewayClass LBC: targetgroupconfigurations.gateway.k8s.aws \"class-defaults\" not found"
    ));
    missing.class = None;
    assert!(missing.alb_error().contains(
        "failed to resolve default TargetGroupConfiguration \"gw-defaults\" referenced by Gateway LoadBalancerConfiguration \"gw-lbc\" in namespace \"my-gw-ns\": targetgroupconfigurations.gateway.k8s.aws \"gw-defaults\" not found"
    ));
    let targeted = Case {
        gateway: Some(lbc(
            "my-route-ns",
            "lbc",
            "{defaultTargetGroupConfiguration: {name: svc}}",
        )),
        tg_configs: GW_DEFAULTS_AND_SVC.into(),
        ..Case::default()
    };
    let e = targeted.alb_error();
    assert!(e.contains("TargetGroupConfiguration \"svc\" in namespace \"my-route-ns\" has targetReference set and cannot be used as a defaultTargetGroupConfiguration — a default TGC must not have targetReference"), "{e}");
}

/// An NLB Gateway with a TCP and a UDP listener, one route each to `my-svc`, under `lbc`.
pub(super) fn nlb_without_groups(lbc_spec: &str, subnets: Option<Vec<SubnetInfo>>) -> GatewayBuild {
    nlb_gateway(lbc_spec, subnets, None).unwrap()
}

/// [`nlb_without_groups`]'s Gateway, with `existing` as the NLB its stack already has.
pub(super) fn nlb_gateway(
    lbc_spec: &str,
    subnets: Option<Vec<SubnetInfo>>,
    existing: Option<&crate::model::service::ExistingNlb>,
) -> Result<GatewayBuild, ModelError> {
    let gw = Gateway::test("my-route-ns", "my-gw")
        .uid(UID)
        .nlb()
        .parameters_ref("gateway.k8s.aws", "LoadBalancerConfiguration", "lbc")
        .listener("tcp", "TCP", 80)
        .listener("udp", "UDP", 53)
        .build();
    let tcp = [TcpRoute::test("my-route-ns", "r-tcp")
        .parent_with("my-gw", |p| p.section("tcp"))
        .rule(|r| r.backend("my-svc", 80))
        .build()];
    let udp = [UdpRoute::test("my-route-ns", "r-udp")
        .parent_with("my-gw", |p| p.section("udp"))
        .rule(|r| r.backend("my-svc", 80))
        .build()];
    let services = services();
    let config = lbc("my-route-ns", "lbc", lbc_spec);
    let vpc = vec!["10.0.0.0/16".to_string()];
    let inputs = GatewayInputs {
        gateway_config: Some(&config),
        tcp_routes: &tcp,
        udp_routes: &udp,
        services: &services,
        vpc_cidrs: Some(&vpc),
        existing_load_balancer: existing,
        ..GatewayInputs::new(&gw)
    };
    build_nlb_gateway_stack(&inputs, &cfg(), subnets.as_deref())
}

#[test]
fn disable_security_group_makes_an_nlb_without_groups_with_node_rules_from_cidrs() {
    let b = nlb_without_groups(
        "{scheme: internal, disableSecurityGroup: true, loadBalancerSubnets: [{identifier: subnet-a}, {identifier: subnet-b}]}",
        Some(addressed_subnets()),
    );
    let lb = b.stack.load_balancer.as_ref().unwrap();
    assert!(lb.security_groups.is_empty() && lb.security_group_names_or_ids.is_empty());
    assert!(b.stack.managed_security_group.is_none());
    assert!(b.stack.backend_security_group.is_none());
    assert!(b.stack.warnings.is_empty(), "{:?}", b.stack.warnings);
    let rules: Vec<(Vec<String>, Vec<String>)> = b
        .stack
        .target_group_bindings
        .iter()
        .flat_map(|t| {
            assert!(t.spec.networking.is_empty(), "no group peer");
            t.spec.networking_from_cidrs.iter()
        })
        .map(|r| {
            let ports = r
                .ports
                .iter()
                .map(|p| format!("{:?}/{:?}", p.protocol.unwrap(), p.port.clone().unwrap()))
                .collect();
            (r.from_cidrs.clone(), ports)
        })
        .collect();
    // Instance targets preserve client IPs: traffic from the VPC (internal, no source ranges);
    // the TCP health check rides on it; the UDP one gets its own rule from the subnets.
    let vpc = vec!["10.0.0.0/16".to_string()];
    let subnets = vec!["10.0.1.0/24".to_string(), "10.0.2.0/24".to_string()];
    assert_eq!(
        rules,
        vec![
            (vpc.clone(), vec!["Tcp/Int(30080)".to_string()]),
            (vpc, vec!["Udp/Int(30080)".to_string()]),
            (subnets, vec!["Tcp/Int(30080)".to_string()]),
        ]
    );
    // Source ranges replace the default sources.
    let b = nlb_without_groups(
        "{disableSecurityGroup: true, sourceRanges: [192.0.2.0/24], loadBalancerSubnets: [{identifier: subnet-a}]}",
        Some(addressed_subnets()),
    );
    let t = &b.stack.target_group_bindings[0];
    assert_eq!(t.spec.networking_from_cidrs[0].from_cidrs, ["192.0.2.0/24"]);
    // Without the subnets (a plan from manifests) the rules are unknown: said, not dropped.
    let b = nlb_without_groups("{disableSecurityGroup: true}", None);
    assert!(
        b.stack
            .warnings
            .iter()
            .any(|w| w.message == crate::model::tgb_cidrs::NEEDS_AWS),
        "{:?}",
        b.stack.warnings
    );
    // ALBs ignore the switch, as upstream.
    let b = with_gateway("{disableSecurityGroup: true}").alb();
    assert!(
        b.stack.managed_security_group.is_some(),
        "ALBs always have groups"
    );
}

#[test]
fn private_link_enforcement_goes_to_nlbs_and_is_a_warning_on_albs() {
    let case = with_gateway("{enforceSecurityGroupInboundRulesOnPrivateLinkTraffic: 'off'}");
    let b = case.build(LbKind::Nlb).unwrap();
    let lb = b.stack.load_balancer.as_ref().unwrap();
    assert_eq!(
        lb.security_groups_inbound_rules_on_private_link.as_deref(),
        Some("off")
    );
    assert!(b.stack.warnings.is_empty(), "{:?}", b.stack.warnings);
    let b = case.alb();
    let lb = b.stack.load_balancer.as_ref().unwrap();
    assert_eq!(lb.security_groups_inbound_rules_on_private_link, None);
    let [w] = &b.stack.warnings[..] else {
        panic!("{:?}", b.stack.warnings)
    };
    assert!(
        w.message
            .contains("enforceSecurityGroupInboundRulesOnPrivateLinkTraffic applies to Network"),
        "{}",
        w.message
    );
}

/// Two public subnets with IPv4 and IPv6 CIDRs, role-tagged for internet-facing discovery.
fn addressed_subnets() -> Vec<SubnetInfo> {
    let role = ("kubernetes.io/role/elb", "1");
    vec![
        SubnetInfo {
            cidr_block: "10.0.1.0/24".into(),
            ipv6_cidrs: vec!["2600:1f14:1::/64".into()],
            ..subnet("subnet-a", "az1", &[role])
        },
        SubnetInfo {
            cidr_block: "10.0.2.0/24".into(),
            ipv6_cidrs: vec!["2600:1f14:2::/64".into()],
            ..subnet("subnet-b", "az2", &[role])
        },
    ]
}

fn nlb_mappings(spec: &str) -> Result<Vec<crate::model::types::SubnetMapping>, String> {
    let b = Case {
        subnets: Some(addressed_subnets()),
        ..with_gateway(spec)
    }
    .build(LbKind::Nlb)
    .map_err(|e| e.to_string())?;
    Ok(b.stack.load_balancer.unwrap().subnet_mappings)
}

#[test]
fn subnet_allocations_become_nlb_subnet_mappings_and_entries_without_identifier_mean_discovery() {
    // EIPs: entry i for the i-th subnet, as upstream's eip mutator.
    let m = nlb_mappings("{scheme: internet-facing, loadBalancerSubnets: [{identifier: subnet-a, eipAllocation: eipalloc-1}, {identifier: subnet-b, eipAllocation: eipalloc-2}]}").unwrap();
    let got: Vec<(&str, Option<&str>)> = m
        .iter()
        .map(|m| (m.subnet_id.as_str(), m.allocation_id.as_deref()))
        .collect();
    assert_eq!(
        got,
        [
            ("subnet-a", Some("eipalloc-1")),
            ("subnet-b", Some("eipalloc-2"))
        ]
    );
    // Addresses go to the subnet whose CIDR holds them, whatever the entry order.
    let m = nlb_mappings("{scheme: internal, ipAddressType: dualstack, loadBalancerSubnets: [{identifier: subnet-a, privateIPv4Allocation: 10.0.2.9, ipv6Allocation: '2600:1f14:2::9'}, {identifier: subnet-b, privateIPv4Allocation: 10.0.1.9, ipv6Allocation: '2600:1f14:1::9'}]}").unwrap();
    let got: Vec<(&str, Option<&str>, Option<&str>)> = m
        .iter()
        .map(|m| {
            (
                m.subnet_id.as_str(),
                m.private_ipv4_address.as_deref(),
                m.ipv6_address.as_deref(),
            )
        })
        .collect();
    assert_eq!(
        got,
        [
            ("subnet-a", Some("10.0.1.9"), Some("2600:1f14:1::9")),
            ("subnet-b", Some("10.0.2.9"), Some("2600:1f14:2::9"))
        ]
    );
    // Source NAT prefixes switch the NLB's prefix source NAT on.
    let spec = "{scheme: internet-facing, ipAddressType: dualstack, loadBalancerSubnets: [{identifier: subnet-a, sourceNatIPv6Prefix: '2600:1f14:1::/80'}, {identifier: subnet-b, sourceNatIPv6Prefix: auto_assigned}]}";
    let b = Case {
        subnets: Some(addressed_subnets()),
        ..with_gateway(spec)
    }
    .build(LbKind::Nlb)
    .unwrap();
    let lb = b.stack.load_balancer.unwrap();
    assert_eq!(lb.enable_prefix_for_ipv6_source_nat.as_deref(), Some("on"));
    let got: Vec<Option<&str>> = lb
        .subnet_mappings
        .iter()
        .map(|m| m.source_nat_ipv6_prefix.as_deref())
        .collect();
    assert_eq!(got, [Some("2600:1f14:1::/80"), Some("auto_assigned")]);
    // Upstream's mutator errors, by message.
    for (spec, want) in [
        ("{scheme: internet-facing, loadBalancerSubnets: [{eipAllocation: eipalloc-1}]}", "Unable to assign EIP allocations we have 2 subnets and 1 EIP allocations"),
        ("{scheme: internal, loadBalancerSubnets: [{identifier: subnet-a, privateIPv4Allocation: 10.0.2.9}, {identifier: subnet-b, privateIPv4Allocation: 10.0.2.10}]}", "expect one private IPv4 address configured for subnet: subnet-a"),
        ("{scheme: internal, loadBalancerSubnets: [{identifier: subnet-a, privateIPv4Allocation: foo}, {identifier: subnet-b, privateIPv4Allocation: bar}]}", "private IPv4 addresses must be valid IP address: foo"),
        ("{scheme: internet-facing, ipAddressType: dualstack, loadBalancerSubnets: [{identifier: subnet-a, ipv6Allocation: 10.0.1.9}, {identifier: subnet-b, ipv6Allocation: 10.0.2.9}]}", "IPv6 addresses must be valid IPv6 address: 10.0.1.9"),
        ("{scheme: internet-facing, ipAddressType: dualstack, loadBalancerSubnets: [{identifier: subnet-a, sourceNatIPv6Prefix: '2600:1f14:9::/80'}, {identifier: subnet-b, sourceNatIPv6Prefix: auto_assigned}]}", "Invalid value in source-nat-ipv6-prefixes: 2600:1f14:9::/80. Value must be within subnet CIDR range: [2600:1f14:1::/64]."),
    ] {
        let e = nlb_mappings(spec).unwrap_err();
        assert!(e.contains(want), "{spec}: {e}");
    }
    // Without allocations an NLB keeps bare subnets, with prefix source NAT off.
    let b = Case {
        subnets: Some(addressed_subnets()),
        ..with_gateway("{scheme: internet-facing}")
    }
    .build(LbKind::Nlb)
    .unwrap();
    let lb = b.stack.load_balancer.unwrap();
    assert!(lb.subnet_mappings.is_empty());
    assert_eq!(lb.enable_prefix_for_ipv6_source_nat.as_deref(), Some("off"));
    // Upstream discovers when no entry has an identifier.
    let role = ("kubernetes.io/role/internal-elb", "1");
    let b = Case {
        subnets: Some(vec![
            subnet("subnet-a", "az1", &[role]),
            subnet("subnet-b", "az2", &[role]),
        ]),
        ..with_gateway("{loadBalancerSubnets: [{}, {}]}")
    }
    .alb();
    assert_eq!(
        b.stack.load_balancer.unwrap().subnets,
        Subnets::Resolved(vec!["subnet-a".into(), "subnet-b".into()])
    );
}

#[test]
fn quic_enabled_on_an_alb_listener_is_upstreams_error() {
    let err =
        with_gateway("{listenerConfigurations: [{protocolPort: 'HTTP:80', quicEnabled: true}]}")
            .alb_error();
    assert!(
        err.contains("QUIC protocol upgrade not supported for protocol HTTP"),
        "{err}"
    );
    // quicEnabled: false asks for nothing.
    let b =
        with_gateway("{listenerConfigurations: [{protocolPort: 'HTTP:80', quicEnabled: false}]}")
            .alb();
    assert_eq!(
        b.stack.listeners[0].protocol,
        crate::model::types::Protocol::Http
    );
}

/// The Service's TargetGroupConfiguration with `targetControlPort: 3000` and `target_type`.
fn control_port(target_type: &str) -> Case {
    Case {
        tg_configs: format!(
            "[{{apiVersion: gateway.k8s.aws/v1, kind: TargetGroupConfiguration, metadata: {{name: svc, namespace: my-route-ns}}, spec: {{targetReference: {{name: my-svc}}, defaultConfiguration: {{targetType: {target_type}, targetControlPort: 3000}}}}}}]"
        ),
        ..Case::default()
    }
}

#[test]
fn target_control_port_is_refused_for_instance_targets_and_non_http_protocols() {
    let err = control_port("instance").alb_error();
    assert!(
        err.contains("target control port is not supported for instance target target group"),
        "{err}"
    );
    let b = control_port("ip").alb();
    assert_eq!(b.stack.target_groups[0].target_control_port, Some(3000));

    use crate::crd::gateway::target_group_configuration::TargetGroupProps;
    let props = TargetGroupProps {
        target_control_port: Some(3000),
        ..TargetGroupProps::default()
    };
    let err = crate::model::gateway::target_groups::target_control_port(
        Some(&props),
        crate::model::types::Protocol::Tcp,
        TargetType::Ip,
    )
    .unwrap_err();
    assert_eq!(
        err,
        "target control port is only supported for HTTP and HTTPS protocols, got: TCP"
    );
}

/// The Service's TargetGroupConfiguration with `route_configurations` (a YAML flow sequence).
fn route_configurations(route_configurations: &str) -> Case {
    Case {
        tg_configs: format!(
            "[{{apiVersion: gateway.k8s.aws/v1, kind: TargetGroupConfiguration, metadata: {{name: svc, namespace: my-route-ns}}, spec: {{targetReference: {{name: my-svc}}, routeConfigurations: {route_configurations}}}}}]"
        ),
        ..Case::default()
    }
}

fn picked(case: Case) -> Option<String> {
    case.alb().stack.target_groups[0].tags.get("pick").cloned()
}

#[test]
fn route_identifiers_match_as_upstreams_longest_match() {
    // A name without a namespace never matches (upstream's exact match needs both).
    let name_only = "[{routeIdentifier: {kind: HTTPRoute, name: my-route}, targetGroupProps: {tags: {pick: name}}}]";
    assert_eq!(picked(route_configurations(name_only)), None);
    let exact = "[{routeIdentifier: {kind: HTTPRoute, namespace: my-route-ns, name: my-route}, targetGroupProps: {tags: {pick: exact}}}, {routeIdentifier: {kind: HTTPRoute, namespace: my-route-ns}, targetGroupProps: {tags: {pick: ns}}}]";
    assert_eq!(
        picked(route_configurations(exact)).as_deref(),
        Some("exact")
    );
    // Among equal ranks the first entry wins.
    let twice = "[{routeIdentifier: {kind: HTTPRoute}, targetGroupProps: {tags: {pick: first}}}, {routeIdentifier: {kind: HTTPRoute}, targetGroupProps: {tags: {pick: second}}}]";
    assert_eq!(
        picked(route_configurations(twice)).as_deref(),
        Some("first")
    );
}

pub(super) fn warnings(b: &GatewayBuild) -> Vec<&str> {
    b.stack
        .warnings
        .iter()
        .map(|w| w.message.as_str())
        .collect()
}

/// The test Gateway with its `http` listener only, `extra` fields under `spec` and that listener
/// carrying `tls` when given.
fn gateway_with(extra: &[(&str, Value)], tls: Option<Value>) -> Case {
    let mut gw = Gateway::test("my-gw-ns", "my-gw")
        .uid(UID)
        .alb()
        .listener_with("http", "HTTP", 80, |l| match tls {
            Some(tls) => l.from_all().set("tls", tls),
            None => l.from_all(),
        });
    for (field, value) in extra {
        gw = gw.set(&["spec", *field], value.clone());
    }
    Case {
        gw: gw.build(),
        ..Case::default()
    }
}

#[test]
fn gateway_tls_and_addresses_are_a_warning_not_silently_ignored() {
    assert_eq!(warnings(&gateway_with(&[], None).alb()), Vec::<&str>::new());
    let ca = json!({"group": "", "kind": "ConfigMap", "name": "ca"});
    let extra = [
        (
            "tls",
            json!({
                "frontend": {"default": {"validation": {"caCertificateRefs": [ca]}}},
                "backend": {"clientCertificateRef": {"name": "client"}},
            }),
        ),
        (
            "addresses",
            json!([{"type": "IPAddress", "value": "10.0.0.1"}]),
        ),
    ];
    let b = gateway_with(&extra, None).alb();
    let w = warnings(&b);
    assert_eq!(w.len(), 3, "{w:?}");
    assert!(w[0].contains("spec.tls.frontend"), "{w:?}");
    assert!(w[1].contains("spec.tls.backend"), "{w:?}");
    assert!(w[2].contains("spec.addresses"), "{w:?}");
}

#[test]
fn listener_certificate_refs_and_tls_options_are_a_warning_naming_the_listener() {
    let tls = json!({"certificateRefs": [{"name": "my-cert"}], "options": {"example.com/x": "y"}});
    let b = gateway_with(&[], Some(tls)).alb();
    let w = warnings(&b);
    assert_eq!(w.len(), 2, "{w:?}");
    assert!(
        w[0].contains("listener http (port 80): tls.certificateRefs are not used"),
        "{w:?}"
    );
    assert!(
        w[1].contains("listener http (port 80): tls.options"),
        "{w:?}"
    );
}

#[test]
fn a_listener_configuration_matching_no_listener_is_a_warning() {
    let b = with_gateway(
        "{listenerConfigurations: [{protocolPort: 'HTTP:80'}, {protocolPort: 'HTTPS:8443'}]}",
    )
    .alb();
    let w = warnings(&b);
    assert_eq!(w.len(), 1, "{w:?}");
    assert!(
        w[0].contains("listenerConfigurations entry HTTPS:8443 matches no listener"),
        "{w:?}"
    );
}

#[test]
fn merged_listener_configurations_keep_the_low_sides_first_duplicate_as_upstream() {
    // The class wins (prefer-gateway-class): the Gateway's entries are the low side, where
    // upstream's merger keeps the first entry of a protocol:port and skips later ones.
    let case = Case {
        class: Some(lbc("infra", "class-lbc", "{listenerConfigurations: [{protocolPort: \"HTTP:8080\"}]}")),
        gateway: Some(lbc(
            "my-gw-ns",
            "gw-lbc",
            "{listenerConfigurations: [{protocolPort: \"HTTP:80\", listenerAttributes: [{key: routing.http.response.server.enabled, value: \"first\"}]}, {protocolPort: \"HTTP:80\", listenerAttributes: [{key: routing.http.response.server.enabled, value: \"last\"}]}]}",
        )),
        ..Case::default()
    };
    let b = case.alb();
    let listener = b.stack.listeners.iter().find(|l| l.port == 80).unwrap();
    assert_eq!(
        listener.attributes["routing.http.response.server.enabled"],
        "first"
    );
    // The entry left out is said, not silently dropped.
    assert!(
        warnings(&b).contains(
            &"listenerConfigurations has 2 entries for HTTP:80: only one of them is applied"
        ),
        "{:?}",
        warnings(&b)
    );
}
