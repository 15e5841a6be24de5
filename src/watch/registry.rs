//! The process's watches, one [`Kind`] per Kubernetes kind any consumer reads. Built once at
//! process start; consumers register, then [`Watches::run`] starts every wanted kind.

use std::sync::Arc;

use futures::future::BoxFuture;
use futures::{FutureExt, StreamExt};
use k8s_openapi::api::core::v1::{Endpoints, Namespace, Node, Pod, Secret, Service};
use k8s_openapi::api::discovery::v1::EndpointSlice;
use k8s_openapi::api::networking::v1::{Ingress, IngressClass};
use kube::api::{ApiResource, DynamicObject};
use kube::core::{ClusterResourceScope, NamespaceResourceScope};
use kube::runtime::watcher;
use kube::runtime::WatchStreamExt;
use kube::{Api, Resource};
use serde::de::DeserializeOwned;

use super::driver::{drive, Kind};
use super::gateway::GatewayKinds;
use super::named::Named;
use super::namespaces as scope;
use super::trim;
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
    /// Only the Secrets consumers name, each watched by name (never a cluster-wide list).
    pub secrets: Named<Secret>,
    /// Gateway API and `gateway.k8s.aws` kinds (watched only when a Gateway controller runs).
    pub gateway: GatewayKinds,
}

impl Default for Watches {
    fn default() -> Self {
        Self {
            bindings: Kind::new("targetgroupbindings").with_trim(trim::managed_fields),
            services: Kind::new("services").with_trim(trim::service),
            endpoint_slices: Kind::new("endpointslices").with_trim(trim::managed_fields),
            endpoints: Kind::new("endpoints").with_trim(trim::managed_fields),
            pods: Kind::new("pods").with_trim(trim::managed_fields),
            ingresses: Kind::new("ingresses").with_trim(trim::managed_fields),
            ingress_classes: Kind::new("ingressclasses").with_trim(trim::managed_fields),
            ingress_class_params: Kind::new("ingressclassparams").with_trim(trim::managed_fields),
            namespaces: Kind::new("namespaces").with_trim(trim::managed_fields),
            nodes: Kind::new("nodes").with_trim(trim::managed_fields),
            secrets: Named::new("secrets"),
            gateway: GatewayKinds::default(),
        }
    }
}

impl Watches {
    /// The process's watches, OIDC Secrets narrowed to `--required-secrets-label` (`None`: every
    /// named Secret).
    pub fn with_required_secrets_label(label: Option<crate::config::RequiredLabel>) -> Self {
        Self {
            secrets: Named::new("secrets").with_required_label(label),
            ..Self::default()
        }
    }
}

pub(super) type Driver = BoxFuture<'static, ()>;

/// The driver of a namespaced kind, limited like `--watch-namespace` (empty: all).
pub(super) fn namespaced<K>(
    watches: &Arc<Watches>,
    kind: fn(&Watches) -> &Kind<K>,
    client: &kube::Client,
    namespaces: &[String],
) -> Option<Driver>
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
    kind(watches).wanted().then(|| {
        let events = scope::watch::<K>(client.clone(), namespaces, watcher::Config::default());
        let w = watches.clone();
        async move { drive(kind(&w), events).await }.boxed()
    })
}

/// The driver of a cluster-scoped kind.
pub(super) fn cluster<K>(
    watches: &Arc<Watches>,
    kind: fn(&Watches) -> &Kind<K>,
    client: &kube::Client,
) -> Option<Driver>
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
    kind(watches).wanted().then(|| {
        let api = Api::<K>::all(client.clone());
        let events = watcher::watcher(api, watcher::Config::default()).default_backoff();
        let w = watches.clone();
        async move { drive(kind(&w), events).await }.boxed()
    })
}

/// IngressClassParams read untyped and decoded as upstream does: upstream's chart renders the
/// default class's params with no `spec`, which the typed list would refuse whole (and with it
/// every Ingress reconcile). An object that still does not decode is logged and left out; its
/// delete is handled by key.
fn ingress_class_params(watches: &Arc<Watches>, client: &kube::Client) -> Option<Driver> {
    watches.ingress_class_params.wanted().then(|| {
        let ar = ApiResource::erase::<IngressClassParams>(&());
        let api = Api::<DynamicObject>::all_with(client.clone(), &ar);
        let decode = |o: DynamicObject| {
            let name = o.metadata.name.clone().unwrap_or_default();
            match serde_json::to_value(o).and_then(IngressClassParams::decode) {
                Ok(p) => Some(p),
                Err(error) => {
                    tracing::warn!(object = %name, error = %error, "ignoring an IngressClassParams that does not decode");
                    None
                }
            }
        };
        let events = watcher::watcher(api, watcher::Config::default())
            .default_backoff()
            .filter_map(move |item| {
                let event = item.map(|e| {
                    super::driver::decoded_event(e, decode, |metadata| IngressClassParams {
                        metadata,
                        spec: Default::default(),
                    })
                });
                futures::future::ready(event.transpose())
            });
        let w = watches.clone();
        async move { drive(&w.ingress_class_params, events).await }.boxed()
    })
}

impl Watches {
    /// Runs one watch per wanted kind, each on its own task, until the future is dropped (which
    /// stops them all). Call once, after every consumer registered.
    pub async fn run(self: Arc<Self>, client: kube::Client, namespaces: Vec<String>) {
        let ar = ApiResource::erase::<TargetGroupBinding>(&());
        let bindings = self.bindings.wanted().then(|| {
            let cfg = watcher::Config::default();
            let events = scope::watch_with(&namespaces, cfg, |ns| match ns {
                Some(ns) => Api::<DynamicObject>::namespaced_with(client.clone(), ns, &ar),
                None => Api::all_with(client.clone(), &ar),
            });
            let w = self.clone();
            async move { drive(&w.bindings, events).await }.boxed()
        });
        let secrets = self.secrets.wanted().then(|| {
            let (w, c, ns) = (self.clone(), client.clone(), namespaces.clone());
            async move { w.secrets.run(c, ns).await }.boxed()
        });
        let (w, c, ns) = (&self, &client, namespaces.as_slice());
        let drivers: Vec<Driver> = [
            bindings,
            namespaced(w, |w| &w.services, c, ns),
            namespaced(w, |w| &w.endpoint_slices, c, ns),
            namespaced(w, |w| &w.endpoints, c, ns),
            namespaced(w, |w| &w.pods, c, ns),
            namespaced(w, |w| &w.ingresses, c, ns),
            cluster(w, |w| &w.ingress_classes, c),
            ingress_class_params(w, c),
            cluster(w, |w| &w.namespaces, c),
            cluster(w, |w| &w.nodes, c),
            secrets,
        ]
        .into_iter()
        .flatten()
        .chain(super::gateway::drivers(w, c, ns))
        .collect();
        tracing::info!(watches = drivers.len(), "starting watches");
        // A JoinSet aborts its tasks when dropped: the watches live exactly as long as this future.
        let mut tasks = tokio::task::JoinSet::new();
        for d in drivers {
            tasks.spawn(d);
        }
        while tasks.join_next().await.is_some() {}
    }
}
