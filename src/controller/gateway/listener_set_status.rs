//! ListenerSet status as upstream's ListenerSet status reconciler writes it after a Gateway's
//! successful deploy (`listener_status_utils.go`, `listenerset_status_reconciler.go`): an
//! accepted set gets `Accepted` (True when some listener is valid; reason `ListenersNotValid`,
//! `Some listeners are not valid` when any is not) and `Programmed` (True once the Gateway is
//! programmed and some listener is valid; else `ListenersNotValid`/`No valid listeners to
//! materialize` or `Pending`/`Parent gateway not yet programmed`) plus one entry per listener
//! like the Gateway's; a set the Gateway does not allow gets both False with `NotAllowed`,
//! `Parent Gateway rejected ListenerSet`, and no entries. Conditions carry the set's
//! generation; the status is merge-patched only when it differs (transition times aside).

use std::collections::BTreeMap;

use gateway_api::apis::standard::gateways::GatewayStatusListeners;
use gateway_api::apis::standard::listenersets::{
    ListenerSet, ListenerSetStatus, ListenerSetStatusListeners,
    ListenerSetStatusListenersSupportedKinds,
};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::Condition;
use kube::api::{Patch, PatchParams};
use kube::Api;

use super::status::{condition, listener_entries, shape};
use crate::model::gateway::build::SetBuild;
use crate::model::gateway::listener_sets::RejectedSet;
use crate::model::gateway::listeners::LbKind;
use crate::model::gateway::GatewayBuild;

/// Message of both conditions of a set the Gateway does not allow.
pub const REJECTED: &str = "Parent Gateway rejected ListenerSet";

/// The status of an accepted set; `gateway_programmed`: the Gateway's load balancer is active.
pub fn accepted_status(
    set: &SetBuild,
    attached: &BTreeMap<String, usize>,
    lb: LbKind,
    gateway_programmed: bool,
) -> ListenerSetStatus {
    let gen = set.set.generation;
    let any_valid = set.validation.values().any(|v| v.valid);
    let any_invalid = set.validation.values().any(|v| !v.valid);
    let accepted = if any_invalid {
        ("ListenersNotValid", "Some listeners are not valid")
    } else {
        ("Accepted", "Accepted")
    };
    let programmed = gateway_programmed && any_valid;
    let prog = if programmed {
        ("Programmed", "Programmed")
    } else if gateway_programmed {
        ("ListenersNotValid", "No valid listeners to materialize")
    } else {
        ("Pending", "Parent gateway not yet programmed")
    };
    let status = |b: bool| if b { "True" } else { "False" };
    let entries = listener_entries(
        &set.set.listeners,
        lb,
        &set.validation,
        attached,
        programmed,
        gen,
    );
    ListenerSetStatus {
        conditions: Some(vec![
            condition("Accepted", status(any_valid), accepted.0, accepted.1, gen),
            condition("Programmed", status(programmed), prog.0, prog.1, gen),
        ]),
        listeners: Some(entries.into_iter().map(entry).collect()),
    }
}

/// The status of a set the Gateway does not allow.
pub fn rejected_status(set: &RejectedSet) -> ListenerSetStatus {
    let gen = set.generation;
    ListenerSetStatus {
        conditions: Some(vec![
            condition("Accepted", "False", "NotAllowed", REJECTED, gen),
            condition("Programmed", "False", "NotAllowed", REJECTED, gen),
        ]),
        listeners: Some(Vec::new()),
    }
}

fn entry(l: GatewayStatusListeners) -> ListenerSetStatusListeners {
    ListenerSetStatusListeners {
        name: l.name,
        attached_routes: l.attached_routes,
        conditions: l.conditions,
        supported_kinds: l.supported_kinds.map(|k| {
            k.into_iter()
                .map(|k| ListenerSetStatusListenersSupportedKinds {
                    group: k.group,
                    kind: k.kind,
                })
                .collect()
        }),
    }
}

fn as_gateway_entries(l: &[ListenerSetStatusListeners]) -> Vec<GatewayStatusListeners> {
    l.iter()
        .map(|l| GatewayStatusListeners {
            name: l.name.clone(),
            attached_routes: l.attached_routes,
            conditions: l.conditions.clone(),
            supported_kinds: l.supported_kinds.as_ref().map(|k| {
                k.iter()
                    .map(|k| {
                        gateway_api::apis::standard::gateways::GatewayStatusListenersSupportedKinds {
                            group: k.group.clone(),
                            kind: k.kind.clone(),
                        }
                    })
                    .collect()
            }),
        })
        .collect()
}

fn condition_shape(c: &[Condition]) -> Vec<(String, String, String, String, Option<i64>)> {
    let mut v: Vec<_> = c
        .iter()
        .map(|c| {
            let (t, s, r, m) = (&c.type_, &c.status, &c.reason, &c.message);
            (
                t.clone(),
                s.clone(),
                r.clone(),
                m.clone(),
                c.observed_generation,
            )
        })
        .collect();
    v.sort();
    v
}

/// Upstream's `isStatusIdentical`: conditions and listener entries, order and times aside.
pub fn identical(a: &ListenerSetStatus, b: &ListenerSetStatus) -> bool {
    let conds = |s: &ListenerSetStatus| condition_shape(s.conditions.as_deref().unwrap_or(&[]));
    let entries =
        |s: &ListenerSetStatus| shape(&as_gateway_entries(s.listeners.as_deref().unwrap_or(&[])));
    conds(a) == conds(b) && entries(a) == entries(b)
}

/// Writes the status of every set `built` accepted or rejected; a set gone meanwhile is skipped.
pub async fn publish(
    client: &kube::Client,
    built: &GatewayBuild,
    lb: LbKind,
    gateway_programmed: bool,
) -> kube::Result<()> {
    let none = BTreeMap::new();
    for set in &built.listener_sets {
        let attached = built
            .attachment
            .set_attached_routes
            .get(&set.key())
            .unwrap_or(&none);
        let status = accepted_status(set, attached, lb, gateway_programmed);
        write(client, &set.set.namespace, &set.set.name, &status).await?;
    }
    for set in &built.rejected_sets {
        write(client, &set.namespace, &set.name, &rejected_status(set)).await?;
    }
    Ok(())
}

async fn write(
    client: &kube::Client,
    namespace: &str,
    name: &str,
    status: &ListenerSetStatus,
) -> kube::Result<()> {
    let api: Api<ListenerSet> = Api::namespaced(client.clone(), namespace);
    let Some(current) = api.get_opt(name).await? else {
        return Ok(());
    };
    if current
        .status
        .as_ref()
        .is_some_and(|s| identical(s, status))
    {
        return Ok(());
    }
    let body = serde_json::json!({ "status": status });
    match api
        .patch_status(name, &PatchParams::default(), &Patch::Merge(&body))
        .await
    {
        Ok(_) => Ok(()),
        Err(kube::Error::Api(e)) if e.code == 404 => Ok(()),
        Err(e) => Err(e),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::gateway::listener_sets::AcceptedSet;
    use crate::model::gateway::listeners::validate;
    use serde_json::json;

    fn set() -> SetBuild {
        let listeners: Vec<gateway_api::apis::standard::gateways::GatewayListeners> =
            serde_json::from_value(json!([
                {"name": "extra", "port": 8080, "protocol": "HTTP"},
                {"name": "bad", "port": 8081, "protocol": "TCP"}
            ]))
            .unwrap();
        let validation = validate(&listeners, LbKind::Alb);
        SetBuild {
            set: AcceptedSet {
                namespace: "apps".into(),
                name: "ls".into(),
                generation: 4,
                listeners,
            },
            validation,
        }
    }

    fn cond<'a>(s: &'a ListenerSetStatus, t: &str) -> (&'a str, &'a str, &'a str) {
        let c = s
            .conditions
            .iter()
            .flatten()
            .find(|c| c.type_ == t)
            .unwrap();
        (c.status.as_str(), c.reason.as_str(), c.message.as_str())
    }

    #[test]
    fn an_accepted_set_reports_upstreams_reasons_and_one_entry_per_listener() {
        let attached = BTreeMap::from([("extra".to_string(), 2)]);
        let s = accepted_status(&set(), &attached, LbKind::Alb, true);
        assert_eq!(
            cond(&s, "Accepted"),
            ("True", "ListenersNotValid", "Some listeners are not valid")
        );
        assert_eq!(cond(&s, "Programmed"), ("True", "Programmed", "Programmed"));
        let entries = s.listeners.as_deref().unwrap();
        assert_eq!(entries.len(), 2);
        assert_eq!(
            (entries[0].name.as_str(), entries[0].attached_routes),
            ("extra", 2)
        );
        let bad = entries[1]
            .conditions
            .iter()
            .find(|c| c.type_ == "Accepted")
            .unwrap();
        assert_eq!(
            (bad.status.as_str(), bad.reason.as_str()),
            ("False", "UnsupportedProtocol")
        );
        assert!(s
            .conditions
            .iter()
            .flatten()
            .all(|c| c.observed_generation == Some(4)));

        let pending = accepted_status(&set(), &attached, LbKind::Alb, false);
        assert_eq!(
            cond(&pending, "Programmed"),
            ("False", "Pending", "Parent gateway not yet programmed")
        );
        let mut none_valid = set();
        none_valid.validation.retain(|k, _| k == "bad");
        let s = accepted_status(&none_valid, &attached, LbKind::Alb, true);
        assert_eq!(cond(&s, "Accepted").0, "False");
        assert_eq!(
            cond(&s, "Programmed"),
            (
                "False",
                "ListenersNotValid",
                "No valid listeners to materialize"
            )
        );
    }

    #[test]
    fn a_rejected_set_is_told_so_and_an_unchanged_status_is_not_rewritten() {
        let r = RejectedSet {
            namespace: "other".into(),
            name: "ls".into(),
            generation: 1,
        };
        let s = rejected_status(&r);
        assert_eq!(cond(&s, "Accepted"), ("False", "NotAllowed", REJECTED));
        assert_eq!(cond(&s, "Programmed"), ("False", "NotAllowed", REJECTED));
        assert!(
            identical(&s, &rejected_status(&r)),
            "transition times do not count"
        );
        let attached = BTreeMap::new();
        let a = accepted_status(&set(), &attached, LbKind::Alb, true);
        assert!(!identical(&s, &a));
        let mut reordered = a.clone();
        reordered.listeners.as_mut().unwrap().reverse();
        reordered.conditions.as_mut().unwrap().reverse();
        assert!(identical(&a, &reordered));
    }
}
