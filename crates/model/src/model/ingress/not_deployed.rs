//! Inputs this build parses but does not deploy yet (a forward to a target group by name, which
//! upstream looks up in ELBv2 while building). Nothing is accepted and ignored: a member asking
//! for one fails to build with the annotation named, before any AWS call, so it keeps its last
//! deployed configuration (or the group waits) instead of being served without what it asked
//! for.

use crate::model::error::Fail;

/// The refusal for `what`, set by the annotation (or class field) `key`.
pub fn refuse(key: String, what: &str) -> Fail {
    // The key leads the message: the event a user sees carries only the message.
    let message = format!("{key}: {what} is not deployed by this build of the controller yet; refused before any AWS change rather than served without it");
    Fail::at(key, message)
}

#[cfg(test)]
#[path = "not_deployed_tests.rs"]
mod tests;
