//! Feeds [`PodGateIndex`] from watches of TargetGroupBindings and Services.
//!
//! Bindings are read as untyped objects so one malformed binding cannot stall the whole watch
//! (a typed decode failure would fail the list); only the three fields the mutator uses are kept.

use super::pod_index::{BindingEntry, PodGateIndex, Selector};
use crate::controller::scope;
use crate::crd::TargetGroupBinding;
use futures::{Stream, StreamExt};
use k8s_openapi::api::core::v1::Service;
use kube::api::{Api, ApiResource, DynamicObject};
use kube::runtime::watcher::{self, Event};
use kube::runtime::WatchStreamExt;
use kube::{Client, ResourceExt};

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

/// A change to one half of the index.
pub(crate) enum Change<T> {
    Reset(Vec<(String, String, T)>),
    Upsert(String, String, T),
    Remove(String, String),
}

/// Applies one watch stream; buffers the initial list so readers never see a half list.
pub(crate) async fn drive<K, T, S>(
    stream: S,
    what: &'static str,
    project: impl Fn(&K) -> Option<(String, String, T)>,
    mut apply: impl FnMut(Change<T>),
) where
    S: Stream<Item = Result<Event<K>, watcher::Error>>,
{
    futures::pin_mut!(stream);
    let mut buffer = Vec::new();
    while let Some(event) = stream.next().await {
        match event {
            Ok(Event::Init) => buffer.clear(),
            Ok(Event::InitApply(obj)) => buffer.extend(project(&obj)),
            Ok(Event::InitDone) => apply(Change::Reset(std::mem::take(&mut buffer))),
            Ok(Event::Apply(obj)) => {
                if let Some((ns, name, entry)) = project(&obj) {
                    apply(Change::Upsert(ns, name, entry));
                }
            }
            Ok(Event::Delete(obj)) => {
                if let Some((ns, name, _)) = project(&obj) {
                    apply(Change::Remove(ns, name));
                }
            }
            Err(error) => {
                tracing::warn!(%error, watch = what, "watch failed; retrying with backoff")
            }
        }
    }
}

/// Runs both watches until the future is dropped, limited like `--watch-namespace` (empty: all).
pub async fn run(client: Client, index: PodGateIndex, namespaces: Vec<String>) {
    let ar = ApiResource::erase::<TargetGroupBinding>(&());
    let cfg = watcher::Config::default();
    let bindings = scope::watch_with(&namespaces, cfg.clone(), |ns| match ns {
        Some(ns) => Api::<DynamicObject>::namespaced_with(client.clone(), ns, &ar),
        None => Api::all_with(client.clone(), &ar),
    });
    let services = scope::watch::<Service>(client, &namespaces, cfg);
    let b = drive(
        bindings,
        "targetgroupbindings",
        binding_entry,
        |c| match c {
            Change::Reset(all) => index.reset_bindings(all),
            Change::Upsert(ns, name, e) => index.upsert_binding(&ns, &name, e),
            Change::Remove(ns, name) => index.remove_binding(&ns, &name),
        },
    );
    let s = drive(services, "services", service_entry, |c| match c {
        Change::Reset(all) => index.reset_services(all),
        Change::Upsert(ns, name, e) => index.upsert_service(&ns, &name, e),
        Change::Remove(ns, name) => index.remove_service(&ns, &name),
    });
    futures::join!(b, s);
}

/// Feeds the IngressClass index the Ingress validator answers from.
pub async fn run_ingress_classes(client: Client, index: super::indexes::IngressClassIndex) {
    use k8s_openapi::api::networking::v1::IngressClass;
    let api: Api<IngressClass> = Api::all(client);
    let project = |c: &IngressClass| {
        let (name, entry) = super::indexes::IngressClassEntry::from_class(c);
        Some((String::new(), name, entry))
    };
    drive(
        watcher::watcher(api, watcher::Config::default()).default_backoff(),
        "ingressclasses",
        project,
        |c| match c {
            Change::Reset(all) => index.reset(all.into_iter().map(|(_, n, e)| (n, e)).collect()),
            Change::Upsert(_, name, entry) => index.upsert(&name, entry),
            Change::Remove(_, name) => index.remove(&name),
        },
    )
    .await;
}

fn tgb_entry(obj: &DynamicObject) -> Option<(String, String, super::indexes::TgbEntry)> {
    let spec = obj.data.get("spec");
    let field = |p: &str| spec.and_then(|s| s.pointer(p));
    let entry = super::indexes::TgbEntry {
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

/// Feeds the cluster-wide binding index behind the duplicate-target-group check (untyped, like
/// the pod index, so one malformed binding cannot stall it).
pub async fn run_bindings(client: Client, index: super::indexes::TgbIndex) {
    let ar = ApiResource::erase::<TargetGroupBinding>(&());
    let api: Api<DynamicObject> = Api::all_with(client, &ar);
    drive(
        watcher::watcher(api, watcher::Config::default()).default_backoff(),
        "targetgroupbindings",
        tgb_entry,
        |c| match c {
            Change::Reset(all) => index.reset(all),
            Change::Upsert(ns, name, entry) => index.upsert(&ns, &name, entry),
            Change::Remove(ns, name) => index.remove(&ns, &name),
        },
    )
    .await;
}
