//! What every target group of a Gateway shares (`TgContext`): the stack's tags, the Gateway,
//! the load balancer's IP address type, where its TargetGroupBindings admit traffic from (a
//! security group, or the CIDR blocks of an NLB without security groups), and the Gateway's
//! infrastructure labels and annotations.

use std::collections::BTreeMap;

use super::load_balancer::BuiltLb;
use super::GatewayInputs;
use crate::model::tags::TagContext;
use crate::model::tgb_cidrs::{self, Sources};
use crate::model::types::*;

/// What a target group needs to know about its Gateway.
pub struct TgContext<'a> {
    pub tags: &'a TagContext<'a>,
    pub gateway_namespace: &'a str,
    pub gateway_name: &'a str,
    pub lb_ip_type: IpAddressType,
    /// Source of the TGB networking rules; None when the user's own security groups front the
    /// load balancer without `manageBackendSecurityGroupRules` (the user opens the node ports).
    pub networking_source: Option<Token>,
    /// An NLB without security groups (`disableSecurityGroup`): node rules from CIDR blocks.
    pub cidr_sources: Option<Sources<'a>>,
    /// The Gateway's `spec.infrastructure.labels`, put on every TargetGroupBinding (the stack
    /// labels win a clash, as upstream's binding manager merges them).
    pub infrastructure_labels: BTreeMap<String, String>,
    /// The Gateway's `spec.infrastructure.annotations`: every TargetGroupBinding carries exactly
    /// these (upstream's binding template).
    pub infrastructure_annotations: BTreeMap<String, String>,
}

impl<'a> TgContext<'a> {
    /// The context of the Gateway of `inputs` behind the load balancer `built`;
    /// `source_ranges` are its configuration's (node rules of an NLB without security groups).
    pub(super) fn new(
        inputs: &'a GatewayInputs<'_>,
        tags: &'a TagContext<'a>,
        built: &'a BuiltLb,
        source_ranges: &'a [String],
    ) -> Self {
        let cidr_sources = built.no_sgs.then_some(Sources {
            subnets: built.subnets.as_deref(),
            scheme: built.scheme,
            source_ranges,
            vpc_cidrs: inputs.vpc_cidrs,
        });
        let infrastructure = inputs.gateway.spec.infrastructure.as_ref();
        TgContext {
            tags,
            gateway_namespace: inputs.gateway_namespace(),
            gateway_name: inputs.gateway_name(),
            lb_ip_type: built.ip_type,
            networking_source: built.networking_source.clone(),
            cidr_sources,
            infrastructure_labels: infrastructure
                .and_then(|i| i.labels.clone())
                .unwrap_or_default(),
            infrastructure_annotations: infrastructure
                .and_then(|i| i.annotations.clone())
                .unwrap_or_default(),
        }
    }

    /// An NLB without security groups whose node rules wait for AWS facts (its subnets, and
    /// the VPC's CIDR blocks when internal) says so.
    pub(super) fn warn_unknown_cidrs(&self, stack: &mut Stack) {
        let unknown = self.cidr_sources.as_ref().is_some_and(|s| {
            s.subnets.is_none()
                || (s.scheme == LoadBalancerScheme::Internal && s.vpc_cidrs.is_none())
        });
        if unknown {
            stack.warnings.push(Warning {
                ingress: None,
                annotation: None,
                message: tgb_cidrs::NEEDS_AWS.into(),
            });
        }
    }
}
