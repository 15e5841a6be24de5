//! The load balancer: found among the VPC's load balancers by stack tags in the shared inventory
//! (through the tagging API under gate `EnableRGTAPI`, see `tagged`), paired by resource id,
//! created or updated in place (security groups, subnets, IP address type, attributes, tags)
//! and described again after a create or change, for the inventory. Scheme or type changes
//! cannot be made in place: the old one is deleted first (as upstream does) and a new one
//! created.

use super::error::{Context, Error, Result};
use super::lb_subnets::{is_network, prefix_nat, same_set, subnet_mappings, subnets_of};
use super::resolve::Resolved;
use super::resolve_security_groups;
use super::tags;
use super::target_group::attribute_changes;
use super::Deployer;
use crate::aws::{self, AwsError, LoadBalancerQuery, Tags};
use crate::model::service::ExistingNlb;
use crate::model::{self, IpAddressType, LoadBalancerScheme, StackKind, Subnets, Token};

/// The load-balancer attribute a user sets to protect it; this controller never clears it.
pub const DELETION_PROTECTION: &str = "deletion_protection.enabled";

pub fn ip_type(t: IpAddressType) -> &'static str {
    t.as_str()
}

/// AWS cannot change scheme or type of a load balancer.
pub fn needs_replacement(have: &aws::LoadBalancer, want: &model::LoadBalancer) -> bool {
    have.scheme != want.scheme.as_str() || have.lb_type != want.lb_type
}

/// Whether `have` (tagged `have_tags`) is the load balancer `want` of a `kind` stack: its
/// resource id, and nothing that only a new one could change (scheme, type).
pub fn pairs_with(
    kind: StackKind,
    want: &model::LoadBalancer,
    have: &aws::LoadBalancer,
    have_tags: &Tags,
) -> bool {
    tags::resource_id(have_tags, kind) == Some(want.id.as_str()) && !needs_replacement(have, want)
}

/// Outcome of the load-balancer step.
#[derive(Debug, Default)]
pub(crate) struct LbOutcome {
    pub lb: Option<aws::LoadBalancer>,
    pub leftovers: Vec<String>,
}

impl Deployer {
    pub(crate) async fn find_owned_lbs(
        &self,
        kind: StackKind,
        stack_id: &str,
    ) -> Result<Vec<(aws::LoadBalancer, Tags)>> {
        if let Some(found) = self.tagged_lbs(kind, stack_id).await? {
            return Ok(found);
        }
        self.inventory.ensure(None).await?;
        Ok(self.listed_lbs(kind, stack_id))
    }

    /// The stack's load balancers as the inventory has them now (listed by the caller).
    pub(crate) fn listed_lbs(
        &self,
        kind: StackKind,
        stack_id: &str,
    ) -> Vec<(aws::LoadBalancer, Tags)> {
        self.inventory
            .lbs_where(|_, t| tags::is_owned(t, &self.cluster, kind, stack_id))
    }

    /// Describes the load balancer `arn` again after this deploy created or changed it, into
    /// the inventory: the next deploy compares with what AWS says, not with what was asked.
    /// `None` when AWS no longer lists it.
    async fn describe_lb_again(&self, arn: &str, name: &str) -> Result<Option<aws::LoadBalancer>> {
        let q = LoadBalancerQuery {
            arns: vec![arn.to_string()],
            ..Default::default()
        };
        let found = self
            .elbv2
            .describe_load_balancers(&q)
            .await
            .ctx(|| format!("describe load balancer {name}"))?;
        match found.into_iter().find(|l| l.arn == arn) {
            Some(lb) => {
                self.inventory.put_lb(lb.clone(), None);
                Ok(Some(lb))
            }
            None => {
                self.inventory.gone(arn);
                Ok(None)
            }
        }
    }

    async fn desired_sgs(&self, want: &model::LoadBalancer, r: &Resolved) -> Result<Vec<String>> {
        let mut ids = Vec::new();
        for t in &want.security_groups {
            ids.push(r.token(t)?);
        }
        if !want.security_group_names_or_ids.is_empty() {
            let given = &want.security_group_names_or_ids;
            ids.extend(resolve_security_groups(self.ec2.as_ref(), &self.vpc_id, given).await?);
        }
        Ok(ids)
    }

    /// The subnets a deploy of `stack` would give its load balancer (the current ones when
    /// they stay), for the dry-run plan; reads only. None without a load balancer.
    pub async fn planned_subnets(&self, stack: &model::Stack) -> Result<Option<Vec<String>>> {
        let Some(want) = &stack.load_balancer else {
            return Ok(None);
        };
        if let model::Subnets::Resolved(ids) = &want.subnets {
            return Ok(Some(ids.clone()));
        }
        let owned = self.find_owned_lbs(stack.kind, &stack.stack_id).await?;
        let current = owned
            .iter()
            .find(|(l, t)| pairs_with(stack.kind, want, l, t))
            .map(|(l, _)| l);
        Ok(match self.desired_subnets(want, current).await? {
            Some(ids) => Some(ids),
            None => current.map(subnets_of),
        })
    }

    /// The ids of the security groups the load balancer's annotation names (ids pass as
    /// they are), for the dry-run plan; reads only.
    pub async fn planned_security_groups(&self, want: &model::LoadBalancer) -> Result<Vec<String>> {
        let given = &want.security_group_names_or_ids;
        if given.is_empty() {
            return Ok(Vec::new());
        }
        resolve_security_groups(self.ec2.as_ref(), &self.vpc_id, given).await
    }

    pub(crate) async fn sync_load_balancer(
        &self,
        kind: StackKind,
        want: &model::LoadBalancer,
        mut existing: Vec<(aws::LoadBalancer, Tags)>,
        r: &Resolved,
    ) -> Result<LbOutcome> {
        let pos = existing
            .iter()
            .position(|(l, t)| pairs_with(kind, want, l, t));
        let current = pos.map(|i| existing.remove(i));
        // Upstream deletes unmatched load balancers first: a replacement (scheme or type
        // change) may reuse the old one's name, its EIPs and its target groups (a target group
        // belongs to one load balancer only), all of which the old one holds until it is gone.
        for (l, _) in existing {
            self.delete_lb(&l.arn).await?;
        }
        let leftovers = Vec::new();
        let sgs = self.desired_sgs(want, r).await?;
        let subnets = self
            .desired_subnets(want, current.as_ref().map(|(l, _)| l))
            .await?;
        let lb = match current {
            Some((have, have_tags)) => {
                self.update_lb(want, &have, &have_tags, &sgs, subnets)
                    .await?;
                have
            }
            None => self.create_lb(want, sgs, subnets).await?,
        };
        if !want.attributes.is_empty() {
            let have = self
                .elbv2
                .describe_load_balancer_attributes(&lb.arn)
                .await
                .ctx(|| format!("describe attributes of {}", lb.name))?;
            let change = attribute_changes(&want.attributes, &have);
            if !change.is_empty() {
                self.elbv2
                    .modify_load_balancer_attributes(&lb.arn, &change)
                    .await
                    .ctx(|| format!("modify attributes of {}", lb.name))?;
            }
        }
        Ok(LbOutcome {
            lb: Some(lb),
            leftovers,
        })
    }

    async fn create_lb(
        &self,
        want: &model::LoadBalancer,
        sgs: Vec<String>,
        subnets: Option<Vec<String>>,
    ) -> Result<aws::LoadBalancer> {
        let nlb = is_network(want);
        // The model's load balancer with what only the deploy knows filled in: the chosen
        // subnets, the security groups resolved to ids, the source-NAT setting where it applies.
        let mut resolved = want.clone();
        resolved.subnets = Subnets::Resolved(subnets.unwrap_or_default());
        resolved.security_groups = sgs.iter().cloned().map(Token::Literal).collect();
        resolved.security_group_names_or_ids.clear();
        resolved.enable_prefix_for_ipv6_source_nat = prefix_nat(want);
        let lb = self
            .elbv2
            .create_load_balancer(&resolved)
            .await
            .ctx(|| format!("create load balancer {}", want.name))?;
        // In the inventory at once, so that a failure from here on never makes the next deploy
        // create it again.
        self.inventory.put_lb(lb.clone(), Some(want.tags.clone()));
        // Upstream sets the PrivateLink enforcement right after the create (CreateLoadBalancer
        // has no such parameter); an NLB without security groups has nothing to enforce.
        if let Some(pl) = want
            .security_groups_inbound_rules_on_private_link
            .as_deref()
            .filter(|_| nlb && !sgs.is_empty())
        {
            self.elbv2
                .set_security_groups(&lb.arn, &sgs, Some(pl))
                .await
                .ctx(|| format!("set security groups of {}", lb.name))?;
        }
        // Into the inventory as AWS describes it (settings the create answer may leave out),
        // for the next deploy. This deploy reports it as created, state included, as upstream
        // does: a describe made at once may already say `active` (moto's does), which would
        // have a Gateway Programmed by the pass that created its load balancer.
        self.describe_lb_again(&lb.arn, &lb.name).await?;
        Ok(lb)
    }

    /// `ModifyCapacityReservation` once the load balancer is no longer provisioning (upstream
    /// requeues until then, every `--lb-stabilization-monitor-interval`); `0` resets the
    /// reservation.
    /// The capacity reservation, last in a deploy as upstream's post-synthesis step: a load
    /// balancer still provisioning asks for another pass after the stabilization interval
    /// ([`Error::NotReady`]) once its listeners, rules and add-ons are already in place.
    pub(crate) async fn sync_capacity(&self, lb: &aws::LoadBalancer, units: i32) -> Result<()> {
        // AWS moves the state on its own: read now, not as the inventory last listed it.
        let state = match self.describe_lb_again(&lb.arn, &lb.name).await? {
            Some(now) => now.state,
            None => lb.state.clone(),
        };
        if state == "provisioning" {
            return Err(Error::NotReady {
                reason: format!("monitor provisioning state for load balancer: {}", lb.name),
                retry_after: self.lb_stabilization_interval,
            });
        }
        let have = self
            .elbv2
            .describe_capacity_reservation(&lb.arn)
            .await
            .ctx(|| format!("describe capacity reservation of {}", lb.name))?;
        let want = (units > 0).then_some(units);
        if have.filter(|n| *n > 0) != want {
            self.elbv2
                .modify_capacity_reservation(&lb.arn, want)
                .await
                .ctx(|| format!("modify capacity reservation of {}", lb.name))?;
        }
        Ok(())
    }

    async fn update_lb(
        &self,
        want: &model::LoadBalancer,
        have: &aws::LoadBalancer,
        have_tags: &Tags,
        sgs: &[String],
        subnets: Option<Vec<String>>,
    ) -> Result<()> {
        super::ip_pools::log_coip_drift(want, have);
        match self.update_lb_settings(want, have, sgs, subnets).await {
            Ok(true) => {
                self.describe_lb_again(&have.arn, &have.name).await?;
            }
            Ok(false) => {}
            // Some settings may have changed before the failure: listed again next time.
            Err(e) => {
                self.inventory.invalidate();
                return Err(e);
            }
        }
        self.reconcile_elb_tags(&have.arn, &want.tags, have_tags)
            .await
    }

    /// The settings of an existing load balancer brought to the model's (tags apart); returns
    /// whether anything was written.
    async fn update_lb_settings(
        &self,
        want: &model::LoadBalancer,
        have: &aws::LoadBalancer,
        sgs: &[String],
        subnets: Option<Vec<String>>,
    ) -> Result<bool> {
        let arn = &have.arn;
        let mut wrote = self.remove_unwanted_ipam_pool(want, have).await?;
        let nlb = is_network(want);
        // AWS never adds security groups to an NLB created without any, nor removes all of
        // them from one that has some; the model already keeps such an NLB as it is.
        let sgs_settable = !nlb || (!have.security_groups.is_empty() && !sgs.is_empty());
        let pl = want
            .security_groups_inbound_rules_on_private_link
            .as_deref()
            .filter(|_| nlb);
        let pl_differs =
            pl.is_some_and(|v| have.enforce_private_link_inbound_rules.as_deref() != Some(v));
        if sgs_settable && (!same_set(sgs, &have.security_groups) || pl_differs) {
            self.elbv2
                .set_security_groups(arn, sgs, pl)
                .await
                .ctx(|| format!("set security groups of {}", have.name))?;
            wrote = true;
        }
        // IP address type before subnets: IPv6 addresses in the mappings need a dualstack NLB.
        let ipt = ip_type(want.ip_address_type);
        if have.ip_address_type != ipt {
            self.elbv2
                .set_ip_address_type(arn, ipt)
                .await
                .ctx(|| format!("set IP address type of {}", have.name))?;
            wrote = true;
        }
        let want_nat = prefix_nat(want);
        let have_nat = have
            .enable_prefix_for_ipv6_source_nat
            .clone()
            .unwrap_or_else(|| "off".into());
        let nat_differs = want_nat.as_ref().is_some_and(|w| *w != have_nat);
        let current = subnets_of(have);
        let target = subnets.unwrap_or_else(|| current.clone());
        // Upstream also sets the subnets once when an NLB turns dualstack with IPv6 addresses
        // it does not have yet (the only time address values matter on an existing NLB).
        let first_ipv6 = nlb
            && want.ip_address_type == IpAddressType::DualStack
            && have.ip_address_type != ipt
            && want
                .subnet_mappings
                .iter()
                .any(|m| m.ipv6_address.is_some())
            && !have
                .availability_zones
                .iter()
                .flat_map(|z| &z.addresses)
                .any(|a| a.ipv6_address.is_some());
        if !same_set(&target, &current) || nat_differs || first_ipv6 {
            let m = subnet_mappings(want, &target);
            self.elbv2
                .set_subnets(arn, &m, want_nat.as_deref().filter(|_| nat_differs))
                .await
                .ctx(|| format!("set subnets of {}", have.name))?;
            wrote = true;
        }
        wrote |= self.set_wanted_ipam_pool(want, have).await?;
        Ok(wrote)
    }

    /// The NLB a Service stack already has, as the Service model needs it (its scheme, subnets
    /// and security groups: an NLB created without security groups never gets any).
    pub async fn existing_nlb(&self, stack_id: &str) -> Result<Option<ExistingNlb>> {
        self.existing_nlb_of(StackKind::Service, stack_id).await
    }

    /// [`Self::existing_nlb`] for a stack of any kind (NLB Gateways).
    pub async fn existing_nlb_of(
        &self,
        kind: StackKind,
        stack_id: &str,
    ) -> Result<Option<ExistingNlb>> {
        let found = self.find_owned_lbs(kind, stack_id).await?;
        Ok(found.into_iter().next().map(|(lb, _)| ExistingNlb {
            scheme: if lb.scheme == "internal" {
                LoadBalancerScheme::Internal
            } else {
                LoadBalancerScheme::InternetFacing
            },
            subnet_ids: subnets_of(&lb),
            security_groups: lb.security_groups,
        }))
    }

    /// Whether AWS shows a load balancer of stack `stack_id` of `kind` (a deleted Gateway's
    /// finalizer waits until it shows none).
    pub async fn has_load_balancer_of(&self, kind: StackKind, stack_id: &str) -> Result<bool> {
        Ok(!self.find_owned_lbs(kind, stack_id).await?.is_empty())
    }

    /// Refuses (`DeletionProtected`) when a load balancer of the Ingress stack has deletion
    /// protection on, so that nothing of a protected stack (bindings, rules) is taken apart first.
    pub async fn check_deletable(&self, stack_id: &str) -> Result<()> {
        self.check_deletable_of(StackKind::Ingress, stack_id).await
    }

    /// [`Self::check_deletable`] for a stack of either kind.
    pub async fn check_deletable_of(&self, kind: StackKind, stack_id: &str) -> Result<()> {
        let checked = self.check_owned_deletable(kind, stack_id).await;
        if let Err(e) = &checked {
            self.invalidate_if_stale(e);
        }
        checked
    }

    async fn check_owned_deletable(&self, kind: StackKind, stack_id: &str) -> Result<()> {
        for (lb, _) in self.find_owned_lbs(kind, stack_id).await? {
            let attrs = self
                .elbv2
                .describe_load_balancer_attributes(&lb.arn)
                .await
                .ctx(|| format!("describe attributes of {}", lb.name))?;
            if attrs.get(DELETION_PROTECTION).map(String::as_str) == Some("true") {
                return Err(Error::DeletionProtected {
                    name: lb.name,
                    arn: lb.arn,
                });
            }
        }
        Ok(())
    }

    /// Deletes a load balancer; gone counts as deleted. Its listeners and rules go with it.
    /// Deletion protection is the user's: it is never turned off here. A protected load
    /// balancer stays and the error names it, so the stack waits until the user lifts it.
    pub(crate) async fn delete_lb(&self, arn: &str) -> Result<()> {
        match self.elbv2.delete_load_balancer(arn).await {
            Ok(()) => {}
            Err(e) if e.is_not_found() => {}
            Err(AwsError::NotPermitted { .. }) => {
                return Err(Error::DeletionProtected {
                    name: name_of_arn(arn).to_string(),
                    arn: arn.to_string(),
                })
            }
            Err(source) => {
                return Err(Error::Aws {
                    what: format!("delete load balancer {arn}"),
                    source,
                })
            }
        }
        self.inventory.gone(arn);
        self.tag_cache.forget(arn);
        Ok(())
    }
}

/// The name inside a load-balancer ARN (`...:loadbalancer/app/<name>/<id>`); the ARN itself
/// when it has no such part.
pub fn name_of_arn(arn: &str) -> &str {
    arn.rsplit_once(":loadbalancer/")
        .and_then(|(_, rest)| rest.split('/').nth(1))
        .unwrap_or(arn)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn name_comes_out_of_the_arn() {
        let arn = "arn:aws:elasticloadbalancing:us-west-2:123456789012:loadbalancer/app/k8s-demo-app-0123456789/50dc6c495c0c9188";
        assert_eq!(name_of_arn(arn), "k8s-demo-app-0123456789");
        assert_eq!(name_of_arn("odd"), "odd");
    }

    #[test]
    fn scheme_or_type_change_needs_replacement() {
        let want: model::LoadBalancer = serde_json::from_value(serde_json::json!({
            "id": "LoadBalancer", "name": "k8s-x", "type": "application",
            "scheme": "internal", "ipAddressType": "ipv4", "subnets": {"resolved": []},
            "securityGroups": [], "attributes": {}, "tags": {}
        }))
        .unwrap();
        let mut have = aws::LoadBalancer {
            scheme: "internal".into(),
            lb_type: "application".into(),
            ..Default::default()
        };
        assert!(!needs_replacement(&have, &want));
        have.scheme = "internet-facing".into();
        assert!(needs_replacement(&have, &want));
        have.scheme = "internal".into();
        have.lb_type = "network".into();
        assert!(needs_replacement(&have, &want));
    }
}
