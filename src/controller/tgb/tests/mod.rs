//! Tests of the TargetGroupBinding controller. Here, pure functions: endpoint selection and node
//! filtering; by concept beside it: `gates` (readiness gates), `networking` and
//! `networking_sync` (security group rules), `quic` (QUIC server ids).

use std::collections::HashMap;

use k8s_openapi::apimachinery::pkg::apis::meta::v1::{LabelSelector, LabelSelectorRequirement};
use k8s_openapi::apimachinery::pkg::util::intstr::IntOrString;

use super::endpoints::*;
use super::info::*;

mod gates;
mod networking;
mod networking_sync;
mod quic;

fn ep(addr: &str, pod: &str, ready: Option<bool>, terminating: Option<bool>) -> EndpointInfo {
    EndpointInfo {
        address: addr.into(),
        ready,
        terminating,
        pod: Some(pod.into()),
        node: Some("n1".into()),
    }
}

fn slice(family: &str, ports: &[(&str, i32)], eps: Vec<EndpointInfo>) -> SliceInfo {
    SliceInfo {
        address_type: family.into(),
        ports: ports
            .iter()
            .map(|(n, p)| (n.to_string(), Some(*p)))
            .collect(),
        endpoints: eps,
    }
}

fn pod(containers_ready: bool, deleting: bool) -> PodInfo {
    PodInfo {
        uid: "u".into(),
        node: Some("n1".into()),
        containers_ready,
        deleting,
        ..Default::default()
    }
}

fn node(ready: Tri) -> NodeInfo {
    NodeInfo {
        ready,
        provider_id: Some("aws:///us-west-2a/i-0123".into()),
        ..Default::default()
    }
}

fn svc_port(name: &str) -> ServicePortInfo {
    ServicePortInfo {
        name: name.into(),
        port: 80,
        node_port: Some(31000),
    }
}

fn select(
    slices: &[SliceInfo],
    pods: &HashMap<&str, PodInfo>,
    n: &NodeInfo,
    port: &ServicePortInfo,
    v6: bool,
) -> Vec<(String, u16)> {
    select_pod_endpoints(port, slices, v6, true, |p| pods.get(p), |_| Some(n))
        .into_iter()
        .map(|e| (e.ip, e.port))
        .collect()
}

#[test]
fn ready_and_gated_endpoints_are_wanted_terminating_and_deleting_are_not() {
    let s = slice(
        "IPv4",
        &[("", 8080)],
        vec![
            ep("10.0.0.1", "ready", Some(true), None),
            ep("10.0.0.2", "unknown", None, None),
            ep("10.0.0.3", "gated", Some(false), Some(false)),
            ep("10.0.0.4", "starting", Some(false), None),
            ep("10.0.0.5", "terminating", None, Some(true)),
            ep("10.0.0.6", "deleting", Some(true), None),
            ep("10.0.0.7", "unknown-pod", Some(true), None),
        ],
    );
    let pods: HashMap<&str, PodInfo> = [
        ("ready", pod(true, false)),
        ("unknown", pod(true, false)),
        ("gated", pod(true, false)),
        ("starting", pod(false, false)),
        ("terminating", pod(true, false)),
        ("deleting", pod(true, true)),
    ]
    .into();
    let got = select(
        std::slice::from_ref(&s),
        &pods,
        &node(Tri::True),
        &svc_port(""),
        false,
    );
    let ips: Vec<&str> = got.iter().map(|(ip, _)| ip.as_str()).collect();
    assert_eq!(ips, vec!["10.0.0.1", "10.0.0.2", "10.0.0.3"]);
    assert!(got.iter().all(|(_, p)| *p == 8080));

    // The gated pod needs a Ready node.
    for state in [Tri::False, Tri::Unknown] {
        let got = select(
            std::slice::from_ref(&s),
            &pods,
            &node(state),
            &svc_port(""),
            false,
        );
        assert!(!got.iter().any(|(ip, _)| ip == "10.0.0.3"), "{state:?}");
    }
}

/// Gate `EndpointsFailOpen`: with no ready endpoint, the not-ready endpoints of ContainersReady
/// pods on nodes whose readiness is Unknown are registered (on) or nothing is (off); a ready
/// endpoint anywhere keeps them out either way.
#[test]
fn fail_open_takes_endpoints_on_unknown_nodes_only_when_none_is_ready() {
    let on_node = |addr: &str, pod: &str, node: &str| EndpointInfo {
        node: Some(node.into()),
        ..ep(addr, pod, Some(false), None)
    };
    let s = slice(
        "IPv4",
        &[("", 8080)],
        vec![
            on_node("10.0.0.1", "lost", "unknown"),
            on_node("10.0.0.2", "starting", "unknown"),
            on_node("10.0.0.3", "down", "not-ready"),
        ],
    );
    let pods: HashMap<&str, PodInfo> = [
        ("lost", pod(true, false)),
        ("starting", pod(false, false)),
        ("down", pod(true, false)),
        ("ready", pod(true, false)),
    ]
    .into();
    let nodes: HashMap<&str, NodeInfo> = [
        ("unknown", node(Tri::Unknown)),
        ("not-ready", node(Tri::False)),
        ("n1", node(Tri::True)),
    ]
    .into();
    let pick = |slices: &[SliceInfo], fail_open: bool| -> Vec<String> {
        select_pod_endpoints(
            &svc_port(""),
            slices,
            false,
            fail_open,
            |p| pods.get(p),
            |n| nodes.get(n),
        )
        .into_iter()
        .map(|e| e.ip)
        .collect()
    };
    let alone = std::slice::from_ref(&s);
    assert_eq!(pick(alone, true), vec!["10.0.0.1"]);
    assert!(
        pick(alone, false).is_empty(),
        "gate off: nothing registered"
    );

    let with_ready = [
        s.clone(),
        slice(
            "IPv4",
            &[("", 8080)],
            vec![ep("10.0.0.9", "ready", Some(true), None)],
        ),
    ];
    for fail_open in [true, false] {
        assert_eq!(
            pick(&with_ready, fail_open),
            vec!["10.0.0.9"],
            "{fail_open}"
        );
    }
}

#[test]
fn endpoints_fail_open_follows_its_gate() {
    use crate::cli::Cli;
    use clap::Parser;
    let cfg = |gates: &[&str]| {
        let mut argv = vec!["aws-load-balancer-controller", "--cluster-name=demo"];
        argv.extend_from_slice(gates);
        let cli = Cli::try_parse_from(argv).unwrap();
        super::TgbConfig::from(&crate::config::Config::from_args(&cli.controller).unwrap())
    };
    assert!(cfg(&[]).fail_open, "EndpointsFailOpen defaults on");
    assert!(!cfg(&["--feature-gates=EndpointsFailOpen=false"]).fail_open);
}

#[test]
fn named_ports_family_and_non_pod_targets() {
    let mut non_pod = ep("10.0.0.9", "x", Some(true), None);
    non_pod.pod = None;
    let v4 = slice(
        "IPv4",
        &[("http", 8080), ("metrics", 9090)],
        vec![ep("10.0.0.1", "a", Some(true), None), non_pod],
    );
    let v6 = slice(
        "IPv6",
        &[("http", 8080)],
        vec![ep("fd00::1", "a", Some(true), None)],
    );
    let pods: HashMap<&str, PodInfo> = [("a", pod(true, false))].into();
    let n = node(Tri::True);
    let slices = [v4, v6];
    assert_eq!(
        select(&slices, &pods, &n, &svc_port("http"), false),
        vec![("10.0.0.1".to_string(), 8080)]
    );
    assert_eq!(
        select(&slices, &pods, &n, &svc_port("metrics"), false),
        vec![("10.0.0.1".to_string(), 9090)]
    );
    assert_eq!(
        select(&slices, &pods, &n, &svc_port("http"), true),
        vec![("fd00::1".to_string(), 8080)]
    );
    assert!(select(&slices, &pods, &n, &svc_port("grpc"), false).is_empty());
}

#[test]
fn duplicate_endpoints_across_slices_count_once() {
    let a = slice(
        "IPv4",
        &[("", 80)],
        vec![ep("10.0.0.1", "a", Some(true), None)],
    );
    let pods: HashMap<&str, PodInfo> = [("a", pod(true, false))].into();
    let got = select(
        &[a.clone(), a],
        &pods,
        &node(Tri::True),
        &svc_port(""),
        false,
    );
    assert_eq!(got.len(), 1);
}

#[test]
fn service_port_by_number_or_name() {
    let svc = ServiceInfo {
        type_: "ClusterIP".into(),
        ports: vec![
            ServicePortInfo {
                name: "http".into(),
                port: 80,
                node_port: None,
            },
            ServicePortInfo {
                name: "https".into(),
                port: 443,
                node_port: None,
            },
        ],
        ..Default::default()
    };
    assert_eq!(
        find_service_port(&svc, &IntOrString::Int(443))
            .unwrap()
            .name,
        "https"
    );
    assert_eq!(
        find_service_port(&svc, &IntOrString::String("http".into()))
            .unwrap()
            .port,
        80
    );
    assert!(find_service_port(&svc, &IntOrString::Int(8080)).is_none());
    assert!(find_service_port(&svc, &IntOrString::String("grpc".into())).is_none());
}

fn labelled(labels: &[(&str, &str)]) -> NodeInfo {
    NodeInfo {
        labels: labels
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect(),
        ..node(Tri::True)
    }
}

#[test]
fn node_exclusions_and_selector() {
    assert!(node_is_candidate(&labelled(&[("role", "web")]), None));
    for l in [
        ("node-role.kubernetes.io/master", ""),
        (
            "node.kubernetes.io/exclude-from-external-load-balancers",
            "true",
        ),
        (
            "alpha.service-controller.kubernetes.io/exclude-balancer",
            "true",
        ),
        ("eks.amazonaws.com/compute-type", "fargate"),
    ] {
        assert!(!node_is_candidate(&labelled(&[l]), None), "{l:?}");
    }
    assert!(node_is_candidate(
        &labelled(&[("eks.amazonaws.com/compute-type", "ec2")]),
        None
    ));
    let tainted = NodeInfo {
        tainted_out: true,
        ..labelled(&[])
    };
    assert!(!node_is_candidate(&tainted, None));

    let sel = LabelSelector {
        match_labels: Some([("role".to_string(), "web".to_string())].into()),
        match_expressions: Some(vec![LabelSelectorRequirement {
            key: "zone".into(),
            operator: "NotIn".into(),
            values: Some(vec!["b".into()]),
        }]),
    };
    assert!(node_is_candidate(
        &labelled(&[("role", "web"), ("zone", "a")]),
        Some(&sel)
    ));
    assert!(!node_is_candidate(
        &labelled(&[("role", "web"), ("zone", "b")]),
        Some(&sel)
    ));
    assert!(!node_is_candidate(&labelled(&[("role", "db")]), Some(&sel)));
}

/// `matchExpressions` operators as Kubernetes defines them: `NotIn` and `DoesNotExist` match
/// a node without the label, `In` and `Exists` do not; all requirements and labels must hold.
#[test]
fn node_selector_expressions_match_as_kubernetes_defines() {
    let req = |key: &str, op: &str, values: &[&str]| LabelSelectorRequirement {
        key: key.into(),
        operator: op.into(),
        values: (!values.is_empty()).then(|| values.iter().map(|v| v.to_string()).collect()),
    };
    let only = |r: LabelSelectorRequirement| LabelSelector {
        match_labels: None,
        match_expressions: Some(vec![r]),
    };
    let a = labelled(&[("zone", "a")]);
    let b = labelled(&[("zone", "b")]);
    let bare = labelled(&[]);
    for (r, want) in [
        (req("zone", "In", &["a", "c"]), [true, false, false]),
        (req("zone", "NotIn", &["a"]), [false, true, true]),
        (req("zone", "Exists", &[]), [true, true, false]),
        (req("zone", "DoesNotExist", &[]), [false, false, true]),
    ] {
        let got = [&a, &b, &bare].map(|n| node_is_candidate(n, Some(&only(r.clone()))));
        assert_eq!(got, want, "{} {}", r.key, r.operator);
    }
}

/// A selector Kubernetes refuses fails the binding's reconcile rather than matching no node
/// (which would deregister every target), as upstream's `LabelSelectorAsSelector` error does.
#[test]
fn an_invalid_node_selector_fails_instead_of_choosing_no_nodes() {
    let sel = LabelSelector {
        match_labels: None,
        match_expressions: Some(vec![LabelSelectorRequirement {
            key: "zone".into(),
            operator: "Equals".into(),
            values: Some(vec!["a".into()]),
        }]),
    };
    let ready = labelled(&[("zone", "a")]);
    let got = select_node_endpoints(31000, [("a", &ready)], Some(&sel), true);
    assert_eq!(
        got.unwrap_err().to_string(),
        "invalid nodeSelector: \"Equals\" is not a valid label selector operator"
    );
}

#[test]
fn node_targets_use_ready_nodes_and_fail_open_to_unknown() {
    let ready = node(Tri::True);
    let unknown = NodeInfo {
        provider_id: Some("aws:///us-west-2b/i-0456".into()),
        ..node(Tri::Unknown)
    };
    let not_ready = node(Tri::False);
    let got = select_node_endpoints(
        31000,
        [("a", &ready), ("b", &unknown), ("c", &not_ready)],
        None,
        true,
    )
    .unwrap();
    assert_eq!(
        got.iter()
            .map(|e| e.instance_id.as_str())
            .collect::<Vec<_>>(),
        vec!["i-0123"]
    );
    assert_eq!(got[0].port, 31000);
    let got =
        select_node_endpoints(31000, [("b", &unknown), ("c", &not_ready)], None, true).unwrap();
    assert_eq!(got[0].instance_id, "i-0456");
    assert!(select_node_endpoints(31000, [("b", &unknown)], None, false)
        .unwrap()
        .is_empty());

    let bad = NodeInfo {
        provider_id: Some("kind://docker/x/node".into()),
        ..node(Tri::True)
    };
    let err = select_node_endpoints(31000, [("k", &bad)], None, true).unwrap_err();
    assert_eq!(
        err.to_string(),
        "providerID kind://docker/x/node is invalid for EC2 instances, node: k"
    );
    assert_eq!(instance_id("aws:///us-west-2a/i-0abc"), Some("i-0abc"));
    assert_eq!(instance_id("aws:///us-west-2a/"), None);
}

#[test]
fn endpoints_objects_become_one_slice_per_subset_and_family() {
    let ep: k8s_openapi::api::core::v1::Endpoints = serde_json::from_value(serde_json::json!({
        "metadata": { "name": "web", "namespace": "ns" },
        "subsets": [
            { "addresses": [{ "ip": "10.0.0.1", "targetRef": { "kind": "Pod", "name": "a" }, "nodeName": "n1" },
                            { "ip": "fd00::1", "targetRef": { "kind": "Pod", "name": "b" } }],
              "notReadyAddresses": [{ "ip": "10.0.0.2", "targetRef": { "kind": "Pod", "name": "c" } }],
              "ports": [{ "name": "http", "port": 8080 }] },
            { "addresses": [{ "ip": "10.0.0.9", "targetRef": { "kind": "Node", "name": "x" } }],
              "ports": [{ "port": 9090 }] }
        ]
    }))
    .unwrap();
    let slices = SliceInfo::from_endpoints(&ep);
    assert_eq!(slices.len(), 3, "{slices:#?}");
    let v4 = &slices[0];
    assert_eq!(v4.address_type, "IPv4");
    assert_eq!(v4.ports, vec![("http".to_string(), Some(8080))]);
    let seen: Vec<_> = v4
        .endpoints
        .iter()
        .map(|e| (&*e.address, e.ready, e.pod.as_deref(), e.terminating))
        .collect();
    assert_eq!(
        seen,
        vec![
            ("10.0.0.1", Some(true), Some("a"), None),
            ("10.0.0.2", Some(false), Some("c"), None)
        ]
    );
    assert_eq!(v4.endpoints[0].node.as_deref(), Some("n1"));
    assert_eq!(slices[1].address_type, "IPv6");
    assert_eq!(&*slices[1].endpoints[0].address, "fd00::1");
    assert_eq!(slices[2].ports, vec![(String::new(), Some(9090))]);
    assert_eq!(
        slices[2].endpoints[0].pod, None,
        "non-pod targets carry no pod"
    );
}

/// Failing open holds while the pods of a node out of touch are evicted (terminating, being
/// deleted), as upstream keeps them; on a healthy node a leaving pod is never taken.
#[test]
fn fail_open_keeps_leaving_pods_on_unknown_nodes_only() {
    let on_node = |addr: &str, pod: &str, node: &str| EndpointInfo {
        node: Some(node.into()),
        ..ep(addr, pod, Some(false), Some(true))
    };
    let pods: HashMap<&str, PodInfo> =
        [("evicted", pod(true, true)), ("draining", pod(true, true))].into();
    let nodes: HashMap<&str, NodeInfo> =
        [("unknown", node(Tri::Unknown)), ("n1", node(Tri::True))].into();
    let pick = |eps: Vec<EndpointInfo>, fail_open: bool| -> Vec<String> {
        select_pod_endpoints(
            &svc_port(""),
            &[slice("IPv4", &[("", 8080)], eps)],
            false,
            fail_open,
            |p| pods.get(p),
            |n| nodes.get(n),
        )
        .into_iter()
        .map(|e| e.ip)
        .collect()
    };
    assert_eq!(
        pick(vec![on_node("10.0.0.1", "evicted", "unknown")], true),
        ["10.0.0.1"]
    );
    assert!(pick(vec![on_node("10.0.0.1", "evicted", "unknown")], false).is_empty());
    assert!(pick(vec![on_node("10.0.0.2", "draining", "n1")], true).is_empty());
}
