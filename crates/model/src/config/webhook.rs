//! The webhook server's settings (`--webhook-*`), validated.

use std::net::SocketAddr;
use std::path::PathBuf;
use std::time::Duration;

use super::{duration, invalid, non_empty, ConfigError};
use crate::args::{RuntimeArgs, WebhookArgs};

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TlsMinVersion {
    Tls12,
    Tls13,
}

/// Webhook server settings.
#[derive(Clone, Debug)]
pub struct WebhookConfig {
    pub bind: SocketAddr,
    pub cert_file: PathBuf,
    pub key_file: PathBuf,
    pub tls_min_version: TlsMinVersion,
    pub max_body_bytes: usize,
    pub request_timeout: Duration,
    /// `--webhook-max-connections`.
    pub max_connections: usize,
    /// `--webhook-max-inflight-body-bytes`.
    pub max_inflight_body_bytes: usize,
    /// Set when the controller manages the certificate itself.
    pub managed_cert: Option<ManagedCertConfig>,
    /// `--kube-ca-pem-filepath`: when set, a client must present a certificate issued by one of
    /// the CAs in this PEM file (upstream's `RequireAndVerifyClientCert`).
    pub client_ca_file: Option<PathBuf>,
}

/// Controller-managed certificate settings (`--webhook-cert-secret-name` set).
#[derive(Clone, Debug)]
pub struct ManagedCertConfig {
    pub secret_name: String,
    pub namespace: String,
    pub service_name: String,
    pub webhook_config_name: String,
    pub dns_domain: String,
    pub validity_days: u32,
    pub renew_before: Duration,
    pub check_interval: Duration,
    pub ca_propagation_delay: Duration,
}

/// Longest `--webhook-cert-validity-days`: `webhook_certs::MAX_SERVING_DAYS`, repeated so this
/// crate needs no certificate library (the controller crate asserts at compile time they agree).
pub const MAX_SERVING_DAYS: u32 = 365;

/// Validates the `--webhook-*` flags; the managed certificate's namespace defaults to
/// `--leader-election-namespace`, then `kube-system`.
pub(super) fn from_args(w: &WebhookArgs, r: &RuntimeArgs) -> Result<WebhookConfig, ConfigError> {
    let cert_dir = PathBuf::from(&w.webhook_cert_dir);
    let tls_min_version = match w.webhook_tls_min_version.as_str() {
        "1.3" => TlsMinVersion::Tls13,
        "1.2" => TlsMinVersion::Tls12,
        other => {
            return Err(invalid(
                "webhook-tls-min-version",
                other,
                "must be 1.2 or 1.3",
            ))
        }
    };
    let host: std::net::IpAddr = w.webhook_bind_host.parse().map_err(|_| {
        invalid(
            "webhook-bind-host",
            &w.webhook_bind_host,
            "must be an IP address",
        )
    })?;
    if w.webhook_max_body_bytes < 1024 {
        return Err(invalid(
            "webhook-max-body-bytes",
            &w.webhook_max_body_bytes.to_string(),
            "must be at least 1024",
        ));
    }
    if w.webhook_max_connections == 0 {
        return Err(invalid(
            "webhook-max-connections",
            "0",
            "must be at least 1",
        ));
    }
    if w.webhook_max_inflight_body_bytes < w.webhook_max_body_bytes {
        return Err(invalid(
            "webhook-max-inflight-body-bytes",
            &w.webhook_max_inflight_body_bytes.to_string(),
            "must be at least --webhook-max-body-bytes",
        ));
    }
    let managed_cert = match non_empty(&w.webhook_cert_secret_name) {
        None => None,
        Some(secret_name) => {
            if w.webhook_cert_validity_days == 0 || w.webhook_cert_validity_days > MAX_SERVING_DAYS
            {
                return Err(invalid(
                    "webhook-cert-validity-days",
                    &w.webhook_cert_validity_days.to_string(),
                    "must be between 1 and 365",
                ));
            }
            let namespace = non_empty(&w.webhook_cert_namespace)
                .or_else(|| non_empty(&r.leader_election_namespace))
                .unwrap_or_else(|| "kube-system".to_string());
            Some(ManagedCertConfig {
                secret_name,
                namespace,
                service_name: w.webhook_service_name.clone(),
                webhook_config_name: w.webhook_config_name.clone(),
                dns_domain: w.cluster_dns_domain.clone(),
                validity_days: w.webhook_cert_validity_days,
                renew_before: duration("webhook-cert-renew-before", &w.webhook_cert_renew_before)?,
                check_interval: duration(
                    "webhook-cert-check-interval",
                    &w.webhook_cert_check_interval,
                )?,
                ca_propagation_delay: duration(
                    "webhook-ca-propagation-delay",
                    &w.webhook_ca_propagation_delay,
                )?,
            })
        }
    };
    Ok(WebhookConfig {
        bind: SocketAddr::new(host, w.webhook_bind_port),
        cert_file: cert_dir.join(&w.webhook_cert_file),
        key_file: cert_dir.join(&w.webhook_key_file),
        tls_min_version,
        max_body_bytes: w.webhook_max_body_bytes,
        request_timeout: duration("webhook-request-timeout", &w.webhook_request_timeout)?,
        max_connections: w.webhook_max_connections,
        max_inflight_body_bytes: w.webhook_max_inflight_body_bytes,
        managed_cert,
        client_ca_file: non_empty(&r.kube_ca_pem_filepath).map(PathBuf::from),
    })
}
