//! Endpoint loading (upstream's `endpoint_loader.go`), pure: a Service, Ingress or Gateway
//! endpoint is read through an [`EndpointSource`] the controller fills from its caches (another
//! namespace only when a ReferenceGrant there allows `aga.k8s.aws` GlobalAccelerators of this
//! namespace), its load balancer's DNS name taken from its status and turned into the ARN over
//! the load balancers the controller described; an EndpointID endpoint is its own ARN. Every
//! endpoint gets a [`LoadedEndpoint`], with upstream's warning or fatal error when it did not
//! load.

use gateway_api::apis::standard::gateways::Gateway;
use gateway_api::apis::standard::referencegrants::ReferenceGrant;
use k8s_openapi::api::core::v1::Service;
use k8s_openapi::api::networking::v1::Ingress;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;

use super::dns::{load_balancer_arn_by_dns, DescribedLoadBalancer};
use super::endpoints::{
    endpoint_key, EndpointLoadError, EndpointReference, EndpointResource, LoadedEndpoint,
    LoadedEndpointStatus, Severity, API_SERVER_ERROR_MSG, CROSS_NAMESPACE_REFERENCE_MSG,
    DNS_RESOLUTION_FAILED_MSG, ENDPOINT_ID_EMPTY_MSG, ENDPOINT_NOT_FOUND_MSG,
    LOAD_BALANCER_NOT_FOUND_MSG,
};
use crate::crd::global_accelerator::{
    GlobalAccelerator, GlobalAcceleratorEndpoint, GlobalAcceleratorEndpointType, GROUP, KIND,
};
use crate::model::gateway::grants::{
    reference_allowed, From as GrantFrom, To as GrantTo, GATEWAY_API_GROUP,
};

/// One object read by name.
#[derive(Debug, Clone, PartialEq)]
pub enum Lookup<T> {
    Found(T),
    /// The API server (or the cache) has no such object.
    NotFound,
    /// Reading failed; the text of the error.
    Failed(String),
}

/// What endpoint loading reads: the controller implements it over its caches and the load
/// balancers it described; [`EndpointObjects`] holds the same as plain data.
pub trait EndpointSource {
    fn service(&self, namespace: &str, name: &str) -> Lookup<Service>;
    fn ingress(&self, namespace: &str, name: &str) -> Lookup<Ingress>;
    fn gateway(&self, namespace: &str, name: &str) -> Lookup<Gateway>;
    /// The ReferenceGrants of `namespace`; none (not an error) when their CRD is not installed.
    fn reference_grants(&self, namespace: &str) -> Result<Vec<ReferenceGrant>, String>;
    /// The ARN of the load balancer whose DNS name this is ([`load_balancer_arn_by_dns`]).
    fn load_balancer_arn(&self, dns_name: &str) -> Result<String, String>;
}

/// An [`EndpointSource`] of objects at hand: for tests, `plan`, and a controller that gathers
/// what a GlobalAccelerator references before loading it.
#[derive(Debug, Clone, Default)]
pub struct EndpointObjects {
    pub services: Vec<Service>,
    pub ingresses: Vec<Ingress>,
    pub gateways: Vec<Gateway>,
    pub reference_grants: Vec<ReferenceGrant>,
    /// The region's load balancers (DescribeLoadBalancers).
    pub load_balancers: Vec<DescribedLoadBalancer>,
    /// Why describing the load balancers failed, if it did.
    pub describe_error: Option<String>,
}

fn find<T: Clone>(
    objects: &[T],
    meta: impl Fn(&T) -> &ObjectMeta,
    namespace: &str,
    name: &str,
) -> Lookup<T> {
    objects
        .iter()
        .find(|o| {
            let m = meta(*o);
            m.namespace.as_deref().unwrap_or_default() == namespace
                && m.name.as_deref() == Some(name)
        })
        .map_or(Lookup::NotFound, |o| Lookup::Found(o.clone()))
}

impl EndpointSource for EndpointObjects {
    fn service(&self, namespace: &str, name: &str) -> Lookup<Service> {
        find(&self.services, |s| &s.metadata, namespace, name)
    }

    fn ingress(&self, namespace: &str, name: &str) -> Lookup<Ingress> {
        find(&self.ingresses, |i| &i.metadata, namespace, name)
    }

    fn gateway(&self, namespace: &str, name: &str) -> Lookup<Gateway> {
        find(&self.gateways, |g| &g.metadata, namespace, name)
    }

    fn reference_grants(&self, namespace: &str) -> Result<Vec<ReferenceGrant>, String> {
        Ok(self
            .reference_grants
            .iter()
            .filter(|g| g.metadata.namespace.as_deref() == Some(namespace))
            .cloned()
            .collect())
    }

    fn load_balancer_arn(&self, dns_name: &str) -> Result<String, String> {
        let described = match &self.describe_error {
            Some(e) => Err(e.as_str()),
            None => Ok(self.load_balancers.as_slice()),
        };
        load_balancer_arn_by_dns(dns_name, described)
    }
}

/// The kinds a named endpoint can be, with the group and kind a ReferenceGrant's `to` lists.
#[derive(Debug, Clone, Copy)]
enum Named {
    Service,
    Ingress,
    Gateway,
}

impl Named {
    fn group(self) -> &'static str {
        match self {
            Named::Service => "",
            Named::Ingress => "networking.k8s.io",
            Named::Gateway => GATEWAY_API_GROUP,
        }
    }

    fn kind(self) -> &'static str {
        match self {
            Named::Service => "Service",
            Named::Ingress => "Ingress",
            Named::Gateway => "Gateway",
        }
    }

    /// The API server's NotFound text (`<resource> "<name>" not found`).
    fn not_found(self, name: &str) -> String {
        let resource = match self {
            Named::Service => "services",
            Named::Ingress => "ingresses.networking.k8s.io",
            Named::Gateway => "gateways.gateway.networking.k8s.io",
        };
        format!("{resource} \"{name}\" not found")
    }
}

/// Loads one endpoint of a GlobalAccelerator in `default_namespace` (upstream's `LoadEndpoint`).
pub fn load_endpoint<S: EndpointSource + ?Sized>(
    source: &S,
    endpoint: &GlobalAcceleratorEndpoint,
    default_namespace: &str,
) -> LoadedEndpoint {
    let mut result = LoadedEndpoint::new(endpoint, default_namespace);
    let key = endpoint_key(endpoint, default_namespace);
    let outcome = match endpoint.endpoint_type {
        GlobalAcceleratorEndpointType::EndpointID => load_endpoint_id(&mut result, key),
        GlobalAcceleratorEndpointType::Service => {
            load_named(source, &mut result, default_namespace, Named::Service, key)
        }
        GlobalAcceleratorEndpointType::Ingress => {
            load_named(source, &mut result, default_namespace, Named::Ingress, key)
        }
        GlobalAcceleratorEndpointType::Gateway => {
            load_named(source, &mut result, default_namespace, Named::Gateway, key)
        }
    };
    if let Err(error) = outcome {
        result.status = match error.severity {
            Severity::Fatal => LoadedEndpointStatus::Fatal,
            Severity::Warning => LoadedEndpointStatus::Warning,
        };
        result.message = error.message.to_string();
        result.error = Some(error);
    }
    result
}

/// Loads every referenced endpoint (upstream's `LoadEndpoints`): all of them, whatever their
/// outcome, and the errors of those that failed fatally (the first fails the reconcile with
/// `failed to load endpoints: <error>`).
pub fn load_endpoints<S: EndpointSource + ?Sized>(
    source: &S,
    ga: &GlobalAccelerator,
    references: &[EndpointReference],
) -> (Vec<LoadedEndpoint>, Vec<EndpointLoadError>) {
    let namespace = ga.namespace_or_empty();
    let loaded: Vec<LoadedEndpoint> = references
        .iter()
        .map(|r| load_endpoint(source, &r.endpoint, namespace))
        .collect();
    let fatal = loaded
        .iter()
        .filter(|e| e.status == LoadedEndpointStatus::Fatal)
        .filter_map(|e| e.error.clone())
        .collect();
    (loaded, fatal)
}

fn load_endpoint_id(result: &mut LoadedEndpoint, key: String) -> Result<(), EndpointLoadError> {
    match result.endpoint.endpoint_id.as_deref() {
        Some(id) if !id.is_empty() => {
            result.arn = id.to_string();
            result.message = "Using provided EndpointID directly".into();
            Ok(())
        }
        _ => Err(EndpointLoadError::fatal(
            ENDPOINT_ID_EMPTY_MSG,
            Some("endpointID is required for endpoint type EndpointID".into()),
            key,
        )),
    }
}

/// A Service, Ingress or Gateway endpoint (upstream's `loadResourceWithDNS`).
fn load_named<S: EndpointSource + ?Sized>(
    source: &S,
    result: &mut LoadedEndpoint,
    parent_namespace: &str,
    kind: Named,
    key: String,
) -> Result<(), EndpointLoadError> {
    let fatal =
        |cause: String| EndpointLoadError::fatal(API_SERVER_ERROR_MSG, Some(cause), key.clone());
    let warning = |message: &'static str, cause: Option<String>| {
        EndpointLoadError::warning(message, cause, key.clone())
    };
    if result.namespace != parent_namespace {
        let grants = source.reference_grants(&result.namespace).map_err(fatal)?;
        let allowed = reference_allowed(
            &grants,
            &GrantFrom {
                group: GROUP,
                kind: KIND,
                namespace: parent_namespace,
            },
            &GrantTo {
                group: kind.group(),
                kind: kind.kind(),
                namespace: &result.namespace,
                name: &result.name,
            },
        );
        if !allowed {
            // Upstream wraps no cause here: its text ends in `- <nil>`.
            return Err(warning(CROSS_NAMESPACE_REFERENCE_MSG, None));
        }
        result.cross_namespace_allowed = true;
    }
    let (namespace, name) = (result.namespace.clone(), result.name.clone());
    let read = |found: Lookup<EndpointResource>| match found {
        Lookup::Found(resource) => Ok(resource),
        Lookup::NotFound => Err(warning(ENDPOINT_NOT_FOUND_MSG, Some(kind.not_found(&name)))),
        Lookup::Failed(e) => Err(fatal(e)),
    };
    let resource = read(match kind {
        Named::Service => boxed(source.service(&namespace, &name), |s| {
            EndpointResource::Service(Box::new(s))
        }),
        Named::Ingress => boxed(source.ingress(&namespace, &name), |i| {
            EndpointResource::Ingress(Box::new(i))
        }),
        Named::Gateway => boxed(source.gateway(&namespace, &name), |g| {
            EndpointResource::Gateway(Box::new(g))
        }),
    })?;
    let dns_name = match &resource {
        EndpointResource::Service(svc) => service_dns(svc),
        EndpointResource::Ingress(ing) => ingress_dns(ing),
        EndpointResource::Gateway(gw) => gateway_dns(gw),
    }
    .map_err(|e| warning(LOAD_BALANCER_NOT_FOUND_MSG, Some(e)))?;
    let arn = source.load_balancer_arn(&dns_name).map_err(|e| {
        warning(
            DNS_RESOLUTION_FAILED_MSG,
            Some(format!("failed to resolve DNS name {dns_name} to ARN: {e}")),
        )
    })?;
    result.dns_name = dns_name;
    result.arn = arn;
    result.message = format!("Successfully resolved {} to LoadBalancer ARN", kind.kind());
    result.resource = Some(resource);
    Ok(())
}

fn boxed<T>(
    found: Lookup<T>,
    wrap: impl FnOnce(T) -> EndpointResource,
) -> Lookup<EndpointResource> {
    match found {
        Lookup::Found(object) => Lookup::Found(wrap(object)),
        Lookup::NotFound => Lookup::NotFound,
        Lookup::Failed(e) => Lookup::Failed(e),
    }
}

/// `namespace/name` of an object (Go's `k8s.NamespacedName` printed).
pub(crate) fn object_key(meta: &ObjectMeta) -> String {
    format!(
        "{}/{}",
        meta.namespace.as_deref().unwrap_or_default(),
        meta.name.as_deref().unwrap_or_default()
    )
}

/// The first hostname in a LoadBalancer Service's status (upstream's `extractServiceDNS`).
pub fn service_dns(svc: &Service) -> Result<String, String> {
    let key = object_key(&svc.metadata);
    if svc.spec.as_ref().and_then(|s| s.type_.as_deref()) != Some("LoadBalancer") {
        return Err(format!("service {key} is not of type LoadBalancer"));
    }
    let entries = svc
        .status
        .as_ref()
        .and_then(|s| s.load_balancer.as_ref())
        .and_then(|lb| lb.ingress.as_deref())
        .unwrap_or_default();
    if entries.is_empty() {
        return Err(format!("service {key} does not have a LoadBalancer"));
    }
    entries
        .iter()
        .filter_map(|e| e.hostname.as_deref())
        .find(|h| !h.is_empty())
        .map(str::to_string)
        .ok_or_else(|| format!("service {key} LoadBalancer has no DNS name"))
}

/// The ALB hostname of an Ingress's status (upstream's `FindIngressTwoDNSName`): the last one
/// holding `elb.amazonaws` (the others are a fronting NLB's).
pub fn ingress_alb_dns(ing: &Ingress) -> Option<&str> {
    ing.status
        .as_ref()
        .and_then(|s| s.load_balancer.as_ref())
        .and_then(|lb| lb.ingress.as_deref())
        .unwrap_or_default()
        .iter()
        .filter_map(|e| e.hostname.as_deref())
        .rfind(|h| h.contains("elb.amazonaws"))
}

/// The ALB hostname of an Ingress (upstream's `extractIngressDNS`).
pub fn ingress_dns(ing: &Ingress) -> Result<String, String> {
    let key = object_key(&ing.metadata);
    let has_entries = ing
        .status
        .as_ref()
        .and_then(|s| s.load_balancer.as_ref())
        .and_then(|lb| lb.ingress.as_ref())
        .is_some_and(|entries| !entries.is_empty());
    if !has_entries {
        return Err(format!("ingress {key} does not have a LoadBalancer"));
    }
    ingress_alb_dns(ing)
        .map(str::to_string)
        .ok_or_else(|| format!("ingress {key} LoadBalancer has no DNS name"))
}

/// The first Hostname address of a Gateway's status (upstream's `extractGatewayDNS`).
pub fn gateway_dns(gw: &Gateway) -> Result<String, String> {
    let key = object_key(&gw.metadata);
    let addresses = gw
        .status
        .as_ref()
        .and_then(|s| s.addresses.as_deref())
        .unwrap_or_default();
    if addresses.is_empty() {
        return Err(format!("gateway {key} does not have any addresses"));
    }
    addresses
        .iter()
        .find(|a| a.r#type.as_deref() == Some("Hostname") && !a.value.is_empty())
        .map(|a| a.value.clone())
        .ok_or_else(|| format!("gateway {key} has no hostname address"))
}

#[cfg(test)]
#[path = "loader_tests.rs"]
mod tests;
