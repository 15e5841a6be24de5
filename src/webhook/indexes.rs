//! Watch-fed, in-memory indexes the TargetGroupBinding and Ingress validators answer from:
//! every TargetGroupBinding in the cluster (only what the duplicate check reads) and every
//! IngressClass. An admission request never waits on an API call.
//!
//! The integrator feeds them from kube watchers: `reset_*` on each (re)list, `upsert`/`remove` on
//! events. Until the first `reset_*` they report `synced() == false` and the handlers refuse
//! rather than answer from an empty cache (which would admit duplicates / reject valid classes).

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, RwLock};

use k8s_openapi::api::networking::v1::{IngressClass, IngressClassParametersReference};

use crate::annotations::DEFAULT_CLASS;
use crate::crd::TargetGroupBinding;

/// What the duplicate-target-group check needs of one TargetGroupBinding.
#[derive(Clone, Debug, PartialEq, Eq, Default)]
pub struct TgbEntry {
    pub uid: String,
    /// `spec.targetGroupARN` (empty if not resolved yet).
    pub target_group_arn: String,
    /// `spec.multiClusterTargetGroup`.
    pub multi_cluster: bool,
}

impl TgbEntry {
    /// `(namespace, name, entry)` of a watched object.
    pub fn from_binding(tgb: &TargetGroupBinding) -> (String, String, TgbEntry) {
        let meta = &tgb.metadata;
        let entry = TgbEntry {
            uid: meta.uid.clone().unwrap_or_default(),
            target_group_arn: tgb.spec.target_group_arn.clone(),
            multi_cluster: tgb.spec.multi_cluster_target_group,
        };
        (
            meta.namespace.clone().unwrap_or_default(),
            meta.name.clone().unwrap_or_default(),
            entry,
        )
    }
}

/// A TargetGroupBinding bound to some target group, as the duplicate check reports it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BoundTgb {
    pub namespace: String,
    pub name: String,
    pub uid: String,
    pub multi_cluster: bool,
}

#[derive(Debug, Default)]
struct TgbInner {
    /// (namespace, name) → entry.
    by_key: HashMap<(String, String), TgbEntry>,
    /// ARN → keys, sorted like an API list (namespace, then name).
    by_arn: HashMap<String, BTreeSet<(String, String)>>,
}

impl TgbInner {
    fn unlink(&mut self, key: &(String, String)) {
        if let Some(old) = self.by_key.remove(key) {
            if let Some(keys) = self.by_arn.get_mut(&old.target_group_arn) {
                keys.remove(key);
                if keys.is_empty() {
                    self.by_arn.remove(&old.target_group_arn);
                }
            }
        }
    }

    fn insert(&mut self, key: (String, String), entry: TgbEntry) {
        self.unlink(&key);
        self.by_arn
            .entry(entry.target_group_arn.clone())
            .or_default()
            .insert(key.clone());
        self.by_key.insert(key, entry);
    }
}

/// All TargetGroupBindings cluster-wide, indexed by target group ARN. Cheap to clone.
#[derive(Clone, Debug, Default)]
pub struct TgbIndex {
    inner: Arc<RwLock<TgbInner>>,
    synced: Arc<AtomicBool>,
}

impl TgbIndex {
    pub fn upsert(&self, namespace: &str, name: &str, entry: TgbEntry) {
        let key = (namespace.to_string(), name.to_string());
        self.inner.write().expect("index lock").insert(key, entry);
    }

    /// [`TgbIndex::upsert`] from a watched object.
    pub fn upsert_binding(&self, tgb: &TargetGroupBinding) {
        let (ns, name, entry) = TgbEntry::from_binding(tgb);
        self.upsert(&ns, &name, entry);
    }

    pub fn remove(&self, namespace: &str, name: &str) {
        let key = (namespace.to_string(), name.to_string());
        self.inner.write().expect("index lock").unlink(&key);
    }

    /// Replaces everything (a watch relist) and marks the index synced.
    pub fn reset(&self, all: Vec<(String, String, TgbEntry)>) {
        let mut fresh = TgbInner::default();
        for (ns, name, entry) in all {
            fresh.insert((ns, name), entry);
        }
        *self.inner.write().expect("index lock") = fresh;
        self.synced.store(true, Ordering::Release);
    }

    pub fn synced(&self) -> bool {
        self.synced.load(Ordering::Acquire)
    }

    /// Bindings whose `spec.targetGroupARN` is `arn`, in namespace/name order.
    pub fn bound_to(&self, arn: &str) -> Vec<BoundTgb> {
        let inner = self.inner.read().expect("index lock");
        let Some(keys) = inner.by_arn.get(arn) else {
            return Vec::new();
        };
        keys.iter()
            .filter_map(|key| {
                inner.by_key.get(key).map(|e| BoundTgb {
                    namespace: key.0.clone(),
                    name: key.1.clone(),
                    uid: e.uid.clone(),
                    multi_cluster: e.multi_cluster,
                })
            })
            .collect()
    }

    pub fn len(&self) -> usize {
        self.inner.read().expect("index lock").by_key.len()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

/// What the Ingress validator needs of one IngressClass.
#[derive(Clone, Debug, PartialEq, Default)]
pub struct IngressClassEntry {
    /// `spec.controller`.
    pub controller: String,
    /// Annotation `ingressclass.kubernetes.io/is-default-class` is exactly `"true"`.
    pub is_default: bool,
    /// `spec.parameters` (kept for completeness; the webhook does not load params, as upstream).
    pub parameters: Option<IngressClassParametersReference>,
}

impl IngressClassEntry {
    /// `(name, entry)` of a watched object.
    pub fn from_class(class: &IngressClass) -> (String, IngressClassEntry) {
        let spec = class.spec.as_ref();
        let is_default = class
            .metadata
            .annotations
            .as_ref()
            .and_then(|a| a.get(DEFAULT_CLASS))
            .is_some_and(|v| v == "true");
        let entry = IngressClassEntry {
            controller: spec.and_then(|s| s.controller.clone()).unwrap_or_default(),
            is_default,
            parameters: spec.and_then(|s| s.parameters.clone()),
        };
        (class.metadata.name.clone().unwrap_or_default(), entry)
    }
}

/// All IngressClasses by name. Cheap to clone.
#[derive(Clone, Debug, Default)]
pub struct IngressClassIndex {
    inner: Arc<RwLock<BTreeMap<String, IngressClassEntry>>>,
    synced: Arc<AtomicBool>,
}

impl IngressClassIndex {
    pub fn upsert(&self, name: &str, entry: IngressClassEntry) {
        self.inner
            .write()
            .expect("index lock")
            .insert(name.to_string(), entry);
    }

    /// [`IngressClassIndex::upsert`] from a watched object.
    pub fn upsert_class(&self, class: &IngressClass) {
        let (name, entry) = IngressClassEntry::from_class(class);
        self.upsert(&name, entry);
    }

    pub fn remove(&self, name: &str) {
        self.inner.write().expect("index lock").remove(name);
    }

    /// Replaces everything (a watch relist) and marks the index synced.
    pub fn reset(&self, all: Vec<(String, IngressClassEntry)>) {
        *self.inner.write().expect("index lock") = all.into_iter().collect();
        self.synced.store(true, Ordering::Release);
    }

    pub fn synced(&self) -> bool {
        self.synced.load(Ordering::Acquire)
    }

    pub fn get(&self, name: &str) -> Option<IngressClassEntry> {
        self.inner.read().expect("index lock").get(name).cloned()
    }

    /// Names of the classes marked default, in name order.
    pub fn defaults(&self) -> Vec<String> {
        let inner = self.inner.read().expect("index lock");
        inner
            .iter()
            .filter(|(_, e)| e.is_default)
            .map(|(n, _)| n.clone())
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entry(uid: &str, arn: &str, multi: bool) -> TgbEntry {
        TgbEntry {
            uid: uid.into(),
            target_group_arn: arn.into(),
            multi_cluster: multi,
        }
    }

    #[test]
    fn tgb_index_follows_arn_changes_and_removals() {
        let idx = TgbIndex::default();
        assert!(!idx.synced());
        idx.reset(vec![
            ("b".into(), "x".into(), entry("1", "arn:1", false)),
            ("a".into(), "y".into(), entry("2", "arn:1", true)),
        ]);
        assert!(idx.synced());
        let names: Vec<_> = idx
            .bound_to("arn:1")
            .iter()
            .map(|b| format!("{}/{}", b.namespace, b.name))
            .collect();
        assert_eq!(names, ["a/y", "b/x"], "list order is namespace, then name");
        idx.upsert("b", "x", entry("1", "arn:2", false));
        assert_eq!(idx.bound_to("arn:1").len(), 1);
        assert_eq!(idx.bound_to("arn:2")[0].uid, "1");
        idx.remove("a", "y");
        assert!(idx.bound_to("arn:1").is_empty());
        assert_eq!(idx.len(), 1);
        idx.remove("nope", "nope");
        assert_eq!(idx.len(), 1);
    }

    #[test]
    fn class_index_reports_defaults() {
        let idx = IngressClassIndex::default();
        let class: IngressClass = serde_json::from_value(serde_json::json!({
            "metadata": {"name": "alb", "annotations": {DEFAULT_CLASS: "true"}},
            "spec": {"controller": "ingress.k8s.aws/alb",
                     "parameters": {"apiGroup": "elbv2.k8s.aws", "kind": "IngressClassParams", "name": "p"}}
        }))
        .unwrap();
        idx.upsert_class(&class);
        idx.upsert(
            "other",
            IngressClassEntry {
                controller: "x".into(),
                ..Default::default()
            },
        );
        assert_eq!(idx.defaults(), ["alb"]);
        let got = idx.get("alb").unwrap();
        assert_eq!(got.controller, "ingress.k8s.aws/alb");
        assert_eq!(got.parameters.unwrap().name, "p");
        idx.remove("alb");
        assert!(idx.defaults().is_empty());
        assert!(!idx.synced());
        idx.reset(vec![]);
        assert!(idx.synced() && idx.get("other").is_none());
    }
}
