//! A route rule the route types cannot read (issue #36: an `ExternalAuth` filter of the
//! experimental channel), in-process as the rest of `gateway_controller`: the route is not
//! dropped as undecodable (which took its rules and target groups off the load balancer at the
//! next relist while its status still said Accepted). The rule is refused — its requests get
//! 500, never served without the filter — with the Gateway API's condition on the route and a
//! Warning, while the other routes' rules and target groups stay as they were.

use aws_load_balancer_controller::aws::Rule;
use aws_load_balancer_controller::model::{Action, RuleCondition};
use kube::api::{DeleteParams, Patch, PatchParams};
use serde_json::{json, Value};

use super::{manifests, Running, STACK_TAG};
use crate::ingress::{eventually, WAIT};
use crate::support::gateway::{accept_class, create_all, create_objects};
use crate::support::gateway_crds::{api, get};
use crate::support::inventory::inventory_of;

/// A second route on the Gateway, and the Service its refused rule would forward to.
const AUTH_ROUTE: &str = r#"
apiVersion: v1
kind: Service
metadata: {name: admin, namespace: demo}
spec:
  type: NodePort
  selector: {app: admin}
  ports: [{name: http, port: 80, targetPort: 8080, nodePort: 30081, protocol: TCP}]
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: auth, namespace: demo}
spec:
  parentRefs: [{name: gw}]
  rules:
  - matches: [{path: {type: PathPrefix, value: /app}}]
    backendRefs: [{name: web, port: 80}]
"#;

/// The rules of Gateway `demo/gw` and its target group ARNs (sorted).
async fn load_balancer(r: &Running) -> (Vec<Rule>, Vec<String>) {
    let inv = inventory_of(r.fake.as_ref(), r.fake.as_ref(), STACK_TAG, "demo/gw").await;
    let rules = inv.rules.into_iter().map(|(rule, _)| rule).collect();
    let mut tgs: Vec<String> = inv.tgs.into_iter().map(|(tg, _)| tg.arn).collect();
    tgs.sort();
    (rules, tgs)
}

/// Whether the rule matches path prefix `prefix`.
fn on_path(rule: &Rule, prefix: &str) -> bool {
    rule.conditions.iter().any(|c| {
        matches!(c, RuleCondition::PathPattern { config } if config.values.iter().any(|v| v.starts_with(prefix)))
    })
}

/// Condition `type_` of the route's entry for the Gateway: (status, reason, message).
fn route_condition(route: &Value, type_: &str) -> Option<(String, String, String)> {
    let entry = route["status"]["parents"]
        .as_array()?
        .iter()
        .find(|p| p["controllerName"] == "gateway.k8s.aws/alb")?;
    let c = entry["conditions"]
        .as_array()?
        .iter()
        .find(|c| c["type"] == type_)?;
    let s = |k: &str| c[k].as_str().unwrap_or_default().to_string();
    Some((s("status"), s("reason"), s("message")))
}

#[tokio::test]
async fn an_external_auth_filter_refuses_its_rule_and_keeps_the_other_routes_rules() {
    let r = Running::start().await;
    create_objects(&r.h.client, manifests("HTTP", 80)).await;
    create_all(&r.h.client, AUTH_ROUTE).await;
    accept_class(&r.h.client, "aws-alb").await;
    eventually("both routes on the load balancer", WAIT, || async {
        load_balancer(&r).await.0.len() == 2
    })
    .await;
    let (before, tgs_before) = load_balancer(&r).await;
    let kept: Vec<&Rule> = before.iter().filter(|rule| on_path(rule, "/api")).collect();
    assert_eq!(kept.len(), 1, "the other route's rule: {before:#?}");
    assert!(
        matches!(kept[0].actions.as_slice(), [Action::Forward { .. }]),
        "{kept:#?}"
    );

    // The route gets a rule with an ExternalAuth filter, which the route types do not know
    // (written untyped: the typed crate cannot carry it).
    let external_auth = json!({"spec": {"rules": [
        {"matches": [{"path": {"type": "PathPrefix", "value": "/app"}}],
         "backendRefs": [{"name": "web", "port": 80}]},
        {"matches": [{"path": {"type": "PathPrefix", "value": "/admin"}}],
         "filters": [{"type": "ExternalAuth",
                      "externalAuth": {"protocol": "HTTP", "backendRef": {"name": "authz", "port": 9000}}}],
         "backendRefs": [{"name": "admin", "port": 80}]}
    ]}});
    api(&r.h.client, "HTTPRoute", "demo")
        .patch(
            "auth",
            &PatchParams::default(),
            &Patch::Merge(&external_auth),
        )
        .await
        .unwrap();
    eventually("the route's condition", WAIT, || async {
        get(&r.h.client, "HTTPRoute", "demo", "auth")
            .await
            .and_then(|route| route_condition(&route, "Accepted"))
            .is_some_and(|c| c.1 == "UnsupportedValue")
    })
    .await;
    eventually("the refused rule deployed", WAIT, || async {
        load_balancer(&r).await.0.len() == 3
    })
    .await;

    // The Gateway API's condition for an unknown filter type, naming rule and filter.
    let auth = get(&r.h.client, "HTTPRoute", "demo", "auth").await.unwrap();
    let (status, reason, message) = route_condition(&auth, "Accepted").unwrap();
    assert_eq!(
        (status.as_str(), reason.as_str()),
        ("False", "UnsupportedValue")
    );
    assert!(
        message.starts_with("spec.rules[1]: filter type ExternalAuth is not supported"),
        "{message}"
    );
    assert_eq!(
        route_condition(&auth, "ResolvedRefs").map(|c| c.0),
        Some("True".into())
    );
    let other = get(&r.h.client, "HTTPRoute", "demo", "route")
        .await
        .unwrap();
    assert_eq!(
        route_condition(&other, "Accepted"),
        Some(("True".into(), "Accepted".into(), String::new()))
    );

    // The other route's rule and every target group are as they were; the refused rule
    // forwards nowhere (no target group for its backend): its requests get 500.
    let (after, tgs_after) = load_balancer(&r).await;
    for rule in &kept {
        assert!(
            after
                .iter()
                .any(|a| a.conditions == rule.conditions && a.actions == rule.actions),
            "the other route's rule stays: {after:#?}"
        );
    }
    assert_eq!(tgs_after, tgs_before, "no target group added or removed");
    let app: Vec<&Rule> = after.iter().filter(|rule| on_path(rule, "/app")).collect();
    assert!(
        matches!(app.as_slice(), [a] if matches!(a.actions.as_slice(), [Action::Forward { .. }])),
        "the route's other rule is still served: {after:#?}"
    );
    let admin: Vec<&Rule> = after
        .iter()
        .filter(|rule| on_path(rule, "/admin"))
        .collect();
    assert!(
        matches!(admin.as_slice(), [a] if matches!(a.actions.as_slice(), [Action::FixedResponse { config }] if config.status_code == "500")),
        "never served without its filter: {after:#?}"
    );

    // A Warning on the route (and on the Gateway) names the rule and the filter.
    let named = |note: &str| note.contains("spec.rules[1]") && note.contains("ExternalAuth");
    eventually("the route's Warning", WAIT, || async {
        r.h.events("demo", "auth")
            .await
            .iter()
            .any(|(t, reason, note)| {
                t == "Warning" && reason == "UnsupportedConfiguration" && named(note)
            })
    })
    .await;
    assert!(
        r.h.events("demo", "gw")
            .await
            .iter()
            .any(|(t, reason, note)| {
                t == "Warning" && reason == "UnsupportedConfiguration" && named(note)
            }),
        "{:?}",
        r.h.events("demo", "gw").await
    );

    // Deleting the route takes its rules off; the other route's rule stays.
    api(&r.h.client, "HTTPRoute", "demo")
        .delete("auth", &DeleteParams::default())
        .await
        .unwrap();
    eventually("the deleted route's rules go", WAIT, || async {
        load_balancer(&r).await.0.len() == 1
    })
    .await;
    let (last, _) = load_balancer(&r).await;
    assert!(on_path(&last[0], "/api"), "{last:#?}");
}
