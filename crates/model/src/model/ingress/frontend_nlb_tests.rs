//! Upstream's frontend NLB model-builder cases (`pkg/ingress/model_build_frontend_nlb_test.go`)
//! replayed from manifests through the whole model: enable, scheme, security groups, subnets
//! and EIPs, name, target group names, tags, listener port mapping and merge, attributes, with
//! upstream's error texts. Upstream's mocked discovery returns `subnet-1` and `subnet-2`.

use std::collections::BTreeMap;

use k8s_openapi::api::core::v1::Service;
use k8s_openapi::api::networking::v1::Ingress;
use serde_json::json;
use sha2::{Digest, Sha256};

use crate::model::subnets::SubnetInfo;
use crate::model::types::*;
use crate::model::upstream_json::{render, PlanFacts};
use crate::model::{build_stack, load_groups, BuildEnv, ClusterObjects, ModelConfig};

/// An Ingress `name` in namespace `ns` with `annotations` (ingress class added); group `shop`
/// unless `implicit`.
fn ingress(ns: &str, name: &str, annotations: &[(&str, &str)], implicit: bool) -> Ingress {
    let mut a: BTreeMap<String, String> = annotations
        .iter()
        .map(|(k, v)| (format!("alb.ingress.kubernetes.io/{k}"), v.to_string()))
        .collect();
    a.insert("kubernetes.io/ingress.class".into(), "alb".into());
    if !implicit {
        a.insert("alb.ingress.kubernetes.io/group.name".into(), "shop".into());
    }
    let backend = json!({"service": {"name": "web", "port": {"number": 80}}});
    let path = json!({"path": format!("/{name}"), "pathType": "Prefix", "backend": backend});
    serde_json::from_value(json!({
        "metadata": {"name": name, "namespace": ns, "annotations": a},
        "spec": {"rules": [{"http": {"paths": [path]}}]},
    }))
    .unwrap()
}

fn cfg() -> ModelConfig {
    ModelConfig {
        cluster_name: "test-cluster".into(),
        vpc_id: Some("vpc-dummy".into()),
        ..ModelConfig::default()
    }
}

/// Upstream's mocked subnets: two, tagged for both schemes.
fn env() -> BuildEnv {
    let subnet = |id: &str, az: &str| SubnetInfo {
        id: id.into(),
        vpc_id: "vpc-dummy".into(),
        availability_zone: az.into(),
        available_ips: 100,
        tags: BTreeMap::from([
            ("kubernetes.io/role/elb".to_string(), "1".to_string()),
            (
                "kubernetes.io/role/internal-elb".to_string(),
                "1".to_string(),
            ),
        ]),
        ..Default::default()
    };
    BuildEnv {
        subnets: Some(vec![subnet("subnet-1", "az-1"), subnet("subnet-2", "az-2")]),
        existing_load_balancer: None,
    }
}

fn build_with(ings: Vec<Ingress>, cfg: &ModelConfig) -> Result<Stack, String> {
    let service: Service = serde_json::from_value(json!({
        "metadata": {"name": "web", "namespace": ings[0].metadata.namespace},
        "spec": {"type": "NodePort", "ports": [{"port": 80, "targetPort": 8080, "nodePort": 30080}]},
    }))
    .unwrap();
    let objs = ClusterObjects {
        services: vec![service],
        ingresses: ings,
        ..ClusterObjects::default()
    };
    let (groups, errors) = load_groups(&objs, &cfg.ingress_class);
    assert!(errors.is_empty(), "{errors:?}");
    let g = groups.values().next().unwrap();
    build_stack(g, &objs, cfg, &env()).map_err(|e| e.to_string())
}

/// Members `ing-1`, `ing-2`, ... of group `shop`, each with its annotations.
fn build(members: &[&[(&str, &str)]]) -> Result<Stack, String> {
    let ings = members
        .iter()
        .enumerate()
        .map(|(n, a)| ingress("awesome-ns", &format!("ing-{}", n + 1), a, false))
        .collect();
    build_with(ings, &cfg())
}

fn nlb(members: &[&[(&str, &str)]]) -> FrontendNlb {
    build(members)
        .unwrap()
        .frontend_nlb
        .expect("a frontend NLB")
}

fn err(members: &[&[(&str, &str)]]) -> String {
    build(members).expect_err("the group must fail")
}

const ON: (&str, &str) = ("enable-frontend-nlb", "true");

fn user_tags(t: &BTreeMap<String, String>) -> BTreeMap<String, String> {
    t.iter()
        .filter(|(k, _)| !k.contains("k8s.aws/"))
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect()
}

fn kv(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
    pairs
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect()
}

#[test]
fn enable_annotation_builds_the_frontend_nlb_and_absent_builds_none() {
    // A test that fails if `enable-frontend-nlb` is ignored.
    let s = build(&[&[ON]]).unwrap();
    let f = s.frontend_nlb.as_ref().expect("enable-frontend-nlb: true");
    assert_eq!(f.load_balancer.id, "FrontendNlb");
    assert_eq!(f.load_balancer.lb_type, "network");
    assert_eq!(f.listeners.len(), 1);
    assert_eq!(f.target_groups[0].id, "FrontendNlb-tg-TCP-80");
    let json = render(&s, &PlanFacts::default());
    let res = &json["resources"];
    assert_eq!(
        res["AWS::ElasticLoadBalancingV2::LoadBalancer"]["FrontendNlb"]["spec"]["type"],
        "network"
    );
    assert_eq!(
        res["AWS::ElasticLoadBalancingV2::TargetGroup"]["FrontendNlb-tg-TCP-80"]["spec"]
            ["targetType"],
        "alb"
    );
    let state = &res["FrontendNLBTargetGroup"]["FrontendNLBTargetGroup"]["TargetGroups"];
    assert_eq!(state.as_object().unwrap().len(), 1);
    // Without the annotation, or set to false, there is none.
    assert!(build(&[&[]]).unwrap().frontend_nlb.is_none());
    assert!(build(&[&[("enable-frontend-nlb", "false")]])
        .unwrap()
        .frontend_nlb
        .is_none());
    // Two members agreeing, one member setting it alone: on.
    assert!(build(&[&[ON], &[ON]]).unwrap().frontend_nlb.is_some());
    assert!(build(&[&[ON], &[]]).unwrap().frontend_nlb.is_some());
}

#[test]
fn conflicting_enable_values_fail_the_group() {
    let e = err(&[&[ON], &[("enable-frontend-nlb", "false")]]);
    assert_eq!(e, "conflicting enable frontend NLB values");
}

#[test]
fn security_groups_from_the_annotation_else_the_albs() {
    let f = nlb(&[&[ON]]);
    let alb = build(&[&[ON]]).unwrap().load_balancer.unwrap();
    assert_eq!(f.load_balancer.security_groups, alb.security_groups);
    assert!(!f.load_balancer.security_groups.is_empty());
    let f = nlb(&[&[ON, ("frontend-nlb-security-groups", "sg-manual")]]);
    assert!(f.load_balancer.security_groups.is_empty());
    assert_eq!(f.load_balancer.security_group_names_or_ids, ["sg-manual"]);
    let f = nlb(&[&[
        ON,
        ("frontend-nlb-security-groups", "sg-manual1, sg-manual2"),
    ]]);
    assert_eq!(
        f.load_balancer.security_group_names_or_ids,
        ["sg-manual1", "sg-manual2"]
    );
    let e = err(&[
        &[ON, ("frontend-nlb-security-groups", "sg-1,sg-2")],
        &[("frontend-nlb-security-groups", "sg-2,sg-1")],
    ]);
    assert_eq!(e, "conflicting securityGroups: [sg-1 sg-2] | [sg-2 sg-1]");
}

fn mappings(f: &FrontendNlb) -> Vec<(String, Option<String>)> {
    let Subnets::Resolved(ids) = &f.load_balancer.subnets else {
        panic!("{:?}", f.load_balancer.subnets)
    };
    ids.iter()
        .map(|id| {
            let m = f
                .load_balancer
                .subnet_mappings
                .iter()
                .find(|m| &m.subnet_id == id);
            (id.clone(), m.and_then(|m| m.allocation_id.clone()))
        })
        .collect()
}

fn want(pairs: &[(&str, Option<&str>)]) -> Vec<(String, Option<String>)> {
    pairs
        .iter()
        .map(|(s, e)| (s.to_string(), e.map(String::from)))
        .collect()
}

#[test]
fn subnet_mappings_with_and_without_eips() {
    let public = ("frontend-nlb-scheme", "internet-facing");
    // no annotation implicit subnet
    let f = nlb(&[&[ON, public]]);
    assert_eq!(
        mappings(&f),
        want(&[("subnet-1", None), ("subnet-2", None)])
    );
    // with subnets annotation
    let f = nlb(&[&[ON, ("frontend-nlb-subnets", "subnet-1,subnet-2")]]);
    assert_eq!(
        mappings(&f),
        want(&[("subnet-1", None), ("subnet-2", None)])
    );
    // with subnets and eip allocations
    let f = nlb(&[&[
        ON,
        public,
        ("frontend-nlb-subnets", "subnet-1,subnet-2"),
        ("frontend-nlb-eip-allocations", "eip-1,eip-2"),
    ]]);
    assert_eq!(
        mappings(&f),
        want(&[("subnet-1", Some("eip-1")), ("subnet-2", Some("eip-2"))])
    );
    // EIPs still attached when subnet IDs are not specified
    let f = nlb(&[&[
        ON,
        public,
        ("frontend-nlb-eip-allocations", "eip-10,eip-20"),
    ]]);
    assert_eq!(
        mappings(&f),
        want(&[("subnet-1", Some("eip-10")), ("subnet-2", Some("eip-20"))])
    );
    assert_eq!(f.eip_allocations, ["eip-10", "eip-20"]);
}

#[test]
fn eip_errors_are_upstreams() {
    let e = err(&[&[
        ON,
        ("frontend-nlb-scheme", "internet-facing"),
        ("frontend-nlb-subnets", "subnet-1,subnet-2"),
        ("frontend-nlb-eip-allocations", "eip-1"),
    ]]);
    assert_eq!(e, "count of EIP allocations (1) and subnets (2) must match");
    let e = err(&[&[
        ON,
        ("frontend-nlb-subnets", "subnet-1,subnet-2"),
        ("frontend-nlb-eip-allocations", "eip-1,eip-2"),
    ]]);
    assert_eq!(
        e,
        "EIP allocations can only be set for internet facing load balancers"
    );
    let e = err(&[
        &[
            ON,
            ("frontend-nlb-scheme", "internet-facing"),
            ("frontend-nlb-eip-allocations", "a,b"),
        ],
        &[("frontend-nlb-eip-allocations", "a,c")],
    ]);
    assert_eq!(
        e,
        "all EIP allocations for the ingress group must be the same: [a b] | [a c]"
    );
    let e = err(&[
        &[ON, ("frontend-nlb-subnets", "subnet-1")],
        &[("frontend-nlb-subnets", "subnet-2")],
    ]);
    assert_eq!(e, "conflicting subnets: [subnet-1] | [subnet-2]");
}

#[test]
fn name_is_the_alb_name_cut_to_28_then_nlb() {
    let f = nlb(&[&[ON, ("load-balancer-name", "test-alb")]]);
    assert_eq!(f.load_balancer.name, "test-alb-nlb");
    let long = "a234567890b234567890c234567890d2";
    let f = nlb(&[&[ON, ("load-balancer-name", long)]]);
    assert_eq!(f.load_balancer.name, "a234567890b234567890c2345678-nlb");
    // Generated ALB name: the NLB's follows it.
    let s = build(&[&[ON]]).unwrap();
    let alb = s.load_balancer.unwrap().name;
    let f = s.frontend_nlb.unwrap();
    assert_eq!(
        f.load_balancer.name,
        format!("{}-nlb", &alb[..alb.len().min(28)])
    );
    assert!(f.load_balancer.name.len() <= 32);
}

fn sha(parts: &[&str]) -> String {
    let mut h = Sha256::new();
    for p in parts {
        h.update(p.as_bytes());
    }
    hex::encode(h.finalize())
}

#[test]
fn target_group_names_hash_like_upstream() {
    // Upstream's "standard case": implicit group default/my-ingress, port 80.
    let ing = ingress("default", "my-ingress", &[ON], true);
    let f = build_with(vec![ing], &cfg()).unwrap().frontend_nlb.unwrap();
    let tg = &f.target_groups[0];
    let hash = sha(&[
        "test-cluster",
        "default/my-ingress",
        "80",
        "alb",
        "TCP",
        "traffic-port",
        "HTTP",
    ]);
    assert_eq!(tg.name, format!("k8s-default-myingres-{}", &hash[..10]));
    assert!(tg.name.starts_with("k8s-default-mying"));
    // Explicit group, health check on port 9090 over HTTPS.
    let f = nlb(&[&[
        ON,
        ("frontend-nlb-healthcheck-port", "9090"),
        ("frontend-nlb-healthcheck-protocol", "HTTPS"),
    ]]);
    let hash = sha(&["test-cluster", "shop", "80", "alb", "TCP", "9090", "HTTPS"]);
    assert_eq!(f.target_groups[0].name, format!("k8s-shop-{}", &hash[..10]));
}

#[test]
fn scheme_from_the_annotation_else_the_controller_default() {
    let public = ("frontend-nlb-scheme", "internet-facing");
    let internal = ("frontend-nlb-scheme", "internal");
    assert_eq!(
        nlb(&[&[ON, internal]]).load_balancer.scheme,
        LoadBalancerScheme::Internal
    );
    assert_eq!(
        nlb(&[&[ON, public]]).load_balancer.scheme,
        LoadBalancerScheme::InternetFacing
    );
    // No annotation: the controller's default, not the ALB's scheme.
    let f = nlb(&[&[ON, ("scheme", "internet-facing")]]);
    assert_eq!(f.load_balancer.scheme, LoadBalancerScheme::Internal);
    assert_eq!(
        err(&[&[ON, ("frontend-nlb-scheme", "invalid")]]),
        "unknown scheme: invalid"
    );
    assert_eq!(
        err(&[&[ON, internal], &[public]]),
        "conflicting scheme: map[internal:{} internet-facing:{}]"
    );
}

#[test]
fn tags_are_frontend_nlb_tags_else_the_albs() {
    let mut c = cfg();
    c.default_tags = kv(&[("default", "value")]);
    let one = |a: &[(&str, &str)]| {
        let ing = ingress("test-ns", "ing-1", a, false);
        build_with(vec![ing], &c).unwrap().frontend_nlb.unwrap()
    };
    // no tags specified: the ALB's (here the default tags), plus tracking tags
    let f = one(&[ON]);
    assert_eq!(
        user_tags(&f.load_balancer.tags),
        kv(&[("default", "value")])
    );
    assert_eq!(
        f.load_balancer.tags["ingress.k8s.aws/resource"],
        "FrontendNlb"
    );
    assert_eq!(f.load_balancer.tags["ingress.k8s.aws/stack"], "shop");
    assert_eq!(
        f.load_balancer.tags["elbv2.k8s.aws/cluster"],
        "test-cluster"
    );
    // frontend-nlb-specific tags replace the ALB's and the default tags
    let f = one(&[ON, ("frontend-nlb-tags", "key1=value1,key2=value2")]);
    assert_eq!(
        user_tags(&f.load_balancer.tags),
        kv(&[("key1", "value1"), ("key2", "value2")])
    );
    // ALB tags propagation when no frontend-nlb-tags
    let f = one(&[ON, ("tags", "key1=value1,key2=value2")]);
    assert_eq!(
        user_tags(&f.load_balancer.tags),
        kv(&[("default", "value"), ("key1", "value1"), ("key2", "value2")])
    );
    // frontend-nlb-tags take precedence over ALB tags; on target groups and listeners too
    let f = one(&[
        ON,
        ("frontend-nlb-tags", "nlb-key=nlb-value"),
        ("tags", "alb-key=alb-value"),
    ]);
    let want = kv(&[("nlb-key", "nlb-value")]);
    assert_eq!(user_tags(&f.load_balancer.tags), want);
    assert_eq!(user_tags(&f.target_groups[0].tags), want);
    assert_eq!(user_tags(&f.listeners[0].tags), want);
    assert_eq!(
        f.target_groups[0].tags["ingress.k8s.aws/resource"],
        "FrontendNlb-tg-TCP-80"
    );
    assert_eq!(
        f.listeners[0].tags["ingress.k8s.aws/resource"],
        "FrontendNlb-ls-TCP-80"
    );
    // conflicting / consistent frontend-nlb-tags across ingresses
    let e = err(&[
        &[ON, ("frontend-nlb-tags", "key1=value1")],
        &[("frontend-nlb-tags", "key1=value2")],
    ]);
    assert_eq!(
        e,
        "conflicting frontend NLB tags: map[key1:value1] | map[key1:value2]"
    );
    let f = nlb(&[
        &[ON, ("frontend-nlb-tags", "key1=value1")],
        &[("frontend-nlb-tags", "key1=value1")],
    ]);
    assert_eq!(user_tags(&f.load_balancer.tags), kv(&[("key1", "value1")]));
}

#[test]
fn default_tags_reach_target_groups_and_listeners() {
    // Upstream's target-group and listener spec tag cases (kops's IAM policy needs them).
    let mut c = cfg();
    c.default_tags = kv(&[
        ("KubernetesCluster", "test-cluster"),
        ("subproject", "kops"),
    ]);
    let ing = ingress("awesome-ns", "ing", &[ON], true);
    let f = build_with(vec![ing], &c).unwrap().frontend_nlb.unwrap();
    assert_eq!(user_tags(&f.target_groups[0].tags), c.default_tags);
    assert_eq!(user_tags(&f.listeners[0].tags), c.default_tags);
    // Listener tags follow the ListenerRulesTagging gate.
    c.feature_gates.insert("ListenerRulesTagging".into(), false);
    let ing = ingress("awesome-ns", "ing", &[ON], true);
    let f = build_with(vec![ing], &c).unwrap().frontend_nlb.unwrap();
    assert!(f.listeners[0].tags.is_empty());
}

fn ports(f: &FrontendNlb) -> Vec<(i32, i32)> {
    f.target_groups
        .iter()
        .map(|t| (t.port, t.target_port))
        .collect()
}

fn listen(ports: &str) -> (&'static str, String) {
    ("listen-ports", ports.to_string())
}

#[test]
fn listeners_map_ports_like_upstream() {
    let lp443 = listen(r#"[{"HTTP": 443}]"#);
    let lp8443 = listen(r#"[{"HTTP": 8443}]"#);
    let lp80 = listen(r#"[{"HTTP": 80}]"#);
    let m = |v: &'static str| ("frontend-nlb-listener-port-mapping", v);
    // valid listener configurations
    let f = nlb(&[&[ON, m("80=443"), (lp443.0, lp443.1.as_str())]]);
    assert_eq!(ports(&f), [(80, 443)]);
    let l = &f.listeners[0];
    assert_eq!(
        (l.id.as_str(), l.port, l.protocol),
        ("FrontendNlb-ls-TCP-80", 80, Protocol::Tcp)
    );
    assert_eq!(l.load_balancer_arn, Token::FrontendNlbArn);
    let fwd = Action::Forward {
        config: ForwardConfig {
            target_groups: vec![TargetGroupTuple {
                target_group_arn: Token::TargetGroupArn("FrontendNlb-tg-TCP-80".into()),
                weight: None,
            }],
            target_group_stickiness_config: None,
        },
    };
    assert_eq!(l.default_actions, [fwd]);
    // conflicting listener configurations
    let e = err(&[
        &[ON, m("80=443"), (lp443.0, lp443.1.as_str())],
        &[m("80=8443"), (lp8443.0, lp8443.1.as_str())],
    ]);
    assert_eq!(
        e,
        "failed to merge NLB listenPort config for port: 80: conflicting Target Port, config 2: 8443, previous: 443"
    );
    // valid listener configurations for multiple ingress
    let f = nlb(&[
        &[ON, m("80=443"), (lp443.0, lp443.1.as_str())],
        &[m("8080=80"), (lp80.0, lp80.1.as_str())],
    ]);
    assert_eq!(ports(&f), [(80, 443), (8080, 80)]);
    // 8443 is ignored: ing-2 does not listen on it
    let f = nlb(&[
        &[ON, m("80=443"), (lp443.0, lp443.1.as_str())],
        &[m("80=8443"), (lp80.0, lp80.1.as_str())],
    ]);
    assert_eq!(ports(&f), [(80, 443)]);
    // Without a mapping every ALB port maps to itself.
    let lp = listen(r#"[{"HTTP": 80}, {"HTTP": 8080}]"#);
    assert_eq!(
        ports(&nlb(&[&[ON, (lp.0, lp.1.as_str())]])),
        [(80, 80), (8080, 8080)]
    );
    let e = err(&[&[ON, m("x=80")]]);
    assert_eq!(
        e,
        "failed to compute listenPort config for ingress: awesome-ns/ing-1: invalid NLB listener port: x"
    );
    let e = err(&[&[ON, m("80=y")]]);
    assert!(e.ends_with("invalid ALB listener port: y"), "{e}");
}

#[test]
fn health_checks_default_and_merge_like_upstream() {
    let f = nlb(&[&[ON]]);
    let hc = &f.target_groups[0].health_check;
    assert_eq!(
        (hc.port.as_str(), hc.protocol, hc.path.as_str()),
        ("traffic-port", Protocol::Http, "/")
    );
    assert_eq!(hc.matcher["httpCode"], "200");
    assert_eq!(
        (
            hc.interval_seconds,
            hc.timeout_seconds,
            hc.healthy_threshold_count,
            hc.unhealthy_threshold_count
        ),
        (15, 5, 2, 2)
    );
    let f = nlb(&[
        &[
            ON,
            ("frontend-nlb-healthcheck-interval-seconds", "10"),
            ("frontend-nlb-healthcheck-timeout-seconds", "5"),
        ],
        &[
            ("frontend-nlb-healthcheck-interval-seconds", "10"),
            ("frontend-nlb-healthcheck-timeout-seconds", "5"),
        ],
    ]);
    assert_eq!(f.target_groups[0].health_check.interval_seconds, 10);
    // A member that sets nothing takes the explicit values of another.
    let f = nlb(&[
        &[ON],
        &[
            ("frontend-nlb-healthcheck-path", "/ready"),
            ("frontend-nlb-healthcheck-success-codes", "200-299"),
        ],
    ]);
    let hc = &f.target_groups[0].health_check;
    assert_eq!(
        (hc.path.as_str(), hc.matcher["httpCode"].as_str()),
        ("/ready", "200-299")
    );
    let e = err(&[
        &[ON, ("frontend-nlb-healthcheck-interval-seconds", "10")],
        &[("frontend-nlb-healthcheck-interval-seconds", "15")],
    ]);
    assert_eq!(
        e,
        "failed to merge NLB listenPort config for port: 80: conflicting IntervalSeconds, config 2: 15, previous: 10"
    );
    let e = err(&[&[ON, ("frontend-nlb-healthcheck-protocol", "TCP")]]);
    assert!(
        e.ends_with("healthCheckProtocol must be within [HTTP, HTTPS]"),
        "{e}"
    );
    let e = err(&[&[ON, ("frontend-nlb-healthcheck-port", "http")]]);
    assert!(e.ends_with("failed to resolve healthCheckPort"), "{e}");
}

#[test]
fn attributes_like_upstream() {
    let at = |v: &'static str| ("frontend-nlb-attributes", v);
    assert!(nlb(&[&[ON]]).load_balancer.attributes.is_empty());
    for p in [
        "availability_zone_affinity",
        "partial_availability_zone_affinity",
        "any_availability_zone",
    ] {
        let v: &'static str =
            Box::leak(format!("dns_record.client_routing_policy={p}").into_boxed_str());
        let f = nlb(&[&[ON, at(v)]]);
        assert_eq!(
            f.load_balancer.attributes,
            kv(&[("dns_record.client_routing_policy", p)])
        );
    }
    let e = err(&[&[ON, at("dns_record.client_routing_policy=invalid_policy")]]);
    assert!(
        e.starts_with("invalid dns_record.client_routing_policy set in annotation"),
        "{e}"
    );
    let f = nlb(&[&[
        ON,
        at("dns_record.client_routing_policy=availability_zone_affinity,cross_zone.enabled=true"),
    ]]);
    assert_eq!(f.load_balancer.attributes.len(), 2);
    let same = at("dns_record.client_routing_policy=availability_zone_affinity");
    assert_eq!(
        nlb(&[&[ON, same], &[same]]).load_balancer.attributes.len(),
        1
    );
    let e = err(&[
        &[ON, same],
        &[at("dns_record.client_routing_policy=any_availability_zone")],
    ]);
    assert!(e.starts_with("conflicting frontend NLB attributes"), "{e}");
    // mixed ingresses - some with attributes, some without (after)
    let e = err(&[&[ON, same], &[]]);
    assert_eq!(
        e,
        "conflicting frontend NLB attributes: map[dns_record.client_routing_policy:availability_zone_affinity] | map[]"
    );
}

#[test]
fn an_excluded_member_never_takes_the_frontend_nlb_down() {
    // ing-1 turns the NLB on and has a broken own setting: excluding it would delete the NLB,
    // so the group fails with its error instead.
    let e = err(&[&[ON, ("target-type", "bogus")], &[]]);
    assert!(e.contains("awesome-ns/ing-1"), "{e}");
    // When another member also turns it on, the exclusion is harmless.
    let s = build(&[&[ON, ("target-type", "bogus")], &[ON]]).unwrap();
    assert!(s.frontend_nlb.is_some());
    assert_eq!(s.excluded_members.len(), 1);
}
