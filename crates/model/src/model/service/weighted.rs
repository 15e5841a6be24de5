//! Weighted NLB target groups: upstream's `service.beta.kubernetes.io/actions.<PROTOCOL>-<port>`
//! annotation (`model_build_listener.go`; read by `weighted_input`) turned into the listener's
//! forward to the Service's own target group (weight `baseServiceWeight`) plus one target group
//! per entry: a `targetGroupARN` as written (never ours to change), or the target group of a
//! port of another Service of the namespace, built with this Service's annotations.

use std::collections::BTreeSet;

use k8s_openapi::api::core::v1::ServicePort;

use super::annotations::{key, sfx};
use super::load_balancer::LbFacts;
use super::target_groups;
use super::task::Task;
use super::weighted_input::ActionInput;
use crate::annotations::go_json;
use crate::model::cluster::lookup_service_port;
use crate::model::error::Fail;
use crate::model::types::*;

/// Upstream's feature gate: off, a forward to more than one target group is refused.
const GATE: &str = "WeightedTargetGroups";

/// Full key of the weighted action of the listener `<protocol>-<port>` (its final protocol:
/// `TLS-443`, `TCP_UDP-53`, `QUIC-443`).
fn action_key(listener: Protocol, port: i32) -> String {
    key(&format!(
        "{}.{}-{port}",
        sfx::ACTIONS_PREFIX,
        listener.as_str()
    ))
}

/// The annotation of listener `<protocol>-<port>`, decoded and validated; `None` when absent.
fn parse(t: &Task<'_>, k: &str) -> Result<Option<ActionInput>, Fail> {
    let Some(raw) = t.a.0.get(k) else {
        return Ok(None);
    };
    let action: ActionInput = go_json::from_str(raw).map_err(|e| {
        Fail::at(
            k,
            format!("failed to parse json annotation, {k}: {raw}: {e}"),
        )
    })?;
    action.validate().map_err(|e| Fail::at(k, e))?;
    Ok(Some(action))
}

/// The default action of the listener on Service port `p`: a forward to the port's target
/// group, or the weighted forward its `actions.*` annotation asks for. Target groups (and
/// their bindings) are added to `stack`; `used` collects the annotation keys read.
#[allow(clippy::too_many_arguments)]
pub(super) fn default_action(
    t: &Task<'_>,
    facts: &LbFacts,
    p: &ServicePort,
    listener: Protocol,
    tg_protocol: Protocol,
    stack: &mut Stack,
    warnings: &mut Vec<Warning>,
    used: &mut BTreeSet<String>,
) -> Result<Action, Fail> {
    let k = action_key(listener, p.port);
    let Some(action) = parse(t, &k)? else {
        let own = target_groups::ensure(t, p, tg_protocol, facts, None, stack, warnings)?;
        return Ok(forward_to(own));
    };
    used.insert(k.clone());
    // Upstream reads `forwardConfig.targetGroups` without a check (a Go nil dereference):
    // refused here instead.
    let fc = action
        .forward_config
        .as_ref()
        .ok_or_else(|| Fail::at(&k, "missing ForwardConfig"))?;
    // Upstream loads every named Service before building any target group; the lookup is its
    // cached client's, whose NotFound names the kind.
    let env = t.env;
    for name in fc
        .target_groups
        .iter()
        .filter_map(|e| e.service_name.as_ref())
    {
        if !env.backend_services.contains_key(name) {
            return Err(Fail::at(&k, format!("Service \"{name}\" not found")));
        }
    }
    let own = target_groups::ensure(t, p, tg_protocol, facts, None, stack, warnings)?;
    let mut tuples = vec![TargetGroupTuple {
        target_group_arn: Token::TargetGroupArn(own),
        weight: fc.base_service_weight,
    }];
    for entry in &fc.target_groups {
        let arn = match (&entry.target_group_arn, &entry.service_name, &entry.service_port) {
            (Some(arn), _, _) => Token::Literal(arn.clone()),
            (None, Some(name), Some(port)) => {
                let Some(backend) = env.backend_services.get(name) else {
                    return Err(Fail::at(&k, format!("Service \"{name}\" not found")));
                };
                let bt = t.for_backend(backend);
                let bp = lookup_service_port(backend, port).map_err(|f| Fail::at(&k, f.message))?;
                let decrypt = entry.decrypt == Some(true);
                if decrypt && listener != Protocol::Tls {
                    warnings.push(Warning {
                        ingress: None,
                        annotation: Some(k.clone()),
                        message: format!(
                            "decrypt applies to TLS listeners only: the target group of {name}:{} takes the listener's protocol {}",
                            bp.port,
                            listener.as_str()
                        ),
                    });
                }
                // A backend's target group takes the listener's protocol (upstream: not the
                // `backend-protocol` rule of the Service's own), TCP for a decrypting TLS one.
                let protocol = if listener == Protocol::Tls && decrypt {
                    Protocol::Tcp
                } else {
                    listener
                };
                let id = target_groups::ensure(
                    &bt,
                    bp,
                    protocol,
                    facts,
                    Some(t.uid),
                    stack,
                    warnings,
                )?;
                Token::TargetGroupArn(id)
            }
            // `validate` leaves no other shape.
            _ => {
                return Err(Fail::at(
                    &k,
                    "invalid ForwardConfig: invalid TargetGroupTuple: precisely one of targetGroupARN and serviceName can be specified",
                ))
            }
        };
        tuples.push(TargetGroupTuple {
            target_group_arn: arn,
            weight: entry.weight,
        });
    }
    let stickiness = fc
        .target_group_stickiness_config
        .as_ref()
        .map(|s| StickinessConfig {
            enabled: s.enabled,
            duration_seconds: None,
        });
    if !t.cfg.gate(GATE) {
        // Upstream's deployer refuses a forward to several target groups with the gate off, and
        // sends a lone one as the action's TargetGroupArn: no weight, no stickiness.
        if tuples.len() > 1 {
            return Err(Fail::at(&k, WEIGHTED_TARGET_GROUPS_DISABLED));
        }
        if stickiness.is_some() {
            warnings.push(Warning {
                ingress: None,
                annotation: Some(k.clone()),
                message: format!(
                    "targetGroupStickinessConfig is not applied while the feature gate {GATE} is off"
                ),
            });
        }
        let lone = tuples.remove(0).target_group_arn;
        return Ok(Action::Forward {
            config: ForwardConfig {
                target_groups: vec![TargetGroupTuple {
                    target_group_arn: lone,
                    weight: None,
                }],
                target_group_stickiness_config: None,
            },
        });
    }
    Ok(Action::Forward {
        config: ForwardConfig {
            target_groups: tuples,
            target_group_stickiness_config: stickiness,
        },
    })
}

/// A plain forward to target group `id` (no weight, as upstream's single-tuple action).
fn forward_to(id: String) -> Action {
    Action::Forward {
        config: ForwardConfig {
            target_groups: vec![TargetGroupTuple {
                target_group_arn: Token::TargetGroupArn(id),
                weight: None,
            }],
            target_group_stickiness_config: None,
        },
    }
}

/// Warnings for `actions.*` annotations no listener read: upstream ignores them silently
/// (most often a listener whose final protocol differs, `TCP-443` on a TLS listener).
pub(super) fn unread(t: &Task<'_>, used: &BTreeSet<String>, listeners: &[String]) -> Vec<Warning> {
    let prefix = key(&format!("{}.", sfx::ACTIONS_PREFIX));
    t.a.0
        .keys()
        .filter(|k| k.starts_with(&prefix) && !used.contains(*k))
        .map(|k| Warning {
            ingress: None,
            annotation: Some(k.clone()),
            message: format!(
                "no listener of this Service is {}: the action applies to the listener of that final protocol and port (listeners: {})",
                &k[prefix.len()..],
                listeners.join(", ")
            ),
        })
        .collect()
}

#[cfg(test)]
#[path = "weighted_tests.rs"]
mod tests;
