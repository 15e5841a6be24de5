//! Target groups: found by stack tags among the VPC's target groups (the shared inventory, or
//! the tagging API under gate `EnableRGTAPI`), paired by resource id,
//! created, health check / attributes / tags reconciled, and replaced (new one created, old one
//! deleted in the cleanup phase) only when AWS cannot change it in place: target type,
//! protocol, protocol version or target-control port differ (upstream's rule; port and name
//! changes are not replacements). The model's target group is what the AWS layer creates.

use std::collections::BTreeMap;

use super::error::{Context, Result};
use super::tags;
use super::Deployer;
use crate::aws::{self, Attributes, Tags};
use crate::model::{self, StackKind};

/// AWS cannot change these in place; upstream replaces the target group. The target-control
/// port is compared as upstream does: one side without a port and the other with one is a
/// change too.
pub fn needs_replacement(have: &aws::TargetGroup, want: &model::TargetGroup) -> bool {
    let proto_version = have.protocol_version.as_deref().unwrap_or("HTTP1");
    have.target_type != want.target_type.as_str()
        || !have
            .protocol
            .as_deref()
            .is_some_and(|p| p.eq_ignore_ascii_case(want.protocol.as_str()))
        || want
            .protocol_version
            .is_some_and(|v| !proto_version.eq_ignore_ascii_case(v.as_str()))
        || have.target_control_port != want.target_control_port
}

/// True when a health-check setting of the model differs from what AWS describes (upstream's
/// drift check: the path and matcher only when the model has them).
pub fn health_check_differs(want: &model::HealthCheck, have: &aws::DescribedHealthCheck) -> bool {
    let model::HealthCheck {
        port,
        protocol,
        path,
        matcher,
        interval_seconds,
        timeout_seconds,
        healthy_threshold_count,
        unhealthy_threshold_count,
    } = want;
    let have_port = have.port.as_deref().unwrap_or("traffic-port");
    let have_protocol = have.protocol.as_deref().unwrap_or_default();
    let matcher_differs = !matcher.is_empty()
        && (matcher.get("httpCode") != have.matcher_http_code.as_ref()
            || matcher.get("grpcCode") != have.matcher_grpc_code.as_ref());
    port != have_port
        || !protocol.as_str().eq_ignore_ascii_case(have_protocol)
        || (!path.is_empty() && have.path.as_deref() != Some(path.as_str()))
        || matcher_differs
        || have.interval_seconds != Some(*interval_seconds)
        || have.timeout_seconds != Some(*timeout_seconds)
        || have.healthy_threshold != Some(*healthy_threshold_count)
        || have.unhealthy_threshold != Some(*unhealthy_threshold_count)
}

/// The desired attributes whose described value differs (keys not in the model are left alone).
pub fn attribute_changes(want: &BTreeMap<String, String>, have: &Attributes) -> Attributes {
    want.iter()
        .filter(|(k, v)| have.get(*k).is_none_or(|h| !h.eq_ignore_ascii_case(v)))
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect()
}

/// Outcome of the target-group step.
#[derive(Debug, Default)]
pub(crate) struct TgOutcome {
    pub arns: BTreeMap<String, String>,
    /// Owned target groups no model resource kept: deleted in the cleanup phase.
    pub leftovers: Vec<String>,
}

impl Deployer {
    /// An existing target group kept: its health check (when it differs) and tags brought to
    /// `hc` and `tags`; its ARN.
    pub(super) async fn keep_target_group(
        &self,
        have: aws::TargetGroup,
        have_tags: &Tags,
        hc: &model::HealthCheck,
        tags: &Tags,
    ) -> Result<String> {
        if health_check_differs(hc, &have.health_check) {
            let modified = self
                .elbv2
                .modify_target_group(&have.arn, hc)
                .await
                .ctx(|| format!("modify target group {}", have.name))?;
            // As AWS answered, for the next deploy; an answer without the target group leaves
            // the inventory to be listed again.
            if modified.arn == have.arn {
                self.inventory.put_tg(modified, None);
            } else {
                self.inventory.invalidate();
            }
        }
        self.reconcile_elb_tags(&have.arn, tags, have_tags).await?;
        Ok(have.arn)
    }

    /// Target groups in the VPC carrying this stack's ownership tags, with their tags (found by
    /// tag under gate `EnableRGTAPI`).
    pub(crate) async fn find_owned_tgs(
        &self,
        kind: StackKind,
        stack_id: &str,
    ) -> Result<Vec<(aws::TargetGroup, Tags)>> {
        if let Some(found) = self.tagged_tgs(kind, stack_id).await? {
            return Ok(found);
        }
        self.inventory.ensure(None).await?;
        Ok(self.listed_tgs(kind, stack_id))
    }

    /// The stack's target groups as the inventory has them now (listed by the caller).
    pub(crate) fn listed_tgs(
        &self,
        kind: StackKind,
        stack_id: &str,
    ) -> Vec<(aws::TargetGroup, Tags)> {
        self.inventory
            .tgs_where(|_, t| tags::is_owned(t, &self.cluster, kind, stack_id))
    }

    /// Creates the target group `tg` of the model in the VPC; into the inventory at once, so
    /// the next deploy finds it.
    pub(crate) async fn create_target_group(
        &self,
        tg: aws::NewTargetGroup<'_>,
        name: &str,
        tags: &Tags,
    ) -> Result<String> {
        let created = self
            .elbv2
            .create_target_group(tg, &self.vpc_id)
            .await
            .ctx(|| format!("create target group {name}"))?;
        let arn = created.arn.clone();
        self.inventory.put_tg(created, Some(tags.clone()));
        Ok(arn)
    }

    pub(crate) async fn sync_target_groups(
        &self,
        kind: StackKind,
        want: &[model::TargetGroup],
        mut existing: Vec<(aws::TargetGroup, Tags)>,
    ) -> Result<TgOutcome> {
        let mut out = TgOutcome::default();
        for tg in want {
            let pos = existing.iter().position(|(h, t)| {
                tags::resource_id(t, kind) == Some(tg.id.as_str()) && !needs_replacement(h, tg)
            });
            let arn = match pos {
                Some(i) => {
                    let (have, have_tags) = existing.remove(i);
                    self.keep_target_group(have, &have_tags, &tg.health_check, &tg.tags)
                        .await?
                }
                None => {
                    self.create_target_group(tg.into(), &tg.name, &tg.tags)
                        .await?
                }
            };
            self.sync_tg_attributes(&arn, &tg.attributes).await?;
            out.arns.insert(tg.id.clone(), arn);
        }
        out.leftovers = existing.into_iter().map(|(t, _)| t.arn).collect();
        Ok(out)
    }

    /// Brings the attributes the model sets to their values (read only when it sets some).
    pub(crate) async fn sync_tg_attributes(
        &self,
        arn: &str,
        want: &BTreeMap<String, String>,
    ) -> Result<()> {
        if want.is_empty() {
            return Ok(());
        }
        let have = self
            .elbv2
            .describe_target_group_attributes(arn)
            .await
            .ctx(|| format!("describe attributes of {arn}"))?;
        let change = attribute_changes(want, &have);
        if !change.is_empty() {
            self.elbv2
                .modify_target_group_attributes(arn, &change)
                .await
                .ctx(|| format!("modify attributes of {arn}"))?;
        }
        Ok(())
    }

    /// Deletes a target group; gone counts as deleted; in use (listener going away) is retried.
    pub(crate) async fn delete_tg(&self, arn: &str) -> Result<()> {
        let what = format!("target group {arn}");
        self.delete_with_retry(&what, || self.elbv2.delete_target_group(arn))
            .await?;
        self.inventory.gone(arn);
        self.tag_cache.forget(arn);
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{Protocol, ProtocolVersion, TargetType};

    fn model_tg() -> model::TargetGroup {
        serde_json::from_value(serde_json::json!({
            "id": "ns/ing-svc:80", "name": "k8s-ns-svc-0123456789",
            "targetType": "instance", "port": 30080, "protocol": "HTTP",
            "protocolVersion": "HTTP1", "ipAddressType": "ipv4",
            "healthCheck": {"port": "traffic-port", "protocol": "HTTP", "path": "/",
                "matcher": {"httpCode": "200"}, "intervalSeconds": 15, "timeoutSeconds": 5,
                "healthyThresholdCount": 2, "unhealthyThresholdCount": 2},
            "attributes": {}, "tags": {}, "serviceUid": "u"
        }))
        .unwrap()
    }

    fn described(want: &model::TargetGroup) -> aws::TargetGroup {
        let h = &want.health_check;
        aws::TargetGroup {
            arn: "arn".into(),
            name: want.name.clone(),
            protocol: Some("HTTP".into()),
            protocol_version: Some("HTTP1".into()),
            port: Some(30080),
            vpc_id: Some("vpc-1".into()),
            target_type: "instance".into(),
            ip_address_type: Some("ipv4".into()),
            health_check: aws::DescribedHealthCheck {
                enabled: Some(true),
                protocol: Some(h.protocol.as_str().into()),
                port: Some(h.port.clone()),
                path: Some(h.path.clone()),
                interval_seconds: Some(h.interval_seconds),
                timeout_seconds: Some(h.timeout_seconds),
                healthy_threshold: Some(h.healthy_threshold_count),
                unhealthy_threshold: Some(h.unhealthy_threshold_count),
                matcher_http_code: h.matcher.get("httpCode").cloned(),
                matcher_grpc_code: None,
            },
            target_control_port: None,
            load_balancer_arns: vec![],
        }
    }

    #[test]
    fn replacement_only_for_type_protocol_version_and_control_port() {
        let want = model_tg();
        let have = described(&want);
        assert!(!needs_replacement(&have, &want));
        let mut w = want.clone();
        w.port = 30081;
        assert!(
            !needs_replacement(&have, &w),
            "port changes are not replacements"
        );
        w.target_type = TargetType::Ip;
        assert!(needs_replacement(&have, &w));
        let mut w = want.clone();
        w.protocol = Protocol::Https;
        assert!(needs_replacement(&have, &w));
        let mut w = want.clone();
        w.protocol_version = Some(ProtocolVersion::GRPC);
        assert!(needs_replacement(&have, &w));
    }

    #[test]
    fn a_changed_target_control_port_replaces_the_target_group() {
        let mut want = model_tg();
        want.target_control_port = Some(3000);
        let mut have = described(&want);
        // Upstream: a port on one side only is a change, as is another port.
        assert!(
            needs_replacement(&have, &want),
            "none described, one wanted"
        );
        have.target_control_port = Some(3000);
        assert!(!needs_replacement(&have, &want));
        want.target_control_port = Some(3001);
        assert!(needs_replacement(&have, &want));
        want.target_control_port = None;
        assert!(
            needs_replacement(&have, &want),
            "one described, none wanted"
        );
    }

    #[test]
    fn health_check_compares_what_the_model_sets() {
        let want = model_tg();
        let mut have = described(&want).health_check;
        have.protocol = Some("http".into());
        assert!(!health_check_differs(&want.health_check, &have));
        have.interval_seconds = Some(30);
        assert!(health_check_differs(&want.health_check, &have));
        let mut have = described(&want).health_check;
        have.port = None;
        assert!(
            !health_check_differs(&want.health_check, &have),
            "no port described is the traffic port"
        );
        have.matcher_http_code = Some("200-299".into());
        assert!(health_check_differs(&want.health_check, &have));
        // A TCP health check has no path or matcher to compare.
        let mut tcp = want.health_check.clone();
        tcp.protocol = Protocol::Tcp;
        tcp.path.clear();
        tcp.matcher.clear();
        let mut have = described(&want).health_check;
        have.protocol = Some("TCP".into());
        have.path = Some("/elsewhere".into());
        assert!(!health_check_differs(&tcp, &have));
    }

    #[test]
    fn attribute_changes_ignore_unmodelled_keys() {
        let want: BTreeMap<String, String> = [(
            "deregistration_delay.timeout_seconds".to_string(),
            "30".to_string(),
        )]
        .into();
        let mut have: Attributes = [
            (
                "deregistration_delay.timeout_seconds".to_string(),
                "300".to_string(),
            ),
            ("stickiness.enabled".to_string(), "false".to_string()),
        ]
        .into();
        assert_eq!(attribute_changes(&want, &have), want);
        have.insert("deregistration_delay.timeout_seconds".into(), "30".into());
        assert!(attribute_changes(&want, &have).is_empty());
    }
}
