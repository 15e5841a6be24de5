//! The shape upstream gives the TargetGroupBindings it writes, and comparison by meaning.
//!
//! Upstream's Ingress and Gateway model builders write one `networking.ingress` rule per port,
//! every rule from the same peers ([`rule_per_port`]); its Service builder writes one rule with
//! all the ports ([`one_rule`]); every port carries its `protocol` ([`port`]). Building bindings
//! with these makes them byte-for-byte what upstream would have written.
//! [`same_meaning`] decides whether an existing binding needs a write at all: rules compare as the
//! set of (peer, protocol, port) grants they make, whatever their grouping or order, and fields the
//! webhook fills on create are not a difference when the writer leaves them out, and node selectors
//! compare in their stored form ([`canonical_selector`]).

use std::collections::{BTreeMap, BTreeSet};

use k8s_openapi::apimachinery::pkg::apis::meta::v1::{LabelSelector, LabelSelectorRequirement};
use k8s_openapi::apimachinery::pkg::util::intstr::IntOrString;

use super::target_group_binding::{
    IpBlock, NetworkingIngressRule, NetworkingPeer, NetworkingPort, NetworkingProtocol,
    SecurityGroup, TargetGroupBindingNetworking, TargetGroupBindingSpec,
};

/// A peer that is a security group.
pub fn security_group_peer(group_id: impl Into<String>) -> NetworkingPeer {
    NetworkingPeer {
        ip_block: None,
        security_group: Some(SecurityGroup {
            group_id: group_id.into(),
        }),
    }
}

/// A peer that is a CIDR block (upstream's rules for NLBs without security groups).
pub fn cidr_peer(cidr: impl Into<String>) -> NetworkingPeer {
    NetworkingPeer {
        ip_block: Some(IpBlock { cidr: cidr.into() }),
        security_group: None,
    }
}

/// A port of a rule as upstream writes it: `protocol` always present; `None` = every port.
pub fn port(protocol: NetworkingProtocol, port: Option<IntOrString>) -> NetworkingPort {
    NetworkingPort {
        protocol: Some(protocol),
        port,
    }
}

/// Upstream's Ingress and Gateway shape: one rule per port, in the order given (traffic port,
/// health-check port when it differs, target-control port), each from all of `from`.
pub fn rule_per_port(
    from: &[NetworkingPeer],
    ports: impl IntoIterator<Item = NetworkingPort>,
) -> Vec<NetworkingIngressRule> {
    ports.into_iter().map(|p| one_rule(from, vec![p])).collect()
}

/// Upstream's Service shape (and every shape with restricted SG rules disabled): one rule
/// holding all the ports.
pub fn one_rule(from: &[NetworkingPeer], ports: Vec<NetworkingPort>) -> NetworkingIngressRule {
    NetworkingIngressRule {
        from: from.to_vec(),
        ports,
    }
}

/// `networking` as upstream writes it: absent when there is no rule.
pub fn networking(rules: Vec<NetworkingIngressRule>) -> Option<TargetGroupBindingNetworking> {
    (!rules.is_empty()).then_some(TargetGroupBindingNetworking { ingress: rules })
}

/// One grant: (peer, protocol, port); `None` port = all ports.
type Grant = (String, &'static str, Option<String>);

/// What a networking section allows, independent of grouping, order, duplicates and the
/// defaulted protocol (TCP). A rule without ports grants nothing (as upstream and our reconciler
/// read it), but its peers are still validated, so it is kept as a `none` entry: a binding that
/// gains or loses one is still written.
pub fn grants(n: Option<&TargetGroupBindingNetworking>) -> BTreeSet<Grant> {
    let none = [NetworkingPort::default()];
    let mut out = BTreeSet::new();
    for rule in n.map(|n| n.ingress.as_slice()).unwrap_or_default() {
        let ports: &[NetworkingPort] = if rule.ports.is_empty() {
            &none
        } else {
            &rule.ports
        };
        for peer in &rule.from {
            let who = match (&peer.security_group, &peer.ip_block) {
                (Some(g), None) => format!("sg:{}", g.group_id),
                (None, Some(b)) => format!("cidr:{}", b.cidr),
                (g, b) => format!("invalid:{g:?}/{b:?}"),
            };
            for p in ports {
                let proto = match p.protocol {
                    _ if rule.ports.is_empty() => "none",
                    Some(NetworkingProtocol::Udp) => "udp",
                    _ => "tcp",
                };
                let port = p.port.as_ref().map(|p| match p {
                    IntOrString::Int(n) => n.to_string(),
                    IntOrString::String(s) => format!("name:{s}"),
                });
                out.insert((who.clone(), proto, port));
            }
        }
    }
    out
}

/// A selector of `matchLabels` only, as the Ingress and Service annotations build it.
pub fn labels_selector(labels: BTreeMap<String, String>) -> LabelSelector {
    LabelSelector {
        match_labels: Some(labels),
        match_expressions: None,
    }
}

/// `s` as Kubernetes stores and returns it: empty `matchLabels`, `matchExpressions` and
/// requirement `values` left out (Go's `omitempty`), so what we write reads back equal and
/// renders as upstream's copy of the same selector would.
pub fn canonical_selector(s: &LabelSelector) -> LabelSelector {
    let expressions = s.match_expressions.as_ref().filter(|e| !e.is_empty());
    LabelSelector {
        match_labels: s.match_labels.clone().filter(|m| !m.is_empty()),
        match_expressions: expressions.map(|e| {
            e.iter()
                .map(|r| LabelSelectorRequirement {
                    values: r.values.clone().filter(|v| !v.is_empty()),
                    ..r.clone()
                })
                .collect()
        }),
    }
}

/// What a binding's selector means for comparison: an empty selector is the same as none.
fn selector_meaning(s: &Option<LabelSelector>) -> Option<LabelSelector> {
    s.as_ref()
        .map(canonical_selector)
        .filter(|s| s.match_labels.is_some() || s.match_expressions.is_some())
}

/// Whether `have` already means `want`: same grants, same selector (an empty one equals none),
/// every other field equal, except that a field `want` leaves unset may hold whatever the
/// webhook defaulted it to (target type, protocol, IP address type, VPC, target-group name).
pub fn same_meaning(have: &TargetGroupBindingSpec, want: &TargetGroupBindingSpec) -> bool {
    if grants(have.networking.as_ref()) != grants(want.networking.as_ref()) {
        return false;
    }
    if selector_meaning(&have.node_selector) != selector_meaning(&want.node_selector) {
        return false;
    }
    let mut w = want.clone();
    w.networking.clone_from(&have.networking);
    w.node_selector.clone_from(&have.node_selector);
    if w.target_type.is_none() {
        w.target_type = have.target_type;
    }
    if w.target_group_protocol.is_none() {
        w.target_group_protocol = have.target_group_protocol;
    }
    if w.ip_address_type.is_none() {
        w.ip_address_type = have.ip_address_type;
    }
    if w.vpc_id.is_empty() {
        w.vpc_id.clone_from(&have.vpc_id);
    }
    if w.target_group_name.is_empty() {
        w.target_group_name.clone_from(&have.target_group_name);
    }
    *have == w
}

#[cfg(test)]
#[path = "tgb_shape_tests.rs"]
mod tests;
