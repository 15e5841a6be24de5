//! Gateway status as upstream writes it (`gateway_controller.go`, `listener_status_utils.go`):
//! `addresses` = the lower-cased DNS name; `Programmed` True with the load balancer's ARN as
//! message once it is active, else Unknown/`Pending`; `Accepted` True when some listener is
//! valid (reason `ListenersNotValid` when any is not); per listener `supportedKinds`,
//! `attachedRoutes` and the four conditions `Conflicted`, `Accepted`, `ResolvedRefs`,
//! `Programmed`. A failure sets only `Accepted` False: `Invalid`, or `ListenersNotValid` with the
//! message of a route loader error. Conditions carry the Gateway's generation; the status is
//! merge-patched only when it differs by upstream's test (transition times aside).

use std::collections::BTreeMap;

use gateway_api::apis::standard::gateways::{
    Gateway, GatewayListeners, GatewayStatus, GatewayStatusAddresses, GatewayStatusListeners,
    GatewayStatusListenersSupportedKinds,
};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{Condition, Time};
use kube::api::{Patch, PatchParams};
use kube::{Api, ResourceExt};

use super::{Ctx, GatewayError};
use crate::deploy::DeployedLoadBalancer;
use crate::model::gateway::listeners::{default_route_kinds, LbKind, ListenerValidation};
use crate::model::gateway::GatewayBuild;
use crate::model::ModelError;

/// Upstream's messages (`pkg/gateway/constants`).
pub const PROGRAMMED_PENDING: &str = "Waiting for load balancer to be active.";
pub const RECONCILE_ERROR: &str = "Check Gateway Events for more information.";
const LISTENER_ACCEPTED: &str = "Listener is accepted.";
const LISTENER_NOT_ACCEPTED: &str = "Listener is not accepted.";
const LISTENER_NO_CONFLICT: &str = "Listener has no conflict.";
const LISTENER_PROGRAMMED: &str = "Listener is programmed.";
const LISTENER_RESOLVED: &str = "Listener has all refs resolved.";
const LISTENER_PENDING: &str = "Listener is pending to be programmed.";
const GATEWAY_GROUP: &str = "gateway.networking.k8s.io";
const MAX_MESSAGE: usize = 32700;

/// The deployed load balancer, as status needs it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Programmed {
    pub arn: String,
    pub dns_name: String,
    /// State `active` or `active_impaired`.
    pub active: bool,
}

fn now() -> Time {
    Time(k8s_openapi::jiff::Timestamp::now())
}

fn truncate(s: &str) -> String {
    if s.chars().count() <= MAX_MESSAGE {
        return s.to_string();
    }
    let mut t: String = s.chars().take(MAX_MESSAGE).collect();
    t.push_str("...");
    t
}

pub(super) fn condition(
    type_: &str,
    status: &str,
    reason: &str,
    message: &str,
    gen: i64,
) -> Condition {
    Condition {
        type_: type_.into(),
        status: status.into(),
        reason: reason.into(),
        message: message.into(),
        observed_generation: Some(gen),
        last_transition_time: now(),
    }
}

/// Upstream's `prepareGatewayConditionUpdate`: sets one condition; returns whether it changed.
pub fn set_condition(
    st: &mut GatewayStatus,
    type_: &str,
    status: &str,
    reason: &str,
    message: &str,
    gen: i64,
) -> bool {
    let message = truncate(message);
    let conds = st.conditions.get_or_insert_with(Vec::new);
    match conds.iter_mut().find(|c| c.type_ == type_) {
        Some(c) => {
            if c.status == status
                && c.message == message
                && c.reason == reason
                && c.observed_generation == Some(gen)
            {
                return false;
            }
            *c = condition(type_, status, reason, &message, gen);
        }
        None => conds.push(condition(type_, status, reason, &message, gen)),
    }
    true
}

/// `supportedKinds` of a listener: the listed kinds this load balancer serves, else the
/// protocol's defaults.
fn supported_kinds(l: &GatewayListeners, lb: LbKind) -> Vec<GatewayStatusListenersSupportedKinds> {
    let served: &[&str] = match lb {
        LbKind::Alb => &["HTTPRoute", "GRPCRoute"],
        LbKind::Nlb => &["TCPRoute", "TLSRoute", "UDPRoute"],
    };
    let listed: Vec<String> = l
        .allowed_routes
        .as_ref()
        .and_then(|a| a.kinds.as_ref())
        .map(|k| k.iter().map(|k| k.kind.clone()).collect())
        .unwrap_or_default();
    let kinds: Vec<String> = if listed.is_empty() {
        default_route_kinds(&l.protocol)
            .iter()
            .map(|k| k.as_str().to_string())
            .collect()
    } else {
        listed
            .into_iter()
            .filter(|k| served.contains(&k.as_str()))
            .collect()
    };
    kinds
        .into_iter()
        .map(|kind| GatewayStatusListenersSupportedKinds {
            group: Some(GATEWAY_GROUP.into()),
            kind,
        })
        .collect()
}

/// The four listener conditions of upstream's `getListenerConditions`.
fn listener_conditions(v: &ListenerValidation, programmed: bool, gen: i64) -> Vec<Condition> {
    let r = v.reason;
    let msg = v.message.as_str();
    let conflicted = match r {
        "HostnameConflict" | "ProtocolConflict" => condition("Conflicted", "True", r, msg, gen),
        _ => condition(
            "Conflicted",
            "False",
            "NoConflicts",
            LISTENER_NO_CONFLICT,
            gen,
        ),
    };
    let accepted = match r {
        "PortUnavailable" | "UnsupportedProtocol" | "HostnameConflict" | "ProtocolConflict" => {
            condition("Accepted", "False", r, msg, gen)
        }
        _ => condition("Accepted", "True", "Accepted", LISTENER_ACCEPTED, gen),
    };
    let resolved = match r {
        "InvalidRouteKinds" | "RefNotPermitted" => condition("ResolvedRefs", "False", r, msg, gen),
        _ => condition(
            "ResolvedRefs",
            "True",
            "ResolvedRefs",
            LISTENER_RESOLVED,
            gen,
        ),
    };
    let prog = if r != "Accepted" {
        condition("Programmed", "False", r, LISTENER_NOT_ACCEPTED, gen)
    } else if programmed {
        condition("Programmed", "True", "Programmed", LISTENER_PROGRAMMED, gen)
    } else {
        condition("Programmed", "False", "Pending", LISTENER_PENDING, gen)
    };
    vec![conflicted, accepted, resolved, prog]
}

/// `status.listeners` for the Gateway's listeners.
pub fn listener_statuses(
    gw: &Gateway,
    lb: LbKind,
    validation: &BTreeMap<String, ListenerValidation>,
    attached: &BTreeMap<String, usize>,
    programmed: bool,
) -> Vec<GatewayStatusListeners> {
    let gen = gw.metadata.generation.unwrap_or_default();
    listener_entries(
        &gw.spec.listeners,
        lb,
        validation,
        attached,
        programmed,
        gen,
    )
}

/// Status entries of `listeners` (a Gateway's or a ListenerSet's) with conditions of `gen`.
pub fn listener_entries(
    listeners: &[GatewayListeners],
    lb: LbKind,
    validation: &BTreeMap<String, ListenerValidation>,
    attached: &BTreeMap<String, usize>,
    programmed: bool,
    gen: i64,
) -> Vec<GatewayStatusListeners> {
    listeners
        .iter()
        .filter_map(|l| {
            let v = validation.get(&l.name)?;
            Some(GatewayStatusListeners {
                name: l.name.clone(),
                supported_kinds: Some(supported_kinds(l, lb)),
                attached_routes: attached.get(&l.name).copied().unwrap_or(0) as i32,
                conditions: listener_conditions(v, programmed, gen),
            })
        })
        .collect()
}

pub(super) type ListenerShape = (
    String,
    Vec<String>,
    i32,
    Vec<(String, String, String, String, i64)>,
);

pub(super) fn shape(l: &[GatewayStatusListeners]) -> Vec<ListenerShape> {
    let mut out: Vec<ListenerShape> = l
        .iter()
        .map(|s| {
            let mut kinds: Vec<String> = s
                .supported_kinds
                .iter()
                .flatten()
                .map(|k| format!("{}/{}", k.group.as_deref().unwrap_or(""), k.kind))
                .collect();
            kinds.sort();
            let mut conds: Vec<_> = s
                .conditions
                .iter()
                .map(|c| {
                    let gen = c.observed_generation.unwrap_or_default();
                    let (t, st, r, m) = (&c.type_, &c.status, &c.reason, &c.message);
                    (t.clone(), st.clone(), r.clone(), m.clone(), gen)
                })
                .collect();
            conds.sort();
            (s.name.clone(), kinds, s.attached_routes, conds)
        })
        .collect();
    out.sort();
    out
}

/// Upstream's `isListenerStatusIdentical` (order and transition times do not count).
pub fn listeners_identical(a: &[GatewayStatusListeners], b: &[GatewayStatusListeners]) -> bool {
    shape(a) == shape(b)
}

/// Upstream's status after a successful deploy; `None` when the Gateway already shows it.
/// `attached_sets`: `attachedListenerSets` (Some only with the `GatewayListenerSet` gate).
pub fn success(
    gw: &Gateway,
    listeners: Vec<GatewayStatusListeners>,
    lb: &Programmed,
    any_valid: bool,
    any_invalid: bool,
    attached_sets: Option<i32>,
) -> Option<GatewayStatus> {
    let gen = gw.metadata.generation.unwrap_or_default();
    let mut st = gw.status.clone().unwrap_or_default();
    let mut changed = if lb.active {
        set_condition(&mut st, "Programmed", "True", "Programmed", &lb.arn, gen)
    } else {
        set_condition(
            &mut st,
            "Programmed",
            "Unknown",
            "Pending",
            PROGRAMMED_PENDING,
            gen,
        )
    };
    let reason = if any_invalid {
        "ListenersNotValid"
    } else {
        "Accepted"
    };
    let accepted = if any_valid { "True" } else { "False" };
    changed |= set_condition(&mut st, "Accepted", accepted, reason, "", gen);
    let dns = lb.dns_name.to_ascii_lowercase();
    let addresses_ok = matches!(st.addresses.as_deref(), Some([one]) if one.value == dns);
    if !addresses_ok {
        st.addresses = Some(vec![GatewayStatusAddresses {
            r#type: Some("Hostname".into()),
            value: dns,
        }]);
        changed = true;
    }
    if attached_sets.is_some() && st.attached_listener_sets != attached_sets {
        st.attached_listener_sets = attached_sets;
        changed = true;
    }
    if !listeners_identical(st.listeners.as_deref().unwrap_or(&[]), &listeners) {
        st.listeners = Some(listeners);
        changed = true;
    }
    changed.then_some(st)
}

/// Upstream's `updateGatewayStatusFailure` without loader results: `Accepted` False.
pub fn failure(gw: &Gateway, reason: &str, message: &str) -> Option<GatewayStatus> {
    let gen = gw.metadata.generation.unwrap_or_default();
    let mut st = gw.status.clone().unwrap_or_default();
    set_condition(&mut st, "Accepted", "False", reason, message, gen).then_some(st)
}

/// Upstream's status when the model cannot be built: a route loader error sets `Accepted` False
/// `ListenersNotValid` with its message (`LoadRoutesForGateway`), any other error `Invalid` with
/// [`RECONCILE_ERROR`] (`handleReconcileError`).
pub fn build_failure(gw: &Gateway, e: &GatewayError) -> Option<GatewayStatus> {
    match e {
        GatewayError::Model(ModelError::ListenersNotValid { message, .. }) => {
            failure(gw, "ListenersNotValid", message)
        }
        _ => failure(gw, "Invalid", RECONCILE_ERROR),
    }
}

/// Merge-patches `status` onto the Gateway's `/status`; a Gateway gone meanwhile is no error.
pub async fn patch(
    client: &kube::Client,
    gw: &Gateway,
    status: &GatewayStatus,
) -> kube::Result<()> {
    let ns = gw.namespace().unwrap_or_else(|| "default".into());
    let api: Api<Gateway> = Api::namespaced(client.clone(), &ns);
    let body = serde_json::json!({ "status": status });
    match api
        .patch_status(
            &gw.name_any(),
            &PatchParams::default(),
            &Patch::Merge(&body),
        )
        .await
    {
        Ok(_) => Ok(()),
        Err(kube::Error::Api(e)) if e.code == 404 => Ok(()),
        Err(e) => Err(e),
    }
}

/// Writes Accepted False `Invalid` on a failure; a failed status write is only logged.
pub(super) async fn fail_status(ctx: &Ctx, gw: &Gateway, message: &str) {
    write_failure(ctx, gw, failure(gw, "Invalid", message)).await;
}

/// Writes a failure status (when it changes anything); a failed write is only logged.
pub(super) async fn write_failure(ctx: &Ctx, gw: &Gateway, st: Option<GatewayStatus>) {
    if let Some(st) = st {
        if let Err(e) = patch(&ctx.client, gw, &st).await {
            tracing::warn!(gateway = %gw.name_any(), error = %e, "unable to update gateway status on failure");
        }
    }
}

#[cfg(test)]
#[path = "status_tests.rs"]
mod tests;

/// What a deploy that left `made` means for the Gateway: the load balancer as status shows it,
/// and the new status when it differs (`None`: no write). `sets_on`: the `GatewayListenerSet`
/// gate, which adds `attachedListenerSets`. The controller writes it and `diff` previews it.
pub fn after_deploy(
    gw: &Gateway,
    lb: LbKind,
    built: &GatewayBuild,
    made: &DeployedLoadBalancer,
    sets_on: bool,
) -> (Programmed, Option<GatewayStatus>) {
    let programmed = Programmed {
        arn: made.arn.clone(),
        dns_name: made.dns_name.clone(),
        active: matches!(made.state.as_str(), "active" | "active_impaired"),
    };
    let listeners = listener_statuses(
        gw,
        lb,
        &built.listeners,
        &built.attachment.attached_routes,
        programmed.active,
    );
    // Accepted counts the listeners of the accepted ListenerSets too, as upstream.
    let results = || {
        std::iter::once(&built.listeners)
            .chain(built.listener_sets.iter().map(|s| &s.validation))
            .flat_map(|v| v.values())
    };
    let any_valid = results().any(|v| v.valid);
    let any_invalid = results().any(|v| !v.valid);
    let attached_sets = sets_on.then(|| {
        let with_valid = built
            .listener_sets
            .iter()
            .filter(|s| s.validation.values().any(|v| v.valid));
        with_valid.count() as i32
    });
    let st = success(
        gw,
        listeners,
        &programmed,
        any_valid,
        any_invalid,
        attached_sets,
    );
    (programmed, st)
}
