//! Listeners, listener rules and their actions of one Ingress group, and the target groups the
//! actions forward to (built once per Service port).

use std::collections::BTreeMap;

use k8s_openapi::api::networking::v1::IngressBackend;
use k8s_openapi::apimachinery::pkg::util::intstr::IntOrString;

use super::super::backend::{ActionInput, ConditionInput, TupleInput};
use super::super::listener::{self, PortConfig};
use super::super::ports::GroupPorts;
use super::super::rule::{self, DraftRule, EnhancedBackend};
use super::super::target_group::{self, TargetGroupContext};
use crate::annotations::{self as ann, suffix};
use crate::model::config::ModelConfig;
use crate::model::error::{Fail, ModelError};
use crate::model::group::{ClassifiedIngress, ClusterObjects};
use crate::model::tags::TagContext;
use crate::model::types::*;

/// Builds listeners, rules and actions; collects the target groups the actions forward to.
pub(super) struct Builder<'a> {
    pub objs: &'a ClusterObjects,
    pub cfg: &'a ModelConfig,
    pub tags: &'a TagContext<'a>,
    pub tg_ctx: TargetGroupContext<'a>,
    pub tgs: BTreeMap<String, (TargetGroup, TargetGroupBindingResource)>,
}

impl Builder<'_> {
    /// Each member's rules (in group order) on each of its ports; HTTP ports that redirect to
    /// HTTPS get none. At most one member may set a default backend.
    pub(super) fn rules_by_port(
        &mut self,
        members: &[ClassifiedIngress<'_>],
        ports: &GroupPorts,
        ssl_redirect: Option<i32>,
    ) -> Result<BTreeMap<i32, Vec<DraftRule>>, ModelError> {
        let mut rules_by_port: BTreeMap<i32, Vec<DraftRule>> = BTreeMap::new();
        for (m, member_ports) in members.iter().zip(&ports.per_member) {
            for port in member_ports {
                let protocol = ports.merged[port].protocol.unwrap_or(Protocol::Http);
                if ssl_redirect.is_some() && protocol == Protocol::Http {
                    continue;
                }
                let drafts = self.member_rules(m, protocol).map_err(|f| f.on(&m.key()))?;
                rules_by_port.entry(*port).or_default().extend(drafts);
            }
        }
        let with_default: Vec<String> = members
            .iter()
            .filter(|m| default_backend(m).is_some())
            .map(|m| m.key())
            .collect();
        if with_default.len() > 1 {
            return Err(ModelError::Group(format!(
                "multiple ingress defined default backend: [{}]",
                with_default.join(" ")
            )));
        }
        Ok(rules_by_port)
    }

    /// One listener: its default action (redirect to HTTPS, the default backend, or 404),
    /// certificates, policies, attributes and tags.
    pub(super) fn listener(
        &mut self,
        port: i32,
        pc: &PortConfig,
        on_port: &[ClassifiedIngress<'_>],
        ssl_redirect: Option<i32>,
    ) -> Result<Listener, ModelError> {
        let protocol = pc.protocol.unwrap_or(Protocol::Http);
        let default_actions = self.default_actions(protocol, on_port, ssl_redirect)?;
        let user = self
            .tags
            .group_user_tags(on_port)
            .map_err(|(k, f)| f.on(&k))?
            .map_err(ModelError::Group)?;
        let attributes = listener::listener_attributes(on_port, protocol, port)?;
        Ok(Listener {
            id: port.to_string(),
            load_balancer_arn: Token::LoadBalancerArn,
            port,
            protocol,
            default_actions,
            certificates: pc.certificates.clone(),
            certificate_discovery: pc.certificate_discovery.clone(),
            ssl_policy: pc.ssl_policy.clone(),
            mutual_authentication: pc.mtls.clone(),
            alpn_policy: None,
            attributes,
            tags: self.tags.listener_tags(&port.to_string(), user),
        })
    }

    fn default_actions(
        &mut self,
        protocol: Protocol,
        on_port: &[ClassifiedIngress<'_>],
        ssl_redirect: Option<i32>,
    ) -> Result<Vec<Action>, ModelError> {
        if let (Some(https), Protocol::Http) = (ssl_redirect, protocol) {
            return Ok(vec![Action::Redirect {
                config: RedirectConfig {
                    port: Some(https.to_string()),
                    protocol: Some("HTTPS".into()),
                    status_code: "HTTP_301".into(),
                    ..Default::default()
                },
            }]);
        }
        let with_default = on_port.iter().find_map(|m| Some((m, default_backend(m)?)));
        let Some((m, backend)) = with_default else {
            return Ok(vec![Action::fixed("404", None)]);
        };
        let built = self
            .actions_for(m, backend, protocol)
            .map_err(|f| f.on(&m.key()))?;
        Ok(built.0)
    }

    fn member_rules(
        &mut self,
        m: &ClassifiedIngress<'_>,
        protocol: Protocol,
    ) -> Result<Vec<DraftRule>, Fail> {
        let mut out = Vec::new();
        let use_regex = ann::bool(m.annotations(), suffix::USE_REGEX_PATH_MATCH)?.unwrap_or(false);
        let rule_tags = self.tags.ingress_user_tags(m)?;
        for rule in m
            .ingress
            .spec
            .as_ref()
            .and_then(|s| s.rules.as_ref())
            .into_iter()
            .flatten()
        {
            let Some(http) = &rule.http else { continue };
            for path in rule::sort_paths(&http.paths)? {
                let (actions, eb_conditions, transforms) =
                    self.actions_for(m, &path.backend, protocol)?;
                let patterns = match path.path.as_deref().filter(|p| !p.is_empty()) {
                    Some(p) => Some(rule::path_patterns(p, &path.path_type, use_regex)?),
                    None => None,
                };
                let conditions = rule::conditions(rule.host.as_deref(), patterns, &eb_conditions)?;
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

    /// A backend's actions (authentication first on HTTPS), its extra conditions and transforms.
    fn actions_for(
        &mut self,
        m: &ClassifiedIngress<'_>,
        backend: &IngressBackend,
        protocol: Protocol,
    ) -> Result<Built, Fail> {
        let (objs, ns) = (self.objs, m.namespace().to_string());
        let lookup = |name: &str| {
            objs.service(&ns, name)
                .map(|s| s.metadata.annotations.as_ref())
        };
        let eb = rule::enhanced_backend(
            m,
            backend,
            self.cfg.tolerate_non_existent_backend_service,
            self.cfg.tolerate_non_existent_backend_action,
            &lookup,
        )?;
        let mut actions = match protocol {
            Protocol::Https => auth_actions(&eb, objs)?,
            _ => Vec::new(),
        };
        actions.push(self.final_action(m, backend, &eb.action)?);
        Ok((actions, eb.conditions, eb.transforms))
    }

    fn final_action(
        &mut self,
        m: &ClassifiedIngress<'_>,
        backend: &IngressBackend,
        a: &ActionInput,
    ) -> Result<Action, Fail> {
        let missing = |what: &str| Fail::msg(format!("missing {what}"));
        match a.action_type.as_str() {
            "fixed-response" => Ok(Action::FixedResponse {
                config: a
                    .fixed_response_config
                    .clone()
                    .ok_or_else(|| missing("FixedResponseConfig"))?,
            }),
            "redirect" => Ok(Action::Redirect {
                config: a
                    .redirect_config
                    .clone()
                    .ok_or_else(|| missing("RedirectConfig"))?,
            }),
            "forward" => {
                let fc = a
                    .forward_config
                    .as_ref()
                    .ok_or_else(|| missing("ForwardConfig"))?;
                let target_groups = fc
                    .target_groups
                    .iter()
                    .map(|t| self.forward_target(m, backend, t))
                    .collect::<Result<_, _>>()?;
                Ok(Action::Forward {
                    config: ForwardConfig {
                        target_groups,
                        target_group_stickiness_config: fc.target_group_stickiness_config.clone(),
                    },
                })
            }
            other => Err(Fail::msg(format!("unknown action type: {other}"))),
        }
    }

    /// One weighted target: a literal ARN, or the target group built for a Service port.
    fn forward_target(
        &mut self,
        m: &ClassifiedIngress<'_>,
        backend: &IngressBackend,
        t: &TupleInput,
    ) -> Result<TargetGroupTuple, Fail> {
        let arn = if let Some(arn) = &t.target_group_arn {
            Token::Literal(arn.clone())
        } else if let Some(name) = &t.target_group_name {
            // Upstream looks the name up in ELBv2 while building; this build does not.
            let svc = backend.service.as_ref().map(|s| s.name.as_str());
            return Err(super::super::not_deployed::refuse(
                ann::key(&format!(
                    "{}.{}",
                    suffix::ACTIONS_PREFIX,
                    svc.unwrap_or_default()
                )),
                &format!("a forward to targetGroupName {name} (an ELBv2 lookup by name)"),
            ));
        } else {
            Token::TargetGroupArn(self.target_group(m, t)?)
        };
        Ok(TargetGroupTuple {
            target_group_arn: arn,
            weight: t.weight,
        })
    }

    /// The id of the target group for a Service port, built on first use.
    fn target_group(&mut self, m: &ClassifiedIngress<'_>, t: &TupleInput) -> Result<String, Fail> {
        let svc_name = t.service_name.clone().unwrap_or_default();
        let svc = self
            .objs
            .service(m.namespace(), &svc_name)
            .ok_or_else(|| Fail::msg(format!("services \"{svc_name}\" not found")))?;
        let port = t.service_port.clone().unwrap_or(IntOrString::Int(0));
        let id = target_group::resource_id(m, &svc_name, &port);
        if !self.tgs.contains_key(&id) {
            let built = target_group::build(&self.tg_ctx, m, svc, &port)?;
            self.tgs.insert(id.clone(), built);
        }
        Ok(id)
    }
}

type Built = (Vec<Action>, Vec<ConditionInput>, Vec<Transform>);

/// The member's `spec.defaultBackend`, if any.
fn default_backend<'i>(m: &ClassifiedIngress<'i>) -> Option<&'i IngressBackend> {
    m.ingress
        .spec
        .as_ref()
        .and_then(|s| s.default_backend.as_ref())
}

/// Authentication (Cognito, or OIDC with its client credentials read from the Secret) or JWT
/// validation of an HTTPS backend; never both.
fn auth_actions(eb: &EnhancedBackend, objs: &ClusterObjects) -> Result<Vec<Action>, Fail> {
    if eb.auth.is_some() && eb.jwt.is_some() {
        return Err(Fail::msg(
            "authentication and jwt validation can't both be configured",
        ));
    }
    let mut actions = Vec::new();
    if let Some(auth) = &eb.auth {
        actions.push(match auth {
            Action::AuthenticateOidc { config } => Action::AuthenticateOidc {
                config: crate::model::oidc::resolve(config, objs)?,
            },
            other => other.clone(),
        });
    }
    if let Some(jwt) = &eb.jwt {
        actions.push(Action::JwtValidation {
            config: jwt.clone(),
        });
    }
    Ok(actions)
}
