//! The load balancer add-on services behind narrow traits: WAFv2 and WAF Classic regional web
//! ACL associations and Shield Advanced protections — only the calls the deployer makes.
//! Implemented over the SDK (`sdk/addons/`) and by the fake (`fake/addons.rs`).

use std::sync::Arc;

use async_trait::async_trait;

use super::error::Result;

/// A regional WAFv2 web ACL as `ListWebACLs` lists it.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct WebAclSummary {
    pub name: String,
    pub arn: String,
}

/// A Shield Advanced protection.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Protection {
    pub id: String,
    pub name: String,
    pub resource_arn: String,
}

/// WAFv2 (scope `REGIONAL`).
#[async_trait]
pub trait WafV2: Send + Sync {
    /// The ARN of the web ACL associated with the resource (None: no association).
    async fn get_web_acl_for_resource(&self, resource_arn: &str) -> Result<Option<String>>;
    /// Associates the web ACL with the resource (replacing any other association).
    async fn associate_web_acl(&self, web_acl_arn: &str, resource_arn: &str) -> Result<()>;
    async fn disassociate_web_acl(&self, resource_arn: &str) -> Result<()>;
    /// Every regional web ACL (all `NextMarker` pages).
    async fn list_web_acls(&self) -> Result<Vec<WebAclSummary>>;
}

/// WAF Classic regional (`waf-regional`): web ACLs are named by id, not ARN.
#[async_trait]
pub trait WafRegional: Send + Sync {
    /// Whether the service has an endpoint in the region (upstream's `Available()`).
    fn available(&self) -> bool;
    /// The id of the web ACL associated with the resource (None: no association).
    async fn get_web_acl_for_resource(&self, resource_arn: &str) -> Result<Option<String>>;
    async fn associate_web_acl(&self, web_acl_id: &str, resource_arn: &str) -> Result<()>;
    async fn disassociate_web_acl(&self, resource_arn: &str) -> Result<()>;
}

/// Shield Advanced.
#[async_trait]
pub trait Shield: Send + Sync {
    /// `ACTIVE` or `INACTIVE`.
    async fn get_subscription_state(&self) -> Result<String>;
    /// The protection of the resource (None when Shield says `ResourceNotFoundException`).
    async fn describe_protection(&self, resource_arn: &str) -> Result<Option<Protection>>;
    /// Creates a protection; returns its id.
    async fn create_protection(&self, name: &str, resource_arn: &str) -> Result<String>;
    async fn delete_protection(&self, protection_id: &str) -> Result<()>;
}

/// The add-on clients of a deployer; a service is `None` when its `--enable-*` flag is off
/// (or, for tests and benchmarks, when not configured): stacks needing it are refused.
#[derive(Clone, Default)]
pub struct AddonClients {
    pub wafv2: Option<Arc<dyn WafV2>>,
    pub waf_regional: Option<Arc<dyn WafRegional>>,
    pub shield: Option<Arc<dyn Shield>>,
}

impl std::fmt::Debug for AddonClients {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("AddonClients")
            .field("wafv2", &self.wafv2.is_some())
            .field("waf_regional", &self.waf_regional.is_some())
            .field("shield", &self.shield.is_some())
            .finish()
    }
}

impl AddonClients {
    /// All three from one object (the fake, the recorder).
    pub fn all<T: WafV2 + WafRegional + Shield + 'static>(one: Arc<T>) -> Self {
        Self {
            wafv2: Some(one.clone()),
            waf_regional: Some(one.clone()),
            shield: Some(one),
        }
    }

    /// Keeps only the services whose `--enable-waf`, `--enable-wafv2`, `--enable-shield` is on.
    pub fn enabled(self, waf: bool, wafv2: bool, shield: bool) -> Self {
        Self {
            wafv2: self.wafv2.filter(|_| wafv2),
            waf_regional: self.waf_regional.filter(|_| waf),
            shield: self.shield.filter(|_| shield),
        }
    }
}
