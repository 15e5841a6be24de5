//! WAFv2, WAF Classic regional and Shield for the fake: web ACLs seeded by tests, associations
//! and protections on the fake's load balancers, the Shield subscription state (which moto
//! cannot answer). Errors use AWS's codes (`WAFNonexistentItemException`,
//! `ResourceNotFoundException`, `ResourceAlreadyExistsException`).

use async_trait::async_trait;

use super::state::{hex, State};
use super::FakeAws;
use crate::aws::addons::{Protection, Shield, WafRegional, WafV2, WebAclSummary};
use crate::aws::error::{AwsError, Result};
use crate::aws::types::Service;

fn nonexistent(what: &str) -> AwsError {
    AwsError::from_code(
        "WAFNonexistentItemException",
        format!(
            "AWS WAF couldn’t perform the operation because your resource doesn’t exist: {what}"
        ),
        Some(400),
    )
}

/// Associations exist only on live load balancers (they go with a deleted one).
fn lb_exists(st: &State, arn: &str) -> Result<()> {
    if st.lbs.contains_key(arn) {
        Ok(())
    } else {
        Err(nonexistent(arn))
    }
}

impl FakeAws {
    /// Adds a regional WAFv2 web ACL; returns its ARN.
    pub fn add_wafv2_web_acl(&self, name: &str) -> String {
        self.with_state(|st| {
            let arn = format!(
                "arn:aws:wafv2:{}:{}:regional/webacl/{name}/{}",
                st.region,
                st.account,
                hex(32)
            );
            st.addons.wafv2_acls.insert(name.into(), arn.clone());
            arn
        })
    }

    /// The WAFv2 web ACL associated with a live load balancer.
    pub fn wafv2_web_acl_of(&self, lb_arn: &str) -> Option<String> {
        self.with_state(|st| {
            st.lbs.contains_key(lb_arn).then_some(())?;
            st.addons.wafv2_assoc.get(lb_arn).cloned()
        })
    }

    /// Adds a WAF Classic regional web ACL with this id.
    pub fn add_waf_regional_web_acl(&self, id: &str) {
        self.with_state(|st| st.addons.waf_regional_acls.insert(id.into()));
    }

    /// The WAF Classic web ACL id associated with a live load balancer.
    pub fn waf_regional_web_acl_of(&self, lb_arn: &str) -> Option<String> {
        self.with_state(|st| {
            st.lbs.contains_key(lb_arn).then_some(())?;
            st.addons.waf_regional_assoc.get(lb_arn).cloned()
        })
    }

    /// Whether `waf-regional` has an endpoint in the fake's region (default: yes).
    pub fn set_waf_regional_available(&self, on: bool) {
        self.with_state(|st| st.addons.waf_regional_unavailable = !on);
    }

    /// The Shield Advanced subscription: `ACTIVE` when on (default: `INACTIVE`).
    pub fn set_shield_subscription(&self, active: bool) {
        self.with_state(|st| st.addons.shield_active = active);
    }

    /// Every Shield protection, by id.
    pub fn shield_protections(&self) -> Vec<Protection> {
        self.with_state(|st| st.addons.protections.values().cloned().collect())
    }

    /// Adds a protection made by someone else (any name); returns its id.
    pub fn add_shield_protection(&self, name: &str, resource_arn: &str) -> String {
        self.with_state(|st| insert_protection(st, name, resource_arn))
    }
}

fn insert_protection(st: &mut State, name: &str, resource_arn: &str) -> String {
    let id = format!("{}-{}-{}-{}-{}", hex(8), hex(4), hex(4), hex(4), hex(12));
    st.addons.protections.insert(
        id.clone(),
        Protection {
            id: id.clone(),
            name: name.into(),
            resource_arn: resource_arn.into(),
        },
    );
    id
}

#[async_trait]
impl WafV2 for FakeAws {
    async fn get_web_acl_for_resource(&self, resource_arn: &str) -> Result<Option<String>> {
        self.run(Service::WafV2, "GetWebACLForResource", |st| {
            lb_exists(st, resource_arn)?;
            Ok(st.addons.wafv2_assoc.get(resource_arn).cloned())
        })
        .await
    }

    async fn associate_web_acl(&self, web_acl_arn: &str, resource_arn: &str) -> Result<()> {
        self.run(Service::WafV2, "AssociateWebACL", |st| {
            lb_exists(st, resource_arn)?;
            if !st.addons.wafv2_acls.values().any(|a| a == web_acl_arn) {
                return Err(nonexistent(web_acl_arn));
            }
            st.addons
                .wafv2_assoc
                .insert(resource_arn.into(), web_acl_arn.into());
            Ok(())
        })
        .await
    }

    async fn disassociate_web_acl(&self, resource_arn: &str) -> Result<()> {
        self.run(Service::WafV2, "DisassociateWebACL", |st| {
            lb_exists(st, resource_arn)?;
            st.addons.wafv2_assoc.remove(resource_arn);
            Ok(())
        })
        .await
    }

    async fn list_web_acls(&self) -> Result<Vec<WebAclSummary>> {
        self.run(Service::WafV2, "ListWebACLs", |st| {
            Ok(st
                .addons
                .wafv2_acls
                .iter()
                .map(|(name, arn)| WebAclSummary {
                    name: name.clone(),
                    arn: arn.clone(),
                })
                .collect())
        })
        .await
    }
}

#[async_trait]
impl WafRegional for FakeAws {
    fn available(&self) -> bool {
        self.with_state(|st| !st.addons.waf_regional_unavailable)
    }

    async fn get_web_acl_for_resource(&self, resource_arn: &str) -> Result<Option<String>> {
        self.run(Service::WafRegional, "GetWebACLForResource", |st| {
            lb_exists(st, resource_arn)?;
            Ok(st.addons.waf_regional_assoc.get(resource_arn).cloned())
        })
        .await
    }

    async fn associate_web_acl(&self, web_acl_id: &str, resource_arn: &str) -> Result<()> {
        self.run(Service::WafRegional, "AssociateWebACL", |st| {
            lb_exists(st, resource_arn)?;
            if !st.addons.waf_regional_acls.contains(web_acl_id) {
                return Err(nonexistent(web_acl_id));
            }
            st.addons
                .waf_regional_assoc
                .insert(resource_arn.into(), web_acl_id.into());
            Ok(())
        })
        .await
    }

    async fn disassociate_web_acl(&self, resource_arn: &str) -> Result<()> {
        self.run(Service::WafRegional, "DisassociateWebACL", |st| {
            lb_exists(st, resource_arn)?;
            st.addons.waf_regional_assoc.remove(resource_arn);
            Ok(())
        })
        .await
    }
}

#[async_trait]
impl Shield for FakeAws {
    async fn get_subscription_state(&self) -> Result<String> {
        self.run(Service::Shield, "GetSubscriptionState", |st| {
            Ok(if st.addons.shield_active {
                "ACTIVE"
            } else {
                "INACTIVE"
            }
            .to_string())
        })
        .await
    }

    async fn describe_protection(&self, resource_arn: &str) -> Result<Option<Protection>> {
        self.run(Service::Shield, "DescribeProtection", |st| {
            Ok(st
                .addons
                .protections
                .values()
                .find(|p| p.resource_arn == resource_arn)
                .cloned())
        })
        .await
    }

    async fn create_protection(&self, name: &str, resource_arn: &str) -> Result<String> {
        self.run(Service::Shield, "CreateProtection", |st| {
            if !st.addons.shield_active {
                return Err(AwsError::from_code(
                    "ResourceNotFoundException",
                    "The subscription does not exist.",
                    Some(400),
                ));
            }
            lb_exists(st, resource_arn).map_err(|_| {
                AwsError::from_code(
                    "InvalidResourceException",
                    format!("resource {resource_arn} does not exist"),
                    Some(400),
                )
            })?;
            if st
                .addons
                .protections
                .values()
                .any(|p| p.resource_arn == resource_arn)
            {
                return Err(AwsError::from_code(
                    "ResourceAlreadyExistsException",
                    format!("a protection of {resource_arn} exists"),
                    Some(400),
                ));
            }
            Ok(insert_protection(st, name, resource_arn))
        })
        .await
    }

    async fn delete_protection(&self, protection_id: &str) -> Result<()> {
        self.run(Service::Shield, "DeleteProtection", |st| {
            match st.addons.protections.remove(protection_id) {
                Some(_) => Ok(()),
                None => Err(AwsError::from_code(
                    "ResourceNotFoundException",
                    format!("protection {protection_id} does not exist"),
                    Some(400),
                )),
            }
        })
        .await
    }
}
