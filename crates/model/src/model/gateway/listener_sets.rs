//! ListenerSets (GEP-1713, upstream's `routeutils/listener_set.go`): the sets whose `parentRef`
//! names the Gateway pass the Gateway's `spec.allowedListeners` handshake (default: none
//! allowed; `Same`, `All` or `Selector` by namespace labels) or are rejected; the accepted ones
//! lend their listeners to the Gateway, validated after the Gateway's own in upstream's
//! precedence: oldest set first, ties by `namespace/name`.

use std::collections::BTreeMap;

use gateway_api::apis::standard::gateways::{
    Gateway, GatewayAllowedListenersNamespacesFrom as From, GatewayListeners,
};
use gateway_api::apis::standard::listenersets::{ListenerSet, ListenerSetListeners};

use super::selectors::as_label_selector;
use crate::model::ingress_class::selector_matches;

const GATEWAY_GROUP: &str = "gateway.networking.k8s.io";

/// Kind a route's parentRef names to attach to a ListenerSet's listeners.
pub const LISTENER_SET_KIND: &str = "ListenerSet";

/// A ListenerSet the Gateway accepted, its listeners as Gateway listeners.
#[derive(Debug, Clone, PartialEq)]
pub struct AcceptedSet {
    pub namespace: String,
    pub name: String,
    pub generation: i64,
    pub listeners: Vec<GatewayListeners>,
}

/// A ListenerSet naming the Gateway that the Gateway does not allow.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RejectedSet {
    pub namespace: String,
    pub name: String,
    pub generation: i64,
}

/// The outcome of the handshake of every ListenerSet with one Gateway.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Handshake {
    /// In validation precedence order.
    pub accepted: Vec<AcceptedSet>,
    pub rejected: Vec<RejectedSet>,
}

fn ns_of(set: &ListenerSet) -> &str {
    set.metadata.namespace.as_deref().unwrap_or("default")
}

/// `ns/name` of the Gateway the set's `parentRef` names (namespace default: the set's).
pub fn parent_key(set: &ListenerSet) -> String {
    let p = &set.spec.parent_ref;
    format!(
        "{}/{}",
        p.namespace.as_deref().unwrap_or(ns_of(set)),
        p.name
    )
}

/// Whether the set's `parentRef` names `gw` (kind Gateway, the Gateway group, the name, and
/// the namespace — default the set's).
fn names_gateway(set: &ListenerSet, gw: &Gateway) -> bool {
    let p = &set.spec.parent_ref;
    let gw_ns = gw.metadata.namespace.as_deref().unwrap_or("default");
    p.kind.as_deref().is_none_or(|k| k == "Gateway")
        && p.group.as_deref().is_none_or(|g| g == GATEWAY_GROUP)
        && gw.metadata.name.as_deref() == Some(p.name.as_str())
        && p.namespace.as_deref().unwrap_or(ns_of(set)) == gw_ns
}

/// The Gateway's side of the handshake for a set in `namespace`.
fn allows(
    gw: &Gateway,
    namespace: &str,
    labels: &dyn Fn(&str) -> BTreeMap<String, String>,
) -> bool {
    let namespaces = gw
        .spec
        .allowed_listeners
        .as_ref()
        .and_then(|a| a.namespaces.as_ref());
    match namespaces.and_then(|n| n.from.as_ref()) {
        None | Some(From::None) => false,
        Some(From::Same) => gw.metadata.namespace.as_deref().unwrap_or("default") == namespace,
        Some(From::All) => true,
        Some(From::Selector) => namespaces
            .and_then(|n| n.selector.as_ref())
            .and_then(as_label_selector)
            .is_some_and(|s| selector_matches(&s, &labels(namespace))),
    }
}

/// A ListenerSet listener as a Gateway listener (the two schemas are field for field the same).
pub fn as_gateway_listener(l: &ListenerSetListeners) -> Option<GatewayListeners> {
    serde_json::to_value(l)
        .and_then(serde_json::from_value)
        .ok()
}

/// The handshake of every set in `sets` with `gw`; sets naming another Gateway are left out.
pub fn handshake(
    gw: &Gateway,
    sets: &[ListenerSet],
    labels: &dyn Fn(&str) -> BTreeMap<String, String>,
) -> Handshake {
    let mut out = Handshake::default();
    let mut accepted: Vec<(i64, String, AcceptedSet)> = Vec::new();
    for set in sets.iter().filter(|s| names_gateway(s, gw)) {
        let namespace = ns_of(set).to_string();
        let name = set.metadata.name.clone().unwrap_or_default();
        let generation = set.metadata.generation.unwrap_or_default();
        if !allows(gw, &namespace, labels) {
            out.rejected.push(RejectedSet {
                namespace,
                name,
                generation,
            });
            continue;
        }
        let created = set
            .metadata
            .creation_timestamp
            .as_ref()
            .map_or(i64::MIN, |t| t.0.as_second());
        let listeners = set
            .spec
            .listeners
            .iter()
            .filter_map(as_gateway_listener)
            .collect();
        accepted.push((
            created,
            format!("{namespace}/{name}"),
            AcceptedSet {
                namespace,
                name,
                generation,
                listeners,
            },
        ));
    }
    // GEP-1713 precedence: oldest first (to the second, as upstream compares), then ns/name.
    accepted.sort_by(|a, b| (a.0, &a.1).cmp(&(b.0, &b.1)));
    out.accepted = accepted.into_iter().map(|(_, _, s)| s).collect();
    out
}
