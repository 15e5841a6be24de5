//! Shadow mode end to end: a normal controller and a `--dry-run` one (own lease id, own AWS key
//! and API token so their requests can be told apart) on the same API test server and moto. The
//! shadow's `awslbc_dry_run_pending_writes` is 0 while AWS matches, rises after an out-of-band
//! change, and falls back once the normal controller has healed it; the shadow itself sent no
//! write to moto and none to the API server (its own Lease aside). A shadow given the owner's
//! custom lease id moves to `<id>-dry-run` and never writes the owner's Lease.

use std::net::SocketAddr;

use k8s_openapi::api::coordination::v1::Lease;
use k8s_openapi::api::networking::v1::Ingress;
use kube::api::Api;

use crate::e2e_pod_gates::kubectl;
use crate::ingress::{inventory, DEMO, WAIT};
use crate::support::client::get_plain;
use crate::support::e2e::Cluster;
use crate::support::health_check::with_interval;
use crate::support::moto_cloud::{cloud, endpoints_flag};
use crate::support::process::Controller;
use crate::support::rbac::grants_for;
use crate::tgb::eventually;

const STACK: &str = "demo/app";
const SHADOW_KEY: &str = "shadowkey";

/// Sum of the shadow's pending-writes gauge (no series = 0), and the text for messages.
pub(crate) async fn pending(metrics: SocketAddr) -> (f64, String) {
    let r = get_plain(metrics, "/metrics").await.unwrap();
    let text = String::from_utf8_lossy(&r.body).to_string();
    let sum = text
        .lines()
        .filter(|l| l.starts_with("awslbc_dry_run_pending_writes{"))
        .map(|l| l.rsplit(' ').next().unwrap().parse::<f64>().unwrap())
        .sum();
    (sum, text)
}

fn flags(c: &crate::support::moto_cloud::Cloud) -> Vec<String> {
    vec![
        "--cluster-name=e2e".into(),
        "--aws-region=us-west-2".into(),
        format!("--aws-vpc-id={}", c.vpc),
        format!("--aws-api-endpoints={}", endpoints_flag(&c.moto)),
    ]
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn shadow_gauge_follows_drift_and_the_shadow_writes_nothing() {
    let c = cloud().await;
    let k8s = Cluster::start().await;
    c.moto.start_recording().await;
    let owner = k8s.controller(&flags(&c));
    owner.wait_for_log("became leader", WAIT);
    let ns = "apiVersion: v1\nkind: Namespace\nmetadata: {name: demo}\n";
    let (ok, out) = kubectl(&k8s.kubeconfig, &["create", "-f", "-"], Some(ns));
    assert!(ok, "{out}");
    let (ok, out) = kubectl(&k8s.kubeconfig, &["apply", "-f", "-"], Some(DEMO));
    assert!(ok, "{out}");
    let ingresses: Api<Ingress> = Api::namespaced(k8s.client.clone(), "demo");
    eventually("the owner deploys the Ingress", WAIT, || async {
        let ing = ingresses.get("app").await.unwrap();
        ing.status
            .and_then(|s| s.load_balancer)
            .and_then(|l| l.ingress)
            .is_some()
    })
    .await;

    // The shadow: its own kubeconfig token, AWS key and lease; resyncs every 2 s.
    let shadow_kubeconfig = k8s.dir.path().join("shadow-kubeconfig");
    k8s.server
        .write_kubeconfig_as(&shadow_kubeconfig, "shadow")
        .unwrap();
    let mut args = flags(&c);
    args.extend([
        format!("--webhook-cert-dir={}", k8s.dir.path().display()),
        format!("--kubeconfig={}", shadow_kubeconfig.display()),
        "--dry-run".into(),
        "--leader-election-id=aws-load-balancer-controller-dry-run".into(),
        "--sync-period=2s".into(),
    ]);
    let shadow = Controller::start_with_env(&args, &[("AWS_ACCESS_KEY_ID", SHADOW_KEY)]);
    shadow.wait_for_log("became leader", WAIT);
    let metrics = shadow.addr_of("metrics server listening");
    shadow.wait_for_log("successfully deployed model", WAIT);
    // In sync (once the owner's binding reconciles have settled too): nothing pending.
    eventually("the shadow's gauge is 0 in sync", WAIT, || async {
        pending(metrics).await.0 == 0.0
    })
    .await;

    // Out of band, with the owner stopped so that only the shadow sees it.
    let mut owner = owner;
    owner.sigterm();
    assert!(owner.wait_exit(WAIT).success());
    let inv = inventory(c.elb.as_ref(), c.ec2.as_ref(), STACK).await;
    let tg = &inv.tgs[0].0;
    let interval = tg.health_check.interval_seconds.unwrap();
    let drift = with_interval(tg, interval + 7);
    c.elb.modify_target_group(&tg.arn, &drift).await.unwrap();
    eventually("the shadow's gauge rises", WAIT, || async {
        pending(metrics).await.0 >= 1.0
    })
    .await;
    let (_, text) = pending(metrics).await;
    assert!(
        text.contains(
            "awslbc_dry_run_pending_writes{resource_kind=\"TargetGroup\",operation=\"ModifyTargetGroup\"} 1"
        ),
        "{text}"
    );
    let planned = shadow
        .logs
        .lock()
        .unwrap()
        .iter()
        .find(|l| l["msg"] == "dry-run: planned write" && l["operation"] == "ModifyTargetGroup")
        .cloned()
        .expect("a log line for the planned write");
    assert_eq!(planned["stack"], format!("ingress {STACK}"), "{planned}");
    assert_eq!(planned["resource"], tg.arn.as_str(), "{planned}");

    // The owner comes back and heals it; the shadow then sees nothing left to do.
    let owner = k8s.controller(&flags(&c));
    owner.wait_for_log("became leader", WAIT);
    eventually("the owner heals the drift", WAIT, || async {
        let inv = inventory(c.elb.as_ref(), c.ec2.as_ref(), STACK).await;
        inv.tgs[0].0.health_check.interval_seconds == Some(interval)
    })
    .await;
    eventually("the shadow's gauge falls back to 0", WAIT, || async {
        pending(metrics).await.0 == 0.0
    })
    .await;

    // The shadow sent reads only, to moto and to the API server (its Lease aside).
    let shadow_aws: Vec<String> = c
        .moto
        .recorded_requests()
        .into_iter()
        .filter(|(key, _)| key == SHADOW_KEY)
        .map(|(_, a)| a)
        .collect();
    assert!(!shadow_aws.is_empty(), "the shadow read nothing from moto");
    let writes: Vec<&String> = shadow_aws
        .iter()
        .filter(|a| !a.split(':').nth(1).unwrap_or("").starts_with("Describe"))
        .collect();
    assert!(writes.is_empty(), "the shadow wrote to AWS: {writes:?}");
    let kube_writes: Vec<String> = k8s
        .server
        .requests()
        .into_iter()
        .filter(|r| r.user.as_deref() == Some("shadow"))
        .filter(|r| !matches!(r.verb.as_str(), "get" | "list" | "watch"))
        .filter(|r| r.resource != "leases")
        .map(|r| r.describe())
        .collect();
    assert!(
        kube_writes.is_empty(),
        "the shadow wrote to the API server: {kube_writes:?}"
    );
    // And everything it did ask is allowed by the chart's read-only RBAC for dryRun (granted to
    // the shadow's own service account).
    let grants = grants_for(
        &crate::chart::docs(&crate::chart::render(&[
            "--set",
            "clusterName=e2e",
            "--set",
            "dryRun=true",
        ])),
        "kube-system",
        "aws-load-balancer-controller-dry-run",
    );
    let denied: Vec<String> = k8s
        .server
        .requests()
        .into_iter()
        .filter(|r| r.user.as_deref() == Some("shadow") && !grants.allows(r))
        .map(|r| r.describe())
        .collect();
    assert!(denied.is_empty(), "not allowed by dryRun RBAC: {denied:?}");
    drop(owner);
    drop(shadow);
}

/// A shadow given the owner's own custom `--leader-election-id` campaigns on `<id>-dry-run`: it
/// leads beside the owner holding `custom`, and never writes Lease `custom`, not even once the
/// owner has let it go.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn shadow_with_the_owners_custom_id_never_takes_the_owners_lease() {
    let c = cloud().await;
    let k8s = Cluster::start().await;
    let mut args = flags(&c);
    args.push("--leader-election-id=custom".into());
    let mut owner = k8s.controller(&args);
    let led = owner.wait_for_log("became leader", WAIT);
    assert_eq!(led["lease"], "custom", "{led}");

    // The shadow: its own kubeconfig token and AWS key, the owner's id.
    let shadow_kubeconfig = k8s.dir.path().join("shadow-kubeconfig");
    k8s.server
        .write_kubeconfig_as(&shadow_kubeconfig, "shadow")
        .unwrap();
    let mut args = flags(&c);
    args.extend([
        format!("--webhook-cert-dir={}", k8s.dir.path().display()),
        format!("--kubeconfig={}", shadow_kubeconfig.display()),
        "--dry-run".into(),
        "--leader-election-id=custom".into(),
    ]);
    let shadow = Controller::start_with_env(&args, &[("AWS_ACCESS_KEY_ID", SHADOW_KEY)]);
    // It leads at once, on a Lease of its own, while the owner holds `custom`.
    let led = shadow.wait_for_log("became leader", WAIT);
    assert_eq!(led["lease"], "custom-dry-run", "{led}");
    let identity = led["identity"].as_str().unwrap().to_string();

    // The owner goes (and releases `custom`); the shadow keeps renewing its own Lease only.
    owner.sigterm();
    assert!(owner.wait_exit(WAIT).success());
    let renewals = || {
        k8s.server
            .requests()
            .into_iter()
            .filter(|r| r.user.as_deref() == Some("shadow") && r.resource == "leases")
            .filter(|r| matches!(r.verb.as_str(), "update" | "patch"))
            .filter(|r| r.name.as_deref() == Some("custom-dry-run"))
            .count()
    };
    let before = renewals();
    eventually("the shadow renews its Lease twice more", WAIT, || async {
        renewals() >= before + 2
    })
    .await;

    // No write of the shadow's named `custom`, and one create only (its own Lease: a create's
    // name is in its body, not in the request line).
    let lease_writes: Vec<_> = k8s
        .server
        .requests()
        .into_iter()
        .filter(|r| r.user.as_deref() == Some("shadow") && r.resource == "leases")
        .filter(|r| !matches!(r.verb.as_str(), "get" | "list" | "watch"))
        .collect();
    let owners: Vec<String> = lease_writes
        .iter()
        .filter(|r| r.name.as_deref() != Some("custom-dry-run"))
        .filter(|r| r.verb != "create")
        .map(|r| r.describe())
        .collect();
    assert!(
        owners.is_empty(),
        "the shadow wrote another Lease: {owners:?}"
    );
    let creates = lease_writes.iter().filter(|r| r.verb == "create").count();
    assert_eq!(creates, 1, "the shadow created more than its own Lease");
    let leases: Api<Lease> = Api::namespaced(k8s.client.clone(), "kube-system");
    let own = leases.get("custom-dry-run").await.unwrap();
    assert_eq!(
        own.spec.and_then(|s| s.holder_identity).as_deref(),
        Some(identity.as_str())
    );
    let owners = leases.get("custom").await.unwrap();
    assert_ne!(
        owners.spec.and_then(|s| s.holder_identity).as_deref(),
        Some(identity.as_str()),
        "the shadow holds the owner's Lease"
    );
    drop(shadow);
}
