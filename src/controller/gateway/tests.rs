//! The Gateway controllers' event filter: which Gateways an event queues.

use super::feed::*;
use super::*;
use crate::controller::skeleton::{Queue, Source};
use crate::watch::Index;
use gateway_api::apis::standard::gatewayclasses::GatewayClass;
use gateway_api::apis::standard::gateways::Gateway;
use gateway_api::apis::standard::httproutes::HttpRoute;
use k8s_openapi::api::core::v1::Service;
use serde_json::json;

fn obj<K: serde::de::DeserializeOwned>(v: serde_json::Value) -> Arc<K> {
    Arc::new(serde_json::from_value(v).unwrap())
}

fn class(name: &str, controller: &str) -> Arc<GatewayClass> {
    obj(json!({"metadata": {"name": name}, "spec": {"controllerName": controller}}))
}

fn gateway(name: &str, class: &str, rv: &str, status: serde_json::Value) -> Arc<Gateway> {
    obj(json!({
        "metadata": {"name": name, "namespace": "apps", "resourceVersion": rv, "generation": 1},
        "spec": {"gatewayClassName": class, "listeners": [{"name": "http", "port": 80, "protocol": "HTTP"}]},
        "status": status
    }))
}

fn route(rv: &str, parents: &[&str], backend: &str) -> Arc<HttpRoute> {
    let parents: Vec<_> = parents.iter().map(|p| json!({"name": p})).collect();
    obj(json!({
        "metadata": {"name": "r", "namespace": "apps", "resourceVersion": rv, "generation": rv.parse::<i64>().unwrap()},
        "spec": {"parentRefs": parents, "rules": [{"backendRefs": [{"name": backend, "port": 80}]}]}
    }))
}

struct Setup {
    watches: Watches,
    feed: Arc<Feed>,
    queue: Arc<Queue<String>>,
}

/// An ALB controller's feed on the process's watches, stores primed with two classes and
/// Gateways `apps/a` (ours) and `apps/b` (another controller's).
fn setup() -> Setup {
    let watches = Watches::default();
    let warm = Warm::register(&watches, true, false, true).unwrap();
    let feed = warm.feed(LbKind::Alb).unwrap().clone();
    let queue = Arc::new(Queue::default());
    feed.attach(Some(queue.clone()));
    feed.stores
        .classes
        .apply(&class("alb", "gateway.k8s.aws/alb"));
    feed.stores.classes.apply(&class("other", "example.com/gw"));
    feed.stores
        .gateways
        .apply(&gateway("a", "alb", "1", json!({})));
    feed.stores
        .gateways
        .apply(&gateway("b", "other", "1", json!({})));
    Setup {
        watches,
        feed,
        queue,
    }
}

async fn drain(q: &Queue<String>) -> Vec<String> {
    let mut out = Vec::new();
    while !q.is_empty() {
        let k = q.next().await;
        q.done(&k);
        out.push(k);
    }
    out.sort();
    out
}

#[tokio::test]
async fn gateways_of_our_classes_are_queued_and_their_status_changes_too() {
    let s = setup();
    let t = Trigger::new(s.feed.clone(), on_gateway, true);
    t.apply(&gateway("a", "alb", "2", json!({})));
    t.apply(&gateway("b", "other", "2", json!({})));
    assert_eq!(drain(&s.queue).await, vec!["apps/a"]);
    t.apply(&gateway("a", "alb", "3", json!({})));
    assert!(s.queue.is_empty(), "nothing that counts changed");
    t.apply(&gateway("a", "alb", "4", json!({"conditions": []})));
    assert_eq!(
        drain(&s.queue).await,
        vec!["apps/a"],
        "a status write queues the pass that sees the LB active, as upstream"
    );
    s.feed.all();
    assert_eq!(drain(&s.queue).await, vec!["apps/a"]);
    drop(s.watches);
}

#[tokio::test]
async fn a_detached_route_queues_its_old_gateway_and_a_service_its_routes_gateways() {
    let s = setup();
    let routes = Trigger::new(s.feed.clone(), on_route::<HttpRoute>, false);
    let r1 = route("1", &["a"], "web");
    s.feed.stores.http_routes.apply(&r1);
    routes.apply(&r1);
    assert_eq!(drain(&s.queue).await, vec!["apps/a"]);
    let services = Trigger::new(s.feed.clone(), on_service, false);
    let svc: Arc<Service> = obj(json!({"metadata": {"name": "web", "namespace": "apps"},
        "spec": {"ports": [{"port": 80}]}}));
    services.apply(&svc);
    assert_eq!(drain(&s.queue).await, vec!["apps/a"]);
    let other: Arc<Service> = obj(json!({"metadata": {"name": "db", "namespace": "apps"}}));
    services.apply(&other);
    assert!(s.queue.is_empty(), "a Service no route uses queues nothing");
    // The route leaves Gateway a for b (another controller's): a must still hear of it.
    let r2 = route("2", &["b"], "web");
    s.feed.stores.http_routes.apply(&r2);
    routes.apply(&r2);
    assert_eq!(drain(&s.queue).await, vec!["apps/a"]);
    routes.delete(&r2);
    assert!(s.queue.is_empty(), "its parent now is not ours");
}

#[tokio::test]
async fn a_class_queues_its_gateways_only_when_it_is_ours() {
    let s = setup();
    let t = Trigger::new(s.feed.clone(), on_class, true);
    t.apply(&class("alb", "gateway.k8s.aws/alb"));
    t.apply(&class("other", "example.com/gw"));
    assert_eq!(drain(&s.queue).await, vec!["apps/a"]);
}

#[tokio::test]
async fn a_route_seen_before_its_gateway_still_queues_it_when_detached() {
    let s = setup();
    let routes = Trigger::new(s.feed.clone(), on_route::<HttpRoute>, false);
    let early = route("1", &["late"], "web");
    routes.apply(&early);
    assert!(s.queue.is_empty(), "no such Gateway yet");
    s.feed
        .stores
        .gateways
        .apply(&gateway("late", "alb", "1", json!({})));
    let moved = route("2", &["b"], "web");
    routes.apply(&moved);
    assert_eq!(
        drain(&s.queue).await,
        vec!["apps/late"],
        "the Gateway the route left hears of it"
    );
}

#[tokio::test]
async fn a_default_target_group_configuration_queues_the_gateways_whose_configuration_names_it() {
    use crate::crd::gateway::{LoadBalancerConfiguration, TargetGroupConfiguration};
    let s = setup();
    // Gateway apps/c uses LoadBalancerConfiguration apps/lbc, whose default is apps/defaults.
    s.feed.stores.gateways.apply(&obj(json!({
        "metadata": {"name": "c", "namespace": "apps"},
        "spec": {"gatewayClassName": "alb", "listeners": [],
                 "infrastructure": {"parametersRef": {"group": "gateway.k8s.aws",
                     "kind": "LoadBalancerConfiguration", "name": "lbc"}}}
    })));
    let lbc: Arc<LoadBalancerConfiguration> = obj(json!({
        "apiVersion": "gateway.k8s.aws/v1", "kind": "LoadBalancerConfiguration",
        "metadata": {"name": "lbc", "namespace": "apps"},
        "spec": {"defaultTargetGroupConfiguration": {"name": "defaults"}}
    }));
    s.feed.stores.lb_configs.apply(&lbc);
    let t = Trigger::new(s.feed.clone(), on_tg_config, false);
    let tgc = |name: &str| -> Arc<TargetGroupConfiguration> {
        obj(json!({
            "apiVersion": "gateway.k8s.aws/v1", "kind": "TargetGroupConfiguration",
            "metadata": {"name": name, "namespace": "apps"},
            "spec": {"defaultConfiguration": {"targetType": "ip"}}
        }))
    };
    t.apply(&tgc("defaults"));
    assert_eq!(drain(&s.queue).await, vec!["apps/c"]);
    t.apply(&tgc("unrelated"));
    assert!(
        s.queue.is_empty(),
        "no configuration names it, no route uses it"
    );
}

fn secret(data: &str) -> Arc<k8s_openapi::api::core::v1::Secret> {
    obj(
        json!({"metadata": {"name": "idp", "namespace": "apps", "resourceVersion": data},
        "data": {"clientID": "aWQ=", "clientSecret": data, "unread": data}}),
    )
}

/// Upstream's MonitorSecrets: a Gateway reading an OIDC Secret is queued when what the model
/// reads of it changes, or it comes or goes; the Secret is watched through the process's one
/// Secret watch, next to the Ingresses' ones.
#[tokio::test]
async fn a_changed_oidc_secret_queues_the_gateways_that_read_it() {
    let s = setup();
    let m = super::secrets::Monitor::new(s.feed.clone(), &s.watches.secrets);
    let idp = ("apps".to_string(), "idp".to_string());
    m.monitor("apps/a", [idp.clone()].into());
    m.monitor("apps/b", [idp.clone()].into());
    assert!(s.watches.secrets.wants().get().contains(&idp), "watched");
    m.apply(&secret("Zmlyc3Q="));
    assert_eq!(drain(&s.queue).await, vec!["apps/a"], "b is not ours");
    m.apply(&secret("Zmlyc3Q="));
    assert!(s.queue.is_empty(), "unchanged");
    let mut other_key = (*secret("Zmlyc3Q=")).clone();
    other_key
        .data
        .as_mut()
        .unwrap()
        .insert("unread".into(), Default::default());
    m.apply(&Arc::new(other_key));
    assert!(s.queue.is_empty(), "a key the model does not read changed");
    m.apply(&secret("c2Vjb25k"));
    assert_eq!(drain(&s.queue).await, vec!["apps/a"]);
    m.delete(&secret("c2Vjb25k"));
    assert_eq!(drain(&s.queue).await, vec!["apps/a"], "gone");
    m.monitor("apps/a", Default::default());
    m.monitor("apps/b", Default::default());
    assert!(
        s.watches.secrets.wants().get().is_empty(),
        "no longer watched"
    );
    m.apply(&secret("dGhpcmQ="));
    assert!(s.queue.is_empty(), "nobody reads it");
}

/// `--required-secrets-label`: a Secret without the label is as good as absent — it queues no
/// Gateway when it appears, and a labelled one losing its label queues its readers as gone.
#[tokio::test]
async fn an_oidc_secret_without_the_required_label_reads_as_absent() {
    let s = setup();
    let required = crate::config::RequiredLabel::from_flag("albc.example/oidc=yes").unwrap();
    let named: crate::watch::Named<k8s_openapi::api::core::v1::Secret> =
        crate::watch::Named::new("secrets").with_required_label(required);
    let m = super::secrets::Monitor::new(s.feed.clone(), &named);
    m.monitor("apps/a", [("apps".to_string(), "idp".to_string())].into());
    let labelled = |on: bool| {
        let mut sec = (*secret("Zmlyc3Q=")).clone();
        if on {
            sec.metadata.labels = Some(std::collections::BTreeMap::from([(
                "albc.example/oidc".to_string(),
                "yes".to_string(),
            )]));
        }
        Arc::new(sec)
    };
    m.apply(&labelled(false));
    assert!(s.queue.is_empty(), "unlabelled: not seen");
    m.apply(&labelled(true));
    assert_eq!(drain(&s.queue).await, vec!["apps/a"], "labelled: read");
    m.apply(&labelled(false));
    assert_eq!(drain(&s.queue).await, vec!["apps/a"], "label removed: gone");
}

#[tokio::test]
async fn a_gateway_backends_status_change_queues_the_nlb_gateways_chaining_to_it() {
    use gateway_api::apis::experimental::tcproutes::TcpRoute;
    let watches = Watches::default();
    let warm = Warm::register(&watches, false, true, false).unwrap();
    let feed = warm.feed(LbKind::Nlb).unwrap().clone();
    let queue = Arc::new(Queue::default());
    feed.attach(Some(queue.clone()));
    let stores = &feed.stores;
    stores.classes.apply(&class("alb", "gateway.k8s.aws/alb"));
    stores.classes.apply(&class("nlb", "gateway.k8s.aws/nlb"));
    stores.gateways.apply(&gateway("n", "nlb", "1", json!({})));
    stores
        .gateways
        .apply(&gateway("edge", "alb", "1", json!({})));
    stores
        .gateways
        .apply(&gateway("lone", "alb", "1", json!({})));
    let route: Arc<TcpRoute> = obj(json!({
        "metadata": {"name": "t", "namespace": "apps"},
        "spec": {"parentRefs": [{"name": "n"}],
                 "rules": [{"backendRefs": [{"name": "edge", "kind": "Gateway", "port": 80}]}]}
    }));
    stores.tcp_routes.apply(&route);
    let t = Trigger::new(feed.clone(), on_gateway, true);
    let programmed = json!({"conditions": [{"type": "Programmed", "status": "True",
        "reason": "Programmed", "message": "arn:aws:elasticloadbalancing:r:1:loadbalancer/app/edge/1",
        "lastTransitionTime": "2025-01-01T00:00:00Z"}]});
    t.apply(&gateway("edge", "alb", "2", programmed));
    assert_eq!(
        drain(&queue).await,
        vec!["apps/n"],
        "the ALB's ARN reached the NLB Gateway that chains to it"
    );
    t.apply(&gateway("lone", "alb", "2", json!({"conditions": []})));
    assert!(queue.is_empty(), "no route chains to it");
    drop(watches);
}

#[tokio::test]
async fn a_listener_set_queues_its_gateway_and_so_does_a_route_naming_the_set() {
    use gateway_api::apis::standard::listenersets::ListenerSet;
    let s = setup();
    let set: Arc<ListenerSet> = obj(json!({
        "metadata": {"name": "ls", "namespace": "apps", "generation": 1},
        "spec": {"parentRef": {"name": "a"}, "listeners": [{"name": "x", "port": 8080, "protocol": "HTTP"}]}
    }));
    let sets = Trigger::new(s.feed.clone(), on_listener_set, false);
    s.feed.stores.listener_sets.apply(&set);
    sets.apply(&set);
    assert_eq!(drain(&s.queue).await, vec!["apps/a"]);
    let status_only: Arc<ListenerSet> = obj(json!({
        "metadata": {"name": "ls", "namespace": "apps", "generation": 1},
        "spec": {"parentRef": {"name": "a"}, "listeners": [{"name": "x", "port": 8080, "protocol": "HTTP"}]},
        "status": {"conditions": []}
    }));
    sets.apply(&status_only);
    assert!(s.queue.is_empty(), "our own status write queues nothing");
    let via_set: Arc<HttpRoute> = obj(json!({
        "metadata": {"name": "r", "namespace": "apps", "generation": 1},
        "spec": {"parentRefs": [{"kind": "ListenerSet", "name": "ls"}],
                 "rules": [{"backendRefs": [{"name": "web", "port": 80}]}]}
    }));
    let routes = Trigger::new(s.feed.clone(), on_route::<HttpRoute>, false);
    routes.apply(&via_set);
    assert_eq!(drain(&s.queue).await, vec!["apps/a"], "the set's Gateway");
    s.feed.stores.http_routes.apply(&via_set);
    let svc: Arc<Service> = obj(json!({"metadata": {"name": "web", "namespace": "apps"}}));
    Trigger::new(s.feed.clone(), on_service, false).apply(&svc);
    assert_eq!(
        drain(&s.queue).await,
        vec!["apps/a"],
        "through the route's set"
    );
}
