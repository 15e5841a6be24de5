//! RBAC evaluation for tests on rendered manifests: the API test server's evaluator
//! (`kube_test_apiserver::rbac`, the one it enforces with), fed YAML documents.

pub use kube_test_apiserver::rbac::{allowed, Grants, Rule};
use serde_yaml::Value;

fn json(doc: &Value) -> serde_json::Value {
    serde_json::to_value(doc).expect("a YAML document converts to JSON")
}

/// The rules of a rendered Role or ClusterRole.
pub fn rules_of(role: &Value) -> Vec<Rule> {
    kube_test_apiserver::rbac::rules_of(&json(role))
}

/// Every ClusterRole and Role in rendered documents that a (Cluster)RoleBinding grants to the
/// service account `namespace/name`.
pub fn grants_for(docs: &[Value], sa_namespace: &str, sa_name: &str) -> Grants {
    let docs: Vec<serde_json::Value> = docs.iter().map(json).collect();
    kube_test_apiserver::rbac::grants_for(&docs, sa_namespace, sa_name)
}
