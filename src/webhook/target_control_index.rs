//! Watch-fed state the ALB target control agent injector answers from, so no pod waits on an API
//! call: every namespace's injection label, and the ALBTargetControlConfig of the one name the
//! injector reads in each namespace. Fed by the process's single watch of each kind
//! ([`register`]); until both have listed, [`TargetControlIndex::synced`] is false and the
//! injector does not answer from it.

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, RwLock};

use k8s_openapi::api::core::v1::Namespace;
use kube::ResourceExt;

use crate::crd::alb_target_control_config::{DEFAULT_NAME, FALLBACK_NAMESPACE};
use crate::crd::{AlbTargetControlConfig, AlbTargetControlConfigSpec};
use crate::watch::{self, Watches};

/// The namespace label that turns injection on for every pod of the namespace (value
/// [`NAMESPACE_ENABLED`]; any other value turns it off).
pub const NAMESPACE_LABEL: &str = "elbv2.k8s.aws/alb-target-control-agent-injection";
pub const NAMESPACE_ENABLED: &str = "enabled";

/// What the index knows of a namespace's injection label.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum NamespaceLabel {
    /// No such namespace (upstream: the namespace lookup fails, so no injection).
    Unknown,
    Absent,
    Value(String),
}

#[derive(Debug, Default)]
struct Inner {
    /// Namespace → its injection label's value (`None`: not labelled).
    namespaces: HashMap<String, Option<String>>,
    /// Namespace → the spec of its configuration named [`DEFAULT_NAME`].
    configs: HashMap<String, Arc<AlbTargetControlConfigSpec>>,
}

/// Cheap to clone; every clone is the same index.
#[derive(Clone, Debug, Default)]
pub struct TargetControlIndex {
    inner: Arc<RwLock<Inner>>,
    namespaces_synced: Arc<AtomicBool>,
    configs_synced: Arc<AtomicBool>,
}

fn label_of(ns: &Namespace) -> Option<String> {
    ns.labels().get(NAMESPACE_LABEL).cloned()
}

fn is_read(config: &AlbTargetControlConfig) -> bool {
    config.metadata.name.as_deref() == Some(DEFAULT_NAME)
}

impl TargetControlIndex {
    fn read(&self) -> std::sync::RwLockReadGuard<'_, Inner> {
        self.inner.read().unwrap_or_else(|p| p.into_inner())
    }

    fn write(&self) -> std::sync::RwLockWriteGuard<'_, Inner> {
        self.inner.write().unwrap_or_else(|p| p.into_inner())
    }

    /// Both kinds have listed once.
    pub fn synced(&self) -> bool {
        self.namespaces_synced.load(Ordering::Acquire)
            && self.configs_synced.load(Ordering::Acquire)
    }

    pub fn namespace_label(&self, namespace: &str) -> NamespaceLabel {
        match self.read().namespaces.get(namespace) {
            None => NamespaceLabel::Unknown,
            Some(None) => NamespaceLabel::Absent,
            Some(Some(v)) => NamespaceLabel::Value(v.clone()),
        }
    }

    /// The configuration a pod of `namespace` gets: its namespace's, else `kube-system`'s, as
    /// upstream looks them up.
    pub fn config_for(&self, namespace: &str) -> Option<Arc<AlbTargetControlConfigSpec>> {
        let inner = self.read();
        inner
            .configs
            .get(namespace)
            .or_else(|| inner.configs.get(FALLBACK_NAMESPACE))
            .cloned()
    }

    pub fn upsert_namespace(&self, name: &str, label: Option<String>) {
        self.write().namespaces.insert(name.to_string(), label);
    }

    pub fn remove_namespace(&self, name: &str) {
        self.write().namespaces.remove(name);
    }

    /// Replaces every namespace (a relist) and marks the namespaces synced.
    pub fn reset_namespaces(&self, all: HashMap<String, Option<String>>) {
        self.write().namespaces = all;
        self.namespaces_synced.store(true, Ordering::Release);
    }

    pub fn upsert_config(&self, namespace: &str, spec: AlbTargetControlConfigSpec) {
        self.write()
            .configs
            .insert(namespace.to_string(), Arc::new(spec));
    }

    pub fn remove_config(&self, namespace: &str) {
        self.write().configs.remove(namespace);
    }

    /// Replaces every configuration (a relist) and marks the configurations synced.
    pub fn reset_configs(&self, all: HashMap<String, Arc<AlbTargetControlConfigSpec>>) {
        self.write().configs = all;
        self.configs_synced.store(true, Ordering::Release);
    }
}

impl watch::Index<Namespace> for TargetControlIndex {
    fn apply(&self, obj: &Arc<Namespace>) {
        self.upsert_namespace(&obj.name_any(), label_of(obj));
    }

    fn delete(&self, obj: &Arc<Namespace>) {
        self.remove_namespace(&obj.name_any());
    }

    fn reset(&self, objs: &[Arc<Namespace>]) {
        self.reset_namespaces(objs.iter().map(|n| (n.name_any(), label_of(n))).collect());
    }
}

impl watch::Index<AlbTargetControlConfig> for TargetControlIndex {
    fn apply(&self, obj: &Arc<AlbTargetControlConfig>) {
        if is_read(obj) {
            self.upsert_config(&obj.namespace().unwrap_or_default(), obj.spec.clone());
        }
    }

    fn delete(&self, obj: &Arc<AlbTargetControlConfig>) {
        if is_read(obj) {
            self.remove_config(&obj.namespace().unwrap_or_default());
        }
    }

    fn reset(&self, objs: &[Arc<AlbTargetControlConfig>]) {
        self.reset_configs(
            objs.iter()
                .filter(|c| is_read(c))
                .map(|c| (c.namespace().unwrap_or_default(), Arc::new(c.spec.clone())))
                .collect(),
        );
    }
}

/// Registers the index with the process's watches (every replica serves webhooks); only with
/// the `ALBTargetControlAgent` gate on, so nothing is watched for it otherwise.
pub fn register(watches: &Watches, index: &TargetControlIndex) {
    watches.namespaces.register(Arc::new(index.clone()));
    watches
        .alb_target_control_configs
        .register(Arc::new(index.clone()));
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::watch::Index;

    fn namespace(name: &str, label: Option<&str>) -> Arc<Namespace> {
        let mut ns = Namespace::default();
        ns.metadata.name = Some(name.into());
        if let Some(l) = label {
            ns.metadata.labels = Some([(NAMESPACE_LABEL.to_string(), l.to_string())].into());
        }
        Arc::new(ns)
    }

    fn config(namespace: &str, name: &str, image: &str) -> Arc<AlbTargetControlConfig> {
        let mut c = AlbTargetControlConfig::new(
            name,
            AlbTargetControlConfigSpec {
                image: image.into(),
                ..Default::default()
            },
        );
        c.metadata.namespace = Some(namespace.into());
        Arc::new(c)
    }

    #[test]
    fn namespaces_follow_their_watch() {
        let idx = TargetControlIndex::default();
        Index::<Namespace>::reset(
            &idx,
            &[namespace("a", Some("enabled")), namespace("b", None)],
        );
        assert_eq!(
            idx.namespace_label("a"),
            NamespaceLabel::Value("enabled".into())
        );
        assert_eq!(idx.namespace_label("b"), NamespaceLabel::Absent);
        assert_eq!(idx.namespace_label("c"), NamespaceLabel::Unknown);
        Index::<Namespace>::apply(&idx, &namespace("b", Some("off")));
        assert_eq!(
            idx.namespace_label("b"),
            NamespaceLabel::Value("off".into())
        );
        Index::<Namespace>::delete(&idx, &namespace("a", None));
        assert_eq!(idx.namespace_label("a"), NamespaceLabel::Unknown);
        // Namespaces alone do not make the index synced.
        assert!(!idx.synced());
    }

    #[test]
    fn only_configurations_of_the_read_name_count_and_kube_system_is_the_fallback() {
        let idx = TargetControlIndex::default();
        Index::<AlbTargetControlConfig>::reset(
            &idx,
            &[
                config("team", DEFAULT_NAME, "team"),
                config("kube-system", DEFAULT_NAME, "system"),
                config("other", "some-other-name", "ignored"),
            ],
        );
        idx.reset_namespaces(HashMap::new());
        assert!(idx.synced());
        let image = |ns: &str| idx.config_for(ns).map(|c| c.image.clone());
        assert_eq!(image("team").as_deref(), Some("team"));
        assert_eq!(image("other").as_deref(), Some("system"));
        Index::<AlbTargetControlConfig>::apply(&idx, &config("other", "x", "still-ignored"));
        assert_eq!(image("other").as_deref(), Some("system"));
        Index::<AlbTargetControlConfig>::apply(&idx, &config("other", DEFAULT_NAME, "own"));
        assert_eq!(image("other").as_deref(), Some("own"));
        Index::<AlbTargetControlConfig>::delete(&idx, &config("kube-system", DEFAULT_NAME, ""));
        assert_eq!(image("nowhere"), None);
        // Deleting an object of another name leaves the read one.
        Index::<AlbTargetControlConfig>::delete(&idx, &config("team", "x", ""));
        assert_eq!(image("team").as_deref(), Some("team"));
    }
}
