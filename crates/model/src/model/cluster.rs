//! The Kubernetes objects the model reads (a cache snapshot, or manifests for `plan`) and the
//! ways every builder reads them: object keys, a Service's ports, the stand-in for the Service
//! UID a manifest lacks.

use k8s_openapi::api::core::v1::{Namespace, Secret, Service, ServicePort};
use k8s_openapi::api::networking::v1::{Ingress, IngressClass};
use k8s_openapi::apimachinery::pkg::util::intstr::IntOrString;

use super::error::Fail;
use crate::crd::IngressClassParams;

/// The Kubernetes objects the model reads (a cache snapshot, or manifests for `plan`).
#[derive(Debug, Clone, Default)]
pub struct ClusterObjects {
    pub ingresses: Vec<Ingress>,
    pub services: Vec<Service>,
    pub ingress_classes: Vec<IngressClass>,
    pub ingress_class_params: Vec<IngressClassParams>,
    pub namespaces: Vec<Namespace>,
    /// Secrets the OIDC actions read (a cache needs only the referenced ones and their
    /// `clientID`/`clientId`/`clientSecret` keys; see [`super::oidc`]).
    pub secrets: Vec<Secret>,
}

impl ClusterObjects {
    pub fn service(&self, namespace: &str, name: &str) -> Option<&Service> {
        self.services.iter().find(|s| {
            s.metadata.namespace.as_deref().unwrap_or("default") == namespace
                && s.metadata.name.as_deref() == Some(name)
        })
    }

    pub fn secret(&self, namespace: &str, name: &str) -> Option<&Secret> {
        self.secrets.iter().find(|s| {
            s.metadata.namespace.as_deref().unwrap_or("default") == namespace
                && s.metadata.name.as_deref() == Some(name)
        })
    }
}

/// `ns/name` of an object.
pub fn key_of(meta: &k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta) -> String {
    format!(
        "{}/{}",
        meta.namespace.as_deref().unwrap_or("default"),
        meta.name.as_deref().unwrap_or("")
    )
}

/// Service UID hashed into target-group names when the Service has none (manifests from git).
pub const PLACEHOLDER_SERVICE_UID: &str = "00000000-0000-0000-0000-000000000000";

/// `IntOrString.String()`.
pub fn port_string(p: &IntOrString) -> String {
    match p {
        IntOrString::Int(i) => i.to_string(),
        IntOrString::String(s) => s.clone(),
    }
}

/// Upstream's `LookupServicePort`.
pub fn lookup_service_port<'s>(
    svc: &'s Service,
    port: &IntOrString,
) -> Result<&'s ServicePort, Fail> {
    let ports = svc
        .spec
        .as_ref()
        .and_then(|s| s.ports.as_ref())
        .map(Vec::as_slice)
        .unwrap_or(&[]);
    ports
        .iter()
        .find(|p| match port {
            IntOrString::String(n) => p.name.as_deref() == Some(n.as_str()),
            IntOrString::Int(n) => p.port == *n,
        })
        .ok_or_else(|| {
            Fail::msg(format!(
                "unable to find port {} on service {}",
                port_string(port),
                key_of(&svc.metadata)
            ))
        })
}
