//! The controller on moto through the real SDK clients (`aws::build` with endpoints): a two-path
//! Ingress becomes upstream's resources, an edited path changes only its rule, deletion leaves
//! nothing; resources pre-created exactly as upstream leaves them are adopted with no create or
//! delete call (counted by the AWS call metrics).

use std::collections::BTreeMap;
use std::time::Duration;

use aws_load_balancer_controller::aws::*;
use aws_load_balancer_controller::model::{self, ClusterObjects, Stack, Token};
use prometheus_client::registry::Registry;
use serde_json::json;

use super::*;
use crate::support::moto_cloud::{calls_by_op, cloud, Cloud};

/// Operations whose count grew since `before` (writes only).
fn new_writes(r: &Registry, before: &BTreeMap<String, f64>) -> Vec<String> {
    calls_by_op(r)
        .into_iter()
        .filter(|(op, _)| !op.starts_with("Describe"))
        .filter_map(|(op, v)| {
            let d = v - before.get(&op).copied().unwrap_or(0.0);
            (d > 0.0).then(|| format!("{op}={d}"))
        })
        .collect()
}

/// Waits until the metrics stop moving (the controller is idle).
async fn settle(r: &Registry) {
    let mut last = calls_by_op(r);
    let mut quiet = 0;
    while quiet < 8 {
        tokio::time::sleep(Duration::from_millis(100)).await;
        let now = calls_by_op(r);
        quiet = if now == last { quiet + 1 } else { 0 };
        last = now;
    }
}

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

/// What upstream leaves in AWS for `stack`, created request by request with its names and tags.
async fn create_as_upstream(c: &Cloud, stack: &Stack) {
    let msg = stack.managed_security_group.as_ref().unwrap();
    let sg = c
        .ec2
        .create_security_group(&CreateSecurityGroup {
            name: msg.name.clone(),
            description: msg.description.clone(),
            vpc_id: c.vpc.clone(),
            tags: msg.tags.clone(),
        })
        .await
        .unwrap();
    let open80 = IpPermission {
        ip_protocol: "tcp".into(),
        from_port: Some(80),
        to_port: Some(80),
        ipv4_ranges: vec![IpRange::new("0.0.0.0/0")],
        ..Default::default()
    };
    c.ec2.authorize_ingress(&sg, &[open80]).await.unwrap();
    let bsg = stack.backend_security_group.as_ref().unwrap();
    let backend = c
        .ec2
        .create_security_group(&CreateSecurityGroup {
            name: bsg.name.clone(),
            description: bsg.description.clone(),
            vpc_id: c.vpc.clone(),
            tags: bsg.tags.clone(),
        })
        .await
        .unwrap();
    let mut tg_arns = BTreeMap::new();
    for tg in &stack.target_groups {
        let hc = HealthCheck {
            protocol: Some("HTTP".into()),
            port: Some("traffic-port".into()),
            path: Some("/".into()),
            interval_seconds: Some(15),
            timeout_seconds: Some(5),
            healthy_threshold: Some(2),
            unhealthy_threshold: Some(2),
            matcher_http_code: Some("200".into()),
            ..Default::default()
        };
        let req = CreateTargetGroup {
            name: tg.name.clone(),
            protocol: Some("HTTP".into()),
            protocol_version: Some("HTTP1".into()),
            port: Some(tg.port as u16),
            vpc_id: Some(c.vpc.clone()),
            target_type: "instance".into(),
            ip_address_type: Some("ipv4".into()),
            health_check: hc,
            tags: tg.tags.clone(),
        };
        let created = c.elb.create_target_group(&req).await.unwrap();
        tg_arns.insert(tg.id.clone(), created.arn);
    }
    let lb = stack.load_balancer.as_ref().unwrap();
    let req = CreateLoadBalancer {
        name: lb.name.clone(),
        lb_type: "application".into(),
        scheme: "internet-facing".into(),
        ip_address_type: "ipv4".into(),
        subnet_mappings: c
            .subnets
            .iter()
            .cloned()
            .map(SubnetMapping::subnet)
            .collect(),
        security_groups: vec![sg, backend],
        tags: lb.tags.clone(),
    };
    let created = c.elb.create_load_balancer(&req).await.unwrap();
    let spec = ListenerSpec {
        port: 80,
        protocol: "HTTP".into(),
        default_actions: vec![Action::fixed("404", Some("text/plain"), None)],
        tags: stack.listeners[0].tags.clone(),
        ..Default::default()
    };
    let listener = c.elb.create_listener(&created.arn, &spec).await.unwrap();
    for r in &stack.listener_rules {
        let tg = match &r.actions[0] {
            model::Action::Forward { config } => match &config.target_groups[0].target_group_arn {
                Token::TargetGroupArn(id) => tg_arns[id].clone(),
                other => panic!("{other:?}"),
            },
            other => panic!("{other:?}"),
        };
        let values = match &r.conditions[0] {
            model::RuleCondition::PathPattern { config } => config.values.clone(),
            other => panic!("{other:?}"),
        };
        let spec = RuleSpec {
            priority: r.priority as u32,
            conditions: vec![RuleCondition::PathPattern {
                values,
                regex_values: vec![],
            }],
            actions: vec![Action::forward(tg)],
            tags: r.tags.clone(),
        };
        c.elb.create_rule(&listener.arn, &spec).await.unwrap();
    }
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
