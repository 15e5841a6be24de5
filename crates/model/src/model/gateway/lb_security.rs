//! The security groups of a Gateway's load balancer (upstream's `model_build_security_group.go`):
//! the managed group (plus the cluster's shared backend group when enabled), or the user's
//! `securityGroups` (ids or `Name` tags, resolved by the deployer as for Ingresses) with the
//! shared backend group only under `manageBackendSecurityGroupRules`; none at all for an NLB
//! with `disableSecurityGroup` (its node rules then come from CIDR blocks). An NLB that exists
//! keeps what AWS allows: flipping `disableSecurityGroup` on it fails here, before any write,
//! where upstream fails half-way at AWS.

use gateway_api::apis::standard::gateways::GatewayListeners;

use super::listeners::LbKind;
use super::names;
use crate::crd::gateway::load_balancer_configuration::LoadBalancerConfigurationSpec;
use crate::model::backend_sg::shared_backend_sg;
use crate::model::config::ModelConfig;
use crate::model::env::{ExistingNlb, RefusedGroupsChange};
use crate::model::tags::TagContext;
use crate::model::types::{IpAddressType, IpPermission, SecurityGroup, Stack, Token};

/// What the load balancer gets and where the TargetGroupBindings open node ports from.
#[derive(Debug, Clone, PartialEq)]
pub(super) struct SgChoice {
    /// Groups this stack creates or knows by id.
    pub tokens: Vec<Token>,
    /// The user's groups, ids or `Name` tags, resolved by the deployer.
    pub names_or_ids: Vec<String>,
    /// None: the user's groups front the load balancer and the user opens the node ports.
    pub networking_source: Option<Token>,
}

impl SgChoice {
    /// No group at all: node rules come from CIDR blocks (upstream's `nlbNoSecurityGroups`).
    pub fn none(&self) -> bool {
        self.tokens.is_empty() && self.names_or_ids.is_empty()
    }
}

/// Chooses the groups and puts those the stack creates into `stack`; `managed` builds the
/// managed group when no `securityGroups` are given (an empty list counts as none, as upstream).
/// `existing` is the Gateway's NLB that the deploy keeps, if any.
pub(super) fn choose(
    lbc: &LoadBalancerConfigurationSpec,
    lb: LbKind,
    cfg: &ModelConfig,
    existing: Option<&ExistingNlb>,
    stack: &mut Stack,
    managed: impl FnOnce() -> SecurityGroup,
) -> Result<SgChoice, String> {
    // ALBs always have groups: upstream ignores the switch on them.
    let without = lb == LbKind::Nlb && lbc.disable_security_group == Some(true);
    let refused = existing
        .filter(|_| lb == LbKind::Nlb)
        .and_then(|e| e.refused_change(!without));
    if let Some(change) = refused {
        return Err(refusal(change).into());
    }
    if without {
        return Ok(SgChoice {
            tokens: Vec::new(),
            names_or_ids: Vec::new(),
            networking_source: None,
        });
    }
    let explicit = lbc.security_groups.clone().unwrap_or_default();
    let backend = |stack: &mut Stack| {
        stack.backend_security_group = Some(shared_backend_sg(cfg));
        Token::BackendSecurityGroupId
    };
    if explicit.is_empty() {
        stack.managed_security_group = Some(managed());
        let mut tokens = vec![Token::ManagedSecurityGroupId];
        let source = if cfg.enable_backend_sg {
            tokens.push(backend(stack));
            Token::BackendSecurityGroupId
        } else {
            Token::ManagedSecurityGroupId
        };
        return Ok(SgChoice {
            tokens,
            names_or_ids: Vec::new(),
            networking_source: Some(source),
        });
    }
    let mut choice = SgChoice {
        tokens: Vec::new(),
        names_or_ids: explicit,
        networking_source: None,
    };
    if lbc.manage_backend_security_group_rules == Some(true) {
        if !cfg.enable_backend_sg {
            return Err("backendSG feature is required to manage worker node SG rules when frontendSG manually specified".into());
        }
        choice.tokens.push(backend(stack));
        choice.networking_source = Some(Token::BackendSecurityGroupId);
    }
    Ok(choice)
}

/// Why the Gateway's NLB cannot take its LoadBalancerConfiguration's security-group choice
/// (upstream's Service text first, then what to do).
fn refusal(change: RefusedGroupsChange) -> &'static str {
    match change {
        RefusedGroupsChange::RemoveAll => "conflicting security groups configuration: disableSecurityGroup is true but the Gateway's existing NLB has security groups, and AWS cannot take every group off an NLB; set disableSecurityGroup back to false, or recreate the Gateway for an NLB without security groups",
        RefusedGroupsChange::AddToNone => "conflicting security groups configuration: the Gateway's existing NLB was created without security groups (disableSecurityGroup: true), and AWS cannot add any to it; keep disableSecurityGroup: true, or recreate the Gateway for an NLB with security groups",
    }
}

/// Managed security group: for every Gateway listener (with or without routes) one rule per
/// source range (default `0.0.0.0/0` and, for dual-stack, `::/0`, each followed by its ICMP
/// path-MTU rule under `enableICMP`) and prefix list.
pub(super) fn managed_sg(
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
