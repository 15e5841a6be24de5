//! The switch as an operator performs it, against the API test server with the real helm:
//! upstream's release (its v3.5.0 chart, `tests/it/testdata/upstream-chart-v3.5.0`) installed and
//! serving; this chart's shadow release beside it; `helm upgrade` to this chart; `helm upgrade`
//! back to upstream's. The helm commands are read from `docs/switching.md`, so the guide cannot
//! drift from what works. All the while a client creates a pod and a Service through admission
//! every 100 ms, and not one may be refused. The pods talk to moto, which holds an Ingress stack
//! upstream made (the takeover test's shapes): from the seed to the end, moto receives no write.
//!
//! Pods are run the way a kubelet would run the Deployment helm left in the cluster: its
//! container's args and env, the certificate Secret mounted as files, on 127.0.0.1. Upstream's
//! image cannot run here, so upstream's pods are stood in for by this build's binary started with
//! upstream's Deployment (its args, env, and the Secret's files): in that mode it serves the
//! mounted certificate as upstream's controller-runtime does and answers admissions as upstream
//! (the webhook tests hold those answers to upstream's). A rolling update is modelled as the
//! Deployment does it with upstream's defaults: the new pod starts, joins the webhook Service's
//! endpoints once Ready (both serve for a while), then the old pod leaves.

use crate::support::client::get_plain;
use crate::support::moto_cloud::{cloud, endpoints_flag};
use crate::support::process::{Controller, BIN};
use crate::takeover::{certificates, prepare_network, seed, shapes, CLUSTER};
use k8s_openapi::api::admissionregistration::v1::MutatingWebhookConfiguration;
use k8s_openapi::api::apps::v1::Deployment;
use k8s_openapi::api::core::v1::{Namespace, Pod, Secret, Service};
use kube::api::{Api, PostParams};
use kube_test_apiserver::{Options, TestApiServer};
use serde_json::json;
use std::collections::BTreeMap;
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

const NS: &str = "kube-system";
const RELEASE: &str = "aws-load-balancer-controller";
const WEBHOOK_SERVICE: &str = "aws-load-balancer-webhook-service";
const TLS_SECRET: &str = "aws-load-balancer-tls";
const WEBHOOK_CONFIG: &str = "aws-load-balancer-webhook";

/// The user's values file for upstream's release, used unchanged for every command: the
/// cluster name upstream's stacks were made under, and AWS at moto.
fn values(vpc: &str, endpoints: &str) -> String {
    let mut v = format!("clusterName: {CLUSTER}\nregion: us-west-2\nvpcId: {vpc}\n");
    if !endpoints.is_empty() {
        v.push_str(&format!("awsApiEndpoints: \"{endpoints}\"\n"));
    }
    v
}

fn upstream_chart() -> PathBuf {
    crate::chart::repo().join("tests/it/testdata/upstream-chart-v3.5.0")
}

/// The `sh` block after `<!-- switch-test: NAME -->` in docs/switching.md, continuation lines
/// joined.
fn doc_commands(name: &str) -> String {
    let doc = std::fs::read_to_string(crate::chart::repo().join("docs/switching.md")).unwrap();
    let marker = format!("<!-- switch-test: {name} -->");
    let after = doc
        .split_once(&marker)
        .unwrap_or_else(|| panic!("docs/switching.md has no `{marker}`"))
        .1;
    let block = after
        .trim_start()
        .strip_prefix("```sh\n")
        .unwrap_or_else(|| panic!("`{marker}` is not followed by a ```sh block"));
    let block = &block[..block.find("```").expect("closed block")];
    block.replace("\\\n", " ")
}

/// A directory laid out as an operator's working copy: this repository's `charts/`, upstream's
/// chart where `helm repo add eks …` puts it (`eks/aws-load-balancer-controller` resolves to a
/// local chart first), and `values.yaml`.
struct Workdir {
    dir: tempfile::TempDir,
    kubeconfig: PathBuf,
    /// The shell variables the guide's commands use besides IMAGE/TAG, and where AWS is.
    env: Vec<(String, String)>,
}

impl Workdir {
    fn new(server: &TestApiServer, values: &str, env: &[(&str, &str)]) -> Workdir {
        let dir = tempfile::tempdir().unwrap();
        let kubeconfig = dir.path().join("kubeconfig");
        server.write_kubeconfig(&kubeconfig).unwrap();
        std::os::unix::fs::symlink(
            crate::chart::repo().join("charts"),
            dir.path().join("charts"),
        )
        .unwrap();
        std::fs::create_dir_all(dir.path().join("eks")).unwrap();
        std::os::unix::fs::symlink(
            upstream_chart(),
            dir.path().join("eks/aws-load-balancer-controller"),
        )
        .unwrap();
        std::fs::write(dir.path().join("values.yaml"), values).unwrap();
        let env = env
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        Workdir {
            dir,
            kubeconfig,
            env,
        }
    }

    /// Runs shell commands as an operator would (helm on PATH, KUBECONFIG set, this build's image
    /// in IMAGE/TAG); panics with their output when they fail.
    fn sh(&self, commands: &str) -> String {
        let helm = crate::chart::helm();
        let helm_dir = self.dir.path().join("bin");
        std::fs::create_dir_all(&helm_dir).unwrap();
        for (name, target) in [
            ("helm", helm),
            ("aws-load-balancer-controller", PathBuf::from(BIN)),
        ] {
            let link = helm_dir.join(name);
            if !link.exists() {
                std::os::unix::fs::symlink(&target, &link).unwrap();
            }
        }
        let path = format!(
            "{}:{}",
            helm_dir.display(),
            std::env::var("PATH").unwrap_or_default()
        );
        let out = std::process::Command::new("sh")
            .args(["-euc", commands])
            .current_dir(self.dir.path())
            .env("PATH", path)
            .env("KUBECONFIG", &self.kubeconfig)
            .env("HOME", self.dir.path())
            .env("HELM_CACHE_HOME", self.dir.path().join(".helm/cache"))
            .env("HELM_CONFIG_HOME", self.dir.path().join(".helm/config"))
            .env("HELM_DATA_HOME", self.dir.path().join(".helm/data"))
            .env("IMAGE", "registry.example/albc-rs")
            .env("TAG", "test")
            // AWS only at 127.0.0.1 (moto or a closed port), never instance metadata.
            .env("AWS_EC2_METADATA_DISABLED", "true")
            .env("AWS_ACCESS_KEY_ID", "testing")
            .env("AWS_SECRET_ACCESS_KEY", "testing")
            .env("AWS_ENDPOINT_URL", "http://127.0.0.1:9")
            .envs(self.env.iter().map(|(k, v)| (k, v)))
            .output()
            .unwrap();
        let text = format!(
            "{}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        assert!(out.status.success(), "`{commands}` failed:\n{text}");
        text
    }
}

/// A pod of the Deployment `aws-load-balancer-controller`, run as its kubelet would run it.
struct PodRun {
    ctl: Controller,
    webhook: SocketAddr,
    _certs: tempfile::TempDir,
}

impl PodRun {
    /// Starts a pod from the Deployment as it is in the cluster now and waits until it is Ready.
    async fn start(client: &kube::Client, kubeconfig: &Path) -> PodRun {
        let deployments: Api<Deployment> = Api::namespaced(client.clone(), NS);
        let d = deployments.get(RELEASE).await.unwrap();
        let pod = d.spec.unwrap().template.spec.unwrap();
        let c = &pod.containers[0];
        // Ports are the kubelet's business here: loopback ports chosen by the OS.
        let mut args: Vec<String> = c
            .args
            .clone()
            .unwrap_or_default()
            .into_iter()
            .filter(|a| {
                ![
                    "--webhook-bind-port",
                    "--webhook-bind-host",
                    "--metrics-bind-addr",
                    "--health-probe-bind-addr",
                ]
                .iter()
                .any(|f| a.starts_with(f))
            })
            .collect();
        let mut env: Vec<(String, String)> = Vec::new();
        for e in c.env.clone().unwrap_or_default() {
            let field = e
                .value_from
                .as_ref()
                .and_then(|v| v.field_ref.as_ref())
                .map(|f| f.field_path.clone());
            match (e.value, field.as_deref()) {
                (Some(v), _) => env.push((e.name, v)),
                (None, Some("metadata.namespace")) => env.push((e.name, NS.into())),
                _ => {}
            }
        }
        // The `cert` volume: the Secret's keys as files, as kubelet mounts them (an optional
        // volume whose Secret is absent is an empty directory).
        let certs = tempfile::tempdir().unwrap();
        let secret_name = pod
            .volumes
            .unwrap_or_default()
            .into_iter()
            .find(|v| v.name == "cert")
            .and_then(|v| v.secret)
            .and_then(|s| s.secret_name)
            .expect("the pod mounts the certificate Secret as volume `cert`");
        let secrets: Api<Secret> = Api::namespaced(client.clone(), NS);
        if let Some(s) = secrets.get_opt(&secret_name).await.unwrap() {
            for (k, v) in s.data.unwrap_or_default() {
                std::fs::write(certs.path().join(k), v.0).unwrap();
            }
        }
        args.push(format!("--webhook-cert-dir={}", certs.path().display()));
        args.push(format!("--kubeconfig={}", kubeconfig.display()));
        let env_refs: Vec<(&str, &str)> =
            env.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect();
        let ctl = Controller::start_with_env(&args, &env_refs);
        let webhook = ctl.addr_of("webhook server listening");
        let probes = ctl.addr_of("health probe server listening");
        let deadline = Instant::now() + Duration::from_secs(30);
        while get_plain(probes, "/readyz")
            .await
            .map(|r| r.status)
            .unwrap_or(0)
            != 200
        {
            assert!(
                Instant::now() < deadline,
                "pod never became Ready:\n{}",
                ctl.stderr()
            );
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        PodRun {
            ctl,
            webhook,
            _certs: certs,
        }
    }
}

/// A rolling update of one replica with upstream's strategy defaults (maxSurge 1,
/// maxUnavailable 0): the new pod starts from the Deployment as it is now, serves beside the old
/// one for a while once Ready, then the old one stops.
async fn roll(server: &TestApiServer, kubeconfig: &Path, old: PodRun) -> PodRun {
    let new = PodRun::start(&server.client(), kubeconfig).await;
    server.set_service_endpoints(NS, WEBHOOK_SERVICE, &[old.webhook, new.webhook]);
    // Both serve: with calls every 100 ms, each pod answers several.
    tokio::time::sleep(Duration::from_millis(1500)).await;
    server.set_service_endpoints(NS, WEBHOOK_SERVICE, &[new.webhook]);
    // Terminated as the kubelet does it: SIGTERM, so a leader hands its Lease over at once.
    let mut old = old;
    old.ctl.sigterm();
    old.ctl.wait_exit(Duration::from_secs(20));
    new
}

/// Waits until `pod` leads and has deployed the seeded stack (a reconcile of it ran to the end).
fn wait_reconciled(pod: &PodRun) {
    pod.ctl
        .wait_for_log("became leader", Duration::from_secs(60));
    pod.ctl
        .wait_for_log("successfully deployed model", Duration::from_secs(60));
}

/// The AWS write calls moto received since recording started (anything but reads).
fn writes(recorded: &[String]) -> Vec<String> {
    recorded
        .iter()
        .filter(|a| {
            let op = a.split(':').nth(1).unwrap_or(a);
            !["Describe", "Get", "List"]
                .iter()
                .any(|r| op.starts_with(r))
        })
        .cloned()
        .collect()
}

/// Creates a pod and a Service through admission every 100 ms until stopped; records failures.
struct Traffic {
    stop: Arc<AtomicBool>,
    sent: Arc<Mutex<usize>>,
    failures: Arc<Mutex<Vec<String>>>,
    task: tokio::task::JoinHandle<()>,
}

impl Traffic {
    fn start(client: kube::Client) -> Traffic {
        let stop = Arc::new(AtomicBool::new(false));
        let sent = Arc::new(Mutex::new(0));
        let failures = Arc::new(Mutex::new(Vec::new()));
        let (s, n, f) = (stop.clone(), sent.clone(), failures.clone());
        let task = tokio::spawn(async move {
            let pods: Api<Pod> = Api::namespaced(client.clone(), "shop");
            let services: Api<Service> = Api::namespaced(client, "shop");
            let mut tick = tokio::time::interval(Duration::from_millis(100));
            let mut i = 0u32;
            while !s.load(Ordering::SeqCst) {
                tick.tick().await;
                i += 1;
                let pod: Pod =
                    serde_json::from_value(json!({"metadata": {"name": format!("p-{i}")},
                    "spec": {"containers": [{"name": "c", "image": "nginx"}]}}))
                    .unwrap();
                let svc: Service =
                    serde_json::from_value(json!({"metadata": {"name": format!("s-{i}")},
                    "spec": {"ports": [{"port": 80}]}}))
                    .unwrap();
                let p = pods.create(&PostParams::default(), &pod).await;
                let v = services.create(&PostParams::default(), &svc).await;
                *n.lock().unwrap() += 2;
                for (what, r) in [("pod", p.err()), ("service", v.err())] {
                    if let Some(e) = r {
                        f.lock().unwrap().push(format!("{what} {i}: {e}"));
                    }
                }
            }
        });
        Traffic {
            stop,
            sent,
            failures,
            task,
        }
    }

    fn sent(&self) -> usize {
        *self.sent.lock().unwrap()
    }

    async fn finish(self) -> (usize, Vec<String>) {
        self.stop.store(true, Ordering::SeqCst);
        self.task.await.unwrap();
        let sent = *self.sent.lock().unwrap();
        let failures = self.failures.lock().unwrap().clone();
        (sent, failures)
    }
}

/// The distinct caBundles of the mutating configuration's webhooks (a webhook without one counts
/// as "").
async fn ca_bundles(client: &kube::Client) -> std::collections::BTreeSet<String> {
    let mwc: Api<MutatingWebhookConfiguration> = Api::all(client.clone());
    let m = mwc.get(WEBHOOK_CONFIG).await.unwrap();
    m.webhooks
        .unwrap_or_default()
        .into_iter()
        .map(|w| {
            String::from_utf8(w.client_config.ca_bundle.map(|b| b.0).unwrap_or_default()).unwrap()
        })
        .collect()
}

async fn secret_data(client: &kube::Client) -> BTreeMap<String, Vec<u8>> {
    let secrets: Api<Secret> = Api::namespaced(client.clone(), NS);
    secrets
        .get(TLS_SECRET)
        .await
        .unwrap()
        .data
        .unwrap_or_default()
        .into_iter()
        .map(|(k, v)| (k, v.0))
        .collect()
}

async fn helm_owner(client: &kube::Client) -> Option<String> {
    let secrets: Api<Secret> = Api::namespaced(client.clone(), NS);
    let s = secrets.get(TLS_SECRET).await.unwrap();
    s.metadata
        .annotations
        .unwrap_or_default()
        .get("meta.helm.sh/release-name")
        .cloned()
}

/// Waits until `sent` grew by `n` more admissions.
async fn wait_sent(t: &Traffic, n: usize) {
    let target = t.sent() + n;
    let deadline = Instant::now() + Duration::from_secs(20);
    while t.sent() < target {
        assert!(Instant::now() < deadline, "the admission client stalled");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn switch_with_helm_from_upstream_and_back() {
    let c = cloud().await;
    prepare_network(&c).await;
    let server = TestApiServer::start(Options::default()).await.unwrap();
    let client = server.client();
    let guide_env = [
        ("CLUSTER_NAME", CLUSTER),
        ("AWS_REGION", "us-west-2"),
        ("VPC_ID", c.vpc.as_str()),
        ("AWS_ENDPOINT_URL", c.moto.endpoint.as_str()),
    ];
    let work = Workdir::new(
        &server,
        &values(&c.vpc, &endpoints_flag(&c.moto)),
        &guide_env,
    );
    let namespaces: Api<Namespace> = Api::all(client.clone());
    let shop = json!({"metadata": {"name": "shop", "labels": {"elbv2.k8s.aws/pod-readiness-gate-inject": "enabled"}}});
    namespaces
        .create(
            &PostParams::default(),
            &serde_json::from_value(shop).unwrap(),
        )
        .await
        .unwrap();

    // Upstream's release, as the cluster has it today, and its pod serving.
    work.sh(&format!(
        "helm install {RELEASE} eks/aws-load-balancer-controller -n {NS} -f values.yaml"
    ));
    let upstream_secret = secret_data(&client).await;
    assert!(
        !upstream_secret.contains_key("ca.key"),
        "upstream's chart keeps no CA key"
    );
    let upstream_bundle = ca_bundles(&client).await;
    assert_eq!(upstream_bundle.len(), 1, "one CA in every webhook");
    assert!(upstream_bundle
        .iter()
        .all(|b| b.contains("BEGIN CERTIFICATE")));
    let pod = PodRun::start(&client, &work.kubeconfig).await;
    server.set_service_endpoints(NS, WEBHOOK_SERVICE, &[pod.webhook]);
    let traffic = Traffic::start(client.clone());
    wait_sent(&traffic, 10).await;

    // What upstream made for an Ingress: its AWS stack in moto, its objects and bindings here.
    let shape = shapes::all().remove(0);
    let vars = certificates(&c).await;
    let backend = seed::backend_sg(&c).await;
    seed::seed(&c, &client, &backend, &vars, &shape).await;
    c.moto.start_recording().await;
    wait_reconciled(&pod);
    // The guide's preview: nothing to write on upstream's converged state (exit 0).
    let preview = work.sh(&doc_commands("preview"));
    // The seeded stack was read and found converged (exit 0 alone would also hold for none).
    let stack = format!("ingress {}/", shape.namespace);
    let converged = |report: &str| {
        report
            .lines()
            .any(|l| l.starts_with(&stack) && l.ends_with(": no changes"))
    };
    assert!(converged(&preview), "{preview}");

    // The shadow beside it: installs, changes nothing upstream's release owns.
    work.sh(&doc_commands("shadow"));
    let list = work.sh(&format!("helm list -n {NS} -q"));
    assert!(
        list.lines().any(|l| l == "albc-shadow") && list.lines().any(|l| l == RELEASE),
        "{list}"
    );
    assert_eq!(ca_bundles(&client).await, upstream_bundle);
    assert_eq!(secret_data(&client).await, upstream_secret);
    wait_sent(&traffic, 6).await;
    work.sh(&doc_commands("shadow-remove"));

    // The switch: same release, this chart. Secret and bundle are untouched by the upgrade...
    work.sh(&doc_commands("switch"));
    assert_eq!(
        ca_bundles(&client).await,
        upstream_bundle,
        "the upgrade kept caBundle"
    );
    assert_eq!(
        secret_data(&client).await,
        upstream_secret,
        "the upgrade kept upstream's Secret"
    );
    wait_sent(&traffic, 6).await;
    // ...and the new pod adopts upstream's pair while the old one still serves it.
    let pod = roll(&server, &work.kubeconfig, pod).await;
    assert!(
        pod.ctl.stderr().contains("webhook certificate in place"),
        "the new pod runs the controller-managed certificate:\n{}",
        pod.ctl.stderr()
    );
    wait_reconciled(&pod);
    let verify = work.sh(&doc_commands("verify"));
    assert!(
        converged(&verify) && verify.contains("Upgrade complete"),
        "{verify}"
    );
    wait_sent(&traffic, 10).await;
    assert_eq!(secret_data(&client).await, upstream_secret);
    assert_eq!(helm_owner(&client).await.as_deref(), Some(RELEASE));

    // The way back: upstream's chart takes the release, Secret included, with no manual step.
    work.sh(&doc_commands("back"));
    let history = work.sh(&format!("helm history {RELEASE} -n {NS}"));
    assert!(
        history.lines().last().unwrap_or("").contains("deployed"),
        "{history}"
    );
    let back_secret = secret_data(&client).await;
    for key in ["ca.crt", "tls.crt", "tls.key"] {
        assert_eq!(back_secret.get(key), upstream_secret.get(key), "{key}");
    }
    let pod = roll(&server, &work.kubeconfig, pod).await;
    wait_reconciled(&pod);
    wait_sent(&traffic, 10).await;

    let recorded = c.moto.recorded_actions();
    assert!(
        recorded.iter().any(|a| a.contains("DescribeLoadBalancers")),
        "the pods read the stack: {recorded:?}"
    );
    assert_eq!(
        writes(&recorded),
        Vec::<String>::new(),
        "AWS writes on upstream's stack"
    );
    let (sent, failures) = traffic.finish().await;
    assert!(
        failures.is_empty(),
        "{} of {sent} admissions refused:\n{}",
        failures.len(),
        failures.join("\n")
    );
    assert!(sent >= 100, "only {sent} admissions sent");
    drop(pod);
    server.stop().await;
}

/// A cluster that started on this chart (the controller made the Secret) goes to upstream's chart
/// with the documented command: helm adopts the Secret the controller wrote (it carries the
/// release's ownership) instead of refusing it, and upstream's pods serve the certificate the
/// bundle already trusts.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_fresh_install_of_this_chart_goes_to_upstreams_chart() {
    let server = TestApiServer::start(Options::default()).await.unwrap();
    let client = server.client();
    let work = Workdir::new(&server, &values("vpc-0fresh", ""), &[]);
    let namespaces: Api<Namespace> = Api::all(client.clone());
    let shop = json!({"metadata": {"name": "shop", "labels": {"elbv2.k8s.aws/pod-readiness-gate-inject": "enabled"}}});
    namespaces
        .create(
            &PostParams::default(),
            &serde_json::from_value(shop).unwrap(),
        )
        .await
        .unwrap();
    let switch = doc_commands("switch");
    work.sh(&switch.replacen("helm upgrade", "helm install", 1));
    let secrets: Api<Secret> = Api::namespaced(client.clone(), NS);
    assert!(
        secrets.get_opt(TLS_SECRET).await.unwrap().is_none(),
        "the chart renders no certificate before the controller made one"
    );
    let pod = PodRun::start(&client, &work.kubeconfig).await;
    server.set_service_endpoints(NS, WEBHOOK_SERVICE, &[pod.webhook]);
    let traffic = Traffic::start(client.clone());
    wait_sent(&traffic, 10).await;
    assert_eq!(helm_owner(&client).await.as_deref(), Some(RELEASE));
    let ours = secret_data(&client).await;
    assert!(
        ours.contains_key("ca.key"),
        "the controller made its own CA"
    );
    let bundle = ca_bundles(&client).await;

    // An upgrade of this chart takes the Secret into the release unchanged.
    work.sh(&switch);
    assert_eq!(secret_data(&client).await, ours);
    assert_eq!(ca_bundles(&client).await, bundle);
    wait_sent(&traffic, 6).await;

    work.sh(&doc_commands("back"));
    let back = secret_data(&client).await;
    for key in ["ca.crt", "tls.crt", "tls.key"] {
        assert_eq!(back.get(key), ours.get(key), "{key}");
    }
    let pod = roll(&server, &work.kubeconfig, pod).await;
    wait_sent(&traffic, 10).await;
    let (sent, failures) = traffic.finish().await;
    assert!(
        failures.is_empty(),
        "{} of {sent} admissions refused:\n{}",
        failures.len(),
        failures.join("\n")
    );
    drop(pod);
    server.stop().await;
}
