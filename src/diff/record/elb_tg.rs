//! Target groups through the recorder: creates and health-check modifies noted field by field.

use super::*;

impl Recorder {
    pub(super) fn target_group_created(&self, req: &CreateTargetGroup) -> TargetGroup {
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
        tg
    }

    pub(super) fn target_group_modified(
        &self,
        arn: &str,
        health_check: &HealthCheck,
    ) -> TargetGroup {
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
        tg
    }
}
