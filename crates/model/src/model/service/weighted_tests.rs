//! Weighted NLB target groups in the model: upstream's e2e shapes (ip and instance targets, two
//! NLBs sharing backends), the gate, and upstream's refusals.

use k8s_openapi::api::core::v1::Service;
use k8s_openapi::apimachinery::pkg::util::intstr::IntOrString;

use super::super::test_support::{cfg, svc};
use super::super::{build_service_stack, weighted_backend_names, ServiceEnv};
use crate::model::config::ModelConfig;
use crate::model::naming::{self, ServiceTargetGroupNameInputs};
use crate::model::types::*;

const BASE_UID: &str = "11111111-2222-3333-4444-555555555555";
const ACTIONS: &str = "service.beta.kubernetes.io/actions.TCP-80";
const PORT_80: &str =
    "  ports:\n  - {name: http, port: 80, targetPort: 80, nodePort: 30080, protocol: TCP}\n";

/// Upstream's e2e action: the Service 20, `target-svc1:81` 60, `target-svc2:82` 40 (with an
/// unknown key, `tcpEnabled`, which Go ignores).
const E2E_IP: &str = r#"{
  "type": "forward",
  "forwardConfig": {
    "baseServiceWeight": 20,
    "targetGroups": [
      {"serviceName": "target-svc1", "servicePort": 81, "weight": 60, "tcpEnabled": true},
      {"serviceName": "target-svc2", "servicePort": 82, "weight": 40}
    ]
  }
}"#;

/// `s` with `annotations` (full keys) set verbatim: JSON values need no YAML quoting.
fn with(mut s: Service, annotations: &[(&str, &str)]) -> Service {
    let a = s.metadata.annotations.get_or_insert_with(Default::default);
    for (k, v) in annotations {
        a.insert(k.to_string(), v.to_string());
    }
    s
}

/// A NodePort backend Service of the default namespace with one TCP port.
fn backend(name: &str, uid: &str, port: i32, node_port: i32) -> Service {
    serde_yaml::from_str(&format!(
        "metadata: {{name: {name}, namespace: default, uid: {uid}}}\nspec:\n  type: NodePort\n  ports:\n  - {{port: {port}, nodePort: {node_port}, protocol: TCP}}\n"
    ))
    .unwrap()
}

fn backends() -> Vec<Service> {
    vec![
        backend(
            "target-svc1",
            "aaaaaaaa-0000-0000-0000-000000000001",
            81,
            30081,
        ),
        backend(
            "target-svc2",
            "aaaaaaaa-0000-0000-0000-000000000002",
            82,
            30082,
        ),
    ]
}

fn env(list: &[Service]) -> ServiceEnv {
    ServiceEnv {
        backend_services: list
            .iter()
            .map(|b| (b.metadata.name.clone().unwrap(), b.clone()))
            .collect(),
        ..Default::default()
    }
}

fn build_with(s: &Service, c: &ModelConfig, list: &[Service]) -> Result<Stack, String> {
    build_service_stack(s, c, &env(list)).map_err(|e| e.to_string())
}

/// The forward of the listener on `port`.
fn forward(stack: &Stack, port: i32) -> &ForwardConfig {
    let l = stack.listeners.iter().find(|l| l.port == port).unwrap();
    match &l.default_actions[..] {
        [Action::Forward { config }] => config,
        other => panic!("{other:?}"),
    }
}

fn tuples(f: &ForwardConfig) -> Vec<(Token, Option<i32>)> {
    f.target_groups
        .iter()
        .map(|t| (t.target_group_arn.clone(), t.weight))
        .collect()
}

fn tg_ref(id: &str) -> Token {
    Token::TargetGroupArn(id.into())
}

fn tg<'s>(stack: &'s Stack, id: &str) -> &'s TargetGroup {
    stack
        .target_groups
        .iter()
        .find(|t| t.id == id)
        .unwrap_or_else(|| panic!("no target group {id}: {:?}", stack.target_groups))
}

/// Upstream's name of a backend's target group (`tg_port`: the target port or node port).
fn backend_tg_name(base_uid: &str, b: &Service, tg_port: i32, tt: TargetType) -> String {
    let svc_port = b.spec.as_ref().unwrap().ports.as_ref().unwrap()[0].port;
    naming::service_target_group_name(&ServiceTargetGroupNameInputs {
        cluster: "my-cluster",
        base_service_uid: Some(base_uid),
        service_namespace: "default",
        service_name: b.metadata.name.as_deref().unwrap(),
        service_uid: b.metadata.uid.as_deref().unwrap(),
        target_port: tg_port,
        service_port: svc_port,
        target_type: tt,
        protocol: Protocol::Tcp,
        health_check_protocol: Protocol::Tcp,
        health_check_interval: 10,
    })
}

#[test]
fn ip_targets_forward_to_the_service_and_its_backends_by_weight() {
    let plain = svc(&[], PORT_80);
    let s = with(plain.clone(), &[(ACTIONS, E2E_IP)]);
    let stack = build_with(&s, &cfg(), &backends()).unwrap();
    let f = forward(&stack, 80);
    assert_eq!(
        tuples(f),
        vec![
            (tg_ref("default/svc:80"), Some(20)),
            (tg_ref("default/target-svc1:81"), Some(60)),
            (tg_ref("default/target-svc2:82"), Some(40)),
        ]
    );
    assert_eq!(f.target_group_stickiness_config, None);
    assert!(stack.warnings.is_empty(), "{:?}", stack.warnings);

    // The Service's own target group keeps today's name (no base UID in its hash).
    let unweighted = build_with(&plain, &cfg(), &[]).unwrap();
    assert_eq!(
        tg(&stack, "default/svc:80").name,
        unweighted.target_groups[0].name
    );
    // Backends: their own name prefix, the base Service's UID in the hash, the listener's
    // protocol, the base Service's target type (ip: the backend's target port).
    let b = backends();
    for (id, backend, port) in [
        ("default/target-svc1:81", &b[0], 81),
        ("default/target-svc2:82", &b[1], 82),
    ] {
        let g = tg(&stack, id);
        assert_eq!(
            g.name,
            backend_tg_name(BASE_UID, backend, port, TargetType::Ip)
        );
        assert!(g.name.starts_with("k8s-default-targetsv-"), "{}", g.name);
        assert_eq!(
            (g.target_type, g.port, g.protocol),
            (TargetType::Ip, port, Protocol::Tcp)
        );
        assert_eq!(g.health_check.port, "traffic-port");
        assert_eq!(g.service_uid, backend.metadata.uid.clone().unwrap());
    }

    // One binding per target group the stack creates, each on its own Service's port, all with
    // the base Service's stack labels.
    let bound: Vec<(&str, &str, IntOrString)> = stack
        .target_group_bindings
        .iter()
        .map(|b| {
            (
                b.id.as_str(),
                b.spec.service_name.as_str(),
                b.spec.service_port.clone(),
            )
        })
        .collect();
    assert_eq!(
        bound,
        vec![
            ("default/svc:80", "svc", IntOrString::Int(80)),
            (
                "default/target-svc1:81",
                "target-svc1",
                IntOrString::Int(81)
            ),
            (
                "default/target-svc2:82",
                "target-svc2",
                IntOrString::Int(82)
            ),
        ]
    );
    for b in &stack.target_group_bindings {
        assert_eq!(b.namespace, "default");
        assert_eq!(b.labels, stack.target_group_bindings[0].labels);
        assert_eq!(
            b.name,
            tg(&stack, &b.id).name,
            "named after its target group"
        );
        assert_eq!(b.spec.target_group_arn, tg_ref(&b.id));
    }
}

#[test]
fn instance_targets_use_the_backends_node_ports_and_stickiness() {
    let action = E2E_IP.replace(
        "\n  }\n}",
        ",\n    \"targetGroupStickinessConfig\": {\"enabled\": true}\n  }\n}",
    );
    let s = with(
        svc(&[], PORT_80),
        &[
            (
                "service.beta.kubernetes.io/aws-load-balancer-type",
                "external",
            ),
            (
                "service.beta.kubernetes.io/aws-load-balancer-nlb-target-type",
                "instance",
            ),
            (ACTIONS, action.as_str()),
        ],
    );
    let stack = build_with(&s, &cfg(), &backends()).unwrap();
    let f = forward(&stack, 80);
    assert_eq!(tuples(f).len(), 3);
    assert_eq!(
        f.target_group_stickiness_config,
        Some(StickinessConfig {
            enabled: Some(true),
            duration_seconds: None,
        }),
        "upstream's Service stickiness has no duration"
    );
    let b = backends();
    let g = tg(&stack, "default/target-svc1:81");
    assert_eq!((g.target_type, g.port), (TargetType::Instance, 30081));
    assert_eq!(
        g.name,
        backend_tg_name(BASE_UID, &b[0], 30081, TargetType::Instance)
    );
    assert_eq!(tg(&stack, "default/target-svc2:82").port, 30082);
    assert_eq!(tg(&stack, "default/svc:80").port, 30080);
}

#[test]
fn two_nlbs_sharing_backends_get_target_groups_of_their_own() {
    let one = with(svc(&[], PORT_80), &[(ACTIONS, E2E_IP)]);
    let mut two = one.clone();
    two.metadata.name = Some("another".into());
    two.metadata.uid = Some("22222222-2222-3333-4444-555555555555".into());
    let a = build_with(&one, &cfg(), &backends()).unwrap();
    let b = build_with(&two, &cfg(), &backends()).unwrap();
    for id in ["default/target-svc1:81", "default/target-svc2:82"] {
        assert_ne!(tg(&a, id).name, tg(&b, id).name, "{id}");
    }
    let names =
        |s: &Stack| -> Vec<String> { s.target_groups.iter().map(|t| t.name.clone()).collect() };
    assert!(names(&a).iter().all(|n| !names(&b).contains(n)));
    assert_ne!(
        a.target_group_bindings[0].labels, b.target_group_bindings[0].labels,
        "each stack's bindings carry its own labels"
    );
}

#[test]
fn target_group_arns_are_forwarded_to_as_written_and_never_built() {
    let arn =
        "arn:aws:elasticloadbalancing:us-west-2:123456789012:targetgroup/other/0123456789abcdef";
    let action = format!(
        r#"{{"type":"forward","forwardConfig":{{"baseServiceWeight":3,"targetGroups":[{{"targetGroupARN":"{arn}","weight":1}}]}}}}"#
    );
    let s = with(svc(&[], PORT_80), &[(ACTIONS, action.as_str())]);
    let stack = build_with(&s, &cfg(), &[]).unwrap();
    assert_eq!(
        tuples(forward(&stack, 80)),
        vec![
            (tg_ref("default/svc:80"), Some(3)),
            (Token::Literal(arn.into()), Some(1)),
        ]
    );
    assert_eq!(stack.target_groups.len(), 1, "only the Service's own");
    assert_eq!(stack.target_group_bindings.len(), 1);
}

#[test]
fn json_is_read_with_go_rules() {
    // Keys match case-insensitively, unknown keys and nulls are ignored, a string port names a
    // port of the backend.
    let mut b = backends();
    b[0] = serde_yaml::from_str(
        "metadata: {name: target-svc1, namespace: default, uid: u1}\nspec:\n  type: NodePort\n  ports:\n  - {name: web, port: 81, nodePort: 30081, protocol: TCP}\n",
    )
    .unwrap();
    let action = r#"{"TYPE":"forward","ForwardConfig":{"BaseServiceWeight":null,"targetgroups":[{"ServiceName":"target-svc1","SERVICEPORT":"web","Weight":5,"extra":1}]}}"#;
    let s = with(svc(&[], PORT_80), &[(ACTIONS, action)]);
    let stack = build_with(&s, &cfg(), &b).unwrap();
    assert_eq!(
        tuples(forward(&stack, 80)),
        vec![
            (tg_ref("default/svc:80"), None),
            (tg_ref("default/target-svc1:81"), Some(5)),
        ]
    );
}

#[test]
fn the_key_is_the_listeners_final_protocol_and_decrypt_picks_tcp() {
    let ports = "  ports:\n  - {name: https, port: 443, targetPort: 8443, protocol: TCP}\n";
    let tls = |key: &str, decrypt: bool| {
        let action = format!(
            r#"{{"type":"forward","forwardConfig":{{"baseServiceWeight":1,"targetGroups":[{{"serviceName":"target-svc1","servicePort":81,"weight":1,"decrypt":{decrypt}}}]}}}}"#
        );
        with(
            svc(
                &[(
                    "aws-load-balancer-ssl-cert",
                    "arn:aws:acm:us-west-2:1:certificate/x",
                )],
                ports,
            ),
            &[(key, action.as_str())],
        )
    };
    let k = "service.beta.kubernetes.io/actions.TLS-443";
    let stack = build_with(&tls(k, false), &cfg(), &backends()).unwrap();
    assert_eq!(
        tg(&stack, "default/svc:443").protocol,
        Protocol::Tcp,
        "backend-protocol unset"
    );
    assert_eq!(
        tg(&stack, "default/target-svc1:81").protocol,
        Protocol::Tls,
        "a backend takes the listener's protocol"
    );
    let stack = build_with(&tls(k, true), &cfg(), &backends()).unwrap();
    assert_eq!(tg(&stack, "default/target-svc1:81").protocol, Protocol::Tcp);

    // `TCP-443` names no listener: the TLS listener forwards to its own target group, and the
    // annotation is reported, not silently dropped.
    let tcp = "service.beta.kubernetes.io/actions.TCP-443";
    let stack = build_with(&tls(tcp, false), &cfg(), &backends()).unwrap();
    assert_eq!(
        tuples(forward(&stack, 443)),
        vec![(tg_ref("default/svc:443"), None)]
    );
    assert_eq!(stack.target_groups.len(), 1);
    assert_eq!(stack.warnings.len(), 1, "{:?}", stack.warnings);
    assert_eq!(stack.warnings[0].annotation.as_deref(), Some(tcp));
    assert!(
        stack.warnings[0].message.contains("listeners: TLS-443"),
        "{}",
        stack.warnings[0].message
    );
}

#[test]
fn the_gate_off_refuses_several_target_groups_with_upstreams_message() {
    let mut off = cfg();
    off.feature_gates
        .insert("WeightedTargetGroups".into(), false);
    let s = with(svc(&[], PORT_80), &[(ACTIONS, E2E_IP)]);
    assert_eq!(
        build_with(&s, &off, &backends()).unwrap_err(),
        "weighted target groups feature is disabled"
    );
    // A lone target group is sent as upstream does without the gate: a plain forward.
    let lone = r#"{"type":"forward","forwardConfig":{"baseServiceWeight":7,"targetGroups":[],"targetGroupStickinessConfig":{"enabled":true}}}"#;
    let s = with(svc(&[], PORT_80), &[(ACTIONS, lone)]);
    let stack = build_with(&s, &off, &[]).unwrap();
    let f = forward(&stack, 80);
    assert_eq!(tuples(f), vec![(tg_ref("default/svc:80"), None)]);
    assert_eq!(f.target_group_stickiness_config, None);
    assert_eq!(stack.warnings.len(), 1, "the dropped stickiness is said");
    // With the gate on (its default), the same action keeps its weight and stickiness.
    let stack = build_with(&s, &cfg(), &[]).unwrap();
    assert_eq!(
        tuples(forward(&stack, 80)),
        vec![(tg_ref("default/svc:80"), Some(7))]
    );
}

#[test]
fn invalid_actions_are_refused_with_upstreams_messages() {
    let fwd = |tgs: &str| {
        format!(
            r#"{{"type":"forward","forwardConfig":{{"baseServiceWeight":1,"targetGroups":[{tgs}]}}}}"#
        )
    };
    let arn = r#""targetGroupARN":"arn:aws:elasticloadbalancing:us-west-2:1:targetgroup/x/1""#;
    let cases: Vec<(String, &str)> = vec![
        (
            r#"{"type":"redirect"}"#.into(),
            "unknown action type: redirect",
        ),
        (r#"{}"#.into(), "unknown action type: "),
        (r#"{"type":"forward"}"#.into(), "missing ForwardConfig"),
        (
            fwd(&format!(r#"{{{arn},"serviceName":"target-svc1","servicePort":81}}"#)),
            "invalid ForwardConfig: invalid TargetGroupTuple: precisely one of targetGroupARN and serviceName can be specified",
        ),
        (
            fwd(r#"{"weight":1}"#),
            "invalid ForwardConfig: invalid TargetGroupTuple: precisely one of targetGroupARN and serviceName can be specified",
        ),
        (
            fwd(r#"{"serviceName":"target-svc1"}"#),
            "invalid ForwardConfig: invalid TargetGroupTuple: missing servicePort",
        ),
        (
            fwd(&format!(r#"{{{arn},"weight":1000}}"#)),
            "invalid ForwardConfig: invalid TargetGroupTuple: target group weight must be between 0 and 999",
        ),
        (
            fwd(&format!(r#"{{{arn},"weight":-1}}"#)),
            "invalid ForwardConfig: invalid TargetGroupTuple: target group weight must be between 0 and 999",
        ),
        (
            fwd(&format!(r#"{{{arn},"weight":1}},{{"serviceName":"target-svc1","servicePort":81}}"#)),
            "invalid ForwardConfig: weight must be set when routing to multiple target groups",
        ),
        (
            fwd(r#"{"serviceName":"missing","servicePort":81,"weight":1}"#),
            "Service \"missing\" not found",
        ),
        (
            fwd(r#"{"serviceName":"target-svc1","servicePort":99,"weight":1}"#),
            "unable to find port 99 on service default/target-svc1",
        ),
        (
            fwd(r#"{"serviceName":"target-svc1","servicePort":"nope","weight":1}"#),
            "unable to find port nope on service default/target-svc1",
        ),
    ];
    for (action, want) in cases {
        let s = with(svc(&[], PORT_80), &[(ACTIONS, action.as_str())]);
        assert_eq!(
            build_with(&s, &cfg(), &backends()).unwrap_err(),
            want,
            "{action}"
        );
    }
    // A lone entry needs no weight.
    let s = with(
        svc(&[], PORT_80),
        &[(
            ACTIONS,
            fwd(r#"{"serviceName":"target-svc1","servicePort":81}"#).as_str(),
        )],
    );
    assert!(build_with(&s, &cfg(), &backends()).is_ok());
    // Malformed JSON: upstream's parser prefix, the key and the raw value.
    let s = with(svc(&[], PORT_80), &[(ACTIONS, "{bad")]);
    let e = build_with(&s, &cfg(), &[]).unwrap_err();
    assert!(
        e.starts_with(&format!(
            "failed to parse json annotation, {ACTIONS}: {{bad: "
        )),
        "{e}"
    );
    let s = with(
        svc(&[], PORT_80),
        &[(
            ACTIONS,
            r#"{"type":"forward","forwardConfig":{"targetGroups":[{"weight":"5"}]}}"#,
        )],
    );
    let e = build_with(&s, &cfg(), &[]).unwrap_err();
    assert!(e.starts_with("failed to parse json annotation, "), "{e}");
}

#[test]
fn an_instance_backend_needs_a_node_port_service() {
    let cluster_ip: Service = serde_yaml::from_str(
        "metadata: {name: target-svc1, namespace: default, uid: u1}\nspec:\n  type: ClusterIP\n  ports:\n  - {port: 81, protocol: TCP}\n",
    )
    .unwrap();
    let action = r#"{"type":"forward","forwardConfig":{"targetGroups":[{"serviceName":"target-svc1","servicePort":81}]}}"#;
    let s = with(
        svc(&[], PORT_80),
        &[
            (
                "service.beta.kubernetes.io/aws-load-balancer-type",
                "external",
            ),
            (
                "service.beta.kubernetes.io/aws-load-balancer-nlb-target-type",
                "instance",
            ),
            (ACTIONS, action),
        ],
    );
    assert_eq!(
        build_with(&s, &cfg(), &[cluster_ip]).unwrap_err(),
        "unsupported service type \"ClusterIP\" for load balancer target type \"instance\""
    );
}

#[test]
fn a_backend_named_twice_gets_one_target_group() {
    let action = r#"{"type":"forward","forwardConfig":{"baseServiceWeight":1,"targetGroups":[{"serviceName":"target-svc1","servicePort":81,"weight":1}]}}"#;
    let ports = "  ports:\n  - {name: a, port: 80, targetPort: 80, protocol: TCP}\n  - {name: b, port: 90, targetPort: 90, protocol: TCP}\n";
    let s = with(
        svc(&[], ports),
        &[
            (ACTIONS, action),
            ("service.beta.kubernetes.io/actions.TCP-90", action),
        ],
    );
    let stack = build_with(&s, &cfg(), &backends()).unwrap();
    let ids: Vec<&str> = stack.target_groups.iter().map(|t| t.id.as_str()).collect();
    assert_eq!(
        ids,
        vec!["default/svc:80", "default/svc:90", "default/target-svc1:81"]
    );
    assert_eq!(stack.target_group_bindings.len(), 3);
    assert_eq!(
        forward(&stack, 90).target_groups[1].target_group_arn,
        tg_ref("default/target-svc1:81")
    );
}

#[test]
fn backend_names_are_read_from_every_actions_annotation() {
    let s = with(
        svc(&[], PORT_80),
        &[
            (ACTIONS, E2E_IP),
            (
                "service.beta.kubernetes.io/actions.UDP-53",
                r#"{"type":"forward","forwardConfig":{"targetGroups":[{"serviceName":"dns","servicePort":53}]}}"#,
            ),
            ("service.beta.kubernetes.io/actions.TCP-99", "{bad"),
        ],
    );
    let names: Vec<String> = weighted_backend_names(&s).into_iter().collect();
    assert_eq!(names, vec!["dns", "target-svc1", "target-svc2"]);
    let b = backends();
    let env = ServiceEnv::default().with_backends_of(&s, |ns, name| {
        assert_eq!(ns, "default");
        b.iter()
            .find(|x| x.metadata.name.as_deref() == Some(name))
            .cloned()
    });
    let found: Vec<&String> = env.backend_services.keys().collect();
    assert_eq!(
        found,
        vec!["target-svc1", "target-svc2"],
        "dns does not exist"
    );
}
