//! The GlobalAccelerator validator through the real webhook server (TLS, AdmissionReview in and
//! out): upstream's refusals with status 403 and their texts, the metric labels it counts, and
//! what it lets through.

use crate::support::client::{self, tls_config};
use crate::support::{test_bundle, write_pair_atomic};
use aws_load_balancer_controller::certs::tls;
use aws_load_balancer_controller::config::TlsMinVersion;
use aws_load_balancer_controller::metrics::{new_registry, render_text, WebhookMetrics};
use aws_load_balancer_controller::webhook::aga_validator::{GlobalAcceleratorValidator, PATH};
use aws_load_balancer_controller::webhook::{self, server, Handler, Limits};
use serde_json::{json, Value};
use std::sync::Arc;
use tokio_util::sync::CancellationToken;

fn review(uid: &str, operation: &str, spec: Value) -> Vec<u8> {
    serde_json::to_vec(&json!({
        "apiVersion": "admission.k8s.io/v1",
        "kind": "AdmissionReview",
        "request": {
            "uid": uid,
            "kind": {"group": "aga.k8s.aws", "version": "v1beta1", "kind": "GlobalAccelerator"},
            "resource": {"group": "aga.k8s.aws", "version": "v1beta1", "resource": "globalaccelerators"},
            "operation": operation,
            "namespace": "apps",
            "object": {
                "apiVersion": "aga.k8s.aws/v1beta1", "kind": "GlobalAccelerator",
                "metadata": {"name": "edge", "namespace": "apps"},
                "spec": spec
            },
        }
    }))
    .unwrap()
}

#[tokio::test]
async fn refusals_and_admissions_over_tls() {
    let dir = tempfile::tempdir().unwrap();
    let bundle = test_bundle(None);
    write_pair_atomic(dir.path(), &bundle);
    let (server_cfg, _resolver) = tls::server_config(
        dir.path().join("tls.crt"),
        dir.path().join("tls.key"),
        TlsMinVersion::Tls13,
    )
    .unwrap();
    let mut registry = new_registry();
    let metrics = WebhookMetrics::register(&mut registry);
    let handler: Arc<dyn Handler> = Arc::new(GlobalAcceleratorValidator);
    let router = webhook::router(vec![(PATH, handler)], metrics, Limits::default());
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let stop = CancellationToken::new();
    let task = tokio::spawn(server::serve_tls(
        listener,
        server_cfg,
        router,
        Default::default(),
        stop.clone(),
    ));
    let cfg = tls_config(&[&bundle.ca.cert_pem], &[&rustls::version::TLS13]);

    let overlapping = json!({"listeners": [
        {"protocol": "TCP", "portRanges": [{"fromPort": 80, "toPort": 443}]},
        {"protocol": "TCP", "portRanges": [{"fromPort": 443, "toPort": 443}]}
    ]});
    let duplicate = json!({"listeners": [{"endpointGroups": [{"endpoints": [
        {"type": "Service", "name": "web"}, {"type": "Service", "name": "web", "namespace": "apps"}
    ]}]}]});
    let fine = json!({"listeners": [
        {"protocol": "TCP", "portRanges": [{"fromPort": 80, "toPort": 80}],
         "endpointGroups": [{"endpoints": [{"type": "Service", "name": "web"}]}]},
        {"protocol": "UDP", "portRanges": [{"fromPort": 80, "toPort": 80}]}
    ]});
    for (uid, operation, spec, refusal) in [
        (
            "overlap-create",
            "CREATE",
            overlapping.clone(),
            Some("overlapping port ranges detected for protocol TCP, which is not allowed"),
        ),
        (
            "overlap-update",
            "UPDATE",
            overlapping.clone(),
            Some("overlapping port ranges detected for protocol TCP, which is not allowed"),
        ),
        (
            "duplicate",
            "CREATE",
            duplicate,
            Some("duplicate endpoint detected in listener[0].endpointGroups[0]: Service/apps/web"),
        ),
        ("fine", "CREATE", fine, None),
        ("delete", "DELETE", overlapping, None),
    ] {
        let r = client::post(addr, cfg.clone(), PATH, &review(uid, operation, spec))
            .await
            .unwrap();
        assert_eq!(r.status, 200, "{uid}");
        let answer = r.json();
        assert_eq!(answer["response"]["uid"], uid);
        match refusal {
            Some(message) => {
                assert_eq!(answer["response"]["allowed"], false, "{uid}");
                assert_eq!(answer["response"]["status"]["code"], 403, "{uid}");
                assert_eq!(answer["response"]["status"]["message"], message, "{uid}");
            }
            None => assert_eq!(answer["response"]["allowed"], true, "{uid}: {answer}"),
        }
    }

    let out = render_text(&registry).unwrap();
    for (category, count) in [
        ("checkForOverlappingPortRanges", 2),
        ("checkForDuplicateEndpoints", 1),
    ] {
        let line = format!(
            "awslbc_webhook_validation_failure_total{{webhook_name=\"{PATH}\",error_category=\"{category}\"}} {count}"
        );
        assert!(out.contains(&line), "{line} missing from:\n{out}");
    }
    stop.cancel();
    task.await.unwrap();
}
