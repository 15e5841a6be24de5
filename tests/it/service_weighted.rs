//! Weighted NLB target groups through the Service reconciler (in-process, with the API test
//! server and FakeAws), in upstream's four e2e contexts (`test/e2e/service`, "with weighted target
//! groups"): ip and instance targets, each alone and beside a second NLB sharing the backends.
//! Each NLB's listener forwards to its Service's target group and to one per backend port with
//! the annotation's weights (and stickiness), every target group the stack creates has a
//! TargetGroupBinding on its own Service, two NLBs never share a target group, and another pass
//! over an unchanged Service writes nothing to AWS. Alone, the weights then change in place and,
//! once the annotation goes, the backends' target groups and bindings go with it.

use std::collections::BTreeMap;
use std::time::Duration;

use aws_load_balancer_controller::aws;
use aws_load_balancer_controller::crd::TargetGroupBinding;
use aws_load_balancer_controller::model::Action;
use k8s_openapi::apimachinery::pkg::util::intstr::IntOrString;
use kube::api::{Api, ListParams, Patch, PatchParams};
use kube::ResourceExt;
use serde_json::json;

use crate::ingress::{eventually, WAIT};
use crate::service_controller::Running;
use crate::support::inventory::{inventory_of, Inventory};

const STACK_TAG: &str = "service.k8s.aws/stack";
const RESOURCE_TAG: &str = "service.k8s.aws/resource";
pub(crate) const ACTIONS: &str = "service.beta.kubernetes.io/actions.TCP-80";

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Targets {
    Ip,
    Instance,
}

/// The weights of upstream's e2e action: (the Service, target-svc1:81, target-svc2:82).
pub(crate) fn weights(t: Targets) -> [i32; 3] {
    match t {
        Targets::Ip => [20, 60, 40],
        Targets::Instance => [1, 2, 3],
    }
}

/// Upstream's action (the ip one with its unknown `tcpEnabled` key, the instance one with
/// stickiness on).
pub(crate) fn action(t: Targets, w: [i32; 3]) -> String {
    let extra = match t {
        Targets::Ip => (r#","tcpEnabled":true"#, ""),
        Targets::Instance => ("", r#","targetGroupStickinessConfig":{"enabled":true}"#),
    };
    format!(
        r#"{{"type":"forward","forwardConfig":{{"baseServiceWeight":{},"targetGroups":[{{"serviceName":"target-svc1","servicePort":81,"weight":{}{}}},{{"serviceName":"target-svc2","servicePort":82,"weight":{}}}]{}}}}}"#,
        w[0], w[1], extra.0, w[2], extra.1
    )
}

/// A NodePort Service the weighted action names (upstream's `target-svc1`, `target-svc2`).
pub(crate) fn backend(name: &str, port: i32) -> String {
    format!(
        "apiVersion: v1\nkind: Service\nmetadata:\n  name: {name}\n  namespace: demo\nspec:\n  type: NodePort\n  selector: {{app: multi-port}}\n  ports:\n  - {{port: {port}, targetPort: {port}, nodePort: {}, protocol: TCP}}\n",
        30000 + port
    )
}

/// Node port of the weighted Service `name`'s port 80.
pub(crate) fn node_port(name: &str) -> i32 {
    if name == "my-nlb" {
        30080
    } else {
        30090
    }
}

/// Upstream's weighted LoadBalancer Service (`my-nlb`, or `my-another-nlb` sharing backends).
pub(crate) fn weighted(name: &str, t: Targets) -> String {
    let kind = match t {
        Targets::Ip => "    service.beta.kubernetes.io/aws-load-balancer-type: nlb-ip\n",
        Targets::Instance => "    service.beta.kubernetes.io/aws-load-balancer-type: external\n    service.beta.kubernetes.io/aws-load-balancer-nlb-target-type: instance\n",
    };
    format!(
        "apiVersion: v1\nkind: Service\nmetadata:\n  name: {name}\n  namespace: demo\n  annotations:\n{kind}    service.beta.kubernetes.io/aws-load-balancer-scheme: internet-facing\n    {ACTIONS}: '{}'\nspec:\n  type: LoadBalancer\n  selector: {{app: multi-port}}\n  ports:\n  - {{port: 80, targetPort: 80, nodePort: {}, protocol: TCP}}\n",
        action(t, weights(t)),
        node_port(name)
    )
}

async fn inv(r: &Running, name: &str) -> Inventory {
    inventory_of(
        r.fake.as_ref(),
        r.fake.as_ref(),
        STACK_TAG,
        &format!("demo/{name}"),
    )
    .await
}

/// The stack's target groups by resource id.
pub(crate) fn by_id(inv: &Inventory) -> BTreeMap<String, aws::TargetGroup> {
    inv.tgs
        .iter()
        .map(|(g, tags)| {
            (
                tags.get(RESOURCE_TAG).cloned().unwrap_or_default(),
                g.clone(),
            )
        })
        .collect()
}

/// The listener's forward as (target group ARN → weight), and whether stickiness is on.
pub(crate) fn forward(inv: &Inventory) -> (BTreeMap<String, Option<i32>>, bool) {
    assert_eq!(inv.listeners.len(), 1, "{inv:#?}");
    let l = &inv.listeners[0];
    assert_eq!((l.port, l.protocol.as_str()), (80, "TCP"));
    let [Action::Forward { config: f }] = &l.default_actions[..] else {
        panic!("{:?}", l.default_actions)
    };
    let tgs = f
        .target_groups
        .iter()
        .map(|t| (t.target_group_arn.literal().unwrap().to_string(), t.weight))
        .collect();
    let sticky = f
        .target_group_stickiness_config
        .as_ref()
        .is_some_and(|s| s.enabled == Some(true));
    (tgs, sticky)
}

/// The bindings of stack `name` as (target group ARN → (Service, port, binding name)).
async fn bindings(r: &Running, name: &str) -> BTreeMap<String, (String, String, String)> {
    bindings_in(&r.h.client, name).await
}

/// [`bindings`] through any client (the e2e tests' cluster).
pub(crate) async fn bindings_in(
    client: &kube::Client,
    name: &str,
) -> BTreeMap<String, (String, String, String)> {
    let api: Api<TargetGroupBinding> = Api::namespaced(client.clone(), "demo");
    let ours = ListParams::default().labels(&format!(
        "service.k8s.aws/stack-namespace=demo,service.k8s.aws/stack-name={name}"
    ));
    api.list(&ours)
        .await
        .unwrap()
        .items
        .into_iter()
        .map(|b| {
            let port = match &b.spec.service_ref.port {
                IntOrString::Int(n) => n.to_string(),
                IntOrString::String(s) => s.clone(),
            };
            let svc = b.spec.service_ref.name.clone();
            (b.spec.target_group_arn.clone(), (svc, port, b.name_any()))
        })
        .collect()
}

/// Checks the weighted stack of Service `name` in AWS and in the cluster, with weights `w`;
/// returns its target group ARNs.
async fn check_weighted(r: &Running, name: &str, t: Targets, w: [i32; 3]) -> Vec<String> {
    let inv = inv(r, name).await;
    let bound = bindings(r, name).await;
    check_weighted_stack(&inv, &bound, name, t, w)
}

/// [`check_weighted`] on a stack already read: `inv` from AWS, `bound` from [`bindings_in`].
pub(crate) fn check_weighted_stack(
    inv: &Inventory,
    bound: &BTreeMap<String, (String, String, String)>,
    name: &str,
    t: Targets,
    w: [i32; 3],
) -> Vec<String> {
    assert_eq!(inv.lbs.len(), 1, "{inv:#?}");
    let lb = &inv.lbs[0].0;
    assert_eq!(lb.lb_type, "network");
    let tgs = by_id(inv);
    let own = format!("demo/{name}:80");
    let (tt, ports) = match t {
        Targets::Ip => ("ip", [80, 81, 82]),
        Targets::Instance => ("instance", [node_port(name), 30081, 30082]),
    };
    let expected = [
        (own.as_str(), "80", ports[0], w[0]),
        ("demo/target-svc1:81", "81", ports[1], w[1]),
        ("demo/target-svc2:82", "82", ports[2], w[2]),
    ];
    assert_eq!(
        tgs.len(),
        3,
        "the Service's own and one per backend: {inv:#?}"
    );
    let (forwarded, sticky) = forward(inv);
    assert_eq!(bound.len(), 3, "{bound:?}");
    for (id, svc_port, port, weight) in expected {
        let g = tgs
            .get(id)
            .unwrap_or_else(|| panic!("no target group {id}: {inv:#?}"));
        assert_eq!(g.target_type, tt, "{id}");
        assert_eq!(g.port, Some(port as u16), "{id}");
        assert_eq!(g.protocol.as_deref(), Some("TCP"), "{id}");
        assert_eq!(
            g.load_balancer_arns,
            vec![lb.arn.clone()],
            "{id}: this NLB's only"
        );
        assert_eq!(
            forwarded.get(&g.arn),
            Some(&Some(weight)),
            "{id}: {forwarded:?}"
        );
        let service = id.trim_start_matches("demo/").split(':').next().unwrap();
        assert_eq!(
            bound.get(&g.arn),
            Some(&(service.to_string(), svc_port.to_string(), g.name.clone())),
            "{id}: bound on its own Service's port, named after the target group"
        );
    }
    assert_eq!(forwarded.len(), 3, "{forwarded:?}");
    assert_eq!(
        sticky,
        t == Targets::Instance,
        "stickiness as the action says"
    );
    let mut arns: Vec<String> = tgs.values().map(|g| g.arn.clone()).collect();
    arns.sort();
    arns
}

/// Another pass over the unchanged Service `name` (an annotation edit queues it): AWS is read
/// and never written.
async fn second_pass_writes_nothing(r: &Running, name: &str) {
    // Whatever pass is still finishing (bindings, status) ends first.
    tokio::time::sleep(Duration::from_millis(300)).await;
    r.fake.clear_calls();
    // A new value each time: an edit that changes nothing queues nothing.
    let stamp = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_nanos()
        .to_string();
    let touch = json!({"metadata": {"annotations": {"example.com/touched": stamp}}});
    r.services()
        .patch(name, &PatchParams::default(), &Patch::Merge(&touch))
        .await
        .unwrap();
    eventually("a second pass reads the listeners", WAIT, || async {
        r.fake.count("DescribeListeners") > 0
    })
    .await;
    tokio::time::sleep(Duration::from_millis(500)).await;
    assert!(
        r.fake.write_calls().is_empty(),
        "{name}: an unchanged weighted Service makes no AWS write: {:?}",
        r.fake.write_calls()
    );
}

async fn deployed(r: &Running, name: &str) {
    eventually(&format!("{name} gets its hostname"), WAIT, || async {
        r.hostname(name).await.is_some()
    })
    .await;
}

/// One of upstream's contexts: `t` targets, alone or beside a second NLB sharing the backends.
async fn weighted_context(t: Targets, shared: bool) {
    let r = Running::start().await;
    r.h.apply(&backend("target-svc1", 81)).await;
    r.h.apply(&backend("target-svc2", 82)).await;
    r.h.apply(&weighted("my-nlb", t)).await;
    if shared {
        r.h.apply(&weighted("my-another-nlb", t)).await;
    }
    deployed(&r, "my-nlb").await;
    let first = check_weighted(&r, "my-nlb", t, weights(t)).await;
    if shared {
        deployed(&r, "my-another-nlb").await;
        let second = check_weighted(&r, "my-another-nlb", t, weights(t)).await;
        assert!(
            first.iter().all(|a| !second.contains(a)),
            "each NLB has target groups of its own: {first:?} {second:?}"
        );
        second_pass_writes_nothing(&r, "my-another-nlb").await;
    }
    second_pass_writes_nothing(&r, "my-nlb").await;
    assert!(
        r.h.events("demo", "my-nlb")
            .await
            .iter()
            .all(|(kind, _, _)| kind != "Warning"),
        "{:?}",
        r.h.events("demo", "my-nlb").await
    );
    if shared {
        return;
    }

    // New weights: the listener changes in place, the target groups stay.
    let w = [0, 7, 993];
    let patch = json!({"metadata": {"annotations": {ACTIONS: action(t, w)}}});
    r.services()
        .patch("my-nlb", &PatchParams::default(), &Patch::Merge(&patch))
        .await
        .unwrap();
    eventually("the listener takes the new weights", WAIT, || async {
        let inv = inv(&r, "my-nlb").await;
        let (fwd, _) = forward(&inv);
        fwd.values().any(|w| *w == Some(993))
    })
    .await;
    assert_eq!(check_weighted(&r, "my-nlb", t, w).await, first);
    second_pass_writes_nothing(&r, "my-nlb").await;

    // The annotation goes: back to the Service's own target group; the backends' go.
    let patch = json!({"metadata": {"annotations": {ACTIONS: null}}});
    r.services()
        .patch("my-nlb", &PatchParams::default(), &Patch::Merge(&patch))
        .await
        .unwrap();
    eventually("the backends' target groups go", WAIT, || async {
        inv(&r, "my-nlb").await.tgs.len() == 1
    })
    .await;
    let after = inv(&r, "my-nlb").await;
    let own = by_id(&after)["demo/my-nlb:80"].arn.clone();
    assert!(first.contains(&own), "the Service's own target group stays");
    let (fwd, _) = forward(&after);
    assert_eq!(fwd.keys().collect::<Vec<_>>(), vec![&own]);
    eventually("the backends' bindings go", WAIT, || async {
        bindings(&r, "my-nlb").await.keys().collect::<Vec<_>>() == vec![&own]
    })
    .await;
    second_pass_writes_nothing(&r, "my-nlb").await;
}

#[tokio::test]
async fn ip_targets_with_weighted_target_groups() {
    weighted_context(Targets::Ip, false).await;
}

#[tokio::test]
async fn ip_targets_with_two_nlbs_sharing_the_weighted_backends() {
    weighted_context(Targets::Ip, true).await;
}

#[tokio::test]
async fn instance_targets_with_weighted_target_groups() {
    weighted_context(Targets::Instance, false).await;
}

#[tokio::test]
async fn instance_targets_with_two_nlbs_sharing_the_weighted_backends() {
    weighted_context(Targets::Instance, true).await;
}

/// With the gate off, a forward to several target groups is refused before any AWS write, with
/// upstream's message.
#[tokio::test]
async fn the_gate_off_refuses_weighted_target_groups_before_any_write() {
    let r = Running::start_with(|c| {
        c.model
            .feature_gates
            .insert("WeightedTargetGroups".into(), false);
    })
    .await;
    r.h.apply(&backend("target-svc1", 81)).await;
    r.h.apply(&backend("target-svc2", 82)).await;
    r.h.apply(&weighted("my-nlb", Targets::Ip)).await;
    eventually("FailedBuildModel", WAIT, || async {
        r.h.events("demo", "my-nlb")
            .await
            .iter()
            .any(|(kind, reason, note)| {
                kind == "Warning"
                    && reason == "FailedBuildModel"
                    && note
                        == "Failed build model due to weighted target groups feature is disabled"
            })
    })
    .await;
    assert!(
        r.fake.write_calls().is_empty(),
        "{:?}",
        r.fake.write_calls()
    );
}
