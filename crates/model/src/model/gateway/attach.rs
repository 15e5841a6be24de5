//! Which route attaches to which Gateway listener (upstream's `route_listener_mapper.go` and
//! `listener_attachment_helper.go`): parentRef resolution (`sectionName`, `port`), then per
//! listener the namespace, kind and hostname checks, with the refusal reasons and messages route
//! status reports; and the hostnames each route serves on each port.

use std::collections::{BTreeMap, BTreeSet};
use std::net::IpAddr;

use gateway_api::apis::standard::gateways::{
    GatewayListeners, GatewayListenersAllowedRoutesNamespacesFrom as From,
};

use super::listener_sets::LISTENER_SET_KIND;
use super::listeners::{allowed_kinds, ListenerValidation};
use super::routes::{ParentRef, RouteKind, RouteView};
use super::selectors::as_label_selector;
use crate::model::ingress_class::selector_matches;

/// A (route, parentRef) pair this Gateway refuses, with upstream's route status reason/message.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Refusal {
    /// `ns/name` of the route.
    pub route: String,
    pub kind: RouteKind,
    pub parent_ref: ParentRef,
    pub reason: &'static str,
    pub message: &'static str,
}

const NAMESPACE_NOT_MATCH: &str =
    "Listener does not allow route attachment, namespace does not match between listener and route";
const KIND_NOT_MATCH: &str =
    "Listener does not allow route attachment, kind does not match between listener and route";
const NO_MATCHING_HOSTNAME: &str = "Listener does not allow route attachment, no matching hostname";
const PARENT_NOT_MATCH: &str = "Route parentRef does not match listener";

/// The result of attaching routes to one Gateway's listeners.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Attachment {
    /// Route indexes per port of a valid listener, each route once, in route order.
    pub routes_by_port: BTreeMap<i32, Vec<usize>>,
    /// Compatible hostnames of (port, route index); empty when the listener has no hostname.
    pub hostnames: BTreeMap<(i32, usize), BTreeSet<String>>,
    /// Attached (route, parentRef) pairs per listener name (the listener's `attachedRoutes`).
    pub attached_routes: BTreeMap<String, usize>,
    /// The same per accepted ListenerSet (`ns/name`), per listener name.
    pub set_attached_routes: BTreeMap<String, BTreeMap<String, usize>>,
    /// Accepted (route index, parentRef) pairs, for route status.
    pub accepted: Vec<(usize, ParentRef)>,
    pub refusals: Vec<Refusal>,
    /// Upstream's fatal loader error (the first): a route with hostnames meets a listener whose
    /// hostname is not valid (an IP address, or a label of 64 characters or more); the Gateway is
    /// then not built and its `Accepted` is False `ListenersNotValid` with this message.
    pub fatal: Option<String>,
}

/// Why a listener does not take a route.
enum Refuse {
    /// Route status reason and message.
    Route(&'static str, &'static str),
    /// Fails the Gateway (see [`Attachment::fatal`]).
    Fatal(String),
}

/// Everything about the Gateway the checks need.
pub struct Parent<'a> {
    pub namespace: &'a str,
    pub name: &'a str,
    pub listeners: &'a [GatewayListeners],
    pub validation: &'a BTreeMap<String, ListenerValidation>,
    /// The ListenerSets the Gateway accepted (routes name them with parentRef kind ListenerSet).
    pub sets: &'a [Parent<'a>],
}

impl Parent<'_> {
    fn key(&self) -> String {
        format!("{}/{}", self.namespace, self.name)
    }
}

/// Attaches `routes` to the Gateway's listeners; `labels` gives a namespace's labels.
pub fn attach(
    parent: &Parent<'_>,
    routes: &[RouteView<'_>],
    labels: &dyn Fn(&str) -> BTreeMap<String, String>,
) -> Attachment {
    let mut out = Attachment::default();
    // Per (group: None = the Gateway, Some(i) = its i-th ListenerSet, listener name).
    let mut per_listener: BTreeMap<(Option<usize>, &str), Vec<usize>> = BTreeMap::new();
    for (index, route) in routes.iter().enumerate() {
        for (parent_ref, group) in route
            .parent_refs
            .iter()
            .filter_map(|p| Some((p, targets(p, route, parent)?)))
        {
            let owner = group.map_or(parent, |i| &parent.sets[i]);
            let candidates: Vec<&GatewayListeners> = owner
                .listeners
                .iter()
                .filter(|l| match &parent_ref.section_name {
                    Some(section) => l.name == *section,
                    None => true,
                })
                .filter(|l| parent_ref.port.is_none_or(|p| p == l.port))
                .collect();
            let mut any = false;
            let mut failures = Vec::new();
            for l in candidates {
                match allows(owner.namespace, l, route, labels) {
                    Ok(hostnames) => {
                        any = true;
                        per_listener
                            .entry((group, l.name.as_str()))
                            .or_default()
                            .push(index);
                        out.hostnames
                            .entry((l.port, index))
                            .or_default()
                            .extend(hostnames);
                    }
                    Err(Refuse::Route(reason, message)) => failures.push(Refusal {
                        route: route.key(),
                        kind: route.kind,
                        parent_ref: parent_ref.clone(),
                        reason,
                        message,
                    }),
                    Err(Refuse::Fatal(message)) => {
                        out.fatal.get_or_insert(message);
                    }
                }
            }
            if any {
                out.accepted.push((index, parent_ref.clone()));
            } else if failures.is_empty() {
                out.refusals.push(Refusal {
                    route: route.key(),
                    kind: route.kind,
                    parent_ref: parent_ref.clone(),
                    reason: "NoMatchingParent",
                    message: PARENT_NOT_MATCH,
                });
            } else {
                out.refusals.extend(failures);
            }
        }
    }
    let groups = std::iter::once((None, parent))
        .chain(parent.sets.iter().enumerate().map(|(i, s)| (Some(i), s)));
    for (group, owner) in groups {
        for l in owner.listeners {
            let attached = per_listener
                .get(&(group, l.name.as_str()))
                .cloned()
                .unwrap_or_default();
            let counts = match group {
                None => &mut out.attached_routes,
                Some(_) => out.set_attached_routes.entry(owner.key()).or_default(),
            };
            counts.insert(l.name.clone(), attached.len());
            if !owner.validation.get(&l.name).is_some_and(|v| v.valid) {
                continue;
            }
            let port = out.routes_by_port.entry(l.port).or_default();
            for index in attached {
                if !port.contains(&index) {
                    port.push(index);
                }
            }
        }
    }
    out.routes_by_port.retain(|_, routes| !routes.is_empty());
    out
}

/// Which listeners a parentRef names: `Some(None)` this Gateway's (kind empty or Gateway, the
/// name, and the namespace — default: the route's), `Some(Some(i))` those of its i-th accepted
/// ListenerSet (kind ListenerSet); `None` for anything else.
fn targets(p: &ParentRef, route: &RouteView<'_>, parent: &Parent<'_>) -> Option<Option<usize>> {
    let namespace = p.namespace.as_deref().unwrap_or(&route.namespace);
    match p.kind.as_deref() {
        None | Some("Gateway") => {
            (p.name == parent.name && namespace == parent.namespace).then_some(None)
        }
        Some(LISTENER_SET_KIND) => parent
            .sets
            .iter()
            .position(|s| s.name == p.name && s.namespace == namespace)
            .map(Some),
        Some(_) => None,
    }
}

/// Upstream's checks in order: namespace (`Same`: the namespace of the Gateway or ListenerSet
/// owning the listener), kind, hostname (HTTP, GRPC and TLS routes).
fn allows(
    parent_namespace: &str,
    l: &GatewayListeners,
    route: &RouteView<'_>,
    labels: &dyn Fn(&str) -> BTreeMap<String, String>,
) -> Result<Vec<String>, Refuse> {
    let namespaces = l
        .allowed_routes
        .as_ref()
        .and_then(|a| a.namespaces.as_ref());
    let namespace_ok = match namespaces.and_then(|n| n.from.as_ref()) {
        None | Some(From::Same) => route.namespace == parent_namespace,
        Some(From::All) => true,
        Some(From::Selector) => namespaces
            .and_then(|n| n.selector.as_ref())
            .and_then(as_label_selector)
            .is_some_and(|s| selector_matches(&s, &labels(&route.namespace))),
    };
    if !namespace_ok {
        return Err(Refuse::Route("NotAllowedByListeners", NAMESPACE_NOT_MATCH));
    }
    if !allowed_kinds(l).iter().any(|k| k == route.kind.as_str()) {
        return Err(Refuse::Route("NotAllowedByListeners", KIND_NOT_MATCH));
    }
    use super::routes::RouteKind::{Grpc, Http, Tls};
    if !matches!(route.kind, Http | Grpc | Tls) {
        return Ok(Vec::new());
    }
    if let Some(h) = l.hostname.as_deref() {
        if !route.hostnames.is_empty() && !valid_hostname(h) {
            // Upstream's text, names as it has them.
            return Err(Refuse::Fatal(format!(
                "listener hostname {} is not valid (listener name {h})",
                l.name
            )));
        }
    }
    compatible_hostnames(l.hostname.as_deref(), &route.hostnames).ok_or(Refuse::Route(
        "NoMatchingListenerHostname",
        NO_MATCHING_HOSTNAME,
    ))
}

/// The hostnames a route serves on a listener: the listener's when the route has none, none (=
/// any) when the listener has none, else the pairwise compatible ones (`None`: not attached).
pub fn compatible_hostnames(listener: Option<&str>, route: &[String]) -> Option<Vec<String>> {
    if route.is_empty() {
        return Some(listener.map(|h| vec![h.to_string()]).unwrap_or_default());
    }
    let Some(listener) = listener else {
        return Some(Vec::new());
    };
    if !valid_hostname(listener) {
        return None;
    }
    let compatible: Vec<String> = route
        .iter()
        .filter(|h| valid_hostname(h))
        .filter_map(|h| compatible(h, listener))
        .collect();
    (!compatible.is_empty()).then_some(compatible)
}

/// Upstream's `IsHostNameInValidFormat`: not an IP, labels of 1–63 characters.
fn valid_hostname(h: &str) -> bool {
    if h.parse::<IpAddr>().is_ok() {
        return false;
    }
    let rest = h.strip_prefix("*.").unwrap_or(h);
    rest.split('.').all(|l| (1..=63).contains(&l.len()))
}

/// The more specific of two hostnames when one covers the other (wildcard-aware).
fn compatible(a: &str, b: &str) -> Option<String> {
    if a == b {
        return Some(a.to_string());
    }
    if a.starts_with("*.") && b.ends_with(&a[1..]) {
        return Some(b.to_string());
    }
    if b.starts_with("*.") && a.ends_with(&b[1..]) {
        return Some(a.to_string());
    }
    None
}
