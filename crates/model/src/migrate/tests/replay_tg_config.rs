//! Replays `translate/tg_config_test.go`: `TestBuildTargetGroupConfig` (6 cases) and
//! `TestBuildTargetGroupConfigFromEntries` (7): all 13.

use super::annotations_map;
use crate::crd::gateway::target_group_configuration::{
    HealthCheckProtocol, TargetGroupProps, TgProtocol, TgProtocolVersion, TgTargetType,
};
use crate::crd::gateway::TargetGroupConfiguration;
use crate::migrate::names::tg_config_name;
use crate::migrate::service_ref::ServiceRef;
use crate::migrate::tg_config::*;
use crate::migrate::MIGRATION_TAG_KEY;

fn svc(name: &str, port: i32) -> ServiceRef {
    ServiceRef {
        namespace: "default".into(),
        name: name.into(),
        port,
    }
}

fn build(name: &str, port: i32, a: &[(&str, &str)]) -> Option<TargetGroupConfiguration> {
    build_target_group_config(
        &svc(name, port),
        &annotations_map(a),
        "ingress/default/test",
        &mut Vec::new(),
    )
}

#[test]
fn build_target_group_config_upstream_cases() {
    // no TG annotations returns nil
    assert!(build("svc", 80, &[]).is_none());
    // target-type ip
    let t = build(
        "api-svc",
        80,
        &[("alb.ingress.kubernetes.io/target-type", "ip")],
    )
    .unwrap();
    assert!(t
        .metadata
        .name
        .as_deref()
        .unwrap()
        .contains("api-svc-tg-confi-"));
    assert_eq!(t.spec.target_reference.as_ref().unwrap().name, "api-svc");
    assert_eq!(
        t.spec.default_configuration.target_type,
        Some(TgTargetType::Ip)
    );
    // health check annotations
    let t = build(
        "hc-svc",
        80,
        &[
            ("alb.ingress.kubernetes.io/healthcheck-path", "/health"),
            (
                "alb.ingress.kubernetes.io/healthcheck-interval-seconds",
                "30",
            ),
            (
                "alb.ingress.kubernetes.io/healthcheck-timeout-seconds",
                "10",
            ),
            ("alb.ingress.kubernetes.io/healthy-threshold-count", "3"),
            ("alb.ingress.kubernetes.io/unhealthy-threshold-count", "2"),
            ("alb.ingress.kubernetes.io/success-codes", "200"),
            ("alb.ingress.kubernetes.io/healthcheck-protocol", "HTTPS"),
            ("alb.ingress.kubernetes.io/healthcheck-port", "8080"),
        ],
    )
    .unwrap();
    let hc = t.spec.default_configuration.health_check_config.unwrap();
    assert_eq!(hc.health_check_path.as_deref(), Some("/health"));
    assert_eq!(hc.health_check_interval, Some(30));
    assert_eq!(hc.health_check_timeout, Some(10));
    assert_eq!(hc.healthy_threshold_count, Some(3));
    assert_eq!(hc.unhealthy_threshold_count, Some(2));
    assert_eq!(hc.matcher.unwrap().http_code.as_deref(), Some("200"));
    assert_eq!(hc.health_check_protocol, Some(HealthCheckProtocol::Https));
    assert_eq!(hc.health_check_port.as_deref(), Some("8080"));
    // backend protocol and version
    let t = build(
        "proto-svc",
        443,
        &[
            ("alb.ingress.kubernetes.io/backend-protocol", "HTTPS"),
            (
                "alb.ingress.kubernetes.io/backend-protocol-version",
                "HTTP2",
            ),
        ],
    )
    .unwrap();
    assert_eq!(
        t.spec.default_configuration.protocol,
        Some(TgProtocol::Https)
    );
    assert_eq!(
        t.spec.default_configuration.protocol_version,
        Some(TgProtocolVersion::Http2)
    );
    // target group attributes
    let t = build(
        "attr-svc",
        80,
        &[(
            "alb.ingress.kubernetes.io/target-group-attributes",
            "deregistration_delay.timeout_seconds=30,stickiness.enabled=true",
        )],
    )
    .unwrap();
    assert_eq!(
        t.spec.default_configuration.target_group_attributes.len(),
        2
    );
    // migration tag is added
    let t = build(
        "tag-svc",
        80,
        &[("alb.ingress.kubernetes.io/target-type", "ip")],
    )
    .unwrap();
    assert!(t
        .spec
        .default_configuration
        .tags
        .unwrap()
        .contains_key(MIGRATION_TAG_KEY));
}

fn entry(a: &[(&str, &str)], tag: &str, route: &str) -> TgcEntry {
    TgcEntry {
        svc_ref: svc("my-svc", 8080),
        annotations: annotations_map(a),
        migration_tag: tag.into(),
        route_name: route.into(),
        icps: Vec::new(),
    }
}

fn route_tag(p: &TargetGroupProps) -> Option<&str> {
    p.tags
        .as_ref()
        .and_then(|t| t.get(MIGRATION_TAG_KEY))
        .map(String::as_str)
}

#[test]
fn build_target_group_config_from_entries_upstream_cases() {
    let ip = ("alb.ingress.kubernetes.io/target-type", "ip");
    let build = |entries: Vec<TgcEntry>| {
        let t = build_target_group_config_from_entries(&entries, &mut Vec::new());
        if let Some(t) = &t {
            assert_eq!(
                t.metadata.name.as_deref(),
                Some(tg_config_name("default", "my-svc").as_str())
            );
            assert_eq!(t.spec.target_reference.as_ref().unwrap().name, "my-svc");
        }
        t
    };
    // no entries returns nil
    assert!(build(Vec::new()).is_none());
    // single entry with config uses DefaultConfiguration
    let t = build(vec![entry(
        &[ip],
        "ingress/default/ing-a",
        "default-ing-a-route-abc123",
    )])
    .unwrap();
    assert_eq!(
        t.spec.default_configuration.target_type,
        Some(TgTargetType::Ip)
    );
    assert!(t.spec.route_configurations.is_empty());
    // multiple entries with identical config
    let t = build(vec![
        entry(&[ip], "ingress/default/ing-a", "default-ing-a-route-abc123"),
        entry(&[ip], "ingress/default/ing-b", "default-ing-b-route-def456"),
    ])
    .unwrap();
    let rc = &t.spec.route_configurations;
    assert_eq!(rc.len(), 2);
    assert!(rc
        .iter()
        .all(|r| r.target_group_props.target_type == Some(TgTargetType::Ip)));
    // multiple entries with different config
    let t = build(vec![
        entry(
            &[
                ("alb.ingress.kubernetes.io/backend-protocol", "HTTP"),
                ("alb.ingress.kubernetes.io/healthcheck-path", "/healthz"),
            ],
            "ingress/default/ing-a",
            "default-ing-a-route-abc123",
        ),
        entry(
            &[
                ("alb.ingress.kubernetes.io/backend-protocol", "HTTPS"),
                ("alb.ingress.kubernetes.io/healthcheck-path", "/ready"),
            ],
            "ingress/default/ing-b",
            "default-ing-b-route-def456",
        ),
    ])
    .unwrap();
    assert!(t.spec.default_configuration.protocol.is_none());
    let rc = &t.spec.route_configurations;
    assert_eq!(rc.len(), 2);
    assert_eq!(rc[0].route_identifier.kind, "HTTPRoute");
    assert_eq!(rc[0].route_identifier.namespace, "default");
    assert_eq!(rc[0].route_identifier.name, "default-ing-a-route-abc123");
    assert_eq!(rc[0].target_group_props.protocol, Some(TgProtocol::Http));
    assert_eq!(
        rc[0]
            .target_group_props
            .health_check_config
            .as_ref()
            .unwrap()
            .health_check_path
            .as_deref(),
        Some("/healthz")
    );
    assert_eq!(rc[1].route_identifier.name, "default-ing-b-route-def456");
    assert_eq!(rc[1].target_group_props.protocol, Some(TgProtocol::Https));
    assert_eq!(
        rc[1]
            .target_group_props
            .health_check_config
            .as_ref()
            .unwrap()
            .health_check_path
            .as_deref(),
        Some("/ready")
    );
    // entries with one empty config emit RouteConfigurations for all entries
    let t = build(vec![
        entry(&[ip], "ingress/default/ing-a", "default-ing-a-route-abc123"),
        entry(&[], "ingress/default/ing-b", "default-ing-b-route-def456"),
    ])
    .unwrap();
    let rc = &t.spec.route_configurations;
    assert_eq!(rc.len(), 2);
    assert_eq!(rc[0].route_identifier.name, "default-ing-a-route-abc123");
    assert_eq!(rc[0].target_group_props.target_type, Some(TgTargetType::Ip));
    assert_eq!(rc[1].route_identifier.name, "default-ing-b-route-def456");
    // all entries empty still creates TGC with migration tags
    let t = build(vec![
        entry(&[], "ingress/default/ing-a", "r1"),
        entry(&[], "ingress/default/ing-b", "r2"),
    ])
    .unwrap();
    let rc = &t.spec.route_configurations;
    assert_eq!(rc.len(), 2);
    assert_eq!(
        route_tag(&rc[0].target_group_props),
        Some("ingress/default/ing-a")
    );
    assert_eq!(
        route_tag(&rc[1].target_group_props),
        Some("ingress/default/ing-b")
    );
    // migration tags are set on each RouteConfiguration
    let t = build(vec![
        entry(&[ip], "ingress/default/ing-a", "route-a"),
        entry(
            &[("alb.ingress.kubernetes.io/target-type", "instance")],
            "ingress/default/ing-b",
            "route-b",
        ),
    ])
    .unwrap();
    let rc = &t.spec.route_configurations;
    assert_eq!(
        route_tag(&rc[0].target_group_props),
        Some("ingress/default/ing-a")
    );
    assert_eq!(
        route_tag(&rc[1].target_group_props),
        Some("ingress/default/ing-b")
    );
}
