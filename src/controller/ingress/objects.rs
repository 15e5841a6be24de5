//! The watched objects (stores of Ingresses, Services, IngressClasses, IngressClassParams,
//! Namespaces and referenced Secrets), the groups an Ingress concerns, and the per-group
//! `ClusterObjects` snapshot the model is built from.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::hash::{Hash, Hasher};
use std::sync::Mutex;

use k8s_openapi::api::core::v1::{Namespace, Service};
use k8s_openapi::api::networking::v1::{Ingress, IngressClass};

use super::service_view::ServiceViews;

use crate::crd::IngressClassParams;
use crate::model::group::{
    classify, finalizer_groups, group_id, key_of, selector_matches, ClassifiedIngress,
};
use crate::model::{ClusterObjects, GroupId};
use crate::watch::Store;

/// The label every namespace carries (what classification assumes for an unknown one).
const NAME_LABEL: &str = "kubernetes.io/metadata.name";

/// The stores the model reads, fed by the process's watches.
#[derive(Clone, Default)]
pub struct Stores {
    pub ingresses: Store<Ingress>,
    /// What the model reads of every Service, not the whole objects (see `service_view`).
    pub services: ServiceViews,
    pub classes: Store<IngressClass>,
    pub params: Store<IngressClassParams>,
    pub namespaces: Store<Namespace>,
    /// Only the Secrets OIDC actions name (see `secrets`).
    pub secrets: super::secrets::SecretStore,
}

impl Stores {
    /// Classes, parameters and namespaces: all that classification reads besides the Ingress.
    pub fn class_objects(&self) -> ClusterObjects {
        ClusterObjects {
            ingress_classes: self.classes.state().iter().map(|c| (**c).clone()).collect(),
            ingress_class_params: self.params.state().iter().map(|p| (**p).clone()).collect(),
            namespaces: self
                .namespaces
                .state()
                .iter()
                .map(|n| (**n).clone())
                .collect(),
            ..Default::default()
        }
    }

    /// Every group any Ingress belongs to or holds a finalizer of.
    pub fn all_groups(&self, ingress_class: &str) -> BTreeSet<GroupId> {
        let objs = self.class_objects();
        self.ingresses
            .state()
            .iter()
            .flat_map(|i| groups_of(i, &objs, ingress_class))
            .collect()
    }

    /// Whether any live Ingress of ours belongs to a group other than `group`.
    pub fn other_groups_exist(&self, group: &GroupId, ingress_class: &str) -> bool {
        let objs = self.class_objects();
        self.ingresses.state().iter().any(|ing| {
            ing.metadata.deletion_timestamp.is_none() && {
                let groups = groups_of(ing, &objs, ingress_class);
                !groups.is_empty() && !groups.contains(group)
            }
        })
    }

    /// What the model needs to build `group`: its members and former members, the Services
    /// they mention (or `earlier`, the members' last deployed configurations, which a member
    /// whose own edit fails is built from, mentions), and the class objects.
    pub fn snapshot(
        &self,
        group: &GroupId,
        ingress_class: &str,
        earlier: &[Ingress],
    ) -> ClusterObjects {
        let mut objs = self.class_objects();
        for ing in self.ingresses.state() {
            if groups_of(&ing, &objs, ingress_class).contains(group) {
                objs.ingresses.push((*ing).clone());
            }
        }
        let readers: Vec<&Ingress> = objs.ingresses.iter().chain(earlier).collect();
        objs.services = self.services.named_by(&readers);
        // Store order is arbitrary; the model sorts members, but keep snapshots stable anyway.
        objs.ingresses.sort_by_key(|i| key_of(&i.metadata));
        objs
    }
}

/// The group the Ingress is an active member of now, if any (ours, not deleting, valid group).
pub fn current_group(ing: &Ingress, objs: &ClusterObjects, ingress_class: &str) -> Option<GroupId> {
    if ing.metadata.deletion_timestamp.is_some() {
        return None;
    }
    let params = classify(ing, objs, ingress_class).ok()??;
    group_id(&ClassifiedIngress {
        ingress: ing,
        params,
    })
    .ok()
}

/// Current group plus every group whose finalizer the Ingress holds.
pub fn groups_of(ing: &Ingress, objs: &ClusterObjects, ingress_class: &str) -> Vec<GroupId> {
    let mut out = finalizer_groups(ing);
    if let Some(g) = current_group(ing, objs, ingress_class) {
        if !out.contains(&g) {
            out.push(g);
        }
    }
    out
}

/// Remembers a fingerprint per object so that updates which do not matter to the model (status
/// writes, our own finalizer patches, resyncs of unchanged objects) trigger nothing.
#[derive(Default)]
pub struct Fingerprints {
    seen: Mutex<HashMap<String, u64>>,
}

impl Fingerprints {
    /// Records `value` for `key`; true when it differs from the last one.
    pub fn changed(&self, key: String, value: &serde_json::Value) -> bool {
        self.changed_to(key, Self::hash(value))
    }

    /// The fingerprint of `value` (what [`Fingerprints::changed`] records).
    pub fn hash(value: &serde_json::Value) -> u64 {
        let mut h = std::collections::hash_map::DefaultHasher::new();
        value.to_string().hash(&mut h);
        h.finish()
    }

    /// Records fingerprint `fp` (from [`Fingerprints::hash`]) for `key`; true when it differs
    /// from the last one.
    pub fn changed_to(&self, key: String, fp: u64) -> bool {
        let mut g = self.seen.lock().unwrap_or_else(|p| p.into_inner());
        g.insert(key, fp) != Some(fp)
    }

    pub fn forget(&self, key: &str) {
        let mut g = self.seen.lock().unwrap_or_else(|p| p.into_inner());
        g.remove(key);
    }
}

/// The last labels seen per namespace, so a change can be judged against the selectors.
#[derive(Default)]
pub struct NamespaceLabels {
    seen: Mutex<HashMap<String, BTreeMap<String, String>>>,
}

impl NamespaceLabels {
    /// Records the event; returns the labels the model saw before and sees now (an unknown or
    /// deleted namespace has only its automatic name label, as in classification).
    pub fn update(
        &self,
        name: &str,
        ns: &Namespace,
        deleted: bool,
    ) -> (BTreeMap<String, String>, BTreeMap<String, String>) {
        let fallback = || BTreeMap::from([(NAME_LABEL.to_string(), name.to_string())]);
        let mut g = self.seen.lock().unwrap_or_else(|p| p.into_inner());
        let (before, after) = if deleted {
            (g.remove(name), fallback())
        } else {
            let l = ns.metadata.labels.clone().unwrap_or_else(fallback);
            (g.insert(name.to_string(), l.clone()), l)
        };
        (before.unwrap_or_else(fallback), after)
    }
}

/// Whether any IngressClassParams namespaceSelector matches one label set and not the other.
pub fn selectors_flip<'a>(
    params: impl IntoIterator<Item = &'a IngressClassParams>,
    before: &BTreeMap<String, String>,
    after: &BTreeMap<String, String>,
) -> bool {
    params.into_iter().any(|p| {
        p.spec
            .namespace_selector
            .as_ref()
            .is_some_and(|sel| selector_matches(sel, before) != selector_matches(sel, after))
    })
}

/// The parts of an Ingress the model reads (upstream's update filter: annotations, spec,
/// deletion state).
pub fn ingress_fingerprint(ing: &Ingress) -> serde_json::Value {
    serde_json::json!([
        ing.metadata.annotations,
        ing.spec,
        ing.metadata.deletion_timestamp.is_some(),
    ])
}

/// The parts of a Service the model reads.
pub fn service_fingerprint(svc: &Service) -> serde_json::Value {
    serde_json::json!([svc.metadata.annotations, svc.metadata.uid, svc.spec])
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn ingress(v: serde_json::Value) -> Ingress {
        serde_json::from_value(v).unwrap()
    }

    #[test]
    fn groups_cover_current_group_and_held_finalizers() {
        let objs = ClusterObjects::default();
        let ing = ingress(json!({
            "metadata": {"name": "a", "namespace": "ns",
                "annotations": {"kubernetes.io/ingress.class": "alb",
                    "alb.ingress.kubernetes.io/group.name": "new"},
                "finalizers": ["group.ingress.k8s.aws/old", "other/finalizer"]},
            "spec": {}
        }));
        assert_eq!(
            groups_of(&ing, &objs, "alb"),
            vec![GroupId::explicit("old"), GroupId::explicit("new")]
        );
        let mut deleting = ing.clone();
        deleting.metadata.deletion_timestamp =
            Some(k8s_openapi::apimachinery::pkg::apis::meta::v1::Time(
                k8s_openapi::jiff::Timestamp::now(),
            ));
        assert_eq!(
            groups_of(&deleting, &objs, "alb"),
            vec![GroupId::explicit("old")]
        );
        let foreign = ingress(json!({
            "metadata": {"name": "b", "namespace": "ns",
                "annotations": {"kubernetes.io/ingress.class": "nginx"},
                "finalizers": ["ingress.k8s.aws/resources"]}
        }));
        assert_eq!(
            groups_of(&foreign, &objs, "alb"),
            vec![GroupId::implicit("ns", "b")]
        );
    }

    #[test]
    fn only_label_changes_that_flip_a_selector_count() {
        let params: IngressClassParams = serde_json::from_value(json!({
            "metadata": {"name": "p"},
            "spec": {"namespaceSelector": {"matchLabels": {"team": "a"}}}
        }))
        .unwrap();
        let l = |pairs: &[(&str, &str)]| -> BTreeMap<String, String> {
            pairs
                .iter()
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect()
        };
        let base = l(&[("kubernetes.io/metadata.name", "x")]);
        let team_a = l(&[("kubernetes.io/metadata.name", "x"), ("team", "a")]);
        let other = l(&[("kubernetes.io/metadata.name", "x"), ("env", "dev")]);
        assert!(selectors_flip([&params], &base, &team_a));
        assert!(!selectors_flip([&params], &base, &other));
        let no_selector: IngressClassParams =
            serde_json::from_value(json!({"metadata": {"name": "q"}, "spec": {}})).unwrap();
        assert!(!selectors_flip([&no_selector], &base, &team_a));

        let seen = NamespaceLabels::default();
        let ns: Namespace =
            serde_json::from_value(json!({"metadata": {"name": "x", "labels": team_a}})).unwrap();
        assert_eq!(seen.update("x", &ns, false), (base.clone(), team_a.clone()));
        assert_eq!(seen.update("x", &ns, true), (team_a, base));
    }

    #[test]
    fn ingress_fingerprints_ignore_status_and_finalizers() {
        let ing = ingress(json!({
            "metadata": {"name": "a", "namespace": "ns"},
            "spec": {"rules": [{"http": {"paths": [{"path": "/", "pathType": "Prefix",
                "backend": {"service": {"name": "web", "port": {"number": 80}}}}]}}]}
        }));
        let fps = Fingerprints::default();
        assert!(fps.changed("ns/a".into(), &ingress_fingerprint(&ing)));
        let mut with_status = ing.clone();
        with_status.status = Some(Default::default());
        with_status.metadata.finalizers = Some(vec!["ingress.k8s.aws/resources".into()]);
        assert!(!fps.changed("ns/a".into(), &ingress_fingerprint(&with_status)));
        let mut annotated = ing.clone();
        annotated.metadata.annotations = Some([("x".to_string(), "y".to_string())].into());
        assert!(fps.changed("ns/a".into(), &ingress_fingerprint(&annotated)));
    }
}
