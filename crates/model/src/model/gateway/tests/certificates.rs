//! Certificates of secure Gateway listeners against upstream's `buildCertificates`: explicit
//! LoadBalancerConfiguration ARNs win; otherwise the hosts ACM discovery covers are the
//! listener's hostname plus each attached route's compatible hostnames (its own when none are),
//! and no host at all is upstream's error — inputs as manifests.

use super::{cfg, yaml, SERVICES};
use crate::model::gateway::*;
use crate::model::types::{MemberCertificates, Protocol};

const GATEWAY: &str = r#"
apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: {name: my-gw, namespace: my-gw-ns, uid: u1}
spec:
  gatewayClassName: alb
  listeners:
  - {name: wild, port: 443, protocol: HTTPS, hostname: "*.example.com", allowedRoutes: {namespaces: {from: All}}}
  - {name: open, port: 8443, protocol: HTTPS, allowedRoutes: {namespaces: {from: All}}}
  - {name: http, port: 80, protocol: HTTP, allowedRoutes: {namespaces: {from: All}}}
"#;

/// `shop` attaches to every listener with two hostnames (one outside `*.example.com`), `plain`
/// has no hostname and attaches to `wild` only, `refused` fits no listener hostname of `wild`.
const ROUTES: &str = r#"
- apiVersion: gateway.networking.k8s.io/v1
  kind: HTTPRoute
  metadata: {name: shop, namespace: my-route-ns}
  spec:
    parentRefs: [{name: my-gw, namespace: my-gw-ns}]
    hostnames: [shop.example.com, api.example.org]
    rules: [{backendRefs: [{name: my-svc, port: 80}]}]
- apiVersion: gateway.networking.k8s.io/v1
  kind: HTTPRoute
  metadata: {name: plain, namespace: my-route-ns}
  spec:
    parentRefs: [{name: my-gw, namespace: my-gw-ns, sectionName: wild}]
    rules: [{backendRefs: [{name: my-svc, port: 80}]}]
- apiVersion: gateway.networking.k8s.io/v1
  kind: HTTPRoute
  metadata: {name: refused, namespace: my-route-ns}
  spec:
    parentRefs: [{name: my-gw, namespace: my-gw-ns, sectionName: wild}]
    hostnames: [elsewhere.net]
    rules: [{backendRefs: [{name: my-svc, port: 80}]}]
"#;

fn alb(
    gateway: &str,
    routes: &str,
    lbc: Option<&str>,
) -> Result<GatewayBuild, crate::model::ModelError> {
    let gw: Gateway = yaml(gateway);
    let routes: Vec<HttpRoute> = yaml(routes);
    let services: Vec<Service> = yaml(SERVICES);
    let lbc: Option<LoadBalancerConfiguration> = lbc.map(yaml);
    let inputs = GatewayInputs {
        gateway_config: lbc.as_ref(),
        http_routes: &routes,
        services: &services,
        ..GatewayInputs::new(&gw)
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
    let b = alb(GATEWAY, ROUTES, None).unwrap();
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
    let b = alb(GATEWAY, ROUTES, Some(lbc)).unwrap();
    assert_eq!(
        discovery(&b, 443),
        (vec!["arn:default".into(), "arn:sni".into()], vec![])
    );
    // `certificates` alone count as explicit too (upstream: any explicit ARN).
    assert_eq!(discovery(&b, 8443), (vec!["arn:only-sni".into()], vec![]));
}

#[test]
fn a_secure_listener_without_any_hostname_fails_with_upstreams_message() {
    let gw = r#"
apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: {name: my-gw, namespace: my-gw-ns, uid: u1}
spec:
  gatewayClassName: alb
  listeners: [{name: open, port: 8443, protocol: HTTPS, allowedRoutes: {namespaces: {from: All}}}]
"#;
    let routes = r#"
- apiVersion: gateway.networking.k8s.io/v1
  kind: HTTPRoute
  metadata: {name: plain, namespace: my-route-ns}
  spec:
    parentRefs: [{name: my-gw, namespace: my-gw-ns}]
    rules: [{backendRefs: [{name: my-svc, port: 80}]}]
"#;
    let err = alb(gw, routes, None).unwrap_err().to_string();
    assert!(
        err.ends_with(
            "No hostnames found for TLS cert discovery for listener on gateway my-gw-ns/my-gw with protocol:port HTTPS:8443"
        ),
        "{err}"
    );
}

const NLB_GATEWAY: &str = r#"
apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: {name: my-gw, namespace: my-route-ns, uid: u1}
spec:
  gatewayClassName: nlb
  listeners:
  - {name: term, port: 8443, protocol: TLS, hostname: "*.example.com", tls: {mode: Terminate}}
  - {name: bare, port: 9443, protocol: TLS, tls: {mode: Terminate}}
  - {name: pass, port: 443, protocol: TLS, tls: {mode: Passthrough}}
"#;

fn nlb(gateway: &str, tls: &str, tcp: &str) -> Result<GatewayBuild, crate::model::ModelError> {
    let gw: Gateway = yaml(gateway);
    let tls: Vec<TlsRoute> = yaml(tls);
    let tcp: Vec<TcpRoute> = yaml(tcp);
    let services: Vec<Service> = yaml(SERVICES);
    let inputs = GatewayInputs {
        tls_routes: &tls,
        tcp_routes: &tcp,
        services: &services,
        ..GatewayInputs::new(&gw)
    };
    build_nlb_gateway_stack(&inputs, &cfg(), None)
}

#[test]
fn terminating_tls_listeners_discover_by_listener_and_route_hostnames() {
    let routes = r#"
- apiVersion: gateway.networking.k8s.io/v1alpha2
  kind: TLSRoute
  metadata: {name: secure, namespace: my-route-ns}
  spec:
    parentRefs: [{name: my-gw, sectionName: term}, {name: my-gw, sectionName: pass}]
    hostnames: [a.example.com]
    rules: [{backendRefs: [{name: my-svc, port: 80}]}]
- apiVersion: gateway.networking.k8s.io/v1alpha2
  kind: TLSRoute
  metadata: {name: sni, namespace: my-route-ns}
  spec:
    parentRefs: [{name: my-gw, sectionName: bare}]
    hostnames: [b.example.com, a.example.com]
    rules: [{backendRefs: [{name: my-svc, port: 80}]}]
"#;
    let b = nlb(NLB_GATEWAY, routes, "[]").unwrap();
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
    let gw = r#"
apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: {name: my-gw, namespace: my-route-ns, uid: u1}
spec:
  gatewayClassName: nlb
  listeners:
  - {name: bare, port: 9443, protocol: TLS, tls: {mode: Terminate}, allowedRoutes: {kinds: [{kind: TCPRoute}]}}
"#;
    let routes = r#"
- apiVersion: gateway.networking.k8s.io/v1alpha2
  kind: TCPRoute
  metadata: {name: nothing, namespace: my-route-ns}
  spec:
    parentRefs: [{name: my-gw}]
    rules: [{backendRefs: []}]
"#;
    let err = nlb(gw, "[]", routes).unwrap_err().to_string();
    assert!(
        err.ends_with(
            "No hostnames found for TLS cert discovery for listener on gateway my-route-ns/my-gw with protocol:port TLS:9443"
        ),
        "{err}"
    );
}
