//! End to end with the real binary: after one Ingress reconcile (plus one that fails to build)
//! and one admission, `/metrics` carries upstream's own controller metrics and
//! controller-runtime's series under the names, types and labels dashboards and alerts use, in
//! the format upstream serves (Prometheus text 0.0.4, numbers and `le` as Go writes them).
//! The top talkers are published every half second here (upstream: every three minutes).

use crate::e2e_pod_gates::kubectl;
use crate::ingress::{DEMO, WAIT};
use crate::support::client::{self, get_plain, get_plain_accept, tls_config};
use crate::support::e2e::Cluster;
use crate::support::moto_cloud::cloud;
use crate::support::prom_text;
use crate::support::service_review;
use crate::tgb::eventually;
use aws_load_balancer_controller::controller::metrics::TOP_TALKERS_INTERVAL_ENV;

/// Fails the build of its own group: the scheme is not one upstream accepts.
const BAD: &str = r#"
apiVersion: networking.k8s.io/v1
kind: Ingress
metadata:
  name: bad
  namespace: demo
  annotations:
    kubernetes.io/ingress.class: alb
    alb.ingress.kubernetes.io/scheme: sideways
spec:
  defaultBackend: {service: {name: front, port: {number: 80}}}
"#;

async fn scrape(addr: std::net::SocketAddr) -> String {
    String::from_utf8(get_plain(addr, "/metrics").await.unwrap().body).unwrap()
}

/// The value of the sample line that starts with `series` (name and labels), if any.
fn value(body: &str, series: &str) -> Option<f64> {
    body.lines()
        .find_map(|l| l.strip_prefix(series)?.strip_prefix(' ')?.parse().ok())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn metrics_carry_upstream_and_controller_runtime_names_after_a_reconcile_and_an_admission() {
    let c = cloud().await;
    let k8s = Cluster::start().await;
    let kubeconfig = k8s.kubeconfig.clone();
    let ctl = k8s.controller_with_env(
        &[
            "--cluster-name=e2e".into(),
            "--aws-region=us-west-2".into(),
            format!("--aws-vpc-id={}", c.vpc),
            format!(
                "--aws-api-endpoints=elasticloadbalancing={0},ec2={0}",
                c.moto.endpoint
            ),
        ],
        &[(TOP_TALKERS_INTERVAL_ENV, "500")],
    );
    ctl.wait_for_log("became leader", WAIT);
    let metrics = ctl.addr_of("metrics server listening");

    let ns = "apiVersion: v1\nkind: Namespace\nmetadata: {name: demo}\n";
    let (ok, out) = kubectl(&kubeconfig, &["create", "-f", "-"], Some(ns));
    assert!(ok, "{out}");
    let (ok, out) = kubectl(&kubeconfig, &["apply", "-f", "-"], Some(DEMO));
    assert!(ok, "{out}");
    let (ok, out) = kubectl(&kubeconfig, &["apply", "-f", "-"], Some(BAD));
    assert!(ok, "{out}");

    // One admission through the webhook server.
    let webhook = ctl.addr_of("webhook server listening");
    let cfg = tls_config(&[&k8s.bundle.ca.cert_pem], &[&rustls::version::TLS13]);
    let review = serde_json::to_vec(&service_review(
        "u-1",
        "CREATE",
        serde_json::json!({"spec": {"type": "LoadBalancer"}}),
    ))
    .unwrap();
    let r = client::post(webhook, cfg, "/mutate-v1-service", &review)
        .await
        .unwrap();
    assert_eq!(r.status, 200);

    let ing = r#"{controller="ingress"}"#;
    let tgb = r#"{controller="targetGroupBinding"}"#;
    eventually(
        "an Ingress and a TargetGroupBinding reconcile in the metrics",
        WAIT,
        || async {
            let body = scrape(metrics).await;
            let ok = |s: &str| value(&body, s).is_some_and(|v| v >= 1.0);
            ok(r#"controller_runtime_reconcile_total{controller="ingress",result="success"}"#)
                && ok(r#"controller_runtime_reconcile_errors_total{controller="ingress"}"#)
                && ok(r#"awslbc_controller_reconcile_stage_duration_count{controller="targetGroupBinding",reconcile_stage="reconcile_targetgroupbinding"}"#)
                // The stage is counted inside the reconcile, its time once it ends: wait for both.
                && ok(r#"controller_runtime_reconcile_time_seconds_count{controller="targetGroupBinding"}"#)
                // Both Ingresses (`app` and `bad`) are in the cache; the bindings of `app` too.
                && value(&body, r#"awslbc_controller_cache_object_total{resource="ingress"}"#) == Some(2.0)
                && ok(r#"awslbc_controller_cache_object_total{resource="targetgroupbinding"}"#)
                // The failing group is retried, so it is among the most reconciled once an
                // interval has ended after its passes.
                && ok(r#"awslbc_controller_top_talkers{controller="ingress",namespace="demo",name="bad"}"#)
                && body.contains(r#"awslbc_controller_top_talkers{controller="targetgroupbinding",namespace="demo",name=""#)
        },
    )
    .await;
    // No Accept header: text 0.0.4, every line one client_golang could have written.
    let r = get_plain(metrics, "/metrics").await.unwrap();
    assert_eq!(
        r.content_type.as_deref(),
        Some("text/plain; version=0.0.4; charset=utf-8")
    );
    let body = String::from_utf8(r.body).unwrap();
    if let Err(e) = prom_text::check(&body) {
        panic!("{e}\n{body}");
    }
    // Help texts as client_golang writes them: upstream's own punctuation, no added stop.
    for help in [
        "# HELP controller_runtime_webhook_requests_total Total number of admission requests by HTTP status code.\n",
        "# HELP controller_runtime_reconcile_total Total number of reconciliations per controller\n",
        "# HELP workqueue_adds_total Total number of adds handled by workqueue\n",
        "# HELP controller_runtime_reconcile_panics_total Total number of reconciliation panics per controller\n",
        "# HELP controller_runtime_terminal_reconcile_errors_total Total number of terminal reconciliation errors per controller\n",
        "# HELP awslbc_controller_cache_object_total Counts the number of objects in the controller cache.\n",
        "# HELP awslbc_controller_top_talkers Counts the number of reconciliations triggered per resource\n",
    ] {
        assert!(body.contains(help), "no `{help}` in\n{body}");
    }
    let host = k8s.server.addr().to_string();

    // Sample lines that must be there, with their labels (value checked where it is known).
    let present = [
        // Upstream's own.
        r#"awslbc_controller_reconcile_errors_total{controller="ingress",error_category="build_model_error"}"#.to_string(),
        r#"awslbc_controller_reconcile_stage_duration_count{controller="ingress",reconcile_stage="fetch_ingress"}"#.into(),
        r#"awslbc_controller_reconcile_stage_duration_count{controller="ingress",reconcile_stage="add_group_finalizer"}"#.into(),
        r#"awslbc_controller_reconcile_stage_duration_count{controller="ingress",reconcile_stage="build_model"}"#.into(),
        r#"awslbc_controller_reconcile_stage_duration_count{controller="ingress",reconcile_stage="deploy_model"}"#.into(),
        r#"awslbc_controller_reconcile_stage_duration_count{controller="ingress",reconcile_stage="dns_resolve_and_update_status"}"#.into(),
        r#"awslbc_controller_reconcile_stage_duration_count{controller="targetGroupBinding",reconcile_stage="add_finalizers"}"#.into(),
        // controller-runtime's, for both controllers.
        format!("controller_runtime_reconcile_time_seconds_count{ing}"),
        format!("controller_runtime_reconcile_time_seconds_count{tgb}"),
        // The bucket bounds as Go spells them, `le` last as Go writes it.
        r#"controller_runtime_reconcile_time_seconds_bucket{controller="ingress",le="60"}"#.into(),
        r#"controller_runtime_reconcile_time_seconds_bucket{controller="ingress",le="0.005"}"#.into(),
        r#"controller_runtime_reconcile_time_seconds_bucket{controller="ingress",le="+Inf"}"#.into(),
        r#"workqueue_queue_duration_seconds_bucket{name="ingress",controller="ingress",le="9.999999999999999e-06"}"#.into(),
        r#"workqueue_queue_duration_seconds_bucket{name="ingress",controller="ingress",le="1e-08"}"#.into(),
        format!("controller_runtime_reconcile_errors_total{tgb}"),
        r#"controller_runtime_reconcile_total{controller="targetGroupBinding",result="success"}"#.into(),
        r#"controller_runtime_reconcile_total{controller="ingress",result="error"}"#.into(),
        r#"controller_runtime_reconcile_total{controller="ingress",result="requeue_after"}"#.into(),
        format!("controller_runtime_active_workers{ing}"),
        format!("controller_runtime_active_workers{tgb}"),
        r#"leader_election_master_status{name="aws-load-balancer-controller-leader"}"#.into(),
        format!("rest_client_requests_total{{code=\"200\",host=\"{host}\",method=\"GET\"}}"),
        format!("rest_client_requests_total{{code=\"201\",host=\"{host}\",method=\"POST\"}}"),
        format!("rest_client_request_duration_seconds_count{{host=\"{host}\",verb=\"PATCH\"}}"),
    ];
    // The admission, as controller-runtime counts it per webhook path.
    let svc = r#"webhook="/mutate-v1-service""#;
    let admitted = format!("controller_runtime_webhook_requests_total{{{svc},code=\"200\"}}");
    assert_eq!(value(&body, &admitted), Some(1.0), "{body}");
    for series in [
        format!("controller_runtime_webhook_requests_total{{{svc},code=\"500\"}}"),
        format!("controller_runtime_webhook_requests_in_flight{{{svc}}}"),
        format!("controller_runtime_webhook_latency_seconds_count{{{svc}}}"),
    ] {
        assert!(value(&body, &series).is_some(), "no `{series}` in\n{body}");
    }
    for series in &present {
        assert!(value(&body, series).is_some(), "no `{series}` in\n{body}");
    }
    for q in ["ingress", "targetGroupBinding"] {
        let labels = format!("{{name=\"{q}\",controller=\"{q}\"}}");
        for name in [
            "workqueue_adds_total",
            "workqueue_retries_total",
            "workqueue_unfinished_work_seconds",
            "workqueue_longest_running_processor_seconds",
            "workqueue_queue_duration_seconds_count",
            "workqueue_work_duration_seconds_count",
        ] {
            let series = format!("{name}{labels}");
            assert!(value(&body, &series).is_some(), "no `{series}` in\n{body}");
        }
        let depth = format!("workqueue_depth{{name=\"{q}\",controller=\"{q}\",priority=\"\"}}");
        assert!(value(&body, &depth).is_some(), "no `{depth}` in\n{body}");
        let max = format!("controller_runtime_max_concurrent_reconciles{{controller=\"{q}\"}}");
        assert_eq!(value(&body, &max), Some(3.0), "{body}");
    }
    // Series controller-runtime shows at 0 from the start, per controller: no pass panicked, and
    // no error of ours is terminal (every failure is retried, as upstream's).
    for q in ["ingress", "targetGroupBinding", "service"] {
        for name in [
            "controller_runtime_reconcile_panics_total",
            "controller_runtime_terminal_reconcile_errors_total",
        ] {
            let series = format!("{name}{{controller=\"{q}\"}}");
            assert_eq!(value(&body, &series), Some(0.0), "{series} in\n{body}");
        }
    }
    // Both Services of the demo are in the cache (a count, not just the kinds reconciled).
    let services = r#"awslbc_controller_cache_object_total{resource="service"}"#;
    assert!(value(&body, services).is_some_and(|n| n >= 2.0), "{body}");
    // The Service controller runs on the leader with `--service-max-concurrent-reconciles` (3).
    let svc_workers = r#"controller_runtime_max_concurrent_reconciles{controller="service"}"#;
    assert_eq!(value(&body, svc_workers), Some(3.0), "{body}");
    let leader = r#"leader_election_master_status{name="aws-load-balancer-controller-leader"}"#;
    assert_eq!(value(&body, leader), Some(1.0), "{body}");
    let adds = r#"workqueue_adds_total{name="ingress",controller="ingress"}"#;
    assert!(value(&body, adds).unwrap() >= 2.0, "{body}");
    let retries = r#"workqueue_retries_total{name="ingress",controller="ingress"}"#;
    assert!(value(&body, retries).unwrap() >= 1.0, "{body}");
    // Types as upstream declares them, a counter family under its `_total` name as in
    // client_golang's text. The readiness-gate histogram is not here: like any family without a
    // sample (in client_golang too) it is absent until a gate flips to True; its name, labels
    // and buckets are shown by `controller::metrics` and `tgb::gates` tests.
    for (name, kind) in [
        ("awslbc_controller_reconcile_errors_total", "counter"),
        ("awslbc_controller_reconcile_stage_duration", "histogram"),
        ("controller_runtime_reconcile_total", "counter"),
        ("controller_runtime_reconcile_time_seconds", "histogram"),
        ("controller_runtime_max_concurrent_reconciles", "gauge"),
        ("workqueue_depth", "gauge"),
        ("workqueue_adds_total", "counter"),
        ("workqueue_queue_duration_seconds", "histogram"),
        ("workqueue_work_duration_seconds", "histogram"),
        ("workqueue_unfinished_work_seconds", "gauge"),
        ("leader_election_master_status", "gauge"),
        ("awslbc_controller_cache_object_total", "gauge"),
        ("awslbc_controller_top_talkers", "gauge"),
        ("controller_runtime_reconcile_panics_total", "counter"),
        (
            "controller_runtime_terminal_reconcile_errors_total",
            "counter",
        ),
        ("rest_client_requests_total", "counter"),
        // Ours from before, names unchanged.
        ("aws_api_calls_total", "counter"),
    ] {
        let line = format!("# TYPE {name} {kind}");
        assert!(body.contains(&line), "no `{line}` in\n{body}");
    }
    assert!(body.contains("operation=\"CreateLoadBalancer\""), "{body}");

    // Prometheus' own scrape header asks for OpenMetrics first but takes text/plain: it gets
    // what upstream gives it, text 0.0.4.
    let prometheus = "application/openmetrics-text;version=1.0.0,application/openmetrics-text;version=0.0.1;q=0.75,text/plain;version=0.0.4;q=0.5,*/*;q=0.1";
    let r = get_plain_accept(metrics, "/metrics", Some(prometheus))
        .await
        .unwrap();
    assert_eq!(
        r.content_type.as_deref(),
        Some("text/plain; version=0.0.4; charset=utf-8")
    );
    // A client asking for OpenMetrics alone still gets it, `# EOF` and all.
    let r = get_plain_accept(metrics, "/metrics", Some("application/openmetrics-text"))
        .await
        .unwrap();
    assert_eq!(
        r.content_type.as_deref(),
        Some("application/openmetrics-text; version=1.0.0; charset=utf-8")
    );
    let om = String::from_utf8(r.body).unwrap();
    assert!(om.ends_with("# EOF\n"), "{om}");
    for line in [
        "# TYPE controller_runtime_reconcile counter",
        r#"controller_runtime_reconcile_time_seconds_bucket{le="60.0",controller="ingress"}"#,
    ] {
        assert!(om.contains(line), "no `{line}` in\n{om}");
    }
}
