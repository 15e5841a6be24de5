//! Golden tests of the Gateway dry-run plan (`gateway.k8s.aws/dry-run-plan`): a Gateway's
//! objects (`golden_gateway/plan/*.yaml`) go through the model builder and
//! `upstream_json::to_string`, and the text must be, byte for byte, what upstream's stack
//! marshaller (`pkg/deploy/stack_marshaller.go`: `json.Marshal` of `deploy.StackSchema`) writes
//! for the stack upstream's Gateway builder (`pkg/gateway/model`) makes of the same objects.
//! The expected files (`golden_gateway/plan/*.json`, pretty-printed here, compacted before the
//! comparison) are written by hand from upstream's types, keys in Go's order (struct fields as
//! declared, map keys sorted):
//! - `StackSchema{id, resources}`; resources keyed by `Type()` then `ID()`, each resource
//!   `{spec}` (`status` is nil in a plan, `omitempty`);
//! - `ec2.SecurityGroupSpec`, `ec2.IPPermission`, `ec2.IPRange` (`ManagedLBSecurityGroup`,
//!   `model_build_security_group.go`: one permission per Gateway listener and source range);
//! - `elbv2.LoadBalancerSpec`, `elbv2.SubnetMapping`, `elbv2.LoadBalancerAttribute` (id
//!   `LoadBalancer`, `model_build_loadbalancer.go`);
//! - `elbv2.ListenerSpec`, `elbv2.Action`, `elbv2.FixedResponseActionConfig`,
//!   `elbv2.ForwardActionConfig`, `elbv2.TargetGroupTuple` (id `<port>`,
//!   `model_build_listener.go`: the ALB's 404 default action, the NLB's forward with weights,
//!   none for QUIC);
//! - `elbv2.ListenerRuleSpec`, `elbv2.RuleCondition`, `elbv2.PathPatternConditionConfig`,
//!   `elbv2.RedirectActionConfig`, `elbv2.Transform`, `elbv2.RewriteConfigObject` (id
//!   `<port>:<priority>`, `routeutils`: precedence, path patterns, redirect, URL rewrite);
//! - `elbv2.TargetGroupSpec`, `elbv2.TargetGroupHealthCheckConfig`,
//!   `elbv2.HealthCheckMatcher` (id `<gwNs>/<gw>:<routeNs>-<route>:<Kind>-<svcNs>-<svc>:<port>`,
//!   names `k8s-<route ns>-<route>-<sha256>` computed with upstream's hash inputs,
//!   `model_build_target_group.go`);
//! - `elbv2/k8s.TargetGroupBindingResourceSpec`, `TargetGroupBindingTemplate` (`ObjectMeta`:
//!   name, namespace), `TargetGroupBindingSpec`, `NetworkingIngressRule`, `NetworkingPeer`,
//!   `elbv2api.NetworkingPort`, `elbv2api.ServiceReference` (`standardBuilder` of
//!   `model_build_target_group_binding_network.go`);
//! - `elbv2.FrontendNlbTargetGroupDesiredState` (every Gateway stack, empty here).
//!
//! Upstream's builder settings: cluster `my-cluster`, VPC `vpc-xxx`, the backend security group
//! its provider returns (`sg-backend`), the subnets its discovery returns.

use serde_json::Value;

use super::{config, objects};
use crate::model::gateway::{build_alb_gateway_stack, build_nlb_gateway_stack, GatewayInputs};
use crate::model::subnets::SubnetInfo;
use crate::model::types::Stack;
use crate::model::upstream_json::{to_string, PlanFacts};

const ALB: (&str, &str) = (
    include_str!("../golden_gateway/plan/alb.yaml"),
    include_str!("../golden_gateway/plan/alb.json"),
);
const NLB: (&str, &str) = (
    include_str!("../golden_gateway/plan/nlb.yaml"),
    include_str!("../golden_gateway/plan/nlb.json"),
);

/// The stack of the case's one Gateway (an NLB one when `nlb`).
fn build(case: &str, nlb: bool) -> Stack {
    let doc: Value =
        serde_json::to_value(serde_yaml::from_str::<serde_yaml::Value>(case).unwrap()).unwrap();
    let o = objects("plan", &doc["objects"]);
    let gw = &o.gateways[0];
    let ns = gw.metadata.namespace.as_deref();
    let lbc_name = gw
        .spec
        .infrastructure
        .as_ref()
        .and_then(|i| i.parameters_ref.as_ref())
        .map(|p| p.name.as_str());
    let gateway_config = o
        .lb_configs
        .iter()
        .find(|c| c.metadata.name.as_deref() == lbc_name && c.metadata.namespace.as_deref() == ns);
    assert!(
        gateway_config.is_some(),
        "the case's LoadBalancerConfiguration"
    );
    let inputs = GatewayInputs {
        gateway_config,
        http_routes: &o.http_routes,
        tcp_routes: &o.tcp_routes,
        udp_routes: &o.udp_routes,
        services: &o.services,
        ..GatewayInputs::new(gw)
    };
    let subnets: Vec<SubnetInfo> = serde_json::from_value(doc["vpcSubnets"].clone()).unwrap();
    let cfg = config(&doc["settings"]);
    let built = if nlb {
        build_nlb_gateway_stack(&inputs, &cfg, Some(subnets.as_slice()))
    } else {
        build_alb_gateway_stack(&inputs, &cfg, Some(subnets.as_slice()))
    };
    built.unwrap_or_else(|e| panic!("build: {e}")).stack
}

/// Pretty-printed JSON without the whitespace outside strings (the keys keep their order).
fn compact(pretty: &str) -> String {
    let mut out = String::with_capacity(pretty.len());
    let (mut in_string, mut escaped) = (false, false);
    for c in pretty.chars() {
        if in_string {
            out.push(c);
            if escaped {
                escaped = false;
            } else if c == '\\' {
                escaped = true;
            } else if c == '"' {
                in_string = false;
            }
        } else if c == '"' {
            in_string = true;
            out.push(c);
        } else if !c.is_whitespace() {
            out.push(c);
        }
    }
    out
}

/// The plan of the case equals upstream's, value first (a readable diff), then text.
fn check((case, want): (&str, &str), nlb: bool) {
    let stack = build(case, nlb);
    let facts = PlanFacts {
        backend_sg: Some("sg-backend".into()),
        ..Default::default()
    };
    let text = to_string(&stack, &facts);
    let got: Value = serde_json::from_str(&text).unwrap();
    let expected: Value = serde_json::from_str(want).unwrap();
    assert_eq!(got, expected, "got:\n{got:#}\nwant:\n{expected:#}");
    assert_eq!(
        text,
        compact(want),
        "the fields are upstream's, not in Go's order"
    );
    // Written again, the same text: the controller sends no patch for an unchanged plan.
    assert_eq!(to_string(&stack, &facts), text);
}

#[test]
fn alb_gateway_plan_is_upstreams_marshalled_stack() {
    check(ALB, false);
}

#[test]
fn nlb_gateway_plan_is_upstreams_marshalled_stack() {
    check(NLB, true);
}

#[test]
fn compact_keeps_strings_and_key_order() {
    assert_eq!(
        compact("{\n  \"b\": \"x y\\\" z\",\n  \"a\": [1, 2]\n}"),
        r#"{"b":"x y\" z","a":[1,2]}"#
    );
}
