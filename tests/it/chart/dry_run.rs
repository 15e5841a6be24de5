//! `dryRun: true`: a shadow beside the owning controller. The chart passes `--dry-run` and a Lease
//! of its own, renders no webhook Service or configuration, no IngressClass and no certificate,
//! grants its own service account reads only (its own Lease aside; Warning events only with
//! `dryRunEvents`), and installed as `albc-shadow` with the owner's values it shares no object
//! with upstream's release (upstream's chart v3.5.0, tests/it/testdata/upstream-chart-v3.5.0) or
//! with this chart's.

use super::*;
use crate::support::rbac::grants_for;
use std::collections::BTreeSet;

/// The service account of the shadow rendered as release `aws-load-balancer-controller`.
const SA: (&str, &str) = ("kube-system", "aws-load-balancer-controller-dry-run");
/// The service account the owning controller's render uses.
const OWNER_SA: (&str, &str) = ("kube-system", "aws-load-balancer-controller");

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

fn writes_granted(docs: &[Value], sa: (&str, &str)) -> Vec<String> {
    let g = grants_for(docs, sa.0, sa.1);
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

/// The names of the Lease the service account may get and update.
fn lease_names(docs: &[Value], sa: (&str, &str)) -> Vec<String> {
    let g = grants_for(docs, sa.0, sa.1);
    let lease = g
        .namespaced
        .iter()
        .flat_map(|(_, r)| r.iter())
        .find(|r| r.resources.iter().any(|x| x == "leases") && !r.resource_names.is_empty())
        .expect("a rule for the Lease");
    lease.resource_names.clone()
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
    assert_eq!(writes_granted(&shadow, SA), Vec::<String>::new());
    assert_eq!(
        lease_names(&shadow, SA),
        ["aws-load-balancer-controller-dry-run"]
    );
    // Nothing is granted to the owner's service account.
    let owner = grants_for(&shadow, OWNER_SA.0, OWNER_SA.1);
    assert!(owner.cluster.is_empty() && owner.namespaced.is_empty());

    let with_events = docs_of(&["--set", "dryRunEvents=true"]);
    assert_eq!(
        writes_granted(&with_events, SA),
        ["create [\"events\"]", "patch [\"events\"]"]
    );
    assert!(args_of(&with_events).contains(&"--dry-run-events=true".to_string()));

    // The owning controller's chart is unchanged: webhooks, its Lease, write access.
    let normal = docs(&render(&["--set", "clusterName=e2e"]));
    assert!(normal
        .iter()
        .any(|d| d["kind"] == "MutatingWebhookConfiguration"));
    assert!(!args_of(&normal).iter().any(|a| a.starts_with("--dry-run")));
    assert!(!writes_granted(&normal, OWNER_SA).is_empty());
}

#[test]
fn dry_run_renders_nothing_of_the_owners_and_names_its_own() {
    // Every certificate source: none renders a certificate object or a webhook Service.
    for tls in [
        vec![],
        vec![
            "--set",
            "webhookTLS.caCert=CA",
            "--set",
            "webhookTLS.cert=CERT",
            "--set",
            "webhookTLS.key=KEY",
        ],
        vec!["--set", "enableCertManager=true"],
    ] {
        let shadow = docs_of(&tls);
        let kinds: Vec<&str> = shadow.iter().filter_map(|d| d["kind"].as_str()).collect();
        for kind in [
            "MutatingWebhookConfiguration",
            "ValidatingWebhookConfiguration",
            "IngressClass",
            "IngressClassParams",
            "Secret",
            "Issuer",
            "Certificate",
        ] {
            assert!(!kinds.contains(&kind), "dryRun {tls:?} renders a {kind}");
        }
        let services: Vec<&Value> = all_of(&shadow, "Service");
        assert!(services.is_empty(), "dryRun {tls:?} renders {services:?}");
        // The pods mount no certificate (the Secret of that name is the owner's): given the
        // managed certificate's settings, the binary serves a throwaway one under --dry-run.
        let deploys = all_of(&shadow, "Deployment");
        let pod = &deploys[0]["spec"]["template"]["spec"];
        assert!(pod["volumes"].is_null(), "{tls:?}: {:?}", pod["volumes"]);
        let env = &pod["containers"][0]["env"];
        assert!(
            env.as_sequence()
                .is_some_and(|e| e.iter().any(|v| v["name"] == "AWS_LBC_WEBHOOK_TLS_SECRET")),
            "{tls:?}: {env:?}"
        );
    }

    // Names: "-dry-run" on the full name and the service account, also where the values name
    // them as the owner's release does.
    let shadow = docs_of(&[]);
    find(
        &shadow,
        "Deployment",
        "aws-load-balancer-controller-dry-run",
    );
    find(
        &shadow,
        "ServiceAccount",
        "aws-load-balancer-controller-dry-run",
    );
    find(
        &shadow,
        "ClusterRole",
        "aws-load-balancer-controller-dry-run-role",
    );
    find(
        &shadow,
        "ClusterRoleBinding",
        "aws-load-balancer-controller-dry-run-rolebinding",
    );
    let shadow = docs_of(&[
        "--set",
        "serviceAccount.name=aws-load-balancer-controller",
        "--set",
        "fullnameOverride=aws-load-balancer-controller",
    ]);
    find(
        &shadow,
        "Deployment",
        "aws-load-balancer-controller-dry-run",
    );
    find(
        &shadow,
        "ServiceAccount",
        "aws-load-balancer-controller-dry-run",
    );
    assert_eq!(writes_granted(&shadow, SA), Vec::<String>::new());
    // serviceAccount.create=false: the shadow still runs as its own (existing) account.
    let shadow = docs_of(&[
        "--set",
        "serviceAccount.create=false",
        "--set",
        "serviceAccount.name=aws-load-balancer-controller",
    ]);
    assert!(all_of(&shadow, "ServiceAccount").is_empty());
    let deploys = all_of(&shadow, "Deployment");
    assert_eq!(
        deploys[0]["spec"]["template"]["spec"]["serviceAccountName"],
        SA.1
    );
    assert_eq!(
        lease_names(&shadow, SA),
        ["aws-load-balancer-controller-dry-run"]
    );

    // A custom leader-election id: the shadow takes "<id>-dry-run", flag and Role alike.
    let shadow = docs_of(&["--set", "leaderElectionId=my-lease"]);
    assert!(
        args_of(&shadow).contains(&"--leader-election-id=my-lease-dry-run".to_string()),
        "{:?}",
        args_of(&shadow)
    );
    assert_eq!(lease_names(&shadow, SA), ["my-lease-dry-run"]);
}

/// (kind, namespace, name) of every object; one without a namespace is in the release's.
fn identities(docs: &[Value]) -> BTreeSet<(String, String, String)> {
    docs.iter()
        .map(|d| {
            let field = |v: &Value| v.as_str().unwrap_or_default().to_string();
            let ns = d["metadata"]["namespace"].as_str().unwrap_or("kube-system");
            (
                field(&d["kind"]),
                ns.to_string(),
                field(&d["metadata"]["name"]),
            )
        })
        .collect()
}

/// `helm template aws-load-balancer-controller <upstream's chart v3.5.0> -n kube-system`.
fn upstream_release(args: &[&str]) -> Vec<Value> {
    let out = run(Command::new(helm())
        .arg("template")
        .arg("aws-load-balancer-controller")
        .arg(repo().join("tests/it/testdata/upstream-chart-v3.5.0"))
        .args(["--namespace", "kube-system"])
        .args(args));
    assert!(
        out.status.success(),
        "upstream's chart does not render with {args:?}:\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    docs(&String::from_utf8(out.stdout).expect("UTF-8"))
}

#[test]
fn the_shadow_installs_beside_upstreams_release_and_this_charts() {
    // The operator's command: `helm install albc-shadow ... -f values.yaml --set dryRun=true`
    // beside the release `aws-load-balancer-controller`, for a few shapes of values.yaml.
    for values in [
        vec![],
        vec![
            "--set",
            "serviceAccount.create=false",
            "--set",
            "serviceAccount.name=aws-load-balancer-controller",
        ],
        vec!["--set", "serviceAccount.name=aws-load-balancer-controller"],
        vec!["--set", "fullnameOverride=aws-load-balancer-controller"],
        vec!["--set", "enableCertManager=true"],
        vec![
            "--set",
            "webhookTLS.caCert=CA",
            "--set",
            "webhookTLS.cert=CERT",
            "--set",
            "webhookTLS.key=KEY",
        ],
        vec![
            "--set",
            "serviceMonitor.enabled=true",
            "--set",
            "podDisruptionBudget.maxUnavailable=1",
        ],
    ] {
        let mut args = vec!["--set", "clusterName=prod"];
        args.extend(values.iter().copied());
        let mut shadow_args = args.clone();
        shadow_args.extend(["--set", "dryRun=true"]);
        let shadow = docs(
            &helm_template_as("albc-shadow", &shadow_args)
                .unwrap_or_else(|e| panic!("the shadow does not render with {values:?}:\n{e}")),
        );
        let ours = identities(&shadow);
        let upstream = upstream_release(&args);
        find(
            &upstream,
            "ClusterRole",
            "aws-load-balancer-controller-role",
        );
        let owners = [
            ("upstream's release", upstream),
            ("this chart's release", docs(&render(&args))),
        ];
        for (owner, objects) in &owners {
            let theirs = identities(objects);
            let shared: Vec<&(String, String, String)> = theirs.intersection(&ours).collect();
            assert!(
                shared.is_empty(),
                "with {values:?} the shadow renders objects of {owner}: {shared:?}"
            );
            // Nor does it run as the owner's service account or take its Lease.
            let pod = |d: &[Value]| all_of(d, "Deployment")[0]["spec"]["template"]["spec"].clone();
            assert_ne!(
                pod(&shadow)["serviceAccountName"],
                pod(objects)["serviceAccountName"],
                "{values:?}, {owner}"
            );
            let lease = |d: &[Value]| {
                args_of(d)
                    .into_iter()
                    .find_map(|a| a.strip_prefix("--leader-election-id=").map(str::to_owned))
                    .unwrap_or_else(|| "aws-load-balancer-controller-leader".to_string())
            };
            assert_ne!(lease(&shadow), lease(objects), "{values:?}, {owner}");
        }
    }
}

fn docs_of(extra: &[&str]) -> Vec<Value> {
    let mut args = vec!["--set", "clusterName=e2e", "--set", "dryRun=true"];
    args.extend_from_slice(extra);
    docs(&render(&args))
}
