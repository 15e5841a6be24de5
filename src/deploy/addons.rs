//! The load balancer add-ons (WAFv2, WAF Classic regional, Shield Advanced), deployed after the
//! load balancer, its listeners and rules, in upstream's order. Everything that can fail because
//! of the manifests (a web ACL name that does not resolve, a service this deployer has no
//! client for) is settled by [`Deployer::prepare_addons`] before the deploy's first write.
//! An add-on the stack says nothing about is left as it is (upstream's GHSA-rjfv-pjvx-mjgv fix);
//! `none` / `false` removes what is there. Deleting a stack touches no add-on: associations and
//! protections go with the load balancer, as upstream.

use std::collections::HashMap;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use super::error::{Error, Result};
use super::Deployer;
use crate::aws::AddonClients;
use crate::model::Stack;

/// Upstream's cache lifetimes: current associations / protections per load balancer, web ACL
/// ARNs per name, the Shield subscription state.
pub(crate) const ASSOCIATION_TTL: Duration = Duration::from_secs(10 * 60);
pub(crate) const NAME_TTL: Duration = Duration::from_secs(60 * 60);
pub(crate) const SUBSCRIPTION_TTL: Duration = Duration::from_secs(2 * 60 * 60);

/// A map whose entries expire; expired entries are dropped on insert (load balancers come and go).
#[derive(Debug)]
pub(crate) struct TtlCache<V> {
    ttl: Duration,
    entries: Mutex<HashMap<String, (Instant, V)>>,
}

impl<V: Clone> TtlCache<V> {
    pub fn new(ttl: Duration) -> Self {
        Self {
            ttl,
            entries: Mutex::new(HashMap::new()),
        }
    }

    pub fn get(&self, key: &str) -> Option<V> {
        let entries = self.entries.lock().unwrap_or_else(|p| p.into_inner());
        entries
            .get(key)
            .filter(|(until, _)| Instant::now() < *until)
            .map(|(_, v)| v.clone())
    }

    pub fn set(&self, key: &str, value: V) {
        let now = Instant::now();
        let mut entries = self.entries.lock().unwrap_or_else(|p| p.into_inner());
        entries.retain(|_, (until, _)| now < *until);
        entries.insert(key.to_string(), (now + self.ttl, value));
    }
}

/// The add-on clients of a deployer and what it remembers of AWS between deploys.
pub(crate) struct Addons {
    pub clients: AddonClients,
    /// Load balancer ARN → associated WAFv2 web ACL ARN ("" none).
    pub wafv2_current: TtlCache<String>,
    /// WAFv2 web ACL name → ARN.
    pub wafv2_names: TtlCache<String>,
    /// Load balancer ARN → associated WAF Classic web ACL id ("" none).
    pub waf_regional_current: TtlCache<String>,
    /// Load balancer ARN → its Shield protection (id, name).
    pub protections: TtlCache<Option<(String, String)>>,
    /// `GetSubscriptionState` (key "").
    pub subscription: TtlCache<String>,
}

impl Addons {
    pub fn new(clients: AddonClients) -> Self {
        Self {
            clients,
            wafv2_current: TtlCache::new(ASSOCIATION_TTL),
            wafv2_names: TtlCache::new(NAME_TTL),
            waf_regional_current: TtlCache::new(ASSOCIATION_TTL),
            protections: TtlCache::new(ASSOCIATION_TTL),
            subscription: TtlCache::new(SUBSCRIPTION_TTL),
        }
    }
}

impl Default for Addons {
    fn default() -> Self {
        Self::new(AddonClients::default())
    }
}

/// What the deploy does to the add-ons of the stack's load balancer; `None` leaves one alone.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct AddonPlan {
    /// The WAFv2 web ACL ARN to associate ("" = disassociate).
    pub wafv2: Option<String>,
    /// The WAF Classic web ACL id to associate ("" = disassociate).
    pub waf_regional: Option<String>,
    /// Shield Advanced protection on / off (None also when the account is not subscribed).
    pub shield: Option<bool>,
}

/// `none` asks for no association.
pub(crate) fn or_none(v: &str) -> String {
    if v == "none" {
        String::new()
    } else {
        v.to_string()
    }
}

fn no_client(what: &str) -> Error {
    Error::Unsupported(format!(
        "{what} (this deployer has no client for the service)"
    ))
}

impl Deployer {
    /// Resolves the stack's add-ons before any write: web ACL names to ARNs, the Shield
    /// subscription. A stack without a load balancer (being deleted) has none to do.
    pub(crate) async fn prepare_addons(&self, stack: &Stack) -> Result<AddonPlan> {
        let a = &stack.addons;
        if stack.load_balancer.is_none() || a.is_empty() {
            return Ok(AddonPlan::default());
        }
        let mut plan = AddonPlan::default();
        if a.wafv2_acl_name.is_some() || a.wafv2_acl_arn.is_some() {
            let Some(client) = &self.addons.clients.wafv2 else {
                return Err(no_client("WAFv2 web ACL association"));
            };
            plan.wafv2 = Some(self.desired_wafv2(client.as_ref(), a).await?);
        }
        if let Some(id) = &a.waf_regional_acl_id {
            let Some(client) = &self.addons.clients.waf_regional else {
                return Err(no_client("WAF Classic regional web ACL association"));
            };
            if client.available() {
                plan.waf_regional = Some(or_none(id));
            } else {
                tracing::warn!(stack = %stack.stack_id, "WAF Classic regional has no endpoint in this region; the waf-acl-id annotation is not applied");
            }
        }
        if let Some(on) = a.shield_advanced_protection {
            let Some(client) = &self.addons.clients.shield else {
                return Err(no_client("Shield Advanced protection"));
            };
            if self.shield_subscribed(client.as_ref()).await {
                plan.shield = Some(on);
            }
        }
        Ok(plan)
    }

    /// Makes the load balancer's add-ons match `plan`: WAFv2, then WAF Classic, then Shield.
    pub(crate) async fn sync_addons(&self, plan: &AddonPlan, lb_arn: &str) -> Result<()> {
        if let (Some(want), Some(c)) = (&plan.wafv2, &self.addons.clients.wafv2) {
            self.sync_wafv2(c.as_ref(), lb_arn, want).await?;
        }
        if let (Some(want), Some(c)) = (&plan.waf_regional, &self.addons.clients.waf_regional) {
            self.sync_waf_regional(c.as_ref(), lb_arn, want).await?;
        }
        if let (Some(on), Some(c)) = (plan.shield, &self.addons.clients.shield) {
            self.sync_shield(c.as_ref(), lb_arn, on).await?;
        }
        Ok(())
    }
}
