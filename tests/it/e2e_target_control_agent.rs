//! End to end: the real controller with `--feature-gates=ALBTargetControlAgent=true` against the
//! API test server, whose admission chain calls the two ALB target control agent webhooks as the
//! chart registers them. Pods created with kubectl in a namespace labelled for injection (or
//! labelled themselves) come back with the agent sidecar and the injected mark, and nothing
//! else of them changes: the same pod created where no webhook applies is the injected one minus
//! the agent and the mark. Every request the controller makes is one the chart's RBAC allows.

use crate::chart::{docs, find, render};
use crate::e2e_pod_gates::kubectl;
use crate::support::client::get_plain;
use crate::support::process::Controller;
use crate::support::rbac::grants_for;
use crate::support::{test_bundle, write_pair_atomic};
use base64::Engine;
use k8s_openapi::api::admissionregistration::v1::MutatingWebhookConfiguration;
use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
use kube::api::{Api, PostParams};
use kube_test_apiserver::{Options, RequestRecord, TestApiServer};
use serde_json::{json, Value};
use std::collections::BTreeSet;
use std::time::{Duration, Instant};

const SVC: &str = "aws-load-balancer-webhook-service";
const AGENT: &str = "alb-target-control-agent";
const INJECTED: &str = "elbv2.k8s.aws/alb-target-control-agent-injected";

/// Namespaces and the agent's configurations, in place before the controller starts.
const SETUP: &str = r#"
apiVersion: v1
kind: Namespace
metadata:
  name: agents
  labels:
    elbv2.k8s.aws/alb-target-control-agent-injection: enabled
---
apiVersion: v1
kind: Namespace
metadata:
  name: plain
---
apiVersion: elbv2.k8s.aws/v1beta1
kind: ALBTargetControlConfig
metadata:
  name: aws-load-balancer-controller-alb-target-control-agent-config
  namespace: agents
spec:
  image: agents.example/agent:1
  dataAddress: 0.0.0.0:80
  controlAddress: 0.0.0.0:3000
  destinationAddress: 127.0.0.1:8080
  maxConcurrency: 10
  rustLog: info
  resources:
    requests: {cpu: 100m, memory: 128Mi}
---
apiVersion: elbv2.k8s.aws/v1beta1
kind: ALBTargetControlConfig
metadata:
  name: aws-load-balancer-controller-alb-target-control-agent-config
  namespace: kube-system
spec:
  image: fallback.example/agent:1
  dataAddress: 0.0.0.0:81
  controlAddress: 0.0.0.0:3001
  destinationAddress: 127.0.0.1:9090
  maxConcurrency: 1
---
apiVersion: elbv2.k8s.aws/v1beta1
kind: ALBTargetControlConfig
metadata:
  name: some-other-name
  namespace: plain
spec:
  image: never.example/agent:1
  dataAddress: 0.0.0.0:82
  controlAddress: 0.0.0.0:3002
  destinationAddress: 127.0.0.1:7070
"#;

/// A pod with something in every part the agent's patch touches, and fields no schema knows.
fn pod(name: &str, labels: &str, annotations: &str) -> String {
    format!(
        r#"apiVersion: v1
kind: Pod
metadata:
  name: {name}
  labels: {{app: web{labels}}}
  annotations: {{keep: me{annotations}}}
spec:
  initContainers:
  - {{name: init, image: busybox}}
  containers:
  - name: app
    image: nginx
    ports: [{{containerPort: 8080}}]
    env: [{{name: A, value: "1"}}]
    futureField: {{kept: true}}
  volumes:
  - {{name: data, emptyDir: {{}}}}
"#
    )
}

/// What the API server sets per object, not per request body.
fn without_server_fields(mut pod: Value) -> Value {
    let meta = pod["metadata"].as_object_mut().unwrap();
    for f in [
        "namespace",
        "uid",
        "creationTimestamp",
        "resourceVersion",
        "generation",
        "managedFields",
        "selfLink",
    ] {
        meta.remove(f);
    }
    pod
}

/// The agent container (last, by the patch's append) taken out with the injected mark; panics
/// if the pod has no agent.
fn split_agent(mut pod: Value) -> (Value, Value) {
    let list = pod["spec"]["containers"].as_array_mut().unwrap();
    let agent = list.pop().unwrap();
    assert_eq!(agent["name"], AGENT, "the agent is appended last: {pod:#}");
    let marks = pod["metadata"]["annotations"].as_object_mut().unwrap();
    assert_eq!(marks.remove(INJECTED), Some(json!("true")));
    (pod, agent)
}

fn env(agent: &Value) -> Vec<(String, String)> {
    agent["env"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| {
            (
                e["name"].as_str().unwrap().to_string(),
                e["value"].as_str().unwrap_or("").to_string(),
            )
        })
        .collect()
}

fn ports(agent: &Value) -> Vec<(String, i64)> {
    agent["ports"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| {
            (
                p["name"].as_str().unwrap().to_string(),
                p["containerPort"].as_i64().unwrap(),
            )
        })
        .collect()
}

fn has_agent(pod: &Value) -> bool {
    pod["spec"]["containers"]
        .as_array()
        .is_some_and(|c| c.iter().any(|c| c["name"] == AGENT))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn pods_get_the_agent_through_the_charts_webhooks_and_nothing_else_changes() {
    let server = TestApiServer::start(Options::default()).await.unwrap();
    let admin = server.client();
    let dir = tempfile::tempdir().unwrap();
    // The controller is `test`; kubectl another user, so the request log tells them apart.
    let kubeconfig = dir.path().join("kubeconfig");
    server.write_kubeconfig(&kubeconfig).unwrap();
    let kubectl_config = dir.path().join("kubectl-config");
    server
        .write_kubeconfig_as(&kubectl_config, "e2e-admin")
        .unwrap();

    let crds: Api<CustomResourceDefinition> = Api::all(admin.clone());
    for crd in aws_load_balancer_controller::crd::all_crds() {
        crds.create(&PostParams::default(), &crd).await.unwrap();
    }
    let (ok, out) = kubectl(&kubectl_config, &["create", "-f", "-"], Some(SETUP));
    assert!(ok, "{out}");

    // The chart with the gate on: its two pod webhooks, with our test CA, and its RBAC.
    let objects = docs(&render(&[
        "--set",
        "clusterName=e2e",
        "--set",
        "controllerConfig.featureGates.ALBTargetControlAgent=true",
    ]));
    let grants = grants_for(&objects, "kube-system", "aws-load-balancer-controller");
    let bundle = test_bundle(None);
    let ca_bundle = base64::engine::general_purpose::STANDARD.encode(&bundle.ca.cert_pem);
    let mut mwc = serde_json::to_value(find(
        &objects,
        "MutatingWebhookConfiguration",
        "aws-load-balancer-webhook",
    ))
    .unwrap();
    let hooks: Vec<Value> = mwc["webhooks"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|h| {
            h["name"]
                .as_str()
                .is_some_and(|n| n.starts_with("alb-target-control."))
        })
        .cloned()
        .map(|mut h| {
            h["clientConfig"]["caBundle"] = json!(ca_bundle);
            h
        })
        .collect();
    assert_eq!(hooks.len(), 2, "both webhooks rendered with the gate on");
    mwc["webhooks"] = Value::Array(hooks);
    mwc["metadata"] = json!({"name": "aws-load-balancer-webhook"});
    let mwc: MutatingWebhookConfiguration = serde_json::from_value(mwc).unwrap();
    Api::all(admin.clone())
        .create(&PostParams::default(), &mwc)
        .await
        .unwrap();

    // The binary starts with the gate on, and is ready once the namespaces and configurations
    // are listed.
    write_pair_atomic(dir.path(), &bundle);
    let ctl = Controller::start(&[
        "--cluster-name=e2e".into(),
        format!("--webhook-cert-dir={}", dir.path().display()),
        format!("--kubeconfig={}", kubeconfig.display()),
        "--feature-gates=ALBTargetControlAgent=true".into(),
    ]);
    server.set_service_endpoint("kube-system", SVC, ctl.addr_of("webhook server listening"));
    let probes = ctl.addr_of("health probe server listening");
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        let r = get_plain(probes, "/readyz").await.unwrap();
        if r.status == 200 {
            break;
        }
        assert!(
            Instant::now() < deadline,
            "never ready: {}",
            String::from_utf8_lossy(&r.body)
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }

    let create = |ns: &str, manifest: &str| -> (bool, String) {
        kubectl(
            &kubectl_config,
            &["create", "-n", ns, "-f", "-", "-o", "json"],
            Some(manifest),
        )
    };
    let created = |ns: &str, manifest: &str| -> Value {
        let (ok, out) = create(ns, manifest);
        assert!(ok, "{out}");
        serde_json::from_str(&out).unwrap()
    };

    // 1. The labelled namespace: the agent from its own configuration; the same pod where no
    //    webhook applies is the injected one minus the agent and the mark.
    let injected = created("agents", &pod("web", "", ""));
    let baseline = created("plain", &pod("web", "", ""));
    assert!(!has_agent(&baseline), "{baseline:#}");
    let (rest, agent) = split_agent(injected);
    assert_eq!(
        without_server_fields(rest),
        without_server_fields(baseline),
        "only the agent and the mark were added"
    );
    assert_eq!(agent["image"], "agents.example/agent:1");
    assert_eq!(
        env(&agent),
        [
            ("TARGET_CONTROL_DATA_ADDRESS", "0.0.0.0:80"),
            ("TARGET_CONTROL_CONTROL_ADDRESS", "0.0.0.0:3000"),
            ("TARGET_CONTROL_DESTINATION_ADDRESS", "127.0.0.1:8080"),
            ("TARGET_CONTROL_MAX_CONCURRENCY", "10"),
            ("RUST_LOG", "info"),
        ]
        .map(|(k, v)| (k.to_string(), v.to_string()))
    );
    assert_eq!(
        ports(&agent),
        [("data".to_string(), 80), ("control".to_string(), 3000)]
    );
    assert_eq!(
        agent["resources"]["requests"],
        json!({"cpu": "100m", "memory": "128Mi"})
    );

    // 2. A pod labelled for injection elsewhere: the object webhook, kube-system's
    //    configuration (the other namespace's object of another name is not read).
    let labelled = created(
        "plain",
        &pod(
            "web-labelled",
            ", elbv2.k8s.aws/alb-target-control-agent-inject: \"true\"",
            "",
        ),
    );
    let (_, agent) = split_agent(labelled);
    assert_eq!(agent["image"], "fallback.example/agent:1");
    assert_eq!(
        ports(&agent),
        [("data".to_string(), 81), ("control".to_string(), 3001)]
    );

    // 3. A pod that refuses the agent in the labelled namespace is left alone.
    let refused = created(
        "agents",
        &pod(
            "web-refused",
            ", elbv2.k8s.aws/alb-target-control-agent-inject: \"false\"",
            "",
        ),
    );
    assert!(!has_agent(&refused), "{refused:#}");
    assert!(refused["metadata"]["annotations"].get(INJECTED).is_none());

    // 4. An override upstream refuses: the pod is refused with upstream's message.
    let (ok, out) = create(
        "agents",
        &pod(
            "web-bad",
            "",
            ", elbv2.k8s.aws/alb-target-control-agent-max-concurrency: \"2000\"",
        ),
    );
    assert!(!ok, "{out}");
    assert!(
        out.contains(
            r#"admission webhook "alb-target-control.namespace.elbv2.k8s.aws" denied the request: invalid concurrency value: 2000 (must be 0-1000)"#
        ),
        "{out}"
    );

    // 5. A configuration created now reaches the injector through its watch.
    let (ok, out) = kubectl(
        &kubectl_config,
        &["create", "-f", "-"],
        Some(
            r#"
apiVersion: v1
kind: Namespace
metadata:
  name: late
  labels:
    elbv2.k8s.aws/alb-target-control-agent-injection: enabled
---
apiVersion: elbv2.k8s.aws/v1beta1
kind: ALBTargetControlConfig
metadata:
  name: aws-load-balancer-controller-alb-target-control-agent-config
  namespace: late
spec:
  image: late.example/agent:1
  dataAddress: 0.0.0.0:80
  controlAddress: 0.0.0.0:3000
  destinationAddress: 127.0.0.1:8080
  maxConcurrency: 1
"#,
        ),
    );
    assert!(ok, "{out}");
    let deadline = Instant::now() + Duration::from_secs(10);
    let mut attempt = 0;
    // Until the namespace and the configuration arrive, pods there get no agent, or
    // kube-system's.
    let image = loop {
        attempt += 1;
        let p = created("late", &pod(&format!("late-{attempt}"), "", ""));
        let image = p["spec"]["containers"]
            .as_array()
            .and_then(|c| c.iter().find(|c| c["name"] == AGENT))
            .map(|c| c["image"].clone());
        if image == Some(json!("late.example/agent:1")) || Instant::now() > deadline {
            break image;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    };
    assert_eq!(image, Some(json!("late.example/agent:1")));

    drop(ctl);
    let records: Vec<RequestRecord> = server
        .requests()
        .into_iter()
        .filter(|r| r.user.as_deref() == Some("test"))
        .collect();
    server.stop().await;

    // The controller watched the configurations (by the one name) and the namespaces, and the
    // chart's RBAC allows every request it made.
    let watched = |resource: &str| {
        records
            .iter()
            .any(|r| r.verb == "watch" && r.resource == resource)
    };
    assert!(watched("albtargetcontrolconfigs"), "{records:#?}");
    assert!(watched("namespaces"), "{records:#?}");
    let denied: BTreeSet<String> = records
        .iter()
        .filter(|r| !grants.allows(r))
        .map(RequestRecord::describe)
        .collect();
    assert!(
        denied.is_empty(),
        "requests the chart's RBAC would forbid:\n  {}",
        denied.into_iter().collect::<Vec<_>>().join("\n  ")
    );
}
