//! Replays `translate/gateway_test.go`: `TestBuildGatewayClass` (1), `TestBuildGateway` (4
//! cases), `TestListenerName` (1), `TestToALBProtocol` (1): all 7.

use super::lp;
use crate::crd::gateway::{LoadBalancerConfiguration, LoadBalancerConfigurationSpec};
use crate::migrate::gateway::{build_gateway, build_gateway_class, to_alb_protocol};
use crate::migrate::names::section_name;
use crate::migrate::objects::ALB_GATEWAY_CONTROLLER;
use crate::migrate::GATEWAY_CLASS_NAME;

#[test]
fn build_gateway_class_is_aws_alb() {
    let gc = build_gateway_class();
    assert_eq!(gc.metadata.name, GATEWAY_CLASS_NAME);
    assert_eq!(gc.spec.controller_name, ALB_GATEWAY_CONTROLLER);
    assert_eq!(gc.kind, "GatewayClass");
}

#[test]
fn build_gateway_upstream_cases() {
    let mut cfg =
        LoadBalancerConfiguration::new("my-lb-config", LoadBalancerConfigurationSpec::default());
    cfg.metadata.namespace = Some("default".into());
    // (name, gw, ns, lb config, ports, cross-namespace group, listeners, paramsRef, allowedRoutes)
    let cases = vec![
        (
            "with LB config",
            "my-gw",
            "default",
            Some(&cfg),
            vec![lp("HTTP", 80)],
            "",
            1,
            true,
            false,
        ),
        (
            "without LB config",
            "bare-gw",
            "default",
            None,
            vec![lp("HTTP", 80), lp("HTTPS", 443)],
            "",
            2,
            false,
            false,
        ),
        (
            "cross-namespace group sets allowedRoutes to All",
            "gw",
            "infra-ns",
            None,
            vec![lp("HTTP", 80), lp("HTTPS", 443)],
            "shared-alb",
            2,
            false,
            true,
        ),
        (
            "same-namespace group has no allowedRoutes",
            "gw",
            "ns",
            None,
            vec![lp("HTTP", 80)],
            "",
            1,
            false,
            false,
        ),
    ];
    for (name, gw_name, ns, lbc, ports, cross, listeners, params, allowed) in cases {
        let gw = build_gateway(gw_name, ns, lbc, &ports, cross);
        assert_eq!(gw.metadata.name, gw_name, "{name}");
        assert_eq!(gw.spec.listeners.len(), listeners, "{name}");
        match (&gw.spec.infrastructure, params) {
            (Some(i), true) => assert_eq!(
                i.parameters_ref.as_ref().map(|p| p.name.as_str()),
                Some("my-lb-config"),
                "{name}"
            ),
            (None, false) => {}
            (got, _) => panic!("{name}: infrastructure {got:?}"),
        }
        for l in &gw.spec.listeners {
            let from = l
                .allowed_routes
                .as_ref()
                .and_then(|a| a.namespaces.as_ref())
                .and_then(|n| n.from.as_deref());
            if allowed {
                assert_eq!(from, Some("All"), "{name}: listener {}", l.name);
            } else {
                assert!(l.allowed_routes.is_none(), "{name}: listener {}", l.name);
            }
        }
    }
}

#[test]
fn listener_name() {
    assert_eq!(section_name("HTTP", 80), "http-80");
    assert_eq!(section_name("HTTPS", 443), "https-443");
}

#[test]
fn to_alb_protocol_maps_unknown_to_http() {
    assert_eq!(to_alb_protocol("HTTP"), "HTTP");
    assert_eq!(to_alb_protocol("HTTPS"), "HTTPS");
    assert_eq!(to_alb_protocol("UNKNOWN"), "HTTP");
}
