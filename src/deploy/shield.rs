//! Shield Advanced protection of the load balancer (`shield-advanced-protection`), only when
//! the account is subscribed (GetSubscriptionState `ACTIVE`, cached two hours; not subscribed
//! or unknown: skipped, as upstream). A protection is created under upstream's name and deleted
//! only when it carries that name (or the legacy one): someone else's protection is kept.

use super::error::{Context, Result};
use super::Deployer;
use crate::aws::Shield;

/// The name upstream gives the protections it creates.
pub const PROTECTION_NAME: &str = "managed by aws-load-balancer-controller";
/// The name the older aws-alb-ingress-controller gave them (also ours to delete).
pub const PROTECTION_NAME_LEGACY: &str = "managed by aws-alb-ingress-controller";

impl Deployer {
    /// Whether the account has an active Shield Advanced subscription; an error is logged and
    /// counts as not subscribed (upstream skips Shield then).
    pub(crate) async fn shield_subscribed(&self, client: &dyn Shield) -> bool {
        if let Some(state) = self.addons.subscription.get("") {
            return state == "ACTIVE";
        }
        match client.get_subscription_state().await {
            Ok(state) => {
                self.addons.subscription.set("", state.clone());
                if state != "ACTIVE" {
                    tracing::info!(%state, "no active AWS Shield Advanced subscription; shield-advanced-protection is not applied");
                }
                state == "ACTIVE"
            }
            Err(error) => {
                tracing::error!(%error, "unable to determine AWS Shield subscription state, skipping AWS shield reconciliation");
                false
            }
        }
    }

    /// Creates (on) or deletes (off, ours only) the load balancer's protection.
    pub(crate) async fn sync_shield(
        &self,
        client: &dyn Shield,
        lb_arn: &str,
        on: bool,
    ) -> Result<()> {
        let current = match self.addons.protections.get(lb_arn) {
            Some(c) => c,
            None => {
                let c = client
                    .describe_protection(lb_arn)
                    .await
                    .ctx(|| "failed to get shield protection on LoadBalancer".into())?
                    .map(|p| (p.id, p.name));
                self.addons.protections.set(lb_arn, c.clone());
                c
            }
        };
        match (on, current) {
            (true, None) => {
                tracing::info!(lb = lb_arn, "enabling shield protection");
                let id = client
                    .create_protection(PROTECTION_NAME, lb_arn)
                    .await
                    .ctx(|| "failed to create shield protection on LoadBalancer".into())?;
                self.addons
                    .protections
                    .set(lb_arn, Some((id, PROTECTION_NAME.to_string())));
            }
            (false, Some((id, name))) => {
                if name != PROTECTION_NAME && name != PROTECTION_NAME_LEGACY {
                    tracing::info!(lb = lb_arn, protection = %id, name = %name, "ignoring unmanaged shield protection");
                    return Ok(());
                }
                tracing::info!(lb = lb_arn, protection = %id, "disabling shield protection");
                client
                    .delete_protection(&id)
                    .await
                    .ctx(|| "failed to delete shield protection on LoadBalancer".into())?;
                self.addons.protections.set(lb_arn, None);
            }
            _ => {}
        }
        Ok(())
    }
}
