//! What upstream's controller leaves in AWS for a Service (NLB) stack, created in moto request
//! by request: the adoption, takeover and `diff` tests start from it.

use std::collections::BTreeMap;

use aws_load_balancer_controller::aws::*;
use aws_load_balancer_controller::model::{self, Stack, Token};

use super::moto_cloud::Cloud;

/// What upstream leaves in AWS for a Service stack, request by request with upstream's names and
/// tags (taken from the model, whose names are checked hash for hash against upstream's).
/// Returns the target groups' ARNs by model id and the backend security group's id.
pub async fn seed_as_upstream(c: &Cloud, stack: &Stack) -> (BTreeMap<String, String>, String) {
    let msg = stack.managed_security_group.as_ref().unwrap();
    let sg = c
        .ec2
        .create_security_group(&CreateSecurityGroup {
            name: msg.name.clone(),
            description: msg.description.clone(),
            vpc_id: c.vpc.clone(),
            tags: msg.tags.clone(),
        })
        .await
        .unwrap();
    let perms: Vec<IpPermission> = msg
        .ingress
        .iter()
        .map(|p| IpPermission {
            ip_protocol: p.ip_protocol.clone(),
            from_port: Some(p.from_port),
            to_port: Some(p.to_port),
            ipv4_ranges: p.cidr_ipv4.iter().map(IpRange::new).collect(),
            ipv6_ranges: p.cidr_ipv6.iter().map(IpRange::new).collect(),
            ..Default::default()
        })
        .collect();
    c.ec2.authorize_ingress(&sg, &perms).await.unwrap();
    let bsg = stack.backend_security_group.as_ref().unwrap();
    let backend = c
        .ec2
        .create_security_group(&CreateSecurityGroup {
            name: bsg.name.clone(),
            description: bsg.description.clone(),
            vpc_id: c.vpc.clone(),
            tags: bsg.tags.clone(),
        })
        .await
        .unwrap();
    let mut tg_arns = BTreeMap::new();
    for tg in &stack.target_groups {
        // The model's target group is what upstream's CreateTargetGroup sends.
        let created = c.elb.create_target_group(tg.into(), &c.vpc).await.unwrap();
        // Upstream reconciles the attributes after creating (AWS already shows NLB defaults
        // such as `proxy_protocol_v2.enabled=false`; moto does not until they are set).
        if !tg.attributes.is_empty() {
            c.elb
                .modify_target_group_attributes(&created.arn, &tg.attributes)
                .await
                .unwrap();
        }
        tg_arns.insert(tg.id.clone(), created.arn);
    }
    let lb = stack.load_balancer.as_ref().unwrap();
    let req = model::LoadBalancer {
        tags: lb.tags.clone(),
        ..fake::spec::load_balancer(
            &lb.name,
            "network",
            lb.scheme,
            &c.subnets,
            &[sg, backend.clone()],
        )
    };
    let created = c.elb.create_load_balancer(&req).await.unwrap();
    for l in &stack.listeners {
        let Some(model::Action::Forward { config }) = l.default_actions.first() else {
            panic!("NLB listeners forward");
        };
        // As upstream's deployer writes a forward: every tuple with its weight, stickiness only
        // when the model sets it (`enabled` alone on a Service).
        let target_groups = config
            .target_groups
            .iter()
            .map(|t| model::TargetGroupTuple {
                target_group_arn: match &t.target_group_arn {
                    Token::TargetGroupArn(id) => Token::Literal(tg_arns[id].clone()),
                    Token::Literal(arn) => Token::Literal(arn.clone()),
                    other => panic!("forward to {other:?}"),
                },
                weight: t.weight,
            })
            .collect();
        let forward = model::Action::Forward {
            config: model::ForwardConfig {
                target_groups,
                target_group_stickiness_config: config.target_group_stickiness_config.clone(),
            },
        };
        let spec = model::Listener {
            load_balancer_arn: Token::Literal(created.arn.clone()),
            tags: l.tags.clone(),
            ..model::Listener::new(l.port, l.protocol, vec![forward])
        };
        c.elb.create_listener(&spec).await.unwrap();
    }
    (tg_arns, backend)
}
