//! The Ingress controller: one shared reconciler that turns each Ingress group into AWS
//! resources (through the model and the deployer) and keeps them true.
//!
//! Watch-driven: reflectors over Ingresses, Services, IngressClasses, IngressClassParams and
//! Namespaces keep the caches; a change queues only the groups it concerns (an Ingress: its
//! group and every group whose finalizer it holds; a Service: the groups of Ingresses that
//! mention it; a Namespace: the groups of its Ingresses, only when its labels flip an
//! IngressClassParams namespaceSelector; classes and parameters: every group). Updates that do not
//! touch what the model reads (status, finalizers) queue nothing. Groups are reconciled at
//! most `concurrency` at a time, each group by one worker at a time; failures back off
//! exponentially per group up to `max_backoff` without holding up other groups, and every
//! group is resynced each `sync_period` so drift made behind our back is repaired.

mod bindings;
mod last_good;
mod objects;
pub(crate) mod queue;
mod reconcile;
mod status;

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

use futures::stream::BoxStream;
use futures::StreamExt;
use k8s_openapi::api::core::v1::{Namespace, Service};
use k8s_openapi::api::networking::v1::{Ingress, IngressClass};
use kube::core::ClusterResourceScope;
use kube::runtime::reflector::{self, store::Writer};
use kube::runtime::watcher::{self, Event};
use kube::runtime::WatchStreamExt;
use kube::{Api, Resource, ResourceExt};
use serde::de::DeserializeOwned;
use tokio_util::sync::CancellationToken;

use super::metrics::{ControllerMetrics, Outcome, Reconciles};
use super::scope;
use crate::aws::{AwsMetrics, Ec2, ElbV2};
use crate::crd::IngressClassParams;
use crate::deploy::Deployer;
use crate::model::group::key_of;
use crate::model::{GroupId, ModelConfig, ModelError};
use objects::{Fingerprints, Stores};
use queue::Queue;

pub use bindings::{
    needs_update as binding_needs_update, stack_labels, sync_labeled as sync_bindings,
    BindingChanges,
};
pub use reconcile::reason;
pub use status::{desired as desired_status, is_current as status_is_current};

/// Settings of the Ingress controller.
#[derive(Debug, Clone)]
pub struct IngressConfig {
    /// Everything the model builder reads (cluster name, class, defaults, gates, tags).
    pub model: ModelConfig,
    /// Groups reconciled at once (`--ingress-max-concurrent-reconciles`, default 3).
    pub concurrency: usize,
    /// First retry delay of a failed group (doubles per failure).
    pub base_backoff: Duration,
    /// Cap of the per-group retry delay (`--ingress-max-exponential-backoff-delay`).
    pub max_backoff: Duration,
    /// Resync of a settled group (`--sync-period`, default 10h).
    pub sync_period: Duration,
    /// Reporting controller of the events.
    pub controller_name: String,
    /// `--watch-namespace`: Ingresses and Services of these namespaces only (empty: all).
    pub namespaces: Vec<String>,
    /// Where `aws_target_group_info` is reported (the TargetGroupBindings this controller makes).
    pub metrics: Option<AwsMetrics>,
    /// Where the reconciles, stages and queue are reported (controller `ingress`).
    pub controller_metrics: ControllerMetrics,
    /// How deletes of in-use security groups / target groups are retried (interval, timeout);
    /// `None` keeps the deployer's defaults (2 s for 2 min).
    pub delete_retry: Option<(Duration, Duration)>,
}

impl Default for IngressConfig {
    fn default() -> Self {
        Self {
            model: ModelConfig::default(),
            concurrency: 3,
            base_backoff: Duration::from_millis(10),
            max_backoff: Duration::from_secs(60),
            sync_period: Duration::from_secs(10 * 3600),
            controller_name: "ingress".into(),
            namespaces: Vec::new(),
            metrics: None,
            controller_metrics: ControllerMetrics::default(),
            delete_retry: None,
        }
    }
}

impl IngressConfig {
    /// The settings from the validated flags.
    pub fn from_config(cfg: &crate::config::Config) -> Self {
        let model = cfg.model_config();
        Self {
            model,
            namespaces: cfg.watch_namespaces.clone(),
            concurrency: (cfg.ingress_max_concurrent_reconciles as usize).max(1),
            max_backoff: cfg.ingress_max_backoff,
            sync_period: cfg.sync_period,
            ..Self::default()
        }
    }
}

/// Errors of one group reconcile.
#[derive(Debug, thiserror::Error)]
pub enum IngressError {
    #[error("{0}")]
    Kube(#[from] kube::Error),
    #[error("{0}")]
    Model(#[from] ModelError),
    #[error("{0}")]
    Deploy(#[from] crate::deploy::Error),
}

/// State shared by all reconciles.
pub(crate) struct Ctx {
    client: kube::Client,
    deployer: Deployer,
    stores: Stores,
    cfg: IngressConfig,
    events: super::Events,
    backoff: super::Backoff,
    last_good: last_good::LastGood,
    /// Upstream's stage durations and reconcile errors of this controller.
    rec: Reconciles,
}

/// Turns watch events into queued groups.
struct Triggers {
    stores: Stores,
    queue: Arc<Queue<GroupId>>,
    class: String,
    /// Off until every cache has its first list; the initial pass then queues every group.
    ready: AtomicBool,
    ingresses: Fingerprints,
    services: Fingerprints,
    others: Fingerprints,
    namespaces: objects::NamespaceLabels,
}

impl Triggers {
    fn live(&self) -> bool {
        self.ready.load(Ordering::SeqCst)
    }

    fn ingress(&self, ing: &Ingress, deleted: bool) {
        let key = key_of(&ing.metadata);
        let changed = if deleted {
            self.ingresses.forget(&key);
            true
        } else {
            self.ingresses
                .changed(key, &objects::ingress_fingerprint(ing))
        };
        if changed && self.live() {
            let objs = self.stores.class_objects();
            for g in objects::groups_of(ing, &objs, &self.class) {
                self.queue.add(g);
            }
        }
    }

    fn service(&self, svc: &Service, deleted: bool) {
        let key = key_of(&svc.metadata);
        let changed = if deleted {
            self.services.forget(&key);
            true
        } else {
            self.services
                .changed(key, &objects::service_fingerprint(svc))
        };
        if !changed || !self.live() {
            return;
        }
        let ns = svc.metadata.namespace.as_deref().unwrap_or("default");
        let name = svc.name_any();
        let objs = self.stores.class_objects();
        for ing in self.stores.ingresses.state() {
            if ing.metadata.namespace.as_deref().unwrap_or("default") == ns
                && objects::references_service(&ing, &name)
            {
                for g in objects::groups_of(&ing, &objs, &self.class) {
                    self.queue.add(g);
                }
            }
        }
    }

    /// A namespace counts only when its labels change whether some IngressClassParams
    /// namespaceSelector matches it; then the groups of its Ingresses are queued.
    fn namespace(&self, ns: &Namespace, deleted: bool) {
        let name = ns.name_any();
        let (before, after) = self.namespaces.update(&name, ns, deleted);
        if !self.live() || before == after {
            return;
        }
        let params = self.stores.params.state();
        if !objects::selectors_flip(params.iter().map(|p| &**p), &before, &after) {
            return;
        }
        let objs = self.stores.class_objects();
        for ing in self.stores.ingresses.state() {
            if ing.metadata.namespace.as_deref() == Some(name.as_str()) {
                for g in objects::groups_of(&ing, &objs, &self.class) {
                    self.queue.add(g);
                }
            }
        }
    }

    /// Classes and parameters: rare changes that can move any Ingress.
    fn any<K: Resource>(&self, kind: &str, obj: &K, part: serde_json::Value, deleted: bool) {
        let key = format!("{kind}/{}", obj.meta().name.clone().unwrap_or_default());
        let changed = if deleted {
            self.others.forget(&key);
            true
        } else {
            self.others.changed(key, &part)
        };
        if changed && self.live() {
            self.all();
        }
    }

    fn all(&self) {
        for g in self.stores.all_groups(&self.class) {
            self.queue.add(g);
        }
    }
}

/// Every object of a cluster-scoped kind.
fn watch_all<K>(client: &kube::Client) -> BoxStream<'static, watcher::Result<Event<K>>>
where
    K: Resource<Scope = ClusterResourceScope>
        + Clone
        + DeserializeOwned
        + std::fmt::Debug
        + Send
        + 'static,
    K::DynamicType: Default,
{
    watcher::watcher(Api::<K>::all(client.clone()), watcher::Config::default())
        .default_backoff()
        .boxed()
}

/// Feeds one reflector store and calls `on_change(obj, deleted)` for every event.
async fn feed<K, F>(
    events: BoxStream<'static, watcher::Result<Event<K>>>,
    writer: Writer<K>,
    on_change: F,
) where
    K: Resource + Clone + DeserializeOwned + std::fmt::Debug + Send + Sync + 'static,
    K::DynamicType: Default + Eq + std::hash::Hash + Clone,
    F: Fn(&K, bool),
{
    let stream = reflector::reflector(writer, events);
    futures::pin_mut!(stream);
    while let Some(ev) = stream.next().await {
        match ev {
            Ok(Event::Apply(o)) | Ok(Event::InitApply(o)) => on_change(&o, false),
            Ok(Event::Delete(o)) => on_change(&o, true),
            Ok(Event::Init) | Ok(Event::InitDone) => {}
            Err(e) => tracing::warn!(error = %e, "ingress controller watch"),
        }
    }
}

/// Runs the controller until `shutdown` is cancelled. Everything it starts lives inside this
/// future: dropping or aborting it stops all work at once (as a crash would).
pub async fn run(
    client: kube::Client,
    elbv2: Arc<dyn ElbV2>,
    ec2: Arc<dyn Ec2>,
    vpc_id: String,
    mut cfg: IngressConfig,
    shutdown: CancellationToken,
) {
    if cfg.model.vpc_id.is_none() {
        cfg.model.vpc_id = Some(vpc_id.clone());
    }
    let (ing_r, ing_w) = reflector::store::<Ingress>();
    let (svc_r, svc_w) = reflector::store::<Service>();
    let (cls_r, cls_w) = reflector::store::<IngressClass>();
    let (icp_r, icp_w) = reflector::store::<IngressClassParams>();
    let (ns_r, ns_w) = reflector::store::<Namespace>();
    let stores = Stores {
        ingresses: ing_r,
        services: svc_r,
        classes: cls_r,
        params: icp_r,
        namespaces: ns_r,
    };
    // Upstream's controller and queue name.
    let rec = cfg.controller_metrics.controller("ingress");
    rec.start(cfg.concurrency.max(1));
    let queue: Arc<Queue<GroupId>> = Arc::new(Queue::default().with_metrics(rec.clone()));
    let trig = Arc::new(Triggers {
        stores: stores.clone(),
        queue: queue.clone(),
        class: cfg.model.ingress_class.clone(),
        ready: AtomicBool::new(false),
        ingresses: Fingerprints::default(),
        services: Fingerprints::default(),
        others: Fingerprints::default(),
        namespaces: Default::default(),
    });

    // Ingresses and Services only in the watched namespaces (`--watch-namespace`), as upstream's
    // namespaced cache; classes, parameters and Namespaces are cluster-scoped.
    let watched = cfg.namespaces.clone();
    let wc = watcher::Config::default();
    let t = trig.clone();
    let ing_events = scope::watch::<Ingress>(client.clone(), &watched, wc.clone());
    let ingresses = feed(ing_events, ing_w, move |o, d| t.ingress(o, d));
    let t = trig.clone();
    let svc_events = scope::watch::<Service>(client.clone(), &watched, wc);
    let services = feed(svc_events, svc_w, move |o, d| t.service(o, d));
    let t = trig.clone();
    let classes = feed(watch_all::<IngressClass>(&client), cls_w, move |o, d| {
        t.any(
            "IngressClass",
            o,
            serde_json::json!([o.metadata.annotations, o.spec]),
            d,
        )
    });
    let t = trig.clone();
    let params = feed(
        watch_all::<IngressClassParams>(&client),
        icp_w,
        move |o, d| t.any("IngressClassParams", o, serde_json::json!(o.spec), d),
    );
    let t = trig.clone();
    let namespaces = feed(watch_all::<Namespace>(&client), ns_w, move |o, d| {
        t.namespace(o, d)
    });
    let watches = async {
        tokio::join!(ingresses, services, classes, params, namespaces);
    };

    let initial = {
        let (stores, trig) = (stores.clone(), trig.clone());
        async move {
            let waits = (
                stores.ingresses.wait_until_ready(),
                stores.services.wait_until_ready(),
                stores.classes.wait_until_ready(),
                stores.params.wait_until_ready(),
                stores.namespaces.wait_until_ready(),
            );
            let (a, b, c, d, e) = tokio::join!(waits.0, waits.1, waits.2, waits.3, waits.4);
            if a.is_err() || b.is_err() || c.is_err() || d.is_err() || e.is_err() {
                tracing::error!("ingress controller caches stopped before their first list");
                return;
            }
            trig.ready.store(true, Ordering::SeqCst);
            trig.all();
            tracing::info!("ingress controller caches synced");
            std::future::pending::<()>().await
        }
    };

    let mut deployer = Deployer::new(elbv2, ec2, cfg.model.cluster_name.clone(), vpc_id)
        .with_external_managed_tags(cfg.model.external_managed_tags.clone())
        .with_listener_rules_tagging(cfg.model.gate("ListenerRulesTagging"));
    if let Some((interval, timeout)) = cfg.delete_retry {
        deployer = deployer.with_delete_retry(interval, timeout);
    }
    let ctx = Arc::new(Ctx {
        events: super::Events::new(client.clone(), &cfg.controller_name),
        backoff: super::Backoff::new(cfg.base_backoff, cfg.max_backoff),
        client,
        deployer,
        stores,
        cfg,
        last_good: Default::default(),
        rec,
    });
    let workers = futures::future::join_all(
        (0..ctx.cfg.concurrency.max(1)).map(|_| worker(ctx.clone(), queue.clone())),
    );

    tokio::select! {
        _ = watches => tracing::error!("ingress controller watches ended"),
        _ = initial => {}
        _ = workers => {}
        _ = queue.run_timers() => {}
        _ = shutdown.cancelled() => {}
    }
}

async fn worker(ctx: Arc<Ctx>, queue: Arc<Queue<GroupId>>) {
    loop {
        let (id, waited) = queue.next_timed().await;
        let key = id.as_string();
        let working = ctx.rec.working(waited);
        let start = std::time::Instant::now();
        let pass = reconcile::reconcile(&ctx, &id);
        let outcome = match crate::diff::shadow::scope(format!("ingress {key}"), pass).await {
            Ok(next) => {
                ctx.backoff.succeeded(&key);
                if let Some(after) = next {
                    queue.add_after(id.clone(), after);
                }
                // The periodic resync is controller-runtime's SyncPeriod, not a requeue.
                match next {
                    Some(after) if after != ctx.cfg.sync_period => Outcome::RequeueAfter,
                    _ => Outcome::Success,
                }
            }
            Err(e) => {
                let after = ctx.backoff.failed(&key);
                tracing::warn!(group = %key, error = %e, retry_in = ?after, "ingress group reconcile failed");
                queue.add_after(id.clone(), after);
                ctx.rec.retried();
                Outcome::Error
            }
        };
        ctx.rec.reconciled(outcome, start.elapsed().as_secs_f64());
        drop(working);
        queue.done(&id);
    }
}
