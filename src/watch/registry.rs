//! The process's watches, one [`Kind`] per Kubernetes kind any consumer reads. Built once at
//! process start; consumers register, then [`Watches::run`] starts every wanted kind.

use futures::future::BoxFuture;
use futures::FutureExt;
use k8s_openapi::api::core::v1::{Endpoints, Namespace, Node, Pod, Service};
use k8s_openapi::api::discovery::v1::EndpointSlice;
use k8s_openapi::api::networking::v1::{Ingress, IngressClass};
use kube::api::{ApiResource, DynamicObject};
use kube::core::{ClusterResourceScope, NamespaceResourceScope};
use kube::runtime::watcher;
use kube::runtime::WatchStreamExt;
use kube::{Api, Resource};
use serde::de::DeserializeOwned;

use super::driver::{drive, Kind};
use crate::controller::scope;
use crate::crd::{IngressClassParams, TargetGroupBinding};

/// Every kind the process may watch.
pub struct Watches {
    /// TargetGroupBindings, untyped: one binding that does not decode cannot fail the list (and
    /// so stall every consumer); each consumer reads the fields it needs.
    pub bindings: Kind<DynamicObject>,
    pub services: Kind<Service>,
    pub endpoint_slices: Kind<EndpointSlice>,
    pub endpoints: Kind<Endpoints>,
    pub pods: Kind<Pod>,
    pub ingresses: Kind<Ingress>,
    pub ingress_classes: Kind<IngressClass>,
    pub ingress_class_params: Kind<IngressClassParams>,
    pub namespaces: Kind<Namespace>,
    pub nodes: Kind<Node>,
}

impl Default for Watches {
    fn default() -> Self {
        Self {
            bindings: Kind::new("targetgroupbindings"),
            services: Kind::new("services"),
            endpoint_slices: Kind::new("endpointslices"),
            endpoints: Kind::new("endpoints"),
            pods: Kind::new("pods"),
            ingresses: Kind::new("ingresses"),
            ingress_classes: Kind::new("ingressclasses"),
            ingress_class_params: Kind::new("ingressclassparams"),
            namespaces: Kind::new("namespaces"),
            nodes: Kind::new("nodes"),
        }
    }
}

/// The driver of a namespaced kind, limited like `--watch-namespace` (empty: all).
fn namespaced<'a, K>(
    kind: &'a Kind<K>,
    client: &kube::Client,
    namespaces: &[String],
) -> Option<BoxFuture<'a, ()>>
where
    K: Resource<Scope = NamespaceResourceScope>
        + Clone
        + DeserializeOwned
        + std::fmt::Debug
        + Send
        + Sync
        + 'static,
    K::DynamicType: Default,
{
    kind.wanted().then(|| {
        let events = scope::watch::<K>(client.clone(), namespaces, watcher::Config::default());
        drive(kind, events).boxed()
    })
}

/// The driver of a cluster-scoped kind.
fn cluster<'a, K>(kind: &'a Kind<K>, client: &kube::Client) -> Option<BoxFuture<'a, ()>>
where
    K: Resource<Scope = ClusterResourceScope>
        + Clone
        + DeserializeOwned
        + std::fmt::Debug
        + Send
        + Sync
        + 'static,
    K::DynamicType: Default,
{
    kind.wanted().then(|| {
        let api = Api::<K>::all(client.clone());
        let events = watcher::watcher(api, watcher::Config::default()).default_backoff();
        drive(kind, events).boxed()
    })
}

impl Watches {
    /// Runs one watch per wanted kind until the future is dropped. Call once, after every
    /// consumer registered.
    pub async fn run(&self, client: kube::Client, namespaces: &[String]) {
        let ar = ApiResource::erase::<TargetGroupBinding>(&());
        let bindings = self.bindings.wanted().then(|| {
            let cfg = watcher::Config::default();
            let events = scope::watch_with(namespaces, cfg, |ns| match ns {
                Some(ns) => Api::<DynamicObject>::namespaced_with(client.clone(), ns, &ar),
                None => Api::all_with(client.clone(), &ar),
            });
            drive(&self.bindings, events).boxed()
        });
        let drivers: Vec<BoxFuture<'_, ()>> = [
            bindings,
            namespaced(&self.services, &client, namespaces),
            namespaced(&self.endpoint_slices, &client, namespaces),
            namespaced(&self.endpoints, &client, namespaces),
            namespaced(&self.pods, &client, namespaces),
            namespaced(&self.ingresses, &client, namespaces),
            cluster(&self.ingress_classes, &client),
            cluster(&self.ingress_class_params, &client),
            cluster(&self.namespaces, &client),
            cluster(&self.nodes, &client),
        ]
        .into_iter()
        .flatten()
        .collect();
        tracing::info!(watches = drivers.len(), "starting watches");
        futures::future::join_all(drivers).await;
    }
}
