//! Certificates of secure Gateway listeners against upstream's `buildCertificates`: explicit
//! LoadBalancerConfiguration ARNs win; otherwise the hosts ACM discovery covers are the
//! listener's hostname plus each attached route's compatible hostnames (its own when none are),
//! and no host at all is upstream's error.

use super::{cfg, services, yaml};
use crate::fixtures::TestObject;
use crate::model::gateway::*;
use crate::model::types::{MemberCertificates, Protocol};

/// The ALB Gateway `my-gw-ns/my-gw` with HTTPS listeners `wild` (443, `*.example.com`) and
/// `open` (8443, no hostname) and the HTTP listener `http` (80), all for every namespace.
fn gateway() -> Gateway {
    Gateway::test("my-gw-ns", "my-gw")
        .uid("u1")
        .alb()
        .listener_with("wild", "HTTPS", 443, |l| {
            l.hostname("*.example.com").from_all()
        })
        .listener_with("open", "HTTPS", 8443, |l| l.from_all())
        .listener_with("http", "HTTP", 80, |l| l.from_all())
        .build()
}

/// `shop` attaches to every listener with two hostnames (one outside `*.example.com`), `plain`
/// has no hostname and attaches to `wild` only, `refused` fits no listener hostname of `wild`.
fn routes() -> Vec<HttpRoute> {
    let route = |name: &str| HttpRoute::test("my-route-ns", name);
    vec![
        route("shop")
            .parent_with("my-gw", |p| p.namespace("my-gw-ns"))
            .hostname("shop.example.com")
            .hostname("api.example.org")
            .rule(|r| r.backend("my-svc", 80))
            .build(),
        route("plain")
            .parent_with("my-gw", |p| p.namespace("my-gw-ns").section("wild"))
            .rule(|r| r.backend("my-svc", 80))
            .build(),
        route("refused")
            .parent_with("my-gw", |p| p.namespace("my-gw-ns").section("wild"))
            .hostname("elsewhere.net")
            .rule(|r| r.backend("my-svc", 80))
            .build(),
    ]
}

fn alb(
    gw: &Gateway,
    routes: &[HttpRoute],
    lbc: Option<&str>,
) -> Result<GatewayBuild, crate::model::ModelError> {
    let services = services();
    let lbc: Option<LoadBalancerConfiguration> = lbc.map(yaml);
    let inputs = GatewayInputs {
        gateway_config: lbc.as_ref(),
        http_routes: routes,
        services: &services,
        ..GatewayInputs::new(gw)
    };
    build_alb_gateway_stack(&inputs, &cfg(), None)
}

fn discovery(b: &GatewayBuild, port: i32) -> (Vec<String>, Vec<MemberCertificates>) {
    let l = b.stack.listeners.iter().find(|l| l.port == port).unwrap();
    (l.certificates.clone(), l.certificate_discovery.clone())
}

fn hosts(v: &[&str]) -> Option<Vec<String>> {
    Some(v.iter().map(|s| s.to_string()).collect())
}

#[test]
fn discovery_covers_the_listener_hostname_and_the_compatible_route_hostnames() {
    let b = alb(&gateway(), &routes(), None).unwrap();
    // 443: the listener's wildcard, `shop`'s hostname inside it (api.example.org does not fit)
    // and `plain`'s (the listener's, already there); `refused` is not attached.
    let (certs, d) = discovery(&b, 443);
    assert!(certs.is_empty());
    assert_eq!(
        d,
        vec![MemberCertificates {
            ingress: "my-gw-ns/my-gw".into(),
            certificates: vec![],
            discovery_hosts: hosts(&["*.example.com", "shop.example.com"]),
        }]
    );
    // 8443 has no hostname: the attached route's own hostnames, all of them.
    let (_, d) = discovery(&b, 8443);
    assert_eq!(
        d[0].discovery_hosts,
        hosts(&["api.example.org", "shop.example.com"])
    );
    // A plain HTTP listener has no certificate to find.
    assert_eq!(discovery(&b, 80), (vec![], vec![]));
    let l = b.stack.listeners.iter().find(|l| l.port == 443).unwrap();
    assert_eq!(l.ssl_policy, Some(cfg().default_ssl_policy));
    // What `plan` shows for it.
    let shown = serde_json::to_value(l).unwrap();
    assert_eq!(
        shown["certificateDiscovery"][0]["discoveryHosts"],
        serde_json::json!(["*.example.com", "shop.example.com"])
    );
}

#[test]
fn configured_certificates_are_used_and_nothing_is_discovered() {
    let lbc = r#"
apiVersion: gateway.k8s.aws/v1
kind: LoadBalancerConfiguration
metadata: {name: c, namespace: my-gw-ns}
spec:
  listenerConfigurations:
  - {protocolPort: "HTTPS:443", defaultCertificate: "arn:default", certificates: ["arn:sni"]}
  - {protocolPort: "HTTPS:8443", certificates: ["arn:only-sni"]}
"#;
    let b = alb(&gateway(), &routes(), Some(lbc)).unwrap();
    assert_eq!(
        discovery(&b, 443),
        (vec!["arn:default".into(), "arn:sni".into()], vec![])
    );
    // `certificates` alone count as explicit too (upstream: any explicit ARN).
    assert_eq!(discovery(&b, 8443), (vec!["arn:only-sni".into()], vec![]));
}

#[test]
fn a_secure_listener_without_any_hostname_fails_with_upstreams_message() {
    let gw = Gateway::test("my-gw-ns", "my-gw")
        .uid("u1")
        .alb()
        .listener_with("open", "HTTPS", 8443, |l| l.from_all())
        .build();
    let routes = [HttpRoute::test("my-route-ns", "plain")
        .parent_with("my-gw", |p| p.namespace("my-gw-ns"))
        .rule(|r| r.backend("my-svc", 80))
        .build()];
    let err = alb(&gw, &routes, None).unwrap_err().to_string();
    assert!(
        err.ends_with(
            "No hostnames found for TLS cert discovery for listener on gateway my-gw-ns/my-gw with protocol:port HTTPS:8443"
        ),
        "{err}"
    );
}

/// The NLB Gateway `my-route-ns/my-gw` with TLS listeners `term` (8443, `*.example.com`) and
/// `bare` (9443, no hostname) terminating, and `pass` (443) passing through.
fn nlb_gateway() -> Gateway {
    Gateway::test("my-route-ns", "my-gw")
        .uid("u1")
        .nlb()
        .listener_with("term", "TLS", 8443, |l| {
            l.hostname("*.example.com").tls_mode("Terminate")
        })
        .listener_with("bare", "TLS", 9443, |l| l.tls_mode("Terminate"))
        .listener_with("pass", "TLS", 443, |l| l.tls_mode("Passthrough"))
        .build()
}

fn nlb(
    gw: &Gateway,
    tls: &[TlsRoute],
    tcp: &[TcpRoute],
) -> Result<GatewayBuild, crate::model::ModelError> {
    let services = services();
    let inputs = GatewayInputs {
        tls_routes: tls,
        tcp_routes: tcp,
        services: &services,
        ..GatewayInputs::new(gw)
    };
    build_nlb_gateway_stack(&inputs, &cfg(), None)
}

#[test]
fn terminating_tls_listeners_discover_by_listener_and_route_hostnames() {
    let routes = [
        TlsRoute::test("my-route-ns", "secure")
            .parent_with("my-gw", |p| p.section("term"))
            .parent_with("my-gw", |p| p.section("pass"))
            .hostname("a.example.com")
            .rule(|r| r.backend("my-svc", 80))
            .build(),
        TlsRoute::test("my-route-ns", "sni")
            .parent_with("my-gw", |p| p.section("bare"))
            .hostname("b.example.com")
            .hostname("a.example.com")
            .rule(|r| r.backend("my-svc", 80))
            .build(),
    ];
    let b = nlb(&nlb_gateway(), &routes, &[]).unwrap();
    let protocols: Vec<(i32, Protocol)> = b
        .stack
        .listeners
        .iter()
        .map(|l| (l.port, l.protocol))
        .collect();
    assert_eq!(
        protocols,
        vec![
            (443, Protocol::Tcp),
            (8443, Protocol::Tls),
            (9443, Protocol::Tls)
        ]
    );
    // The listener's wildcard and the route's hostname inside it.
    assert_eq!(
        discovery(&b, 8443).1[0].discovery_hosts,
        hosts(&["*.example.com", "a.example.com"])
    );
    // No listener hostname: the route's own.
    assert_eq!(
        discovery(&b, 9443).1[0].discovery_hosts,
        hosts(&["a.example.com", "b.example.com"])
    );
    // Passthrough is TCP: nothing to discover.
    assert_eq!(discovery(&b, 443), (vec![], vec![]));
    let tls = b.stack.listeners.iter().find(|l| l.port == 9443).unwrap();
    assert_eq!(tls.alpn_policy.as_deref(), Some("None"));
}

#[test]
fn a_terminating_tls_listener_without_hostnames_fails_before_its_backends_count() {
    // A TCPRoute (no hostnames) on a TLS listener without one; it has no backend, which would
    // skip the listener, but upstream builds the certificates first.
    let gw = Gateway::test("my-route-ns", "my-gw")
        .uid("u1")
        .nlb()
        .listener_with("bare", "TLS", 9443, |l| {
            l.tls_mode("Terminate").route_kinds(&["TCPRoute"])
        })
        .build();
    let routes = [TcpRoute::test("my-route-ns", "nothing")
        .parent("my-gw")
        .rule(|r| r.set("backendRefs", serde_json::json!([])))
        .build()];
    let err = nlb(&gw, &[], &routes).unwrap_err().to_string();
    assert!(
        err.ends_with(
            "No hostnames found for TLS cert discovery for listener on gateway my-route-ns/my-gw with protocol:port TLS:9443"
        ),
        "{err}"
    );
}
