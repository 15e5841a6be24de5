//! Warnings for LoadBalancerConfiguration fields upstream accepts and never acts on where they
//! are set: `listenerConfigurations[]` fields for another load balancer kind or protocol, fields
//! another field overrides (security groups, subnet identifiers) and a Gateway's own
//! `mergingMode`. What is built stays upstream's; the user only learns the field did nothing.

use gateway_api::apis::standard::gateways::GatewayListeners;

use super::listeners::{elb_protocol, LbKind};
use super::unread::warning;
use super::GatewayInputs;
use crate::crd::gateway::load_balancer_configuration::{
    ListenerConfiguration, LoadBalancerConfigurationSpec,
};
use crate::model::types::{Protocol, Stack};

/// Why one `listenerConfigurations[]` field does nothing on a listener of `protocol` on a load
/// balancer of kind `lb`, if it does nothing (upstream's `buildL7ListenerSpec` builds mutual
/// authentication only, `buildL4ListenerSpec` ALPN and stickiness only, and
/// `buildListenerSpec` certificates and the SSL policy for HTTPS/TLS only).
fn listener_field_unused(field: &str, lb: LbKind, protocol: Protocol) -> Option<&'static str> {
    let secure = matches!(protocol, Protocol::Https | Protocol::Tls);
    match (field, lb) {
        ("mutualAuthentication", LbKind::Nlb) => {
            Some("Network Load Balancer listeners take no mutual authentication")
        }
        ("mutualAuthentication", LbKind::Alb) if protocol != Protocol::Https => {
            Some("mutual authentication needs an HTTPS listener")
        }
        ("alpnPolicy", LbKind::Alb) => Some("Application Load Balancer listeners take no ALPN policy"),
        ("alpnPolicy", LbKind::Nlb) if protocol != Protocol::Tls => {
            Some("an ALPN policy needs a TLS listener")
        }
        ("targetGroupStickiness", LbKind::Alb) => Some(
            "Application Load Balancer listeners forward by rule (use a ListenerRuleConfiguration forward action's targetGroupStickinessConfig)",
        ),
        ("sslPolicy" | "defaultCertificate" | "certificates", _) if !secure => {
            Some("only HTTPS and TLS listeners take certificates and an SSL policy")
        }
        _ => None,
    }
}

/// The fields `c` sets that a listener could ignore.
fn set_listener_fields(c: &ListenerConfiguration) -> Vec<&'static str> {
    [
        ("mutualAuthentication", c.mutual_authentication.is_some()),
        ("alpnPolicy", c.alpn_policy.is_some()),
        ("targetGroupStickiness", c.target_group_stickiness.is_some()),
        ("sslPolicy", c.ssl_policy.is_some()),
        ("defaultCertificate", c.default_certificate.is_some()),
        ("certificates", !c.certificates.is_empty()),
    ]
    .into_iter()
    .filter_map(|(field, set)| set.then_some(field))
    .collect()
}

/// `listenerConfigurations[]` fields (of the merged configuration) that the listener they name
/// does not take: said per entry and field.
pub(super) fn warn_unused_listener_fields(
    lbc: &LoadBalancerConfigurationSpec,
    valid: &[&GatewayListeners],
    lb: LbKind,
    stack: &mut Stack,
) {
    for c in lbc.listener_configurations.iter().flatten() {
        let protocol = valid.iter().find_map(|l| {
            let p = elb_protocol(l)?;
            let key = format!("{}:{}", p.as_str(), l.port);
            key.eq_ignore_ascii_case(&c.protocol_port).then_some(p)
        });
        // An entry naming no listener has its own Warning (`warn_unmatched_listener_configurations`).
        let Some(protocol) = protocol else { continue };
        for field in set_listener_fields(c) {
            if let Some(why) = listener_field_unused(field, lb, protocol) {
                let message = format!(
                    "listenerConfigurations entry {}: {field} is ignored: {why}",
                    c.protocol_port
                );
                let path = format!("listenerConfigurations[].{field}");
                stack.warnings.push(warning(&path, message));
            }
        }
    }
}

/// Security group fields that another one makes moot (upstream's `buildSecurityGroups`): on an
/// NLB without security groups the group fields; with the user's `securityGroups` the managed
/// group's rules (`sourceRanges`, `securityGroupPrefixes`, `enableICMP`); without them
/// `manageBackendSecurityGroupRules`; `disableSecurityGroup` on an ALB.
pub(super) fn warn_overridden_security_fields(
    lbc: &LoadBalancerConfigurationSpec,
    lb: LbKind,
    stack: &mut Stack,
) {
    let non_empty = |v: &Option<Vec<String>>| v.as_ref().is_some_and(|v| !v.is_empty());
    let groups = non_empty(&lbc.security_groups);
    let prefixes = non_empty(&lbc.security_group_prefixes);
    let icmp = lbc.enable_icmp == Some(true);
    let manage = lbc.manage_backend_security_group_rules == Some(true);
    let disabled = lbc.disable_security_group == Some(true);
    let (ignored, why): (Vec<(&str, bool)>, &str) = if disabled && lb == LbKind::Nlb {
        (
            vec![
                ("securityGroups", groups),
                ("securityGroupPrefixes", prefixes),
                ("enableICMP", icmp),
                ("manageBackendSecurityGroupRules", manage),
            ],
            "disableSecurityGroup makes the Network Load Balancer without security groups",
        )
    } else if groups {
        (
            vec![
                ("sourceRanges", non_empty(&lbc.source_ranges)),
                ("securityGroupPrefixes", prefixes),
                ("enableICMP", icmp),
            ],
            "with securityGroups no managed security group is made (open the listener ports in your own groups)",
        )
    } else {
        (
            vec![("manageBackendSecurityGroupRules", manage)],
            "it only applies with securityGroups; the managed security group's node rules are always made",
        )
    };
    for (field, _) in ignored.into_iter().filter(|(_, set)| *set) {
        let message = format!("LoadBalancerConfiguration field {field} is ignored: {why}");
        stack.warnings.push(warning(field, message));
    }
    if disabled && lb == LbKind::Alb {
        let message = "LoadBalancerConfiguration field disableSecurityGroup is ignored: it applies to Network Load Balancers only; an Application Load Balancer always has security groups".to_string();
        stack
            .warnings
            .push(warning("disableSecurityGroup", message));
    }
}

/// `loadBalancerSubnetsSelector` next to subnet identifiers in `loadBalancerSubnets`: the
/// identifiers win (upstream's `resolveEC2Subnets`), the selector is never read.
pub(super) fn warn_overridden_subnet_selector(
    lbc: &LoadBalancerConfigurationSpec,
    stack: &mut Stack,
) {
    let identifiers = lbc
        .load_balancer_subnets
        .iter()
        .flatten()
        .any(|s| !s.identifier.is_empty());
    let selector = lbc
        .load_balancer_subnets_selector
        .as_ref()
        .is_some_and(|s| !s.is_empty());
    if identifiers && selector {
        let message = "LoadBalancerConfiguration field loadBalancerSubnetsSelector is ignored: loadBalancerSubnets lists subnet identifiers, which win".to_string();
        stack
            .warnings
            .push(warning("loadBalancerSubnetsSelector", message));
    }
}

/// `mergingMode` on the Gateway's own LoadBalancerConfiguration: upstream's merger reads only the
/// GatewayClass's (the same object named by both counts as the class's).
pub(super) fn warn_gateway_merging_mode(inputs: &GatewayInputs<'_>, stack: &mut Stack) {
    let Some(own) = inputs.gateway_config else {
        return;
    };
    if own.spec.merging_mode.is_none() {
        return;
    }
    let id = |c: &crate::crd::gateway::LoadBalancerConfiguration| {
        (c.metadata.namespace.clone(), c.metadata.name.clone())
    };
    if inputs.class_config.is_some_and(|c| id(c) == id(own)) {
        return;
    }
    let message = format!(
        "LoadBalancerConfiguration {}/{}: mergingMode is ignored on a Gateway's configuration: only the GatewayClass's configuration decides which side wins",
        own.metadata.namespace.as_deref().unwrap_or("default"),
        own.metadata.name.as_deref().unwrap_or_default()
    );
    stack.warnings.push(warning("mergingMode", message));
}
