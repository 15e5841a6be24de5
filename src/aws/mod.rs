//! The AWS boundary: ELBv2 and EC2 (and the add-on services WAFv2, WAF Regional, Shield, the
//! Resource Groups Tagging API, ACM with Route 53 for certificates, and Global Accelerator) behind
//! narrow traits (SDK implementation and in-memory fake).
//!
//! Callers hold `Arc<dyn ElbV2>` / `Arc<dyn Ec2>` and never see SDK types. Both implementations
//! send every request through [`caller::Caller`], so throttling, retries and metrics behave the
//! same against AWS and against the fake. Pagination and chunking (RegisterTargets in 200s,
//! DescribeTags in 20s) are folded in: one trait call may be several AWS requests.
//!
//! Both implementations are laid out alike, one module per AWS service: `sdk/` (`elbv2/`,
//! `ec2/`, `acm.rs`, `route53.rs`, `addons/`, `sts.rs`, `tagging.rs`, `global_accelerator/`) and
//! `fake/` (`elb*.rs`, `ec2*.rs`, `acm.rs`, `route53.rs`, `addons.rs`, `roles.rs`, `tagging.rs`,
//! `global_accelerator.rs`).

pub mod acm;
pub mod addons;
pub mod caller;
pub mod cloud;
pub mod config;
pub mod error;
pub mod fake;
pub mod fence;
pub mod global_accelerator;
pub mod metrics;
pub mod retry;
pub mod route53;
pub mod sdk;
pub mod shadow;
pub mod tagging;
pub mod throttle;
pub mod types;

use std::collections::BTreeMap;
use std::sync::Arc;

use async_trait::async_trait;

pub use acm::Acm;
pub use addons::{AddonClients, Protection, Shield, WafRegional, WafV2, WebAclSummary};
pub use caller::Caller;
pub use cloud::Cloud;
pub use config::{
    build, build_fenced, build_with_roles, parse_api_endpoints, AwsConfig, ResolvedCloud,
};
pub use error::{AwsError, Result};
pub use fence::Fence;
pub use global_accelerator::{
    DescribedAccelerator, DescribedEndpointGroup, DescribedListener, EndpointDescription,
    GlobalAccelerator, IpSet,
};
pub use metrics::AwsMetrics;
pub use route53::Route53;
pub use sdk::{
    build_acm, build_acm_fenced, build_addons, build_global_accelerator, build_route53,
    build_tagging, SdkAcm, SdkRoute53,
};
pub use tagging::{
    ResourceTagging, TaggedResource, RESOURCE_TYPE_LOAD_BALANCER, RESOURCE_TYPE_TARGET_GROUP,
};
pub use types::*;

/// Most targets AWS accepts in one RegisterTargets/DeregisterTargets request.
pub const TARGETS_PER_CALL: usize = 200;
/// Most ARNs AWS accepts in one DescribeTags request.
pub const TAG_ARNS_PER_CALL: usize = 20;

/// Elastic Load Balancing v2.
#[async_trait]
pub trait ElbV2: Send + Sync {
    async fn describe_load_balancers(&self, q: &LoadBalancerQuery) -> Result<Vec<LoadBalancer>>;
    /// Creates the model's load balancer as it is, with its tags. Its subnets must be chosen
    /// (`Subnets::Resolved`, each with the model's mapping for it) and its security groups
    /// literal ids (the deployer resolves both first); PrivateLink enforcement, attributes and
    /// capacity are other calls.
    async fn create_load_balancer(&self, lb: &crate::model::LoadBalancer) -> Result<LoadBalancer>;
    async fn delete_load_balancer(&self, arn: &str) -> Result<()>;
    async fn describe_load_balancer_attributes(&self, arn: &str) -> Result<Attributes>;
    /// Changes the given attributes; returns all attributes afterwards.
    async fn modify_load_balancer_attributes(
        &self,
        arn: &str,
        attrs: &Attributes,
    ) -> Result<Attributes>;
    /// `enforce_private_link`: NLB `EnforceSecurityGroupInboundRulesOnPrivateLinkTraffic`
    /// (`on` / `off`), not sent when `None`.
    async fn set_security_groups(
        &self,
        arn: &str,
        security_groups: &[String],
        enforce_private_link: Option<&str>,
    ) -> Result<()>;
    /// `enable_prefix_for_ipv6_source_nat`: NLB `on` / `off`, not sent when `None`.
    async fn set_subnets(
        &self,
        arn: &str,
        subnets: &[SubnetMapping],
        enable_prefix_for_ipv6_source_nat: Option<&str>,
    ) -> Result<()>;
    /// The minimum capacity units reserved for the load balancer (None: no reservation).
    async fn describe_capacity_reservation(&self, arn: &str) -> Result<Option<i32>>;
    /// Reserves `units` capacity units; `None` resets the reservation.
    async fn modify_capacity_reservation(&self, arn: &str, units: Option<i32>) -> Result<()>;
    async fn set_ip_address_type(&self, arn: &str, ip_address_type: &str) -> Result<()>;
    /// `ModifyIpPools`: sets the IPv4 IPAM pool, or removes it when `None`.
    async fn modify_ip_pools(&self, arn: &str, ipv4_ipam_pool_id: Option<&str>) -> Result<()>;

    async fn describe_target_groups(&self, q: &TargetGroupQuery) -> Result<Vec<TargetGroup>>;
    /// Creates the model's target group as it is (health check, target-control port, tags) in
    /// `vpc_id`; its attributes are another call.
    async fn create_target_group(
        &self,
        tg: NewTargetGroup<'_>,
        vpc_id: &str,
    ) -> Result<TargetGroup>;
    /// Sets the target group's health check to the model's (every setting it has).
    async fn modify_target_group(
        &self,
        arn: &str,
        health_check: &crate::model::HealthCheck,
    ) -> Result<TargetGroup>;
    async fn delete_target_group(&self, arn: &str) -> Result<()>;
    async fn describe_target_group_attributes(&self, arn: &str) -> Result<Attributes>;
    async fn modify_target_group_attributes(
        &self,
        arn: &str,
        attrs: &Attributes,
    ) -> Result<Attributes>;
    async fn register_targets(&self, tg_arn: &str, targets: &[TargetDescription]) -> Result<()>;
    async fn deregister_targets(&self, tg_arn: &str, targets: &[TargetDescription]) -> Result<()>;
    /// Health of the given targets, or of all registered targets when `targets` is empty.
    async fn describe_target_health(
        &self,
        tg_arn: &str,
        targets: &[TargetDescription],
    ) -> Result<Vec<TargetHealthDescription>>;

    async fn describe_listeners(&self, lb_arn: &str) -> Result<Vec<Listener>>;
    /// Trust stores with these names (those that exist).
    async fn describe_trust_stores(&self, names: &[String]) -> Result<Vec<TrustStore>>;
    /// Creates the model's listener on its load balancer (`load_balancer_arn`, which must be
    /// a literal ARN, as every target group its actions forward to); its attributes go
    /// through [`Self::modify_listener_attributes`], extra certificates through
    /// [`Self::add_listener_certificates`].
    async fn create_listener(&self, listener: &crate::model::Listener) -> Result<Listener>;
    /// ModifyListener: port, protocol, SSL policy, certificates, ALPN policy, default actions
    /// and mutual authentication as given (ALPN and mTLS left as they are when `None`).
    async fn modify_listener(
        &self,
        arn: &str,
        listener: &crate::model::Listener,
    ) -> Result<Listener>;
    async fn delete_listener(&self, arn: &str) -> Result<()>;
    async fn describe_listener_certificates(&self, arn: &str) -> Result<Vec<ListenerCertificate>>;
    async fn add_listener_certificates(&self, arn: &str, cert_arns: &[String]) -> Result<()>;
    async fn remove_listener_certificates(&self, arn: &str, cert_arns: &[String]) -> Result<()>;
    async fn describe_listener_attributes(&self, arn: &str) -> Result<Attributes>;
    /// Changes the given attributes; returns all attributes afterwards.
    async fn modify_listener_attributes(&self, arn: &str, attrs: &Attributes)
        -> Result<Attributes>;

    async fn describe_rules(&self, listener_arn: &str) -> Result<Vec<Rule>>;
    /// Creates the model's rule on its listener (`listener_arn`, a literal ARN).
    async fn create_rule(&self, rule: &crate::model::ListenerRule) -> Result<Rule>;
    /// Replaces the conditions, actions and transforms of a rule with the model rule's (no
    /// transforms removes them); its priority moves with [`Self::set_rule_priorities`].
    async fn modify_rule(&self, arn: &str, rule: &crate::model::ListenerRule) -> Result<Rule>;
    async fn delete_rule(&self, arn: &str) -> Result<()>;
    /// `(rule ARN, new priority)` pairs, applied in one request.
    async fn set_rule_priorities(&self, priorities: &[(String, u32)]) -> Result<()>;

    /// Tags of each ARN (in batches of 20 ARNs per request).
    async fn describe_tags(&self, arns: &[String]) -> Result<BTreeMap<String, Tags>>;
    async fn add_tags(&self, arns: &[String], tags: &Tags) -> Result<()>;
    async fn remove_tags(&self, arns: &[String], keys: &[String]) -> Result<()>;
}

/// Elastic Compute Cloud: the discovery and security-group calls the controller needs.
#[async_trait]
pub trait Ec2: Send + Sync {
    async fn describe_vpcs(&self, q: &Ec2Query) -> Result<Vec<Vpc>>;
    async fn describe_subnets(&self, q: &Ec2Query) -> Result<Vec<Subnet>>;
    async fn describe_availability_zones(&self, q: &Ec2Query) -> Result<Vec<AvailabilityZone>>;
    async fn describe_security_groups(&self, q: &Ec2Query) -> Result<Vec<SecurityGroup>>;
    /// Creates a security group (with its tags) and returns its ID.
    async fn create_security_group(&self, req: &CreateSecurityGroup) -> Result<String>;
    async fn delete_security_group(&self, id: &str) -> Result<()>;
    async fn authorize_ingress(&self, group_id: &str, permissions: &[IpPermission]) -> Result<()>;
    async fn revoke_ingress(&self, group_id: &str, permissions: &[IpPermission]) -> Result<()>;
    async fn describe_instances(&self, q: &Ec2Query) -> Result<Vec<Instance>>;
    async fn describe_network_interfaces(&self, q: &Ec2Query) -> Result<Vec<NetworkInterface>>;
    async fn describe_route_tables(&self, q: &Ec2Query) -> Result<Vec<RouteTable>>;
    async fn create_tags(&self, resource_ids: &[String], tags: &Tags) -> Result<()>;
    async fn delete_tags(&self, resource_ids: &[String], keys: &[String]) -> Result<()>;
}

/// ELBv2 clients acting as another IAM role (cross-account TargetGroupBindings).
#[async_trait]
pub trait AssumeRole: Send + Sync + std::fmt::Debug {
    /// The ELBv2 client of `role_arn` (with `external_id` when not empty).
    async fn elbv2_as(&self, role_arn: &str, external_id: &str) -> Result<Arc<dyn ElbV2>>;
}

/// The ELBv2 client for a binding's `iamRoleArnToAssume`: the controller's own when empty.
pub async fn elbv2_for(
    own: &Arc<dyn ElbV2>,
    roles: Option<&Arc<dyn AssumeRole>>,
    role_arn: &str,
    external_id: &str,
) -> Result<Arc<dyn ElbV2>> {
    if role_arn.is_empty() {
        return Ok(own.clone());
    }
    match roles {
        Some(r) => r.elbv2_as(role_arn, external_id).await,
        None => Err(AwsError::Config(format!(
            "cannot assume role {role_arn}: no STS client is configured"
        ))),
    }
}
