//! Kubernetes RBAC evaluation: whether Roles and ClusterRoles bound to a service account allow a
//! request (the server enforces it with [`crate::Options::enforce_rbac`]; tests also use it on
//! rendered manifests), and which granted permissions no request used.
//!
//! Semantics follow the RBAC authorizer: a rule matches when its apiGroups, resources (`res`,
//! `res/sub`, `*` or `*/sub`) and verbs match, and, when it lists resourceNames, the request
//! names one of them (so create, and list or watch without a `metadata.name` field selector,
//! never match a named rule). A Role's rules apply
//! only to requests in its own namespace; a ClusterRole bound cluster-wide applies everywhere.

use crate::audit::RequestRecord;
use serde_json::Value;

/// One PolicyRule.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Rule {
    pub api_groups: Vec<String>,
    pub resources: Vec<String>,
    pub verbs: Vec<String>,
    pub resource_names: Vec<String>,
}

/// The rules one service account is granted: ClusterRole rules (cluster-wide) and Role rules
/// per namespace.
#[derive(Clone, Debug, Default)]
pub struct Grants {
    pub cluster: Vec<Rule>,
    /// (namespace, rules of one Role in it)
    pub namespaced: Vec<(String, Vec<Rule>)>,
}

fn strings(v: &Value) -> Vec<String> {
    v.as_array()
        .map(|s| {
            s.iter()
                .filter_map(|x| x.as_str().map(str::to_owned))
                .collect()
        })
        .unwrap_or_default()
}

/// The rules of a rendered Role or ClusterRole.
pub fn rules_of(role: &Value) -> Vec<Rule> {
    role["rules"]
        .as_array()
        .map(|rules| {
            rules
                .iter()
                .map(|r| Rule {
                    api_groups: strings(&r["apiGroups"]),
                    resources: strings(&r["resources"]),
                    verbs: strings(&r["verbs"]),
                    resource_names: strings(&r["resourceNames"]),
                })
                .collect()
        })
        .unwrap_or_default()
}

/// Every ClusterRole and Role among `docs` (objects of any kind, as stored or rendered) that a
/// (Cluster)RoleBinding grants to the service account `namespace/name`.
pub fn grants_for(docs: &[Value], sa_namespace: &str, sa_name: &str) -> Grants {
    let binds_sa = |b: &Value| {
        b["subjects"].as_array().is_some_and(|subjects| {
            subjects.iter().any(|s| {
                s["kind"] == "ServiceAccount"
                    && s["name"] == sa_name
                    && s["namespace"] == sa_namespace
            })
        })
    };
    let role = |kind: &str, name: &Value, ns: Option<&Value>| {
        docs.iter().find(|d| {
            d["kind"] == kind
                && &d["metadata"]["name"] == name
                && ns.is_none_or(|ns| &d["metadata"]["namespace"] == ns)
        })
    };
    let mut grants = Grants::default();
    for b in docs.iter().filter(|d| binds_sa(d)) {
        let ref_kind = b["roleRef"]["kind"].as_str().unwrap_or_default();
        let ref_name = &b["roleRef"]["name"];
        match (b["kind"].as_str(), ref_kind) {
            (Some("ClusterRoleBinding"), "ClusterRole") => {
                if let Some(r) = role("ClusterRole", ref_name, None) {
                    grants.cluster.extend(rules_of(r));
                }
            }
            (Some("RoleBinding"), kind) => {
                let ns = &b["metadata"]["namespace"];
                let found = if kind == "Role" {
                    role("Role", ref_name, Some(ns))
                } else {
                    role("ClusterRole", ref_name, None)
                };
                if let (Some(r), Some(ns)) = (found, ns.as_str()) {
                    grants.namespaced.push((ns.to_string(), rules_of(r)));
                }
            }
            _ => {}
        }
    }
    grants
}

fn resource_matches(rule: &Rule, r: &RequestRecord) -> bool {
    let full = if r.subresource.is_empty() {
        r.resource.clone()
    } else {
        format!("{}/{}", r.resource, r.subresource)
    };
    rule.resources.iter().any(|res| {
        // "*" covers every resource and subresource; "*/sub" one subresource of any resource.
        res == "*"
            || res == &full
            || (!r.subresource.is_empty() && res == &format!("*/{}", r.subresource))
    })
}

/// Whether one rule allows the request.
pub fn rule_allows(rule: &Rule, r: &RequestRecord) -> bool {
    rule.api_groups.iter().any(|g| g == "*" || g == &r.group)
        && resource_matches(rule, r)
        && rule.verbs.iter().any(|v| v == "*" || v == &r.verb)
        && (rule.resource_names.is_empty()
            || r.name
                .as_ref()
                .is_some_and(|n| rule.resource_names.contains(n)))
}

/// Whether `rules` applied at `scope` allow the request: cluster rules (`scope` None) allow it
/// anywhere; a Role's rules only inside its namespace.
pub fn allowed(rules: &[Rule], scope: Option<&str>, r: &RequestRecord) -> bool {
    let in_scope = match scope {
        None => true,
        Some(ns) => r.namespace.as_deref() == Some(ns),
    };
    in_scope && rules.iter().any(|rule| rule_allows(rule, r))
}

impl Grants {
    /// Whether any granted rule allows the request.
    pub fn allows(&self, r: &RequestRecord) -> bool {
        allowed(&self.cluster, None, r)
            || self
                .namespaced
                .iter()
                .any(|(ns, rules)| allowed(rules, Some(ns), r))
    }

    /// Every granted permission as `scope verb group/resource[names]` that no request in
    /// `records` used, sorted: the permissions a flow did not exercise.
    pub fn unexercised(&self, records: &[RequestRecord]) -> Vec<String> {
        let mut out = Vec::new();
        let scoped = std::iter::once((None, &self.cluster)).chain(
            self.namespaced
                .iter()
                .map(|(ns, rules)| (Some(ns.as_str()), rules)),
        );
        for (scope, rules) in scoped {
            for rule in rules {
                for group in &rule.api_groups {
                    for resource in &rule.resources {
                        for verb in &rule.verbs {
                            let single = Rule {
                                api_groups: vec![group.clone()],
                                resources: vec![resource.clone()],
                                verbs: vec![verb.clone()],
                                resource_names: rule.resource_names.clone(),
                            };
                            let used = records
                                .iter()
                                .any(|r| allowed(std::slice::from_ref(&single), scope, r));
                            if !used {
                                let names = if rule.resource_names.is_empty() {
                                    String::new()
                                } else {
                                    format!("[{}]", rule.resource_names.join(","))
                                };
                                let g = if group.is_empty() { "core" } else { group };
                                out.push(format!(
                                    "{} {verb} {g}/{resource}{names}",
                                    scope.unwrap_or("cluster")
                                ));
                            }
                        }
                    }
                }
            }
        }
        out.sort();
        out.dedup();
        out
    }
}

/// The service account a user name denotes: `system:serviceaccount:<namespace>:<name>`.
pub fn service_account(user: &str) -> Option<(&str, &str)> {
    user.strip_prefix("system:serviceaccount:")?.split_once(':')
}

/// The real API server's refusal text for a request RBAC does not allow.
pub fn forbidden_message(user: &str, r: &RequestRecord) -> String {
    let resource = if r.subresource.is_empty() {
        r.resource.clone()
    } else {
        format!("{}/{}", r.resource, r.subresource)
    };
    let what = if r.group.is_empty() {
        r.resource.clone()
    } else {
        format!("{}.{}", r.resource, r.group)
    };
    let named = r
        .name
        .as_ref()
        .map(|n| format!("{what} \"{n}\" is forbidden"))
        .unwrap_or_else(|| format!("{what} is forbidden"));
    let scope = match &r.namespace {
        Some(ns) => format!("in the namespace \"{ns}\""),
        None => "at the cluster scope".to_string(),
    };
    format!(
        "{named}: User \"{user}\" cannot {} resource \"{resource}\" in API group \"{}\" {scope}",
        r.verb, r.group
    )
}
