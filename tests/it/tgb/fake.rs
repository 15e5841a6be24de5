//! The controller against the in-memory AWS fake: gates through every health state, drain
//! first, instance mode, multi-cluster ownership, deletion.

use std::collections::BTreeMap;
use std::sync::Arc;

use aws_load_balancer_controller::aws::fake::FakeAws;
use aws_load_balancer_controller::aws::{TargetDescription, TargetHealthState};
use k8s_openapi::api::core::v1::{Node, Service};
use k8s_openapi::api::events::v1::Event;
use kube::api::{Api, DeleteParams, ListParams, Patch, PatchParams};
use serde_json::json;

use super::*;

pub(super) fn fake_with_vpc() -> (Arc<FakeAws>, String) {
    let fake = Arc::new(FakeAws::new());
    let vpc = fake.add_vpc("10.0.0.0/16", BTreeMap::new());
    (fake, vpc)
}

pub(super) async fn events(h: &Harness, reason: &str) -> Vec<String> {
    let api: Api<Event> = Api::namespaced(h.client.clone(), NS);
    api.list(&ListParams::default())
        .await
        .unwrap()
        .items
        .into_iter()
        .filter(|e| e.reason.as_deref() == Some(reason))
        .map(|e| e.note.unwrap_or_default())
        .collect()
}

#[tokio::test]
async fn ip_binding_registers_gates_follow_health_drains_and_cleans_up() {
    let (fake, vpc) = fake_with_vpc();
    let arn = ip_tg(fake.as_ref(), "web", &vpc, "ip").await;
    let h = Harness::start(fake.clone(), "10.0.0.0/16").await;
    h.node("node-a", "i-0aaa", json!({})).await;
    h.service(
        "web",
        "ClusterIP",
        json!([{ "name": "http", "port": 80, "targetPort": 8080 }]),
    )
    .await;
    h.pod("web-1", "10.0.1.1", "node-a", Some("web")).await;
    h.pod("web-2", "10.0.1.2", "node-a", Some("web")).await;
    // Not ready yet: only the readiness gate holds them back.
    h.endpoints(
        "web",
        "http",
        8080,
        &[("web-1", "10.0.1.1", false), ("web-2", "10.0.1.2", false)],
    )
    .await;
    h.binding("web", "web", 80, &arn, "ip").await;

    let both = vec!["10.0.1.1:8080".to_string(), "10.0.1.2:8080".to_string()];
    eventually("both pods registered", WAIT, || async {
        targets(fake.as_ref(), &arn).await == both
    })
    .await;

    // The group is used by no load balancer: AWS says unused; the gate stays False with that reason.
    eventually("gate False/Target.NotInUse", WAIT, || async {
        h.gate("web-1", "web")
            .await
            .is_some_and(|(s, r, _)| s == "False" && r == "Target.NotInUse")
    })
    .await;
    let t1 = TargetDescription::new("10.0.1.1", 8080);
    fake.set_target_health(
        &arn,
        &t1,
        TargetHealthState::Initial,
        Some("Elb.InitialHealthChecking"),
    )
    .unwrap();
    eventually("gate False/Elb.InitialHealthChecking", WAIT, || async {
        h.gate("web-1", "web").await
            == Some((
                "False".into(),
                "Elb.InitialHealthChecking".into(),
                String::new(),
            ))
    })
    .await;
    fake.set_target_health(&arn, &t1, TargetHealthState::Healthy, None)
        .unwrap();
    eventually("gate True once healthy", WAIT, || async {
        h.gate("web-1", "web")
            .await
            .is_some_and(|(s, r, m)| s == "True" && r.is_empty() && m.is_empty())
    })
    .await;
    assert_eq!(
        h.gate("web-2", "web").await.unwrap().0,
        "False",
        "web-2 is not healthy"
    );

    let b = h.bindings().get("web").await.unwrap();
    assert!(b
        .metadata
        .finalizers
        .unwrap_or_default()
        .contains(&"elbv2.k8s.aws/resources".to_string()));
    assert_eq!(
        b.status.and_then(|s| s.observed_generation),
        b.metadata.generation
    );
    assert!(events(&h, "SuccessfullyReconciled")
        .await
        .contains(&"Successfully reconciled".to_string()));

    // Drain first: a terminating endpoint is deregistered at once.
    let slice = json!({ "endpoints": [
        { "addresses": ["10.0.1.1"], "conditions": { "ready": true }, "targetRef": { "kind": "Pod", "name": "web-1" } },
        { "addresses": ["10.0.1.2"], "conditions": { "ready": false, "terminating": true }, "targetRef": { "kind": "Pod", "name": "web-2" } },
    ]});
    h.slices()
        .patch("web-abc", &PatchParams::default(), &Patch::Merge(&slice))
        .await
        .unwrap();
    eventually("terminating web-2 deregistered", WAIT, || async {
        targets(fake.as_ref(), &arn).await == vec!["10.0.1.1:8080".to_string()]
    })
    .await;

    // Deleting the binding empties the group, releases the gates and drops the finalizer.
    h.bindings()
        .delete("web", &DeleteParams::default())
        .await
        .unwrap();
    eventually("binding gone", WAIT, || async {
        h.bindings().get_opt("web").await.unwrap().is_none()
    })
    .await;
    assert!(targets(fake.as_ref(), &arn).await.is_empty());
    let (s, _, m) = h.gate("web-2", "web").await.unwrap();
    assert_eq!(
        (s.as_str(), m.as_str()),
        ("True", "Target Group Binding is deleted")
    );
    h.stop().await;
}

#[tokio::test]
async fn instance_binding_follows_suitable_ready_nodes() {
    let (fake, vpc) = fake_with_vpc();
    let arn = ip_tg(fake.as_ref(), "nodes", &vpc, "instance").await;
    let h = Harness::start(fake.clone(), "10.0.0.0/16").await;
    h.node("node-a", "i-0aaa", json!({})).await;
    h.node("node-b", "i-0bbb", json!({ "role": "web" })).await;
    h.node(
        "master",
        "i-0mmm",
        json!({ "node-role.kubernetes.io/master": "" }),
    )
    .await;
    h.node(
        "excluded",
        "i-0xxx",
        json!({ "node.kubernetes.io/exclude-from-external-load-balancers": "" }),
    )
    .await;
    h.node(
        "fargate",
        "i-0fff",
        json!({ "eks.amazonaws.com/compute-type": "fargate" }),
    )
    .await;
    h.service(
        "web",
        "NodePort",
        json!([{ "name": "http", "port": 80, "targetPort": 8080 }]),
    )
    .await;
    let svc = Api::<Service>::namespaced(h.client.clone(), NS)
        .get("web")
        .await
        .unwrap();
    let np = svc.spec.unwrap().ports.unwrap()[0]
        .node_port
        .expect("node port assigned");
    h.binding("nodes", "web", "http", &arn, "instance").await;

    let want = |ids: &[&str]| ids.iter().map(|i| format!("{i}:{np}")).collect::<Vec<_>>();
    eventually("suitable nodes registered", WAIT, || async {
        targets(fake.as_ref(), &arn).await == want(&["i-0aaa", "i-0bbb"])
    })
    .await;

    // A node going NotReady leaves; a new node joins.
    let not_ready = json!({ "status": { "conditions": [{ "type": "Ready", "status": "False" }] } });
    Api::<Node>::all(h.client.clone())
        .patch_status("node-a", &PatchParams::default(), &Patch::Merge(&not_ready))
        .await
        .unwrap();
    h.node("node-c", "i-0ccc", json!({})).await;
    eventually("node-a out, node-c in", WAIT, || async {
        targets(fake.as_ref(), &arn).await == want(&["i-0bbb", "i-0ccc"])
    })
    .await;

    // A ClusterIP Service cannot back instance targets.
    h.service("internal", "ClusterIP", json!([{ "port": 80 }]))
        .await;
    h.binding("bad", "internal", 80, &arn, "instance").await;
    eventually("FailedReconcile event", WAIT, || async {
        events(&h, "FailedReconcile").await.iter().any(|n| {
            n == "Failed reconcile due to service type must be either 'NodePort' or 'LoadBalancer': default/internal"
        })
    })
    .await;
    h.stop().await;
}

#[tokio::test]
async fn multi_cluster_binding_leaves_foreign_targets_alone() {
    let (fake, vpc) = fake_with_vpc();
    let arn = ip_tg(fake.as_ref(), "shared", &vpc, "ip").await;
    use aws_load_balancer_controller::aws::ElbV2;
    fake.register_targets(&arn, &[target("10.9.9.9", 8080)])
        .await
        .unwrap();
    let h = Harness::start(fake.clone(), "10.0.0.0/16").await;
    h.node("node-a", "i-0aaa", json!({})).await;
    h.service(
        "web",
        "ClusterIP",
        json!([{ "port": 80, "targetPort": 8080 }]),
    )
    .await;
    h.pod("web-1", "10.0.1.1", "node-a", None).await;
    h.pod("web-2", "10.0.1.2", "node-a", None).await;
    h.endpoints(
        "web",
        "",
        8080,
        &[("web-1", "10.0.1.1", true), ("web-2", "10.0.1.2", true)],
    )
    .await;
    let mut tgb: serde_json::Value = json!({
        "apiVersion": "elbv2.k8s.aws/v1beta1", "kind": "TargetGroupBinding",
        "metadata": { "name": "shared", "namespace": NS },
        "spec": { "targetGroupARN": arn, "targetType": "ip", "multiClusterTargetGroup": true,
                  "serviceRef": { "name": "web", "port": 80 } }
    });
    let obj = serde_json::from_value(tgb.take()).unwrap();
    h.bindings()
        .create(&Default::default(), &obj)
        .await
        .unwrap();

    eventually(
        "ours registered next to the foreign target",
        WAIT,
        || async {
            targets(fake.as_ref(), &arn).await
                == vec!["10.0.1.1:8080", "10.0.1.2:8080", "10.9.9.9:8080"]
        },
    )
    .await;
    eventually("record written", WAIT, || async {
        h.config_maps()
            .get_opt("aws-lbc-targets-shared")
            .await
            .unwrap()
            .and_then(|c| c.data)
            .and_then(|d| d.get("targets").cloned())
            == Some("10.0.1.1:8080,10.0.1.2:8080".to_string())
    })
    .await;
    h.endpoints("web", "", 8080, &[("web-1", "10.0.1.1", true)])
        .await;
    eventually("only our removed endpoint leaves", WAIT, || async {
        targets(fake.as_ref(), &arn).await == vec!["10.0.1.1:8080", "10.9.9.9:8080"]
    })
    .await;
    h.bindings()
        .delete("shared", &DeleteParams::default())
        .await
        .unwrap();
    eventually("binding gone", WAIT, || async {
        h.bindings().get_opt("shared").await.unwrap().is_none()
    })
    .await;
    assert_eq!(targets(fake.as_ref(), &arn).await, vec!["10.9.9.9:8080"]);
    assert!(h
        .config_maps()
        .get_opt("aws-lbc-targets-shared")
        .await
        .unwrap()
        .is_none());
    h.stop().await;
}

/// `--enable-endpoint-slices=false`: the same registration from a core/v1 Endpoints object,
/// ready and not-ready (gated) addresses alike, and scale-down when an address goes.
#[tokio::test]
async fn endpoints_objects_drive_targets_when_slices_are_disabled() {
    let (fake, vpc) = fake_with_vpc();
    let arn = ip_tg(fake.as_ref(), "web", &vpc, "ip").await;
    let ec2: Arc<dyn aws_load_balancer_controller::aws::Ec2> = fake.clone();
    let h = Harness::start_with(fake.clone(), ec2, "10.0.0.0/16", |c| {
        c.endpoint_slices = false
    })
    .await;
    h.node("node-a", "i-0aaa", json!({})).await;
    h.service(
        "web",
        "ClusterIP",
        json!([{ "name": "http", "port": 80, "targetPort": 8080 }]),
    )
    .await;
    h.pod("web-1", "10.0.1.1", "node-a", None).await;
    h.pod("web-2", "10.0.1.2", "node-a", Some("web")).await;
    let address = |pod: &str, ip: &str| json!({ "ip": ip, "nodeName": "node-a", "targetRef": { "kind": "Pod", "name": pod, "namespace": NS } });
    let endpoints = |addresses: Vec<serde_json::Value>, not_ready: Vec<serde_json::Value>| {
        json!({
            "apiVersion": "v1", "kind": "Endpoints",
            "metadata": { "name": "web", "namespace": NS },
            "subsets": [{ "addresses": addresses, "notReadyAddresses": not_ready,
                          "ports": [{ "name": "http", "port": 8080, "protocol": "TCP" }] }]
        })
    };
    let api: Api<k8s_openapi::api::core::v1::Endpoints> = Api::namespaced(h.client.clone(), NS);
    let pp = PatchParams::apply("test").force();
    let both = endpoints(
        vec![address("web-1", "10.0.1.1")],
        vec![address("web-2", "10.0.1.2")],
    );
    api.patch("web", &pp, &Patch::Apply(&both)).await.unwrap();
    h.binding("web", "web", "http", &arn, "ip").await;
    let want = vec!["10.0.1.1:8080".to_string(), "10.0.1.2:8080".to_string()];
    eventually("ready and gated pods registered", WAIT, || async {
        targets(fake.as_ref(), &arn).await == want
    })
    .await;

    let one = endpoints(vec![address("web-1", "10.0.1.1")], vec![]);
    api.patch("web", &pp, &Patch::Apply(&one)).await.unwrap();
    eventually("scaled down", WAIT, || async {
        targets(fake.as_ref(), &arn).await == vec!["10.0.1.1:8080".to_string()]
    })
    .await;
    h.stop().await;
}

/// Target health is polled at the `--targetgroupbinding-requeue-duration` cadence only while a
/// gated pod waits; once every gate is True the binding makes no DescribeTargetHealth call
/// until something changes (watches) or the sync period passes.
#[tokio::test]
async fn only_waiting_gates_poll_target_health() {
    let (fake, vpc) = fake_with_vpc();
    let arn = ip_tg(fake.as_ref(), "web", &vpc, "ip").await;
    // The harness sets the flag's cadence to 200 ms.
    let h = Harness::start(fake.clone(), "10.0.0.0/16").await;
    h.node("node-a", "i-0aaa", json!({})).await;
    h.service(
        "web",
        "ClusterIP",
        json!([{ "name": "http", "port": 80, "targetPort": 8080 }]),
    )
    .await;
    h.pod("web-1", "10.0.1.1", "node-a", Some("web")).await;
    h.endpoints("web", "http", 8080, &[("web-1", "10.0.1.1", false)])
        .await;
    h.binding("web", "web", 80, &arn, "ip").await;
    eventually("registered", WAIT, || async {
        targets(fake.as_ref(), &arn).await == vec!["10.0.1.1:8080".to_string()]
    })
    .await;

    // The gate waits: health is polled.
    fake.clear_calls();
    tokio::time::sleep(Duration::from_millis(1200)).await;
    let polls = fake.count("DescribeTargetHealth");
    assert!(
        polls >= 3,
        "a waiting gate polls at the flag's cadence: {polls}"
    );

    fake.set_target_health(
        &arn,
        &target("10.0.1.1", 8080),
        TargetHealthState::Healthy,
        None,
    )
    .unwrap();
    eventually("gate True", WAIT, || async {
        h.gate("web-1", "web")
            .await
            .is_some_and(|(s, _, _)| s == "True")
    })
    .await;
    // Settled: the gate write's own watch event may reconcile once more, then silence.
    tokio::time::sleep(Duration::from_millis(500)).await;
    fake.clear_calls();
    tokio::time::sleep(Duration::from_millis(1500)).await;
    assert_eq!(
        fake.count("DescribeTargetHealth"),
        0,
        "a settled binding does not poll: {:?}",
        fake.calls()
    );
    h.stop().await;
}

#[tokio::test]
async fn cross_account_binding_registers_in_the_roles_account_and_cleans_up() {
    use aws_load_balancer_controller::aws::fake::FakeRoles;
    let (own, _) = fake_with_vpc();
    let theirs = Arc::new(FakeAws::in_account("999999999999"));
    let their_vpc = theirs.add_vpc("10.0.0.0/16", BTreeMap::new());
    let arn = ip_tg(theirs.as_ref(), "shared", &their_vpc, "ip").await;
    let role = "arn:aws:iam::999999999999:role/lbc";
    let roles = Arc::new(FakeRoles::default());
    roles.add(role, "ext-7", theirs.clone());
    let with_roles = roles.clone();
    let h = Harness::start_with(own.clone(), Arc::new(FakeAws::new()), "10.0.0.0/16", |c| {
        c.roles = Some(with_roles)
    })
    .await;
    h.node("node-a", "i-0aaa", json!({})).await;
    h.service(
        "web",
        "ClusterIP",
        json!([{ "name": "http", "port": 80, "targetPort": 8080 }]),
    )
    .await;
    h.pod("web-1", "10.0.1.1", "node-a", None).await;
    h.endpoints("web", "http", 8080, &[("web-1", "10.0.1.1", true)])
        .await;
    let tgb: TargetGroupBinding = serde_json::from_value(json!({
        "apiVersion": "elbv2.k8s.aws/v1beta1", "kind": "TargetGroupBinding",
        "metadata": { "name": "web", "namespace": NS },
        "spec": { "targetGroupARN": arn, "targetType": "ip", "serviceRef": { "name": "web", "port": 80 },
                  "iamRoleArnToAssume": role, "assumeRoleExternalId": "ext-7" }
    }))
    .unwrap();
    h.bindings()
        .create(&Default::default(), &tgb)
        .await
        .unwrap();
    eventually("registered in their account", WAIT, || async {
        targets(theirs.as_ref(), &arn).await == vec!["10.0.1.1:8080".to_string()]
    })
    .await;
    assert_eq!(
        own.count("RegisterTargets"),
        0,
        "nothing registered with our credentials"
    );
    assert!(roles
        .assumed()
        .iter()
        .all(|(r, e)| r == role && e == "ext-7"));

    h.bindings()
        .delete("web", &DeleteParams::default())
        .await
        .unwrap();
    eventually("deregistered from their account", WAIT, || async {
        targets(theirs.as_ref(), &arn).await.is_empty()
    })
    .await;
    h.stop().await;
}

#[tokio::test]
async fn watch_namespaces_limit_every_watch_and_reconcile() {
    let (fake, vpc) = fake_with_vpc();
    let arn = ip_tg(fake.as_ref(), "web", &vpc, "ip").await;
    let h = Harness::start_with(fake.clone(), Arc::new(FakeAws::new()), "10.0.0.0/16", |c| {
        c.namespaces = vec![NS.to_string(), "team".to_string()]
    })
    .await;
    let make = |ns: &str| -> TargetGroupBinding {
        serde_json::from_value(json!({
            "apiVersion": "elbv2.k8s.aws/v1beta1", "kind": "TargetGroupBinding",
            "metadata": { "name": "web", "namespace": ns },
            "spec": { "targetGroupARN": arn, "targetType": "ip", "serviceRef": { "name": "web", "port": 80 } }
        }))
        .unwrap()
    };
    for ns in ["other", "team"] {
        let obj: k8s_openapi::api::core::v1::Namespace =
            serde_json::from_value(json!({"metadata": {"name": ns}})).unwrap();
        Api::all(h.client.clone())
            .create(&Default::default(), &obj)
            .await
            .unwrap();
    }
    for ns in ["other", NS, "team"] {
        Api::<TargetGroupBinding>::namespaced(h.client.clone(), ns)
            .create(&Default::default(), &make(ns))
            .await
            .unwrap();
    }
    let finalized = |ns: &'static str| {
        let api = Api::<TargetGroupBinding>::namespaced(h.client.clone(), ns);
        async move {
            api.get("web")
                .await
                .unwrap()
                .metadata
                .finalizers
                .unwrap_or_default()
                .contains(&"elbv2.k8s.aws/resources".to_string())
        }
    };
    eventually(
        "bindings of both watched namespaces reconciled",
        WAIT,
        || async { finalized(NS).await && finalized("team").await },
    )
    .await;
    assert!(
        !finalized("other").await,
        "a binding outside --watch-namespace was reconciled"
    );
    // No list or watch of a namespaced kind went beyond the two namespaces.
    let namespaced = ["targetgroupbindings", "services", "endpointslices", "pods"];
    let stray: Vec<String> = h
        .server
        .requests()
        .into_iter()
        .filter(|r| matches!(r.verb.as_str(), "list" | "watch"))
        .filter(|r| namespaced.contains(&r.resource.as_str()))
        .filter(|r| !matches!(r.namespace.as_deref(), Some(NS) | Some("team")))
        .map(|r| r.describe())
        .collect();
    assert!(stray.is_empty(), "{stray:?}");
    h.stop().await;
}
