//! The renderer's own rules (the golden replays cover whole stacks): references by resource
//! type and id, no tracking tags, Go's field names where upstream has no JSON tags, facts
//! from outside the model, add-on resources, and a stable text.

use std::collections::BTreeMap;

use k8s_openapi::api::core::v1::Service;
use k8s_openapi::api::networking::v1::Ingress;
use serde_json::{json, Value};

use super::*;
use crate::model::group::{ClassifiedIngress, ClusterObjects, IngressGroup};
use crate::model::{build_stack, BuildEnv, ModelConfig};

const ING: &str = r#"
metadata:
  name: web
  namespace: demo
  annotations:
    alb.ingress.kubernetes.io/tags: team=blue
    alb.ingress.kubernetes.io/shield-advanced-protection: "true"
spec:
  rules:
  - http:
      paths:
      - {path: /, pathType: Prefix, backend: {service: {name: web, port: {number: 80}}}}
"#;

const SVC: &str = r#"
metadata: {name: web, namespace: demo}
spec: {type: NodePort, ports: [{port: 80, targetPort: 8080, nodePort: 30080}]}
"#;

fn stack() -> Stack {
    let ing: Ingress = serde_yaml::from_str(ING).unwrap();
    let svc: Service = serde_yaml::from_str(SVC).unwrap();
    let objs = ClusterObjects {
        ingresses: vec![ing.clone()],
        services: vec![svc],
        ..Default::default()
    };
    let group = IngressGroup {
        id: GroupId::implicit("demo", "web"),
        members: vec![ClassifiedIngress {
            ingress: &ing,
            params: None,
        }],
        inactive_members: vec![],
        excluded: vec![],
    };
    let cfg = ModelConfig {
        cluster_name: "c1".into(),
        ..Default::default()
    };
    build_stack(&group, &objs, &cfg, &BuildEnv::default()).unwrap()
}

fn spec<'a>(v: &'a Value, kind: &str, id: &str) -> &'a Value {
    &v["resources"][kind][id]["spec"]
}

#[test]
fn references_name_the_resource_type_and_id() {
    let s = stack();
    let v = render(&s, &PlanFacts::default());
    assert_eq!(v["id"], "demo/web");
    let rule = spec(&v, LISTENER_RULE, "80:1");
    assert_eq!(
        rule["listenerARN"],
        json!({"$ref": "#/resources/AWS::ElasticLoadBalancingV2::Listener/80/status/listenerARN"})
    );
    let tg_id = &s.target_groups[0].id;
    assert_eq!(
        rule["actions"][0]["forwardConfig"]["targetGroups"][0]["targetGroupARN"],
        json!({"$ref": format!("#/resources/{TARGET_GROUP}/{tg_id}/status/targetGroupARN")})
    );
    assert_eq!(
        spec(&v, SHIELD_PROTECTION, "LoadBalancer"),
        &json!({"enabled": true, "resourceARN":
            {"$ref": "#/resources/AWS::ElasticLoadBalancingV2::LoadBalancer/LoadBalancer/status/loadBalancerARN"}})
    );
    // Every Ingress stack carries upstream's (empty) frontend-NLB state, outside `spec`.
    assert_eq!(
        v["resources"][FRONTEND_NLB_TARGET_GROUP],
        json!({"FrontendNLBTargetGroup": {"TargetGroups": {}}})
    );
}

#[test]
fn tracking_tags_are_left_out_and_user_tags_kept() {
    let s = stack();
    assert!(s
        .load_balancer
        .as_ref()
        .unwrap()
        .tags
        .contains_key(TAG_STACK));
    let v = render(&s, &PlanFacts::default());
    assert_eq!(
        spec(&v, LOAD_BALANCER, "LoadBalancer")["tags"],
        json!({"team": "blue"})
    );
    assert_eq!(
        spec(&v, SECURITY_GROUP, "ManagedLBSecurityGroup")["tags"],
        json!({"team": "blue"})
    );
}

#[test]
fn facts_fill_what_the_deployer_resolves_and_unknown_ones_are_not_guessed() {
    let mut s = stack();
    s.load_balancer
        .as_mut()
        .unwrap()
        .security_group_names_or_ids = vec!["web-sg".into()];
    let bare = render(&s, &PlanFacts::default());
    let lb = spec(&bare, LOAD_BALANCER, "LoadBalancer");
    assert!(lb.get("subnetMapping").is_none(), "{lb}");
    // The user's groups first, as upstream lists them.
    assert_eq!(lb["securityGroups"][0], json!("web-sg"));
    assert_eq!(lb["securityGroups"][2], json!(""));
    let facts = PlanFacts {
        backend_sg: Some("sg-0b".into()),
        subnets: Some(vec!["subnet-1".into(), "subnet-2".into()]),
        security_groups: Some(vec!["sg-0w".into()]),
    };
    let full = render(&s, &facts);
    let lb = spec(&full, LOAD_BALANCER, "LoadBalancer");
    assert_eq!(
        lb["subnetMapping"],
        json!([{"subnetID": "subnet-1"}, {"subnetID": "subnet-2"}])
    );
    assert_eq!(lb["securityGroups"][0], json!("sg-0w"));
    assert_eq!(lb["securityGroups"][2], json!("sg-0b"));
    let tgb = spec(&full, TARGET_GROUP_BINDING, &s.target_groups[0].id);
    assert_eq!(
        tgb["template"]["spec"]["networking"]["ingress"][0]["from"][0]["securityGroup"]["groupID"],
        json!("sg-0b")
    );
}

#[test]
fn go_field_names_where_upstream_has_no_json_tags_and_secrets_redacted() {
    let mut s = stack();
    s.listeners[0].attributes = BTreeMap::from([(
        "routing.http.response.server.enabled".into(),
        "false".into(),
    )]);
    s.listener_rules[0].actions = vec![Action::AuthenticateOidc {
        config: AuthenticateOidcConfig {
            issuer: "https://idp".into(),
            authorization_endpoint: "https://idp/auth".into(),
            token_endpoint: "https://idp/token".into(),
            user_info_endpoint: "https://idp/me".into(),
            secret: "demo/oidc".into(),
            client_id: Redacted::new("client-1"),
            client_secret: Redacted::new("hunter2"),
            authentication_request_extra_params: BTreeMap::new(),
            on_unauthenticated_request: "authenticate".into(),
            scope: "openid".into(),
            session_cookie_name: "AWSELBAuthSessionCookie".into(),
            session_timeout: 604800,
            use_existing_client_secret: None,
        },
    }];
    let v = render(&s, &PlanFacts::default());
    assert_eq!(
        spec(&v, LISTENER, "80")["listenerAttributes"],
        json!([{"Key": "routing.http.response.server.enabled", "Value": "false"}])
    );
    let oidc = &spec(&v, LISTENER_RULE, "80:1")["actions"][0];
    assert_eq!(oidc["type"], "authenticate-oidc");
    assert_eq!(oidc["authenticateOIDCConfig"]["clientID"], "[REDACTED]");
    assert_eq!(oidc["authenticateOIDCConfig"]["clientSecret"], "[REDACTED]");
    assert!(!v.to_string().contains("demo/oidc"));
    assert!(!v.to_string().contains("hunter2") && !v.to_string().contains("client-1"));
}

#[test]
fn the_text_is_stable() {
    let s = stack();
    let facts = PlanFacts::default();
    assert_eq!(to_string(&s, &facts), to_string(&s.clone(), &facts));
    assert_eq!(
        serde_json::from_str::<Value>(&to_string(&s, &facts)).unwrap(),
        render(&s, &facts)
    );
}

#[test]
fn html_characters_are_escaped_as_go_does() {
    let mut s = stack();
    s.listener_rules[0].conditions = vec![RuleCondition::PathPattern {
        config: crate::model::backend::ValuesConfig {
            values: vec!["/a&b<c>".into()],
            regex_values: vec![],
        },
    }];
    let text = to_string(&s, &PlanFacts::default());
    assert!(text.contains(r#""/a\u0026b\u003cc\u003e""#), "{text}");
    let back: Value = serde_json::from_str(&text).unwrap();
    let rule = spec(&back, LISTENER_RULE, "80:1");
    assert_eq!(
        rule["conditions"][0]["pathPatternConfig"]["values"][0],
        "/a&b<c>"
    );
}

/// A Gateway stack's tracking tags and stack labels (`gateway.k8s.aws.alb/...`) are added at
/// deploy time by upstream too: the rendered plan holds only user tags and the Gateway's own
/// binding labels.
#[test]
fn gateway_tracking_tags_and_stack_labels_are_left_out() {
    let mut s = stack();
    s.load_balancer.as_mut().unwrap().tags = BTreeMap::from([
        ("gateway.k8s.aws.alb/stack".into(), "ns/gw".into()),
        ("gateway.k8s.aws.alb/resource".into(), "LoadBalancer".into()),
        (TAG_CLUSTER.into(), "c".into()),
        ("team".into(), "blue".into()),
    ]);
    s.target_group_bindings[0].labels = BTreeMap::from([
        ("gateway.k8s.aws.alb/stack-namespace".into(), "ns".into()),
        ("gateway.k8s.aws.alb/stack-name".into(), "gw".into()),
        ("labelfoo".into(), "labelbar".into()),
    ]);
    let v = render(&s, &PlanFacts::default());
    assert_eq!(
        spec(&v, LOAD_BALANCER, "LoadBalancer")["tags"],
        json!({"team": "blue"})
    );
    let tgb = v["resources"][TARGET_GROUP_BINDING]
        .as_object()
        .unwrap()
        .values()
        .next()
        .unwrap();
    assert_eq!(
        tgb["spec"]["template"]["metadata"]["labels"],
        json!({"labelfoo": "labelbar"})
    );
}

/// Go's `encoding/json` writes struct fields in declaration order and map keys sorted: the
/// text follows upstream's types (`TargetGroupSpec`, `TargetGroupHealthCheckConfig`,
/// `LoadBalancerSpec`, `SubnetMapping`), a key they do not know comes last, nothing is dropped.
#[test]
fn the_text_has_gos_key_order() {
    let tg = json!({"id": "s", "resources": {"AWS::ElasticLoadBalancingV2::TargetGroup": {"t": {"spec": {
        "tags": {"b": "2", "a": "1"}, "zzz": 1, "name": "n",
        "healthCheckConfig": {"protocol": "TCP", "port": 80}}}}}});
    let mut out = String::new();
    order::write(&tg, &order::PLAN, &mut out);
    assert_eq!(
        out,
        r#"{"id":"s","resources":{"AWS::ElasticLoadBalancingV2::TargetGroup":{"t":{"spec":{"name":"n","healthCheckConfig":{"port":80,"protocol":"TCP"},"tags":{"a":"1","b":"2"},"zzz":1}}}}}"#
    );
    let lb = json!({"resources": {"AWS::ElasticLoadBalancingV2::LoadBalancer": {"LoadBalancer": {"spec": {
        "type": "network", "subnetMapping": [{"subnetID": "subnet-1", "allocationID": "eip-1"}],
        "name": "lb"}}}}, "id": "s"});
    let mut out = String::new();
    order::write(&lb, &order::PLAN, &mut out);
    assert_eq!(
        out,
        r#"{"id":"s","resources":{"AWS::ElasticLoadBalancingV2::LoadBalancer":{"LoadBalancer":{"spec":{"name":"lb","type":"network","subnetMapping":[{"allocationID":"eip-1","subnetID":"subnet-1"}]}}}}}"#
    );
    // The whole plan's text is the rendered value, reordered only.
    let s = stack();
    let text = to_string(&s, &PlanFacts::default());
    assert!(
        text.starts_with(r#"{"id":"demo/web","resources":{"AWS::EC2::SecurityGroup":{"ManagedLBSecurityGroup":{"spec":{"groupName":"#),
        "{text}"
    );
    assert_eq!(
        serde_json::from_str::<Value>(&text).unwrap(),
        render(&s, &PlanFacts::default())
    );
}

/// An NLB Gateway's `Gateway` backend (upstream's `buildTargetGroupFromGateway`): an `alb`-type
/// target group, and its `FrontendNlbTargetGroupState` with the NLB listener's port and the
/// other Gateway's ALB as a literal target. Every Gateway stack carries that state (upstream's
/// builder always adds it), a Service stack none.
#[test]
fn gateway_backends_are_alb_target_groups_with_their_frontend_state() {
    let alb = "arn:aws:elasticloadbalancing:us-west-2:123456789012:loadbalancer/app/shop/1";
    let tg = AlbTargetGroup {
        id: "demo/edge:demo-r:TCPRoute-demo-shop:80".into(),
        name: "k8s-demo-r-0123456789".into(),
        port: 80,
        protocol: Protocol::Tcp,
        ip_address_type: "ipv4".into(),
        health_check: HealthCheck {
            port: "traffic-port".into(),
            protocol: Protocol::Http,
            path: "/".into(),
            matcher: BTreeMap::from([("httpCode".into(), "200-399".into())]),
            interval_seconds: 15,
            timeout_seconds: 5,
            healthy_threshold_count: 3,
            unhealthy_threshold_count: 3,
        },
        tags: BTreeMap::new(),
        target_port: 80,
        target_arn: Some(alb.into()),
        attributes: BTreeMap::from([("deregistration_delay.timeout_seconds".into(), "30".into())]),
    };
    let forward = Action::Forward {
        config: ForwardConfig {
            target_groups: vec![TargetGroupTuple {
                target_group_arn: Token::TargetGroupArn(tg.id.clone()),
                weight: Some(1),
            }],
            target_group_stickiness_config: None,
        },
    };
    let mut listener = Listener::new(8080, Protocol::Tcp, vec![forward]);
    listener.id = "8080".into();
    let s = Stack {
        stack_id: "demo/edge".into(),
        kind: StackKind::NlbGateway,
        listeners: vec![listener],
        alb_target_groups: vec![tg.clone()],
        ..Default::default()
    };
    let v = render(&s, &PlanFacts::default());
    assert_eq!(
        spec(&v, TARGET_GROUP, &tg.id),
        &json!({"name": "k8s-demo-r-0123456789", "targetType": "alb", "port": 80,
            "protocol": "TCP", "ipAddressType": "ipv4",
            "healthCheckConfig": {"port": "traffic-port", "protocol": "HTTP", "path": "/",
                "matcher": {"httpCode": "200-399"}, "intervalSeconds": 15, "timeoutSeconds": 5,
                "healthyThresholdCount": 3, "unhealthyThresholdCount": 3},
            "targetGroupAttributes": [{"key": "deregistration_delay.timeout_seconds", "value": "30"}]})
    );
    assert_eq!(
        v["resources"][FRONTEND_NLB_TARGET_GROUP][FRONTEND_NLB_TARGET_GROUP]["TargetGroups"],
        json!({"k8s-demo-r-0123456789": {
            "Name": "k8s-demo-r-0123456789",
            "ARN": {"$ref": format!("#/resources/{TARGET_GROUP}/{}/status/targetGroupARN", tg.id)},
            "Port": 8080,
            "TargetARN": alb,
            "TargetPort": 80
        }})
    );
    let text = to_string(&s, &PlanFacts::default());
    assert!(
        text.contains(r#"{"Name":"k8s-demo-r-0123456789","ARN":{"$ref":"#),
        "{text}"
    );
    let alb_gateway = Stack {
        kind: StackKind::AlbGateway,
        ..Default::default()
    };
    assert_eq!(
        render(&alb_gateway, &PlanFacts::default())["resources"][FRONTEND_NLB_TARGET_GROUP],
        json!({ FRONTEND_NLB_TARGET_GROUP: {"TargetGroups": {}} })
    );
    let service = Stack {
        kind: StackKind::Service,
        ..Default::default()
    };
    let v = render(&service, &PlanFacts::default());
    assert!(
        v["resources"].get(FRONTEND_NLB_TARGET_GROUP).is_none(),
        "{v}"
    );
}
