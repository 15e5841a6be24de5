//! Replays `pkg/ingress2gateway/console/classify_test.go`: `TestClassifyEntry` (22 cases),
//! `TestClassifyEntry_UserSpecifiedHealthCheck` (4) and `TestBuildUserSpecifiedFields` (4): all
//! 30 cases.

use std::collections::BTreeMap;

use serde_json::{json, Value};

use super::{entry, LB, LISTENER, LISTENER_RULE, SG, TG, TGB};
use crate::migrate::console::classify::{
    build_user_specified_fields, classify_entry, UserSpecifiedFields,
};
use crate::migrate::console::differ::DiffStatus::{self, *};

const TG_REF_INGRESS: &str = "#/resources/AWS::ElasticLoadBalancingV2::TargetGroup/console-test/echo-echoserver:80/status/targetGroupARN";

fn s(v: &str) -> Option<Value> {
    Some(json!(v))
}

#[test]
fn classify_entry_cases() {
    type Case = (
        &'static str,
        &'static str,
        &'static str,
        DiffStatus,
        Option<Value>,
        Option<Value>,
        bool,
        &'static str,
    );
    let forward = |r: &str, weight: Option<f64>| {
        let mut tg = json!({"targetGroupARN": {"$ref": r}});
        if let Some(w) = weight {
            tg["weight"] = json!(w);
        }
        Some(json!([{"type": "forward", "forwardConfig": {"targetGroups": [tg]}}]))
    };
    let cases: Vec<Case> = vec![
        ("added migrated-from tag on LoadBalancer", LB, "spec.tags.gateway.k8s.aws/migrated-from", Added, None, None, true, "Added by migration tool"),
        ("added migrated-from tag on Listener", LISTENER, "spec.tags.gateway.k8s.aws/migrated-from", Added, None, None, true, ""),
        ("removed migrated-from tag — not known (tag should only be added)", LB, "spec.tags.gateway.k8s.aws/migrated-from", Removed, None, None, false, ""),
        ("LoadBalancer spec.name change with controller-generated format on both sides", LB, "spec.name", Changed, s("k8s-consolet-echo-8c9b609bd1"), s("k8s-consolet-echogate-caaec044ea"), true, "Controller-generated name; format preserved"),
        ("TargetGroup spec.name with generated format", TG, "spec.name", Changed, s("k8s-consolet-echoserv-3bc6d40162"), s("k8s-consolet-echorout-9a9e0d3ac4"), true, ""),
        ("SecurityGroup spec.groupName with generated format", SG, "spec.groupName", Changed, s("k8s-consolet-echo-335c53f321"), s("k8s-consolet-echogate-30c8df6a5a"), true, ""),
        ("SecurityGroup spec.groupName across explicit-group and 3-section forms", SG, "spec.groupName", Changed, s("k8s-demogroup-b8cc80b37d"), s("k8s-consoleg-demogrog-a6e036f217"), true, ""),
        ("LoadBalancer spec.name across explicit-group and 3-section forms", LB, "spec.name", Changed, s("k8s-demogroup-2fa5ab75f2"), s("k8s-consoleg-demogrog-5f4636b5ee"), true, ""),
        ("SecurityGroup spec.name is not the field used — not classified", SG, "spec.name", Changed, s("k8s-consolet-echo-335c53f321"), s("k8s-consolet-echogate-30c8df6a5a"), false, ""),
        ("LoadBalancer name change with custom (non-generated) value on one side", LB, "spec.name", Changed, s("my-custom-lb"), s("k8s-consolet-echogate-caaec044ea"), false, ""),
        ("Listener spec.name change — not on the allowlist", LISTENER, "spec.name", Changed, s("k8s-consolet-echo-8c9b609bd1"), s("k8s-consolet-echo-8c9b609bd2"), false, ""),
        ("TargetGroup healthyThresholdCount default drift", TG, "spec.healthCheckConfig.healthyThresholdCount", Changed, Some(json!(2.0)), Some(json!(3.0)), true, "Controller default differs (Ingress=2, Gateway=3)"),
        ("TargetGroup unhealthyThresholdCount default drift", TG, "spec.healthCheckConfig.unhealthyThresholdCount", Changed, None, None, true, ""),
        ("TargetGroup matcher httpCode drift", TG, "spec.healthCheckConfig.matcher.httpCode", Changed, s("200"), s("200-399"), true, "Controller default differs (Ingress=200, Gateway=200-399)"),
        ("healthCheck default drift on non-TargetGroup — not classified", LISTENER, "spec.healthCheckConfig.healthyThresholdCount", Changed, None, None, false, ""),
        ("same status never marked known", LB, "spec.tags.gateway.k8s.aws/migrated-from", Same, None, None, false, ""),
        ("TargetGroupBinding spec.template.metadata.name with generated format", TGB, "spec.template.metadata.name", Changed, s("k8s-consolet-echoserv-3bc6d40162"), s("k8s-consolet-echorout-9a9e0d3ac4"), true, "Controller-generated name; format preserved"),
        ("TargetGroupBinding spec.template.metadata.name with custom value — not known", TGB, "spec.template.metadata.name", Changed, s("my-custom-tgb"), s("k8s-consolet-echorout-9a9e0d3ac4"), false, ""),
        (
            "TargetGroupBinding targetGroupARN.$ref change — known",
            TGB,
            "spec.template.spec.targetGroupARN.$ref",
            Changed,
            s(TG_REF_INGRESS),
            s("#/resources/AWS::ElasticLoadBalancingV2::TargetGroup/console-test/echo-gateway-ad59fa8d22:console-test-echo-route-4f063e00c7:HTTPRoute-console-test-echoserver:80/status/targetGroupARN"),
            true,
            "Points at the correlated TargetGroup; see that row for real field diffs",
        ),
        ("TargetGroupBinding targetType change — user-visible, not classified", TGB, "spec.template.spec.targetType", Changed, s("ip"), s("instance"), false, ""),
        (
            "ListenerRule spec.actions differs only by $ref and weight — known",
            LISTENER_RULE,
            "spec.actions",
            Changed,
            forward(TG_REF_INGRESS, None),
            forward("#/resources/AWS::ElasticLoadBalancingV2::TargetGroup/console-test/echo-gateway:route:HTTPRoute-echoserver:80/status/targetGroupARN", Some(1.0)),
            true,
            "Only differs by targetGroup $ref naming and default weight",
        ),
        (
            "ListenerRule spec.actions with real action type change — not known",
            LISTENER_RULE,
            "spec.actions",
            Changed,
            Some(json!([{"type": "forward", "forwardConfig": {"targetGroups": []}}])),
            Some(json!([{"type": "fixed-response", "fixedResponseConfig": {"statusCode": "503"}}])),
            false,
            "",
        ),
    ];
    assert_eq!(cases.len(), 22);
    for (name, kind, field, status, ingress, gateway, known, reason) in cases {
        let c = classify_entry(
            &entry(kind, field, status, ingress, gateway),
            &UserSpecifiedFields::new(),
        );
        assert_eq!(c.known, known, "{name}");
        if !reason.is_empty() {
            assert_eq!(c.reason, reason, "{name}");
        }
    }
}

#[test]
fn classify_entry_user_specified_health_check() {
    let hc = |field: &str, i: Value, g: Value| entry(TG, field, Changed, Some(i), Some(g));
    let set = |f: &str| UserSpecifiedFields::from([f.to_string()]);
    let cases = [
        (
            "healthyThresholdCount NOT known when user explicitly set it",
            hc(
                "spec.healthCheckConfig.healthyThresholdCount",
                json!(2.0),
                json!(3.0),
            ),
            set("spec.healthCheckConfig.healthyThresholdCount"),
            false,
        ),
        (
            "unhealthyThresholdCount NOT known when user explicitly set it",
            hc(
                "spec.healthCheckConfig.unhealthyThresholdCount",
                json!(2.0),
                json!(3.0),
            ),
            set("spec.healthCheckConfig.unhealthyThresholdCount"),
            false,
        ),
        (
            "matcher.httpCode NOT known when user explicitly set success-codes",
            hc(
                "spec.healthCheckConfig.matcher.httpCode",
                json!("200"),
                json!("200-399"),
            ),
            set("spec.healthCheckConfig.matcher.httpCode"),
            false,
        ),
        (
            "healthyThresholdCount still known when a different field is user-specified",
            hc(
                "spec.healthCheckConfig.healthyThresholdCount",
                json!(2.0),
                json!(3.0),
            ),
            set("spec.healthCheckConfig.matcher.httpCode"),
            true,
        ),
    ];
    for (name, e, user, known) in cases {
        assert_eq!(classify_entry(&e, &user).known, known, "{name}");
    }
}

#[test]
fn build_user_specified_fields_cases() {
    let map = |pairs: &[(&str, &str)]| -> BTreeMap<String, String> {
        pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect()
    };
    let fields = |f: &[&str]| -> UserSpecifiedFields { f.iter().map(|s| s.to_string()).collect() };
    let cases = [
        ("no annotations", map(&[]), fields(&[])),
        (
            "healthy-threshold-count set",
            map(&[("alb.ingress.kubernetes.io/healthy-threshold-count", "5")]),
            fields(&["spec.healthCheckConfig.healthyThresholdCount"]),
        ),
        (
            "all three health check annotations set",
            map(&[
                ("alb.ingress.kubernetes.io/healthy-threshold-count", "5"),
                ("alb.ingress.kubernetes.io/unhealthy-threshold-count", "3"),
                ("alb.ingress.kubernetes.io/success-codes", "200"),
            ]),
            fields(&[
                "spec.healthCheckConfig.healthyThresholdCount",
                "spec.healthCheckConfig.unhealthyThresholdCount",
                "spec.healthCheckConfig.matcher.httpCode",
            ]),
        ),
        (
            "unrelated annotations ignored",
            map(&[
                ("alb.ingress.kubernetes.io/scheme", "internet-facing"),
                ("alb.ingress.kubernetes.io/group.name", "my-group"),
            ]),
            fields(&[]),
        ),
    ];
    for (name, annotations, want) in cases {
        assert_eq!(build_user_specified_fields(&annotations), want, "{name}");
    }
}
