//! The Gateway API and `gateway.k8s.aws` objects `diff` reads, kept in the Gateway controllers'
//! own [`Stores`] so their configuration resolver and input gathering run unchanged: listed
//! from the cluster (each kind once, as the controllers' watches read it: TCPRoutes and
//! UDPRoutes as `v1`, ReferenceGrants as `v1beta1`; an object that does not decode is left out
//! as the watch leaves it out) or taken from `-f` manifests.

use std::path::Path;
use std::sync::Arc;

use anyhow::Context;
use gateway_api::apis::experimental::tcproutes::TcpRoute;
use gateway_api::apis::experimental::udproutes::UdpRoute;
use gateway_api::apis::standard::gatewayclasses::GatewayClass;
use gateway_api::apis::standard::gateways::Gateway;
use gateway_api::apis::standard::grpcroutes::GrpcRoute;
use gateway_api::apis::standard::httproutes::HttpRoute;
use gateway_api::apis::standard::listenersets::ListenerSet;
use gateway_api::apis::standard::referencegrants::ReferenceGrant;
use gateway_api::apis::standard::tlsroutes::TlsRoute;
use kube::api::{ApiResource, DynamicObject, ListParams};
use kube::{Api, Resource};
use serde::de::DeserializeOwned;
use serde::Serialize;
use serde_json::Value;

use crate::controller::gateway::Stores;
use crate::crd::gateway::{
    ListenerRuleConfiguration, LoadBalancerConfiguration, TargetGroupConfiguration,
};
use crate::model::gateway::dropped::decode_noting_dropped;
use crate::model::gateway::normalize_gateway;
use crate::model::ClusterObjects;
use crate::watch::gateway::{resource_as, L4_ROUTE_VERSION, REFERENCE_GRANT_VERSION};
use crate::watch::Index;

/// As the watch decodes: the fields the type drops are noted (the model warns of them).
fn decode<K: DeserializeOwned + Serialize + Resource>(mut v: Value, kind: &str) -> Option<K> {
    if kind == "Gateway" {
        normalize_gateway(&mut v);
    }
    decode_noting_dropped(v).ok()
}

/// Lists `ar` in every watched namespace (all when empty); None when the kind is not served.
async fn list_dynamic(
    client: &kube::Client,
    ar: &ApiResource,
    namespaces: &[String],
    cluster_scoped: bool,
) -> anyhow::Result<Option<Vec<Value>>> {
    let apis: Vec<Api<DynamicObject>> = if cluster_scoped || namespaces.is_empty() {
        vec![Api::all_with(client.clone(), ar)]
    } else {
        namespaces
            .iter()
            .map(|ns| Api::namespaced_with(client.clone(), ns, ar))
            .collect()
    };
    let mut out = Vec::new();
    for api in apis {
        match api.list(&ListParams::default()).await {
            Ok(l) => out.extend(
                l.items
                    .into_iter()
                    .filter_map(|o| serde_json::to_value(o).ok()),
            ),
            Err(kube::Error::Api(e)) if e.code == 404 => return Ok(None),
            Err(e) => return Err(e).with_context(|| format!("listing {}", ar.plural)),
        }
    }
    Ok(Some(out))
}

async fn fill<K>(
    store: &crate::watch::Store<K>,
    client: &kube::Client,
    namespaces: &[String],
    version: Option<&str>,
) -> anyhow::Result<bool>
where
    K: Resource<DynamicType = ()> + DeserializeOwned + Serialize + Send + Sync,
{
    let ar = match version {
        Some(v) => resource_as::<K>(v),
        None => ApiResource::erase::<K>(&()),
    };
    let cluster_scoped = ar.kind == "GatewayClass";
    let Some(items) = list_dynamic(client, &ar, namespaces, cluster_scoped).await? else {
        return Ok(false);
    };
    for v in items {
        if let Some(o) = decode::<K>(v, &ar.kind) {
            store.apply(&Arc::new(o));
        }
    }
    Ok(true)
}

/// The Gateway controllers' stores filled from the cluster, with `objs`' Services and
/// Namespaces (ListenerSets with `listener_sets`, the `GatewayListenerSet` gate); None when the
/// API server does not serve Gateways or GatewayClasses.
pub async fn list(
    client: &kube::Client,
    namespaces: &[String],
    objs: &ClusterObjects,
    listener_sets: bool,
) -> anyhow::Result<Option<Stores>> {
    let s = Stores {
        listener_sets_on: listener_sets,
        ..Stores::default()
    };
    if !fill(&s.classes, client, namespaces, None).await?
        || !fill(&s.gateways, client, namespaces, None).await?
    {
        return Ok(None);
    }
    // A kind the cluster does not serve simply has no objects (like a gate's missing route kind).
    fill(&s.http_routes, client, namespaces, None).await?;
    fill(&s.grpc_routes, client, namespaces, None).await?;
    fill(&s.tcp_routes, client, namespaces, Some(L4_ROUTE_VERSION)).await?;
    fill(&s.udp_routes, client, namespaces, Some(L4_ROUTE_VERSION)).await?;
    fill(&s.tls_routes, client, namespaces, None).await?;
    fill(
        &s.reference_grants,
        client,
        namespaces,
        Some(REFERENCE_GRANT_VERSION),
    )
    .await?;
    fill(&s.lb_configs, client, namespaces, None).await?;
    fill(&s.tg_configs, client, namespaces, None).await?;
    fill(&s.rule_configs, client, namespaces, None).await?;
    if s.listener_sets_on {
        fill(&s.listener_sets, client, namespaces, None).await?;
    }
    add_cluster_objects(&s, objs);
    Ok(Some(s))
}

/// Adds the Services and Namespaces the Gateway model reads.
pub fn add_cluster_objects(s: &Stores, objs: &ClusterObjects) {
    for svc in &objs.services {
        s.services.apply(&Arc::new(svc.clone()));
    }
    for ns in &objs.namespaces {
        s.namespaces.apply(&Arc::new(ns.clone()));
    }
}

fn put<K: Resource + DeserializeOwned + Serialize + Send + Sync>(
    store: &crate::watch::Store<K>,
    doc: Value,
    file: &Path,
    kind: &str,
    namespaced: bool,
) -> anyhow::Result<()> {
    let mut doc = doc;
    if kind == "Gateway" {
        normalize_gateway(&mut doc);
    }
    let mut o: K =
        decode_noting_dropped(doc).with_context(|| format!("{}: {kind}", file.display()))?;
    if namespaced && o.meta().namespace.is_none() {
        o.meta_mut().namespace = Some("default".into());
    }
    store.apply(&Arc::new(o));
    Ok(())
}

/// Keeps a manifest document of a Gateway kind in `s`; false for any other kind.
pub fn take(s: &Stores, doc: &Value, file: &Path) -> anyhow::Result<bool> {
    let kind = doc.get("kind").and_then(Value::as_str).unwrap_or("");
    let d = doc.clone();
    match kind {
        "GatewayClass" => put::<GatewayClass>(&s.classes, d, file, kind, false)?,
        "Gateway" => put::<Gateway>(&s.gateways, d, file, kind, true)?,
        "HTTPRoute" => put::<HttpRoute>(&s.http_routes, d, file, kind, true)?,
        "GRPCRoute" => put::<GrpcRoute>(&s.grpc_routes, d, file, kind, true)?,
        "TCPRoute" => put::<TcpRoute>(&s.tcp_routes, d, file, kind, true)?,
        "UDPRoute" => put::<UdpRoute>(&s.udp_routes, d, file, kind, true)?,
        "TLSRoute" => put::<TlsRoute>(&s.tls_routes, d, file, kind, true)?,
        // v1beta1 (what upstream reads) and v1 have the same shape.
        "ReferenceGrant" => put::<ReferenceGrant>(&s.reference_grants, d, file, kind, true)?,
        "LoadBalancerConfiguration" => {
            put::<LoadBalancerConfiguration>(&s.lb_configs, d, file, kind, true)?
        }
        "TargetGroupConfiguration" => {
            put::<TargetGroupConfiguration>(&s.tg_configs, d, file, kind, true)?
        }
        "ListenerSet" => put::<ListenerSet>(&s.listener_sets, d, file, kind, true)?,
        "ListenerRuleConfiguration" => {
            put::<ListenerRuleConfiguration>(&s.rule_configs, d, file, kind, true)?
        }
        _ => return Ok(false),
    }
    Ok(true)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn manifests_of_gateway_kinds_go_to_the_stores_in_the_default_namespace_others_do_not() {
        let s = Stores {
            listener_sets_on: true,
            ..Stores::default()
        };
        let f = Path::new("gw.yaml");
        let gw = json!({
            "apiVersion": "gateway.networking.k8s.io/v1", "kind": "Gateway",
            "metadata": {"name": "gw"},
            "spec": {"gatewayClassName": "aws-alb",
                     "listeners": [{"name": "http", "port": 80, "protocol": "HTTP"}]}
        });
        assert!(take(&s, &gw, f).unwrap());
        assert!(
            s.gateways.get("default", "gw").is_some(),
            "namespace defaulted"
        );
        let set = json!({
            "apiVersion": "gateway.networking.k8s.io/v1", "kind": "ListenerSet",
            "metadata": {"name": "extra", "namespace": "apps"},
            "spec": {"parentRef": {"name": "gw", "namespace": "default"},
                     "listeners": [{"name": "h", "port": 81, "protocol": "HTTP"}]}
        });
        assert!(take(&s, &set, f).unwrap());
        assert!(s.listener_sets.get("apps", "extra").is_some());
        let ing = json!({"apiVersion": "networking.k8s.io/v1", "kind": "Ingress",
                         "metadata": {"name": "i"}});
        assert!(!take(&s, &ing, f).unwrap(), "left to plan's reader");
        let bad = json!({"kind": "HTTPRoute", "metadata": {"name": "r"}, "spec": {"rules": 3}});
        let e = take(&s, &bad, f).unwrap_err();
        assert!(format!("{e:#}").contains("gw.yaml: HTTPRoute"), "{e:#}");
    }
}
