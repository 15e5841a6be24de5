//! The ALB stack of one Gateway: load balancer, managed security group (a rule per Gateway
//! listener), one listener per port with attached routes (default action 404), rules in
//! precedence order (priorities 1, 2, … per port), and the target groups of their backends.

use std::collections::BTreeMap;

use gateway_api::apis::standard::gateways::GatewayListeners;

use super::attach::{attach, Attachment, Parent};
use super::conditions::http_conditions;
use super::listeners::{self, elb_protocol, port_protocol, LbKind, ListenerValidation};
use super::names;
use super::precedence::{sorted_units, unit_hostnames};
use super::routes::{http_route, tcp_route, udp_route, RouteView};
use super::target_groups::{
    alb_target_group, props_for, resolve_service, BackendProblem, TgContext,
};
use super::GatewayInputs;
use crate::crd::gateway::load_balancer_configuration::{
    LbIpAddressType, LoadBalancerConfigurationSpec, MergingMode, Scheme,
};
use crate::model::action::{Action, ForwardConfig, TargetGroupTuple};
use crate::model::config::ModelConfig;
use crate::model::error::ModelError;
use crate::model::subnets::{discover, resolve_names_or_ids, SubnetInfo, SubnetRules};
use crate::model::tags::{TagContext, ALB_GATEWAY_TAG_PREFIX, NLB_GATEWAY_TAG_PREFIX};
use crate::model::types::*;

/// The stack plus what status writing needs.
#[derive(Debug, Clone)]
pub struct GatewayBuild {
    pub stack: Stack,
    pub listeners: BTreeMap<String, ListenerValidation>,
    pub attachment: Attachment,
    /// Backends left out (route `ns/name`, problem): route status ResolvedRefs False.
    pub dropped_backends: Vec<(String, BackendProblem)>,
}

/// The class's and the Gateway's LoadBalancerConfiguration merged field-wise: the class's wins
/// unless its `mergingMode` is `prefer-gateway`; tags and attributes merge per key.
pub fn merged_config(inputs: &GatewayInputs<'_>) -> LoadBalancerConfigurationSpec {
    let class = inputs.class_config.map(|c| c.spec.clone());
    let gateway = inputs.gateway_config.map(|c| c.spec.clone());
    let (low, high) = match (class, gateway) {
        (None, None) => return LoadBalancerConfigurationSpec::default(),
        (Some(c), None) => return c,
        (None, Some(g)) => return g,
        (Some(c), Some(g)) => match c.merging_mode.unwrap_or_default() {
            MergingMode::PreferGateway => (c, g),
            MergingMode::PreferGatewayClass => (g, c),
        },
    };
    let mut out = low;
    macro_rules! take {
        ($($f:ident),*) => { $( if high.$f.is_some() { out.$f = high.$f.clone(); } )* };
    }
    take!(
        load_balancer_name,
        scheme,
        ip_address_type,
        enforce_security_group_inbound_rules_on_private_link_traffic,
        customer_owned_ipv4_pool,
        ipv4_ipam_pool_id,
        load_balancer_subnets,
        load_balancer_subnets_selector,
        disable_security_group,
        security_groups,
        security_group_prefixes,
        source_ranges,
        enable_icmp,
        manage_backend_security_group_rules,
        waf_v2,
        shield_configuration,
        default_target_group_configuration
    );
    if let Some(t) = &high.tags {
        out.tags.get_or_insert_with(BTreeMap::new).extend(t.clone());
    }
    let mut attrs: BTreeMap<String, String> = out
        .load_balancer_attributes
        .iter()
        .map(|a| (a.key.clone(), a.value.clone()))
        .collect();
    attrs.extend(
        high.load_balancer_attributes
            .iter()
            .map(|a| (a.key.clone(), a.value.clone())),
    );
    out.load_balancer_attributes = attrs
        .into_iter()
        .map(|(key, value)| crate::crd::gateway::KeyValue { key, value })
        .collect();
    let mut listeners: BTreeMap<String, _> = BTreeMap::new();
    for l in out
        .listener_configurations
        .iter()
        .flatten()
        .chain(high.listener_configurations.iter().flatten())
    {
        listeners.insert(l.protocol_port.clone(), l.clone());
    }
    out.listener_configurations =
        (!listeners.is_empty()).then(|| listeners.into_values().collect());
    // Upstream's merger drops the capacity reservation whenever both sides exist, and does not
    // carry the merging mode (it only steers this merge).
    out.minimum_load_balancer_capacity = None;
    out.merging_mode = None;
    out
}

/// Refuses what this build cannot act on yet, with a Gateway error naming it, instead of
/// building a stack without it.
fn check_supported(
    lbc: &LoadBalancerConfigurationSpec,
    routes: &[RouteView<'_>],
) -> Result<(), String> {
    let unsupported = [
        ("wafV2", lbc.waf_v2.is_some()),
        ("shieldConfiguration", lbc.shield_configuration.is_some()),
        ("securityGroups", lbc.security_groups.is_some()),
        (
            "loadBalancerSubnetsSelector",
            lbc.load_balancer_subnets_selector.is_some(),
        ),
        (
            "defaultTargetGroupConfiguration",
            lbc.default_target_group_configuration.is_some(),
        ),
        (
            "minimumLoadBalancerCapacity",
            lbc.minimum_load_balancer_capacity.is_some(),
        ),
        (
            "customerOwnedIpv4Pool",
            lbc.customer_owned_ipv4_pool.is_some(),
        ),
        ("ipv4IPAMPoolId", lbc.ipv4_ipam_pool_id.is_some()),
    ];
    if let Some((field, _)) = unsupported.iter().find(|(_, set)| *set) {
        return Err(format!(
            "LoadBalancerConfiguration field {field} is not supported by this build yet"
        ));
    }
    for r in routes {
        for rule in &r.http_rules {
            if let Some(f) = rule.filters.iter().flatten().next() {
                let t = serde_json::to_value(&f.r#type).unwrap_or_default();
                let t = t.as_str().unwrap_or_default();
                return Err(match t {
                    "RequestRedirect" | "URLRewrite" | "ExtensionRef" => format!(
                        "HTTPRoute filter {t} is not supported by this build yet. Invalid data can be found in route ({}, {}:{})",
                        r.kind.as_str(), r.namespace, r.name
                    ),
                    _ => format!("Unsupported filter type: {t}. Only request redirect is supported. To specify header modification, please configure it through LoadBalancerConfiguration."),
                });
            }
        }
    }
    Ok(())
}

/// Builds the ALB stack of an ALB Gateway from its HTTPRoutes.
pub fn build_alb_gateway_stack(
    inputs: &GatewayInputs<'_>,
    cfg: &ModelConfig,
    subnets: Option<&[SubnetInfo]>,
) -> Result<GatewayBuild, ModelError> {
    build_gateway_stack(inputs, cfg, subnets, LbKind::Alb)
}

/// Builds the NLB stack of an NLB Gateway from its TCPRoutes and UDPRoutes.
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
    let routes: Vec<RouteView<'_>> = match lb {
        LbKind::Alb => inputs.http_routes.iter().map(http_route).collect(),
        LbKind::Nlb => inputs
            .tcp_routes
            .iter()
            .map(tcp_route)
            .chain(inputs.udp_routes.iter().map(udp_route))
            .collect(),
    };
    check_supported(&lbc, &routes).map_err(err)?;

    let validation = listeners::validate(gw_listeners, lb);
    let parent = Parent {
        namespace: ns,
        name,
        listeners: gw_listeners,
        validation: &validation,
    };
    let labels = |n: &str| inputs.namespace_labels(n);
    let attachment = attach(&parent, &routes, &labels);

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
    stack.managed_security_group = Some(managed_sg(
        &lbc,
        gw_listeners,
        ip_type,
        &tags,
        cfg,
        (ns, name, &uid),
    ));
    let mut sgs = vec![Token::ManagedSecurityGroupId];
    let networking_source = if cfg.enable_backend_sg {
        stack.backend_security_group = Some(crate::model::security_group::shared_backend_sg(cfg));
        sgs.push(Token::BackendSecurityGroupId);
        Token::BackendSecurityGroupId
    } else {
        Token::ManagedSecurityGroupId
    };
    let rules = SubnetRules {
        cluster_name: &cfg.cluster_name,
        scheme,
        ip_address_type: ip_type,
        cluster_tag_check: cfg.gate("SubnetsClusterTagCheck"),
        alb_single_subnet: cfg.gate("ALBSingleSubnet"),
        discover_by_reachability: cfg.gate("SubnetDiscoveryByReachability"),
    };
    let listed: Vec<String> = lbc
        .load_balancer_subnets
        .iter()
        .flatten()
        .map(|s| s.identifier.clone())
        .collect();
    let lb_subnets = match (listed.is_empty(), subnets) {
        (false, Some(all)) => {
            Subnets::Resolved(resolve_names_or_ids(all, &listed, &rules).map_err(err)?)
        }
        (false, None) => Subnets::NamesOrIds(listed),
        (true, Some(all)) => Subnets::Resolved(
            discover(all, &rules)
                .map_err(|e| err(format!("couldn't auto-discover subnets: {e}")))?,
        ),
        (true, None) => Subnets::Discover(rules.criteria()),
    };
    stack.load_balancer = Some(LoadBalancer {
        id: "LoadBalancer".into(),
        name: lbc.load_balancer_name.clone().unwrap_or_else(|| {
            names::load_balancer_name(&cfg.cluster_name, ns, name, &uid, scheme)
        }),
        lb_type: lb_type.into(),
        scheme,
        ip_address_type: ip_type,
        subnets: lb_subnets,
        security_groups: sgs,
        security_group_names_or_ids: Vec::new(),
        customer_owned_ipv4_pool: None,
        ipv4_ipam_pool_id: None,
        minimum_capacity_units: None,
        attributes: lbc
            .load_balancer_attributes
            .iter()
            .map(|a| (a.key.clone(), a.value.clone()))
            .collect(),
        tags: tags.resource_tags("LoadBalancer", user_tags.clone()),
        subnet_mappings: Vec::new(),
        enable_prefix_for_ipv6_source_nat: None,
        security_groups_inbound_rules_on_private_link: None,
    });

    let ctx = TgContext {
        tags: &tags,
        gateway_namespace: ns,
        gateway_name: name,
        lb_ip_type: ip_type,
        networking_source,
        infrastructure_labels: inputs
            .gateway
            .spec
            .infrastructure
            .as_ref()
            .and_then(|i| i.labels.clone())
            .unwrap_or_default(),
    };
    let mut target_groups: BTreeMap<String, (TargetGroup, TargetGroupBindingResource)> =
        BTreeMap::new();
    let mut dropped_backends = Vec::new();
    if lb == LbKind::Nlb {
        let l4 = super::l4::L4 {
            inputs,
            routes: &routes,
            attachment: &attachment,
            validation: &validation,
            lbc: &lbc,
            ctx: &ctx,
            user_tags: &user_tags,
        };
        l4.listeners(&mut stack, &mut target_groups, &mut dropped_backends)
            .map_err(err)?;
    }
    let alb_ports = attachment
        .routes_by_port
        .iter()
        .filter(|_| lb == LbKind::Alb);
    for (&port, attached) in alb_ports {
        let protocols: Vec<Protocol> = gw_listeners
            .iter()
            .filter(|l| l.port == port && validation.get(&l.name).is_some_and(|v| v.valid))
            .filter_map(elb_protocol)
            .collect();
        let protocol = port_protocol(&protocols).map_err(err)?;
        let listener_cfg = lbc.listener_configurations.iter().flatten().find(|c| {
            c.protocol_port
                .eq_ignore_ascii_case(&format!("{}:{port}", protocol.as_str()))
        });
        let listener_id = port.to_string();
        let secure = protocol == Protocol::Https;
        stack.listeners.push(Listener {
            id: listener_id.clone(),
            load_balancer_arn: Token::LoadBalancerArn,
            port,
            protocol,
            default_actions: vec![Action::fixed("404", None)],
            certificates: listener_cfg
                .map(|c| {
                    c.default_certificate
                        .iter()
                        .chain(&c.certificates)
                        .cloned()
                        .collect()
                })
                .unwrap_or_default(),
            certificate_discovery: Vec::new(),
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
            tags: tags.listener_tags(&listener_id, user_tags.clone()),
        });
        if secure
            && stack
                .listeners
                .last()
                .is_some_and(|l| l.certificates.is_empty())
        {
            return Err(err(format!(
                "listener HTTPS:{port} needs a certificate: set defaultCertificate in the LoadBalancerConfiguration's listenerConfigurations (ACM certificate discovery is not supported by this build yet)"
            )));
        }
        let hostnames = |i: usize| unit_hostnames(&routes[i], attachment.hostnames.get(&(port, i)));
        for (priority, unit) in sorted_units(&routes, attached, &hostnames)
            .into_iter()
            .enumerate()
        {
            let route = &routes[unit.route];
            let rule = &route.http_rules[unit.rule];
            let default_match = Default::default();
            let m = rule
                .matches
                .as_ref()
                .and_then(|m| m.get(unit.match_index))
                .unwrap_or(&default_match);
            let conditions = http_conditions(&unit.hostname, m).map_err(err)?;
            let mut tuples = Vec::new();
            for b in &route.backends[unit.rule] {
                let resolved = resolve_service(route, b, &|n, s| inputs.service(n, s));
                let (svc, sp) = match resolved {
                    Ok(found) => found,
                    Err(p) if p.fatal => return Err(err(p.message)),
                    Err(p) => {
                        dropped_backends.push((route.key(), p));
                        continue;
                    }
                };
                let svc_ns = svc
                    .metadata
                    .namespace
                    .clone()
                    .unwrap_or_else(|| "default".into());
                let svc_name = svc.metadata.name.clone().unwrap_or_default();
                let props = props_for(inputs.tg_configs, route, &svc_ns, &svc_name);
                let (tg, tgb) = alb_target_group(&ctx, route, protocol, svc, &sp, props.as_ref())
                    .map_err(err)?;
                tuples.push(TargetGroupTuple {
                    target_group_arn: Token::TargetGroupArn(tg.id.clone()),
                    weight: Some(b.weight),
                });
                target_groups.entry(tg.id.clone()).or_insert((tg, tgb));
            }
            let action = if tuples.iter().any(|t| t.weight != Some(0)) {
                Action::Forward {
                    config: ForwardConfig {
                        target_groups: tuples,
                        target_group_stickiness_config: None,
                    },
                }
            } else {
                Action::fixed("500", None)
            };
            let priority = priority as i32 + 1;
            let id = format!("{port}:{priority}");
            stack.listener_rules.push(ListenerRule {
                id: id.clone(),
                listener_arn: Token::ListenerArn(port),
                priority,
                ingress: route.key(),
                conditions,
                actions: vec![action],
                transforms: Vec::new(),
                tags: tags.listener_tags(&id, BTreeMap::new()),
            });
        }
    }
    for (tg, tgb) in target_groups.into_values() {
        stack.target_groups.push(tg);
        stack.target_group_bindings.push(tgb);
    }
    Ok(GatewayBuild {
        stack,
        listeners: validation,
        attachment,
        dropped_backends,
    })
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
