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
    async fn create_load_balancer(&self, req: &CreateLoadBalancer) -> Result<LoadBalancer> {
        let arn = self.placeholder(&format!(
            "arn:aws:elasticloadbalancing:::loadbalancer/app/{}/",
            req.name
        ));
        let subnets: Vec<&str> = req
            .subnet_mappings
            .iter()
            .map(|m| m.subnet_id.as_str())
            .collect();
        let mut changes = created(&[
            ("name", &req.name),
            ("type", &req.lb_type),
            ("scheme", &req.scheme),
            ("ipAddressType", &req.ip_address_type),
        ]);
        changes.extend(created(&[("subnets", &subnets)]));
        changes.extend(created(&[
            ("securityGroups", &req.security_groups),
            ("tags", &req.tags.iter().collect::<Vec<_>>()),
        ]));
        self.elb("CreateLoadBalancer", &arn, changes);
        let lb = LoadBalancer {
            arn: arn.clone(),
            name: req.name.clone(),
            dns_name: format!("{}.pending", req.name),
            scheme: req.scheme.clone(),
            lb_type: req.lb_type.clone(),
            ip_address_type: req.ip_address_type.clone(),
            state: "provisioning".into(),
            security_groups: req.security_groups.clone(),
            ..Default::default()
        };
        let mut s = self.seen();
        s.lbs.insert(arn.clone(), lb.clone());
        s.tags.insert(arn, req.tags.clone());
        Ok(lb)
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
    async fn create_target_group(&self, req: &CreateTargetGroup) -> Result<TargetGroup> {
        let arn = self.placeholder(&format!(
            "arn:aws:elasticloadbalancing:::targetgroup/{}/",
            req.name
        ));
        let mut changes = created(&[
            ("name", &Some(req.name.clone())),
            ("protocol", &req.protocol),
            ("protocolVersion", &req.protocol_version),
            ("vpcId", &req.vpc_id),
            ("ipAddressType", &req.ip_address_type),
        ]);
        changes.extend(created(&[("port", &req.port)]));
        changes.extend(created(&[("targetType", &req.target_type)]));
        changes.extend(created(&[("healthCheck", &req.health_check)]));
        changes.extend(created(&[("tags", &req.tags.iter().collect::<Vec<_>>())]));
        self.elb("CreateTargetGroup", &arn, changes);
        let tg = TargetGroup {
            arn: arn.clone(),
            name: req.name.clone(),
            protocol: req.protocol.clone(),
            protocol_version: req.protocol_version.clone(),
            port: req.port,
            vpc_id: req.vpc_id.clone(),
            target_type: req.target_type.clone(),
            ip_address_type: req.ip_address_type.clone(),
            health_check: req.health_check.clone(),
            load_balancer_arns: vec![],
        };
        let mut s = self.seen();
        s.tgs.insert(arn.clone(), tg.clone());
        s.tags.insert(arn, req.tags.clone());
        Ok(tg)
    }
    async fn modify_target_group(
        &self,
        arn: &str,
        health_check: &HealthCheck,
    ) -> Result<TargetGroup> {
        let mut s = self.seen();
        let tg = s.tgs.entry(arn.to_string()).or_default();
        let (have, want) = (&mut tg.health_check, health_check);
        let mut changes = Vec::new();
        macro_rules! field {
            ($name:literal, $f:ident) => {
                if let Some(v) = &want.$f {
                    changes.extend(change($name, have.$f.as_ref().map(show), Some(show(v))));
                    have.$f = Some(v.clone());
                }
            };
        }
        field!("healthCheckEnabled", enabled);
        field!("healthCheckProtocol", protocol);
        field!("healthCheckPort", port);
        field!("healthCheckPath", path);
        field!("healthCheckIntervalSeconds", interval_seconds);
        field!("healthCheckTimeoutSeconds", timeout_seconds);
        field!("healthyThresholdCount", healthy_threshold);
        field!("unhealthyThresholdCount", unhealthy_threshold);
        field!("matcher.httpCode", matcher_http_code);
        field!("matcher.grpcCode", matcher_grpc_code);
        let tg = tg.clone();
        drop(s);
        self.elb("ModifyTargetGroup", arn, changes);
        Ok(tg)
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
        let out = if is_placeholder(lb_arn) {
            let s = self.seen();
            s.listeners
                .values()
                .filter(|l| l.load_balancer_arn == lb_arn)
                .cloned()
                .collect()
        } else {
            self.elbv2.describe_listeners(lb_arn).await?
        };
        let mut s = self.seen();
        for l in &out {
            s.listeners.insert(l.arn.clone(), l.clone());
        }
        Ok(out)
    }
    async fn create_listener(&self, lb_arn: &str, spec: &ListenerSpec) -> Result<Listener> {
        let arn = self.placeholder(&format!(
            "arn:aws:elasticloadbalancing:::listener/app/{}/{}/",
            lb_arn.rsplit('/').nth(1).unwrap_or(""),
            spec.port
        ));
        let mut changes = created(&[("port", &spec.port)]);
        changes.extend(created(&[
            ("protocol", &Some(spec.protocol.clone())),
            ("sslPolicy", &spec.ssl_policy),
        ]));
        changes.extend(created(&[
            ("certificates", &spec.certificates),
            ("alpnPolicy", &spec.alpn_policy),
        ]));
        changes.extend(created(&[("defaultActions", &spec.default_actions)]));
        changes.extend(created(&[("loadBalancer", &lb_arn)]));
        self.elb("CreateListener", &arn, changes);
        let l = Listener {
            arn: arn.clone(),
            load_balancer_arn: lb_arn.to_string(),
            port: spec.port,
            protocol: spec.protocol.clone(),
            ssl_policy: spec.ssl_policy.clone(),
            certificates: spec.certificates.clone(),
            alpn_policy: spec.alpn_policy.clone(),
            default_actions: spec.default_actions.clone(),
            mutual_authentication: spec.mutual_authentication.clone(),
        };
        let mut s = self.seen();
        s.listeners.insert(arn.clone(), l.clone());
        s.tags.insert(arn, spec.tags.clone());
        Ok(l)
    }
    async fn describe_trust_stores(&self, names: &[String]) -> Result<Vec<TrustStore>> {
        self.elbv2.describe_trust_stores(names).await
    }
    async fn modify_listener(&self, arn: &str, spec: &ListenerSpec) -> Result<Listener> {
        let mut s = self.seen();
        let l = s.listeners.entry(arn.to_string()).or_default();
        let changes: Vec<Change> = [
            change("port", Some(show(&l.port)), Some(show(&spec.port))),
            change(
                "protocol",
                Some(l.protocol.clone()),
                Some(spec.protocol.clone()),
            ),
            change("sslPolicy", l.ssl_policy.clone(), spec.ssl_policy.clone()),
            change(
                "certificates",
                Some(show(&l.certificates)),
                Some(show(&spec.certificates)),
            ),
            change(
                "alpnPolicy",
                Some(show(&l.alpn_policy)),
                Some(show(&spec.alpn_policy)),
            ),
            change(
                "defaultActions",
                Some(show(&l.default_actions)),
                Some(show(&spec.default_actions)),
            ),
        ]
        .into_iter()
        .flatten()
        .collect();
        l.port = spec.port;
        l.protocol = spec.protocol.clone();
        l.ssl_policy = spec.ssl_policy.clone();
        l.certificates = spec.certificates.clone();
        l.alpn_policy = spec.alpn_policy.clone();
        l.default_actions = spec.default_actions.clone();
        let l = l.clone();
        drop(s);
        self.elb("ModifyListener", arn, changes);
        Ok(l)
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
        let out = if is_placeholder(listener_arn) {
            let s = self.seen();
            s.rules_of
                .get(listener_arn)
                .into_iter()
                .flatten()
                .filter_map(|a| s.rules.get(a).cloned())
                .collect()
        } else {
            self.elbv2.describe_rules(listener_arn).await?
        };
        let mut s = self.seen();
        for r in &out {
            s.rules.insert(r.arn.clone(), r.clone());
        }
        Ok(out)
    }
    async fn create_rule(&self, listener_arn: &str, spec: &RuleSpec) -> Result<Rule> {
        let arn = self.placeholder(&format!(
            "arn:aws:elasticloadbalancing:::listener-rule/{}/",
            spec.priority
        ));
        let mut changes = created(&[("listener", &listener_arn)]);
        changes.extend(created(&[("priority", &spec.priority)]));
        changes.extend(created(&[("conditions", &spec.conditions)]));
        changes.extend(created(&[("actions", &spec.actions)]));
        if !spec.transforms.is_empty() {
            changes.extend(created(&[("transforms", &spec.transforms)]));
        }
        self.elb("CreateRule", &arn, changes);
        let r = Rule {
            arn: arn.clone(),
            priority: spec.priority.to_string(),
            is_default: false,
            conditions: spec.conditions.clone(),
            actions: spec.actions.clone(),
            transforms: spec.transforms.clone(),
        };
        let mut s = self.seen();
        s.rules.insert(arn.clone(), r.clone());
        s.rules_of
            .entry(listener_arn.to_string())
            .or_default()
            .push(arn.clone());
        s.tags.insert(arn, spec.tags.clone());
        Ok(r)
    }
    async fn modify_rule(
        &self,
        arn: &str,
        conditions: &[RuleCondition],
        actions: &[Action],
        transforms: &[RuleTransform],
    ) -> Result<Rule> {
        let mut s = self.seen();
        let r = s.rules.entry(arn.to_string()).or_default();
        let changes: Vec<Change> = [
            change(
                "conditions",
                Some(show(&r.conditions)),
                Some(show(&conditions)),
            ),
            change("actions", Some(show(&r.actions)), Some(show(&actions))),
            change(
                "transforms",
                Some(show(&r.transforms)),
                Some(show(&transforms)),
            ),
        ]
        .into_iter()
        .flatten()
        .collect();
        r.conditions = conditions.to_vec();
        r.actions = actions.to_vec();
        r.transforms = transforms.to_vec();
        let r = r.clone();
        drop(s);
        self.elb("ModifyRule", arn, changes);
        Ok(r)
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
