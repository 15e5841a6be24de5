//! AWS Certificate Manager: the reads ACM certificate discovery makes (upstream's
//! `pkg/certs/cert_discovery.go`), behind a narrow trait like ELBv2/EC2. Nothing here writes.

use async_trait::async_trait;

use super::error::Result;
use super::types::Tags;

/// Every ACM key algorithm, as upstream passes them in `Includes.KeyTypes`: without this filter
/// ListCertificates returns only RSA_1024 and RSA_2048 certificates.
pub const KEY_ALGORITHMS: [&str; 7] = [
    "EC_prime256v1",
    "EC_secp384r1",
    "EC_secp521r1",
    "RSA_1024",
    "RSA_2048",
    "RSA_3072",
    "RSA_4096",
];

/// The key types ListCertificates returns when no key type filter is given (AWS's default).
pub const DEFAULT_KEY_ALGORITHMS: [&str; 2] = ["RSA_1024", "RSA_2048"];

/// Which certificates to list (ListCertificates `CertificateStatuses` and `Includes.KeyTypes`);
/// empty lists send no filter.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct CertificateQuery {
    pub statuses: Vec<String>,
    pub key_types: Vec<String>,
}

/// One entry of ListCertificates.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct CertificateSummary {
    pub arn: String,
    pub domain_name: String,
    pub status: String,
    pub key_algorithm: String,
}

/// What DescribeCertificate tells about one certificate.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct CertificateDetail {
    pub arn: String,
    pub domain_name: String,
    /// The names the certificate is valid for (ACM lists the domain name here too).
    pub subject_alternative_names: Vec<String>,
    /// `ISSUED`, `PENDING_VALIDATION`, `EXPIRED`...
    pub status: String,
    /// `IMPORTED`, `AMAZON_ISSUED` or `PRIVATE`.
    pub cert_type: String,
    /// The private CA that issued it (none for imported and Amazon-issued certificates).
    pub certificate_authority_arn: Option<String>,
}

/// AWS Certificate Manager (reads only).
#[async_trait]
pub trait Acm: Send + Sync {
    /// Every certificate matching `q` (all pages).
    async fn list_certificates(&self, q: &CertificateQuery) -> Result<Vec<CertificateSummary>>;
    async fn describe_certificate(&self, arn: &str) -> Result<CertificateDetail>;
    async fn list_tags_for_certificate(&self, arn: &str) -> Result<Tags>;
}
