//! ACM certificates the controller requests for Ingresses (`create-acm-cert`, gate
//! `EnableCertificateManagement`), upstream's `pkg/model/acm`: one per member that asks, valid
//! for every host of its rules and TLS sections, and how an HTTPS listener's certificate list
//! refers to it before it exists (`Token::CertificateArn`).

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use super::{merge_members, Listener, MemberCertificates, Stack, Token};

/// Who issues the certificate: ACM itself after DNS validation, or a private CA.
#[derive(Serialize, Deserialize, Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum CertificateType {
    #[serde(rename = "AMAZON_ISSUED")]
    AmazonIssued,
    #[serde(rename = "PRIVATE")]
    Private,
}

impl CertificateType {
    /// ACM's name (`AMAZON_ISSUED`, `PRIVATE`).
    pub fn as_str(&self) -> &'static str {
        match self {
            CertificateType::AmazonIssued => "AMAZON_ISSUED",
            CertificateType::Private => "PRIVATE",
        }
    }
}

/// The validation method upstream requests every certificate with (e-mail validation takes too
/// long for a reconcile to wait on; private certificates are not validated at all).
pub const VALIDATION_METHOD_DNS: &str = "DNS";

/// One certificate to request in ACM.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, Eq)]
#[serde(rename_all = "camelCase")]
pub struct Certificate {
    /// Upstream's resource id, `<type in lower case>/<domain name>-<8 hex of sha256("ns/name")>`
    /// (a `*` in the domain spelled `wildcard`: tag values refuse it); the value of its
    /// `ingress.k8s.aws/resource` tag, by which a later deploy finds it again.
    pub id: String,
    /// The Ingress (`ns/name`) it is for: that member's entry in each HTTPS listener's member
    /// certificates (`Listener::certificate_discovery`) stands for this certificate's ARN.
    pub ingress: String,
    #[serde(rename = "type")]
    pub cert_type: CertificateType,
    /// The private CA of a `PRIVATE` certificate (`acm-pca-arn`, else `--default-pca-arn`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub certificate_authority_arn: Option<String>,
    /// The first host, in sorted order.
    pub domain_name: String,
    /// Every host, the domain name among them, sorted.
    pub subject_alternative_names: Vec<String>,
    pub validation_method: String,
    /// Never set by the builder, as upstream's: ACM then uses its default (RSA_2048).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub key_algorithm: Option<String>,
    /// The AWS tags it is requested with: the member's tags, `--default-tags` over them, the
    /// tracking tags over everything.
    pub tags: BTreeMap<String, String>,
}

impl Certificate {
    /// The token a listener's certificate list uses for this certificate's ARN.
    pub fn arn_token(&self) -> Token {
        Token::CertificateArn(self.id.clone())
    }
}

impl Stack {
    /// The certificate the controller requests for the member `ingress` (`ns/name`), if any.
    pub fn created_certificate(&self, ingress: &str) -> Option<&Certificate> {
        self.certificates.iter().find(|c| c.ingress == ingress)
    }

    /// One member's certificates on a listener, as tokens: the ARN of the certificate the
    /// controller creates for it, else its ARNs (explicit, or already discovered).
    pub fn member_certificate_tokens(&self, m: &MemberCertificates) -> Vec<Token> {
        match self.created_certificate(&m.ingress) {
            Some(c) if m.certificates.is_empty() && m.discovery_hosts.is_none() => {
                vec![c.arn_token()]
            }
            _ => m
                .certificates
                .iter()
                .map(|a| Token::Literal(a.clone()))
                .collect(),
        }
    }

    /// The listener's certificates in upstream's merge order (the first member's first is the
    /// default), as tokens; `None` while a member's are still to be discovered in ACM.
    pub fn listener_certificate_tokens(&self, l: &Listener) -> Option<Vec<Token>> {
        if l.certificate_discovery.is_empty() {
            return Some(
                l.certificates
                    .iter()
                    .map(|a| Token::Literal(a.clone()))
                    .collect(),
            );
        }
        if l.certificate_discovery
            .iter()
            .any(|m| m.discovery_hosts.is_some())
        {
            return None;
        }
        let lists: Vec<Vec<Token>> = l
            .certificate_discovery
            .iter()
            .map(|m| self.member_certificate_tokens(m))
            .collect();
        let refs: Vec<&[Token]> = lists.iter().map(Vec::as_slice).collect();
        Some(merge_members(&refs))
    }
}
