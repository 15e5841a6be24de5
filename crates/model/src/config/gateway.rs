//! Gateway API switches: the `ALBGatewayAPI`, `NLBGatewayAPI` and `GatewayListenerSet` gates
//! (remembering which ones the user set, for upstream's CRD detection) and the three Gateway
//! concurrency flags.

use std::collections::{BTreeMap, BTreeSet};

use super::{invalid, ConfigError};
use crate::args::ReconcileArgs;
use crate::goflags::parse_bool_map;

/// Gate of the ALB Gateway controller (HTTPRoute, GRPCRoute).
pub const ALB_GATEWAY_API: &str = "ALBGatewayAPI";
/// Gate of the NLB Gateway controller (TCPRoute, UDPRoute, TLSRoute).
pub const NLB_GATEWAY_API: &str = "NLBGatewayAPI";
/// Gate of ListenerSet support.
pub const GATEWAY_LISTENER_SET: &str = "GatewayListenerSet";

/// Group/version of the Gateway API kinds CRD detection looks for.
pub const GATEWAY_V1: &str = "gateway.networking.k8s.io/v1";
/// Group/version of the controller's own Gateway configuration kinds.
pub const LBC_GATEWAY_V1: &str = "gateway.k8s.aws/v1";

const LBC_KINDS: [&str; 3] = [
    "TargetGroupConfiguration",
    "LoadBalancerConfiguration",
    "ListenerRuleConfiguration",
];
const ALB_KINDS: [&str; 4] = ["Gateway", "GatewayClass", "HTTPRoute", "GRPCRoute"];
const NLB_KINDS: [&str; 5] = [
    "Gateway",
    "GatewayClass",
    "TLSRoute",
    "TCPRoute",
    "UDPRoute",
];

/// One gate's value and whether `--feature-gates` named it (upstream's `IsDefaulted`, negated).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Gate {
    pub enabled: bool,
    pub explicit: bool,
}

/// The Gateway API part of the configuration.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GatewayConfig {
    pub alb: Gate,
    pub nlb: Gate,
    pub listener_set: Gate,
    /// `--alb-gateway-max-concurrent-reconciles` (default 3).
    pub alb_max_concurrent_reconciles: u32,
    /// `--nlb-gateway-max-concurrent-reconciles` (default 3).
    pub nlb_max_concurrent_reconciles: u32,
    /// `--gateway-class-max-concurrent-reconciles` (default 3).
    pub gateway_class_max_concurrent_reconciles: u32,
}

/// A gate CRD detection turned off: upstream's (Info-level) log message and the missing kinds.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DisabledGate {
    pub message: String,
    pub missing: Vec<String>,
}

impl GatewayConfig {
    /// From the already-validated gate map, the raw `--feature-gates` text (to know which gates
    /// were set) and the concurrency flags, which must be at least 1.
    pub fn from_flags(
        gates: &BTreeMap<String, bool>,
        raw_gates: &str,
        rc: &ReconcileArgs,
    ) -> Result<Self, ConfigError> {
        let named = parse_bool_map(raw_gates).unwrap_or_default();
        let gate = |name: &str| Gate {
            enabled: gates.get(name).copied().unwrap_or(false),
            explicit: named.contains_key(name),
        };
        for (flag, v) in [
            (
                "alb-gateway-max-concurrent-reconciles",
                rc.alb_gateway_max_concurrent_reconciles,
            ),
            (
                "nlb-gateway-max-concurrent-reconciles",
                rc.nlb_gateway_max_concurrent_reconciles,
            ),
            (
                "gateway-class-max-concurrent-reconciles",
                rc.gateway_class_max_concurrent_reconciles,
            ),
        ] {
            if v == 0 {
                return Err(invalid(flag, "0", "must be at least 1"));
            }
        }
        Ok(GatewayConfig {
            alb: gate(ALB_GATEWAY_API),
            nlb: gate(NLB_GATEWAY_API),
            listener_set: gate(GATEWAY_LISTENER_SET),
            alb_max_concurrent_reconciles: rc.alb_gateway_max_concurrent_reconciles,
            nlb_max_concurrent_reconciles: rc.nlb_gateway_max_concurrent_reconciles,
            gateway_class_max_concurrent_reconciles: rc.gateway_class_max_concurrent_reconciles,
        })
    }

    /// Upstream skips CRD detection only when the user set all three gates.
    pub fn crd_detection_needed(&self) -> bool {
        !(self.alb.explicit && self.nlb.explicit && self.listener_set.explicit)
    }

    /// Upstream's CRD detection over the kinds the API server serves (group/version → kinds):
    /// turns off each gate whose kinds are missing and returns what to log. As upstream, the ALB
    /// gate is turned off even when set explicitly; the NLB and ListenerSet gates only when
    /// defaulted.
    pub fn apply_crd_detection(
        &mut self,
        served: &BTreeMap<String, BTreeSet<String>>,
    ) -> Vec<DisabledGate> {
        if !self.crd_detection_needed() {
            return Vec::new();
        }
        let missing = |wanted: &[(&str, &[&str])]| -> Vec<String> {
            wanted
                .iter()
                .flat_map(|(gv, kinds)| {
                    kinds
                        .iter()
                        .filter(move |k| !served.get(*gv).is_some_and(|s| s.contains(**k)))
                        .map(|k| k.to_string())
                })
                .collect()
        };
        let mut off = Vec::new();
        let alb_missing = missing(&[(GATEWAY_V1, &ALB_KINDS), (LBC_GATEWAY_V1, &LBC_KINDS)]);
        if !alb_missing.is_empty() {
            self.alb.enabled = false;
            off.push(disabled(ALB_GATEWAY_API, alb_missing));
        }
        let nlb_missing = missing(&[(GATEWAY_V1, &NLB_KINDS), (LBC_GATEWAY_V1, &LBC_KINDS)]);
        if !nlb_missing.is_empty() && !self.nlb.explicit {
            self.nlb.enabled = false;
            off.push(disabled(NLB_GATEWAY_API, nlb_missing));
        }
        let set_missing = missing(&[(GATEWAY_V1, &["ListenerSet"])]);
        if !set_missing.is_empty() && !self.listener_set.explicit {
            self.listener_set.enabled = false;
            off.push(disabled(GATEWAY_LISTENER_SET, set_missing));
        }
        off
    }
}

fn disabled(gate: &str, missing: Vec<String>) -> DisabledGate {
    DisabledGate {
        message: format!("Disabling {gate}: missing required CRDs"),
        missing,
    }
}

#[cfg(test)]
mod tests;
