//! The Service ports Ingress backends name ([`ServiceRef`]), and named ports resolved against
//! the input's Services: below the route and action translations, which both need them.

use std::collections::BTreeMap;

use k8s_openapi::api::core::v1::Service;

use super::{go_quote, MigrateError};

/// A Service port an Ingress routes to (its TargetGroupConfiguration's key).
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub struct ServiceRef {
    pub namespace: String,
    pub name: String,
    pub port: i32,
}

impl ServiceRef {
    /// `ns/name:port`.
    pub fn key(&self) -> String {
        format!("{}/{}:{}", self.namespace, self.name, self.port)
    }
}

/// A Service port by name (a Service the input does not have cannot be resolved).
pub fn lookup_named_port(
    namespace: &str,
    svc: &str,
    port_name: &str,
    services: &BTreeMap<String, Service>,
) -> Result<i32, MigrateError> {
    let key = format!("{namespace}/{svc}");
    let s = services.get(&key).ok_or_else(|| {
        MigrateError::Translate(format!(
            "service {key} not found, cannot resolve named port {}",
            go_quote(port_name)
        ))
    })?;
    s.spec
        .as_ref()
        .and_then(|spec| spec.ports.as_ref())
        .into_iter()
        .flatten()
        .find(|p| p.name.as_deref() == Some(port_name))
        .map(|p| p.port)
        .ok_or_else(|| {
            MigrateError::Translate(format!(
                "service {key} has no port named {}",
                go_quote(port_name)
            ))
        })
}
