//! What a Service's build reads besides the Service and the configuration: AWS facts and the
//! backend Services its weighted actions name, all optional (`plan` has none of them).

use std::collections::BTreeMap;

use k8s_openapi::api::core::v1::Service;

use super::weighted_input::weighted_backend_names;
use crate::model::env::ExistingNlb;
use crate::model::subnets::SubnetInfo;

/// AWS facts that refine a Service's stack; all optional (`plan` has none of them).
#[derive(Debug, Clone, Default)]
pub struct ServiceEnv {
    /// Subnets of the VPC; without them the stack shows the discovery criteria and subnet
    /// mappings (EIPs, private addresses) wait for the deployer.
    pub subnets: Option<Vec<SubnetInfo>>,
    /// The NLB already tagged with this Service's stack, if any.
    pub existing_load_balancer: Option<ExistingNlb>,
    /// The VPC's associated CIDR blocks (IPv4 and IPv6): the default sources of node rules for
    /// an internal NLB without security groups.
    pub vpc_cidrs: Option<Vec<String>>,
    /// The Services of the Service's namespace its weighted `actions.*` annotations name
    /// ([`weighted_backend_names`]), by name, as the cluster shows them; a name the build uses
    /// but this map lacks fails as upstream's lookup does (`Service "<name>" not found`).
    pub backend_services: BTreeMap<String, Service>,
}

impl ServiceEnv {
    /// Fills `backend_services` with the Services `svc`'s weighted actions name, each looked up
    /// by `lookup(namespace, name)` (the controller's Service cache, or the manifests).
    pub fn with_backends_of<F>(mut self, svc: &Service, lookup: F) -> Self
    where
        F: Fn(&str, &str) -> Option<Service>,
    {
        let ns = svc.metadata.namespace.as_deref().unwrap_or("default");
        for name in weighted_backend_names(svc) {
            if let Some(found) = lookup(ns, &name) {
                self.backend_services.insert(name, found);
            }
        }
        self
    }
}
