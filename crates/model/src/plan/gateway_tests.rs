//! `plan` reads Gateway API manifests and plans the Gateways of this controller's classes.

use super::super::{run, PlanArgs};

fn plan(manifests: &str) -> serde_json::Value {
    plan_with(manifests, &[])
}

fn plan_with(manifests: &str, flags: &[&str]) -> serde_json::Value {
    let dir = tempfile::tempdir().unwrap();
    let f = dir.path().join("gw.yaml");
    std::fs::write(&f, manifests).unwrap();
    let mut argv: Vec<std::ffi::OsString> = vec!["-f".into(), f.into_os_string(), "-o=json".into()];
    argv.extend(flags.iter().map(std::ffi::OsString::from));
    let args = PlanArgs::from_flags(argv).unwrap();
    let mut out = Vec::new();
    run(args, &mut out).unwrap();
    serde_json::from_slice(&out).unwrap()
}

#[test]
fn plan_plans_alb_gateways_with_their_routes_and_configuration() {
    let p = plan(
        r#"
apiVersion: gateway.networking.k8s.io/v1
kind: GatewayClass
metadata: {name: alb}
spec: {controllerName: gateway.k8s.aws/alb}
---
apiVersion: gateway.networking.k8s.io/v1
kind: GatewayClass
metadata: {name: nlb}
spec: {controllerName: gateway.k8s.aws/nlb}
---
apiVersion: gateway.networking.k8s.io/v1
kind: GatewayClass
metadata: {name: someone-else}
spec: {controllerName: example.com/gateway}
---
apiVersion: gateway.k8s.aws/v1
kind: LoadBalancerConfiguration
metadata: {name: internal, namespace: web}
spec: {scheme: internal, tags: {team: web}}
---
apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: {name: web, namespace: web}
spec:
  gatewayClassName: alb
  infrastructure: {parametersRef: {group: gateway.k8s.aws, kind: LoadBalancerConfiguration, name: internal}}
  listeners: [{name: http, port: 80, protocol: HTTP}]
---
apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: {name: l4, namespace: web}
spec:
  gatewayClassName: nlb
  listeners: [{name: tcp, port: 5432, protocol: TCP}]
---
apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: {name: theirs, namespace: web}
spec:
  gatewayClassName: someone-else
  listeners: [{name: http, port: 80, protocol: HTTP}]
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: shop, namespace: web}
spec:
  parentRefs: [{name: web}]
  rules: [{backendRefs: [{name: shop, port: 80}]}]
---
apiVersion: v1
kind: Service
metadata: {name: shop, namespace: web}
spec: {type: NodePort, ports: [{port: 80, targetPort: 8080, nodePort: 30080}]}
"#,
    );
    let gateways = p["gateways"].as_array().unwrap();
    let names: Vec<&str> = gateways
        .iter()
        .map(|g| g["gateway"].as_str().unwrap())
        .collect();
    assert_eq!(names, vec!["web/l4", "web/web"]);
    // The NLB Gateway has a listener but no route: a load balancer without listeners.
    assert_eq!(gateways[0]["stack"]["loadBalancer"]["type"], "network");
    assert!(gateways[0]["stack"].get("listeners").is_none());
    let stack = &gateways[1]["stack"];
    assert_eq!(stack["loadBalancer"]["scheme"], "internal");
    assert_eq!(stack["loadBalancer"]["tags"]["team"], "web");
    assert_eq!(stack["listeners"][0]["port"], 80);
    assert_eq!(
        stack["listenerRules"][0]["conditions"][0]["pathPatternConfig"]["values"][0],
        "/*"
    );
    assert_eq!(stack["targetGroups"][0]["port"], 30080);
}

const CLASSES: &str = r#"
apiVersion: gateway.networking.k8s.io/v1
kind: GatewayClass
metadata: {name: alb}
spec: {controllerName: gateway.k8s.aws/alb}
---
apiVersion: gateway.networking.k8s.io/v1
kind: GatewayClass
metadata: {name: nlb}
spec: {controllerName: gateway.k8s.aws/nlb}
"#;

#[test]
fn plan_reads_grpc_routes_reference_grants_and_rule_configurations() {
    let p = plan(&format!(
        r#"{CLASSES}
---
apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: {{name: gw, namespace: infra}}
spec:
  gatewayClassName: alb
  listeners:
  - name: http
    port: 80
    protocol: HTTP
    allowedRoutes: {{namespaces: {{from: All}}, kinds: [{{kind: HTTPRoute}}, {{kind: GRPCRoute}}]}}
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {{name: granted, namespace: apps}}
spec:
  parentRefs: [{{name: gw, namespace: infra}}]
  rules:
  - matches: [{{path: {{type: PathPrefix, value: /ok}}}}]
    backendRefs: [{{name: api, namespace: backends, port: 80}}]
  - matches: [{{path: {{type: PathPrefix, value: /no}}}}]
    backendRefs: [{{name: api, namespace: private, port: 80}}]
---
apiVersion: gateway.networking.k8s.io/v1beta1
kind: ReferenceGrant
metadata: {{name: apps-to-api, namespace: backends}}
spec:
  from: [{{group: gateway.networking.k8s.io, kind: HTTPRoute, namespace: apps}}]
  to: [{{group: "", kind: Service, name: api}}]
---
apiVersion: gateway.networking.k8s.io/v1
kind: GRPCRoute
metadata: {{name: rpc, namespace: apps}}
spec:
  parentRefs: [{{name: gw, namespace: infra}}]
  rules:
  - matches: [{{method: {{service: pkg.Svc, method: Get}}}}]
    filters: [{{type: ExtensionRef, extensionRef: {{group: gateway.k8s.aws, kind: ListenerRuleConfiguration, name: maintenance}}}}]
---
apiVersion: gateway.k8s.aws/v1
kind: ListenerRuleConfiguration
metadata: {{name: maintenance, namespace: apps}}
spec:
  actions: [{{type: fixed-response, fixedResponseConfig: {{statusCode: 503, messageBody: later}}}}]
---
apiVersion: v1
kind: Service
metadata: {{name: api, namespace: backends}}
spec: {{type: NodePort, ports: [{{port: 80, targetPort: 8080, nodePort: 30080}}]}}
---
apiVersion: v1
kind: Service
metadata: {{name: api, namespace: private}}
spec: {{type: NodePort, ports: [{{port: 80, targetPort: 8080, nodePort: 30081}}]}}
"#
    ));
    let gw = &p["gateways"][0];
    assert_eq!(gw["gateway"], "infra/gw");
    let rules = gw["stack"]["listenerRules"].as_array().unwrap();
    let summary: Vec<(String, String)> = rules
        .iter()
        .map(|r| {
            let path = r["conditions"][0]["pathPatternConfig"]["values"][0].clone();
            let action = r["actions"][0].clone();
            let what = match action["type"].as_str().unwrap() {
                "fixed-response" => {
                    format!("fixed {}", action["fixedResponseConfig"]["statusCode"])
                }
                other => other.to_string(),
            };
            (path.as_str().unwrap().to_string(), what)
        })
        .collect();
    assert_eq!(
        summary,
        vec![
            // The GRPC exact method (3) before the HTTP prefixes (2).
            ("/pkg.Svc/Get".to_string(), "fixed \"503\"".to_string()),
            ("/ok".to_string(), "forward".to_string()),
            // No grant for namespace `private`: left out, the rule answers 500.
            ("/no".to_string(), "fixed \"500\"".to_string()),
        ]
    );
    let problems = gw["routeProblems"].as_array().unwrap();
    assert_eq!(problems.len(), 1);
    assert_eq!(problems[0]["route"], "HTTPRoute apps/granted");
    assert_eq!(problems[0]["reason"], "RefNotPermitted");
    assert_eq!(
        problems[0]["message"],
        "No explicit ReferenceGrant exists to allow the reference."
    );
}

#[test]
fn plan_reads_tls_routes_for_nlb_gateways() {
    let p = plan(&format!(
        r#"{CLASSES}
---
apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: {{name: gw, namespace: apps}}
spec:
  gatewayClassName: nlb
  listeners: [{{name: tls, port: 443, protocol: TLS, tls: {{mode: Passthrough}}}}]
---
apiVersion: gateway.networking.k8s.io/v1alpha2
kind: TLSRoute
metadata: {{name: secure, namespace: apps}}
spec:
  parentRefs: [{{name: gw}}]
  hostnames: [secure.example.com]
  rules: [{{backendRefs: [{{name: api, port: 443}}]}}]
---
apiVersion: v1
kind: Service
metadata: {{name: api, namespace: apps}}
spec: {{type: NodePort, ports: [{{port: 443, targetPort: 8443, nodePort: 30443}}]}}
"#
    ));
    let stack = &p["gateways"][0]["stack"];
    assert_eq!(stack["listeners"][0]["protocol"], "TCP");
    assert_eq!(stack["targetGroups"][0]["protocol"], "TLS");
    assert!(stack["targetGroups"][0]["id"]
        .as_str()
        .unwrap()
        .contains(":TLSRoute-apps-api:8443"));
}

/// `plan` has no ACM: an HTTPS listener without configured certificates shows the hosts
/// discovery would cover (as it does for Ingresses), instead of failing.
#[test]
fn plan_shows_the_hosts_acm_discovery_covers_for_https_gateways() {
    let p = plan(&format!(
        r#"{CLASSES}
---
apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: {{name: gw, namespace: web}}
spec:
  gatewayClassName: alb
  listeners: [{{name: https, port: 443, protocol: HTTPS, hostname: "*.example.com"}}]
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {{name: shop, namespace: web}}
spec:
  parentRefs: [{{name: gw}}]
  hostnames: [shop.example.com]
  rules: [{{backendRefs: [{{name: shop, port: 80}}]}}]
---
apiVersion: v1
kind: Service
metadata: {{name: shop, namespace: web}}
spec: {{type: NodePort, ports: [{{port: 80, targetPort: 8080, nodePort: 30080}}]}}
"#
    ));
    let g = &p["gateways"][0];
    assert!(g.get("error").is_none_or(|e| e.is_null()), "{g}");
    let l = &g["stack"]["listeners"][0];
    assert_eq!(l["protocol"], "HTTPS");
    assert!(l.get("certificates").is_none(), "{l}");
    assert_eq!(
        l["certificateDiscovery"][0]["discoveryHosts"],
        serde_json::json!(["*.example.com", "shop.example.com"])
    );
}

/// `--vpc-file` reaches the Gateways as it reaches the Services: an internal NLB Gateway without
/// security groups lets the VPC in on its bindings (was: no peer and the needs-AWS warning).
#[test]
fn plan_gives_the_vpc_file_to_internal_nlb_gateways_without_security_groups() {
    let dir = tempfile::tempdir().unwrap();
    let f = dir.path().join("gw.yaml");
    std::fs::write(
        &f,
        format!(
            r#"{CLASSES}
---
apiVersion: gateway.k8s.aws/v1
kind: LoadBalancerConfiguration
metadata: {{name: private, namespace: apps}}
spec: {{scheme: internal, disableSecurityGroup: true}}
---
apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: {{name: gw, namespace: apps}}
spec:
  gatewayClassName: nlb
  infrastructure: {{parametersRef: {{group: gateway.k8s.aws, kind: LoadBalancerConfiguration, name: private}}}}
  listeners: [{{name: tcp, port: 5432, protocol: TCP}}]
---
apiVersion: gateway.networking.k8s.io/v1alpha2
kind: TCPRoute
metadata: {{name: db, namespace: apps}}
spec:
  parentRefs: [{{name: gw}}]
  rules: [{{backendRefs: [{{name: db, port: 5432}}]}}]
---
apiVersion: v1
kind: Service
metadata: {{name: db, namespace: apps}}
spec: {{type: NodePort, ports: [{{port: 5432, targetPort: 5432, nodePort: 30432}}]}}
"#
        ),
    )
    .unwrap();
    let subnets = dir.path().join("subnets.json");
    std::fs::write(&subnets, r#"[{"id": "subnet-a", "availabilityZone": "us-west-2a", "availableIps": 50, "cidrBlock": "10.0.1.0/24", "tags": {"kubernetes.io/role/internal-elb": "1"}}]"#).unwrap();
    let vpc = dir.path().join("vpc.json");
    std::fs::write(&vpc, r#"["10.0.0.0/16"]"#).unwrap();
    let flags = [
        "-f".into(),
        f.into_os_string(),
        "--subnets-file".into(),
        subnets.into_os_string(),
        "--vpc-file".into(),
        vpc.into_os_string(),
        "-o=json".into(),
    ];
    let mut out = Vec::new();
    run(PlanArgs::from_flags(flags).unwrap(), &mut out).unwrap();
    let p: serde_json::Value = serde_json::from_slice(&out).unwrap();
    let g = &p["gateways"][0];
    assert!(g.get("error").is_none_or(|e| e.is_null()), "{g}");
    let stack = &g["stack"];
    assert!(
        stack.get("warnings").is_none_or(|w| w
            .as_array()
            .unwrap()
            .iter()
            .all(|w| !w["message"].as_str().unwrap().contains("CIDR blocks"))),
        "{stack}"
    );
    let rules = &stack["targetGroupBindings"][0]["spec"]["networkingFromCidrs"];
    assert_eq!(
        rules[0]["fromCidrs"],
        serde_json::json!(["10.0.0.0/16"]),
        "{stack}"
    );
}

/// Gates `ALBGatewayAPI` / `NLBGatewayAPI` off: that Gateway controller does not run, so its
/// Gateways are not planned.
#[test]
fn plan_plans_no_gateway_of_a_gated_off_controller() {
    let manifests = r#"
apiVersion: gateway.networking.k8s.io/v1
kind: GatewayClass
metadata: {name: alb}
spec: {controllerName: gateway.k8s.aws/alb}
---
apiVersion: gateway.networking.k8s.io/v1
kind: GatewayClass
metadata: {name: nlb}
spec: {controllerName: gateway.k8s.aws/nlb}
---
apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: {name: web, namespace: web}
spec:
  gatewayClassName: alb
  listeners: [{name: http, port: 80, protocol: HTTP}]
---
apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: {name: l4, namespace: web}
spec:
  gatewayClassName: nlb
  listeners: [{name: tcp, port: 5432, protocol: TCP}]
"#;
    let names = |p: serde_json::Value| -> Vec<String> {
        p["gateways"]
            .as_array()
            .map(|g| {
                g.iter()
                    .map(|g| g["gateway"].as_str().unwrap().to_string())
                    .collect()
            })
            .unwrap_or_default()
    };
    assert_eq!(names(plan(manifests)), vec!["web/l4", "web/web"]);
    let alb_off = plan_with(manifests, &["--feature-gates=ALBGatewayAPI=false"]);
    assert_eq!(names(alb_off), vec!["web/l4"]);
    let nlb_off = plan_with(manifests, &["--feature-gates=NLBGatewayAPI=false"]);
    assert_eq!(names(nlb_off), vec!["web/web"]);
}

/// `--watch-namespace`: the Gateway controllers never see a Gateway elsewhere, so it is not
/// planned (and said so).
#[test]
fn plan_plans_no_gateway_outside_watch_namespace() {
    let manifests = r#"
apiVersion: gateway.networking.k8s.io/v1
kind: GatewayClass
metadata: {name: alb}
spec: {controllerName: gateway.k8s.aws/alb}
---
apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: {name: web, namespace: web}
spec:
  gatewayClassName: alb
  listeners: [{name: http, port: 80, protocol: HTTP}]
---
apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: {name: web, namespace: other}
spec:
  gatewayClassName: alb
  listeners: [{name: http, port: 80, protocol: HTTP}]
"#;
    let names = |p: &serde_json::Value| -> Vec<String> {
        p["gateways"]
            .as_array()
            .map(|g| {
                g.iter()
                    .map(|g| g["gateway"].as_str().unwrap().to_string())
                    .collect()
            })
            .unwrap_or_default()
    };
    assert_eq!(names(&plan(manifests)), vec!["other/web", "web/web"]);
    let scoped = plan_with(manifests, &["--watch-namespace=web"]);
    assert_eq!(names(&scoped), vec!["web/web"]);
    assert!(
        scoped["notes"]
            .to_string()
            .contains("Gateway other/web is outside --watch-namespace"),
        "{scoped:#}"
    );
}

/// Gate `WeightedTargetGroups` off refuses a route that weighs several backends while the
/// Gateway is built (upstream's deployer text), never half-way through a deploy; on, it is a
/// weighted forward.
#[test]
fn weighted_backends_are_refused_with_the_gate_off() {
    let manifests = format!(
        r#"{CLASSES}
---
apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: {{name: web, namespace: web}}
spec:
  gatewayClassName: alb
  listeners: [{{name: http, port: 80, protocol: HTTP}}]
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {{name: shop, namespace: web}}
spec:
  parentRefs: [{{name: web}}]
  rules: [{{backendRefs: [{{name: blue, port: 80, weight: 90}}, {{name: green, port: 80, weight: 10}}]}}]
---
apiVersion: v1
kind: Service
metadata: {{name: blue, namespace: web}}
spec: {{type: NodePort, ports: [{{port: 80, targetPort: 8080, nodePort: 30080}}]}}
---
apiVersion: v1
kind: Service
metadata: {{name: green, namespace: web}}
spec: {{type: NodePort, ports: [{{port: 80, targetPort: 8080, nodePort: 30081}}]}}
"#
    );
    let on = plan(&manifests);
    let forward = &on["gateways"][0]["stack"]["listenerRules"][0]["actions"][0]["forwardConfig"];
    assert_eq!(forward["targetGroups"].as_array().unwrap().len(), 2, "{on}");

    let off = plan_with(&manifests, &["--feature-gates=WeightedTargetGroups=false"]);
    let gw = &off["gateways"][0];
    assert_eq!(
        gw["error"],
        crate::model::types::WEIGHTED_TARGET_GROUPS_DISABLED,
        "{gw}"
    );
    assert!(gw.get("stack").is_none_or(|s| s.is_null()), "{gw}");
}
