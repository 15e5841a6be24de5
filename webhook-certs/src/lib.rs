//! Webhook certificates: an ECDSA P-256 CA and a serving certificate for `<svc>.<ns>.svc`, made with rcgen.
//!
//! Upstream's chart mints a fresh ten-year CA on every render, which is where most x509 outages
//! come from. Here the serving certificate is capped at one year and the CA can be kept and reused
//! to sign a renewed serving certificate, so the caBundle does not need to change on renewal.
#![forbid(unsafe_code)]

use rcgen::{
    BasicConstraints, CertificateParams, DistinguishedName, DnType, ExtendedKeyUsagePurpose, IsCa,
    Issuer, KeyPair, KeyUsagePurpose, SanType, PKCS_ECDSA_P256_SHA256,
};
use std::net::IpAddr;
use time::{Duration, OffsetDateTime};

/// Common name of the CA, as upstream's chart names it (users grep their errors for it).
pub const CA_COMMON_NAME: &str = "aws-load-balancer-controller-ca";
/// The longest validity we issue for a serving certificate.
pub const MAX_SERVING_DAYS: u32 = 365;
/// Default validity of a serving certificate.
pub const DEFAULT_SERVING_DAYS: u32 = 365;
/// Default validity of the CA; longer than the serving certificate so renewals reuse it.
pub const DEFAULT_CA_DAYS: u32 = 3 * 365;

/// Errors from certificate generation.
#[derive(Debug, thiserror::Error)]
pub enum CertError {
    #[error("serving certificate validity must be between 1 and {MAX_SERVING_DAYS} days, got {0}")]
    Validity(u32),
    #[error("service name and namespace must not be empty")]
    EmptyName,
    #[error("invalid CA key: {0}")]
    CaKey(rcgen::Error),
    #[error("certificate generation failed: {0}")]
    Rcgen(#[from] rcgen::Error),
}

/// A CA certificate and its private key, PEM encoded.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Ca {
    pub cert_pem: String,
    pub key_pem: String,
}

/// A CA plus a serving certificate signed by it, PEM encoded.
#[derive(Clone, Debug)]
pub struct Bundle {
    pub ca: Ca,
    pub cert_pem: String,
    pub key_pem: String,
}

/// What the serving certificate is for.
#[derive(Clone, Debug)]
pub struct ServingSpec {
    pub service: String,
    pub namespace: String,
    /// Cluster DNS domain (`cluster.local` by default).
    pub dns_domain: String,
    /// Extra SANs (host names or IP addresses), e.g. `localhost` for tests.
    pub extra_sans: Vec<String>,
    pub days: u32,
}

impl ServingSpec {
    pub fn new(service: impl Into<String>, namespace: impl Into<String>) -> Self {
        ServingSpec {
            service: service.into(),
            namespace: namespace.into(),
            dns_domain: "cluster.local".to_string(),
            extra_sans: Vec::new(),
            days: DEFAULT_SERVING_DAYS,
        }
    }

    /// The DNS names the API server may use to reach the webhook Service.
    pub fn dns_names(&self) -> Vec<String> {
        let (svc, ns) = (&self.service, &self.namespace);
        vec![
            svc.clone(),
            format!("{svc}.{ns}"),
            format!("{svc}.{ns}.svc"),
            format!("{svc}.{ns}.svc.{}", self.dns_domain),
        ]
    }
}

fn ca_params(days: u32, now: OffsetDateTime) -> CertificateParams {
    let mut params = CertificateParams::default();
    let mut dn = DistinguishedName::new();
    dn.push(DnType::CommonName, CA_COMMON_NAME);
    params.distinguished_name = dn;
    params.is_ca = IsCa::Ca(BasicConstraints::Constrained(0));
    params.key_usages = vec![
        KeyUsagePurpose::KeyCertSign,
        KeyUsagePurpose::CrlSign,
        KeyUsagePurpose::DigitalSignature,
    ];
    // Back-date a little so clocks that lag the issuer's do not reject a brand-new certificate.
    params.not_before = now - Duration::minutes(5);
    params.not_after = now + Duration::days(i64::from(days));
    params
}

/// Generates a new CA valid for `days` days from `now`.
pub fn generate_ca(days: u32, now: OffsetDateTime) -> Result<Ca, CertError> {
    let key = KeyPair::generate_for(&PKCS_ECDSA_P256_SHA256)?;
    let cert = ca_params(days, now).self_signed(&key)?;
    Ok(Ca {
        cert_pem: cert.pem(),
        key_pem: key.serialize_pem(),
    })
}

/// Signs a new serving certificate (and key) for `spec` with `ca`.
///
/// The CA certificate is not parsed: it was made by [`generate_ca`], so its subject is known and
/// the issuer can be rebuilt from the key alone.
pub fn issue_serving(
    ca: &Ca,
    spec: &ServingSpec,
    now: OffsetDateTime,
) -> Result<Bundle, CertError> {
    if spec.days == 0 || spec.days > MAX_SERVING_DAYS {
        return Err(CertError::Validity(spec.days));
    }
    if spec.service.is_empty() || spec.namespace.is_empty() {
        return Err(CertError::EmptyName);
    }
    let ca_key = KeyPair::from_pem(&ca.key_pem).map_err(CertError::CaKey)?;
    let issuer = Issuer::new(ca_params(DEFAULT_CA_DAYS, now), ca_key);

    let mut params = CertificateParams::default();
    let mut dn = DistinguishedName::new();
    dn.push(
        DnType::CommonName,
        format!("{}.{}.svc", spec.service, spec.namespace),
    );
    params.distinguished_name = dn;
    let mut sans = Vec::new();
    for name in spec
        .dns_names()
        .into_iter()
        .chain(spec.extra_sans.iter().cloned())
    {
        let san = match name.parse::<IpAddr>() {
            Ok(ip) => SanType::IpAddress(ip),
            Err(_) => SanType::DnsName(name.try_into()?),
        };
        sans.push(san);
    }
    params.subject_alt_names = sans;
    params.key_usages = vec![KeyUsagePurpose::DigitalSignature];
    params.extended_key_usages = vec![ExtendedKeyUsagePurpose::ServerAuth];
    params.use_authority_key_identifier_extension = true;
    params.not_before = now - Duration::minutes(5);
    params.not_after = now + Duration::days(i64::from(spec.days));

    let key = KeyPair::generate_for(&PKCS_ECDSA_P256_SHA256)?;
    let cert = params.signed_by(&key, &issuer)?;
    Ok(Bundle {
        ca: ca.clone(),
        cert_pem: cert.pem(),
        key_pem: key.serialize_pem(),
    })
}

/// Generates a fresh CA and a serving certificate signed by it.
pub fn generate(spec: &ServingSpec, ca_days: u32) -> Result<Bundle, CertError> {
    let now = OffsetDateTime::now_utc();
    let ca = generate_ca(ca_days.max(spec.days), now)?;
    issue_serving(&ca, spec, now)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dns_names_cover_every_form_the_api_server_uses() {
        let spec = ServingSpec::new("aws-load-balancer-webhook-service", "kube-system");
        assert_eq!(
            spec.dns_names(),
            vec![
                "aws-load-balancer-webhook-service",
                "aws-load-balancer-webhook-service.kube-system",
                "aws-load-balancer-webhook-service.kube-system.svc",
                "aws-load-balancer-webhook-service.kube-system.svc.cluster.local",
            ]
        );
    }

    #[test]
    fn refuses_serving_certificates_longer_than_a_year() {
        let ca = generate_ca(30, OffsetDateTime::now_utc()).unwrap();
        let mut spec = ServingSpec::new("svc", "ns");
        spec.days = 3650;
        let err = issue_serving(&ca, &spec, OffsetDateTime::now_utc()).unwrap_err();
        assert!(err.to_string().contains("between 1 and 365 days"), "{err}");
        spec.days = 0;
        assert!(issue_serving(&ca, &spec, OffsetDateTime::now_utc()).is_err());
    }

    #[test]
    fn empty_names_are_rejected() {
        let ca = generate_ca(30, OffsetDateTime::now_utc()).unwrap();
        let spec = ServingSpec::new("", "ns");
        assert!(matches!(
            issue_serving(&ca, &spec, OffsetDateTime::now_utc()),
            Err(CertError::EmptyName)
        ));
    }

    #[test]
    fn renewal_reuses_the_ca_and_changes_the_key() {
        let now = OffsetDateTime::now_utc();
        let ca = generate_ca(60, now).unwrap();
        let spec = ServingSpec::new("svc", "ns");
        let a = issue_serving(&ca, &spec, now).unwrap();
        let b = issue_serving(&ca, &spec, now).unwrap();
        assert_eq!(a.ca.cert_pem, b.ca.cert_pem);
        assert_ne!(a.key_pem, b.key_pem);
        assert!(a.cert_pem.starts_with("-----BEGIN CERTIFICATE-----"));
        assert!(a.key_pem.contains("PRIVATE KEY"));
    }
}
