//! The names `migrate` gives the objects it writes, hash for hash upstream's
//! (`pkg/ingress2gateway/utils/helpers.go`): `{name8}-{suffix8}-{sha256(ns/name/suffix)[:10]}`,
//! so running either tool on the same Ingresses writes the same object names.

use sha2::{Digest, Sha256};

/// The first `max` bytes of `s` (names are ASCII; a cut inside a character backs off to its
/// start rather than split it).
fn truncate(s: &str, max: usize) -> &str {
    if s.len() <= max {
        return s;
    }
    let mut end = max;
    while !s.is_char_boundary(end) {
        end -= 1;
    }
    &s[..end]
}

/// `{name}-{suffix}-{hash10}`: name and suffix cut to 8 bytes without trailing hyphens, the hash
/// over `namespace/name/suffix` so that different kinds of one Ingress never collide.
pub fn resource_name(namespace: &str, name: &str, suffix: &str) -> String {
    let mut h = Sha256::new();
    h.update(namespace.as_bytes());
    h.update(b"/");
    h.update(name.as_bytes());
    h.update(b"/");
    h.update(suffix.as_bytes());
    let hash = hex::encode(h.finalize());
    let name8 = truncate(name, 8).trim_end_matches('-');
    let suffix8 = truncate(suffix, 8).trim_end_matches('-');
    format!("{name8}-{suffix8}-{}", &hash[..10])
}

/// A Gateway listener's (and a parentRef's `sectionName`): `http-80`, `https-443`.
pub fn section_name(protocol: &str, port: i32) -> String {
    format!("{}-{port}", protocol.to_lowercase())
}

/// The Gateway of an Ingress of its own (implicit group).
pub fn gateway_name(namespace: &str, ingress: &str) -> String {
    resource_name(namespace, ingress, "gateway")
}

/// The LoadBalancerConfiguration of an Ingress of its own.
pub fn lb_config_name(namespace: &str, ingress: &str) -> String {
    resource_name(namespace, ingress, "lb-config")
}

/// The HTTPRoute of an Ingress's rules.
pub fn http_route_name(namespace: &str, ingress: &str) -> String {
    resource_name(namespace, ingress, "route")
}

/// The catch-all HTTPRoute of an Ingress's `defaultBackend` when its rules name hosts.
pub fn default_http_route_name(namespace: &str, ingress: &str) -> String {
    resource_name(namespace, ingress, "default-route")
}

/// The TargetGroupConfiguration of a Service.
pub fn tg_config_name(namespace: &str, service: &str) -> String {
    resource_name(namespace, service, "tg-config")
}

/// The ListenerRuleConfiguration of one Ingress's rules for one backend (`actions.*` name or
/// Service): per Ingress, so two Ingresses naming one Service with different settings do not
/// share it.
pub fn lr_config_name(namespace: &str, ingress: &str, action: &str) -> String {
    resource_name(namespace, &format!("{ingress}-{action}"), "lr-config")
}

/// The HTTPRoute that redirects HTTP to HTTPS (`ssl-redirect`).
pub fn redirect_http_route_name(namespace: &str, ingress: &str) -> String {
    resource_name(namespace, ingress, "redirect")
}

/// The Gateway of an explicit IngressGroup: no namespace in the hash (the group is
/// cluster-wide), another suffix so it never collides with an Ingress's own.
pub fn group_gateway_name(group: &str) -> String {
    resource_name("", group, "grp-gw")
}

/// The LoadBalancerConfiguration of an explicit IngressGroup.
pub fn group_lb_config_name(group: &str) -> String {
    resource_name("", group, "grp-lb")
}
