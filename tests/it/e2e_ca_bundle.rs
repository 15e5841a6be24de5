//! The caBundle under a managed certificate, with the real binary: a `kubectl replace` that drops
//! it is healed within seconds (both configurations are watched), and a replica that starts while
//! another is rotating the CA keeps old and new CA in the bundle until the rotation is through.

use crate::e2e_managed_cert::{ca_bundles, start_controller, wait_ready, CONFIG, SVC};
use crate::e2e_pod_gates::kubectl;
use crate::tgb::eventually;
use base64::Engine;
use k8s_openapi::api::admissionregistration::v1::{
    MutatingWebhookConfiguration, ValidatingWebhookConfiguration,
};
use k8s_openapi::api::core::v1::Secret;
use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
use k8s_openapi::ByteString;
use kube::api::{Api, PostParams};
use kube_test_apiserver::{Options, TestApiServer};
use serde_json::{json, Value};
use std::time::{Duration, Instant};
use webhook_certs::{generate_ca, issue_serving, ServingSpec};

fn b64(pem: &str) -> String {
    base64::engine::general_purpose::STANDARD.encode(pem)
}

/// One webhook per configuration, as the chart installs them, with `bundle` as caBundle (or none).
fn config(kind: &str, bundle: Option<&str>) -> Value {
    let mut client =
        json!({"service": {"name": SVC, "namespace": "kube-system", "path": "/mutate-v1-pod"}});
    if let Some(b) = bundle {
        client["caBundle"] = json!(b);
    }
    json!({"apiVersion": "admissionregistration.k8s.io/v1", "kind": kind, "metadata": {"name": CONFIG},
        "webhooks": [{"name": "mpod.elbv2.k8s.aws", "admissionReviewVersions": ["v1"], "sideEffects": "None",
            "failurePolicy": "Ignore", "clientConfig": client,
            "rules": [{"apiGroups": [""], "apiVersions": ["v1"], "operations": ["CREATE"], "resources": ["configmaps"]}]}]})
}

/// An API test server with our CRDs and both configurations (`bundle` as their caBundle).
async fn cluster(bundle: Option<&str>) -> (TestApiServer, tempfile::TempDir, std::path::PathBuf) {
    let server = TestApiServer::start(Options::default()).await.unwrap();
    let client = server.client();
    let dir = tempfile::tempdir().unwrap();
    let kubeconfig = dir.path().join("kubeconfig");
    server.write_kubeconfig(&kubeconfig).unwrap();
    let crds: Api<CustomResourceDefinition> = Api::all(client.clone());
    for crd in aws_load_balancer_controller::crd::all_crds() {
        crds.create(&PostParams::default(), &crd).await.unwrap();
    }
    let mwc: Api<MutatingWebhookConfiguration> = Api::all(client.clone());
    let vwc: Api<ValidatingWebhookConfiguration> = Api::all(client.clone());
    let pp = PostParams::default();
    let m = config("MutatingWebhookConfiguration", bundle);
    mwc.create(&pp, &serde_json::from_value(m).unwrap())
        .await
        .unwrap();
    let v = config("ValidatingWebhookConfiguration", bundle);
    vwc.create(&pp, &serde_json::from_value(v).unwrap())
        .await
        .unwrap();
    (server, dir, kubeconfig)
}

async fn bundles(client: &kube::Client) -> (Vec<String>, Vec<String>) {
    let mwc: Api<MutatingWebhookConfiguration> = Api::all(client.clone());
    let vwc: Api<ValidatingWebhookConfiguration> = Api::all(client.clone());
    (
        ca_bundles(&serde_json::to_value(mwc.get(CONFIG).await.unwrap()).unwrap()),
        ca_bundles(&serde_json::to_value(vwc.get(CONFIG).await.unwrap()).unwrap()),
    )
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_replaced_configuration_gets_its_ca_bundle_back_within_seconds() {
    let (server, _dir, kubeconfig) = cluster(None).await;
    let client = server.client();
    // The periodic check is a minute away: only the watch can heal in time.
    let ctl = start_controller(&server, &kubeconfig, &[]);
    wait_ready(&ctl).await;
    let secrets: Api<Secret> = Api::namespaced(client.clone(), "kube-system");
    let ca = secrets
        .get("aws-load-balancer-tls")
        .await
        .unwrap()
        .data
        .unwrap()["ca.crt"]
        .clone();
    let ca = base64::engine::general_purpose::STANDARD.encode(&ca.0);
    assert_eq!(bundles(&client).await, (vec![ca.clone()], vec![ca.clone()]));

    // `kubectl replace` with the manifest as shipped: no caBundle.
    let manifest = serde_json::to_string(&config("MutatingWebhookConfiguration", None)).unwrap();
    let (ok, out) = kubectl(&kubeconfig, &["replace", "-f", "-"], Some(&manifest));
    assert!(ok, "{out}");
    let wiped = Instant::now();
    eventually(
        "the mutating caBundle is restored",
        Duration::from_secs(5),
        || async { bundles(&client).await.0 == vec![ca.clone()] },
    )
    .await;
    let healed_in = wiped.elapsed();
    ctl.wait_for_log("restored the webhook caBundle", Duration::from_secs(1));

    // A PUT of the validating one with someone else's CA: ours is back beside it.
    let vwc: Api<ValidatingWebhookConfiguration> = Api::all(client.clone());
    let mut v = vwc.get(CONFIG).await.unwrap();
    let foreign = generate_ca(30, time::OffsetDateTime::now_utc())
        .unwrap()
        .cert_pem;
    v.webhooks.as_mut().unwrap()[0].client_config.ca_bundle =
        Some(ByteString(foreign.clone().into_bytes()));
    vwc.replace(CONFIG, &PostParams::default(), &v)
        .await
        .unwrap();
    eventually(
        "the validating caBundle trusts our CA again",
        Duration::from_secs(5),
        || async {
            let got = bundles(&client).await.1;
            let pem = String::from_utf8(
                base64::engine::general_purpose::STANDARD
                    .decode(&got[0])
                    .unwrap(),
            )
            .unwrap();
            let ours = String::from_utf8(
                base64::engine::general_purpose::STANDARD
                    .decode(&ca)
                    .unwrap(),
            )
            .unwrap();
            pem.contains(ours.trim())
        },
    )
    .await;
    println!("caBundle healed {healed_in:?} after kubectl replace");
    drop(ctl);
    server.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_replica_starting_during_ca_rotation_keeps_old_and_new_ca() {
    // Another replica is rotating: the Secret holds the new CA, the bundle trusts new and old
    // while replicas still serve from the old one.
    let now = time::OffsetDateTime::now_utc();
    let old = generate_ca(3650, now - time::Duration::days(30)).unwrap();
    let new = generate_ca(3650, now).unwrap();
    let spec = ServingSpec::new(SVC, "kube-system");
    let serving = issue_serving(&new, &spec, now).unwrap();
    let rotating = b64(&format!("{}{}", new.cert_pem, old.cert_pem));
    let (server, _dir, kubeconfig) = cluster(Some(&rotating)).await;
    let client = server.client();
    let secrets: Api<Secret> = Api::namespaced(client.clone(), "kube-system");
    let data = [
        ("ca.crt", &new.cert_pem),
        ("ca.key", &new.key_pem),
        ("tls.crt", &serving.cert_pem),
        ("tls.key", &serving.key_pem),
    ]
    .into_iter()
    .map(|(k, v)| (k.to_string(), ByteString(v.clone().into_bytes())))
    .collect();
    let secret = Secret {
        metadata: k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta {
            name: Some("aws-load-balancer-tls".into()),
            namespace: Some("kube-system".into()),
            ..Default::default()
        },
        type_: Some("kubernetes.io/tls".into()),
        data: Some(data),
        ..Default::default()
    };
    secrets
        .create(&PostParams::default(), &secret)
        .await
        .unwrap();

    let ctl = start_controller(&server, &kubeconfig, &["--webhook-cert-check-interval=3s"]);
    wait_ready(&ctl).await;
    let has = |bundle: &str, pem: &str| {
        let bundle = base64::engine::general_purpose::STANDARD
            .decode(bundle)
            .unwrap();
        String::from_utf8(bundle).unwrap().contains(pem.trim())
    };
    // Through the first check interval both CAs stay trusted.
    let until = Instant::now() + Duration::from_millis(1500);
    while Instant::now() < until {
        let (m, v) = bundles(&client).await;
        for b in [&m[0], &v[0]] {
            assert!(has(b, &new.cert_pem), "the new CA was dropped");
            assert!(
                has(b, &old.cert_pem),
                "a starting replica cut the bundle to one CA during rotation"
            );
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    // Once every replica has had a check to adopt the new CA, the old one is retired.
    eventually("the old CA is retired", Duration::from_secs(8), || async {
        let (m, v) = bundles(&client).await;
        [&m[0], &v[0]]
            .iter()
            .all(|b| has(b, &new.cert_pem) && !has(b, &old.cert_pem))
    })
    .await;
    drop(ctl);
    server.stop().await;
}
