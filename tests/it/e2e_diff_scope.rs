//! `diff` looks where the controllers look before it reports a write: a stack's
//! TargetGroupBindings in `--watch-namespace` (Ingress groups and Gateways) or in the Service's
//! own namespace (Services), never a binding with the stack's labels elsewhere; and a deleted
//! stack whose load balancer has deletion protection on shows no write at all (the controllers
//! check the protection, with the stack's own tags, before removing bindings or listeners).
//! A binding already named as a wanted one is taken over when it carries the stack's labels
//! (an update, not a create and a delete) and fails the stack otherwise, as the controllers'
//! create does. With `-f`, the manifests' objects outside `--watch-namespace` are left out.
//!
//! Each stack is printed (flushed) before the next is computed, and the progress line goes only
//! to a terminal: piped stderr carries none of it.

use aws_load_balancer_controller::aws::fake::spec;
use aws_load_balancer_controller::aws::{Attributes, Tags};
use aws_load_balancer_controller::cli::{Cli, Command};
use aws_load_balancer_controller::crd::TargetGroupBinding;
use aws_load_balancer_controller::diff::{self, Progress};
use aws_load_balancer_controller::model::LoadBalancerScheme;
use clap::Parser;
use k8s_openapi::api::core::v1::{Namespace, Service};
use k8s_openapi::api::networking::v1::Ingress;
use kube::api::{Api, DeleteParams, PostParams};
use kube_test_apiserver::TestApiServer;
use serde_json::{json, Value};

use crate::support::e2e::Cluster;
use crate::support::moto_cloud::{cloud, endpoints_flag, Cloud};
use crate::takeover::diff::{run_diff, run_diff_with};
use crate::takeover::CLUSTER;

async fn create<K>(client: &kube::Client, ns: &str, obj: Value)
where
    K: kube::Resource<Scope = k8s_openapi::NamespaceResourceScope>
        + Clone
        + serde::de::DeserializeOwned
        + serde::Serialize
        + std::fmt::Debug,
    K::DynamicType: Default,
{
    let obj: K = serde_json::from_value(obj).unwrap();
    let api: Api<K> = Api::namespaced(client.clone(), ns);
    api.create(&PostParams::default(), &obj).await.unwrap();
}

/// A binding in `ns` carrying `labels` (another stack's, as far as the controllers can see).
async fn stray_binding(client: &kube::Client, ns: &str, name: &str, labels: Value) {
    let arn = format!(
        "arn:aws:elasticloadbalancing:us-west-2:123456789012:targetgroup/{name}/0123456789abcdef"
    );
    let b = json!({
        "apiVersion": "elbv2.k8s.aws/v1beta1", "kind": "TargetGroupBinding",
        "metadata": {"name": name, "namespace": ns, "labels": labels},
        "spec": {"targetGroupARN": arn, "targetType": "instance",
                 "serviceRef": {"name": "web", "port": 80}},
    });
    create::<TargetGroupBinding>(client, ns, b).await;
}

fn service(name: &str, finalizers: Value) -> Value {
    json!({
        "apiVersion": "v1", "kind": "Service",
        "metadata": {"name": name, "namespace": "demo", "finalizers": finalizers},
        "spec": {"type": "LoadBalancer", "loadBalancerClass": "service.k8s.aws/nlb",
                 "selector": {"app": name},
                 "ports": [{"name": "http", "port": 80, "targetPort": 8080, "nodePort": 30080, "protocol": "TCP"}]},
    })
}

/// An Ingress of class `alb` holding the implicit group's finalizer, then deleted: its group
/// is torn down on the next reconcile.
async fn deleted_ingress(client: &kube::Client, name: &str) {
    let ing = json!({
        "apiVersion": "networking.k8s.io/v1", "kind": "Ingress",
        "metadata": {"name": name, "namespace": "demo",
                     "annotations": {"kubernetes.io/ingress.class": "alb"},
                     "finalizers": ["ingress.k8s.aws/resources"]},
        "spec": {"defaultBackend": {"service": {"name": "web", "port": {"number": 80}}}},
    });
    create::<Ingress>(client, "demo", ing).await;
    Api::<Ingress>::namespaced(client.clone(), "demo")
        .delete(name, &DeleteParams::default())
        .await
        .unwrap();
}

/// A load balancer of the stack `tag` = `stack` with deletion protection on.
async fn protected_lb(c: &Cloud, name: &str, lb_type: &str, tag: &str, stack: &str) {
    let tags = Tags::from([
        ("elbv2.k8s.aws/cluster".to_string(), CLUSTER.to_string()),
        (tag.to_string(), stack.to_string()),
    ]);
    let lb = c
        .elb
        .create_load_balancer(&aws_load_balancer_controller::model::LoadBalancer {
            tags,
            ..spec::load_balancer(
                name,
                lb_type,
                LoadBalancerScheme::Internal,
                &c.subnets[..2],
                &[],
            )
        })
        .await
        .unwrap();
    let on = Attributes::from([("deletion_protection.enabled".into(), "true".into())]);
    c.elb
        .modify_load_balancer_attributes(&lb.arn, &on)
        .await
        .unwrap();
}

fn stack(report: &Value, kind: &str, id: &str) -> Value {
    report["stacks"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["kind"] == kind && s["stack"] == id)
        .cloned()
        .unwrap_or_else(|| panic!("no {kind} stack {id} in {report:#}"))
}

fn calls(st: &Value) -> Vec<String> {
    st["writes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|w| {
            format!(
                "{} {}",
                w["call"].as_str().unwrap(),
                w["resource"].as_str().unwrap()
            )
        })
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn diff_looks_for_bindings_and_deletion_protection_where_the_controllers_do() {
    let c = cloud().await;
    let k8s = Cluster::start().await;
    let client = &k8s.client;
    for ns in ["demo", "other"] {
        let obj = json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": ns}});
        let obj: Namespace = serde_json::from_value(obj).unwrap();
        let api: Api<Namespace> = Api::all(client.clone());
        api.create(&PostParams::default(), &obj).await.unwrap();
    }
    // A new Service, and a binding with its stack's labels in another namespace.
    create::<Service>(client, "demo", service("web", json!([]))).await;
    let svc_labels =
        json!({"service.k8s.aws/stack-namespace": "demo", "service.k8s.aws/stack-name": "web"});
    stray_binding(client, "other", "stray-svc", svc_labels).await;
    // A deleted Ingress, and a binding with its group's labels outside `--watch-namespace`.
    deleted_ingress(client, "app").await;
    let ing_labels =
        json!({"ingress.k8s.aws/stack-namespace": "demo", "ingress.k8s.aws/stack-name": "app"});
    stray_binding(client, "other", "stray-ing", ing_labels).await;
    // A deleted Service and a deleted Ingress whose load balancers are protected.
    let svc = service("gone", json!(["service.k8s.aws/resources"]));
    create::<Service>(client, "demo", svc).await;
    Api::<Service>::namespaced(client.clone(), "demo")
        .delete("gone", &DeleteParams::default())
        .await
        .unwrap();
    protected_lb(
        &c,
        "k8s-demo-gone",
        "network",
        "service.k8s.aws/stack",
        "demo/gone",
    )
    .await;
    deleted_ingress(client, "kept").await;
    protected_lb(
        &c,
        "k8s-demo-kept",
        "application",
        "ingress.k8s.aws/stack",
        "demo/kept",
    )
    .await;

    // Every namespace watched: the Service's bindings are still only its own namespace's.
    let (_, report, stderr) = run_diff(&c, &k8s.kubeconfig).await;
    let web = calls(&stack(&report, "service", "demo/web"));
    assert!(
        web.iter().any(|w| w.contains("CreateLoadBalancer")),
        "{report:#}\nstderr:\n{stderr}"
    );
    assert!(
        !web.iter().any(|w| w.contains("stray-svc")),
        "the Service controller never sees other/stray-svc: {web:#?}"
    );
    // Protected: the controllers stop before any write, bindings and listeners included.
    for (kind, id) in [("service", "demo/gone"), ("ingress", "demo/kept")] {
        let st = stack(&report, kind, id);
        assert_eq!(st["writes"], json!([]), "{st:#}");
        let err = st["error"].as_str().unwrap_or_default();
        assert!(err.contains("deletion protection"), "{st:#}");
    }

    // A binding already named as the one the Service wants: without the stack's labels the
    // controller's create fails; with them it is taken over and updated in place.
    let created = web
        .iter()
        .find_map(|w| w.strip_prefix("kubernetes:create TargetGroupBinding demo/"))
        .unwrap_or_else(|| panic!("no binding to create: {web:#?}"))
        .to_string();
    let theirs = json!({
        "apiVersion": "elbv2.k8s.aws/v1beta1", "kind": "TargetGroupBinding",
        "metadata": {"name": created, "namespace": "demo"},
        "spec": {"targetGroupARN": "arn:aws:elasticloadbalancing:us-west-2:123456789012:targetgroup/old/0123456789abcdef",
                 "targetType": "instance", "serviceRef": {"name": "web", "port": 80}},
    });
    create::<TargetGroupBinding>(client, "demo", theirs).await;
    let (_, report, _) = run_diff(&c, &k8s.kubeconfig).await;
    let st = stack(&report, "service", "demo/web");
    let err = st["error"].as_str().unwrap_or_default();
    assert!(err.contains("already exists"), "{st:#}");
    let binding = format!("TargetGroupBinding demo/{created}");
    assert!(!calls(&st).iter().any(|w| w.contains(&binding)), "{st:#}");
    let tgbs: Api<TargetGroupBinding> = Api::namespaced(client.clone(), "demo");
    let ours = json!({"metadata": {"labels": {"service.k8s.aws/stack-namespace": "demo", "service.k8s.aws/stack-name": "web"}}});
    let pp = kube::api::PatchParams::default();
    tgbs.patch(&created, &pp, &kube::api::Patch::Merge(&ours))
        .await
        .unwrap();
    let (_, report, _) = run_diff(&c, &k8s.kubeconfig).await;
    let st = stack(&report, "service", "demo/web");
    assert!(st.get("error").is_none(), "{st:#}");
    let named: Vec<String> = calls(&st)
        .into_iter()
        .filter(|w| w.contains(&binding))
        .collect();
    assert_eq!(
        named,
        vec![format!(
            "kubernetes:update TargetGroupBinding demo/{created}"
        )],
        "{st:#}"
    );

    // `--watch-namespace=demo`: the Ingress group's bindings are looked for in `demo` only.
    let extra = ["--watch-namespace=demo".to_string()];
    let (_, report, stderr) =
        run_diff_with(&c, &k8s.kubeconfig, &endpoints_flag(&c.moto), &extra).await;
    let app = stack(&report, "ingress", "demo/app");
    assert!(app.get("error").is_none(), "{app:#}\nstderr:\n{stderr}");
    assert_eq!(
        calls(&app),
        vec!["kubernetes:patch Ingress demo/app".to_string()],
        "only the finalizer goes; other/stray-ing is outside the watched namespaces: {app:#}"
    );
    k8s.server.stop().await;
}

/// `diff -f` with `--watch-namespace`: a Service or Gateway of the manifests outside the
/// watched namespaces is not the controllers', so it is no stack of the report.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn diff_of_manifests_leaves_out_what_watch_namespace_hides() {
    let c = cloud().await;
    let dir = tempfile::tempdir().unwrap();
    let f = dir.path().join("svc.yaml");
    let docs: Vec<String> = ["shop", "other"]
        .iter()
        .map(|ns| {
            let mut s = service("nlb", json!([]));
            s["metadata"]["namespace"] = json!(ns);
            serde_json::to_string(&s).unwrap()
        })
        .collect();
    // And an ALB Gateway outside the watched namespaces.
    let gateway = r#"
apiVersion: gateway.networking.k8s.io/v1
kind: GatewayClass
metadata: {name: alb}
spec: {controllerName: gateway.k8s.aws/alb}
---
apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: {name: gw, namespace: other}
spec:
  gatewayClassName: alb
  listeners: [{name: http, port: 80, protocol: HTTP}]
"#;
    std::fs::write(&f, format!("{}\n---\n{gateway}", docs.join("\n---\n"))).unwrap();
    let extra = [
        "--watch-namespace=shop".to_string(),
        format!("--filename={}", f.display()),
    ];
    let kubeconfig = dir.path().join("unused-kubeconfig");
    let (_, report, stderr) =
        run_diff_with(&c, &kubeconfig, &endpoints_flag(&c.moto), &extra).await;
    let stacks: Vec<String> = report["stacks"]
        .as_array()
        .unwrap_or_else(|| panic!("{report:#}\nstderr:\n{stderr}"))
        .iter()
        .map(|s| {
            format!(
                "{} {}",
                s["kind"].as_str().unwrap(),
                s["stack"].as_str().unwrap()
            )
        })
        .collect();
    assert_eq!(stacks, vec!["service shop/nlb".to_string()], "{report:#}");
    // Piped stderr is no terminal: no progress line (there was a stack to count), no escapes.
    assert!(
        !stderr.contains(" stacks (") && !stderr.contains('\x1b') && !stderr.contains('\r'),
        "{stderr:?}"
    );
    assert!(
        report["notes"]
            .to_string()
            .contains("Service other/nlb is outside --watch-namespace"),
        "{report:#}"
    );
}

/// `diff`'s stdout in the test's process: at each flush, the text so far and whether the API
/// server had been asked yet for namespace `second`'s TargetGroupBindings, which only the
/// diff of the Service `second/web` lists (its controller looks in the Service's namespace).
struct Probe<'s> {
    server: &'s TestApiServer,
    text: Vec<u8>,
    flushes: Vec<(String, bool)>,
}

impl std::io::Write for Probe<'_> {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.text.extend_from_slice(buf);
        Ok(buf.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        let second_listed = self.server.requests().iter().any(|r| {
            r.verb == "list"
                && r.resource == "targetgroupbindings"
                && r.namespace.as_deref() == Some("second")
        });
        let text = String::from_utf8_lossy(&self.text).to_string();
        self.flushes.push((text, second_listed));
        Ok(())
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn diff_prints_each_stack_before_it_computes_the_next() {
    let c = cloud().await;
    let k8s = Cluster::start().await;
    let client = &k8s.client;
    for (ns, node_port) in [("first", 30080), ("second", 30081)] {
        let obj = json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": ns}});
        let obj: Namespace = serde_json::from_value(obj).unwrap();
        let api: Api<Namespace> = Api::all(client.clone());
        api.create(&PostParams::default(), &obj).await.unwrap();
        let mut svc = service("web", json!([]));
        svc["metadata"]["namespace"] = json!(ns);
        svc["spec"]["ports"][0]["nodePort"] = json!(node_port);
        create::<Service>(client, ns, svc).await;
    }
    let argv = [
        "aws-load-balancer-controller".to_string(),
        "diff".into(),
        format!("--cluster-name={CLUSTER}"),
        "--aws-region=us-west-2".into(),
        format!("--aws-vpc-id={}", c.vpc),
        format!("--aws-api-endpoints={}", endpoints_flag(&c.moto)),
        format!("--kubeconfig={}", k8s.kubeconfig.display()),
    ];
    let Some(Command::Diff(args)) = Cli::try_parse_from(argv).unwrap().command else {
        panic!("not the diff subcommand");
    };
    let mut out = Probe {
        server: &k8s.server,
        text: Vec::new(),
        flushes: Vec::new(),
    };
    let mut progress: Vec<u8> = Vec::new();
    // `diff` runs its own runtime: off this one's worker, which keeps serving the API server.
    let run = || diff::run_with(*args, &mut out, Progress::to(&mut progress));
    let code = tokio::task::block_in_place(run).unwrap();
    assert_eq!(code, 0);
    let flushes = out.flushes;
    let (text, second_listed) = flushes
        .iter()
        .find(|(t, _)| t.contains("service first/web:"))
        .unwrap_or_else(|| panic!("first/web never printed: {flushes:#?}"));
    assert!(
        !*second_listed && !text.contains("service second/web"),
        "first/web was printed only once second/web's diff had begun: {flushes:#?}"
    );
    // The probe sees the second diff: second/web is printed, after its bindings were looked for.
    let (text, second_listed) = flushes.last().unwrap();
    assert!(
        *second_listed && text.contains("service second/web:"),
        "{flushes:#?}"
    );
    assert!(
        !text.contains('\x1b'),
        "stdout carries no progress: {text:?}"
    );
    // The progress line, drawn to the writer given for it, counts both and is erased at the end.
    let progress = String::from_utf8(progress).unwrap();
    assert!(
        progress.contains("diff: 1/2 stacks (services 1/2)"),
        "{progress:?}"
    );
    assert!(progress.ends_with("\r\x1b[2K"), "{progress:?}");
    k8s.server.stop().await;
}
