//! Building blocks of the takeover shapes, each encoding one of upstream v3.5's model rules
//! (`pkg/ingress/model_build_*.go`) as its test tables (`model_builder_test.go`: vanilla internal/internet-facing, acm, IPv6 service, SG
//! annotation, IngressClassParams, target type ip with named port, base stack with svc-3's
//! health-check port 9090): listener 404 defaults, rule priorities and conditions, health checks,
//! TG ports (node port / target port / 1 for a named target port), SG permissions per port and
//! CIDR, TGB networking one rule per port.

use aws_load_balancer_controller::aws::*;
use aws_load_balancer_controller::model::action::ValuesConfig;
use aws_load_balancer_controller::model::RuleCondition;
use aws_load_balancer_controller::model::{HealthCheck, Protocol};
use serde_json::{json, Value};

use super::seed::{Act, Ls, Rl, Sgs, Shape, Tg};

pub fn hc() -> HealthCheck {
    HealthCheck {
        protocol: Protocol::Http,
        port: "traffic-port".into(),
        path: "/".into(),
        interval_seconds: 15,
        timeout_seconds: 5,
        healthy_threshold_count: 2,
        unhealthy_threshold_count: 2,
        matcher: [("httpCode".to_string(), "200".to_string())].into(),
    }
}

/// An HTTP target group with upstream's defaults; its binding opens the traffic port only.
pub fn tg(
    id: &'static str,
    ingress: &'static str,
    service: &'static str,
    port: &'static str,
    tg_port: i32,
    target_type: &'static str,
) -> Tg {
    Tg {
        id,
        ingress,
        service,
        port,
        tg_port,
        target_type,
        protocol: "HTTP",
        version: "HTTP1",
        ip_type: "ipv4",
        hc: hc(),
        tgb_ports: vec![json!(tg_port)],
        node_selector: None,
    }
}

/// Managed SG permissions: each listen port from each CIDR.
pub fn open(ports: &[i32], v4: &[&str], v6: &[&str]) -> Sgs {
    let mut out = Vec::new();
    for p in ports {
        let perm = |v4: Vec<IpRange>, v6: Vec<IpRange>| IpPermission {
            ip_protocol: "tcp".into(),
            from_port: Some(*p),
            to_port: Some(*p),
            ipv4_ranges: v4,
            ipv6_ranges: v6,
            ..Default::default()
        };
        for c in v4 {
            out.push(perm(vec![IpRange::new(*c)], vec![]));
        }
        for c in v6 {
            out.push(perm(vec![], vec![IpRange::new(*c)]));
        }
    }
    Sgs::Managed(out)
}

pub fn http80() -> Vec<Ls> {
    vec![listener(80, "HTTP", vec![])]
}

pub fn listener(port: u16, protocol: &'static str, certs: Vec<&'static str>) -> Ls {
    Ls {
        port,
        protocol,
        ssl_policy: (protocol == "HTTPS").then_some("ELBSecurityPolicy-2016-08"),
        certs,
        default: not_found(),
    }
}

pub fn not_found() -> Act {
    Act::Fixed("404", Some("text/plain"), None)
}

pub fn path(v: &[&str]) -> RuleCondition {
    RuleCondition::PathPattern {
        config: ValuesConfig {
            values: v.iter().map(|s| s.to_string()).collect(),
            regex_values: vec![],
        },
    }
}

pub fn host(v: &[&str]) -> RuleCondition {
    RuleCondition::HostHeader {
        config: ValuesConfig {
            values: v.iter().map(|s| s.to_string()).collect(),
            regex_values: vec![],
        },
    }
}

pub fn fwd(id: &'static str) -> Vec<Act> {
    vec![Act::Forward(vec![(id, None)])]
}

pub fn rule(listener: u16, priority: u32, conditions: Vec<RuleCondition>, actions: Vec<Act>) -> Rl {
    Rl {
        listener,
        priority,
        conditions,
        actions,
    }
}

/// A NodePort Service with one port named `http` (80 → 8080, node port `np`).
pub fn node_svc(ns: &str, name: &str, np: i32, ann: &str) -> String {
    format!(
        "apiVersion: v1\nkind: Service\nmetadata:\n  name: {name}\n  namespace: {ns}\n  annotations: {{{ann}}}\nspec: {{type: NodePort, ports: [{{name: http, port: 80, targetPort: 8080, nodePort: {np}}}]}}\n---\n"
    )
}

/// An Ingress of class `alb` with `annotations` (YAML flow entries) and `paths` under `host`.
pub fn ing(
    ns: &str,
    name: &str,
    ann: &str,
    host: Option<&str>,
    paths: &[(&str, &str, &str, Value)],
) -> String {
    let paths: Vec<Value> = paths
        .iter()
        .map(|(p, t, svc, port)| {
            json!({"path": p, "pathType": t, "backend": {"service": {"name": svc, "port": port}}})
        })
        .collect();
    let mut r = json!({"http": {"paths": paths}});
    if let Some(h) = host {
        r["host"] = json!(h);
    }
    let sep = if ann.is_empty() { "" } else { ", " };
    format!(
        "apiVersion: networking.k8s.io/v1\nkind: Ingress\nmetadata:\n  name: {name}\n  namespace: {ns}\n  annotations: {{kubernetes.io/ingress.class: alb{sep}{ann}}}\nspec: {{rules: [{r}]}}\n---\n"
    )
}

pub fn base(title: &'static str, ns: &'static str, name: &'static str, yaml: String) -> Shape {
    Shape {
        title,
        namespace: ns,
        yaml,
        explicit: None,
        members: vec![name],
        scheme: "internal",
        ip_type: "ipv4",
        sgs: open(&[80], &["0.0.0.0/0"], &[]),
        tags: vec![],
        tgs: vec![],
        listeners: http80(),
        rules: vec![],
    }
}
