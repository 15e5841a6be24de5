//! The listen ports of an Ingress group: each member's, in member order, and the group's,
//! merged port by port with upstream's rules (`listener`).

use std::collections::BTreeMap;

use super::listener::{self, PortConfig};
use crate::model::config::ModelConfig;
use crate::model::error::ModelError;
use crate::model::group::ClassifiedIngress;
use crate::model::types::Certificate;

/// Listener ports: each member's (in member order) and the group's, merged per port.
pub(super) struct GroupPorts {
    pub(super) per_member: Vec<Vec<i32>>,
    pub(super) merged: BTreeMap<i32, PortConfig>,
}

impl GroupPorts {
    /// `certificates`: those the controller creates for members (`create-acm-cert`).
    pub(super) fn collect(
        members: &[ClassifiedIngress<'_>],
        cfg: &ModelConfig,
        certificates: &[Certificate],
    ) -> Result<Self, ModelError> {
        let mut per_port: BTreeMap<i32, Vec<(String, PortConfig)>> = BTreeMap::new();
        let mut per_member = Vec::new();
        for m in members {
            let key = m.key();
            let created = certificates.iter().find(|c| c.ingress == key);
            let ports = listener::member_ports(m, created.map(|c| c.id.as_str()))
                .map_err(|f| f.on(&key))?;
            per_member.push(ports.keys().copied().collect());
            for (p, c) in ports {
                per_port.entry(p).or_default().push((m.key(), c));
            }
        }
        let mut merged = BTreeMap::new();
        for (port, cfgs) in &per_port {
            let refs: Vec<(String, &PortConfig)> =
                cfgs.iter().map(|(k, c)| (k.clone(), c)).collect();
            let pc = listener::merge(*port, &refs, &cfg.default_ssl_policy)
                .map_err(ModelError::Group)?;
            listener::ensure_certificate_source(*port, &pc).map_err(ModelError::Group)?;
            merged.insert(*port, pc);
        }
        Ok(GroupPorts { per_member, merged })
    }

    /// The members that listen on `port`, in group order.
    pub(super) fn members_on<'m>(
        &self,
        members: &[ClassifiedIngress<'m>],
        port: i32,
    ) -> Vec<ClassifiedIngress<'m>> {
        let on = members.iter().zip(&self.per_member);
        on.filter(|(_, ps)| ps.contains(&port))
            .map(|(m, _)| *m)
            .collect()
    }
}
