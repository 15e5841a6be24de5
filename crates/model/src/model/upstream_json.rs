//! Our `Stack` in the JSON schema of upstream's stack marshaller (`deploy.StackMarshaller`):
//! `{"id": <stack id>, "resources": {<type>: {<resource id>: {"spec": ...}}}}`, with upstream's
//! field names and omitempty rules and references as `{"$ref": "#/resources/<type>/<id>/status/<field>"}`.
//! It is what upstream writes to `alb.ingress.kubernetes.io/dry-run-plan` (gate
//! `IngressPlanAnnotation`), which its migration console reads, and what its model-builder
//! tests expect (`src/model/golden_ingress`, `src/model/service/tests/golden.rs`).
//!
//! Upstream's model holds no tracking tags (they are added at deploy time), so ours are left
//! out. Facts our model leaves to the deployer (the auto-created backend security group, the
//! discovered subnets, security-group names) come from [`PlanFacts`]; an unknown one is omitted (subnets) or shown
//! as "" (backend SG), never guessed. Serialisation is deterministic: objects are built in a
//! fixed order from sorted collections, and the text ([`to_string`]) has Go's key order
//! (`order`: struct fields as upstream declares them, map keys sorted).
//!
//! Gateway stacks add what Ingress stacks lack: the `alb`-type target groups of an NLB
//! Gateway's `Gateway` backends (as target groups, with their state under
//! `FrontendNLBTargetGroup`, which every Gateway stack carries, as upstream's builder adds it).

use serde_json::{json, Map, Value};

mod listeners;
mod load_balancers;
mod order;
mod target_groups;
mod values;

use super::types::*;
use load_balancers::security_group;
use target_groups::target_group;
use values::{resource_ref, Renderer};
pub use values::{
    PlanFacts, CERTIFICATE, FRONTEND_NLB_TARGET_GROUP, LISTENER, LISTENER_RULE, LOAD_BALANCER,
    SECURITY_GROUP, SHIELD_PROTECTION, TARGET_GROUP, TARGET_GROUP_BINDING, WAFV2_ASSOCIATION,
    WAF_REGIONAL_ASSOCIATION,
};

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
    let certs = stack
        .certificates
        .iter()
        .map(|c| (c.id.clone(), listeners::certificate(c)));
    group(CERTIFICATE, certs.collect());
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
    let gateway_tgs = stack
        .alb_target_groups
        .iter()
        .map(|t| (t.id.clone(), target_groups::alb_target_group(t)));
    let tgs = stack
        .target_groups
        .iter()
        .map(|t| (t.id.clone(), target_group(t)))
        .chain(fe_tgs)
        .chain(gateway_tgs);
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
    if is_ingress_stack(stack) || is_gateway_stack(stack) {
        // Not a `spec` resource: upstream marshals the desired-state struct itself.
        let ingress_states = fe
            .into_iter()
            .flat_map(|f| &f.target_groups)
            .map(|t| (t.name.clone(), target_groups::frontend_state(t)));
        let gateway_states = stack
            .alb_target_groups
            .iter()
            .map(|t| (t.name.clone(), r.gateway_backend_state(t)));
        let states: Map<String, Value> = ingress_states.chain(gateway_states).collect();
        res.insert(
            FRONTEND_NLB_TARGET_GROUP.into(),
            json!({ FRONTEND_NLB_TARGET_GROUP: {"TargetGroups": states} }),
        );
    }
    json!({"id": stack.stack_id, "resources": res})
}

/// [`render`] as the compact JSON text upstream writes into the annotation: keys in Go's
/// order, escaped as Go's `json.Marshal` escapes (`<`, `>`, `&`, U+2028, U+2029 as `\uXXXX`;
/// they only occur inside strings, so the value is unchanged).
pub fn to_string(stack: &Stack, facts: &PlanFacts) -> String {
    let mut text = String::new();
    order::write(&render(stack, facts), &order::PLAN, &mut text);
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

/// A Gateway's stack, ALB or NLB (upstream's Gateway builder adds the frontend-NLB state to
/// both).
fn is_gateway_stack(stack: &Stack) -> bool {
    matches!(stack.kind, StackKind::AlbGateway | StackKind::NlbGateway)
}

#[cfg(test)]
#[path = "upstream_json_tests.rs"]
mod tests;
