//! A private moto_server with a VPC and two public-role subnets, and clients built by
//! `aws::build` against it (keys from the environment, as in production), shared by the
//! deployer, Ingress-controller and end-to-end tests.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;

use aws_load_balancer_controller::aws::*;
use aws_load_balancer_controller::model::{self, Stack, Token};
use prometheus_client::registry::Registry;

use super::moto::Moto;

pub struct Cloud {
    pub moto: Moto,
    pub elb: Arc<dyn ElbV2>,
    pub ec2: Arc<dyn Ec2>,
    pub registry: Registry,
    pub vpc: String,
    pub subnets: Vec<String>,
}

pub fn raw_ec2(endpoint: &str) -> aws_sdk_ec2::Client {
    use aws_sdk_ec2::config::{BehaviorVersion, Credentials, Region};
    aws_sdk_ec2::Client::from_conf(
        aws_sdk_ec2::config::Builder::new()
            .behavior_version(BehaviorVersion::latest())
            .region(Region::new("us-west-2"))
            .endpoint_url(endpoint)
            .credentials_provider(Credentials::new("testing", "testing", None, None, "test"))
            .build(),
    )
}

/// `--aws-api-endpoints` value sending ELBv2 and EC2 to `moto`.
pub fn endpoints_flag(moto: &Moto) -> String {
    format!("elasticloadbalancing={0},ec2={0}", moto.endpoint)
}

/// Clients built by `aws::build` against `moto` as the binary builds them (fixed dummy keys;
/// the VPC is whatever the test looks up, e.g. moto's default one).
pub async fn clients(moto: &Moto, metrics: Option<AwsMetrics>) -> (Arc<dyn ElbV2>, Arc<dyn Ec2>) {
    std::env::set_var("AWS_ACCESS_KEY_ID", "testing");
    std::env::set_var("AWS_SECRET_ACCESS_KEY", "testing");
    let cfg = AwsConfig {
        region: Some("us-west-2".into()),
        vpc_id: Some("vpc-unused".into()),
        api_endpoints: parse_api_endpoints(&endpoints_flag(moto)).unwrap(),
        ..Default::default()
    };
    let (elb, ec2, _) = build(&cfg, metrics).await.unwrap();
    (elb, ec2)
}

/// SDK clients against a private moto, and a VPC with two public-role subnets.
pub async fn cloud() -> Cloud {
    cloud_on(Moto::start()).await
}

/// [`cloud`] on a moto started by the caller (with its own settings).
pub async fn cloud_on(moto: Moto) -> Cloud {
    let raw = raw_ec2(&moto.endpoint);
    let vpc = raw
        .create_vpc()
        .cidr_block("10.1.0.0/16")
        .send()
        .await
        .unwrap();
    let vpc = vpc.vpc().unwrap().vpc_id().unwrap().to_string();
    let mut subnets = Vec::new();
    for (i, az) in ["a", "b"].iter().enumerate() {
        let s = raw
            .create_subnet()
            .vpc_id(&vpc)
            .cidr_block(format!("10.1.{}.0/24", i + 1))
            .availability_zone(format!("us-west-2{az}"))
            .send()
            .await
            .unwrap();
        let id = s.subnet().unwrap().subnet_id().unwrap().to_string();
        let tag = aws_sdk_ec2::types::Tag::builder()
            .key("kubernetes.io/role/elb")
            .value("1")
            .build();
        raw.create_tags()
            .resources(&id)
            .tags(tag)
            .send()
            .await
            .unwrap();
        subnets.push(id);
    }
    let mut registry = Registry::default();
    let metrics = AwsMetrics::register(&mut registry);
    let (elb, ec2) = clients(&moto, Some(metrics)).await;
    Cloud {
        moto,
        elb,
        ec2,
        registry,
        vpc,
        subnets,
    }
}

/// `aws_api_calls_total` per operation.
pub fn calls_by_op(r: &Registry) -> BTreeMap<String, f64> {
    let mut s = String::new();
    prometheus_client::encoding::text::encode(&mut s, r).unwrap();
    let mut out = BTreeMap::new();
    for line in s.lines().filter(|l| l.starts_with("aws_api_calls_total{")) {
        let op = line
            .split("operation=\"")
            .nth(1)
            .unwrap()
            .split('"')
            .next()
            .unwrap();
        let v: f64 = line.rsplit(' ').next().unwrap().parse().unwrap();
        *out.entry(op.to_string()).or_insert(0.0) += v;
    }
    out
}

/// Operations whose count grew since `before` (writes only).
pub fn new_writes(r: &Registry, before: &BTreeMap<String, f64>) -> Vec<String> {
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
pub async fn settle(r: &Registry) {
    let mut last = calls_by_op(r);
    let mut quiet = 0;
    while quiet < 8 {
        tokio::time::sleep(Duration::from_millis(100)).await;
        let now = calls_by_op(r);
        quiet = if now == last { quiet + 1 } else { 0 };
        last = now;
    }
}

/// What upstream leaves in AWS for `stack`, created request by request with its names and tags.
pub async fn create_as_upstream(c: &Cloud, stack: &Stack) {
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
        // Upstream's defaults, written out rather than taken from our model.
        let hc = model::HealthCheck {
            protocol: model::Protocol::Http,
            port: "traffic-port".into(),
            path: "/".into(),
            matcher: [("httpCode".to_string(), "200".to_string())].into(),
            interval_seconds: 15,
            timeout_seconds: 5,
            healthy_threshold_count: 2,
            unhealthy_threshold_count: 2,
        };
        let req = model::TargetGroup {
            name: tg.name.clone(),
            protocol_version: Some(model::ProtocolVersion::HTTP1),
            health_check: hc,
            tags: tg.tags.clone(),
            ..fake::spec::target_group(
                &tg.id,
                model::TargetType::Instance,
                model::Protocol::Http,
                tg.port,
            )
        };
        let created = c
            .elb
            .create_target_group((&req).into(), &c.vpc)
            .await
            .unwrap();
        tg_arns.insert(tg.id.clone(), created.arn);
    }
    let lb = stack.load_balancer.as_ref().unwrap();
    let req = model::LoadBalancer {
        tags: lb.tags.clone(),
        ..fake::spec::alb(&lb.name, &c.subnets, &[sg, backend])
    };
    let created = c.elb.create_load_balancer(&req).await.unwrap();
    let spec = model::Listener {
        load_balancer_arn: Token::Literal(created.arn.clone()),
        tags: stack.listeners[0].tags.clone(),
        ..model::Listener::new(
            80,
            model::Protocol::Http,
            vec![model::Action::fixed("404", None)],
        )
    };
    let listener = c.elb.create_listener(&spec).await.unwrap();
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
        let spec = model::ListenerRule {
            tags: r.tags.clone(),
            ..model::ListenerRule::new(
                Token::Literal(listener.arn.clone()),
                r.priority,
                vec![model::RuleCondition::PathPattern {
                    config: model::action::ValuesConfig {
                        values,
                        regex_values: vec![],
                    },
                }],
                vec![model::Action::forward_arn(tg)],
            )
        };
        c.elb.create_rule(&spec).await.unwrap();
    }
}
