//! What the Ingress model reads of a Service, kept for every Service (an Ingress may name any
//! of them later): its UID, its `alb.ingress.kubernetes.io/` annotations, its ports (name,
//! port, target port, node port) and whether it is IPv6, ~250 bytes instead of the ~2 KiB of
//! the whole object. A snapshot rebuilds, for the Services its Ingresses name, a `Service`
//! carrying exactly these fields, from which the model builds what it builds from the whole
//! object (see the tests).

use std::collections::HashMap;
use std::sync::{Arc, RwLock};

use k8s_openapi::api::core::v1::{Service, ServicePort, ServiceSpec};
use k8s_openapi::api::networking::v1::Ingress;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use k8s_openapi::apimachinery::pkg::util::intstr::IntOrString;

use super::refs::references_service;
use crate::annotations::{AnnotationMap, INGRESS_PREFIX};

/// The model's reads of one Service (its namespace and name are the store's key).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ServiceView {
    uid: Option<Box<str>>,
    /// Only `alb.ingress.kubernetes.io/` keys (the only ones the model reads off a Service: it
    /// merges them over the Ingress's and reads its own keys), in key order.
    annotations: Box<[(Box<str>, Box<str>)]>,
    /// `None` when the Service has no port list.
    ports: Option<Box<[PortView]>>,
    /// `spec.ipFamilies` names IPv6 (all the model asks of the families).
    ipv6: bool,
}

/// What the model reads of a Service port: the lookup by name or number, and the ports a
/// target group and its health check use.
#[derive(Debug, Clone, PartialEq, Eq)]
struct PortView {
    name: Option<Box<str>>,
    port: i32,
    target_port: Option<IntOrString>,
    node_port: Option<i32>,
}

fn boxed(s: &Option<String>) -> Option<Box<str>> {
    s.as_deref().map(Into::into)
}

impl ServiceView {
    pub fn of(svc: &Service) -> ServiceView {
        let prefix = format!("{INGRESS_PREFIX}/");
        let annotations = svc
            .metadata
            .annotations
            .iter()
            .flatten()
            .filter(|(k, _)| k.starts_with(&prefix))
            .map(|(k, v)| (k.as_str().into(), v.as_str().into()))
            .collect();
        let spec = svc.spec.as_ref();
        let ports = spec.and_then(|s| s.ports.as_ref()).map(|ports| {
            ports
                .iter()
                .map(|p| PortView {
                    name: boxed(&p.name),
                    port: p.port,
                    target_port: p.target_port.clone(),
                    node_port: p.node_port,
                })
                .collect()
        });
        let ipv6 = spec
            .and_then(|s| s.ip_families.as_ref())
            .is_some_and(|f| f.iter().any(|x| x == "IPv6"));
        ServiceView {
            uid: boxed(&svc.metadata.uid),
            annotations,
            ports,
            ipv6,
        }
    }

    /// The kept annotations as the model takes them (`None` when there are none).
    pub fn annotations(&self) -> Option<AnnotationMap> {
        (!self.annotations.is_empty()).then(|| {
            self.annotations
                .iter()
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect()
        })
    }

    /// A `Service` named `namespace/name` carrying exactly the fields kept.
    pub fn to_service(&self, namespace: &str, name: &str) -> Service {
        let ports = self.ports.as_ref().map(|ports| {
            ports
                .iter()
                .map(|p| ServicePort {
                    name: p.name.as_deref().map(String::from),
                    port: p.port,
                    target_port: p.target_port.clone(),
                    node_port: p.node_port,
                    ..Default::default()
                })
                .collect()
        });
        Service {
            metadata: ObjectMeta {
                name: Some(name.to_string()),
                namespace: Some(namespace.to_string()),
                uid: self.uid.as_deref().map(String::from),
                annotations: self.annotations(),
                ..Default::default()
            },
            spec: Some(ServiceSpec {
                ports,
                ip_families: self.ipv6.then(|| vec!["IPv6".to_string()]),
                ..Default::default()
            }),
            status: None,
        }
    }
}

/// `(namespace, name)`, as the other stores key objects.
type Key = (String, String);

/// Every Service's [`ServiceView`]. Cheap to clone; every clone is the same store.
#[derive(Clone, Default)]
pub struct ServiceViews {
    map: Arc<RwLock<HashMap<Key, Arc<ServiceView>>>>,
}

impl ServiceViews {
    fn read(&self) -> std::sync::RwLockReadGuard<'_, HashMap<Key, Arc<ServiceView>>> {
        self.map.read().unwrap_or_else(|p| p.into_inner())
    }

    fn write(&self) -> std::sync::RwLockWriteGuard<'_, HashMap<Key, Arc<ServiceView>>> {
        self.map.write().unwrap_or_else(|p| p.into_inner())
    }

    pub fn set(&self, key: Key, view: Arc<ServiceView>) {
        self.write().insert(key, view);
    }

    pub fn remove(&self, key: &Key) {
        self.write().remove(key);
    }

    /// Replaces everything (a completed relist).
    pub fn replace(&self, all: HashMap<Key, Arc<ServiceView>>) {
        *self.write() = all;
    }

    /// The names and views of the Services of `namespace`.
    pub fn in_namespace(&self, namespace: &str) -> Vec<(String, Arc<ServiceView>)> {
        self.read()
            .iter()
            .filter(|((ns, _), _)| ns == namespace)
            .map(|((_, name), v)| (name.clone(), v.clone()))
            .collect()
    }

    /// The Services `readers` may read, as `Service`s (see [`ServiceView::to_service`]): those
    /// of each reader's namespace that it mentions ([`references_service`], which over-matches:
    /// an extra Service is never read). The model looks Services up only by the names an
    /// Ingress's backends and `actions.*` annotations give, all of which it mentions; before,
    /// every Service of the namespaces was copied whole into each snapshot.
    pub fn named_by(&self, readers: &[&Ingress]) -> Vec<Service> {
        let map = self.read();
        let mut out: Vec<Service> = map
            .iter()
            .filter(|((ns, name), _)| {
                readers.iter().any(|ing| {
                    ing.metadata.namespace.as_deref().unwrap_or_default() == ns
                        && references_service(ing, name)
                })
            })
            .map(|((ns, name), v)| v.to_service(ns, name))
            .collect();
        // Store order is arbitrary; keep snapshots stable.
        out.sort_by(|a, b| {
            let key = |s: &Service| (s.metadata.namespace.clone(), s.metadata.name.clone());
            key(a).cmp(&key(b))
        });
        out
    }
}

#[cfg(test)]
#[path = "service_view_tests.rs"]
mod tests;
