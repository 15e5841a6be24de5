//! A private moto_server with a VPC and two public-role subnets, and clients built by
//! `aws::build` against it (keys from the environment, as in production), shared by the
//! deployer, Ingress-controller and end-to-end tests.

use std::collections::BTreeMap;
use std::sync::Arc;

use aws_load_balancer_controller::aws::*;
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

/// SDK clients against a private moto, and a VPC with two public-role subnets.
pub async fn cloud() -> Cloud {
    let moto = Moto::start();
    std::env::set_var("AWS_ACCESS_KEY_ID", "testing");
    std::env::set_var("AWS_SECRET_ACCESS_KEY", "testing");
    let endpoints =
        parse_api_endpoints(&format!("elasticloadbalancing={0},ec2={0}", moto.endpoint)).unwrap();
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
    let cfg = AwsConfig {
        region: Some("us-west-2".into()),
        vpc_id: Some(vpc.clone()),
        api_endpoints: endpoints,
        ..Default::default()
    };
    let (elb, ec2, _) = build(&cfg, Some(metrics)).await.unwrap();
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
