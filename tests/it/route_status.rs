//! Route status writing (`controller::route_status`) against the API test server with the
//! Gateway API CRDs, from real Gateway builds: an ALB Gateway's HTTPRoutes (accepted, refused,
//! a dropped backend, another controller's entry kept), a second publish writing nothing, a
//! detached route losing our entry, NLB TCPRoute/UDPRoute status written as v1, and `forget`
//! after the Gateway is gone.

use aws_load_balancer_controller::controller::route_status::{forget, publish};
use aws_load_balancer_controller::model::gateway::{
    build_alb_gateway_stack, build_nlb_gateway_stack, GatewayInputs,
};
use aws_load_balancer_controller::model::ModelConfig;
use aws_load_balancer_controller::watch::gateway::{resource_as, L4_ROUTE_VERSION};
use gateway_api::apis::experimental::tcproutes::TcpRoute;
use gateway_api::apis::experimental::udproutes::UdpRoute;
use gateway_api::apis::standard::gateways::Gateway;
use gateway_api::apis::standard::httproutes::HttpRoute;
use k8s_openapi::api::core::v1::Service;
use kube::api::{Api, DynamicObject, ListParams, Patch, PatchParams};
use kube_test_apiserver::{Options, TestApiServer};
use serde::de::DeserializeOwned;
use serde_json::{json, Value};

use crate::support::gateway_crds::{api, create, get, install};

fn cfg() -> ModelConfig {
    ModelConfig {
        cluster_name: "c".into(),
        ..ModelConfig::default()
    }
}

async fn typed<K: DeserializeOwned>(client: &kube::Client, kind: &str, ns: &str) -> Vec<K> {
    api(client, kind, ns)
        .list(&ListParams::default())
        .await
        .unwrap()
        .items
        .into_iter()
        .map(|o| serde_json::from_value(serde_json::to_value(o).unwrap()).unwrap())
        .collect()
}

fn parents(o: &Value) -> Vec<Value> {
    o["status"]["parents"]
        .as_array()
        .cloned()
        .unwrap_or_default()
}

fn condition<'a>(entry: &'a Value, type_: &str) -> &'a Value {
    entry["conditions"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["type"] == type_)
        .unwrap()
}

const ALB: &str = r#"
apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: {name: gw, namespace: infra}
spec:
  gatewayClassName: alb
  listeners:
  - {name: http, port: 80, protocol: HTTP}
---
apiVersion: v1
kind: Service
metadata: {name: web, namespace: infra}
spec:
  type: NodePort
  ports: [{port: 80, targetPort: 8080}]
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: ok, namespace: infra}
spec:
  parentRefs: [{name: gw}, {name: other-gw}]
  rules: [{backendRefs: [{name: web, port: 80}]}]
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: broken, namespace: infra}
spec:
  parentRefs: [{name: gw, sectionName: http}]
  rules: [{backendRefs: [{name: missing, port: 80}]}]
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: foreign, namespace: apps}
spec:
  parentRefs: [{name: gw, namespace: infra}]
  rules: [{backendRefs: [{name: web, port: 80}]}]
"#;

#[tokio::test]
async fn alb_routes_get_upstreams_conditions_once_and_keep_other_controllers_entries() {
    let server = TestApiServer::start(Options::default()).await.unwrap();
    let client = server.client();
    install(&client).await;
    create(&client, ALB).await;
    // Another implementation already reports on the route's second parent.
    let theirs = json!({"parentRef": {"name": "other-gw"}, "controllerName": "example.com/gateway",
        "conditions": [{"type": "Accepted", "status": "True", "reason": "Accepted", "message": "theirs",
                        "lastTransitionTime": "2026-01-01T00:00:00Z", "observedGeneration": 1}]});
    api(&client, "HTTPRoute", "infra")
        .patch_status(
            "ok",
            &PatchParams::default(),
            &Patch::Merge(json!({"status": {"parents": [theirs]}})),
        )
        .await
        .unwrap();

    let publish_once = || async {
        let gw: Gateway = Api::namespaced(client.clone(), "infra")
            .get("gw")
            .await
            .unwrap();
        let mut routes: Vec<HttpRoute> = typed(&client, "HTTPRoute", "infra").await;
        routes.extend(typed::<HttpRoute>(&client, "HTTPRoute", "apps").await);
        let services: Vec<Service> = Api::namespaced(client.clone(), "infra")
            .list(&ListParams::default())
            .await
            .unwrap()
            .items;
        let inputs = GatewayInputs {
            http_routes: &routes,
            services: &services,
            ..GatewayInputs::new(&gw)
        };
        let build = build_alb_gateway_stack(&inputs, &cfg(), None).unwrap();
        publish(&client, &inputs, &build).await.unwrap()
    };
    assert_eq!(publish_once().await, 3, "three routes name the Gateway");

    let ok = get(&client, "HTTPRoute", "infra", "ok").await.unwrap();
    let p = parents(&ok);
    assert_eq!(p.len(), 2, "{p:#?}");
    assert_eq!(
        p[0]["controllerName"], "example.com/gateway",
        "theirs stays first, untouched"
    );
    assert_eq!(condition(&p[0], "Accepted")["message"], "theirs");
    assert_eq!(p[1]["controllerName"], "gateway.k8s.aws/alb");
    assert_eq!(
        p[1]["parentRef"],
        json!({"name": "gw"}),
        "echoed as written"
    );
    let accepted = condition(&p[1], "Accepted");
    assert_eq!(
        (
            accepted["status"].as_str(),
            accepted["reason"].as_str(),
            accepted["message"].as_str()
        ),
        (Some("True"), Some("Accepted"), Some(""))
    );
    assert_eq!(accepted["observedGeneration"], 1);
    assert_eq!(condition(&p[1], "ResolvedRefs")["reason"], "ResolvedRefs");

    let broken = parents(&get(&client, "HTTPRoute", "infra", "broken").await.unwrap());
    assert_eq!(
        broken[0]["parentRef"],
        json!({"name": "gw", "sectionName": "http"})
    );
    let resolved = condition(&broken[0], "ResolvedRefs");
    assert_eq!(
        (
            resolved["status"].as_str(),
            resolved["reason"].as_str(),
            resolved["message"].as_str()
        ),
        (
            Some("False"),
            Some("BackendNotFound"),
            Some("Service (infra:missing) not found)")
        )
    );
    assert_eq!(condition(&broken[0], "Accepted")["status"], "True");

    let foreign = parents(&get(&client, "HTTPRoute", "apps", "foreign").await.unwrap());
    let refused = condition(&foreign[0], "Accepted");
    assert_eq!(
        (refused["status"].as_str(), refused["reason"].as_str(), refused["message"].as_str()),
        (
            Some("False"),
            Some("NotAllowedByListeners"),
            Some("Listener does not allow route attachment, namespace does not match between listener and route")
        )
    );

    assert_eq!(
        publish_once().await,
        0,
        "the same build again writes nothing"
    );

    // Detached from the Gateway: our entry goes, theirs stays.
    api(&client, "HTTPRoute", "infra")
        .patch(
            "ok",
            &PatchParams::default(),
            &Patch::Merge(json!({"spec": {"parentRefs": [{"name": "other-gw"}]}})),
        )
        .await
        .unwrap();
    assert_eq!(publish_once().await, 1);
    let p = parents(&get(&client, "HTTPRoute", "infra", "ok").await.unwrap());
    assert_eq!(p.len(), 1);
    assert_eq!(p[0]["controllerName"], "example.com/gateway");

    // The Gateway is gone: our entries naming it say so, upstream's way.
    let gw: Gateway = Api::namespaced(client.clone(), "infra")
        .get("gw")
        .await
        .unwrap();
    let routes: Vec<HttpRoute> = typed(&client, "HTTPRoute", "infra").await;
    let inputs = GatewayInputs {
        http_routes: &routes,
        ..GatewayInputs::new(&gw)
    };
    assert_eq!(
        forget(&client, &inputs).await.unwrap(),
        1,
        "only broken still names it"
    );
    let broken = parents(&get(&client, "HTTPRoute", "infra", "broken").await.unwrap());
    let gone = condition(&broken[0], "Accepted");
    assert_eq!(
        (
            gone["status"].as_str(),
            gone["reason"].as_str(),
            gone["message"].as_str()
        ),
        (
            Some("False"),
            Some("ParentRefDoesNotExist"),
            Some("gateways.gateway.networking.k8s.io \"gw\" not found")
        )
    );
    server.stop().await;
}

const NLB: &str = r#"
apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: {name: nlb, namespace: infra}
spec:
  gatewayClassName: nlb
  listeners:
  - {name: tcp, port: 5000, protocol: TCP}
  - {name: udp, port: 5001, protocol: UDP}
---
apiVersion: v1
kind: Service
metadata: {name: echo, namespace: infra}
spec:
  type: NodePort
  ports: [{name: tcp, port: 5000, protocol: TCP}, {name: udp, port: 5001, protocol: UDP}]
---
apiVersion: gateway.networking.k8s.io/v1
kind: TCPRoute
metadata: {name: echo, namespace: infra}
spec:
  parentRefs: [{name: nlb, sectionName: tcp}]
  rules: [{backendRefs: [{name: echo, port: 5000}]}]
---
apiVersion: gateway.networking.k8s.io/v1
kind: UDPRoute
metadata: {name: echo, namespace: infra}
spec:
  parentRefs: [{name: nlb, sectionName: tcp}]
  rules: [{backendRefs: [{name: echo, port: 5001}]}]
"#;

#[tokio::test]
async fn nlb_routes_are_written_as_v1_with_the_nlb_controller_name() {
    let server = TestApiServer::start(Options::default()).await.unwrap();
    let client = server.client();
    install(&client).await;
    create(&client, NLB).await;
    let gw: Gateway = Api::namespaced(client.clone(), "infra")
        .get("nlb")
        .await
        .unwrap();
    let tcp: Vec<TcpRoute> = typed(&client, "TCPRoute", "infra").await;
    let udp: Vec<UdpRoute> = typed(&client, "UDPRoute", "infra").await;
    let services: Vec<Service> = Api::namespaced(client.clone(), "infra")
        .list(&ListParams::default())
        .await
        .unwrap()
        .items;
    let inputs = GatewayInputs {
        tcp_routes: &tcp,
        udp_routes: &udp,
        services: &services,
        ..GatewayInputs::new(&gw)
    };
    let build = build_nlb_gateway_stack(&inputs, &cfg(), None).unwrap();
    assert_eq!(publish(&client, &inputs, &build).await.unwrap(), 2);
    let v1: Api<DynamicObject> = Api::namespaced_with(
        client.clone(),
        "infra",
        &resource_as::<TcpRoute>(L4_ROUTE_VERSION),
    );
    let tcp_status = serde_json::to_value(v1.get("echo").await.unwrap()).unwrap();
    let p = parents(&tcp_status);
    assert_eq!(p[0]["controllerName"], "gateway.k8s.aws/nlb");
    assert_eq!(condition(&p[0], "Accepted")["status"], "True", "{p:#?}");
    // The UDPRoute asked for the TCP listener: refused with upstream's kind message.
    let udp_status = parents(&get(&client, "UDPRoute", "infra", "echo").await.unwrap());
    let refused = condition(&udp_status[0], "Accepted");
    assert_eq!(refused["reason"], "NotAllowedByListeners");
    assert_eq!(
        refused["message"],
        "Listener does not allow route attachment, kind does not match between listener and route"
    );
    assert_eq!(
        publish(&client, &inputs, &build).await.unwrap(),
        0,
        "already current"
    );
    server.stop().await;
}
