//! AWS Certificate Manager behind a narrow trait like ELBv2/EC2: the reads ACM certificate
//! discovery makes (upstream's `pkg/certs/cert_discovery.go`), and the requests, tags and
//! deletes of the certificates the controller creates for Ingresses (`create-acm-cert`, gate
//! `EnableCertificateManagement`; upstream's `pkg/aws/services/acm.go`).

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
    /// `SubjectAlternativeNameSummaries`: the first 100 names (empty where an emulator leaves
    /// them out).
    pub subject_alternative_names: Vec<String>,
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
    /// When it was requested (`CreatedAt`, seconds since the epoch; none for imported ones).
    pub created_at: Option<i64>,
    /// Why it failed (`FailureReason`), when its status is `FAILED`.
    pub failure_reason: Option<String>,
    /// How each name is validated (`DomainValidationOptions`, Amazon-issued certificates).
    pub domain_validation: Vec<DomainValidation>,
}

/// One name's validation (DescribeCertificate `DomainValidationOptions`).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct DomainValidation {
    pub domain_name: String,
    /// `DNS`, `EMAIL` or `HTTP`.
    pub validation_method: String,
    /// The DNS record ACM looks for, once ACM has made it up (a few seconds after the request).
    pub resource_record: Option<ValidationRecord>,
}

/// A DNS validation record (`ResourceRecord`): `name` and `value` as ACM gives them.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Default)]
pub struct ValidationRecord {
    pub name: String,
    /// `CNAME`.
    pub record_type: String,
    pub value: String,
}

/// RequestCertificate's parameters; `None` and empty lists are not sent.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct CertificateRequest {
    pub domain_name: String,
    pub subject_alternative_names: Vec<String>,
    /// `DNS` or `EMAIL`.
    pub validation_method: Option<String>,
    /// The private CA (a `PRIVATE` certificate).
    pub certificate_authority_arn: Option<String>,
    pub key_algorithm: Option<String>,
    pub tags: Tags,
}

/// AWS Certificate Manager.
#[async_trait]
pub trait Acm: Send + Sync {
    /// Every certificate matching `q` (all pages).
    async fn list_certificates(&self, q: &CertificateQuery) -> Result<Vec<CertificateSummary>>;
    async fn describe_certificate(&self, arn: &str) -> Result<CertificateDetail>;
    async fn list_tags_for_certificate(&self, arn: &str) -> Result<Tags>;
    /// Requests a certificate (with its tags); returns its ARN.
    async fn request_certificate(&self, req: &CertificateRequest) -> Result<String>;
    /// Fails with [`super::AwsError::InUse`] while a listener still uses it.
    async fn delete_certificate(&self, arn: &str) -> Result<()>;
    /// Adds the tags, or sets the values of those it has.
    async fn add_tags_to_certificate(&self, arn: &str, tags: &Tags) -> Result<()>;
}
