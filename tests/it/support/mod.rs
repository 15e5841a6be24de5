//! Shared test helpers: throwaway certificates, a raw HTTPS client, and the controller process.

pub mod client;
pub mod e2e;
pub mod freeze_proxy;
pub mod ga_server;
pub mod gateway;
pub mod gateway_crds;
pub mod health_check;
pub mod inventory;
pub mod moto;
pub mod moto_cloud;
pub mod nlb_seed;
pub mod process;
pub mod prom_text;
pub mod rbac;

use std::path::Path;
use webhook_certs::{generate_ca, issue_serving, Bundle, Ca, ServingSpec};

/// A CA plus a serving certificate valid for 127.0.0.1 and localhost.
pub fn test_bundle(ca: Option<&Ca>) -> Bundle {
    let now = time::OffsetDateTime::now_utc();
    let ca = match ca {
        Some(ca) => ca.clone(),
        None => generate_ca(30, now).expect("CA"),
    };
    let mut spec = ServingSpec::new("aws-load-balancer-webhook-service", "kube-system");
    spec.extra_sans = vec!["localhost".into(), "127.0.0.1".into()];
    spec.days = 30;
    issue_serving(&ca, &spec, now).expect("serving cert")
}

/// Writes tls.crt / tls.key atomically (write aside, then rename), as the kubelet's atomic writer does.
pub fn write_pair_atomic(dir: &Path, b: &Bundle) {
    for (name, body) in [("tls.key", &b.key_pem), ("tls.crt", &b.cert_pem)] {
        let tmp = dir.join(format!(".{name}.tmp"));
        std::fs::write(&tmp, body).unwrap();
        std::fs::rename(&tmp, dir.join(name)).unwrap();
    }
}

/// Writes tls.crt then tls.key in place, leaving a window where they do not match.
pub fn write_pair_torn(dir: &Path, b: &Bundle, gap: std::time::Duration) {
    std::fs::write(dir.join("tls.crt"), &b.cert_pem).unwrap();
    std::thread::sleep(gap);
    std::fs::write(dir.join("tls.key"), &b.key_pem).unwrap();
}

/// An AdmissionReview for a Service.
pub fn service_review(uid: &str, operation: &str, svc: serde_json::Value) -> serde_json::Value {
    serde_json::json!({
        "apiVersion": "admission.k8s.io/v1",
        "kind": "AdmissionReview",
        "request": {
            "uid": uid,
            "kind": {"group": "", "version": "v1", "kind": "Service"},
            "resource": {"group": "", "version": "v1", "resource": "services"},
            "operation": operation,
            "namespace": "default",
            "object": svc,
        }
    })
}
