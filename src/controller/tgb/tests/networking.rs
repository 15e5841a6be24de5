//! Unit tests of the security-group rules: permissions, endpoint group choice, labels,
//! aggregation, diff, and the registry against the in-memory fake.

use std::collections::{BTreeMap, BTreeSet};

use serde_json::json;

use crate::aws::{IpPermission, IpRange, Tags};
use crate::controller::tgb::info::PodInfo;
use crate::controller::tgb::networking::*;
use crate::crd::target_group_binding::TargetGroupBindingNetworking;

pub(super) fn net(v: serde_json::Value) -> TargetGroupBindingNetworking {
    serde_json::from_value(v).unwrap()
}

fn from_sg(ports: serde_json::Value) -> TargetGroupBindingNetworking {
    net(
        json!({ "ingress": [{ "from": [{ "securityGroup": { "groupID": "sg-lb" } }], "ports": ports }] }),
    )
}

pub(super) fn perm(proto: &str, from: i32, to: i32, peer: Peer) -> Perm {
    Perm {
        protocol: proto.into(),
        from: Some(from),
        to: Some(to),
        peer,
    }
}

pub(super) fn group(id: &str) -> Peer {
    Peer::Group(id.into())
}

fn err_text(r: Result<Vec<Perm>, NetError>) -> String {
    r.expect_err("an error").to_string()
}

#[test]
fn numeric_port_from_peer_group() {
    let n = from_sg(json!([{ "protocol": "TCP", "port": 8080 }]));
    let got = permissions(&n, None).unwrap();
    assert_eq!(got, vec![perm("tcp", 8080, 8080, group("sg-lb"))]);
    let n = from_sg(json!([{ "protocol": "UDP", "port": 53 }]));
    assert_eq!(permissions(&n, None).unwrap()[0].protocol, "udp");
}

#[test]
fn named_port_resolves_per_pod_and_fails_for_nodes() {
    let n = from_sg(json!([{ "port": "http" }]));
    let (a, b) = (
        vec![("http".to_string(), 8080)],
        vec![("metrics".to_string(), 9000), ("http".to_string(), 8081)],
    );
    let pods = [
        PodPorts {
            key: "default/a",
            container_ports: &a,
        },
        PodPorts {
            key: "default/b",
            container_ports: &b,
        },
    ];
    let got = permissions(&n, Some(&pods)).unwrap();
    assert_eq!(
        got,
        vec![
            perm("tcp", 8080, 8080, group("sg-lb")),
            perm("tcp", 8081, 8081, group("sg-lb"))
        ]
    );
    let none: Vec<(String, i32)> = vec![];
    let missing = [PodPorts {
        key: "default/c",
        container_ports: &none,
    }];
    assert_eq!(
        err_text(permissions(&n, Some(&missing))),
        "unable to find port http on pod default/c"
    );
    assert_eq!(
        err_text(permissions(&n, None)),
        "named ports can only be used with pod endpoints"
    );
}

#[test]
fn no_port_means_every_port_and_a_rule_without_ports_grants_nothing() {
    let n = from_sg(json!([{ "protocol": "UDP" }]));
    assert_eq!(
        permissions(&n, None).unwrap(),
        vec![perm("udp", 0, 65535, group("sg-lb"))]
    );
    // Upstream's shadowed append: no ports → no permission at all (never TCP 0-65535).
    let n = from_sg(json!([]));
    assert_eq!(permissions(&n, None).unwrap(), vec![]);
    let bad =
        net(json!({ "ingress": [{ "from": [{ "ipBlock": { "cidr": "nope" } }], "ports": [] }] }));
    assert_eq!(
        err_text(permissions(&bad, None)),
        "invalid CIDR address: nope"
    );
}

#[test]
fn ip_blocks_pick_the_family_and_bad_input_is_an_error() {
    let n = net(json!({ "ingress": [{
        "from": [{ "ipBlock": { "cidr": "10.0.0.0/8" } }, { "ipBlock": { "cidr": "2001:db8::/32" } }],
        "ports": [{ "port": 443 }]
    }]}));
    assert_eq!(
        permissions(&n, None).unwrap(),
        vec![
            perm("tcp", 443, 443, Peer::Ipv4("10.0.0.0/8".into())),
            perm("tcp", 443, 443, Peer::Ipv6("2001:db8::/32".into()))
        ]
    );
    let bad =
        net(json!({ "ingress": [{ "from": [{ "ipBlock": { "cidr": "nope" } }], "ports": [] }] }));
    assert_eq!(
        err_text(permissions(&bad, None)),
        "invalid CIDR address: nope"
    );
    let empty = net(json!({ "ingress": [{ "from": [{}], "ports": [] }] }));
    assert_eq!(
        err_text(permissions(&empty, None)),
        "either ipBlock or securityGroup should be specified"
    );
}

pub(super) fn tags(pairs: &[(&str, &str)]) -> Tags {
    pairs
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect()
}

#[test]
fn endpoint_group_is_the_only_one_or_the_single_cluster_tagged_one() {
    let sgs = |ids: &[&str]| ids.iter().map(|s| s.to_string()).collect::<Vec<_>>();
    let all: BTreeMap<&str, Tags> = [
        (
            "sg-a",
            tags(&[("kubernetes.io/cluster/c1", "owned"), ("role", "node")]),
        ),
        ("sg-b", tags(&[])),
        ("sg-c", tags(&[("kubernetes.io/cluster/c1", "shared")])),
    ]
    .into();
    let of = |g: &str| all.get(g).cloned();
    let none = BTreeMap::new();
    assert_eq!(
        select_endpoint_sg("eni-1", &sgs(&["sg-b"]), of, "c1", &none).unwrap(),
        "sg-b"
    );
    assert_eq!(
        select_endpoint_sg("eni-1", &sgs(&["sg-a", "sg-b"]), of, "c1", &none).unwrap(),
        "sg-a"
    );
    let e = select_endpoint_sg("eni-1", &sgs(&["sg-a", "sg-c"]), of, "c1", &none).unwrap_err();
    assert_eq!(e.to_string(), "expected exactly one securityGroup tagged with kubernetes.io/cluster/c1 for eni eni-1, got: [sg-a sg-c] (clusterName: c1)");
    let e = select_endpoint_sg("eni-1", &sgs(&["sg-a", "sg-b"]), of, "c2", &none).unwrap_err();
    assert_eq!(e.to_string(), "expected exactly one securityGroup tagged with kubernetes.io/cluster/c2 for eni eni-1, got: [] (clusterName: c2)");
    let role: BTreeMap<String, String> = [("role".to_string(), "node".to_string())].into();
    let ac = sgs(&["sg-a", "sg-c"]);
    assert_eq!(
        select_endpoint_sg("eni-1", &ac, of, "c1", &role).unwrap(),
        "sg-a"
    );
    let other: BTreeMap<String, String> = [("role".to_string(), "x".to_string())].into();
    let e = select_endpoint_sg("eni-1", &ac, of, "c1", &other).unwrap_err();
    assert_eq!(e.to_string(), "expected exactly one securityGroup tagged with kubernetes.io/cluster/c1 and map[role:x] for eni eni-1, got: [] (clusterName: c1)");
}

#[test]
fn our_rules_are_told_apart_by_the_label() {
    assert_eq!(
        rule_description(),
        "elbv2.k8s.aws/targetGroupBinding=shared"
    );
    assert!(is_ours(Some("elbv2.k8s.aws/targetGroupBinding=shared")));
    assert!(is_ours(Some("a=b,elbv2.k8s.aws/targetGroupBinding=shared")));
    assert!(!is_ours(Some("elbv2.k8s.aws/targetGroupBinding=other")));
    assert!(!is_ours(Some("allow the load balancer")));
    assert!(!is_ours(None));
}

#[test]
fn aggregate_merges_ports_per_source_when_restricted() {
    let a: BTreeMap<String, Vec<Perm>> = [(
        "sg-node".to_string(),
        vec![
            perm("tcp", 8080, 8080, group("sg-lb")),
            perm("tcp", 443, 443, Peer::Ipv4("10.0.0.0/8".into())),
        ],
    )]
    .into();
    let b: BTreeMap<String, Vec<Perm>> = [(
        "sg-node".to_string(),
        vec![perm("tcp", 9090, 9090, group("sg-lb"))],
    )]
    .into();
    let empty: BTreeMap<String, Vec<Perm>> = [("sg-other".to_string(), vec![])].into();
    let r = aggregate([&a, &b, &empty], true);
    let want: BTreeSet<Perm> = [
        perm("tcp", 8080, 9090, group("sg-lb")),
        perm("tcp", 443, 443, Peer::Ipv4("10.0.0.0/8".into())),
    ]
    .into();
    assert_eq!(r["sg-node"], want);
    assert!(
        r["sg-other"].is_empty(),
        "groups without rules stay, to revoke ours"
    );
    let u = aggregate([&a, &b], false);
    assert_eq!(u["sg-node"].len(), 3);
    assert!(u["sg-node"].contains(&perm("tcp", 9090, 9090, group("sg-lb"))));
}

#[test]
fn diff_grants_missing_and_revokes_only_our_stale_rules() {
    let ours = Some(rule_description());
    let current = vec![
        perm("tcp", 8080, 8080, group("sg-lb")).to_ip_permission(ours.clone()),
        perm("tcp", 22, 22, group("sg-bastion")).to_ip_permission(Some("ssh".into())),
        perm("tcp", 9090, 9090, group("sg-lb")).to_ip_permission(ours.clone()),
        IpPermission {
            ip_protocol: "-1".into(),
            ipv4_ranges: vec![IpRange::new("0.0.0.0/0")],
            ..Default::default()
        },
    ];
    let desired: BTreeSet<Perm> = [
        perm("tcp", 8080, 8080, group("sg-lb")),
        perm("udp", 53, 53, Peer::Ipv6("::/0".into())),
    ]
    .into();
    let (grant, revoke) = diff(&current, &desired);
    assert_eq!(grant, vec![perm("udp", 53, 53, Peer::Ipv6("::/0".into()))]);
    assert_eq!(
        revoke,
        vec![(perm("tcp", 9090, 9090, group("sg-lb")), ours)]
    );
}

#[test]
fn pod_projection_keeps_named_ports_and_the_branch_eni() {
    let pod: k8s_openapi::api::core::v1::Pod = serde_json::from_value(json!({
        "metadata": { "name": "p", "annotations": {
            "vpc.amazonaws.com/pod-eni": r#"[{"eniId":"eni-other","privateIp":"10.0.0.9"},{"eniId":"eni-b","privateIp":"10.0.0.5","vlanId":1}]"#
        }},
        "spec": {
            "containers": [{ "name": "c", "ports": [{ "name": "http", "containerPort": 8080 }, { "containerPort": 9 }] }],
            "initContainers": [
                { "name": "side", "restartPolicy": "Always", "ports": [{ "name": "proxy", "containerPort": 15001 }] },
                { "name": "init", "ports": [{ "name": "once", "containerPort": 1 }] }
            ]
        },
        "status": { "podIP": "10.0.0.5" }
    }))
    .unwrap();
    let info = PodInfo::from_pod(&pod, crate::controller::tgb::quic::DEFAULT_ENV_NAME);
    assert_eq!(
        info.container_ports.to_vec(),
        vec![("http".to_string(), 8080), ("proxy".to_string(), 15001)]
    );
    assert_eq!(info.branch_eni.as_deref(), Some("eni-b"));
    let mut broken = pod.clone();
    broken
        .metadata
        .annotations
        .as_mut()
        .unwrap()
        .insert("vpc.amazonaws.com/pod-eni".into(), "{".into());
    assert_eq!(
        PodInfo::from_pod(&broken, crate::controller::tgb::quic::DEFAULT_ENV_NAME).branch_eni,
        None
    );
}

#[test]
fn covered_means_a_port_range_of_ours_holding_the_ports() {
    let ours = Some(rule_description());
    let held = vec![
        (perm("tcp", 8000, 9000, group("sg-a")), ours.clone()),
        (perm("icmp", 3, 4, group("sg-a")), ours),
        (
            perm("tcp", 0, 65535, group("sg-b")),
            Some("a user's rule".into()),
        ),
    ];
    assert!(covered(&perm("tcp", 8080, 8080, group("sg-a")), &held));
    assert!(covered(&perm("tcp", 8000, 9000, group("sg-a")), &held));
    assert!(
        !covered(&perm("tcp", 8080, 9090, group("sg-a")), &held),
        "wider"
    );
    assert!(
        !covered(&perm("udp", 8080, 8080, group("sg-a")), &held),
        "another protocol"
    );
    assert!(
        !covered(&perm("tcp", 8080, 8080, group("sg-b")), &held),
        "not ours"
    );
    assert!(
        !covered(&perm("icmp", 3, 3, group("sg-a")), &held),
        "type and code, not ports"
    );
}
