//! A plan's routing read back (`routing`) answers every request as the stack it was rendered
//! from: the README samples' Ingress and Gateway stacks (named ports, HTTPS, the ssl-redirect,
//! an IngressGroup), rendered as the controllers write their plans; the Gateway plan as the
//! Gateway controller writes it (upstream's schema) is read as written, and the format older
//! builds wrote (the model's stack JSON) still reads; and a seeded mistake is found from the
//! plans as from the stacks.

use serde_json::Value;

use super::files::{one_ingress, samples, seeded_mistake};
use crate::migrate::console::discovery::GatewayInfo;
use crate::migrate::console::files::file_reports;
use crate::migrate::console::model::upstream_plan;
use crate::migrate::console::plan_report;
use crate::migrate::console::routing::{parse_ref, parse_routing};
use crate::migrate::translate;
use crate::migrate::verify::eval::Alb;
use crate::migrate::verify::request::derive_requests;
use crate::migrate::verify::{default_model_config, stacks};
use crate::model::upstream_json::{to_string, PlanFacts};

#[test]
fn references_are_split_at_the_type_and_status() {
    assert_eq!(
        parse_ref("#/resources/AWS::ElasticLoadBalancingV2::TargetGroup/shop/api-api:8080/status/targetGroupARN"),
        Some(("AWS::ElasticLoadBalancingV2::TargetGroup", "shop/api-api:8080", "targetGroupARN"))
    );
    assert_eq!(
        parse_ref("arn:aws:elasticloadbalancing:us-east-1:1:targetgroup/x/y"),
        None
    );
}

#[test]
fn a_plans_routing_answers_as_its_stack() {
    let input = samples();
    let output = translate(&input).unwrap();
    let cfg = default_model_config().unwrap();
    let objs = stacks::objects(&input, &output, &cfg).unwrap();
    let services = &objs.cluster.services;
    let mut checked = 0;
    let mut named_ports = 0;
    for g in &output.groups {
        let ingress = stacks::ingress_stack(&objs, &cfg, g).unwrap();
        let (gateway, _) = stacks::gateway_stack(&objs, &cfg, g).unwrap();
        for stack in [&ingress, &gateway] {
            let plan = to_string(stack, &PlanFacts::default());
            let routing = parse_routing(&plan).unwrap();
            assert_eq!(
                routing.stack.listeners.len(),
                stack.listeners.len(),
                "{plan}"
            );
            assert_eq!(
                routing.stack.listener_rules.len(),
                stack.listener_rules.len(),
                "{plan}"
            );
            assert_eq!(
                routing.backends.len(),
                stack.target_group_bindings.len(),
                "{plan}"
            );
            named_ports += routing.named_port_namespaces().len();
            let direct = Alb::new(stack, services);
            let read = routing.alb(services);
            for r in derive_requests(&[stack]) {
                assert_eq!(
                    direct.evaluate(&r).outcome,
                    read.evaluate(&r).outcome,
                    "{}: {r}",
                    stack.stack_id
                );
                checked += 1;
            }
        }
    }
    assert!(checked > 50, "{checked}");
    // The group's `web` backend names its port (`http`): resolved through the Service.
    assert!(named_ports > 0);
}

/// The Gateway controller writes its plan in upstream's schema (`upstream_json::to_string`,
/// with the backend security group it found): read as written, every resource of the stack
/// under upstream's type and id, its routing intact. A plan an older build wrote (the model's
/// stack JSON, `stackId`) is still read, rendered in upstream's schema.
#[test]
fn the_gateway_controllers_plan_is_read_as_written_and_older_plans_still_read() {
    use crate::migrate::console::model::parse_stack;
    use crate::model::upstream_json::{
        FRONTEND_NLB_TARGET_GROUP, LISTENER, LISTENER_RULE, LOAD_BALANCER, TARGET_GROUP,
        TARGET_GROUP_BINDING,
    };
    let input = one_ingress("/api", "Prefix");
    let output = translate(&input).unwrap();
    let cfg = default_model_config().unwrap();
    let objs = stacks::objects(&input, &output, &cfg).unwrap();
    let (gateway, _) = stacks::gateway_stack(&objs, &cfg, &output.groups[0]).unwrap();
    let facts = PlanFacts {
        backend_sg: Some("sg-0123456789abcdef0".into()),
        ..Default::default()
    };
    let written = to_string(&gateway, &facts);
    assert_eq!(upstream_plan(&written), written);
    let tree = parse_stack(&upstream_plan(&written)).unwrap();
    let ids = |kind: &str| tree.get(kind).map_or(0, |r| r.len());
    assert_eq!(ids(LOAD_BALANCER), 1);
    assert_eq!(ids(LISTENER), gateway.listeners.len());
    assert_eq!(ids(LISTENER_RULE), gateway.listener_rules.len());
    assert_eq!(ids(TARGET_GROUP), gateway.target_groups.len());
    assert_eq!(
        ids(TARGET_GROUP_BINDING),
        gateway.target_group_bindings.len()
    );
    assert_eq!(ids(FRONTEND_NLB_TARGET_GROUP), 1);
    let rule = &tree[LISTENER_RULE][&gateway.listener_rules[0].id];
    assert!(rule["spec.listenerARN.$ref"].is_string(), "{rule:?}");
    let routing = parse_routing(&upstream_plan(&written)).unwrap();
    assert_eq!(
        routing.stack.listener_rules.len(),
        gateway.listener_rules.len()
    );
    assert_eq!(routing.backends.len(), gateway.target_group_bindings.len());
    // An older build's plan: rendered in upstream's schema (without the facts it never had).
    let older = serde_json::to_string(&gateway).unwrap();
    assert_eq!(
        upstream_plan(&older),
        to_string(&gateway, &PlanFacts::default())
    );
    let doc: Value = serde_json::from_str(&upstream_plan(&older)).unwrap();
    assert!(doc["resources"].is_object() && doc.get("stackId").is_none());
    // Text that is no plan is left as written.
    assert_eq!(upstream_plan("not json"), "not json");
}

/// The seeded mistake (one path type changed) is found from the two plans as from the stacks:
/// the same requests answered differently, with the same answers.
#[test]
fn a_seeded_mistake_is_found_from_the_plans() {
    let (input, output) = seeded_mistake();
    let cfg = default_model_config().unwrap();
    let reports = file_reports(&input, &output, &cfg).unwrap();
    let from_files = &reports[0];
    assert!(!from_files.verdict.differences.is_empty());
    let info = GatewayInfo {
        name: from_files.info.name.clone(),
        namespace: from_files.info.namespace.clone(),
        migrated_from: from_files.info.migrated_from.clone(),
        gateway_plan: from_files.info.gateway_plan.clone(),
        ingress_plan: from_files.info.ingress_plan.clone(),
        ..Default::default()
    };
    let from_plans = plan_report(info, &input.services);
    assert_eq!(from_plans.verdict.problem, None);
    assert_eq!(from_plans.verdict.label, "Ingress shop/api");
    let outcomes = |r: &crate::migrate::console::GatewayReport| {
        r.verdict
            .differences
            .iter()
            .map(|d| {
                (
                    d.request.to_string(),
                    d.ingress.outcome.to_string(),
                    d.gateway.outcome.to_string(),
                )
            })
            .collect::<Vec<_>>()
    };
    assert_eq!(outcomes(&from_plans), outcomes(from_files));
    assert_eq!(from_plans.requests.len(), from_files.requests.len());
}
