//! Listeners and `alb`-type target groups of the frontend NLB: each member's ALB ports map 1:1
//! to NLB ports, or through `frontend-nlb-listener-port-mapping` (`<nlbPort>=<albPort>`, only
//! ALB ports the member listens on); the health-check annotations are read per member and
//! merged per NLB port, explicit values having to agree, as upstream merges them.

use std::collections::{BTreeMap, BTreeSet};

use super::inputs::{resource_tags, FrontendInputs, Tags};
use crate::annotations::{self as ann, suffix, AnnotationMap};
use crate::model::agree::group;
use crate::model::error::ModelError;
use crate::model::group::ClassifiedIngress;
use crate::model::naming;
use crate::model::types::*;

/// One member's health check for the NLB's target groups, with the fields it set explicitly.
#[derive(Clone, Debug, PartialEq)]
struct Hc {
    port: String,
    protocol: Protocol,
    path: String,
    matcher: String,
    interval: i32,
    timeout: i32,
    healthy: i32,
    unhealthy: i32,
    explicit: BTreeSet<&'static str>,
}

/// One member's wish for an NLB port.
#[derive(Clone, Debug)]
struct PortWish {
    target_port: i32,
    hc: Hc,
}

pub(super) fn build(
    members: &[ClassifiedIngress<'_>],
    i: &FrontendInputs<'_>,
    frontend_tags: Option<&Tags>,
) -> Result<(Vec<Listener>, Vec<AlbTargetGroup>), ModelError> {
    let mut by_port: BTreeMap<i32, Vec<PortWish>> = BTreeMap::new();
    for (m, alb_ports) in members.iter().zip(i.ports_per_member) {
        let wrap = |e: String| {
            group(format!(
                "failed to compute listenPort config for ingress: {}: {e}",
                m.key()
            ))
        };
        let pairs = port_pairs(m.annotations(), alb_ports).map_err(wrap)?;
        if pairs.is_empty() {
            continue;
        }
        let hc = health_check(m.annotations()).map_err(wrap)?;
        for (nlb_port, target_port) in pairs {
            by_port.entry(nlb_port).or_default().push(PortWish {
                target_port,
                hc: hc.clone(),
            });
        }
    }
    let (mut listeners, mut tgs) = (Vec::new(), Vec::new());
    for (port, wishes) in by_port {
        let merged = merge(&wishes).map_err(|e| {
            group(format!(
                "failed to merge NLB listenPort config for port: {port}: {e}"
            ))
        })?;
        let tg = target_group(i, frontend_tags, port, merged);
        listeners.push(listener(i, frontend_tags, port, &tg.id));
        tgs.push(tg);
    }
    Ok((listeners, tgs))
}

/// (NLB port, ALB port) pairs of one member.
fn port_pairs(a: &AnnotationMap, alb_ports: &[i32]) -> Result<Vec<(i32, i32)>, String> {
    let mapping = ann::string_map(a, suffix::FRONTEND_NLB_LISTENER_PORT_MAPPING).map_err(|e| {
        format!(
            "failed to parse frontend-nlb-listener-port-mapping for ingress map[]: {}",
            e.message
        )
    })?;
    let Some(mapping) = mapping.filter(|m| !m.is_empty()) else {
        return Ok(alb_ports.iter().map(|p| (*p, *p)).collect());
    };
    let mut pairs = BTreeMap::new();
    for (nlb, alb) in &mapping {
        let nlb_port = ann::go_parse_int(nlb, 32)
            .map_err(|_| format!("invalid NLB listener port: {nlb}"))?
            as i32;
        let alb_port = ann::go_parse_int(alb, 32)
            .map_err(|_| format!("invalid ALB listener port: {alb}"))?
            as i32;
        // Upstream skips (and logs) a mapping to an ALB port this member does not listen on.
        if alb_ports.contains(&alb_port) {
            pairs.insert(nlb_port, alb_port);
        }
    }
    Ok(pairs.into_iter().collect())
}

/// The member's `frontend-nlb-healthcheck-*` settings over upstream's defaults (HTTP `/`,
/// `200`, every 15 s, 5 s timeout, 2 healthy, 2 unhealthy, on the traffic port).
fn health_check(a: &AnnotationMap) -> Result<Hc, String> {
    let mut explicit = BTreeSet::new();
    let mut mark = |field: &'static str, set: bool| {
        if set {
            explicit.insert(field);
        }
    };
    let raw_port = ann::string(a, suffix::FRONTEND_NLB_HEALTHCHECK_PORT);
    mark("Port", raw_port.is_some());
    let port = match raw_port {
        None | Some("traffic-port") => "traffic-port".to_string(),
        // Go's intstr.Parse: a number (Atoi syntax) or else a name, which is refused here.
        Some(p) => ann::go_parse_int(p, 64)
            .ok()
            .and_then(|n| i32::try_from(n).ok())
            .map(|n| n.to_string())
            .ok_or("failed to resolve healthCheckPort")?,
    };
    let raw_protocol = ann::string(a, suffix::FRONTEND_NLB_HEALTHCHECK_PROTOCOL);
    mark("Protocol", raw_protocol.is_some());
    let protocol = match raw_protocol.unwrap_or("HTTP") {
        "HTTP" => Protocol::Http,
        "HTTPS" => Protocol::Https,
        _ => return Err("healthCheckProtocol must be within [HTTP, HTTPS]".into()),
    };
    let mut text = |sfx: &str, field: &'static str, default: &str| {
        let v = ann::string(a, sfx);
        mark(field, v.is_some());
        v.unwrap_or(default).to_string()
    };
    let path = text(suffix::FRONTEND_NLB_HEALTHCHECK_PATH, "Path", "/");
    let matcher = text(suffix::FRONTEND_NLB_SUCCESS_CODES, "Matcher", "200");
    let mut int = |sfx: &str, field: &'static str, default: i32| -> Result<i32, String> {
        let v = ann::int32(a, sfx).map_err(|e| e.message)?;
        mark(field, v.is_some());
        Ok(v.unwrap_or(default))
    };
    let interval = int(
        suffix::FRONTEND_NLB_HEALTHCHECK_INTERVAL_SECONDS,
        "IntervalSeconds",
        15,
    )?;
    let timeout = int(
        suffix::FRONTEND_NLB_HEALTHCHECK_TIMEOUT_SECONDS,
        "TimeoutSeconds",
        5,
    )?;
    let healthy = int(
        suffix::FRONTEND_NLB_HEALTHY_THRESHOLD_COUNT,
        "HealthyThresholdCount",
        2,
    )?;
    let unhealthy = int(
        suffix::FRONTEND_NLB_UNHEALTHY_THRESHOLD_COUNT,
        "UnhealthyThresholdCount",
        2,
    )?;
    Ok(Hc {
        port,
        protocol,
        path,
        matcher,
        interval,
        timeout,
        healthy,
        unhealthy,
        explicit,
    })
}

/// Upstream's per-port merge: a field set explicitly by one member fixes it, another explicit
/// value must agree (`conflicting <Field>, config <n>: <value>, previous: <value>`); all
/// members must map the NLB port to the same ALB port.
fn merge(wishes: &[PortWish]) -> Result<(i32, Hc), String> {
    let mut out = wishes[0].hc.clone();
    let mut fixed: BTreeSet<&'static str> = BTreeSet::new();
    let target_port = wishes[0].target_port;
    for (n, w) in wishes.iter().enumerate().map(|(n, w)| (n + 1, w)) {
        let h = &w.hc;
        let fields: [(&'static str, String, String); 8] = [
            (
                "IntervalSeconds",
                h.interval.to_string(),
                out.interval.to_string(),
            ),
            (
                "TimeoutSeconds",
                h.timeout.to_string(),
                out.timeout.to_string(),
            ),
            (
                "HealthyThresholdCount",
                h.healthy.to_string(),
                out.healthy.to_string(),
            ),
            (
                "UnhealthyThresholdCount",
                h.unhealthy.to_string(),
                out.unhealthy.to_string(),
            ),
            (
                "Protocol",
                h.protocol.as_str().into(),
                out.protocol.as_str().into(),
            ),
            ("Path", h.path.clone(), out.path.clone()),
            ("Matcher", h.matcher.clone(), out.matcher.clone()),
            ("Port", h.port.clone(), out.port.clone()),
        ];
        for (field, cur, prev) in fields {
            let explicit = h.explicit.contains(field);
            if explicit && fixed.contains(field) {
                if cur != prev {
                    return Err(format!(
                        "conflicting {field}, config {n}: {cur}, previous: {prev}"
                    ));
                }
            } else if explicit || !fixed.contains(field) {
                if explicit {
                    fixed.insert(field);
                }
                out.take(field, h);
            }
        }
        if w.target_port != target_port {
            return Err(format!(
                "conflicting Target Port, config {n}: {}, previous: {target_port}",
                w.target_port
            ));
        }
    }
    Ok((target_port, out))
}

impl Hc {
    /// Copies one field from `from`.
    fn take(&mut self, field: &str, from: &Hc) {
        match field {
            "IntervalSeconds" => self.interval = from.interval,
            "TimeoutSeconds" => self.timeout = from.timeout,
            "HealthyThresholdCount" => self.healthy = from.healthy,
            "UnhealthyThresholdCount" => self.unhealthy = from.unhealthy,
            "Protocol" => self.protocol = from.protocol,
            "Path" => self.path = from.path.clone(),
            "Matcher" => self.matcher = from.matcher.clone(),
            _ => self.port = from.port.clone(),
        }
    }
}

fn target_group(
    i: &FrontendInputs<'_>,
    frontend_tags: Option<&Tags>,
    port: i32,
    (target_port, hc): (i32, Hc),
) -> AlbTargetGroup {
    let id = FrontendNlb::target_group_id(port);
    let name = naming::frontend_nlb_target_group_name(
        &i.cfg.cluster_name,
        i.tags.group,
        port,
        &hc.port,
        hc.protocol,
    );
    AlbTargetGroup {
        tags: resource_tags(i, frontend_tags, &id),
        id,
        name,
        port,
        protocol: Protocol::Tcp,
        ip_address_type: "ipv4".into(),
        health_check: HealthCheck {
            port: hc.port,
            protocol: hc.protocol,
            path: hc.path,
            matcher: BTreeMap::from([("httpCode".to_string(), hc.matcher)]),
            interval_seconds: hc.interval,
            timeout_seconds: hc.timeout,
            healthy_threshold_count: hc.healthy,
            unhealthy_threshold_count: hc.unhealthy,
        },
        target_port,
        target_arn: None,
        attributes: BTreeMap::new(),
    }
}

fn listener(
    i: &FrontendInputs<'_>,
    frontend_tags: Option<&Tags>,
    port: i32,
    tg_id: &str,
) -> Listener {
    let id = FrontendNlb::listener_id(port);
    // Listener tags follow the ListenerRulesTagging gate like the ALB's listeners.
    let tags = if i.cfg.gate("ListenerRulesTagging") {
        resource_tags(i, frontend_tags, &id)
    } else {
        Tags::new()
    };
    Listener {
        id,
        load_balancer_arn: Token::FrontendNlbArn,
        port,
        protocol: Protocol::Tcp,
        default_actions: vec![Action::Forward {
            config: ForwardConfig {
                target_groups: vec![TargetGroupTuple {
                    target_group_arn: Token::TargetGroupArn(tg_id.to_string()),
                    weight: None,
                }],
                target_group_stickiness_config: None,
            },
        }],
        certificates: Vec::new(),
        certificate_discovery: Vec::new(),
        ssl_policy: None,
        mutual_authentication: None,
        alpn_policy: None,
        attributes: BTreeMap::new(),
        tags,
    }
}
