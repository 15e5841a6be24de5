//! `plan` sees the manifests as the cluster will: LoadBalancer Services as the chart's Service
//! mutator webhook admits them, the chart's IngressClass, and a Service being deleted with its
//! deletion checked (upstream's refusal under deletion protection).

use serde_json::{json, Value};

use crate::model::service::SERVICE_DELETION_PROTECTED;
use crate::plan::{run, PlanArgs, EXIT_FAILED, EXIT_PLANNED};

/// `plan -o=json` over `manifests` (one file) with `flags`: the exit status and the plan.
fn plan(manifests: &str, flags: &[&str]) -> (u8, Value) {
    let dir = tempfile::tempdir().unwrap();
    let f = dir.path().join("app.yaml");
    std::fs::write(&f, manifests).unwrap();
    let mut argv = vec![format!("-f={}", f.display()), "-o=json".to_string()];
    argv.extend(flags.iter().map(|s| s.to_string()));
    let mut out = Vec::new();
    let status = run(PlanArgs::from_flags(argv).unwrap(), &mut out).unwrap();
    (status, serde_json::from_slice(&out).unwrap())
}

/// The `ns/name` of every planned Service.
fn services(v: &Value) -> Vec<&str> {
    v["services"]
        .as_array()
        .map(|s| s.iter().filter_map(|s| s["service"].as_str()).collect())
        .unwrap_or_default()
}

fn noted(v: &Value, text: &str) -> bool {
    v["notes"]
        .as_array()
        .unwrap()
        .iter()
        .any(|n| n.as_str().unwrap().contains(text))
}

const LOAD_BALANCER_SERVICES: &str = r#"
apiVersion: v1
kind: Service
metadata:
  name: in-tree
  namespace: infra
  annotations: {service.beta.kubernetes.io/aws-load-balancer-type: nlb}
spec: {type: LoadBalancer, ports: [{port: 80}]}
---
apiVersion: v1
kind: Service
metadata: {name: empty-class, namespace: infra}
spec: {type: LoadBalancer, loadBalancerClass: "", ports: [{port: 80}]}
---
apiVersion: v1
kind: Service
metadata: {name: existing, namespace: infra, uid: 0b5c1c1e-0000-4000-8000-000000000001}
spec: {type: LoadBalancer, ports: [{port: 80}]}
---
apiVersion: v1
kind: Service
metadata: {name: theirs, namespace: infra}
spec: {type: LoadBalancer, loadBalancerClass: example.com/lb, ports: [{port: 80}]}
---
apiVersion: v1
kind: Service
metadata: {name: internal, namespace: infra}
spec: {type: ClusterIP, ports: [{port: 80}]}
"#;

/// The chart's Service mutator webhook (on by default) gives every LoadBalancer Service created
/// without a class the controller's, whatever its annotations (`aws-load-balancer-type: nlb`
/// included), so the controller builds its NLB; one already created keeps none.
#[test]
fn the_service_mutator_webhook_gives_class_less_load_balancer_services_the_class() {
    let (status, v) = plan(LOAD_BALANCER_SERVICES, &[]);
    assert_eq!(status, EXIT_PLANNED, "{v:#}");
    assert_eq!(
        services(&v),
        ["infra/empty-class", "infra/in-tree"],
        "{v:#}"
    );
    for s in v["services"].as_array().unwrap() {
        assert!(s.get("error").is_none(), "{s}");
        assert_eq!(s["stack"]["loadBalancer"]["type"], "network", "{s}");
    }
    assert!(
        noted(&v, "Service infra/in-tree has no spec.loadBalancerClass: plan gives it service.k8s.aws/nlb"),
        "{v:#}"
    );
    assert!(noted(&v, "Service infra/existing exists"), "{v:#}");

    // The class given is `--load-balancer-class`.
    let (_, v) = plan(
        LOAD_BALANCER_SERVICES,
        &["--load-balancer-class=example.com/lb"],
    );
    assert_eq!(
        services(&v),
        ["infra/empty-class", "infra/in-tree", "infra/theirs"],
        "{v:#}"
    );

    // The chart's `enableServiceMutatorWebhook: false`: planned as written, none is ours.
    let (status, v) = plan(
        LOAD_BALANCER_SERVICES,
        &["--enable-service-mutator-webhook=false"],
    );
    assert_eq!(status, EXIT_PLANNED);
    assert!(services(&v).is_empty(), "{v:#}");
    assert!(!noted(&v, "spec.loadBalancerClass"), "{v:#}");
}

const INGRESS: &str = r#"
apiVersion: v1
kind: Service
metadata: {name: web, namespace: shop}
spec: {type: NodePort, ports: [{port: 80, targetPort: 8080, nodePort: 30080}]}
---
apiVersion: networking.k8s.io/v1
kind: Ingress
metadata: {name: web, namespace: shop}
spec:
  ingressClassName: alb
  rules:
  - http:
      paths:
      - {path: /, pathType: Prefix, backend: {service: {name: web, port: {number: 80}}}}
"#;

/// An Ingress of the chart's IngressClass (`alb`) is planned without that IngressClass in the
/// manifests, as the chart creates it; one of that name in the manifests is used instead.
#[test]
fn an_ingress_of_the_charts_ingress_class_is_planned_without_the_class_in_the_manifests() {
    let (status, v) = plan(INGRESS, &[]);
    assert_eq!(status, EXIT_PLANNED, "{v:#}");
    assert_eq!(v["groups"][0]["group"], "shop/web", "{v:#}");
    assert!(v["groups"][0]["stack"]["loadBalancer"].is_object(), "{v:#}");
    assert!(v.get("ingressesNotInAnyGroup").is_none(), "{v:#}");
    assert!(
        noted(
            &v,
            "IngressClass alb is not in the manifests: plan uses the one the chart creates"
        ),
        "{v:#}"
    );

    // Named after `--ingress-class`, as the chart names it after `ingressClass`.
    let edge = INGRESS.replace("ingressClassName: alb", "ingressClassName: edge");
    let (status, v) = plan(&edge, &["--ingress-class=edge"]);
    assert_eq!(status, EXIT_PLANNED, "{v:#}");
    assert_eq!(v["groups"][0]["group"], "shop/web", "{v:#}");

    // The chart's `createIngressClassResource: false`: the class does not exist.
    let (status, v) = plan(INGRESS, &["--create-ingress-class-resource=false"]);
    assert_eq!(status, EXIT_FAILED, "{v:#}");
    assert_eq!(v["groups"], json!([]), "{v:#}");
    let error = v["ingressesNotInAnyGroup"][0]["error"].as_str().unwrap();
    assert!(
        error.contains(r#"ingressclasses.networking.k8s.io "alb" not found"#),
        "{error}"
    );

    // An IngressClass `alb` of the manifests is the one: here another controller's.
    let theirs = format!(
        "{INGRESS}---
apiVersion: networking.k8s.io/v1
kind: IngressClass
metadata: {{name: alb}}
spec: {{controller: example.com/other}}
"
    );
    let (status, v) = plan(&theirs, &[]);
    assert_eq!(status, EXIT_PLANNED, "{v:#}");
    assert_eq!(v["groups"], json!([]), "not ours: {v:#}");
    assert!(!noted(&v, "IngressClass alb"), "{v:#}");
}

/// A Service of the controller being deleted (`metadata.deletionTimestamp`), or no longer
/// qualifying while it holds the finalizer: its stack is taken apart (an empty stack), unless
/// its annotation turns deletion protection on (upstream's error, exit status 1).
fn service(name: &str, class: &str, deleting: bool, finalizer: bool, protected: bool) -> String {
    let deletion = if deleting {
        "\n  deletionTimestamp: \"2024-01-01T00:00:00Z\""
    } else {
        ""
    };
    let finalizers = if finalizer {
        "\n  finalizers: [service.k8s.aws/resources]"
    } else {
        ""
    };
    format!(
        r#"
apiVersion: v1
kind: Service
metadata:
  name: {name}
  namespace: infra{deletion}{finalizers}
  annotations: {{service.beta.kubernetes.io/aws-load-balancer-attributes: "deletion_protection.enabled={protected}"}}
spec: {{type: LoadBalancer, loadBalancerClass: {class}, ports: [{{port: 80, nodePort: 30081}}]}}
"#
    )
}

#[test]
fn a_service_being_deleted_under_deletion_protection_gets_upstreams_error_and_fails_the_plan() {
    const OURS: &str = "service.k8s.aws/nlb";
    const THEIRS: &str = "example.com/lb";
    let unprotected = [
        service("gone", OURS, true, true, false),
        service("left", THEIRS, false, true, false),
        service("not-ours", THEIRS, true, false, true),
    ];
    let protected = [
        service("protected", OURS, true, true, true),
        // A manifest may leave out the finalizer the controller put on when it deployed.
        service("protected-bare", OURS, true, false, true),
    ];
    let all: Vec<String> = unprotected.iter().chain(&protected).cloned().collect();
    let (status, v) = plan(&all.join("---"), &[]);
    assert_eq!(status, EXIT_FAILED, "{v:#}");
    assert_eq!(
        services(&v),
        [
            "infra/gone",
            "infra/left",
            "infra/protected",
            "infra/protected-bare"
        ],
        "{v:#}"
    );
    let planned = v["services"].as_array().unwrap();
    for (s, name) in planned[2..].iter().zip(["protected", "protected-bare"]) {
        assert_eq!(
            s["error"],
            format!("{SERVICE_DELETION_PROTECTED}: {name}"),
            "{s}"
        );
        assert!(s.get("stack").is_none(), "{s}");
    }
    for s in &planned[..2] {
        assert!(s.get("error").is_none(), "{s}");
        assert_eq!(s["stack"]["members"], json!([]), "{s}");
        assert!(s["stack"].get("loadBalancer").is_none(), "{s}");
    }
    assert!(
        noted(&v, "Service infra/gone is being deleted (metadata.deletionTimestamp): the controller deletes its load balancer"),
        "{v:#}"
    );
    assert!(
        noted(
            &v,
            "Service infra/left no longer qualifies but holds the controller's finalizer"
        ),
        "{v:#}"
    );
    assert!(!noted(&v, "Service infra/protected"), "{v:#}");

    // Without deletion protection the same deletions plan with status 0.
    let (status, v) = plan(&unprotected.join("---"), &[]);
    assert_eq!(status, EXIT_PLANNED, "{v:#}");
}
