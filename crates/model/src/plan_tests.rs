//! `plan`: manifests in, the controller's stacks out, with the controller's own flags.

use super::*;
use serde_json::Value;

#[test]
fn parses_multi_document_yaml_and_lists() {
    let docs =
        parse_documents("a: 1\n---\nkind: List\nitems:\n- kind: Service\n- kind: Ingress\n---\n")
            .unwrap();
    assert_eq!(docs.len(), 3);
    assert_eq!(docs[2]["kind"], "Ingress");
}

/// Each document is read on its own, at its place in the file: comments alone are no document,
/// directives stay with their document, a broken one loses only itself.
#[test]
fn documents_are_read_one_by_one_with_their_number_and_line() {
    let text = "# header\n---\na: 1\n--- {b: 2}\n...\n%YAML 1.2\n---\nc: [\n---\nkind: List\nitems: [{d: 4}, {e: 5}]\n";
    let docs = documents(text);
    let seen: Vec<(usize, usize, Option<Value>)> = docs
        .iter()
        .map(|d| {
            let objects = d.objects.as_ref().ok().map(|o| Value::Array(o.clone()));
            (d.number, d.line, objects)
        })
        .collect();
    assert_eq!(
        seen,
        [
            (1, 2, Some(serde_json::json!([{"a": 1}]))),
            (2, 4, Some(serde_json::json!([{"b": 2}]))),
            (3, 6, None),
            (4, 9, Some(serde_json::json!([{"d": 4}, {"e": 5}]))),
        ]
    );
    // The error names the file's line (8), not the document's (3).
    let error = format!("{:#}", docs[2].objects.as_ref().unwrap_err());
    assert!(
        error.contains("line 8") || error.contains("line 9"),
        "{error}"
    );
    // CRLF line ends and JSON.
    assert_eq!(documents("a: 1\r\n---\r\nb: 2\r\n").len(), 2);
    let json = documents("{\"kind\": \"Service\",\n \"metadata\": {\"name\": \"x\"}}");
    assert_eq!(json.len(), 1);
    assert_eq!(json[0].objects.as_ref().unwrap()[0]["kind"], "Service");
}

/// One document that is not valid YAML, and one that is not a valid object of its kind, are
/// reported (file, number, line, error) and fail the plan; the file's other documents are
/// planned.
#[test]
fn an_unreadable_document_is_reported_and_the_rest_of_its_file_is_planned() {
    let good = "apiVersion: v1
kind: Service
metadata: {name: web, namespace: shop}
spec: {type: NodePort, ports: [{port: 80, targetPort: 8080, nodePort: 30080}]}
";
    let not_yaml = "---
apiVersion: v1
kind: Service
metadata: {name: broken, namespace: shop
spec: {type: NodePort}
";
    let ingress = "---
apiVersion: networking.k8s.io/v1
kind: Ingress
metadata:
  name: web
  namespace: shop
  annotations: {kubernetes.io/ingress.class: alb}
spec:
  rules:
  - http:
      paths:
      - {path: /, pathType: Prefix, backend: {service: {name: web, port: {number: 80}}}}
";
    let not_a_service = "---
apiVersion: v1
kind: Service
metadata: {name: typed, namespace: shop}
spec: {ports: eighty}
";
    let dir = tempfile::tempdir().unwrap();
    let f = dir.path().join("app.yaml");
    std::fs::write(&f, [good, not_yaml, ingress, not_a_service].concat()).unwrap();
    let mut out = Vec::new();
    let status = run(args(vec![f.clone()], &[]), &mut out).unwrap();
    let v: Value = serde_json::from_slice(&out).unwrap();
    assert_eq!(status, EXIT_FAILED, "{v:#}");
    assert_eq!(v["groups"][0]["group"], "shop/web", "{v:#}");
    assert!(v["groups"][0]["stack"]["loadBalancer"].is_object(), "{v:#}");
    let unread = v["unreadDocuments"].as_array().unwrap();
    let at: Vec<(&str, u64, u64)> = unread
        .iter()
        .map(|u| {
            (
                u["file"].as_str().unwrap(),
                u["document"].as_u64().unwrap(),
                u["line"].as_u64().unwrap(),
            )
        })
        .collect();
    let file = f.display().to_string();
    assert_eq!(at, [(file.as_str(), 2, 5), (file.as_str(), 4, 22)], "{v:#}");
    let yaml_error = unread[0]["error"].as_str().unwrap();
    assert!(
        yaml_error.contains("line 8") || yaml_error.contains("line 9"),
        "the file's line: {yaml_error}"
    );
    let kind_error = unread[1]["error"].as_str().unwrap();
    assert!(kind_error.contains("Service typed"), "{kind_error}");

    // The same file without them: every object planned.
    std::fs::write(&f, [good, ingress].concat()).unwrap();
    let mut out = Vec::new();
    assert_eq!(run(args(vec![f], &[]), &mut out).unwrap(), EXIT_PLANNED);
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
fn plan_shows_the_frontend_nlb() {
    let dir = tempfile::tempdir().unwrap();
    let f = dir.path().join("app.yaml");
    std::fs::write(
        &f,
        r#"
apiVersion: v1
kind: Service
metadata: {name: web, namespace: shop}
spec: {type: NodePort, ports: [{port: 80, targetPort: 8080, nodePort: 30080}]}
---
apiVersion: networking.k8s.io/v1
kind: Ingress
metadata:
  name: web
  namespace: shop
  annotations:
    kubernetes.io/ingress.class: alb
    alb.ingress.kubernetes.io/enable-frontend-nlb: "true"
    alb.ingress.kubernetes.io/frontend-nlb-listener-port-mapping: 8080=80
spec:
  rules:
  - http:
      paths:
      - {path: /, pathType: Prefix, backend: {service: {name: web, port: {number: 80}}}}
"#,
    )
    .unwrap();
    let args = PlanArgs::from_flags([
        std::ffi::OsStr::new("-f"),
        f.as_os_str(),
        std::ffi::OsStr::new("-o=json"),
    ])
    .unwrap();
    let mut out = Vec::new();
    run(args, &mut out).unwrap();
    let v: Value = serde_json::from_slice(&out).unwrap();
    let fe = &v["groups"][0]["stack"]["frontendNlb"];
    assert_eq!(fe["loadBalancer"]["id"], "FrontendNlb");
    assert_eq!(fe["loadBalancer"]["type"], "network");
    assert_eq!(fe["listeners"][0]["port"], 8080);
    assert_eq!(fe["targetGroups"][0]["targetPort"], 80);
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
    #[derive(clap::Parser)]
    struct Controller {
        #[command(flatten)]
        args: ControllerArgs,
    }
    let cli = <Controller as clap::Parser>::try_parse_from(argv).unwrap();
    // What the Ingress controller runs with (`IngressConfig::from_config` takes it as is).
    let controller = ModelConfig::from(&Config::from_args(&cli.args).unwrap());
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

/// `plan -o=json` over `files` (the embedded samples when empty) with extra controller flags.
fn args(files: Vec<PathBuf>, flags: &[&str]) -> PlanArgs {
    let mut argv: Vec<std::ffi::OsString> = Vec::new();
    for f in files {
        argv.push("-f".into());
        argv.push(f.into());
    }
    argv.push("-o=json".into());
    argv.extend(flags.iter().map(std::ffi::OsString::from));
    PlanArgs::from_flags(argv).unwrap()
}

#[test]
fn plan_prints_nlb_stack_for_load_balancer_services_only() {
    let dir = tempfile::tempdir().unwrap();
    let f = dir.path().join("svc.yaml");
    std::fs::write(
        &f,
        r#"
apiVersion: v1
kind: Service
metadata:
  name: dns
  namespace: infra
  annotations:
    service.beta.kubernetes.io/aws-load-balancer-type: external
    service.beta.kubernetes.io/aws-load-balancer-nlb-target-type: instance
    service.beta.kubernetes.io/aws-load-balancer-enable-tcp-udp-listener: "true"
spec:
  type: LoadBalancer
  ports:
  - {name: dns-tcp, port: 53, targetPort: 53, protocol: TCP}
  - {name: dns-udp, port: 53, targetPort: 53, protocol: UDP}
---
apiVersion: v1
kind: Service
metadata: {name: in-tree, namespace: infra, annotations: {service.beta.kubernetes.io/aws-load-balancer-type: nlb}}
spec:
  type: LoadBalancer
  ports: [{port: 80}]
---
apiVersion: v1
kind: Service
metadata: {name: by-class, namespace: infra}
spec:
  type: LoadBalancer
  loadBalancerClass: service.k8s.aws/nlb
  ports: [{port: 80}]
"#,
    )
    .unwrap();
    // As written (no Service mutator webhook: see
    // `the_service_mutator_webhook_gives_class_less_load_balancer_services_the_class`).
    let mut out = Vec::new();
    let as_written = ["--enable-service-mutator-webhook=false"];
    run(args(vec![f], &as_written), &mut out).unwrap();
    let v: Value = serde_json::from_slice(&out).unwrap();
    let services = v["services"].as_array().unwrap();
    let keys: Vec<&str> = services
        .iter()
        .map(|s| s["service"].as_str().unwrap())
        .collect();
    assert_eq!(
        keys,
        vec!["infra/by-class", "infra/dns"],
        "the in-tree `nlb` Service without a class is not ours"
    );
    // Instance targets (the default) on node ports `plan` fills with placeholders.
    let dns = &services[1]["stack"];
    assert_eq!(dns["loadBalancer"]["type"], "network");
    assert_eq!(
        dns["loadBalancer"]["tags"]["service.k8s.aws/stack"],
        "infra/dns"
    );
    assert_eq!(dns["listeners"][0]["protocol"], "TCP_UDP");
    assert_eq!(dns["targetGroups"][0]["protocol"], "TCP_UDP");
    assert_eq!(dns["targetGroups"][0]["port"], PLACEHOLDER_NODE_PORT_BASE);
    assert!(services[0].get("error").is_none(), "{}", services[0]);
}

/// A weighted Service: its listener's forward (weights, the backend's target group, an ARN as
/// written), the backend's target group and binding, all from the manifests; a backend missing
/// from them is upstream's lookup error.
#[test]
fn plan_shows_weighted_target_groups_with_backends_from_the_manifests() {
    let dir = tempfile::tempdir().unwrap();
    let f = dir.path().join("svc.yaml");
    let arn =
        "arn:aws:elasticloadbalancing:us-west-2:123456789012:targetgroup/other/0123456789abcdef";
    let manifests = format!(
        r#"
apiVersion: v1
kind: Service
metadata:
  name: web
  namespace: shop
  annotations:
    service.beta.kubernetes.io/aws-load-balancer-nlb-target-type: ip
    service.beta.kubernetes.io/actions.TCP-80: '{{"type":"forward","forwardConfig":{{"baseServiceWeight":20,"targetGroups":[{{"serviceName":"canary","servicePort":81,"weight":60}},{{"targetGroupARN":"{arn}","weight":40}}]}}}}'
spec:
  type: LoadBalancer
  loadBalancerClass: service.k8s.aws/nlb
  ports: [{{port: 80, targetPort: 8080}}]
---
apiVersion: v1
kind: Service
metadata: {{name: canary, namespace: shop}}
spec:
  type: ClusterIP
  ports: [{{port: 81, targetPort: 9090}}]
---
apiVersion: v1
kind: Service
metadata:
  name: lost
  namespace: shop
  annotations:
    service.beta.kubernetes.io/aws-load-balancer-nlb-target-type: ip
    service.beta.kubernetes.io/actions.TCP-80: '{{"type":"forward","forwardConfig":{{"targetGroups":[{{"serviceName":"nowhere","servicePort":81}}]}}}}'
spec:
  type: LoadBalancer
  loadBalancerClass: service.k8s.aws/nlb
  ports: [{{port: 80}}]
"#
    );
    std::fs::write(&f, manifests).unwrap();
    let mut out = Vec::new();
    assert_eq!(run(args(vec![f], &[]), &mut out).unwrap(), EXIT_FAILED);
    let v: Value = serde_json::from_slice(&out).unwrap();
    let services = v["services"].as_array().unwrap();
    assert_eq!(services[0]["service"], "shop/lost");
    assert_eq!(services[0]["error"], "Service \"nowhere\" not found");
    let web = &services[1]["stack"];
    assert_eq!(
        web["listeners"][0]["defaultActions"][0],
        serde_json::json!({
            "type": "forward",
            "forwardConfig": {"targetGroups": [
                {"targetGroupArn": {"targetGroupArn": "shop/web:80"}, "weight": 20},
                {"targetGroupArn": {"targetGroupArn": "shop/canary:81"}, "weight": 60},
                {"targetGroupArn": {"literal": arn}, "weight": 40},
            ]}
        })
    );
    let ids: Vec<&str> = web["targetGroups"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["id"].as_str().unwrap())
        .collect();
    assert_eq!(ids, vec!["shop/canary:81", "shop/web:80"]);
    assert_eq!(
        web["targetGroups"][0]["port"], 9090,
        "the backend's target port"
    );
    let binding = &web["targetGroupBindings"][0];
    assert_eq!(binding["spec"]["serviceName"], "canary");
    assert_eq!(
        binding["labels"]["service.k8s.aws/stack-name"], "web",
        "the weighted Service's stack"
    );
}

#[test]
fn local_traffic_policy_gets_a_placeholder_health_check_node_port() {
    let dir = tempfile::tempdir().unwrap();
    let f = dir.path().join("svc.yaml");
    std::fs::write(
        &f,
        r#"
apiVersion: v1
kind: Service
metadata: {name: local, namespace: web}
spec:
  type: LoadBalancer
  loadBalancerClass: service.k8s.aws/nlb
  externalTrafficPolicy: Local
  ports: [{port: 80, targetPort: 8080}]
---
apiVersion: v1
kind: Service
metadata: {name: unallocated, namespace: web}
spec:
  type: LoadBalancer
  loadBalancerClass: service.k8s.aws/nlb
  allocateLoadBalancerNodePorts: false
  ports: [{port: 80, targetPort: 8080}]
"#,
    )
    .unwrap();
    let mut out = Vec::new();
    run(args(vec![f], &[]), &mut out).unwrap();
    let v: Value = serde_json::from_slice(&out).unwrap();
    let hc = &v["services"][0]["stack"]["targetGroups"][0]["healthCheck"];
    assert_eq!(hc["port"], PLACEHOLDER_NODE_PORT_BASE.to_string());
    assert_eq!(hc["path"], "/healthz");
    assert_eq!(
        v["services"][1]["error"],
        "unable to support instance target type with an unallocated NodePort"
    );
}

#[test]
fn subnets_and_vpc_files_complete_rules_of_nlbs_without_security_groups() {
    let dir = tempfile::tempdir().unwrap();
    let f = dir.path().join("svc.yaml");
    std::fs::write(
        &f,
        r#"
apiVersion: v1
kind: Service
metadata:
  name: syslog
  namespace: infra
  annotations:
    service.beta.kubernetes.io/aws-load-balancer-type: nlb-ip
    service.beta.kubernetes.io/aws-load-balancer-disable-nlb-sg: "true"
spec:
  type: LoadBalancer
  ports: [{port: 514, targetPort: 5514, protocol: UDP}]
"#,
    )
    .unwrap();
    let subnets = dir.path().join("subnets.json");
    std::fs::write(&subnets, r#"[{"id": "subnet-a", "availabilityZone": "us-west-2a", "availableIps": 50, "cidrBlock": "10.0.1.0/24", "tags": {"kubernetes.io/role/internal-elb": "1"}}]"#).unwrap();
    let vpc = dir.path().join("vpc.json");
    std::fs::write(&vpc, r#"["10.0.0.0/16", "2600:1f13::/56"]"#).unwrap();
    let mut out = Vec::new();
    run(args(vec![f.clone()], &[]), &mut out).unwrap();
    let v: Value = serde_json::from_slice(&out).unwrap();
    let stack = &v["services"][0]["stack"];
    assert!(stack["warnings"][0]["message"]
        .as_str()
        .unwrap()
        .contains("CIDR blocks"));
    let mut a = args(vec![f], &[]);
    a.subnets_file = Some(subnets);
    a.vpc_file = Some(vpc);
    let mut out = Vec::new();
    run(a, &mut out).unwrap();
    let v: Value = serde_json::from_slice(&out).unwrap();
    let stack = &v["services"][0]["stack"];
    assert_eq!(stack["loadBalancer"]["subnets"]["resolved"][0], "subnet-a");
    let rules = &stack["targetGroupBindings"][0]["spec"]["networkingFromCidrs"];
    // UDP on an internal NLB: traffic from the VPC (IPv4 only), health checks from the subnet.
    assert_eq!(rules[0]["fromCidrs"], serde_json::json!(["10.0.0.0/16"]));
    assert_eq!(
        rules[0]["ports"][0],
        serde_json::json!({"protocol": "UDP", "port": 5514})
    );
    assert_eq!(rules[1]["fromCidrs"], serde_json::json!(["10.0.1.0/24"]));
    assert_eq!(
        rules[1]["ports"][0],
        serde_json::json!({"protocol": "TCP", "port": 5514})
    );
}

#[test]
fn controller_flags_shape_the_nlb_stack() {
    let a = args(Vec::new(), &["--feature-gates=NLBSecurityGroup=false"]);
    let mut out = Vec::new();
    run(a, &mut out).unwrap();
    let v: Value = serde_json::from_slice(&out).unwrap();
    let stack = &v["services"][0]["stack"];
    assert!(stack.get("managedSecurityGroup").is_none(), "{stack}");
    assert!(stack["loadBalancer"]
        .get("securityGroups")
        .unwrap()
        .as_array()
        .unwrap()
        .is_empty());
    let a = args(Vec::new(), &["--backend-security-group=sg-0123"]);
    let mut out = Vec::new();
    run(a, &mut out).unwrap();
    let v: Value = serde_json::from_slice(&out).unwrap();
    assert_eq!(
        v["services"][0]["stack"]["backendSecurityGroup"]["groupId"],
        "sg-0123"
    );
    let a = args(Vec::new(), &["--feature-gates=NoSuchGate=true"]);
    assert!(run(a, &mut Vec::new())
        .unwrap_err()
        .to_string()
        .contains("unknown feature: NoSuchGate"));
}

#[test]
fn embedded_samples_include_an_nlb_service() {
    let mut out = Vec::new();
    run(args(Vec::new(), &[]), &mut out).unwrap();
    let v: Value = serde_json::from_slice(&out).unwrap();
    let svc = &v["services"][0];
    assert_eq!(svc["service"], "default/echo-nlb");
    let stack = &svc["stack"];
    assert_eq!(stack["loadBalancer"]["scheme"], "internet-facing");
    let protocols: Vec<&str> = stack["listeners"]
        .as_array()
        .unwrap()
        .iter()
        .map(|l| l["protocol"].as_str().unwrap())
        .collect();
    assert_eq!(protocols, vec!["TCP", "TLS"]);
    assert_eq!(stack["targetGroups"][0]["targetType"], "ip");
}

/// `--watch-namespace`: the controllers never see an Ingress or Service elsewhere, so `plan`
/// neither plans it nor counts it in a group (and says so).
#[test]
fn plan_leaves_out_what_watch_namespace_hides_from_the_controllers() {
    let dir = tempfile::tempdir().unwrap();
    let f = dir.path().join("app.yaml");
    let ingress = |ns: &str| {
        format!(
            r#"
apiVersion: networking.k8s.io/v1
kind: Ingress
metadata:
  name: web
  namespace: {ns}
  annotations:
    kubernetes.io/ingress.class: alb
    alb.ingress.kubernetes.io/group.name: shared
spec:
  rules:
  - host: {ns}.example.com
    http:
      paths:
      - {{path: /, pathType: Prefix, backend: {{service: {{name: web, port: {{number: 80}}}}}}}}
---
apiVersion: v1
kind: Service
metadata: {{name: web, namespace: {ns}}}
spec: {{type: NodePort, ports: [{{port: 80, targetPort: 8080, nodePort: 30080}}]}}
---
apiVersion: v1
kind: Service
metadata: {{name: nlb, namespace: {ns}}}
spec: {{type: LoadBalancer, loadBalancerClass: service.k8s.aws/nlb, ports: [{{port: 80, nodePort: 30081}}]}}
"#
        )
    };
    std::fs::write(&f, format!("{}---{}", ingress("shop"), ingress("other"))).unwrap();

    let mut out = Vec::new();
    run(args(vec![f.clone()], &[]), &mut out).unwrap();
    let all: Value = serde_json::from_slice(&out).unwrap();
    assert_eq!(
        all["groups"][0]["stack"]["members"],
        serde_json::json!(["other/web", "shop/web"])
    );
    assert_eq!(all["services"].as_array().unwrap().len(), 2);

    let mut out = Vec::new();
    run(args(vec![f], &["--watch-namespace=shop"]), &mut out).unwrap();
    let v: Value = serde_json::from_slice(&out).unwrap();
    assert_eq!(v["groups"][0]["group"], "shared");
    assert_eq!(
        v["groups"][0]["stack"]["members"],
        serde_json::json!(["shop/web"])
    );
    let services: Vec<&str> = v["services"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["service"].as_str().unwrap())
        .collect();
    assert_eq!(services, vec!["shop/nlb"]);
    let notes = v["notes"].to_string();
    assert!(
        notes.contains("Ingress other/web is outside --watch-namespace"),
        "{notes}"
    );
}

/// `--feature-gates=EnableServiceController=false`: the controller runs no Service reconciler,
/// so `plan` plans no Service.
#[test]
fn plan_plans_no_service_when_the_service_controller_is_off() {
    let dir = tempfile::tempdir().unwrap();
    let f = dir.path().join("svc.yaml");
    std::fs::write(
        &f,
        r#"
apiVersion: v1
kind: Service
metadata: {name: nlb, namespace: infra}
spec: {type: LoadBalancer, loadBalancerClass: service.k8s.aws/nlb, ports: [{port: 80, nodePort: 30081}]}
"#,
    )
    .unwrap();
    let mut out = Vec::new();
    run(args(vec![f.clone()], &[]), &mut out).unwrap();
    let on: Value = serde_json::from_slice(&out).unwrap();
    assert_eq!(on["services"][0]["service"], "infra/nlb");

    let mut out = Vec::new();
    let flags = ["--feature-gates=EnableServiceController=false"];
    run(args(vec![f], &flags), &mut out).unwrap();
    let off: Value = serde_json::from_slice(&out).unwrap();
    assert!(off.get("services").is_none(), "{off:#}");
    assert!(
        off["notes"]
            .to_string()
            .contains("EnableServiceController is off"),
        "{off:#}"
    );
}

/// Two Ingresses, each its own group: `good`, and `broken`, whose health-check interval is not
/// a number (an error of its own configuration, so its group fails its build).
const GOOD_AND_BROKEN: &str = r#"
apiVersion: v1
kind: Service
metadata: {name: web, namespace: shop}
spec: {type: NodePort, ports: [{port: 80, targetPort: 8080, nodePort: 30080}]}
---
apiVersion: networking.k8s.io/v1
kind: Ingress
metadata:
  name: good
  namespace: shop
  annotations: {kubernetes.io/ingress.class: alb}
spec:
  rules:
  - http:
      paths:
      - {path: /, pathType: Prefix, backend: {service: {name: web, port: {number: 80}}}}
---
apiVersion: networking.k8s.io/v1
kind: Ingress
metadata:
  name: broken
  namespace: shop
  annotations:
    kubernetes.io/ingress.class: alb
    alb.ingress.kubernetes.io/healthcheck-interval-seconds: often
spec:
  rules:
  - http:
      paths:
      - {path: /, pathType: Prefix, backend: {service: {name: web, port: {number: 80}}}}
"#;

/// A CI gate fails on a plan with a failed object, and still sees every other object's plan.
#[test]
fn exit_status_is_1_when_an_object_fails_its_build_and_the_others_are_still_planned() {
    let dir = tempfile::tempdir().unwrap();
    let f = dir.path().join("app.yaml");
    std::fs::write(&f, GOOD_AND_BROKEN).unwrap();
    let mut out = Vec::new();
    assert_eq!(run(args(vec![f], &[]), &mut out).unwrap(), EXIT_FAILED);
    let v: Value = serde_json::from_slice(&out).unwrap();
    assert_eq!(v["groups"][0]["group"], "shop/broken", "{v:#}");
    assert!(
        v["groups"][0]["error"]
            .as_str()
            .unwrap()
            .contains("healthcheck-interval-seconds"),
        "{v:#}"
    );
    assert_eq!(v["groups"][1]["group"], "shop/good", "{v:#}");
    assert!(v["groups"][1]["stack"]["loadBalancer"].is_object(), "{v:#}");

    // An Ingress left out of a group that still builds has failed all the same.
    let fixture = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/fixtures/invalid_member.yaml"
    );
    let mut out = Vec::new();
    let status = run(args(vec![PathBuf::from(fixture)], &[]), &mut out).unwrap();
    let v: Value = serde_json::from_slice(&out).unwrap();
    assert_eq!(
        v["groups"][0]["stack"]["excludedMembers"][0]["ingress"],
        "team/broken"
    );
    assert_eq!(status, EXIT_FAILED, "{v:#}");

    // Everything planned: 0.
    assert_eq!(
        run(args(Vec::new(), &[]), &mut Vec::new()).unwrap(),
        EXIT_PLANNED
    );
}

/// `-o yaml` is plain YAML (no `!tag`, which standard loaders refuse) with the data `-o json`
/// has: a reference to a listener not created yet and subnets left to discovery included.
#[test]
fn yaml_is_plain_and_carries_what_json_carries() {
    let output = |format: &str| {
        let mut out = Vec::new();
        let flags = [format!("-o={format}")];
        assert_eq!(
            run(PlanArgs::from_flags(flags).unwrap(), &mut out).unwrap(),
            EXIT_PLANNED
        );
        String::from_utf8(out).unwrap()
    };
    let yaml = output("yaml");
    let tree: serde_yaml::Value = serde_yaml::from_str(&yaml).unwrap();
    assert_eq!(first_tag(&tree), None, "{yaml}");
    let from_yaml: Value = serde_yaml::from_str(&yaml).unwrap();
    let from_json: Value = serde_json::from_str(&output("json")).unwrap();
    assert_eq!(from_yaml, from_json);
    // A rule id YAML 1.1 loaders (PyYAML) would read as the number 4801 is quoted.
    assert!(yaml.contains("- id: '80:1'\n"), "{yaml}");
    let shop = &from_yaml["groups"][0]["stack"];
    assert_eq!(
        shop["listenerRules"][0]["listenerArn"],
        serde_json::json!({"listenerArn": 80}),
        "{yaml}"
    );
    assert_eq!(
        shop["loadBalancer"]["subnets"]["discover"]["roleTag"], "kubernetes.io/role/elb",
        "{yaml}"
    );
}

/// A reader that has gone (`plan | head -1`): every write fails as on a closed pipe.
struct ClosedPipe;

impl Write for ClosedPipe {
    fn write(&mut self, _: &[u8]) -> std::io::Result<usize> {
        Err(std::io::ErrorKind::BrokenPipe.into())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

/// A closed pipe ends the output quietly, with the plan's own exit status; any other write
/// failure is still one.
#[test]
fn a_closed_pipe_ends_the_plan_quietly() {
    assert_eq!(
        run(args(Vec::new(), &[]), &mut ClosedPipe).unwrap(),
        EXIT_PLANNED
    );
    let dir = tempfile::tempdir().unwrap();
    let f = dir.path().join("app.yaml");
    std::fs::write(&f, GOOD_AND_BROKEN).unwrap();
    assert_eq!(
        run(args(vec![f], &[]), &mut ClosedPipe).unwrap(),
        EXIT_FAILED
    );

    struct Full;
    impl Write for Full {
        fn write(&mut self, _: &[u8]) -> std::io::Result<usize> {
            Err(std::io::Error::other("no space left on device"))
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }
    let err = run(args(Vec::new(), &[]), &mut Full).unwrap_err();
    assert!(err.to_string().contains("no space left"), "{err:#}");
}

/// Gate `WeightedTargetGroups` off refuses an Ingress group whose `actions.*` forward weighs
/// several Services (upstream's deployer text, here before any AWS write); one Service alone
/// is still a forward.
#[test]
fn an_ingress_weighted_forward_is_refused_with_the_gate_off() {
    let dir = tempfile::tempdir().unwrap();
    let f = dir.path().join("app.yaml");
    let ingress = |name: &str, targets: &str| {
        format!(
            r#"
---
apiVersion: networking.k8s.io/v1
kind: Ingress
metadata:
  name: {name}
  namespace: shop
  annotations:
    alb.ingress.kubernetes.io/target-type: ip
    alb.ingress.kubernetes.io/actions.split: >
      {{"type":"forward","forwardConfig":{{"targetGroups":[{targets}]}}}}
spec:
  ingressClassName: alb
  rules: [{{http: {{paths: [{{path: /, pathType: Prefix, backend: {{service: {{name: split, port: {{name: use-annotation}}}}}}}}]}}}}]
"#
        )
    };
    let services = r#"
apiVersion: v1
kind: Service
metadata: {name: blue, namespace: shop}
spec: {ports: [{port: 80, targetPort: 8080}]}
---
apiVersion: v1
kind: Service
metadata: {name: green, namespace: shop}
spec: {ports: [{port: 80, targetPort: 8080}]}
"#;
    let two = r#"{"serviceName":"blue","servicePort":"80","weight":90},{"serviceName":"green","servicePort":"80","weight":10}"#;
    let one = r#"{"serviceName":"blue","servicePort":"80"}"#;
    std::fs::write(
        &f,
        format!(
            "{services}{}{}",
            ingress("weighted", two),
            ingress("single", one)
        ),
    )
    .unwrap();
    let plan = |gates: &str| {
        let args = PlanArgs::from_flags([
            "-f",
            f.to_str().unwrap(),
            "-o=json",
            "--cluster-name=c",
            gates,
        ])
        .unwrap();
        let mut out = Vec::new();
        let code = run(args, &mut out).unwrap();
        (code, serde_json::from_slice::<Value>(&out).unwrap())
    };
    let (code, on) = plan("--feature-gates=WeightedTargetGroups=true");
    assert_eq!(code, 0, "{on}");
    let (code, off) = plan("--feature-gates=WeightedTargetGroups=false");
    assert_eq!(code, 1, "{off}");
    let group = |p: &Value, name: &str| {
        p["groups"]
            .as_array()
            .unwrap()
            .iter()
            .find(|g| g["group"] == format!("shop/{name}"))
            .cloned()
            .unwrap()
    };
    assert_eq!(
        group(&off, "weighted")["error"],
        crate::model::types::WEIGHTED_TARGET_GROUPS_DISABLED
    );
    assert!(group(&off, "single")["stack"].is_object(), "{off}");
    assert!(group(&on, "weighted")["stack"].is_object(), "{on}");
}

/// With `EnableCertificateManagement` on, `plan` plans an Ingress with `create-acm-cert`: the
/// certificate to request (type, names, the controller's CA from `--default-pca-arn`), and the
/// HTTPS listener's reference to it; gate off, the annotation is not read.
#[test]
fn plan_shows_the_certificate_an_ingress_asks_for() {
    let dir = tempfile::tempdir().unwrap();
    let f = dir.path().join("app.yaml");
    std::fs::write(
        &f,
        r#"
apiVersion: v1
kind: Service
metadata: {name: web, namespace: shop}
spec: {type: NodePort, ports: [{port: 80, targetPort: 8080, nodePort: 30080}]}
---
apiVersion: networking.k8s.io/v1
kind: Ingress
metadata:
  name: web
  namespace: shop
  annotations:
    kubernetes.io/ingress.class: alb
    alb.ingress.kubernetes.io/create-acm-cert: "true"
spec:
  rules:
  - host: shop.example.com
    http:
      paths:
      - {path: /, pathType: Prefix, backend: {service: {name: web, port: {number: 80}}}}
"#,
    )
    .unwrap();
    let ca = "arn:aws:acm-pca:us-west-2:1:certificate-authority/ca";
    let pca = format!("--default-pca-arn={ca}");
    let flags = [
        "--feature-gates=EnableCertificateManagement=true",
        pca.as_str(),
    ];
    let mut out = Vec::new();
    run(args(vec![f.clone()], &flags), &mut out).unwrap();
    let v: Value = serde_json::from_slice(&out).unwrap();
    let stack = &v["groups"][0]["stack"];
    let cert = &stack["certificates"][0];
    assert_eq!(cert["type"], "PRIVATE", "{stack}");
    assert_eq!(cert["certificateAuthorityArn"], ca);
    assert_eq!(cert["domainName"], "shop.example.com");
    assert_eq!(
        cert["subjectAlternativeNames"],
        serde_json::json!(["shop.example.com"])
    );
    assert_eq!(cert["ingress"], "shop/web");
    assert!(cert["id"]
        .as_str()
        .unwrap()
        .starts_with("private/shop.example.com-"));
    let listener = &stack["listeners"][0];
    assert_eq!(listener["port"], 443);
    assert_eq!(listener["certificateDiscovery"][0]["ingress"], "shop/web");
    // Gate off (upstream's default): no certificate, plain HTTP.
    let mut out = Vec::new();
    run(args(vec![f], &[]), &mut out).unwrap();
    let v: Value = serde_json::from_slice(&out).unwrap();
    let stack = &v["groups"][0]["stack"];
    assert!(stack.get("certificates").is_none(), "{stack}");
    assert_eq!(stack["listeners"][0]["port"], 80);
}

const AGA_MANIFESTS: &str = r#"
apiVersion: v1
kind: Service
metadata: {name: web, namespace: shop}
spec: {type: NodePort, ports: [{port: 80, targetPort: 8080, nodePort: 30080}]}
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
apiVersion: aga.k8s.aws/v1beta1
kind: GlobalAccelerator
metadata: {name: edge, namespace: shop}
spec:
  listeners:
  - endpointGroups:
    - endpoints:
      - {type: Ingress, name: web}
---
apiVersion: aga.k8s.aws/v1beta1
kind: GlobalAccelerator
metadata: {name: api, namespace: shop}
spec:
  name: shop-api
  listeners:
  - protocol: TCP
    portRanges: [{fromPort: 443, toPort: 443}]
    endpointGroups:
    - endpoints:
      - {type: Service, name: missing}
"#;

/// GlobalAccelerators of the manifests are planned under their gate: an Ingress's ALB of the same
/// files is the endpoint (its listener ports discovered, its ARN a noted placeholder naming the
/// planned ALB, in `--aws-region`); a missing Service is left out with the loader's reason and
/// the accelerator still planned; the gate off plans none, with a note.
#[test]
fn plan_shows_global_accelerators_on_the_load_balancers_of_the_manifests() {
    let dir = tempfile::tempdir().unwrap();
    let f = dir.path().join("aga.yaml");
    std::fs::write(&f, AGA_MANIFESTS).unwrap();
    let flags = [
        "--feature-gates=GlobalAcceleratorController=true",
        "--aws-region=us-east-1",
    ];
    let mut out = Vec::new();
    let status = run(args(vec![f.clone()], &flags), &mut out).unwrap();
    assert_eq!(status, EXIT_PLANNED);
    let v: Value = serde_json::from_slice(&out).unwrap();
    let alb = v["groups"][0]["stack"]["loadBalancer"]["name"]
        .as_str()
        .unwrap()
        .to_string();
    let accs = v["accelerators"].as_array().unwrap();
    assert_eq!(accs.len(), 2, "{v}");
    // Sorted by namespace/name: shop/api, then shop/edge.
    let api = &accs[0];
    assert_eq!(api["accelerator"], "shop/api");
    assert_eq!(api["stack"]["accelerator"]["name"], "shop-api");
    let group = &api["stack"]["listeners"][0]["endpointGroups"][0];
    assert_eq!(group["region"], "us-east-1");
    assert!(group.get("endpointConfigurations").is_none(), "{group}");
    let note = api["endpoints"][0]["note"].as_str().unwrap();
    assert_eq!(api["endpoints"][0]["endpoint"], "Service/shop/missing");
    assert!(note.contains("Referenced resource not found"), "{note}");
    let edge = &accs[1];
    assert_eq!(edge["accelerator"], "shop/edge");
    let listener = &edge["stack"]["listeners"][0];
    assert_eq!(listener["protocol"], "TCP");
    assert_eq!(
        listener["portRanges"],
        serde_json::json!([{"fromPort": 80, "toPort": 80}])
    );
    let endpoint = &listener["endpointGroups"][0]["endpointConfigurations"][0];
    assert_eq!(
        endpoint["endpointId"],
        format!("arn:aws:elasticloadbalancing:us-east-1:000000000000:loadbalancer/app/{alb}/0000000000000000")
    );
    assert_eq!(edge["endpoints"][0]["endpoint"], "Ingress/shop/web");
    assert!(
        edge["endpoints"][0]["note"]
            .as_str()
            .unwrap()
            .contains(&alb),
        "{edge}"
    );
    let name = edge["stack"]["accelerator"]["name"].as_str().unwrap();
    assert!(name.starts_with("k8s_shop_edge_"), "{name}");
    assert_eq!(
        edge["stack"]["accelerator"]["tags"]["elbv2.k8s.aws/cluster-region"],
        "us-east-1"
    );

    // Gate off (upstream's default): none planned, said in a note.
    let mut out = Vec::new();
    run(args(vec![f], &[]), &mut out).unwrap();
    let v: Value = serde_json::from_slice(&out).unwrap();
    assert!(v.get("accelerators").is_none(), "{v}");
    assert!(
        v["notes"].as_array().unwrap().iter().any(|n| n
            .as_str()
            .unwrap()
            .contains("GlobalAcceleratorController is off")),
        "{v}"
    );
}
