//! The load balancer of a Gateway (upstream's `model_build_load_balancer.go`): scheme and IP
//! address type of the merged LoadBalancerConfiguration, its tags (no externally managed key),
//! security groups (`lb_security`), subnets and subnet mappings (`lb_subnets`), attributes and
//! the fields only one kind reads (`lb_config`), and the name given or upstream's.

use std::collections::BTreeMap;

use gateway_api::apis::standard::gateways::GatewayListeners;

use super::listeners::LbKind;
use super::{lb_config, lb_security, lb_subnets, names, GatewayInputs};
use crate::crd::gateway::load_balancer_configuration::{
    LbIpAddressType, LoadBalancerConfigurationSpec, Scheme,
};
use crate::model::subnets::{SubnetInfo, SubnetRules};
use crate::model::tags::TagContext;
use crate::model::types::*;

/// What the rest of the build needs to know about the load balancer.
pub(super) struct BuiltLb {
    pub scheme: LoadBalancerScheme,
    pub ip_type: IpAddressType,
    /// The configuration's tags (also those of the listeners and rules).
    pub user_tags: BTreeMap<String, String>,
    /// No security group at all: node rules come from CIDR blocks.
    pub no_sgs: bool,
    /// Where the TargetGroupBindings open node ports from (see `lb_security::SgChoice`).
    pub networking_source: Option<Token>,
    /// The load balancer's subnets, when the VPC's are known.
    pub subnets: Option<Vec<SubnetInfo>>,
}

/// Puts the load balancer, and the security groups the stack creates, into `stack`; `considered`
/// are every listener the Gateway offers (the managed security group's rules).
pub(super) fn build(
    inputs: &GatewayInputs<'_>,
    lbc: &LoadBalancerConfigurationSpec,
    lb: LbKind,
    considered: &[GatewayListeners],
    tags: &TagContext<'_>,
    subnets: Option<&[SubnetInfo]>,
    stack: &mut Stack,
) -> Result<BuiltLb, String> {
    let cfg = tags.cfg;
    let (ns, name) = (inputs.gateway_namespace(), inputs.gateway_name());
    let uid = inputs.gateway.metadata.uid.clone().unwrap_or_default();
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
        return Err(format!("external managed tag key {k} cannot be specified"));
    }
    // A scheme change replaces the load balancer: the new one may have groups or none.
    let existing = inputs.existing_load_balancer.filter(|e| e.scheme == scheme);
    let sg = lb_security::choose(lbc, lb, cfg, existing, stack, || {
        lb_security::managed_sg(lbc, considered, ip_type, tags, cfg, (ns, name, &uid))
    })?;
    let rules = SubnetRules {
        cluster_name: &cfg.cluster_name,
        scheme,
        ip_address_type: ip_type,
        cluster_tag_check: cfg.gate("SubnetsClusterTagCheck"),
        // An NLB needs one subnet, as for Services; an ALB two unless `ALBSingleSubnet`.
        alb_single_subnet: lb == LbKind::Nlb || cfg.gate("ALBSingleSubnet"),
        discover_by_reachability: cfg.gate("SubnetDiscoveryByReachability"),
    };
    let source_nat = lb_subnets::validate(lbc, lb, scheme, ip_type)?;
    let chosen = lb_subnets::choose(lbc, subnets, &rules)?;
    let no_sgs = sg.none();
    let subnet_mappings = lb_subnets::mappings(lbc, lb, chosen.resolved.as_deref())?;
    let per_kind = lb_config::per_kind(lbc, lb, &mut stack.warnings);
    let lb_type = match lb {
        LbKind::Alb => "application",
        LbKind::Nlb => "network",
    };
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
    Ok(BuiltLb {
        scheme,
        ip_type,
        user_tags,
        no_sgs,
        networking_source: sg.networking_source,
        subnets: chosen.resolved,
    })
}
