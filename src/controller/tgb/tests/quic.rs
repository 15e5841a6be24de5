//! QUIC server ids: read from the pod as upstream reads them (and as our pod webhook writes
//! them), carried into the wanted targets of QUIC bindings only, matched and deregistered with
//! the id they were registered with.

use std::collections::{BTreeSet, HashMap};

use base64::Engine;
use k8s_openapi::api::core::v1::Pod;
use serde_json::{json, Value};

use crate::aws::{TargetDescription, TargetHealth, TargetHealthDescription, TargetHealthState};
use crate::controller::tgb::endpoints::PodEndpoint;
use crate::controller::tgb::gates::Desired;
use crate::controller::tgb::info::PodInfo;
use crate::controller::tgb::quic::*;
use crate::controller::tgb::reconcile::missing_note;
use crate::controller::tgb::targets::*;
use crate::crd::TargetGroupBinding;
use crate::webhook::quic_server_id::{QuicServerIdInjector, ServerIdGenerator, EPOCH_MS};

fn b64(bytes: &[u8]) -> String {
    base64::engine::general_purpose::STANDARD.encode(bytes)
}

fn pod(v: Value) -> Pod {
    serde_json::from_value(v).unwrap()
}

/// A pod annotated for QUIC with these containers.
fn quic_pod(containers: Value) -> Pod {
    pod(json!({
        "metadata": { "name": "p", "annotations": { ANNOTATION: "app,side" } },
        "spec": { "containers": containers }
    }))
}

fn container(name: &str, ports: &[i32], env: &[(&str, &str)]) -> Value {
    let ports: Vec<Value> = ports
        .iter()
        .map(|p| json!({ "containerPort": p }))
        .collect();
    let env: Vec<Value> = env
        .iter()
        .map(|(n, v)| json!({ "name": n, "value": v }))
        .collect();
    json!({ "name": name, "image": "i", "ports": ports, "env": env })
}

#[test]
fn the_id_is_the_base64_value_in_hex_after_0x() {
    let raw: [u8; 8] = [0x01, 0x23, 0x45, 0x67, 0x89, 0xab, 0xcd, 0xef];
    assert_eq!(elb_form(&b64(&raw)).as_deref(), Some("0x0123456789abcdef"));
    assert_eq!(
        elb_form("not base64!"),
        None,
        "undecodable: no id, as upstream"
    );
    assert_eq!(elb_form(&b64(&raw[..7])), None, "AWS takes exactly 8 bytes");
    assert_eq!(elb_form(""), None);
}

#[test]
fn the_webhooks_id_reads_back_as_the_same_64_bits() {
    let ids = ServerIdGenerator::with_clock(77, Box::new(|| EPOCH_MS + 123_456));
    let raw = ids.next_raw();
    assert_eq!(
        elb_form(&b64(&raw.to_be_bytes())),
        Some(format!("0x{raw:016x}"))
    );

    // The webhook's patch on a pod, then the controller's projection of the patched pod.
    let injector = QuicServerIdInjector::new(DEFAULT_ENV_NAME);
    let mut doc = json!({
        "metadata": { "name": "web-0", "annotations": { ANNOTATION: "app" } },
        "spec": { "containers": [
            { "name": "app", "image": "i", "ports": [{ "containerPort": 8443, "protocol": "UDP" }] },
            { "name": "log", "image": "i", "ports": [{ "containerPort": 9000 }] }
        ] }
    });
    let ops = injector.patch(&doc).unwrap();
    json_patch::patch(&mut doc, &ops).unwrap();
    let injected = doc["spec"]["containers"][0]["env"][0]["value"]
        .as_str()
        .unwrap()
        .to_string();
    let info = PodInfo::from_pod(&pod(doc), DEFAULT_ENV_NAME);
    let want = elb_form(&injected).unwrap();
    assert_eq!(want.len(), 18);
    assert_eq!(info.quic_server_id(8443), Some(want.as_str()));
    // A port of a container without an id takes the pod's (first) id, as upstream.
    assert_eq!(info.quic_server_id(9000), Some(want.as_str()));
}

#[test]
fn ids_per_container_port_with_the_first_as_default() {
    let (a, b) = (b64(&[1u8; 8]), b64(&[2u8; 8]));
    let (a, b) = (a.as_str(), b.as_str());
    let p = quic_pod(json!([
        container(
            "app",
            &[8443, 8444],
            &[("OTHER", "x"), (DEFAULT_ENV_NAME, a)]
        ),
        container("side", &[9443], &[(DEFAULT_ENV_NAME, b)]),
        container("plain", &[7000], &[])
    ]));
    let info = PodInfo::from_pod(&p, DEFAULT_ENV_NAME);
    assert_eq!(info.quic_server_id(8443), Some("0x0101010101010101"));
    assert_eq!(info.quic_server_id(8444), Some("0x0101010101010101"));
    assert_eq!(info.quic_server_id(9443), Some("0x0202020202020202"));
    assert_eq!(
        info.quic_server_id(7000),
        Some("0x0101010101010101"),
        "default"
    );

    // A port two id-carrying containers declare: the later container's id (upstream's map).
    let p = quic_pod(json!([
        container("app", &[8443], &[(DEFAULT_ENV_NAME, a)]),
        container("side", &[8443], &[(DEFAULT_ENV_NAME, b)])
    ]));
    let info = PodInfo::from_pod(&p, DEFAULT_ENV_NAME);
    assert_eq!(info.quic_server_id(8443), Some("0x0202020202020202"));
}

#[test]
fn no_id_without_the_annotation_or_a_usable_value_and_the_flag_names_the_variable() {
    let a = b64(&[0xabu8; 8]);
    let a = a.as_str();
    // The annotation is required (its value is not: upstream checks the key only).
    let bare = pod(json!({
        "metadata": { "name": "p" },
        "spec": { "containers": [container("app", &[8443], &[(DEFAULT_ENV_NAME, a)])] }
    }));
    let info = PodInfo::from_pod(&bare, DEFAULT_ENV_NAME);
    assert_eq!(info.quic, None);
    assert_eq!(info.quic_server_id(8443), None);

    let p = quic_pod(json!([container("app", &[8443], &[("MY_ID", a)])]));
    assert_eq!(PodInfo::from_pod(&p, DEFAULT_ENV_NAME).quic, None);
    assert_eq!(
        PodInfo::from_pod(&p, "MY_ID").quic_server_id(8443),
        Some("0xabababababababab"),
        "--quic-environment-variable-name is honoured"
    );

    // The first entry of the variable decides; a bad one means no id for that container.
    let p = quic_pod(json!([container(
        "app",
        &[8443],
        &[(DEFAULT_ENV_NAME, "%%%"), (DEFAULT_ENV_NAME, a)]
    )]));
    assert_eq!(PodInfo::from_pod(&p, DEFAULT_ENV_NAME).quic, None);

    // A value from a reference (no literal value) is no id.
    let p = quic_pod(json!([{ "name": "app", "image": "i",
        "env": [{ "name": DEFAULT_ENV_NAME, "valueFrom": { "fieldRef": { "fieldPath": "metadata.uid" } } }] }]));
    assert_eq!(PodInfo::from_pod(&p, DEFAULT_ENV_NAME).quic, None);
}

#[test]
fn sidecars_count_and_plain_init_containers_do_not() {
    let (a, b) = (b64(&[3u8; 8]), b64(&[4u8; 8]));
    let p = pod(json!({
        "metadata": { "name": "p", "annotations": { ANNOTATION: "side,init" } },
        "spec": {
            "containers": [container("app", &[80], &[])],
            "initContainers": [
                { "name": "init", "image": "i", "ports": [{ "containerPort": 81 }],
                  "env": [{ "name": DEFAULT_ENV_NAME, "value": b }] },
                { "name": "side", "image": "i", "restartPolicy": "Always",
                  "ports": [{ "containerPort": 8443 }],
                  "env": [{ "name": DEFAULT_ENV_NAME, "value": a }] }
            ]
        }
    }));
    let info = PodInfo::from_pod(&p, DEFAULT_ENV_NAME);
    assert_eq!(info.quic_server_id(8443), Some("0x0303030303030303"));
    assert_eq!(
        info.quic_server_id(81),
        Some("0x0303030303030303"),
        "the init container's id is never read"
    );
}

fn binding(protocol: Option<&str>) -> TargetGroupBinding {
    let mut spec = json!({
        "targetGroupARN": "arn:tg", "targetType": "ip",
        "serviceRef": { "name": "web", "port": 443 }
    });
    if let Some(p) = protocol {
        spec["targetGroupProtocol"] = json!(p);
    }
    serde_json::from_value(json!({
        "apiVersion": "elbv2.k8s.aws/v1beta1", "kind": "TargetGroupBinding",
        "metadata": { "name": "web", "namespace": "ns" }, "spec": spec
    }))
    .unwrap()
}

#[test]
fn only_quic_and_tcp_quic_bindings_carry_ids() {
    assert!(binding_is_quic(&binding(Some("QUIC"))));
    assert!(binding_is_quic(&binding(Some("TCP_QUIC"))));
    for p in [Some("UDP"), Some("TCP_UDP"), Some("TCP"), None] {
        assert!(!binding_is_quic(&binding(p)), "{p:?}");
    }
}

fn ep(pod: &str, ip: &str, port: u16) -> PodEndpoint {
    PodEndpoint {
        ip: ip.into(),
        port,
        pod: pod.into(),
    }
}

fn pods_with_ids() -> HashMap<&'static str, PodInfo> {
    let with = |raw: u8| {
        PodInfo::from_pod(
            &quic_pod(json!([container(
                "app",
                &[8443],
                &[(DEFAULT_ENV_NAME, b64(&[raw; 8]).as_str())]
            )])),
            DEFAULT_ENV_NAME,
        )
    };
    HashMap::from([
        ("web-1", with(0x11)),
        ("web-2", with(0x22)),
        ("web-3", PodInfo::default()),
    ])
}

#[test]
fn quic_targets_carry_the_pods_id_and_pods_without_one_are_left_out() {
    let pods = pods_with_ids();
    let eps = vec![
        ep("web-1", "10.0.0.1", 8443),
        ep("web-2", "10.0.0.2", 8443),
        ep("web-3", "10.0.0.3", 8443),
        ep("gone", "10.0.0.4", 8443),
    ];
    let cidrs = vec!["10.0.0.0/16".parse().unwrap()];
    let out = ip_targets(&eps, true, &cidrs, |p| pods.get(p));
    let want = |ip: &str, id: &str| TargetDescription {
        quic_server_id: Some(id.into()),
        ..TargetDescription::new(ip, 8443)
    };
    assert_eq!(
        out.targets,
        vec![
            want("10.0.0.1", "0x1111111111111111"),
            want("10.0.0.2", "0x2222222222222222")
        ]
    );
    assert_eq!(
        out.pairs,
        vec![
            (
                "web-1".to_string(),
                "10.0.0.1:8443:0x1111111111111111".to_string()
            ),
            (
                "web-2".to_string(),
                "10.0.0.2:8443:0x2222222222222222".to_string()
            ),
        ]
    );
    assert_eq!(out.missing_quic_id, vec![eps[2].clone(), eps[3].clone()]);

    // The same pods on a binding that is not QUIC: every endpoint, never an id.
    let out = ip_targets(&eps, false, &cidrs, |p| pods.get(p));
    assert_eq!(out.targets.len(), 4);
    assert!(out.targets.iter().all(|t| t.quic_server_id.is_none()));
    assert!(out.missing_quic_id.is_empty());
    assert_eq!(out.pairs[0].1, "10.0.0.1:8443");
}

#[test]
fn the_warning_names_the_pods_and_where_the_id_comes_from() {
    let eps: Vec<PodEndpoint> = (1..=7)
        .map(|i| ep(&format!("web-{i}"), &format!("10.0.0.{i}"), 8443))
        .collect();
    let note = missing_note(&eps[..1], "MY_ID");
    assert!(
        note.starts_with("Dropping registration request for QUIC enabled target with no server ID: pod web-1 (10.0.0.1:8443)."),
        "{note}"
    );
    assert!(
        note.contains("MY_ID") && note.contains(ANNOTATION),
        "{note}"
    );
    let note = missing_note(&eps, DEFAULT_ENV_NAME);
    assert!(
        note.contains("pod web-5 (10.0.0.5:8443), and 2 more"),
        "{note}"
    );
    assert!(!note.contains("web-6"), "{note}");
    let gate = Desired::quic_server_id_missing();
    assert_eq!(
        (gate.status, gate.reason.as_str()),
        ("False", REASON_MISSING)
    );
}

fn held(ip: &str, id: Option<&str>, state: TargetHealthState) -> TargetHealthDescription {
    TargetHealthDescription {
        target: TargetDescription {
            quic_server_id: id.map(Into::into),
            ..TargetDescription::new(ip, 8443)
        },
        health_check_port: None,
        health: TargetHealth {
            state,
            reason: None,
            description: None,
        },
    }
}

#[test]
fn quic_targets_match_on_the_id_and_leave_with_the_id_they_were_registered_with() {
    let id = |s: &str| Some(s.to_string());
    let wanted = vec![
        // Registered already with this id: nothing to do.
        TargetDescription {
            quic_server_id: id("0x1111111111111111"),
            ..TargetDescription::new("10.0.0.1", 8443)
        },
        // Same address and port, new pod with a new id: the old target leaves, the new comes.
        TargetDescription {
            quic_server_id: id("0x3333333333333333"),
            ..TargetDescription::new("10.0.0.2", 8443)
        },
    ];
    let current = vec![
        held(
            "10.0.0.1",
            Some("0x1111111111111111"),
            TargetHealthState::Healthy,
        ),
        held(
            "10.0.0.2",
            Some("0x2222222222222222"),
            TargetHealthState::Healthy,
        ),
        held(
            "10.0.0.9",
            Some("0x9999999999999999"),
            TargetHealthState::Unhealthy,
        ),
        held(
            "10.0.0.8",
            Some("0x8888888888888888"),
            TargetHealthState::Draining,
        ),
    ];
    let d = diff_targets(&wanted, &current, None);
    assert_eq!(d.register, vec![wanted[1].clone()]);
    let gone: Vec<(String, Option<String>)> = d
        .deregister
        .iter()
        .map(|t| (t.id.clone(), t.quic_server_id.clone()))
        .collect();
    assert_eq!(
        gone,
        vec![
            ("10.0.0.2".to_string(), id("0x2222222222222222")),
            ("10.0.0.9".to_string(), id("0x9999999999999999")),
        ],
        "each deregistered with its own id; the draining one left alone"
    );

    // Multi-cluster records hold upstream's identifier, `ip:port:id`.
    let rec: BTreeSet<String> = [
        "10.0.0.9:8443:0x9999999999999999".to_string(),
        "10.0.0.2:8443".to_string(),
    ]
    .into();
    let d = diff_targets(&wanted, &current, Some(Some(&rec)));
    assert_eq!(
        d.deregister.iter().map(key_of).collect::<Vec<_>>(),
        vec!["10.0.0.9:8443:0x9999999999999999"]
    );

    // Cleanup deregisters every target with its id.
    let d = diff_targets(&[], &current, None);
    assert!(d.deregister.iter().all(|t| t.quic_server_id.is_some()));
    assert_eq!(d.deregister.len(), 3);
}

#[test]
fn a_listing_without_ids_gets_the_ids_the_targets_were_registered_with() {
    use TargetHealthState::Healthy;
    let ids = RegisteredIds::default();
    let reg = |ip: &str, id: &str| TargetDescription {
        quic_server_id: Some(id.into()),
        ..TargetDescription::new(ip, 8443)
    };
    let wanted = vec![
        reg("10.0.0.1", "0x1111111111111111"),
        reg("10.0.0.2", "0x2222222222222222"),
    ];
    ids.registered("ns/web", &wanted);
    // moto lists targets without their id: filled in, they match their pods (no churn).
    let mut listed = vec![
        held("10.0.0.1", None, Healthy),
        held("10.0.0.2", None, Healthy),
    ];
    ids.fill("ns/web", &mut listed);
    assert!(diff_targets(&wanted, &listed, None).is_empty());
    let filled = |listed: &[TargetHealthDescription]| -> Vec<Option<String>> {
        listed
            .iter()
            .map(|t| t.target.quic_server_id.clone())
            .collect()
    };

    // What AWS reports wins; unknown targets and other bindings get nothing.
    let mut listed = vec![
        held("10.0.0.1", Some("0x2a2a2a2a2a2a2a2a"), Healthy),
        held("10.0.0.3", None, Healthy),
    ];
    ids.fill("ns/web", &mut listed);
    assert_eq!(
        filled(&listed),
        vec![Some("0x2a2a2a2a2a2a2a2a".to_string()), None]
    );
    let mut other = vec![held("10.0.0.1", None, Healthy)];
    ids.fill("ns/other", &mut other);
    assert_eq!(filled(&other), vec![None]);

    // A pod that leaves is deregistered with its id, then forgotten; a deregistration with
    // another id (an older target at the same address) keeps the current one.
    let mut listed = vec![
        held("10.0.0.1", None, Healthy),
        held("10.0.0.2", None, Healthy),
    ];
    ids.fill("ns/web", &mut listed);
    let d = diff_targets(&wanted[..1], &listed, None);
    assert_eq!(d.deregister, vec![wanted[1].clone()]);
    ids.deregistered("ns/web", &d.deregister);
    ids.deregistered("ns/web", &[reg("10.0.0.1", "0x0f0f0f0f0f0f0f0f")]);
    let mut listed = vec![
        held("10.0.0.1", None, Healthy),
        held("10.0.0.2", None, Healthy),
    ];
    ids.fill("ns/web", &mut listed);
    assert_eq!(
        filled(&listed),
        vec![Some("0x1111111111111111".to_string()), None]
    );
    ids.forget("ns/web");
    let mut listed = vec![held("10.0.0.1", None, Healthy)];
    ids.fill("ns/web", &mut listed);
    assert_eq!(filled(&listed), vec![None]);
}
