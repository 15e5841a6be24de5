//! Ownership decisions, the disable-* flags, class usage and `conditions.*` validation.

use super::*;
use crate::webhook::indexes::IngressClassEntry;
use crate::webhook::test_support::{denial, req};
use serde_json::{json, Value};

fn classes(list: &[(&str, &str, bool)]) -> IngressClassIndex {
    let idx = IngressClassIndex::default();
    idx.reset(
        list.iter()
            .map(|(name, controller, is_default)| {
                let entry = IngressClassEntry {
                    controller: controller.to_string(),
                    is_default: *is_default,
                    parameters: None,
                };
                (name.to_string(), entry)
            })
            .collect(),
    );
    idx
}

fn std_classes() -> IngressClassIndex {
    classes(&[
        ("alb", INGRESS_CLASS_CONTROLLER, false),
        ("nginx", "k8s.io/ingress-nginx", false),
    ])
}

fn validator(flag: &str, idx: IngressClassIndex) -> IngressValidator {
    IngressValidator::new(flag, false, false, idx)
}

fn ing(annotations: Value, class: Option<&str>) -> Value {
    let mut spec = json!({"rules": [{"http": {"paths": [
        {"path": "/", "pathType": "Prefix", "backend": {"service": {"name": "svc", "port": {"number": 80}}}},
        {"path": "/r", "pathType": "Prefix", "backend": {"resource": {"kind": "Bucket", "name": "b"}}}
    ]}}, {"host": "no-http.example"}]});
    if let Some(c) = class {
        spec["ingressClassName"] = json!(c);
    }
    json!({"metadata": {"namespace": "ns", "name": "web", "annotations": annotations}, "spec": spec})
}

async fn create(v: &IngressValidator, obj: Value) -> Decision {
    v.admit(&req(Operation::Create, obj, None)).await
}

async fn update(v: &IngressValidator, old: Value, new: Value) -> Decision {
    v.admit(&req(Operation::Update, new, Some(old))).await
}

const BAD_COND: &str = r#"[{"field":"host-header","hostHeaderConfig":{}}]"#;

fn bad_conditions() -> Value {
    json!({"alb.ingress.kubernetes.io/conditions.svc": BAD_COND})
}

#[tokio::test]
async fn class_annotation_decides_ownership() {
    let v = validator("alb", std_classes());
    let mut a = bad_conditions();
    a[INGRESS_CLASS] = json!("nginx");
    assert_eq!(
        create(&v, ing(a.clone(), None)).await,
        Decision::Allow,
        "not ours"
    );
    a[INGRESS_CLASS] = json!("alb");
    assert_eq!(
        denial(&create(&v, ing(a.clone(), None)).await).0,
        "checkIngressAnnotationConditions"
    );
    // Empty flag: `alb` still matches, and so does the empty value.
    let v = validator("", std_classes());
    assert_eq!(
        denial(&create(&v, ing(a.clone(), None)).await).0,
        "checkIngressAnnotationConditions"
    );
    let v = validator("custom", std_classes());
    assert_eq!(create(&v, ing(a.clone(), None)).await, Decision::Allow);
    a[INGRESS_CLASS] = json!("custom");
    assert_eq!(
        denial(&create(&v, ing(a, None)).await).0,
        "checkIngressAnnotationConditions"
    );
}

#[tokio::test]
async fn ingress_class_name_decides_ownership_and_missing_classes_are_refused() {
    let v = validator("alb", std_classes());
    assert_eq!(
        create(&v, ing(bad_conditions(), Some("nginx"))).await,
        Decision::Allow
    );
    assert_eq!(
        denial(&create(&v, ing(bad_conditions(), Some("alb"))).await).0,
        "checkIngressAnnotationConditions"
    );
    let d = create(&v, ing(json!({}), Some("gone"))).await;
    assert_eq!(
        denial(&d),
        (
            "checkIngressClass",
            "invalid ingress class: ingressclasses.networking.k8s.io \"gone\" not found"
        )
    );
}

#[tokio::test]
async fn default_class_and_class_less_ingresses() {
    let ours_default = classes(&[
        ("alb", INGRESS_CLASS_CONTROLLER, true),
        ("nginx", "x", false),
    ]);
    let v = validator("alb", ours_default);
    assert_eq!(
        denial(&create(&v, ing(bad_conditions(), None)).await).0,
        "checkIngressAnnotationConditions"
    );
    let theirs_default = classes(&[
        ("alb", INGRESS_CLASS_CONTROLLER, false),
        ("nginx", "x", true),
    ]);
    assert_eq!(
        create(
            &validator("alb", theirs_default),
            ing(bad_conditions(), None)
        )
        .await,
        Decision::Allow
    );
    let two = classes(&[("a", INGRESS_CLASS_CONTROLLER, true), ("b", "x", true)]);
    let d = create(&validator("alb", two), ing(json!({}), None)).await;
    assert_eq!(
        denial(&d),
        ("checkIngressClass", "multiple default IngressClasses found")
    );
    // No class at all: ours only when --ingress-class is empty.
    assert_eq!(
        create(
            &validator("alb", std_classes()),
            ing(bad_conditions(), None)
        )
        .await,
        Decision::Allow
    );
    let d = create(&validator("", std_classes()), ing(bad_conditions(), None)).await;
    assert_eq!(denial(&d).0, "checkIngressAnnotationConditions");
}

#[tokio::test]
async fn unsynced_classes_refuse_only_when_a_class_is_needed() {
    let v = validator("alb", IngressClassIndex::default());
    let d = create(&v, ing(json!({}), Some("alb"))).await;
    assert_eq!(denial(&d), ("checkIngressClass", CLASSES_NOT_SYNCED));
    let d = create(&v, ing(json!({}), None)).await;
    assert_eq!(
        denial(&d).1,
        format!("invalid ingress class: fetching ingressClasses: {CLASSES_NOT_SYNCED}")
    );
    let annotated = ing(json!({INGRESS_CLASS: "alb"}), None);
    assert_eq!(
        create(&v, annotated).await,
        Decision::Allow,
        "annotation needs no lookup"
    );
}

#[tokio::test]
async fn class_annotation_usage_flag() {
    let mut v = validator("alb", std_classes());
    v.disable_ingress_class_annotation = true;
    let with = ing(json!({INGRESS_CLASS: "alb"}), None);
    let without = ing(json!({}), Some("alb"));
    let msg = "new usage of `kubernetes.io/ingress.class` annotation is forbidden";
    assert_eq!(
        denial(&create(&v, with.clone()).await),
        ("checkIngressClassAnnotationUsage", msg)
    );
    assert_eq!(
        denial(&update(&v, without.clone(), with.clone()).await).1,
        msg
    );
    assert_eq!(
        update(&v, with.clone(), with.clone()).await,
        Decision::Allow,
        "existing usage kept"
    );
    v.disable_ingress_class_annotation = false;
    assert_eq!(create(&v, with).await, Decision::Allow);
}

#[tokio::test]
async fn group_name_annotation_usage_flag() {
    let mut v = validator("alb", std_classes());
    v.disable_ingress_group_name_annotation = true;
    let g = |name: &str| {
        ing(
            json!({"alb.ingress.kubernetes.io/group.name": name}),
            Some("alb"),
        )
    };
    let none = ing(json!({}), Some("alb"));
    let msg = "new usage of `alb.ingress.kubernetes.io/group.name` annotation is forbidden";
    assert_eq!(
        denial(&create(&v, g("a")).await),
        ("checkGroupNameAnnotationUsage", msg)
    );
    assert_eq!(
        denial(&create(&v, g("")).await).1,
        msg,
        "an empty value is still a usage"
    );
    assert_eq!(denial(&update(&v, none.clone(), g("a")).await).1, msg);
    assert_eq!(
        denial(&update(&v, g("a"), g("b")).await).1,
        msg,
        "changed value"
    );
    assert_eq!(update(&v, g("a"), g("a")).await, Decision::Allow);
    assert_eq!(
        update(&v, g("a"), none).await,
        Decision::Allow,
        "removal is fine"
    );
}

#[tokio::test]
async fn ingress_class_name_changes_must_name_an_existing_class() {
    let v = validator("alb", std_classes());
    let annotated = |class: Option<&str>| ing(json!({INGRESS_CLASS: "alb"}), class);
    let d = create(&v, annotated(Some("gone"))).await;
    let msg = "invalid ingress class: ingressclasses.networking.k8s.io \"gone\" not found";
    assert_eq!(denial(&d), ("checkIngressClassUsage", msg));
    assert_eq!(
        denial(&update(&v, annotated(Some("alb")), annotated(Some("gone"))).await).1,
        msg
    );
    // Unchanged: not re-checked (the class may have been deleted since).
    assert_eq!(
        update(&v, annotated(Some("gone")), annotated(Some("gone"))).await,
        Decision::Allow
    );
    assert_eq!(
        update(&v, annotated(None), annotated(None)).await,
        Decision::Allow
    );
}

#[tokio::test]
async fn condition_annotations_are_parsed_and_validated_with_upstreams_texts() {
    let v = validator("alb", std_classes());
    let cond = |raw: &str| {
        ing(
            json!({"alb.ingress.kubernetes.io/conditions.svc": raw}),
            Some("alb"),
        )
    };
    let d = create(&v, cond(BAD_COND)).await;
    assert_eq!(
        denial(&d),
        ("checkIngressAnnotationConditions",
         "ignoring Ingress ns/web since invalid alb.ingress.kubernetes.io/conditions.svc annotation: invalid hostHeaderConfig: values or regexValues must be specified")
    );
    let cases = [
        (r#"[{"field":"path-pattern"}]"#, "missing pathPatternConfig"),
        (
            r#"[{"field":"http-header","httpHeaderConfig":{"httpHeaderName":"h","values":["a"],"regexValues":["b"]}}]"#,
            "invalid httpHeaderConfig: precisely one of values and regexValues can be specified",
        ),
        (
            r#"[{"field":"http-request-method","httpRequestMethodConfig":{"values":[]}}]"#,
            "invalid httpRequestMethodConfig: values cannot be empty",
        ),
        (
            r#"[{"field":"query-string","queryStringConfig":{"values":[{"key":"k"}]}}]"#,
            "invalid queryStringConfig: value cannot be empty",
        ),
        (
            r#"[{"field":"source-ip","sourceIPConfig":{"values":[]}}]"#,
            "invalid sourceIPConfig: values cannot be empty",
        ),
    ];
    for (raw, want) in cases {
        let d = create(&v, cond(raw)).await;
        assert!(
            denial(&d).1.ends_with(&format!("annotation: {want}")),
            "{raw}: {d:?}"
        );
    }
    let d = create(&v, cond("{not json")).await;
    let (cat, msg) = denial(&d);
    assert_eq!(cat, "checkIngressAnnotationConditions");
    assert!(msg.starts_with("failed to parse json annotation, alb.ingress.kubernetes.io/conditions.svc: {not json: "), "{msg}");
    for ok in [
        r#"[{"field":"host-header","hostHeaderConfig":{"values":["a.example"]}}]"#,
        "null",
        "[]",
    ] {
        assert_eq!(create(&v, cond(ok)).await, Decision::Allow, "{ok}");
    }
    // Conditions of a Service no path uses are not looked at.
    let other = ing(
        json!({"alb.ingress.kubernetes.io/conditions.other": BAD_COND}),
        Some("alb"),
    );
    assert_eq!(create(&v, other).await, Decision::Allow);
}

#[tokio::test]
async fn delete_is_allowed_and_garbage_is_an_error() {
    let v = validator("alb", std_classes());
    assert_eq!(
        v.admit(&req(Operation::Delete, json!({}), None)).await,
        Decision::Allow
    );
    let d = create(&v, json!({"spec": {"rules": "nope"}})).await;
    assert!(matches!(d, Decision::Errored { .. }), "{d:?}");
    let d = v
        .admit(&req(Operation::Update, ing(json!({}), None), None))
        .await;
    assert!(matches!(d, Decision::Errored { .. }));
}
