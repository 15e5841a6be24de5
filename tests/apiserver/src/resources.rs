//! The resource table: which (group, version, plural) the server serves, with kind, scope and
//! subresources. Built-in kinds are listed here; custom resources are added when a CRD is stored.

use serde_json::Value;
use std::collections::BTreeMap;
use std::sync::Arc;

/// How a resource's objects are kept.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Stored {
    /// Under the resource's own (group, plural), as written (any version).
    AsServed,
    /// As core `v1` Events (`events.k8s.io` Events: one table, two APIs, see `events`).
    AsCoreEvent,
}

/// One served resource at one version.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ResourceDef {
    pub group: String,
    pub version: String,
    pub plural: String,
    pub singular: String,
    pub kind: String,
    pub namespaced: bool,
    pub status_subresource: bool,
    pub short_names: Vec<String>,
    /// True for custom resources: they refuse strategic merge patches like the real server.
    pub custom: bool,
    pub stored: Stored,
}

impl ResourceDef {
    pub fn api_version(&self) -> String {
        if self.group.is_empty() {
            self.version.clone()
        } else {
            format!("{}/{}", self.group, self.version)
        }
    }

    /// `pods` or `ingresses.networking.k8s.io`, as used in error messages.
    pub fn qualified(&self) -> String {
        if self.group.is_empty() {
            self.plural.clone()
        } else {
            format!("{}.{}", self.plural, self.group)
        }
    }

    /// Objects are stored once per (group, plural), whatever version wrote them;
    /// `events.k8s.io` Events with the core ones.
    pub fn storage_key(&self) -> StorageKey {
        match self.stored {
            Stored::AsServed => (self.group.clone(), self.plural.clone()),
            Stored::AsCoreEvent => (String::new(), "events".into()),
        }
    }

    /// A stored object as this resource serves it (the same object when stored as served).
    pub fn served(&self, stored: &Arc<Value>) -> Arc<Value> {
        match self.stored {
            Stored::AsServed => stored.clone(),
            Stored::AsCoreEvent => Arc::new(crate::events::core_to_events(stored)),
        }
    }

    /// An object of this resource as it is stored.
    pub fn to_stored(&self, served: Value) -> Value {
        match self.stored {
            Stored::AsServed => served,
            Stored::AsCoreEvent => crate::events::events_to_core(&served),
        }
    }
}

pub type StorageKey = (String, String);

fn builtin(
    group: &str,
    version: &str,
    plural: &str,
    kind: &str,
    namespaced: bool,
    status: bool,
    short: &[&str],
) -> ResourceDef {
    ResourceDef {
        group: group.into(),
        version: version.into(),
        plural: plural.into(),
        singular: kind.to_lowercase(),
        kind: kind.into(),
        namespaced,
        status_subresource: status,
        short_names: short.iter().map(|s| s.to_string()).collect(),
        custom: false,
        stored: if group == "events.k8s.io" && plural == "events" {
            Stored::AsCoreEvent
        } else {
            Stored::AsServed
        },
    }
}

/// The built-in kinds the server knows from the start.
pub fn builtins() -> Vec<ResourceDef> {
    vec![
        builtin("", "v1", "namespaces", "Namespace", false, true, &["ns"]),
        builtin("", "v1", "pods", "Pod", true, true, &["po"]),
        builtin("", "v1", "services", "Service", true, true, &["svc"]),
        builtin("", "v1", "endpoints", "Endpoints", true, false, &["ep"]),
        builtin("", "v1", "nodes", "Node", false, true, &["no"]),
        builtin("", "v1", "configmaps", "ConfigMap", true, false, &["cm"]),
        builtin("", "v1", "secrets", "Secret", true, false, &[]),
        builtin("", "v1", "events", "Event", true, false, &["ev"]),
        builtin(
            "",
            "v1",
            "serviceaccounts",
            "ServiceAccount",
            true,
            false,
            &["sa"],
        ),
        builtin(
            "events.k8s.io",
            "v1",
            "events",
            "Event",
            true,
            false,
            &["ev"],
        ),
        builtin(
            "discovery.k8s.io",
            "v1",
            "endpointslices",
            "EndpointSlice",
            true,
            false,
            &[],
        ),
        builtin(
            "coordination.k8s.io",
            "v1",
            "leases",
            "Lease",
            true,
            false,
            &[],
        ),
        builtin(
            "networking.k8s.io",
            "v1",
            "ingresses",
            "Ingress",
            true,
            true,
            &["ing"],
        ),
        builtin(
            "networking.k8s.io",
            "v1",
            "ingressclasses",
            "IngressClass",
            false,
            false,
            &[],
        ),
        builtin(
            "admissionregistration.k8s.io",
            "v1",
            "mutatingwebhookconfigurations",
            "MutatingWebhookConfiguration",
            false,
            false,
            &[],
        ),
        builtin(
            "admissionregistration.k8s.io",
            "v1",
            "validatingwebhookconfigurations",
            "ValidatingWebhookConfiguration",
            false,
            false,
            &[],
        ),
        // The kinds a Helm chart of this project (and upstream's) renders, so `helm install`
        // and `helm upgrade` run against this server as against a cluster.
        builtin(
            "apps",
            "v1",
            "deployments",
            "Deployment",
            true,
            true,
            &["deploy"],
        ),
        builtin(
            "apps",
            "v1",
            "replicasets",
            "ReplicaSet",
            true,
            true,
            &["rs"],
        ),
        builtin("apps", "v1", "daemonsets", "DaemonSet", true, true, &["ds"]),
        builtin(
            "apps",
            "v1",
            "statefulsets",
            "StatefulSet",
            true,
            true,
            &["sts"],
        ),
        builtin(
            "rbac.authorization.k8s.io",
            "v1",
            "roles",
            "Role",
            true,
            false,
            &[],
        ),
        builtin(
            "rbac.authorization.k8s.io",
            "v1",
            "rolebindings",
            "RoleBinding",
            true,
            false,
            &[],
        ),
        builtin(
            "rbac.authorization.k8s.io",
            "v1",
            "clusterroles",
            "ClusterRole",
            false,
            false,
            &[],
        ),
        builtin(
            "rbac.authorization.k8s.io",
            "v1",
            "clusterrolebindings",
            "ClusterRoleBinding",
            false,
            false,
            &[],
        ),
        builtin(
            "policy",
            "v1",
            "poddisruptionbudgets",
            "PodDisruptionBudget",
            true,
            true,
            &["pdb"],
        ),
        builtin(
            "autoscaling",
            "v2",
            "horizontalpodautoscalers",
            "HorizontalPodAutoscaler",
            true,
            true,
            &["hpa"],
        ),
        builtin(
            "apiextensions.k8s.io",
            "v1",
            "customresourcedefinitions",
            "CustomResourceDefinition",
            false,
            true,
            &["crd", "crds"],
        ),
    ]
}

/// Why a CRD cannot be served; the text goes into a 422 Invalid.
pub fn crd_resources(crd: &Value) -> Result<Vec<ResourceDef>, String> {
    let spec = crd.get("spec").ok_or("spec: Required value")?;
    let s = |v: Option<&Value>| v.and_then(Value::as_str).unwrap_or("").to_string();
    let group = s(spec.get("group"));
    let names = spec.get("names").ok_or("spec.names: Required value")?;
    let plural = s(names.get("plural"));
    let kind = s(names.get("kind"));
    if group.is_empty() || plural.is_empty() || kind.is_empty() {
        return Err("spec.group, spec.names.plural and spec.names.kind are required".into());
    }
    let name = s(crd.pointer("/metadata/name"));
    if name != format!("{plural}.{group}") {
        return Err(format!(
            "metadata.name: Invalid value: \"{name}\": must be spec.names.plural+\".\"+spec.group"
        ));
    }
    let namespaced = match s(spec.get("scope")).as_str() {
        "Namespaced" => true,
        "Cluster" => false,
        other => return Err(format!("spec.scope: Unsupported value: \"{other}\"")),
    };
    let singular = match s(names.get("singular")) {
        x if x.is_empty() => kind.to_lowercase(),
        x => x,
    };
    let short_names: Vec<String> = names
        .get("shortNames")
        .and_then(Value::as_array)
        .map(|a| {
            a.iter()
                .filter_map(|v| v.as_str().map(String::from))
                .collect()
        })
        .unwrap_or_default();
    let versions = spec
        .get("versions")
        .and_then(Value::as_array)
        .ok_or("spec.versions: Required value")?;
    let mut out = Vec::new();
    for v in versions {
        if v.get("served").and_then(Value::as_bool) == Some(false) {
            continue;
        }
        out.push(ResourceDef {
            group: group.clone(),
            version: s(v.get("name")),
            plural: plural.clone(),
            singular: singular.clone(),
            kind: kind.clone(),
            namespaced,
            status_subresource: v.pointer("/subresources/status").is_some(),
            short_names: short_names.clone(),
            custom: true,
            stored: Stored::AsServed,
        });
    }
    if out.is_empty() {
        return Err("spec.versions: Invalid value: must have at least one served version".into());
    }
    Ok(out)
}

/// All served resources, looked up by (group, version, plural).
#[derive(Debug, Default, Clone)]
pub struct ResourceTable {
    defs: BTreeMap<(String, String, String), ResourceDef>,
    /// Group order for discovery: built-ins first, then CRD groups in registration order.
    group_order: Vec<String>,
}

impl ResourceTable {
    pub fn new() -> Self {
        let mut t = ResourceTable::default();
        for d in builtins() {
            t.insert(d);
        }
        t
    }

    pub fn insert(&mut self, d: ResourceDef) {
        if !self.group_order.contains(&d.group) {
            self.group_order.push(d.group.clone());
        }
        self.defs
            .insert((d.group.clone(), d.version.clone(), d.plural.clone()), d);
    }

    /// Forgets every version of a custom resource (CRD deleted or replaced).
    pub fn remove_custom(&mut self, group: &str, plural: &str) {
        self.defs
            .retain(|(g, _, p), d| !(d.custom && g == group && p == plural));
        let still = self.defs.keys().any(|(g, _, _)| g == group);
        if !still {
            self.group_order.retain(|g| g != group);
        }
    }

    pub fn get(&self, group: &str, version: &str, plural: &str) -> Option<&ResourceDef> {
        self.defs
            .get(&(group.to_string(), version.to_string(), plural.to_string()))
    }

    /// Every version of one stored resource.
    pub fn versions_of(&self, group: &str, plural: &str) -> Vec<&ResourceDef> {
        self.defs
            .values()
            .filter(|d| d.group == group && d.plural == plural)
            .collect()
    }

    pub fn groups(&self) -> &[String] {
        &self.group_order
    }

    /// Served versions of a group, first one preferred.
    pub fn versions(&self, group: &str) -> Vec<String> {
        let mut v: Vec<String> = Vec::new();
        for d in self.defs.values().filter(|d| d.group == group) {
            if !v.contains(&d.version) {
                v.push(d.version.clone());
            }
        }
        // Prefer GA over beta over alpha, like kube's version priority.
        v.sort_by_key(|s| {
            (
                s.contains("alpha"),
                s.contains("beta"),
                std::cmp::Reverse(s.clone()),
            )
        });
        v
    }

    pub fn in_group_version(&self, group: &str, version: &str) -> Vec<&ResourceDef> {
        self.defs
            .values()
            .filter(|d| d.group == group && d.version == version)
            .collect()
    }
}
