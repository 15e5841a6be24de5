//! Tests of the ALB target control agent injector: upstream's `Test_AlbTargetControlAgent_Mutate`
//! table replayed through the webhook, who gets the agent, and a property test that the patch
//! only adds (the patched pod minus the agent and the mark is the pod as sent).

use super::*;
use crate::crd::alb_target_control_config::FALLBACK_NAMESPACE;
use crate::crd::AlbTargetControlConfigSpec;
use crate::webhook::target_control_agent::annotations as a;
use crate::webhook::target_control_agent::{
    ENV_CONTROL_ADDRESS, ENV_DATA_ADDRESS, ENV_DESTINATION_ADDRESS, ENV_MAX_CONCURRENCY,
    ENV_TLS_CERT_PATH, ENV_TLS_KEY_PATH,
};
use crate::webhook::test_support::{apply, arb_json, denial, req_in};
use k8s_openapi::api::core::v1::ResourceRequirements;
use k8s_openapi::apimachinery::pkg::api::resource::Quantity;
use proptest::prelude::*;
use std::collections::HashMap;
use std::sync::Arc;

const IMAGE: &str = "public.ecr.aws/aws-elb/target-optimizer/target-control-agent:latest";

fn run(inj: &TargetControlInjector, op: Operation, ns: &str, pod: &Value) -> Decision {
    tokio::runtime::Builder::new_current_thread()
        .enable_time()
        .build()
        .unwrap()
        .block_on(inj.admit(&req_in(op, ns, pod.clone())))
}

/// Upstream's test configuration (`MaxConcurrency: 1000`, no resources unless given).
fn config(image: &str) -> AlbTargetControlConfigSpec {
    AlbTargetControlConfigSpec {
        image: image.into(),
        data_address: "0.0.0.0:80".into(),
        control_address: "0.0.0.0:3000".into(),
        destination_address: "127.0.0.1:8080".into(),
        max_concurrency: Some(1000),
        ..Default::default()
    }
}

/// An injector over a synced index holding `namespaces` (name → injection label) and
/// `configs` (namespace → configuration).
fn injector(
    namespaces: &[(&str, Option<&str>)],
    configs: Vec<(&str, AlbTargetControlConfigSpec)>,
) -> TargetControlInjector {
    let index = TargetControlIndex::default();
    index.reset_namespaces(
        namespaces
            .iter()
            .map(|(n, l)| (n.to_string(), l.map(String::from)))
            .collect(),
    );
    index.reset_configs(
        configs
            .into_iter()
            .map(|(ns, c)| (ns.to_string(), Arc::new(c)))
            .collect::<HashMap<_, _>>(),
    );
    TargetControlInjector::new(index)
}

fn pod(labels: Value, annotations: Option<Value>, containers: Value) -> Value {
    let mut p = json!({
        "metadata": {"name": "test-pod", "namespace": "default", "labels": labels},
        "spec": {"containers": containers}
    });
    if let Some(a) = annotations {
        p["metadata"]["annotations"] = a;
    }
    p
}

fn app() -> Value {
    json!([{"name": "app", "image": "app:latest"}])
}

fn containers(p: &Value) -> &Vec<Value> {
    p["spec"]["containers"].as_array().unwrap()
}

fn sidecar(p: &Value) -> Option<&Value> {
    containers(p).iter().find(|c| c["name"] == CONTAINER_NAME)
}

fn env(c: &Value) -> BTreeMap<String, String> {
    c["env"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| {
            (
                e["name"].as_str().unwrap().to_string(),
                e["value"].as_str().unwrap_or("").to_string(),
            )
        })
        .collect()
}

/// One row of upstream's `Test_AlbTargetControlAgent_Mutate`.
struct Case {
    name: &'static str,
    pod: Value,
    /// The configuration in the pod's namespace (`default`), if any.
    config: Option<AlbTargetControlConfigSpec>,
    want_containers: usize,
    want_annotation: bool,
    want_error: bool,
}

fn upstream_cases() -> Vec<Case> {
    let inject = json!({ INJECT_LABEL: "true" });
    let with_resources = AlbTargetControlConfigSpec {
        resources: Some(ResourceRequirements {
            requests: Some(BTreeMap::from([
                ("cpu".to_string(), Quantity("100m".into())),
                ("memory".to_string(), Quantity("128Mi".into())),
            ])),
            limits: Some(BTreeMap::from([
                ("cpu".to_string(), Quantity("500m".into())),
                ("memory".to_string(), Quantity("512Mi".into())),
            ])),
            claims: None,
        }),
        ..config(IMAGE)
    };
    vec![
        Case {
            name: "successful injection",
            pod: pod(inject.clone(), None, app()),
            config: Some(with_resources),
            want_containers: 2,
            want_annotation: true,
            want_error: false,
        },
        Case {
            name: "ALBTargetControlConfig missing - injection skipped",
            pod: pod(inject.clone(), None, app()),
            config: None,
            want_containers: 1,
            want_annotation: false,
            want_error: false,
        },
        Case {
            name: "annotation overrides work correctly",
            pod: pod(
                inject.clone(),
                Some(json!({
                    a::IMAGE: "123456789012.dkr.ecr.us-west-2.amazonaws.com/custom-agent:v2.0",
                    a::DATA_ADDRESS: "0.0.0.0:8080",
                    a::CONTROL_ADDRESS: "0.0.0.0:9000",
                    a::DESTINATION_ADDRESS: "127.0.0.1:3000",
                    a::MAX_CONCURRENCY: "500",
                    a::TLS_CERT_PATH: "/etc/ssl/certs/tls.crt",
                    a::TLS_KEY_PATH: "/etc/ssl/private/tls.key",
                    a::CPU_REQUEST: "200m",
                    a::CPU_LIMIT: "1000m",
                    a::MEMORY_REQUEST: "256Mi",
                    a::MEMORY_LIMIT: "1Gi"
                })),
                app(),
            ),
            config: Some(config(IMAGE)),
            want_containers: 2,
            want_annotation: true,
            want_error: false,
        },
        Case {
            name: "invalid concurrency annotation - injection fails",
            pod: pod(
                inject.clone(),
                Some(json!({ a::MAX_CONCURRENCY: "2000" })),
                app(),
            ),
            config: Some(config(IMAGE)),
            want_containers: 1,
            want_annotation: false,
            want_error: true,
        },
        Case {
            name: "sidecar already exists - skip injection",
            pod: pod(
                inject,
                None,
                json!([{"name": "app", "image": "app:latest"},
                       {"name": CONTAINER_NAME, "image": "existing:latest"}]),
            ),
            config: Some(config(IMAGE)),
            want_containers: 2,
            want_annotation: false,
            want_error: false,
        },
    ]
}

/// Upstream's checks after `Mutate`, on the pod as the API server would store it.
#[test]
fn upstreams_mutate_table_replays_through_the_webhook() {
    let cases = upstream_cases();
    let mut matched = 0;
    for case in &cases {
        let configs = case
            .config
            .clone()
            .map(|c| vec![("default", c)])
            .unwrap_or_default();
        // The namespace exists, unlabelled, as in upstream's fake client.
        let inj = injector(&[("default", None)], configs);
        let decision = run(&inj, Operation::Create, "default", &case.pod);
        let out = if case.want_error {
            let (category, _) = denial(&decision);
            assert_eq!(category, CATEGORY, "{}", case.name);
            case.pod.clone()
        } else {
            apply(&case.pod, &decision)
        };
        assert_eq!(
            containers(&out).len(),
            case.want_containers,
            "{}",
            case.name
        );
        let mark = out["metadata"]["annotations"][INJECTED_ANNOTATION].as_str();
        if case.want_annotation {
            assert_eq!(mark, Some("true"), "{}", case.name);
            let c = sidecar(&out).expect("sidecar container should exist");
            if case.name == "annotation overrides work correctly" {
                assert_eq!(
                    c["image"],
                    "123456789012.dkr.ecr.us-west-2.amazonaws.com/custom-agent:v2.0"
                );
                assert_eq!(c["ports"][0]["containerPort"], 8080, "data port");
                assert_eq!(c["ports"][1]["containerPort"], 9000, "control port");
                let e = env(c);
                assert_eq!(e[ENV_DATA_ADDRESS], "0.0.0.0:8080");
                assert_eq!(e[ENV_CONTROL_ADDRESS], "0.0.0.0:9000");
                assert_eq!(e[ENV_DESTINATION_ADDRESS], "127.0.0.1:3000");
                assert_eq!(e[ENV_MAX_CONCURRENCY], "500");
                assert_eq!(e[ENV_TLS_CERT_PATH], "/etc/ssl/certs/tls.crt");
                assert_eq!(e[ENV_TLS_KEY_PATH], "/etc/ssl/private/tls.key");
                let r = &c["resources"];
                assert_eq!(r["requests"]["cpu"], "200m");
                assert_eq!(r["limits"]["cpu"], "1000m");
                assert_eq!(r["requests"]["memory"], "256Mi");
                assert_eq!(r["limits"]["memory"], "1Gi");
            }
        } else {
            assert_ne!(mark, Some("true"), "{}", case.name);
        }
        matched += 1;
    }
    assert_eq!(matched, 5, "every row of upstream's table");
}

#[test]
fn the_pod_label_decides_first_then_the_namespace_label() {
    let namespaces = [
        ("on", Some(NAMESPACE_ENABLED)),
        ("off", Some("disabled")),
        ("plain", None),
    ];
    let inj = injector(&namespaces, vec![(FALLBACK_NAMESPACE, config(IMAGE))]);
    let injected = |ns: &str, label: Option<&str>| {
        let labels = label.map_or(json!({}), |l| json!({ INJECT_LABEL: l }));
        let p = pod(labels, None, app());
        sidecar(&apply(&p, &run(&inj, Operation::Create, ns, &p))).is_some()
    };
    assert!(injected("on", None));
    assert!(
        injected("on", Some("yes")),
        "any other pod value defers to the namespace"
    );
    assert!(!injected("on", Some("false")));
    assert!(injected("plain", Some("true")));
    assert!(injected("off", Some("true")));
    assert!(!injected("off", None));
    assert!(!injected("plain", None));
    // A namespace the index does not know is, as a failed lookup upstream, not enabled.
    assert!(!injected("gone", None));
    assert!(injected("gone", Some("true")));
}

#[test]
fn the_pods_namespace_configuration_comes_before_kube_systems() {
    let inj = injector(
        &[
            ("team", Some(NAMESPACE_ENABLED)),
            ("other", Some(NAMESPACE_ENABLED)),
        ],
        vec![
            ("team", config("team:1")),
            (FALLBACK_NAMESPACE, config("fallback:1")),
        ],
    );
    let p = pod(json!({}), None, app());
    let image = |ns: &str| {
        let out = apply(&p, &run(&inj, Operation::Create, ns, &p));
        sidecar(&out).unwrap()["image"].clone()
    };
    assert_eq!(image("team"), "team:1");
    assert_eq!(image("other"), "fallback:1");
    // Without a configuration in either, the pod is admitted unchanged.
    let none = injector(&[("team", Some(NAMESPACE_ENABLED))], vec![]);
    assert_eq!(
        run(&none, Operation::Create, "team", &p),
        Decision::Patch(Vec::new())
    );
}

#[test]
fn updates_are_left_alone_and_bad_pods_are_errors() {
    let inj = injector(
        &[("ns", Some(NAMESPACE_ENABLED))],
        vec![("ns", config(IMAGE))],
    );
    let p = pod(json!({}), None, app());
    assert_eq!(
        run(&inj, Operation::Update, "ns", &p),
        Decision::Patch(Vec::new())
    );
    for bad in [
        json!({"metadata": {"labels": {"a": 1}}, "spec": {"containers": []}}),
        json!({"metadata": {"annotations": ["x"]}, "spec": {"containers": []}}),
        json!({"metadata": {}, "spec": {"containers": {}}}),
        json!({"metadata": {}, "spec": "x"}),
    ] {
        match run(&inj, Operation::Create, "ns", &bad) {
            Decision::Errored { category, .. } => assert_eq!(category, "decodePod", "{bad}"),
            other => panic!("{bad}: {other:?}"),
        }
    }
}

#[test]
fn a_refusal_carries_upstreams_message() {
    let inj = injector(
        &[("ns", Some(NAMESPACE_ENABLED))],
        vec![("ns", config(IMAGE))],
    );
    let p = pod(json!({}), Some(json!({ a::RUST_LOG: "trace" })), app());
    let decision = run(&inj, Operation::Create, "ns", &p);
    assert_eq!(
        denial(&decision),
        (
            CATEGORY,
            "invalid rust log level: trace (must be debug, info, or error)"
        )
    );
    // A pod that refuses the agent is not checked at all.
    let mut refused = p.clone();
    refused["metadata"]["labels"] = json!({ INJECT_LABEL: "false" });
    assert_eq!(
        run(&inj, Operation::Create, "ns", &refused),
        Decision::Patch(Vec::new())
    );
}

#[test]
fn before_the_first_lists_pods_wait_then_are_refused() {
    let mut inj = TargetControlInjector::new(TargetControlIndex::default());
    inj.sync_wait = Duration::from_millis(50);
    let p = pod(json!({ INJECT_LABEL: "true" }), None, app());
    let (category, message) = match run(&inj, Operation::Create, "ns", &p) {
        Decision::Deny { category, message } => (category, message),
        other => panic!("{other:?}"),
    };
    assert_eq!(category, CATEGORY);
    assert!(message.contains("have not synced yet"), "{message}");
    // Namespaces listed but no configurations yet: still not synced.
    inj.index.reset_namespaces(HashMap::new());
    assert!(!inj.index.synced());
    inj.index.reset_configs(HashMap::new());
    assert!(inj.index.synced());
    assert_eq!(
        run(&inj, Operation::Create, "ns", &p),
        Decision::Patch(Vec::new())
    );
}

/// The paths of a patch, for checking its shape.
fn paths(d: &Decision) -> Vec<(String, String)> {
    let Decision::Patch(ops) = d else {
        panic!("expected a patch, got {d:?}")
    };
    ops.iter()
        .map(|op| {
            let v = serde_json::to_value(op).unwrap();
            (
                v["op"].as_str().unwrap().to_string(),
                v["path"].as_str().unwrap().to_string(),
            )
        })
        .collect()
}

#[test]
fn the_patch_adds_the_container_and_the_mark_wherever_they_go() {
    let inj = injector(
        &[("ns", Some(NAMESPACE_ENABLED))],
        vec![("ns", config(IMAGE))],
    );
    let add = |p: &str| ("add".to_string(), p.to_string());
    // A pod with annotations gets one more, its containers one more.
    let p = pod(json!({}), Some(json!({"keep": "me"})), app());
    assert_eq!(
        paths(&run(&inj, Operation::Create, "ns", &p)),
        vec![
            add("/spec/containers/-"),
            add("/metadata/annotations/elbv2.k8s.aws~1alb-target-control-agent-injected")
        ]
    );
    // No annotation map, no container list: both are added whole.
    let bare = json!({"metadata": {"name": "x"}, "spec": {"nodeName": "n"}});
    let d = run(&inj, Operation::Create, "ns", &bare);
    assert_eq!(
        paths(&d),
        vec![add("/spec/containers"), add("/metadata/annotations")]
    );
    let out = apply(&bare, &d);
    assert_eq!(out["spec"]["nodeName"], "n");
    assert_eq!(
        out["metadata"]["annotations"],
        json!({ INJECTED_ANNOTATION: "true" })
    );
    // Neither metadata nor spec.
    let d = run(&inj, Operation::Create, "ns", &json!({}));
    assert_eq!(paths(&d), vec![add("/spec"), add("/metadata")]);
    // Already marked "true" (a sidecar removed by hand, say): the mark is not written again.
    let marked = pod(
        json!({}),
        Some(json!({ INJECTED_ANNOTATION: "true" })),
        app(),
    );
    assert_eq!(
        paths(&run(&inj, Operation::Create, "ns", &marked)),
        vec![add("/spec/containers/-")]
    );
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]
    /// Random pods with unknown fields everywhere: every operation is an `add`, and the patched
    /// pod minus the appended agent and the mark equals the pod as sent, every list in its
    /// order; the agent is the last container.
    #[test]
    fn the_patch_only_adds(
        extra_top in arb_json(3), extra_meta in arb_json(2), extra_spec in arb_json(3),
        extra_container in arb_json(2), names in prop::collection::vec("[a-c]{1,3}", 0..4),
        annotations in prop::option::of(prop::collection::btree_map("[a-z]{1,5}", "[a-z0-9]{0,5}", 0..4)),
        has_containers in any::<bool>(),
    ) {
        let mut pod = json!({
            "xTop": extra_top,
            "metadata": {"name": "p", "labels": {"app": "x"}, "xMeta": extra_meta},
            "spec": {"xSpec": extra_spec}
        });
        if has_containers {
            let list: Vec<Value> = names.iter().map(|n| json!({"name": n, "futureField": extra_container.clone()})).collect();
            pod["spec"]["containers"] = Value::Array(list);
        }
        if let Some(a) = &annotations {
            pod["metadata"]["annotations"] = json!(a);
        }
        let inj = injector(&[("ns", Some(NAMESPACE_ENABLED))], vec![("ns", config(IMAGE))]);
        let decision = run(&inj, Operation::Create, "ns", &pod);
        for (op, _) in paths(&decision) {
            prop_assert_eq!(op, "add");
        }
        let mut out = apply(&pod, &decision);
        let list = out["spec"]["containers"].as_array_mut().unwrap();
        let last = list.pop().unwrap();
        prop_assert_eq!(&last["name"], CONTAINER_NAME);
        if !has_containers {
            out["spec"].as_object_mut().unwrap().remove("containers");
        }
        let marks = out["metadata"]["annotations"].as_object_mut().unwrap();
        prop_assert_eq!(marks.remove(INJECTED_ANNOTATION), Some(json!("true")));
        if annotations.is_none() {
            out["metadata"].as_object_mut().unwrap().remove("annotations");
        }
        prop_assert_eq!(&out, &pod);
    }
}
