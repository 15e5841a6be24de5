//! Target groups: found by stack tags among the VPC's target groups, paired by resource id,
//! created, health check / attributes / tags reconciled, and replaced (new one created, old one
//! deleted in the cleanup phase) only when AWS cannot change it in place: target type, protocol
//! or protocol version differ (upstream's rule; port and name changes are not replacements).

use std::collections::BTreeMap;

use super::error::{Context, Result};
use super::tags;
use super::Deployer;
use crate::aws::{self, Attributes, Tags, TargetGroupQuery};
use crate::model::{self, StackKind};

pub fn health_check(tg: &model::TargetGroup) -> aws::HealthCheck {
    let h = &tg.health_check;
    aws::HealthCheck {
        enabled: None,
        protocol: Some(h.protocol.as_str().to_string()),
        port: Some(h.port.clone()),
        // TCP health checks (NLB) have no path and no matcher: AWS refuses them.
        path: (!h.path.is_empty()).then(|| h.path.clone()),
        interval_seconds: Some(h.interval_seconds),
        timeout_seconds: Some(h.timeout_seconds),
        healthy_threshold: Some(h.healthy_threshold_count),
        unhealthy_threshold: Some(h.unhealthy_threshold_count),
        matcher_http_code: h.matcher.get("httpCode").cloned(),
        matcher_grpc_code: h.matcher.get("grpcCode").cloned(),
    }
}

pub fn create_request(tg: &model::TargetGroup, vpc_id: &str) -> aws::CreateTargetGroup {
    aws::CreateTargetGroup {
        name: tg.name.clone(),
        protocol: Some(tg.protocol.as_str().to_string()),
        protocol_version: tg.protocol_version.map(|v| v.as_str().to_string()),
        port: u16::try_from(tg.port).ok(),
        vpc_id: Some(vpc_id.to_string()),
        target_type: tg.target_type.as_str().to_string(),
        ip_address_type: Some(tg.ip_address_type.clone()),
        health_check: health_check(tg),
        tags: tg.tags.clone(),
    }
}

/// AWS cannot change these in place; upstream replaces the target group.
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
}

/// True when a field the model sets differs from what AWS describes.
pub fn health_check_differs(want: &aws::HealthCheck, have: &aws::HealthCheck) -> bool {
    fn ne<T: PartialEq>(w: &Option<T>, h: &Option<T>) -> bool {
        w.is_some() && w != h
    }
    let ci = |w: &Option<String>, h: &Option<String>| match (w, h) {
        (Some(w), Some(h)) => !w.eq_ignore_ascii_case(h),
        (Some(_), None) => true,
        _ => false,
    };
    let port_h = have.port.clone().or_else(|| Some("traffic-port".into()));
    ci(&want.protocol, &have.protocol)
        || ne(&want.port, &port_h)
        || ne(&want.path, &have.path)
        || ne(&want.interval_seconds, &have.interval_seconds)
        || ne(&want.timeout_seconds, &have.timeout_seconds)
        || ne(&want.healthy_threshold, &have.healthy_threshold)
        || ne(&want.unhealthy_threshold, &have.unhealthy_threshold)
        || ne(&want.matcher_http_code, &have.matcher_http_code)
        || ne(&want.matcher_grpc_code, &have.matcher_grpc_code)
        || ne(&want.enabled, &have.enabled)
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
        hc: &aws::HealthCheck,
        tags: &Tags,
    ) -> Result<String> {
        if health_check_differs(hc, &have.health_check) {
            self.elbv2
                .modify_target_group(&have.arn, hc)
                .await
                .ctx(|| format!("modify target group {}", have.name))?;
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
        let all = self
            .elbv2
            .describe_target_groups(&TargetGroupQuery::default())
            .await
            .ctx(|| "list target groups".into())?;
        let in_vpc: Vec<aws::TargetGroup> = all
            .into_iter()
            .filter(|t| t.vpc_id.as_deref() == Some(self.vpc_id.as_str()))
            .collect();
        let arns: Vec<String> = in_vpc.iter().map(|t| t.arn.clone()).collect();
        let mut tags = self.elb_tags(&arns).await?;
        Ok(in_vpc
            .into_iter()
            .filter_map(|t| {
                let tg_tags = tags.remove(&t.arn)?;
                tags::is_owned(&tg_tags, &self.cluster, kind, stack_id).then_some((t, tg_tags))
            })
            .collect())
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
                    self.keep_target_group(have, &have_tags, &health_check(tg), &tg.tags)
                        .await?
                }
                None => {
                    let created = self
                        .elbv2
                        .create_target_group(&create_request(tg, &self.vpc_id))
                        .await
                        .ctx(|| format!("create target group {}", tg.name))?;
                    self.tag_cache.put(&created.arn, tg.tags.clone());
                    created.arn
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
        aws::TargetGroup {
            arn: "arn".into(),
            name: want.name.clone(),
            protocol: Some("HTTP".into()),
            protocol_version: Some("HTTP1".into()),
            port: Some(30080),
            vpc_id: Some("vpc-1".into()),
            target_type: "instance".into(),
            ip_address_type: Some("ipv4".into()),
            health_check: aws::HealthCheck {
                enabled: Some(true),
                ..health_check(want)
            },
            load_balancer_arns: vec![],
        }
    }

    #[test]
    fn replacement_only_for_type_protocol_and_version() {
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
    fn health_check_compares_only_what_the_model_sets() {
        let want = model_tg();
        let mut have = described(&want).health_check;
        have.protocol = Some("http".into());
        assert!(!health_check_differs(&health_check(&want), &have));
        have.interval_seconds = Some(30);
        assert!(health_check_differs(&health_check(&want), &have));
    }

    #[test]
    fn tcp_health_checks_send_no_path_and_no_matcher() {
        let mut tg = model_tg();
        tg.protocol = Protocol::Tcp;
        tg.health_check.protocol = Protocol::Tcp;
        tg.health_check.path = String::new();
        tg.health_check.matcher.clear();
        let hc = health_check(&tg);
        assert_eq!(hc.path, None);
        assert_eq!(hc.matcher_http_code, None);
        assert_eq!(hc.protocol.as_deref(), Some("TCP"));
        // An HTTP health check keeps both.
        let hc = health_check(&model_tg());
        assert_eq!(hc.path.as_deref(), Some("/"));
        assert_eq!(hc.matcher_http_code.as_deref(), Some("200"));
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
