//! AWS set-up failing (wrong credentials, region or endpoint) with the API server reachable:
//! the admission webhooks keep answering and `/readyz` stays webhook-only, while the failure
//! shows as `awslbc_aws_setup_ready 0` and one `AWSSetupFailed` Warning event on the
//! controller's own Pod (not one per retry). Once AWS answers, the gauge turns 1 and an
//! `AWSSetupSucceeded` Normal event follows.

use std::time::Duration;

use k8s_openapi::api::core::v1::{Namespace, Pod};
use kube::api::{Api, PostParams};

use crate::ingress::events_of;
use crate::support::client::{self, get_plain, tls_config};
use crate::support::e2e::Cluster;
use crate::support::moto::{free_port, Moto};
use crate::support::moto_cloud::raw_ec2;
use crate::support::process::Controller;
use crate::support::service_review;
use crate::tgb::eventually;

const NS: &str = "kube-system";
const POD: &str = "aws-load-balancer-controller-7d9f8-x2x4p";
const FAILED_LOG: &str = "cannot set up the AWS clients";
/// Long enough for the set-up retry backoff (0.5 s doubling) to come round after AWS answers.
const WAIT: Duration = Duration::from_secs(90);

async fn scrape(addr: std::net::SocketAddr) -> String {
    String::from_utf8(get_plain(addr, "/metrics").await.unwrap().body).unwrap()
}

fn gauge(body: &str) -> Option<f64> {
    body.lines().find_map(|l| {
        l.strip_prefix("awslbc_aws_setup_ready ")
            .and_then(|v| v.parse().ok())
    })
}

/// `(type, note)` of the events with `reason` on the controller's Pod.
async fn pod_events(client: &kube::Client, reason: &str) -> Vec<(String, String)> {
    events_of(client, NS, POD)
        .await
        .into_iter()
        .filter(|(_, r, _)| r == reason)
        .map(|(t, _, note)| (t, note))
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn aws_setup_failure_keeps_webhooks_serving_and_shows_in_metric_and_pod_events() {
    let k8s = Cluster::start().await;
    let namespaces: Api<Namespace> = Api::all(k8s.client.clone());
    let ns: Namespace =
        serde_json::from_value(serde_json::json!({"metadata": {"name": NS}})).unwrap();
    let _ = namespaces.create(&PostParams::default(), &ns).await;
    let pods: Api<Pod> = Api::namespaced(k8s.client.clone(), NS);
    let pod: Pod = serde_json::from_value(serde_json::json!({
        "metadata": {"name": POD, "namespace": NS},
        "spec": {"containers": [{"name": "controller", "image": "controller:test"}]}
    }))
    .unwrap();
    pods.create(&PostParams::default(), &pod).await.unwrap();

    // AWS on a port nothing listens on yet; the VPC is found by tag once it does.
    let port = free_port();
    let endpoint = format!("http://127.0.0.1:{port}");
    let args = vec![
        format!("--webhook-cert-dir={}", k8s.dir.path().display()),
        format!("--kubeconfig={}", k8s.kubeconfig.display()),
        "--cluster-name=e2e".into(),
        "--aws-region=us-west-2".into(),
        "--aws-vpc-tags=albc-e2e=aws-setup".into(),
        "--aws-max-retries=0".into(),
        format!("--aws-api-endpoints=elasticloadbalancing={endpoint},ec2={endpoint}"),
    ];
    let ctl = Controller::start_with_env(&args, &[("POD_NAME", POD), ("POD_NAMESPACE", NS)]);
    let webhook = ctl.addr_of("webhook server listening");
    let metrics = ctl.addr_of("metrics server listening");
    let probes = ctl.addr_of("health probe server listening");
    let line = ctl.wait_for_log(FAILED_LOG, WAIT);
    assert!(line["retry_in"].is_string(), "{line}");

    // Admissions keep being answered.
    let cfg = tls_config(&[&k8s.bundle.ca.cert_pem], &[&rustls::version::TLS13]);
    let review = serde_json::to_vec(&service_review(
        "u-1",
        "CREATE",
        serde_json::json!({"spec": {"type": "LoadBalancer"}}),
    ))
    .unwrap();
    let r = client::post(webhook, cfg.clone(), "/mutate-v1-service", &review)
        .await
        .unwrap();
    assert_eq!(r.status, 200);
    let answer = r.json();
    assert_eq!(answer["response"]["uid"], "u-1", "{answer}");
    assert_eq!(answer["response"]["allowed"], true, "{answer}");

    // Ready all the same: /readyz is about the webhooks, not AWS.
    eventually("/readyz 200 while AWS set-up fails", WAIT, || async {
        get_plain(probes, "/readyz")
            .await
            .is_ok_and(|r| r.status == 200)
    })
    .await;

    // The failure is visible: the gauge, and one Warning event on the Pod.
    let body = scrape(metrics).await;
    assert_eq!(gauge(&body), Some(0.0), "{body}");
    assert!(
        body.contains("# TYPE awslbc_aws_setup_ready gauge"),
        "{body}"
    );
    eventually(
        "an AWSSetupFailed Warning event on the Pod",
        WAIT,
        || async { !pod_events(&k8s.client, "AWSSetupFailed").await.is_empty() },
    )
    .await;
    // A few more failed attempts publish no further event.
    eventually("three failed set-up attempts", WAIT, || async {
        ctl.count_logs(FAILED_LOG) >= 3
    })
    .await;
    let failed = pod_events(&k8s.client, "AWSSetupFailed").await;
    assert_eq!(failed.len(), 1, "one event, not one per retry: {failed:?}");
    let (type_, note) = &failed[0];
    assert_eq!(type_, "Warning");
    assert!(note.contains(FAILED_LOG), "{note}");
    assert!(
        pod_events(&k8s.client, "AWSSetupSucceeded")
            .await
            .is_empty(),
        "no recovery yet"
    );
    let body = scrape(metrics).await;
    assert_eq!(gauge(&body), Some(0.0), "{body}");

    // AWS starts answering, with the tagged VPC: the next attempt succeeds.
    let moto = Moto::start_on(port);
    let ec2 = raw_ec2(&moto.endpoint);
    let vpc = ec2
        .create_vpc()
        .cidr_block("10.7.0.0/16")
        .send()
        .await
        .unwrap();
    let vpc = vpc.vpc().unwrap().vpc_id().unwrap().to_string();
    let tag = aws_sdk_ec2::types::Tag::builder()
        .key("albc-e2e")
        .value("aws-setup")
        .build();
    ec2.create_tags()
        .resources(&vpc)
        .tags(tag)
        .send()
        .await
        .unwrap();
    let ready = ctl.wait_for_log("AWS clients ready", WAIT);
    assert_eq!(ready["vpc"], vpc.as_str(), "{ready}");
    eventually("awslbc_aws_setup_ready 1", WAIT, || async {
        gauge(&scrape(metrics).await) == Some(1.0)
    })
    .await;
    eventually(
        "an AWSSetupSucceeded Normal event on the Pod",
        WAIT,
        || async {
            pod_events(&k8s.client, "AWSSetupSucceeded")
                .await
                .iter()
                .any(|(t, note)| t == "Normal" && note.contains(&vpc))
        },
    )
    .await;
    // Still answering admissions.
    let r = client::post(webhook, cfg, "/mutate-v1-service", &review)
        .await
        .unwrap();
    assert_eq!(r.status, 200);
    drop(ctl);
    drop(moto);
    k8s.server.stop().await;
}
