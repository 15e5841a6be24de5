//! Replays `pkg/ingress2gateway/utils/helpers_test.go`: all 5 tests (deterministic, distinct
//! names), plus the exact names upstream's golden file shows.

use crate::migrate::names::*;

#[test]
fn resource_name_deterministic() {
    assert_eq!(
        http_route_name("default", "my-app"),
        http_route_name("default", "my-app")
    );
}

#[test]
fn resource_name_uniqueness() {
    let names = [
        gateway_name("ns", "app"),
        http_route_name("ns", "app"),
        lb_config_name("ns", "app"),
        default_http_route_name("ns", "app"),
        tg_config_name("ns", "app"),
    ];
    let distinct: std::collections::BTreeSet<&String> = names.iter().collect();
    assert_eq!(distinct.len(), names.len(), "{names:?}");
}

#[test]
fn resource_name_different_namespaces() {
    assert_ne!(http_route_name("ns1", "app"), http_route_name("ns2", "app"));
}

#[test]
fn resource_name_no_collision_across_types() {
    assert_ne!(
        http_route_name("ns", "foo-default"),
        default_http_route_name("ns", "foo")
    );
}

#[test]
fn get_redirect_http_route_name_unique() {
    let redirect = redirect_http_route_name("ns", "app");
    assert_ne!(redirect, http_route_name("ns", "app"));
    assert_ne!(redirect, default_http_route_name("ns", "app"));
}

/// The names of upstream's vanilla golden file: cut to 8 bytes, trailing hyphen trimmed.
#[test]
fn names_are_upstreams() {
    assert_eq!(
        gateway_name("vanilla-ns", "vanilla-ingress"),
        "vanilla-gateway-86d474571f"
    );
    assert_eq!(
        lb_config_name("vanilla-ns", "vanilla-ingress"),
        "vanilla-lb-confi-17d9f29244"
    );
    assert_eq!(
        http_route_name("vanilla-ns", "vanilla-ingress"),
        "vanilla-route-a166c439e9"
    );
    assert_eq!(
        tg_config_name("vanilla-ns", "svc-api"),
        "svc-api-tg-confi-076740c021"
    );
    assert_eq!(section_name("HTTPS", 443), "https-443");
}
