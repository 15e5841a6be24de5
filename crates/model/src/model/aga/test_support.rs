//! Fixtures of the GlobalAccelerator builder tests: objects from upstream-shaped JSON, endpoints
//! and loaded endpoints as upstream's test tables write them.

use serde_json::{json, Value};

use super::endpoints::{EndpointResource, LoadedEndpoint, LoadedEndpointStatus};
use crate::crd::global_accelerator::{
    GlobalAccelerator, GlobalAcceleratorEndpoint, GlobalAcceleratorEndpointType,
    GlobalAcceleratorListener,
};

/// A GlobalAccelerator `namespace/name` with `spec`.
pub fn ga(namespace: &str, name: &str, spec: Value) -> GlobalAccelerator {
    serde_json::from_value(json!({
        "apiVersion": "aga.k8s.aws/v1beta1",
        "kind": "GlobalAccelerator",
        "metadata": {"namespace": namespace, "name": name},
        "spec": spec,
    }))
    .expect("a GlobalAccelerator")
}

/// One spec listener from JSON.
pub fn listener(v: Value) -> GlobalAcceleratorListener {
    serde_json::from_value(v).expect("a listener")
}

/// One spec endpoint from JSON.
pub fn endpoint(v: Value) -> GlobalAcceleratorEndpoint {
    serde_json::from_value(v).expect("an endpoint")
}

/// A named endpoint of `t`, namespace unset.
pub fn named(t: GlobalAcceleratorEndpointType, name: &str) -> GlobalAcceleratorEndpoint {
    GlobalAcceleratorEndpoint {
        name: Some(name.into()),
        ..GlobalAcceleratorEndpoint::of_type(t)
    }
}

/// A named endpoint of `t` in `namespace`.
pub fn named_in(
    t: GlobalAcceleratorEndpointType,
    namespace: &str,
    name: &str,
) -> GlobalAcceleratorEndpoint {
    GlobalAcceleratorEndpoint {
        namespace: Some(namespace.into()),
        ..named(t, name)
    }
}

/// An EndpointID endpoint.
pub fn by_id(id: &str) -> GlobalAcceleratorEndpoint {
    GlobalAcceleratorEndpoint {
        endpoint_id: Some(id.into()),
        ..GlobalAcceleratorEndpoint::of_type(GlobalAcceleratorEndpointType::EndpointID)
    }
}

/// A loaded endpoint as upstream's tables write one: type, name, namespace, status, ARN.
pub fn loaded(
    t: GlobalAcceleratorEndpointType,
    name: &str,
    namespace: &str,
    status: LoadedEndpointStatus,
    arn: &str,
) -> LoadedEndpoint {
    let mut e = GlobalAcceleratorEndpoint::of_type(t);
    if t == GlobalAcceleratorEndpointType::EndpointID {
        e.endpoint_id = Some(arn.into());
    } else {
        e.name = Some(name.into());
        e.namespace = Some(namespace.into());
    }
    LoadedEndpoint {
        arn: arn.into(),
        status,
        ..LoadedEndpoint::new(&e, namespace)
    }
}

/// `v` with `apiVersion` and `kind` set, as the API server serves objects.
fn typed(mut v: Value, api_version: &str, kind: &str) -> Value {
    v["apiVersion"] = api_version.into();
    v["kind"] = kind.into();
    v
}

/// A Service from JSON, as an endpoint resource.
pub fn service(v: Value) -> EndpointResource {
    let v = typed(v, "v1", "Service");
    EndpointResource::Service(Box::new(serde_json::from_value(v).expect("a Service")))
}

/// An Ingress from JSON, as an endpoint resource.
pub fn ingress(v: Value) -> EndpointResource {
    let v = typed(v, "networking.k8s.io/v1", "Ingress");
    EndpointResource::Ingress(Box::new(serde_json::from_value(v).expect("an Ingress")))
}

/// A Gateway from JSON (its spec defaults to class `c` without listeners), as an endpoint
/// resource.
pub fn gateway(mut v: Value) -> EndpointResource {
    if v.get("spec").is_none() {
        v["spec"] = json!({"gatewayClassName": "c", "listeners": []});
    }
    let v = typed(v, "gateway.networking.k8s.io/v1", "Gateway");
    EndpointResource::Gateway(Box::new(serde_json::from_value(v).expect("a Gateway")))
}
