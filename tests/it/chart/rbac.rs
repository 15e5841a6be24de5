//! RBAC is least-privilege by default: no Secrets cluster-wide, Secrets only by name in the
//! release namespace, leader election on Leases only; ConfigMap writes cluster-wide exactly as
//! upstream grants them (multi-cluster TargetGroupBindings). The opt-ins and opt-outs work.

use super::*;

/// (apiGroups, resources, verbs, resourceNames) of every rule of a Role or ClusterRole.
type Rule = (Vec<String>, Vec<String>, Vec<String>, Vec<String>);

fn rules(role: &Value) -> Vec<Rule> {
    role["rules"]
        .as_sequence()
        .expect("rules")
        .iter()
        .map(|r| {
            (
                strings(&r["apiGroups"]),
                strings(&r["resources"]),
                strings(&r["verbs"]),
                strings(&r["resourceNames"]),
            )
        })
        .collect()
}

fn cluster_role(docs: &[Value]) -> Vec<Rule> {
    rules(find(
        docs,
        "ClusterRole",
        "aws-load-balancer-controller-role",
    ))
}

fn touches(rule: &Rule, resource: &str) -> bool {
    rule.1.iter().any(|r| r == resource || r == "*")
        && rule.0.iter().any(|g| g.is_empty() || g == "*")
}

/// Upstream's ClusterRole rule for the target ConfigMaps of multi-cluster TargetGroupBindings.
const UPSTREAM_CONFIGMAP_VERBS: &[&str] = &["create", "get", "update", "delete"];

fn configmap_verbs(rules: &[Rule]) -> Vec<String> {
    let mut verbs: Vec<String> = rules
        .iter()
        .filter(|r| touches(r, "configmaps"))
        .flat_map(|r| r.2.clone())
        .collect();
    verbs.sort();
    verbs
}

#[test]
fn cluster_role_has_no_secrets_and_upstreams_configmap_writes_by_default() {
    let default_docs = docs(&render(&["--set", "clusterName=test"]));
    let ci = ci_values();
    let ci_docs = docs(&render(&["-f", &ci]));
    let mut upstream: Vec<String> = UPSTREAM_CONFIGMAP_VERBS
        .iter()
        .map(|v| v.to_string())
        .collect();
    upstream.sort();
    for docs in [&default_docs, &ci_docs] {
        let rules = cluster_role(docs);
        assert!(!rules.is_empty());
        // Multi-cluster bindings keep working after a swap from upstream's chart: the same
        // verbs, and nothing more (no list/watch/patch of every ConfigMap).
        assert_eq!(configmap_verbs(&rules), upstream);
        for r in &rules {
            assert!(!touches(r, "secrets"), "ClusterRole grants secrets: {r:?}");
            if touches(r, "configmaps") {
                assert!(r.3.is_empty() && r.1 == ["configmaps"], "{r:?}");
            }
            assert!(!r.2.iter().any(|v| v == "*"), "wildcard verb: {r:?}");
            assert!(!r.1.iter().any(|v| v == "*"), "wildcard resource: {r:?}");
        }
    }
    // Webhook configurations: only the chart's own, only get/list/watch/patch (for caBundle).
    let all = cluster_role(&default_docs);
    let admission: Vec<&Rule> = all
        .iter()
        .filter(|r| r.0.iter().any(|g| g == "admissionregistration.k8s.io"))
        .collect();
    assert_eq!(admission.len(), 1, "{admission:?}");
    assert_eq!(admission[0].3, ["aws-load-balancer-webhook"]);
    assert_eq!(admission[0].2, ["get", "list", "watch", "patch"]);
}

#[test]
fn namespaced_roles_are_narrow() {
    let docs = docs(&render(&["--set", "clusterName=test"]));
    let le = rules(find(
        &docs,
        "Role",
        "aws-load-balancer-controller-leader-election-role",
    ));
    for r in &le {
        assert_eq!(
            r.0,
            ["coordination.k8s.io"],
            "leader election touches more than leases: {r:?}"
        );
        assert_eq!(r.1, ["leases"]);
    }
    let named: Vec<&Rule> = le.iter().filter(|r| !r.3.is_empty()).collect();
    assert_eq!(named.len(), 1, "{le:?}");
    assert_eq!(named[0].3, ["aws-load-balancer-controller-leader"]);
    assert!(
        !container_args(&docs)
            .iter()
            .any(|a| a.starts_with("--leader-election-id")),
        "the default id is the controller's own default"
    );
    let tls = find(
        &docs,
        "Role",
        "aws-load-balancer-controller-webhook-tls-role",
    );
    assert_eq!(tls["metadata"]["namespace"], "kube-system");
    let tls = rules(tls);
    for r in &tls {
        assert_eq!(r.1, ["secrets"]);
        assert!(
            r.2.iter()
                .all(|v| ["get", "create", "update"].contains(&v.as_str())),
            "{r:?}"
        );
        // Only create (which RBAC cannot limit by name) is unnamed.
        if r.2 != ["create"] {
            assert_eq!(r.3, ["aws-load-balancer-tls"], "{r:?}");
        }
    }
    // Nothing else in the chart may read Secrets.
    let secret_roles = all_of(&docs, "Role")
        .into_iter()
        .filter(|r| rules(r).iter().any(|x| touches(x, "secrets")))
        .count();
    assert_eq!(secret_roles, 1);
}

#[test]
fn opt_ins_grant_what_they_say() {
    let docs = docs(&render(&[
        "--set",
        "clusterName=test",
        "--set",
        "clusterSecretsPermissions.allowAllSecrets=true",
        "--set",
        "multiClusterConfigMapsPermissions.allNamespaces=false",
        "--set",
        "multiClusterConfigMapsPermissions.namespaces={team-a,team-b}",
    ]));
    validate_k8s(&docs, "render with RBAC opt-ins");
    assert!(cluster_role(&docs)
        .iter()
        .any(|r| touches(r, "secrets") && r.2.contains(&"list".to_owned())));
    assert!(!cluster_role(&docs).iter().any(|r| touches(r, "configmaps")));
    for ns in ["team-a", "team-b"] {
        let role = docs
            .iter()
            .find(|d| d["kind"] == "Role" && d["metadata"]["namespace"] == ns)
            .unwrap_or_else(|| panic!("no configmaps Role in {ns}"));
        assert_eq!(rules(role)[0].1, ["configmaps"]);
        assert!(docs
            .iter()
            .any(|d| d["kind"] == "RoleBinding" && d["metadata"]["namespace"] == ns));
    }

    let docs = super::docs(&render(&[
        "--set",
        "clusterName=test",
        "--set",
        "multiClusterConfigMapsPermissions.allNamespaces=false",
    ]));
    assert!(configmap_verbs(&cluster_role(&docs)).is_empty());
    assert!(!all_of(&docs, "Role")
        .iter()
        .any(|r| rules(r).iter().any(|x| touches(x, "configmaps"))));

    let docs = super::docs(&render(&[
        "--set",
        "clusterName=test",
        "--set",
        "rbac.create=false",
    ]));
    assert!(all_of(&docs, "ClusterRole").is_empty() && all_of(&docs, "Role").is_empty());
}

#[test]
fn no_wildcards_anywhere_and_secrets_only_when_asked() {
    let ci = ci_values();
    for (args, all_secrets) in [
        (vec!["--set", "clusterName=test"], false),
        (vec!["-f", ci.as_str()], false),
        (
            vec![
                "--set",
                "clusterName=test",
                "--set",
                "clusterSecretsPermissions.allowAllSecrets=true",
            ],
            true,
        ),
    ] {
        let docs = docs(&render(&args));
        for kind in ["ClusterRole", "Role"] {
            for role in all_of(&docs, kind) {
                for r in rules(role) {
                    for list in [&r.0, &r.1, &r.2] {
                        assert!(
                            !list.iter().any(|x| x.contains('*')),
                            "{kind} wildcard: {r:?}"
                        );
                    }
                    if !touches(&r, "secrets") {
                        continue;
                    }
                    if kind == "ClusterRole" {
                        assert!(all_secrets, "ClusterRole grants secrets unasked: {r:?}");
                        assert_eq!(r.2, ["get", "list", "watch"], "{r:?}");
                    } else {
                        // Namespaced: only the TLS Secret by name, plus create (not nameable).
                        assert!(
                            r.2 == ["create"] || r.3 == ["aws-load-balancer-tls"],
                            "{r:?}"
                        );
                    }
                }
            }
        }
    }
}

#[test]
fn rbac_checker_follows_kubernetes_semantics() {
    use crate::support::rbac::{allowed, Rule};
    use kube_test_apiserver::RequestRecord;
    let rule = |g: &str, res: &str, verbs: &[&str], names: &[&str]| Rule {
        api_groups: vec![g.into()],
        resources: vec![res.into()],
        verbs: verbs.iter().map(|v| v.to_string()).collect(),
        resource_names: names.iter().map(|v| v.to_string()).collect(),
    };
    let req =
        |verb: &str, res: &str, sub: &str, ns: Option<&str>, name: Option<&str>| RequestRecord {
            verb: verb.into(),
            group: "".into(),
            version: "v1".into(),
            resource: res.into(),
            subresource: sub.into(),
            namespace: ns.map(String::from),
            name: name.map(String::from),
            user: None,
        };
    let named = [rule("", "secrets", &["get", "list"], &["tls"])];
    assert!(allowed(
        &named,
        Some("ns"),
        &req("get", "secrets", "", Some("ns"), Some("tls"))
    ));
    assert!(!allowed(
        &named,
        Some("ns"),
        &req("get", "secrets", "", Some("ns"), Some("other"))
    ));
    assert!(
        !allowed(
            &named,
            Some("ns"),
            &req("list", "secrets", "", Some("ns"), None)
        ),
        "list never matches resourceNames"
    );
    assert!(
        !allowed(
            &named,
            Some("ns"),
            &req("get", "secrets", "", Some("other"), Some("tls"))
        ),
        "a Role stays in its namespace"
    );
    assert!(allowed(
        &named,
        None,
        &req("get", "secrets", "", Some("any"), Some("tls"))
    ));
    let pods = [rule("", "pods", &["patch"], &[])];
    assert!(
        !allowed(
            &pods,
            None,
            &req("patch", "pods", "status", Some("a"), Some("p"))
        ),
        "subresources are separate"
    );
    assert!(allowed(
        &[rule("", "pods/status", &["patch"], &[])],
        None,
        &req("patch", "pods", "status", None, Some("p"))
    ));
    assert!(allowed(
        &[rule("", "*/status", &["patch"], &[])],
        None,
        &req("patch", "pods", "status", None, Some("p"))
    ));
    assert!(
        !allowed(
            &[rule("apps", "pods", &["patch"], &[])],
            None,
            &req("patch", "pods", "", None, Some("p"))
        ),
        "groups must match"
    );
    assert!(allowed(
        &[rule("*", "*", &["*"], &[])],
        None,
        &req("delete", "pods", "status", None, Some("p"))
    ));
}

/// A custom Lease name reaches both the flag and the Role, so that replica can lead.
#[test]
fn leader_election_role_follows_the_lease_name() {
    let docs = docs(&render(&[
        "--set",
        "clusterName=test",
        "--set",
        "leaderElectionId=team-a-albc",
    ]));
    assert!(
        container_args(&docs).contains(&"--leader-election-id=team-a-albc".to_string()),
        "{:?}",
        container_args(&docs)
    );
    let le = rules(find(
        &docs,
        "Role",
        "aws-load-balancer-controller-leader-election-role",
    ));
    let named: Vec<&Rule> = le.iter().filter(|r| !r.3.is_empty()).collect();
    assert_eq!(named.len(), 1, "{le:?}");
    assert_eq!(named[0].3, ["team-a-albc"]);
    assert_eq!(named[0].2, ["get", "update", "patch"]);
}

/// Upstream's chart has exactly one Secret grant for the controller: `get, list, watch` on
/// `secrets` cluster-wide, only with `clusterSecretsPermissions.allowAllSecrets` (default false);
/// upstream's config/rbac has none. OIDC Secrets are otherwise granted by a namespaced Role the
/// user makes (e2e_oidc checks the controller needs nothing more).
#[test]
fn secret_grants_are_upstreams() {
    let default = docs(&render(&["--set", "clusterName=test"]));
    assert!(!cluster_role(&default).iter().any(|r| touches(r, "secrets")));
    let all = docs(&render(&[
        "--set",
        "clusterName=test",
        "--set",
        "clusterSecretsPermissions.allowAllSecrets=true",
    ]));
    let secret_rules: Vec<Rule> = cluster_role(&all)
        .into_iter()
        .filter(|r| touches(r, "secrets"))
        .collect();
    let s = |v: &[&str]| v.iter().map(|x| x.to_string()).collect::<Vec<_>>();
    assert_eq!(
        secret_rules,
        vec![(
            s(&[""]),
            s(&["secrets"]),
            s(&["get", "list", "watch"]),
            vec![]
        )]
    );
    let values: Value =
        serde_yaml::from_str(&std::fs::read_to_string(chart_dir().join("values.yaml")).unwrap())
            .unwrap();
    assert_eq!(
        values["clusterSecretsPermissions"]["allowAllSecrets"],
        Value::Bool(false)
    );
    let kustomized = std::fs::read_to_string(repo().join("config/rbac/role.yaml")).unwrap();
    assert!(
        !kustomized.contains("secrets"),
        "config/rbac grants Secrets"
    );
}
