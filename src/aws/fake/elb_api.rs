//! `ElbV2` for the fake: each call logged, faults injected, then applied to the state.

use std::collections::BTreeMap;

use async_trait::async_trait;

use super::elb::invalid;
use super::state::{lb_not_found, not_found, tg_not_found};
use super::FakeAws;
use crate::aws::error::{AwsError, Result};
use crate::aws::sdk::elbv2::requests;
use crate::aws::types::*;
use crate::aws::{ElbV2, TAG_ARNS_PER_CALL, TARGETS_PER_CALL};
use crate::model;

const SVC: Service = Service::ElbV2;

#[async_trait]
impl ElbV2 for FakeAws {
    async fn describe_load_balancers(&self, q: &LoadBalancerQuery) -> Result<Vec<LoadBalancer>> {
        self.run(SVC, "DescribeLoadBalancers", |st| {
            if !q.arns.is_empty() && !q.names.is_empty() {
                return Err(AwsError::validation("Load balancer names and load balancer ARNs cannot be specified at the same time"));
            }
            for a in &q.arns {
                if !st.lbs.contains_key(a) {
                    return Err(lb_not_found(a));
                }
            }
            for n in &q.names {
                if !st.lbs.values().any(|r| &r.lb.name == n) {
                    return Err(not_found("LoadBalancerNotFound", format!("Load balancers '[{n}]' not found")));
                }
            }
            Ok(st
                .lbs
                .values()
                .filter(|r| (q.arns.is_empty() || q.arns.contains(&r.lb.arn)) && (q.names.is_empty() || q.names.contains(&r.lb.name)))
                .map(|r| r.lb.clone())
                .collect())
        })
        .await
    }

    async fn create_load_balancer(&self, lb: &crate::model::LoadBalancer) -> Result<LoadBalancer> {
        self.run(SVC, "CreateLoadBalancer", |st| st.create_lb(lb))
            .await
    }

    async fn delete_load_balancer(&self, arn: &str) -> Result<()> {
        self.run(SVC, "DeleteLoadBalancer", |st| st.delete_lb(arn))
            .await
    }

    async fn describe_load_balancer_attributes(&self, arn: &str) -> Result<Attributes> {
        self.run(SVC, "DescribeLoadBalancerAttributes", |st| {
            Ok(st.lb_mut(arn)?.attrs.clone())
        })
        .await
    }

    async fn modify_load_balancer_attributes(
        &self,
        arn: &str,
        attrs: &Attributes,
    ) -> Result<Attributes> {
        self.run(SVC, "ModifyLoadBalancerAttributes", |st| {
            st.modify_lb_attrs(arn, attrs)
        })
        .await
    }

    async fn set_security_groups(
        &self,
        arn: &str,
        security_groups: &[String],
        enforce_private_link: Option<&str>,
    ) -> Result<()> {
        self.run(SVC, "SetSecurityGroups", |st| {
            let lb = st.lb_mut(arn)?.lb.clone();
            st.check_sgs(security_groups)?;
            if lb.lb_type == "network" {
                // AWS: an NLB created without security groups never gets any, and one with
                // security groups cannot drop them all.
                if lb.security_groups.is_empty() {
                    return Err(invalid("InvalidConfigurationRequest", "You cannot set security groups on a Network Load Balancer which was created without any security groups"));
                }
                if security_groups.is_empty() {
                    return Err(invalid("InvalidConfigurationRequest", "You cannot remove all security groups from a Network Load Balancer which was created with security groups"));
                }
            } else if enforce_private_link.is_some() {
                return Err(AwsError::validation("EnforceSecurityGroupInboundRulesOnPrivateLinkTraffic is only supported by Network Load Balancers"));
            }
            if let Some(v) = enforce_private_link {
                if v != "on" && v != "off" {
                    return Err(AwsError::validation(format!("'{v}' is not a valid value for EnforceSecurityGroupInboundRulesOnPrivateLinkTraffic")));
                }
            }
            let rec = st.lb_mut(arn)?;
            rec.lb.security_groups = security_groups.to_vec();
            if let Some(v) = enforce_private_link {
                rec.lb.enforce_private_link_inbound_rules = Some(v.into());
            }
            Ok(())
        })
        .await
    }

    async fn set_subnets(
        &self,
        arn: &str,
        subnets: &[SubnetMapping],
        enable_prefix_for_ipv6_source_nat: Option<&str>,
    ) -> Result<()> {
        self.run(SVC, "SetSubnets", |st| {
            let lb = st.lb_mut(arn)?.lb.clone();
            st.check_subnets(subnets, &lb.lb_type)?;
            st.check_nlb_mappings(subnets, &lb.lb_type, &lb.scheme, &lb.ip_address_type)?;
            if enable_prefix_for_ipv6_source_nat.is_some() && lb.lb_type != "network" {
                return Err(AwsError::validation(
                    "EnablePrefixForIpv6SourceNat is only supported by Network Load Balancers",
                ));
            }
            let zones = st.zones_of(subnets);
            let rec = st.lb_mut(arn)?;
            rec.lb.availability_zones = zones;
            if let Some(v) = enable_prefix_for_ipv6_source_nat {
                rec.lb.enable_prefix_for_ipv6_source_nat = Some(v.into());
            }
            Ok(())
        })
        .await
    }

    async fn describe_capacity_reservation(&self, arn: &str) -> Result<Option<i32>> {
        self.run(SVC, "DescribeCapacityReservation", |st| {
            Ok(st.lb_mut(arn)?.capacity)
        })
        .await
    }

    async fn modify_capacity_reservation(&self, arn: &str, units: Option<i32>) -> Result<()> {
        self.run(SVC, "ModifyCapacityReservation", |st| {
            if units.is_some_and(|n| n < 0) {
                return Err(AwsError::validation("CapacityUnits must not be negative"));
            }
            st.lb_mut(arn)?.capacity = units.filter(|n| *n > 0);
            Ok(())
        })
        .await
    }

    async fn modify_ip_pools(&self, arn: &str, ipv4_ipam_pool_id: Option<&str>) -> Result<()> {
        self.run(SVC, "ModifyIpPools", |st| {
            st.lb_mut(arn)?.lb.ipv4_ipam_pool_id = ipv4_ipam_pool_id.map(str::to_string);
            Ok(())
        })
        .await
    }

    async fn set_ip_address_type(&self, arn: &str, ip_address_type: &str) -> Result<()> {
        self.run(SVC, "SetIpAddressType", |st| {
            if !["ipv4", "dualstack", "dualstack-without-public-ipv4"].contains(&ip_address_type) {
                return Err(AwsError::validation(format!(
                    "IP address type '{ip_address_type}' is not valid"
                )));
            }
            st.lb_mut(arn)?.lb.ip_address_type = ip_address_type.into();
            Ok(())
        })
        .await
    }

    async fn describe_target_groups(&self, q: &TargetGroupQuery) -> Result<Vec<TargetGroup>> {
        self.run(SVC, "DescribeTargetGroups", |st| {
            if let Some(lb) = &q.load_balancer_arn {
                if !st.lbs.contains_key(lb) {
                    return Err(lb_not_found(lb));
                }
            }
            for a in &q.arns {
                if !st.tgs.contains_key(a) {
                    return Err(tg_not_found(a));
                }
            }
            for n in &q.names {
                if !st.tgs.values().any(|r| &r.tg.name == n) {
                    return Err(not_found(
                        "TargetGroupNotFound",
                        format!("One or more target groups not found: '{n}'"),
                    ));
                }
            }
            Ok(st
                .tgs
                .values()
                .map(|r| &r.tg)
                .filter(|t| q.arns.is_empty() || q.arns.contains(&t.arn))
                .filter(|t| q.names.is_empty() || q.names.contains(&t.name))
                .filter(|t| {
                    q.load_balancer_arn
                        .as_ref()
                        .is_none_or(|lb| t.load_balancer_arns.contains(lb))
                })
                .cloned()
                .collect())
        })
        .await
    }

    async fn create_target_group(
        &self,
        tg: NewTargetGroup<'_>,
        vpc_id: &str,
    ) -> Result<TargetGroup> {
        self.run(SVC, "CreateTargetGroup", |st| st.create_tg(tg, vpc_id))
            .await
    }

    async fn modify_target_group(
        &self,
        arn: &str,
        health_check: &crate::model::HealthCheck,
    ) -> Result<TargetGroup> {
        self.run(SVC, "ModifyTargetGroup", |st| {
            st.modify_tg(arn, health_check)
        })
        .await
    }

    async fn delete_target_group(&self, arn: &str) -> Result<()> {
        self.run(SVC, "DeleteTargetGroup", |st| st.delete_tg(arn))
            .await
    }

    async fn describe_target_group_attributes(&self, arn: &str) -> Result<Attributes> {
        self.run(SVC, "DescribeTargetGroupAttributes", |st| {
            Ok(st.tg_mut(arn)?.attrs.clone())
        })
        .await
    }

    async fn modify_target_group_attributes(
        &self,
        arn: &str,
        attrs: &Attributes,
    ) -> Result<Attributes> {
        self.run(SVC, "ModifyTargetGroupAttributes", |st| {
            let rec = st.tg_mut(arn)?;
            if let Some(v) = attrs.get("deregistration_delay.timeout_seconds") {
                if !v.parse::<u32>().is_ok_and(|n| n <= 3600) {
                    return Err(AwsError::validation(format!(
                        "Deregistration delay '{v}' must be an integer between 0 and 3600"
                    )));
                }
            }
            rec.attrs.extend(attrs.clone());
            Ok(rec.attrs.clone())
        })
        .await
    }

    async fn register_targets(&self, tg_arn: &str, targets: &[TargetDescription]) -> Result<()> {
        for chunk in targets.chunks(TARGETS_PER_CALL) {
            self.run(SVC, "RegisterTargets", |st| st.register(tg_arn, chunk))
                .await?;
        }
        Ok(())
    }

    async fn deregister_targets(&self, tg_arn: &str, targets: &[TargetDescription]) -> Result<()> {
        for chunk in targets.chunks(TARGETS_PER_CALL) {
            self.run(SVC, "DeregisterTargets", |st| st.deregister(tg_arn, chunk))
                .await?;
        }
        Ok(())
    }

    async fn describe_target_health(
        &self,
        tg_arn: &str,
        targets: &[TargetDescription],
    ) -> Result<Vec<TargetHealthDescription>> {
        self.run(SVC, "DescribeTargetHealth", |st| {
            st.target_health(tg_arn, targets)
        })
        .await
    }

    async fn describe_listeners(&self, lb_arn: &str) -> Result<Vec<Listener>> {
        self.run(SVC, "DescribeListeners", |st| st.describe_listeners(lb_arn))
            .await
    }

    // The listener and rule writes are refused as the SDK implementation refuses them
    // (unresolved references) by building the same request first, before the call is made.
    async fn create_listener(&self, listener: &model::Listener) -> Result<Listener> {
        let _ = requests::create_listener(listener)?;
        self.run(SVC, "CreateListener", |st| st.create_listener(listener))
            .await
    }

    async fn modify_listener(&self, arn: &str, listener: &model::Listener) -> Result<Listener> {
        let _ = requests::modify_listener(arn, listener)?;
        self.run(SVC, "ModifyListener", |st| {
            st.modify_listener(arn, listener)
        })
        .await
    }

    async fn delete_listener(&self, arn: &str) -> Result<()> {
        self.run(SVC, "DeleteListener", |st| st.delete_listener(arn))
            .await
    }

    async fn describe_listener_certificates(&self, arn: &str) -> Result<Vec<ListenerCertificate>> {
        self.run(SVC, "DescribeListenerCertificates", |st| {
            st.listener_certs(arn)
        })
        .await
    }

    async fn add_listener_certificates(&self, arn: &str, cert_arns: &[String]) -> Result<()> {
        self.run(SVC, "AddListenerCertificates", |st| {
            st.add_certs(arn, cert_arns)
        })
        .await
    }

    async fn remove_listener_certificates(&self, arn: &str, cert_arns: &[String]) -> Result<()> {
        self.run(SVC, "RemoveListenerCertificates", |st| {
            st.remove_certs(arn, cert_arns)
        })
        .await
    }

    async fn describe_listener_attributes(&self, arn: &str) -> Result<Attributes> {
        self.run(SVC, "DescribeListenerAttributes", |st| {
            st.listener_attrs(arn)
        })
        .await
    }

    async fn modify_listener_attributes(
        &self,
        arn: &str,
        attrs: &Attributes,
    ) -> Result<Attributes> {
        self.run(SVC, "ModifyListenerAttributes", |st| {
            st.modify_listener_attrs(arn, attrs)
        })
        .await
    }

    async fn describe_trust_stores(&self, names: &[String]) -> Result<Vec<TrustStore>> {
        self.run(SVC, "DescribeTrustStores", |st| {
            Ok(names
                .iter()
                .filter_map(|n| {
                    st.trust_stores.get(n).map(|arn| TrustStore {
                        name: n.clone(),
                        arn: arn.clone(),
                    })
                })
                .collect())
        })
        .await
    }

    async fn describe_rules(&self, listener_arn: &str) -> Result<Vec<Rule>> {
        self.run(SVC, "DescribeRules", |st| st.describe_rules(listener_arn))
            .await
    }

    async fn create_rule(&self, rule: &model::ListenerRule) -> Result<Rule> {
        let _ = requests::create_rule(rule)?;
        self.run(SVC, "CreateRule", |st| st.create_rule(rule)).await
    }

    async fn modify_rule(&self, arn: &str, rule: &model::ListenerRule) -> Result<Rule> {
        let _ = requests::modify_rule(arn, rule)?;
        self.run(SVC, "ModifyRule", |st| st.modify_rule(arn, rule))
            .await
    }

    async fn delete_rule(&self, arn: &str) -> Result<()> {
        self.run(SVC, "DeleteRule", |st| st.delete_rule(arn)).await
    }

    async fn set_rule_priorities(&self, priorities: &[(String, u32)]) -> Result<()> {
        self.run(SVC, "SetRulePriorities", |st| st.set_priorities(priorities))
            .await
    }

    async fn describe_tags(&self, arns: &[String]) -> Result<BTreeMap<String, Tags>> {
        let mut out = BTreeMap::new();
        for chunk in arns.chunks(TAG_ARNS_PER_CALL) {
            out.extend(
                self.run(SVC, "DescribeTags", |st| st.describe_tags(chunk))
                    .await?,
            );
        }
        Ok(out)
    }

    async fn add_tags(&self, arns: &[String], tags: &Tags) -> Result<()> {
        self.run(SVC, "AddTags", |st| st.add_tags(arns, tags)).await
    }

    async fn remove_tags(&self, arns: &[String], keys: &[String]) -> Result<()> {
        self.run(SVC, "RemoveTags", |st| st.remove_tags(arns, keys))
            .await
    }
}
