//! ListenerSets through the in-process ALB Gateway controller (gate `GatewayListenerSet`, on by
//! default) against the in-memory API server and FakeAws, as upstream's
//! `listenerset_tests`: a Gateway allowing sets of its namespace gets the set's listener (an ALB
//! listener on the set's port serving the route that names the set), the set `Accepted` and
//! `Programmed` with per-listener entries, the Gateway `attachedListenerSets: 1`; a set the
//! Gateway does not allow adds nothing and is told `NotAllowed` / `Parent Gateway rejected
//! ListenerSet`; editing `allowedListeners` re-enqueues the Gateway and the set attaches.

use gateway_api::apis::standard::listenersets::ListenerSet;
use kube::api::{Api, Patch, PatchParams};

use crate::gateway_controller::Running;
use crate::ingress::{eventually, WAIT};
use crate::support::gateway::{accept_class, create_all};
use crate::support::inventory::inventory_of;

const STACK_TAG: &str = "gateway.k8s.aws.alb/stack";

/// A class, a Service, a Gateway (`allowed`: its `spec.allowedListeners`, or none) with an HTTP
/// listener on 80, a ListenerSet adding HTTP on 8080, and an HTTPRoute attached to the set.
fn manifests(allowed: &str) -> String {
    format!(
        r#"
apiVersion: gateway.networking.k8s.io/v1
kind: GatewayClass
metadata: {{name: aws-alb}}
spec: {{controllerName: gateway.k8s.aws/alb}}
---
apiVersion: v1
kind: Service
metadata: {{name: web, namespace: demo}}
spec:
  type: NodePort
  selector: {{app: web}}
  ports: [{{name: http, port: 80, targetPort: 8080, nodePort: 30080, protocol: TCP}}]
---
apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: {{name: gw, namespace: demo}}
spec:
  gatewayClassName: aws-alb
  {allowed}
  listeners: [{{name: web, port: 80, protocol: HTTP}}]
---
apiVersion: gateway.networking.k8s.io/v1
kind: ListenerSet
metadata: {{name: extra, namespace: demo}}
spec:
  parentRef: {{name: gw}}
  listeners: [{{name: alt, port: 8080, protocol: HTTP}}]
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {{name: via-set, namespace: demo}}
spec:
  parentRefs: [{{kind: ListenerSet, group: gateway.networking.k8s.io, name: extra}}]
  rules:
  - matches: [{{path: {{type: PathPrefix, value: /api}}}}]
    backendRefs: [{{name: web, port: 80}}]
"#
    )
}

async fn set_condition(r: &Running, t: &str) -> Option<(String, String, String)> {
    let api: Api<ListenerSet> = Api::namespaced(r.h.client.clone(), "demo");
    let set = api.get_opt("extra").await.ok()??;
    let c = set.status?.conditions?.into_iter().find(|c| c.type_ == t)?;
    Some((c.status, c.reason, c.message))
}

#[tokio::test]
async fn a_listener_set_adds_a_listener_once_the_gateway_allows_it() {
    let r = Running::start().await;
    create_all(&r.h.client, &manifests("")).await;
    accept_class(&r.h.client, "aws-alb").await;
    // No allowedListeners: upstream's default admits no set.
    let rejected = || {
        (
            "False".to_string(),
            "NotAllowed".to_string(),
            "Parent Gateway rejected ListenerSet".to_string(),
        )
    };
    eventually("the set is rejected", WAIT, || async {
        set_condition(&r, "Accepted").await == Some(rejected())
    })
    .await;
    assert_eq!(set_condition(&r, "Programmed").await, Some(rejected()));
    let inv = inventory_of(r.fake.as_ref(), r.fake.as_ref(), STACK_TAG, "demo/gw").await;
    assert!(
        inv.listeners.is_empty(),
        "no route attaches: no listener: {inv:#?}"
    );
    let gw = r.gateways().get("gw").await.unwrap();
    assert_eq!(gw.status.unwrap().attached_listener_sets, Some(0));

    // The Gateway now allows sets of its namespace: the set's listener serves the route.
    let allow = serde_json::json!({"spec": {"allowedListeners": {"namespaces": {"from": "Same"}}}});
    r.gateways()
        .patch("gw", &PatchParams::default(), &Patch::Merge(&allow))
        .await
        .unwrap();
    eventually("the set is accepted and programmed", WAIT, || async {
        set_condition(&r, "Programmed").await
            == Some(("True".into(), "Programmed".into(), "Programmed".into()))
    })
    .await;
    assert_eq!(
        set_condition(&r, "Accepted").await,
        Some(("True".into(), "Accepted".into(), "Accepted".into()))
    );
    let inv = inventory_of(r.fake.as_ref(), r.fake.as_ref(), STACK_TAG, "demo/gw").await;
    let ports: Vec<u16> = inv.listeners.iter().map(|l| l.port).collect();
    assert_eq!(ports, vec![8080], "{inv:#?}");
    assert_eq!(inv.rules.len(), 1);
    let api: Api<ListenerSet> = Api::namespaced(r.h.client.clone(), "demo");
    let entries = api
        .get("extra")
        .await
        .unwrap()
        .status
        .unwrap()
        .listeners
        .unwrap();
    assert_eq!(
        (entries[0].name.as_str(), entries[0].attached_routes),
        ("alt", 1)
    );
    let gw = r.gateways().get("gw").await.unwrap();
    assert_eq!(gw.status.unwrap().attached_listener_sets, Some(1));
}
