//! `ElbV2` over aws-sdk-elasticloadbalancingv2: requests, pagination, chunking, and the
//! conversions between SDK types and ours.

use std::collections::BTreeMap;

use async_trait::async_trait;
use aws_sdk_elasticloadbalancingv2::types as et;

use super::error::Result;
use super::sdk::{all_pages, non_empty, os, s, send, SdkElbV2};
use super::types::*;
use super::{ElbV2, TAG_ARNS_PER_CALL, TARGETS_PER_CALL};

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

    async fn create_load_balancer(&self, req: &CreateLoadBalancer) -> Result<LoadBalancer> {
        let mappings: Vec<et::SubnetMapping> = req.subnet_mappings.iter().map(mapping_to).collect();
        let out = send(&self.caller, SVC, "CreateLoadBalancer", || {
            let mut b = self
                .client
                .create_load_balancer()
                .name(&req.name)
                .set_subnet_mappings(non_empty(&mappings))
                .set_security_groups(non_empty(&req.security_groups))
                .set_tags(tags_to(&req.tags));
            if !req.scheme.is_empty() {
                b = b.scheme(et::LoadBalancerSchemeEnum::from(req.scheme.as_str()));
            }
            if !req.lb_type.is_empty() {
                b = b.r#type(et::LoadBalancerTypeEnum::from(req.lb_type.as_str()));
            }
            if !req.ip_address_type.is_empty() {
                b = b.ip_address_type(et::IpAddressType::from(req.ip_address_type.as_str()));
            }
            b.send()
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

    async fn set_security_groups(&self, arn: &str, security_groups: &[String]) -> Result<()> {
        send(&self.caller, SVC, "SetSecurityGroups", || {
            self.client
                .set_security_groups()
                .load_balancer_arn(arn)
                .set_security_groups(Some(security_groups.to_vec()))
                .send()
        })
        .await?;
        Ok(())
    }

    async fn set_subnets(&self, arn: &str, subnets: &[SubnetMapping]) -> Result<()> {
        let mappings: Vec<et::SubnetMapping> = subnets.iter().map(mapping_to).collect();
        send(&self.caller, SVC, "SetSubnets", || {
            self.client
                .set_subnets()
                .load_balancer_arn(arn)
                .set_subnet_mappings(Some(mappings.clone()))
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

    async fn create_target_group(&self, req: &CreateTargetGroup) -> Result<TargetGroup> {
        let hc = &req.health_check;
        let out = send(&self.caller, SVC, "CreateTargetGroup", || {
            let mut b = self
                .client
                .create_target_group()
                .name(&req.name)
                .set_protocol(req.protocol.as_deref().map(et::ProtocolEnum::from))
                .set_protocol_version(req.protocol_version.clone())
                .set_port(req.port.map(i32::from))
                .set_vpc_id(req.vpc_id.clone())
                .set_ip_address_type(
                    req.ip_address_type
                        .as_deref()
                        .map(et::TargetGroupIpAddressTypeEnum::from),
                )
                .set_health_check_enabled(hc.enabled)
                .set_health_check_protocol(hc.protocol.as_deref().map(et::ProtocolEnum::from))
                .set_health_check_port(hc.port.clone())
                .set_health_check_path(hc.path.clone())
                .set_health_check_interval_seconds(hc.interval_seconds)
                .set_health_check_timeout_seconds(hc.timeout_seconds)
                .set_healthy_threshold_count(hc.healthy_threshold)
                .set_unhealthy_threshold_count(hc.unhealthy_threshold)
                .set_matcher(matcher_to(hc))
                .set_tags(tags_to(&req.tags));
            if !req.target_type.is_empty() {
                b = b.target_type(et::TargetTypeEnum::from(req.target_type.as_str()));
            }
            b.send()
        })
        .await?;
        Ok(out.target_groups().first().map(tg_from).unwrap_or_default())
    }

    async fn modify_target_group(&self, arn: &str, hc: &HealthCheck) -> Result<TargetGroup> {
        let out = send(&self.caller, SVC, "ModifyTargetGroup", || {
            self.client
                .modify_target_group()
                .target_group_arn(arn)
                .set_health_check_enabled(hc.enabled)
                .set_health_check_protocol(hc.protocol.as_deref().map(et::ProtocolEnum::from))
                .set_health_check_port(hc.port.clone())
                .set_health_check_path(hc.path.clone())
                .set_health_check_interval_seconds(hc.interval_seconds)
                .set_health_check_timeout_seconds(hc.timeout_seconds)
                .set_healthy_threshold_count(hc.healthy_threshold)
                .set_unhealthy_threshold_count(hc.unhealthy_threshold)
                .set_matcher(matcher_to(hc))
                .send()
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

    async fn create_listener(&self, lb_arn: &str, spec: &ListenerSpec) -> Result<Listener> {
        let out = send(&self.caller, SVC, "CreateListener", || {
            self.client
                .create_listener()
                .load_balancer_arn(lb_arn)
                .port(i32::from(spec.port))
                .protocol(et::ProtocolEnum::from(spec.protocol.as_str()))
                .set_ssl_policy(spec.ssl_policy.clone())
                .set_certificates(certs_to(&spec.certificates))
                .set_alpn_policy(non_empty(&spec.alpn_policy))
                .set_default_actions(Some(actions_to(&spec.default_actions)))
                .set_tags(tags_to(&spec.tags))
                .send()
        })
        .await?;
        Ok(out
            .listeners()
            .first()
            .map(listener_from)
            .unwrap_or_default())
    }

    async fn modify_listener(&self, arn: &str, spec: &ListenerSpec) -> Result<Listener> {
        let out = send(&self.caller, SVC, "ModifyListener", || {
            self.client
                .modify_listener()
                .listener_arn(arn)
                .port(i32::from(spec.port))
                .protocol(et::ProtocolEnum::from(spec.protocol.as_str()))
                .set_ssl_policy(spec.ssl_policy.clone())
                .set_certificates(certs_to(&spec.certificates))
                .set_alpn_policy(non_empty(&spec.alpn_policy))
                .set_default_actions(Some(actions_to(&spec.default_actions)))
                .send()
        })
        .await?;
        Ok(out
            .listeners()
            .first()
            .map(listener_from)
            .unwrap_or_default())
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

    async fn create_rule(&self, listener_arn: &str, spec: &RuleSpec) -> Result<Rule> {
        let out = send(&self.caller, SVC, "CreateRule", || {
            self.client
                .create_rule()
                .listener_arn(listener_arn)
                .priority(spec.priority as i32)
                .set_conditions(Some(spec.conditions.iter().map(cond_to).collect()))
                .set_actions(Some(actions_to(&spec.actions)))
                .set_tags(tags_to(&spec.tags))
                .send()
        })
        .await?;
        Ok(out.rules().first().map(rule_from).unwrap_or_default())
    }

    async fn modify_rule(
        &self,
        arn: &str,
        conditions: &[RuleCondition],
        actions: &[Action],
    ) -> Result<Rule> {
        let out = send(&self.caller, SVC, "ModifyRule", || {
            self.client
                .modify_rule()
                .rule_arn(arn)
                .set_conditions(Some(conditions.iter().map(cond_to).collect()))
                .set_actions(Some(actions_to(actions)))
                .send()
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

fn tags_to(t: &Tags) -> Option<Vec<et::Tag>> {
    if t.is_empty() {
        return None;
    }
    Some(
        t.iter()
            .map(|(k, v)| et::Tag::builder().key(k).value(v).build())
            .collect(),
    )
}

fn certs_to(arns: &[String]) -> Option<Vec<et::Certificate>> {
    if arns.is_empty() {
        return None;
    }
    Some(
        arns.iter()
            .map(|a| et::Certificate::builder().certificate_arn(a).build())
            .collect(),
    )
}

fn mapping_to(m: &SubnetMapping) -> et::SubnetMapping {
    et::SubnetMapping::builder()
        .subnet_id(&m.subnet_id)
        .set_allocation_id(m.allocation_id.clone())
        .set_private_ipv4_address(m.private_ipv4_address.clone())
        .set_ipv6_address(m.ipv6_address.clone())
        .build()
}

fn target_to(t: &TargetDescription) -> et::TargetDescription {
    et::TargetDescription::builder()
        .id(&t.id)
        .set_port(t.port.map(i32::from))
        .set_availability_zone(t.availability_zone.clone())
        .build()
}

fn matcher_to(hc: &HealthCheck) -> Option<et::Matcher> {
    if hc.matcher_http_code.is_none() && hc.matcher_grpc_code.is_none() {
        return None;
    }
    Some(
        et::Matcher::builder()
            .set_http_code(hc.matcher_http_code.clone())
            .set_grpc_code(hc.matcher_grpc_code.clone())
            .build(),
    )
}

fn lb_from(l: &et::LoadBalancer) -> LoadBalancer {
    LoadBalancer {
        arn: s(l.load_balancer_arn()),
        name: s(l.load_balancer_name()),
        dns_name: s(l.dns_name()),
        canonical_hosted_zone_id: s(l.canonical_hosted_zone_id()),
        scheme: s(l.scheme().map(|v| v.as_str())),
        lb_type: s(l.r#type().map(|v| v.as_str())),
        ip_address_type: s(l.ip_address_type().map(|v| v.as_str())),
        vpc_id: s(l.vpc_id()),
        state: s(l.state().and_then(|st| st.code()).map(|v| v.as_str())),
        security_groups: l.security_groups().to_vec(),
        availability_zones: l
            .availability_zones()
            .iter()
            .map(|z| LbZone {
                zone_name: s(z.zone_name()),
                subnet_id: s(z.subnet_id()),
            })
            .collect(),
    }
}

fn tg_from(t: &et::TargetGroup) -> TargetGroup {
    TargetGroup {
        arn: s(t.target_group_arn()),
        name: s(t.target_group_name()),
        protocol: t.protocol().map(|p| p.as_str().to_string()),
        protocol_version: os(t.protocol_version()),
        port: t.port().and_then(|p| u16::try_from(p).ok()),
        vpc_id: os(t.vpc_id()),
        target_type: s(t.target_type().map(|v| v.as_str())),
        ip_address_type: t.ip_address_type().map(|v| v.as_str().to_string()),
        health_check: HealthCheck {
            enabled: t.health_check_enabled(),
            protocol: t.health_check_protocol().map(|p| p.as_str().to_string()),
            port: os(t.health_check_port()),
            path: os(t.health_check_path()),
            interval_seconds: t.health_check_interval_seconds(),
            timeout_seconds: t.health_check_timeout_seconds(),
            healthy_threshold: t.healthy_threshold_count(),
            unhealthy_threshold: t.unhealthy_threshold_count(),
            matcher_http_code: os(t.matcher().and_then(|m| m.http_code())),
            matcher_grpc_code: os(t.matcher().and_then(|m| m.grpc_code())),
        },
        load_balancer_arns: t.load_balancer_arns().to_vec(),
    }
}

fn health_from(h: &et::TargetHealthDescription) -> TargetHealthDescription {
    let t = h.target();
    let th = h.target_health();
    TargetHealthDescription {
        target: TargetDescription {
            id: s(t.and_then(|t| t.id())),
            port: t.and_then(|t| t.port()).and_then(|p| u16::try_from(p).ok()),
            availability_zone: os(t.and_then(|t| t.availability_zone())),
        },
        health_check_port: os(h.health_check_port()),
        health: TargetHealth {
            state: th
                .and_then(|x| x.state())
                .and_then(|st| TargetHealthState::parse(st.as_str()))
                .unwrap_or(TargetHealthState::Unavailable),
            reason: th.and_then(|x| x.reason()).map(|r| r.as_str().to_string()),
            description: os(th.and_then(|x| x.description())),
        },
    }
}

fn listener_from(l: &et::Listener) -> Listener {
    Listener {
        arn: s(l.listener_arn()),
        load_balancer_arn: s(l.load_balancer_arn()),
        port: l
            .port()
            .and_then(|p| u16::try_from(p).ok())
            .unwrap_or_default(),
        protocol: s(l.protocol().map(|p| p.as_str())),
        ssl_policy: os(l.ssl_policy()),
        certificates: l
            .certificates()
            .iter()
            .filter_map(|c| os(c.certificate_arn()))
            .collect(),
        alpn_policy: l.alpn_policy().to_vec(),
        default_actions: actions_from(l.default_actions()),
    }
}

fn rule_from(r: &et::Rule) -> Rule {
    Rule {
        arn: s(r.rule_arn()),
        priority: s(r.priority()),
        is_default: r.is_default().unwrap_or(false),
        conditions: r.conditions().iter().filter_map(cond_from).collect(),
        actions: actions_from(r.actions()),
    }
}

fn actions_to(actions: &[Action]) -> Vec<et::Action> {
    actions
        .iter()
        .enumerate()
        .map(|(i, a)| action_to(a, i as i32 + 1))
        .collect()
}

fn action_to(a: &Action, order: i32) -> et::Action {
    let b = et::Action::builder().order(order);
    match a {
        Action::Forward(f) => {
            let tgs = f
                .target_groups
                .iter()
                .map(|t| {
                    et::TargetGroupTuple::builder()
                        .target_group_arn(&t.arn)
                        .set_weight(t.weight)
                        .build()
                })
                .collect();
            let stick = f.stickiness.as_ref().map(|st| {
                et::TargetGroupStickinessConfig::builder()
                    .enabled(st.enabled)
                    .set_duration_seconds(st.duration_seconds)
                    .build()
            });
            b.r#type(et::ActionTypeEnum::Forward)
                .forward_config(
                    et::ForwardActionConfig::builder()
                        .set_target_groups(Some(tgs))
                        .set_target_group_stickiness_config(stick)
                        .build(),
                )
                .build()
        }
        Action::Redirect(r) => b
            .r#type(et::ActionTypeEnum::Redirect)
            .redirect_config(
                et::RedirectActionConfig::builder()
                    .set_protocol(r.protocol.clone())
                    .set_port(r.port.clone())
                    .set_host(r.host.clone())
                    .set_path(r.path.clone())
                    .set_query(r.query.clone())
                    .status_code(et::RedirectActionStatusCodeEnum::from(
                        r.status_code.as_str(),
                    ))
                    .build(),
            )
            .build(),
        Action::FixedResponse(f) => b
            .r#type(et::ActionTypeEnum::FixedResponse)
            .fixed_response_config(
                et::FixedResponseActionConfig::builder()
                    .status_code(&f.status_code)
                    .set_content_type(f.content_type.clone())
                    .set_message_body(f.message_body.clone())
                    .build(),
            )
            .build(),
        Action::AuthenticateOidc(o) => b
            .r#type(et::ActionTypeEnum::AuthenticateOidc)
            .authenticate_oidc_config(
                et::AuthenticateOidcActionConfig::builder()
                    .issuer(&o.issuer)
                    .authorization_endpoint(&o.authorization_endpoint)
                    .token_endpoint(&o.token_endpoint)
                    .user_info_endpoint(&o.user_info_endpoint)
                    .client_id(&o.client_id)
                    .set_client_secret(o.client_secret.clone())
                    .set_session_cookie_name(o.session_cookie_name.clone())
                    .set_scope(o.scope.clone())
                    .set_session_timeout(o.session_timeout)
                    .set_authentication_request_extra_params(non_empty_map(
                        &o.authentication_request_extra_params,
                    ))
                    .set_on_unauthenticated_request(
                        o.on_unauthenticated_request
                            .as_deref()
                            .map(et::AuthenticateOidcActionConditionalBehaviorEnum::from),
                    )
                    .set_use_existing_client_secret(o.use_existing_client_secret)
                    .build(),
            )
            .build(),
        Action::AuthenticateCognito(c) => b
            .r#type(et::ActionTypeEnum::AuthenticateCognito)
            .authenticate_cognito_config(
                et::AuthenticateCognitoActionConfig::builder()
                    .user_pool_arn(&c.user_pool_arn)
                    .user_pool_client_id(&c.user_pool_client_id)
                    .user_pool_domain(&c.user_pool_domain)
                    .set_session_cookie_name(c.session_cookie_name.clone())
                    .set_scope(c.scope.clone())
                    .set_session_timeout(c.session_timeout)
                    .set_authentication_request_extra_params(non_empty_map(
                        &c.authentication_request_extra_params,
                    ))
                    .set_on_unauthenticated_request(
                        c.on_unauthenticated_request
                            .as_deref()
                            .map(et::AuthenticateCognitoActionConditionalBehaviorEnum::from),
                    )
                    .build(),
            )
            .build(),
    }
}

fn non_empty_map(
    m: &BTreeMap<String, String>,
) -> Option<std::collections::HashMap<String, String>> {
    if m.is_empty() {
        None
    } else {
        Some(m.iter().map(|(k, v)| (k.clone(), v.clone())).collect())
    }
}

fn actions_from(list: &[et::Action]) -> Vec<Action> {
    let mut sorted: Vec<&et::Action> = list.iter().collect();
    sorted.sort_by_key(|a| a.order().unwrap_or(i32::MAX));
    sorted.into_iter().filter_map(action_from).collect()
}

fn sorted_map(m: Option<&std::collections::HashMap<String, String>>) -> BTreeMap<String, String> {
    m.map(|m| m.iter().map(|(k, v)| (k.clone(), v.clone())).collect())
        .unwrap_or_default()
}

fn action_from(a: &et::Action) -> Option<Action> {
    Some(match a.r#type()? {
        et::ActionTypeEnum::Forward => {
            let f = a.forward_config();
            let mut tgs: Vec<WeightedTargetGroup> = f
                .map(|f| {
                    f.target_groups()
                        .iter()
                        .map(|t| WeightedTargetGroup {
                            arn: s(t.target_group_arn()),
                            weight: t.weight(),
                        })
                        .collect()
                })
                .unwrap_or_default();
            if tgs.is_empty() {
                tgs.push(WeightedTargetGroup {
                    arn: s(a.target_group_arn()),
                    weight: None,
                });
            }
            let stickiness = f
                .and_then(|f| f.target_group_stickiness_config())
                .map(|st| Stickiness {
                    enabled: st.enabled().unwrap_or(false),
                    duration_seconds: st.duration_seconds(),
                });
            Action::Forward(ForwardConfig {
                target_groups: tgs,
                stickiness,
            })
        }
        et::ActionTypeEnum::Redirect => {
            let r = a.redirect_config()?;
            Action::Redirect(RedirectConfig {
                protocol: os(r.protocol()),
                port: os(r.port()),
                host: os(r.host()),
                path: os(r.path()),
                query: os(r.query()),
                status_code: s(r.status_code().map(|c| c.as_str())),
            })
        }
        et::ActionTypeEnum::FixedResponse => {
            let f = a.fixed_response_config()?;
            Action::FixedResponse(FixedResponseConfig {
                status_code: s(f.status_code()),
                content_type: os(f.content_type()),
                message_body: os(f.message_body()),
            })
        }
        et::ActionTypeEnum::AuthenticateOidc => {
            let o = a.authenticate_oidc_config()?;
            Action::AuthenticateOidc(AuthenticateOidcConfig {
                issuer: s(o.issuer()),
                authorization_endpoint: s(o.authorization_endpoint()),
                token_endpoint: s(o.token_endpoint()),
                user_info_endpoint: s(o.user_info_endpoint()),
                client_id: s(o.client_id()),
                client_secret: os(o.client_secret()),
                session_cookie_name: os(o.session_cookie_name()),
                scope: os(o.scope()),
                session_timeout: o.session_timeout(),
                authentication_request_extra_params: sorted_map(
                    o.authentication_request_extra_params(),
                ),
                on_unauthenticated_request: o
                    .on_unauthenticated_request()
                    .map(|v| v.as_str().to_string()),
                use_existing_client_secret: o.use_existing_client_secret(),
            })
        }
        et::ActionTypeEnum::AuthenticateCognito => {
            let c = a.authenticate_cognito_config()?;
            Action::AuthenticateCognito(AuthenticateCognitoConfig {
                user_pool_arn: s(c.user_pool_arn()),
                user_pool_client_id: s(c.user_pool_client_id()),
                user_pool_domain: s(c.user_pool_domain()),
                session_cookie_name: os(c.session_cookie_name()),
                scope: os(c.scope()),
                session_timeout: c.session_timeout(),
                authentication_request_extra_params: sorted_map(
                    c.authentication_request_extra_params(),
                ),
                on_unauthenticated_request: c
                    .on_unauthenticated_request()
                    .map(|v| v.as_str().to_string()),
            })
        }
        _ => return None,
    })
}

fn cond_to(c: &RuleCondition) -> et::RuleCondition {
    let b = et::RuleCondition::builder().field(c.field());
    match c {
        RuleCondition::HostHeader {
            values,
            regex_values,
        } => b
            .host_header_config(
                et::HostHeaderConditionConfig::builder()
                    .set_values(non_empty(values))
                    .set_regex_values(non_empty(regex_values))
                    .build(),
            )
            .build(),
        RuleCondition::PathPattern {
            values,
            regex_values,
        } => b
            .path_pattern_config(
                et::PathPatternConditionConfig::builder()
                    .set_values(non_empty(values))
                    .set_regex_values(non_empty(regex_values))
                    .build(),
            )
            .build(),
        RuleCondition::HttpHeader {
            name,
            values,
            regex_values,
        } => b
            .http_header_config(
                et::HttpHeaderConditionConfig::builder()
                    .http_header_name(name)
                    .set_values(non_empty(values))
                    .set_regex_values(non_empty(regex_values))
                    .build(),
            )
            .build(),
        RuleCondition::HttpRequestMethod { values } => b
            .http_request_method_config(
                et::HttpRequestMethodConditionConfig::builder()
                    .set_values(Some(values.clone()))
                    .build(),
            )
            .build(),
        RuleCondition::QueryString { values } => b
            .query_string_config(
                et::QueryStringConditionConfig::builder()
                    .set_values(Some(
                        values
                            .iter()
                            .map(|p| {
                                et::QueryStringKeyValuePair::builder()
                                    .set_key(p.key.clone())
                                    .value(&p.value)
                                    .build()
                            })
                            .collect(),
                    ))
                    .build(),
            )
            .build(),
        RuleCondition::SourceIp { values } => b
            .source_ip_config(
                et::SourceIpConditionConfig::builder()
                    .set_values(Some(values.clone()))
                    .build(),
            )
            .build(),
    }
}

fn cond_from(c: &et::RuleCondition) -> Option<RuleCondition> {
    // AWS fills both the legacy `Values` and the typed config; prefer the config.
    let legacy = c.values().to_vec();
    let pick = |v: &[String]| {
        if v.is_empty() {
            legacy.clone()
        } else {
            v.to_vec()
        }
    };
    Some(match c.field()? {
        "host-header" => {
            let cfg = c.host_header_config();
            RuleCondition::HostHeader {
                values: pick(cfg.map(|x| x.values()).unwrap_or_default()),
                regex_values: cfg.map(|x| x.regex_values().to_vec()).unwrap_or_default(),
            }
        }
        "path-pattern" => {
            let cfg = c.path_pattern_config();
            RuleCondition::PathPattern {
                values: pick(cfg.map(|x| x.values()).unwrap_or_default()),
                regex_values: cfg.map(|x| x.regex_values().to_vec()).unwrap_or_default(),
            }
        }
        "http-header" => {
            let cfg = c.http_header_config()?;
            RuleCondition::HttpHeader {
                name: s(cfg.http_header_name()),
                values: cfg.values().to_vec(),
                regex_values: cfg.regex_values().to_vec(),
            }
        }
        "http-request-method" => RuleCondition::HttpRequestMethod {
            values: pick(
                c.http_request_method_config()
                    .map(|x| x.values())
                    .unwrap_or_default(),
            ),
        },
        "query-string" => RuleCondition::QueryString {
            values: c
                .query_string_config()
                .map(|q| {
                    q.values()
                        .iter()
                        .map(|p| QueryStringPair {
                            key: os(p.key()),
                            value: s(p.value()),
                        })
                        .collect()
                })
                .unwrap_or_default(),
        },
        "source-ip" => RuleCondition::SourceIp {
            values: pick(c.source_ip_config().map(|x| x.values()).unwrap_or_default()),
        },
        _ => return None,
    })
}
