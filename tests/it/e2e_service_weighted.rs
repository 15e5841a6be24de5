//! End to end for weighted NLB target groups (`service.beta.kubernetes.io/actions.TCP-80`) with
//! the real binary, the API test server and moto, in upstream's four e2e contexts (ip and
//! instance targets, each alone and with a second NLB sharing the backends). Each NLB's listener
//! forwards to its Service's target group and one per backend port with the annotated weights,
//! every target group has a TargetGroupBinding, two NLBs share no target group; new weights
//! change the listener in place; deleting the Services leaves nothing in moto.

use std::collections::BTreeMap;

use k8s_openapi::api::core::v1::Service;
use kube::api::{Api, Patch, PatchParams};
use serde_json::json;

use crate::e2e_pod_gates::kubectl;
use crate::e2e_service::{apply, hostname, inv, start, NS, WAIT};
use crate::service_weighted::{
    action, backend, bindings_in, check_weighted_stack, forward, weighted, weights, Targets,
    ACTIONS,
};
use crate::support::e2e::Cluster;
use crate::support::moto_cloud::{cloud, Cloud};
use crate::tgb::eventually;

/// What one weighted Service's stack looked like when checked: its NLB and target group ARNs.
struct Deployed {
    lb: String,
    tgs: Vec<String>,
}

/// Waits for Service `name`'s NLB and its three bindings, then checks the whole stack in moto
/// and the cluster with weights `w`.
async fn deployed(
    c: &Cloud,
    k8s: &Cluster,
    services: &Api<Service>,
    name: &str,
    t: Targets,
    w: [i32; 3],
) -> Deployed {
    eventually(&format!("{name} gets its hostname"), WAIT, || async {
        hostname(services, name).await.is_some()
    })
    .await;
    eventually(&format!("{name} has its three bindings"), WAIT, || async {
        bindings_in(&k8s.client, name).await.len() == 3
    })
    .await;
    check(c, k8s, services, name, t, w).await
}

/// Checks Service `name`'s stack as it is now (no waiting).
async fn check(
    c: &Cloud,
    k8s: &Cluster,
    services: &Api<Service>,
    name: &str,
    t: Targets,
    w: [i32; 3],
) -> Deployed {
    let stack = inv(c, &format!("demo/{name}")).await;
    let bound = bindings_in(&k8s.client, name).await;
    let tgs = check_weighted_stack(&stack, &bound, name, t, w);
    let lb = &stack.lbs[0].0;
    assert_eq!(
        hostname(services, name).await.as_deref(),
        Some(lb.dns_name.to_ascii_lowercase().as_str()),
        "{name}: status names its NLB"
    );
    Deployed {
        lb: lb.arn.clone(),
        tgs,
    }
}

/// Deletes Service `name` and waits until it is gone with its whole stack.
async fn delete(c: &Cloud, k8s: &Cluster, services: &Api<Service>, name: &str) {
    let (ok, out) = kubectl(
        &k8s.kubeconfig,
        &["delete", "service", "-n", "demo", name, "--wait=false"],
        None,
    );
    assert!(ok, "{out}");
    eventually(&format!("{name} is gone"), WAIT, || async {
        services.get_opt(name).await.unwrap().is_none()
    })
    .await;
    let gone = inv(c, &format!("demo/{name}")).await;
    assert!(
        gone.is_empty() && gone.listeners.is_empty(),
        "{name}: NLB, listeners, target groups and security groups go: {gone:#?}"
    );
    eventually(&format!("{name}'s bindings go"), WAIT, || async {
        bindings_in(&k8s.client, name).await.is_empty()
    })
    .await;
}

/// One of upstream's contexts (`target_type` "ip" or "instance", alone or beside a second NLB
/// sharing the backends), through the binary against moto.
async fn run_context(target_type: &str, shared: bool) {
    let t = match target_type {
        "ip" => Targets::Ip,
        "instance" => Targets::Instance,
        other => panic!("no such target type {other}"),
    };
    let c = cloud().await;
    let k8s = Cluster::start().await;
    let ctl = start(&c, &k8s);
    apply(&k8s, NS);
    apply(&k8s, &backend("target-svc1", 81));
    apply(&k8s, &backend("target-svc2", 82));
    let names: &[&str] = if shared {
        &["my-nlb", "my-another-nlb"]
    } else {
        &["my-nlb"]
    };
    for name in names {
        apply(&k8s, &weighted(name, t));
    }
    let services: Api<Service> = Api::namespaced(k8s.client.clone(), "demo");

    // 1. Each NLB forwards to its three target groups with the annotated weights.
    let mut stacks = Vec::new();
    for name in names {
        stacks.push(deployed(&c, &k8s, &services, name, t, weights(t)).await);
    }
    if shared {
        let (first, second) = (&stacks[0], &stacks[1]);
        assert_ne!(first.lb, second.lb, "an NLB each");
        assert!(
            first.tgs.iter().all(|a| !second.tgs.contains(a)),
            "each NLB has target groups of its own: {:?} {:?}",
            first.tgs,
            second.tgs
        );
    }

    // 2. New weights on my-nlb: its listener changes in place; the other NLB keeps its own.
    let w = [0, 7, 993];
    let patch = json!({"metadata": {"annotations": {ACTIONS: action(t, w)}}});
    services
        .patch("my-nlb", &PatchParams::default(), &Patch::Merge(&patch))
        .await
        .unwrap();
    eventually("the listener takes the new weights", WAIT, || async {
        let (fwd, _): (BTreeMap<String, Option<i32>>, bool) =
            forward(&inv(&c, "demo/my-nlb").await);
        fwd.values().any(|w| *w == Some(993))
    })
    .await;
    let changed = check(&c, &k8s, &services, "my-nlb", t, w).await;
    assert_eq!(changed.lb, stacks[0].lb, "same NLB");
    assert_eq!(changed.tgs, stacks[0].tgs, "same target groups");
    if shared {
        let other = check(&c, &k8s, &services, "my-another-nlb", t, weights(t)).await;
        assert_eq!(other.tgs, stacks[1].tgs, "the other NLB untouched");
    }

    // 3. Delete: my-nlb's stack goes; the other NLB and its target groups on the same backends
    //    stay until their own Service goes.
    delete(&c, &k8s, &services, "my-nlb").await;
    if shared {
        let other = check(&c, &k8s, &services, "my-another-nlb", t, weights(t)).await;
        assert_eq!(other.lb, stacks[1].lb);
        assert_eq!(
            other.tgs, stacks[1].tgs,
            "the shared backends' other target groups stay"
        );
        delete(&c, &k8s, &services, "my-another-nlb").await;
    }
    // Nothing at all is left in this test's private moto, tagged or not.
    let lbs = c
        .elb
        .describe_load_balancers(&Default::default())
        .await
        .unwrap();
    assert!(lbs.is_empty(), "{lbs:#?}");
    let tgs = c
        .elb
        .describe_target_groups(&Default::default())
        .await
        .unwrap();
    assert!(tgs.is_empty(), "{tgs:#?}");
    // The backends are the user's: never deleted.
    for name in ["target-svc1", "target-svc2"] {
        assert!(services.get_opt(name).await.unwrap().is_some(), "{name}");
    }
    drop(ctl);
    k8s.server.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ip_targets_with_weighted_target_groups_in_moto() {
    run_context("ip", false).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ip_targets_with_two_nlbs_sharing_the_weighted_backends_in_moto() {
    run_context("ip", true).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn instance_targets_with_weighted_target_groups_in_moto() {
    run_context("instance", false).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn instance_targets_with_two_nlbs_sharing_the_weighted_backends_in_moto() {
    run_context("instance", true).await;
}
