//! `plan`: manifests in, the controller's stacks out, with the controller's own flags.

use super::*;

#[test]
fn parses_multi_document_yaml_and_lists() {
    let docs =
        parse_documents("a: 1\n---\nkind: List\nitems:\n- kind: Service\n- kind: Ingress\n---\n")
            .unwrap();
    assert_eq!(docs.len(), 3);
    assert_eq!(docs[2]["kind"], "Ingress");
}

#[test]
fn plan_prints_stack_for_sample_ingress() {
    let dir = tempfile::tempdir().unwrap();
    let f = dir.path().join("app.yaml");
    std::fs::write(
        &f,
        r#"
apiVersion: v1
kind: Service
metadata: {name: web, namespace: shop}
spec:
  type: NodePort
  ports: [{name: http, port: 80, targetPort: 8080, nodePort: 30080}]
---
apiVersion: networking.k8s.io/v1
kind: Ingress
metadata:
  name: web
  namespace: shop
  annotations:
    kubernetes.io/ingress.class: alb
    alb.ingress.kubernetes.io/scheme: internet-facing
spec:
  rules:
  - http:
      paths:
      - {path: /, pathType: Prefix, backend: {service: {name: web, port: {number: 80}}}}
---
apiVersion: v1
kind: ConfigMap
metadata: {name: ignored}
"#,
    )
    .unwrap();
    let args = PlanArgs::from_flags([
        std::ffi::OsStr::new("-f"),
        dir.path().as_os_str(),
        std::ffi::OsStr::new("-o=json"),
        std::ffi::OsStr::new("--default-tags=team=web"),
    ])
    .unwrap();
    let mut out = Vec::new();
    run(args, &mut out).unwrap();
    let v: Value = serde_json::from_slice(&out).unwrap();
    let stack = &v["groups"][0]["stack"];
    assert_eq!(v["groups"][0]["group"], "shop/web");
    assert_eq!(stack["loadBalancer"]["scheme"], "internet-facing");
    assert_eq!(stack["loadBalancer"]["tags"]["team"], "web");
    assert_eq!(
        stack["loadBalancer"]["subnets"]["discover"]["roleTag"],
        "kubernetes.io/role/elb"
    );
    assert_eq!(
        stack["targetGroups"][0]["serviceUid"],
        PLACEHOLDER_SERVICE_UID
    );
    assert!(v["notes"][0].as_str().unwrap().contains("placeholder"));
}

#[test]
fn missing_file_is_an_error_not_a_panic() {
    let args = PlanArgs::from_flags(["-f", "/nonexistent/x.yaml", "--cluster-name", "c"]).unwrap();
    let err = run(args, &mut Vec::new()).unwrap_err();
    assert!(err.to_string().contains("no such file"));
}

const MODEL_FLAGS: &[&str] = &[
    "--cluster-name=prod",
    "--ingress-class=edge",
    "--feature-gates=ListenerRulesTagging=false,WeightedTargetGroups=false",
    "--enable-backend-security-group=false",
    "--default-target-type=ip",
    "--default-load-balancer-scheme=internet-facing",
    "--default-ssl-policy=ELBSecurityPolicy-TLS13-1-2-2021-06",
    "--default-tags=team=edge",
    "--external-managed-tags=Owner",
    "--disable-restricted-sg-rules",
    "--tolerate-non-existent-backend-service=false",
    "--enable-wafv2=false",
];

#[test]
fn plan_takes_the_controllers_model_flags_and_builds_its_model_config() {
    let mut plan = PlanArgs::from_flags(MODEL_FLAGS).unwrap();
    let argv = std::iter::once("controller").chain(MODEL_FLAGS.iter().copied());
    let cli = <crate::args::Cli as clap::Parser>::try_parse_from(argv).unwrap();
    let controller = crate::controller::ingress::IngressConfig::from_config(
        &Config::from_args(&cli.controller).unwrap(),
    )
    .model;
    assert_eq!(plan.model_config().unwrap(), controller);
    assert!(!controller.gate("ListenerRulesTagging") && !controller.enable_backend_sg);

    let dir = tempfile::tempdir().unwrap();
    let f = dir.path().join("app.yaml");
    std::fs::write(
        &f,
        r#"
apiVersion: v1
kind: Service
metadata: {name: web, namespace: shop}
spec: {ports: [{port: 80, targetPort: 8080}]}
---
apiVersion: networking.k8s.io/v1
kind: Ingress
metadata:
  name: web
  namespace: shop
  annotations: {kubernetes.io/ingress.class: edge}
spec:
  rules:
  - http:
      paths:
      - {path: /, pathType: Prefix, backend: {service: {name: web, port: {number: 80}}}}
"#,
    )
    .unwrap();
    let mut flags = vec!["-o=json".to_string(), format!("-f={}", f.display())];
    flags.extend(MODEL_FLAGS.iter().map(|s| s.to_string()));
    let mut out = Vec::new();
    run(PlanArgs::from_flags(flags).unwrap(), &mut out).unwrap();
    let v: Value = serde_json::from_slice(&out).unwrap();
    let stack = &v["groups"][0]["stack"];
    assert_eq!(v["groups"][0]["group"], "shop/web", "{v}");
    assert_eq!(stack["loadBalancer"]["scheme"], "internet-facing");
    assert_eq!(stack["loadBalancer"]["tags"]["team"], "edge");
    assert_eq!(stack["targetGroups"][0]["targetType"], "ip");
    assert!(stack.get("backendSecurityGroup").is_none(), "{stack}");
    assert!(stack["loadBalancer"]["tags"]["elbv2.k8s.aws/cluster"] == "prod");
}

#[test]
fn plan_refuses_flags_the_controller_refuses() {
    for (flag, want) in [
        ("--feature-gates=Bogus=true", "unknown feature: Bogus"),
        (
            "--default-target-type=lambda",
            "invalid value lambda for default target type",
        ),
        (
            "--default-tags=elbv2.k8s.aws/cluster=x",
            "tag key elbv2.k8s.aws/cluster cannot be specified in default-tags flag",
        ),
    ] {
        let err = run(PlanArgs::from_flags([flag]).unwrap(), &mut Vec::new()).unwrap_err();
        assert_eq!(err.to_string(), want, "{flag}");
    }
}

#[test]
fn plan_without_flags_plans_the_embedded_samples() {
    let mut out = Vec::new();
    run(
        PlanArgs::from_flags(Vec::<String>::new()).unwrap(),
        &mut out,
    )
    .unwrap();
    let text = String::from_utf8(out).unwrap();
    assert!(text.contains("group: shop"), "{text}");
    assert!(text.contains("elbv2.k8s.aws/cluster: demo"), "{text}");
}
