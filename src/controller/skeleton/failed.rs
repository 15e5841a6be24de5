//! A failed step of a reconcile as upstream reports it: a Warning event with the step's reason
//! (`FailedDeployModel`) and the note `Failed <step> due to <error>`. The error metric of the
//! step is [`Reconciles::staged`](crate::controller::metrics::Reconciles::staged)'s.

use std::fmt::Display;
use std::future::Future;

use kube::Resource;

use crate::controller::Events;

/// Upstream's event reasons (`pkg/k8s/events.go`).
pub mod reason {
    pub const FAILED_ADD_FINALIZER: &str = "FailedAddFinalizer";
    pub const FAILED_REMOVE_FINALIZER: &str = "FailedRemoveFinalizer";
    pub const FAILED_UPDATE_STATUS: &str = "FailedUpdateStatus";
    pub const FAILED_BUILD_MODEL: &str = "FailedBuildModel";
    pub const FAILED_DEPLOY_MODEL: &str = "FailedDeployModel";
    /// A Service's status could not be cleared after its stack went.
    pub const FAILED_CLEANUP_STATUS: &str = "FailedCleanupStatus";
    /// A TargetGroupBinding's targets could not be deregistered.
    pub const FAILED_CLEANUP: &str = "FailedCleanup";
    /// A TargetGroupBinding's pass failed (on top of the failed step's own reason).
    pub const FAILED_RECONCILE: &str = "FailedReconcile";
    pub const SUCCESSFULLY_RECONCILED: &str = "SuccessfullyReconciled";
    /// Ours: a setting the model carries but this build does not act on (the model's warnings).
    pub const UNSUPPORTED_CONFIGURATION: &str = "UnsupportedConfiguration";
}

/// A step that failed: its event reason and the words of its note.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Failed {
    reason: &'static str,
    step: &'static str,
}

impl Failed {
    pub const ADD_FINALIZER: Failed = Failed::step(reason::FAILED_ADD_FINALIZER, "add finalizer");
    pub const BUILD_MODEL: Failed = Failed::step(reason::FAILED_BUILD_MODEL, "build model");
    pub const DEPLOY_MODEL: Failed = Failed::step(reason::FAILED_DEPLOY_MODEL, "deploy model");
    pub const UPDATE_STATUS: Failed = Failed::step(reason::FAILED_UPDATE_STATUS, "update status");
    pub const REMOVE_FINALIZER: Failed =
        Failed::step(reason::FAILED_REMOVE_FINALIZER, "remove finalizer");
    /// Upstream words a failed Service status cleanup as a status update, under its own reason.
    pub const CLEANUP_STATUS: Failed = Failed::step(reason::FAILED_CLEANUP_STATUS, "update status");
    pub const CLEANUP: Failed = Failed::step(reason::FAILED_CLEANUP, "cleanup");
    pub const RECONCILE: Failed = Failed::step(reason::FAILED_RECONCILE, "reconcile");

    /// A step of `reason` whose note reads `Failed <step> due to ...` (upstream's Gateway
    /// controller says `add gateway finalizer`).
    pub const fn step(reason: &'static str, step: &'static str) -> Failed {
        Failed { reason, step }
    }

    pub fn reason(&self) -> &'static str {
        self.reason
    }

    /// Upstream's note for `error`.
    pub fn note(&self, error: &dyn Display) -> String {
        format!("Failed {} due to {error}", self.step)
    }
}

impl Events {
    /// A Warning on `obj`.
    pub async fn warn_on<K>(&self, obj: &K, reason: &str, note: String)
    where
        K: Resource<DynamicType = ()>,
    {
        self.warning(&obj.object_ref(&()), reason, note).await
    }

    /// `step` failed on `obj` with `error`: upstream's Warning. (The note is written before the
    /// future is made, so the future holds no reference to the error.)
    pub fn failed<'a, K: Resource<DynamicType = ()>>(
        &'a self,
        obj: &'a K,
        step: Failed,
        error: &dyn Display,
    ) -> impl Future<Output = ()> + 'a {
        let note = step.note(error);
        self.warn_on(obj, step.reason(), note)
    }

    /// Passes `result` through; on an error first warns every object of `on` that `step` failed.
    pub async fn warned<K, T, E>(
        &self,
        on: &[&K],
        step: Failed,
        result: Result<T, E>,
    ) -> Result<T, E>
    where
        K: Resource<DynamicType = ()>,
        E: Display,
    {
        let note = result.as_ref().err().map(|e| step.note(e));
        if let Some(note) = note {
            for obj in on {
                self.warn_on(*obj, step.reason(), note.clone()).await;
            }
        }
        result
    }
}
