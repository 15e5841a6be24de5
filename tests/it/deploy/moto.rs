//! The deployer on moto through the real SDK clients (`aws::build` with `--aws-api-endpoints`):
//! one deploy of a two-path Ingress creates upstream's resources (and reports the new load
//! balancer as the create answered); resources pre-created exactly as upstream leaves them are
//! adopted with no create or delete call (counted by the AWS metrics).

use aws_load_balancer_controller::deploy::Deployer;
use aws_load_balancer_controller::model::Stack;

use super::functional::inventory;
use super::*;
use crate::support::moto_cloud::{calls_by_op, cloud, create_as_upstream, Cloud};

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

/// The pass that creates the load balancer reports it as CreateLoadBalancer answered
/// (`provisioning`, upstream's status), though moto's describe right after already says
/// `active` (a Gateway would be Programmed before its routes are in); the next pass reports
/// what AWS described since.
#[tokio::test]
async fn moto_a_new_load_balancer_is_reported_as_created_then_as_described() {
    let c = cloud().await;
    let stack = build_one(DEMO, &c.vpc);
    let d = deployer(&c);
    let made = d.deploy(&stack).await.unwrap().load_balancer.unwrap();
    assert_eq!(made.state, "provisioning", "as the create answered");
    let next = d.deploy(&stack).await.unwrap().load_balancer.unwrap();
    assert_eq!(next.arn, made.arn);
    assert_eq!(next.state, "active", "as described after the create");
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

/// Gate `EnableRGTAPI` through the SDK: moto's Resource Groups Tagging API lists the stack's
/// target groups by its tags, and a deploy and a deletion find the stack with GetResources and
/// never DescribeTags (moto's request log).
#[tokio::test]
async fn moto_enable_rgt_api_finds_the_stack_with_get_resources() {
    use aws_load_balancer_controller::aws::{
        build_tagging, parse_api_endpoints, AwsConfig, Fence, RESOURCE_TYPE_TARGET_GROUP,
    };
    let c = cloud().await;
    let stack = build_one(DEMO, &c.vpc);
    deployer(&c).deploy(&stack).await.unwrap();
    let cfg = AwsConfig {
        region: Some("us-west-2".into()),
        api_endpoints: parse_api_endpoints(&format!("tagging={}", c.moto.endpoint)).unwrap(),
        ..Default::default()
    };
    let tagging = build_tagging(&cfg, "us-west-2", None, Fence::default()).await;
    let stack_tags = tags(&[
        ("elbv2.k8s.aws/cluster", CLUSTER),
        ("ingress.k8s.aws/stack", "demo/app"),
    ]);
    let tgs = tagging
        .get_resources(RESOURCE_TYPE_TARGET_GROUP, &stack_tags)
        .await
        .unwrap();
    assert_eq!(tgs.len(), 2, "{tgs:?}");
    assert!(tgs
        .iter()
        .all(|t| t.tags.get("ingress.k8s.aws/stack").map(String::as_str) == Some("demo/app")));

    // Without listener and rule tagging, the only ELBv2 tags to read are the stack's.
    let rgt = || {
        deployer(&c)
            .with_listener_rules_tagging(false)
            .with_resource_tagging(Some(tagging.clone()))
    };
    c.moto.start_recording().await;
    let before = calls_by_op(&c.registry);
    rgt().deploy(&stack).await.unwrap();
    let after = calls_by_op(&c.registry);
    let delta: std::collections::BTreeMap<String, f64> = after
        .iter()
        .map(|(k, v)| (k.clone(), v - before.get(k).copied().unwrap_or(0.0)))
        .collect();
    assert_eq!(
        writes(&delta),
        Vec::<String>::new(),
        "found, nothing to change"
    );
    let actions = c.moto.recorded_actions();
    assert!(
        actions.iter().any(|a| a == "tagging:GetResources"),
        "{actions:?}"
    );
    assert!(
        !actions
            .iter()
            .any(|a| a == "elasticloadbalancing:DescribeTags"),
        "{actions:?}"
    );

    rgt().delete_stack("demo/app").await.unwrap();
    let inv = inventory(c.elb.as_ref(), c.ec2.as_ref(), "demo/app").await;
    assert!(inv.lbs.is_empty() && inv.tgs.is_empty() && inv.sgs.is_empty());
}

/// A security group tagged `Name=<name>` in `vpc` whose GroupName is something else.
async fn tagged_sg(c: &Cloud, group_name: &str, name_tag: &str) -> String {
    let raw = crate::support::moto_cloud::raw_ec2(&c.moto.endpoint);
    let id = raw
        .create_security_group()
        .group_name(group_name)
        .description("user group")
        .vpc_id(&c.vpc)
        .send()
        .await
        .unwrap()
        .group_id()
        .unwrap()
        .to_string();
    let tag = aws_sdk_ec2::types::Tag::builder()
        .key("Name")
        .value(name_tag)
        .build();
    raw.create_tags()
        .resources(&id)
        .tags(tag)
        .send()
        .await
        .unwrap();
    id
}

#[tokio::test]
async fn moto_security_groups_annotation_resolves_names_through_the_name_tag() {
    use aws_load_balancer_controller::deploy::resolve_security_groups;
    let c = cloud().await;
    let web = tagged_sg(&c, "launch-wizard-7", "web-front").await;
    let _decoy = tagged_sg(&c, "web-front", "unrelated").await;

    let names = |v: &[&str]| v.iter().map(|s| s.to_string()).collect::<Vec<_>>();
    let got = resolve_security_groups(c.ec2.as_ref(), &c.vpc, &names(&["web-front", &web]))
        .await
        .unwrap();
    assert_eq!(got, vec![web.clone(), web.clone()]);
    let err = resolve_security_groups(c.ec2.as_ref(), &c.vpc, &names(&["launch-wizard-7"]))
        .await
        .unwrap_err();
    assert_eq!(
        err.to_string(),
        "couldn't find all security groups: requested names [launch-wizard-7] but found []"
    );

    let yaml = DEMO.replace(
        "alb.ingress.kubernetes.io/scheme: internet-facing",
        "alb.ingress.kubernetes.io/scheme: internet-facing\n    alb.ingress.kubernetes.io/security-groups: web-front",
    );
    let stack = build_one(&yaml, &c.vpc);
    deployer(&c).deploy(&stack).await.unwrap();
    let inv = inventory(c.elb.as_ref(), c.ec2.as_ref(), "demo/app").await;
    assert_eq!(inv.lbs[0].0.security_groups, vec![web]);
}

/// `enable-frontend-nlb` on moto (which has `alb`-type target groups and registers an ALB in
/// them): the NLB, its TCP listener and target group of type `alb` with the ALB registered on
/// its port 80; a second deploy writes nothing; removing the annotation deletes the NLB side.
#[tokio::test]
async fn moto_frontend_nlb_end_to_end() {
    let c = cloud().await;
    let yaml = DEMO.replace(
        "alb.ingress.kubernetes.io/scheme: internet-facing",
        "alb.ingress.kubernetes.io/scheme: internet-facing\n    alb.ingress.kubernetes.io/enable-frontend-nlb: \"true\"\n    alb.ingress.kubernetes.io/frontend-nlb-scheme: internet-facing",
    );
    let stack = build_one(&yaml, &c.vpc);
    let fe = stack.frontend_nlb.as_ref().unwrap();
    let d = deployer(&c);
    let out = d.deploy(&stack).await.unwrap();
    let alb = out.load_balancer.clone().unwrap();
    let nlb = out.frontend_nlb.clone().unwrap();
    assert_eq!(nlb.name, fe.load_balancer.name);
    let inv = inventory(c.elb.as_ref(), c.ec2.as_ref(), "demo/app").await;
    assert_eq!(inv.lbs.len(), 2);
    let (tg, tags) = inv
        .tgs
        .iter()
        .find(|(t, _)| t.target_type == "alb")
        .expect("a target group of type alb");
    assert_eq!(tg.name, fe.target_groups[0].name);
    assert_eq!(tags, &fe.target_groups[0].tags);
    let nlb_listener = inv
        .listeners
        .iter()
        .find(|l| l.load_balancer_arn == nlb.arn)
        .unwrap();
    assert_eq!(
        (nlb_listener.port, nlb_listener.protocol.as_str()),
        (80, "TCP")
    );
    let targets = c.elb.describe_target_health(&tg.arn, &[]).await.unwrap();
    assert_eq!(targets.len(), 1);
    assert_eq!(targets[0].target.id, alb.arn);
    assert_eq!(targets[0].target.port, Some(80));

    let before = calls_by_op(&c.registry);
    d.deploy(&stack).await.unwrap();
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

    let plain = build_one(DEMO, &c.vpc);
    let again = d.deploy(&plain).await.unwrap();
    assert_eq!(again.load_balancer.unwrap().arn, alb.arn, "the ALB stays");
    let inv = inventory(c.elb.as_ref(), c.ec2.as_ref(), "demo/app").await;
    assert_eq!(inv.lbs.len(), 1);
    assert!(inv.tgs.iter().all(|(t, _)| t.target_type != "alb"));
    d.delete_stack("demo/app").await.unwrap();
}
