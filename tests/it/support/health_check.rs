//! Out-of-band health-check changes: ModifyTargetGroup takes the model's complete health
//! check, so a test that drifts one setting starts from what AWS describes.

use aws_load_balancer_controller::aws;
use aws_load_balancer_controller::model::{HealthCheck, Protocol};

/// The health check `tg` has, as the model would ask for it.
pub fn described(tg: &aws::TargetGroup) -> HealthCheck {
    let h = &tg.health_check;
    let protocol: Protocol =
        serde_json::from_value(serde_json::json!(h.protocol.as_deref().unwrap_or("TCP")))
            .expect("a health-check protocol the model knows");
    let mut matcher = std::collections::BTreeMap::new();
    if let Some(c) = &h.matcher_http_code {
        matcher.insert("httpCode".to_string(), c.clone());
    }
    if let Some(c) = &h.matcher_grpc_code {
        matcher.insert("grpcCode".to_string(), c.clone());
    }
    HealthCheck {
        port: h.port.clone().unwrap_or_else(|| "traffic-port".into()),
        protocol,
        path: h.path.clone().unwrap_or_default(),
        matcher,
        interval_seconds: h.interval_seconds.expect("interval"),
        timeout_seconds: h.timeout_seconds.expect("timeout"),
        healthy_threshold_count: h.healthy_threshold.expect("healthy threshold"),
        unhealthy_threshold_count: h.unhealthy_threshold.expect("unhealthy threshold"),
    }
}

/// `tg`'s health check with another interval.
pub fn with_interval(tg: &aws::TargetGroup, interval_seconds: i32) -> HealthCheck {
    HealthCheck {
        interval_seconds,
        ..described(tg)
    }
}
