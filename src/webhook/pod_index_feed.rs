//! Feeds the webhook indexes ([`PodGateIndex`], [`TgbIndex`], [`IngressClassIndex`]) from the
//! process's single watch of each kind, as [`watch::Index`] implementations.
//!
//! Bindings are read as untyped objects so one malformed binding cannot stall the whole watch
//! (a typed decode failure would fail the list); only the fields each index uses are kept.

use std::sync::Arc;

use super::indexes::{IngressClassEntry, IngressClassIndex, TgbEntry, TgbIndex};
use super::pod_index::{BindingEntry, PodGateIndex, Selector};
use crate::watch::{self, Watches};
use k8s_openapi::api::core::v1::Service;
use k8s_openapi::api::networking::v1::IngressClass;
use kube::api::DynamicObject;
use kube::ResourceExt;

fn binding_entry(obj: &DynamicObject) -> Option<(String, String, BindingEntry)> {
    let ns = obj.namespace()?;
    let spec = obj.data.get("spec")?;
    let entry = BindingEntry {
        target_type: spec
            .get("targetType")
            .and_then(|v| v.as_str())
            .map(String::from),
        service: spec
            .pointer("/serviceRef/name")
            .and_then(|v| v.as_str())
            .unwrap_or_default()
            .to_string(),
    };
    Some((ns, obj.name_any(), entry))
}

fn service_entry(svc: &Service) -> Option<(String, String, Selector)> {
    let selector = svc
        .spec
        .as_ref()
        .and_then(|s| s.selector.clone())
        .unwrap_or_default();
    Some((
        svc.namespace()?,
        svc.name_any(),
        selector.into_iter().collect(),
    ))
}

fn tgb_entry(obj: &DynamicObject) -> Option<(String, String, TgbEntry)> {
    let spec = obj.data.get("spec");
    let field = |p: &str| spec.and_then(|s| s.pointer(p));
    let entry = TgbEntry {
        uid: obj.uid().unwrap_or_default(),
        target_group_arn: field("/targetGroupARN")
            .and_then(|v| v.as_str())
            .unwrap_or_default()
            .to_string(),
        multi_cluster: field("/multiClusterTargetGroup")
            .and_then(|v| v.as_bool())
            .unwrap_or(false),
    };
    Some((obj.namespace()?, obj.name_any(), entry))
}

fn ns_name<K: kube::Resource>(obj: &K) -> (String, String) {
    (obj.namespace().unwrap_or_default(), obj.name_any())
}

/// The binding half of the pod index.
impl watch::Index<DynamicObject> for PodGateIndex {
    fn apply(&self, obj: &Arc<DynamicObject>) {
        if let Some((ns, name, entry)) = binding_entry(obj) {
            self.upsert_binding(&ns, &name, entry);
        }
    }

    fn delete(&self, obj: &Arc<DynamicObject>) {
        let (ns, name) = ns_name(obj.as_ref());
        self.remove_binding(&ns, &name);
    }

    fn reset(&self, objs: &[Arc<DynamicObject>]) {
        self.reset_bindings(objs.iter().filter_map(|o| binding_entry(o)).collect());
    }
}

/// The Service half of the pod index.
impl watch::Index<Service> for PodGateIndex {
    fn apply(&self, obj: &Arc<Service>) {
        if let Some((ns, name, selector)) = service_entry(obj) {
            self.upsert_service(&ns, &name, selector);
        }
    }

    fn delete(&self, obj: &Arc<Service>) {
        let (ns, name) = ns_name(obj.as_ref());
        self.remove_service(&ns, &name);
    }

    fn reset(&self, objs: &[Arc<Service>]) {
        self.reset_services(objs.iter().filter_map(|o| service_entry(o)).collect());
    }

    // Only the selector of each listed Service is kept: the whole list is never held for
    // this index.
    fn streams_relist(&self) -> bool {
        true
    }

    fn relist_begin(&self) {
        self.services_relist_begin();
    }

    fn relist_apply(&self, obj: &Arc<Service>) {
        if let Some((ns, name, selector)) = service_entry(obj) {
            self.services_relist_apply(&ns, &name, selector);
        }
    }

    fn relist_end(&self) {
        self.services_relist_end();
    }
}

/// The bindings behind the duplicate-target-group check.
impl watch::Index<DynamicObject> for TgbIndex {
    fn apply(&self, obj: &Arc<DynamicObject>) {
        if let Some((ns, name, entry)) = tgb_entry(obj) {
            self.upsert(&ns, &name, entry);
        }
    }

    fn delete(&self, obj: &Arc<DynamicObject>) {
        let (ns, name) = ns_name(obj.as_ref());
        self.remove(&ns, &name);
    }

    fn reset(&self, objs: &[Arc<DynamicObject>]) {
        self.reset(objs.iter().filter_map(|o| tgb_entry(o)).collect());
    }
}

/// The classes the Ingress validator answers from.
impl watch::Index<IngressClass> for IngressClassIndex {
    fn apply(&self, obj: &Arc<IngressClass>) {
        self.upsert_class(obj);
    }

    fn delete(&self, obj: &Arc<IngressClass>) {
        self.remove(&obj.name_any());
    }

    fn reset(&self, objs: &[Arc<IngressClass>]) {
        self.reset(
            objs.iter()
                .map(|c| IngressClassEntry::from_class(c))
                .collect(),
        );
    }
}

/// Registers the webhook indexes with the process's watches (every replica serves webhooks).
pub fn register(
    watches: &Watches,
    pod_gates: &PodGateIndex,
    classes: &IngressClassIndex,
    bindings: &TgbIndex,
) {
    watches.bindings.register(Arc::new(pod_gates.clone()));
    watches.bindings.register(Arc::new(bindings.clone()));
    watches.services.register(Arc::new(pod_gates.clone()));
    watches.ingress_classes.register(Arc::new(classes.clone()));
}
