//! `plan` as a CI gate runs it, through the real binary: exit status 1 when an object fails its
//! model build (every other object still planned), plain YAML any loader reads, and a reader
//! that stops after the first line (`plan | head -1`) ends it quietly.

use std::io::{BufRead, BufReader};
use std::process::{Command, Output, Stdio};

use crate::support::process::BIN;

/// `aws-load-balancer-controller plan <args>`, run to its end.
fn plan(args: &[&str]) -> Output {
    Command::new(BIN)
        .arg("plan")
        .args(args)
        .env_remove("RUST_LOG")
        .output()
        .expect("run plan")
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

const SERVICE: &str = r#"
apiVersion: v1
kind: Service
metadata: {name: web, namespace: shop}
spec: {type: NodePort, ports: [{port: 80, targetPort: 8080, nodePort: 30080}]}
"#;

/// An Ingress of its own group named NAME, with the annotation line ANNOTATION.
const INGRESS: &str = r#"
apiVersion: networking.k8s.io/v1
kind: Ingress
metadata:
  name: NAME
  namespace: shop
  annotations:
    kubernetes.io/ingress.class: alb
    ANNOTATION
spec:
  rules:
  - http:
      paths:
      - {path: /, pathType: Prefix, backend: {service: {name: web, port: {number: 80}}}}
"#;

const INTERNAL: &str = "alb.ingress.kubernetes.io/scheme: internal";
/// Not a number: an error of the Ingress's own configuration, so its group fails its build.
const BAD_INTERVAL: &str = "alb.ingress.kubernetes.io/healthcheck-interval-seconds: often";

fn ingress(name: &str, annotation: &str) -> String {
    INGRESS
        .replace("NAME", name)
        .replace("ANNOTATION", annotation)
}

/// A manifest file in `dir` of the Service and these Ingresses.
fn manifests(dir: &std::path::Path, ingresses: &[String]) -> String {
    let mut docs = vec![SERVICE.to_string()];
    docs.extend(ingresses.iter().cloned());
    let f = dir.join("app.yaml");
    std::fs::write(&f, docs.join("---")).unwrap();
    f.to_str().unwrap().to_string()
}

/// `plan | head -1`: the reader closes the pipe while `plan` still has most of the plan to write;
/// `plan` ends quietly with status 0 instead of failing (or panicking) on the closed pipe.
#[test]
fn a_reader_that_stops_after_the_first_line_ends_plan_quietly() {
    let dir = tempfile::tempdir().unwrap();
    let many: Vec<String> = (0..400)
        .map(|i| ingress(&format!("web-{i}"), INTERNAL))
        .collect();
    let f = manifests(dir.path(), &many);
    let whole = plan(&["-f", &f]);
    assert_eq!(whole.status.code(), Some(0), "{}", text(&whole.stderr));
    // Far more than a pipe holds (64 KiB on Linux): `plan` is still writing when the reader goes.
    let size = whole.stdout.len();
    assert!(size > 256 << 10, "{size} bytes");

    let mut child = Command::new(BIN)
        .args(["plan", "-f", f.as_str()])
        .env_remove("RUST_LOG")
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn plan");
    let mut first = String::new();
    // The reader, and with it the pipe's read end, is dropped at the end of this statement.
    BufReader::new(child.stdout.take().unwrap())
        .read_line(&mut first)
        .unwrap();
    let whole = text(&whole.stdout);
    assert_eq!(Some(first.trim_end()), whole.lines().next());
    let out = child.wait_with_output().unwrap();
    let stderr = text(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    assert!(
        !stderr.contains("panicked") && !stderr.contains("error"),
        "{stderr}"
    );
}

/// `plan -o yaml` (the embedded samples: listener references and subnet discovery, which were
/// `!listenerArn` and `!discover` tags) is plain YAML, with the data of `plan -o json`.
#[test]
fn plan_yaml_is_plain_yaml_with_the_data_of_plan_json() {
    let yaml = plan(&["-o", "yaml"]);
    assert_eq!(yaml.status.code(), Some(0), "{}", text(&yaml.stderr));
    let yaml = text(&yaml.stdout);
    let tree: serde_yaml::Value = serde_yaml::from_str(&yaml).unwrap();
    assert_eq!(albc_model::plan::first_tag(&tree), None, "{yaml}");
    assert!(
        tree["groups"][0]["stack"]["listenerRules"][0]["listenerArn"].is_mapping(),
        "{yaml}"
    );

    let json = plan(&["-o", "json"]);
    assert_eq!(json.status.code(), Some(0), "{}", text(&json.stderr));
    let from_json: serde_json::Value = serde_json::from_slice(&json.stdout).unwrap();
    let from_yaml: serde_json::Value = serde_yaml::from_str(&yaml).unwrap();
    assert_eq!(from_yaml, from_json);
}

/// An Ingress whose own configuration is invalid fails `plan` with status 1 (no `error:` line:
/// `plan` itself worked), and the plan still shows every other object's stack.
#[test]
fn a_broken_ingress_makes_plan_exit_1_and_the_others_are_still_planned() {
    let dir = tempfile::tempdir().unwrap();
    let good = ingress("good", INTERNAL);
    let broken = ingress("broken", BAD_INTERVAL);
    let f = manifests(dir.path(), &[good.clone(), broken]);
    for format in ["json", "yaml"] {
        let out = plan(&["-f", &f, "-o", format]);
        let stderr = text(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "{format}: {stderr}");
        assert!(!stderr.contains("error:"), "{format}: {stderr}");
        let v: serde_json::Value = if format == "json" {
            serde_json::from_slice(&out.stdout).unwrap()
        } else {
            serde_yaml::from_slice(&out.stdout).unwrap()
        };
        let groups = v["groups"].as_array().unwrap();
        assert_eq!(groups.len(), 2, "{v:#}");
        assert_eq!(groups[0]["group"], "shop/broken");
        let error = groups[0]["error"].as_str().unwrap_or_default();
        assert!(error.contains("healthcheck-interval-seconds"), "{v:#}");
        assert_eq!(groups[1]["group"], "shop/good");
        assert_eq!(
            groups[1]["stack"]["loadBalancer"]["scheme"], "internal",
            "{v:#}"
        );
    }
    // Without the broken one, the same manifests plan with status 0.
    let f = manifests(dir.path(), &[good]);
    let out = plan(&["-f", &f]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
}

/// A manifests file with one document that is not valid YAML: the binary plans the others,
/// lists that one under `unreadDocuments` (file, document number, line, the parser's error),
/// notes it on stderr, and exits 1 (no `error:` line: `plan` itself worked).
#[test]
fn a_broken_yaml_document_makes_plan_exit_1_and_the_others_are_still_planned() {
    let dir = tempfile::tempdir().unwrap();
    let broken = "\napiVersion: v1\nkind: ConfigMap\nmetadata: {name: cm, namespace: shop\n";
    let f = manifests(dir.path(), &[broken.to_string(), ingress("good", INTERNAL)]);
    let out = plan(&["-f", &f, "-o", "json"]);
    let stderr = text(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(!stderr.contains("error:"), "{stderr}");
    assert!(
        stderr.contains(&format!("{f}: document 2 (line ")),
        "{stderr}"
    );
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["unreadDocuments"][0]["file"], f.as_str(), "{v:#}");
    assert_eq!(v["unreadDocuments"][0]["document"], 2, "{v:#}");
    assert!(
        v["unreadDocuments"][0]["error"]
            .as_str()
            .unwrap()
            .contains("line"),
        "{v:#}"
    );
    assert_eq!(v["groups"][0]["group"], "shop/good", "{v:#}");
    assert_eq!(
        v["groups"][0]["stack"]["loadBalancer"]["scheme"], "internal",
        "{v:#}"
    );
}

/// As the cluster will see them: an in-tree `nlb` LoadBalancer Service without a class is
/// planned as the chart's Service mutator webhook admits it, and an Ingress of class `alb`
/// without that IngressClass in the manifests as the chart creates it: both planned, status 0.
/// A Service being deleted under deletion protection gets upstream's error and status 1.
#[test]
fn plan_sees_the_manifests_as_the_cluster_will() {
    let dir = tempfile::tempdir().unwrap();
    let in_tree = r#"
apiVersion: v1
kind: Service
metadata:
  name: in-tree
  namespace: shop
  annotations: {service.beta.kubernetes.io/aws-load-balancer-type: nlb}
spec: {type: LoadBalancer, ports: [{port: 80, nodePort: 30081}]}
"#;
    let classed = r#"
apiVersion: networking.k8s.io/v1
kind: Ingress
metadata: {name: classed, namespace: shop}
spec:
  ingressClassName: alb
  rules:
  - http:
      paths:
      - {path: /, pathType: Prefix, backend: {service: {name: web, port: {number: 80}}}}
"#;
    let f = manifests(dir.path(), &[in_tree.to_string(), classed.to_string()]);
    let out = plan(&["-f", &f, "-o", "json"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["services"][0]["service"], "shop/in-tree", "{v:#}");
    assert_eq!(
        v["services"][0]["stack"]["loadBalancer"]["type"], "network",
        "{v:#}"
    );
    assert_eq!(v["groups"][0]["group"], "shop/classed", "{v:#}");

    let protected = r#"
apiVersion: v1
kind: Service
metadata:
  name: protected
  namespace: shop
  deletionTimestamp: "2024-01-01T00:00:00Z"
  finalizers: [service.k8s.aws/resources]
  annotations: {service.beta.kubernetes.io/aws-load-balancer-attributes: deletion_protection.enabled=true}
spec: {type: LoadBalancer, loadBalancerClass: service.k8s.aws/nlb, ports: [{port: 80, nodePort: 30082}]}
"#;
    let f = manifests(dir.path(), &[protected.to_string()]);
    let out = plan(&["-f", &f, "-o", "json"]);
    let stderr = text(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(!stderr.contains("error:"), "{stderr}");
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["services"][0]["service"], "shop/protected", "{v:#}");
    assert_eq!(
        v["services"][0]["error"],
        format!(
            "{}: protected",
            albc_model::model::service::SERVICE_DELETION_PROTECTED
        ),
        "{v:#}"
    );
}

/// An Ingress backend's target-control port (`target-control-port.<svc>.<port>`, IP targets)
/// is in the planned target group under upstream's model key, `targetControlPort`.
#[test]
fn plan_shows_the_target_control_port_of_a_target_group() {
    let dir = tempfile::tempdir().unwrap();
    let annotations = "alb.ingress.kubernetes.io/target-type: ip\n    \
        alb.ingress.kubernetes.io/target-control-port.web.80: \"3000\"";
    let f = manifests(dir.path(), &[ingress("web", annotations)]);
    let out = plan(&["-f", &f, "-o", "json"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let tg = &v["groups"][0]["stack"]["targetGroups"][0];
    assert_eq!(tg["targetControlPort"], 3000, "{v:#}");
    assert_eq!(tg["targetType"], "ip", "{v:#}");
}
