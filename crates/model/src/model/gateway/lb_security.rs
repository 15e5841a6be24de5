//! The security groups of a Gateway's load balancer (upstream's `model_build_security_group.go`):
//! the managed group (plus the cluster's shared backend group when enabled), or the user's
//! `securityGroups` (ids or `Name` tags, resolved by the deployer as for Ingresses) with the
//! shared backend group only under `manageBackendSecurityGroupRules`; none at all for an NLB
//! with `disableSecurityGroup` (its node rules then come from CIDR blocks). An NLB that exists
//! keeps what AWS allows: flipping `disableSecurityGroup` on it fails here, before any write,
//! where upstream fails half-way at AWS.

use super::listeners::LbKind;
use crate::crd::gateway::load_balancer_configuration::LoadBalancerConfigurationSpec;
use crate::model::config::ModelConfig;
use crate::model::security_group::shared_backend_sg;
use crate::model::service::{ExistingNlb, RefusedGroupsChange};
use crate::model::types::{SecurityGroup, Stack, Token};

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
