//! End to end for Gateways with the real binary, the API test server (our CRDs and the Gateway
//! API's, installed before start so CRD detection keeps both gates on) and moto: an ALB Gateway
//! with two HTTPRoutes (a path match; a path plus header match with a weighted pair of backends)
//! becomes an ALB with one listener, the rules in upstream's order, a target group per backend,
//! TargetGroupBindings with upstream's labels and `Programmed=True` with the DNS name in
//! `addresses`; an NLB Gateway with a TCPRoute and a UDPRoute becomes an NLB with both
//! listeners; detaching one HTTPRoute removes only its rule and target groups; deleting the
//! Gateways leaves nothing in moto. Every request the controller made is allowed by the chart.

use std::time::Duration;

use aws_load_balancer_controller::crd::TargetGroupBinding;
use aws_load_balancer_controller::model::{Action, RuleCondition};
use gateway_api::apis::standard::gatewayclasses::GatewayClass;
use gateway_api::apis::standard::gateways::Gateway;
use gateway_api::apis::standard::httproutes::HttpRoute;
use kube::api::{Api, ListParams};
use kube::ResourceExt;

use crate::e2e_pod_gates::kubectl;
use crate::support::e2e::Cluster;
use crate::support::gateway::{create_all, install_gateway_api};
use crate::support::inventory::{inventory_of, Inventory};
use crate::support::moto_cloud::{cloud, Cloud};
use crate::support::process::Controller;
use crate::tgb::eventually;

const WAIT: Duration = Duration::from_secs(60);
pub(crate) const ALB_STACK: &str = "gateway.k8s.aws.alb/stack";
pub(crate) const NLB_STACK: &str = "gateway.k8s.aws.nlb/stack";

fn start(c: &Cloud, k8s: &Cluster) -> Controller {
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
    ctl
}

async fn inv(c: &Cloud, tag: &str) -> Inventory {
    inventory_of(c.elb.as_ref(), c.ec2.as_ref(), tag, "demo/gw").await
}

pub(crate) async fn programmed(api: &Api<Gateway>, name: &str) -> Option<String> {
    let gw = api.get_opt(name).await.ok()??;
    let c = gw
        .status?
        .conditions?
        .into_iter()
        .find(|c| c.type_ == "Programmed" && c.status == "True")?;
    Some(c.message)
}

fn paths(conds: &[RuleCondition]) -> Vec<String> {
    conds
        .iter()
        .filter_map(|c| match c {
            RuleCondition::PathPattern { config } => Some(config.values.clone()),
            _ => None,
        })
        .flatten()
        .collect()
}

fn weights(actions: &[Action]) -> Vec<Option<i32>> {
    actions
        .iter()
        .filter_map(|a| match a {
            Action::Forward { config } => Some(
                config
                    .target_groups
                    .iter()
                    .map(|t| t.weight)
                    .collect::<Vec<_>>(),
            ),
            _ => None,
        })
        .flatten()
        .collect()
}

pub(crate) fn service(name: &str, port: u16, node_port: u16, protocol: &str) -> String {
    format!(
        "apiVersion: v1\nkind: Service\nmetadata: {{name: {name}, namespace: demo}}\nspec:\n  type: NodePort\n  selector: {{app: {name}}}\n  ports: [{{port: {port}, targetPort: {port}, nodePort: {node_port}, protocol: {protocol}}}]\n---\n"
    )
}

pub(crate) const ALB: &str = r#"
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
  listeners: [{name: http, port: 80, protocol: HTTP, allowedRoutes: {namespaces: {from: All}}}]
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: api, namespace: demo}
spec:
  parentRefs: [{name: gw}]
  rules:
  - matches: [{path: {type: PathPrefix, value: /api}}]
    backendRefs: [{name: api, port: 80}]
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: canary, namespace: demo}
spec:
  parentRefs: [{name: gw}]
  rules:
  - matches: [{path: {type: PathPrefix, value: /}, headers: [{name: x-canary, value: "yes"}]}]
    backendRefs: [{name: web, port: 80, weight: 80}, {name: web-next, port: 80, weight: 20}]
"#;

const FOREIGN: &str = r#"
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: foreign, namespace: other}
spec:
  parentRefs: [{name: gw, namespace: demo}]
  rules:
  - matches: [{path: {type: PathPrefix, value: /foreign}}]
    backendRefs: [{name: api, namespace: demo, port: 80}]
"#;

/// `status:reason:controllerName` of condition `type_` of the route's first parent entry.
fn route_condition(r: &HttpRoute, type_: &str) -> Option<String> {
    let p = r.status.as_ref()?.parents.first()?;
    let c = p.conditions.iter().find(|c| c.type_ == type_)?;
    Some(format!("{}:{}:{}", c.status, c.reason, p.controller_name))
}

pub(crate) const NLB: &str = r#"
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
  listeners:
  - {name: tcp, port: 5000, protocol: TCP}
  - {name: udp, port: 5353, protocol: UDP}
---
apiVersion: gateway.networking.k8s.io/v1
kind: TCPRoute
metadata: {name: echo, namespace: demo-l4}
spec:
  parentRefs: [{name: gw, sectionName: tcp}]
  rules: [{backendRefs: [{name: echo, port: 5000}]}]
---
apiVersion: gateway.networking.k8s.io/v1
kind: UDPRoute
metadata: {name: dns, namespace: demo-l4}
spec:
  parentRefs: [{name: gw, sectionName: udp}]
  rules: [{backendRefs: [{name: dns, port: 5353}]}]
"#;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn gateways_to_alb_and_nlb_in_moto_then_detach_a_route_then_delete() {
    let c = cloud().await;
    let k8s = Cluster::start().await;
    install_gateway_api(&k8s.client).await;
    let ctl = start(&c, &k8s);
    let services = [
        service("api", 80, 30081, "TCP"),
        service("web", 80, 30082, "TCP"),
        service("web-next", 80, 30083, "TCP"),
    ]
    .concat();
    create_all(&k8s.client, &services).await;
    create_all(&k8s.client, ALB).await;
    let l4 = [
        service("echo", 5000, 30500, "TCP"),
        service("dns", 5353, 30553, "UDP"),
    ]
    .concat()
    .replace("namespace: demo}", "namespace: demo-l4}");
    create_all(&k8s.client, &l4).await;
    create_all(&k8s.client, NLB).await;
    // The binary's GatewayClass reconciler accepts both classes (and holds them).
    let classes: Api<GatewayClass> = Api::all(k8s.client.clone());
    for name in ["aws-alb", "aws-nlb"] {
        eventually("the class is accepted", WAIT, || async {
            let Some(c) = classes.get_opt(name).await.unwrap() else {
                return false;
            };
            let accepted = c
                .status
                .as_ref()
                .and_then(|s| s.conditions.as_ref())
                .is_some_and(|cs| {
                    cs.iter()
                        .any(|c| c.type_ == "Accepted" && c.status == "True")
                });
            accepted
                && c.finalizers()
                    .iter()
                    .any(|f| f == "gateway.k8s.aws/gatewayclass")
        })
        .await;
    }

    let gws: Api<Gateway> = Api::namespaced(k8s.client.clone(), "demo");
    eventually("the ALB Gateway is programmed", WAIT, || async {
        programmed(&gws, "gw").await.is_some()
    })
    .await;
    let alb = inv(&c, ALB_STACK).await;
    assert_eq!(alb.lbs.len(), 1, "{alb:#?}");
    let (lb, _) = &alb.lbs[0];
    assert_eq!(lb.lb_type, "application");
    assert_eq!(
        programmed(&gws, "gw").await.unwrap(),
        lb.arn,
        "ARN as message"
    );
    let gw = gws.get("gw").await.unwrap();
    assert!(gw.finalizers().contains(&"gateway.k8s.aws/alb".to_string()));
    let addr = &gw.status.unwrap().addresses.unwrap()[0];
    assert_eq!(addr.value, lb.dns_name.to_ascii_lowercase());
    assert_eq!(alb.listeners.len(), 1);
    assert_eq!(
        (alb.listeners[0].port, alb.listeners[0].protocol.as_str()),
        (80, "HTTP")
    );
    // Upstream's order: the longer prefix first.
    assert_eq!(alb.rules.len(), 2, "{alb:#?}");
    let (first, second) = (&alb.rules[0].0, &alb.rules[1].0);
    assert_eq!(paths(&first.conditions), vec!["/api", "/api/*"]);
    assert_eq!(paths(&second.conditions), vec!["/*"]);
    assert!(second.conditions.iter().any(|c| matches!(c,
        RuleCondition::HttpHeader { config } if config.http_header_name == "x-canary" && config.values == ["yes".to_string()])));
    assert_eq!(weights(&second.actions), vec![Some(80), Some(20)]);
    assert_eq!(alb.tgs.len(), 3, "one target group per backend");
    let tgbs: Api<TargetGroupBinding> = Api::namespaced(k8s.client.clone(), "demo");
    let ours = ListParams::default()
        .labels("gateway.k8s.aws.alb/stack-namespace=demo,gateway.k8s.aws.alb/stack-name=gw");
    eventually("a binding per target group", WAIT, || async {
        tgbs.list(&ours).await.unwrap().items.len() == 3
    })
    .await;

    // Route status: each route names the Gateway and is accepted by the ALB controller.
    let routes: Api<HttpRoute> = Api::namespaced(k8s.client.clone(), "demo");
    eventually("the routes are accepted", WAIT, || async {
        let r = routes.get("api").await.unwrap();
        route_condition(&r, "Accepted").as_deref() == Some("True:Accepted:gateway.k8s.aws/alb")
    })
    .await;

    let l4_gws: Api<Gateway> = Api::namespaced(k8s.client.clone(), "demo-l4");
    eventually("the NLB Gateway is programmed", WAIT, || async {
        programmed(&l4_gws, "gw").await.is_some()
    })
    .await;
    let nlb = inventory_of(c.elb.as_ref(), c.ec2.as_ref(), NLB_STACK, "demo-l4/gw").await;
    assert_eq!(nlb.lbs.len(), 1, "{nlb:#?}");
    assert_eq!(nlb.lbs[0].0.lb_type, "network");
    let mut ls: Vec<(u16, String)> = nlb
        .listeners
        .iter()
        .map(|l| (l.port, l.protocol.clone()))
        .collect();
    ls.sort();
    assert_eq!(ls, vec![(5000, "TCP".into()), (5353, "UDP".into())]);
    assert_eq!(nlb.tgs.len(), 2);

    // Detach the canary route: only its rule and target groups go.
    let (ok, out) = kubectl(
        &k8s.kubeconfig,
        &[
            "patch",
            "httproute",
            "-n",
            "demo",
            "canary",
            "--type=merge",
            "-p",
            r#"{"spec":{"parentRefs":[{"name":"elsewhere"}]}}"#,
        ],
        None,
    );
    assert!(ok, "{out}");
    let deadline = std::time::Instant::now() + WAIT;
    while inv(&c, ALB_STACK).await.rules.len() != 1 {
        assert!(
            std::time::Instant::now() < deadline,
            "the canary rule never went; controller log:\n{}",
            ctl.stderr()
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    eventually("its target groups go", WAIT, || async {
        inv(&c, ALB_STACK).await.tgs.len() == 1
    })
    .await;
    let after = inv(&c, ALB_STACK).await;
    assert_eq!(
        after.rules[0].0.arn, first.arn,
        "the other route's rule untouched"
    );
    assert_eq!(after.lbs[0].0.arn, lb.arn, "same ALB");

    // A route from another namespace sending to a Service of `demo` without a ReferenceGrant
    // there: refused with upstream's condition, and no target group is made for it.
    create_all(&k8s.client, FOREIGN).await;
    let foreign: Api<HttpRoute> = Api::namespaced(k8s.client.clone(), "other");
    eventually("the cross-namespace backend is refused", WAIT, || async {
        let Some(r) = foreign.get_opt("foreign").await.unwrap() else {
            return false;
        };
        route_condition(&r, "ResolvedRefs").as_deref()
            == Some("False:RefNotPermitted:gateway.k8s.aws/alb")
    })
    .await;
    assert_eq!(
        inv(&c, ALB_STACK).await.tgs.len(),
        1,
        "no target group for it"
    );

    for ns in ["demo", "demo-l4"] {
        let (ok, out) = kubectl(
            &k8s.kubeconfig,
            &["delete", "gateway", "-n", ns, "gw", "--wait=false"],
            None,
        );
        assert!(ok, "{out}");
    }
    eventually("both Gateways are gone", WAIT, || async {
        gws.get_opt("gw").await.unwrap().is_none() && l4_gws.get_opt("gw").await.unwrap().is_none()
    })
    .await;
    let gone = inv(&c, ALB_STACK).await;
    assert!(gone.is_empty() && gone.listeners.is_empty(), "{gone:#?}");
    let gone = inventory_of(c.elb.as_ref(), c.ec2.as_ref(), NLB_STACK, "demo-l4/gw").await;
    assert!(gone.is_empty() && gone.listeners.is_empty(), "{gone:#?}");
    assert!(tgbs.list(&ours).await.unwrap().items.is_empty());

    tokio::time::sleep(Duration::from_millis(200)).await;
    k8s.assert_requests_allowed_by_chart(&[
        "patch gateways.gateway.networking.k8s.io demo/gw",
        "patch gateways.gateway.networking.k8s.io/status demo/gw",
        "watch httproutes.gateway.networking.k8s.io */*",
        "watch tcproutes.gateway.networking.k8s.io */*",
        "create targetgroupbindings.elbv2.k8s.aws demo/*",
    ]);
    drop(ctl);
    k8s.server.stop().await;
}

/// Without the Gateway API CRDs, upstream's detection turns both gates off with its log lines
/// and no Gateway API kind is ever watched (an ordinary cluster sees no failing watch).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn missing_gateway_api_crds_turn_both_gates_off_with_upstreams_log_lines() {
    let k8s = Cluster::start().await;
    let ctl = k8s.controller(&["--cluster-name=e2e".into()]);
    let alb = ctl.wait_for_log("Disabling ALBGatewayAPI: missing required CRDs", WAIT);
    assert_eq!(alb["level"], "info");
    assert!(
        alb["missing"].as_str().unwrap().contains("HTTPRoute"),
        "{alb}"
    );
    let nlb = ctl.wait_for_log("Disabling NLBGatewayAPI: missing required CRDs", WAIT);
    assert!(
        nlb["missing"].as_str().unwrap().contains("TCPRoute"),
        "{nlb}"
    );
    ctl.wait_for_log("caches synced", WAIT);
    let gateway_requests: Vec<String> = k8s
        .server
        .requests()
        .iter()
        .filter(|r| r.group.starts_with("gateway."))
        .map(|r| r.describe())
        .collect();
    assert!(gateway_requests.is_empty(), "{gateway_requests:#?}");
    drop(ctl);
    k8s.server.stop().await;
}
