//! End to end with the real binary, the API test server and moto: an Ingress backend with a
//! target-control port (`alb.ingress.kubernetes.io/target-control-port.<svc>.<port>`, IP
//! targets) is created with `TargetControlPort` (moto's request log); a changed port is what
//! `diff` shows as a replacement, and the controller replaces the target group the way upstream
//! does: a new one created, the listener rule forwarding to it, the old one deleted after. A
//! fresh controller then finds nothing to do (moto is extended to describe the port back; see
//! support/moto_launcher.py).

use std::time::Duration;

use k8s_openapi::api::networking::v1::Ingress;
use kube::api::Api;

use crate::e2e_pod_gates::kubectl;
use crate::ingress::{inventory, WAIT};
use crate::support::e2e::Cluster;
use crate::support::moto_cloud::{cloud, endpoints_flag, Cloud};
use crate::support::process::Controller;
use crate::takeover::diff::{run_diff, writes};
use crate::takeover::CLUSTER;
use crate::tgb::eventually;

const STACK: &str = "demo/app";

/// A ClusterIP Service `demo/web` and the Ingress `demo/app` routing `/` to it over IP
/// targets, with target-control port `port`.
fn manifests(port: u16) -> String {
    format!(
        r#"
apiVersion: v1
kind: Service
metadata: {{name: web, namespace: demo}}
spec: {{selector: {{app: web}}, ports: [{{port: 80, targetPort: 8080}}]}}
---
apiVersion: networking.k8s.io/v1
kind: Ingress
metadata:
  name: app
  namespace: demo
  annotations:
    kubernetes.io/ingress.class: alb
    alb.ingress.kubernetes.io/scheme: internet-facing
    alb.ingress.kubernetes.io/target-type: ip
    alb.ingress.kubernetes.io/target-control-port.web.80: "{port}"
spec:
  rules:
  - http:
      paths:
      - {{path: /, pathType: Prefix, backend: {{service: {{name: web, port: {{number: 80}}}}}}}}
"#
    )
}

fn start(k8s: &Cluster, c: &Cloud) -> Controller {
    let ctl = k8s.controller(&[
        format!("--cluster-name={CLUSTER}"),
        "--aws-region=us-west-2".into(),
        format!("--aws-vpc-id={}", c.vpc),
        format!("--aws-api-endpoints={}", endpoints_flag(&c.moto)),
    ]);
    ctl.wait_for_log("became leader", WAIT);
    ctl
}

fn stop(mut ctl: Controller) {
    ctl.sigterm();
    assert!(ctl.wait_exit(WAIT).success());
}

fn apply(k8s: &Cluster, yaml: &str) {
    let (ok, out) = kubectl(&k8s.kubeconfig, &["apply", "-f", "-"], Some(yaml));
    assert!(ok, "{out}");
}

/// The stack's one target group (ARN, control port) and whether the listener's rule forwards
/// to it; None until the stack has exactly one target group and one rule.
async fn only_target_group(c: &Cloud) -> Option<(String, Option<i32>, bool)> {
    let inv = inventory(c.elb.as_ref(), c.ec2.as_ref(), STACK).await;
    let ([(tg, _)], [(rule, _)]) = (inv.tgs.as_slice(), inv.rules.as_slice()) else {
        return None;
    };
    // The ARN appears in the rule's actions only as a forward target.
    let forwards = format!("{:?}", rule.actions).contains(&tg.arn);
    Some((tg.arn.clone(), tg.target_control_port, forwards))
}

/// Position of the `n`-th (0-based) recorded `elasticloadbalancing:<action>`.
fn nth(actions: &[String], action: &str, n: usize) -> usize {
    actions
        .iter()
        .enumerate()
        .filter(|(_, a)| *a == &format!("elasticloadbalancing:{action}"))
        .nth(n)
        .unwrap_or_else(|| panic!("no {action} #{n} in {actions:#?}"))
        .0
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_changed_target_control_port_replaces_the_target_group() {
    let c = cloud().await;
    let k8s = Cluster::start().await;
    c.moto.start_recording().await;
    let ctl = start(&k8s, &c);
    let ns = "apiVersion: v1\nkind: Namespace\nmetadata: {name: demo}\n";
    let (ok, out) = kubectl(&k8s.kubeconfig, &["create", "-f", "-"], Some(ns));
    assert!(ok, "{out}");
    apply(&k8s, &manifests(3000));
    let ingresses: Api<Ingress> = Api::namespaced(k8s.client.clone(), "demo");
    eventually("the Ingress is deployed", WAIT, || async {
        let ing = ingresses.get("app").await.unwrap();
        ing.status
            .and_then(|s| s.load_balancer)
            .and_then(|l| l.ingress)
            .is_some()
    })
    .await;

    // 1. CreateTargetGroup carries the port; AWS (moto) describes it back.
    let created = c.moto.recorded_params("CreateTargetGroup");
    assert_eq!(created.len(), 1, "{created:#?}");
    assert_eq!(
        created[0].get("TargetControlPort").map(String::as_str),
        Some("3000"),
        "{created:#?}"
    );
    assert_eq!(created[0].get("TargetType").map(String::as_str), Some("ip"));
    let (old_arn, port, forwards) = only_target_group(&c).await.expect("one target group");
    assert_eq!(port, Some(3000));
    assert!(forwards, "the rule forwards to the target group");
    stop(ctl);

    // 2. The port changes while no controller runs: `diff` shows the replacement.
    apply(&k8s, &manifests(3001));
    let (code, report, stderr) = run_diff(&c, &k8s.kubeconfig).await;
    assert_eq!(code, 2, "report: {report:#}\nstderr:\n{stderr}");
    let w = writes(&report);
    let at = |call: &str| {
        w.iter()
            .position(|(name, _, _)| name == &format!("elasticloadbalancing:{call}"))
            .unwrap_or_else(|| panic!("no {call} in {report:#}"))
    };
    let (create, modify, delete) = (
        at("CreateTargetGroup"),
        at("ModifyRule"),
        at("DeleteTargetGroup"),
    );
    assert!(create < modify && modify < delete, "{report:#}");
    assert!(
        w[create]
            .2
            .iter()
            .any(|ch| ch["field"] == "targetControlPort"
                && ch["after"] == "3001"
                && ch.get("before").is_none()),
        "{report:#}"
    );
    assert_eq!(w[delete].1, old_arn, "{report:#}");

    // 3. The controller replaces it: created, the rule follows, the old one deleted after.
    let ctl = start(&k8s, &c);
    eventually("the target group is replaced", WAIT, || async {
        only_target_group(&c)
            .await
            .is_some_and(|(arn, port, forwards)| arn != old_arn && port == Some(3001) && forwards)
    })
    .await;
    let created = c.moto.recorded_params("CreateTargetGroup");
    assert_eq!(created.len(), 2, "{created:#?}");
    assert_eq!(
        created[1].get("TargetControlPort").map(String::as_str),
        Some("3001")
    );
    let deleted = c.moto.recorded_params("DeleteTargetGroup");
    assert_eq!(deleted.len(), 1, "{deleted:#?}");
    assert_eq!(
        deleted[0].get("TargetGroupArn").map(String::as_str),
        Some(old_arn.as_str())
    );
    let actions = c.moto.recorded_actions();
    let (create, delete) = (
        nth(&actions, "CreateTargetGroup", 1),
        nth(&actions, "DeleteTargetGroup", 0),
    );
    let modify = actions[create..delete]
        .iter()
        .position(|a| a == "elasticloadbalancing:ModifyRule");
    assert!(
        modify.is_some(),
        "the rule is moved to the new target group between its create and the old one's delete: {actions:#?}"
    );
    stop(ctl);

    // 4. A fresh controller reconciles the stack again: the described port matches, nothing
    //    is replaced.
    let ctl = start(&k8s, &c);
    ctl.wait_for_log("successfully deployed model", WAIT);
    tokio::time::sleep(Duration::from_millis(500)).await;
    assert_eq!(c.moto.recorded_params("CreateTargetGroup").len(), 2);
    assert_eq!(c.moto.recorded_params("DeleteTargetGroup").len(), 1);
    stop(ctl);
    k8s.server.stop().await;
}
