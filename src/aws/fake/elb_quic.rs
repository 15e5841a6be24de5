//! AWS's QUIC server-id rules on the fake's targets: an id on every target of a QUIC or
//! TCP_QUIC target group and on no other, in AWS's format, and the same id for as long as the
//! target stays registered.
//!
//! AWS documents the rules (`TargetDescription.QuicServerId`) but not the error texts; the fake
//! answers `ValidationError` with the messages below.

use crate::aws::error::{AwsError, Result};
use crate::aws::types::{protocol_takes_quic_server_id, TargetDescription, TargetGroup};

/// `0x` followed by 16 lowercase hexadecimal digits, as AWS documents the id.
pub(crate) fn is_valid_server_id(id: &str) -> bool {
    id.strip_prefix("0x").is_some_and(|hex| {
        hex.len() == 16
            && hex
                .bytes()
                .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b))
    })
}

fn target_text(t: &TargetDescription) -> String {
    match t.port {
        Some(p) => format!("{}:{p}", t.id),
        None => t.id.clone(),
    }
}

/// Checks one target of a RegisterTargets or DeregisterTargets call on `tg`. `registered` is
/// the target as the group holds it (for RegisterTargets: only while not draining, since a
/// draining target may come back with a new id).
pub(super) fn check_target(
    tg: &TargetGroup,
    t: &TargetDescription,
    registered: Option<&TargetDescription>,
) -> Result<()> {
    let protocol = tg.protocol.as_deref().unwrap_or_default();
    let quic = protocol_takes_quic_server_id(protocol);
    match (t.quic_server_id.as_deref(), quic) {
        (None, true) => {
            return Err(AwsError::validation(format!(
                "A QUIC server ID must be specified for target '{}' of a target group with protocol '{protocol}'",
                target_text(t)
            )))
        }
        (Some(_), false) => {
            return Err(AwsError::validation(format!(
                "A QUIC server ID can only be specified for targets of target groups with protocol QUIC or TCP_QUIC, not '{protocol}' (target '{}')",
                target_text(t)
            )))
        }
        (Some(id), true) if !is_valid_server_id(id) => {
            return Err(AwsError::validation(format!(
                "QUIC server ID '{id}' of target '{}' is not valid: it must be 0x followed by 16 lowercase hexadecimal characters",
                target_text(t)
            )))
        }
        _ => {}
    }
    if let Some(have) = registered.and_then(|r| r.quic_server_id.as_deref()) {
        if t.quic_server_id.as_deref() != Some(have) {
            return Err(AwsError::validation(format!(
                "Target '{}' is registered with QUIC server ID '{have}'; the server ID of a registered target cannot be changed",
                target_text(t)
            )));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_id_is_0x_and_16_lowercase_hex_digits() {
        assert!(is_valid_server_id("0x0123456789abcdef"));
        assert!(!is_valid_server_id("0x0123456789ABCDEF"), "uppercase");
        assert!(!is_valid_server_id("0x0123456789abcde"), "15 digits");
        assert!(!is_valid_server_id("0123456789abcdef00"), "no 0x");
        assert!(!is_valid_server_id("0x0123456789abcdeg"), "not hex");
    }
}
