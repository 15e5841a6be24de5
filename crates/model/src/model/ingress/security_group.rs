//! Security groups of an Ingress group's load balancer: the managed frontend group (one inbound
//! rule per listener port and source) or the user's groups, and the cluster's shared backend
//! group (`backend_sg`).

use std::collections::BTreeMap;

use super::lb_settings::LbSettings;
use super::listener::PortConfig;
use crate::model::agree::group;
use crate::model::backend_sg::shared_backend_sg;
use crate::model::config::ModelConfig;
use crate::model::error::ModelError;
use crate::model::naming;
use crate::model::tags::TagContext;
use crate::model::types::*;

/// The load balancer's security groups: tokens of the groups this stack creates (put into
/// `stack`), and the user's names or ids (resolved and checked by the deployer, as upstream).
pub(crate) fn for_load_balancer(
    s: &LbSettings,
    ports: &BTreeMap<i32, PortConfig>,
    cfg: &ModelConfig,
    tags: &TagContext<'_>,
    group_id: &GroupId,
    stack: &mut Stack,
) -> Result<(Vec<Token>, Vec<String>), ModelError> {
    let mut tokens = Vec::new();
    let Some(list) = &s.security_groups else {
        let user_tags = s.user_tags.clone();
        let managed = managed_sg(ports, s.ip_address_type, cfg, tags, user_tags, group_id);
        stack.managed_security_group = Some(managed);
        tokens.push(Token::ManagedSecurityGroupId);
        if cfg.enable_backend_sg {
            stack.backend_security_group = Some(shared_backend_sg(cfg));
            tokens.push(Token::BackendSecurityGroupId);
        }
        return Ok((tokens, Vec::new()));
    };
    if s.manage_backend_sg_rules {
        if !cfg.enable_backend_sg {
            return Err(group("backendSG feature is required to manage worker node SG rules when frontendSG manually specified".into()));
        }
        stack.backend_security_group = Some(shared_backend_sg(cfg));
        tokens.push(Token::BackendSecurityGroupId);
    }
    Ok((tokens, list.clone()))
}

fn managed_sg(
    ports: &BTreeMap<i32, PortConfig>,
    ip_type: IpAddressType,
    cfg: &ModelConfig,
    tags: &TagContext<'_>,
    user_tags: BTreeMap<String, String>,
    group_id: &GroupId,
) -> SecurityGroup {
    let mut ingress = Vec::new();
    for (port, c) in ports {
        let base = IpPermission {
            ip_protocol: "tcp".into(),
            from_port: *port,
            to_port: *port,
            cidr_ipv4: None,
            cidr_ipv6: None,
            prefix_list_id: None,
        };
        ingress.extend(c.cidr_v4.iter().map(|v| IpPermission {
            cidr_ipv4: Some(v.clone()),
            ..base.clone()
        }));
        if ip_type.is_dual_stack() {
            ingress.extend(c.cidr_v6.iter().map(|v| IpPermission {
                cidr_ipv6: Some(v.clone()),
                ..base.clone()
            }));
        }
        ingress.extend(c.prefix_lists.iter().map(|v| IpPermission {
            prefix_list_id: Some(v.clone()),
            ..base.clone()
        }));
    }
    SecurityGroup {
        id: "ManagedLBSecurityGroup".into(),
        name: naming::managed_sg_name(&cfg.cluster_name, group_id),
        description: "[k8s] Managed SecurityGroup for LoadBalancer".into(),
        ingress,
        tags: tags.resource_tags("ManagedLBSecurityGroup", user_tags),
    }
}
