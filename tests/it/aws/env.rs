//! A test environment: the AWS traits plus a way to seed what the traits cannot create
//! (VPCs, subnets, instances), either on the in-memory fake or on a private moto server.

use std::sync::Arc;

use aws_load_balancer_controller::aws::fake::FakeAws;
use aws_load_balancer_controller::aws::sdk::{SdkEc2, SdkElbV2};
use aws_load_balancer_controller::aws::{Caller, Ec2, ElbV2, Tags};
use aws_sdk_ec2::config::retry::RetryConfig;
use aws_sdk_ec2::config::{BehaviorVersion, Credentials, Region};

use crate::support::moto::Moto;

pub const REGION: &str = "us-west-2";

pub struct Env {
    pub elb: Arc<dyn ElbV2>,
    pub ec2: Arc<dyn Ec2>,
    pub fake: Option<Arc<FakeAws>>,
    seed_ec2: Option<aws_sdk_ec2::Client>,
    _moto: Option<Moto>,
}

pub fn tags(kv: &[(&str, &str)]) -> Tags {
    kv.iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect()
}

/// SDK clients for an endpoint with fixed fake credentials (nothing read from the machine).
pub fn sdk_clients(endpoint: &str, caller: Caller) -> (SdkElbV2, SdkEc2, aws_sdk_ec2::Client) {
    let creds = Credentials::new("testing", "testing", None, None, "test");
    let ec2 = aws_sdk_ec2::Client::from_conf(
        aws_sdk_ec2::config::Builder::new()
            .behavior_version(BehaviorVersion::latest())
            .region(Region::new(REGION))
            .endpoint_url(endpoint)
            .credentials_provider(creds.clone())
            .retry_config(RetryConfig::disabled())
            .build(),
    );
    let elb = aws_sdk_elasticloadbalancingv2::Client::from_conf(
        aws_sdk_elasticloadbalancingv2::config::Builder::new()
            .behavior_version(aws_sdk_elasticloadbalancingv2::config::BehaviorVersion::latest())
            .region(aws_sdk_elasticloadbalancingv2::config::Region::new(REGION))
            .endpoint_url(endpoint)
            .credentials_provider(creds)
            .retry_config(aws_sdk_elasticloadbalancingv2::config::retry::RetryConfig::disabled())
            .build(),
    );
    (
        SdkElbV2::new(elb, caller.clone()),
        SdkEc2::new(ec2.clone(), caller),
        ec2,
    )
}

impl Env {
    pub fn fake() -> Env {
        let fake = Arc::new(FakeAws::new());
        Env {
            elb: fake.clone(),
            ec2: fake.clone(),
            fake: Some(fake),
            seed_ec2: None,
            _moto: None,
        }
    }

    pub fn moto() -> Env {
        let moto = Moto::start();
        let (elb, ec2, raw) = sdk_clients(&moto.endpoint, Caller::default());
        Env {
            elb: Arc::new(elb),
            ec2: Arc::new(ec2),
            fake: None,
            seed_ec2: Some(raw),
            _moto: Some(moto),
        }
    }

    pub fn is_fake(&self) -> bool {
        self.fake.is_some()
    }

    pub async fn vpc(&self, cidr: &str, t: Tags) -> String {
        if let Some(f) = &self.fake {
            return f.add_vpc(cidr, t);
        }
        let c = self.seed_ec2.as_ref().unwrap();
        let id = c
            .create_vpc()
            .cidr_block(cidr)
            .send()
            .await
            .unwrap()
            .vpc()
            .unwrap()
            .vpc_id()
            .unwrap()
            .to_string();
        self.tag_raw(&id, &t).await;
        id
    }

    pub async fn subnet(&self, vpc: &str, cidr: &str, az: &str, t: Tags) -> String {
        if let Some(f) = &self.fake {
            return f.add_subnet(vpc, cidr, az, t).unwrap();
        }
        let c = self.seed_ec2.as_ref().unwrap();
        let out = c
            .create_subnet()
            .vpc_id(vpc)
            .cidr_block(cidr)
            .availability_zone(az)
            .send()
            .await
            .unwrap();
        let id = out.subnet().unwrap().subnet_id().unwrap().to_string();
        self.tag_raw(&id, &t).await;
        id
    }

    /// A running instance in the subnet; returns (instance ID, private IP).
    pub async fn instance(&self, subnet: &str, ip: &str) -> String {
        if let Some(f) = &self.fake {
            return f.add_instance(subnet, ip, &[]).unwrap();
        }
        let c = self.seed_ec2.as_ref().unwrap();
        let image = c.describe_images().send().await.unwrap().images()[0]
            .image_id()
            .unwrap()
            .to_string();
        let out = c
            .run_instances()
            .image_id(image)
            .min_count(1)
            .max_count(1)
            .subnet_id(subnet)
            .private_ip_address(ip)
            .send()
            .await
            .unwrap();
        out.instances()[0].instance_id().unwrap().to_string()
    }

    async fn tag_raw(&self, id: &str, t: &Tags) {
        if t.is_empty() {
            return;
        }
        let c = self.seed_ec2.as_ref().unwrap();
        let list: Vec<_> = t
            .iter()
            .map(|(k, v)| aws_sdk_ec2::types::Tag::builder().key(k).value(v).build())
            .collect();
        c.create_tags()
            .resources(id)
            .set_tags(Some(list))
            .send()
            .await
            .unwrap();
    }

    /// A VPC 10.0.0.0/16 with one subnet in each of us-west-2a/b/c (10.0.{1,2,3}.0/24).
    pub async fn network(&self) -> (String, Vec<String>) {
        let vpc = self.vpc("10.0.0.0/16", tags(&[("Name", "test")])).await;
        let mut subnets = Vec::new();
        for (i, az) in ["a", "b", "c"].iter().enumerate() {
            let role = if i < 2 {
                "kubernetes.io/role/elb"
            } else {
                "other"
            };
            let s = self
                .subnet(
                    &vpc,
                    &format!("10.0.{}.0/24", i + 1),
                    &format!("{REGION}{az}"),
                    tags(&[(role, "1")]),
                )
                .await;
            subnets.push(s);
        }
        (vpc, subnets)
    }
}
