//! Replays `pkg/ingress2gateway/warnings/warnings_test.go`: `TestCheckMissingResources` (6
//! cases), `TestCheckMissingResources_FromFile` (1) and
//! `TestCheckMissingResources_ExternalTargetGroupWarning` (4): all 11 cases.

use super::replay_migrate::testdata;
use super::{ingress, service};
use crate::migrate::reader::read_files;
use crate::migrate::warnings::check_input_resources;
use crate::migrate::InputResources;
use k8s_openapi::api::networking::v1::IngressClass;

fn check(r: &InputResources) -> (usize, String) {
    let mut buf = Vec::new();
    let n = check_input_resources(r, &mut buf);
    (n, String::from_utf8(buf).unwrap())
}

const ONE_BACKEND: &str =
    "rules:\n- http:\n    paths:\n    - backend:\n        service:\n          name: SVC\n";

#[test]
fn check_missing_resources() {
    let class =
        |name: &str| -> IngressClass { super::yaml(&format!("metadata: {{name: {name}}}")) };
    let with_class = |spec: &str| format!("ingressClassName: alb\n{spec}");
    struct Case {
        name: &'static str,
        r: InputResources,
        count: usize,
        contains: Vec<&'static str>,
        empty: bool,
    }
    let cases = vec![
        Case {
            name: "no warnings when all resources present",
            r: InputResources {
                ingresses: vec![ingress(
                    "default",
                    "test",
                    &[],
                    &with_class(&ONE_BACKEND.replace("SVC", "my-svc")),
                )],
                services: vec![service("default", "my-svc", &[], &[])],
                ingress_classes: vec![class("alb")],
                ..Default::default()
            },
            count: 0,
            contains: vec![],
            empty: true,
        },
        Case {
            name: "missing service in rule backend",
            r: InputResources {
                ingresses: vec![ingress("default", "test", &[], &ONE_BACKEND.replace("SVC", "missing-svc"))],
                ..Default::default()
            },
            count: 1,
            contains: vec!["missing-svc", "WARNING"],
            empty: false,
        },
        Case {
            name: "missing ingress class",
            r: InputResources {
                ingresses: vec![ingress("default", "test", &[], "ingressClassName: missing-class")],
                ..Default::default()
            },
            count: 1,
            contains: vec!["missing-class", "IngressClass"],
            empty: false,
        },
        Case {
            name: "missing default backend service",
            r: InputResources {
                ingresses: vec![ingress(
                    "default",
                    "test",
                    &[],
                    "defaultBackend:\n  service:\n    name: default-backend-svc\n",
                )],
                ..Default::default()
            },
            count: 1,
            contains: vec!["default-backend-svc"],
            empty: false,
        },
        Case {
            name: "use-annotation backends should not flagged as missing services",
            r: InputResources {
                ingresses: vec![ingress(
                    "default",
                    "test",
                    &[],
                    "rules:\n- http:\n    paths:\n    - backend:\n        service:\n          name: my-action\n          port: {name: use-annotation}\n",
                )],
                ..Default::default()
            },
            count: 0,
            contains: vec![],
            empty: true,
        },
        Case {
            name: "mix of use-annotation and real service — only real service warned",
            r: InputResources {
                ingresses: vec![ingress(
                    "default",
                    "test",
                    &[],
                    "rules:\n- http:\n    paths:\n    - backend:\n        service:\n          name: my-action\n          port: {name: use-annotation}\n    - backend:\n        service:\n          name: missing-real-svc\n          port: {number: 80}\n",
                )],
                ..Default::default()
            },
            count: 1,
            contains: vec!["missing-real-svc"],
            empty: false,
        },
    ];
    for c in cases {
        let (n, text) = check(&c.r);
        assert_eq!(n, c.count, "{}: {text}", c.name);
        if c.empty {
            assert!(text.is_empty(), "{}: {text}", c.name);
        }
        for s in &c.contains {
            assert!(text.contains(s), "{}: {text}", c.name);
        }
    }
}

#[test]
fn check_missing_resources_from_file() {
    let r = read_files(
        &[testdata("test_files").join("ingress_missing_service.yaml")],
        &mut std::io::sink(),
    )
    .unwrap();
    assert_eq!(r.ingresses.len(), 1);
    let (n, text) = check(&r);
    assert_eq!(n, 2, "{text}");
    assert!(text.contains("service-2048"), "{text}");
    assert!(text.contains("Tip: Use --from-cluster"), "{text}");
    // Upstream's wording.
    assert!(text.contains(
        "WARNING: Ingress \"2048-game/2048-ingress\" references Service \"service-2048\" but it was not provided. Service-level annotation overrides may be missing.\n"
    ));
    assert!(text.contains(
        "WARNING: Ingress \"2048-game/2048-ingress\" uses IngressClass \"alb\" but it was not provided. IngressClassParams overrides may be missing.\n"
    ));
}

#[test]
fn check_missing_resources_external_target_group_warning() {
    let cases: Vec<(&str, Vec<(&str, &str)>, bool)> = vec![
        (
            "action with targetGroupARN triggers warning",
            vec![(
                "alb.ingress.kubernetes.io/actions.forward-ext",
                r#"{"type":"forward","targetGroupARN":"arn:aws:elasticloadbalancing:us-west-2:123:targetgroup/my-tg/abc"}"#,
            )],
            true,
        ),
        (
            "action with targetGroupName triggers warning",
            vec![(
                "alb.ingress.kubernetes.io/actions.forward-ext",
                r#"{"type":"forward","targetGroupName":"my-tg"}"#,
            )],
            true,
        ),
        (
            "action with serviceName only — no warning",
            vec![(
                "alb.ingress.kubernetes.io/actions.forward-svc",
                r#"{"type":"forward","forwardConfig":{"targetGroups":[{"serviceName":"svc","servicePort":80}]}}"#,
            )],
            false,
        ),
        ("no action annotations — no warning", vec![], false),
    ];
    for (name, annotations, warned) in cases {
        let r = InputResources {
            ingresses: vec![ingress(
                "default",
                "test",
                &annotations,
                "rules:\n- http:\n    paths:\n    - backend:\n        service:\n          name: forward-ext\n          port: {name: use-annotation}\n",
            )],
            ..Default::default()
        };
        let (_, text) = check(&r);
        assert_eq!(
            text.contains("external target groups"),
            warned,
            "{name}: {text}"
        );
    }
}
