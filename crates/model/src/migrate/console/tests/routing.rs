//! A plan's routing read back (`routing`) answers every request as the stack it was rendered
//! from: the README samples' Ingress and Gateway stacks (named ports, HTTPS, the ssl-redirect,
//! an IngressGroup), rendered as the controllers write their plans; this build's Gateway
//! controller's own plan format is read too; and a seeded mistake is found from the plans as
//! from the stacks.

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

/// This build's Gateway controller writes the model's stack JSON into
/// `gateway.k8s.aws/dry-run-plan`; the console renders it in upstream's schema.
#[test]
fn the_model_stack_json_is_read_as_upstreams_plan() {
    let input = one_ingress("/api", "Prefix");
    let output = translate(&input).unwrap();
    let cfg = default_model_config().unwrap();
    let objs = stacks::objects(&input, &output, &cfg).unwrap();
    let (gateway, _) = stacks::gateway_stack(&objs, &cfg, &output.groups[0]).unwrap();
    let ours = serde_json::to_string(&gateway).unwrap();
    let upstream = to_string(&gateway, &PlanFacts::default());
    assert_eq!(upstream_plan(&ours), upstream);
    // A plan in upstream's schema, or text that is no plan, is left as written.
    assert_eq!(upstream_plan(&upstream), upstream);
    assert_eq!(upstream_plan("not json"), "not json");
    let doc: Value = serde_json::from_str(&upstream_plan(&ours)).unwrap();
    assert!(doc["resources"].is_object());
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
