//! The Gateway API kinds and the `gateway.k8s.aws` configuration kinds, one watch each like
//! every other kind. They are watched only once a consumer registers (a Gateway controller whose
//! gate is on and whose CRDs are served), so a cluster without the Gateway API CRDs never sees a
//! failing watch.
//!
//! TCPRoute and UDPRoute are watched as `v1` (standard channel since Gateway API v1.6, what
//! upstream v3.5 reads) although the crate's types say `v1alpha2`, and ReferenceGrant as
//! `v1beta1` (upstream's choice, served by every Gateway API release since v0.6); the schemas of
//! those versions are the same, so objects decode into the crate's types unchanged. An object
//! that does not decode is logged and left out rather than failing the whole list; its delete
//! is still handled, by key. Gateways and routes are read untyped and then decoded, noting the
//! fields their types drop (experimental ones such as `retry`), which the model turns into
//! Warnings (see `model::gateway::dropped`), and refusing the route rules that do not decode (an
//! experimental filter such as `ExternalAuth`) rather than the whole route (see
//! `model::gateway::refused`).

use std::fmt::Debug;
use std::sync::Arc;

use futures::{FutureExt, StreamExt};
use kube::api::{ApiResource, DynamicObject};
use kube::runtime::watcher::{self, Event};
use kube::{Api, Resource};
use serde::de::DeserializeOwned;
use serde::Serialize;

use crate::model::gateway::dropped::decode_noting_dropped;

use super::driver::{drive, Kind};
use super::namespaces as scope;
use super::registry::{cluster, namespaced, Driver, Watches};

/// Version TCPRoutes and UDPRoutes are read and written as.
pub const L4_ROUTE_VERSION: &str = "v1";
/// Version TLSRoutes are read as (the crate's type's own).
const TLS_ROUTE_VERSION: &str = "v1";
/// Version ReferenceGrants are read as.
pub const REFERENCE_GRANT_VERSION: &str = "v1beta1";

/// The API resource of `K` served as `version`.
pub fn resource_as<K: Resource<DynamicType = ()>>(version: &str) -> ApiResource {
    let mut ar = ApiResource::erase::<K>(&());
    ar.version = version.to_string();
    ar.api_version = if ar.group.is_empty() {
        version.to_string()
    } else {
        format!("{}/{version}", ar.group)
    };
    ar
}

/// `obj` as `K`, or None (logged) when it does not decode.
fn typed<K: DeserializeOwned + Serialize + Resource>(obj: DynamicObject) -> Option<K> {
    let name = format!(
        "{}/{}",
        obj.metadata.namespace.as_deref().unwrap_or_default(),
        obj.metadata.name.as_deref().unwrap_or_default()
    );
    let kind = obj
        .types
        .as_ref()
        .map(|t| t.kind.clone())
        .unwrap_or_default();
    match serde_json::to_value(obj).and_then(decode_noting_dropped) {
        Ok(k) => Some(k),
        Err(e) => {
            tracing::warn!(kind = %kind, object = %name, error = %e, "ignoring an object that does not decode");
            None
        }
    }
}

/// A watch event of untyped objects as one of `K` (see [`super::driver::decoded_event`]): a
/// route whose rules do not all decode is kept with those refused (`model::gateway::refused`).
fn typed_event<K: DeserializeOwned + Serialize + Resource + Default>(
    event: Event<DynamicObject>,
) -> Option<Event<K>> {
    super::driver::decoded_event(event, typed::<K>, super::driver::key_only::<K>)
}

/// The driver of a namespaced kind read as `version` instead of the type's own.
fn namespaced_as<K>(
    watches: &Arc<Watches>,
    kind: fn(&Watches) -> &Kind<K>,
    client: &kube::Client,
    namespaces: &[String],
    version: &str,
) -> Option<Driver>
where
    K: Resource<DynamicType = ()>
        + Clone
        + Default
        + DeserializeOwned
        + Serialize
        + Debug
        + Send
        + Sync
        + 'static,
{
    kind(watches).wanted().then(|| {
        let ar = resource_as::<K>(version);
        let client = client.clone();
        let events = scope::watch_with(namespaces, watcher::Config::default(), |ns| match ns {
            Some(ns) => Api::<DynamicObject>::namespaced_with(client.clone(), ns, &ar),
            None => Api::all_with(client.clone(), &ar),
        })
        .filter_map(|item| async move {
            match item {
                Ok(e) => typed_event::<K>(e).map(Ok),
                Err(e) => Some(Err(e)),
            }
        });
        let w = watches.clone();
        async move { drive(kind(&w), events).await }.boxed()
    })
}

/// The drivers of every wanted Gateway kind.
pub(super) fn drivers(
    w: &Arc<Watches>,
    c: &kube::Client,
    ns: &[String],
) -> impl Iterator<Item = Driver> {
    [
        cluster(w, |w| &w.gateway.classes, c),
        // Read untyped first, so the fields their types drop are noted (Warnings, not silence).
        namespaced_as(w, |w| &w.gateway.gateways, c, ns, "v1"),
        namespaced_as(w, |w| &w.gateway.http_routes, c, ns, "v1"),
        namespaced_as(w, |w| &w.gateway.grpc_routes, c, ns, "v1"),
        namespaced_as(w, |w| &w.gateway.tcp_routes, c, ns, L4_ROUTE_VERSION),
        namespaced_as(w, |w| &w.gateway.udp_routes, c, ns, L4_ROUTE_VERSION),
        namespaced_as(w, |w| &w.gateway.tls_routes, c, ns, TLS_ROUTE_VERSION),
        namespaced_as(
            w,
            |w| &w.gateway.reference_grants,
            c,
            ns,
            REFERENCE_GRANT_VERSION,
        ),
        namespaced(w, |w| &w.gateway.lb_configs, c, ns),
        namespaced(w, |w| &w.gateway.tg_configs, c, ns),
        namespaced(w, |w| &w.gateway.rule_configs, c, ns),
        namespaced(w, |w| &w.gateway.listener_sets, c, ns),
    ]
    .into_iter()
    .flatten()
}

#[cfg(test)]
mod tests {
    use super::*;
    use gateway_api::apis::experimental::tcproutes::TcpRoute;
    use gateway_api::apis::standard::httproutes::HttpRoute;
    use gateway_api::apis::standard::referencegrants::ReferenceGrant;
    use serde_json::json;

    #[test]
    fn l4_routes_and_reference_grants_are_read_as_the_versions_upstream_reads() {
        let ar = resource_as::<TcpRoute>(L4_ROUTE_VERSION);
        assert_eq!(ar.api_version, "gateway.networking.k8s.io/v1");
        assert_eq!(ar.plural, "tcproutes");
        let ar = resource_as::<ReferenceGrant>(REFERENCE_GRANT_VERSION);
        assert_eq!(ar.api_version, "gateway.networking.k8s.io/v1beta1");
        assert_eq!(ar.kind, "ReferenceGrant");
    }

    #[test]
    fn a_v1_tcp_route_decodes_and_a_broken_one_is_dropped_not_fatal() {
        let ok: DynamicObject = serde_json::from_value(json!({
            "apiVersion": "gateway.networking.k8s.io/v1", "kind": "TCPRoute",
            "metadata": {"name": "r", "namespace": "ns"},
            "spec": {"parentRefs": [{"name": "gw"}], "rules": [{"backendRefs": [{"name": "svc", "port": 80}]}]}
        }))
        .unwrap();
        let Some(Event::Apply(r)) = typed_event::<TcpRoute>(Event::Apply(ok)) else {
            panic!("a v1 TCPRoute decodes into the crate's type");
        };
        assert_eq!(r.spec.rules[0].backend_refs[0].name, "svc");
        let broken: DynamicObject = serde_json::from_value(json!({
            "apiVersion": "gateway.networking.k8s.io/v1", "kind": "TCPRoute",
            "metadata": {"name": "bad", "namespace": "ns"},
            "spec": {"rules": "not a list"}
        }))
        .unwrap();
        assert!(typed_event::<TcpRoute>(Event::InitApply(broken)).is_none());
        assert!(matches!(
            typed_event::<TcpRoute>(Event::InitDone),
            Some(Event::InitDone)
        ));
    }

    #[test]
    fn an_http_route_field_its_type_lacks_is_noted_on_the_decoded_route() {
        let raw: DynamicObject = serde_json::from_value(json!({
            "apiVersion": "gateway.networking.k8s.io/v1", "kind": "HTTPRoute",
            "metadata": {"name": "r", "namespace": "ns"},
            "spec": {"parentRefs": [{"name": "gw"}],
                     "rules": [{"backendRefs": [{"name": "svc", "port": 80}], "retry": {"attempts": 3}}]}
        }))
        .unwrap();
        let Some(Event::Apply(r)) = typed_event::<HttpRoute>(Event::Apply(raw)) else {
            panic!("decodes");
        };
        let dropped = crate::model::gateway::dropped::dropped_of(&r.metadata);
        assert_eq!(dropped, ["spec.rules[].retry"]);
    }

    #[test]
    fn an_http_route_with_an_external_auth_filter_is_kept_with_that_rule_refused() {
        let raw: DynamicObject = serde_json::from_value(json!({
            "apiVersion": "gateway.networking.k8s.io/v1", "kind": "HTTPRoute",
            "metadata": {"name": "r", "namespace": "ns"},
            "spec": {"parentRefs": [{"name": "gw"}],
                     "rules": [{"backendRefs": [{"name": "svc", "port": 80}]},
                               {"filters": [{"type": "ExternalAuth", "externalAuth": {"protocol": "HTTP"}}],
                                "backendRefs": [{"name": "admin", "port": 80}]}]}
        }))
        .unwrap();
        let Some(Event::InitApply(r)) = typed_event::<HttpRoute>(Event::InitApply(raw)) else {
            panic!("a relist keeps the route");
        };
        let rules = r.spec.rules.as_ref().unwrap();
        assert_eq!(rules[0].backend_refs.as_ref().unwrap()[0].name, "svc");
        assert!(
            rules[1].backend_refs.is_none(),
            "the refused rule forwards nowhere"
        );
        let refused = crate::model::gateway::refused::refused_rules_of(&r.metadata);
        assert_eq!(refused.len(), 1);
        assert_eq!(refused[0].rule, 1);
        assert!(refused[0].message.contains("ExternalAuth"), "{refused:?}");
    }

    #[test]
    fn a_delete_of_an_object_that_does_not_decode_is_handled_by_key() {
        let broken: DynamicObject = serde_json::from_value(json!({
            "apiVersion": "gateway.networking.k8s.io/v1", "kind": "HTTPRoute",
            "metadata": {"name": "gone", "namespace": "ns", "uid": "u1"},
            "spec": {"parentRefs": "not a list"}
        }))
        .unwrap();
        assert!(typed_event::<HttpRoute>(Event::Apply(broken.clone())).is_none());
        let Some(Event::Delete(r)) = typed_event::<HttpRoute>(Event::Delete(broken)) else {
            panic!("a delete is never dropped");
        };
        assert_eq!(
            (r.metadata.namespace.as_deref(), r.metadata.name.as_deref()),
            (Some("ns"), Some("gone"))
        );
        assert_eq!(r.metadata.uid.as_deref(), Some("u1"));
        assert!(r.spec.parent_refs.is_none());
    }
}
