//! Pod readiness gates `target-health.elbv2.k8s.aws/<binding>`: the condition each gated pod
//! should carry given its target's health, and the status patch that writes it. Pure.

use serde_json::{json, Value};

use super::info::GateCondition;
use crate::aws::{TargetHealth, TargetHealthState};

pub use crate::crd::names::GATE_PREFIX;
pub const REASON_REGISTRATION_IN_PROGRESS: &str = "Elb.RegistrationInProgress";
pub const MESSAGE_REGISTRATION_IN_PROGRESS: &str = "Target registration is in progress";
pub const MESSAGE_BINDING_DELETED: &str = "Target Group Binding is deleted";

/// The readiness-gate condition type of a binding.
pub fn condition_type(binding: &str) -> String {
    format!("{GATE_PREFIX}{binding}")
}

/// What a gate condition should say (empty strings mean "not set").
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Desired {
    pub status: &'static str,
    pub reason: String,
    pub message: String,
}

impl Desired {
    pub fn is_true(&self) -> bool {
        self.status == "True"
    }

    /// The condition after a binding is deleted: the gate must not hold pods back any more.
    pub fn binding_deleted() -> Desired {
        Desired {
            status: "True",
            reason: String::new(),
            message: MESSAGE_BINDING_DELETED.into(),
        }
    }

    /// The condition of a pod a QUIC binding cannot register: it has no server id.
    pub fn quic_server_id_missing() -> Desired {
        Desired {
            status: "False",
            reason: super::quic::REASON_MISSING.into(),
            message: super::quic::GATE_MESSAGE_MISSING.into(),
        }
    }
}

/// The condition for a target: registered by this very reconcile ⇒ False/RegistrationInProgress;
/// healthy ⇒ True; any other state ⇒ False with AWS's reason and description; not found in the
/// target group ⇒ Unknown.
pub fn desired_condition(health: Option<&TargetHealth>, just_registered: bool) -> Desired {
    if just_registered {
        return Desired {
            status: "False",
            reason: REASON_REGISTRATION_IN_PROGRESS.into(),
            message: MESSAGE_REGISTRATION_IN_PROGRESS.into(),
        };
    }
    match health {
        None => Desired {
            status: "Unknown",
            reason: String::new(),
            message: String::new(),
        },
        Some(h) => Desired {
            status: if h.state == TargetHealthState::Healthy {
                "True"
            } else {
                "False"
            },
            reason: h.reason.clone().unwrap_or_default(),
            message: h.description.clone().unwrap_or_default(),
        },
    }
}

/// The condition to write, or `None` when the pod already says exactly this.
/// `lastTransitionTime` moves only when the status flips.
pub fn next_condition(
    type_: &str,
    existing: Option<&GateCondition>,
    desired: &Desired,
    now: &str,
) -> Option<GateCondition> {
    let s = |o: &Option<String>| o.clone().unwrap_or_default();
    if let Some(e) = existing {
        if e.status == desired.status
            && s(&e.reason) == desired.reason
            && s(&e.message) == desired.message
        {
            return None;
        }
    }
    let keep = existing.filter(|e| e.status == desired.status);
    let opt = |v: &str| (!v.is_empty()).then(|| v.to_string());
    Some(GateCondition {
        type_: type_.to_string(),
        status: desired.status.to_string(),
        reason: opt(&desired.reason),
        message: opt(&desired.message),
        last_transition_time: keep
            .and_then(|e| e.last_transition_time.clone())
            .or_else(|| Some(now.to_string())),
    })
}

/// Seconds a gate took to turn True (`awslbc_readiness_gate_ready_seconds`): only on a flip from
/// a not-True condition with a known `lastTransitionTime`, measured between the two times, as
/// upstream observes it.
pub fn ready_flip_seconds(existing: Option<&GateCondition>, next: &GateCondition) -> Option<f64> {
    let e = existing?;
    if next.status != "True" || e.status == "True" {
        return None;
    }
    let at = |c: &GateCondition| {
        c.last_transition_time
            .as_deref()?
            .parse::<k8s_openapi::jiff::Timestamp>()
            .ok()
    };
    let secs = at(next)?.duration_since(at(e)?).as_secs_f64();
    Some(secs.max(0.0))
}

/// Strategic-merge body for `pods/<name>/status`: conditions merge by `type`, and the UID in
/// metadata makes the server refuse the patch if the pod was replaced by a namesake.
pub fn status_patch(uid: &str, c: &GateCondition) -> Value {
    // Absent reason/message are sent as null so a stale value of the previous state is removed.
    let cond = json!({
        "type": c.type_,
        "status": c.status,
        "reason": c.reason,
        "message": c.message,
        "lastProbeTime": null,
        "lastTransitionTime": c.last_transition_time,
    });
    json!({ "metadata": { "uid": uid }, "status": { "conditions": [cond] } })
}
