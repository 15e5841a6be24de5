//! Controller-managed webhook certificate against the API test server: Secret created, caBundle
//! patched in both configurations, rotation under an admission loop with zero failures, reuse on
//! restart.

use crate::support::client::get_plain;
use crate::support::process::Controller;
use base64::Engine;
use k8s_openapi::api::admissionregistration::v1::{
    MutatingWebhookConfiguration, ValidatingWebhookConfiguration,
};
use k8s_openapi::api::core::v1::{Namespace, Pod, Secret};
use kube::api::{Api, PostParams};
use kube_test_apiserver::{Options, TestApiServer};
use serde_json::json;
use std::time::{Duration, Instant};

pub(crate) const SVC: &str = "aws-load-balancer-webhook-service";
pub(crate) const CONFIG: &str = "aws-load-balancer-webhook";

pub(crate) fn start_controller(
    server: &TestApiServer,
    kubeconfig: &std::path::Path,
    extra: &[&str],
) -> Controller {
    let mut args = vec![
        "--cluster-name=e2e".to_string(),
        format!("--kubeconfig={}", kubeconfig.display()),
        "--webhook-cert-secret-name=aws-load-balancer-tls".into(),
        "--webhook-cert-namespace=kube-system".into(),
        "--webhook-ca-propagation-delay=200ms".into(),
    ];
    args.extend(extra.iter().map(|s| s.to_string()));
    let ctl = Controller::start(&args);
    server.set_service_endpoint("kube-system", SVC, ctl.addr_of("webhook server listening"));
    ctl
}

pub(crate) async fn wait_ready(ctl: &Controller) {
    let probes = ctl.addr_of("health probe server listening");
    let deadline = Instant::now() + Duration::from_secs(20);
    while get_plain(probes, "/readyz")
        .await
        .map(|r| r.status)
        .unwrap_or(0)
        != 200
    {
        assert!(Instant::now() < deadline, "controller never became ready");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

pub(crate) fn ca_bundles(value: &serde_json::Value) -> Vec<String> {
    value["webhooks"]
        .as_array()
        .unwrap()
        .iter()
        .map(|w| {
            w["clientConfig"]["caBundle"]
                .as_str()
                .unwrap_or_default()
                .to_string()
        })
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn managed_certificate_lifecycle() {
    let server = TestApiServer::start(Options::default()).await.unwrap();
    let client = server.client();
    let dir = tempfile::tempdir().unwrap();
    let kubeconfig = dir.path().join("kubeconfig");
    server.write_kubeconfig(&kubeconfig).unwrap();
    let crds: Api<k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition> =
        Api::all(client.clone());
    for crd in aws_load_balancer_controller::crd::all_crds() {
        crds.create(&PostParams::default(), &crd).await.unwrap();
    }
    // As the chart installs them: no caBundle. The pod webhook fails closed here so that any TLS
    // failure during rotation shows up as a failed pod creation.
    let hook = |name: &str, path: &str| {
        json!({"name": name, "admissionReviewVersions": ["v1"], "sideEffects": "None", "failurePolicy": "Fail",
            "clientConfig": {"service": {"name": SVC, "namespace": "kube-system", "path": path}},
            "namespaceSelector": {"matchLabels": {"elbv2.k8s.aws/pod-readiness-gate-inject": "enabled"}},
            "rules": [{"apiGroups": [""], "apiVersions": ["v1"], "operations": ["CREATE"], "resources": ["pods"]}]})
    };
    let mwc: Api<MutatingWebhookConfiguration> = Api::all(client.clone());
    let vwc: Api<ValidatingWebhookConfiguration> = Api::all(client.clone());
    let m = json!({"apiVersion": "admissionregistration.k8s.io/v1", "kind": "MutatingWebhookConfiguration",
        "metadata": {"name": CONFIG}, "webhooks": [hook("mpod.elbv2.k8s.aws", "/mutate-v1-pod")]});
    mwc.create(&PostParams::default(), &serde_json::from_value(m).unwrap())
        .await
        .unwrap();
    let v = json!({"apiVersion": "admissionregistration.k8s.io/v1", "kind": "ValidatingWebhookConfiguration",
        "metadata": {"name": CONFIG}, "webhooks": [hook("vnoop.elbv2.k8s.aws", "/no-such-path-validated-elsewhere")]});
    let mut v: ValidatingWebhookConfiguration = serde_json::from_value(v).unwrap();
    // Keep the validating one out of the pod path; only its caBundle matters here.
    v.webhooks.as_mut().unwrap()[0].rules.as_mut().unwrap()[0].resources =
        Some(vec!["configmaps".into()]);
    vwc.create(&PostParams::default(), &v).await.unwrap();
    let namespaces: Api<Namespace> = Api::all(client.clone());
    let ns = json!({"metadata": {"name": "shop", "labels": {"elbv2.k8s.aws/pod-readiness-gate-inject": "enabled"}}});
    namespaces
        .create(&PostParams::default(), &serde_json::from_value(ns).unwrap())
        .await
        .unwrap();

    // 1. Start: Secret created, caBundle patched everywhere, served certificate trusted by it.
    let ctl = start_controller(
        &server,
        &kubeconfig,
        &[
            "--webhook-cert-renew-before=9000h",
            "--webhook-cert-check-interval=300ms",
        ],
    );
    wait_ready(&ctl).await;
    let secrets: Api<Secret> = Api::namespaced(client.clone(), "kube-system");
    let secret = secrets.get("aws-load-balancer-tls").await.unwrap();
    assert_eq!(secret.type_.as_deref(), Some("kubernetes.io/tls"));
    let data = secret.data.unwrap();
    for key in ["ca.crt", "tls.crt", "tls.key"] {
        assert!(data.contains_key(key), "Secret lacks {key}");
    }
    let ca = base64::engine::general_purpose::STANDARD.encode(&data["ca.crt"].0);
    assert_eq!(
        ca_bundles(&serde_json::to_value(mwc.get(CONFIG).await.unwrap()).unwrap()),
        vec![ca.clone()]
    );
    assert_eq!(
        ca_bundles(&serde_json::to_value(vwc.get(CONFIG).await.unwrap()).unwrap()),
        vec![ca.clone()]
    );

    // 2. Rotation every check (renew-before is longer than the validity) under an admission loop.
    let pods: Api<Pod> = Api::namespaced(client.clone(), "shop");
    let first_cert = data["tls.crt"].clone();
    let (mut created, mut failed, mut rotations) =
        (0, Vec::new(), std::collections::HashSet::new());
    let end = Instant::now() + Duration::from_secs(4);
    let mut i = 0;
    while Instant::now() < end {
        i += 1;
        let pod = json!({"metadata": {"name": format!("p-{i}")}, "spec": {"containers": [{"name": "c", "image": "x"}]}});
        match pods
            .create(
                &PostParams::default(),
                &serde_json::from_value(pod).unwrap(),
            )
            .await
        {
            Ok(_) => created += 1,
            Err(e) => failed.push(e.to_string()),
        }
        if let Ok(s) = secrets.get("aws-load-balancer-tls").await {
            rotations.insert(s.data.unwrap()["tls.crt"].0.clone());
        }
    }
    assert!(
        failed.is_empty(),
        "{} of {} admissions failed during rotation: {:?}",
        failed.len(),
        created + failed.len(),
        &failed[..failed.len().min(3)]
    );
    assert!(
        rotations.len() >= 3,
        "expected several rotations in 4 s, saw {}",
        rotations.len()
    );
    assert!(
        created > 20,
        "the loop made too few calls ({created}) to mean anything"
    );
    assert_ne!(
        secrets
            .get("aws-load-balancer-tls")
            .await
            .unwrap()
            .data
            .unwrap()["tls.crt"],
        first_cert
    );
    // The CA was kept: renewal needed no caBundle change.
    assert_eq!(
        ca_bundles(&serde_json::to_value(mwc.get(CONFIG).await.unwrap()).unwrap()),
        vec![ca.clone()]
    );
    drop(ctl);

    // 3. Restart with normal renewal: the stored certificate is reused, not regenerated.
    let before = secrets.get("aws-load-balancer-tls").await.unwrap();
    let ctl = start_controller(&server, &kubeconfig, &[]);
    wait_ready(&ctl).await;
    let pod = json!({"metadata": {"name": "after-restart"}, "spec": {"containers": [{"name": "c", "image": "x"}]}});
    pods.create(
        &PostParams::default(),
        &serde_json::from_value(pod).unwrap(),
    )
    .await
    .expect("admission after restart");
    let after = secrets.get("aws-load-balancer-tls").await.unwrap();
    assert_eq!(
        before.metadata.resource_version, after.metadata.resource_version,
        "the Secret must not be rewritten"
    );
    drop(ctl);
    server.stop().await;
}

/// Upstream's chart leaves the Secret with `ca.crt`, `tls.crt` and `tls.key` (no `ca.key`) and
/// its CA in `caBundle`, while its pods still serve that pair. The controller adopts it as it is
/// (no new CA, no bundle change, the webhook configurations' Helm ownership copied onto the
/// Secret) and, once the pair is due, renews under a CA of its own that joins the bundle beside
/// upstream's.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn upstreams_secret_without_a_ca_key_is_adopted_then_renewed_beside_its_ca() {
    let server = TestApiServer::start(Options::default()).await.unwrap();
    let client = server.client();
    let dir = tempfile::tempdir().unwrap();
    let kubeconfig = dir.path().join("kubeconfig");
    server.write_kubeconfig(&kubeconfig).unwrap();
    let crds: Api<k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition> =
        Api::all(client.clone());
    for crd in aws_load_balancer_controller::crd::all_crds() {
        crds.create(&PostParams::default(), &crd).await.unwrap();
    }
    // Upstream's pair: a 30-day CA and serving certificate for the webhook Service.
    let upstream = crate::support::test_bundle(None);
    let b64 = |s: &str| base64::engine::general_purpose::STANDARD.encode(s);
    let helm = json!({"meta.helm.sh/release-name": "aws-load-balancer-controller",
        "meta.helm.sh/release-namespace": "kube-system"});
    let hook = json!({"name": "mpod.elbv2.k8s.aws", "admissionReviewVersions": ["v1"], "sideEffects": "None",
        "failurePolicy": "Fail",
        "clientConfig": {"caBundle": b64(&upstream.ca.cert_pem),
            "service": {"name": SVC, "namespace": "kube-system", "path": "/mutate-v1-pod"}},
        "namespaceSelector": {"matchLabels": {"elbv2.k8s.aws/pod-readiness-gate-inject": "enabled"}},
        "rules": [{"apiGroups": [""], "apiVersions": ["v1"], "operations": ["CREATE"], "resources": ["pods"]}]});
    let mwc: Api<MutatingWebhookConfiguration> = Api::all(client.clone());
    let m = json!({"metadata": {"name": CONFIG, "annotations": helm,
        "labels": {"app.kubernetes.io/managed-by": "Helm"}}, "webhooks": [hook]});
    mwc.create(&PostParams::default(), &serde_json::from_value(m).unwrap())
        .await
        .unwrap();
    let secrets: Api<Secret> = Api::namespaced(client.clone(), "kube-system");
    // Left without ownership (as an older build of this controller wrote it) to see it copied.
    let s = json!({"metadata": {"name": "aws-load-balancer-tls"}, "type": "kubernetes.io/tls",
        "data": {"ca.crt": b64(&upstream.ca.cert_pem), "tls.crt": b64(&upstream.cert_pem),
            "tls.key": b64(&upstream.key_pem)}});
    secrets
        .create(&PostParams::default(), &serde_json::from_value(s).unwrap())
        .await
        .unwrap();
    let namespaces: Api<Namespace> = Api::all(client.clone());
    let ns = json!({"metadata": {"name": "shop", "labels": {"elbv2.k8s.aws/pod-readiness-gate-inject": "enabled"}}});
    namespaces
        .create(&PostParams::default(), &serde_json::from_value(ns).unwrap())
        .await
        .unwrap();
    let pods: Api<Pod> = Api::namespaced(client.clone(), "shop");
    let create_pod = |name: &str| {
        serde_json::from_value::<Pod>(
            json!({"metadata": {"name": name}, "spec": {"containers": [{"name": "c", "image": "x"}]}}),
        )
        .unwrap()
    };
    let bundle_now =
        || async { ca_bundles(&serde_json::to_value(mwc.get(CONFIG).await.unwrap()).unwrap()) };

    // 1. Not due: adopted as it is. Same data, same bundle, ownership copied.
    let ctl = start_controller(&server, &kubeconfig, &["--webhook-cert-renew-before=24h"]);
    wait_ready(&ctl).await;
    pods.create(&PostParams::default(), &create_pod("served-by-adopted"))
        .await
        .expect("admission with upstream's pair served");
    let s = secrets.get("aws-load-balancer-tls").await.unwrap();
    let data = s.data.clone().unwrap();
    assert_eq!(data["tls.crt"].0, upstream.cert_pem.as_bytes());
    assert_eq!(data["ca.crt"].0, upstream.ca.cert_pem.as_bytes());
    assert!(!data.contains_key("ca.key"), "no CA was minted");
    let annotations = s.metadata.annotations.unwrap_or_default();
    assert_eq!(
        annotations
            .get("meta.helm.sh/release-name")
            .map(String::as_str),
        Some("aws-load-balancer-controller")
    );
    assert_eq!(
        s.metadata.labels.unwrap_or_default()["app.kubernetes.io/managed-by"],
        "Helm"
    );
    assert_eq!(bundle_now().await, vec![b64(&upstream.ca.cert_pem)]);
    drop(ctl);

    // 2. Due (renew-before past its 30 days): a CA of our own, added beside upstream's before
    // it is served, so a pod still serving upstream's pair stays trusted.
    let ctl = start_controller(&server, &kubeconfig, &["--webhook-cert-renew-before=1000h"]);
    wait_ready(&ctl).await;
    pods.create(&PostParams::default(), &create_pod("served-by-renewed"))
        .await
        .expect("admission with the renewed pair served");
    let data = secrets
        .get("aws-load-balancer-tls")
        .await
        .unwrap()
        .data
        .unwrap();
    assert!(data.contains_key("ca.key"), "renewed under a CA of our own");
    let ours = String::from_utf8(data["ca.crt"].0.clone()).unwrap();
    assert_ne!(ours, upstream.ca.cert_pem);
    let bundle = base64::engine::general_purpose::STANDARD
        .decode(&bundle_now().await[0])
        .unwrap();
    let bundle = String::from_utf8(bundle).unwrap();
    assert!(bundle.contains(ours.trim()), "our CA is trusted");
    assert!(
        bundle.contains(upstream.ca.cert_pem.trim()),
        "upstream's CA stays trusted while its pods may serve"
    );
    drop(ctl);
    server.stop().await;
}
