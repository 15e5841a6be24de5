//! The model builder: one IngressGroup + cluster objects + config → `Stack`, with no network.
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

use super::config::ModelConfig;
use super::error::{Fail, ModelError};
use super::group::{ClassifiedIngress, ClusterObjects, IngressGroup};
use super::lb::{self, LbSettings};
use super::listen::{self, PortConfig};
use super::rules::{self, DraftRule};
use super::subnets::SubnetInfo;
use super::tags::TagContext;
use super::target_group::{self, TargetGroupContext};
use super::types::*;
use crate::annotations::{self as ann, suffix};

/// Facts from outside the Kubernetes objects that refine the stack (all optional).
#[derive(Debug, Clone, Default)]
pub struct BuildEnv {
    /// Subnets of the VPC; when absent the stack shows the discovery criteria.
    pub subnets: Option<Vec<SubnetInfo>>,
    /// The stack's existing load balancer (scheme, subnet ids): same scheme keeps its subnets.
    pub existing_load_balancer: Option<(LoadBalancerScheme, Vec<String>)>,
}

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
        prefix: super::tags::INGRESS_TAG_PREFIX,
    };
    let mut stack = Stack {
        stack_id: group.id.as_string(),
        members: members.iter().map(|m| m.key()).collect(),
        ..Default::default()
    };
    if members.is_empty() {
        return Ok(stack);
    }
    // 1. Listener ports per member, merged per port.
    let mut per_port: BTreeMap<i32, Vec<(String, PortConfig)>> = BTreeMap::new();
    let mut member_ports: Vec<Vec<i32>> = Vec::new();
    for m in members {
        let ports = listen::member_ports(m).map_err(|f| f.on(&m.key()))?;
        if !cfg.model_undeployed {
            super::not_deployed::listener_features(&ports).map_err(|f| f.on(&m.key()))?;
        }
        member_ports.push(ports.keys().copied().collect());
        for (p, c) in ports {
            per_port.entry(p).or_default().push((m.key(), c));
        }
    }
    let mut merged: BTreeMap<i32, PortConfig> = BTreeMap::new();
    for (port, cfgs) in &per_port {
        let refs: Vec<(String, &PortConfig)> = cfgs.iter().map(|(k, c)| (k.clone(), c)).collect();
        merged.insert(
            *port,
            listen::merge(*port, &refs, &cfg.default_ssl_policy).map_err(ModelError::Group)?,
        );
    }
    // 2. Load balancer, security groups, addons.
    let settings = LbSettings::collect(members, cfg, &tags)?;
    let lb = lb::build_load_balancer(
        &settings, members, &merged, cfg, &tags, env, &group.id, &mut stack,
    )?;
    let ip_type = lb.ip_address_type;
    stack.load_balancer = Some(lb);
    // 3. SSL redirect.
    let ssl_redirect = super::lb_extras::ssl_redirect_port(members, &merged)?;
    // 4. Rules and target groups, member by member in group order.
    let networking_source = if stack.managed_security_group.is_some() && !cfg.enable_backend_sg {
        Some(Token::ManagedSecurityGroupId)
    } else if stack.backend_security_group.is_some() {
        Some(Token::BackendSecurityGroupId)
    } else {
        None
    };
    let tg_ctx = TargetGroupContext {
        tags: &tags,
        group: &group.id,
        lb_ip_address_type: ip_type,
        networking_source,
    };
    let mut rules_by_port: BTreeMap<i32, Vec<DraftRule>> = BTreeMap::new();
    let mut tgs: BTreeMap<String, (TargetGroup, TargetGroupBindingResource)> = BTreeMap::new();
    let mut default_backends: Vec<&ClassifiedIngress<'_>> = Vec::new();
    for (m, ports) in members.iter().zip(&member_ports) {
        if m.ingress
            .spec
            .as_ref()
            .and_then(|s| s.default_backend.as_ref())
            .is_some()
        {
            default_backends.push(m);
        }
        for port in ports {
            let protocol = merged[port].protocol.unwrap_or(Protocol::Http);
            if ssl_redirect.is_some() && protocol == Protocol::Http {
                continue;
            }
            let drafts = member_rules(m, protocol, objs, cfg, &tg_ctx, &tags, &mut tgs)
                .map_err(|f| f.on(&m.key()))?;
            rules_by_port.entry(*port).or_default().extend(drafts);
        }
    }
    if default_backends.len() > 1 {
        let keys: Vec<String> = default_backends.iter().map(|m| m.key()).collect();
        return Err(ModelError::Group(format!(
            "multiple ingress defined default backend: [{}]",
            keys.join(" ")
        )));
    }
    // 5. Listeners (default actions) and prioritised rules.
    for (port, pc) in &merged {
        let protocol = pc.protocol.unwrap_or(Protocol::Http);
        let on_port: Vec<ClassifiedIngress<'_>> = members
            .iter()
            .zip(&member_ports)
            .filter(|(_, ps)| ps.contains(port))
            .map(|(m, _)| *m)
            .collect();
        let default_actions = match (ssl_redirect, protocol) {
            (Some(https), Protocol::Http) => vec![Action::Redirect {
                config: RedirectConfig {
                    port: Some(https.to_string()),
                    protocol: Some("HTTPS".into()),
                    status_code: "HTTP_301".into(),
                    ..Default::default()
                },
            }],
            _ => match on_port.iter().find(|m| {
                m.ingress
                    .spec
                    .as_ref()
                    .and_then(|s| s.default_backend.as_ref())
                    .is_some()
            }) {
                None => vec![Action::fixed("404", None)],
                Some(m) => {
                    let b = m
                        .ingress
                        .spec
                        .as_ref()
                        .and_then(|s| s.default_backend.as_ref())
                        .cloned()
                        .unwrap_or_default();
                    actions_for(m, &b, protocol, objs, cfg, &tg_ctx, &mut tgs)
                        .map_err(|f| f.on(&m.key()))?
                        .0
                }
            },
        };
        let user = tags
            .group_user_tags(&on_port)
            .map_err(|(k, f)| f.on(&k))?
            .map_err(ModelError::Group)?;
        let attributes = super::lb_extras::listener_attributes(&on_port, protocol, *port)?;
        stack.listeners.push(Listener {
            id: port.to_string(),
            load_balancer_arn: Token::LoadBalancerArn,
            port: *port,
            protocol,
            default_actions,
            certificates: pc.certificates.clone(),
            certificate_discovery_hosts: pc
                .discovery_hosts
                .as_ref()
                .map(|h| h.iter().cloned().collect()),
            ssl_policy: pc.ssl_policy.clone(),
            mutual_authentication: pc.mtls.clone(),
            alpn_policy: None,
            attributes,
            tags: tags.listener_tags(&port.to_string(), user),
        });
        let drafts = rules_by_port.remove(port).unwrap_or_default();
        for (i, r) in rules::optimize(*port, protocol, drafts)
            .into_iter()
            .enumerate()
        {
            let id = format!("{port}:{}", i + 1);
            stack.listener_rules.push(ListenerRule {
                tags: tags.listener_tags(&id, r.tags),
                id,
                listener_arn: rules::listener_token(*port),
                priority: i as i32 + 1,
                ingress: r.ingress,
                conditions: r.conditions,
                actions: r.actions,
                transforms: r.transforms,
            });
        }
    }
    for (_, (tg, tgb)) in tgs {
        stack.target_groups.push(tg);
        stack.target_group_bindings.push(tgb);
    }
    stack.warnings.sort();
    stack.warnings.dedup();
    Ok(stack)
}

#[allow(clippy::too_many_arguments)]
fn member_rules(
    m: &ClassifiedIngress<'_>,
    protocol: Protocol,
    objs: &ClusterObjects,
    cfg: &ModelConfig,
    tg_ctx: &TargetGroupContext<'_>,
    tags: &TagContext<'_>,
    tgs: &mut BTreeMap<String, (TargetGroup, TargetGroupBindingResource)>,
) -> Result<Vec<DraftRule>, Fail> {
    let mut out = Vec::new();
    let use_regex = ann::bool(m.annotations(), suffix::USE_REGEX_PATH_MATCH)?.unwrap_or(false);
    let rule_tags = tags.ingress_user_tags(m)?;
    for rule in m
        .ingress
        .spec
        .as_ref()
        .and_then(|s| s.rules.as_ref())
        .into_iter()
        .flatten()
    {
        let Some(http) = &rule.http else { continue };
        for path in rules::sort_paths(&http.paths)? {
            let (actions, eb_conditions, transforms) =
                actions_for(m, &path.backend, protocol, objs, cfg, tg_ctx, tgs)?;
            let patterns = match path.path.as_deref().filter(|p| !p.is_empty()) {
                Some(p) => Some(rules::path_patterns(p, &path.path_type, use_regex)?),
                None => None,
            };
            let conditions = rules::conditions(rule.host.as_deref(), patterns, &eb_conditions)?;
            out.push(DraftRule {
                ingress: m.key(),
                conditions,
                actions,
                transforms,
                tags: rule_tags.clone(),
            });
        }
    }
    Ok(out)
}

type Built = (
    Vec<Action>,
    Vec<super::backend::ConditionInput>,
    Vec<Transform>,
);

#[allow(clippy::too_many_arguments)]
fn actions_for(
    m: &ClassifiedIngress<'_>,
    backend: &k8s_openapi::api::networking::v1::IngressBackend,
    protocol: Protocol,
    objs: &ClusterObjects,
    cfg: &ModelConfig,
    tg_ctx: &TargetGroupContext<'_>,
    tgs: &mut BTreeMap<String, (TargetGroup, TargetGroupBindingResource)>,
) -> Result<Built, Fail> {
    let ns = m.namespace().to_string();
    let lookup = |name: &str| {
        objs.service(&ns, name)
            .map(|s| s.metadata.annotations.as_ref())
    };
    let eb = rules::enhanced_backend(
        m,
        backend,
        cfg.tolerate_non_existent_backend_service,
        cfg.tolerate_non_existent_backend_action,
        &lookup,
    )?;
    let mut actions = Vec::new();
    if protocol == Protocol::Https {
        if eb.auth.is_some() && eb.jwt.is_some() {
            return Err(Fail::msg(
                "authentication and jwt validation can't both be configured",
            ));
        }
        if let Some(auth) = &eb.auth {
            // Cognito is deployed; OIDC needs its client secret read, which is not done yet.
            if matches!(auth, Action::AuthenticateOidc { .. }) {
                return Err(super::not_deployed::refuse(
                    ann::key(suffix::AUTH_IDP_OIDC),
                    "OIDC authentication (auth-type oidc, client secret from a Secret)",
                ));
            }
            actions.push(auth.clone());
        }
        if let Some(jwt) = &eb.jwt {
            actions.push(Action::JwtValidation {
                config: jwt.clone(),
            });
        }
    }
    let a = &eb.action;
    let action = match a.action_type.as_str() {
        "fixed-response" => Action::FixedResponse {
            config: a
                .fixed_response_config
                .clone()
                .ok_or_else(|| Fail::msg("missing FixedResponseConfig"))?,
        },
        "redirect" => Action::Redirect {
            config: a
                .redirect_config
                .clone()
                .ok_or_else(|| Fail::msg("missing RedirectConfig"))?,
        },
        "forward" => {
            let fc = a
                .forward_config
                .as_ref()
                .ok_or_else(|| Fail::msg("missing ForwardConfig"))?;
            let mut tuples = Vec::new();
            for t in &fc.target_groups {
                let arn = if let Some(arn) = &t.target_group_arn {
                    Token::Literal(arn.clone())
                } else if let Some(name) = &t.target_group_name {
                    // Upstream looks the name up in ELBv2 while building; this build does not.
                    return Err(super::not_deployed::refuse(
                        ann::key(&format!(
                            "{}.{}",
                            suffix::ACTIONS_PREFIX,
                            backend
                                .service
                                .as_ref()
                                .map(|s| s.name.as_str())
                                .unwrap_or_default()
                        )),
                        &format!("a forward to targetGroupName {name} (an ELBv2 lookup by name)"),
                    ));
                } else {
                    let svc_name = t.service_name.clone().unwrap_or_default();
                    let svc = objs
                        .service(&ns, &svc_name)
                        .ok_or_else(|| Fail::msg(format!("services \"{svc_name}\" not found")))?;
                    let port = t.service_port.clone().unwrap_or(
                        k8s_openapi::apimachinery::pkg::util::intstr::IntOrString::Int(0),
                    );
                    let id = target_group::resource_id(m, &svc_name, &port);
                    if !tgs.contains_key(&id) {
                        let built = target_group::build(tg_ctx, m, svc, &port)?;
                        tgs.insert(id.clone(), built);
                    }
                    Token::TargetGroupArn(id)
                };
                tuples.push(TargetGroupTuple {
                    target_group_arn: arn,
                    weight: t.weight,
                });
            }
            Action::Forward {
                config: ForwardConfig {
                    target_groups: tuples,
                    target_group_stickiness_config: fc.target_group_stickiness_config.clone(),
                },
            }
        }
        other => return Err(Fail::msg(format!("unknown action type: {other}"))),
    };
    actions.push(action);
    Ok((actions, eb.conditions, eb.transforms))
}
