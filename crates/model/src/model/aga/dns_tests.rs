//! Replays upstream's `pkg/aga/dns_to_load_balancer_resolver_test.go` where it is pure (6 of 8
//! cases: its two cache cases test the resolver's cache, which is the controller's here).
// Upstream's test tables, one tuple per case, as its Go tables are.
#![allow(clippy::type_complexity)]

use super::*;

const TEST_LB: &str =
    "arn:aws:elasticloadbalancing:us-west-2:123456789012:loadbalancer/app/test-lb/1234567890abcdef";
const ANOTHER_LB: &str = "arn:aws:elasticloadbalancing:us-west-2:123456789012:loadbalancer/app/another-lb/0987654321fedcba";
const NLB: &str = "arn:aws:elasticloadbalancing:us-west-2:123456789012:loadbalancer/net/test-nlb/1234567890abcdef";

fn lb(dns_name: &str, arn: &str) -> DescribedLoadBalancer {
    DescribedLoadBalancer {
        dns_name: dns_name.into(),
        arn: arn.into(),
    }
}

#[test]
fn dns_to_arn_table() {
    let two = vec![
        lb("test-lb.us-west-2.elb.amazonaws.com", TEST_LB),
        lb("another-lb.us-west-2.elb.amazonaws.com", ANOTHER_LB),
    ];
    let other = vec![lb("another-lb.us-west-2.elb.amazonaws.com", ANOTHER_LB)];
    let nlb = vec![
        lb("test-nlb.us-west-2.elb.us-west-2.amazonaws.aws", NLB),
        lb("another-lb.us-west-2.elb.amazonaws.com", ANOTHER_LB),
    ];
    let cases: Vec<(
        &str,
        &str,
        Result<&[DescribedLoadBalancer], &str>,
        Result<&str, &str>,
    )> = vec![
        (
            "successfully resolves DNS to ARN",
            "test-lb.us-west-2.elb.amazonaws.com",
            Ok(two.as_slice()),
            Ok(TEST_LB),
        ),
        (
            "returns error for empty DNS name",
            "",
            Ok(two.as_slice()),
            Err("empty DNS name"),
        ),
        (
            "returns error when no load balancers found",
            "test-lb.us-west-2.elb.amazonaws.com",
            Ok(&[][..]),
            Err("no load balancers found"),
        ),
        (
            "returns error when no matching load balancer found",
            "test-lb.us-west-2.elb.amazonaws.com",
            Ok(other.as_slice()),
            Err("no load balancer found for dns test-lb.us-west-2.elb.amazonaws.com"),
        ),
        (
            "returns error when API call fails",
            "test-lb.us-west-2.elb.amazonaws.com",
            Err("API error"),
            Err("failed to describe load balancers: API error"),
        ),
        (
            "successfully resolves NLB DNS to ARN",
            "test-nlb.us-west-2.elb.us-west-2.amazonaws.aws",
            Ok(nlb.as_slice()),
            Ok(NLB),
        ),
    ];
    for (case, dns_name, described, want) in cases {
        assert_eq!(
            load_balancer_arn_by_dns(dns_name, described),
            want.map(str::to_string).map_err(str::to_string),
            "{case}"
        );
    }
}

#[test]
fn the_first_load_balancer_of_a_name_counts() {
    let lbs = [
        lb("x.elb.amazonaws.com", ""),
        lb("x.elb.amazonaws.com", TEST_LB),
    ];
    assert_eq!(
        load_balancer_arn_by_dns("x.elb.amazonaws.com", Ok(&lbs[..])),
        Err("no load balancer found for dns x.elb.amazonaws.com".to_string())
    );
}
