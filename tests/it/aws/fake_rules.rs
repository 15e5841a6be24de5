//! AWS rules that moto does not enforce, checked on the fake; plus target health control and
//! AWS's ARN / DNS formats.

use std::sync::Arc;

use aws_load_balancer_controller::aws::fake::{spec, FakeAws};
use aws_load_balancer_controller::aws::*;
use aws_load_balancer_controller::model::action::ValuesConfig;
use aws_load_balancer_controller::model::{self, Protocol, RuleCondition, StickinessConfig, Token};
use regex::Regex;

use super::env::{tags, Env};

async fn setup() -> (Env, Arc<FakeAws>, String, Vec<String>) {
    let env = Env::fake();
    let fake = env.fake.clone().unwrap();
    let (vpc, subnets) = env.network().await;
    (env, fake, vpc, subnets)
}

fn lb_req(name: &str, subnets: &[String], scheme: &str) -> model::LoadBalancer {
    let scheme = match scheme {
        "internal" => model::LoadBalancerScheme::Internal,
        _ => model::LoadBalancerScheme::InternetFacing,
    };
    spec::load_balancer(name, "application", scheme, subnets, &[])
}

#[tokio::test]
async fn names_formats_and_duplicates() {
    let (env, _, vpc, subnets) = setup().await;
    let long = "a".repeat(33);
    let err = env
        .elb
        .create_load_balancer(&lb_req(&long, &subnets[..2], ""))
        .await
        .unwrap_err();
    assert!(matches!(err, AwsError::Validation { .. }), "{err:?}");
    let err = env
        .elb
        .create_load_balancer(&lb_req("-bad", &subnets[..2], ""))
        .await
        .unwrap_err();
    assert!(matches!(err, AwsError::Validation { .. }), "{err:?}");
    // An ALB needs two AZs.
    let err = env
        .elb
        .create_load_balancer(&lb_req("one-az", &subnets[..1], ""))
        .await
        .unwrap_err();
    assert!(matches!(err, AwsError::Validation { .. }), "{err:?}");

    let lb = env
        .elb
        .create_load_balancer(&lb_req(&"b".repeat(32), &subnets[..2], "internal"))
        .await
        .unwrap();
    let arn = Regex::new(
        r"^arn:aws:elasticloadbalancing:us-west-2:\d{12}:loadbalancer/app/b{32}/[0-9a-f]{16}$",
    )
    .unwrap();
    assert!(arn.is_match(&lb.arn), "{}", lb.arn);
    let dns = Regex::new(r"^internal-b{32}-\d+\.us-west-2\.elb\.amazonaws\.com$").unwrap();
    assert!(dns.is_match(&lb.dns_name), "{}", lb.dns_name);

    // Same name and settings: AWS returns the existing LB; other settings: DuplicateLoadBalancerName.
    let again = env
        .elb
        .create_load_balancer(&lb_req(&"b".repeat(32), &subnets[..2], "internal"))
        .await
        .unwrap();
    assert_eq!(again.arn, lb.arn);
    let err = env
        .elb
        .create_load_balancer(&lb_req(&"b".repeat(32), &subnets[..2], "internet-facing"))
        .await
        .unwrap_err();
    assert!(matches!(err, AwsError::Duplicate { .. }), "{err:?}");
    assert_eq!(err.code(), "DuplicateLoadBalancerName");
    assert_eq!(
        env.elb
            .describe_load_balancers(&LoadBalancerQuery::default())
            .await
            .unwrap()
            .len(),
        1
    );

    let pub_lb = env
        .elb
        .create_load_balancer(&lb_req("web", &subnets[..2], ""))
        .await
        .unwrap();
    assert!(
        Regex::new(r"^web-\d{10}\.us-west-2\.elb\.amazonaws\.com$")
            .unwrap()
            .is_match(&pub_lb.dns_name),
        "{}",
        pub_lb.dns_name
    );

    let tg = env
        .elb
        .create_target_group((&spec::ip_target_group("tg", 80)).into(), &vpc)
        .await
        .unwrap();
    let re =
        Regex::new(r"^arn:aws:elasticloadbalancing:us-west-2:\d{12}:targetgroup/tg/[0-9a-f]{16}$")
            .unwrap();
    assert!(re.is_match(&tg.arn), "{}", tg.arn);
}

#[tokio::test]
async fn deletion_protection() {
    let (env, _, _, subnets) = setup().await;
    let lb = env
        .elb
        .create_load_balancer(&lb_req("protected", &subnets[..2], ""))
        .await
        .unwrap();
    env.elb
        .modify_load_balancer_attributes(&lb.arn, &tags(&[("deletion_protection.enabled", "true")]))
        .await
        .unwrap();
    let err = env.elb.delete_load_balancer(&lb.arn).await.unwrap_err();
    assert!(matches!(err, AwsError::NotPermitted { .. }), "{err:?}");
    assert_eq!(err.code(), "OperationNotPermitted");
    env.elb
        .modify_load_balancer_attributes(
            &lb.arn,
            &tags(&[("deletion_protection.enabled", "false")]),
        )
        .await
        .unwrap();
    env.elb.delete_load_balancer(&lb.arn).await.unwrap();
    // Deleting again succeeds, as in AWS.
    env.elb.delete_load_balancer(&lb.arn).await.unwrap();
}

#[tokio::test]
async fn security_group_in_use() {
    let (env, _, vpc, subnets) = setup().await;
    let sg = env
        .ec2
        .create_security_group(&CreateSecurityGroup {
            name: "lb".into(),
            description: "d".into(),
            vpc_id: vpc.clone(),
            tags: Tags::new(),
        })
        .await
        .unwrap();
    let backend = env
        .ec2
        .create_security_group(&CreateSecurityGroup {
            name: "backend".into(),
            description: "d".into(),
            vpc_id: vpc,
            tags: Tags::new(),
        })
        .await
        .unwrap();
    let mut req = lb_req("with-sg", &subnets[..2], "");
    req.security_groups = vec![model::Token::Literal(sg.clone())];
    let lb = env.elb.create_load_balancer(&req).await.unwrap();
    let err = env.ec2.delete_security_group(&sg).await.unwrap_err();
    assert!(matches!(err, AwsError::InUse { .. }), "{err:?}");
    assert_eq!(err.code(), "DependencyViolation");

    // Referenced from another group's rule: also in use.
    let perm = IpPermission {
        ip_protocol: "tcp".into(),
        from_port: Some(0),
        to_port: Some(65535),
        group_ids: vec![IpRange::new(&backend)],
        ..Default::default()
    };
    env.ec2
        .authorize_ingress(&sg, std::slice::from_ref(&perm))
        .await
        .unwrap();
    assert_eq!(
        env.ec2
            .delete_security_group(&backend)
            .await
            .unwrap_err()
            .code(),
        "DependencyViolation"
    );
    env.ec2
        .revoke_ingress(&sg, std::slice::from_ref(&perm))
        .await
        .unwrap();
    let err = env.ec2.revoke_ingress(&sg, &[perm]).await.unwrap_err();
    assert_eq!(err.code(), "InvalidPermission.NotFound");
    env.ec2.delete_security_group(&backend).await.unwrap();

    env.elb.delete_load_balancer(&lb.arn).await.unwrap();
    env.ec2.delete_security_group(&sg).await.unwrap();
}

#[tokio::test]
async fn tag_limits() {
    let (env, fake, vpc, subnets) = setup().await;
    let lb = env
        .elb
        .create_load_balancer(&lb_req("tagged", &subnets[..2], ""))
        .await
        .unwrap();
    let fifty: Tags = (0..50)
        .map(|i| (format!("k{i}"), "v".to_string()))
        .collect();
    env.elb
        .add_tags(std::slice::from_ref(&lb.arn), &fifty)
        .await
        .unwrap();
    let err = env
        .elb
        .add_tags(std::slice::from_ref(&lb.arn), &tags(&[("one-more", "x")]))
        .await
        .unwrap_err();
    assert!(matches!(err, AwsError::LimitExceeded { .. }), "{err:?}");
    assert_eq!(err.code(), "TooManyTags");
    // Overwriting an existing key is not a new tag.
    env.elb
        .add_tags(std::slice::from_ref(&lb.arn), &tags(&[("k0", "changed")]))
        .await
        .unwrap();

    // A VPC without tags (the one from setup has `Name`).
    let _ = vpc;
    let vpc = fake.add_vpc("10.9.0.0/16", Tags::new());
    env.ec2
        .create_tags(std::slice::from_ref(&vpc), &fifty)
        .await
        .unwrap();
    let err = env
        .ec2
        .create_tags(std::slice::from_ref(&vpc), &tags(&[("x", "y")]))
        .await
        .unwrap_err();
    assert!(matches!(err, AwsError::LimitExceeded { .. }), "{err:?}");

    let err = env
        .elb
        .describe_tags(&[
            "arn:aws:elasticloadbalancing:us-west-2:123456789012:targetgroup/x/0123456789abcdef"
                .into(),
        ])
        .await
        .unwrap_err();
    assert_eq!(err.code(), "TargetGroupNotFound");
}

#[tokio::test]
async fn target_health_is_settable() {
    let (env, fake, vpc, subnets) = setup().await;
    let lb = env
        .elb
        .create_load_balancer(&lb_req("health", &subnets[..2], ""))
        .await
        .unwrap();
    let tg = env
        .elb
        .create_target_group((&spec::ip_target_group("tg", 80)).into(), &vpc)
        .await
        .unwrap();
    let spec = model::Listener {
        load_balancer_arn: Token::Literal(lb.arn.clone()),
        ..model::Listener::new(
            80,
            Protocol::Http,
            vec![model::Action::forward_arn(&tg.arn)],
        )
    };
    env.elb.create_listener(&spec).await.unwrap();
    let t = TargetDescription::new("10.0.1.5", 80);
    env.elb
        .register_targets(&tg.arn, std::slice::from_ref(&t))
        .await
        .unwrap();
    let h = env.elb.describe_target_health(&tg.arn, &[]).await.unwrap();
    assert_eq!(h[0].health.state, TargetHealthState::Initial);
    assert_eq!(
        h[0].health.reason.as_deref(),
        Some("Elb.RegistrationInProgress")
    );

    for state in [
        TargetHealthState::Healthy,
        TargetHealthState::Unhealthy,
        TargetHealthState::Unused,
        TargetHealthState::Draining,
    ] {
        fake.set_target_health(&tg.arn, &t, state, Some("Target.ResponseCodeMismatch"))
            .unwrap();
        let h = env
            .elb
            .describe_target_health(&tg.arn, std::slice::from_ref(&t))
            .await
            .unwrap();
        assert_eq!(h[0].health.state, state);
    }

    // Draining on deregistration, when switched on.
    fake.set_all_targets_health(&tg.arn, TargetHealthState::Healthy)
        .unwrap();
    fake.set_deregistration_draining(true);
    env.elb
        .deregister_targets(&tg.arn, std::slice::from_ref(&t))
        .await
        .unwrap();
    let h = env.elb.describe_target_health(&tg.arn, &[]).await.unwrap();
    assert_eq!(h[0].health.state, TargetHealthState::Draining);
    fake.finish_draining();
    assert!(env
        .elb
        .describe_target_health(&tg.arn, &[])
        .await
        .unwrap()
        .is_empty());
}

#[tokio::test]
async fn rule_rules_moto_does_not_enforce() {
    let (env, _, vpc, subnets) = setup().await;
    let lb = env
        .elb
        .create_load_balancer(&lb_req("rules", &subnets[..2], ""))
        .await
        .unwrap();
    let tg = env
        .elb
        .create_target_group((&spec::ip_target_group("tg", 80)).into(), &vpc)
        .await
        .unwrap();
    let spec = model::Listener {
        load_balancer_arn: Token::Literal(lb.arn.clone()),
        ..model::Listener::new(
            80,
            Protocol::Http,
            vec![model::Action::forward_arn(&tg.arn)],
        )
    };
    let l = env.elb.create_listener(&spec).await.unwrap();
    // AWS echoes a single forward with weight 1 and stickiness off.
    let model::Action::Forward { config: f } = &l.default_actions[0] else {
        panic!()
    };
    assert_eq!(f.target_groups[0].weight, Some(1));
    assert_eq!(
        f.target_group_stickiness_config,
        Some(StickinessConfig {
            enabled: Some(false),
            duration_seconds: None
        })
    );

    assert_eq!(
        env.elb.create_listener(&spec).await.unwrap_err().code(),
        "DuplicateListener"
    );
    let https = model::Listener {
        port: 443,
        protocol: Protocol::Https,
        ..spec.clone()
    };
    assert!(matches!(
        env.elb.create_listener(&https).await.unwrap_err(),
        AwsError::Validation { .. }
    ));

    let cond = vec![RuleCondition::PathPattern {
        config: ValuesConfig {
            values: vec!["/a".into()],
            regex_values: vec![],
        },
    }];
    let rule = |p| {
        model::ListenerRule::new(
            Token::Literal(l.arn.clone()),
            p,
            cond.clone(),
            vec![model::Action::forward_arn(&tg.arn)],
        )
    };
    let a = env.elb.create_rule(&rule(1)).await.unwrap();
    let b = env.elb.create_rule(&rule(2)).await.unwrap();
    let err = env.elb.create_rule(&rule(2)).await.unwrap_err();
    assert_eq!(err.code(), "PriorityInUse");
    assert!(matches!(err, AwsError::Duplicate { .. }));
    // Swapping two priorities in one request works in AWS (not in moto).
    env.elb
        .set_rule_priorities(&[(a.arn.clone(), 2), (b.arn.clone(), 1)])
        .await
        .unwrap();
    let rules = env.elb.describe_rules(&l.arn).await.unwrap();
    assert_eq!(rules[0].arn, b.arn);
    assert_eq!(rules[1].arn, a.arn);
    assert!(rules[2].is_default);
    // The default rule cannot be deleted (moto answers HTTP 500).
    let err = env.elb.delete_rule(&rules[2].arn).await.unwrap_err();
    assert!(matches!(err, AwsError::NotPermitted { .. }), "{err:?}");
    // Unknown EC2 filters are a validation error (moto answers HTTP 500).
    let err = env
        .ec2
        .describe_subnets(&Ec2Query::default().filter("no-such-filter", ["x"]))
        .await
        .unwrap_err();
    assert!(matches!(err, AwsError::Validation { .. }), "{err:?}");
}
