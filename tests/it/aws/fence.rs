//! The leader's write fence on the real SDK clients (`aws::build_fenced` against moto): while
//! shut, writes fail before a request leaves the process and reads pass; once opened, writes go.

use std::time::{Duration, Instant};

use aws_load_balancer_controller::aws::{
    build_fenced, parse_api_endpoints, AwsConfig, AwsError, Ec2Query, Fence, Tags,
};

use crate::support::moto::Moto;
use crate::support::moto_cloud::{endpoints_flag, raw_ec2};

#[tokio::test]
async fn a_shut_fence_keeps_writes_in_the_process_and_lets_reads_pass() {
    let moto = Moto::start();
    let raw = raw_ec2(&moto.endpoint);
    let vpc = raw
        .create_vpc()
        .cidr_block("10.9.0.0/16")
        .send()
        .await
        .unwrap();
    let vpc = vpc.vpc().unwrap().vpc_id().unwrap().to_string();
    std::env::set_var("AWS_ACCESS_KEY_ID", "testing");
    std::env::set_var("AWS_SECRET_ACCESS_KEY", "testing");
    let cfg = AwsConfig {
        region: Some("us-west-2".into()),
        vpc_id: Some(vpc.clone()),
        api_endpoints: parse_api_endpoints(&endpoints_flag(&moto)).unwrap(),
        ..Default::default()
    };
    let fence = Fence::leader_only();
    let (_elb, ec2, resolved) = build_fenced(&cfg, None, fence.clone()).await.unwrap();
    assert_eq!(
        resolved.vpc_id, vpc,
        "resolution (reads) works behind a shut fence"
    );

    let tags: Tags = [("fenced".to_string(), "no".to_string())].into();
    let err = ec2
        .create_tags(std::slice::from_ref(&vpc), &tags)
        .await
        .unwrap_err();
    assert!(matches!(err, AwsError::NotLeader(_)), "{err:?}");
    let tagged = |want: &'static str| {
        let raw = raw.clone();
        let vpc = vpc.clone();
        async move {
            let out = raw.describe_vpcs().vpc_ids(vpc).send().await.unwrap();
            out.vpcs()[0]
                .tags()
                .iter()
                .any(|t| t.key() == Some("fenced") && t.value() == Some(want))
        }
    };
    assert!(!tagged("no").await, "the refused write reached AWS");
    assert_eq!(
        ec2.describe_vpcs(&Ec2Query::ids([vpc.clone()]))
            .await
            .unwrap()
            .len(),
        1,
        "reads pass"
    );

    let now = Instant::now();
    fence.open_until(now + Duration::from_secs(10), now + Duration::from_secs(15));
    let tags: Tags = [("fenced".to_string(), "yes".to_string())].into();
    ec2.create_tags(std::slice::from_ref(&vpc), &tags)
        .await
        .unwrap();
    assert!(tagged("yes").await);
}
