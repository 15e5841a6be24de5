//! Fidelity suite: the real `kubectl` (v1.32, /usr/bin/kubectl or $KUBECTL) drives the test
//! API server through the kubeconfig it writes. Fails with a clear message if kubectl is
//! missing.

use kube_test_apiserver::{Options, TestApiServer};
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::Duration;
use tokio::io::{AsyncBufReadExt, BufReader};
use tokio::process::Command;

fn kubectl_path() -> PathBuf {
    let p = std::env::var_os("KUBECTL")
        .map(PathBuf::from)
        .unwrap_or_else(|| "/usr/bin/kubectl".into());
    assert!(p.exists(), "kubectl not found at {} (set KUBECTL=/path/to/kubectl); this fidelity suite needs the real kubectl", p.display());
    p
}

struct Kubectl {
    bin: PathBuf,
    kubeconfig: PathBuf,
    dir: PathBuf,
}

struct Out {
    ok: bool,
    stdout: String,
    stderr: String,
}

impl Kubectl {
    fn cmd(&self, args: &[&str]) -> Command {
        let mut c = Command::new(&self.bin);
        c.arg("--kubeconfig")
            .arg(&self.kubeconfig)
            .args(args)
            .env("HOME", &self.dir)
            .kill_on_drop(true);
        c
    }

    async fn run(&self, args: &[&str]) -> Out {
        let out = tokio::time::timeout(Duration::from_secs(30), self.cmd(args).output())
            .await
            .unwrap_or_else(|_| panic!("kubectl {args:?} timed out"))
            .expect("kubectl runs");
        Out {
            ok: out.status.success(),
            stdout: String::from_utf8_lossy(&out.stdout).into(),
            stderr: String::from_utf8_lossy(&out.stderr).into(),
        }
    }

    async fn ok(&self, args: &[&str]) -> String {
        let o = self.run(args).await;
        assert!(o.ok, "kubectl {args:?} failed: {}{}", o.stdout, o.stderr);
        o.stdout
    }

    async fn json(&self, args: &[&str]) -> Value {
        let mut a = args.to_vec();
        a.extend(["-o", "json"]);
        serde_json::from_str(&self.ok(&a).await).expect("kubectl -o json prints JSON")
    }

    fn file(&self, name: &str, text: &str) -> String {
        let p = self.dir.join(name);
        std::fs::write(&p, text).unwrap();
        p.to_string_lossy().into_owned()
    }
}

async fn setup() -> (TestApiServer, Kubectl, tempfile::TempDir) {
    let bin = kubectl_path();
    let server = TestApiServer::start(Options::default()).await.unwrap();
    let dir = tempfile::tempdir().unwrap();
    let kubeconfig = dir.path().join("kubeconfig");
    server.write_kubeconfig(&kubeconfig).unwrap();
    let k = Kubectl {
        bin,
        kubeconfig,
        dir: dir.path().to_path_buf(),
    };
    (server, k, dir)
}

const POD: &str = "apiVersion: v1\nkind: Pod\nmetadata:\n  name: web\n  labels:\n    app: web\nspec:\n  containers:\n  - name: c\n    image: nginx:1\n  - name: side\n    image: busybox\n";

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn kubectl_create_get_label_annotate_patch() {
    let (server, k, _dir) = setup().await;
    let pod = k.file("pod.yaml", POD);
    assert_eq!(
        k.ok(&["create", "-f", &pod]).await.trim(),
        "pod/web created"
    );
    let again = k.run(&["create", "-f", &pod]).await;
    assert!(
        !again.ok
            && again.stderr.contains("(AlreadyExists)")
            && again.stderr.contains("pods \"web\" already exists"),
        "{}",
        again.stderr
    );
    let got = k.json(&["get", "pod", "web"]).await;
    assert_eq!(got["metadata"]["name"], "web");
    assert_eq!(got["status"]["phase"], "Pending");
    let table = k.ok(&["get", "pods"]).await;
    assert!(
        table.lines().next().unwrap_or("").starts_with("NAME") && table.contains("web"),
        "{table}"
    );
    assert_eq!(k.ok(&["get", "po", "-o", "name"]).await.trim(), "pod/web");

    assert_eq!(
        k.ok(&["label", "pod", "web", "tier=front"]).await.trim(),
        "pod/web labeled"
    );
    assert_eq!(
        k.ok(&["annotate", "pod", "web", "note=hi"]).await.trim(),
        "pod/web annotated"
    );
    assert_eq!(
        k.ok(&[
            "get",
            "pods",
            "-l",
            "tier in (front,back),app=web",
            "-o",
            "name"
        ])
        .await
        .trim(),
        "pod/web"
    );
    assert_eq!(
        k.ok(&["get", "pods", "-l", "tier!=front", "-o", "name"])
            .await
            .trim(),
        ""
    );
    k.ok(&[
        "patch",
        "pod",
        "web",
        "--type=merge",
        "-p",
        r#"{"metadata":{"labels":{"m":"1"}}}"#,
    ])
    .await;
    k.ok(&[
        "patch",
        "pod",
        "web",
        "--type=json",
        "-p",
        r#"[{"op":"add","path":"/metadata/labels/j","value":"2"}]"#,
    ])
    .await;
    k.ok(&[
        "patch",
        "pod",
        "web",
        "--type=strategic",
        "-p",
        r#"{"spec":{"containers":[{"name":"c","image":"nginx:2"}]}}"#,
    ])
    .await;
    k.ok(&[
        "patch",
        "pod",
        "web",
        "--subresource=status",
        "--type=strategic",
        "-p",
        r#"{"status":{"conditions":[{"type":"Ready","status":"True"}]}}"#,
    ])
    .await;
    let p = k.json(&["get", "pod", "web"]).await;
    assert_eq!(p["metadata"]["labels"]["tier"], "front");
    assert_eq!(p["metadata"]["labels"]["m"], "1");
    assert_eq!(p["metadata"]["labels"]["j"], "2");
    assert_eq!(p["metadata"]["annotations"]["note"], "hi");
    let containers = p["spec"]["containers"].as_array().unwrap();
    assert_eq!(
        containers.len(),
        2,
        "strategic merge keeps the other container"
    );
    assert_eq!(containers[0]["image"], "nginx:2");
    assert_eq!(p["status"]["conditions"][0]["type"], "Ready");
    assert_eq!(
        p["metadata"]["generation"], 2,
        "only the spec change bumped the generation"
    );
    let missing = k.run(&["get", "pod", "nope"]).await;
    assert!(
        !missing.ok
            && missing
                .stderr
                .contains("Error from server (NotFound): pods \"nope\" not found"),
        "{}",
        missing.stderr
    );
    server.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn kubectl_delete_waits_for_finalizers() {
    let (server, k, _dir) = setup().await;
    let cm = k.file("cm.yaml", "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: held\n  finalizers:\n  - example.com/hold\ndata:\n  a: b\n");
    k.ok(&["create", "-f", &cm]).await;
    let del = k.ok(&["delete", "configmap", "held", "--wait=false"]).await;
    assert_eq!(del.trim(), "configmap \"held\" deleted");
    let held = k.json(&["get", "configmap", "held"]).await;
    assert!(held["metadata"]["deletionTimestamp"].is_string(), "{held}");
    k.ok(&[
        "patch",
        "configmap",
        "held",
        "--type=json",
        "-p",
        r#"[{"op":"remove","path":"/metadata/finalizers"}]"#,
    ])
    .await;
    let gone = k.run(&["get", "configmap", "held"]).await;
    assert!(
        !gone.ok && gone.stderr.contains("(NotFound)"),
        "{}",
        gone.stderr
    );
    server.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn kubectl_watch_sees_changes() {
    let (server, k, _dir) = setup().await;
    let cm = |n: &str| {
        format!("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {n}\ndata:\n  a: \"1\"\n")
    };
    let first = k.file("first.yaml", &cm("first"));
    let second = k.file("second.yaml", &cm("second"));
    k.ok(&["create", "-f", &first]).await;
    let mut child = k
        .cmd(&[
            "get",
            "configmaps",
            "-w",
            "--output-watch-events",
            "-o",
            "jsonpath={.type} {.object.metadata.name}{\"\\n\"}",
        ])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
    let mut next = async || {
        let l = tokio::time::timeout(Duration::from_secs(10), lines.next_line()).await;
        l.expect("a watch line within 10 s")
            .unwrap()
            .unwrap_or_default()
    };
    assert_eq!(next().await, "ADDED first");
    k.ok(&["create", "-f", &second]).await;
    assert_eq!(next().await, "ADDED second");
    k.ok(&["label", "configmap", "first", "x=y"]).await;
    assert_eq!(next().await, "MODIFIED first");
    k.ok(&["delete", "configmap", "second"]).await;
    assert_eq!(next().await, "DELETED second");
    child.kill().await.unwrap();
    server.stop().await;
}

/// kubectl's typed imperative commands send protobuf bodies (`k8s\0` + runtime.Unknown).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn kubectl_typed_create_commands_send_protobuf_and_are_understood() {
    let (server, k, _dir) = setup().await;
    assert_eq!(
        k.ok(&["create", "namespace", "team"]).await.trim(),
        "namespace/team created"
    );
    let ns = k.json(&["get", "namespace", "team"]).await;
    assert_eq!(ns["metadata"]["name"], "team");
    assert_eq!(ns["kind"], "Namespace");

    assert_eq!(
        k.ok(&[
            "create",
            "configmap",
            "cfg",
            "-n",
            "team",
            "--from-literal=a=1",
            "--from-literal=b=two"
        ])
        .await
        .trim(),
        "configmap/cfg created"
    );
    let cm = k.json(&["get", "configmap", "cfg", "-n", "team"]).await;
    assert_eq!(cm["data"], serde_json::json!({"a": "1", "b": "two"}));
    assert_eq!(cm["metadata"]["namespace"], "team");

    assert_eq!(
        k.ok(&[
            "create",
            "secret",
            "generic",
            "creds",
            "-n",
            "team",
            "--from-literal=password=s3cr3t"
        ])
        .await
        .trim(),
        "secret/creds created"
    );
    let secret = k.json(&["get", "secret", "creds", "-n", "team"]).await;
    assert_eq!(secret["data"]["password"], "czNjcjN0");
    assert_eq!(secret["type"], "Opaque");

    let again = k.run(&["create", "configmap", "cfg", "-n", "team"]).await;
    assert!(
        !again.ok && again.stderr.contains("configmaps \"cfg\" already exists"),
        "{}",
        again.stderr
    );
    let dry = k
        .run(&[
            "create",
            "configmap",
            "dry",
            "-n",
            "team",
            "--dry-run=server",
            "-o",
            "name",
        ])
        .await;
    assert!(dry.ok, "{}", dry.stderr);
    assert!(!k.run(&["get", "configmap", "dry", "-n", "team"]).await.ok);
    server.stop().await;
}

const CRD: &str = r#"apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: targetgroupbindings.elbv2.k8s.aws
spec:
  group: elbv2.k8s.aws
  names:
    kind: TargetGroupBinding
    listKind: TargetGroupBindingList
    plural: targetgroupbindings
    singular: targetgroupbinding
    shortNames: [tgb]
  scope: Namespaced
  versions:
  - name: v1beta1
    served: true
    storage: true
    subresources:
      status: {}
    schema:
      openAPIV3Schema:
        type: object
        x-kubernetes-preserve-unknown-fields: true
"#;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn kubectl_crd_then_custom_object() {
    let (server, k, _dir) = setup().await;
    let crd = k.file("crd.yaml", CRD);
    assert_eq!(
        k.ok(&["create", "-f", &crd]).await.trim(),
        "customresourcedefinition.apiextensions.k8s.io/targetgroupbindings.elbv2.k8s.aws created"
    );
    let tgb = k.file("tgb.yaml", "apiVersion: elbv2.k8s.aws/v1beta1\nkind: TargetGroupBinding\nmetadata:\n  name: tgb1\nspec:\n  targetGroupARN: arn:aws:elasticloadbalancing:us-west-2:1:targetgroup/a/b\n  targetType: ip\n");
    assert_eq!(
        k.ok(&["create", "-f", &tgb]).await.trim(),
        "targetgroupbinding.elbv2.k8s.aws/tgb1 created"
    );
    let got = k.json(&["get", "tgb", "tgb1"]).await;
    assert_eq!(got["spec"]["targetType"], "ip");
    assert_eq!(got["kind"], "TargetGroupBinding");
    k.ok(&[
        "patch",
        "targetgroupbinding",
        "tgb1",
        "--type=merge",
        "-p",
        r#"{"spec":{"targetType":"instance"}}"#,
    ])
    .await;
    assert_eq!(
        k.json(&["get", "targetgroupbindings.elbv2.k8s.aws", "tgb1"])
            .await["metadata"]["generation"],
        2
    );
    let strategic = k
        .run(&[
            "patch",
            "tgb",
            "tgb1",
            "-p",
            r#"{"spec":{"targetType":"ip"}}"#,
        ])
        .await;
    assert!(
        !strategic.ok && strategic.stderr.contains("application/strategic-merge-patch+json is not supported by elbv2.k8s.aws/v1beta1, Kind=TargetGroupBinding"),
        "{}",
        strategic.stderr
    );
    let list = k.json(&["get", "targetgroupbindings", "-A"]).await;
    assert_eq!(list["items"].as_array().unwrap().len(), 1);
    server.stop().await;
}

#[test]
fn kubeconfig_points_at_the_server() {
    let text = kube_test_apiserver::kubeconfig("http://127.0.0.1:1234");
    let v: serde_yaml::Value = serde_yaml::from_str(&text).unwrap();
    assert_eq!(
        v["clusters"][0]["cluster"]["server"].as_str(),
        Some("http://127.0.0.1:1234")
    );
    assert_eq!(v["current-context"].as_str(), Some("kube-test-apiserver"));
    let _ = Path::new("/");
}
