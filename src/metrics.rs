//! Metrics (Prometheus text 0.0.4 on --metrics-bind-addr, OpenMetrics to a client that asks only
//! for it). The health probes are in `probes`.

use axum::extract::State;
use axum::http::{header, HeaderMap, StatusCode};
use axum::response::IntoResponse;
use axum::routing::get;
use axum::Router;
use prometheus_client::collector::Collector;
use prometheus_client::encoding::{DescriptorEncoder, EncodeLabelSet, EncodeMetric};
use prometheus_client::metrics::counter::{ConstCounter, Counter};
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::gauge::{ConstGauge, Gauge};
use prometheus_client::metrics::histogram::Histogram;
use prometheus_client::registry::Registry;
use std::sync::Arc;

mod rest_client;
pub mod text;
pub use rest_client::{RestClientLayer, RestClientMetrics, RestClientService};

/// client_golang's `ExponentialBuckets`: each bound is the previous one times `factor`, so the
/// bounds, and the `le` labels dashboards select, are upstream's to the last bit
/// (`9.999999999999999e-06` where prometheus-client's `start * factor^i` gives `1e-05`).
pub fn go_exponential_buckets(start: f64, factor: f64, count: usize) -> Vec<f64> {
    let mut bounds = Vec::with_capacity(count);
    let mut bound = start;
    for _ in 0..count {
        bounds.push(bound);
        bound *= factor;
    }
    bounds
}

/// Labels of upstream's webhook failure counters.
#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
pub struct WebhookFailureLabels {
    pub webhook_name: String,
    pub error_category: String,
}

/// Labels of controller-runtime's `controller_runtime_webhook_requests_total`.
#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
pub struct WebhookCodeLabels {
    pub webhook: String,
    pub code: String,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
pub struct WebhookLabels {
    pub webhook: String,
}

/// client-go's and controller-runtime's latency buckets: 10ns up to 1000s, by tens.
fn webhook_latency_buckets() -> Histogram {
    Histogram::new(go_exponential_buckets(10e-9, 10.0, 12))
}

/// `awslbc_webhook_validation_failure_total` and `awslbc_webhook_mutation_failure_total`, and
/// controller-runtime's `controller_runtime_webhook_*` per admission path.
#[derive(Clone, Debug)]
pub struct WebhookMetrics {
    pub validation_failures: Family<WebhookFailureLabels, Counter>,
    pub mutation_failures: Family<WebhookFailureLabels, Counter>,
    requests: Family<WebhookCodeLabels, Counter>,
    latency: Family<WebhookLabels, Histogram, fn() -> Histogram>,
    in_flight: Family<WebhookLabels, Gauge>,
}

impl Default for WebhookMetrics {
    fn default() -> Self {
        WebhookMetrics {
            validation_failures: Family::default(),
            mutation_failures: Family::default(),
            requests: Family::default(),
            latency: Family::new_with_constructor(webhook_latency_buckets as fn() -> Histogram),
            in_flight: Family::default(),
        }
    }
}

impl WebhookMetrics {
    /// A path is served: its `200` and `500` counts show from the start, as controller-runtime's.
    /// The returned handles count its requests without a label lookup on the request path.
    pub fn route(&self, webhook: &'static str) -> RouteMetrics {
        let labels = WebhookLabels {
            webhook: webhook.into(),
        };
        let code = |code: &str| {
            self.requests
                .get_or_create(&WebhookCodeLabels {
                    webhook: webhook.into(),
                    code: code.into(),
                })
                .clone()
        };
        let ok = code("200");
        drop(code("500"));
        RouteMetrics {
            webhook,
            in_flight: self.in_flight.get_or_create(&labels).clone(),
            latency: self.latency.get_or_create(&labels).clone(),
            ok,
            all: self.clone(),
        }
    }

    pub fn register(registry: &mut Registry) -> Self {
        let m = WebhookMetrics::default();
        registry.register(
            "controller_runtime_webhook_requests",
            "Total number of admission requests by HTTP status code.",
            m.requests.clone(),
        );
        registry.register(
            "controller_runtime_webhook_latency_seconds",
            "Histogram of the latency of processing admission requests",
            m.latency.clone(),
        );
        registry.register(
            "controller_runtime_webhook_requests_in_flight",
            "Current number of admission requests being served.",
            m.in_flight.clone(),
        );
        // prometheus-client appends `_total` to counters, giving upstream's exact names.
        registry.register(
            "awslbc_webhook_validation_failure",
            "Counts the number of webhook validation failure, categorized by error type.",
            m.validation_failures.clone(),
        );
        registry.register(
            "awslbc_webhook_mutation_failure",
            "Counts the number of webhook mutation failure, categorized by error type.",
            m.mutation_failures.clone(),
        );
        m
    }

    /// Counts one failure of `webhook` (its path) in `category` (the failing check's name).
    pub fn record_failure(&self, mutating: bool, webhook: &str, category: &str) {
        let labels = WebhookFailureLabels {
            webhook_name: webhook.to_string(),
            error_category: category.to_string(),
        };
        let family = if mutating {
            &self.mutation_failures
        } else {
            &self.validation_failures
        };
        family.get_or_create(&labels).inc();
    }
}

/// One admission path's series, resolved once when the route is built.
#[derive(Clone, Debug)]
pub struct RouteMetrics {
    webhook: &'static str,
    in_flight: Gauge,
    latency: Histogram,
    /// `code="200"`, the answer to nearly every request.
    ok: Counter,
    all: WebhookMetrics,
}

impl RouteMetrics {
    /// One admission request starts: in flight until the returned value is dropped (also when
    /// the client goes away mid-request).
    pub fn started(&self) -> AdmissionInFlight<'_> {
        self.in_flight.inc();
        AdmissionInFlight {
            gauge: &self.in_flight,
            start: std::time::Instant::now(),
        }
    }

    /// The request was answered with HTTP status `code`.
    pub fn answered(&self, request: &AdmissionInFlight<'_>, code: u16) {
        self.latency.observe(request.start.elapsed().as_secs_f64());
        if code == 200 {
            self.ok.inc();
        } else {
            self.all
                .requests
                .get_or_create(&WebhookCodeLabels {
                    webhook: self.webhook.into(),
                    code: code.to_string(),
                })
                .inc();
        }
    }

    /// Counts one failure of this webhook in `category` (the failing check's name).
    pub fn record_failure(&self, mutating: bool, category: &str) {
        self.all.record_failure(mutating, self.webhook, category);
    }
}

/// See [`RouteMetrics::started`].
pub struct AdmissionInFlight<'a> {
    gauge: &'a Gauge,
    start: std::time::Instant,
}

impl Drop for AdmissionInFlight<'_> {
    fn drop(&mut self) {
        self.gauge.dec();
    }
}

/// Standard `process_*` metrics read from /proc on each scrape (Linux only; empty elsewhere).
#[derive(Debug, Default)]
pub struct ProcessCollector;

impl ProcessCollector {
    fn read() -> Option<(f64, f64, f64, f64, f64)> {
        let stat = std::fs::read_to_string("/proc/self/stat").ok()?;
        // Fields after the parenthesised command name; the name itself may contain spaces.
        let rest = stat.rsplit_once(')')?.1;
        let f: Vec<&str> = rest.split_whitespace().collect();
        let ticks = 100.0; // USER_HZ is 100 on every Linux we run on.
        let cpu = (f.get(11)?.parse::<f64>().ok()? + f.get(12)?.parse::<f64>().ok()?) / ticks;
        let start_ticks: f64 = f.get(19)?.parse().ok()?;
        let vsize: f64 = f.get(20)?.parse().ok()?;
        let rss_pages: f64 = f.get(21)?.parse().ok()?;
        let boot = std::fs::read_to_string("/proc/stat")
            .ok()?
            .lines()
            .find_map(|l| {
                l.strip_prefix("btime ")
                    .and_then(|v| v.trim().parse::<f64>().ok())
            })?;
        let fds = std::fs::read_dir("/proc/self/fd")
            .map(|d| d.count() as f64)
            .unwrap_or(0.0);
        Some((
            cpu,
            boot + start_ticks / ticks,
            vsize,
            rss_pages * 4096.0,
            fds,
        ))
    }
}

impl Collector for ProcessCollector {
    fn encode(&self, mut encoder: DescriptorEncoder) -> Result<(), std::fmt::Error> {
        let Some((cpu, start, vsize, rss, fds)) = Self::read() else {
            return Ok(());
        };
        let counter = ConstCounter::new(cpu);
        counter.encode(encoder.encode_descriptor(
            "process_cpu_seconds",
            "Total user and system CPU time spent in seconds",
            None,
            counter.metric_type(),
        )?)?;
        for (name, help, value) in [
            (
                "process_start_time_seconds",
                "Start time of the process since unix epoch in seconds",
                start,
            ),
            (
                "process_virtual_memory_bytes",
                "Virtual memory size in bytes",
                vsize,
            ),
            (
                "process_resident_memory_bytes",
                "Resident memory size in bytes",
                rss,
            ),
            ("process_open_fds", "Number of open file descriptors", fds),
        ] {
            let gauge = ConstGauge::new(value);
            gauge.encode(encoder.encode_descriptor(name, help, None, gauge.metric_type())?)?;
        }
        Ok(())
    }
}

/// Builds the registry with the process collector already in it.
pub fn new_registry() -> Registry {
    let mut registry = Registry::default();
    registry.register_collector(Box::new(ProcessCollector));
    registry
}

/// The `/metrics` router.
pub fn metrics_router(registry: Arc<Registry>) -> Router {
    Router::new()
        .route("/metrics", get(render_metrics))
        .with_state(registry)
}

/// The registry as upstream serves it: Prometheus text 0.0.4 (see [`text`]).
pub fn render_text(registry: &Registry) -> Result<String, std::fmt::Error> {
    let mut om = String::new();
    prometheus_client::encoding::text::encode(&mut om, registry)?;
    Ok(text::openmetrics_to_text(&om))
}

async fn render_metrics(
    State(registry): State<Arc<Registry>>,
    headers: HeaderMap,
) -> impl IntoResponse {
    let accept = headers
        .get_all(header::ACCEPT)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .collect::<Vec<_>>()
        .join(",");
    let rendered = if text::wants_openmetrics(&accept) {
        let mut body = String::new();
        prometheus_client::encoding::text::encode(&mut body, &registry)
            .map(|()| (text::OPENMETRICS_CONTENT_TYPE, body))
    } else {
        render_text(&registry).map(|body| (text::TEXT_CONTENT_TYPE, body))
    };
    match rendered {
        Ok((content_type, body)) => {
            (StatusCode::OK, [(header::CONTENT_TYPE, content_type)], body).into_response()
        }
        Err(_) => (
            StatusCode::INTERNAL_SERVER_ERROR,
            "failed to encode metrics",
        )
            .into_response(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn webhook_counters_render_with_upstream_names_and_labels() {
        let mut registry = new_registry();
        let m = WebhookMetrics::register(&mut registry);
        m.record_failure(
            false,
            "/validate-elbv2-k8s-aws-v1beta1-targetgroupbinding",
            "checkRequiredFields",
        );
        m.record_failure(
            false,
            "/validate-elbv2-k8s-aws-v1beta1-targetgroupbinding",
            "checkRequiredFields",
        );
        m.record_failure(true, "/mutate-v1-pod", "listTargetGroupBindings");
        let out = render_text(&registry).unwrap();
        assert!(out.contains(
            "awslbc_webhook_validation_failure_total{webhook_name=\"/validate-elbv2-k8s-aws-v1beta1-targetgroupbinding\",error_category=\"checkRequiredFields\"} 2"
        ), "{out}");
        assert!(out.contains(
            "awslbc_webhook_mutation_failure_total{webhook_name=\"/mutate-v1-pod\",error_category=\"listTargetGroupBindings\"} 1"
        ), "{out}");
        assert!(out.contains("process_resident_memory_bytes"), "{out}");
    }

    #[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
    struct ControllerLabel {
        controller: String,
    }

    #[test]
    fn text_0_0_4_names_counters_with_total_and_spells_numbers_as_go() {
        let mut registry = Registry::default();
        let reconciles = Family::<ControllerLabel, Counter>::default();
        let workers: Gauge = Gauge::default();
        let time = Histogram::new([
            0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 15.0, 20.0, 25.0, 30.0,
            40.0, 50.0, 60.0,
        ]);
        registry.register(
            "controller_runtime_reconcile",
            "Reconciles",
            reconciles.clone(),
        );
        registry.register(
            "controller_runtime_active_workers",
            "Workers",
            workers.clone(),
        );
        registry.register(
            "controller_runtime_reconcile_time_seconds",
            "Time",
            time.clone(),
        );
        let ingress = ControllerLabel {
            controller: "ingress".into(),
        };
        reconciles.get_or_create(&ingress).inc_by(1_000_000);
        workers.set(3);
        time.observe(42.0);
        time.observe(0.004);
        let out = render_text(&registry).unwrap();
        let mut want = concat!(
            "# HELP controller_runtime_reconcile_total Reconciles\n",
            "# TYPE controller_runtime_reconcile_total counter\n",
            "controller_runtime_reconcile_total{controller=\"ingress\"} 1e+06\n",
            "# HELP controller_runtime_active_workers Workers\n",
            "# TYPE controller_runtime_active_workers gauge\n",
            "controller_runtime_active_workers 3\n",
            "# HELP controller_runtime_reconcile_time_seconds Time\n",
            "# TYPE controller_runtime_reconcile_time_seconds histogram\n",
            "controller_runtime_reconcile_time_seconds_sum 42.004\n",
            "controller_runtime_reconcile_time_seconds_count 2\n",
        )
        .to_string();
        for (le, n) in [
            ("0.005", 1),
            ("0.01", 1),
            ("0.025", 1),
            ("0.05", 1),
            ("0.1", 1),
            ("0.25", 1),
            ("0.5", 1),
            ("1", 1),
            ("2.5", 1),
            ("5", 1),
            ("10", 1),
            ("15", 1),
            ("20", 1),
            ("25", 1),
            ("30", 1),
            ("40", 1),
            ("50", 2),
            ("60", 2),
            ("+Inf", 2),
        ] {
            want.push_str(&format!(
                "controller_runtime_reconcile_time_seconds_bucket{{le=\"{le}\"}} {n}\n"
            ));
        }
        assert_eq!(out, want);
        assert!(
            !out.contains("# EOF") && !out.contains("le=\"60.0\""),
            "{out}"
        );
    }

    #[test]
    fn go_exponential_buckets_multiply_as_client_golang() {
        let bounds: Vec<String> = go_exponential_buckets(10e-9, 10.0, 12)
            .into_iter()
            .map(text::go_float)
            .collect();
        assert_eq!(
            bounds,
            [
                "1e-08",
                "1e-07",
                "1e-06",
                "9.999999999999999e-06",
                "9.999999999999999e-05",
                "0.001",
                "0.01",
                "0.1",
                "1",
                "10",
                "100",
                "1000"
            ]
        );
    }

    #[tokio::test]
    async fn the_endpoint_serves_text_0_0_4_unless_a_client_takes_only_openmetrics() {
        use http_body_util::BodyExt;
        use tower::ServiceExt;
        let mut registry = new_registry();
        let m = WebhookMetrics::register(&mut registry);
        m.record_failure(true, "/mutate-v1-pod", "x");
        let router = metrics_router(Arc::new(registry));
        let prometheus_2 = "application/openmetrics-text;version=1.0.0,application/openmetrics-text;version=0.0.1;q=0.75,text/plain;version=0.0.4;q=0.5,*/*;q=0.1";
        for (accept, content_type) in [
            (None, text::TEXT_CONTENT_TYPE),
            (Some("*/*"), text::TEXT_CONTENT_TYPE),
            (Some(prometheus_2), text::TEXT_CONTENT_TYPE),
            (
                Some("application/openmetrics-text"),
                text::OPENMETRICS_CONTENT_TYPE,
            ),
        ] {
            let mut request = axum::http::Request::get("/metrics");
            if let Some(accept) = accept {
                request = request.header(header::ACCEPT, accept);
            }
            let request = request.body(axum::body::Body::empty()).unwrap();
            let response = router.clone().oneshot(request).await.unwrap();
            assert_eq!(response.status(), StatusCode::OK);
            let got = response.headers()[header::CONTENT_TYPE].to_str().unwrap();
            assert_eq!(got, content_type, "{accept:?}");
            let body = response.into_body().collect().await.unwrap().to_bytes();
            let body = String::from_utf8(body.to_vec()).unwrap();
            let openmetrics = content_type == text::OPENMETRICS_CONTENT_TYPE;
            assert_eq!(body.ends_with("# EOF\n"), openmetrics, "{body}");
            let counter = if openmetrics {
                "# TYPE awslbc_webhook_mutation_failure counter"
            } else {
                "# TYPE awslbc_webhook_mutation_failure_total counter"
            };
            assert!(body.contains(counter), "{body}");
        }
    }
}
