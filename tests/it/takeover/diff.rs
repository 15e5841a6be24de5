//! `aws-load-balancer-controller diff` end to end: the real binary against moto (recording every
//! request it receives) and the API test server, holding what upstream v3.5 left for every
//! takeover shape (Ingress groups, their TargetGroupBindings, finalizers and status). In sync it
//! reports no changes and exits 0; after out-of-band changes it exits 2 and shows exactly the
//! writes that repair them, field by field; it never writes to AWS or to the cluster, and every
//! AWS action it sends is in the shipped read-only IAM policy.

use std::collections::BTreeMap;

use aws_load_balancer_controller::crd::TargetGroupBinding;
use kube_test_apiserver::RequestRecord;
use serde_json::Value;

use super::{seed, setup, shapes, versions, CLUSTER};
use crate::chart::iam_readonly::readonly_actions;
use crate::ingress::inventory;
use crate::support::health_check::with_interval;
use crate::support::moto_cloud::{endpoints_flag, Cloud};
use crate::support::process::BIN;
use crate::support::rbac::{allowed, rules_of};

/// Runs `diff --exit-code -o json`; returns (exit code, report, stderr).
pub(crate) async fn run_diff(c: &Cloud, kubeconfig: &std::path::Path) -> (i32, Value, String) {
    run_diff_with(c, kubeconfig, &endpoints_flag(&c.moto), &[]).await
}

/// [`run_diff`] with `--aws-api-endpoints=<endpoints>` and the `extra` flags.
pub(crate) async fn run_diff_with(
    c: &Cloud,
    kubeconfig: &std::path::Path,
    endpoints: &str,
    extra: &[String],
) -> (i32, Value, String) {
    let mut flags = vec![format!("--aws-vpc-id={}", c.vpc)];
    flags.extend_from_slice(extra);
    run_diff_flags(kubeconfig, endpoints, &flags).await
}

/// [`run_diff_with`] without `--aws-vpc-id` (the VPC from the `extra` flags).
pub(crate) async fn run_diff_flags(
    kubeconfig: &std::path::Path,
    endpoints: &str,
    extra: &[String],
) -> (i32, Value, String) {
    let mut args = vec![
        "diff".to_string(),
        format!("--cluster-name={CLUSTER}"),
        "--aws-region=us-west-2".into(),
        format!("--aws-api-endpoints={endpoints}"),
        format!("--kubeconfig={}", kubeconfig.display()),
        "--exit-code".into(),
        "-o".into(),
        "json".into(),
    ];
    args.extend_from_slice(extra);
    let out = tokio::task::spawn_blocking(move || {
        std::process::Command::new(BIN)
            .args(&args)
            .env_remove("RUST_LOG")
            .env("AWS_EC2_METADATA_DISABLED", "true")
            .env("AWS_ACCESS_KEY_ID", "testing")
            .env("AWS_SECRET_ACCESS_KEY", "testing")
            .output()
            .expect("run diff")
    })
    .await
    .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr).to_string();
    let report = serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("diff output is not JSON ({e}); stderr:\n{stderr}"));
    (out.status.code().unwrap_or(-1), report, stderr)
}

/// Every AWS action moto received during the run: reads only, all in the read-only policy.
pub(crate) fn assert_read_only_aws(c: &Cloud) -> Vec<String> {
    let actions = c.moto.recorded_actions();
    assert!(!actions.is_empty(), "moto recorded nothing");
    let policy = readonly_actions();
    for a in &actions {
        assert!(
            policy.contains(a),
            "diff sent {a}, which iam_policy_readonly.json does not allow (a write, or a read missing from the policy)"
        );
    }
    actions
}

/// The binary's requests to the API server (it authenticates; test clients do not): reads
/// only, each allowed by the shipped config/diff/role.yaml.
pub(crate) fn assert_read_only_kube(records: &[RequestRecord]) {
    let text = std::fs::read_to_string(crate::chart::repo().join("config/diff/role.yaml")).unwrap();
    let role: serde_yaml::Value = serde_yaml::from_str(&text).unwrap();
    let rules = rules_of(&role);
    let by_binary: Vec<&RequestRecord> = records.iter().filter(|r| r.user.is_some()).collect();
    assert!(!by_binary.is_empty(), "diff read nothing from the cluster");
    for r in by_binary {
        assert!(
            matches!(r.verb.as_str(), "get" | "list" | "watch"),
            "diff made `{}`",
            r.describe()
        );
        assert!(
            allowed(&rules, None, r),
            "config/diff/role.yaml does not allow `{}`",
            r.describe()
        );
    }
}

pub(crate) fn writes(report: &Value) -> Vec<(String, String, Vec<Value>)> {
    report["stacks"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|s| s["writes"].as_array().unwrap().clone())
        .map(|w| {
            (
                w["call"].as_str().unwrap().to_string(),
                w["resource"].as_str().unwrap().to_string(),
                w["changes"].as_array().cloned().unwrap_or_default(),
            )
        })
        .collect()
}

#[tokio::test]
async fn diff_shows_nothing_for_upstreams_state_then_exactly_the_drift() {
    let (c, h, vars) = setup().await;
    let backend = seed::backend_sg(&c).await;
    let shapes = shapes::all();
    for s in &shapes {
        seed::seed(&c, &h.client, &backend, &vars, s).await;
    }
    let kubeconfig = tempfile::NamedTempFile::new().unwrap();
    h.server.write_kubeconfig(kubeconfig.path()).unwrap();
    let k8s_before = versions(&h.client).await;

    // 1. In sync: exit 0, every stack says so.
    c.moto.start_recording().await;
    let (code, report, stderr) = run_diff(&c, kubeconfig.path()).await;
    assert_eq!(code, 0, "report: {report:#}\nstderr:\n{stderr}");
    assert_eq!(report["pendingWrites"], 0);
    let stacks = report["stacks"].as_array().unwrap();
    let of_kind = |k: &str| stacks.iter().filter(|s| s["kind"] == k).count();
    assert_eq!(of_kind("ingress"), shapes.len(), "{report:#}");
    // Every binding upstream left went through the TargetGroupBinding reconciler too.
    let bindings: usize = shapes.iter().map(|s| s.tgs.len()).sum();
    assert_eq!(of_kind("targetgroupbinding"), bindings, "{report:#}");
    for s in &shapes {
        let id = s.group().id();
        let st = stacks
            .iter()
            .find(|x| x["stack"] == id.as_str())
            .unwrap_or_else(|| panic!("no stack {id} in {report:#}"));
        assert_eq!(st["writes"], serde_json::json!([]), "{}: {st:#}", s.title);
        assert!(st.get("error").is_none(), "{}: {st:#}", s.title);
    }
    for st in stacks {
        assert_eq!(st["writes"], serde_json::json!([]), "{st:#}");
        assert!(st.get("error").is_none(), "{st:#}");
    }
    let actions = assert_read_only_aws(&c);
    assert!(actions.contains(&"elasticloadbalancing:DescribeRules".to_string()));
    assert_read_only_kube(&h.server.requests());
    assert_eq!(versions(&h.client).await, k8s_before, "objects written");

    // 2. Out of band: one target group's health-check interval, one deleted listener rule.
    let first = &shapes[0];
    let inv = inventory(c.elb.as_ref(), c.ec2.as_ref(), &first.group().id()).await;
    let (tg, _) = &inv.tgs[0];
    let interval = tg.health_check.interval_seconds.unwrap();
    let drifted = with_interval(tg, interval + 7);
    c.elb.modify_target_group(&tg.arn, &drifted).await.unwrap();
    let (rule, _) = &inv.rules[0];
    c.elb.delete_rule(&rule.arn).await.unwrap();
    let listener = inv
        .listeners
        .iter()
        .find(|l| l.port == first.rules[0].listener)
        .unwrap();

    // And a binding that lost its finalizer out of band.
    let tgbs: kube::Api<TargetGroupBinding> =
        kube::Api::namespaced(h.client.clone(), first.namespace);
    let binding = tgbs
        .list(&Default::default())
        .await
        .unwrap()
        .items
        .remove(0);
    let bname = binding.metadata.name.clone().unwrap();
    let patch = serde_json::json!({"metadata": {"finalizers": null}});
    tgbs.patch(
        &bname,
        &kube::api::PatchParams::default(),
        &kube::api::Patch::Merge(&patch),
    )
    .await
    .unwrap();
    let k8s_before = versions(&h.client).await;

    c.moto.start_recording().await;
    let (code, report, stderr) = run_diff(&c, kubeconfig.path()).await;
    assert_eq!(code, 2, "report: {report:#}\nstderr:\n{stderr}");
    let mut w = writes(&report);
    let binding_writes: Vec<_> = w
        .iter()
        .filter(|(call, _, _)| call.starts_with("kubernetes:"))
        .cloned()
        .collect();
    w.retain(|(call, _, _)| !call.starts_with("kubernetes:"));
    assert_eq!(binding_writes.len(), 1, "{report:#}");
    assert_eq!(binding_writes[0].0, "kubernetes:patch targetgroupbindings");
    assert!(binding_writes[0]
        .1
        .ends_with(&format!("/{}/targetgroupbindings/{bname}", first.namespace)));
    assert!(
        binding_writes[0].2[0]["after"]
            .as_str()
            .unwrap()
            .contains("elbv2.k8s.aws/resources"),
        "{report:#}"
    );
    assert_eq!(w.len(), 2, "exactly the two repairs: {report:#}");
    assert_eq!(w[0].0, "elasticloadbalancing:ModifyTargetGroup");
    assert_eq!(w[0].1, tg.arn);
    assert_eq!(
        w[0].2,
        vec![serde_json::json!({
            "field": "healthCheckIntervalSeconds",
            "before": (interval + 7).to_string(),
            "after": interval.to_string(),
        })],
        "{report:#}"
    );
    assert_eq!(w[1].0, "elasticloadbalancing:CreateRule");
    let fields: BTreeMap<&str, &Value> = w[1]
        .2
        .iter()
        .map(|c| (c["field"].as_str().unwrap(), &c["after"]))
        .collect();
    assert_eq!(fields["listener"].as_str().unwrap(), listener.arn);
    assert_eq!(fields["priority"], &Value::from(rule.priority.clone()));
    let stack_of = |id: String| {
        report["stacks"]
            .as_array()
            .unwrap()
            .iter()
            .find(|s| s["stack"] == id.as_str())
            .unwrap()
            .clone()
    };
    assert_eq!(
        stack_of(first.group().id())["writes"]
            .as_array()
            .unwrap()
            .len(),
        2
    );
    assert_read_only_aws(&c);
    assert_read_only_kube(&h.server.requests());

    // Nothing changed anywhere: the drift is still there, every object as it was.
    let after = inventory(c.elb.as_ref(), c.ec2.as_ref(), &first.group().id()).await;
    assert_eq!(
        after.tgs[0].0.health_check.interval_seconds,
        Some(interval + 7)
    );
    assert_eq!(after.rules.len(), inv.rules.len() - 1);
    assert_eq!(versions(&h.client).await, k8s_before, "objects written");
}
