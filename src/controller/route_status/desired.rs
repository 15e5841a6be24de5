//! What one Gateway build says about each (route, parentRef) pair that names the Gateway, as
//! upstream's loader queues it (`routeutils/loader.go`): attachment refusals first, then the
//! first dropped backend of an attached route, then success — the first verdict per pair wins,
//! so a route never flip-flops between a failure and "accepted" within one load. Then the two
//! conditions upstream's route reconciler writes for a verdict (`route_reconciler.go`).

use serde_json::{json, Value};

use crate::model::gateway::routes::{RouteKind, RouteView};
use crate::model::gateway::{GatewayBuild, ALB_CONTROLLER_NAME, NLB_CONTROLLER_NAME};

/// Upstream's `RouteStatusInfo`: which condition a failure lands on, with its reason/message.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Verdict {
    pub accepted: bool,
    pub resolved_refs: bool,
    pub reason: String,
    pub message: String,
}

impl Verdict {
    fn ok() -> Self {
        Verdict {
            accepted: true,
            resolved_refs: true,
            reason: "Accepted".into(),
            message: String::new(),
        }
    }

    /// Upstream's split of loader reasons: attachment-type reasons fail Accepted, reference-type
    /// reasons fail ResolvedRefs, anything else fails both.
    pub fn failure(reason: &str, message: &str) -> Self {
        let (accepted, resolved_refs) = match reason {
            "NotAllowedByListeners"
            | "NoMatchingListenerHostname"
            | "NoMatchingParent"
            | "UnsupportedValue"
            | "Pending"
            | "IncompatibleFilters" => (false, true),
            "RefNotPermitted" | "InvalidKind" | "BackendNotFound" | "UnsupportedProtocol" => {
                (true, false)
            }
            _ => (false, false),
        };
        Verdict {
            accepted,
            resolved_refs,
            reason: reason.into(),
            message: message.into(),
        }
    }
}

/// The controller name route status entries of `kind` carry.
pub fn controller_of(kind: RouteKind) -> &'static str {
    match kind {
        RouteKind::Http | RouteKind::Grpc => ALB_CONTROLLER_NAME,
        RouteKind::Tcp | RouteKind::Udp | RouteKind::Tls => NLB_CONTROLLER_NAME,
    }
}

/// Per route (indexes of `routes`, the build's route order), the verdict of each of its
/// parentRefs the build attached or refused, by position in the route's `parentRefs`.
pub fn verdicts(build: &GatewayBuild, routes: &[RouteView<'_>]) -> Vec<Vec<(usize, Verdict)>> {
    let a = &build.attachment;
    routes
        .iter()
        .enumerate()
        .map(|(index, route)| {
            let key = route.key();
            let me = route.route_ref();
            let dropped = build
                .route_problems
                .iter()
                .find(|p| p.route == me)
                .map(|p| Verdict::failure(p.reason, &p.message));
            route
                .parent_refs
                .iter()
                .enumerate()
                .filter_map(|(pos, p)| {
                    let refused = a
                        .refusals
                        .iter()
                        .find(|r| r.kind == route.kind && r.route == key && r.parent_ref == *p)
                        .map(|r| Verdict::failure(r.reason, r.message));
                    let accepted = a.accepted.iter().any(|(i, ap)| *i == index && ap == p);
                    let verdict = match (refused, accepted) {
                        (Some(v), _) => v,
                        (None, true) => dropped.clone().unwrap_or_else(Verdict::ok),
                        (None, false) => return None,
                    };
                    Some((pos, verdict))
                })
                .collect()
        })
        .collect()
}

fn condition(type_: &str, status: bool, reason: &str, message: &str) -> Value {
    json!({
        "type": type_,
        "status": if status { "True" } else { "False" },
        "reason": reason,
        "message": message,
    })
}

/// The conditions upstream writes for a verdict, in its order (ResolvedRefs, Accepted); a
/// condition that holds carries its type as reason and an empty message.
pub fn conditions(v: &Verdict) -> Vec<Value> {
    let resolved = if v.resolved_refs {
        condition("ResolvedRefs", true, "ResolvedRefs", "")
    } else {
        condition("ResolvedRefs", false, &v.reason, &v.message)
    };
    let accepted = if v.accepted {
        condition("Accepted", true, "Accepted", "")
    } else {
        condition("Accepted", false, &v.reason, &v.message)
    };
    vec![resolved, accepted]
}

/// Upstream's conditions for a parentRef whose Gateway no longer exists: Accepted False
/// `ParentRefDoesNotExist` with the API server's not-found text, ResolvedRefs True.
pub fn parent_gone(gateway_name: &str) -> Vec<Value> {
    let message = format!("gateways.gateway.networking.k8s.io \"{gateway_name}\" not found");
    vec![
        condition("Accepted", false, "ParentRefDoesNotExist", &message),
        condition("ResolvedRefs", true, "ResolvedRefs", ""),
    ]
}
