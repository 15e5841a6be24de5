//! The pod scope: which pods are kept for the ip bindings' Services (named by their endpoints,
//! or selected by their selectors), and the refills a growing scope asks for once the pods
//! watch runs, which the reconciles of the Service wait for.

use std::collections::BTreeMap;
use std::sync::Arc;

use k8s_openapi::api::core::v1::{Pod, Service};
use k8s_openapi::api::discovery::v1::EndpointSlice;
use serde_json::json;

use super::*;
use crate::controller::tgb::cache::{
    project_pod, project_service, project_slice, Caches, Feed, OnChange,
};
use crate::watch::Index;

fn svc(ns: &str, name: &str, selector: Option<serde_json::Value>) -> Arc<Service> {
    let mut spec = json!({"ports": [{"port": 80}]});
    if let Some(s) = selector {
        spec["selector"] = s;
    }
    Arc::new(
        serde_json::from_value(json!({"metadata": {"name": name, "namespace": ns}, "spec": spec}))
            .unwrap(),
    )
}

/// Slice `name` of Service `svc` in `ns`, naming `pods`.
fn slice(ns: &str, name: &str, svc: &str, pods: &[&str]) -> Arc<EndpointSlice> {
    let endpoints: Vec<serde_json::Value> = pods
        .iter()
        .enumerate()
        .map(|(i, p)| {
            json!({"addresses": [format!("10.0.0.{}", i + 1)],
                   "targetRef": {"kind": "Pod", "name": p, "namespace": ns}})
        })
        .collect();
    Arc::new(
        serde_json::from_value(json!({
            "metadata": {"name": name, "namespace": ns,
                         "labels": {"kubernetes.io/service-name": svc}},
            "addressType": "IPv4", "endpoints": endpoints
        }))
        .unwrap(),
    )
}

fn labels(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
    pairs
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect()
}

/// The controller's caches, their Service and slice feeds telling the scope of each change as
/// the controller's do.
struct Cluster {
    caches: Arc<Caches>,
    services: Feed<Service, ServiceInfo>,
    slices: Feed<EndpointSlice, (String, Vec<SliceInfo>)>,
}

impl Cluster {
    fn new(services: &[Arc<Service>]) -> Cluster {
        let caches = Arc::new(Caches::default());
        let c = caches.clone();
        let on_service: OnChange<ServiceInfo> = Box::new(move |(ns, n): &ObjKey, _, _| {
            c.scope.service_changed(ns, n, &c.scope_sources())
        });
        let c = caches.clone();
        let on_slice: OnChange<(String, Vec<SliceInfo>)> = Box::new(
            move |key: &ObjKey,
                  _: Option<&(String, Vec<SliceInfo>)>,
                  new: Option<&(String, Vec<SliceInfo>)>| {
                c.scope.slice_changed(key, new, &c.scope_sources())
            },
        );
        let cluster = Cluster {
            services: Feed::new(caches.clone(), |c| &c.services, project_service, on_service),
            slices: Feed::new(caches.clone(), |c| &c.slices, project_slice, on_slice),
            caches,
        };
        services.iter().for_each(|s| cluster.services.apply(s));
        cluster
    }

    fn bind(&self, ns: &str, binding: &str, service: Option<&str>) {
        let sources = self.caches.scope_sources();
        self.caches
            .scope
            .set_binding(ns, binding, service, &sources);
    }

    fn wants(&self, ns: &str, pod: &str, l: &[(&str, &str)]) -> bool {
        self.caches.scope.wants(ns, pod, Some(&labels(l)))
    }
}

#[test]
fn pods_selected_by_an_ip_bindings_service_are_kept_and_no_others() {
    let c = Cluster::new(&[
        svc("ns", "web", Some(json!({"app": "web", "tier": "front"}))),
        svc("ns", "api", Some(json!({"app": "api"}))),
    ]);
    c.bind("ns", "web-tgb", Some("web"));
    // An instance binding (no Service given) reads no pods.
    c.bind("ns", "api-tgb", None);
    let front = [
        ("app", "web"),
        ("tier", "front"),
        ("pod-template-hash", "x"),
    ];
    assert!(c.wants("ns", "p", &front));
    assert!(!c.wants("ns", "p", &[("app", "web")]), "every pair counts");
    assert!(!c.wants("ns", "p", &[("app", "api")]));
    assert!(!c.wants("other", "p", &front), "another namespace");
    assert!(!c.caches.scope.wants("ns", "p", None));
    c.bind("ns", "web-tgb", None);
    assert!(!c.wants("ns", "p", &front), "the binding is gone");

    let sources = c.caches.scope_sources();
    c.caches.scope.reset_bindings(
        vec![("ns".into(), "api-tgb".into(), "api".into())],
        &sources,
    );
    assert!(c.wants("ns", "p", &[("app", "api")]));
    assert!(!c.wants("ns", "p", &front));
}

#[test]
fn pods_the_endpoints_of_a_bound_service_name_are_kept_whatever_their_labels() {
    // A Service without a selector, its endpoints written by hand (as the benchmarks do).
    let c = Cluster::new(&[svc("ns", "manual", None), svc("ns", "other", None)]);
    c.slices
        .apply(&slice("ns", "manual-1", "manual", &["a", "b"]));
    c.slices.apply(&slice("ns", "other-1", "other", &["c"]));
    assert!(!c.wants("ns", "a", &[]), "nothing bound yet");
    c.bind("ns", "tgb", Some("manual"));
    assert!(c.wants("ns", "a", &[]) && c.wants("ns", "b", &[]));
    assert!(
        !c.wants("ns", "c", &[]),
        "named by an unbound Service's endpoints"
    );
    assert!(!c.wants("other-ns", "a", &[]));
    c.slices.apply(&slice("ns", "manual-1", "manual", &["b"]));
    assert!(!c.wants("ns", "a", &[]), "no longer named");
    c.slices.apply(&slice("ns", "manual-2", "manual", &["b"]));
    c.slices.delete(&slice("ns", "manual-1", "manual", &["b"]));
    assert!(c.wants("ns", "b", &[]), "still named by the other slice");
    c.bind("ns", "tgb", None);
    assert!(!c.wants("ns", "b", &[]), "the binding is gone");
}

#[test]
fn the_pod_projection_keeps_gated_referenced_and_scoped_pods_only() {
    let c = Cluster::new(&[svc("ns", "web", Some(json!({"app": "web"})))]);
    c.bind("ns", "tgb", Some("web"));
    let project = project_pod("QUIC_ID".into(), c.caches.clone());
    let pod = |name: &str, labels: serde_json::Value, gates: serde_json::Value| -> Pod {
        serde_json::from_value(json!({
            "metadata": {"name": name, "namespace": "ns", "labels": labels},
            "spec": {"containers": [], "readinessGates": gates}
        }))
        .unwrap()
    };
    let gate = json!([{"conditionType": "target-health.elbv2.k8s.aws/other-tgb"}]);
    assert!(project(&pod("selected", json!({"app": "web"}), json!([]))).is_some());
    assert!(project(&pod("gated", json!({"app": "db"}), gate)).is_some());
    assert!(project(&pod("other", json!({"app": "db"}), json!([]))).is_none());
    c.slices.apply(&slice("ns", "web-1", "web", &["named"]));
    assert!(project(&pod("named", json!({"app": "db"}), json!([]))).is_some());
    c.caches.index.set("ns", "tgb", vec!["other".into()]);
    assert!(
        project(&pod("other", json!({"app": "db"}), json!([]))).is_some(),
        "a pod a binding referenced at its last reconcile stays"
    );
}

#[tokio::test]
async fn a_growing_scope_asks_for_refills_once_the_pods_watch_runs() {
    let c = Cluster::new(&[
        svc("ns", "web", Some(json!({"app": "web"}))),
        svc("ns", "api", Some(json!({"app": "api"}))),
        svc("ns", "manual", None),
    ]);
    let scope = &c.caches.scope;
    let refills = Arc::new(Refills::default());
    scope.set_refills(refills.clone());
    c.bind("ns", "web-tgb", Some("web"));
    assert!(
        refills.pop().is_none(),
        "before the pods watch starts, its first list reads everything"
    );
    scope.covered("ns", "web").await;

    refills.start();
    c.bind("ns", "api-tgb", Some("api"));
    let r = refills.pop().expect("the pods of api are refilled");
    assert_eq!((r.namespace.as_str(), r.labels.as_str()), ("ns", "app=api"));
    assert!(refills.pop().is_none(), "web's pods are kept already");
    {
        let covered = scope.covered("ns", "api");
        futures::pin_mut!(covered);
        assert!(
            futures::poll!(covered.as_mut()).is_pending(),
            "a reconcile of api waits for the refill"
        );
        refills.finish(r.ticket);
        covered.await;
    }
    scope.covered("ns", "web").await;

    // A second binding of a covered Service asks nothing; a selector change does.
    c.bind("ns", "web-tgb-2", Some("web"));
    assert!(refills.pop().is_none());
    c.services
        .apply(&svc("ns", "web", Some(json!({"app": "web2"}))));
    let r = refills.pop().expect("the new selector's pods");
    assert_eq!(r.labels, "app=web2");
    refills.finish(r.ticket);

    // A binding of a Service not there yet: refilled when it appears.
    c.bind("ns", "late-tgb", Some("late"));
    assert!(refills.pop().is_none());
    c.services
        .apply(&svc("ns", "late", Some(json!({"app": "late"}))));
    let r = refills
        .pop()
        .expect("the pods of the Service that appeared");
    assert_eq!(r.labels, "app=late");
    refills.finish(r.ticket);

    // Endpoints of a bound Service naming pods the cache does not hold: by name when few,
    // the whole namespace when many.
    c.bind("ns", "manual-tgb", Some("manual"));
    assert!(
        refills.pop().is_none(),
        "no selector, no endpoints yet: nothing to list"
    );
    c.slices.apply(&slice("ns", "manual-1", "manual", &["m-1"]));
    let r = refills.pop().expect("the one pod named");
    assert_eq!(
        (r.labels.as_str(), r.fields.as_str()),
        ("", "metadata.name=m-1")
    );
    {
        let covered = scope.covered("ns", "manual");
        futures::pin_mut!(covered);
        assert!(futures::poll!(covered.as_mut()).is_pending());
        refills.finish(r.ticket);
        covered.await;
    }
    let many: Vec<String> = (0..20).map(|i| format!("m-{i}")).collect();
    let many: Vec<&str> = many.iter().map(String::as_str).collect();
    c.slices.apply(&slice("ns", "manual-1", "manual", &many));
    let r = refills.pop().expect("the namespace");
    assert_eq!((r.labels.as_str(), r.fields.as_str()), ("", ""));
    assert!(refills.pop().is_none(), "one list for them all");
    refills.finish(r.ticket);
}

/// A selecting Service's endpoints may name pods its selector does not select (their labels
/// changed, or endpoints written by hand): a few of them, not kept, are refilled by name, when
/// the Service is bound and, once the pods have listed, when its endpoints change.
#[tokio::test]
async fn a_few_pods_a_selecting_service_names_but_does_not_select_are_refilled_by_name() {
    let c = Cluster::new(&[svc("ns", "api", Some(json!({"app": "api"})))]);
    c.slices.apply(&slice("ns", "api-1", "api", &["odd"]));
    let refills = Arc::new(Refills::default());
    c.caches.scope.set_refills(refills.clone());
    refills.start();
    c.bind("ns", "api-tgb", Some("api"));
    let by_selector = refills.pop().expect("the selector's pods");
    assert_eq!(by_selector.labels, "app=api");
    let by_name = refills.pop().expect("the pod named and not selected");
    assert_eq!(by_name.fields, "metadata.name=odd");
    assert!(refills.pop().is_none());
    refills.finish(by_name.ticket);

    // Before the pods have listed, endpoint changes ask nothing (the cache is still empty).
    c.slices
        .apply(&slice("ns", "api-1", "api", &["odd", "odd-2"]));
    assert!(refills.pop().is_none());
    let pods = Feed::<Pod, PodInfo>::new(
        c.caches.clone(),
        |c| &c.pods,
        project_pod("QUIC_ID".into(), c.caches.clone()),
        Box::new(|_, _, _| {}),
    );
    pods.relist_begin();
    pods.relist_end();
    c.slices
        .apply(&slice("ns", "api-1", "api", &["odd", "odd-3"]));
    let r = refills
        .pop()
        .expect("once listed, the missing ones by name");
    assert_eq!(r.fields, "metadata.name=odd");
    let r = refills.pop().expect("both");
    assert_eq!(r.fields, "metadata.name=odd-3");
    // Many at once: left to the selector (no namespace list for a selecting Service).
    let many: Vec<String> = (0..20).map(|i| format!("p-{i}")).collect();
    let many: Vec<&str> = many.iter().map(String::as_str).collect();
    c.slices.apply(&slice("ns", "api-1", "api", &many));
    assert!(refills.pop().is_none());
}
