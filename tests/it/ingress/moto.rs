//! The controller on moto through the real SDK clients (`aws::build` with endpoints): a two-path
//! Ingress becomes upstream's resources, an edited path changes only its rule, deletion leaves
//! nothing; resources pre-created exactly as upstream leaves them are adopted with no create or
//! delete call (counted by the AWS call metrics).

use aws_load_balancer_controller::model::{self, ClusterObjects, Stack};
use serde_json::json;

use super::*;
use crate::support::moto_cloud::{calls_by_op, cloud, create_as_upstream, new_writes, settle};

/// The stack the model builds from the objects in the API server (same config as the controller).
async fn model_stack(h: &Harness, ns: &str) -> Stack {
    let services = Api::<k8s_openapi::api::core::v1::Service>::namespaced(h.client.clone(), ns)
        .list(&Default::default())
        .await
        .unwrap()
        .items;
    let ingresses = h
        .ingresses(ns)
        .list(&Default::default())
        .await
        .unwrap()
        .items;
    let objs = ClusterObjects {
        services,
        ingresses,
        ..Default::default()
    };
    let (groups, _) = model::load_groups(&objs, "alb");
    let g = groups.values().next().unwrap();
    model::build_stack(g, &objs, &h.cfg.model, &Default::default()).unwrap()
}

fn assert_upstream_shape(inv: &Inventory, stack: &Stack) {
    let want_lb = stack.load_balancer.as_ref().unwrap();
    assert_eq!(inv.lbs.len(), 1);
    assert_eq!(inv.lbs[0].0.name, want_lb.name);
    assert_eq!(inv.lbs[0].1, want_lb.tags);
    assert_eq!(inv.sgs.len(), 1);
    assert_eq!(
        inv.sgs[0].name,
        stack.managed_security_group.as_ref().unwrap().name
    );
    assert_eq!(inv.listeners.len(), 1);
    assert_eq!(inv.rules.len(), 2);
    assert_eq!(inv.tgs.len(), 2);
    for want in &stack.target_groups {
        let (_, t) = inv.tgs.iter().find(|(tg, _)| tg.name == want.name).unwrap();
        assert_eq!(t, &want.tags);
    }
}

#[tokio::test]
async fn moto_two_paths_then_edit_then_delete() {
    let c = cloud().await;
    let h = Harness::start(c.elb.clone(), c.ec2.clone(), &c.vpc).await;
    h.apply(DEMO).await;
    eventually("status hostname", WAIT, || async {
        h.hostname("demo", "app").await.is_some()
    })
    .await;
    let stack = model_stack(&h, "demo").await;
    let inv = inventory(c.elb.as_ref(), c.ec2.as_ref(), "demo/app").await;
    assert_upstream_shape(&inv, &stack);
    assert_eq!(
        h.hostname("demo", "app").await.unwrap(),
        inv.lbs[0].0.dns_name.to_ascii_lowercase()
    );
    assert_eq!(
        h.bindings()
            .list(&Default::default())
            .await
            .unwrap()
            .items
            .len(),
        2
    );

    settle(&c.registry).await;
    let before = calls_by_op(&c.registry);
    let mut ing = h.ingress("demo", "app").await.unwrap();
    let spec = ing.spec.as_mut().unwrap();
    spec.rules.as_mut().unwrap()[0].http.as_mut().unwrap().paths[0].path = Some("/v2".into());
    h.patch_ingress("demo", "app", json!({"spec": json_of(&ing.spec)}))
        .await;
    eventually("edited rule on moto", WAIT, || async {
        let inv = inventory(c.elb.as_ref(), c.ec2.as_ref(), "demo/app").await;
        inv.rules.first().map(|(r, _)| paths(r)) == Some(vec!["/v2".into(), "/v2/*".into()])
    })
    .await;
    settle(&c.registry).await;
    assert_eq!(new_writes(&c.registry, &before), vec!["ModifyRule=1"]);

    h.delete_ingress("demo", "app").await;
    eventually("ingress gone", WAIT, || async {
        h.ingress("demo", "app").await.is_none()
    })
    .await;
    assert!(inventory(c.elb.as_ref(), c.ec2.as_ref(), "demo/app")
        .await
        .is_empty());
    assert!(h
        .bindings()
        .list(&Default::default())
        .await
        .unwrap()
        .items
        .is_empty());
    h.stop().await;
}

#[tokio::test]
async fn moto_resources_left_by_upstream_are_adopted_without_creates_or_deletes() {
    let c = cloud().await;
    let mut h = Harness::new(c.elb.clone(), c.ec2.clone(), &c.vpc, test_config(&c.vpc)).await;
    h.apply(DEMO).await;
    let stack = model_stack(&h, "demo").await;
    create_as_upstream(&c, &stack).await;
    let before = calls_by_op(&c.registry);
    h.launch();
    eventually("status hostname", WAIT, || async {
        h.hostname("demo", "app").await.is_some()
    })
    .await;
    settle(&c.registry).await;
    let writes = new_writes(&c.registry, &before);
    assert_eq!(
        writes,
        Vec::<String>::new(),
        "adoption needs no write at all"
    );
    let inv = inventory(c.elb.as_ref(), c.ec2.as_ref(), "demo/app").await;
    assert_upstream_shape(&inv, &stack);
    assert_eq!(
        h.bindings()
            .list(&Default::default())
            .await
            .unwrap()
            .items
            .len(),
        2
    );
    h.stop().await;
}
