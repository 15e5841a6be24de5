//! Address pools of a load balancer, as upstream handles them: the IPv4 IPAM pool
//! (`ipam-ipv4-pool-id`) is given at creation and kept true with ModifyIpPools — an unwanted
//! pool is removed before the other updates (so an IP address type change can follow), a
//! wanted one set after them. The customer-owned pool (Outposts) can only be given at
//! creation: a difference later is logged, never corrected.

use super::error::{Context, Result};
use super::Deployer;
use crate::aws;
use crate::model;

impl Deployer {
    /// First step of an update: removes an IPAM pool the model no longer asks for; returns
    /// whether it did.
    pub(crate) async fn remove_unwanted_ipam_pool(
        &self,
        want: &model::LoadBalancer,
        have: &aws::LoadBalancer,
    ) -> Result<bool> {
        if have.ipv4_ipam_pool_id.is_some() && want.ipv4_ipam_pool_id.is_none() {
            self.elbv2
                .modify_ip_pools(&have.arn, None)
                .await
                .ctx(|| format!("remove the IPAM pool of {}", have.name))?;
            return Ok(true);
        }
        Ok(false)
    }

    /// Last step of an update: sets the wanted IPAM pool when it differs; returns whether it
    /// did.
    pub(crate) async fn set_wanted_ipam_pool(
        &self,
        want: &model::LoadBalancer,
        have: &aws::LoadBalancer,
    ) -> Result<bool> {
        if let Some(id) = &want.ipv4_ipam_pool_id {
            if have.ipv4_ipam_pool_id.as_ref() != Some(id) {
                self.elbv2
                    .modify_ip_pools(&have.arn, Some(id))
                    .await
                    .ctx(|| format!("set the IPAM pool of {}", have.name))?;
                return Ok(true);
            }
        }
        Ok(false)
    }
}

/// Logs a customer-owned pool that differs from the model (AWS cannot change it in place).
pub fn log_coip_drift(want: &model::LoadBalancer, have: &aws::LoadBalancer) {
    if want.customer_owned_ipv4_pool.is_some()
        && want.customer_owned_ipv4_pool != have.customer_owned_ipv4_pool
    {
        tracing::info!(
            load_balancer = %have.name,
            want = ?want.customer_owned_ipv4_pool,
            have = ?have.customer_owned_ipv4_pool,
            "loadBalancer has drifted CustomerOwnedIPv4Pool setting"
        );
    }
}
