//! Tests for QUIC server-id injection: upstream's cases, the id layout, and a property test that
//! random pods keep every field they came with.

use super::*;
use crate::webhook::test_support::{apply, arb_json, req_in};
use proptest::prelude::*;
use std::collections::HashSet;
use std::sync::atomic::{AtomicI64, Ordering};
use std::sync::Arc;

fn run(inj: &QuicServerIdInjector, op: Operation, pod: &Value) -> Decision {
    tokio::runtime::Builder::new_current_thread()
        .build()
        .unwrap()
        .block_on(inj.admit(&req_in(op, "ns", pod.clone())))
}

fn pod(annotation: Option<&str>) -> Value {
    let mut p = json!({
        "metadata": {"name": "p"},
        "spec": {
            "initContainers": [{"name": "init"}, {"name": "other-init"}],
            "containers": [
                {"name": "app", "env": [{"name": "A", "value": "1"}]},
                {"name": "sidecar"},
                {"name": "unlisted"}
            ]
        }
    });
    if let Some(a) = annotation {
        p["metadata"]["annotations"] = json!({ ANNOTATION: a, "keep": "me" });
    }
    p
}

/// The value of `name` in the env of `/spec/<list>/<i>`, if any.
fn env(pod: &Value, list: &str, i: usize, name: &str) -> Option<String> {
    pod["spec"][list][i]["env"]
        .as_array()?
        .iter()
        .find(|e| e["name"] == name)
        .map(|e| e["value"].as_str().unwrap().to_string())
}

fn decode(id: &str) -> u64 {
    let bytes = base64::engine::general_purpose::STANDARD
        .decode(id)
        .expect("standard base64");
    u64::from_be_bytes(bytes.try_into().expect("8 bytes"))
}

#[test]
fn listed_containers_and_init_containers_get_distinct_ids() {
    let inj = QuicServerIdInjector::new(DEFAULT_ENV_NAME);
    let p = pod(Some("app,sidecar,init,missing"));
    let out = apply(&p, &run(&inj, Operation::Create, &p));
    let ids: Vec<String> = [("containers", 0), ("containers", 1), ("initContainers", 0)]
        .iter()
        .map(|(l, i)| env(&out, l, *i, DEFAULT_ENV_NAME).expect("id injected"))
        .collect();
    for id in &ids {
        assert_eq!(id.len(), 12, "{id}");
        assert_eq!(
            (decode(id) >> 7) & u64::from(MAX_WORKER_ID),
            u64::from(inj.ids.worker_id())
        );
    }
    assert_eq!(ids.iter().collect::<HashSet<_>>().len(), 3, "{ids:?}");
    // Existing variables stay first and untouched; unlisted containers are left alone.
    assert_eq!(
        out["spec"]["containers"][0]["env"][0],
        json!({"name": "A", "value": "1"})
    );
    assert_eq!(out["spec"]["containers"][2], p["spec"]["containers"][2]);
    assert_eq!(
        out["spec"]["initContainers"][1],
        p["spec"]["initContainers"][1]
    );
    assert_eq!(out["metadata"], p["metadata"]);
}

#[test]
fn patch_appends_to_existing_env_or_adds_the_list() {
    let inj = QuicServerIdInjector::new("MY_ID");
    let ops = inj.patch(&pod(Some("app,sidecar"))).unwrap();
    let v = serde_json::to_value(&ops).unwrap();
    assert_eq!(v.as_array().unwrap().len(), 2);
    assert_eq!(v[0]["op"], "add");
    assert_eq!(v[0]["path"], "/spec/containers/0/env/-");
    assert_eq!(v[0]["value"]["name"], "MY_ID");
    assert_eq!(v[1]["path"], "/spec/containers/1/env");
    assert_eq!(v[1]["value"][0]["name"], "MY_ID");
}

#[test]
fn an_existing_variable_is_never_overwritten() {
    let inj = QuicServerIdInjector::new(DEFAULT_ENV_NAME);
    let mut p = pod(Some("app,sidecar"));
    p["spec"]["containers"][0]["env"] = json!([{"name": DEFAULT_ENV_NAME, "value": "mine"}]);
    let out = apply(&p, &run(&inj, Operation::Create, &p));
    assert_eq!(out["spec"]["containers"][0], p["spec"]["containers"][0]);
    assert!(env(&out, "containers", 1, DEFAULT_ENV_NAME).is_some());
}

#[test]
fn no_annotation_unknown_names_update_and_untrimmed_names_are_no_ops() {
    let inj = QuicServerIdInjector::new(DEFAULT_ENV_NAME);
    for p in [
        pod(None),
        pod(Some("nope")),
        pod(Some("")),
        pod(Some("app ,sidecar ")),
    ] {
        assert_eq!(
            run(&inj, Operation::Create, &p),
            Decision::Patch(vec![]),
            "{p}"
        );
    }
    // Names are not trimmed (as upstream): " sidecar" does not name "sidecar", "app" still counts.
    let ops = inj.patch(&pod(Some("app, sidecar"))).unwrap();
    assert_eq!(ops.len(), 1);
    assert_eq!(
        run(&inj, Operation::Update, &pod(Some("app"))),
        Decision::Patch(vec![])
    );
}

#[test]
fn malformed_pods_error_instead_of_panicking() {
    let inj = QuicServerIdInjector::new(DEFAULT_ENV_NAME);
    let mut bad_env = pod(Some("app"));
    bad_env["spec"]["containers"][0]["env"] = json!("x");
    let mut bad_list = pod(Some("app"));
    bad_list["spec"]["containers"] = json!({"app": {}});
    let mut bad_annotation = pod(None);
    bad_annotation["metadata"]["annotations"] = json!({ ANNOTATION: 3 });
    for p in [bad_env, bad_list, bad_annotation, json!("pod")] {
        assert!(
            matches!(run(&inj, Operation::Create, &p), Decision::Errored { .. }),
            "{p}"
        );
    }
    // A pod without spec or with null lists simply has nothing to inject into.
    let mut nulls = pod(Some("app"));
    nulls["spec"] = json!({"containers": null});
    assert_eq!(
        run(&inj, Operation::Create, &nulls),
        Decision::Patch(vec![])
    );
}

fn fixed_clock(ms: Arc<AtomicI64>) -> Clock {
    Box::new(move || ms.load(Ordering::SeqCst))
}

#[test]
fn id_layout_is_time_worker_sequence() {
    let now = Arc::new(AtomicI64::new(EPOCH_MS + 500));
    let g = ServerIdGenerator::with_clock(100, fixed_clock(now.clone()));
    let a = g.next_raw();
    assert_eq!(a >> 24, 500);
    assert_eq!((a >> 7) & 0x1_ffff, 100);
    assert!(a & 0x7f < 127, "random start is below the maximum sequence");
    // Same millisecond: the sequence counts up.
    let b = g.next_raw();
    assert_eq!(b >> 24, 500);
    assert_eq!(b & 0x7f, ((a & 0x7f) + 1) & 0x7f);
    // Worker ids are masked to 17 bits.
    assert_eq!(
        ServerIdGenerator::with_clock(u32::MAX, fixed_clock(now)).worker_id(),
        MAX_WORKER_ID
    );
    assert_eq!(g.next_id().len(), 12);
}

#[test]
fn ids_stay_unique_when_the_clock_stalls_or_steps_back() {
    let now = Arc::new(AtomicI64::new(EPOCH_MS + 10_000));
    let g = ServerIdGenerator::with_clock(7, fixed_clock(now.clone()));
    let mut seen = HashSet::new();
    // A frozen clock exhausts many sequences: each overflow borrows the next millisecond.
    for _ in 0..5_000 {
        assert!(seen.insert(g.next_raw()), "duplicate id");
    }
    now.store(EPOCH_MS + 1, Ordering::SeqCst);
    let mut last = 0;
    for _ in 0..1_000 {
        let id = g.next_raw();
        assert!(seen.insert(id), "duplicate id after the clock stepped back");
        assert!(id > last, "ids keep increasing");
        last = id;
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]
    /// Random pods with unknown fields everywhere: the patched pod equals the input once our
    /// variable is taken out again, and every listed container without it got exactly one.
    #[test]
    fn patched_pod_is_input_plus_ids(
        extra_top in arb_json(3), extra_spec in arb_json(3), extra_container in arb_json(2),
        names in prop::collection::vec("[a-c]", 1..5), listed in prop::collection::vec("[a-d]", 0..4),
        with_env in prop::collection::vec(any::<bool>(), 5), has_var in prop::collection::vec(any::<bool>(), 5),
    ) {
        let containers: Vec<Value> = names.iter().enumerate().map(|(i, n)| {
            let mut c = json!({"name": n, "futureField": extra_container.clone()});
            if with_env[i] {
                let mut env = vec![json!({"name": "X", "valueFrom": {"fieldRef": {"fieldPath": "x"}}})];
                if has_var[i] { env.push(json!({"name": DEFAULT_ENV_NAME, "value": "keep"})); }
                c["env"] = Value::Array(env);
            }
            c
        }).collect();
        let pod = json!({"metadata": {"annotations": {ANNOTATION: listed.join(",")}},
            "spec": {"containers": containers.clone(), "initContainers": containers, "xSpec": extra_spec}, "xTop": extra_top});
        let inj = QuicServerIdInjector::new(DEFAULT_ENV_NAME);
        let out = apply(&pod, &run(&inj, Operation::Create, &pod));
        let mut stripped = out.clone();
        for list in ["containers", "initContainers"] {
            for (i, c) in stripped["spec"][list].as_array_mut().unwrap().iter_mut().enumerate() {
                let had = with_env[i] && has_var[i];
                let expect_new = listed.contains(&names[i]) && !had;
                let count = c["env"].as_array().map_or(0, |e| e.iter().filter(|v| v["name"] == DEFAULT_ENV_NAME).count());
                prop_assert_eq!(count, usize::from(had || expect_new));
                if expect_new {
                    let env = c["env"].as_array_mut().unwrap();
                    let last = env.pop().unwrap();
                    prop_assert_eq!(&last["name"], DEFAULT_ENV_NAME);
                    if env.is_empty() && !with_env[i] { c.as_object_mut().unwrap().remove("env"); }
                }
            }
        }
        prop_assert_eq!(&stripped, &pod);
    }
}
