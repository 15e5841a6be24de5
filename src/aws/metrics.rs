//! Prometheus metrics of AWS calls, under upstream's names (`aws_api_calls_total`, ...).
//! prometheus-client appends `_total` to counters itself, so counters are registered without it.

use prometheus_client::encoding::EncodeLabelSet;
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::gauge::Gauge;
use prometheus_client::metrics::histogram::{linear_buckets, Histogram};
use prometheus_client::registry::Registry;

use super::error::AwsError;
use super::types::Service;

#[derive(Debug, Clone, Hash, PartialEq, Eq, EncodeLabelSet)]
pub struct CallLabels {
    pub service: String,
    pub operation: String,
    pub status_code: String,
    pub error_code: String,
}

/// `aws_target_group_info`: one series per TargetGroupBinding the controller made.
#[derive(Debug, Clone, Hash, PartialEq, Eq, EncodeLabelSet)]
pub struct TargetGroupLabels {
    pub namespace: String,
    pub service: String,
    /// The ARN's last part (`targetgroup/<name>/<id>`), CloudWatch's TargetGroup dimension.
    pub target_group: String,
}

impl TargetGroupLabels {
    pub fn new(namespace: &str, service: &str, target_group_arn: &str) -> Self {
        let target_group = match target_group_arn.rfind(':') {
            Some(i) => &target_group_arn[i + 1..],
            None => target_group_arn,
        };
        TargetGroupLabels {
            namespace: namespace.into(),
            service: service.into(),
            target_group: target_group.into(),
        }
    }
}

#[derive(Debug, Clone, Hash, PartialEq, Eq, EncodeLabelSet)]
pub struct OpLabels {
    pub service: String,
    pub operation: String,
}

type HistFamily = Family<OpLabels, Histogram, fn() -> Histogram>;

/// Handles to the AWS metrics; cheap to clone (all clones update the same series).
#[derive(Debug, Clone)]
pub struct AwsMetrics {
    calls: Family<CallLabels, Counter>,
    duration: HistFamily,
    retries: HistFamily,
    requests: Family<CallLabels, Counter>,
    request_duration: HistFamily,
    permission_errors: Family<CallLabels, Counter>,
    throttled_errors: Family<CallLabels, Counter>,
    validation_errors: Family<CallLabels, Counter>,
    limit_errors: Family<CallLabels, Counter>,
    target_groups: Family<TargetGroupLabels, Gauge>,
    /// `awslbc_aws_setup_ready`: 1 once the AWS clients are set up, 0 before and while it fails.
    setup_ready: Gauge,
}

/// `status_code` and `error_code` labels of an outcome: 200 and "" for success.
fn codes(result: Result<(), &AwsError>) -> (String, String) {
    match result {
        Ok(()) => ("200".to_string(), String::new()),
        Err(e) => (
            e.http_status().map(|s| s.to_string()).unwrap_or_default(),
            e.code().to_string(),
        ),
    }
}

fn duration_histogram() -> Histogram {
    // Prometheus' default buckets, as upstream's client_golang histogram.
    Histogram::new([
        0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0,
    ])
}

fn retries_histogram() -> Histogram {
    Histogram::new(linear_buckets(0.0, 1.0, 11))
}

impl AwsMetrics {
    /// Creates the metrics and registers them.
    pub fn register(registry: &mut Registry) -> AwsMetrics {
        let m = AwsMetrics {
            calls: Family::default(),
            duration: Family::new_with_constructor(duration_histogram as fn() -> Histogram),
            retries: Family::new_with_constructor(retries_histogram as fn() -> Histogram),
            requests: Family::default(),
            request_duration: Family::new_with_constructor(duration_histogram as fn() -> Histogram),
            permission_errors: Family::default(),
            throttled_errors: Family::default(),
            validation_errors: Family::default(),
            limit_errors: Family::default(),
            target_groups: Family::default(),
            setup_ready: Gauge::default(),
        };
        registry.register(
            "aws_api_calls",
            "Total number of SDK API calls from the customer's code to AWS services",
            m.calls.clone(),
        );
        registry.register(
            "aws_api_call_duration_seconds",
            "Perceived latency from when your code makes an SDK call, includes retries",
            m.duration.clone(),
        );
        registry.register(
            "aws_api_call_retries",
            "Number of times the SDK retried requests to AWS services for SDK API calls",
            m.retries.clone(),
        );
        registry.register(
            "aws_api_requests",
            "Total number of HTTP requests that the SDK made",
            m.requests.clone(),
        );
        registry.register(
            "aws_api_request_duration_seconds",
            "Latency of an individual HTTP request to the service endpoint",
            m.request_duration.clone(),
        );
        registry.register(
            "aws_api_call_permission_errors",
            "Number of failed AWS API calls due to auth or authorization failures",
            m.permission_errors.clone(),
        );
        registry.register(
            "aws_api_call_throttled_errors",
            "Number of failed AWS API calls due to throttling error",
            m.throttled_errors.clone(),
        );
        registry.register(
            "aws_api_call_validation_errors",
            "Number of failed AWS API calls due to validation error",
            m.validation_errors.clone(),
        );
        registry.register(
            "aws_api_call_service_limit_exceeded_errors",
            "Number of failed AWS API calls due to exceeding service limit",
            m.limit_errors.clone(),
        );
        registry.register(
            "aws_target_group_info",
            "Information available about target group",
            m.target_groups.clone(),
        );
        // Not upstream's (its controller exits when AWS set-up fails): this build keeps the
        // webhooks serving and retries, so the failure shows here instead of in a crash loop.
        registry.register(
            "awslbc_aws_setup_ready",
            "Whether the controller's AWS clients are set up (1) or set-up has not completed or keeps failing (0); reconciles wait for it",
            m.setup_ready.clone(),
        );
        m
    }

    /// AWS set-up succeeded (`true`) or failed / has not completed (`false`).
    pub fn set_setup_ready(&self, ready: bool) {
        self.setup_ready.set(i64::from(ready));
    }

    /// A TargetGroupBinding of ours exists (created, or kept up to date) for this group.
    pub fn target_group_bound(&self, labels: &TargetGroupLabels) {
        self.target_groups.get_or_create(labels).set(1);
    }

    /// That TargetGroupBinding was deleted.
    pub fn target_group_unbound(&self, labels: &TargetGroupLabels) {
        self.target_groups.remove(labels);
    }

    /// Records one finished call (after all its retries).
    pub fn observe(
        &self,
        service: Service,
        operation: &str,
        result: Result<(), &AwsError>,
        secs: f64,
        retries: u32,
    ) {
        let op = OpLabels {
            service: service.id().into(),
            operation: operation.into(),
        };
        let (status_code, error_code) = codes(result);
        let labels = CallLabels {
            service: op.service.clone(),
            operation: op.operation.clone(),
            status_code,
            error_code,
        };
        self.calls.get_or_create(&labels).inc();
        self.duration.get_or_create(&op).observe(secs);
        self.retries.get_or_create(&op).observe(retries as f64);
        if let Err(e) = result {
            let family = match e {
                AwsError::AccessDenied { .. } => Some(&self.permission_errors),
                AwsError::Throttled { .. } => Some(&self.throttled_errors),
                AwsError::Validation { .. } => Some(&self.validation_errors),
                AwsError::LimitExceeded { .. } => Some(&self.limit_errors),
                _ => None,
            };
            if let Some(f) = family {
                f.get_or_create(&labels).inc();
            }
        }
    }

    /// Records one HTTP request (one attempt of a call). As upstream, only requests that got a
    /// response count: a connection failure has no status code.
    pub fn observe_request(
        &self,
        service: Service,
        operation: &str,
        result: Result<(), &AwsError>,
        secs: f64,
    ) {
        if matches!(result, Err(e) if e.http_status().is_none()) {
            return;
        }
        let (status_code, error_code) = codes(result);
        let op = OpLabels {
            service: service.id().into(),
            operation: operation.into(),
        };
        self.requests
            .get_or_create(&CallLabels {
                service: op.service.clone(),
                operation: op.operation.clone(),
                status_code,
                error_code,
            })
            .inc();
        self.request_duration.get_or_create(&op).observe(secs);
    }
}
