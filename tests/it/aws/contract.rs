//! One contract suite, run against the in-memory fake and against moto through the SDK
//! implementation. Where moto differs from AWS (see test-peers.md) the AWS behaviour is
//! asserted on the fake only, and the difference is named at the assertion.

use aws_load_balancer_controller::aws::fake::spec;
use aws_load_balancer_controller::aws::*;
use aws_load_balancer_controller::model::action::{
    HttpHeaderConfig, ListConfig, QueryStringConfig, QueryStringPair, ValuesConfig,
};
use aws_load_balancer_controller::model::{
    self, ForwardConfig, Protocol, RedirectConfig, RuleCondition, TargetGroupTuple, Token,
};

use super::env::{tags, Env, REGION};

fn arns(v: &[TargetGroup]) -> Vec<String> {
    v.iter().map(|t| t.arn.clone()).collect()
}

async fn alb(env: &Env, name: &str, subnets: &[String], sgs: &[String]) -> LoadBalancer {
    let lb = model::LoadBalancer {
        tags: tags(&[("elbv2.k8s.aws/cluster", "c1")]),
        ..spec::alb(name, subnets, sgs)
    };
    env.elb.create_load_balancer(&lb).await.unwrap()
}

/// An HTTP `ip` target group on `/healthz` with a target-control port (3000).
async fn ip_tg(env: &Env, name: &str, vpc: &str, port: u16) -> TargetGroup {
    let mut tg = spec::ip_target_group(name, i32::from(port));
    tg.health_check.path = "/healthz".into();
    tg.target_control_port = Some(3000);
    tg.tags = tags(&[("service.k8s.aws/stack", "ns/svc")]);
    env.elb
        .create_target_group((&tg).into(), vpc)
        .await
        .unwrap()
}

pub async fn subnet_and_vpc_discovery(env: &Env) {
    let (vpc, subnets) = env.network().await;
    let q = Ec2Query::default()
        .filter("vpc-id", [vpc.clone()])
        .filter("tag:kubernetes.io/role/elb", ["", "1"]);
    let mut found: Vec<String> = env
        .ec2
        .describe_subnets(&q)
        .await
        .unwrap()
        .into_iter()
        .map(|s| s.id)
        .collect();
    found.sort();
    let mut want = subnets[..2].to_vec();
    want.sort();
    assert_eq!(found, want);

    let by_id = env
        .ec2
        .describe_subnets(&Ec2Query::ids([subnets[2].clone()]))
        .await
        .unwrap();
    assert_eq!(by_id.len(), 1);
    assert_eq!(by_id[0].vpc_id, vpc);
    assert_eq!(by_id[0].availability_zone, format!("{REGION}c"));
    assert_eq!(by_id[0].cidr_block, "10.0.3.0/24");
    assert!(by_id[0].available_ip_address_count > 8);
    assert_eq!(by_id[0].tags.get("other").map(String::as_str), Some("1"));

    let vpcs = env
        .ec2
        .describe_vpcs(&Ec2Query::default().filter("tag:Name", ["test"]))
        .await
        .unwrap();
    assert_eq!(
        vpcs.iter().map(|v| v.id.clone()).collect::<Vec<_>>(),
        vec![vpc.clone()]
    );
    assert!(vpcs[0].cidr_blocks.contains(&"10.0.0.0/16".to_string()));

    let azs = env
        .ec2
        .describe_availability_zones(&Ec2Query::ids([format!("{REGION}a")]))
        .await
        .unwrap();
    assert_eq!(azs.len(), 1);
    assert!(!azs[0].zone_id.is_empty());

    let err = env
        .ec2
        .describe_subnets(&Ec2Query::ids(["subnet-0000000000000dead"]))
        .await
        .unwrap_err();
    assert!(err.is_not_found(), "{err:?}");
    assert_eq!(err.code(), "InvalidSubnetID.NotFound");
}

pub async fn security_groups_and_rules(env: &Env) {
    let (vpc, _) = env.network().await;
    let req = CreateSecurityGroup {
        name: "k8s-ns-web-1234567890".into(),
        description: "[k8s] Managed SecurityGroup for LoadBalancer".into(),
        vpc_id: vpc.clone(),
        tags: tags(&[("elbv2.k8s.aws/cluster", "c1")]),
    };
    let id = env.ec2.create_security_group(&req).await.unwrap();
    assert!(id.starts_with("sg-"));
    let dup = env.ec2.create_security_group(&req).await.unwrap_err();
    assert!(matches!(dup, AwsError::Duplicate { .. }), "{dup:?}");

    let q = Ec2Query::default()
        .filter("vpc-id", [vpc.clone()])
        .filter("tag:elbv2.k8s.aws/cluster", ["c1"]);
    let found = env.ec2.describe_security_groups(&q).await.unwrap();
    assert_eq!(found.len(), 1);
    assert_eq!(found[0].id, id);
    assert_eq!(found[0].name, req.name);

    let http = IpPermission {
        ip_protocol: "tcp".into(),
        from_port: Some(80),
        to_port: Some(80),
        ipv4_ranges: vec![IpRange::new("0.0.0.0/0")],
        ..Default::default()
    };
    let https = IpPermission {
        from_port: Some(443),
        to_port: Some(443),
        ..http.clone()
    };
    env.ec2
        .authorize_ingress(&id, &[http.clone(), https.clone()])
        .await
        .unwrap();
    let dup = env
        .ec2
        .authorize_ingress(&id, std::slice::from_ref(&http))
        .await
        .unwrap_err();
    assert!(matches!(dup, AwsError::Duplicate { .. }), "{dup:?}");

    let sg = &env
        .ec2
        .describe_security_groups(&Ec2Query::ids([id.clone()]))
        .await
        .unwrap()[0];
    let mut ports: Vec<i32> = sg.ingress.iter().filter_map(|p| p.from_port).collect();
    ports.sort();
    assert_eq!(ports, vec![80, 443]);
    assert!(sg
        .ingress
        .iter()
        .all(|p| p.ipv4_ranges == vec![IpRange::new("0.0.0.0/0")]));

    env.ec2.revoke_ingress(&id, &[http]).await.unwrap();
    let sg = &env
        .ec2
        .describe_security_groups(&Ec2Query::ids([id.clone()]))
        .await
        .unwrap()[0];
    assert_eq!(
        sg.ingress
            .iter()
            .filter_map(|p| p.from_port)
            .collect::<Vec<_>>(),
        vec![443]
    );

    env.ec2
        .create_tags(std::slice::from_ref(&id), &tags(&[("extra", "x")]))
        .await
        .unwrap();
    env.ec2
        .delete_tags(
            std::slice::from_ref(&id),
            &["elbv2.k8s.aws/cluster".to_string()],
        )
        .await
        .unwrap();
    let sg = &env
        .ec2
        .describe_security_groups(&Ec2Query::ids([id.clone()]))
        .await
        .unwrap()[0];
    assert_eq!(sg.tags, tags(&[("extra", "x")]));

    env.ec2.delete_security_group(&id).await.unwrap();
    let err = env
        .ec2
        .describe_security_groups(&Ec2Query::ids([id.clone()]))
        .await
        .unwrap_err();
    assert!(err.is_not_found(), "{err:?}");
}

pub async fn instances_and_interfaces(env: &Env) {
    let (_, subnets) = env.network().await;
    let id = env.instance(&subnets[0], "10.0.1.10").await;
    let found = env
        .ec2
        .describe_instances(&Ec2Query::ids([id.clone()]))
        .await
        .unwrap();
    assert_eq!(found.len(), 1);
    assert_eq!(found[0].private_ip_address.as_deref(), Some("10.0.1.10"));
    assert_eq!(found[0].subnet_id.as_deref(), Some(subnets[0].as_str()));
    let eni = &found[0].network_interfaces[0].id;
    let enis = env
        .ec2
        .describe_network_interfaces(
            &Ec2Query::default().filter("attachment.instance-id", [id.clone()]),
        )
        .await
        .unwrap();
    assert_eq!(enis.len(), 1);
    assert_eq!(&enis[0].id, eni);
    assert!(enis[0]
        .private_ip_addresses
        .contains(&"10.0.1.10".to_string()));
    let by_ip = env
        .ec2
        .describe_network_interfaces(
            &Ec2Query::default().filter("addresses.private-ip-address", ["10.0.1.10"]),
        )
        .await
        .unwrap();
    assert_eq!(
        by_ip.iter().map(|e| e.id.clone()).collect::<Vec<_>>(),
        vec![eni.clone()]
    );
}

pub async fn load_balancer_lifecycle(env: &Env) {
    let (vpc, subnets) = env.network().await;
    let sg = env
        .ec2
        .create_security_group(&CreateSecurityGroup {
            name: "lb".into(),
            description: "lb".into(),
            vpc_id: vpc.clone(),
            tags: Tags::new(),
        })
        .await
        .unwrap();
    let lb = alb(
        env,
        "k8s-ns-web-0123456789",
        &subnets[..2],
        std::slice::from_ref(&sg),
    )
    .await;
    assert!(
        lb.arn
            .starts_with(&format!("arn:aws:elasticloadbalancing:{REGION}:")),
        "{}",
        lb.arn
    );
    assert!(
        lb.arn.contains(":loadbalancer/app/k8s-ns-web-0123456789/"),
        "{}",
        lb.arn
    );
    assert!(
        lb.dns_name.starts_with("k8s-ns-web-0123456789-"),
        "{}",
        lb.dns_name
    );
    assert_eq!(lb.scheme, "internet-facing");
    assert_eq!(lb.lb_type, "application");
    assert_eq!(lb.vpc_id, vpc);
    assert_eq!(lb.security_groups, vec![sg.clone()]);
    let mut zone_subnets: Vec<String> = lb
        .availability_zones
        .iter()
        .map(|z| z.subnet_id.clone())
        .collect();
    zone_subnets.sort();
    let mut want = subnets[..2].to_vec();
    want.sort();
    assert_eq!(zone_subnets, want);

    let by_name = env
        .elb
        .describe_load_balancers(&LoadBalancerQuery {
            names: vec![lb.name.clone()],
            ..Default::default()
        })
        .await
        .unwrap();
    assert_eq!(by_name.len(), 1);
    assert_eq!(by_name[0].arn, lb.arn);
    let by_arn = env
        .elb
        .describe_load_balancers(&LoadBalancerQuery {
            arns: vec![lb.arn.clone()],
            ..Default::default()
        })
        .await
        .unwrap();
    assert_eq!(by_arn[0].dns_name, lb.dns_name);

    let attrs = env
        .elb
        .modify_load_balancer_attributes(&lb.arn, &tags(&[("idle_timeout.timeout_seconds", "120")]))
        .await
        .unwrap();
    assert_eq!(
        attrs
            .get("idle_timeout.timeout_seconds")
            .map(String::as_str),
        Some("120")
    );
    let attrs = env
        .elb
        .describe_load_balancer_attributes(&lb.arn)
        .await
        .unwrap();
    assert_eq!(
        attrs
            .get("idle_timeout.timeout_seconds")
            .map(String::as_str),
        Some("120")
    );

    env.elb
        .set_subnets(
            &lb.arn,
            &subnets
                .iter()
                .map(SubnetMapping::subnet)
                .collect::<Vec<_>>(),
            None,
        )
        .await
        .unwrap();
    let now = &env
        .elb
        .describe_load_balancers(&LoadBalancerQuery {
            arns: vec![lb.arn.clone()],
            ..Default::default()
        })
        .await
        .unwrap()[0];
    assert_eq!(now.availability_zones.len(), 3);

    let sg2 = env
        .ec2
        .create_security_group(&CreateSecurityGroup {
            name: "lb2".into(),
            description: "lb2".into(),
            vpc_id: vpc.clone(),
            tags: Tags::new(),
        })
        .await
        .unwrap();
    env.elb
        .set_security_groups(&lb.arn, &[sg.clone(), sg2.clone()], None)
        .await
        .unwrap();
    let now = &env
        .elb
        .describe_load_balancers(&LoadBalancerQuery {
            arns: vec![lb.arn.clone()],
            ..Default::default()
        })
        .await
        .unwrap()[0];
    let mut got = now.security_groups.clone();
    got.sort();
    let mut want = vec![sg.clone(), sg2.clone()];
    want.sort();
    assert_eq!(got, want);

    let t = env
        .elb
        .describe_tags(std::slice::from_ref(&lb.arn))
        .await
        .unwrap();
    assert_eq!(t[&lb.arn], tags(&[("elbv2.k8s.aws/cluster", "c1")]));

    env.elb.delete_load_balancer(&lb.arn).await.unwrap();
    let err = env
        .elb
        .describe_load_balancers(&LoadBalancerQuery {
            arns: vec![lb.arn.clone()],
            ..Default::default()
        })
        .await
        .unwrap_err();
    assert!(err.is_not_found(), "{err:?}");
    assert_eq!(err.code(), "LoadBalancerNotFound");
}

pub async fn target_groups_and_targets(env: &Env) {
    let (vpc, _) = env.network().await;
    let tg = ip_tg(env, "k8s-ns-svc-abcdef0123", &vpc, 8080).await;
    assert!(
        tg.arn.contains(":targetgroup/k8s-ns-svc-abcdef0123/"),
        "{}",
        tg.arn
    );
    assert_eq!(tg.target_type, "ip");
    assert_eq!(tg.port, Some(8080));
    assert_eq!(tg.health_check.path.as_deref(), Some("/healthz"));
    // Set at creation and described back (moto is extended to keep it, see support/moto).
    assert_eq!(tg.target_control_port, Some(3000));

    let found = env
        .elb
        .describe_target_groups(&TargetGroupQuery {
            names: vec![tg.name.clone()],
            ..Default::default()
        })
        .await
        .unwrap();
    assert_eq!(arns(&found), vec![tg.arn.clone()]);
    assert_eq!(found[0].target_control_port, Some(3000));

    let mut hc = spec::health_check(model::Protocol::Http);
    hc.interval_seconds = 10;
    hc.path = "/ready".into();
    let modified = env.elb.modify_target_group(&tg.arn, &hc).await.unwrap();
    assert_eq!(modified.health_check.interval_seconds, Some(10));
    assert_eq!(modified.health_check.path.as_deref(), Some("/ready"));

    let attrs = env
        .elb
        .modify_target_group_attributes(
            &tg.arn,
            &tags(&[("deregistration_delay.timeout_seconds", "30")]),
        )
        .await
        .unwrap();
    assert_eq!(
        attrs
            .get("deregistration_delay.timeout_seconds")
            .map(String::as_str),
        Some("30")
    );
    let attrs = env
        .elb
        .describe_target_group_attributes(&tg.arn)
        .await
        .unwrap();
    assert_eq!(
        attrs
            .get("deregistration_delay.timeout_seconds")
            .map(String::as_str),
        Some("30")
    );

    // 250 targets: two RegisterTargets requests (200 + 50).
    let targets: Vec<TargetDescription> = (0..250)
        .map(|i| TargetDescription::new(format!("10.0.{}.{}", 1 + i / 200, 1 + i % 200), 8080))
        .collect();
    env.elb.register_targets(&tg.arn, &targets).await.unwrap();
    if let Some(f) = &env.fake {
        assert_eq!(f.count("RegisterTargets"), 2);
    }
    let health = env.elb.describe_target_health(&tg.arn, &[]).await.unwrap();
    assert_eq!(health.len(), 250);
    assert!(health.iter().all(|h| h.target.port == Some(8080)));
    if env.is_fake() {
        // AWS: a target group no load balancer uses reports `unused` / Target.NotInUse.
        // (moto reports every registered target as healthy.)
        assert!(health
            .iter()
            .all(|h| h.health.state == TargetHealthState::Unused));
        assert!(health
            .iter()
            .all(|h| h.health.reason.as_deref() == Some("Target.NotInUse")));
    }

    env.elb
        .deregister_targets(&tg.arn, &targets[..100])
        .await
        .unwrap();
    let health = env.elb.describe_target_health(&tg.arn, &[]).await.unwrap();
    assert_eq!(health.len(), 150);
    assert!(!health.iter().any(|h| h.target.id == targets[0].id));

    let one = env
        .elb
        .describe_target_health(&tg.arn, &[TargetDescription::new("10.0.9.9", 8080)])
        .await
        .unwrap();
    assert_eq!(one.len(), 1);
    assert_eq!(
        one[0].health.reason.as_deref(),
        Some("Target.NotRegistered")
    );
    if env.is_fake() {
        // AWS says `unused` for a target that is not registered; moto 5.2.5 says `unavailable`.
        assert_eq!(one[0].health.state, TargetHealthState::Unused);
    }

    env.elb.delete_target_group(&tg.arn).await.unwrap();
    let err = env
        .elb
        .describe_target_groups(&TargetGroupQuery {
            arns: vec![tg.arn.clone()],
            ..Default::default()
        })
        .await
        .unwrap_err();
    assert!(err.is_not_found(), "{err:?}");
}

fn values(v: &[&str]) -> Vec<String> {
    v.iter().map(|s| s.to_string()).collect()
}

fn host(h: &str) -> RuleCondition {
    RuleCondition::HostHeader {
        config: ValuesConfig {
            values: values(&[h]),
            regex_values: vec![],
        },
    }
}

fn path(p: &str) -> RuleCondition {
    RuleCondition::PathPattern {
        config: ValuesConfig {
            values: values(&[p]),
            regex_values: vec![],
        },
    }
}

/// A rule of the listener `listener_arn` at `priority`.
fn rule(
    listener_arn: &str,
    priority: i32,
    conditions: Vec<RuleCondition>,
    actions: Vec<model::Action>,
) -> model::ListenerRule {
    model::ListenerRule::new(
        Token::Literal(listener_arn.into()),
        priority,
        conditions,
        actions,
    )
}

pub async fn listeners_and_rules(env: &Env) {
    let (vpc, subnets) = env.network().await;
    let lb = alb(env, "k8s-rules", &subnets[..2], &[]).await;
    let tg1 = ip_tg(env, "tg-one", &vpc, 80).await;
    let tg2 = ip_tg(env, "tg-two", &vpc, 81).await;
    let weighted = model::Action::Forward {
        config: ForwardConfig {
            target_groups: vec![
                TargetGroupTuple {
                    target_group_arn: Token::Literal(tg1.arn.clone()),
                    weight: Some(80),
                },
                TargetGroupTuple {
                    target_group_arn: Token::Literal(tg2.arn.clone()),
                    weight: Some(20),
                },
            ],
            target_group_stickiness_config: None,
        },
    };
    let spec = model::Listener {
        load_balancer_arn: Token::Literal(lb.arn.clone()),
        ..model::Listener::new(80, Protocol::Http, vec![weighted])
    };
    let l = env.elb.create_listener(&spec).await.unwrap();
    assert_eq!(l.port, 80);
    assert!(l.arn.contains(":listener/app/k8s-rules/"), "{}", l.arn);
    let listeners = env.elb.describe_listeners(&lb.arn).await.unwrap();
    assert_eq!(listeners.len(), 1);
    let model::Action::Forward { config: f } = &listeners[0].default_actions[0] else {
        panic!("not a forward: {:?}", listeners[0].default_actions)
    };
    let mut w: Vec<(Token, Option<i32>)> = f
        .target_groups
        .iter()
        .map(|t| (t.target_group_arn.clone(), t.weight))
        .collect();
    w.sort();
    let mut want = vec![
        (Token::Literal(tg1.arn.clone()), Some(80)),
        (Token::Literal(tg2.arn.clone()), Some(20)),
    ];
    want.sort();
    assert_eq!(w, want);

    let r1 = env
        .elb
        .create_rule(&rule(
            &l.arn,
            1,
            vec![host("a.example.com"), path("/api/*")],
            vec![model::Action::forward_arn(&tg1.arn)],
        ))
        .await
        .unwrap();
    let conds = vec![
        RuleCondition::HttpHeader {
            config: HttpHeaderConfig {
                http_header_name: "X-Env".into(),
                values: values(&["canary"]),
                regex_values: vec![],
            },
        },
        RuleCondition::HttpRequestMethod {
            config: ListConfig {
                values: values(&["GET", "HEAD"]),
            },
        },
        RuleCondition::QueryString {
            config: QueryStringConfig {
                values: vec![QueryStringPair {
                    key: Some("v".into()),
                    value: "2".into(),
                }],
            },
        },
        RuleCondition::SourceIp {
            config: ListConfig {
                values: values(&["10.0.0.0/8"]),
            },
        },
    ];
    let r2 = env
        .elb
        .create_rule(&rule(
            &l.arn,
            2,
            conds.clone(),
            vec![model::Action::fixed("404", Some("nope"))],
        ))
        .await
        .unwrap();
    let rules = env.elb.describe_rules(&l.arn).await.unwrap();
    assert_eq!(rules.len(), 3, "{rules:#?}");
    let get = |arn: &str| rules.iter().find(|r| r.arn == arn).cloned().unwrap();
    assert_eq!(get(&r1.arn).priority, "1");
    assert_eq!(
        get(&r1.arn).conditions,
        vec![host("a.example.com"), path("/api/*")]
    );
    assert_eq!(get(&r2.arn).conditions, conds);
    assert_eq!(
        get(&r2.arn).actions,
        vec![model::Action::fixed("404", Some("nope"))]
    );
    assert!(rules
        .iter()
        .any(|r| r.is_default && r.priority == "default"));

    let redirect = model::Action::Redirect {
        config: RedirectConfig {
            protocol: Some("HTTPS".into()),
            port: Some("443".into()),
            status_code: "HTTP_301".into(),
            ..Default::default()
        },
    };
    let m = env
        .elb
        .modify_rule(
            &r1.arn,
            &rule(&l.arn, 1, vec![host("b.example.com")], vec![redirect]),
        )
        .await
        .unwrap();
    assert_eq!(m.conditions, vec![host("b.example.com")]);
    let rules = env.elb.describe_rules(&l.arn).await.unwrap();
    let got = rules.iter().find(|r| r.arn == r1.arn).unwrap();
    let model::Action::Redirect { config: rc } = &got.actions[0] else {
        panic!("{:?}", got.actions)
    };
    assert_eq!(rc.status_code, "HTTP_301");
    assert_eq!(rc.port.as_deref(), Some("443"));

    env.elb
        .set_rule_priorities(&[(r2.arn.clone(), 10)])
        .await
        .unwrap();
    let rules = env.elb.describe_rules(&l.arn).await.unwrap();
    assert_eq!(
        rules.iter().find(|r| r.arn == r2.arn).unwrap().priority,
        "10"
    );

    // A target group used by a listener cannot be deleted.
    let err = env.elb.delete_target_group(&tg2.arn).await.unwrap_err();
    assert!(matches!(err, AwsError::InUse { .. }), "{err:?}");
    assert_eq!(err.code(), "ResourceInUse");

    env.elb.delete_rule(&r2.arn).await.unwrap();
    assert_eq!(env.elb.describe_rules(&l.arn).await.unwrap().len(), 2);

    // A reference the deployer did not resolve is refused before any request, on both.
    let unresolved = model::ListenerRule::new(
        Token::ListenerArn(80),
        3,
        vec![path("/x")],
        vec![model::Action::forward_arn(&tg1.arn)],
    );
    let err = env.elb.create_rule(&unresolved).await.unwrap_err();
    assert!(matches!(err, AwsError::Unresolved(_)), "{err:?}");
    assert_eq!(env.elb.describe_rules(&l.arn).await.unwrap().len(), 2);

    let spec2 = model::Listener {
        load_balancer_arn: Token::Literal(lb.arn.clone()),
        ..model::Listener::new(
            8080,
            Protocol::Http,
            vec![model::Action::forward_arn(&tg1.arn)],
        )
    };
    let l2 = env.elb.modify_listener(&l.arn, &spec2).await.unwrap();
    assert_eq!(l2.port, 8080);
    let listeners = env.elb.describe_listeners(&lb.arn).await.unwrap();
    assert_eq!(listeners[0].port, 8080);

    env.elb.delete_listener(&l.arn).await.unwrap();
    assert!(env
        .elb
        .describe_listeners(&lb.arn)
        .await
        .unwrap()
        .is_empty());
    env.elb.delete_target_group(&tg2.arn).await.unwrap();
}

pub async fn tags_in_batches(env: &Env) {
    let (vpc, _) = env.network().await;
    let mut all = Vec::new();
    for i in 0..25 {
        all.push(ip_tg(env, &format!("tg-{i}"), &vpc, 80).await.arn);
    }
    if let Some(f) = &env.fake {
        f.clear_calls();
    }
    let t = env.elb.describe_tags(&all).await.unwrap();
    assert_eq!(t.len(), 25);
    assert!(t
        .values()
        .all(|v| v.get("service.k8s.aws/stack").map(String::as_str) == Some("ns/svc")));
    if let Some(f) = &env.fake {
        assert_eq!(
            f.count("DescribeTags"),
            2,
            "25 ARNs are asked in batches of 20"
        );
    }
    env.elb
        .add_tags(&all[..2], &tags(&[("a", "1"), ("b", "2")]))
        .await
        .unwrap();
    env.elb
        .remove_tags(&all[..1], &["b".to_string()])
        .await
        .unwrap();
    let t = env.elb.describe_tags(&all[..2]).await.unwrap();
    assert_eq!(
        t[&all[0]],
        tags(&[("a", "1"), ("service.k8s.aws/stack", "ns/svc")])
    );
    assert_eq!(
        t[&all[1]],
        tags(&[("a", "1"), ("b", "2"), ("service.k8s.aws/stack", "ns/svc")])
    );
}
