//! `aws-load-balancer-controller migrate` through the real binary: upstream's flag refusals and
//! messages, files in (`-f` lists and repeats, `--input-dir`) and out (one file, `--split
//! namespace`, JSON, `--dry-run=false`), the cluster read (`--from-cluster` against the
//! in-memory API server, and upstream's `cluster_reader_test.go` cases replayed on the reader),
//! the cutover plan, and `--verify`: the README samples and the corpus of real-world Ingresses
//! (`testdata/migrate-corpus`, sources in its SOURCES.md) route alike, and a translation
//! upstream gets wrong fails the run (exit status 2).

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use aws_load_balancer_controller::migrate::cluster::{read_from_client, ClusterReaderOptions};
use k8s_openapi::api::core::v1::{Namespace, Service};
use k8s_openapi::api::networking::v1::{Ingress, IngressClass};
use kube::api::{Api, DynamicObject, PostParams};
use serde_json::{json, Value};

use crate::support::e2e::Cluster;
use crate::support::process::BIN;

fn migrate(args: &[&str]) -> Output {
    Command::new(BIN)
        .arg("migrate")
        .args(args)
        .env_remove("RUST_LOG")
        .env_remove("KUBECONFIG")
        .output()
        .expect("run migrate")
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

const SERVICE: &str = r#"apiVersion: v1
kind: Service
metadata: {name: web, namespace: shop}
spec: {type: NodePort, ports: [{name: http, port: 80, targetPort: 8080}]}
"#;

const INGRESS: &str = r#"apiVersion: networking.k8s.io/v1
kind: Ingress
metadata:
  name: web
  namespace: shop
  annotations:
    alb.ingress.kubernetes.io/scheme: internet-facing
spec:
  ingressClassName: alb
  rules:
  - host: shop.example.com
    http:
      paths:
      - {path: /, pathType: Prefix, backend: {service: {name: web, port: {name: http}}}}
"#;

/// Upstream's refusals, word for word after cobra's `Error: `, with exit status 1.
#[test]
fn flag_combinations_are_refused_with_upstreams_words() {
    let cases: &[(&[&str], &str)] = &[
        (
            &[],
            "Error: must specify at least one of: --file (-f), --input-dir, or --from-cluster\n",
        ),
        (
            &["-f", "x.yaml", "--namespaces", "ns"],
            "Error: --namespaces can only be used with --from-cluster\n",
        ),
        (
            &["--from-cluster", "--input-dir", "dir"],
            "Error: --from-cluster cannot be used with --file or --input-dir\n",
        ),
        (
            &[
                "--from-cluster",
                "--namespaces",
                "a,b",
                "--ingress-name",
                "web",
            ],
            "Error: --ingress-name requires exactly one --namespaces value\n",
        ),
        (
            &["-f", "x.yaml", "--output-format", "xml"],
            "Error: --output-format must be yaml or json, got \"xml\"\n",
        ),
        (
            &["-f", "x.yaml", "--split", "group"],
            "Error: --split must be \"\" or \"namespace\", got \"group\"\n",
        ),
    ];
    for (args, want) in cases {
        let out = migrate(args);
        assert_eq!(
            out.status.code(),
            Some(1),
            "{args:?}: {}",
            text(&out.stderr)
        );
        assert_eq!(text(&out.stderr), *want, "{args:?}");
    }
    // `--port` belongs to the console (tests/it/migrate_console.rs).
    let out = migrate(&["-f", "x.yaml", "--port", "9000"]);
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(
        text(&out.stderr),
        "Error: --port can only be used with --console\n"
    );
}

/// `-f` takes comma lists and repeats; the file is upstream's layout with the dry-run
/// annotation (upstream's default); stderr has upstream's messages; stdout the cutover plan.
#[test]
fn files_in_one_file_out_with_the_cutover_plan() {
    let dir = tempfile::tempdir().unwrap();
    let (svc, ing) = (dir.path().join("svc.yaml"), dir.path().join("ing.yaml"));
    std::fs::write(&svc, SERVICE).unwrap();
    std::fs::write(&ing, INGRESS).unwrap();
    let mut texts = Vec::new();
    for (n, files) in [
        vec![
            "-f".to_string(),
            format!("{},{}", svc.display(), ing.display()),
        ],
        vec![
            "-f".to_string(),
            svc.display().to_string(),
            "-f".to_string(),
            ing.display().to_string(),
        ],
    ]
    .into_iter()
    .enumerate()
    {
        let out_dir = dir.path().join(format!("out{n}"));
        let mut args: Vec<String> = files;
        args.extend(["--output-dir".to_string(), out_dir.display().to_string()]);
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        let out = migrate(&args);
        let stderr = text(&out.stderr);
        assert_eq!(out.status.code(), Some(0), "{stderr}");
        assert!(
            stderr.contains(
                "Found 1 Ingress(es), 1 Service(s), 0 IngressClass(es), 0 IngressClassParams\n"
            ),
            "{stderr}"
        );
        // No IngressClass in the files: upstream's warning and tip.
        assert!(
            stderr.contains(
                "WARNING: Ingress \"shop/web\" uses IngressClass \"alb\" but it was not provided."
            ),
            "{stderr}"
        );
        assert!(stderr.contains("Tip: Use --from-cluster"), "{stderr}");
        let file = out_dir.join("gateway-resources.yaml");
        assert!(
            stderr.contains(&format!("Generated 4 resource(s) in {}\n", file.display())),
            "{stderr}"
        );
        let yaml = std::fs::read_to_string(&file).unwrap();
        assert!(
            yaml.starts_with("apiVersion: gateway.networking.k8s.io/v1\nkind: GatewayClass\n"),
            "{yaml}"
        );
        assert!(
            yaml.contains("    gateway.k8s.aws/dry-run: \"true\"\n"),
            "{yaml}"
        );
        let stdout = text(&out.stdout);
        assert!(stdout.starts_with("Cutover plan\n"), "{stdout}");
        assert!(
            stdout.contains(&format!("kubectl apply -f {}", file.display())),
            "{stdout}"
        );
        assert!(stdout.contains("weighted DNS records you own"), "{stdout}");
        assert!(
            stdout.contains("kubectl delete ingress -n shop web"),
            "{stdout}"
        );
        texts.push(yaml);
    }
    assert_eq!(
        texts[0], texts[1],
        "a comma list and repeated -f read the same files"
    );
}

/// `--input-dir` (its .yaml/.yml/.json files), `--split namespace`, JSON, live Gateways.
#[test]
fn input_dir_split_by_namespace_in_json() {
    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join("in");
    std::fs::create_dir(&input).unwrap();
    std::fs::write(input.join("svc.yml"), SERVICE).unwrap();
    std::fs::write(input.join("ing.yaml"), INGRESS).unwrap();
    std::fs::write(input.join("notes.txt"), "not read").unwrap();
    let out_dir = dir.path().join("out");
    let out = migrate(&[
        "--input-dir",
        input.to_str().unwrap(),
        "--output-dir",
        out_dir.to_str().unwrap(),
        "--split",
        "namespace",
        "--output-format",
        "json",
        "--dry-run=false",
    ]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let class: Value =
        serde_json::from_str(&std::fs::read_to_string(out_dir.join("gatewayclass.json")).unwrap())
            .unwrap();
    assert_eq!(class["kind"], "GatewayClass");
    let shop = std::fs::read_to_string(out_dir.join("shop/gateway-resources.json")).unwrap();
    assert!(shop.starts_with("{\n    \"apiVersion\": "), "{shop}");
    assert!(shop.contains("\"kind\": \"Gateway\""), "{shop}");
    assert!(!shop.contains("dry-run"), "{shop}");
    let mut entries: Vec<String> = std::fs::read_dir(&out_dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    entries.sort();
    assert_eq!(entries, vec!["gatewayclass.json", "shop"]);
    assert!(text(&out.stdout).contains("The Gateways are live (--dry-run=false)"));
}

fn verify(files: &[PathBuf], out_dir: &Path) -> Output {
    let list = files
        .iter()
        .map(|f| f.display().to_string())
        .collect::<Vec<_>>()
        .join(",");
    migrate(&[
        "-f",
        &list,
        "--output-dir",
        out_dir.to_str().unwrap(),
        "--verify",
    ])
}

/// The README's samples translate exactly: `--verify` finds no request routed differently.
#[test]
fn verify_passes_the_readme_samples() {
    let samples: Vec<PathBuf> = [
        "ingressclass",
        "ingress-group",
        "ingress-https",
        "ingress-ip-target",
    ]
    .iter()
    .map(|s| root().join(format!("config/samples/{s}.yaml")))
    .collect();
    let dir = tempfile::tempdir().unwrap();
    let out = verify(&samples, dir.path());
    let stdout = text(&out.stdout);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{stdout}\n{}",
        text(&out.stderr)
    );
    assert_eq!(
        stdout.matches(" 0 routed differently").count(),
        3,
        "{stdout}"
    );
    assert!(
        stdout.contains("verify: 3 Gateway(s) checked, 0 with requests routed differently"),
        "{stdout}"
    );
}

/// Upstream turns `/*` (ImplementationSpecific) into PathPrefix `/*`, which the Gateway
/// controller refuses: `--verify` says so and exits 2.
#[test]
fn verify_fails_on_a_translation_upstream_gets_wrong() {
    let dir = tempfile::tempdir().unwrap();
    let f = dir.path().join("app.yaml");
    std::fs::write(
        &f,
        format!(
            "{SERVICE}---\n{}",
            INGRESS.replace(
                "{path: /, pathType: Prefix",
                "{path: /*, pathType: ImplementationSpecific"
            )
        ),
    )
    .unwrap();
    let out = verify(&[f], &dir.path().join("out"));
    let stdout = text(&out.stdout);
    assert_eq!(out.status.code(), Some(2), "{stdout}");
    assert!(
        stdout.contains("NOT COMPARED: the Gateway does not build"),
        "{stdout}"
    );
    assert!(
        stdout.contains("prefix path shouldn't contain wildcards"),
        "{stdout}"
    );
}

/// Every Ingress of the corpus (37 from public charts and docs) routes alike through both
/// stacks.
#[test]
fn verify_passes_the_real_world_corpus() {
    let corpus = root().join("tests/it/testdata/migrate-corpus");
    let mut files: Vec<PathBuf> = std::fs::read_dir(&corpus)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().and_then(|e| e.to_str()) == Some("yaml"))
        .collect();
    files.sort();
    assert!(files.len() >= 30, "{}", files.len());
    let sources = std::fs::read_to_string(corpus.join("SOURCES.md")).unwrap();
    let mut failures = Vec::new();
    for f in &files {
        let name = f.file_name().unwrap().to_string_lossy().into_owned();
        assert!(
            sources.contains(&format!("`{name}`")),
            "{name} has no entry in SOURCES.md"
        );
        let dir = tempfile::tempdir().unwrap();
        let out = verify(std::slice::from_ref(f), dir.path());
        let stdout = text(&out.stdout);
        let verdicts = stdout
            .lines()
            .filter(|l| l.starts_with("verify: ") && l.contains(" -> Gateway "))
            .count();
        let alike = stdout.matches(" 0 routed differently").count();
        if out.status.code() != Some(0) || verdicts == 0 || alike != verdicts {
            failures.push(format!(
                "== {name} (exit {:?})\n{stdout}\n{}",
                out.status.code(),
                text(&out.stderr)
            ));
        }
    }
    assert!(
        failures.is_empty(),
        "{} of {} routed differently:\n{}",
        failures.len(),
        files.len(),
        failures.join("\n")
    );
}

async fn create_namespaced<K>(client: &kube::Client, ns: &str, obj: Value)
where
    K: kube::Resource<Scope = k8s_openapi::NamespaceResourceScope>
        + Clone
        + serde::de::DeserializeOwned
        + serde::Serialize
        + std::fmt::Debug,
    K::DynamicType: Default,
{
    let obj: K = serde_json::from_value(obj).unwrap();
    Api::<K>::namespaced(client.clone(), ns)
        .create(&PostParams::default(), &obj)
        .await
        .unwrap();
}

async fn seed(client: &kube::Client) {
    for ns in ["production", "staging"] {
        let n: Namespace = serde_json::from_value(json!({"metadata": {"name": ns}})).unwrap();
        Api::<Namespace>::all(client.clone())
            .create(&PostParams::default(), &n)
            .await
            .unwrap();
    }
    for (ns, suffix) in [
        ("default", "default"),
        ("production", "prod"),
        ("staging", "staging"),
    ] {
        create_namespaced::<Ingress>(
            client,
            ns,
            json!({"apiVersion": "networking.k8s.io/v1", "kind": "Ingress",
                   "metadata": {"name": format!("ing-{suffix}"), "namespace": ns}}),
        )
        .await;
        create_namespaced::<Service>(
            client,
            ns,
            json!({"apiVersion": "v1", "kind": "Service",
                   "metadata": {"name": format!("svc-{suffix}"), "namespace": ns},
                   "spec": {"ports": [{"port": 80}]}}),
        )
        .await;
    }
    let ic: IngressClass = serde_json::from_value(
        json!({"metadata": {"name": "alb"}, "spec": {"controller": "ingress.k8s.aws/alb"}}),
    )
    .unwrap();
    Api::<IngressClass>::all(client.clone())
        .create(&PostParams::default(), &ic)
        .await
        .unwrap();
}

fn names<T: kube::ResourceExt>(items: &[T]) -> Vec<String> {
    let mut n: Vec<String> = items.iter().map(|i| i.name_any()).collect();
    n.sort();
    n
}

/// Replays `pkg/ingress2gateway/reader/cluster_reader_test.go` `TestReadFromClient`: all 10
/// cases, against the in-memory API server (upstream's test uses a fake client).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cluster_reader_upstream_cases() {
    let cluster = Cluster::start().await;
    let client = cluster.client.clone();
    seed(&client).await;
    let opts = |ns: &[&str], all: bool, name: &str| ClusterReaderOptions {
        kubeconfig: String::new(),
        namespaces: ns.iter().map(|s| s.to_string()).collect(),
        all_namespaces: all,
        ingress_name: name.to_string(),
    };
    type Want = Result<
        (
            Vec<&'static str>,
            Vec<&'static str>,
            Option<Vec<&'static str>>,
        ),
        &'static str,
    >;
    let cases: Vec<(&str, ClusterReaderOptions, Want)> = vec![
        (
            "all namespaces",
            opts(&[], true, ""),
            Ok((
                vec!["ing-default", "ing-prod", "ing-staging"],
                vec!["svc-default", "svc-prod", "svc-staging"],
                Some(vec!["alb"]),
            )),
        ),
        (
            "single namespace",
            opts(&["production"], false, ""),
            Ok((vec!["ing-prod"], vec!["svc-prod"], None)),
        ),
        (
            "multiple namespaces",
            opts(&["production", "staging"], false, ""),
            Ok((
                vec!["ing-prod", "ing-staging"],
                vec!["svc-prod", "svc-staging"],
                None,
            )),
        ),
        (
            "ingress-name fetches specific ingress and namespace services",
            opts(&["production"], false, "ing-prod"),
            Ok((vec!["ing-prod"], vec!["svc-prod"], None)),
        ),
        (
            "ingress-name not found errors",
            opts(&["production"], false, "nonexistent"),
            Err("failed to get Ingress production/nonexistent"),
        ),
        (
            "ingress-name with no namespaces errors",
            opts(&[], false, "ing-prod"),
            Err("IngressName requires exactly one namespace, got 0"),
        ),
        (
            "ingress-name with multiple namespaces errors",
            opts(&["production", "staging"], false, "ing-prod"),
            Err("IngressName requires exactly one namespace, got 2"),
        ),
        (
            "given ingress-name and namespace do not return services from other namespaces",
            opts(&["production"], false, "ing-prod"),
            Ok((vec!["ing-prod"], vec!["svc-prod"], None)),
        ),
        (
            "ingressclass always returned regardless of namespace filter",
            opts(&["production"], false, ""),
            Ok((vec!["ing-prod"], vec!["svc-prod"], Some(vec!["alb"]))),
        ),
    ];
    for (name, o, want) in cases {
        match (read_from_client(&client, &o).await, want) {
            (Ok(r), Ok((ings, svcs, classes))) => {
                assert_eq!(names(&r.ingresses), ings, "{name}");
                assert_eq!(names(&r.services), svcs, "{name}");
                if let Some(c) = classes {
                    assert_eq!(names(&r.ingress_classes), c, "{name}");
                }
            }
            (Err(e), Err(w)) => assert!(e.to_string().contains(w), "{name}: {e}"),
            (got, w) => panic!("{name}: got {got:?}, want {w:?}"),
        }
    }
    // "empty cluster returns empty results" (the server's own namespaces hold no Ingress or
    // Service).
    let empty = Cluster::start().await;
    let r = read_from_client(&empty.client, &opts(&[], true, ""))
        .await
        .unwrap();
    assert!(r.ingresses.is_empty(), "{:?}", names(&r.ingresses));
    assert!(r.services.is_empty(), "{:?}", names(&r.services));
    empty.server.stop().await;
    cluster.server.stop().await;
}

/// `--from-cluster` through the binary: everything of the namespace and the cluster-scoped
/// classes and parameters (the CRD is served), read only.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn from_cluster_migrates_what_the_cluster_holds() {
    let cluster = Cluster::start().await;
    let client = cluster.client.clone();
    let shop: Namespace = serde_json::from_value(json!({"metadata": {"name": "shop"}})).unwrap();
    Api::<Namespace>::all(client.clone())
        .create(&PostParams::default(), &shop)
        .await
        .unwrap();
    create_namespaced::<Service>(&client, "shop", serde_yaml::from_str(SERVICE).unwrap()).await;
    create_namespaced::<Ingress>(&client, "shop", serde_yaml::from_str(INGRESS).unwrap()).await;
    let ic: IngressClass = serde_json::from_value(json!({"metadata": {"name": "alb"},
        "spec": {"controller": "ingress.k8s.aws/alb",
                 "parameters": {"apiGroup": "elbv2.k8s.aws", "kind": "IngressClassParams", "name": "alb"}}}))
    .unwrap();
    Api::<IngressClass>::all(client.clone())
        .create(&PostParams::default(), &ic)
        .await
        .unwrap();
    let ar =
        kube::api::ApiResource::erase::<aws_load_balancer_controller::crd::IngressClassParams>(&());
    let icp: DynamicObject = serde_json::from_value(json!({
        "apiVersion": "elbv2.k8s.aws/v1beta1", "kind": "IngressClassParams",
        "metadata": {"name": "alb"}, "spec": {"scheme": "internal"}}))
    .unwrap();
    Api::<DynamicObject>::all_with(client.clone(), &ar)
        .create(&PostParams::default(), &icp)
        .await
        .unwrap();
    let out_dir = cluster.dir.path().join("out");
    let kubeconfig = cluster.kubeconfig.clone();
    cluster.server.clear_requests();
    let out_dir2 = out_dir.clone();
    let out = tokio::task::spawn_blocking(move || {
        migrate(&[
            "--from-cluster",
            "--namespaces",
            "shop",
            "--kubeconfig",
            kubeconfig.to_str().unwrap(),
            "--output-dir",
            out_dir2.to_str().unwrap(),
        ])
    })
    .await
    .unwrap();
    let stderr = text(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    assert!(
        stderr.contains(
            "Found 1 Ingress(es), 1 Service(s), 1 IngressClass(es), 1 IngressClassParams\n"
        ),
        "{stderr}"
    );
    // No file checks for the cluster's input (upstream's warnings are for file input only).
    assert!(!stderr.contains("was not provided"), "{stderr}");
    let yaml = std::fs::read_to_string(out_dir.join("gateway-resources.yaml")).unwrap();
    // The IngressClassParams' scheme wins over the annotation.
    assert!(yaml.contains("  scheme: internal\n"), "{yaml}");
    assert!(yaml.contains("kind: HTTPRoute"), "{yaml}");
    // Reads only: lists and gets.
    let requests = cluster.server.requests();
    assert!(!requests.is_empty());
    let writes: Vec<String> = requests
        .iter()
        .filter(|r| r.verb != "get" && r.verb != "list")
        .map(|r| r.describe())
        .collect();
    assert!(writes.is_empty(), "{writes:?}");
    cluster.server.stop().await;
}
