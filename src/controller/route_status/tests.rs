//! Route status from a real Gateway build: upstream's conditions per verdict, the merge with
//! other controllers' entries, observedGeneration never moving backwards, and a second merge of
//! the same build changing nothing.

use gateway_api::apis::standard::gateways::Gateway;
use gateway_api::apis::standard::httproutes::HttpRoute;
use k8s_openapi::api::core::v1::Service;
use serde_json::{json, Value};

use super::*;
use crate::model::gateway::build_alb_gateway_stack;
use crate::model::ModelConfig;

fn yaml<T: serde::de::DeserializeOwned>(s: &str) -> T {
    serde_yaml::from_str(s).unwrap()
}

const GATEWAY: &str = r#"
metadata: {name: gw, namespace: infra, uid: u-1}
spec:
  gatewayClassName: alb
  listeners:
  - {name: http, port: 80, protocol: HTTP, allowedRoutes: {namespaces: {from: Same}}}
"#;

fn route(ns: &str, name: &str, backend: &str) -> HttpRoute {
    yaml(&format!(
        r#"
metadata: {{name: {name}, namespace: {ns}, generation: 4}}
spec:
  parentRefs:
  - {{name: gw, namespace: infra}}
  - {{name: elsewhere, namespace: infra}}
  rules:
  - backendRefs: [{{name: {backend}, port: 80}}]
"#
    ))
}

fn service() -> Service {
    yaml("metadata: {name: web, namespace: infra}\nspec: {ports: [{port: 80, targetPort: 8080, nodePort: 30080}]}")
}

fn cfg() -> ModelConfig {
    ModelConfig {
        cluster_name: "c".into(),
        ..ModelConfig::default()
    }
}

/// Verdicts of (ok route, route from another namespace, route with a missing Service).
fn three_verdicts() -> Vec<Vec<(usize, Verdict)>> {
    let gw: Gateway = yaml(GATEWAY);
    let routes = vec![
        route("infra", "ok", "web"),
        route("apps", "foreign", "web"),
        route("infra", "broken", "missing"),
    ];
    let services = vec![service()];
    let inputs = GatewayInputs {
        http_routes: &routes,
        services: &services,
        ..GatewayInputs::new(&gw)
    };
    let build = build_alb_gateway_stack(&inputs, &cfg(), None).unwrap();
    verdicts(&build, &gateway_routes(&inputs, LbKind::Alb))
}

#[test]
fn verdicts_follow_upstreams_order_and_only_name_this_gateway() {
    let v = three_verdicts();
    assert_eq!(v.len(), 3);
    // Only parentRef 0 names the Gateway; parentRef 1 ("elsewhere") gets nothing from this build.
    let ok = Verdict {
        accepted: true,
        resolved_refs: true,
        reason: "Accepted".into(),
        message: String::new(),
    };
    assert_eq!(v[0], vec![(0, ok)]);
    assert_eq!(v[1].len(), 1);
    assert_eq!(
        v[1][0].1,
        Verdict {
            accepted: false,
            resolved_refs: true,
            reason: "NotAllowedByListeners".into(),
            message: "Listener does not allow route attachment, namespace does not match between listener and route".into(),
        }
    );
    assert_eq!(
        v[2][0].1,
        Verdict {
            accepted: true,
            resolved_refs: false,
            reason: "BackendNotFound".into(),
            message: "Service (infra:missing) not found)".into(),
        }
    );
}

#[test]
fn conditions_are_upstreams_for_each_kind_of_verdict() {
    let v = three_verdicts();
    let ok = conditions(&v[0][0].1);
    assert_eq!(
        ok,
        vec![
            json!({"type": "ResolvedRefs", "status": "True", "reason": "ResolvedRefs", "message": ""}),
            json!({"type": "Accepted", "status": "True", "reason": "Accepted", "message": ""}),
        ]
    );
    let refused = conditions(&v[1][0].1);
    assert_eq!(refused[0]["status"], "True");
    assert_eq!(refused[1]["status"], "False");
    assert_eq!(refused[1]["reason"], "NotAllowedByListeners");
    let dropped = conditions(&v[2][0].1);
    assert_eq!(dropped[0]["status"], "False");
    assert_eq!(dropped[0]["reason"], "BackendNotFound");
    assert_eq!(dropped[1]["reason"], "Accepted");
    // A reason upstream does not classify fails both conditions.
    let unknown = conditions(&Verdict::failure("Whatever", "m"));
    assert_eq!(
        (unknown[0]["status"].as_str(), unknown[1]["status"].as_str()),
        (Some("False"), Some("False"))
    );
    let gone = parent_gone("gw");
    assert_eq!(gone[0]["reason"], "ParentRefDoesNotExist");
    assert_eq!(
        gone[0]["message"],
        "gateways.gateway.networking.k8s.io \"gw\" not found"
    );
    assert_eq!(gone[1]["status"], "True");
}

const ALB: &str = "gateway.k8s.aws/alb";

fn ours(parent: Value, generation: i64, accepted: &str) -> Value {
    json!({
        "parentRef": parent,
        "controllerName": ALB,
        "conditions": [
            {"type": "ResolvedRefs", "status": "True", "reason": "ResolvedRefs", "message": "", "observedGeneration": generation, "lastTransitionTime": "2020-01-01T00:00:00Z"},
            {"type": "Accepted", "status": accepted, "reason": "Accepted", "message": "", "observedGeneration": generation, "lastTransitionTime": "2020-01-01T00:00:00Z"},
        ],
    })
}

fn ok_update(parent: Value) -> Update {
    Update {
        parent_ref: parent,
        conditions: conditions(&Verdict::failure("x", "y"))
            .into_iter()
            .map(|mut c| {
                c["status"] = json!("True");
                c["reason"] = c["type"].clone();
                c["message"] = json!("");
                c
            })
            .collect(),
    }
}

#[test]
fn merge_keeps_other_controllers_drops_our_stale_entries_and_appends_in_spec_order() {
    let gw = json!({"name": "gw", "namespace": "infra"});
    let other = json!({"name": "other-gw"});
    let gone = json!({"name": "old-gw"});
    let spec = vec![gw.clone(), other.clone()];
    let foreign = json!({"parentRef": other, "controllerName": "example.com/gw", "conditions": []});
    let foreign_gone =
        json!({"parentRef": gone, "controllerName": "example.com/gw", "conditions": []});
    let current = vec![
        foreign.clone(),
        ours(gone.clone(), 3, "True"),
        foreign_gone.clone(),
    ];
    let route = Route {
        namespace: "apps",
        generation: 4,
        spec_refs: &spec,
        current: &current,
    };
    let merged = merge(
        &route,
        ALB,
        &[ok_update(gw.clone())],
        true,
        "2026-01-01T00:00:00Z",
    );
    assert_eq!(merged.len(), 3, "{merged:#?}");
    assert_eq!(
        merged[0], foreign,
        "another controller's entry stays, in place"
    );
    assert_eq!(
        merged[1], foreign_gone,
        "and is not ours to drop even if its parentRef left the spec"
    );
    assert_eq!(
        merged[2]["parentRef"], gw,
        "the spec's parentRef as written"
    );
    assert_eq!(merged[2]["controllerName"], ALB);
    assert_eq!(merged[2]["conditions"][1]["observedGeneration"], 4);
    assert_eq!(
        merged[2]["conditions"][1]["lastTransitionTime"],
        "2026-01-01T00:00:00Z"
    );
    // The same build again: nothing changes, times included.
    let route = Route {
        current: &merged,
        ..route
    };
    let again = merge(
        &route,
        ALB,
        &[ok_update(gw.clone())],
        true,
        "2027-01-01T00:00:00Z",
    );
    assert_eq!(again, merged, "a second publish writes nothing");
}

#[test]
fn observed_generation_never_moves_backwards_and_transitions_keep_their_time() {
    let gw = json!({"name": "gw"});
    let spec = vec![gw.clone()];
    let newer = vec![ours(gw.clone(), 9, "False")];
    let route = Route {
        namespace: "apps",
        generation: 4,
        spec_refs: &spec,
        current: &newer,
    };
    let merged = merge(
        &route,
        ALB,
        &[ok_update(gw.clone())],
        true,
        "2026-01-01T00:00:00Z",
    );
    assert_eq!(
        merged, newer,
        "an entry for generation 9 is not overwritten by a build of generation 4"
    );
    // Same generation: ResolvedRefs held (its time stays), Accepted flipped (new time).
    let older = vec![ours(gw.clone(), 4, "False")];
    let route = Route {
        current: &older,
        ..route
    };
    let merged = merge(
        &route,
        ALB,
        &[ok_update(gw.clone())],
        true,
        "2026-01-01T00:00:00Z",
    );
    assert_eq!(
        merged[0]["conditions"][0]["lastTransitionTime"],
        "2020-01-01T00:00:00Z"
    );
    assert_eq!(
        merged[0]["conditions"][1]["lastTransitionTime"],
        "2026-01-01T00:00:00Z"
    );
    assert_eq!(merged[0]["conditions"][1]["status"], "True");
}

#[test]
fn forget_mode_rewrites_only_existing_entries_and_parent_keys_default_the_namespace() {
    let gw = json!({"name": "gw"});
    let spec = vec![gw.clone()];
    let route = Route {
        namespace: "apps",
        generation: 2,
        spec_refs: &spec,
        current: &[],
    };
    let update = Update {
        parent_ref: gw.clone(),
        conditions: parent_gone("gw"),
    };
    assert!(merge(&route, ALB, std::slice::from_ref(&update), false, "t").is_empty());
    let current = vec![ours(json!({"name": "gw", "namespace": "apps"}), 2, "True")];
    let route = Route {
        current: &current,
        ..route
    };
    let merged = merge(&route, ALB, &[update], false, "t");
    assert_eq!(
        merged[0]["conditions"][0]["reason"],
        "ParentRefDoesNotExist"
    );
    assert_eq!(merged[0]["parentRef"], gw, "re-echoed from the spec");
    assert_eq!(
        parent_key(
            &json!({"name": "gw", "port": 80, "sectionName": "http"}),
            "apps"
        ),
        "//apps/gw/http/80"
    );
}
