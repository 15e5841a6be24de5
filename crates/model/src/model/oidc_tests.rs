//! OIDC credentials come from the named Secret of the Ingress's namespace, with upstream's keys,
//! trimming and errors, and never show in output.

use std::path::Path;

use super::super::{build_stack, load_groups, Action, BuildEnv, ClusterObjects, ModelConfig};
use super::*;
use crate::plan::add_manifests;

const OIDC: &str = r#"{"issuer":"https://idp.example.com","authorizationEndpoint":"https://idp.example.com/auth","tokenEndpoint":"https://idp.example.com/token","userInfoEndpoint":"https://idp.example.com/userinfo","secretName":"oidc-creds"}"#;

fn ingress(extra_annotations: &str) -> String {
    format!(
        r#"
apiVersion: v1
kind: Service
metadata: {{name: web, namespace: demo}}
spec: {{type: NodePort, ports: [{{port: 80, targetPort: 8080, nodePort: 30080}}]}}
---
apiVersion: networking.k8s.io/v1
kind: Ingress
metadata:
  name: web
  namespace: demo
  annotations:
    kubernetes.io/ingress.class: alb
    alb.ingress.kubernetes.io/listen-ports: '[{{"HTTPS": 443}}]'
    alb.ingress.kubernetes.io/certificate-arn: arn:aws:acm:us-west-2:111122223333:certificate/c
{extra_annotations}spec:
  rules:
  - host: shop.example.com
    http:
      paths:
      - {{path: /, pathType: Prefix, backend: {{service: {{name: web, port: {{number: 80}}}}}}}}
"#
    )
}

fn oidc_annotations() -> String {
    format!("    alb.ingress.kubernetes.io/auth-type: oidc\n    alb.ingress.kubernetes.io/auth-idp-oidc: '{OIDC}'\n")
}

/// `clientID`: "my-client" with trailing whitespace; `clientSecret`: "s3cr3t-value" + newline.
const SECRET: &str = r#"
apiVersion: v1
kind: Secret
metadata: {name: oidc-creds, namespace: demo}
data:
  clientID: bXktY2xpZW50ICA=
  clientSecret: czNjcjN0LXZhbHVlCg==
  unrelated: aWdub3JlZA==
"#;

fn cfg() -> ModelConfig {
    ModelConfig {
        cluster_name: "c".into(),
        vpc_id: Some("vpc-1".into()),
        ..ModelConfig::default()
    }
}

fn objects(yaml: &str) -> ClusterObjects {
    let mut objs = ClusterObjects::default();
    add_manifests(&mut objs, yaml, Path::new("t.yaml")).unwrap();
    objs
}

fn build(yaml: &str) -> Result<super::super::Stack, super::super::ModelError> {
    let objs = objects(yaml);
    let (groups, errors) = load_groups(&objs, "alb");
    assert!(errors.is_empty(), "{errors:?}");
    let g = groups.values().next().unwrap();
    build_stack(g, &objs, &cfg(), &BuildEnv::default())
}

fn oidc_of(stack: &super::super::Stack) -> AuthenticateOidcConfig {
    let rule = &stack.listener_rules[0];
    match &rule.actions[0] {
        Action::AuthenticateOidc { config } => config.clone(),
        other => panic!("first action is not OIDC: {other:?}"),
    }
}

#[test]
fn client_id_and_secret_come_from_the_secret_trimmed_as_upstream() {
    let stack = build(&(ingress(&oidc_annotations()) + "---" + SECRET)).unwrap();
    let c = oidc_of(&stack);
    assert_eq!(c.secret, "demo/oidc-creds");
    assert_eq!(c.client_id.expose(), "my-client");
    assert_eq!(c.client_secret.expose(), "s3cr3t-value");
    assert!(matches!(
        stack.listener_rules[0].actions[1],
        Action::Forward { .. }
    ));
}

#[test]
fn string_data_and_the_legacy_client_id_key_are_read() {
    let secret = r#"
apiVersion: v1
kind: Secret
metadata: {name: oidc-creds, namespace: demo}
stringData: {clientId: legacy-client, clientSecret: from-string-data}
"#;
    let c = oidc_of(&build(&(ingress(&oidc_annotations()) + "---" + secret)).unwrap());
    assert_eq!(c.client_id.expose(), "legacy-client");
    assert_eq!(c.client_secret.expose(), "from-string-data");
}

#[test]
fn a_changed_secret_changes_the_stack() {
    let before = build(&(ingress(&oidc_annotations()) + "---" + SECRET)).unwrap();
    let changed = SECRET.replace("czNjcjN0LXZhbHVlCg==", "bmV3LXNlY3JldA==");
    let after = build(&(ingress(&oidc_annotations()) + "---" + &changed)).unwrap();
    assert_eq!(oidc_of(&after).client_secret.expose(), "new-secret");
    assert_ne!(before, after);
}

#[test]
fn missing_secret_and_missing_keys_fail_with_upstreams_errors() {
    let err = build(&ingress(&oidc_annotations()))
        .unwrap_err()
        .to_string();
    assert!(err.contains(r#"secrets "oidc-creds" not found"#), "{err}");
    // A Secret of the same name in another namespace is not the Ingress's.
    let elsewhere = SECRET.replace("namespace: demo", "namespace: other");
    let err = build(&(ingress(&oidc_annotations()) + "---" + &elsewhere))
        .unwrap_err()
        .to_string();
    assert!(err.contains(r#"secrets "oidc-creds" not found"#), "{err}");
    let no_id = SECRET.replace("  clientID: bXktY2xpZW50ICA=\n", "");
    let err = build(&(ingress(&oidc_annotations()) + "---" + &no_id))
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("missing clientID, secret: demo/oidc-creds"),
        "{err}"
    );
    let no_secret = SECRET.replace("  clientSecret: czNjcjN0LXZhbHVlCg==\n", "");
    let err = build(&(ingress(&oidc_annotations()) + "---" + &no_secret))
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("missing clientSecret, secret: demo/oidc-creds"),
        "{err}"
    );
}

#[test]
fn a_service_annotation_reads_the_secret_of_the_ingress_namespace() {
    let yaml = ingress("    alb.ingress.kubernetes.io/auth-type: oidc\n").replace(
        "metadata: {name: web, namespace: demo}",
        &format!(
            "metadata: {{name: web, namespace: demo, annotations: {{alb.ingress.kubernetes.io/auth-idp-oidc: '{OIDC}'}}}}"
        ),
    );
    let c = oidc_of(&build(&(yaml + "---" + SECRET)).unwrap());
    assert_eq!(c.client_secret.expose(), "s3cr3t-value");
}

#[test]
fn oidc_on_an_http_listener_is_ignored_as_upstream_does() {
    let yaml = ingress(&oidc_annotations())
        .replace(r#"[{"HTTPS": 443}]"#, r#"[{"HTTP": 80}]"#)
        .replace("    alb.ingress.kubernetes.io/certificate-arn: arn:aws:acm:us-west-2:111122223333:certificate/c\n", "");
    // No Secret: on HTTP nothing reads it.
    let stack = build(&yaml).unwrap();
    assert!(stack.listener_rules.iter().all(|r| !r
        .actions
        .iter()
        .any(|a| matches!(a, Action::AuthenticateOidc { .. }))));
}

#[test]
fn credentials_never_show_in_debug_or_serialised_stacks() {
    let stack = build(&(ingress(&oidc_annotations()) + "---" + SECRET)).unwrap();
    let shown = [
        format!("{stack:?}"),
        serde_json::to_string(&stack).unwrap(),
        serde_yaml::to_string(&stack).unwrap(),
    ];
    for text in shown {
        assert!(!text.contains("s3cr3t-value"), "{text}");
        assert!(!text.contains("my-client"), "{text}");
        assert!(text.contains(Redacted::SHOWN), "{text}");
    }
}

#[test]
fn plan_output_never_contains_the_secret() {
    let dir = tempfile::tempdir().unwrap();
    let f = dir.path().join("app.yaml");
    std::fs::write(&f, ingress(&oidc_annotations()) + "---" + SECRET).unwrap();
    for output in ["-o=json", "-o=yaml"] {
        let args = crate::plan::PlanArgs::from_flags([
            "-f".into(),
            f.clone().into_os_string(),
            std::ffi::OsString::from(output),
        ])
        .unwrap();
        let mut out = Vec::new();
        crate::plan::run(args, &mut out).unwrap();
        let text = String::from_utf8(out).unwrap();
        assert!(text.contains("authenticate-oidc"), "{text}");
        assert!(
            !text.contains("not found") && !text.contains("missing client"),
            "the Secret was not read: {text}"
        );
        assert!(!text.contains("s3cr3t"), "{text}");
        assert!(!text.contains("czNjcjN0"), "{text}");
    }
}

#[test]
fn references_and_the_cached_part_of_a_secret() {
    let objs = objects(&(ingress(&oidc_annotations()) + "---" + SECRET));
    let refs = secret_refs(
        objs.ingresses
            .iter()
            .map(|i| &i.metadata)
            .chain(objs.services.iter().map(|s| &s.metadata)),
    );
    assert_eq!(
        refs.into_iter().collect::<Vec<_>>(),
        vec![("demo".to_string(), "oidc-creds".to_string())]
    );
    // plan keeps only the keys OIDC reads, as the controller's cache does.
    let kept = objs.secrets[0].data.as_ref().unwrap();
    assert_eq!(
        kept.keys().collect::<Vec<_>>(),
        vec!["clientID", "clientSecret"]
    );
}
