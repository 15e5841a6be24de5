//! End to end: the real controller process against the in-memory API server, whose admission
//! chain calls our pod mutator over HTTPS; pods created with kubectl come back with their gates.

use crate::support::client::get_plain;
use crate::support::process::Controller;
use crate::support::{test_bundle, write_pair_atomic};
use base64::Engine;
use kube::api::{Api, PostParams};
use kube_test_apiserver::{Options, TestApiServer};
use serde_json::{json, Value};
use std::time::{Duration, Instant};

const SVC: &str = "aws-load-balancer-webhook-service";

pub(crate) async fn create<K>(api: &Api<K>, obj: Value) -> K
where
    K: kube::Resource + Clone + serde::de::DeserializeOwned + serde::Serialize + std::fmt::Debug,
{
    api.create(
        &PostParams::default(),
        &serde_json::from_value(obj).unwrap(),
    )
    .await
    .unwrap()
}

pub(crate) fn kubectl(
    kubeconfig: &std::path::Path,
    args: &[&str],
    stdin: Option<&str>,
) -> (bool, String) {
    use std::io::Write;
    let mut cmd =
        std::process::Command::new(std::env::var("KUBECTL").unwrap_or_else(|_| "kubectl".into()));
    cmd.arg(format!("--kubeconfig={}", kubeconfig.display()))
        .args(args);
    cmd.stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped());
    let mut child = cmd
        .spawn()
        .expect("kubectl is needed for this test (it ships on our machines)");
    if let Some(input) = stdin {
        child
            .stdin
            .take()
            .unwrap()
            .write_all(input.as_bytes())
            .unwrap();
    }
    let out = child.wait_with_output().unwrap();
    let text =
        String::from_utf8_lossy(&out.stdout).to_string() + &String::from_utf8_lossy(&out.stderr);
    (out.status.success(), text)
}

pub(crate) fn gates(pod: &Value) -> Vec<String> {
    pod.pointer("/spec/readinessGates")
        .and_then(Value::as_array)
        .map(|a| {
            a.iter()
                .filter_map(|g| g["conditionType"].as_str().map(String::from))
                .collect()
        })
        .unwrap_or_default()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn pods_created_with_kubectl_get_readiness_gates_through_the_admission_chain() {
    let server = TestApiServer::start(Options::default()).await.unwrap();
    let client = server.client();
    let dir = tempfile::tempdir().unwrap();
    let kubeconfig = dir.path().join("kubeconfig");
    server.write_kubeconfig(&kubeconfig).unwrap();

    let crds: Api<k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition> =
        Api::all(client.clone());
    for crd in aws_load_balancer_controller::crd::all_crds() {
        crds.create(&PostParams::default(), &crd).await.unwrap();
    }

    let bundle = test_bundle(None);
    write_pair_atomic(dir.path(), &bundle);
    let ctl = Controller::start(&[
        "--cluster-name=e2e".into(),
        format!("--webhook-cert-dir={}", dir.path().display()),
        format!("--kubeconfig={}", kubeconfig.display()),
    ]);
    let webhook_addr = ctl.addr_of("webhook server listening");
    server.set_service_endpoint("kube-system", SVC, webhook_addr);

    // Ready means: webhook serving, API reached, binding and Service caches synced.
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

    // Upstream's pod mutator registration (see config/webhook), pointing at our Service.
    let ca_bundle = base64::engine::general_purpose::STANDARD.encode(&bundle.ca.cert_pem);
    let mwc: Api<k8s_openapi::api::admissionregistration::v1::MutatingWebhookConfiguration> =
        Api::all(client.clone());
    create(&mwc, json!({
        "apiVersion": "admissionregistration.k8s.io/v1", "kind": "MutatingWebhookConfiguration",
        "metadata": {"name": "aws-load-balancer-webhook"},
        "webhooks": [{
            "name": "mpod.elbv2.k8s.aws", "admissionReviewVersions": ["v1"], "sideEffects": "None",
            "failurePolicy": "Ignore",
            "clientConfig": {"caBundle": ca_bundle, "service": {"name": SVC, "namespace": "kube-system", "path": "/mutate-v1-pod"}},
            "namespaceSelector": {"matchExpressions": [{"key": "elbv2.k8s.aws/pod-readiness-gate-inject", "operator": "In", "values": ["enabled"]}]},
            "objectSelector": {"matchExpressions": [{"key": "app.kubernetes.io/name", "operator": "NotIn", "values": ["aws-load-balancer-controller"]}]},
            "rules": [{"apiGroups": [""], "apiVersions": ["v1"], "operations": ["CREATE"], "resources": ["pods"], "scope": "Namespaced"}]
        }]
    })).await;

    let manifests = r#"
apiVersion: v1
kind: Namespace
metadata:
  name: shop
  labels:
    elbv2.k8s.aws/pod-readiness-gate-inject: enabled
---
apiVersion: v1
kind: Namespace
metadata:
  name: plain
---
apiVersion: v1
kind: Service
metadata: {name: web, namespace: shop}
spec:
  selector: {app: web}
  ports: [{port: 80, targetPort: 8080}]
---
apiVersion: v1
kind: Service
metadata: {name: web, namespace: plain}
spec:
  selector: {app: web}
  ports: [{port: 80, targetPort: 8080}]
---
apiVersion: elbv2.k8s.aws/v1beta1
kind: TargetGroupBinding
metadata: {name: web-tgb, namespace: shop}
spec:
  serviceRef: {name: web, port: 80}
  targetGroupARN: arn:aws:elasticloadbalancing:us-west-2:123456789012:targetgroup/web/0123456789abcdef
  targetType: ip
---
apiVersion: elbv2.k8s.aws/v1beta1
kind: TargetGroupBinding
metadata: {name: web-tgb, namespace: plain}
spec:
  serviceRef: {name: web, port: 80}
  targetGroupARN: arn:aws:elasticloadbalancing:us-west-2:123456789012:targetgroup/web2/0123456789abcdef
  targetType: ip
"#;
    let (ok, out) = kubectl(&kubeconfig, &["create", "-f", "-"], Some(manifests));
    assert!(ok, "{out}");

    // The binding reaches the controller's index through its watch; retry pod names until then.
    let pod = |name: &str| {
        format!(
            "apiVersion: v1\nkind: Pod\nmetadata:\n  name: {name}\n  labels: {{app: web}}\nspec:\n  containers:\n  - name: c\n    image: nginx\n    futureField: {{kept: true}}\n"
        )
    };
    let deadline = Instant::now() + Duration::from_secs(10);
    let mut attempt = 0;
    let stored = loop {
        attempt += 1;
        let name = format!("web-{attempt}");
        let (ok, out) = kubectl(
            &kubeconfig,
            &["create", "-n", "shop", "-f", "-", "-o", "json"],
            Some(&pod(&name)),
        );
        assert!(ok, "{out}");
        let stored: Value = serde_json::from_str(&out).unwrap();
        if !gates(&stored).is_empty() || Instant::now() > deadline {
            break stored;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    };
    assert_eq!(
        gates(&stored),
        vec!["target-health.elbv2.k8s.aws/web-tgb"],
        "{stored:#}"
    );
    assert_eq!(
        stored.pointer("/spec/containers/0/futureField/kept"),
        Some(&json!(true)),
        "unknown fields survive"
    );

    // The stored object (read back) carries the gate too.
    let name = stored.pointer("/metadata/name").unwrap().as_str().unwrap();
    let (ok, out) = kubectl(
        &kubeconfig,
        &["get", "pod", "-n", "shop", name, "-o", "json"],
        None,
    );
    assert!(ok, "{out}");
    assert_eq!(
        gates(&serde_json::from_str(&out).unwrap()),
        vec!["target-health.elbv2.k8s.aws/web-tgb"]
    );

    // A namespace without the label is never sent to the webhook.
    let (ok, out) = kubectl(
        &kubeconfig,
        &["create", "-n", "plain", "-f", "-", "-o", "json"],
        Some(&pod("web-plain")),
    );
    assert!(ok, "{out}");
    assert!(gates(&serde_json::from_str(&out).unwrap()).is_empty());

    // A pod the selector does not match gets no gate.
    let other = "apiVersion: v1\nkind: Pod\nmetadata:\n  name: db\n  labels: {app: db}\nspec:\n  containers: [{name: c, image: pg}]\n";
    let (ok, out) = kubectl(
        &kubeconfig,
        &["create", "-n", "shop", "-f", "-", "-o", "json"],
        Some(other),
    );
    assert!(ok, "{out}");
    assert!(gates(&serde_json::from_str(&out).unwrap()).is_empty());

    // The validating webhooks answer through the same admission chain.
    let vwc: Api<k8s_openapi::api::admissionregistration::v1::ValidatingWebhookConfiguration> =
        Api::all(client.clone());
    let hook = |name: &str, path: &str, group: &str, resource: &str| {
        json!({"name": name, "admissionReviewVersions": ["v1"], "sideEffects": "None", "failurePolicy": "Fail",
            "clientConfig": {"caBundle": ca_bundle, "service": {"name": SVC, "namespace": "kube-system", "path": path}},
            "rules": [{"apiGroups": [group], "apiVersions": ["v1", "v1beta1"], "operations": ["CREATE", "UPDATE"], "resources": [resource]}]})
    };
    create(&vwc, json!({
        "apiVersion": "admissionregistration.k8s.io/v1", "kind": "ValidatingWebhookConfiguration",
        "metadata": {"name": "aws-load-balancer-webhook"},
        "webhooks": [
            hook("vingress.elbv2.k8s.aws", "/validate-networking-v1-ingress", "networking.k8s.io", "ingresses"),
            hook("vingressclassparams.elbv2.k8s.aws", "/validate-elbv2-k8s-aws-v1beta1-ingressclassparams", "elbv2.k8s.aws", "ingressclassparams"),
        ]
    })).await;
    let ingress = "apiVersion: networking.k8s.io/v1\nkind: Ingress\nmetadata: {name: web, namespace: shop}\nspec:\n  ingressClassName: missing\n  defaultBackend: {service: {name: web, port: {number: 80}}}\n";
    let (ok, out) = kubectl(&kubeconfig, &["create", "-f", "-"], Some(ingress));
    assert!(!ok, "an Ingress naming a missing class must be refused");
    assert!(
        out.contains(
            r#"invalid ingress class: ingressclasses.networking.k8s.io "missing" not found"#
        ),
        "{out}"
    );
    let icp = "apiVersion: elbv2.k8s.aws/v1beta1\nkind: IngressClassParams\nmetadata: {name: bad}\nspec:\n  inboundCIDRs: [192.168.0.1]\n";
    let (ok, out) = kubectl(&kubeconfig, &["create", "-f", "-"], Some(icp));
    assert!(!ok, "a bad CIDR must be refused");
    assert!(
        out.contains(r#"spec.inboundCIDRs[0]: Invalid value: "192.168.0.1""#),
        "{out}"
    );

    drop(ctl);
    server.stop().await;
}
