//! Tests for readiness-gate injection: upstream's cases and a property test over random pods.

use super::*;
use crate::webhook::pod_index::{BindingEntry, PodGateIndex};
use crate::webhook::test_support::{apply, arb_json, req_in as req};
use proptest::prelude::*;
use serde_json::json;

fn index() -> PodGateIndex {
    let idx = PodGateIndex::default();
    let ip = |svc: &str| BindingEntry {
        target_type: Some("ip".into()),
        service: svc.into(),
    };
    idx.reset_bindings(vec![
        ("ns".into(), "tgb-b".into(), ip("web")),
        ("ns".into(), "tgb-a".into(), ip("web")),
        (
            "ns".into(),
            "tgb-inst".into(),
            BindingEntry {
                target_type: Some("instance".into()),
                service: "web".into(),
            },
        ),
        (
            "ns".into(),
            "tgb-nil".into(),
            BindingEntry {
                target_type: None,
                service: "web".into(),
            },
        ),
        ("ns".into(), "tgb-missing-svc".into(), ip("gone")),
        ("ns".into(), "tgb-empty-sel".into(), ip("headless")),
        ("other".into(), "tgb-x".into(), ip("web")),
    ]);
    idx.reset_services(vec![
        (
            "ns".into(),
            "web".into(),
            [("app".to_string(), "web".to_string())].into(),
        ),
        ("ns".into(), "headless".into(), Default::default()),
        (
            "other".into(),
            "web".into(),
            [("app".to_string(), "web".to_string())].into(),
        ),
    ]);
    idx
}

fn injector(enabled: bool) -> PodReadinessGateInjector {
    PodReadinessGateInjector {
        enabled,
        index: index(),
        sync_wait: Duration::from_millis(50),
    }
}

/// The enabled injector's decision on creating `pod` in `ns`.
async fn create_in(ns: &str, pod: &Value) -> Decision {
    injector(true)
        .admit(&req(Operation::Create, ns, pod.clone()))
        .await
}

fn gate_types(pod: &Value) -> Vec<String> {
    pod["spec"]["readinessGates"]
        .as_array()
        .map(|a| {
            a.iter()
                .map(|g| g["conditionType"].as_str().unwrap().to_string())
                .collect()
        })
        .unwrap_or_default()
}

fn web_pod() -> Value {
    json!({"metadata": {"labels": {"app": "web", "tier": "x"}}, "spec": {"containers": [{"name": "c"}]}})
}

#[tokio::test]
async fn injects_a_gate_per_matching_ip_binding_in_name_order() {
    let pod = web_pod();
    let out = apply(&pod, &create_in("ns", &pod).await);
    assert_eq!(
        gate_types(&out),
        vec![
            "target-health.elbv2.k8s.aws/tgb-a",
            "target-health.elbv2.k8s.aws/tgb-b"
        ]
    );
}

#[tokio::test]
async fn skips_instance_nil_type_missing_service_empty_selector_and_other_namespaces() {
    let pod = json!({"metadata": {"labels": {"app": "other"}}, "spec": {}});
    assert_eq!(create_in("ns", &pod).await, Decision::Patch(vec![]));
    let no_labels = json!({"spec": {}});
    assert_eq!(create_in("ns", &no_labels).await, Decision::Patch(vec![]));
    let out = apply(&web_pod(), &create_in("other", &web_pod()).await);
    assert_eq!(gate_types(&out), vec!["target-health.elbv2.k8s.aws/tgb-x"]);
    assert_eq!(
        create_in("empty-ns", &web_pod()).await,
        Decision::Patch(vec![])
    );
}

#[tokio::test]
async fn keeps_existing_gates_and_does_not_duplicate() {
    let mut pod = web_pod();
    pod["spec"]["readinessGates"] = json!([{"conditionType": "custom/one"}, {"conditionType": "target-health.elbv2.k8s.aws/tgb-b"}]);
    let out = apply(&pod, &create_in("ns", &pod).await);
    assert_eq!(
        gate_types(&out),
        vec![
            "custom/one",
            "target-health.elbv2.k8s.aws/tgb-b",
            "target-health.elbv2.k8s.aws/tgb-a"
        ]
    );
    // Everything already present: no patch at all.
    let out2 = create_in("ns", &out).await;
    assert_eq!(out2, Decision::Patch(vec![]));
}

#[tokio::test]
async fn drops_legacy_gates_only_when_adding() {
    let mut pod = web_pod();
    pod["spec"]["readinessGates"] = json!([
        {"conditionType": "target-health.alb.ingress.k8s.aws/old-1"},
        {"conditionType": "keep"},
        {"conditionType": "target-health.alb.ingress.k8s.aws/old-2"}
    ]);
    let out = apply(&pod, &create_in("ns", &pod).await);
    assert_eq!(
        gate_types(&out),
        vec![
            "keep",
            "target-health.elbv2.k8s.aws/tgb-a",
            "target-health.elbv2.k8s.aws/tgb-b"
        ]
    );
    // No match: legacy gates stay.
    let mut unmatched = pod.clone();
    unmatched["metadata"]["labels"] = json!({"app": "nothing"});
    assert_eq!(create_in("ns", &unmatched).await, Decision::Patch(vec![]));
}

#[tokio::test]
async fn update_and_disabled_are_no_ops() {
    assert_eq!(
        injector(true)
            .admit(&req(Operation::Update, "ns", web_pod()))
            .await,
        Decision::Patch(vec![])
    );
    let mut pod = web_pod();
    pod["spec"]["readinessGates"] =
        json!([{"conditionType": "target-health.alb.ingress.k8s.aws/old"}]);
    assert_eq!(
        injector(false)
            .admit(&req(Operation::Create, "ns", pod))
            .await,
        Decision::Patch(vec![])
    );
}

#[tokio::test]
async fn unsynced_index_denies_with_upstreams_prefix_and_bad_pods_error() {
    let inj = PodReadinessGateInjector {
        enabled: true,
        index: PodGateIndex::default(),
        sync_wait: Duration::from_millis(30),
    };
    let Decision::Deny { message, .. } = inj.admit(&req(Operation::Create, "ns", web_pod())).await
    else {
        panic!()
    };
    assert!(
        message.starts_with("unable to determine targetHealth readinessGates: "),
        "{message}"
    );
    assert!(matches!(
        injector(true)
            .admit(&req(Operation::Create, "ns", json!("pod")))
            .await,
        Decision::Errored { .. }
    ));
}

#[test]
fn patch_is_only_adds_and_legacy_removes() {
    let mut pod = web_pod();
    pod["spec"]["readinessGates"] =
        json!([{"conditionType": "target-health.alb.ingress.k8s.aws/x"}]);
    let existing = existing_gates(&pod);
    let ops = gate_patch(
        existing.as_deref(),
        &["target-health.elbv2.k8s.aws/a".to_string()],
    );
    let v = serde_json::to_value(&ops).unwrap();
    assert_eq!(
        v,
        json!([
            {"op": "remove", "path": "/spec/readinessGates/0"},
            {"op": "add", "path": "/spec/readinessGates/-", "value": {"conditionType": "target-health.elbv2.k8s.aws/a"}}
        ])
    );
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]
    /// Random pods with unknown fields anywhere: the patched pod is the input plus our gates, and
    /// nothing else changes (we compare the whole document with the gates taken out again).
    #[test]
    fn patched_pod_is_input_plus_gates(
        extra_top in arb_json(3), extra_spec in arb_json(3), extra_meta in arb_json(2),
        existing in prop::collection::vec("[a-z./-]{1,20}", 0..3), labelled in any::<bool>(),
    ) {
        let mut pod = json!({"metadata": {"labels": {"app": if labelled {"web"} else {"db"}}, "xMeta": extra_meta},
            "spec": {"containers": [{"name": "c", "futureProbe": extra_spec.clone()}], "xSpec": extra_spec}, "xTop": extra_top});
        if !existing.is_empty() {
            pod["spec"]["readinessGates"] = Value::Array(existing.iter().map(|t| json!({"conditionType": t, "x": 1})).collect());
        }
        let decision = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap()
            .block_on(injector(true).admit(&req(Operation::Create, "ns", pod.clone())));
        let out = apply(&pod, &decision);
        let ours = ["target-health.elbv2.k8s.aws/tgb-a", "target-health.elbv2.k8s.aws/tgb-b"];
        let mut stripped = out.clone();
        if let Some(gates) = stripped["spec"].get_mut("readinessGates").and_then(Value::as_array_mut) {
            gates.retain(|g| !(ours.contains(&g["conditionType"].as_str().unwrap_or("")) && g.as_object().unwrap().len() == 1 && !existing.iter().any(|e| e == g["conditionType"].as_str().unwrap())));
        }
        if existing.is_empty() && labelled {
            stripped["spec"].as_object_mut().unwrap().remove("readinessGates");
        }
        prop_assert_eq!(&stripped, &pod);
        let types = gate_types(&out);
        if labelled {
            for g in ours { prop_assert!(types.contains(&g.to_string())); }
        } else {
            prop_assert_eq!(&out, &pod);
        }
    }
}

/// An AdmissionReview body as an API server sends it, around `pod`.
fn review_body(op: &str, namespace: Option<&str>, pod: &Value) -> Vec<u8> {
    let mut request = json!({"uid": "u-\"1\"", "kind": {"group": "", "version": "v1", "kind": "Pod"},
        "operation": op, "object": pod, "oldObject": null, "dryRun": false});
    if let Some(ns) = namespace {
        request["namespace"] = json!(ns);
    }
    serde_json::to_vec(&json!({"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview", "request": request}))
        .unwrap()
}

/// The answer's bytes on the wire, as text.
fn answer_text(uid: &str, decision: &Decision) -> String {
    String::from_utf8(crate::webhook::review::encode_body(uid, decision)).unwrap()
}

/// The generic path's answer: `(uid, decision)`, `Allow` for operations allowed unread.
fn generic_answer(inj: &PodReadinessGateInjector, body: &[u8]) -> (String, Decision) {
    let request = crate::webhook::review::decode(body).expect("a review");
    if request.operation.admits_unread() {
        return (request.uid, Decision::Allow);
    }
    let decision = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap()
        .block_on(inj.admit(&request));
    (request.uid, decision)
}

#[test]
fn borrowed_reading_matches_the_generic_path_on_upstreams_cases() {
    let inj = injector(true);
    let mut legacy = web_pod();
    legacy["spec"]["readinessGates"] = json!([
        {"conditionType": "target-health.alb.ingress.k8s.aws/old-1"}, {"conditionType": "keep"},
        {"conditionType": "target-health.elbv2.k8s.aws/tgb-b"}, {}
    ]);
    let escaped = json!({"metadata": {"labels": {"tier": "x", "app": "web"}}, "spec": {}});
    let cases = [
        ("CREATE", Some("ns"), web_pod()),
        ("CREATE", Some("ns"), legacy),
        ("CREATE", Some("other"), web_pod()),
        ("CREATE", Some("ns"), json!({"spec": {}})),
        ("CREATE", None, web_pod()),
        ("CREATE", Some("ns"), json!({"metadata": {}})),
        ("CREATE", Some("ns"), json!({"spec": null})),
        ("UPDATE", Some("ns"), web_pod()),
        ("DELETE", Some("ns"), Value::Null),
    ];
    for (op, ns, pod) in cases {
        let body = review_body(op, ns, &pod);
        let quick = inj.admit_borrowed(&body).expect("read borrowed");
        let (uid, decision) = generic_answer(&inj, &body);
        let quick_decision = if quick.operation.admits_unread() {
            Decision::Allow
        } else {
            quick.decision
        };
        assert_eq!(&*quick.uid, uid.as_str());
        assert_eq!(
            answer_text(&uid, &quick_decision),
            answer_text(&uid, &decision),
            "{op} {ns:?} {pod}"
        );
    }
    // A label written with an escape reads as its text.
    let body = String::from_utf8(review_body("CREATE", Some("ns"), &escaped))
        .unwrap()
        .replace(r#""app":"web""#, r#""app":"w\u0065b""#);
    let quick = inj.admit_borrowed(body.as_bytes()).unwrap();
    let generic = generic_answer(&inj, body.as_bytes()).1;
    assert_eq!(
        answer_text("u", &quick.decision),
        answer_text("u", &generic)
    );
    assert!(matches!(&generic, Decision::Patch(ops) if !ops.is_empty()));
}

#[test]
fn pods_the_view_does_not_read_and_unsynced_indexes_go_the_generic_way() {
    let inj = injector(true);
    for pod in [
        json!({"metadata": {"labels": {"app": 1}}, "spec": {}}),
        json!({"spec": {"readinessGates": [{"conditionType": 7}]}}),
        json!({"spec": {"readinessGates": ["gate"]}}),
        json!({"spec": {"readinessGates": {}}}),
        json!({"spec": "not an object"}),
        json!(["a pod"]),
    ] {
        let body = review_body("CREATE", Some("ns"), &pod);
        assert_eq!(inj.admit_borrowed(&body), None, "{pod}");
    }
    let unsynced = PodReadinessGateInjector {
        enabled: true,
        index: PodGateIndex::default(),
        sync_wait: Duration::from_millis(30),
    };
    assert_eq!(
        unsynced.admit_borrowed(&review_body("CREATE", Some("ns"), &web_pod())),
        None
    );
}

/// A label or gate value: mostly well-formed, sometimes of another type.
fn arb_text() -> impl Strategy<Value = Value> {
    prop_oneof![
        4 => prop::sample::select(vec!["web", "db", "w\"eb\\", "target-health.elbv2.k8s.aws/tgb-a",
            "target-health.alb.ingress.k8s.aws/x", ""]).prop_map(|s| json!(s)),
        1 => arb_json(1),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]
    /// Random reviews: wherever the borrowed reading answers, the generic decoding and `admit`
    /// answer the same; well-formed pods are always read borrowed.
    #[test]
    fn borrowed_reading_answers_as_the_generic_path(
        op in prop::sample::select(vec!["CREATE", "UPDATE", "DELETE", "CONNECT", "FROB"]),
        ns in prop::option::of(prop::sample::select(vec!["ns", "other", "", "empty-ns"])),
        labels in prop::option::of(prop::collection::btree_map(
            prop::sample::select(vec!["app", "tier", "x\"y"]), arb_text(), 0..3)),
        gates in prop::option::of(prop::collection::vec(prop_oneof![
            4 => prop::option::of(arb_text()).prop_map(|t| match t { Some(t) => json!({"conditionType": t, "x": 1}), None => json!({}) }),
            1 => arb_json(1),
        ], 0..3)),
        extra in arb_json(2), with_spec in any::<bool>(),
    ) {
        let mut pod = json!({"metadata": {"name": "p", "x": extra.clone()}, "x": extra});
        if let Some(labels) = &labels {
            pod["metadata"]["labels"] = json!(labels);
        }
        if with_spec {
            pod["spec"] = json!({"containers": [{"name": "c"}]});
            if let Some(gates) = &gates {
                pod["spec"]["readinessGates"] = json!(gates);
            }
        }
        let body = review_body(op, ns, &pod);
        let inj = injector(true);
        let quick = inj.admit_borrowed(&body);
        let (uid, decision) = generic_answer(&inj, &body);
        let well_formed = labels.iter().flatten().all(|(_, v)| v.is_string())
            && gates.iter().flatten().all(|g| g.as_object().is_some_and(|g| g.get("conditionType").is_none_or(Value::is_string)));
        prop_assert!(quick.is_some() || !well_formed, "a well-formed pod read the generic way: {pod}");
        if let Some(quick) = quick {
            prop_assert_eq!(&*quick.uid, uid.as_str());
            let quick_decision = if quick.operation.admits_unread() { Decision::Allow } else { quick.decision };
            prop_assert_eq!(answer_text(&uid, &quick_decision), answer_text(&uid, &decision));
        }
    }
}

proptest! {
    /// The patch written directly is the bytes serde writes for [`gate_patch`]'s operations.
    #[test]
    fn the_written_patch_is_the_serialised_operations(
        existing in prop::option::of(prop::collection::vec(prop::sample::select(vec![
            "target-health.elbv2.k8s.aws/tgb-a", "target-health.alb.ingress.k8s.aws/old",
            "keep", "", "q\"uote\\"]), 0..4)),
        gates in prop::collection::vec(prop::sample::select(vec![
            "target-health.elbv2.k8s.aws/tgb-a", "target-health.elbv2.k8s.aws/tgb-b",
            "target-health.elbv2.k8s.aws/t\"b\u{1}"]), 0..3),
    ) {
        let gates: Vec<String> = gates.into_iter().map(String::from).collect();
        let ops = gate_patch(existing.as_deref(), &gates);
        let written = gate_patch_json(existing.as_deref(), &gates);
        if ops.is_empty() {
            prop_assert!(written.is_empty());
        } else {
            prop_assert_eq!(
                String::from_utf8(written).unwrap(),
                serde_json::to_string(&ops).unwrap()
            );
        }
    }
}
