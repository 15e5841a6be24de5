//! Target groups and their TargetGroupBindings in upstream's schema: health check, attributes,
//! target control port, and the binding's networking rules and references; the `alb`-type
//! target groups (an Ingress's frontend NLB, an NLB Gateway's `Gateway` backends) with their
//! `FrontendNlbTargetGroupState`.

use std::collections::BTreeMap;

use serde_json::{json, Value};

use super::values::{
    is_gateway_tracking, key_values, opt, put, resource_ref, user_tags, Renderer, LOAD_BALANCER,
    TARGET_GROUP,
};
use crate::model::types::*;

pub(super) fn target_group(tg: &TargetGroup) -> Value {
    let hc = &tg.health_check;
    let port = match hc.port.parse::<i32>() {
        Ok(n) => json!(n),
        Err(_) => json!(hc.port),
    };
    let mut h = json!({"port": port, "protocol": hc.protocol});
    put(
        &mut h,
        "path",
        (!hc.path.is_empty()).then(|| json!(hc.path)),
    );
    put(
        &mut h,
        "matcher",
        (!hc.matcher.is_empty()).then(|| json!(hc.matcher)),
    );
    h["intervalSeconds"] = json!(hc.interval_seconds);
    h["timeoutSeconds"] = json!(hc.timeout_seconds);
    h["healthyThresholdCount"] = json!(hc.healthy_threshold_count);
    h["unhealthyThresholdCount"] = json!(hc.unhealthy_threshold_count);
    let mut o = json!({"name": tg.name, "targetType": tg.target_type, "port": tg.port,
        "protocol": tg.protocol});
    put(&mut o, "protocolVersion", opt(tg.protocol_version.as_ref()));
    put(
        &mut o,
        "ipAddressType",
        (!tg.ip_address_type.is_empty()).then(|| json!(tg.ip_address_type)),
    );
    o["healthCheckConfig"] = h;
    put(&mut o, "targetGroupAttributes", key_values(&tg.attributes));
    put(&mut o, "tags", user_tags(&tg.tags));
    put(
        &mut o,
        "targetControlPort",
        opt(tg.target_control_port.as_ref()),
    );
    o
}

/// A target group of type `alb` (frontend NLB, or a Gateway backend of an NLB Gateway).
pub(super) fn alb_target_group(tg: &AlbTargetGroup) -> Value {
    let plain = TargetGroup {
        id: tg.id.clone(),
        name: tg.name.clone(),
        target_type: TargetType::Ip,
        port: tg.port,
        protocol: tg.protocol,
        protocol_version: None,
        ip_address_type: tg.ip_address_type.clone(),
        health_check: tg.health_check.clone(),
        target_control_port: None,
        attributes: tg.attributes.clone(),
        tags: tg.tags.clone(),
        service_uid: String::new(),
    };
    let mut o = target_group(&plain);
    o["targetType"] = json!("alb");
    o
}

/// Upstream's `FrontendNlbTargetGroupState` of one target group (Go field names, no tags).
pub(super) fn frontend_state(tg: &AlbTargetGroup) -> Value {
    json!({
        "Name": tg.name,
        "ARN": resource_ref(TARGET_GROUP, &tg.id, "targetGroupARN"),
        "Port": tg.port,
        "TargetARN": resource_ref(LOAD_BALANCER, "LoadBalancer", "loadBalancerARN"),
        "TargetPort": tg.target_port,
    })
}

impl Renderer<'_> {
    /// Upstream's `FrontendNlbTargetGroupState` of a Gateway backend's target group
    /// (`buildTargetGroupFromGateway`): `Port` is the NLB listener forwarding to it (the lowest
    /// such port, as ours are built in port order), the target the other Gateway's ALB ARN as
    /// a literal, `TargetPort` the target group's port.
    pub(super) fn gateway_backend_state(&self, tg: &AlbTargetGroup) -> Value {
        let arn = Token::TargetGroupArn(tg.id.clone());
        let forwards_here = |l: &&Listener| {
            l.default_actions.iter().any(|a| match a {
                Action::Forward { config } => config
                    .target_groups
                    .iter()
                    .any(|t| t.target_group_arn == arn),
                _ => false,
            })
        };
        // Every such target group is built for a listener's forward; its own port otherwise.
        let port = self
            .stack
            .listeners
            .iter()
            .find(forwards_here)
            .map_or(tg.port, |l| l.port);
        let target = match &tg.target_arn {
            Some(alb) => json!(alb),
            None => resource_ref(LOAD_BALANCER, "LoadBalancer", "loadBalancerARN"),
        };
        json!({
            "Name": tg.name,
            "ARN": resource_ref(TARGET_GROUP, &tg.id, "targetGroupARN"),
            "Port": port,
            "TargetARN": target,
            "TargetPort": tg.port,
        })
    }

    pub(super) fn binding(&self, b: &TargetGroupBindingResource) -> Value {
        let s = &b.spec;
        let mut spec = json!({"targetGroupARN": self.token(&s.target_group_arn),
            "targetType": s.target_type,
            "serviceRef": {"name": s.service_name, "port": s.service_port}});
        let from_sg = |r: &NetworkingRule| json!([{"securityGroup": {"groupID": self.token(&r.from_security_group)}}]);
        let port = |r: &NetworkingRule| {
            let tcp = crate::crd::target_group_binding::NetworkingProtocol::Tcp;
            let mut p = json!({"protocol": r.protocol.as_ref().unwrap_or(&tcp)});
            put(&mut p, "port", opt(r.port.as_ref()));
            p
        };
        let mut ingress: Vec<Value> = Vec::new();
        if s.networking_one_rule && !s.networking.is_empty() {
            let ports: Vec<Value> = s.networking.iter().map(port).collect();
            ingress.push(json!({"from": from_sg(&s.networking[0]), "ports": ports}));
        } else {
            ingress.extend(
                s.networking
                    .iter()
                    .map(|r| json!({"from": from_sg(r), "ports": [port(r)]})),
            );
        }
        ingress.extend(s.networking_from_cidrs.iter().map(|r| {
            let from: Vec<Value> = r
                .from_cidrs
                .iter()
                .map(|c| json!({"ipBlock": {"cidr": c}}))
                .collect();
            json!({"from": from, "ports": r.ports})
        }));
        if !ingress.is_empty() {
            spec["networking"] = json!({ "ingress": ingress });
        }
        put(
            &mut spec,
            "nodeSelector",
            s.node_selector
                .as_ref()
                .map(|sel| json!(crate::crd::tgb_shape::canonical_selector(sel))),
        );
        put(
            &mut spec,
            "ipAddressType",
            (!s.ip_address_type.is_empty()).then(|| json!(s.ip_address_type)),
        );
        put(
            &mut spec,
            "vpcID",
            opt(s.vpc_id.as_ref().filter(|v| !v.is_empty())),
        );
        if s.multi_cluster_target_group {
            spec["multiClusterTargetGroup"] = json!(true);
        }
        spec["targetGroupProtocol"] = json!(s.target_group_protocol);
        let mut metadata = json!({"name": b.name, "namespace": b.namespace});
        // A Gateway binding's own labels (`spec.infrastructure.labels`) are in upstream's model;
        // stack labels are added when deploying, for every kind of stack.
        let own: BTreeMap<&String, &String> = b
            .labels
            .iter()
            .filter(|(k, _)| !is_gateway_tracking(k, &["stack-namespace", "stack-name"]))
            .filter(|(k, _)| {
                !k.starts_with("ingress.k8s.aws/") && !k.starts_with("service.k8s.aws/")
            })
            .collect();
        put(
            &mut metadata,
            "labels",
            (!own.is_empty()).then(|| json!(own)),
        );
        // A Gateway binding's annotations (`spec.infrastructure.annotations`), when it has any.
        put(
            &mut metadata,
            "annotations",
            b.annotations
                .as_ref()
                .filter(|a| !a.is_empty())
                .map(|a| json!(a)),
        );
        json!({"template": {"metadata": metadata, "spec": spec}})
    }
}
