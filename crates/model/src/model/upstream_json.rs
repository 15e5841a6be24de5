//! Our `Stack` in the JSON schema of upstream's stack marshaller (`deploy.StackMarshaller`):
//! `{"id": <stack id>, "resources": {<type>: {<resource id>: {"spec": ...}}}}`, with upstream's
//! field names and omitempty rules and references as `{"$ref": "#/resources/<type>/<id>/status/<field>"}`.
//! It is what upstream writes to `alb.ingress.kubernetes.io/dry-run-plan` (gate
//! `IngressPlanAnnotation`), which its migration console reads, and what its model-builder
//! tests expect (`src/model/golden_ingress`, `src/model/service/golden_tests.rs`).
//!
//! Upstream's model holds no tracking tags (they are added at deploy time), so ours are left
//! out. Facts our model leaves to the deployer (the auto-created backend security group, the
//! discovered subnets, security-group names) come from [`PlanFacts`]; an unknown one is omitted (subnets) or shown
//! as "" (backend SG), never guessed. Serialisation is deterministic: objects are built in a
//! fixed order from sorted collections.

use std::collections::BTreeMap;

use serde_json::{json, Map, Value};

mod listeners;
mod target_groups;

use super::tags::{
    ALB_GATEWAY_TAG_PREFIX, NLB_GATEWAY_TAG_PREFIX, TAG_CLUSTER, TAG_RESOURCE, TAG_STACK,
};
use super::types::*;
use target_groups::target_group;

pub const LOAD_BALANCER: &str = "AWS::ElasticLoadBalancingV2::LoadBalancer";
pub const LISTENER: &str = "AWS::ElasticLoadBalancingV2::Listener";
pub const LISTENER_RULE: &str = "AWS::ElasticLoadBalancingV2::ListenerRule";
pub const TARGET_GROUP: &str = "AWS::ElasticLoadBalancingV2::TargetGroup";
pub const SECURITY_GROUP: &str = "AWS::EC2::SecurityGroup";
pub const TARGET_GROUP_BINDING: &str = "K8S::ElasticLoadBalancingV2::TargetGroupBinding";
pub const WAFV2_ASSOCIATION: &str = "AWS::WAFv2::WebACLAssociation";
pub const WAF_REGIONAL_ASSOCIATION: &str = "AWS::WAFRegional::WebACLAssociation";
pub const SHIELD_PROTECTION: &str = "AWS::Shield::Protection";
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

/// The stack in upstream's marshalled shape.
pub fn render(stack: &Stack, facts: &PlanFacts) -> Value {
    let r = Renderer { stack, facts };
    let mut res = Map::new();
    let mut group = |kind: &str, entries: Vec<(String, Value)>| {
        if !entries.is_empty() {
            let m: Map<String, Value> = entries
                .into_iter()
                .map(|(k, v)| (k, json!({ "spec": v })))
                .collect();
            res.insert(kind.to_string(), Value::Object(m));
        }
    };
    if let Some(sg) = &stack.managed_security_group {
        group(SECURITY_GROUP, vec![(sg.id.clone(), security_group(sg))]);
    }
    let fe = stack.frontend_nlb.as_ref();
    let fe_listeners = fe.into_iter().flat_map(|f| &f.listeners);
    let listeners = stack
        .listeners
        .iter()
        .chain(fe_listeners)
        .map(|l| (l.id.clone(), r.listener(l)));
    group(LISTENER, listeners.collect());
    let rules = stack
        .listener_rules
        .iter()
        .map(|l| (l.id.clone(), r.rule(l)));
    group(LISTENER_RULE, rules.collect());
    let lbs = stack
        .load_balancer
        .iter()
        .chain(fe.map(|f| &f.load_balancer))
        .map(|lb| (lb.id.clone(), r.lb_or_frontend(lb)));
    group(LOAD_BALANCER, lbs.collect());
    let fe_tgs = fe
        .into_iter()
        .flat_map(|f| &f.target_groups)
        .map(|t| (t.id.clone(), target_groups::alb_target_group(t)));
    let tgs = stack
        .target_groups
        .iter()
        .map(|t| (t.id.clone(), target_group(t)))
        .chain(fe_tgs);
    group(TARGET_GROUP, tgs.collect());
    let tgbs = stack
        .target_group_bindings
        .iter()
        .map(|b| (b.id.clone(), r.binding(b)));
    group(TARGET_GROUP_BINDING, tgbs.collect());
    if let Some(lb) = &stack.load_balancer {
        let lb_ref = || resource_ref(LOAD_BALANCER, &lb.id, "loadBalancerARN");
        let a = &stack.addons;
        // Upstream resolves a WebACL name to its ARN while building; ours does so at deploy
        // time, so the name stands in for it.
        if let Some(acl) = a.wafv2_acl_arn.as_ref().or(a.wafv2_acl_name.as_ref()) {
            let acl = if acl == "none" { "" } else { acl.as_str() };
            let spec = json!({"webACLARN": acl, "resourceARN": lb_ref()});
            group(WAFV2_ASSOCIATION, vec![(lb.id.clone(), spec)]);
        }
        if let Some(acl) = &a.waf_regional_acl_id {
            let acl = if acl == "none" { "" } else { acl.as_str() };
            let spec = json!({"webACLID": acl, "resourceARN": lb_ref()});
            group(WAF_REGIONAL_ASSOCIATION, vec![(lb.id.clone(), spec)]);
        }
        if let Some(on) = a.shield_advanced_protection {
            let spec = json!({"enabled": on, "resourceARN": lb_ref()});
            group(SHIELD_PROTECTION, vec![(lb.id.clone(), spec)]);
        }
    }
    if is_ingress_stack(stack) {
        // Not a `spec` resource: upstream marshals the desired-state struct itself.
        let states: Map<String, Value> = fe
            .into_iter()
            .flat_map(|f| &f.target_groups)
            .map(|t| (t.name.clone(), target_groups::frontend_state(t)))
            .collect();
        res.insert(
            FRONTEND_NLB_TARGET_GROUP.into(),
            json!({ FRONTEND_NLB_TARGET_GROUP: {"TargetGroups": states} }),
        );
    }
    json!({"id": stack.stack_id, "resources": res})
}

/// [`render`] as the compact JSON text upstream writes into the annotation, escaped as Go's
/// `json.Marshal` escapes (`<`, `>`, `&`, U+2028, U+2029 as `\uXXXX`; they only occur inside
/// strings, so the value is unchanged).
pub fn to_string(stack: &Stack, facts: &PlanFacts) -> String {
    let text = render(stack, facts).to_string();
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '<' | '>' | '&' | '\u{2028}' | '\u{2029}' => {
                out.push_str(&format!("\\u{:04x}", c as u32))
            }
            c => out.push(c),
        }
    }
    out
}

/// Ingress stacks build an application load balancer; Service stacks a network one.
fn is_ingress_stack(stack: &Stack) -> bool {
    stack
        .load_balancer
        .as_ref()
        .is_some_and(|lb| lb.lb_type == "application")
}

fn resource_ref(kind: &str, id: &str, field: &str) -> Value {
    json!({"$ref": format!("#/resources/{kind}/{id}/status/{field}")})
}

/// Tags as upstream's model holds them: without the tracking tags; None when empty (omitempty).
fn user_tags(tags: &BTreeMap<String, String>) -> Option<Value> {
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
fn is_gateway_tracking(key: &str, names: &[&str]) -> bool {
    [ALB_GATEWAY_TAG_PREFIX, NLB_GATEWAY_TAG_PREFIX]
        .iter()
        .any(|p| names.iter().any(|n| key == format!("{p}/{n}")))
}

/// `[{"key","value"}]` (upstream's load-balancer and target-group attributes); None when empty.
fn key_values(m: &BTreeMap<String, String>) -> Option<Value> {
    (!m.is_empty()).then(|| {
        m.iter()
            .map(|(k, v)| json!({"key": k, "value": v}))
            .collect()
    })
}

fn put(o: &mut Value, k: &str, v: Option<Value>) {
    if let Some(v) = v {
        o[k] = v;
    }
}

fn opt<T: serde::Serialize>(v: Option<&T>) -> Option<Value> {
    v.map(|v| json!(v))
}

fn permission(p: &IpPermission) -> Value {
    let mut o = json!({"ipProtocol": p.ip_protocol, "fromPort": p.from_port, "toPort": p.to_port});
    put(
        &mut o,
        "ipRanges",
        p.cidr_ipv4.as_ref().map(|c| json!([{ "cidrIP": c }])),
    );
    put(
        &mut o,
        "ipv6Ranges",
        p.cidr_ipv6.as_ref().map(|c| json!([{ "cidrIPv6": c }])),
    );
    put(
        &mut o,
        "prefixLists",
        p.prefix_list_id.as_ref().map(|c| json!([{ "listID": c }])),
    );
    o
}

fn security_group(sg: &SecurityGroup) -> Value {
    let mut o = json!({"groupName": sg.name, "description": sg.description});
    put(&mut o, "tags", user_tags(&sg.tags));
    if !sg.ingress.is_empty() {
        o["ingress"] = sg.ingress.iter().map(permission).collect();
    }
    o
}

struct Renderer<'a> {
    stack: &'a Stack,
    facts: &'a PlanFacts,
}

impl Renderer<'_> {
    fn token(&self, t: &Token) -> Value {
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
        }
    }

    fn subnet_mapping(&self, lb: &LoadBalancer) -> Option<Value> {
        let ids = |ids: &[String]| ids.iter().map(|s| json!({ "subnetID": s })).collect();
        if !lb.subnet_mappings.is_empty() {
            let all = lb.subnet_mappings.iter().map(|m| {
                let mut s = json!({"subnetID": m.subnet_id});
                put(&mut s, "allocationID", opt(m.allocation_id.as_ref()));
                put(
                    &mut s,
                    "privateIPv4Address",
                    opt(m.private_ipv4_address.as_ref()),
                );
                put(&mut s, "ipv6Address", opt(m.ipv6_address.as_ref()));
                put(
                    &mut s,
                    "sourceNatIpv6Prefix",
                    opt(m.source_nat_ipv6_prefix.as_ref()),
                );
                s
            });
            return Some(all.collect());
        }
        match (&lb.subnets, &self.facts.subnets) {
            (Subnets::Resolved(v), _) if !v.is_empty() => Some(ids(v)),
            (_, Some(v)) if !v.is_empty() => Some(ids(v)),
            _ => None,
        }
    }

    /// The ALB with the plan's facts; the frontend NLB without them (they are the ALB's).
    fn lb_or_frontend(&self, lb: &LoadBalancer) -> Value {
        if lb.id != FRONTEND_NLB_ID {
            return self.lb(lb);
        }
        // The ALB's security groups, when the NLB takes them, resolve as the ALB's do.
        let alb_sgs = self
            .stack
            .load_balancer
            .as_ref()
            .map(|a| &a.security_group_names_or_ids);
        let shared_sgs = alb_sgs == Some(&lb.security_group_names_or_ids);
        let bare = Renderer {
            stack: self.stack,
            facts: &PlanFacts {
                backend_sg: self.facts.backend_sg.clone(),
                subnets: None,
                security_groups: self.facts.security_groups.clone().filter(|_| shared_sgs),
            },
        };
        bare.lb(lb)
    }

    fn lb(&self, lb: &LoadBalancer) -> Value {
        let mut o = json!({"name": lb.name, "type": lb.lb_type, "scheme": lb.scheme,
            "ipAddressType": lb.ip_address_type});
        put(
            &mut o,
            "enablePrefixForIpv6SourceNat",
            opt(lb.enable_prefix_for_ipv6_source_nat.as_ref()),
        );
        put(&mut o, "subnetMapping", self.subnet_mapping(lb));
        // Upstream lists the user's groups first, then the shared backend group.
        let named = self.facts.security_groups.as_ref();
        let mut sgs: Vec<Value> = named
            .unwrap_or(&lb.security_group_names_or_ids)
            .iter()
            .map(|n| json!(n))
            .collect();
        sgs.extend(lb.security_groups.iter().map(|t| self.token(t)));
        put(
            &mut o,
            "securityGroups",
            (!sgs.is_empty()).then(|| json!(sgs)),
        );
        put(
            &mut o,
            "securityGroupsInboundRulesOnPrivateLink",
            opt(lb.security_groups_inbound_rules_on_private_link.as_ref()),
        );
        put(
            &mut o,
            "customerOwnedIPv4Pool",
            opt(lb.customer_owned_ipv4_pool.as_ref()),
        );
        put(&mut o, "loadBalancerAttributes", key_values(&lb.attributes));
        put(
            &mut o,
            "minimumLoadBalancerCapacity",
            lb.minimum_capacity_units
                .map(|c| json!({ "capacityUnits": c })),
        );
        put(&mut o, "tags", user_tags(&lb.tags));
        put(&mut o, "ipv4IPAMPool", opt(lb.ipv4_ipam_pool_id.as_ref()));
        o
    }
}

#[cfg(test)]
#[path = "upstream_json_tests.rs"]
mod tests;
