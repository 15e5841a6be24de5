//! The limiter / retry / metrics wrapper, exercised through the fake (the same `Caller` wraps
//! the SDK implementation). Time-based tests measure 1-3 s of real time (tokio's paused clock
//! would need the `test-util` feature, and with it a rebuild of every tokio dependant).

use std::sync::Arc;
use std::time::Duration;

use aws_load_balancer_controller::aws::fake::FakeAws;
use aws_load_balancer_controller::aws::retry::RetryPolicy;
use aws_load_balancer_controller::aws::throttle::{effective_rules, parse_throttle, Throttler};
use aws_load_balancer_controller::aws::*;
use prometheus_client::registry::Registry;
use tokio::time::Instant;

fn fast_retry(max_retries: u32) -> RetryPolicy {
    RetryPolicy {
        max_retries,
        base_delay: Duration::from_millis(10),
        max_delay: Duration::from_millis(100),
    }
}

fn fake_with(throttle: Option<&str>, retry: RetryPolicy) -> (Arc<FakeAws>, Registry) {
    let mut registry = Registry::default();
    let metrics = AwsMetrics::register(&mut registry);
    let caller = Caller::new(
        Throttler::new(&effective_rules(
            &throttle
                .map(|t| parse_throttle(t).unwrap())
                .unwrap_or_default(),
        )),
        retry,
        Some(metrics),
    );
    (
        Arc::new(FakeAws::with_caller("us-west-2", caller)),
        registry,
    )
}

fn render(r: &Registry) -> String {
    let mut s = String::new();
    prometheus_client::encoding::text::encode(&mut s, r).unwrap();
    s
}

/// The value of the sample whose name and labels are exactly `series`, or 0 when absent.
fn sample(text: &str, series: &str) -> f64 {
    text.lines()
        .find_map(|l| {
            l.strip_prefix(series)
                .and_then(|rest| rest.strip_prefix(' '))
        })
        .map(|v| v.trim().parse().unwrap())
        .unwrap_or(0.0)
}

fn calls_series(op: &str, status: &str, code: &str) -> String {
    format!(
        r#"aws_api_calls_total{{service="EC2",operation="{op}",status_code="{status}",error_code="{code}"}}"#
    )
}

#[tokio::test]
async fn metrics_and_call_log_are_exact() {
    let (fake, registry) = fake_with(None, fast_retry(3));
    let ec2: Arc<dyn Ec2> = fake.clone();
    for _ in 0..7 {
        ec2.describe_vpcs(&Ec2Query::default()).await.unwrap();
    }
    fake.fail_nth_call(
        1,
        AwsError::from_code("UnauthorizedOperation", "You are not authorized", Some(403)),
    );
    assert!(matches!(
        ec2.describe_subnets(&Ec2Query::default())
            .await
            .unwrap_err(),
        AwsError::AccessDenied { .. }
    ));
    let err = ec2
        .describe_subnets(&Ec2Query::default().filter("bogus", ["x"]))
        .await
        .unwrap_err();
    assert_eq!(err.code(), "InvalidParameterValue");

    let text = render(&registry);
    assert_eq!(
        sample(&text, &calls_series("DescribeVpcs", "200", "")),
        7.0,
        "{text}"
    );
    assert_eq!(
        sample(
            &text,
            &calls_series("DescribeSubnets", "403", "UnauthorizedOperation")
        ),
        1.0,
        "{text}"
    );
    assert_eq!(
        sample(
            &text,
            &calls_series("DescribeSubnets", "400", "InvalidParameterValue")
        ),
        1.0,
        "{text}"
    );
    // Error counters carry upstream's status_code and error_code labels.
    let denied = r#"{service="EC2",operation="DescribeSubnets",status_code="403",error_code="UnauthorizedOperation"}"#;
    let invalid = r#"{service="EC2",operation="DescribeSubnets",status_code="400",error_code="InvalidParameterValue"}"#;
    assert_eq!(
        sample(
            &text,
            &format!("aws_api_call_permission_errors_total{denied}")
        ),
        1.0,
        "{text}"
    );
    assert_eq!(
        sample(
            &text,
            &format!("aws_api_call_validation_errors_total{invalid}")
        ),
        1.0,
        "{text}"
    );
    assert!(
        !text.contains("aws_api_call_throttled_errors_total{"),
        "{text}"
    );
    // One HTTP request per attempt.
    let ok_requests = r#"aws_api_requests_total{service="EC2",operation="DescribeVpcs",status_code="200",error_code=""}"#;
    assert_eq!(sample(&text, ok_requests), 7.0, "{text}");
    assert_eq!(
        sample(&text, &format!("aws_api_requests_total{denied}")),
        1.0,
        "{text}"
    );
    let vpcs = r#"{service="EC2",operation="DescribeVpcs"}"#;
    assert_eq!(
        sample(&text, &format!("aws_api_call_duration_seconds_count{vpcs}")),
        7.0,
        "{text}"
    );
    assert_eq!(
        sample(&text, &format!("aws_api_call_retries_count{vpcs}")),
        7.0
    );
    assert_eq!(
        sample(&text, &format!("aws_api_call_retries_sum{vpcs}")),
        0.0
    );

    // Every request reached the fake once: no retries for non-retryable errors.
    assert_eq!(fake.calls().len(), 9);
    assert_eq!(fake.count("DescribeVpcs"), 7);
    assert!(fake.write_calls().is_empty());

    // A quota error counts as a service-limit error.
    fake.fail_nth_call(
        1,
        AwsError::from_code("TagLimitExceeded", "too many", Some(400)),
    );
    let err = ec2
        .create_tags(&["vpc-1".to_string()], &Tags::new())
        .await
        .unwrap_err();
    assert!(matches!(err, AwsError::LimitExceeded { .. }));
    let text = render(&registry);
    let op =
        r#"{service="EC2",operation="CreateTags",status_code="400",error_code="TagLimitExceeded"}"#;
    assert_eq!(
        sample(
            &text,
            &format!("aws_api_call_service_limit_exceeded_errors_total{op}")
        ),
        1.0,
        "{text}"
    );
    assert_eq!(fake.write_calls().len(), 1);
}

#[tokio::test]
async fn throttled_and_5xx_calls_are_retried() {
    let (fake, registry) = fake_with(None, fast_retry(3));
    let elb: Arc<dyn ElbV2> = fake.clone();
    fake.fail_nth_call(
        1,
        AwsError::from_code("Throttling", "Rate exceeded", Some(400)),
    );
    fake.fail_nth_call(2, AwsError::from_code("InternalFailure", "oops", Some(500)));
    let lbs = elb
        .describe_load_balancers(&LoadBalancerQuery::default())
        .await
        .unwrap();
    assert!(lbs.is_empty());
    assert_eq!(fake.count("DescribeLoadBalancers"), 3);
    let text = render(&registry);
    let ok = r#"aws_api_calls_total{service="Elastic Load Balancing v2",operation="DescribeLoadBalancers",status_code="200",error_code=""}"#;
    assert_eq!(sample(&text, ok), 1.0, "{text}");
    let op = r#"{service="Elastic Load Balancing v2",operation="DescribeLoadBalancers"}"#;
    assert_eq!(
        sample(&text, &format!("aws_api_call_retries_sum{op}")),
        2.0,
        "{text}"
    );
    // A retried-then-successful call is not a throttling error.
    assert!(
        !text.contains("aws_api_call_throttled_errors_total{"),
        "{text}"
    );
    // Each of the three attempts is an HTTP request with its own outcome.
    let elb = r#"service="Elastic Load Balancing v2",operation="DescribeLoadBalancers""#;
    for (status, code) in [
        ("400", "Throttling"),
        ("500", "InternalFailure"),
        ("200", ""),
    ] {
        let series = format!(
            r#"aws_api_requests_total{{{elb},status_code="{status}",error_code="{code}"}}"#
        );
        assert_eq!(sample(&text, &series), 1.0, "{series} in {text}");
    }
    assert_eq!(
        sample(
            &text,
            &format!("aws_api_request_duration_seconds_count{op}")
        ),
        3.0,
        "{text}"
    );
}

#[tokio::test]
async fn retries_stop_at_max_retries() {
    let (fake, registry) = fake_with(None, fast_retry(2));
    fake.set_throttle_rate(1.0);
    let err = Ec2::describe_vpcs(fake.as_ref(), &Ec2Query::default())
        .await
        .unwrap_err();
    assert!(matches!(err, AwsError::Throttled { .. }), "{err:?}");
    assert_eq!(fake.count("DescribeVpcs"), 3, "first attempt + 2 retries");
    let text = render(&registry);
    assert_eq!(
        sample(&text, &calls_series("DescribeVpcs", "400", "Throttling")),
        1.0,
        "{text}"
    );
    assert_eq!(
        sample(
            &text,
            r#"aws_api_call_throttled_errors_total{service="EC2",operation="DescribeVpcs",status_code="400",error_code="Throttling"}"#
        ),
        1.0
    );

    // Not retryable: one attempt only.
    fake.clear_faults();
    fake.clear_calls();
    fake.fail_nth_call(
        1,
        AwsError::from_code("LoadBalancerNotFound", "gone", Some(400)),
    );
    ElbV2::describe_load_balancers(fake.as_ref(), &LoadBalancerQuery::default())
        .await
        .unwrap_err();
    assert_eq!(fake.calls().len(), 1);
}

#[tokio::test]
async fn random_5xx_are_absorbed_by_retries() {
    let (fake, _) = fake_with(None, fast_retry(10));
    fake.set_server_error_rate(0.3);
    for _ in 0..20 {
        Ec2::describe_vpcs(fake.as_ref(), &Ec2Query::default())
            .await
            .unwrap();
    }
    assert!(
        fake.count("DescribeVpcs") > 20,
        "some requests failed and were retried"
    );
}

async fn elapsed_for(n: usize, f: impl AsyncFn()) -> f64 {
    let start = Instant::now();
    for _ in 0..n {
        f().await;
    }
    start.elapsed().as_secs_f64()
}

// tokio's clock, paused: the limiter and the fake's latency run on virtual time, so the
// figures are the limiter's arithmetic, not this machine's speed.
#[tokio::test(start_paused = true)]
async fn limiter_holds_configured_rate() {
    // User rule: 10/s, burst 5 → 55 calls need 5 s.
    let (fake, _) = fake_with(Some("ec2:^Describe=10:5"), fast_retry(0));
    let secs = elapsed_for(55, async || {
        Ec2::describe_vpcs(fake.as_ref(), &Ec2Query::default())
            .await
            .unwrap();
    })
    .await;
    assert!((secs - 5.0).abs() <= 0.5, "took {secs}s");
    // EC2 writes are not limited by that rule.
    let secs = elapsed_for(50, async || {
        let _ = Ec2::delete_security_group(fake.as_ref(), "sg-missing").await;
    })
    .await;
    assert!(secs < 0.1, "took {secs}s");
}

// tokio's clock, paused: the limiter and the fake's latency run on virtual time, so the
// figures are the limiter's arithmetic, not this machine's speed.
#[tokio::test(start_paused = true)]
async fn default_register_targets_limit() {
    // Upstream default: RegisterTargets 4/s burst 20 → 32 requests need 3 s.
    let (fake, _) = fake_with(None, fast_retry(0));
    let vpc = fake.add_vpc("10.0.0.0/16", Tags::new());
    let tg = ElbV2::create_target_group(
        fake.as_ref(),
        (&aws_load_balancer_controller::aws::fake::spec::ip_target_group("t", 80)).into(),
        &vpc,
    )
    .await
    .unwrap();
    let secs = elapsed_for(60, async || {
        fake.register_targets(&tg.arn, &[TargetDescription::new("10.0.0.1", 80)])
            .await
            .unwrap();
    })
    .await;
    assert!((secs - 10.0).abs() <= 1.0, "took {secs}s");
    assert_eq!(fake.count("RegisterTargets"), 60);
}

// tokio's clock, paused: the limiter and the fake's latency run on virtual time, so the
// figures are the limiter's arithmetic, not this machine's speed.
#[tokio::test(start_paused = true)]
async fn injected_latency() {
    let (fake, _) = fake_with(None, fast_retry(0));
    fake.set_latency(Duration::from_millis(100));
    let secs = elapsed_for(10, async || {
        Ec2::describe_vpcs(fake.as_ref(), &Ec2Query::default())
            .await
            .unwrap();
    })
    .await;
    assert!((secs - 1.0).abs() < 0.1, "took {secs}s");
}
