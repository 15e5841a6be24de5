//! NLB target-group health checks: upstream's defaults (TCP on the traffic port, or HTTP
//! `/healthz` on the health-check node port for instance targets with
//! `externalTrafficPolicy: Local`) overridden per field by the `healthcheck-*` annotations.

use std::collections::BTreeMap;

use k8s_openapi::apimachinery::pkg::util::intstr::IntOrString;

use super::annotations::{key, sfx};
use super::task::Task;
use crate::model::cluster::lookup_service_port;
use crate::model::error::Fail;
use crate::model::types::{HealthCheck, Protocol, TargetType};

/// Defaults of one mode.
struct Defaults {
    protocol: Protocol,
    port: String,
    path: &'static str,
    interval: i32,
    timeout: i32,
    healthy: i32,
    unhealthy: i32,
}

/// Instance targets of a `LoadBalancer` Service with `externalTrafficPolicy: Local`.
fn is_instance_local(t: &Task<'_>, tt: TargetType) -> bool {
    let spec = t.svc.spec.as_ref();
    tt == TargetType::Instance
        && spec.and_then(|s| s.external_traffic_policy.as_deref()) == Some("Local")
        && spec.and_then(|s| s.type_.as_deref()) == Some("LoadBalancer")
}

fn defaults(t: &Task<'_>, tt: TargetType) -> Defaults {
    if is_instance_local(t, tt) {
        let node_port = t
            .svc
            .spec
            .as_ref()
            .and_then(|s| s.health_check_node_port)
            .unwrap_or(0);
        return Defaults {
            protocol: Protocol::Http,
            port: node_port.to_string(),
            path: "/healthz",
            interval: 10,
            timeout: 6,
            healthy: 2,
            unhealthy: 2,
        };
    }
    Defaults {
        protocol: Protocol::Tcp,
        port: "traffic-port".into(),
        path: "/",
        interval: 10,
        timeout: 10,
        healthy: 3,
        unhealthy: 3,
    }
}

/// `healthcheck-protocol`, case-insensitive TCP / HTTP / HTTPS.
fn protocol(t: &Task<'_>, default: Protocol) -> Result<Protocol, Fail> {
    let Some(raw) = t.a.string(sfx::HC_PROTOCOL) else {
        return Ok(default);
    };
    match raw.to_uppercase().as_str() {
        "TCP" => Ok(Protocol::Tcp),
        "HTTP" => Ok(Protocol::Http),
        "HTTPS" => Ok(Protocol::Https),
        _ => Err(Fail::at(
            key(sfx::HC_PROTOCOL),
            format!("unsupported health check protocol {raw}"),
        )),
    }
}

/// `healthcheck-port`: `traffic-port`, a number, or a Service port name (→ its node port for
/// instance targets, its numeric target port for ip targets).
pub(super) fn port(t: &Task<'_>, default: &str, tt: TargetType) -> Result<IntOrString, Fail> {
    let raw = t.a.string(sfx::HC_PORT).unwrap_or(default);
    if raw == "traffic-port" {
        return Ok(IntOrString::String(raw.into()));
    }
    if let Ok(n) = raw.parse::<i32>() {
        return Ok(IntOrString::Int(n));
    }
    let at = key(sfx::HC_PORT);
    let sp = lookup_service_port(t.svc, &IntOrString::String(raw.into())).map_err(|e| {
        Fail::at(
            &at,
            format!("failed to resolve healthCheckPort: {}", e.message),
        )
    })?;
    match (tt, &sp.target_port) {
        (TargetType::Instance, _) => Ok(IntOrString::Int(sp.node_port.unwrap_or(0))),
        (TargetType::Ip, Some(IntOrString::Int(p))) => Ok(IntOrString::Int(*p)),
        (TargetType::Ip, None) => Ok(IntOrString::Int(sp.port)),
        (TargetType::Ip, Some(IntOrString::String(_))) => Err(Fail::at(
            &at,
            "cannot use named healthCheckPort for IP TargetType when service's targetPort is a named port",
        )),
    }
}

fn int(t: &Task<'_>, suffix: &str, default: i32) -> Result<i32, Fail> {
    Ok(t.a.int32(suffix)?.unwrap_or(default))
}

/// The health check of every target group of the Service, plus its port as IntOrString (the
/// TGB networking rules need it).
pub(super) fn build(t: &Task<'_>, tt: TargetType) -> Result<(HealthCheck, IntOrString), Fail> {
    let d = defaults(t, tt);
    let proto = protocol(t, d.protocol)?;
    let advanced = t.cfg.gate("NLBHealthCheckAdvancedConfig");
    let path = match proto {
        Protocol::Tcp => String::new(),
        _ => t.a.string(sfx::HC_PATH).unwrap_or(d.path).to_string(),
    };
    let matcher = match proto {
        Protocol::Tcp => BTreeMap::new(),
        _ if !advanced => BTreeMap::new(),
        _ => BTreeMap::from([(
            "httpCode".to_string(),
            t.a.string(sfx::HC_SUCCESS_CODES)
                .unwrap_or("200-399")
                .to_string(),
        )]),
    };
    let hc_port = port(t, &d.port, tt)?;
    let interval = int(t, sfx::HC_INTERVAL, d.interval)?;
    let timeout = if advanced {
        int(t, sfx::HC_TIMEOUT, d.timeout)?
    } else {
        d.timeout
    };
    let hc = HealthCheck {
        port: match &hc_port {
            IntOrString::Int(n) => n.to_string(),
            IntOrString::String(s) => s.clone(),
        },
        protocol: proto,
        path,
        matcher,
        interval_seconds: interval,
        timeout_seconds: timeout,
        healthy_threshold_count: int(t, sfx::HC_HEALTHY, d.healthy)?,
        unhealthy_threshold_count: int(t, sfx::HC_UNHEALTHY, d.unhealthy)?,
    };
    Ok((hc, hc_port))
}
