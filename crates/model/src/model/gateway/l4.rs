//! NLB Gateway listeners (upstream's `buildL4ListenerSpec`): per port with attached routes, the
//! oldest attached route (ties: smaller `ns/name`) alone feeds the listener's forward action —
//! the others are still Accepted — with its backends' weights; no backend, or only weight 0,
//! means no listener at all.

use std::collections::BTreeMap;

use super::attach::Attachment;
use super::listeners::{elb_protocol, port_protocol, ListenerValidation};
use super::routes::RouteView;
use super::target_groups::{
    nlb_target_group, props_for, resolve_service, BackendProblem, TgContext,
};
use super::GatewayInputs;
use crate::crd::gateway::LoadBalancerConfigurationSpec;
use crate::model::action::{Action, ForwardConfig, StickinessConfig, TargetGroupTuple};
use crate::model::types::*;

/// Everything the L4 listeners are built from.
pub(super) struct L4<'a> {
    pub inputs: &'a GatewayInputs<'a>,
    pub routes: &'a [RouteView<'a>],
    pub attachment: &'a Attachment,
    pub validation: &'a BTreeMap<String, ListenerValidation>,
    pub lbc: &'a LoadBalancerConfigurationSpec,
    pub ctx: &'a TgContext<'a>,
    pub user_tags: &'a BTreeMap<String, String>,
}

type TgMap = BTreeMap<String, (TargetGroup, TargetGroupBindingResource)>;

impl L4<'_> {
    /// Adds the NLB listeners (and their target groups) to `stack`.
    pub fn listeners(
        &self,
        stack: &mut Stack,
        target_groups: &mut TgMap,
        dropped: &mut Vec<(String, BackendProblem)>,
    ) -> Result<(), String> {
        let gw_listeners = &self.inputs.gateway.spec.listeners;
        for (&port, attached) in &self.attachment.routes_by_port {
            let protocols: Vec<Protocol> = gw_listeners
                .iter()
                .filter(|l| l.port == port && self.validation.get(&l.name).is_some_and(|v| v.valid))
                .filter_map(elb_protocol)
                .collect();
            let mut protocol = port_protocol(&protocols)?;
            if protocol == Protocol::Tls {
                return Err(format!(
                    "TLS listener on port {port} (TLS termination) is not supported by this build yet"
                ));
            }
            let listener_cfg = self.lbc.listener_configurations.iter().flatten().find(|c| {
                c.protocol_port
                    .eq_ignore_ascii_case(&format!("{}:{port}", protocol.as_str()))
            });
            if listener_cfg.and_then(|c| c.quic_enabled) == Some(true) {
                protocol = match protocol {
                    Protocol::Udp => Protocol::Quic,
                    Protocol::TcpUdp => Protocol::TcpQuic,
                    other => {
                        return Err(format!(
                            "QUIC protocol upgrade not supported for protocol {}",
                            other.as_str()
                        ))
                    }
                };
            }
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
            let mut tuples = Vec::new();
            for b in route.backends.iter().flatten() {
                let (svc, sp) = match resolve_service(route, b, &|n, s| self.inputs.service(n, s)) {
                    Ok(found) => found,
                    Err(p) if p.fatal => return Err(p.message),
                    Err(p) => {
                        let p = BackendProblem {
                            route: Some(chosen),
                            ..p
                        };
                        dropped.push((route.key(), p));
                        continue;
                    }
                };
                let svc_ns = svc.metadata.namespace.as_deref().unwrap_or("default");
                let svc_name = svc.metadata.name.as_deref().unwrap_or_default();
                let props = props_for(self.inputs.tg_configs, route, svc_ns, svc_name);
                let (tg, tgb) =
                    nlb_target_group(self.ctx, route, protocol, svc, &sp, props.as_ref())?;
                let quic = matches!(protocol, Protocol::Quic | Protocol::TcpQuic);
                tuples.push((
                    b.weight,
                    TargetGroupTuple {
                        target_group_arn: Token::TargetGroupArn(tg.id.clone()),
                        weight: (!quic).then_some(b.weight),
                    },
                ));
                target_groups.entry(tg.id.clone()).or_insert((tg, tgb));
            }
            if !tuples.iter().any(|(w, _)| *w > 0) {
                continue;
            }
            let id = port.to_string();
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
                certificates: Vec::new(),
                certificate_discovery: Vec::new(),
                ssl_policy: None,
                mutual_authentication: None,
                alpn_policy: None,
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
