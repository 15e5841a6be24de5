//! What every part of the rendering shares: upstream's resource type names, the facts a plan
//! adds ([`PlanFacts`]), references (`{"$ref": ...}`) and tokens resolved against the stack,
//! and upstream's omitempty rules for tags, attributes and optional fields.

use std::collections::BTreeMap;

use serde_json::{json, Map, Value};

use crate::model::types::*;

pub const LOAD_BALANCER: &str = "AWS::ElasticLoadBalancingV2::LoadBalancer";
pub const LISTENER: &str = "AWS::ElasticLoadBalancingV2::Listener";
pub const LISTENER_RULE: &str = "AWS::ElasticLoadBalancingV2::ListenerRule";
pub const TARGET_GROUP: &str = "AWS::ElasticLoadBalancingV2::TargetGroup";
pub const SECURITY_GROUP: &str = "AWS::EC2::SecurityGroup";
pub const TARGET_GROUP_BINDING: &str = "K8S::ElasticLoadBalancingV2::TargetGroupBinding";
pub const WAFV2_ASSOCIATION: &str = "AWS::WAFv2::WebACLAssociation";
pub const WAF_REGIONAL_ASSOCIATION: &str = "AWS::WAFRegional::WebACLAssociation";
pub const SHIELD_PROTECTION: &str = "AWS::Shield::Protection";
pub const CERTIFICATE: &str = "AWS::ACM::Certificate";
/// Upstream adds this (type and id alike) to every Ingress stack, empty without a frontend NLB.
pub const FRONTEND_NLB_TARGET_GROUP: &str = "FrontendNLBTargetGroup";

/// What upstream's model builder knows from AWS that ours leaves to the deployer.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct PlanFacts {
    /// Id of the cluster's shared backend security group when auto-created (not configured).
    pub backend_sg: Option<String>,
    /// The load balancer's subnets when the model only carries how to find them.
    pub subnets: Option<Vec<String>>,
    /// Ids of the security groups the model names (`security-groups` annotation), in place of
    /// the names.
    pub security_groups: Option<Vec<String>>,
}

pub(super) fn resource_ref(kind: &str, id: &str, field: &str) -> Value {
    json!({"$ref": format!("#/resources/{kind}/{id}/status/{field}")})
}

/// Tags as upstream's model holds them: without the tracking tags; None when empty (omitempty).
pub(super) fn user_tags(tags: &BTreeMap<String, String>) -> Option<Value> {
    let user: Map<String, Value> = tags
        .iter()
        .filter(|(k, _)| {
            let k = k.as_str();
            k != TAG_CLUSTER
                && k != TAG_STACK
                && k != TAG_RESOURCE
                && !k.starts_with("service.k8s.aws/")
                && !is_gateway_tracking(k, &["stack", "resource"])
        })
        .map(|(k, v)| (k.clone(), json!(v)))
        .collect();
    (!user.is_empty()).then_some(Value::Object(user))
}

/// A Gateway stack's tracking tag or label (`gateway.k8s.aws.{alb,nlb}/<one of names>`), which
/// upstream adds at deploy time rather than in the model.
pub(super) fn is_gateway_tracking(key: &str, names: &[&str]) -> bool {
    [ALB_GATEWAY_TAG_PREFIX, NLB_GATEWAY_TAG_PREFIX]
        .iter()
        .any(|p| names.iter().any(|n| key == format!("{p}/{n}")))
}

/// `[{"key","value"}]` (upstream's load-balancer and target-group attributes); None when empty.
pub(super) fn key_values(m: &BTreeMap<String, String>) -> Option<Value> {
    (!m.is_empty()).then(|| {
        m.iter()
            .map(|(k, v)| json!({"key": k, "value": v}))
            .collect()
    })
}

pub(super) fn put(o: &mut Value, k: &str, v: Option<Value>) {
    if let Some(v) = v {
        o[k] = v;
    }
}

pub(super) fn opt<T: serde::Serialize>(v: Option<&T>) -> Option<Value> {
    v.map(|v| json!(v))
}

/// Renders the stack's resources; references resolve against the stack and the plan's facts.
pub(super) struct Renderer<'a> {
    pub(super) stack: &'a Stack,
    pub(super) facts: &'a PlanFacts,
}

impl Renderer<'_> {
    pub(super) fn token(&self, t: &Token) -> Value {
        let lb_id = || {
            self.stack
                .load_balancer
                .as_ref()
                .map_or("LoadBalancer", |l| l.id.as_str())
        };
        let sg_id = || {
            self.stack
                .managed_security_group
                .as_ref()
                .map_or("ManagedLBSecurityGroup", |s| s.id.as_str())
        };
        match t {
            Token::Literal(s) => json!(s),
            Token::LoadBalancerArn => resource_ref(LOAD_BALANCER, lb_id(), "loadBalancerARN"),
            Token::FrontendNlbArn => {
                resource_ref(LOAD_BALANCER, FRONTEND_NLB_ID, "loadBalancerARN")
            }
            Token::ListenerArn(port) => {
                let id = self
                    .stack
                    .listeners
                    .iter()
                    .find(|l| l.port == *port)
                    .map_or_else(|| port.to_string(), |l| l.id.clone());
                resource_ref(LISTENER, &id, "listenerARN")
            }
            Token::TargetGroupArn(id) => resource_ref(TARGET_GROUP, id, "targetGroupARN"),
            Token::ManagedSecurityGroupId => resource_ref(SECURITY_GROUP, sg_id(), "groupID"),
            Token::BackendSecurityGroupId => json!(self
                .stack
                .backend_security_group
                .as_ref()
                .and_then(|b| b.group_id.clone())
                .or_else(|| self.facts.backend_sg.clone())
                .unwrap_or_default()),
            Token::CertificateArn(id) => resource_ref(CERTIFICATE, id, "certificateARN"),
        }
    }
}
