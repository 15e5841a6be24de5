//! The Ingress builder's top: one IngressGroup + cluster objects + config → `Stack`, with no
//! network, in steps — ACM certificates to create (`certificate`), listen ports (`ports`), load
//! balancer settings (`lb_settings`), the load balancer (`load_balancer`), listeners, rules and
//! their target groups (`listeners`), the frontend NLB (`frontend_nlb`).
//!
//! Error isolation (differs from upstream on purpose, LBC#3870/#4597): a failure that concerns
//! only one Ingress's own configuration (bad annotation value, bad path, missing Service when not
//! tolerated, bad `actions.*`/`conditions.*`, invalid target group settings, bad `group.order`)
//! excludes that Ingress: the stack is rebuilt without it and the error is listed in
//! `Stack::excluded_members`. Upstream fails the whole group instead. Failures that involve
//! several members or the group as a whole keep upstream's behaviour and fail the build:
//! conflicting exclusive settings (scheme, ip-address-type, subnets, security-groups, load
//! balancer name/attributes, tags, ssl-redirect port, WAF/Shield), listen-port merge conflicts
//! (protocol, inbound CIDRs, ssl-policy, mTLS), two default backends, ssl-redirect to a port
//! that is not an HTTPS listener, and deletion protection on a deleted member. If every member
//! would be excluded the first member error is returned instead of an empty stack, so a broken
//! edit can never make the deployer delete the load balancer.

use std::collections::BTreeMap;

use super::frontend_nlb::{self, FrontendInputs};
use super::lb_settings::LbSettings;
use super::listener::{self, PortConfig};
use super::load_balancer;
use super::ports::GroupPorts;
use super::rule::{self, DraftRule};
use super::target_group::TargetGroupContext;
use crate::annotations::{self as ann, suffix};
use crate::model::config::ModelConfig;
use crate::model::env::BuildEnv;
use crate::model::error::ModelError;
use crate::model::group::{ClassifiedIngress, ClusterObjects, IngressGroup};
use crate::model::tags::TagContext;
use crate::model::types::*;

mod listeners;
use listeners::Builder;

/// Builds the stack for `group`. See the module docs for which failures exclude one member.
pub fn build_stack(
    group: &IngressGroup<'_>,
    objs: &ClusterObjects,
    cfg: &ModelConfig,
    env: &BuildEnv,
) -> Result<Stack, ModelError> {
    for ing in &group.inactive_members {
        if ing.metadata.deletion_timestamp.is_some() {
            let a = ing.metadata.annotations.clone().unwrap_or_default();
            let attrs = ann::string_map(&a, suffix::LOAD_BALANCER_ATTRIBUTES)
                .map_err(|e| ModelError::Group(e.message))?;
            if let Some(v) = attrs.and_then(|m| m.get("deletion_protection.enabled").cloned()) {
                if ann::go_parse_bool(&v) == Some(true) {
                    let name = ing.metadata.name.clone().unwrap_or_default();
                    return Err(ModelError::Group(format!(
                        "deletion_protection is enabled, cannot delete the ingress: {name}"
                    )));
                }
            }
        }
    }
    let mut members: Vec<ClassifiedIngress<'_>> = group.members.clone();
    let mut excluded = group.excluded.clone();
    let had_members = !members.is_empty();
    loop {
        match try_build(group, &members, objs, cfg, env) {
            Ok(mut stack) => {
                keeps_frontend_nlb(group, &stack, &excluded)?;
                excluded.sort();
                stack.excluded_members = excluded;
                return Ok(stack);
            }
            Err(ModelError::Ingress {
                ingress,
                annotation,
                message,
            }) => {
                let before = members.len();
                members.retain(|m| m.key() != ingress);
                let err = ModelError::Ingress {
                    ingress: ingress.clone(),
                    annotation: annotation.clone(),
                    message: message.clone(),
                };
                if members.len() == before || (had_members && members.is_empty()) {
                    return Err(err);
                }
                excluded.push(ExcludedMember {
                    ingress,
                    annotation,
                    error: message,
                });
            }
            Err(e) => return Err(e),
        }
    }
}

/// A member that turns the frontend NLB on and is left out for its own error must not take
/// the group's frontend NLB down with it: the group fails with that member's error instead.
fn keeps_frontend_nlb(
    group: &IngressGroup<'_>,
    stack: &Stack,
    excluded: &[ExcludedMember],
) -> Result<(), ModelError> {
    if stack.frontend_nlb.is_some() {
        return Ok(());
    }
    let enabling = excluded.iter().find(|x| {
        group
            .members
            .iter()
            .any(|m| m.key() == x.ingress && frontend_nlb::member_enables(m))
    });
    match enabling {
        Some(x) => Err(ModelError::Ingress {
            ingress: x.ingress.clone(),
            annotation: x.annotation.clone(),
            message: x.error.clone(),
        }),
        None => Ok(()),
    }
}

fn try_build(
    group: &IngressGroup<'_>,
    members: &[ClassifiedIngress<'_>],
    objs: &ClusterObjects,
    cfg: &ModelConfig,
    env: &BuildEnv,
) -> Result<Stack, ModelError> {
    let tags = TagContext {
        cfg,
        group: &group.id,
        prefix: crate::model::tags::INGRESS_TAG_PREFIX,
    };
    let mut stack = Stack {
        stack_id: group.id.as_string(),
        members: members.iter().map(|m| m.key()).collect(),
        ..Default::default()
    };
    if members.is_empty() {
        return Ok(stack);
    }
    let certificates = super::certificate::build(members, cfg, &tags)?;
    let ports = GroupPorts::collect(members, cfg, &certificates)?;
    stack.certificates = certificates;
    let settings = LbSettings::collect(members, cfg, &tags)?;
    let lb = load_balancer::build_load_balancer(
        &settings,
        members,
        &ports.merged,
        cfg,
        &tags,
        env,
        &group.id,
        &mut stack,
    )?;
    let ssl_redirect = listener::ssl_redirect_port(members, &ports.merged)?;
    let tg_ctx = TargetGroupContext {
        tags: &tags,
        group: &group.id,
        lb_ip_address_type: lb.ip_address_type,
        networking_source: networking_source(&stack, cfg),
    };
    stack.load_balancer = Some(lb);
    let mut b = Builder {
        objs,
        cfg,
        tags: &tags,
        tg_ctx,
        tgs: BTreeMap::new(),
    };
    let mut rules_by_port = b.rules_by_port(members, &ports, ssl_redirect)?;
    for (port, pc) in &ports.merged {
        let on_port = ports.members_on(members, *port);
        stack
            .listeners
            .push(b.listener(*port, pc, &on_port, ssl_redirect)?);
        let drafts = rules_by_port.remove(port).unwrap_or_default();
        stack
            .listener_rules
            .extend(prioritised(*port, pc, drafts, &tags));
    }
    for (_, (tg, tgb)) in b.tgs {
        stack.target_groups.push(tg);
        stack.target_group_bindings.push(tgb);
    }
    if let Some(alb) = &stack.load_balancer {
        let inputs = FrontendInputs {
            cfg,
            tags: &tags,
            env,
            alb,
            alb_user_tags: &settings.user_tags,
            ports_per_member: &ports.per_member,
        };
        stack.frontend_nlb = frontend_nlb::build(members, &inputs)?;
    }
    if !cfg.gate("WeightedTargetGroups") && stack.forwards_to_several_target_groups() {
        return Err(ModelError::Group(WEIGHTED_TARGET_GROUPS_DISABLED.into()));
    }
    stack.warnings.sort();
    stack.warnings.dedup();
    Ok(stack)
}

/// Where target group bindings admit traffic from: the backend SG, or the managed SG when the
/// backend SG feature is off.
fn networking_source(stack: &Stack, cfg: &ModelConfig) -> Option<Token> {
    if stack.managed_security_group.is_some() && !cfg.enable_backend_sg {
        Some(Token::ManagedSecurityGroupId)
    } else if stack.backend_security_group.is_some() {
        Some(Token::BackendSecurityGroupId)
    } else {
        None
    }
}

/// A port's rules after upstream's optimiser, numbered by priority from 1.
fn prioritised(
    port: i32,
    pc: &PortConfig,
    drafts: Vec<DraftRule>,
    tags: &TagContext<'_>,
) -> Vec<ListenerRule> {
    let protocol = pc.protocol.unwrap_or(Protocol::Http);
    let optimized = rule::optimize(port, protocol, drafts);
    let numbered = optimized.into_iter().zip(1..);
    numbered
        .map(|(r, priority)| {
            let id = format!("{port}:{priority}");
            ListenerRule {
                tags: tags.listener_tags(&id, r.tags),
                id,
                listener_arn: rule::listener_token(port),
                priority,
                ingress: r.ingress,
                conditions: r.conditions,
                actions: r.actions,
                transforms: r.transforms,
            }
        })
        .collect()
}
