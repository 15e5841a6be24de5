//! The deployer on moto through the real SDK clients (`aws::build` with `--aws-api-endpoints`):
//! one deploy of a two-path Ingress creates upstream's resources; resources pre-created exactly
//! as upstream leaves them are adopted with no create or delete call (counted by the AWS metrics).

use aws_load_balancer_controller::aws::*;
use aws_load_balancer_controller::deploy::Deployer;
use aws_load_balancer_controller::model::{self, Stack, Token};

use super::functional::inventory;
use super::*;
use crate::support::moto_cloud::{calls_by_op, cloud, Cloud};

const DEMO: &str = r#"
apiVersion: v1
kind: Service
metadata: {name: front, namespace: demo, uid: aaaaaaaa-0000-0000-0000-000000000001}
spec: {type: NodePort, ports: [{port: 80, targetPort: 8080, nodePort: 30090}]}
---
apiVersion: v1
kind: Service
metadata: {name: back, namespace: demo, uid: aaaaaaaa-0000-0000-0000-000000000002}
spec: {type: NodePort, ports: [{port: 8080, targetPort: 8080, nodePort: 30091}]}
---
apiVersion: networking.k8s.io/v1
kind: Ingress
metadata:
  name: app
  namespace: demo
  annotations:
    kubernetes.io/ingress.class: alb
    alb.ingress.kubernetes.io/scheme: internet-facing
spec:
  rules:
  - http:
      paths:
      - {path: /api, pathType: Prefix, backend: {service: {name: back, port: {number: 8080}}}}
      - {path: /, pathType: Prefix, backend: {service: {name: front, port: {number: 80}}}}
"#;

fn writes(calls: &std::collections::BTreeMap<String, f64>) -> Vec<String> {
    calls
        .iter()
        .filter(|(op, v)| !op.starts_with("Describe") && **v > 0.0)
        .map(|(op, v)| format!("{op}={v}"))
        .collect()
}

fn deployer(c: &Cloud) -> Deployer {
    Deployer::new(c.elb.clone(), c.ec2.clone(), CLUSTER, c.vpc.clone()).with_delete_retry(
        std::time::Duration::from_millis(100),
        std::time::Duration::from_secs(5),
    )
}

fn assert_upstream_shape(inv: &super::functional::Inventory, stack: &Stack) {
    let want_lb = stack.load_balancer.as_ref().unwrap();
    assert_eq!(inv.lbs.len(), 1);
    assert_eq!(inv.lbs[0].0.name, want_lb.name);
    assert_eq!(inv.lbs[0].0.scheme, "internet-facing");
    assert_eq!(inv.lbs[0].1, want_lb.tags);
    assert_eq!(inv.sgs.len(), 1);
    assert_eq!(
        inv.sgs[0].name,
        stack.managed_security_group.as_ref().unwrap().name
    );
    assert_eq!(inv.listeners.len(), 1);
    assert_eq!(inv.listeners[0].port, 80);
    assert_eq!(inv.rules.len(), 2);
    for (r, t) in &inv.rules {
        let want = stack
            .listener_rules
            .iter()
            .find(|w| w.priority.to_string() == r.priority)
            .unwrap();
        assert_eq!(t, &want.tags);
    }
    assert_eq!(inv.tgs.len(), 2);
    for want in &stack.target_groups {
        let (_, t) = inv.tgs.iter().find(|(tg, _)| tg.name == want.name).unwrap();
        assert_eq!(t, &want.tags);
    }
}

#[tokio::test]
async fn moto_deploy_creates_upstream_resources_then_writes_nothing() {
    let c = cloud().await;
    let stack = build_one(DEMO, &c.vpc);
    assert_eq!(stack.stack_id, "demo/app");
    let d = deployer(&c);
    let out = d.deploy(&stack).await.unwrap();
    let inv = inventory(c.elb.as_ref(), c.ec2.as_ref(), "demo/app").await;
    assert_upstream_shape(&inv, &stack);
    assert_eq!(out.target_group_arns.len(), 2);
    let created = calls_by_op(&c.registry);
    assert_eq!(created.get("CreateRule"), Some(&2.0));
    assert_eq!(created.get("CreateTargetGroup"), Some(&2.0));

    let before = calls_by_op(&c.registry);
    deployer(&c).deploy(&stack).await.unwrap();
    let after = calls_by_op(&c.registry);
    let delta: std::collections::BTreeMap<String, f64> = after
        .iter()
        .map(|(k, v)| (k.clone(), v - before.get(k).copied().unwrap_or(0.0)))
        .collect();
    assert_eq!(
        writes(&delta),
        Vec::<String>::new(),
        "second deploy on moto"
    );

    d.delete_stack("demo/app").await.unwrap();
    let inv = inventory(c.elb.as_ref(), c.ec2.as_ref(), "demo/app").await;
    assert!(inv.lbs.is_empty() && inv.tgs.is_empty() && inv.sgs.is_empty());
}

/// What upstream leaves in AWS for `stack`, created here request by request.
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
    c.ec2
        .authorize_ingress(
            &sg,
            &[IpPermission {
                ip_protocol: "tcp".into(),
                from_port: Some(80),
                to_port: Some(80),
                ipv4_ranges: vec![IpRange::new("0.0.0.0/0")],
                ..Default::default()
            }],
        )
        .await
        .unwrap();
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
    let mut tg_arns = std::collections::BTreeMap::new();
    for tg in &stack.target_groups {
        let created = c
            .elb
            .create_target_group(&CreateTargetGroup {
                name: tg.name.clone(),
                protocol: Some("HTTP".into()),
                protocol_version: Some("HTTP1".into()),
                port: Some(tg.port as u16),
                vpc_id: Some(c.vpc.clone()),
                target_type: "instance".into(),
                ip_address_type: Some("ipv4".into()),
                health_check: HealthCheck {
                    protocol: Some("HTTP".into()),
                    port: Some("traffic-port".into()),
                    path: Some("/".into()),
                    interval_seconds: Some(15),
                    timeout_seconds: Some(5),
                    healthy_threshold: Some(2),
                    unhealthy_threshold: Some(2),
                    matcher_http_code: Some("200".into()),
                    ..Default::default()
                },
                tags: tg.tags.clone(),
            })
            .await
            .unwrap();
        tg_arns.insert(tg.id.clone(), created.arn);
    }
    let lb = stack.load_balancer.as_ref().unwrap();
    let created = c
        .elb
        .create_load_balancer(&CreateLoadBalancer {
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
        })
        .await
        .unwrap();
    let l = &stack.listeners[0];
    let listener = c
        .elb
        .create_listener(
            &created.arn,
            &ListenerSpec {
                port: 80,
                protocol: "HTTP".into(),
                default_actions: vec![Action::fixed("404", Some("text/plain"), None)],
                tags: l.tags.clone(),
                ..Default::default()
            },
        )
        .await
        .unwrap();
    for r in &stack.listener_rules {
        let tg = match &r.actions[0] {
            model::Action::Forward { config } => match &config.target_groups[0].target_group_arn {
                Token::TargetGroupArn(id) => tg_arns[id].clone(),
                other => panic!("{other:?}"),
            },
            other => panic!("{other:?}"),
        };
        let paths = match &r.conditions[0] {
            model::RuleCondition::PathPattern { config } => config.values.clone(),
            other => panic!("{other:?}"),
        };
        c.elb
            .create_rule(
                &listener.arn,
                &RuleSpec {
                    priority: r.priority as u32,
                    conditions: vec![RuleCondition::PathPattern {
                        values: paths,
                        regex_values: vec![],
                    }],
                    actions: vec![Action::forward(tg)],
                    tags: r.tags.clone(),
                },
            )
            .await
            .unwrap();
    }
}

#[tokio::test]
async fn moto_resources_left_by_upstream_are_adopted_without_creates_or_deletes() {
    let c = cloud().await;
    let stack = build_one(DEMO, &c.vpc);
    assert_eq!(stack.listener_rules.len(), 2);
    create_as_upstream(&c, &stack).await;
    let before = calls_by_op(&c.registry);
    deployer(&c).deploy(&stack).await.unwrap();
    let after = calls_by_op(&c.registry);
    let delta: std::collections::BTreeMap<String, f64> = after
        .iter()
        .map(|(k, v)| (k.clone(), v - before.get(k).copied().unwrap_or(0.0)))
        .filter(|(_, v)| *v > 0.0)
        .collect();
    let creates_or_deletes: Vec<&String> = delta
        .keys()
        .filter(|op| op.starts_with("Create") || op.starts_with("Delete"))
        .collect();
    assert!(creates_or_deletes.is_empty(), "{delta:?}");
    assert_eq!(
        writes(&delta),
        Vec::<String>::new(),
        "adoption needs no write at all"
    );
    let inv = inventory(c.elb.as_ref(), c.ec2.as_ref(), "demo/app").await;
    assert_upstream_shape(&inv, &stack);
}
