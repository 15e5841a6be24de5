//! Classification, grouping, ordering and group-name validation tests.

use super::*;
use k8s_openapi::api::networking::v1::IngressClass;
use serde_json::json;

fn ing(v: serde_json::Value) -> Ingress {
    serde_json::from_value(v).unwrap()
}

fn class(name: &str, controller: &str, default: bool, params: Option<&str>) -> IngressClass {
    let mut v = json!({"metadata": {"name": name}, "spec": {"controller": controller}});
    if default {
        v["metadata"]["annotations"] =
            json!({"ingressclass.kubernetes.io/is-default-class": "true"});
    }
    if let Some(p) = params {
        v["spec"]["parameters"] =
            json!({"apiGroup": "elbv2.k8s.aws", "kind": "IngressClassParams", "name": p});
    }
    serde_json::from_value(v).unwrap()
}

#[test]
fn group_name_validation() {
    assert!(validate_group_name("a").is_ok());
    assert!(validate_group_name("my-group.v1").is_ok());
    for bad in ["", "-a", "a-", "Upper", "a_b", "a b"] {
        assert_eq!(
            validate_group_name(bad).unwrap_err(),
            "groupName must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character",
            "{bad:?}"
        );
    }
    assert_eq!(
        validate_group_name(&"a".repeat(64)).unwrap_err(),
        "groupName must be no more than 63 characters"
    );
    assert!(validate_group_name(&"a".repeat(63)).is_ok());
}

#[test]
fn classification_annotation_class_name_and_default() {
    let mut objs = ClusterObjects::default();
    objs.ingress_classes
        .push(class("alb", INGRESS_CLASS_CONTROLLER, false, None));
    objs.ingress_classes
        .push(class("nginx", "k8s.io/ingress-nginx", false, None));
    let by_ann = ing(
        json!({"metadata": {"name": "a", "annotations": {"kubernetes.io/ingress.class": "alb"}}, "spec": {"ingressClassName": "nginx"}}),
    );
    assert!(
        classify(&by_ann, &objs, "alb").unwrap().is_some(),
        "annotation wins over ingressClassName"
    );
    let other_ann = ing(
        json!({"metadata": {"name": "a", "annotations": {"kubernetes.io/ingress.class": "nginx"}}}),
    );
    assert!(classify(&other_ann, &objs, "alb").unwrap().is_none());
    assert!(classify(&other_ann, &objs, "").unwrap().is_none());
    let alb_ann = ing(
        json!({"metadata": {"name": "a", "annotations": {"kubernetes.io/ingress.class": "alb"}}}),
    );
    assert!(
        classify(&alb_ann, &objs, "").unwrap().is_some(),
        "empty flag still matches alb"
    );
    let by_class = ing(json!({"metadata": {"name": "a"}, "spec": {"ingressClassName": "alb"}}));
    assert!(classify(&by_class, &objs, "alb").unwrap().is_some());
    let nginx = ing(json!({"metadata": {"name": "a"}, "spec": {"ingressClassName": "nginx"}}));
    assert!(classify(&nginx, &objs, "alb").unwrap().is_none());
    let missing = ing(json!({"metadata": {"name": "a"}, "spec": {"ingressClassName": "gone"}}));
    assert_eq!(
        classify(&missing, &objs, "alb").unwrap_err().to_string(),
        "invalid ingress class: ingressclasses.networking.k8s.io \"gone\" not found"
    );
    let none = ing(json!({"metadata": {"name": "a"}}));
    assert!(classify(&none, &objs, "alb").unwrap().is_none());
    assert!(
        classify(&none, &objs, "").unwrap().is_some(),
        "class-less Ingresses managed with empty flag"
    );
    objs.ingress_classes[0] = class("alb", INGRESS_CLASS_CONTROLLER, true, None);
    assert!(
        classify(&none, &objs, "alb").unwrap().is_some(),
        "default class applies"
    );
    objs.ingress_classes
        .push(class("alb2", INGRESS_CLASS_CONTROLLER, true, None));
    assert_eq!(
        classify(&none, &objs, "alb").unwrap_err().to_string(),
        "multiple default IngressClasses found"
    );
}

#[test]
fn params_namespace_selector_and_group_precedence() {
    let mut objs = ClusterObjects::default();
    objs.ingress_classes
        .push(class("alb", INGRESS_CLASS_CONTROLLER, false, Some("p")));
    objs.ingress_class_params.push(
        serde_json::from_value(json!({"metadata": {"name": "p"}, "spec": {
            "group": {"name": "from-params"},
            "namespaceSelector": {"matchLabels": {"team": "web"}}}}))
        .unwrap(),
    );
    objs.namespaces.push(
        serde_json::from_value(json!({"metadata": {"name": "web", "labels": {"team": "web"}}}))
            .unwrap(),
    );
    let i = ing(json!({"metadata": {"name": "a", "namespace": "web",
        "annotations": {"alb.ingress.kubernetes.io/group.name": "from-annotation"}}, "spec": {"ingressClassName": "alb"}}));
    let params = classify(&i, &objs, "alb").unwrap().unwrap();
    let c = ClassifiedIngress {
        ingress: &i,
        params,
    };
    assert_eq!(group_id(&c).unwrap(), GroupId::explicit("from-params"));
    let other = ing(
        json!({"metadata": {"name": "a", "namespace": "other"}, "spec": {"ingressClassName": "alb"}}),
    );
    assert_eq!(
        classify(&other, &objs, "alb").unwrap_err().to_string(),
        "invalid ingress class: namespaceSelector of IngressClassParams p mismatch"
    );
}

#[test]
fn groups_order_members_and_track_inactive_and_excluded() {
    let mk = |name: &str, order: Option<&str>, group: &str| {
        let mut a = json!({"kubernetes.io/ingress.class": "alb", "alb.ingress.kubernetes.io/group.name": group});
        if let Some(o) = order {
            a["alb.ingress.kubernetes.io/group.order"] = json!(o);
        }
        ing(json!({"metadata": {"name": name, "namespace": "ns", "annotations": a}}))
    };
    let mut ingresses = vec![
        mk("c", None, "g"),
        mk("b", Some("-5"), "g"),
        mk("a", None, "g"),
        mk("z", Some("1001"), "g"),
        mk("moved", None, "other"),
    ];
    ingresses[4].metadata.finalizers = Some(vec!["group.ingress.k8s.aws/g".into()]);
    let objs = ClusterObjects {
        ingresses,
        ..Default::default()
    };
    let (groups, errors) = load_groups(&objs, "alb");
    assert!(errors.is_empty());
    let g = &groups[&GroupId::explicit("g")];
    let keys: Vec<String> = g.members.iter().map(|m| m.key()).collect();
    assert_eq!(keys, vec!["ns/b", "ns/a", "ns/c"]);
    assert_eq!(g.inactive_members.len(), 1);
    assert_eq!(g.excluded.len(), 1);
    assert_eq!(
        g.excluded[0].error,
        "explicit Ingress group order must be within [-1000:1000], Ingress: ns/z, order: 1001"
    );
    assert_eq!(g.id.finalizer(), "group.ingress.k8s.aws/g");
    assert_eq!(
        GroupId::implicit("ns", "x").finalizer(),
        "ingress.k8s.aws/resources"
    );
    assert!(groups.contains_key(&GroupId::explicit("other")));
}

#[test]
fn deleting_ingress_is_inactive_member_of_its_implicit_group() {
    let mut i = ing(json!({"metadata": {"name": "a", "namespace": "ns",
        "annotations": {"kubernetes.io/ingress.class": "alb"},
        "finalizers": ["ingress.k8s.aws/resources"], "deletionTimestamp": "2024-01-01T00:00:00Z"}}));
    i.metadata.namespace = Some("ns".into());
    let objs = ClusterObjects {
        ingresses: vec![i],
        ..Default::default()
    };
    let (groups, _) = load_groups(&objs, "alb");
    let g = &groups[&GroupId::implicit("ns", "a")];
    assert!(g.members.is_empty());
    assert_eq!(g.inactive_members.len(), 1);
}
