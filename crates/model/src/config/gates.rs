//! `--feature-gates`: upstream's names and defaults, and the gates this build refuses.

use std::collections::BTreeMap;

use super::{invalid, ConfigError};
use crate::goflags::parse_bool_map;

/// Feature gates with upstream's names and defaults (`--feature-gates`); one list, shared with the model.
pub use crate::model::config::FEATURE_GATE_DEFAULTS;

/// Gates upstream knows that this build refuses to turn on, with what is missing (none today:
/// the last one, `GlobalAcceleratorController`, has its controller and webhook).
pub const UNSUPPORTED_GATES: &[(&str, &str)] = &[];

/// Parses `--feature-gates` over upstream's defaults; unknown names are an error as upstream.
pub fn feature_gates(raw: &str) -> Result<BTreeMap<String, bool>, ConfigError> {
    let mut gates: BTreeMap<String, bool> = FEATURE_GATE_DEFAULTS
        .iter()
        .map(|(k, v)| (k.to_string(), *v))
        .collect();
    for (k, v) in parse_bool_map(raw).map_err(|e| invalid("feature-gates", raw, e))? {
        match gates.get_mut(&k) {
            Some(slot) => *slot = v,
            None => return Err(ConfigError::UnknownFeature(k)),
        }
    }
    // Upstream serves fail-closed webhooks under these gates; we do not implement what is behind
    // them, so refusing to start beats registering paths nobody serves or admitting objects
    // nothing will act on.
    for (gate, what) in UNSUPPORTED_GATES {
        if gates.get(*gate) == Some(&true) {
            return Err(invalid(
                "feature-gates",
                raw,
                format!(
                    "{gate} is not supported by this build ({what}); remove it or set {gate}=false"
                ),
            ));
        }
    }
    Ok(gates)
}
