//! ALB Gateway listeners and rules (upstream's `buildL7ListenerSpec` and `buildListenerRules`):
//! per port with attached HTTPRoutes/GRPCRoutes one listener (default action 404), and one rule
//! per precedence unit with the unit's conditions, the rule's actions and transforms, and the
//! ListenerRuleConfiguration's tags.

use std::collections::BTreeMap;

use super::actions::{dropped_authentication, rule_actions, RuleInputs};
use super::attach::Attachment;
use super::backends::{target_group_arn, BackendTarget};
use super::certificates::SecurePort;
use super::conditions::{grpc_conditions, http_conditions, source_ip_conditions};
use gateway_api::apis::standard::gateways::GatewayListeners;

use super::listeners::{elb_protocol, listener_configuration, port_protocol, quic_upgrade};
use super::load::Loaded;
use super::precedence::{sorted_units, unit_hostnames, Unit};
use super::routes::{RouteKind, RouteView};
use super::target_groups::{alb_target_group, TgContext};
use super::transforms::http_transforms;
use super::unread_props::warn_ignored_target_group_props;
use super::GatewayInputs;
use crate::crd::gateway::LoadBalancerConfigurationSpec;
use crate::model::action::{Action, RuleCondition, TargetGroupTuple, Transform};
use crate::model::types::*;

type TgMap = BTreeMap<String, (TargetGroup, TargetGroupBindingResource)>;

/// Everything the ALB listeners are built from.
pub(super) struct Alb<'a> {
    pub inputs: &'a GatewayInputs<'a>,
    pub routes: &'a [RouteView<'a>],
    pub attachment: &'a Attachment,
    /// Valid listeners of the Gateway and its accepted ListenerSets.
    pub valid: &'a [&'a GatewayListeners],
    pub loaded: &'a Loaded<'a>,
    pub lbc: &'a LoadBalancerConfigurationSpec,
    pub ctx: &'a TgContext<'a>,
    pub user_tags: &'a BTreeMap<String, String>,
}

impl Alb<'_> {
    /// Adds the listeners, rules and target groups to `stack`.
    pub fn listeners(&self, stack: &mut Stack, target_groups: &mut TgMap) -> Result<(), String> {
        let cfg = self.ctx.tags.cfg;
        for (&port, attached) in &self.attachment.routes_by_port {
            let protocols: Vec<Protocol> = self
                .valid
                .iter()
                .copied()
                .filter(|l| l.port == port)
                .filter_map(elb_protocol)
                .collect();
            let protocol = port_protocol(&protocols)?;
            let listener_cfg = listener_configuration(self.lbc, protocol, port);
            let listener_id = port.to_string();
            let secure = protocol == Protocol::Https;
            let certs = SecurePort::new(
                self.inputs,
                self.valid,
                self.routes,
                self.attachment,
                port,
                protocol,
            )
            .certificates(listener_cfg)?;
            // After the certificates, as upstream's shared `buildListenerSpec`: an ALB listener is
            // never UDP, so `quicEnabled` fails the build rather than being ignored.
            quic_upgrade(protocol, listener_cfg)?;
            stack.listeners.push(Listener {
                id: listener_id.clone(),
                load_balancer_arn: Token::LoadBalancerArn,
                port,
                protocol,
                default_actions: vec![Action::fixed("404", None)],
                certificates: certs.certificates,
                certificate_discovery: certs.discovery,
                ssl_policy: secure.then(|| {
                    listener_cfg
                        .and_then(|c| c.ssl_policy.clone())
                        .unwrap_or_else(|| cfg.default_ssl_policy.clone())
                }),
                mutual_authentication: listener_cfg
                    .and_then(|c| c.mutual_authentication.as_ref())
                    .filter(|_| secure)
                    .map(mutual_authentication),
                alpn_policy: None,
                attributes: listener_cfg
                    .map(|c| {
                        c.listener_attributes
                            .iter()
                            .map(|a| (a.key.clone(), a.value.clone()))
                            .collect()
                    })
                    .unwrap_or_default(),
                tags: self
                    .ctx
                    .tags
                    .listener_tags(&listener_id, self.user_tags.clone()),
            });
            let hostnames = |i: usize| {
                unit_hostnames(&self.routes[i], self.attachment.hostnames.get(&(port, i)))
            };
            for (priority, unit) in sorted_units(self.routes, attached, &hostnames)
                .into_iter()
                .enumerate()
            {
                let priority = priority as i32 + 1;
                let warnings = &mut stack.warnings;
                let rule = self.rule(port, protocol, priority, &unit, target_groups, warnings)?;
                stack.listener_rules.push(rule);
                let config = self
                    .loaded
                    .rules
                    .get(&unit.route)
                    .and_then(|rules| rules.get(unit.rule))
                    .and_then(|l| l.config);
                let dropped = dropped_authentication(config, protocol == Protocol::Https, port);
                if let Some(message) = dropped {
                    let ingress = Some(self.routes[unit.route].key());
                    // One rule with several matches makes several units: said once.
                    if !stack.warnings.iter().any(|w| w.message == message) {
                        stack.warnings.push(Warning {
                            ingress,
                            annotation: None,
                            message,
                        });
                    }
                }
            }
        }
        Ok(())
    }

    /// The ALB rule of one unit at `priority` (its target groups into `target_groups`, what
    /// their configurations set in vain into `warnings`).
    fn rule(
        &self,
        port: i32,
        protocol: Protocol,
        priority: i32,
        unit: &Unit,
        target_groups: &mut TgMap,
        warnings: &mut Vec<Warning>,
    ) -> Result<ListenerRule, String> {
        let route = &self.routes[unit.route];
        let loaded = self
            .loaded
            .rules
            .get(&unit.route)
            .and_then(|rules| rules.get(unit.rule))
            .cloned()
            .unwrap_or_default();
        let (mut conditions, transforms) = self.conditions(route, unit)?;
        conditions.extend(source_ip_conditions(loaded.config, unit.match_index));
        let mut tuples = Vec::new();
        for b in &loaded.backends {
            let arn = match &b.target {
                BackendTarget::Service { service, port } => {
                    let props = b.props.as_ref();
                    let (tg, tgb) =
                        alb_target_group(self.ctx, route, protocol, service, port, props)?;
                    warn_ignored_target_group_props(props, &tg, &tgb, warnings);
                    let arn = Token::TargetGroupArn(tg.id.clone());
                    target_groups.entry(tg.id.clone()).or_insert((tg, tgb));
                    arn
                }
                BackendTarget::TargetGroupName(name) => {
                    Token::Literal(target_group_arn(self.inputs, name)?)
                }
                // Upstream builds an `alb`-type target group here, which AWS refuses (an ALB
                // cannot target an ALB): refused before any AWS call instead.
                BackendTarget::Gateway(gw) => {
                    return Err(format!(
                        "backendRef kind Gateway ({}:{}) is only supported on NLB Gateways: an ALB cannot target another ALB. Invalid data can be found in route ({}, {}:{})",
                        gw.namespace,
                        gw.name,
                        route.kind.as_str(),
                        route.namespace,
                        route.name
                    ))
                }
            };
            tuples.push(TargetGroupTuple {
                target_group_arn: arn,
                weight: Some(b.weight),
            });
        }
        let actions = rule_actions(&RuleInputs {
            route,
            rule: unit.rule,
            config: loaded.config,
            tuples,
            https: protocol == Protocol::Https,
            secrets: self.inputs.secrets,
        })?;
        let rule_tags = loaded
            .config
            .and_then(|c| c.spec.tags.clone())
            .unwrap_or_default();
        let cfg = self.ctx.tags.cfg;
        if let Some(k) = rule_tags
            .keys()
            .find(|k| cfg.external_managed_tags.contains(k))
        {
            return Err(format!("external managed tag key {k} cannot be specified"));
        }
        let id = format!("{port}:{priority}");
        Ok(ListenerRule {
            id: id.clone(),
            listener_arn: Token::ListenerArn(port),
            priority,
            ingress: route.key(),
            conditions,
            actions,
            transforms,
            tags: self.ctx.tags.listener_tags(&id, rule_tags),
        })
    }

    /// The unit's match conditions and (HTTPRoute) transforms.
    fn conditions(
        &self,
        route: &RouteView<'_>,
        unit: &Unit,
    ) -> Result<(Vec<RuleCondition>, Vec<Transform>), String> {
        if route.kind == RouteKind::Grpc {
            let m = route.grpc_rules[unit.rule]
                .matches
                .as_ref()
                .and_then(|m| m.get(unit.match_index));
            return Ok((grpc_conditions(&unit.hostname, m)?, Vec::new()));
        }
        let rule = &route.http_rules[unit.rule];
        let default_match = Default::default();
        let m = rule
            .matches
            .as_ref()
            .and_then(|m| m.get(unit.match_index))
            .unwrap_or(&default_match);
        Ok((
            http_conditions(&unit.hostname, m)?,
            http_transforms(rule, m),
        ))
    }
}

/// An HTTPS listener's mTLS from its listener configuration: the trust store (name or ARN, the
/// deployer resolves names) only for `verify`, where an unset expiry switch means `false`.
fn mutual_authentication(
    m: &crate::crd::gateway::load_balancer_configuration::MutualAuthenticationAttributes,
) -> crate::model::types::MutualAuthentication {
    let text = |v: serde_json::Value| v.as_str().unwrap_or_default().to_string();
    let mode = text(serde_json::to_value(m.mode).unwrap_or_default());
    let verify = mode == "verify";
    crate::model::types::MutualAuthentication {
        trust_store: m.trust_store.clone().filter(|_| verify),
        ignore_client_certificate_expiry: match m.ignore_client_certificate_expiry {
            None if verify => Some(false),
            other => other,
        },
        advertise_trust_store_ca_names: m
            .advertise_trust_store_ca_names
            .as_ref()
            .map(|a| text(serde_json::to_value(a).unwrap_or_default())),
        mode,
    }
}
