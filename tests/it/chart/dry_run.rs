//! `dryRun: true`: a shadow beside the owning controller. The chart passes `--dry-run` and a Lease
//! of its own, renders no webhook configuration, and grants the service account reads only (its
//! own Lease aside; Warning events only with `dryRunEvents`).

use super::*;
use crate::support::rbac::grants_for;

const SA: (&str, &str) = ("kube-system", "aws-load-balancer-controller");

fn args_of(docs: &[Value]) -> Vec<String> {
    let dep = docs
        .iter()
        .find(|d| d["kind"] == "Deployment")
        .expect("a Deployment");
    dep["spec"]["template"]["spec"]["containers"][0]["args"]
        .as_sequence()
        .unwrap()
        .iter()
        .map(|a| a.as_str().unwrap().to_string())
        .collect()
}

fn writes_granted(docs: &[Value]) -> Vec<String> {
    let g = grants_for(docs, SA.0, SA.1);
    let all = g
        .cluster
        .iter()
        .chain(g.namespaced.iter().flat_map(|(_, r)| r.iter()));
    all.filter(|r| r.resources.iter().all(|x| x != "leases"))
        .flat_map(|r| {
            r.verbs
                .iter()
                .filter(|v| !matches!(v.as_str(), "get" | "list" | "watch"))
                .map(move |v| format!("{v} {:?}", r.resources))
        })
        .collect()
}

#[test]
fn dry_run_renders_a_read_only_shadow() {
    let shadow = docs_of(&[]);
    let args = args_of(&shadow);
    assert!(args.contains(&"--dry-run=true".to_string()), "{args:?}");
    assert!(
        args.contains(&"--leader-election-id=aws-load-balancer-controller-dry-run".to_string()),
        "{args:?}"
    );
    for d in &shadow {
        let kind = d["kind"].as_str().unwrap_or("");
        assert!(
            !kind.ends_with("WebhookConfiguration"),
            "dryRun renders {kind}"
        );
    }
    assert_eq!(writes_granted(&shadow), Vec::<String>::new());
    let g = grants_for(&shadow, SA.0, SA.1);
    let lease = g
        .namespaced
        .iter()
        .flat_map(|(_, r)| r.iter())
        .find(|r| r.resources.iter().any(|x| x == "leases") && !r.resource_names.is_empty())
        .expect("a rule for the Lease");
    assert_eq!(
        lease.resource_names,
        ["aws-load-balancer-controller-dry-run"]
    );

    let with_events = docs_of(&["--set", "dryRunEvents=true"]);
    assert_eq!(
        writes_granted(&with_events),
        ["create [\"events\"]", "patch [\"events\"]"]
    );
    assert!(args_of(&with_events).contains(&"--dry-run-events=true".to_string()));

    // The owning controller's chart is unchanged: webhooks, its Lease, write access.
    let normal = docs(&render(&["--set", "clusterName=e2e"]));
    assert!(normal
        .iter()
        .any(|d| d["kind"] == "MutatingWebhookConfiguration"));
    assert!(!args_of(&normal).iter().any(|a| a.starts_with("--dry-run")));
    assert!(!writes_granted(&normal).is_empty());
}

fn docs_of(extra: &[&str]) -> Vec<Value> {
    let mut args = vec!["--set", "clusterName=e2e", "--set", "dryRun=true"];
    args.extend_from_slice(extra);
    docs(&render(&args))
}
