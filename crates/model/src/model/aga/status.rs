//! The GlobalAccelerator's status (upstream's `pkg/status/aga/status_updater.go`) as pure
//! functions of the object, what deploying found or why it failed, and the time: the new status,
//! whether it differs from the stored one (upstream patches only then), and whether to requeue
//! while AWS still provisions.

use k8s_openapi::apimachinery::pkg::apis::meta::v1::{Condition, Time};

use crate::crd::global_accelerator::{GlobalAccelerator, GlobalAcceleratorStatus, IpSet};

pub const CONDITION_READY: &str = "Ready";
pub const CONDITION_ACCELERATOR_DISABLING: &str = "AcceleratorDisabling";

pub const REASON_ACCELERATOR_READY: &str = "AcceleratorReady";
pub const REASON_ACCELERATOR_PROVISIONING: &str = "AcceleratorProvisioning";
pub const REASON_ACCELERATOR_DISABLING: &str = "AcceleratorDisabling";
pub const REASON_ACCELERATOR_DELETING: &str = "AcceleratorDeleting";
/// Failure reasons of the Ready condition (upstream's `pkg/deploy/aga/errors.go`).
pub const REASON_MODEL_BUILD_FAILED: &str = "ModelBuildFailed";
pub const REASON_DEPLOYMENT_FAILED: &str = "DeploymentFailed";
pub const REASON_ENDPOINT_LOAD_FAILED: &str = "EndpointLoadFailed";

/// AWS's accelerator statuses, and the one the controller writes while deleting.
pub const STATUS_DEPLOYED: &str = "DEPLOYED";
pub const STATUS_IN_PROGRESS: &str = "IN_PROGRESS";
pub const STATUS_DELETING: &str = "DELETING";

pub const MESSAGE_READY: &str = "GlobalAccelerator is ready and available";
pub const MESSAGE_PROVISIONING: &str = "GlobalAccelerator is being provisioned";
/// Whatever failed: the details are in the events and the logs.
pub const MESSAGE_FAILED: &str =
    "Reconciliation failed. See events and controller logs for details";
pub const MESSAGE_DISABLING: &str = "Waiting for accelerator to be disabled before deletion";
pub const MESSAGE_DELETING: &str = "GlobalAccelerator is being deleted";

/// Static addresses of one family, as AWS reports them.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct DeployedIpSet {
    pub ip_addresses: Vec<String>,
    pub ip_address_family: String,
}

/// The accelerator as deploying left it (upstream's `AcceleratorStatus`).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct DeployOutcome {
    pub accelerator_arn: String,
    pub dns_name: String,
    /// "" unless the accelerator is dual-stack.
    pub dual_stack_dns_name: String,
    pub ip_sets: Vec<DeployedIpSet>,
    /// AWS's status (`IN_PROGRESS`, `DEPLOYED`).
    pub status: String,
}

/// A status to write.
#[derive(Debug, Clone, PartialEq)]
pub struct StatusChange {
    pub status: GlobalAcceleratorStatus,
    /// Whether it differs from the object's: patch only then.
    pub changed: bool,
    /// The accelerator is not deployed yet: look again soon.
    pub requeue: bool,
}

/// Whether AWS reports the accelerator deployed.
pub fn is_deployed(status: &str) -> bool {
    status == STATUS_DEPLOYED
}

fn condition(type_: &str, status: &str, reason: &str, message: &str, now: &Time) -> Condition {
    Condition {
        type_: type_.to_string(),
        status: status.to_string(),
        last_transition_time: now.clone(),
        reason: reason.to_string(),
        message: message.to_string(),
        observed_generation: None,
    }
}

/// Puts `new` in place of the condition of its type (only when status, reason or message
/// differ, so an unchanged condition keeps its transition time), or appends it; whether
/// anything changed.
pub fn update_condition(conditions: &mut Vec<Condition>, new: Condition) -> bool {
    match conditions.iter_mut().find(|c| c.type_ == new.type_) {
        Some(existing) => {
            let differs = existing.status != new.status
                || existing.reason != new.reason
                || existing.message != new.message;
            if differs {
                *existing = new;
            }
            differs
        }
        None => {
            conditions.push(new);
            true
        }
    }
}

/// Sets `observedGeneration` to the object's generation; whether it changed.
fn observe_generation(ga: &GlobalAccelerator, status: &mut GlobalAcceleratorStatus) -> bool {
    let generation = ga.metadata.generation.unwrap_or(0);
    let changed = status.observed_generation != Some(generation);
    status.observed_generation = Some(generation);
    changed
}

fn set(field: &mut Option<String>, value: &str) -> bool {
    let changed = field.as_deref() != Some(value);
    *field = Some(value.to_string());
    changed
}

/// After a successful deploy (upstream's `UpdateStatusSuccess`): ARN, DNS names, addresses and
/// AWS's status copied, Ready True once AWS reports DEPLOYED, Unknown (and a requeue) before.
pub fn status_after_deploy(
    ga: &GlobalAccelerator,
    outcome: &DeployOutcome,
    now: &Time,
) -> StatusChange {
    let mut status = ga.status.clone().unwrap_or_default();
    let mut changed = observe_generation(ga, &mut status);
    changed |= set(&mut status.accelerator_arn, &outcome.accelerator_arn);
    changed |= set(&mut status.dns_name, &outcome.dns_name);
    if !outcome.dual_stack_dns_name.is_empty() {
        changed |= set(
            &mut status.dual_stack_dns_name,
            &outcome.dual_stack_dns_name,
        );
    } else if status.dual_stack_dns_name.take().is_some() {
        changed = true;
    }
    // No addresses reported leaves the recorded ones, as upstream.
    if !outcome.ip_sets.is_empty() {
        let ip_sets: Vec<IpSet> = outcome
            .ip_sets
            .iter()
            .map(|s| IpSet {
                ip_addresses: Some(s.ip_addresses.clone()),
                ip_address_family: Some(s.ip_address_family.clone()),
            })
            .collect();
        if status.ip_sets != ip_sets {
            status.ip_sets = ip_sets;
            changed = true;
        }
    }
    changed |= set(&mut status.status, &outcome.status);
    let deployed = is_deployed(&outcome.status);
    let ready = if deployed {
        condition(
            CONDITION_READY,
            "True",
            REASON_ACCELERATOR_READY,
            MESSAGE_READY,
            now,
        )
    } else {
        condition(
            CONDITION_READY,
            "Unknown",
            REASON_ACCELERATOR_PROVISIONING,
            MESSAGE_PROVISIONING,
            now,
        )
    };
    changed |= update_condition(&mut status.conditions, ready);
    StatusChange {
        status,
        changed,
        requeue: !deployed,
    }
}

/// After a failed reconcile (upstream's `UpdateStatusFailure`): Ready False with `reason` (one of
/// the `REASON_*_FAILED`) and the generic message; the rest of the status kept.
pub fn status_after_failure(ga: &GlobalAccelerator, reason: &str, now: &Time) -> StatusChange {
    let mut status = ga.status.clone().unwrap_or_default();
    let mut changed = observe_generation(ga, &mut status);
    changed |= update_condition(
        &mut status.conditions,
        condition(CONDITION_READY, "False", reason, MESSAGE_FAILED, now),
    );
    StatusChange {
        status,
        changed,
        requeue: false,
    }
}

/// While deleting waits for AWS to disable the accelerator (upstream's `UpdateStatusDeletion`):
/// status DELETING, AcceleratorDisabling True and Ready False.
pub fn status_while_deleting(ga: &GlobalAccelerator, now: &Time) -> StatusChange {
    let mut status = ga.status.clone().unwrap_or_default();
    let mut changed = observe_generation(ga, &mut status);
    changed |= set(&mut status.status, STATUS_DELETING);
    let disabling = update_condition(
        &mut status.conditions,
        condition(
            CONDITION_ACCELERATOR_DISABLING,
            "True",
            REASON_ACCELERATOR_DISABLING,
            MESSAGE_DISABLING,
            now,
        ),
    );
    let ready = update_condition(
        &mut status.conditions,
        condition(
            CONDITION_READY,
            "False",
            REASON_ACCELERATOR_DELETING,
            MESSAGE_DELETING,
            now,
        ),
    );
    StatusChange {
        status,
        changed: changed || disabling || ready,
        requeue: true,
    }
}

#[cfg(test)]
#[path = "status_tests.rs"]
mod tests;
