//! What keeps a deployed Gateway in step, in-process as the rest of `gateway_controller`: its
//! `spec.infrastructure` labels and annotations on the TargetGroupBindings (exactly, as
//! upstream), its OIDC Secrets watched (upstream's MonitorSecrets), and the shared backend
//! security group released with the last Gateway.

use std::time::Duration;

use albc_model::fixtures::{Fixture, RuleFixture};
use aws_load_balancer_controller::crd::TargetGroupBinding;
use gateway_api::apis::standard::gateways::Gateway;
use kube::api::{Api, DeleteParams, ListParams, Patch, PatchParams};
use kube::ResourceExt;
use serde_json::json;

use super::{manifests, manifests_with, with_configuration, Running};
use crate::ingress::{eventually, WAIT};
use crate::support::gateway::{accept_class, create_all, create_objects};

/// The TargetGroupBindings of Gateway `demo/gw`.
async fn bindings(r: &Running) -> Vec<TargetGroupBinding> {
    let tgbs: Api<TargetGroupBinding> = Api::namespaced(r.h.client.clone(), "demo");
    let ours = ListParams::default()
        .labels("gateway.k8s.aws.alb/stack-namespace=demo,gateway.k8s.aws.alb/stack-name=gw");
    tgbs.list(&ours).await.unwrap().items
}

/// Merge-patches Gateway `demo/gw` with `body`.
async fn patch_gateway(r: &Running, body: serde_json::Value) {
    r.gateways()
        .patch("gw", &PatchParams::default(), &Patch::Merge(&body))
        .await
        .unwrap();
}

/// `spec.infrastructure` labels and annotations reach the bindings, as upstream's binding
/// template: no Warning; an unchanged Gateway rewrites no binding; an edited annotation is
/// updated; one added to the binding by hand goes, as upstream's binding manager keeps a
/// Gateway binding's annotations exactly the Gateway's.
#[tokio::test]
async fn infrastructure_labels_and_annotations_are_the_bindings_and_follow_edits() {
    let r = Running::start().await;
    let infrastructure = |gw: Fixture<Gateway>| {
        gw.set(
            &["spec", "infrastructure", "labels"],
            json!({"team": "web"}),
        )
        .set(
            &["spec", "infrastructure", "annotations"],
            json!({"example.com/owner": "alice"}),
        )
    };
    create_objects(
        &r.h.client,
        manifests_with("HTTP", 80, infrastructure, |rule| rule),
    )
    .await;
    accept_class(&r.h.client, "aws-alb").await;
    eventually("SuccessfullyReconciled", WAIT, || async {
        r.h.event_reasons("demo", "gw")
            .await
            .contains(&"SuccessfullyReconciled".to_string())
    })
    .await;
    let tgb = bindings(&r).await.remove(0);
    assert_eq!(tgb.labels()["team"], "web");
    let owner = |b: &TargetGroupBinding| b.annotations().get("example.com/owner").cloned();
    assert_eq!(owner(&tgb).as_deref(), Some("alice"));
    let warnings: Vec<_> =
        r.h.events("demo", "gw")
            .await
            .into_iter()
            .filter(|(t, reason, _)| t == "Warning" && reason == "UnsupportedConfiguration")
            .collect();
    assert!(warnings.is_empty(), "applied, not refused: {warnings:?}");

    // Another pass over the unchanged Gateway: the binding is not written.
    let rv = tgb.resource_version();
    r.fake.clear_calls();
    patch_gateway(
        &r,
        serde_json::json!({"metadata": {"labels": {"touched": "1"}}}),
    )
    .await;
    eventually("a second pass", WAIT, || async {
        r.fake.count("DescribeRules") > 0
    })
    .await;
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert_eq!(
        bindings(&r).await[0].resource_version(),
        rv,
        "no binding write"
    );

    // An annotation added to the binding by hand goes at the next pass, as upstream.
    let tgbs: Api<TargetGroupBinding> = Api::namespaced(r.h.client.clone(), "demo");
    let by_hand = serde_json::json!({"metadata": {"annotations": {"example.com/by-hand": "x"}}});
    tgbs.patch(
        &tgb.name_any(),
        &PatchParams::default(),
        &Patch::Merge(&by_hand),
    )
    .await
    .unwrap();
    patch_gateway(
        &r,
        serde_json::json!({"metadata": {"labels": {"touched": "2"}}}),
    )
    .await;
    eventually("the hand-added annotation goes", WAIT, || async {
        !bindings(&r).await[0]
            .annotations()
            .contains_key("example.com/by-hand")
    })
    .await;

    // The Gateway's annotation changes: so does the binding's, with no AWS write.
    r.fake.clear_calls();
    let edit = serde_json::json!({"spec": {"infrastructure": {"annotations": {"example.com/owner": "bob"}}}});
    patch_gateway(&r, edit).await;
    eventually("the edited annotation", WAIT, || async {
        owner(&bindings(&r).await[0]).as_deref() == Some("bob")
    })
    .await;
    assert!(
        r.fake.write_calls().is_empty(),
        "{:?}",
        r.fake.write_calls()
    );
}

/// An ALB Gateway whose HTTPRoute authenticates through a ListenerRuleConfiguration's OIDC
/// action: the Secret it names is watched (upstream's MonitorSecrets), so a new client secret
/// reaches the rule without any edit to the Gateway or a resync.
#[tokio::test]
async fn a_changed_oidc_secret_reaches_the_rule_without_a_resync() {
    let r = Running::start().await;
    let extra = r#"
apiVersion: gateway.k8s.aws/v1
kind: LoadBalancerConfiguration
metadata: {name: tls, namespace: demo}
spec:
  listenerConfigurations:
  - {protocolPort: "HTTPS:443", defaultCertificate: "arn:aws:acm:us-west-2:123456789012:certificate/a"}
---
apiVersion: v1
kind: Secret
metadata: {name: idp, namespace: demo}
data: {clientID: aWQ=, clientSecret: Zmlyc3Q=}
---
apiVersion: gateway.k8s.aws/v1
kind: ListenerRuleConfiguration
metadata: {name: oidc, namespace: demo}
spec:
  actions:
  - type: authenticate-oidc
    authenticateOIDCConfig: {authorizationEndpoint: 'https://a', issuer: 'https://i', tokenEndpoint: 'https://t', userInfoEndpoint: 'https://u', secret: {name: idp}}
"#;
    create_all(&r.h.client, extra).await;
    // Stands in for the ListenerRuleConfiguration reconciler.
    let lrcs: Api<aws_load_balancer_controller::crd::gateway::ListenerRuleConfiguration> =
        Api::namespaced(r.h.client.clone(), "demo");
    let accepted = serde_json::json!({"status": {"accepted": true, "message": "Accepted", "observedGeneration": 1}});
    lrcs.patch_status("oidc", &PatchParams::default(), &Patch::Merge(&accepted))
        .await
        .unwrap();
    let oidc = |rule: RuleFixture| {
        rule.filter(json!({"type": "ExtensionRef", "extensionRef": {
            "group": "gateway.k8s.aws", "kind": "ListenerRuleConfiguration", "name": "oidc"}}))
    };
    let objects = manifests_with("HTTPS", 443, with_configuration("tls"), oidc);
    create_objects(&r.h.client, objects).await;
    accept_class(&r.h.client, "aws-alb").await;
    let secrets = || {
        r.fake
            .oidc_client_secrets()
            .into_iter()
            .map(|(_, s)| s)
            .collect::<Vec<_>>()
    };
    eventually(
        "the rule authenticates with the first secret",
        WAIT,
        || async { secrets() == ["first"] },
    )
    .await;
    eventually("SuccessfullyReconciled", WAIT, || async {
        r.h.event_reasons("demo", "gw")
            .await
            .contains(&"SuccessfullyReconciled".to_string())
    })
    .await;
    // Let the pass the status write queues finish: from here on only the Secret changes.
    tokio::time::sleep(Duration::from_millis(1000)).await;
    let api: Api<k8s_openapi::api::core::v1::Secret> = Api::namespaced(r.h.client.clone(), "demo");
    // `data` as the API server stores it (base64 of "second").
    let rotate = serde_json::json!({"data": {"clientSecret": "c2Vjb25k"}});
    api.patch("idp", &PatchParams::default(), &Patch::Merge(&rotate))
        .await
        .unwrap();
    eventually(
        "the rule authenticates with the new secret",
        WAIT,
        || async { secrets() == ["second"] },
    )
    .await;
}

/// The shared backend security group the Gateway's ALB used goes with the last Gateway, as
/// upstream's backend-SG provider releases it.
#[tokio::test]
async fn the_backend_security_group_goes_with_the_last_gateway() {
    use aws_load_balancer_controller::aws::{Ec2, Ec2Query};
    let r = Running::start().await;
    create_objects(&r.h.client, manifests("HTTP", 80)).await;
    accept_class(&r.h.client, "aws-alb").await;
    eventually("Programmed=True", WAIT, || async {
        r.condition("gw", "Programmed")
            .await
            .is_some_and(|c| c.0 == "True")
    })
    .await;
    let backend_sgs = || async {
        let q = Ec2Query::default().filter("tag:elbv2.k8s.aws/resource", ["backend-sg"]);
        r.fake.describe_security_groups(&q).await.unwrap().len()
    };
    assert_eq!(backend_sgs().await, 1, "the ALB uses the shared backend SG");
    r.gateways()
        .delete("gw", &DeleteParams::default())
        .await
        .unwrap();
    eventually("the Gateway goes", WAIT, || async {
        r.gateways().get_opt("gw").await.unwrap().is_none()
    })
    .await;
    assert_eq!(backend_sgs().await, 0, "released before the finalizer");
}
