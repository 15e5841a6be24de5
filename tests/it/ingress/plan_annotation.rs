//! Upstream's `IngressPlanAnnotation` gate end to end: the group's stack in upstream's schema
//! on its first member only (a stale plan on another member is cleared), equal to what
//! `model::upstream_json` renders for the stack built from the same objects; an unchanged plan
//! is not patched again; with the gate off after a restart, no member keeps a plan.

use aws_load_balancer_controller::annotations::DRY_RUN_PLAN;
use aws_load_balancer_controller::aws::Ec2Query;
use aws_load_balancer_controller::deploy::lb_subnets::subnets_of;
use aws_load_balancer_controller::model::upstream_json::{render, PlanFacts};
use aws_load_balancer_controller::model::{self, BuildEnv, ClusterObjects, GroupId};
use kube::api::ListParams;
use kube::ResourceExt;

use super::fake::{fake_aws, reconcile_again, settle};
use super::*;

const GATE: &str = "IngressPlanAnnotation";

async fn plan_of(h: &Harness, name: &str) -> Option<String> {
    let ing = h.ingress("demo", name).await?;
    ing.annotations().get(DRY_RUN_PLAN).cloned()
}

/// The plan the renderer gives for group `g` built from the cluster's current objects, with
/// the backend security group the controller created and its load balancer's subnets.
async fn expected_plan(h: &Harness, fake: &FakeAws) -> Value {
    let objs = ClusterObjects {
        ingresses: h
            .ingresses("demo")
            .list(&ListParams::default())
            .await
            .unwrap()
            .items,
        services: Api::<Service>::namespaced(h.client.clone(), "demo")
            .list(&ListParams::default())
            .await
            .unwrap()
            .items,
        ..Default::default()
    };
    let (groups, _) = model::load_groups(&objs, "alb");
    let group = &groups[&GroupId::explicit("g")];
    let stack = model::build_stack(group, &objs, &h.cfg.model, &BuildEnv::default()).unwrap();
    let q = Ec2Query::default().filter("tag:elbv2.k8s.aws/resource", ["backend-sg"]);
    let backend: Vec<String> = fake
        .describe_security_groups(&q)
        .await
        .unwrap()
        .into_iter()
        .map(|g| g.id)
        .collect();
    assert_eq!(backend.len(), 1, "{backend:?}");
    let inv = inventory(fake, fake, "g").await;
    assert_eq!(inv.lbs.len(), 1, "{inv:#?}");
    let facts = PlanFacts {
        backend_sg: backend.into_iter().next(),
        subnets: Some(subnets_of(&inv.lbs[0].0)),
        security_groups: None,
    };
    render(&stack, &facts)
}

#[tokio::test]
async fn plan_on_the_first_member_only_unchanged_not_patched_and_cleared_when_the_gate_goes_off() {
    let (fake, vpc) = fake_aws();
    let mut cfg = test_config(&vpc);
    cfg.model.feature_gates.insert(GATE.into(), true);
    let mut h = Harness::start_with(fake.clone(), fake.clone(), &vpc, cfg).await;
    // `b` has the lower group.order: it is the group's first member.
    h.apply_objects(app("demo", "a", 30101, Some(("g", 2))))
        .await;
    h.apply_objects(app("demo", "b", 30102, Some(("g", 1))))
        .await;
    eventually("both members served", WAIT, || async {
        h.hostname("demo", "a").await.is_some() && h.hostname("demo", "b").await.is_some()
    })
    .await;
    eventually("the plan on the first member", WAIT, || async {
        plan_of(&h, "b").await.is_some()
    })
    .await;
    settle(&fake).await;
    assert_eq!(plan_of(&h, "a").await, None);
    let plan: Value = serde_json::from_str(&plan_of(&h, "b").await.unwrap()).unwrap();
    assert_eq!(plan, expected_plan(&h, &fake).await);
    assert_eq!(plan["id"], "g");
    assert!(plan["resources"]["AWS::ElasticLoadBalancingV2::ListenerRule"]["80:2"].is_object());
    let lb =
        &plan["resources"]["AWS::ElasticLoadBalancingV2::LoadBalancer"]["LoadBalancer"]["spec"];
    assert_eq!(
        lb["subnetMapping"].as_array().map(Vec::len),
        Some(3),
        "{lb}"
    );

    // A stale plan on another member (left by an earlier first member) is cleared.
    let stale = json!({"metadata": {"annotations": {DRY_RUN_PLAN: "{\"id\":\"old\"}"}}});
    h.patch_ingress("demo", "a", stale).await;
    eventually("the stale plan cleared", WAIT, || async {
        plan_of(&h, "a").await.is_none()
    })
    .await;
    assert!(plan_of(&h, "b").await.is_some());

    // An unchanged plan is not written again: the only Ingress patch is the test's own poke.
    settle(&fake).await;
    h.server.clear_requests();
    reconcile_again(&h, &fake, "demo", "a").await;
    let patches: Vec<String> = h
        .server
        .requests()
        .into_iter()
        .filter(|r| r.verb == "patch" && r.resource == "ingresses" && r.subresource.is_empty())
        .map(|r| r.describe())
        .collect();
    assert_eq!(
        patches,
        ["patch ingresses.networking.k8s.io demo/a"],
        "{patches:?}"
    );

    // Gate off (restart): no member keeps a plan.
    h.crash().await;
    h.cfg.model.feature_gates.insert(GATE.into(), false);
    h.launch();
    eventually("the plan cleared from every member", WAIT, || async {
        plan_of(&h, "a").await.is_none() && plan_of(&h, "b").await.is_none()
    })
    .await;
    h.stop().await;
}
