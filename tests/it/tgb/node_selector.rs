//! An instance binding's `nodeSelector` in full: `matchExpressions` narrow the nodes as
//! Kubernetes defines them, and a selector Kubernetes refuses fails the reconcile with the
//! registered targets left in place (as upstream), rather than deregistering every node.

use k8s_openapi::api::core::v1::Service;
use kube::api::{Api, Patch, PatchParams, PostParams};
use serde_json::json;

use super::fake::{events, fake_with_vpc};
use super::*;

#[tokio::test]
async fn instance_binding_honours_match_expressions_and_keeps_targets_on_a_bad_selector() {
    let (fake, vpc) = fake_with_vpc();
    let arn = ip_tg(fake.as_ref(), "picky", &vpc, "instance").await;
    let h = Harness::start(fake.clone(), "10.0.0.0/16").await;
    h.node("a", "i-0aaa", json!({"zone": "a", "role": "web"}))
        .await;
    h.node("b", "i-0bbb", json!({"zone": "b", "role": "web"}))
        .await;
    h.node("c", "i-0ccc", json!({"zone": "a"})).await;
    h.node("d", "i-0ddd", json!({})).await;
    h.service("web", "NodePort", json!([{"port": 80, "targetPort": 8080}]))
        .await;
    let svc = Api::<Service>::namespaced(h.client.clone(), NS)
        .get("web")
        .await
        .unwrap();
    let np = svc.spec.unwrap().ports.unwrap()[0].node_port.unwrap();
    let tgb: TargetGroupBinding = serde_json::from_value(json!({
        "apiVersion": "elbv2.k8s.aws/v1beta1",
        "kind": "TargetGroupBinding",
        "metadata": {"name": "picky", "namespace": NS},
        "spec": {
            "targetGroupARN": arn,
            "targetType": "instance",
            "serviceRef": {"name": "web", "port": 80},
            "nodeSelector": {"matchExpressions": [
                {"key": "zone", "operator": "In", "values": ["a"]},
                {"key": "role", "operator": "Exists"}]},
        }
    }))
    .unwrap();
    h.bindings()
        .create(&PostParams::default(), &tgb)
        .await
        .unwrap();
    let only_a = vec![format!("i-0aaa:{np}")];
    eventually("only the node both expressions select", WAIT, || async {
        targets(fake.as_ref(), &arn).await == only_a
    })
    .await;

    let bad = json!({"spec": {"nodeSelector": {"matchExpressions": [
        {"key": "zone", "operator": "Within", "values": ["b"]}]}}});
    h.bindings()
        .patch("picky", &PatchParams::default(), &Patch::Merge(&bad))
        .await
        .unwrap();
    eventually("FailedReconcile event", WAIT, || async {
        events(&h, "FailedReconcile").await.iter().any(|n| {
            n.contains("invalid nodeSelector: \"Within\" is not a valid label selector operator")
        })
    })
    .await;
    assert_eq!(targets(fake.as_ref(), &arn).await, only_a);
    h.stop().await;
}
