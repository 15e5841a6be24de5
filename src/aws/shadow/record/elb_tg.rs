//! Target groups through the recorder: creates and health-check modifies noted field by field.

use super::*;

/// A health check as the report shows it: the fields CreateTargetGroup / ModifyTargetGroup
/// send, under their AWS names.
fn health_check_fields(hc: &DescribedHealthCheck) -> Vec<(&'static str, Option<String>)> {
    vec![
        ("healthCheckEnabled", hc.enabled.as_ref().map(show)),
        ("healthCheckProtocol", hc.protocol.as_ref().map(show)),
        ("healthCheckPort", hc.port.as_ref().map(show)),
        ("healthCheckPath", hc.path.as_ref().map(show)),
        (
            "healthCheckIntervalSeconds",
            hc.interval_seconds.as_ref().map(show),
        ),
        (
            "healthCheckTimeoutSeconds",
            hc.timeout_seconds.as_ref().map(show),
        ),
        (
            "healthyThresholdCount",
            hc.healthy_threshold.as_ref().map(show),
        ),
        (
            "unhealthyThresholdCount",
            hc.unhealthy_threshold.as_ref().map(show),
        ),
        ("matcher.httpCode", hc.matcher_http_code.as_ref().map(show)),
        ("matcher.grpcCode", hc.matcher_grpc_code.as_ref().map(show)),
    ]
}

impl Recorder {
    pub(super) fn target_group_created(
        &self,
        want: NewTargetGroup<'_>,
        vpc_id: &str,
    ) -> Result<TargetGroup> {
        let health_check = DescribedHealthCheck::sent(want.health_check())?;
        let arn = self.placeholder(&format!(
            "arn:aws:elasticloadbalancing:::targetgroup/{}/",
            want.name()
        ));
        let protocol = want.protocol().as_str().to_string();
        let protocol_version = want.protocol_version().map(|v| v.as_str().to_string());
        let ip_address_type = tg_ip_address_type(want.ip_address_type()).map(str::to_string);
        let mut changes = created(&[
            ("name", &want.name()),
            ("protocol", &protocol.as_str()),
            ("vpcId", &vpc_id),
            ("targetType", &want.target_type()),
        ]);
        changes.extend(created(&[("port", &want.port())]));
        if let Some(v) = &protocol_version {
            changes.extend(created(&[("protocolVersion", v)]));
        }
        if let Some(t) = &ip_address_type {
            changes.extend(created(&[("ipAddressType", t)]));
        }
        // Set at creation only: a change of it is a replacement, which the report shows as
        // this create (and the old group's delete).
        if let Some(p) = want.target_control_port() {
            changes.extend(created(&[("targetControlPort", &p)]));
        }
        changes.extend(
            health_check_fields(&health_check)
                .into_iter()
                .filter_map(|(f, v)| change(f, None, v)),
        );
        changes.extend(created(&[(
            "tags",
            &want.tags().iter().collect::<Vec<_>>(),
        )]));
        self.elb("CreateTargetGroup", &arn, changes);
        let http = matches!(protocol.as_str(), "HTTP" | "HTTPS");
        let tg = TargetGroup {
            arn: arn.clone(),
            name: want.name().to_string(),
            protocol: Some(protocol),
            protocol_version: protocol_version.or_else(|| http.then(|| "HTTP1".into())),
            port: u16::try_from(want.port()).ok(),
            vpc_id: Some(vpc_id.to_string()),
            target_type: want.target_type().to_string(),
            ip_address_type: Some(ip_address_type.unwrap_or_else(|| "ipv4".into())),
            health_check,
            target_control_port: want.target_control_port(),
            load_balancer_arns: vec![],
        };
        let mut s = self.seen();
        s.tgs.insert(arn.clone(), tg.clone());
        s.tags.insert(arn, want.tags().clone());
        Ok(tg)
    }

    pub(super) fn target_group_modified(
        &self,
        arn: &str,
        health_check: &crate::model::HealthCheck,
    ) -> Result<TargetGroup> {
        let want = DescribedHealthCheck::sent(health_check)?;
        let mut s = self.seen();
        let tg = s.tgs.entry(arn.to_string()).or_default();
        let before = health_check_fields(&tg.health_check);
        let after = health_check_fields(&want);
        // A field AWS keeps (e.g. a path) that the request leaves out stays as it is.
        let changes: Vec<Change> = before
            .into_iter()
            .zip(after)
            .filter_map(|((field, b), (_, a))| a.and_then(|a| change(field, b, Some(a))))
            .collect();
        tg.health_check.modified_by(&want);
        let tg = tg.clone();
        drop(s);
        self.elb("ModifyTargetGroup", arn, changes);
        Ok(tg)
    }
}
