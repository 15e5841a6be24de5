//! The stack of one Gateway, step by step: the listeners it offers and the routes attached to
//! them (`offered`), its load balancer with security groups and subnets (`load_balancer`), the
//! Warnings for what its configuration sets that is not applied (`unread*`), what its target
//! groups share (`tg_context`) and the backends the attached routes name (`load`), then the
//! listeners and rules of the ports with attached routes — ALB (`alb`: rules in precedence
//! order) or NLB (`l4`) — with the target groups of their backends, and what status writing
//! needs.

use std::collections::BTreeMap;

use gateway_api::apis::standard::gateways::GatewayListeners;

use super::addons::{apply_addons, ActiveAddons};
use super::alb::Alb;
use super::attach::Attachment;
use super::l4::L4;
pub use super::lb_config::{default_target_group_config, merged_config};
use super::listener_sets::RejectedSet;
use super::listeners::{LbKind, ListenerValidation};
use super::load::{load, BackendProblem, Loaded, RouteProblem};
use super::load_balancer;
use super::offered::Offered;
pub use super::offered::SetBuild;
use super::routes::{grpc_route, http_route, tcp_route, tls_route, udp_route, RouteRef, RouteView};
use super::target_groups::TgContext;
use super::{unread, unread_config, unread_rules, GatewayInputs};
use crate::crd::gateway::load_balancer_configuration::LoadBalancerConfigurationSpec;
use crate::model::action::Action;
use crate::model::config::ModelConfig;
use crate::model::error::ModelError;
use crate::model::subnets::SubnetInfo;
use crate::model::tags::{TagContext, ALB_GATEWAY_TAG_PREFIX, NLB_GATEWAY_TAG_PREFIX};
use crate::model::types::*;

type TgMap = BTreeMap<String, (TargetGroup, TargetGroupBindingResource)>;

/// The stack plus what status writing needs.
#[derive(Debug, Clone)]
pub struct GatewayBuild {
    pub stack: Stack,
    pub listeners: BTreeMap<String, ListenerValidation>,
    /// The ListenerSets the Gateway accepted, in precedence order, with their listeners' results
    /// (their `attachedRoutes` are in [`Attachment::set_attached_routes`]).
    pub listener_sets: Vec<SetBuild>,
    /// The ListenerSets naming the Gateway that it does not allow.
    pub rejected_sets: Vec<RejectedSet>,
    pub attachment: Attachment,
    /// The routes the Gateway's kind loads, in the order the attachment's route indexes use:
    /// HTTPRoutes then GRPCRoutes (ALB); TCPRoutes, UDPRoutes then TLSRoutes (NLB).
    pub routes: Vec<RouteRef>,
    /// Backends left out (route `ns/name`, problem): route status ResolvedRefs False.
    pub dropped_backends: Vec<(String, BackendProblem)>,
    /// Everything route status reports about attached routes (left-out backends with their
    /// reasons, refused cross-namespace references, unusable ListenerRuleConfigurations).
    pub route_problems: Vec<RouteProblem>,
    /// Secrets (`ns/name`) the stack's OIDC actions were read from (to watch).
    pub secrets: Vec<String>,
    /// The add-ons on once the stack is deployed (what the Gateway's add-on annotations are to
    /// say: newly on ones recorded before the deploy, newly off ones after).
    pub addons: ActiveAddons,
}

/// The routes a Gateway of `lb` loads, in the order whose indexes [`Attachment`] reports
/// (ALB: HTTPRoutes then GRPCRoutes; NLB: TCPRoutes, UDPRoutes then TLSRoutes); route status
/// maps indexes back through it.
pub fn gateway_routes<'a>(inputs: &GatewayInputs<'a>, lb: LbKind) -> Vec<RouteView<'a>> {
    match lb {
        LbKind::Alb => inputs
            .http_routes
            .iter()
            .map(http_route)
            .chain(inputs.grpc_routes.iter().map(grpc_route))
            .collect(),
        LbKind::Nlb => inputs
            .tcp_routes
            .iter()
            .map(tcp_route)
            .chain(inputs.udp_routes.iter().map(udp_route))
            .chain(inputs.tls_routes.iter().map(tls_route))
            .collect(),
    }
}

/// Builds the ALB stack of an ALB Gateway from its HTTPRoutes and GRPCRoutes.
pub fn build_alb_gateway_stack(
    inputs: &GatewayInputs<'_>,
    cfg: &ModelConfig,
    subnets: Option<&[SubnetInfo]>,
) -> Result<GatewayBuild, ModelError> {
    build_gateway_stack(inputs, cfg, subnets, LbKind::Alb)
}

/// Builds the NLB stack of an NLB Gateway from its TCPRoutes, UDPRoutes and TLSRoutes.
pub fn build_nlb_gateway_stack(
    inputs: &GatewayInputs<'_>,
    cfg: &ModelConfig,
    subnets: Option<&[SubnetInfo]>,
) -> Result<GatewayBuild, ModelError> {
    build_gateway_stack(inputs, cfg, subnets, LbKind::Nlb)
}

fn build_gateway_stack(
    inputs: &GatewayInputs<'_>,
    cfg: &ModelConfig,
    subnets: Option<&[SubnetInfo]>,
    lb: LbKind,
) -> Result<GatewayBuild, ModelError> {
    let key = inputs.key();
    let err = |message: String| ModelError::Gateway {
        gateway: key.clone(),
        message,
    };
    let lbc = merged_config(inputs);
    let routes = gateway_routes(inputs, lb);
    let default_tgc = default_target_group_config(inputs).map_err(err)?;
    // Listeners: the Gateway's and its ListenerSets', and the routes attached to them.
    let offered = Offered::of(inputs, lb);
    let attachment = offered.attach(inputs, &routes)?;
    let considered = offered.considered(inputs.gateway);
    let valid = offered.valid(inputs.gateway);
    // The load balancer, and what the configuration sets that it does not apply.
    let group = GroupId::implicit(inputs.gateway_namespace(), inputs.gateway_name());
    let (kind, prefix) = match lb {
        LbKind::Alb => (StackKind::AlbGateway, ALB_GATEWAY_TAG_PREFIX),
        LbKind::Nlb => (StackKind::NlbGateway, NLB_GATEWAY_TAG_PREFIX),
    };
    let tags = TagContext {
        cfg,
        group: &group,
        prefix,
    };
    let mut stack = Stack {
        stack_id: key.clone(),
        kind,
        members: routes.iter().map(|r| r.key()).collect(),
        ..Default::default()
    };
    let built = load_balancer::build(inputs, &lbc, lb, &considered, &tags, subnets, &mut stack)
        .map_err(err)?;
    let deleting = inputs.gateway.metadata.deletion_timestamp.is_some();
    let active = ActiveAddons::of(inputs.gateway);
    let addons = apply_addons(&lbc, lb, active, deleting, &mut stack);
    warn_unapplied(inputs, &lbc, &valid, lb, &mut stack);
    // Target groups: what they share, and the backends the attached routes name.
    let source_ranges = lbc.source_ranges.clone().unwrap_or_default();
    let ctx = TgContext::new(inputs, &tags, &built, &source_ranges);
    ctx.warn_unknown_cidrs(&mut stack);
    let attached = attachment.routes_by_port.values().flatten().copied();
    let loaded = load(inputs, &routes, attached, default_tgc.as_ref()).map_err(|f| {
        if f.listeners_not_valid {
            ModelError::ListenersNotValid {
                gateway: key.clone(),
                message: f.message,
            }
        } else {
            err(f.message)
        }
    })?;
    // Listeners and rules, and the target groups they forward to.
    let listening = Listening {
        inputs,
        routes: &routes,
        attachment: &attachment,
        valid: &valid,
        loaded: &loaded,
        lbc: &lbc,
        ctx: &ctx,
        user_tags: &built.user_tags,
    };
    let target_groups = listening.build(lb, &mut stack).map_err(err)?;
    let own = inputs.gateway_config.map(|c| &c.spec);
    unread::warn_unmatched_listener_configurations(own, &valid, &mut stack);
    assemble(&mut stack, &loaded, target_groups);
    let secrets = oidc_secrets(&stack);
    let (listeners, listener_sets, rejected_sets) = offered.into_results();
    if !cfg.gate("WeightedTargetGroups") && stack.forwards_to_several_target_groups() {
        return Err(err(WEIGHTED_TARGET_GROUPS_DISABLED.into()));
    }
    Ok(GatewayBuild {
        stack,
        listeners,
        listener_sets,
        rejected_sets,
        attachment,
        routes: routes.iter().map(RouteView::route_ref).collect(),
        dropped_backends: loaded.dropped,
        route_problems: loaded.problems,
        secrets,
        addons,
    })
}

/// Warnings for what the Gateway and its configuration set that this build does not apply, in
/// the order upstream reads them.
fn warn_unapplied(
    inputs: &GatewayInputs<'_>,
    lbc: &LoadBalancerConfigurationSpec,
    valid: &[&GatewayListeners],
    lb: LbKind,
    stack: &mut Stack,
) {
    if inputs.class_config.is_some() && inputs.gateway_config.is_some() {
        warn_dropped_capacity(inputs, stack);
    }
    unread::warn_unread_gateway_fields(inputs.gateway, valid, stack);
    unread_config::warn_unused_listener_fields(lbc, valid, lb, stack);
    unread_config::warn_overridden_security_fields(lbc, lb, stack);
    unread_config::warn_overridden_subnet_selector(lbc, stack);
    unread_config::warn_gateway_merging_mode(inputs, stack);
}

/// What the listeners and rules of either kind are built from.
struct Listening<'a> {
    inputs: &'a GatewayInputs<'a>,
    routes: &'a [RouteView<'a>],
    attachment: &'a Attachment,
    /// Valid listeners of the Gateway and its accepted ListenerSets.
    valid: &'a [&'a GatewayListeners],
    loaded: &'a Loaded<'a>,
    lbc: &'a LoadBalancerConfigurationSpec,
    ctx: &'a TgContext<'a>,
    user_tags: &'a BTreeMap<String, String>,
}

impl Listening<'_> {
    /// NLB listeners (`l4`), or ALB listeners and rules (`alb`) with the Warnings for what the
    /// attached routes ask that is not applied; returns the target groups they forward to.
    fn build(self, lb: LbKind, stack: &mut Stack) -> Result<TgMap, String> {
        let Listening {
            inputs,
            routes,
            attachment,
            valid,
            loaded,
            lbc,
            ctx,
            user_tags,
        } = self;
        let mut target_groups = TgMap::new();
        if lb == LbKind::Nlb {
            let l4 = L4 {
                inputs,
                routes,
                attachment,
                valid,
                loaded,
                lbc,
                ctx,
                user_tags,
            };
            l4.listeners(stack, &mut target_groups)?;
            return Ok(target_groups);
        }
        let alb = Alb {
            inputs,
            routes,
            attachment,
            valid,
            loaded,
            lbc,
            ctx,
            user_tags,
        };
        alb.listeners(stack, &mut target_groups)?;
        let mut attached: Vec<usize> = attachment
            .routes_by_port
            .values()
            .flatten()
            .copied()
            .collect();
        attached.sort_unstable();
        attached.dedup();
        for i in attached {
            unread::warn_literal_regex(&routes[i], stack);
        }
        unread_rules::warn_ignored_rule_settings(routes, loaded, stack);
        Ok(target_groups)
    }
}

/// The stack's last pieces: Warnings for route inputs accepted and not acted on, the target
/// groups and bindings (in id order), the `alb`-type target groups in id order.
fn assemble(stack: &mut Stack, loaded: &Loaded<'_>, target_groups: TgMap) {
    for (route, message) in &loaded.ignored {
        stack.warnings.push(Warning {
            ingress: Some(route.clone()),
            annotation: None,
            message: message.clone(),
        });
    }
    for (tg, tgb) in target_groups.into_values() {
        stack.target_groups.push(tg);
        stack.target_group_bindings.push(tgb);
    }
    stack.alb_target_groups.sort_by(|a, b| a.id.cmp(&b.id));
}

/// The Secrets (`ns/name`) the stack's OIDC actions were read from, sorted, each once.
fn oidc_secrets(stack: &Stack) -> Vec<String> {
    let mut secrets: Vec<String> = stack
        .listener_rules
        .iter()
        .flat_map(|r| &r.actions)
        .filter_map(|a| match a {
            Action::AuthenticateOidc { config } => Some(config.secret.clone()),
            _ => None,
        })
        .collect();
    secrets.sort();
    secrets.dedup();
    secrets
}

/// Upstream's merge of a class's and a Gateway's configuration drops
/// `minimumLoadBalancerCapacity` (see [`merged_config`]): said, not silently ignored.
fn warn_dropped_capacity(inputs: &GatewayInputs<'_>, stack: &mut Stack) {
    let set = [inputs.class_config, inputs.gateway_config]
        .into_iter()
        .flatten()
        .any(|c| c.spec.minimum_load_balancer_capacity.is_some());
    if set {
        stack.warnings.push(Warning {
            ingress: None,
            annotation: Some("minimumLoadBalancerCapacity".into()),
            message: "LoadBalancerConfiguration field minimumLoadBalancerCapacity is not applied when both the GatewayClass and the Gateway name a LoadBalancerConfiguration (upstream's merge drops it)".into(),
        });
    }
}
