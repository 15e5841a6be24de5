//! Tests of the Helm chart, the kustomize manifests under config/ and the IAM policy: they render
//! with the real helm and kubectl, validate against the Kubernetes 1.30 schemas with
//! kubernetes-validate, and check what the controller relies on (names, flags, RBAC, CRDs).
//!
//! Tools come from `HELM`, `KUBERNETES_VALIDATE` and `KUBECTL` (else `PATH`); scripts/test.sh
//! installs and exports the first two. A missing tool fails the test with a message saying so.

mod dry_run;
mod iam;
pub mod iam_readonly;
mod image;
mod kustomize;
mod rbac;
mod rbac_flows;
mod render;
mod served;
mod webhooks;

use serde::Deserialize;
use serde_yaml::Value;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::OnceLock;

/// The repository root (the root package's manifest directory).
pub fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

pub fn chart_dir() -> PathBuf {
    repo().join("charts/aws-load-balancer-controller")
}

/// A tool named by `env_var`, else `name` on PATH; panics with install advice when absent.
fn tool(env_var: &str, name: &str, probe: &[&str]) -> PathBuf {
    let candidate = std::env::var_os(env_var)
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(name));
    let found = Command::new(&candidate)
        .args(probe)
        .output()
        .is_ok_and(|o| o.status.success());
    assert!(
        found,
        "{name} is required for the chart tests but `{}` could not be run; run scripts/test.sh \
         (it installs helm and kubernetes-validate) or set {env_var}=/path/to/{name}",
        candidate.display()
    );
    candidate
}

pub fn helm() -> PathBuf {
    static FOUND: OnceLock<PathBuf> = OnceLock::new();
    FOUND
        .get_or_init(|| tool("HELM", "helm", &["version"]))
        .clone()
}

pub fn kubectl() -> PathBuf {
    static FOUND: OnceLock<PathBuf> = OnceLock::new();
    FOUND
        .get_or_init(|| tool("KUBECTL", "kubectl", &["version", "--client"]))
        .clone()
}

pub fn kubernetes_validate() -> PathBuf {
    static FOUND: OnceLock<PathBuf> = OnceLock::new();
    FOUND
        .get_or_init(|| tool("KUBERNETES_VALIDATE", "kubernetes-validate", &["--version"]))
        .clone()
}

/// Runs a command and returns its output; panics only if it cannot be started.
pub fn run(cmd: &mut Command) -> Output {
    cmd.output()
        .unwrap_or_else(|e| panic!("could not run {cmd:?}: {e}"))
}

/// The image the chart tests render (tests/it/testdata/chart-image-values.yaml), the placeholder
/// config/default names too: the chart refuses its default, upstream's image, with the
/// controller-managed webhook certificate.
pub const IMAGE: &str = "registry.example.com/aws-load-balancer-controller-rs";

/// Upstream's published image, the pattern of `albc.upstreamImage` in the chart's _helpers.tpl:
/// ECR Public (`public.ecr.aws/eks/...`) or the EKS regional ECR copies
/// (`<account>.dkr.ecr[-fips].<region>.amazonaws.com[.cn]/amazon/...`), with or without a tag or
/// digest.
pub const UPSTREAM_IMAGE: &str = r"^(public\.ecr\.aws/eks|[0-9]{12}\.dkr\.ecr(-fips)?\.[a-z0-9-]+\.amazonaws\.com(\.cn)?/amazon)/aws-load-balancer-controller([:@].*)?$";

/// Whether an image (a repository, or a reference with its tag or digest) is upstream's.
pub fn is_upstream_image(image: &str) -> bool {
    regex::Regex::new(UPSTREAM_IMAGE)
        .expect("UPSTREAM_IMAGE compiles")
        .is_match(&image.to_lowercase())
}

/// The values file setting [`IMAGE`], which [`helm_template`] passes before a test's arguments.
pub fn image_values() -> String {
    repo()
        .join("tests/it/testdata/chart-image-values.yaml")
        .display()
        .to_string()
}

/// `helm template` of the chart as release `aws-load-balancer-controller` in kube-system, with
/// [`image_values`] first (a test's own `-f` or `--set` overrides it).
/// Returns stdout on success and stderr on failure.
pub fn helm_template(args: &[&str]) -> Result<String, String> {
    helm_template_as("aws-load-balancer-controller", args)
}

/// [`helm_template`] as release `release`.
pub fn helm_template_as(release: &str, args: &[&str]) -> Result<String, String> {
    let mut cmd = Command::new(helm());
    cmd.arg("template")
        .arg(release)
        .arg(chart_dir())
        .args(["--namespace", "kube-system"])
        .arg("-f")
        .arg(image_values())
        .args(args);
    let out = run(&mut cmd);
    if out.status.success() {
        Ok(String::from_utf8(out.stdout).expect("helm prints UTF-8"))
    } else {
        Err(String::from_utf8_lossy(&out.stderr).into_owned())
    }
}

/// Like [`helm_template`] but the render must succeed.
pub fn render(args: &[&str]) -> String {
    helm_template(args).unwrap_or_else(|e| panic!("helm template {args:?} failed:\n{e}"))
}

/// The upstream-style values file that exercises most keys.
pub fn ci_values() -> String {
    chart_dir().join("ci/values.yaml").display().to_string()
}

/// All documents of a YAML stream, with `kind: List` expanded into its items (Helm sends a List's
/// items to the API server one by one, and validators skip the List wrapper).
pub fn docs(yaml: &str) -> Vec<Value> {
    let mut out = Vec::new();
    for de in serde_yaml::Deserializer::from_str(yaml) {
        let doc = Value::deserialize(de).expect("rendered YAML parses");
        if doc.is_null() {
            continue;
        }
        if doc["kind"] == "List" {
            if let Some(items) = doc["items"].as_sequence() {
                out.extend(items.iter().cloned());
            }
        } else {
            out.push(doc);
        }
    }
    out
}

/// The one object of `kind` named `name`; panics listing what exists otherwise.
pub fn find<'a>(docs: &'a [Value], kind: &str, name: &str) -> &'a Value {
    docs.iter()
        .find(|d| d["kind"] == kind && d["metadata"]["name"] == name)
        .unwrap_or_else(|| {
            let have: Vec<String> = docs
                .iter()
                .map(|d| format!("{:?}/{:?}", d["kind"], d["metadata"]["name"]))
                .collect();
            panic!("no {kind} named {name}; rendered: {have:?}")
        })
}

pub fn all_of<'a>(docs: &'a [Value], kind: &str) -> Vec<&'a Value> {
    docs.iter().filter(|d| d["kind"] == kind).collect()
}

/// Strings of a YAML sequence (empty when absent).
pub fn strings(v: &Value) -> Vec<String> {
    v.as_sequence()
        .map(|s| {
            s.iter()
                .filter_map(|x| x.as_str().map(str::to_owned))
                .collect()
        })
        .unwrap_or_default()
}

/// Validates documents against the Kubernetes 1.30 schemas in strict mode (unknown fields are
/// errors). Custom kinds have no schema there; kubernetes-validate only warns about them.
pub fn validate_k8s(docs: &[Value], what: &str) {
    let dir = tempfile::tempdir().expect("temp dir");
    let path: &Path = &dir.path().join("manifests.yaml");
    let mut text = String::new();
    // JSON documents: unambiguous for kubernetes-validate's YAML 1.1 parser, where a re-emitted
    // plain `yes` or `on` would turn into a boolean.
    for d in docs {
        text.push_str("---\n");
        text.push_str(&serde_json::to_string(d).expect("serialise"));
        text.push('\n');
    }
    std::fs::write(path, text).expect("write manifests");
    let out = run(Command::new(kubernetes_validate())
        .args(["--strict", "-k", "1.30.0", "--quiet"])
        .arg(path));
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        out.status.success() && !stdout.contains("ERROR"),
        "{what} does not validate against Kubernetes 1.30:\n{stdout}{stderr}"
    );
}

/// The controller container's args of the rendered Deployment as the kubelet passes them: the
/// `$(POD_IP)` reference expanded (to 10.1.2.3 here).
pub fn container_args(docs: &[Value]) -> Vec<String> {
    let deploys = all_of(docs, "Deployment");
    assert_eq!(deploys.len(), 1, "exactly one Deployment");
    strings(&deploys[0]["spec"]["template"]["spec"]["containers"][0]["args"])
        .into_iter()
        .map(|a| a.replace("$(POD_IP)", "10.1.2.3"))
        .collect()
}
