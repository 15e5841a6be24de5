//! `aws::build`: endpoints from `--aws-api-endpoints`, VPC from `--aws-vpc-tags` (exactly one
//! must match), and no instance-metadata traffic when region and VPC are given.

use std::net::TcpListener;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use aws_load_balancer_controller::aws::*;

use super::env::tags;
use crate::support::moto::Moto;

/// A TCP listener standing in for IMDS that counts connection attempts.
fn imds_trap() -> (String, Arc<AtomicUsize>) {
    let l = TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = format!("http://{}", l.local_addr().unwrap());
    let hits = Arc::new(AtomicUsize::new(0));
    let h = hits.clone();
    std::thread::spawn(move || {
        for c in l.incoming() {
            h.fetch_add(1, Ordering::SeqCst);
            drop(c);
        }
    });
    (addr, hits)
}

// One test owns the process environment it changes (credentials, IMDS endpoint).
#[tokio::test]
async fn build_uses_flags_and_never_touches_imds() {
    let moto = Moto::start();
    let (imds, hits) = imds_trap();
    std::env::set_var("AWS_ACCESS_KEY_ID", "testing");
    std::env::set_var("AWS_SECRET_ACCESS_KEY", "testing");
    std::env::set_var("AWS_EC2_METADATA_SERVICE_ENDPOINT", &imds);

    let endpoints =
        parse_api_endpoints(&format!("elasticloadbalancing={0},ec2={0}", moto.endpoint)).unwrap();
    let cfg = AwsConfig {
        region: Some("us-west-2".into()),
        vpc_id: Some("vpc-given".into()),
        api_endpoints: endpoints.clone(),
        ..Default::default()
    };
    let (elb, ec2, cloud) = build(&cfg, None).await.unwrap();
    assert_eq!(
        cloud,
        ResolvedCloud {
            region: "us-west-2".into(),
            vpc_id: "vpc-given".into()
        }
    );
    // Requests reach moto (the endpoint flag works) and are signed with the env credentials.
    assert!(elb
        .describe_load_balancers(&LoadBalancerQuery::default())
        .await
        .unwrap()
        .is_empty());
    let azs = ec2
        .describe_availability_zones(&Ec2Query::default())
        .await
        .unwrap();
    assert!(azs.iter().any(|z| z.zone_name == "us-west-2a"));

    // VPC by tags: exactly one must match.
    let raw = super::env::sdk_clients(&moto.endpoint, Caller::default()).2;
    let mk = |name: &'static str| {
        let raw = raw.clone();
        async move {
            let id = raw
                .create_vpc()
                .cidr_block("10.1.0.0/16")
                .send()
                .await
                .unwrap()
                .vpc()
                .unwrap()
                .vpc_id()
                .unwrap()
                .to_string();
            let tag = aws_sdk_ec2::types::Tag::builder()
                .key("cluster")
                .value(name)
                .build();
            raw.create_tags()
                .resources(&id)
                .tags(tag)
                .send()
                .await
                .unwrap();
            id
        }
    };
    let one = mk("blue").await;
    let by_tags = |v: &str| AwsConfig {
        region: Some("us-west-2".into()),
        vpc_tags: tags(&[("cluster", v)]),
        api_endpoints: endpoints.clone(),
        ..Default::default()
    };
    let (_, _, cloud) = build(&by_tags("blue"), None).await.unwrap();
    assert_eq!(cloud.vpc_id, one);
    mk("green").await;
    mk("green").await;
    let err = build(&by_tags("green"), None).await.err().unwrap();
    assert!(
        err.to_string()
            .starts_with("multiple VPCs exist with tags cluster=green"),
        "{err}"
    );
    let err = build(&by_tags("red"), None).await.err().unwrap();
    assert_eq!(err.to_string(), "no VPC exists with tags: cluster=red");

    assert_eq!(hits.load(Ordering::SeqCst), 0, "IMDS was contacted");
}

/// Cross-account bindings: STS AssumeRole (moto serves it and answers later calls in the role's
/// account), one session per role and external id, reused.
#[tokio::test]
async fn assumed_role_clients_act_in_the_roles_account_and_are_cached() {
    let moto = Moto::start();
    std::env::set_var("AWS_ACCESS_KEY_ID", "testing");
    std::env::set_var("AWS_SECRET_ACCESS_KEY", "testing");
    let endpoints = parse_api_endpoints(&format!(
        "elasticloadbalancing={0},ec2={0},sts={0}",
        moto.endpoint
    ))
    .unwrap();
    let cfg = AwsConfig {
        region: Some("us-west-2".into()),
        vpc_id: Some("vpc-given".into()),
        api_endpoints: endpoints,
        ..Default::default()
    };
    let (own, _, roles, _) = build_with_roles(&cfg, "prod", None, Default::default())
        .await
        .unwrap();
    let role = "arn:aws:iam::999999999999:role/lbc";
    let theirs = roles.elbv2_as(role, "ext-7").await.unwrap();
    let arn = lambda_tg_as(&moto.endpoint, role, "ext-7", "shared").await;
    assert!(arn.contains(":999999999999:"), "{arn}");
    let by_arn = TargetGroupQuery {
        arns: vec![arn.clone()],
        ..Default::default()
    };
    let seen = theirs.describe_target_groups(&by_arn).await.unwrap();
    assert_eq!(seen.len(), 1, "the role's client sees the role's account");
    let err = own.describe_target_groups(&by_arn).await.unwrap_err();
    assert!(err.is_not_found(), "{err}");
    let again = roles.elbv2_as(role, "ext-7").await.unwrap();
    assert!(Arc::ptr_eq(&theirs, &again), "the session is reused");
    assert_eq!(
        again.describe_target_groups(&by_arn).await.unwrap().len(),
        1
    );
    let other_id = roles.elbv2_as(role, "ext-8").await.unwrap();
    assert!(
        !Arc::ptr_eq(&theirs, &other_id),
        "sessions are per external id"
    );
}

/// A `lambda` target group made in `role`'s account with the role's own credentials: a shape
/// the controller never creates (its AWS layer takes the model's target groups only), and one
/// that needs no VPC in that account.
async fn lambda_tg_as(endpoint: &str, role: &str, external_id: &str, name: &str) -> String {
    let base = aws_config::defaults(aws_config::BehaviorVersion::latest())
        .region(aws_config::Region::new("us-west-2"))
        .endpoint_url(endpoint)
        .credentials_provider(aws_sdk_elasticloadbalancingv2::config::Credentials::new(
            "testing", "testing", None, None, "test",
        ))
        .load()
        .await;
    let assumed = aws_config::sts::AssumeRoleProvider::builder(role)
        .session_name("it-seed")
        .external_id(external_id)
        .configure(&base)
        .build()
        .await;
    let conf = aws_sdk_elasticloadbalancingv2::config::Builder::from(&base)
        .credentials_provider(assumed)
        .build();
    let out = aws_sdk_elasticloadbalancingv2::Client::from_conf(conf)
        .create_target_group()
        .name(name)
        .target_type(aws_sdk_elasticloadbalancingv2::types::TargetTypeEnum::Lambda)
        .send()
        .await
        .expect("create a lambda target group as the role");
    out.target_groups()[0]
        .target_group_arn()
        .expect("an ARN")
        .to_string()
}
