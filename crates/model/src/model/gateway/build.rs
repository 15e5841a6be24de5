//! The stack of one Gateway: load balancer (subnets by identifier, tag selector or discovery),
//! security groups (`lb_security`: the managed one with a rule per Gateway listener, or the
//! user's), the routes attached and loaded (`attach`, `load`), then the listeners of ports
//! with attached routes — ALB (`alb`: rules in precedence order) or NLB (`l4`) — and the target
//! groups of their backends, with what route status needs.

use std::collections::BTreeMap;

use gateway_api::apis::standard::gateways::GatewayListeners;

use super::addons::{apply_addons, ActiveAddons};
use super::attach::{attach, Attachment, Parent};
pub use super::lb_config::{default_target_group_config, merged_config};
use super::listener_sets::{handshake, AcceptedSet, RejectedSet};
use super::listeners::{self, LbKind, ListenerValidation};
use super::load::{load, BackendProblem, RouteProblem};
use super::names;
use super::routes::{grpc_route, http_route, tcp_route, tls_route, udp_route, RouteRef, RouteView};
use super::target_groups::TgContext;
use super::GatewayInputs;
use crate::crd::gateway::load_balancer_configuration::{
    LbIpAddressType, LoadBalancerConfigurationSpec, Scheme,
};
use crate::model::action::Action;
use crate::model::config::ModelConfig;
use crate::model::error::ModelError;
use crate::model::subnets::{SubnetInfo, SubnetRules};
use crate::model::tags::{TagContext, ALB_GATEWAY_TAG_PREFIX, NLB_GATEWAY_TAG_PREFIX};
use crate::model::types::*;

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

/// One accepted ListenerSet and the validation of its listeners.
#[derive(Debug, Clone)]
pub struct SetBuild {
    pub set: AcceptedSet,
    pub validation: BTreeMap<String, ListenerValidation>,
}

impl SetBuild {
    /// `ns/name` of the set.
    pub fn key(&self) -> String {
        format!("{}/{}", self.set.namespace, self.set.name)
    }
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
    let (ns, name) = (inputs.gateway_namespace(), inputs.gateway_name());
    let uid = inputs.gateway.metadata.uid.clone().unwrap_or_default();
    let lbc = merged_config(inputs);
    let gw_listeners: &[GatewayListeners] = &inputs.gateway.spec.listeners;
    let routes = gateway_routes(inputs, lb);
    let default_tgc = default_target_group_config(inputs).map_err(err)?;

    let labels = |n: &str| inputs.namespace_labels(n);
    let sets = handshake(inputs.gateway, inputs.listener_sets, &labels);
    let groups: Vec<&[GatewayListeners]> = std::iter::once(gw_listeners)
        .chain(sets.accepted.iter().map(|s| s.listeners.as_slice()))
        .collect();
    let mut validations = listeners::validate_groups(&groups, lb).into_iter();
    let validation = validations.next().unwrap_or_default();
    let set_validations: Vec<_> = validations.collect();
    let set_parents: Vec<Parent<'_>> = sets
        .accepted
        .iter()
        .zip(&set_validations)
        .map(|(s, v)| Parent {
            namespace: &s.namespace,
            name: &s.name,
            listeners: &s.listeners,
            validation: v,
            sets: &[],
        })
        .collect();
    let parent = Parent {
        namespace: ns,
        name,
        listeners: gw_listeners,
        validation: &validation,
        sets: &set_parents,
    };
    let attachment = attach(&parent, &routes, &labels);
    if let Some(message) = attachment.fatal.clone() {
        return Err(ModelError::ListenersNotValid {
            gateway: key.clone(),
            message,
        });
    }
    // Every listener considered (security group rules) and the valid ones (listener protocols).
    let considered: Vec<GatewayListeners> = groups.iter().flat_map(|g| g.iter().cloned()).collect();
    let valid: Vec<&GatewayListeners> = std::iter::once(gw_listeners)
        .zip(std::iter::once(&validation))
        .chain(
            sets.accepted
                .iter()
                .map(|s| s.listeners.as_slice())
                .zip(&set_validations),
        )
        .flat_map(|(ls, v)| {
            ls.iter()
                .filter(|l| v.get(&l.name).is_some_and(|r| r.valid))
        })
        .collect();

    let group = GroupId::implicit(ns, name);
    let (kind, prefix, lb_type) = match lb {
        LbKind::Alb => (StackKind::AlbGateway, ALB_GATEWAY_TAG_PREFIX, "application"),
        LbKind::Nlb => (StackKind::NlbGateway, NLB_GATEWAY_TAG_PREFIX, "network"),
    };
    let tags = TagContext {
        cfg,
        group: &group,
        prefix,
    };
    let scheme = match lbc.scheme {
        Some(Scheme::Internal) => LoadBalancerScheme::Internal,
        Some(Scheme::InternetFacing) => LoadBalancerScheme::InternetFacing,
        None => cfg.default_scheme,
    };
    let ip_type = match lbc.ip_address_type {
        None | Some(LbIpAddressType::Ipv4) => IpAddressType::Ipv4,
        Some(LbIpAddressType::Dualstack) => IpAddressType::DualStack,
        Some(LbIpAddressType::DualstackWithoutPublicIpv4) => {
            IpAddressType::DualStackWithoutPublicIpv4
        }
    };
    let user_tags = lbc.tags.clone().unwrap_or_default();
    if let Some(k) = user_tags
        .keys()
        .find(|k| cfg.external_managed_tags.contains(k))
    {
        return Err(err(format!(
            "external managed tag key {k} cannot be specified"
        )));
    }
    let mut stack = Stack {
        stack_id: key.clone(),
        kind,
        members: routes.iter().map(|r| r.key()).collect(),
        ..Default::default()
    };
    // A scheme change replaces the load balancer: the new one may have groups or none.
    let existing = inputs.existing_load_balancer.filter(|e| e.scheme == scheme);
    let sg = super::lb_security::choose(&lbc, lb, cfg, existing, &mut stack, || {
        managed_sg(&lbc, &considered, ip_type, &tags, cfg, (ns, name, &uid))
    })
    .map_err(err)?;
    let rules = SubnetRules {
        cluster_name: &cfg.cluster_name,
        scheme,
        ip_address_type: ip_type,
        cluster_tag_check: cfg.gate("SubnetsClusterTagCheck"),
        // An NLB needs one subnet, as for Services; an ALB two unless `ALBSingleSubnet`.
        alb_single_subnet: lb == LbKind::Nlb || cfg.gate("ALBSingleSubnet"),
        discover_by_reachability: cfg.gate("SubnetDiscoveryByReachability"),
    };
    let source_nat = super::lb_subnets::validate(&lbc, lb, scheme, ip_type).map_err(err)?;
    let chosen = super::lb_subnets::choose(&lbc, subnets, &rules).map_err(err)?;
    let no_sgs = sg.none();
    let subnet_mappings =
        super::lb_subnets::mappings(&lbc, lb, chosen.resolved.as_deref()).map_err(err)?;
    let per_kind = super::lb_config::per_kind(&lbc, lb, &mut stack.warnings);
    stack.load_balancer = Some(LoadBalancer {
        id: "LoadBalancer".into(),
        name: lbc.load_balancer_name.clone().unwrap_or_else(|| {
            names::load_balancer_name(&cfg.cluster_name, ns, name, &uid, scheme)
        }),
        lb_type: lb_type.into(),
        scheme,
        ip_address_type: ip_type,
        subnets: chosen.subnets,
        security_groups: sg.tokens,
        security_group_names_or_ids: sg.names_or_ids,
        customer_owned_ipv4_pool: per_kind.customer_owned_ipv4_pool,
        ipv4_ipam_pool_id: per_kind.ipv4_ipam_pool_id,
        minimum_capacity_units: None,
        attributes: lbc
            .load_balancer_attributes
            .iter()
            .map(|a| (a.key.clone(), a.value.clone()))
            .collect(),
        tags: tags.resource_tags("LoadBalancer", user_tags.clone()),
        subnet_mappings,
        // Upstream sets it on every NLB: on with source-NAT prefixes, else off.
        enable_prefix_for_ipv6_source_nat: (lb == LbKind::Nlb)
            .then(|| if source_nat { "on" } else { "off" }.to_string()),
        security_groups_inbound_rules_on_private_link: per_kind.private_link,
    });
    let addons = apply_addons(
        &lbc,
        lb,
        ActiveAddons::of(inputs.gateway),
        inputs.gateway.metadata.deletion_timestamp.is_some(),
        &mut stack,
    );
    if inputs.class_config.is_some() && inputs.gateway_config.is_some() {
        warn_dropped_capacity(inputs, &mut stack);
    }
    super::unread::warn_unread_gateway_fields(inputs.gateway, &valid, &mut stack);
    super::unread_config::warn_unused_listener_fields(&lbc, &valid, lb, &mut stack);
    super::unread_config::warn_overridden_security_fields(&lbc, lb, &mut stack);
    super::unread_config::warn_overridden_subnet_selector(&lbc, &mut stack);
    super::unread_config::warn_gateway_merging_mode(inputs, &mut stack);

    let source_ranges = lbc.source_ranges.clone().unwrap_or_default();
    let cidr_sources = no_sgs.then(|| crate::model::tgb_cidrs::Sources {
        subnets: chosen.resolved.as_deref(),
        scheme,
        source_ranges: &source_ranges,
        vpc_cidrs: inputs.vpc_cidrs,
    });
    if no_sgs
        && (chosen.resolved.is_none()
            || (scheme == LoadBalancerScheme::Internal && inputs.vpc_cidrs.is_none()))
    {
        stack.warnings.push(Warning {
            ingress: None,
            annotation: None,
            message: crate::model::tgb_cidrs::NEEDS_AWS.into(),
        });
    }
    let infrastructure = inputs.gateway.spec.infrastructure.as_ref();
    let ctx = TgContext {
        tags: &tags,
        gateway_namespace: ns,
        gateway_name: name,
        lb_ip_type: ip_type,
        networking_source: sg.networking_source,
        cidr_sources,
        infrastructure_labels: infrastructure
            .and_then(|i| i.labels.clone())
            .unwrap_or_default(),
        infrastructure_annotations: infrastructure
            .and_then(|i| i.annotations.clone())
            .unwrap_or_default(),
    };
    let mut target_groups: BTreeMap<String, (TargetGroup, TargetGroupBindingResource)> =
        BTreeMap::new();
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
    if lb == LbKind::Nlb {
        let l4 = super::l4::L4 {
            inputs,
            routes: &routes,
            attachment: &attachment,
            valid: &valid,
            loaded: &loaded,
            lbc: &lbc,
            ctx: &ctx,
            user_tags: &user_tags,
        };
        l4.listeners(&mut stack, &mut target_groups).map_err(err)?;
    } else {
        let alb = super::alb::Alb {
            inputs,
            routes: &routes,
            attachment: &attachment,
            valid: &valid,
            loaded: &loaded,
            lbc: &lbc,
            ctx: &ctx,
            user_tags: &user_tags,
        };
        alb.listeners(&mut stack, &mut target_groups).map_err(err)?;
        let mut attached: Vec<usize> = attachment
            .routes_by_port
            .values()
            .flatten()
            .copied()
            .collect();
        attached.sort_unstable();
        attached.dedup();
        for i in attached {
            super::unread::warn_literal_regex(&routes[i], &mut stack);
        }
        super::unread_rules::warn_ignored_rule_settings(&routes, &loaded, &mut stack);
    }
    let own = inputs.gateway_config.map(|c| &c.spec);
    super::unread::warn_unmatched_listener_configurations(own, &valid, &mut stack);
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
    let listener_sets = sets
        .accepted
        .into_iter()
        .zip(set_validations)
        .map(|(set, validation)| SetBuild { set, validation })
        .collect();
    if !cfg.gate("WeightedTargetGroups") && stack.forwards_to_several_target_groups() {
        return Err(err(WEIGHTED_TARGET_GROUPS_DISABLED.into()));
    }
    Ok(GatewayBuild {
        stack,
        listeners: validation,
        listener_sets,
        rejected_sets: sets.rejected,
        attachment,
        routes: routes.iter().map(RouteView::route_ref).collect(),
        dropped_backends: loaded.dropped,
        route_problems: loaded.problems,
        secrets,
        addons,
    })
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

/// Managed security group: for every Gateway listener (with or without routes) one rule per
/// source range (default `0.0.0.0/0` and, for dual-stack, `::/0`, each followed by its ICMP
/// path-MTU rule under `enableICMP`) and prefix list.
fn managed_sg(
    lbc: &LoadBalancerConfigurationSpec,
    listeners: &[GatewayListeners],
    ip_type: IpAddressType,
    tags: &TagContext<'_>,
    cfg: &ModelConfig,
    (ns, name, uid): (&str, &str, &str),
) -> SecurityGroup {
    let default_ranges = vec!["0.0.0.0/0".to_string(), "::/0".to_string()];
    let ranges = lbc.source_ranges.as_ref().unwrap_or(&default_ranges);
    let mut ingress = Vec::new();
    for l in listeners {
        let base = IpPermission {
            ip_protocol: if l.protocol == "UDP" { "udp" } else { "tcp" }.into(),
            from_port: l.port,
            to_port: l.port,
            cidr_ipv4: None,
            cidr_ipv6: None,
            prefix_list_id: None,
        };
        // `enableICMP`: after each CIDR's rule, ICMP "fragmentation needed" (3/4) or ICMPv6
        // "packet too big" (2/0) from the same CIDR, for path-MTU discovery.
        let icmp = |protocol: &str, from_port, to_port| IpPermission {
            ip_protocol: protocol.into(),
            from_port,
            to_port,
            ..base.clone()
        };
        let with_icmp = lbc.enable_icmp == Some(true);
        for cidr in ranges {
            if !cidr.contains(':') {
                let v4 = |p: IpPermission| IpPermission {
                    cidr_ipv4: Some(cidr.clone()),
                    ..p
                };
                ingress.push(v4(base.clone()));
                ingress.extend(with_icmp.then(|| v4(icmp("icmp", 3, 4))));
            } else if ip_type.is_dual_stack() {
                let v6 = |p: IpPermission| IpPermission {
                    cidr_ipv6: Some(cidr.clone()),
                    ..p
                };
                ingress.push(v6(base.clone()));
                ingress.extend(with_icmp.then(|| v6(icmp("icmpv6", 2, 0))));
            }
        }
        for p in lbc.security_group_prefixes.iter().flatten() {
            ingress.push(IpPermission {
                prefix_list_id: Some(p.clone()),
                ..base.clone()
            });
        }
    }
    SecurityGroup {
        id: "ManagedLBSecurityGroup".into(),
        name: names::managed_sg_name(&cfg.cluster_name, ns, name, uid),
        description: "[k8s] Managed SecurityGroup for LoadBalancer".into(),
        ingress,
        tags: tags.resource_tags(
            "ManagedLBSecurityGroup",
            lbc.tags.clone().unwrap_or_default(),
        ),
    }
}
