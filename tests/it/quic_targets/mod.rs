//! QUIC target groups end to end: pods carrying server ids (as our pod webhook writes them)
//! are registered with `QuicServerId` and deregistered with it; a pod without one is left out
//! with a Warning. A QUIC Service through the Service and TargetGroupBinding controllers, on
//! the fake and (the real binary) on moto, whose launcher lets it create QUIC target groups
//! and listeners; on moto, the ids as the SDK sent them, read from moto's request log.

mod binding_moto;
mod e2e_binary;
mod fake_rules;
mod service_fake;
mod service_moto;

use std::time::{Duration, Instant};

use aws_load_balancer_controller::aws::ElbV2;
use aws_load_balancer_controller::controller::tgb::quic::{elb_form, ANNOTATION};
use aws_load_balancer_controller::crd::target_group_binding::TargetGroupProtocol;
use aws_load_balancer_controller::crd::TargetGroupBinding;
use aws_load_balancer_controller::webhook::quic_server_id::QuicServerIdInjector;
use k8s_openapi::api::core::v1::Pod;
use k8s_openapi::api::discovery::v1::EndpointSlice;
use kube::api::{Api, ListParams, Patch, PatchParams, PostParams};
use kube::ResourceExt;
use serde_json::{json, Value};

use crate::support::moto::Moto;

/// Creates the running, ready pod `name` (`app: web`, IP `ip`) whose container `app` serves
/// UDP 8443 and is named by the QUIC annotation. With `webhook_env`, the pod first goes
/// through our pod webhook's server-id injection configured with that variable name, as in a
/// namespace labelled for it; returns the id it got, in AWS's form. Without, it has the
/// annotation but no id (the webhook did not see it).
pub async fn quic_pod(
    client: &kube::Client,
    ns: &str,
    name: &str,
    ip: &str,
    webhook_env: Option<&str>,
) -> Option<String> {
    let mut doc = json!({
        "apiVersion": "v1", "kind": "Pod",
        "metadata": { "name": name, "namespace": ns, "labels": { "app": "web" },
                      "annotations": { ANNOTATION: "app" } },
        "spec": { "nodeName": "node-a", "containers": [{
            "name": "app", "image": "quic",
            "ports": [{ "containerPort": 8443, "protocol": "UDP" }]
        }] }
    });
    if let Some(env) = webhook_env {
        let ops = QuicServerIdInjector::new(env).patch(&doc).unwrap();
        json_patch::patch(&mut doc, &ops).unwrap();
    }
    let id = doc
        .pointer("/spec/containers/0/env/0/value")
        .and_then(Value::as_str)
        .map(|v| elb_form(v).expect("the webhook's id is 8 bytes in base64"));
    let pod: Pod = serde_json::from_value(doc).unwrap();
    let api: Api<Pod> = Api::namespaced(client.clone(), ns);
    api.create(&PostParams::default(), &pod).await.unwrap();
    let status = json!({ "status": { "phase": "Running", "podIP": ip, "conditions": [
        { "type": "ContainersReady", "status": "True" }, { "type": "Ready", "status": "True" }
    ] } });
    api.patch_status(name, &PatchParams::default(), &Patch::Merge(&status))
        .await
        .unwrap();
    id
}

/// Creates or replaces Service `web`'s EndpointSlice (port `h3`, 8443/UDP) with the ready
/// endpoints `(pod, ip)`.
pub async fn slice(client: &kube::Client, ns: &str, eps: &[(&str, &str)]) {
    let endpoints: Vec<Value> = eps
        .iter()
        .map(|(pod, ip)| {
            json!({
                "addresses": [ip],
                "conditions": { "ready": true, "serving": true, "terminating": false },
                "nodeName": "node-a",
                "targetRef": { "kind": "Pod", "name": pod, "namespace": ns }
            })
        })
        .collect();
    let slice = json!({
        "apiVersion": "discovery.k8s.io/v1", "kind": "EndpointSlice",
        "metadata": { "name": "web-abc", "namespace": ns,
                      "labels": { "kubernetes.io/service-name": "web" } },
        "addressType": "IPv4",
        "ports": [{ "name": "h3", "port": 8443, "protocol": "UDP" }],
        "endpoints": endpoints,
    });
    Api::<EndpointSlice>::namespaced(client.clone(), ns)
        .patch(
            "web-abc",
            &PatchParams::apply("test").force(),
            &Patch::Apply(&slice),
        )
        .await
        .unwrap();
}

/// `(id:port, QuicServerId)` of the group's targets as DescribeTargetHealth lists them, sorted.
pub async fn quic_targets(elb: &dyn ElbV2, arn: &str) -> Vec<(String, Option<String>)> {
    let mut v: Vec<(String, Option<String>)> = elb
        .describe_target_health(arn, &[])
        .await
        .unwrap()
        .into_iter()
        .map(|t| {
            let addr = format!("{}:{}", t.target.id, t.target.port.unwrap_or_default());
            (addr, t.target.quic_server_id)
        })
        .collect();
    v.sort();
    v
}

/// `(Id, Port, QuicServerId)` of every target of the recorded `action` requests
/// (`Targets.member.N.*`), in order.
pub fn sent_targets(moto: &Moto, action: &str) -> Vec<(String, String, Option<String>)> {
    let mut out = Vec::new();
    for params in moto.recorded_params(action) {
        for n in 1.. {
            let field = |f: &str| params.get(&format!("Targets.member.{n}.{f}")).cloned();
            let Some(id) = field("Id") else {
                break;
            };
            out.push((id, field("Port").unwrap_or_default(), field("QuicServerId")));
        }
    }
    out
}

/// `(name, target group ARN)` of the binding in `ns` that says QUIC (the one the Service
/// controller made for the QUIC port), once it is there; panics after `wait`.
pub async fn quic_binding(client: &kube::Client, ns: &str, wait: Duration) -> (String, String) {
    let api: Api<TargetGroupBinding> = Api::namespaced(client.clone(), ns);
    let deadline = Instant::now() + wait;
    loop {
        let list = api.list(&ListParams::default()).await.unwrap();
        if let Some(b) = list
            .items
            .iter()
            .find(|b| b.spec.target_group_protocol == Some(TargetGroupProtocol::Quic))
        {
            return (b.name_any(), b.spec.target_group_arn.clone());
        }
        let names: Vec<String> = list.items.iter().map(|b| b.name_any()).collect();
        assert!(
            Instant::now() < deadline,
            "no QUIC binding for the Service; bindings: {names:?}"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}
