//! ACM certificates of an Ingress group's members, as upstream's `model_build_certificates.go`:
//! with gate `EnableCertificateManagement` on, a member with `create-acm-cert: "true"` and no
//! explicit certificate (`certificate-arn`, or its IngressClassParams' `certificateArn`) gets
//! one certificate for every host of its rules and TLS sections: Amazon-issued and validated by
//! DNS, or private when `acm-pca-arn` (else `--default-pca-arn`) names a CA. A member asking for
//! one without any host fails its build, before any AWS call.

use std::collections::BTreeMap;

use super::listener::tls_hosts;
use crate::annotations::{self as ann, suffix};
use crate::model::config::ModelConfig;
use crate::model::error::{Fail, ModelError};
use crate::model::group::ClassifiedIngress;
use crate::model::naming::sha256_hex;
use crate::model::tags::TagContext;
use crate::model::types::{Certificate, CertificateType, VALIDATION_METHOD_DNS};

/// The feature gate that turns certificate creation on (off by default, as upstream).
pub const GATE: &str = "EnableCertificateManagement";

/// Every member's certificate, sorted by resource id; a member's own error names it.
pub(super) fn build(
    members: &[ClassifiedIngress<'_>],
    cfg: &ModelConfig,
    tags: &TagContext<'_>,
) -> Result<Vec<Certificate>, ModelError> {
    let mut out = Vec::new();
    for m in members {
        if let Some(c) = member_certificate(m, cfg, tags).map_err(|f| f.on(&m.key()))? {
            out.push(c);
        }
    }
    out.sort_by(|a, b| a.id.cmp(&b.id));
    Ok(out)
}

/// The certificate one member asks for, if any.
pub fn member_certificate(
    m: &ClassifiedIngress<'_>,
    cfg: &ModelConfig,
    tags: &TagContext<'_>,
) -> Result<Option<Certificate>, Fail> {
    if !cfg.gate(GATE) {
        return Ok(None);
    }
    let a = m.annotations();
    if !ann::bool(a, suffix::CREATE_ACM_CERT)?.unwrap_or(false) {
        return Ok(None);
    }
    // Explicit certificates win, so none is created that no listener would use (upstream's
    // docs; its builder only looks at the annotation and would still request one when the
    // class names certificates).
    let class_certs = m.params.is_some_and(|p| !p.spec.certificate_arn.is_empty());
    let annotation_certs =
        ann::string_list(a, suffix::CERTIFICATE_ARN).is_some_and(|l| !l.is_empty());
    if class_certs || annotation_certs {
        return Ok(None);
    }
    let hosts: Vec<String> = tls_hosts(m).into_iter().collect();
    let Some(domain_name) = hosts.first().cloned() else {
        return Err(Fail::at(
            ann::key(suffix::CREATE_ACM_CERT),
            format!(
                "ingress {} has create-acm-cert enabled but no hostnames defined in spec.rules[].host or spec.tls[].hosts — cannot create a certificate without at least one hostname",
                m.key()
            ),
        ));
    };
    // An empty annotation does not override the controller's CA (upstream's docs).
    let ca = ann::string(a, suffix::ACM_PCA_ARN)
        .filter(|v| !v.is_empty())
        .map(String::from)
        .or_else(|| cfg.default_pca_arn.clone().filter(|v| !v.is_empty()));
    let cert_type = match ca {
        Some(_) => CertificateType::Private,
        None => CertificateType::AmazonIssued,
    };
    let id = resource_id(cert_type, &domain_name, &m.key());
    let tags = certificate_tags(tags, &id, tags.ingress_user_tags(m)?);
    Ok(Some(Certificate {
        id,
        ingress: m.key(),
        cert_type,
        certificate_authority_arn: ca,
        domain_name,
        subject_alternative_names: hosts,
        validation_method: VALIDATION_METHOD_DNS.to_string(),
        key_algorithm: None,
        tags,
    }))
}

/// Upstream's resource id: one per Ingress (the hash of `ns/name`), even when two members
/// share their hosts; the domain's `*` is spelled `wildcard` because ACM tag values refuse it.
pub fn resource_id(cert_type: CertificateType, domain_name: &str, ingress: &str) -> String {
    let hash = sha256_hex(&[ingress]);
    format!(
        "{}/{}-{}",
        cert_type.as_str().to_ascii_lowercase(),
        domain_name.replace('*', "wildcard"),
        &hash[..8]
    )
}

/// The member's tags with `--default-tags` over them (upstream merges the defaults first for
/// certificates, whatever `EnableDefaultTagsLowPriority` says), then the tracking tags.
fn certificate_tags(
    ctx: &TagContext<'_>,
    id: &str,
    user: BTreeMap<String, String>,
) -> BTreeMap<String, String> {
    let mut tags = user;
    tags.extend(ctx.cfg.default_tags.clone());
    tags.extend(ctx.stack_tags());
    tags.insert(format!("{}/resource", ctx.prefix), id.to_string());
    tags
}

#[cfg(test)]
#[path = "certificate_tests.rs"]
mod tests;
