//! client-go's `rest_client_requests_total` and `rest_client_request_duration_seconds`, counted
//! by a tower layer on the kube client.

use prometheus_client::encoding::EncodeLabelSet;
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::histogram::Histogram;
use prometheus_client::registry::Registry;

/// Labels of client-go's `rest_client_requests_total` (as Go prints them, sorted).
#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
pub struct RestLabels {
    pub code: String,
    pub host: String,
    pub method: String,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
pub struct VerbLabels {
    pub host: String,
    pub verb: String,
}

fn latency_buckets() -> Histogram {
    Histogram::new([
        0.005, 0.025, 0.1, 0.25, 0.5, 1.0, 2.0, 4.0, 8.0, 15.0, 30.0, 60.0,
    ])
}

/// `rest_client_requests_total{code, host, method}`: every request the Kubernetes client sent,
/// by HTTP status (`<error>` when no response came, as client-go says); and
/// `rest_client_request_duration_seconds{host, verb}` up to the response headers.
#[derive(Clone, Debug)]
pub struct RestClientMetrics {
    requests: Family<RestLabels, Counter>,
    duration: Family<VerbLabels, Histogram, fn() -> Histogram>,
}

impl Default for RestClientMetrics {
    fn default() -> Self {
        RestClientMetrics {
            requests: Family::default(),
            duration: Family::new_with_constructor(latency_buckets as fn() -> Histogram),
        }
    }
}

impl RestClientMetrics {
    pub fn register(registry: &mut Registry) -> Self {
        let m = RestClientMetrics::default();
        registry.register(
            "rest_client_requests",
            "Number of HTTP requests, partitioned by status code, method, and host.",
            m.requests.clone(),
        );
        registry.register(
            "rest_client_request_duration_seconds",
            "Request latency in seconds. Broken down by verb and host.",
            m.duration.clone(),
        );
        m
    }

    /// A tower layer for the kube client counting each request to API server `host`.
    pub fn layer(&self, host: &str) -> RestClientLayer {
        RestClientLayer {
            metrics: self.clone(),
            host: host.to_string(),
        }
    }

    fn record(&self, code: String, host: &str, method: &str, secs: f64) {
        self.duration
            .get_or_create(&VerbLabels {
                host: host.to_string(),
                verb: method.to_string(),
            })
            .observe(secs);
        self.requests
            .get_or_create(&RestLabels {
                code,
                host: host.to_string(),
                method: method.to_string(),
            })
            .inc();
    }
}

/// See [`RestClientMetrics::layer`].
#[derive(Clone, Debug)]
pub struct RestClientLayer {
    metrics: RestClientMetrics,
    host: String,
}

impl<S> tower::Layer<S> for RestClientLayer {
    type Service = RestClientService<S>;

    fn layer(&self, inner: S) -> Self::Service {
        RestClientService {
            inner,
            layer: self.clone(),
        }
    }
}

#[derive(Clone, Debug)]
pub struct RestClientService<S> {
    inner: S,
    layer: RestClientLayer,
}

impl<S, ReqB, ResB> tower::Service<axum::http::Request<ReqB>> for RestClientService<S>
where
    S: tower::Service<axum::http::Request<ReqB>, Response = axum::http::Response<ResB>>,
    S::Future: Send + 'static,
    S::Error: Send + 'static,
    ResB: Send + 'static,
{
    type Response = S::Response;
    type Error = S::Error;
    type Future = futures::future::BoxFuture<'static, Result<S::Response, S::Error>>;

    fn poll_ready(
        &mut self,
        cx: &mut std::task::Context<'_>,
    ) -> std::task::Poll<Result<(), Self::Error>> {
        self.inner.poll_ready(cx)
    }

    fn call(&mut self, req: axum::http::Request<ReqB>) -> Self::Future {
        let method = req.method().to_string();
        let layer = self.layer.clone();
        let sent = self.inner.call(req);
        let start = std::time::Instant::now();
        Box::pin(async move {
            let out = sent.await;
            let code = match &out {
                Ok(resp) => resp.status().as_u16().to_string(),
                Err(_) => "<error>".to_string(),
            };
            layer
                .metrics
                .record(code, &layer.host, &method, start.elapsed().as_secs_f64());
            out
        })
    }
}
