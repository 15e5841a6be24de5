//! The served route table as the API server meets it.

use super::*;
use crate::cli::Cli;
use clap::Parser;
use http_body_util::BodyExt;

fn config() -> Config {
    let cli = Cli::try_parse_from(["controller", "--cluster-name", "c"]).unwrap();
    Config::from_args(&cli.controller).unwrap()
}

#[tokio::test]
async fn every_path_allows_operations_other_than_create_and_update_unread() {
    let cfg = config();
    let (table, _slots) = routes(&cfg, &Indexes::default());
    let paths: Vec<&str> = table.iter().map(|(p, _)| *p).collect();
    let limits = webhook::Limits {
        max_body_bytes: 1 << 20,
        body_timeout: Duration::from_secs(5),
        ..Default::default()
    };
    let metrics = WebhookMetrics::register(&mut metrics::new_registry());
    let app = webhook::router(table, metrics, limits);
    for path in paths {
        for op in ["DELETE", "CONNECT", "WEIRD"] {
            // A DELETE carries only oldObject; a CONNECT an options object of another kind.
            let review = serde_json::json!({
                "apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview",
                "request": {"uid": "u-1", "operation": op, "namespace": "ns",
                            "object": if op == "CONNECT" { serde_json::json!({"kind": "PodExecOptions"}) } else { serde_json::Value::Null },
                            "oldObject": {"spec": "not an object spec"}}
            });
            let request = axum::http::Request::post(path)
                .header("content-type", "application/json")
                .body(axum::body::Body::from(serde_json::to_vec(&review).unwrap()))
                .unwrap();
            let response = app.handle(request).await;
            assert_eq!(response.status(), 200, "{path} {op}");
            let body = response.into_body().collect().await.unwrap().to_bytes();
            let answer: serde_json::Value = serde_json::from_slice(&body).unwrap();
            assert_eq!(
                answer["response"],
                serde_json::json!({"uid": "u-1", "allowed": true}),
                "{path} {op}"
            );
        }
    }
}

/// The two ALB target control agent paths are served, by one mutator, only with their gate on.
#[test]
fn target_control_paths_are_served_only_with_their_gate() {
    let paths = |extra: &[&str]| {
        let argv: Vec<&str> = ["controller", "--cluster-name", "c"]
            .into_iter()
            .chain(extra.iter().copied())
            .collect();
        let cli = Cli::try_parse_from(argv).unwrap();
        served_paths(&Config::from_args(&cli.controller).unwrap())
    };
    let off = paths(&[]);
    let on = paths(&["--feature-gates=ALBTargetControlAgent=true"]);
    for path in [
        webhook::target_control::NAMESPACE_PATH,
        webhook::target_control::OBJECT_PATH,
    ] {
        assert!(!off.contains(&path), "{path} served without the gate");
        assert!(on.contains(&path), "{path} not served with the gate");
    }
    assert_eq!(on.len(), off.len() + 2);
}

#[test]
fn global_accelerator_validator_is_served_with_its_gate_outside_special_partitions() {
    let ga = webhook::aga_validator::PATH;
    let serves = |gate: bool, region: Option<&str>| {
        let mut cfg = config();
        // Set after parsing, so one parsed config serves every case.
        cfg.feature_gates
            .insert("GlobalAcceleratorController".into(), gate);
        cfg.aws_region = region.map(str::to_string);
        served_paths(&cfg).contains(&ga)
    };
    assert!(!serves(false, Some("us-west-2")));
    assert!(serves(true, Some("us-west-2")));
    assert!(
        serves(true, None),
        "a region not resolved yet is a standard one"
    );
    for special in [
        "cn-north-1",
        "us-gov-west-1",
        "us-iso-east-1",
        "eu-isoe-west-1",
    ] {
        assert!(!serves(true, Some(special)), "{special}");
    }
}
