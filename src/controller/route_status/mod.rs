//! Route status (`status.parents`) after a Gateway build, as upstream's route-status queue
//! writes it (`controllers/gateway/route_reconciler.go`): one entry per spec parentRef naming
//! the Gateway, with `controllerName` `gateway.k8s.aws/alb` (HTTPRoute, GRPCRoute) or
//! `gateway.k8s.aws/nlb` (TCPRoute, UDPRoute, TLSRoute) and the conditions ResolvedRefs and
//! Accepted (True with empty messages, or False with the loader's reason and message).
//!
//! The Gateway reconciler calls [`publish`] after each build with the inputs it built from (every
//! route of the kinds its load balancer serves, attached or not, so a route detached from the
//! Gateway loses its entry), and [`forget`] once a deleted Gateway is gone. Each route is
//! merge-patched only when its status changes, with its resourceVersion as precondition (a
//! conflict re-reads the route and merges again), so a second publish of the same build writes
//! nothing. TCPRoutes and UDPRoutes are written as `v1`, the version they are read as.

mod desired;
mod merge;
#[cfg(test)]
mod tests;

use kube::api::{ApiResource, DynamicObject, Patch, PatchParams};
use kube::Api;
use serde::Serialize;
use serde_json::{json, Value};

use crate::model::gateway::listeners::LbKind;
use crate::model::gateway::routes::RouteKind;
use crate::model::gateway::{gateway_routes, GatewayBuild, GatewayInputs};
use crate::model::StackKind;
use crate::watch::gateway::{resource_as, L4_ROUTE_VERSION};

pub use desired::{conditions, controller_of, parent_gone, verdicts, Verdict};
pub use merge::{merge, parent_key, Route, Update};

/// Attempts per route when its resourceVersion keeps moving under us.
const CONFLICT_ATTEMPTS: usize = 3;

/// One route as read from the watch, untyped, with where to write it.
struct RouteObject {
    kind: RouteKind,
    resource: ApiResource,
    namespace: String,
    name: String,
    generation: i64,
    value: Value,
}

fn object<K: Serialize + kube::Resource>(
    kind: RouteKind,
    resource: &ApiResource,
    r: &K,
) -> RouteObject {
    let meta = r.meta();
    RouteObject {
        kind,
        resource: resource.clone(),
        namespace: meta.namespace.clone().unwrap_or_else(|| "default".into()),
        name: meta.name.clone().unwrap_or_default(),
        generation: meta.generation.unwrap_or(0),
        value: serde_json::to_value(r).unwrap_or(Value::Null),
    }
}

fn resource<K: kube::Resource<DynamicType = ()>>() -> ApiResource {
    ApiResource::erase::<K>(&())
}

/// The routes of `lb`, in the build's route order (see [`gateway_routes`]).
fn build_objects(inputs: &GatewayInputs<'_>, lb: LbKind) -> Vec<RouteObject> {
    use gateway_api::apis::experimental::tcproutes::TcpRoute;
    use gateway_api::apis::experimental::udproutes::UdpRoute;
    use gateway_api::apis::standard::grpcroutes::GrpcRoute;
    use gateway_api::apis::standard::httproutes::HttpRoute;
    use gateway_api::apis::standard::tlsroutes::TlsRoute;
    fn of<K: Serialize + kube::Resource>(
        kind: RouteKind,
        ar: ApiResource,
        routes: &[K],
    ) -> impl Iterator<Item = RouteObject> + '_ {
        routes.iter().map(move |r| object(kind, &ar, r))
    }
    match lb {
        LbKind::Alb => of(RouteKind::Http, resource::<HttpRoute>(), inputs.http_routes)
            .chain(of(
                RouteKind::Grpc,
                resource::<GrpcRoute>(),
                inputs.grpc_routes,
            ))
            .collect(),
        LbKind::Nlb => {
            let tcp = resource_as::<TcpRoute>(L4_ROUTE_VERSION);
            let udp = resource_as::<UdpRoute>(L4_ROUTE_VERSION);
            of(RouteKind::Tcp, tcp, inputs.tcp_routes)
                .chain(of(RouteKind::Udp, udp, inputs.udp_routes))
                .chain(of(
                    RouteKind::Tls,
                    resource::<TlsRoute>(),
                    inputs.tls_routes,
                ))
                .collect()
        }
    }
}

/// Every route of the inputs, of every kind.
fn all_objects(inputs: &GatewayInputs<'_>) -> Vec<RouteObject> {
    let mut out = build_objects(inputs, LbKind::Alb);
    out.extend(build_objects(inputs, LbKind::Nlb));
    out
}

fn now() -> String {
    serde_json::to_value(k8s_openapi::apimachinery::pkg::apis::meta::v1::Time(
        k8s_openapi::jiff::Timestamp::now(),
    ))
    .ok()
    .and_then(|v| v.as_str().map(String::from))
    .unwrap_or_default()
}

fn array<'v>(v: &'v Value, pointer: &str) -> &'v [Value] {
    v.pointer(pointer)
        .and_then(Value::as_array)
        .map(Vec::as_slice)
        .unwrap_or_default()
}

/// Writes the status of each route the build loaded; returns how many routes were patched.
/// Every route is tried; the first error is returned after the others were written.
pub async fn publish(
    client: &kube::Client,
    inputs: &GatewayInputs<'_>,
    build: &GatewayBuild,
) -> Result<usize, kube::Error> {
    let lb = match build.stack.kind {
        StackKind::NlbGateway => LbKind::Nlb,
        _ => LbKind::Alb,
    };
    let views = gateway_routes(inputs, lb);
    let objects = build_objects(inputs, lb);
    let verdicts = verdicts(build, &views);
    let now = now();
    let mut patched = 0;
    let mut first_error = None;
    for (obj, verdicts) in objects.iter().zip(&verdicts) {
        let spec_refs = array(&obj.value, "/spec/parentRefs");
        let updates: Vec<Update> = verdicts
            .iter()
            .filter_map(|(pos, v)| {
                Some(Update {
                    parent_ref: spec_refs.get(*pos)?.clone(),
                    conditions: conditions(v),
                })
            })
            .collect();
        match write(client, obj, &updates, true, &now).await {
            Ok(true) => patched += 1,
            Ok(false) => {}
            Err(e) => {
                tracing::warn!(route = %format!("{}/{}", obj.namespace, obj.name), error = %e, "failed to update route status");
                first_error.get_or_insert(e);
            }
        }
    }
    match first_error {
        Some(e) => Err(e),
        None => Ok(patched),
    }
}

/// After Gateway `inputs.gateway` is gone: each of our route entries naming it becomes upstream's
/// Accepted False `ParentRefDoesNotExist` (what upstream's route reconciler writes for a parent it
/// cannot find). Routes without such an entry are not touched. Returns how many were patched.
pub async fn forget(
    client: &kube::Client,
    inputs: &GatewayInputs<'_>,
) -> Result<usize, kube::Error> {
    let gw = &inputs.gateway.metadata;
    let (ns, name) = (
        gw.namespace.as_deref().unwrap_or("default"),
        gw.name.as_deref().unwrap_or_default(),
    );
    let now = now();
    let mut patched = 0;
    let mut first_error = None;
    for obj in all_objects(inputs) {
        let updates: Vec<Update> = array(&obj.value, "/spec/parentRefs")
            .iter()
            .filter(|p| names_gateway_json(p, &obj.namespace, ns, name))
            .map(|p| Update {
                parent_ref: p.clone(),
                conditions: parent_gone(name),
            })
            .collect();
        if updates.is_empty() {
            continue;
        }
        match write(client, &obj, &updates, false, &now).await {
            Ok(true) => patched += 1,
            Ok(false) => {}
            Err(e) => {
                first_error.get_or_insert(e);
            }
        }
    }
    match first_error {
        Some(e) => Err(e),
        None => Ok(patched),
    }
}

fn names_gateway_json(p: &Value, route_ns: &str, ns: &str, name: &str) -> bool {
    let s = |f: &str| p.get(f).and_then(Value::as_str);
    s("kind").is_none_or(|k| k == "Gateway")
        && s("name") == Some(name)
        && s("namespace").unwrap_or(route_ns) == ns
}

/// Merges `updates` into one route's status and patches it when that changes anything.
async fn write(
    client: &kube::Client,
    obj: &RouteObject,
    updates: &[Update],
    append: bool,
    now: &str,
) -> Result<bool, kube::Error> {
    let api: Api<DynamicObject> =
        Api::namespaced_with(client.clone(), &obj.namespace, &obj.resource);
    let controller = controller_of(obj.kind);
    let mut value = obj.value.clone();
    for attempt in 1..=CONFLICT_ATTEMPTS {
        let current = array(&value, "/status/parents");
        let route = Route {
            namespace: &obj.namespace,
            generation: obj.generation,
            spec_refs: array(&value, "/spec/parentRefs"),
            current,
        };
        let merged = merge(&route, controller, updates, append, now);
        if merged.as_slice() == current {
            return Ok(false);
        }
        let patch = json!({
            "metadata": {"resourceVersion": value.pointer("/metadata/resourceVersion")},
            "status": {"parents": merged},
        });
        match api
            .patch_status(&obj.name, &PatchParams::default(), &Patch::Merge(&patch))
            .await
        {
            Ok(_) => return Ok(true),
            Err(kube::Error::Api(e)) if e.code == 404 => return Ok(false),
            Err(kube::Error::Api(e)) if e.code == 409 && attempt < CONFLICT_ATTEMPTS => {
                match api.get_opt(&obj.name).await? {
                    Some(fresh) => {
                        value = serde_json::to_value(fresh).map_err(kube::Error::SerdeError)?
                    }
                    None => return Ok(false),
                }
            }
            Err(e) => return Err(e),
        }
    }
    Ok(false)
}
