//! ELBv2 through the recorder: describes forwarded (placeholders answered locally), every
//! create / modify / delete / tag call recorded with its field changes.

use std::collections::BTreeMap;

use async_trait::async_trait;

use super::*;

#[async_trait]
impl ElbV2 for Recorder {
    async fn describe_load_balancers(&self, q: &LoadBalancerQuery) -> Result<Vec<LoadBalancer>> {
        let (real, fake) = split(&q.arns);
        let mut out = if q.arns.is_empty() || !real.is_empty() {
            let q = LoadBalancerQuery {
                arns: real,
                names: q.names.clone(),
            };
            self.elbv2.describe_load_balancers(&q).await?
        } else {
            vec![]
        };
        let mut s = self.seen();
        for lb in &out {
            s.lbs.insert(lb.arn.clone(), lb.clone());
        }
        out.extend(fake.iter().filter_map(|a| s.lbs.get(a).cloned()));
        Ok(out)
    }
    async fn create_load_balancer(&self, lb: &crate::model::LoadBalancer) -> Result<LoadBalancer> {
        // Refused as the AWS layer refuses it: an unfinished model value never reaches AWS.
        let mappings = lb_subnet_mappings(lb)?;
        let security_groups = lb_security_groups(lb)?;
        let arn = self.placeholder(&format!(
            "arn:aws:elasticloadbalancing:::loadbalancer/app/{}/",
            lb.name
        ));
        let subnets: Vec<&str> = mappings.iter().map(|m| m.subnet_id.as_str()).collect();
        let mut changes = created(&[("name", &lb.name), ("type", &lb.lb_type)]);
        changes.extend(created(&[
            ("scheme", &lb.scheme.as_str()),
            ("ipAddressType", &lb.ip_address_type.as_str()),
        ]));
        changes.extend(created(&[("subnets", &subnets)]));
        changes.extend(created(&[
            ("securityGroups", &security_groups),
            ("tags", &lb.tags.iter().collect::<Vec<_>>()),
        ]));
        self.elb("CreateLoadBalancer", &arn, changes);
        let described = LoadBalancer {
            arn: arn.clone(),
            name: lb.name.clone(),
            dns_name: format!("{}.pending", lb.name),
            scheme: lb.scheme.as_str().into(),
            lb_type: lb.lb_type.clone(),
            ip_address_type: lb.ip_address_type.as_str().into(),
            state: "provisioning".into(),
            security_groups,
            ..Default::default()
        };
        let mut s = self.seen();
        s.lbs.insert(arn.clone(), described.clone());
        s.tags.insert(arn, lb.tags.clone());
        Ok(described)
    }
    async fn delete_load_balancer(&self, arn: &str) -> Result<()> {
        self.elb("DeleteLoadBalancer", arn, vec![]);
        Ok(())
    }
    async fn describe_load_balancer_attributes(&self, arn: &str) -> Result<Attributes> {
        if is_placeholder(arn) {
            return Ok(self.seen().lb_attrs.get(arn).cloned().unwrap_or_default());
        }
        let a = self.elbv2.describe_load_balancer_attributes(arn).await?;
        self.seen().lb_attrs.insert(arn.to_string(), a.clone());
        Ok(a)
    }
    async fn modify_load_balancer_attributes(
        &self,
        arn: &str,
        attrs: &Attributes,
    ) -> Result<Attributes> {
        let mut s = self.seen();
        let changes = attr_changes(s.lb_attrs.get(arn), attrs);
        let all = s.lb_attrs.entry(arn.to_string()).or_default();
        all.extend(attrs.clone());
        let all = all.clone();
        drop(s);
        self.elb("ModifyLoadBalancerAttributes", arn, changes);
        Ok(all)
    }
    async fn set_security_groups(
        &self,
        arn: &str,
        security_groups: &[String],
        enforce_private_link: Option<&str>,
    ) -> Result<()> {
        let mut s = self.seen();
        let lb = s.lbs.entry(arn.to_string()).or_default();
        let mut c: Vec<Change> = change(
            "securityGroups",
            Some(show(&lb.security_groups)),
            Some(show(&security_groups)),
        )
        .into_iter()
        .collect();
        if let Some(v) = enforce_private_link {
            c.extend(change(
                "enforceSecurityGroupInboundRulesOnPrivateLinkTraffic",
                lb.enforce_private_link_inbound_rules.clone(),
                Some(v.to_string()),
            ));
            lb.enforce_private_link_inbound_rules = Some(v.to_string());
        }
        lb.security_groups = security_groups.to_vec();
        drop(s);
        self.elb("SetSecurityGroups", arn, c);
        Ok(())
    }
    async fn describe_capacity_reservation(&self, arn: &str) -> Result<Option<i32>> {
        if is_placeholder(arn) {
            return Ok(None);
        }
        self.elbv2.describe_capacity_reservation(arn).await
    }
    async fn modify_capacity_reservation(&self, arn: &str, units: Option<i32>) -> Result<()> {
        let after = units.map_or_else(|| "reset".to_string(), |n| n.to_string());
        let c = created(&[("minimumCapacityUnits", &after)]);
        self.elb("ModifyCapacityReservation", arn, c);
        Ok(())
    }
    async fn set_subnets(
        &self,
        arn: &str,
        subnets: &[SubnetMapping],
        _enable_prefix_for_ipv6_source_nat: Option<&str>,
    ) -> Result<()> {
        let before: Vec<String> = self
            .seen()
            .lbs
            .get(arn)
            .map(|l| {
                l.availability_zones
                    .iter()
                    .map(|z| z.subnet_id.clone())
                    .collect()
            })
            .unwrap_or_default();
        let after: Vec<&String> = subnets.iter().map(|m| &m.subnet_id).collect();
        let c = change("subnets", Some(show(&before)), Some(show(&after)));
        self.elb("SetSubnets", arn, c.into_iter().collect());
        Ok(())
    }
    async fn modify_ip_pools(&self, arn: &str, ipv4_ipam_pool_id: Option<&str>) -> Result<()> {
        let mut s = self.seen();
        let lb = s.lbs.entry(arn.to_string()).or_default();
        let after = ipv4_ipam_pool_id.map(str::to_string);
        let c = change(
            "ipamPools.ipv4IpamPoolId",
            lb.ipv4_ipam_pool_id.clone(),
            after.clone(),
        );
        lb.ipv4_ipam_pool_id = after;
        drop(s);
        self.elb("ModifyIpPools", arn, c.into_iter().collect());
        Ok(())
    }

    async fn set_ip_address_type(&self, arn: &str, ip_address_type: &str) -> Result<()> {
        let mut s = self.seen();
        let lb = s.lbs.entry(arn.to_string()).or_default();
        let c = change(
            "ipAddressType",
            Some(lb.ip_address_type.clone()),
            Some(ip_address_type.to_string()),
        );
        lb.ip_address_type = ip_address_type.to_string();
        drop(s);
        self.elb("SetIpAddressType", arn, c.into_iter().collect());
        Ok(())
    }

    async fn describe_target_groups(&self, q: &TargetGroupQuery) -> Result<Vec<TargetGroup>> {
        let (real, fake) = split(&q.arns);
        let lb_fake = q.load_balancer_arn.as_deref().is_some_and(is_placeholder);
        let mut out = if (q.arns.is_empty() || !real.is_empty()) && !lb_fake {
            let q = TargetGroupQuery {
                arns: real,
                ..q.clone()
            };
            self.elbv2.describe_target_groups(&q).await?
        } else {
            vec![]
        };
        let mut s = self.seen();
        for tg in &out {
            s.tgs.insert(tg.arn.clone(), tg.clone());
        }
        out.extend(fake.iter().filter_map(|a| s.tgs.get(a).cloned()));
        Ok(out)
    }
    async fn create_target_group(
        &self,
        tg: NewTargetGroup<'_>,
        vpc_id: &str,
    ) -> Result<TargetGroup> {
        self.target_group_created(tg, vpc_id)
    }
    async fn modify_target_group(
        &self,
        arn: &str,
        health_check: &crate::model::HealthCheck,
    ) -> Result<TargetGroup> {
        self.target_group_modified(arn, health_check)
    }
    async fn delete_target_group(&self, arn: &str) -> Result<()> {
        self.elb("DeleteTargetGroup", arn, vec![]);
        Ok(())
    }
    async fn describe_target_group_attributes(&self, arn: &str) -> Result<Attributes> {
        if is_placeholder(arn) {
            return Ok(self.seen().tg_attrs.get(arn).cloned().unwrap_or_default());
        }
        let a = self.elbv2.describe_target_group_attributes(arn).await?;
        self.seen().tg_attrs.insert(arn.to_string(), a.clone());
        Ok(a)
    }
    async fn modify_target_group_attributes(
        &self,
        arn: &str,
        attrs: &Attributes,
    ) -> Result<Attributes> {
        let mut s = self.seen();
        let changes = attr_changes(s.tg_attrs.get(arn), attrs);
        let all = s.tg_attrs.entry(arn.to_string()).or_default();
        all.extend(attrs.clone());
        let all = all.clone();
        drop(s);
        self.elb("ModifyTargetGroupAttributes", arn, changes);
        Ok(all)
    }
    async fn register_targets(&self, tg_arn: &str, targets: &[TargetDescription]) -> Result<()> {
        let c = created(&[("targets", &targets.to_vec())]);
        self.elb("RegisterTargets", tg_arn, c);
        Ok(())
    }
    async fn deregister_targets(&self, tg_arn: &str, targets: &[TargetDescription]) -> Result<()> {
        let c = vec![Change {
            field: "targets".into(),
            before: Some(show(&targets)),
            after: None,
        }];
        self.elb("DeregisterTargets", tg_arn, c);
        Ok(())
    }
    async fn describe_target_health(
        &self,
        tg_arn: &str,
        targets: &[TargetDescription],
    ) -> Result<Vec<TargetHealthDescription>> {
        if is_placeholder(tg_arn) {
            return Ok(vec![]);
        }
        self.elbv2.describe_target_health(tg_arn, targets).await
    }

    async fn describe_listeners(&self, lb_arn: &str) -> Result<Vec<Listener>> {
        self.listeners_described(lb_arn).await
    }
    async fn create_listener(&self, listener: &crate::model::Listener) -> Result<Listener> {
        self.listener_created(listener)
    }
    async fn describe_trust_stores(&self, names: &[String]) -> Result<Vec<TrustStore>> {
        self.elbv2.describe_trust_stores(names).await
    }
    async fn modify_listener(
        &self,
        arn: &str,
        listener: &crate::model::Listener,
    ) -> Result<Listener> {
        Ok(self.listener_modified(arn, listener))
    }
    async fn delete_listener(&self, arn: &str) -> Result<()> {
        self.elb("DeleteListener", arn, vec![]);
        Ok(())
    }
    async fn describe_listener_certificates(&self, arn: &str) -> Result<Vec<ListenerCertificate>> {
        if is_placeholder(arn) {
            return Ok(vec![]);
        }
        self.elbv2.describe_listener_certificates(arn).await
    }
    async fn add_listener_certificates(&self, arn: &str, cert_arns: &[String]) -> Result<()> {
        self.elb(
            "AddListenerCertificates",
            arn,
            created(&[("certificates", &cert_arns)]),
        );
        Ok(())
    }
    async fn remove_listener_certificates(&self, arn: &str, cert_arns: &[String]) -> Result<()> {
        let c = vec![Change {
            field: "certificates".into(),
            before: Some(show(&cert_arns)),
            after: None,
        }];
        self.elb("RemoveListenerCertificates", arn, c);
        Ok(())
    }

    async fn describe_listener_attributes(&self, arn: &str) -> Result<Attributes> {
        if is_placeholder(arn) {
            let s = self.seen();
            return Ok(s.listener_attrs.get(arn).cloned().unwrap_or_default());
        }
        let a = self.elbv2.describe_listener_attributes(arn).await?;
        self.seen()
            .listener_attrs
            .insert(arn.to_string(), a.clone());
        Ok(a)
    }
    async fn modify_listener_attributes(
        &self,
        arn: &str,
        attrs: &Attributes,
    ) -> Result<Attributes> {
        let mut s = self.seen();
        let changes = attr_changes(s.listener_attrs.get(arn), attrs);
        let all = s.listener_attrs.entry(arn.to_string()).or_default();
        all.extend(attrs.clone());
        let all = all.clone();
        drop(s);
        self.elb("ModifyListenerAttributes", arn, changes);
        Ok(all)
    }

    async fn describe_rules(&self, listener_arn: &str) -> Result<Vec<Rule>> {
        self.rules_described(listener_arn).await
    }
    async fn create_rule(&self, rule: &crate::model::ListenerRule) -> Result<Rule> {
        self.rule_created(rule)
    }
    async fn modify_rule(&self, arn: &str, rule: &crate::model::ListenerRule) -> Result<Rule> {
        Ok(self.rule_modified(arn, rule))
    }
    async fn delete_rule(&self, arn: &str) -> Result<()> {
        self.elb("DeleteRule", arn, vec![]);
        Ok(())
    }
    async fn set_rule_priorities(&self, priorities: &[(String, u32)]) -> Result<()> {
        for (arn, p) in priorities {
            let before = self.seen().rules.get(arn).map(|r| r.priority.clone());
            let c = change("priority", before, Some(p.to_string()));
            self.elb("SetRulePriorities", arn, c.into_iter().collect());
        }
        Ok(())
    }

    async fn describe_tags(&self, arns: &[String]) -> Result<BTreeMap<String, Tags>> {
        let (real, fake) = split(arns);
        let mut out = if real.is_empty() {
            BTreeMap::new()
        } else {
            self.elbv2.describe_tags(&real).await?
        };
        let mut s = self.seen();
        for (a, t) in &out {
            s.tags.insert(a.clone(), t.clone());
        }
        for a in fake {
            let t = s.tags.get(&a).cloned().unwrap_or_default();
            out.insert(a, t);
        }
        Ok(out)
    }
    async fn add_tags(&self, arns: &[String], tags: &Tags) -> Result<()> {
        for arn in arns {
            let mut s = self.seen();
            let have = s.tags.entry(arn.clone()).or_default();
            let c: Vec<Change> = tags
                .iter()
                .filter_map(|(k, v)| {
                    change(&format!("tag {k}"), have.get(k).cloned(), Some(v.clone()))
                })
                .collect();
            have.extend(tags.clone());
            drop(s);
            self.elb("AddTags", arn, c);
        }
        Ok(())
    }
    async fn remove_tags(&self, arns: &[String], keys: &[String]) -> Result<()> {
        for arn in arns {
            let mut s = self.seen();
            let have = s.tags.entry(arn.clone()).or_default();
            let c: Vec<Change> = keys
                .iter()
                .map(|k| Change {
                    field: format!("tag {k}"),
                    before: have.remove(k),
                    after: None,
                })
                .collect();
            drop(s);
            self.elb("RemoveTags", arn, c);
        }
        Ok(())
    }
}
