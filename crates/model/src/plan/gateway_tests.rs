//! `plan` reads Gateway API manifests and plans the Gateways of this controller's classes.

use super::super::{run, PlanArgs};

fn plan(manifests: &str) -> serde_json::Value {
    let dir = tempfile::tempdir().unwrap();
    let f = dir.path().join("gw.yaml");
    std::fs::write(&f, manifests).unwrap();
    let args = PlanArgs::from_flags(["-f".into(), f.into_os_string(), "-o=json".into()]).unwrap();
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
