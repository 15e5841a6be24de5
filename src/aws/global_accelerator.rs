//! AWS Global Accelerator behind a narrow trait: the calls the accelerator deployer
//! (`deploy::aga`) makes, as upstream's `pkg/aws/services/globalaccelerator.go` has them.
//! Implemented over the SDK (`sdk/global_accelerator/`, always in us-west-2, where AWS serves
//! the service), by the fake (`fake/global_accelerator.rs`; moto does not serve it) and by the
//! shadow recorder (`shadow/record/global_accelerator.rs`).
//!
//! Writes take the model's values ([`crate::model::aga`]): the deployer hands a listener or an
//! endpoint group over as the model has it and the request builders take it apart. The types
//! here are only what AWS describes back.

use async_trait::async_trait;

use super::error::Result;
use super::types::Tags;
use crate::model::aga::{
    Accelerator, AgaListener, EndpointConfiguration, EndpointGroup, PortOverride, PortRange,
};

/// The one region AWS serves Global Accelerator's API from.
pub const GA_API_REGION: &str = "us-west-2";
/// `Accelerator.Status` once every change has propagated.
pub const STATUS_DEPLOYED: &str = "DEPLOYED";
/// `Accelerator.Status` while a change propagates.
pub const STATUS_IN_PROGRESS: &str = "IN_PROGRESS";
/// The Resource Groups Tagging API's type of accelerators (upstream's `ResourceTypeGlobalAccelerator`).
pub const RESOURCE_TYPE_ACCELERATOR: &str = "globalaccelerator:accelerator";

/// The static addresses of one family (`IpSet`).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct IpSet {
    /// `IPv4` or `IPv6`.
    pub ip_address_family: String,
    pub ip_addresses: Vec<String>,
}

/// An accelerator as AWS describes it.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct DescribedAccelerator {
    pub arn: String,
    pub name: String,
    /// `IPV4` or `DUAL_STACK`.
    pub ip_address_type: String,
    /// AWS leaves it out only in answers upstream treats as disabled; so do we.
    pub enabled: bool,
    pub ip_sets: Vec<IpSet>,
    pub dns_name: String,
    /// Dual-stack accelerators only.
    pub dual_stack_dns_name: Option<String>,
    /// [`STATUS_DEPLOYED`] or [`STATUS_IN_PROGRESS`].
    pub status: String,
}

impl DescribedAccelerator {
    /// Every change has propagated.
    pub fn is_deployed(&self) -> bool {
        self.status == STATUS_DEPLOYED
    }

    /// The IPv4 addresses of its IP sets (BYOIP comparisons look at these only, as upstream).
    pub fn ipv4_addresses(&self) -> Vec<String> {
        self.ip_sets
            .iter()
            .filter(|s| s.ip_address_family == "IPv4")
            .flat_map(|s| s.ip_addresses.iter().cloned())
            .collect()
    }
}

/// A listener as AWS describes it.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct DescribedListener {
    pub arn: String,
    /// `TCP` or `UDP`.
    pub protocol: String,
    pub port_ranges: Vec<PortRange>,
    /// `NONE` or `SOURCE_IP`; empty when AWS leaves it out.
    pub client_affinity: String,
}

/// One endpoint of an endpoint group as AWS describes it.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct EndpointDescription {
    pub endpoint_id: String,
    pub weight: Option<i32>,
    pub client_ip_preservation_enabled: Option<bool>,
    /// `INITIAL`, `HEALTHY` or `UNHEALTHY`.
    pub health_state: Option<String>,
}

/// An endpoint group as AWS describes it.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct DescribedEndpointGroup {
    pub arn: String,
    pub region: String,
    pub traffic_dial_percentage: Option<f32>,
    pub port_overrides: Vec<PortOverride>,
    pub endpoints: Vec<EndpointDescription>,
}

/// The listener ARN an endpoint group ARN starts with (`…/listener/<id>/endpoint-group/<id>`);
/// empty when the ARN has no endpoint-group part, as upstream's extraction answers.
pub fn listener_arn_of_group(group_arn: &str) -> &str {
    group_arn
        .split_once("/endpoint-group/")
        .map_or("", |(listener, _)| listener)
}

/// The accelerator ARN a listener or endpoint group ARN starts with.
pub fn accelerator_arn_of(arn: &str) -> &str {
    arn.split_once("/listener/").map_or(arn, |(acc, _)| acc)
}

/// AWS Global Accelerator (standard accelerators only).
#[async_trait]
pub trait GlobalAccelerator: Send + Sync {
    /// Every accelerator of the account (all pages).
    async fn list_accelerators(&self) -> Result<Vec<DescribedAccelerator>>;
    async fn describe_accelerator(&self, arn: &str) -> Result<DescribedAccelerator>;
    /// CreateAccelerator of the model's accelerator: name, IP address type, BYOIP addresses,
    /// enabled, its tags, and the object's uid as idempotency token.
    async fn create_accelerator(&self, accelerator: &Accelerator) -> Result<DescribedAccelerator>;
    /// UpdateAccelerator with the model's name, IP address type and enabled flag (BYOIP
    /// addresses are creation-only; tags go through [`Self::tag_resource`]).
    async fn update_accelerator(
        &self,
        arn: &str,
        accelerator: &Accelerator,
    ) -> Result<DescribedAccelerator>;
    /// UpdateAccelerator with `Enabled: false` only: the first step of a deletion.
    async fn disable_accelerator(&self, arn: &str) -> Result<DescribedAccelerator>;
    async fn delete_accelerator(&self, arn: &str) -> Result<()>;

    async fn list_tags_for_resource(&self, arn: &str) -> Result<Tags>;
    async fn tag_resource(&self, arn: &str, tags: &Tags) -> Result<()>;
    async fn untag_resource(&self, arn: &str, keys: &[String]) -> Result<()>;

    /// The listeners of an accelerator (all pages).
    async fn list_listeners(&self, accelerator_arn: &str) -> Result<Vec<DescribedListener>>;
    /// CreateListener of the model's listener on `accelerator_arn` (its endpoint groups are
    /// [`Self::create_endpoint_group`]s).
    async fn create_listener(
        &self,
        accelerator_arn: &str,
        listener: &AgaListener,
    ) -> Result<DescribedListener>;
    /// UpdateListener to the model's protocol, port ranges and (when set) client affinity.
    async fn update_listener(&self, arn: &str, listener: &AgaListener)
        -> Result<DescribedListener>;
    async fn delete_listener(&self, arn: &str) -> Result<()>;

    /// The endpoint groups of a listener (all pages).
    async fn list_endpoint_groups(&self, listener_arn: &str)
        -> Result<Vec<DescribedEndpointGroup>>;
    /// CreateEndpointGroup of the model's group on `listener_arn`, with its region, traffic
    /// dial, port overrides and endpoints.
    async fn create_endpoint_group(
        &self,
        listener_arn: &str,
        group: &EndpointGroup,
    ) -> Result<DescribedEndpointGroup>;
    /// UpdateEndpointGroup with the model's traffic dial (when set) and port overrides (all of
    /// them; none removes them); the endpoints are left as they are.
    async fn update_endpoint_group(
        &self,
        arn: &str,
        group: &EndpointGroup,
    ) -> Result<DescribedEndpointGroup>;
    /// UpdateEndpointGroup with these port overrides only (a conflict resolved on a group the
    /// model does not describe as it is).
    async fn set_port_overrides(
        &self,
        arn: &str,
        overrides: &[PortOverride],
    ) -> Result<DescribedEndpointGroup>;
    /// UpdateEndpointGroup with these endpoints only: the group's endpoints become exactly
    /// these (the only call that changes an existing endpoint's weight or client IP
    /// preservation).
    async fn set_endpoints(
        &self,
        arn: &str,
        endpoints: &[EndpointConfiguration],
    ) -> Result<DescribedEndpointGroup>;
    async fn add_endpoints(&self, arn: &str, endpoints: &[EndpointConfiguration]) -> Result<()>;
    async fn remove_endpoints(&self, arn: &str, endpoint_ids: &[String]) -> Result<()>;
    async fn delete_endpoint_group(&self, arn: &str) -> Result<()>;
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn arns_are_taken_apart_as_upstream_does() {
        let eg = "arn:aws:globalaccelerator::123456789012:accelerator/abcd/listener/l-1234/endpoint-group/eg-1234";
        assert_eq!(
            listener_arn_of_group(eg),
            "arn:aws:globalaccelerator::123456789012:accelerator/abcd/listener/l-1234"
        );
        assert_eq!(
            accelerator_arn_of(eg),
            "arn:aws:globalaccelerator::123456789012:accelerator/abcd"
        );
        // No endpoint-group part: upstream's extraction answers empty.
        assert_eq!(
            listener_arn_of_group("arn:aws:globalaccelerator::123456789012:endpointgroup/eg-sdk"),
            ""
        );
        assert_eq!(
            listener_arn_of_group("arn:aws:DIFFERENT:SERVICE:1:endpoint-group/X/eg"),
            ""
        );
    }
}
