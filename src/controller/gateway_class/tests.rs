//! The pure parts: the Accepted condition updated in place (or appended), who uses a
//! configuration object, ListenerRuleConfiguration references and upstream's messages.

use std::sync::Arc;

use gateway_api::apis::standard::gatewayclasses::GatewayClass;
use gateway_api::apis::standard::gateways::Gateway;
use gateway_api::apis::standard::httproutes::HttpRoute;

use super::in_use::accepted_gateways;
use super::*;
use crate::crd::gateway::LoadBalancerConfiguration;

fn yaml<T: serde::de::DeserializeOwned>(s: &str) -> T {
    serde_yaml::from_str(s).unwrap()
}

fn class(extra: &str) -> GatewayClass {
    yaml(&format!(
        "metadata: {{name: alb, generation: 2}}\nspec:\n  controllerName: gateway.k8s.aws/alb\n  parametersRef: {{group: gateway.k8s.aws, kind: LoadBalancerConfiguration, name: lbc, namespace: cfg}}\n{extra}"
    ))
}

#[test]
fn accepted_is_updated_in_place_only_when_it_says_something_else() {
    // What the Gateway API CRD defaults a new class's status to, behind another condition.
    let c = class(
        "status:\n  conditions:\n  - {type: SupportedVersion, status: 'True', reason: SupportedVersion, message: '', lastTransitionTime: '2020-01-01T00:00:00Z'}\n  - {type: Accepted, status: Unknown, reason: Pending, message: Waiting for controller, lastTransitionTime: '1970-01-01T00:00:00Z'}\n",
    );
    let got =
        accepted_conditions(&c, true, "Accepted", "Accepted", "2026-01-01T00:00:00Z").unwrap();
    assert_eq!(got.len(), 2);
    assert_eq!(
        got[0]["type"], "SupportedVersion",
        "other conditions stay where they are"
    );
    assert_eq!(got[1]["type"], "Accepted");
    assert_eq!(got[1]["status"], "True");
    assert_eq!(got[1]["reason"], "Accepted");
    assert_eq!(got[1]["message"], "Accepted");
    assert_eq!(got[1]["observedGeneration"], 2);
    // Written back, the same verdict is a no-op; a new generation or a refusal is not.
    let mut c2 = c.clone();
    c2.status = Some(serde_json::from_value(serde_json::json!({"conditions": got})).unwrap());
    assert!(accepted_conditions(&c2, true, "Accepted", "Accepted", "t").is_none());
    c2.metadata.generation = Some(3);
    assert!(accepted_conditions(&c2, true, "Accepted", "Accepted", "t").is_some());
    let refused =
        accepted_conditions(&c2, false, "NotFound", &config_not_found("lbc", "cfg"), "t").unwrap();
    assert_eq!(
        refused[1]["message"],
        "LoadBalancerConfiguration (lbc,cfg) not found"
    );
    // No Accepted entry (CRDs without their defaults): appended rather than never accepted.
    let bare = class("");
    let got = accepted_conditions(&bare, true, "Accepted", "Accepted", "t").unwrap();
    assert_eq!(got.len(), 1);
    assert_eq!(got[0]["type"], "Accepted");
}

#[test]
fn gateways_wait_for_an_accepted_class_that_processed_the_current_config() {
    let mut l = lbc("cfg", "lbc");
    l.metadata.resource_version = Some("7".into());
    let pending = class("");
    assert_eq!(
        gateway_may_build(&pending, Some(&l), None).unwrap_err(),
        "Unable to materialize gateway when gateway class [alb] is not accepted"
    );
    let accepted = class(
        "status:\n  conditions:\n  - {type: Accepted, status: 'True', reason: Accepted, message: Accepted, lastTransitionTime: '2020-01-01T00:00:00Z'}\n",
    );
    assert_eq!(
        gateway_may_build(&accepted, Some(&l), None).unwrap_err(),
        "GatewayClass [alb] hasn't processed latest loadbalancer config. Processed version , Latest version 7"
    );
    assert_eq!(
        gateway_may_build(&accepted, None, None),
        Ok(()),
        "no LBC: no version to wait for"
    );
    let mut processed = accepted.clone();
    processed.metadata.annotations = Some(
        [(
            "elbv2.k8s.aws/last-processed-config".to_string(),
            "7".to_string(),
        )]
        .into(),
    );
    assert_eq!(gateway_may_build(&processed, Some(&l), None), Ok(()));
}

fn gateway(ns: &str, class: &str, lbc: Option<&str>, accepted: bool) -> Arc<Gateway> {
    let infra = lbc
        .map(|l| format!("  infrastructure: {{parametersRef: {{group: gateway.k8s.aws, kind: LoadBalancerConfiguration, name: {l}}}}}\n"))
        .unwrap_or_default();
    let status = if accepted {
        "status: {conditions: [{type: Accepted, status: 'True', reason: Accepted, message: '', lastTransitionTime: '2020-01-01T00:00:00Z'}]}\n"
    } else {
        ""
    };
    Arc::new(yaml(&format!(
        "metadata: {{name: gw, namespace: {ns}}}\nspec:\n  gatewayClassName: {class}\n  listeners: []\n{infra}{status}"
    )))
}

fn lbc(ns: &str, name: &str) -> LoadBalancerConfiguration {
    yaml(&format!(
        "metadata: {{name: {name}, namespace: {ns}}}\nspec: {{}}"
    ))
}

#[test]
fn a_load_balancer_configuration_is_in_use_by_classes_and_gateways_of_either_controller() {
    let nlb_class: GatewayClass = yaml(
        "metadata: {name: nlb}\nspec:\n  controllerName: gateway.k8s.aws/nlb\n  parametersRef: {group: gateway.k8s.aws, kind: LoadBalancerConfiguration, name: shared, namespace: cfg}\n",
    );
    let foreign: GatewayClass = yaml(
        "metadata: {name: other}\nspec:\n  controllerName: example.com/gw\n  parametersRef: {group: gateway.k8s.aws, kind: LoadBalancerConfiguration, name: theirs, namespace: cfg}\n",
    );
    let classes = vec![Arc::new(class("")), Arc::new(nlb_class), Arc::new(foreign)];
    assert!(
        lbc_in_use(&lbc("cfg", "lbc"), &classes, &[]),
        "the ALB class's"
    );
    assert!(
        lbc_in_use(&lbc("cfg", "shared"), &classes, &[]),
        "the NLB class's, even with the NLB gate off"
    );
    assert!(
        !lbc_in_use(&lbc("cfg", "theirs"), &classes, &[]),
        "another controller's class does not count"
    );
    assert!(
        !lbc_in_use(&lbc("other", "lbc"), &classes, &[]),
        "namespace matters"
    );
    let gws = vec![gateway("apps", "alb", Some("mine"), false)];
    assert!(lbc_in_use(&lbc("apps", "mine"), &classes, &gws));
    assert!(
        !lbc_in_use(&lbc("cfg", "mine"), &classes, &gws),
        "a Gateway's LBC lives in its namespace"
    );
    let theirs = vec![gateway("apps", "other", Some("mine"), false)];
    assert!(!lbc_in_use(&lbc("apps", "mine"), &classes, &theirs));
    let all = vec![
        gateway("a", "alb", None, true),
        gateway("b", "alb", None, false),
        gateway("c", "other", None, true),
    ];
    assert_eq!(accepted_gateways(&all, &classes), vec!["a/gw".to_string()]);
}

#[test]
fn rule_configuration_references_are_extension_ref_filters_of_our_group_and_kind() {
    let route: HttpRoute = yaml(
        r#"
metadata: {name: r, namespace: apps}
spec:
  rules:
  - filters:
    - {type: ExtensionRef, extensionRef: {group: gateway.k8s.aws, kind: ListenerRuleConfiguration, name: auth}}
    - {type: ExtensionRef, extensionRef: {group: example.com, kind: ListenerRuleConfiguration, name: foreign}}
    - {type: RequestHeaderModifier, requestHeaderModifier: {set: [{name: a, value: b}]}}
  - backendRefs: [{name: svc, port: 80}]
"#,
    );
    assert_eq!(rule_config_refs(&route.spec), vec!["auth".to_string()]);
}

#[test]
fn messages_are_upstreams() {
    assert_eq!(
        still_referenced("alb"),
        "unable to delete GatewayClass [alb], as it is still referenced by Gateways"
    );
    assert_eq!(
        lbc_still_in_use("ns/l"),
        "loadbalancer configuration [ns/l] is still in use"
    );
    assert_eq!(
        tgc_still_in_use("ns/t"),
        "targetgroup configuration [ns/t] is still in use"
    );
    assert_eq!(
        default_tgc_still_in_use("ns/t", "ns/a, ns/b"),
        "default targetgroup configuration [ns/t] is still in use by LoadBalancerConfiguration [ns/a, ns/b]"
    );
    assert_eq!(
        lrc_still_in_use("ns/r"),
        "failed to remove finalizers as listener rule configuration [ns/r] is still in use"
    );
}
