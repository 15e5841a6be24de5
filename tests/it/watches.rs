//! One watch per kind for the whole process, counted on the API test server's request log: the
//! real binary, leading with every controller on, opens exactly one watch per kind it reads
//! (one per namespace and kind under `--watch-namespace`), where it used to open three of
//! TargetGroupBindings and Services. And a standby keeps those watches warm: when it takes the
//! Lease it acts without listing anything again.

use std::collections::BTreeMap;
use std::time::{Duration, Instant};

use crate::support::e2e::Cluster;
use crate::support::moto_cloud::cloud;
use crate::support::process::Controller;
use crate::tgb::{eventually, ip_tg, WAIT};
use aws_load_balancer_controller::crd::TargetGroupBinding;
use kube::api::{Api, DeleteParams};
use kube_test_apiserver::RequestRecord;

/// Every kind the leader reads with every controller on (EndpointSlices, not Endpoints).
const KINDS: [&str; 9] = [
    "endpointslices",
    "ingressclasses",
    "ingressclassparams",
    "ingresses",
    "namespaces",
    "nodes",
    "pods",
    "services",
    "targetgroupbindings",
];
const CLUSTER_SCOPED: [&str; 4] = [
    "ingressclasses",
    "ingressclassparams",
    "namespaces",
    "nodes",
];

/// The controller's requests (it authenticates; test clients send no token).
fn controller_requests(k8s: &Cluster) -> Vec<RequestRecord> {
    k8s.server
        .requests()
        .into_iter()
        .filter(|r| r.user.is_some())
        .collect()
}

/// Watches opened, by `resource namespace` (`*` for all namespaces or cluster-scoped).
fn watches(records: &[RequestRecord]) -> BTreeMap<String, usize> {
    let mut out = BTreeMap::new();
    for r in records.iter().filter(|r| r.verb == "watch") {
        let ns = r.namespace.as_deref().unwrap_or("*");
        *out.entry(format!("{} {ns}", r.resource)).or_default() += 1;
    }
    out
}

fn flags(c: &crate::support::moto_cloud::Cloud, extra: &[&str]) -> Vec<String> {
    let mut v = vec![
        "--cluster-name=e2e".to_string(),
        "--aws-region=us-west-2".into(),
        format!("--aws-vpc-id={}", c.vpc),
        format!(
            "--aws-api-endpoints=elasticloadbalancing={0},ec2={0}",
            c.moto.endpoint
        ),
    ];
    v.extend(extra.iter().map(|s| s.to_string()));
    v
}

/// Starts a leader with `extra` flags, waits until every controller has its caches, and
/// returns the watches it opened.
async fn leader_watches(extra: &[&str]) -> BTreeMap<String, usize> {
    let c = cloud().await;
    let k8s = Cluster::start().await;
    let ctl = k8s.controller(&flags(&c, extra));
    ctl.wait_for_log("became leader", WAIT);
    ctl.wait_for_log("ingress controller caches synced", WAIT);
    ctl.wait_for_log("caches synced", WAIT);
    // The TargetGroupBinding controller starts alongside; give its watches time to open.
    tokio::time::sleep(Duration::from_secs(2)).await;
    watches(&controller_requests(&k8s))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_leader_opens_one_watch_per_kind() {
    let got = leader_watches(&[]).await;
    println!("watches per kind: {got:?}");
    let want: BTreeMap<String, usize> = KINDS.iter().map(|k| (format!("{k} *"), 1)).collect();
    assert_eq!(got, want);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn one_watch_per_kind_and_watched_namespace() {
    let got = leader_watches(&["--watch-namespace=shop,web"]).await;
    println!("watches per kind and namespace: {got:?}");
    let mut want = BTreeMap::new();
    for k in KINDS {
        if CLUSTER_SCOPED.contains(&k) {
            want.insert(format!("{k} *"), 1);
        } else {
            want.insert(format!("{k} shop"), 1);
            want.insert(format!("{k} web"), 1);
        }
    }
    assert_eq!(got, want);
}

const OBJECTS: &str = r#"
apiVersion: v1
kind: Namespace
metadata: {name: shop}
---
apiVersion: v1
kind: Service
metadata: {name: web, namespace: shop}
spec:
  selector: {app: web}
  ports: [{name: http, port: 80, targetPort: 8080}]
"#;

fn binding(arn: &str) -> String {
    format!(
        "apiVersion: elbv2.k8s.aws/v1beta1\nkind: TargetGroupBinding\n\
         metadata: {{name: web-tgb, namespace: shop}}\n\
         spec: {{serviceRef: {{name: web, port: 80}}, targetGroupARN: \"{arn}\", targetType: ip}}\n"
    )
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_standby_takes_over_from_warm_caches_without_listing_again() {
    let c = cloud().await;
    let arn = ip_tg(c.elb.as_ref(), "web", &c.vpc, "ip").await;
    let k8s = Cluster::start().await;
    let mut a = k8s.controller(&flags(&c, &[]));
    a.wait_for_log("became leader", WAIT);
    let b: Controller = k8s.controller(&flags(&c, &[]));
    b.wait_for_log("caches synced", WAIT);

    let manifests = format!("{OBJECTS}---\n{}", binding(&arn));
    let (ok, out) =
        crate::e2e_pod_gates::kubectl(&k8s.kubeconfig, &["create", "-f", "-"], Some(&manifests));
    assert!(ok, "{out}");
    let tgbs: Api<TargetGroupBinding> = Api::namespaced(k8s.client.clone(), "shop");
    eventually("the leader adds its finalizer", WAIT, || async {
        tgbs.get("web-tgb")
            .await
            .is_ok_and(|t| !t.metadata.finalizers.unwrap_or_default().is_empty())
    })
    .await;
    // Let the standby's watches see all of it.
    tokio::time::sleep(Duration::from_secs(1)).await;

    k8s.server.clear_requests();
    a.sigterm();
    a.wait_exit(WAIT);
    b.wait_for_log("became leader", WAIT);
    let took_over = Instant::now();
    tgbs.delete("web-tgb", &DeleteParams::default())
        .await
        .unwrap();
    eventually(
        "the new leader releases the deleted binding",
        WAIT,
        || async { tgbs.get_opt("web-tgb").await.unwrap().is_none() },
    )
    .await;
    println!(
        "binding released {:?} after the takeover",
        took_over.elapsed()
    );

    let relists: Vec<String> = controller_requests(&k8s)
        .iter()
        .filter(|r| matches!(r.verb.as_str(), "list" | "watch"))
        .filter(|r| KINDS.contains(&r.resource.as_str()))
        .map(RequestRecord::describe)
        .collect();
    assert!(
        relists.is_empty(),
        "the new leader listed or watched again: {relists:#?}"
    );
}
