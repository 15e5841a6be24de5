//! `ElbV2` over aws-sdk-elasticloadbalancingv2: the calls, with pagination and chunking. The
//! type conversions live in `convert.rs` and `rules.rs`, the write requests in `requests/`.

use std::collections::BTreeMap;

use async_trait::async_trait;
use aws_sdk_elasticloadbalancingv2::types as et;

use super::convert::*;
use super::requests;
use super::SdkElbV2;
use crate::aws::error::Result;
use crate::aws::sdk::{all_pages, non_empty, s, send};
use crate::aws::types::*;
use crate::aws::{ElbV2, TAG_ARNS_PER_CALL, TARGETS_PER_CALL};
use crate::model;

const SVC: Service = Service::ElbV2;

#[async_trait]
impl ElbV2 for SdkElbV2 {
    async fn describe_load_balancers(&self, q: &LoadBalancerQuery) -> Result<Vec<LoadBalancer>> {
        all_pages(|marker| async move {
            let page = send(&self.caller, SVC, "DescribeLoadBalancers", || {
                self.client
                    .describe_load_balancers()
                    .set_load_balancer_arns(non_empty(&q.arns))
                    .set_names(non_empty(&q.names))
                    .set_marker(marker.clone())
                    .send()
            })
            .await?;
            let items = page.load_balancers().iter().map(lb_from).collect();
            Ok((items, page.next_marker().map(String::from)))
        })
        .await
    }

    async fn create_load_balancer(&self, lb: &crate::model::LoadBalancer) -> Result<LoadBalancer> {
        let input = requests::create_load_balancer(lb)?;
        let out = send(&self.caller, SVC, "CreateLoadBalancer", || {
            input.clone().send_with(&self.client)
        })
        .await?;
        Ok(out
            .load_balancers()
            .first()
            .map(lb_from)
            .unwrap_or_default())
    }

    async fn delete_load_balancer(&self, arn: &str) -> Result<()> {
        send(&self.caller, SVC, "DeleteLoadBalancer", || {
            self.client
                .delete_load_balancer()
                .load_balancer_arn(arn)
                .send()
        })
        .await?;
        Ok(())
    }

    async fn describe_load_balancer_attributes(&self, arn: &str) -> Result<Attributes> {
        let out = send(&self.caller, SVC, "DescribeLoadBalancerAttributes", || {
            self.client
                .describe_load_balancer_attributes()
                .load_balancer_arn(arn)
                .send()
        })
        .await?;
        Ok(out
            .attributes()
            .iter()
            .map(|a| (s(a.key()), s(a.value())))
            .collect())
    }

    async fn modify_load_balancer_attributes(
        &self,
        arn: &str,
        attrs: &Attributes,
    ) -> Result<Attributes> {
        let list: Vec<et::LoadBalancerAttribute> = attrs
            .iter()
            .map(|(k, v)| et::LoadBalancerAttribute::builder().key(k).value(v).build())
            .collect();
        let out = send(&self.caller, SVC, "ModifyLoadBalancerAttributes", || {
            self.client
                .modify_load_balancer_attributes()
                .load_balancer_arn(arn)
                .set_attributes(Some(list.clone()))
                .send()
        })
        .await?;
        Ok(out
            .attributes()
            .iter()
            .map(|a| (s(a.key()), s(a.value())))
            .collect())
    }

    async fn modify_ip_pools(&self, arn: &str, ipv4_ipam_pool_id: Option<&str>) -> Result<()> {
        send(&self.caller, SVC, "ModifyIpPools", || {
            let b = self.client.modify_ip_pools().load_balancer_arn(arn);
            match ipv4_ipam_pool_id {
                Some(id) => b.ipam_pools(et::IpamPools::builder().ipv4_ipam_pool_id(id).build()),
                None => b.remove_ipam_pools(et::RemoveIpamPoolEnum::Ipv4),
            }
            .send()
        })
        .await?;
        Ok(())
    }

    async fn set_security_groups(
        &self,
        arn: &str,
        security_groups: &[String],
        enforce_private_link: Option<&str>,
    ) -> Result<()> {
        send(&self.caller, SVC, "SetSecurityGroups", || {
            self.client
                .set_security_groups()
                .load_balancer_arn(arn)
                .set_security_groups(Some(security_groups.to_vec()))
                .set_enforce_security_group_inbound_rules_on_private_link_traffic(
                    enforce_private_link
                        .map(et::EnforceSecurityGroupInboundRulesOnPrivateLinkTrafficEnum::from),
                )
                .send()
        })
        .await?;
        Ok(())
    }

    async fn set_subnets(
        &self,
        arn: &str,
        subnets: &[SubnetMapping],
        enable_prefix_for_ipv6_source_nat: Option<&str>,
    ) -> Result<()> {
        let mappings: Vec<et::SubnetMapping> = subnets.iter().map(mapping_to).collect();
        send(&self.caller, SVC, "SetSubnets", || {
            self.client
                .set_subnets()
                .load_balancer_arn(arn)
                .set_subnet_mappings(Some(mappings.clone()))
                .set_enable_prefix_for_ipv6_source_nat(
                    enable_prefix_for_ipv6_source_nat
                        .map(et::EnablePrefixForIpv6SourceNatEnum::from),
                )
                .send()
        })
        .await?;
        Ok(())
    }

    async fn describe_capacity_reservation(&self, arn: &str) -> Result<Option<i32>> {
        let out = send(&self.caller, SVC, "DescribeCapacityReservation", || {
            self.client
                .describe_capacity_reservation()
                .load_balancer_arn(arn)
                .send()
        })
        .await?;
        Ok(out
            .minimum_load_balancer_capacity()
            .and_then(|c| c.capacity_units()))
    }

    async fn modify_capacity_reservation(&self, arn: &str, units: Option<i32>) -> Result<()> {
        send(&self.caller, SVC, "ModifyCapacityReservation", || {
            let b = self
                .client
                .modify_capacity_reservation()
                .load_balancer_arn(arn);
            match units {
                Some(n) => b.minimum_load_balancer_capacity(
                    et::MinimumLoadBalancerCapacity::builder()
                        .capacity_units(n)
                        .build(),
                ),
                None => b.reset_capacity_reservation(true),
            }
            .send()
        })
        .await?;
        Ok(())
    }

    async fn set_ip_address_type(&self, arn: &str, ip_address_type: &str) -> Result<()> {
        send(&self.caller, SVC, "SetIpAddressType", || {
            self.client
                .set_ip_address_type()
                .load_balancer_arn(arn)
                .ip_address_type(et::IpAddressType::from(ip_address_type))
                .send()
        })
        .await?;
        Ok(())
    }

    async fn describe_target_groups(&self, q: &TargetGroupQuery) -> Result<Vec<TargetGroup>> {
        all_pages(|marker| async move {
            let page = send(&self.caller, SVC, "DescribeTargetGroups", || {
                self.client
                    .describe_target_groups()
                    .set_target_group_arns(non_empty(&q.arns))
                    .set_names(non_empty(&q.names))
                    .set_load_balancer_arn(q.load_balancer_arn.clone())
                    .set_marker(marker.clone())
                    .send()
            })
            .await?;
            let items = page.target_groups().iter().map(tg_from).collect();
            Ok((items, page.next_marker().map(String::from)))
        })
        .await
    }

    async fn create_target_group(
        &self,
        tg: NewTargetGroup<'_>,
        vpc_id: &str,
    ) -> Result<TargetGroup> {
        let input = requests::create_target_group(tg, vpc_id)?;
        let out = send(&self.caller, SVC, "CreateTargetGroup", || {
            input.clone().send_with(&self.client)
        })
        .await?;
        Ok(out.target_groups().first().map(tg_from).unwrap_or_default())
    }

    async fn modify_target_group(
        &self,
        arn: &str,
        hc: &crate::model::HealthCheck,
    ) -> Result<TargetGroup> {
        let input = requests::modify_target_group(arn, hc)?;
        let out = send(&self.caller, SVC, "ModifyTargetGroup", || {
            input.clone().send_with(&self.client)
        })
        .await?;
        Ok(out.target_groups().first().map(tg_from).unwrap_or_default())
    }

    async fn delete_target_group(&self, arn: &str) -> Result<()> {
        send(&self.caller, SVC, "DeleteTargetGroup", || {
            self.client
                .delete_target_group()
                .target_group_arn(arn)
                .send()
        })
        .await?;
        Ok(())
    }

    async fn describe_target_group_attributes(&self, arn: &str) -> Result<Attributes> {
        let out = send(&self.caller, SVC, "DescribeTargetGroupAttributes", || {
            self.client
                .describe_target_group_attributes()
                .target_group_arn(arn)
                .send()
        })
        .await?;
        Ok(out
            .attributes()
            .iter()
            .map(|a| (s(a.key()), s(a.value())))
            .collect())
    }

    async fn modify_target_group_attributes(
        &self,
        arn: &str,
        attrs: &Attributes,
    ) -> Result<Attributes> {
        let list: Vec<et::TargetGroupAttribute> = attrs
            .iter()
            .map(|(k, v)| et::TargetGroupAttribute::builder().key(k).value(v).build())
            .collect();
        let out = send(&self.caller, SVC, "ModifyTargetGroupAttributes", || {
            self.client
                .modify_target_group_attributes()
                .target_group_arn(arn)
                .set_attributes(Some(list.clone()))
                .send()
        })
        .await?;
        Ok(out
            .attributes()
            .iter()
            .map(|a| (s(a.key()), s(a.value())))
            .collect())
    }

    async fn register_targets(&self, tg_arn: &str, targets: &[TargetDescription]) -> Result<()> {
        for chunk in targets.chunks(TARGETS_PER_CALL) {
            let list: Vec<et::TargetDescription> = chunk.iter().map(target_to).collect();
            send(&self.caller, SVC, "RegisterTargets", || {
                self.client
                    .register_targets()
                    .target_group_arn(tg_arn)
                    .set_targets(Some(list.clone()))
                    .send()
            })
            .await?;
        }
        Ok(())
    }

    async fn deregister_targets(&self, tg_arn: &str, targets: &[TargetDescription]) -> Result<()> {
        for chunk in targets.chunks(TARGETS_PER_CALL) {
            let list: Vec<et::TargetDescription> = chunk.iter().map(target_to).collect();
            send(&self.caller, SVC, "DeregisterTargets", || {
                self.client
                    .deregister_targets()
                    .target_group_arn(tg_arn)
                    .set_targets(Some(list.clone()))
                    .send()
            })
            .await?;
        }
        Ok(())
    }

    async fn describe_target_health(
        &self,
        tg_arn: &str,
        targets: &[TargetDescription],
    ) -> Result<Vec<TargetHealthDescription>> {
        let list: Vec<et::TargetDescription> = targets.iter().map(target_to).collect();
        let out = send(&self.caller, SVC, "DescribeTargetHealth", || {
            self.client
                .describe_target_health()
                .target_group_arn(tg_arn)
                .set_targets(non_empty(&list))
                .send()
        })
        .await?;
        Ok(out
            .target_health_descriptions()
            .iter()
            .map(health_from)
            .collect())
    }

    async fn describe_listeners(&self, lb_arn: &str) -> Result<Vec<Listener>> {
        all_pages(|marker| async move {
            let page = send(&self.caller, SVC, "DescribeListeners", || {
                self.client
                    .describe_listeners()
                    .load_balancer_arn(lb_arn)
                    .set_marker(marker.clone())
                    .send()
            })
            .await?;
            let items = page.listeners().iter().map(listener_from).collect();
            Ok((items, page.next_marker().map(String::from)))
        })
        .await
    }

    async fn create_listener(&self, listener: &model::Listener) -> Result<Listener> {
        let input = requests::create_listener(listener)?;
        let out = send(&self.caller, SVC, "CreateListener", || {
            input.clone().send_with(&self.client)
        })
        .await?;
        Ok(out
            .listeners()
            .first()
            .map(listener_from)
            .unwrap_or_default())
    }

    async fn modify_listener(&self, arn: &str, listener: &model::Listener) -> Result<Listener> {
        let input = requests::modify_listener(arn, listener)?;
        let out = send(&self.caller, SVC, "ModifyListener", || {
            input.clone().send_with(&self.client)
        })
        .await?;
        Ok(out
            .listeners()
            .first()
            .map(listener_from)
            .unwrap_or_default())
    }

    async fn describe_trust_stores(&self, names: &[String]) -> Result<Vec<TrustStore>> {
        let out = send(&self.caller, SVC, "DescribeTrustStores", || {
            self.client
                .describe_trust_stores()
                .set_names(Some(names.to_vec()))
                .send()
        })
        .await?;
        Ok(out
            .trust_stores()
            .iter()
            .map(|t| TrustStore {
                name: s(t.name()),
                arn: s(t.trust_store_arn()),
            })
            .collect())
    }

    async fn delete_listener(&self, arn: &str) -> Result<()> {
        send(&self.caller, SVC, "DeleteListener", || {
            self.client.delete_listener().listener_arn(arn).send()
        })
        .await?;
        Ok(())
    }

    async fn describe_listener_certificates(&self, arn: &str) -> Result<Vec<ListenerCertificate>> {
        all_pages(|marker| async move {
            let page = send(&self.caller, SVC, "DescribeListenerCertificates", || {
                self.client
                    .describe_listener_certificates()
                    .listener_arn(arn)
                    .set_marker(marker.clone())
                    .send()
            })
            .await?;
            let items = page
                .certificates()
                .iter()
                .map(|c| ListenerCertificate {
                    arn: s(c.certificate_arn()),
                    is_default: c.is_default().unwrap_or(false),
                })
                .collect();
            Ok((items, page.next_marker().map(String::from)))
        })
        .await
    }

    async fn add_listener_certificates(&self, arn: &str, cert_arns: &[String]) -> Result<()> {
        send(&self.caller, SVC, "AddListenerCertificates", || {
            self.client
                .add_listener_certificates()
                .listener_arn(arn)
                .set_certificates(certs_to(cert_arns))
                .send()
        })
        .await?;
        Ok(())
    }

    async fn remove_listener_certificates(&self, arn: &str, cert_arns: &[String]) -> Result<()> {
        send(&self.caller, SVC, "RemoveListenerCertificates", || {
            self.client
                .remove_listener_certificates()
                .listener_arn(arn)
                .set_certificates(certs_to(cert_arns))
                .send()
        })
        .await?;
        Ok(())
    }

    async fn describe_listener_attributes(&self, arn: &str) -> Result<Attributes> {
        let out = send(&self.caller, SVC, "DescribeListenerAttributes", || {
            self.client
                .describe_listener_attributes()
                .listener_arn(arn)
                .send()
        })
        .await?;
        Ok(out
            .attributes()
            .iter()
            .map(|a| (s(a.key()), s(a.value())))
            .collect())
    }

    async fn modify_listener_attributes(
        &self,
        arn: &str,
        attrs: &Attributes,
    ) -> Result<Attributes> {
        let list: Vec<et::ListenerAttribute> = attrs
            .iter()
            .map(|(k, v)| et::ListenerAttribute::builder().key(k).value(v).build())
            .collect();
        let out = send(&self.caller, SVC, "ModifyListenerAttributes", || {
            self.client
                .modify_listener_attributes()
                .listener_arn(arn)
                .set_attributes(Some(list.clone()))
                .send()
        })
        .await?;
        Ok(out
            .attributes()
            .iter()
            .map(|a| (s(a.key()), s(a.value())))
            .collect())
    }

    async fn describe_rules(&self, listener_arn: &str) -> Result<Vec<Rule>> {
        all_pages(|marker| async move {
            let page = send(&self.caller, SVC, "DescribeRules", || {
                self.client
                    .describe_rules()
                    .listener_arn(listener_arn)
                    .set_marker(marker.clone())
                    .send()
            })
            .await?;
            let items = page.rules().iter().map(rule_from).collect();
            Ok((items, page.next_marker().map(String::from)))
        })
        .await
    }

    async fn create_rule(&self, rule: &model::ListenerRule) -> Result<Rule> {
        let input = requests::create_rule(rule)?;
        let out = send(&self.caller, SVC, "CreateRule", || {
            input.clone().send_with(&self.client)
        })
        .await?;
        Ok(out.rules().first().map(rule_from).unwrap_or_default())
    }

    async fn modify_rule(&self, arn: &str, rule: &model::ListenerRule) -> Result<Rule> {
        let input = requests::modify_rule(arn, rule)?;
        let out = send(&self.caller, SVC, "ModifyRule", || {
            input.clone().send_with(&self.client)
        })
        .await?;
        Ok(out.rules().first().map(rule_from).unwrap_or_default())
    }

    async fn delete_rule(&self, arn: &str) -> Result<()> {
        send(&self.caller, SVC, "DeleteRule", || {
            self.client.delete_rule().rule_arn(arn).send()
        })
        .await?;
        Ok(())
    }

    async fn set_rule_priorities(&self, priorities: &[(String, u32)]) -> Result<()> {
        let pairs: Vec<et::RulePriorityPair> = priorities
            .iter()
            .map(|(arn, p)| {
                et::RulePriorityPair::builder()
                    .rule_arn(arn)
                    .priority(*p as i32)
                    .build()
            })
            .collect();
        send(&self.caller, SVC, "SetRulePriorities", || {
            self.client
                .set_rule_priorities()
                .set_rule_priorities(Some(pairs.clone()))
                .send()
        })
        .await?;
        Ok(())
    }

    async fn describe_tags(&self, arns: &[String]) -> Result<BTreeMap<String, Tags>> {
        let mut out = BTreeMap::new();
        for chunk in arns.chunks(TAG_ARNS_PER_CALL) {
            let page = send(&self.caller, SVC, "DescribeTags", || {
                self.client
                    .describe_tags()
                    .set_resource_arns(Some(chunk.to_vec()))
                    .send()
            })
            .await?;
            for d in page.tag_descriptions() {
                let tags = d
                    .tags()
                    .iter()
                    .map(|t| (s(t.key()), s(t.value())))
                    .collect();
                out.insert(s(d.resource_arn()), tags);
            }
        }
        Ok(out)
    }

    async fn add_tags(&self, arns: &[String], tags: &Tags) -> Result<()> {
        send(&self.caller, SVC, "AddTags", || {
            self.client
                .add_tags()
                .set_resource_arns(Some(arns.to_vec()))
                .set_tags(tags_to(tags))
                .send()
        })
        .await?;
        Ok(())
    }

    async fn remove_tags(&self, arns: &[String], keys: &[String]) -> Result<()> {
        send(&self.caller, SVC, "RemoveTags", || {
            self.client
                .remove_tags()
                .set_resource_arns(Some(arns.to_vec()))
                .set_tag_keys(Some(keys.to_vec()))
                .send()
        })
        .await?;
        Ok(())
    }
}

// ------------------------------------------------------------------ conversions
