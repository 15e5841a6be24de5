//! End to end with the real binary against moto: `wafv2-acl-name` on an Ingress puts the web
//! ACL on its new ALB in the same reconcile (the WAFv2 client built from `--aws-api-endpoints`
//! next to ELBv2/EC2); `none` takes it off again.

use crate::deploy::addons_moto::{acl_of, create_acl, raw_wafv2};
use crate::e2e_pod_gates::kubectl;
use crate::ingress::{inventory, DEMO, WAIT};
use crate::support::e2e::Cluster;
use crate::support::moto_cloud::cloud;
use crate::tgb::eventually;

const STACK: &str = "demo/app";

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn wafv2_acl_name_through_the_binary_then_none() {
    let c = cloud().await;
    let waf = raw_wafv2(&c.moto.endpoint);
    let acl = create_acl(&waf, "e2e-acl").await;
    let k8s = Cluster::start().await;
    let kubeconfig = k8s.kubeconfig.clone();
    let ctl = k8s.controller(&[
        "--cluster-name=e2e".into(),
        "--aws-region=us-west-2".into(),
        format!("--aws-vpc-id={}", c.vpc),
        format!(
            "--aws-api-endpoints=elasticloadbalancing={0},ec2={0},wafv2={0},shield={0}",
            c.moto.endpoint
        ),
    ]);
    ctl.wait_for_log("became leader", WAIT);
    let ns = "apiVersion: v1\nkind: Namespace\nmetadata: {name: demo}\n";
    let (ok, out) = kubectl(&kubeconfig, &["create", "-f", "-"], Some(ns));
    assert!(ok, "{out}");
    let anchor = "    alb.ingress.kubernetes.io/scheme: internet-facing\n";
    let with = |v: &str| {
        DEMO.replace(
            anchor,
            &format!("{anchor}    alb.ingress.kubernetes.io/wafv2-acl-name: {v}\n"),
        )
    };
    let (ok, out) = kubectl(&kubeconfig, &["apply", "-f", "-"], Some(&with("e2e-acl")));
    assert!(ok, "{out}");
    eventually("the ALB exists", WAIT, || async {
        inventory(c.elb.as_ref(), c.ec2.as_ref(), STACK)
            .await
            .lbs
            .len()
            == 1
    })
    .await;
    let inv = inventory(c.elb.as_ref(), c.ec2.as_ref(), STACK).await;
    let lb = inv.lbs[0].0.arn.clone();
    eventually("the web ACL is on the ALB", WAIT, || async {
        acl_of(&waf, &lb).await.as_deref() == Some(acl.as_str())
    })
    .await;

    let (ok, out) = kubectl(&kubeconfig, &["apply", "-f", "-"], Some(&with("none")));
    assert!(ok, "{out}");
    eventually("`none` takes it off", WAIT, || async {
        acl_of(&waf, &lb).await.is_none()
    })
    .await;
    drop(ctl);
    k8s.server.stop().await;
}

/// `--enable-wafv2=false` (chart `enableWafv2: false`): the annotation is not acted on at all —
/// a name that exists nowhere does not stop the ALB, and no web ACL is touched.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn enable_wafv2_false_leaves_web_acls_alone() {
    let c = cloud().await;
    let waf = raw_wafv2(&c.moto.endpoint);
    let acl = create_acl(&waf, "by-hand").await;
    let k8s = Cluster::start().await;
    let kubeconfig = k8s.kubeconfig.clone();
    let ctl = k8s.controller(&[
        "--cluster-name=e2e".into(),
        "--aws-region=us-west-2".into(),
        format!("--aws-vpc-id={}", c.vpc),
        format!(
            "--aws-api-endpoints=elasticloadbalancing={0},ec2={0},wafv2={0}",
            c.moto.endpoint
        ),
        "--enable-wafv2=false".into(),
    ]);
    ctl.wait_for_log("became leader", WAIT);
    let ns = "apiVersion: v1\nkind: Namespace\nmetadata: {name: demo}\n";
    let (ok, out) = kubectl(&kubeconfig, &["create", "-f", "-"], Some(ns));
    assert!(ok, "{out}");
    let anchor = "    alb.ingress.kubernetes.io/scheme: internet-facing\n";
    let yaml = DEMO.replace(
        anchor,
        &format!("{anchor}    alb.ingress.kubernetes.io/wafv2-acl-name: nowhere\n"),
    );
    let (ok, out) = kubectl(&kubeconfig, &["apply", "-f", "-"], Some(&yaml));
    assert!(ok, "{out}");
    eventually("the ALB exists with its listener", WAIT, || async {
        let inv = inventory(c.elb.as_ref(), c.ec2.as_ref(), STACK).await;
        inv.lbs.len() == 1 && inv.listeners.len() == 1
    })
    .await;
    let inv = inventory(c.elb.as_ref(), c.ec2.as_ref(), STACK).await;
    let lb = inv.lbs[0].0.arn.clone();
    // A web ACL put on by hand stays through later reconciles.
    waf.associate_web_acl()
        .web_acl_arn(&acl)
        .resource_arn(&lb)
        .send()
        .await
        .unwrap();
    let deployed = || {
        ctl.logs
            .lock()
            .unwrap()
            .iter()
            .filter(|v| v["msg"] == "successfully deployed model")
            .count()
    };
    let first = deployed();
    // The pass's lines carry controller-runtime's reconcile keys.
    let line = ctl.wait_for_log("successfully deployed model", WAIT);
    assert_eq!(line["controller"], "ingress", "{line}");
    assert_eq!(
        line["object"],
        serde_json::json!({"name": "app", "namespace": "demo"}),
        "{line}"
    );
    assert_eq!(
        (&line["namespace"], &line["name"]),
        (&"demo".into(), &"app".into()),
        "{line}"
    );
    assert_eq!(
        line["reconcileID"].as_str().map(str::len),
        Some(36),
        "{line}"
    );
    let (ok, out) = kubectl(
        &kubeconfig,
        &[
            "annotate",
            "ingress",
            "-n",
            "demo",
            "app",
            "test.example/poke=2",
        ],
        None,
    );
    assert!(ok, "{out}");
    eventually("another reconcile deployed", WAIT, || async {
        deployed() > first
    })
    .await;
    assert_eq!(acl_of(&waf, &lb).await, Some(acl));
    drop(ctl);
    k8s.server.stop().await;
}
