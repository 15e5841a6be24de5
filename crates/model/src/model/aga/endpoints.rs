//! What a GlobalAccelerator's endpoints name and what loading them found (upstream's
//! `endpoint_utils.go`, `endpoint_errors.go` and the types of `endpoint_loader.go`): the
//! references in spec order, the keys that match a configured endpoint with its loaded form, and
//! the per-endpoint outcome with upstream's messages.

use std::fmt;

use gateway_api::apis::standard::gateways::Gateway;
use k8s_openapi::api::core::v1::Service;
use k8s_openapi::api::networking::v1::Ingress;

use crate::crd::global_accelerator::{
    GlobalAccelerator, GlobalAcceleratorEndpoint, GlobalAcceleratorEndpointType,
};

/// Weight of an endpoint that sets none (the CRD's default).
pub const DEFAULT_ENDPOINT_WEIGHT: i32 = 128;

/// Upstream's messages of a failed load (`LoadedEndpoint.Message`).
pub const ENDPOINT_NOT_FOUND_MSG: &str = "Referenced resource not found";
pub const LOAD_BALANCER_NOT_FOUND_MSG: &str = "Resource does not have a LoadBalancer";
pub const DNS_RESOLUTION_FAILED_MSG: &str = "Failed to resolve DNS name to ARN";
pub const ENDPOINT_ID_EMPTY_MSG: &str = "EndpointID is required for EndpointID type";
pub const API_SERVER_ERROR_MSG: &str = "Error contacting Kubernetes API server";
pub const CROSS_NAMESPACE_REFERENCE_MSG: &str = "Cross-namespace reference denied";

/// One endpoint of the spec with the namespace it resolves in (upstream's `EndpointReference`).
#[derive(Debug, Clone, PartialEq)]
pub struct EndpointReference {
    pub endpoint_type: GlobalAcceleratorEndpointType,
    /// Service, Ingress or Gateway name; "" for EndpointID.
    pub name: String,
    /// The endpoint's namespace, else the GlobalAccelerator's; "" for EndpointID.
    pub namespace: String,
    /// The id of an EndpointID endpoint; "" for the others.
    pub endpoint_id: String,
    pub endpoint: GlobalAcceleratorEndpoint,
}

/// What a reference names, for the reference tracker (upstream's `ResourceKey`): an EndpointID
/// endpoint is keyed by its id with an empty namespace.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct ResourceKey {
    pub kind: GlobalAcceleratorEndpointType,
    pub namespace: String,
    pub name: String,
}

impl EndpointReference {
    /// The tracked resource this reference names.
    pub fn resource_key(&self) -> ResourceKey {
        match self.endpoint_type {
            GlobalAcceleratorEndpointType::EndpointID => ResourceKey {
                kind: self.endpoint_type,
                namespace: String::new(),
                name: self.endpoint_id.clone(),
            },
            _ => ResourceKey {
                kind: self.endpoint_type,
                namespace: self.namespace.clone(),
                name: self.name.clone(),
            },
        }
    }
}

/// Every endpoint of every endpoint group of every listener, in spec order (upstream's
/// `GetAllDesiredEndpointsFromGA`); an empty `namespace` counts as unset here.
pub fn desired_endpoints(ga: &GlobalAccelerator) -> Vec<EndpointReference> {
    let ga_namespace = ga.namespace_or_empty();
    let mut out = Vec::new();
    for listener in ga.spec.listeners.iter().flatten() {
        for group in listener.endpoint_groups.iter().flatten() {
            for endpoint in group.endpoints.iter().flatten() {
                let reference = match endpoint.endpoint_type {
                    GlobalAcceleratorEndpointType::EndpointID => EndpointReference {
                        endpoint_type: endpoint.endpoint_type,
                        name: String::new(),
                        namespace: String::new(),
                        endpoint_id: endpoint.endpoint_id.clone().unwrap_or_default(),
                        endpoint: endpoint.clone(),
                    },
                    _ => EndpointReference {
                        endpoint_type: endpoint.endpoint_type,
                        name: endpoint.name.clone().unwrap_or_default(),
                        namespace: endpoint
                            .namespace
                            .clone()
                            .filter(|n| !n.is_empty())
                            .unwrap_or_else(|| ga_namespace.to_string()),
                        endpoint_id: String::new(),
                        endpoint: endpoint.clone(),
                    },
                };
                out.push(reference);
            }
        }
    }
    out
}

/// The namespace an endpoint resolves in: its own when set (even empty, as upstream's loader
/// reads it), else the GlobalAccelerator's.
pub fn endpoint_namespace<'a>(
    endpoint: &'a GlobalAcceleratorEndpoint,
    ga_namespace: &'a str,
) -> &'a str {
    endpoint.namespace.as_deref().unwrap_or(ga_namespace)
}

/// `EndpointID/<id>` or `<Type>/<namespace>/<name>` (upstream's `generateEndpointKey`): how a
/// configured endpoint finds its loaded form, and how endpoint errors name it.
pub fn endpoint_key(endpoint: &GlobalAcceleratorEndpoint, ga_namespace: &str) -> String {
    match endpoint.endpoint_type {
        GlobalAcceleratorEndpointType::EndpointID => format!(
            "EndpointID/{}",
            endpoint.endpoint_id.as_deref().unwrap_or_default()
        ),
        t => format!(
            "{t}/{}/{}",
            endpoint_namespace(endpoint, ga_namespace),
            endpoint.name.as_deref().unwrap_or_default()
        ),
    }
}

/// Outcome of loading one endpoint.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LoadedEndpointStatus {
    /// An ARN was found; the endpoint goes into its group.
    Loaded,
    /// Not usable now (missing object, no load balancer yet, no grant): left out, retried.
    Warning,
    /// The reconcile stops (`EndpointLoadFailed`).
    Fatal,
}

/// Severity of an [`EndpointLoadError`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Severity {
    Fatal,
    Warning,
}

impl fmt::Display for Severity {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Severity::Fatal => "Fatal",
            Severity::Warning => "Warning",
        })
    }
}

/// Why an endpoint did not load (upstream's `EndpointLoadError`); its text is upstream's
/// `<Severity> error for endpoint <key>: <message> - <cause>` (`<nil>` without a cause).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EndpointLoadError {
    pub severity: Severity,
    /// One of the `*_MSG` texts.
    pub message: &'static str,
    pub cause: Option<String>,
    /// [`endpoint_key`] of the endpoint.
    pub endpoint: String,
}

impl EndpointLoadError {
    pub fn fatal(message: &'static str, cause: Option<String>, endpoint: String) -> Self {
        EndpointLoadError {
            severity: Severity::Fatal,
            message,
            cause,
            endpoint,
        }
    }

    pub fn warning(message: &'static str, cause: Option<String>, endpoint: String) -> Self {
        EndpointLoadError {
            severity: Severity::Warning,
            message,
            cause,
            endpoint,
        }
    }
}

impl fmt::Display for EndpointLoadError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{} error for endpoint {}: {} - {}",
            self.severity,
            self.endpoint,
            self.message,
            self.cause.as_deref().unwrap_or("<nil>")
        )
    }
}

impl std::error::Error for EndpointLoadError {}

/// The object a Service, Ingress or Gateway endpoint resolved through, kept for protocol and
/// port discovery.
#[derive(Debug, Clone, PartialEq)]
pub enum EndpointResource {
    Service(Box<Service>),
    Ingress(Box<Ingress>),
    Gateway(Box<Gateway>),
}

impl EndpointResource {
    /// `namespace/name` of the object.
    pub fn key(&self) -> String {
        let meta = match self {
            EndpointResource::Service(s) => &s.metadata,
            EndpointResource::Ingress(i) => &i.metadata,
            EndpointResource::Gateway(g) => &g.metadata,
        };
        format!(
            "{}/{}",
            meta.namespace.as_deref().unwrap_or_default(),
            meta.name.as_deref().unwrap_or_default()
        )
    }

    /// Go's type name of the object, for upstream's "expected X but got T" texts.
    pub fn go_type(&self) -> &'static str {
        match self {
            EndpointResource::Service(_) => "*v1.Service",
            EndpointResource::Ingress(_) => "*v1.Ingress",
            EndpointResource::Gateway(_) => "*v1.Gateway",
        }
    }
}

/// One listener of a load balancer as ELBv2 describes it: what auto-discovery reads for an
/// EndpointID endpoint.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ElbListener {
    /// ELBv2's protocol (`HTTP`, `HTTPS`, `TCP`, `TLS`, `UDP`, `TCP_UDP`, ...).
    pub protocol: String,
    pub port: i32,
}

/// One endpoint after loading (upstream's `LoadedEndpoint`).
#[derive(Debug, Clone, PartialEq)]
pub struct LoadedEndpoint {
    pub endpoint_type: GlobalAcceleratorEndpointType,
    /// "" for EndpointID.
    pub name: String,
    /// [`endpoint_namespace`] of the endpoint.
    pub namespace: String,
    /// The endpoint's weight, else [`DEFAULT_ENDPOINT_WEIGHT`].
    pub weight: i32,
    /// The endpoint as configured.
    pub endpoint: GlobalAcceleratorEndpoint,
    /// The load balancer ARN (the id itself for EndpointID); "" when not loaded.
    pub arn: String,
    /// The DNS name the ARN was resolved from.
    pub dns_name: String,
    pub status: LoadedEndpointStatus,
    pub error: Option<EndpointLoadError>,
    /// Human-readable outcome.
    pub message: String,
    /// The Service, Ingress or Gateway read, for discovery.
    pub resource: Option<EndpointResource>,
    /// Whether a ReferenceGrant allowed this cross-namespace reference.
    pub cross_namespace_allowed: bool,
    /// For an EndpointID endpoint auto-discovery reads: its load balancer's listeners as the
    /// controller described them ([`super::discovery::listeners_to_describe`]), or why they
    /// could not be; `None` when not described.
    pub listeners: Option<Result<Vec<ElbListener>, String>>,
}

impl LoadedEndpoint {
    /// `endpoint` before loading: status Loaded, nothing resolved yet.
    pub fn new(endpoint: &GlobalAcceleratorEndpoint, default_namespace: &str) -> Self {
        LoadedEndpoint {
            endpoint_type: endpoint.endpoint_type,
            name: endpoint.name.clone().unwrap_or_default(),
            namespace: endpoint_namespace(endpoint, default_namespace).to_string(),
            weight: endpoint.weight.unwrap_or(DEFAULT_ENDPOINT_WEIGHT),
            endpoint: endpoint.clone(),
            arn: String::new(),
            dns_name: String::new(),
            status: LoadedEndpointStatus::Loaded,
            error: None,
            message: String::new(),
            resource: None,
            cross_namespace_allowed: false,
            listeners: None,
        }
    }

    /// Whether the endpoint goes into the model.
    pub fn is_usable(&self) -> bool {
        self.status == LoadedEndpointStatus::Loaded
    }

    /// `EndpointID/<arn>` or `<Type>/<namespace>/<name>` (upstream's `GetKey`): equal to the
    /// [`endpoint_key`] of the endpoint it was loaded from.
    pub fn key(&self) -> String {
        match self.endpoint_type {
            GlobalAcceleratorEndpointType::EndpointID => format!("EndpointID/{}", self.arn),
            t => format!("{t}/{}/{}", self.namespace, self.name),
        }
    }
}

#[cfg(test)]
#[path = "endpoints_tests.rs"]
mod tests;
