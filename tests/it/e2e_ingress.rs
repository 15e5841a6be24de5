//! End to end with the real binary: the API test server, a private moto_server, kubectl. An
//! Ingress with two paths becomes an ALB with upstream's resources and tags, its status carries
//! the DNS name, TargetGroupBindings exist; editing a path changes that rule in place; deleting
//! the Ingress leaves nothing in moto and releases the finalizer. Every request the controller
//! made is one the chart's RBAC allows.

use std::time::Duration;

use crate::e2e_pod_gates::kubectl;
use crate::ingress::{inventory, paths, DEMO, WAIT};
use crate::support::e2e::Cluster;
use crate::support::moto_cloud::cloud;
use crate::tgb::eventually;
use aws_load_balancer_controller::crd::TargetGroupBinding;
use k8s_openapi::api::networking::v1::Ingress;
use kube::api::Api;

const STACK: &str = "demo/app";

async fn hostname(api: &Api<Ingress>) -> Option<String> {
    let ing = api.get_opt("app").await.ok()??;
    ing.status?
        .load_balancer?
        .ingress?
        .first()?
        .hostname
        .clone()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ingress_to_alb_in_moto_through_the_binary_then_edit_then_delete() {
    let c = cloud().await;
    let k8s = Cluster::start().await;
    let (client, kubeconfig) = (k8s.client.clone(), k8s.kubeconfig.clone());
    let ctl = k8s.controller(&[
        "--cluster-name=e2e".into(),
        "--aws-region=us-west-2".into(),
        format!("--aws-vpc-id={}", c.vpc),
        format!(
            "--aws-api-endpoints=elasticloadbalancing={0},ec2={0}",
            c.moto.endpoint
        ),
    ]);
    ctl.wait_for_log("became leader", WAIT);

    let ns = "apiVersion: v1\nkind: Namespace\nmetadata: {name: demo}\n";
    let (ok, out) = kubectl(&kubeconfig, &["create", "-f", "-"], Some(ns));
    assert!(ok, "{out}");
    let (ok, out) = kubectl(&kubeconfig, &["apply", "-f", "-"], Some(DEMO));
    assert!(ok, "{out}");
    let ingresses: Api<Ingress> = Api::namespaced(client.clone(), "demo");
    eventually("the Ingress gets its status", WAIT, || async {
        hostname(&ingresses).await.is_some()
    })
    .await;

    // Upstream's shape in moto, found by our tags as a user would.
    let inv = inventory(c.elb.as_ref(), c.ec2.as_ref(), STACK).await;
    assert_eq!(inv.lbs.len(), 1, "{inv:#?}");
    let (lb, lb_tags) = &inv.lbs[0];
    assert!(lb.name.starts_with("k8s-demo-app-"), "{}", lb.name);
    assert_eq!(
        lb_tags.get("elbv2.k8s.aws/cluster").map(String::as_str),
        Some("e2e")
    );
    assert_eq!(inv.sgs.len(), 1, "the managed security group");
    assert_eq!(inv.listeners.len(), 1);
    assert_eq!(inv.listeners[0].port, 80);
    assert_eq!(inv.rules.len(), 2);
    assert_eq!(inv.tgs.len(), 2);
    for (tg, tags) in &inv.tgs {
        assert!(tg.name.starts_with("k8s-demo-"), "{}", tg.name);
        assert!(tags.contains_key("ingress.k8s.aws/resource"), "{tags:?}");
    }
    assert_eq!(
        hostname(&ingresses).await.unwrap(),
        lb.dns_name.to_ascii_lowercase()
    );
    let ing = ingresses.get("app").await.unwrap();
    assert!(
        ing.metadata
            .finalizers
            .unwrap_or_default()
            .contains(&"ingress.k8s.aws/resources".to_string()),
        "finalizer"
    );
    let tgbs: Api<TargetGroupBinding> = Api::namespaced(client.clone(), "demo");
    let mut bound: Vec<String> = tgbs
        .list(&Default::default())
        .await
        .unwrap()
        .items
        .into_iter()
        .map(|b| b.spec.target_group_arn)
        .collect();
    bound.sort();
    let mut arns: Vec<String> = inv.tgs.iter().map(|(t, _)| t.arn.clone()).collect();
    arns.sort();
    assert_eq!(bound, arns, "one TargetGroupBinding per target group");

    // Edit one path: that rule changes in place (same ARN), nothing else is replaced.
    let rule_arns: Vec<String> = inv.rules.iter().map(|(r, _)| r.arn.clone()).collect();
    let edit = DEMO.replace("path: /api,", "path: /v2,");
    assert_ne!(edit, DEMO);
    let (ok, out) = kubectl(&kubeconfig, &["apply", "-f", "-"], Some(&edit));
    assert!(ok, "{out}");
    eventually("the rule follows the edit", WAIT, || async {
        let inv = inventory(c.elb.as_ref(), c.ec2.as_ref(), STACK).await;
        inv.rules
            .iter()
            .any(|(r, _)| paths(r).iter().any(|p| p.starts_with("/v2")))
    })
    .await;
    let after = inventory(c.elb.as_ref(), c.ec2.as_ref(), STACK).await;
    let mut after_rules: Vec<String> = after.rules.iter().map(|(r, _)| r.arn.clone()).collect();
    let mut before_rules = rule_arns.clone();
    after_rules.sort();
    before_rules.sort();
    assert_eq!(after_rules, before_rules, "rules modified in place");
    assert_eq!(after.lbs[0].0.arn, lb.arn);
    assert_eq!(after.tgs.len(), 2);

    // Delete: nothing of the stack is left and the finalizer is released.
    let (ok, out) = kubectl(
        &kubeconfig,
        &["delete", "ingress", "-n", "demo", "app", "--wait=false"],
        None,
    );
    assert!(ok, "{out}");
    eventually("the Ingress is gone", WAIT, || async {
        ingresses.get_opt("app").await.unwrap().is_none()
    })
    .await;
    let inv = inventory(c.elb.as_ref(), c.ec2.as_ref(), STACK).await;
    assert!(inv.is_empty() && inv.listeners.is_empty(), "{inv:#?}");
    eventually("bindings deleted", WAIT, || async {
        tgbs.list(&Default::default())
            .await
            .unwrap()
            .items
            .is_empty()
    })
    .await;

    // Least privilege holds for everything this flow made the controller do.
    tokio::time::sleep(Duration::from_millis(200)).await;
    k8s.assert_requests_allowed_by_chart(&[
        "patch ingresses.networking.k8s.io/status demo/app",
        "create targetgroupbindings.elbv2.k8s.aws demo/*",
        "create leases.coordination.k8s.io kube-system/*",
    ]);

    drop(ctl);
    k8s.server.stop().await;
}
