//! NLB Gateway listeners (upstream's `buildL4ListenerSpec`): per port with attached routes, the
//! oldest attached route (ties: smaller `ns/name`) alone feeds the listener's forward action —
//! the others are still Accepted; upstream routes nothing by SNI, TLSRoutes included — with its
//! backends' weights (Service backends: target groups and bindings; Gateway backends: `alb`-type
//! target groups; TargetGroupName backends: the existing group's ARN); no backend, or only
//! weight 0, means no listener at all. TLS listeners (termination) take the
//! LoadBalancerConfiguration's certificates (else ACM discovery, see `certificates`), SSL policy
//! and ALPN policy. The routes that carry no traffic get a Warning each (upstream says nothing).

use std::collections::BTreeMap;

use super::alb_targets::gateway_target_group;
use super::attach::Attachment;
use gateway_api::apis::standard::gateways::GatewayListeners;

use super::backends::{target_group_arn, BackendTarget};
use super::certificates::SecurePort;
use super::listeners::{elb_protocol, listener_configuration, port_protocol, quic_upgrade};
use super::load::Loaded;
use super::routes::RouteView;
use super::target_groups::{nlb_target_group, TgContext};
use super::unread_props::{warn_ignored_gateway_target_props, warn_ignored_target_group_props};
use super::GatewayInputs;
use crate::crd::gateway::load_balancer_configuration::AlpnPolicy;
use crate::crd::gateway::LoadBalancerConfigurationSpec;
use crate::model::action::{Action, ForwardConfig, StickinessConfig, TargetGroupTuple};
use crate::model::types::*;

/// Everything the L4 listeners are built from.
pub(super) struct L4<'a> {
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

type TgMap = BTreeMap<String, (TargetGroup, TargetGroupBindingResource)>;

impl L4<'_> {
    /// Adds the NLB listeners (and their target groups) to `stack`.
    pub fn listeners(&self, stack: &mut Stack, target_groups: &mut TgMap) -> Result<(), String> {
        for (&port, attached) in &self.attachment.routes_by_port {
            let protocols: Vec<Protocol> = self
                .valid
                .iter()
                .copied()
                .filter(|l| l.port == port)
                .filter_map(elb_protocol)
                .collect();
            let mut protocol = port_protocol(&protocols)?;
            let listener_cfg = listener_configuration(self.lbc, protocol, port);
            // Before the QUIC upgrade and the backends, as upstream's `buildListenerSpec`.
            let certs = SecurePort::new(
                self.inputs,
                self.valid,
                self.routes,
                self.attachment,
                port,
                protocol,
            )
            .certificates(listener_cfg)?;
            protocol = quic_upgrade(protocol, listener_cfg)?;
            let Some(&chosen) = attached.iter().min_by(|&&a, &&b| {
                let (ra, rb) = (&self.routes[a], &self.routes[b]);
                let age = |r: &RouteView<'_>| r.created.map(|t| t.0);
                match (age(ra), age(rb)) {
                    (Some(x), Some(y)) => x.cmp(&y),
                    (None, Some(_)) => std::cmp::Ordering::Less,
                    (Some(_), None) => std::cmp::Ordering::Greater,
                    (None, None) => std::cmp::Ordering::Equal,
                }
                .then_with(|| ra.key().cmp(&rb.key()))
            }) else {
                continue;
            };
            let route = &self.routes[chosen];
            warn_unrouted(self.routes, attached, chosen, port, &mut stack.warnings);
            let mut tuples = Vec::new();
            let backends = self.loaded.rules.get(&chosen).into_iter().flatten();
            for b in backends.flat_map(|r| &r.backends) {
                let props = b.props.as_ref();
                let arn = match &b.target {
                    BackendTarget::Service { service, port } => {
                        let (tg, tgb) =
                            nlb_target_group(self.ctx, route, protocol, service, port, props)?;
                        warn_ignored_target_group_props(props, &tg, &tgb, &mut stack.warnings);
                        let arn = Token::TargetGroupArn(tg.id.clone());
                        target_groups.entry(tg.id.clone()).or_insert((tg, tgb));
                        arn
                    }
                    BackendTarget::Gateway(gw) => {
                        let tg = gateway_target_group(self.ctx, route, protocol, gw, props)?;
                        warn_ignored_gateway_target_props(props, &tg, gw, &mut stack.warnings);
                        let arn = Token::TargetGroupArn(tg.id.clone());
                        if !stack.alb_target_groups.iter().any(|t| t.id == tg.id) {
                            stack.alb_target_groups.push(tg);
                        }
                        arn
                    }
                    BackendTarget::TargetGroupName(name) => {
                        Token::Literal(target_group_arn(self.inputs, name)?)
                    }
                };
                let quic = matches!(protocol, Protocol::Quic | Protocol::TcpQuic);
                tuples.push((
                    b.weight,
                    TargetGroupTuple {
                        target_group_arn: arn,
                        weight: (!quic).then_some(b.weight),
                    },
                ));
            }
            if !tuples.iter().any(|(w, _)| *w > 0) {
                continue;
            }
            let id = port.to_string();
            let tls = protocol == Protocol::Tls;
            stack.listeners.push(Listener {
                id: id.clone(),
                load_balancer_arn: Token::LoadBalancerArn,
                port,
                protocol,
                default_actions: vec![Action::Forward {
                    config: ForwardConfig {
                        target_groups: tuples.into_iter().map(|(_, t)| t).collect(),
                        target_group_stickiness_config: listener_cfg
                            .and_then(|c| c.target_group_stickiness)
                            .map(|enabled| StickinessConfig {
                                enabled: Some(enabled),
                                duration_seconds: None,
                            }),
                    },
                }],
                certificates: certs.certificates,
                certificate_discovery: certs.discovery,
                ssl_policy: tls.then(|| {
                    listener_cfg
                        .and_then(|c| c.ssl_policy.clone())
                        .unwrap_or_else(|| self.ctx.tags.cfg.default_ssl_policy.clone())
                }),
                mutual_authentication: None,
                // Upstream's default ALPN policy of TLS listeners is `None`.
                alpn_policy: tls.then(|| {
                    let policy = listener_cfg.and_then(|c| c.alpn_policy);
                    serde_json::to_value(policy.unwrap_or(AlpnPolicy::None))
                        .ok()
                        .and_then(|v| v.as_str().map(String::from))
                        .unwrap_or_default()
                }),
                attributes: listener_cfg
                    .map(|c| {
                        c.listener_attributes
                            .iter()
                            .map(|a| (a.key.clone(), a.value.clone()))
                            .collect()
                    })
                    .unwrap_or_default(),
                tags: self.ctx.tags.listener_tags(&id, self.user_tags.clone()),
            });
        }
        Ok(())
    }
}

/// A Warning on each route attached to `port` other than `chosen`: Accepted, as the Gateway API
/// asks, yet no connection reaches its backends, because an NLB listener tells connections apart
/// by neither host, SNI nor path.
fn warn_unrouted(
    routes: &[RouteView<'_>],
    attached: &[usize],
    chosen: usize,
    port: i32,
    warnings: &mut Vec<Warning>,
) {
    let winner = &routes[chosen];
    for &i in attached.iter().filter(|&&i| i != chosen) {
        let route = &routes[i];
        warnings.push(Warning {
            ingress: Some(route.key()),
            annotation: Some("parentRefs".into()),
            message: format!(
                "{} {} gets no traffic on port {port}: an NLB listener forwards every connection to one route, the oldest attached ({} {}); hostnames (SNI) do not select routes",
                route.kind.as_str(),
                route.key(),
                winner.kind.as_str(),
                winner.key()
            ),
        });
    }
}
