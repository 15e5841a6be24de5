//! `diff` for Gateways end to end: the real binary deploys an ALB Gateway with two HTTPRoutes
//! into moto and is stopped; `diff` then finds the stack by its `gateway.k8s.aws.alb/stack` tag
//! and reports nothing to do (exit 0). After one target group's health check is changed out of
//! band it shows exactly the ModifyTargetGroup that repairs it; after a route is deleted, the
//! removal of its rule, target group and binding. No run writes to AWS or to the cluster, and
//! every request it makes is allowed by the read-only IAM policy and ClusterRole. Shadow mode
//! (`--dry-run`) runs the Gateway controller itself and plans the same repair. `diff` takes the
//! Gateway gates from the cluster's CRDs and its Gateways' ACM discovery from the Gateway
//! controllers, as the controller does.

use std::collections::BTreeSet;
use std::time::Duration;

use aws_load_balancer_controller::crd::TargetGroupBinding;
use gateway_api::apis::standard::gateways::Gateway;
use gateway_api::apis::standard::httproutes::HttpRoute;
use kube::api::{Api, DeleteParams, ListParams};
use kube::ResourceExt;
use serde_json::{json, Value};

use crate::e2e_dry_run::pending;
use crate::e2e_gateway::{programmed, service, ALB, ALB_STACK, NLB, NLB_STACK};
use crate::support::e2e::Cluster;
use crate::support::gateway::{
    accept_class, create_all, install_gateway_api, install_gateway_api_except,
};
use crate::support::health_check::with_interval;
use crate::support::inventory::inventory_of;
use crate::support::moto_cloud::{cloud, endpoints_flag, Cloud};
use crate::support::process::Controller;
use crate::takeover::diff::{
    assert_read_only_aws, assert_read_only_kube, run_diff, run_diff_with, writes,
};
use crate::takeover::CLUSTER;
use crate::tgb::eventually;

const WAIT: Duration = Duration::from_secs(60);

fn gateway_stack(report: &Value) -> Value {
    report["stacks"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["kind"] == "gateway" && s["stack"] == "demo/gw")
        .cloned()
        .unwrap_or_else(|| panic!("no gateway stack demo/gw in {report:#}"))
}

/// Resource versions of every object diff could have written.
async fn versions(client: &kube::Client) -> BTreeSet<String> {
    let lp = ListParams::default();
    let gws = Api::<Gateway>::namespaced(client.clone(), "demo");
    let routes = Api::<HttpRoute>::namespaced(client.clone(), "demo");
    let tgbs = Api::<TargetGroupBinding>::namespaced(client.clone(), "demo");
    let mut out = BTreeSet::new();
    for g in gws.list(&lp).await.unwrap() {
        out.insert(format!("gw {} {:?}", g.name_any(), g.resource_version()));
    }
    for r in routes.list(&lp).await.unwrap() {
        out.insert(format!("route {} {:?}", r.name_any(), r.resource_version()));
    }
    for b in tgbs.list(&lp).await.unwrap() {
        out.insert(format!("tgb {} {:?}", b.name_any(), b.resource_version()));
    }
    out
}

fn flags(c: &Cloud) -> Vec<String> {
    vec![
        format!("--cluster-name={CLUSTER}"),
        "--aws-region=us-west-2".into(),
        format!("--aws-vpc-id={}", c.vpc),
        format!("--aws-api-endpoints={}", endpoints_flag(&c.moto)),
    ]
}

/// The controller deploys the ALB Gateway of [`ALB`] and settles; returns it still running.
async fn deployed(c: &Cloud, k8s: &Cluster) -> Controller {
    deployed_except(c, k8s, &[]).await
}

/// [`deployed`] on a cluster without the Gateway API CRDs of `kinds`.
async fn deployed_except(c: &Cloud, k8s: &Cluster, kinds: &[&str]) -> Controller {
    install_gateway_api_except(&k8s.client, kinds).await;
    let ctl = k8s.controller(&flags(c));
    ctl.wait_for_log("became leader", WAIT);
    let services = [
        service("api", 80, 30081, "TCP"),
        service("web", 80, 30082, "TCP"),
        service("web-next", 80, 30083, "TCP"),
    ]
    .concat();
    create_all(&k8s.client, &services).await;
    create_all(&k8s.client, ALB).await;
    let gws: Api<Gateway> = Api::namespaced(k8s.client.clone(), "demo");
    eventually("the ALB Gateway is programmed", WAIT, || async {
        programmed(&gws, "gw").await.is_some()
    })
    .await;
    // Settled: every binding of the stack reconciled by the TargetGroupBinding controller to
    // its end (targets, then `status.observedGeneration`, its last write).
    let tgbs: Api<TargetGroupBinding> = Api::namespaced(k8s.client.clone(), "demo");
    eventually("the bindings are reconciled", WAIT, || async {
        let items = tgbs.list(&ListParams::default()).await.unwrap().items;
        items.len() == 3
            && items.iter().all(|b| {
                let observed = b.status.as_ref().and_then(|s| s.observed_generation);
                !b.finalizers().is_empty()
                    && observed.is_some()
                    && observed == b.metadata.generation
            })
    })
    .await;
    ctl
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn diff_shows_nothing_for_a_gateway_the_controller_deployed_then_exactly_the_changes() {
    let c = cloud().await;
    let k8s = Cluster::start().await;
    drop(deployed(&c, &k8s).await);
    let inv = inventory_of(c.elb.as_ref(), c.ec2.as_ref(), ALB_STACK, "demo/gw").await;
    assert_eq!(inv.lbs.len(), 1, "{inv:#?}");
    let before = versions(&k8s.client).await;

    // 1. As the controller left it: nothing to do.
    k8s.server.clear_requests();
    c.moto.start_recording().await;
    let (code, report, stderr) = run_diff(&c, &k8s.kubeconfig).await;
    let st = gateway_stack(&report);
    assert!(st.get("error").is_none(), "{st:#}\nstderr:\n{stderr}");
    assert_eq!(st["writes"], json!([]), "{report:#}\nstderr:\n{stderr}");
    assert_eq!(code, 0, "report: {report:#}\nstderr:\n{stderr}");
    assert_eq!(report["pendingWrites"], 0);
    assert_read_only_aws(&c);
    assert_read_only_kube(&k8s.server.requests());
    assert_eq!(
        versions(&k8s.client).await,
        before,
        "diff wrote to the cluster"
    );

    // 2. One target group's health-check interval changed out of band: exactly its repair.
    let tg = inv.tgs[0].0.clone();
    let interval = tg.health_check.interval_seconds.unwrap();
    let drifted = with_interval(&tg, interval + 7);
    c.elb.modify_target_group(&tg.arn, &drifted).await.unwrap();
    c.moto.start_recording().await;
    let (code, report, stderr) = run_diff(&c, &k8s.kubeconfig).await;
    assert_eq!(code, 2, "report: {report:#}\nstderr:\n{stderr}");
    let w = writes(&report);
    assert_eq!(w.len(), 1, "exactly the one repair: {report:#}");
    assert_eq!(w[0].0, "elasticloadbalancing:ModifyTargetGroup");
    assert_eq!(w[0].1, tg.arn);
    assert_eq!(
        w[0].2,
        vec![json!({
            "field": "healthCheckIntervalSeconds",
            "before": (interval + 7).to_string(),
            "after": interval.to_string(),
        })],
        "{report:#}"
    );
    assert_eq!(
        gateway_stack(&report)["writes"].as_array().unwrap().len(),
        1
    );
    assert_read_only_aws(&c);

    // 3. A route deleted: its rule, its target group and its binding would go.
    Api::<HttpRoute>::namespaced(k8s.client.clone(), "demo")
        .delete("api", &DeleteParams::default())
        .await
        .unwrap();
    let before = versions(&k8s.client).await;
    k8s.server.clear_requests();
    c.moto.start_recording().await;
    let (code, report, stderr) = run_diff(&c, &k8s.kubeconfig).await;
    assert_eq!(code, 2, "report: {report:#}\nstderr:\n{stderr}");
    let st = gateway_stack(&report);
    assert!(st.get("error").is_none(), "{st:#}");
    let calls: Vec<&str> = st["writes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|w| w["call"].as_str().unwrap())
        .collect();
    for call in [
        "elasticloadbalancing:DeleteRule",
        "elasticloadbalancing:DeleteTargetGroup",
    ] {
        assert_eq!(
            calls.iter().filter(|c| **c == call).count(),
            1,
            "{call} once: {report:#}"
        );
    }
    assert!(
        calls.iter().any(|c| c.starts_with("kubernetes:delete")),
        "the binding goes: {calls:?}"
    );
    assert_read_only_aws(&c);
    assert_read_only_kube(&k8s.server.requests());
    assert_eq!(
        versions(&k8s.client).await,
        before,
        "diff wrote to the cluster"
    );
    let after = inventory_of(c.elb.as_ref(), c.ec2.as_ref(), ALB_STACK, "demo/gw").await;
    assert_eq!(after.rules.len(), inv.rules.len(), "diff deleted the rule");
    assert_eq!(
        after.tgs.len(),
        inv.tgs.len(),
        "diff deleted the target group"
    );
    k8s.server.stop().await;
}

/// `diff` turns off the Gateway gates whose CRDs the cluster lacks, as the controller does at
/// start (upstream's detection): without the ListenerSet and L4 route CRDs, the ALB Gateway the
/// controller deployed (with `GatewayListenerSet` off, so no `attachedListenerSets`) has nothing
/// to do, and the NLB Gateway, which no controller reconciles there, is no stack; a note names
/// each gate turned off.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn diff_turns_off_the_gateway_gates_whose_crds_the_cluster_lacks_as_the_controller_does() {
    let c = cloud().await;
    let k8s = Cluster::start().await;
    let missing = ["ListenerSet", "TCPRoute", "UDPRoute", "TLSRoute"];
    let ctl = deployed_except(&c, &k8s, &missing).await;
    ctl.wait_for_log("Disabling NLBGatewayAPI: missing required CRDs", WAIT);
    ctl.wait_for_log("Disabling GatewayListenerSet: missing required CRDs", WAIT);
    let nlb = r#"
apiVersion: gateway.networking.k8s.io/v1
kind: GatewayClass
metadata: {name: aws-nlb}
spec: {controllerName: gateway.k8s.aws/nlb}
---
apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: {name: gw, namespace: demo-l4}
spec:
  gatewayClassName: aws-nlb
  listeners: [{name: tcp, port: 5000, protocol: TCP}]
"#;
    create_all(&k8s.client, nlb).await;
    accept_class(&k8s.client, "aws-nlb").await;
    drop(ctl);

    k8s.server.clear_requests();
    c.moto.start_recording().await;
    let (code, report, stderr) = run_diff(&c, &k8s.kubeconfig).await;
    let st = gateway_stack(&report);
    assert!(st.get("error").is_none(), "{st:#}\nstderr:\n{stderr}");
    assert_eq!(st["writes"], json!([]), "{report:#}\nstderr:\n{stderr}");
    let gateways: Vec<&str> = report["stacks"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|s| s["kind"] == "gateway")
        .map(|s| s["stack"].as_str().unwrap())
        .collect();
    assert_eq!(gateways, vec!["demo/gw"], "{report:#}");
    let notes: Vec<&str> = report["notes"]
        .as_array()
        .map(|n| n.iter().map(|n| n.as_str().unwrap()).collect())
        .unwrap_or_default();
    for gate in ["NLBGatewayAPI", "GatewayListenerSet"] {
        let head = format!("Disabling {gate}: missing required CRDs");
        assert!(
            notes.iter().any(|n| n.starts_with(&head)),
            "{gate}: {notes:?}"
        );
    }
    assert!(
        !notes.iter().any(|n| n.contains("ALBGatewayAPI")),
        "{notes:?}"
    );
    assert_eq!(code, 0, "report: {report:#}\nstderr:\n{stderr}");
    assert_read_only_aws(&c);
    assert_read_only_kube(&k8s.server.requests());
    k8s.server.stop().await;
}

/// `diff` discovers a Gateway's certificates as the Gateway controllers do: with
/// `EnableCertificateManagement` on, the Ingress controller leaves out the ACM certificates the
/// controller made (tagged with its cluster and stack keys) but the Gateway controllers do not,
/// so an HTTPS ALB Gateway served by such a certificate has nothing to do (was: `no certificate
/// found for host`, the Ingress discovery's answer).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn diff_discovers_a_gateways_certificates_as_the_gateway_controller_does() {
    use aws_sdk_acm::types::Tag;
    let c = cloud().await;
    let k8s = Cluster::start().await;
    install_gateway_api(&k8s.client).await;
    let acm = crate::deploy::acm_discovery::raw_acm(&c.moto);
    let arn = crate::deploy::acm_discovery::import(&acm, &["shop.example.com"]).await;
    let tag = |k: &str, v: &str| Tag::builder().key(k).value(v).build().unwrap();
    acm.add_tags_to_certificate()
        .certificate_arn(&arn)
        .tags(tag("elbv2.k8s.aws/cluster", CLUSTER))
        .tags(tag("ingress.k8s.aws/stack", "demo/made"))
        .send()
        .await
        .unwrap();
    let endpoints = format!("{},acm={}", endpoints_flag(&c.moto), c.moto.endpoint);
    let gate = "--feature-gates=EnableCertificateManagement=true".to_string();
    let mut args: Vec<String> = flags(&c)
        .into_iter()
        .filter(|f| !f.starts_with("--aws-api-endpoints="))
        .collect();
    args.extend([format!("--aws-api-endpoints={endpoints}"), gate.clone()]);
    let ctl = k8s.controller(&args);
    ctl.wait_for_log("became leader", WAIT);
    let https = r#"
apiVersion: gateway.networking.k8s.io/v1
kind: GatewayClass
metadata: {name: aws-alb}
spec: {controllerName: gateway.k8s.aws/alb}
---
apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: {name: gw, namespace: demo}
spec:
  gatewayClassName: aws-alb
  listeners: [{name: https, port: 443, protocol: HTTPS, hostname: shop.example.com}]
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: shop, namespace: demo}
spec:
  parentRefs: [{name: gw}]
  rules: [{backendRefs: [{name: web, port: 80}]}]
"#;
    create_all(&k8s.client, &service("web", 80, 30082, "TCP")).await;
    create_all(&k8s.client, https).await;
    let gws: Api<Gateway> = Api::namespaced(k8s.client.clone(), "demo");
    eventually("the HTTPS Gateway is programmed", WAIT, || async {
        programmed(&gws, "gw").await.is_some()
    })
    .await;
    let inv = inventory_of(c.elb.as_ref(), c.ec2.as_ref(), ALB_STACK, "demo/gw").await;
    assert_eq!(inv.listeners.len(), 1, "{inv:#?}");
    assert_eq!(inv.listeners[0].certificates, vec![arn.clone()]);
    let tgbs: Api<TargetGroupBinding> = Api::namespaced(k8s.client.clone(), "demo");
    eventually("the binding is reconciled", WAIT, || async {
        let items = tgbs.list(&ListParams::default()).await.unwrap().items;
        items.len() == 1
            && items.iter().all(|b| {
                let observed = b.status.as_ref().and_then(|s| s.observed_generation);
                observed.is_some() && observed == b.metadata.generation
            })
    })
    .await;
    drop(ctl);

    c.moto.start_recording().await;
    let (code, report, stderr) = run_diff_with(&c, &k8s.kubeconfig, &endpoints, &[gate]).await;
    let st = gateway_stack(&report);
    assert!(st.get("error").is_none(), "{st:#}\nstderr:\n{stderr}");
    assert_eq!(st["writes"], json!([]), "{report:#}\nstderr:\n{stderr}");
    assert_eq!(code, 0, "report: {report:#}\nstderr:\n{stderr}");
    assert_read_only_aws(&c);
    k8s.server.stop().await;
}

/// Shadow mode (`--dry-run`) runs the Gateway controller itself over the recording layers: in
/// sync with the stack the controller deployed its gauge is 0; after an out-of-band change it
/// plans exactly the repair, logged under the Gateway's stack, and sends no write to moto.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn shadow_mode_plans_the_repair_of_a_gateway_stack_and_sends_nothing() {
    const SHADOW_KEY: &str = "shadowkey";
    let c = cloud().await;
    let k8s = Cluster::start().await;
    let owner = deployed(&c, &k8s).await;
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
    c.moto.start_recording().await;
    let shadow = Controller::start_with_env(&args, &[("AWS_ACCESS_KEY_ID", SHADOW_KEY)]);
    shadow.wait_for_log("became leader", WAIT);
    let metrics = shadow.addr_of("metrics server listening");
    shadow.wait_for_log("successfully deployed model", WAIT);
    eventually("the shadow's gauge is 0 in sync", WAIT, || async {
        pending(metrics).await.0 == 0.0
    })
    .await;
    drop(owner);

    let inv = inventory_of(c.elb.as_ref(), c.ec2.as_ref(), ALB_STACK, "demo/gw").await;
    let tg = inv.tgs[0].0.clone();
    let interval = tg.health_check.interval_seconds.unwrap();
    let drifted = with_interval(&tg, interval + 7);
    c.elb.modify_target_group(&tg.arn, &drifted).await.unwrap();
    eventually("the shadow's gauge rises", WAIT, || async {
        pending(metrics).await.0 >= 1.0
    })
    .await;
    let (sum, text) = pending(metrics).await;
    assert_eq!(sum, 1.0, "{text}");
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
    assert_eq!(planned["stack"], "gateway demo/gw", "{planned}");
    assert_eq!(planned["resource"], tg.arn.as_str(), "{planned}");
    let shadow_writes: Vec<String> = c
        .moto
        .recorded_requests()
        .into_iter()
        .filter(|(key, a)| {
            key == SHADOW_KEY && !a.split(':').nth(1).unwrap_or("").starts_with("Describe")
        })
        .map(|(_, a)| a)
        .collect();
    assert!(
        shadow_writes.is_empty(),
        "the shadow wrote to AWS: {shadow_writes:?}"
    );
    let after = inventory_of(c.elb.as_ref(), c.ec2.as_ref(), ALB_STACK, "demo/gw").await;
    assert_eq!(
        after.tgs[0].0.health_check.interval_seconds,
        Some(interval + 7),
        "the shadow repaired the drift"
    );
    drop(shadow);
    k8s.server.stop().await;
}

/// An NLB Gateway (TCPRoute and UDPRoute) no controller has seen yet: `diff` shows the
/// finalizer and the NLB it would create, and creates neither; once the controller has deployed
/// it, `diff` finds the stack by its `gateway.k8s.aws.nlb/stack` tag and has nothing to do.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn diff_shows_an_nlb_gateway_to_create_then_nothing_once_deployed() {
    nlb_gateway_diff_then_nothing(NLB, false).await;
}

/// The same for an internal NLB Gateway without security groups: its bindings allow the VPC's
/// CIDRs, which `diff` reads from AWS as the controller does, so it still has nothing to do.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn diff_shows_nothing_for_a_deployed_internal_nlb_gateway_without_security_groups() {
    let config = r#"
apiVersion: gateway.k8s.aws/v1
kind: LoadBalancerConfiguration
metadata: {name: nlb-config, namespace: demo-l4}
spec: {scheme: internal, disableSecurityGroup: true}
"#;
    let gateway = NLB.replace(
        "  gatewayClassName: aws-nlb\n",
        "  gatewayClassName: aws-nlb\n  infrastructure:\n    parametersRef: {group: gateway.k8s.aws, kind: LoadBalancerConfiguration, name: nlb-config}\n",
    );
    assert_ne!(gateway, NLB, "the Gateway names its configuration");
    nlb_gateway_diff_then_nothing(&format!("{config}---{gateway}"), true).await;
}

/// `internal`: the subnets are tagged for internal load balancers too.
async fn nlb_gateway_diff_then_nothing(manifests: &str, internal: bool) {
    let c = cloud().await;
    if internal {
        crate::takeover::prepare_network(&c).await;
    }
    let k8s = Cluster::start().await;
    install_gateway_api(&k8s.client).await;
    let l4 = [
        service("echo", 5000, 30500, "TCP"),
        service("dns", 5353, 30553, "UDP"),
    ]
    .concat()
    .replace("namespace: demo}", "namespace: demo-l4}");
    create_all(&k8s.client, &l4).await;
    create_all(&k8s.client, manifests).await;
    // Accepted as the GatewayClass reconciler would (it is not running yet).
    accept_class(&k8s.client, "aws-nlb").await;
    let stack_of = |report: &Value| {
        report["stacks"]
            .as_array()
            .unwrap()
            .iter()
            .find(|s| s["kind"] == "gateway" && s["stack"] == "demo-l4/gw")
            .cloned()
            .unwrap_or_else(|| panic!("no gateway stack demo-l4/gw in {report:#}"))
    };

    c.moto.start_recording().await;
    let (code, report, stderr) = run_diff(&c, &k8s.kubeconfig).await;
    assert_eq!(code, 2, "report: {report:#}\nstderr:\n{stderr}");
    let st = stack_of(&report);
    assert!(st.get("error").is_none(), "{st:#}");
    let calls: Vec<&str> = st["writes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|w| w["call"].as_str().unwrap())
        .collect();
    // The configuration's finalizer, if any, then the Gateway's, then AWS.
    let first = calls
        .iter()
        .find(|c| **c != "kubernetes:patch LoadBalancerConfiguration");
    assert_eq!(
        first,
        Some(&"kubernetes:patch Gateway"),
        "finalizer first: {calls:?}"
    );
    for call in [
        "elasticloadbalancing:CreateLoadBalancer",
        "elasticloadbalancing:CreateTargetGroup",
        "elasticloadbalancing:CreateListener",
    ] {
        let n = calls.iter().filter(|c| **c == call).count();
        let want = if call.ends_with("LoadBalancer") { 1 } else { 2 };
        assert_eq!(n, want, "{call}: {calls:?}");
    }
    assert_read_only_aws(&c);
    let nlb = inventory_of(c.elb.as_ref(), c.ec2.as_ref(), NLB_STACK, "demo-l4/gw").await;
    assert!(nlb.is_empty(), "diff created {nlb:#?}");

    let ctl = k8s.controller(&flags(&c));
    ctl.wait_for_log("became leader", WAIT);
    let gws: Api<Gateway> = Api::namespaced(k8s.client.clone(), "demo-l4");
    eventually("the NLB Gateway is programmed", WAIT, || async {
        programmed(&gws, "gw").await.is_some()
    })
    .await;
    let tgbs: Api<TargetGroupBinding> = Api::namespaced(k8s.client.clone(), "demo-l4");
    eventually("the bindings carry their finalizer", WAIT, || async {
        let items = tgbs.list(&ListParams::default()).await.unwrap().items;
        items.len() == 2 && items.iter().all(|b| !b.finalizers().is_empty())
    })
    .await;
    if internal {
        // Without security groups the NLB's clients reach the nodes directly: every binding
        // lets the VPC's CIDR in on its traffic port.
        for b in tgbs.list(&ListParams::default()).await.unwrap() {
            let spec = serde_json::to_value(&b.spec).unwrap();
            let from = &spec["networking"]["ingress"][0]["from"];
            assert_eq!(
                from,
                &json!([{"ipBlock": {"cidr": "10.1.0.0/16"}}]),
                "{spec:#}"
            );
        }
    }
    drop(ctl);
    c.moto.start_recording().await;
    let (code, report, stderr) = run_diff(&c, &k8s.kubeconfig).await;
    let st = stack_of(&report);
    assert!(st.get("error").is_none(), "{st:#}\nstderr:\n{stderr}");
    assert_eq!(st["writes"], json!([]), "{report:#}\nstderr:\n{stderr}");
    assert_eq!(code, 0, "report: {report:#}\nstderr:\n{stderr}");
    assert_read_only_aws(&c);
    k8s.server.stop().await;
}
