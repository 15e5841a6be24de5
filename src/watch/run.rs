//! Starting the process's watches: one driver per wanted kind, each on its own task
//! ([`Watches::run`]). Above the kinds (`registry`, `gateway`), whose drivers it gathers.

use std::sync::Arc;

use futures::{FutureExt, StreamExt};
use kube::api::{ApiResource, DynamicObject};
use kube::runtime::watcher;
use kube::runtime::WatchStreamExt;
use kube::Api;

use super::driver::drive;
use super::namespaces as scope;
use super::registry::{cluster, namespaced, Driver, Watches};
use crate::crd::alb_target_control_config::DEFAULT_NAME as TARGET_CONTROL_CONFIG_NAME;
use crate::crd::{AlbTargetControlConfig, IngressClassParams, TargetGroupBinding};

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

/// ALBTargetControlConfigs of the one name the injector reads, in every namespace whatever
/// `--watch-namespace` says (upstream reads them with an uncached client, not limited to the
/// watched namespaces, and falls back to `kube-system`). Read untyped and decoded one by one, so
/// one object that does not decode cannot fail the list.
fn alb_target_control_configs(watches: &Arc<Watches>, client: &kube::Client) -> Option<Driver> {
    watches.alb_target_control_configs.wanted().then(|| {
        let ar = ApiResource::erase::<AlbTargetControlConfig>(&());
        let api = Api::<DynamicObject>::all_with(client.clone(), &ar);
        let decode = |o: DynamicObject| {
            let key = format!(
                "{}/{}",
                o.metadata.namespace.clone().unwrap_or_default(),
                o.metadata.name.clone().unwrap_or_default()
            );
            let decoded: serde_json::Result<AlbTargetControlConfig> =
                serde_json::to_value(o).and_then(serde_json::from_value);
            match decoded {
                Ok(c) => Some(c),
                Err(error) => {
                    tracing::warn!(object = %key, error = %error, "ignoring an ALBTargetControlConfig that does not decode");
                    None
                }
            }
        };
        let cfg = watcher::Config::default()
            .fields(&format!("metadata.name={TARGET_CONTROL_CONFIG_NAME}"));
        let events = watcher::watcher(api, cfg)
            .default_backoff()
            .filter_map(move |item| {
                let event = item.map(|e| {
                    super::driver::decoded_event(e, decode, |metadata| AlbTargetControlConfig {
                        metadata,
                        spec: Default::default(),
                    })
                });
                futures::future::ready(event.transpose())
            });
        let w = watches.clone();
        async move { drive(&w.alb_target_control_configs, events).await }.boxed()
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
            alb_target_control_configs(w, c),
            cluster(w, |w| &w.namespaces, c),
            cluster(w, |w| &w.nodes, c),
            namespaced(w, |w| &w.global_accelerators, c, ns),
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
