//! Inputs this build parses but does not deploy yet (ACM certificate creation). Nothing is
//! accepted and ignored: a member asking for one fails to build with the annotation named,
//! before any AWS call, so it keeps its last deployed configuration (or the group waits)
//! instead of being served without what it asked for.

use crate::annotations::{self as ann, suffix};
use crate::model::config::ModelConfig;
use crate::model::error::Fail;
use crate::model::group::ClassifiedIngress;

/// The refusal for `what`, set by the annotation (or class field) `key`.
pub fn refuse(key: String, what: &str) -> Fail {
    // The key leads the message: the event a user sees carries only the message.
    let message = format!("{key}: {what} is not deployed by this build of the controller yet; refused before any AWS change rather than served without it");
    Fail::at(key, message)
}

/// Load-balancer level features of one member (its annotations and IngressClassParams).
pub fn member_features(m: &ClassifiedIngress<'_>, cfg: &ModelConfig) -> Result<(), Fail> {
    let a = m.annotations();
    if ann::bool(a, suffix::CREATE_ACM_CERT)?.unwrap_or(false)
        && cfg.gate("EnableCertificateManagement")
    {
        return Err(refuse(
            ann::key(suffix::CREATE_ACM_CERT),
            "ACM certificate creation",
        ));
    }
    Ok(())
}

#[cfg(test)]
#[path = "not_deployed_tests.rs"]
mod tests;
