//! What attached routes reference, loaded before the stack is built (upstream's
//! `attachedRuleAccumulator` and `listenerRuleConfigLoader`): per rule its
//! ListenerRuleConfiguration and its backends (resolved by `backends`), the problems route
//! status reports (a backend or configuration left out: the rest of the route still works) and
//! the fatal ones that fail the Gateway.

use std::collections::{BTreeMap, BTreeSet};

use super::backends::resolve_backend;
pub use super::backends::{BackendProblem, BackendTarget, LoadedBackend};
use super::refused::REFUSED_REASON;
use super::routes::{RouteRef, RouteView};
use super::tg_props::{over_default, route_props};
use super::GatewayInputs;
use crate::crd::gateway::{ListenerRuleConfiguration, TargetGroupConfiguration};

/// Group and kind an `ExtensionRef` filter names a ListenerRuleConfiguration with.
pub const RULE_CONFIG_GROUP: &str = "gateway.k8s.aws";
pub const RULE_CONFIG_KIND: &str = "ListenerRuleConfiguration";

/// The fatal problem `load` stops at: a loader error (see [`BackendProblem`]) or not.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LoadFailure {
    pub listeners_not_valid: bool,
    pub message: String,
}

/// Something route status reports about one route: upstream's route condition reason and
/// message (the message without the Gateway-side "Invalid data can be found in route" suffix).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RouteProblem {
    pub route: RouteRef,
    pub reason: &'static str,
    pub message: String,
}

/// Reasons that make a route's `Accepted` condition False (ResolvedRefs stays True).
const ACCEPTANCE_REASONS: [&str; 6] = [
    "NotAllowedByListeners",
    "NoMatchingListenerHostname",
    "NoMatchingParent",
    "UnsupportedValue",
    "Pending",
    "IncompatibleFilters",
];
/// Reasons that make a route's `ResolvedRefs` condition False (Accepted stays True).
const REFS_REASONS: [&str; 4] = [
    "RefNotPermitted",
    "InvalidKind",
    "BackendNotFound",
    "UnsupportedProtocol",
];

impl RouteProblem {
    /// Whether the route's `Accepted` condition is False (upstream: any reason but the
    /// ResolvedRefs ones; an unknown reason makes both conditions False).
    pub fn refuses_acceptance(&self) -> bool {
        !REFS_REASONS.contains(&self.reason)
    }

    /// Whether the route's `ResolvedRefs` condition is False.
    pub fn unresolved_refs(&self) -> bool {
        !ACCEPTANCE_REASONS.contains(&self.reason)
    }
}

/// One rule of an attached route.
#[derive(Debug, Clone, Default)]
pub struct LoadedRule<'a> {
    pub config: Option<&'a ListenerRuleConfiguration>,
    pub backends: Vec<LoadedBackend<'a>>,
}

/// The loaded rules of every attached route and what was left out.
#[derive(Debug, Clone, Default)]
pub struct Loaded<'a> {
    /// Per attached route (index into the routes), its rules in order.
    pub rules: BTreeMap<usize, Vec<LoadedRule<'a>>>,
    pub problems: Vec<RouteProblem>,
    /// Backends left out (route `ns/name`, problem).
    pub dropped: Vec<(String, BackendProblem)>,
    /// Inputs accepted but not acted on, as upstream (route `ns/name`, message): Warning events.
    pub ignored: Vec<(String, String)>,
}

/// Loads the rules of the routes `attached` names (each once), the Service backends' props over
/// those of the Gateway's `default_tgc`; `Err` is a fatal problem.
pub fn load<'a>(
    inputs: &GatewayInputs<'a>,
    routes: &[RouteView<'_>],
    attached: impl Iterator<Item = usize>,
    default_tgc: Option<&TargetGroupConfiguration>,
) -> Result<Loaded<'a>, LoadFailure> {
    let mut out = Loaded::default();
    for index in attached.collect::<BTreeSet<_>>() {
        let route = &routes[index];
        let default_props = default_tgc.map(|d| route_props(d, route));
        let ignored = route.ignored.iter().map(|m| (route.key(), m.clone()));
        out.ignored.extend(ignored);
        // Rules refused in decoding (see `refused`): never served without what they ask for;
        // the Gateway API's condition for the route, and a Warning, while the rest is served.
        for r in &route.refused {
            out.problems.push(RouteProblem {
                route: route.route_ref(),
                reason: REFUSED_REASON,
                message: r.message.clone(),
            });
            let message = format!("{} {} {}", route.kind.as_str(), route.key(), r.message);
            out.ignored.push((route.key(), message));
        }
        let mut rules = Vec::new();
        for rule in 0..route.rule_count() {
            let config = match rule_config(inputs, route, rule, &mut out.ignored) {
                Ok(config) => config,
                Err(message) => {
                    // Upstream loads no backend for the rule: it answers 500.
                    out.problems.push(RouteProblem {
                        route: route.route_ref(),
                        reason: "IncompatibleFilters",
                        message,
                    });
                    rules.push(LoadedRule::default());
                    continue;
                }
            };
            let mut backends = Vec::new();
            for b in &route.backends[rule] {
                match resolve_backend(inputs, route, b) {
                    Ok(mut found) => {
                        // Only Service backends take the Gateway's default (upstream's
                        // serviceLoader); Gateway and TargetGroupName backends do not.
                        if matches!(found.target, BackendTarget::Service { .. }) {
                            found.props = over_default(found.props.take(), default_props.as_ref());
                        }
                        backends.push(found)
                    }
                    Err(p) if p.fatal => {
                        return Err(LoadFailure {
                            listeners_not_valid: p.listeners_not_valid,
                            message: p.message,
                        })
                    }
                    Err(p) => {
                        out.problems.push(RouteProblem {
                            route: route.route_ref(),
                            reason: p.reason,
                            message: p.message.clone(),
                        });
                        out.dropped.push((route.key(), p));
                    }
                }
            }
            rules.push(LoadedRule { config, backends });
        }
        out.rules.insert(index, rules);
    }
    Ok(out)
}

/// The rule's ListenerRuleConfiguration: at most one `ExtensionRef` of that group and kind, in
/// the route's namespace, accepted by its reconciler. `Err`: route status IncompatibleFilters.
fn rule_config<'a>(
    inputs: &GatewayInputs<'a>,
    route: &RouteView<'_>,
    rule: usize,
    ignored: &mut Vec<(String, String)>,
) -> Result<Option<&'a ListenerRuleConfiguration>, String> {
    let refs = route
        .extension_refs
        .get(rule)
        .map(Vec::as_slice)
        .unwrap_or_default();
    let mut names = Vec::new();
    for r in refs {
        if r.group == RULE_CONFIG_GROUP && r.kind == RULE_CONFIG_KIND {
            names.push(r.name.as_str());
        } else {
            // Upstream skips ExtensionRefs to other kinds without a word; say so.
            ignored.push((
                route.key(),
                format!(
                    "ExtensionRef filter to {}/{} {} is ignored: only {RULE_CONFIG_GROUP}/{RULE_CONFIG_KIND} is supported",
                    r.group, r.kind, r.name
                ),
            ));
        }
    }
    let name =
        match names.as_slice() {
            [] => return Ok(None),
            [one] => *one,
            _ => return Err(
                "Only one listener rule config can be referenced per route rule, found multiple"
                    .into(),
            ),
        };
    let id = format!("{}/{name}", route.namespace);
    let config = inputs
        .rule_configs
        .iter()
        .find(|c| {
            c.metadata.namespace.as_deref().unwrap_or("default") == route.namespace
                && c.metadata.name.as_deref() == Some(name)
        })
        .ok_or_else(|| format!("ListenerRuleConfiguration [{id}] not found)"))?;
    let status = config.status.as_ref();
    if status.and_then(|s| s.accepted) != Some(true) {
        let message = status
            .and_then(|s| s.message.clone())
            .unwrap_or_else(|| "status unknown".into());
        return Err(format!(
            "ListenerRuleConfiguration [{id}] is not accepted. Reason:  {message})"
        ));
    }
    Ok(Some(config))
}
