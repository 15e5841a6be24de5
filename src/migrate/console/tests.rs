//! Replays `pkg/ingress2gateway/console/server_test.go` against the router, with a fixed set of
//! objects standing in for upstream's fake client: `TestHandleNamespaces` (2 cases),
//! `TestHandleGateways` (5), `TestHandleDiff` (4) and `TestHandleIndex` (1): all 12 cases. Then
//! this build's: `/api/verify` and the page mark the request two plans route differently, and a
//! file source answers the same endpoints.

use std::collections::BTreeMap;
use std::sync::Arc;

use axum::body::Body;
use axum::http::{header, Request, StatusCode};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use serde_json::{json, Value};
use tower::ServiceExt;

use albc_model::migrate::console::differ::DiffResult;
use albc_model::migrate::console::discovery::PlanObjects;

use super::server::{router, Console};
use super::source::Source;

const GATEWAY_PLAN: &str = "gateway.k8s.aws/dry-run-plan";
const INGRESS_PLAN: &str = "alb.ingress.kubernetes.io/dry-run-plan";
const PLAN_WITH_MIGRATED_FROM: &str = r#"{"id":"ns/my-gw","resources":{"AWS::ElasticLoadBalancingV2::LoadBalancer":{"LoadBalancer":{"spec":{"name":"test","tags":{"gateway.k8s.aws/migrated-from":"ingress/ns/my-ing"}}}}}}"#;
const SIMPLE_INGRESS_PLAN: &str = r#"{"id":"ns/my-ing","resources":{"AWS::ElasticLoadBalancingV2::LoadBalancer":{"LoadBalancer":{"spec":{"name":"old"}}}}}"#;

fn meta(ns: &str, name: &str, annotations: &[(&str, &str)]) -> ObjectMeta {
    ObjectMeta {
        name: Some(name.into()),
        namespace: Some(ns.into()),
        annotations: (!annotations.is_empty()).then(|| {
            annotations
                .iter()
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect::<BTreeMap<_, _>>()
        }),
        ..Default::default()
    }
}

fn objects(gateways: Vec<ObjectMeta>, ingresses: Vec<ObjectMeta>) -> Source {
    Source::Objects {
        objects: PlanObjects {
            gateways,
            ingresses,
        },
        services: Vec::new(),
    }
}

/// Status, content type and body of `GET uri`.
async fn get(source: Source, uri: &str) -> (StatusCode, String, String) {
    let response = router(Arc::new(Console { source }))
        .oneshot(Request::builder().uri(uri).body(Body::empty()).unwrap())
        .await
        .unwrap();
    let status = response.status();
    let content_type = response
        .headers()
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .unwrap_or_default()
        .to_string();
    let body = axum::body::to_bytes(response.into_body(), usize::MAX)
        .await
        .unwrap();
    (
        status,
        content_type,
        String::from_utf8(body.to_vec()).unwrap(),
    )
}

#[tokio::test]
async fn handle_namespaces() {
    let (status, _, body) = get(objects(vec![], vec![]), "/api/namespaces").await;
    assert_eq!(status, StatusCode::OK, "empty cluster");
    assert_eq!(
        serde_json::from_str::<Value>(&body).unwrap(),
        json!([]),
        "empty cluster"
    );

    let plan = [(GATEWAY_PLAN, PLAN_WITH_MIGRATED_FROM)];
    let source = objects(
        vec![
            meta("alpha", "gw-a", &plan),
            meta("alpha", "gw-a2", &plan),
            meta("beta", "gw-b", &plan),
            // Without a plan: left out.
            meta("gamma", "no-plan", &[]),
        ],
        vec![],
    );
    let (status, _, body) = get(source, "/api/namespaces").await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(
        serde_json::from_str::<Value>(&body).unwrap(),
        json!([{"namespace": "alpha", "gatewayCount": 2}, {"namespace": "beta", "gatewayCount": 1}]),
        "gateways in two namespaces"
    );
}

#[tokio::test]
async fn handle_gateways() {
    let gw = |ns: &str, name: &str, plan: &str| meta(ns, name, &[(GATEWAY_PLAN, plan)]);
    let cases: Vec<(&str, &str, Source, StatusCode, usize, &str, &str)> = vec![
        (
            "missing namespace param",
            "",
            objects(vec![], vec![]),
            StatusCode::BAD_REQUEST,
            0,
            "",
            "",
        ),
        (
            "namespace with no gateways",
            "ns",
            objects(vec![], vec![]),
            StatusCode::OK,
            0,
            "",
            "",
        ),
        (
            "gateway with plan and matching ingress",
            "ns",
            objects(
                vec![gw("ns", "my-gw", PLAN_WITH_MIGRATED_FROM)],
                vec![meta("ns", "my-ing", &[(INGRESS_PLAN, SIMPLE_INGRESS_PLAN)])],
            ),
            StatusCode::OK,
            1,
            "my-gw",
            "",
        ),
        (
            "gateway without ingress plan holder",
            "ns",
            objects(
                vec![gw(
                    "ns",
                    "orphan-gw",
                    r#"{"id":"ns/orphan-gw","resources":{}}"#,
                )],
                vec![],
            ),
            StatusCode::OK,
            1,
            "orphan-gw",
            "could not determine ingress plan holder",
        ),
        (
            "gateway in another namespace is excluded",
            "ns",
            objects(
                vec![gw("other-ns", "other", PLAN_WITH_MIGRATED_FROM)],
                vec![],
            ),
            StatusCode::OK,
            0,
            "",
            "",
        ),
    ];
    for (name, ns, source, want_status, want_count, first_name, first_error) in cases {
        let uri = if ns.is_empty() {
            "/api/gateways".to_string()
        } else {
            format!("/api/gateways?namespace={ns}")
        };
        let (status, _, body) = get(source, &uri).await;
        assert_eq!(status, want_status, "{name}: {body}");
        if status != StatusCode::OK {
            assert_eq!(
                serde_json::from_str::<Value>(&body).unwrap(),
                json!({"error": "missing ?namespace= parameter"}),
                "{name}"
            );
            continue;
        }
        let items: Vec<Value> = serde_json::from_str(&body).unwrap();
        assert_eq!(items.len(), want_count, "{name}: {body}");
        if want_count > 0 {
            assert_eq!(items[0]["name"], first_name, "{name}");
            if !first_error.is_empty() {
                assert!(
                    items[0]["error"].as_str().unwrap().contains(first_error),
                    "{name}: {body}"
                );
            }
        }
    }
}

#[tokio::test]
async fn handle_diff() {
    let ingress_plan = r#"{"id":"ns/my-ing","resources":{"AWS::ElasticLoadBalancingV2::LoadBalancer":{"LoadBalancer":{"spec":{"name":"old","scheme":"internet-facing"}}}}}"#;
    let gateway_plan = r#"{"id":"ns/my-gw","resources":{"AWS::ElasticLoadBalancingV2::LoadBalancer":{"LoadBalancer":{"spec":{"name":"new","scheme":"internet-facing","tags":{"gateway.k8s.aws/migrated-from":"ingress/ns/my-ing"}}}}}}"#;
    let pair = || {
        objects(
            vec![meta("ns", "my-gw", &[(GATEWAY_PLAN, gateway_plan)])],
            vec![meta("ns", "my-ing", &[(INGRESS_PLAN, ingress_plan)])],
        )
    };
    let cases = [
        (
            "missing namespace param",
            "gateway=my-gw",
            StatusCode::BAD_REQUEST,
        ),
        (
            "missing gateway param",
            "namespace=ns",
            StatusCode::BAD_REQUEST,
        ),
        (
            "gateway not found",
            "namespace=ns&gateway=nonexistent",
            StatusCode::NOT_FOUND,
        ),
        (
            "successful diff",
            "namespace=ns&gateway=my-gw",
            StatusCode::OK,
        ),
    ];
    for (name, query, want) in cases {
        let (status, _, body) = get(pair(), &format!("/api/diff?{query}")).await;
        assert_eq!(status, want, "{name}: {body}");
        if status == StatusCode::OK {
            let result: DiffResult = serde_json::from_str(&body).unwrap();
            assert_eq!(result.summary.same, 1, "{name}: scheme");
            assert_eq!(result.summary.changed, 1, "{name}: name");
        }
    }
    // Upstream's texts.
    let (_, _, body) = get(pair(), "/api/diff?namespace=ns&gateway=nonexistent").await;
    assert_eq!(
        serde_json::from_str::<Value>(&body).unwrap()["error"],
        "failed to get Gateway ns/nonexistent: gateways.gateway.networking.k8s.io \"nonexistent\" not found"
    );
    let (_, _, body) = get(pair(), "/api/diff?gateway=my-gw").await;
    assert_eq!(
        serde_json::from_str::<Value>(&body).unwrap()["error"],
        "missing ?namespace= parameter"
    );
    let (_, _, body) = get(pair(), "/api/diff?namespace=ns").await;
    assert_eq!(
        serde_json::from_str::<Value>(&body).unwrap()["error"],
        "missing ?gateway= parameter"
    );
}

#[tokio::test]
async fn handle_index() {
    let (status, content_type, body) = get(objects(vec![], vec![]), "/").await;
    assert_eq!(status, StatusCode::OK);
    assert!(content_type.contains("text/html"), "{content_type}");
    assert!(body.contains("Migration Console"));
    // The stylesheet and script are served, compiled in.
    let (status, content_type, css) = get(objects(vec![], vec![]), "/static/style.css").await;
    assert_eq!(status, StatusCode::OK);
    assert!(content_type.starts_with("text/css"), "{content_type}");
    assert!(css.contains("tr.request.differs"));
    let (_, content_type, js) = get(objects(vec![], vec![]), "/static/app.js").await;
    assert!(
        content_type.starts_with("text/javascript"),
        "{content_type}"
    );
    assert!(js.contains("hide-known"));
}

/// A plan with one listener (80, 404 by default), one rule forwarding `paths` to Service `api`
/// port 80, and (for a Gateway) the migrated-from tag.
fn routing_plan(id: &str, paths: &[&str], migrated_from: Option<&str>) -> String {
    let tg = format!("{id}-api:80");
    let mut lb = json!({"spec": {"name": "k8s-ns-x-0123456789", "scheme": "internet-facing"}});
    if let Some(tag) = migrated_from {
        lb["spec"]["tags"] = json!({"gateway.k8s.aws/migrated-from": tag});
    }
    json!({"id": id, "resources": {
        "AWS::ElasticLoadBalancingV2::LoadBalancer": {"LoadBalancer": lb},
        "AWS::ElasticLoadBalancingV2::Listener": {"80": {"spec": {"port": 80, "protocol": "HTTP",
            "defaultActions": [{"type": "fixed-response", "fixedResponseConfig": {"contentType": "text/plain", "statusCode": "404"}}]}}},
        "AWS::ElasticLoadBalancingV2::ListenerRule": {"80:1": {"spec": {
            "listenerARN": {"$ref": "#/resources/AWS::ElasticLoadBalancingV2::Listener/80/status/listenerARN"},
            "priority": 1,
            "conditions": [{"field": "path-pattern", "pathPatternConfig": {"values": paths}}],
            "actions": [{"type": "forward", "forwardConfig": {"targetGroups": [
                {"targetGroupARN": {"$ref": format!("#/resources/AWS::ElasticLoadBalancingV2::TargetGroup/{tg}/status/targetGroupARN")}}]}}]}}},
        "K8S::ElasticLoadBalancingV2::TargetGroupBinding": {tg.clone(): {"spec": {"template": {
            "metadata": {"name": "k8s-ns-api-0123456789", "namespace": "ns"},
            "spec": {"targetGroupARN": {"$ref": format!("#/resources/AWS::ElasticLoadBalancingV2::TargetGroup/{tg}/status/targetGroupARN")},
                     "targetType": "instance", "serviceRef": {"name": "api", "port": 80}}}}}}
    }})
    .to_string()
}

/// The Ingress answers `/api/*` too; the Gateway only `/api`: the page and `/api/verify` mark
/// the requests below `/api` as routed differently.
#[tokio::test]
async fn requests_routed_differently_are_marked() {
    let ingress = routing_plan("ns/my-ing", &["/api", "/api/*"], None);
    let gateway = routing_plan("ns/my-gw", &["/api"], Some("ingress/ns/my-ing"));
    let source = || {
        objects(
            vec![meta("ns", "my-gw", &[(GATEWAY_PLAN, gateway.as_str())])],
            vec![meta("ns", "my-ing", &[(INGRESS_PLAN, ingress.as_str())])],
        )
    };
    let (status, _, body) = get(source(), "/api/verify?namespace=ns&gateway=my-gw").await;
    assert_eq!(status, StatusCode::OK, "{body}");
    let v: Value = serde_json::from_str(&body).unwrap();
    assert_eq!(v["verdict"]["label"], "Ingress ns/my-ing");
    let differences = v["verdict"]["differences"].as_array().unwrap();
    let below = differences
        .iter()
        .find(|d| d["request"]["path"] == "/api/w")
        .unwrap_or_else(|| panic!("{body}"));
    assert_eq!(
        below["ingress"]["answer"],
        "forward to ns/api:80 as unmatched.invalid/api/w"
    );
    assert_eq!(
        below["gateway"]["answer"],
        "fixed-response 404 text/plain \"\""
    );
    let requests = v["requests"].as_array().unwrap();
    assert!(requests.len() > differences.len());

    let (status, _, body) = get(source(), "/api/gateways?namespace=ns").await;
    assert_eq!(status, StatusCode::OK);
    let items: Value = serde_json::from_str(&body).unwrap();
    assert_eq!(items[0]["verify"]["routedDifferently"], differences.len());

    let (status, _, page) = get(source(), "/").await;
    assert_eq!(status, StatusCode::OK);
    assert!(
        page.contains("<tr class=\"request differs\" data-differs=\"true\"><td class=\"marker\" title=\"routed differently\">&ne;</td><td><code>GET unmatched.invalid:80/api/w</code>"),
        "{page}"
    );
    assert!(page.contains("<tr class=\"request alike\""), "{page}");
    assert!(
        page.contains(&format!("{} routed differently", differences.len())),
        "{page}"
    );
    // Upstream's comparison is there too: the rule's conditions changed.
    assert!(page.contains("data-status=\"changed\""), "{page}");
}

/// `?namespace=` narrows the page to that namespace's Gateways; the breadcrumbs say where.
#[tokio::test]
async fn the_page_narrows_to_a_namespace() {
    let plan = [(GATEWAY_PLAN, PLAN_WITH_MIGRATED_FROM)];
    let source = || {
        objects(
            vec![meta("alpha", "gw-a", &plan), meta("beta", "gw-b", &plan)],
            vec![],
        )
    };
    let (_, _, all) = get(source(), "/").await;
    assert!(all.contains("id=\"gw--alpha--gw-a\"") && all.contains("id=\"gw--beta--gw-b\""));
    let (_, _, beta) = get(source(), "/?namespace=beta").await;
    assert!(!beta.contains("id=\"gw--alpha--gw-a\""), "{beta}");
    assert!(beta.contains("id=\"gw--beta--gw-b\""), "{beta}");
    assert!(
        beta.contains("<a href=\"/?namespace=beta\">beta</a>"),
        "{beta}"
    );
    let (status, _, missing) = get(source(), "/?namespace=beta&gateway=nope").await;
    assert_eq!(status, StatusCode::INTERNAL_SERVER_ERROR);
    assert!(missing.contains("class=\"alert error\""), "{missing}");
}
