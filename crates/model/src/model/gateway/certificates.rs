//! Certificates of a Gateway's secure listeners (HTTPS on ALBs, terminating TLS on NLBs), as
//! upstream's `buildCertificates`: the LoadBalancerConfiguration's `defaultCertificate` then
//! `certificates`; without either, ACM discovery over the hostnames the port serves — each valid
//! listener's `hostname`, and per attached route its hostnames compatible with the listener
//! (its own hostnames when none are) — which the deployer resolves (reads only) before any
//! write. No hostname at all is upstream's build error, since ELBv2 takes no secure listener
//! without a certificate.

use std::collections::BTreeSet;

use gateway_api::apis::standard::gateways::GatewayListeners;

use super::attach::Attachment;
use super::routes::RouteView;
use super::GatewayInputs;
use crate::crd::gateway::load_balancer_configuration::ListenerConfiguration;
use crate::model::types::{MemberCertificates, Protocol};

/// The certificates of one listener: explicit ARNs (first = default), or what ACM discovery
/// must find for the Gateway (then `certificates` is empty until the deployer resolves it).
#[derive(Debug, Default, PartialEq)]
pub(super) struct ListenerCertificates {
    pub certificates: Vec<String>,
    pub discovery: Vec<MemberCertificates>,
}

/// What port `port` of one Gateway serves, for its certificates.
pub(super) struct SecurePort<'a> {
    /// `ns/name` of the Gateway.
    gateway: String,
    protocol: Protocol,
    port: i32,
    /// The valid Gateway listeners on the port.
    listeners: Vec<&'a GatewayListeners>,
    /// Indexes (into `routes`) of the routes attached on the port.
    attached: &'a [usize],
    routes: &'a [RouteView<'a>],
    attachment: &'a Attachment,
}

impl<'a> SecurePort<'a> {
    /// Port `port` of the Gateway, whose listeners (grouped) have `protocol`.
    pub fn new(
        inputs: &'a GatewayInputs<'a>,
        valid: &[&'a GatewayListeners],
        routes: &'a [RouteView<'a>],
        attachment: &'a Attachment,
        port: i32,
        protocol: Protocol,
    ) -> Self {
        // The valid listeners of the Gateway and of the ListenerSets it accepted.
        let listeners = valid.iter().copied().filter(|l| l.port == port).collect();
        Self {
            gateway: inputs.key(),
            protocol,
            port,
            listeners,
            attached: attachment
                .routes_by_port
                .get(&port)
                .map_or(&[][..], Vec::as_slice),
            routes,
            attachment,
        }
    }

    /// The listener's certificates; none for a listener that is not HTTPS or TLS.
    pub fn certificates(
        &self,
        cfg: Option<&ListenerConfiguration>,
    ) -> Result<ListenerCertificates, String> {
        if !matches!(self.protocol, Protocol::Https | Protocol::Tls) {
            return Ok(ListenerCertificates::default());
        }
        let explicit: Vec<String> = cfg
            .map(|c| {
                c.default_certificate
                    .iter()
                    .chain(&c.certificates)
                    .cloned()
                    .collect()
            })
            .unwrap_or_default();
        if !explicit.is_empty() {
            return Ok(ListenerCertificates {
                certificates: explicit,
                discovery: Vec::new(),
            });
        }
        let hosts = self.discovery_hosts();
        if hosts.is_empty() {
            return Err(format!(
                "No hostnames found for TLS cert discovery for listener on gateway {} with protocol:port {}:{}",
                self.gateway,
                self.protocol.as_str(),
                self.port
            ));
        }
        Ok(ListenerCertificates {
            certificates: Vec::new(),
            discovery: vec![MemberCertificates {
                ingress: self.gateway.clone(),
                certificates: Vec::new(),
                discovery_hosts: Some(hosts.into_iter().collect()),
            }],
        })
    }

    /// The hostnames ACM discovery covers (sorted, distinct; upstream asks for them in order).
    pub fn discovery_hosts(&self) -> BTreeSet<String> {
        let mut hosts: BTreeSet<String> = self
            .listeners
            .iter()
            .filter_map(|l| l.hostname.clone())
            .collect();
        for &index in self.attached {
            let compatible = self
                .attachment
                .hostnames
                .get(&(self.port, index))
                .filter(|h| !h.is_empty());
            match compatible {
                Some(h) => hosts.extend(h.iter().cloned()),
                None => hosts.extend(self.routes[index].hostnames.iter().cloned()),
            }
        }
        hosts.retain(|h| !h.is_empty());
        hosts
    }
}
