//! One reconcile of one GlobalAccelerator, in upstream's order (`reconcileGlobalAccelerator`,
//! `cleanupGlobalAccelerator`). A live object: finalizer → its endpoints recorded in the
//! reference tracker and loaded (a fatal load error: `FailedEndpointLoad`, Ready False
//! `EndpointLoadFailed`) → the stack built (`FailedBuildModel`, `ModelBuildFailed`) → deployed
//! (`FailedDeploy`, `DeploymentFailed`) → status (patched only when it differs) → a minute's
//! requeue while AWS still provisions or an endpoint did not load (with `WarningEndpoints`), else
//! `SuccessfullyReconciled`. A deleting object holding the finalizer: its accelerator disabled,
//! then (once AWS reports it `DEPLOYED`) its endpoint groups, listeners and itself deleted, the
//! status showing `DELETING` meanwhile, and only then the finalizer released.

use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;
use kube::{Resource, ResourceExt};

use super::source::{describe_if_needed, describe_listeners, CachedSource};
use super::{status, AgaError, Ctx};
use crate::controller::skeleton::{api_of, reason, Failed, Next};
use crate::controller::{add_finalizer, remove_finalizer};
use crate::crd::global_accelerator::{GlobalAccelerator, FINALIZER};
use crate::deploy::aga::{delete, deploy_with, AgaDeletion, AgaOptions};
use crate::model::aga::status::{
    REASON_DEPLOYMENT_FAILED, REASON_ENDPOINT_LOAD_FAILED, REASON_MODEL_BUILD_FAILED,
};
use crate::model::aga::{
    build_aga_stack, desired_endpoints, listeners_to_describe, load_endpoints, status_after_deploy,
    status_after_failure, status_while_deleting, LoadedEndpointStatus,
};

/// Upstream's GlobalAccelerator event reasons beyond the shared ones (`pkg/k8s/events.go`).
pub const FAILED_ENDPOINT_LOAD: &str = "FailedEndpointLoad";
pub const FAILED_DEPLOY: &str = "FailedDeploy";
pub const WARNING_ENDPOINTS: &str = "WarningEndpoints";
/// Upstream's note of [`WARNING_ENDPOINTS`].
pub const WARNING_ENDPOINTS_NOTE: &str =
    "Detected endpoints which did not load successfully. These endpoints will be rechecked shortly.";

/// `Failed to reconcile due to failed to load endpoints: ...`
const ENDPOINT_LOAD: Failed = Failed::step(FAILED_ENDPOINT_LOAD, "to reconcile");
/// `Failed to deploy stack due to ...`
const DEPLOY: Failed = Failed::step(FAILED_DEPLOY, "to deploy stack");

fn now() -> Time {
    Time(k8s_openapi::jiff::Timestamp::now())
}

/// Reconciles GlobalAccelerator `key` (`namespace/name`).
pub async fn reconcile(ctx: &Ctx, key: &str) -> Result<Next, AgaError> {
    let Some((ns, name)) = key.split_once('/') else {
        return Ok(Next::Done);
    };
    let Some(cached) = ctx.feed.accelerators.get(ns, name) else {
        return Ok(Next::Done);
    };
    let ga: &GlobalAccelerator = &cached;
    if ga.meta().deletion_timestamp.is_some() {
        return cleanup(ctx, ga).await;
    }
    if !has_finalizer(ga) {
        // Before any AWS call: from here on, deleting the object cannot leak its accelerator.
        let api = api_of(&ctx.client, ga);
        let added = ctx
            .rec
            .staged("add_finalizers", add_finalizer(&api, ga, FINALIZER))
            .await;
        ctx.events
            .warned(&[ga], Failed::ADD_FINALIZER, added)
            .await?;
    }
    ctx.rec
        .staged("reconcile_globalaccelerator", resources(ctx, ga))
        .await
}

fn has_finalizer(ga: &GlobalAccelerator) -> bool {
    ga.finalizers().iter().any(|f| f == FINALIZER)
}

/// Writes a failure's Ready condition when it changes anything; a failed write is only logged
/// (the reconcile's own error is what is reported), as upstream.
async fn failure_status(ctx: &Ctx, ga: &GlobalAccelerator, failure: &str) {
    let change = status_after_failure(ga, failure, &now());
    if !change.changed {
        return;
    }
    if let Err(error) = status::write(&ctx.client, ga, &change.status).await {
        tracing::error!(globalAccelerator = %ga.key(), %error, reason = failure, "Failed to update GlobalAccelerator status after a failure");
    }
}

/// Upstream's `reconcileGlobalAcceleratorResources`.
async fn resources(ctx: &Ctx, ga: &GlobalAccelerator) -> Result<Next, AgaError> {
    let key = ga.key();
    tracing::info!(globalAccelerator = %key, "Reconciling GlobalAccelerator resources");
    let desired = desired_endpoints(ga);
    ctx.feed.tracker().update(&key, &desired);
    let described = describe_if_needed(ctx.elbv2.as_ref(), &desired).await;
    let source = CachedSource {
        feed: &ctx.feed,
        load_balancers: described.as_ref(),
    };
    let (mut loaded, fatal) = load_endpoints(&source, ga, &desired);
    if let Some(first) = fatal.into_iter().next() {
        let error = AgaError::EndpointLoad(first);
        ctx.events.failed(ga, ENDPOINT_LOAD, &error).await;
        tracing::error!(globalAccelerator = %key, %error, "fatal error loading endpoints");
        failure_status(ctx, ga, REASON_ENDPOINT_LOAD_FAILED).await;
        return Err(error);
    }
    // Auto-discovery of an EndpointID endpoint reads its load balancer's listeners.
    if let Some(arn) = listeners_to_describe(ga, &loaded).map(str::to_string) {
        let listeners = describe_listeners(ctx.elbv2.as_ref(), &arn).await;
        if let Some(endpoint) = loaded.first_mut() {
            endpoint.listeners = Some(listeners);
        }
    }
    let built = ctx
        .rec
        .staged("build_model", async {
            build_aga_stack(&ctx.builder, ga, &loaded)
        })
        .await;
    let stack = match built {
        Ok(stack) => stack,
        Err(error) => {
            ctx.events.failed(ga, Failed::BUILD_MODEL, &error).await;
            // Upstream warns a second time, in its Gateway controller's words.
            let note = format!("Failed to build model: {error}");
            ctx.events
                .warn_on(ga, reason::FAILED_BUILD_MODEL, note)
                .await;
            failure_status(ctx, ga, REASON_MODEL_BUILD_FAILED).await;
            return Err(error.into());
        }
    };
    tracing::info!(globalAccelerator = %key, model = %serde_json::to_string(&stack).unwrap_or_default(), "successfully built model");
    let opts = AgaOptions {
        cluster: ctx.cfg.model.cluster_name.clone(),
        external_managed_tags: ctx.cfg.model.external_managed_tags.clone(),
    };
    let deployed = ctx
        .rec
        .staged("deploy_stack", deploy_with(ctx.ga.as_ref(), &stack, &opts))
        .await;
    let deployed = match deployed {
        Ok(d) => d,
        Err(error) => {
            ctx.events.failed(ga, DEPLOY, &error).await;
            failure_status(ctx, ga, REASON_DEPLOYMENT_FAILED).await;
            return Err(error.into());
        }
    };
    tracing::info!(stackID = %stack.id, "Successfully deployed GlobalAccelerator stack");
    // What was asked and cannot be done (BYOIP addresses of an existing accelerator, a second
    // accelerator tagged for the stack): said, not silently dropped.
    for warning in &deployed.warnings {
        ctx.events
            .warn_on(ga, reason::UNSUPPORTED_CONFIGURATION, warning.clone())
            .await;
    }
    let change = status_after_deploy(ga, &status::outcome_of(&deployed), &now());
    if change.changed {
        if let Err(source) = status::write(&ctx.client, ga, &change.status).await {
            let error = AgaError::Status {
                key: key.clone(),
                source,
            };
            ctx.events.failed(ga, Failed::UPDATE_STATUS, &error).await;
            return Err(error);
        }
    }
    let warning_endpoints = loaded
        .iter()
        .any(|e| e.status == LoadedEndpointStatus::Warning);
    if warning_endpoints {
        ctx.events
            .warn_on(ga, WARNING_ENDPOINTS, WARNING_ENDPOINTS_NOTE.into())
            .await;
    }
    if change.requeue || warning_endpoints {
        let why = if warning_endpoints {
            format!("Retrying endpoints for Global Accelerator {key}  which did load successfully - will check availability again soon")
        } else {
            format!("Waiting for Global Accelerator {key}  with status 'IN_PROGRESS' to complete")
        };
        let after = ctx.cfg.provisioning_requeue;
        tracing::info!(globalAccelerator = %key, reason = %why, retry_in = ?after, "requeue after");
        return Ok(Next::After(after));
    }
    ctx.events
        .normal(
            &ga.object_ref(&()),
            reason::SUCCESSFULLY_RECONCILED,
            "Successfully reconciled".into(),
        )
        .await;
    Ok(Next::After(ctx.cfg.sync_period))
}

/// Upstream's `cleanupGlobalAccelerator`: nothing without our finalizer; else one step of the
/// deletion, and the finalizer released once nothing of the stack is left in AWS.
async fn cleanup(ctx: &Ctx, ga: &GlobalAccelerator) -> Result<Next, AgaError> {
    if !has_finalizer(ga) {
        return Ok(Next::Done);
    }
    let key = ga.key();
    ctx.feed.tracker().remove(&key);
    tracing::info!(globalAccelerator = %key, "Cleaning up GlobalAccelerator resources");
    let arn = ga
        .status
        .as_ref()
        .and_then(|s| s.accelerator_arn.clone())
        .filter(|a| !a.is_empty());
    let cluster = &ctx.cfg.model.cluster_name;
    match delete(ctx.ga.as_ref(), &key, arn.as_deref(), cluster).await {
        Err(source) => {
            let error = AgaError::Cleanup {
                accelerator: arn.unwrap_or_else(|| format!("of {key}")),
                source,
            };
            ctx.events.failed(ga, Failed::CLEANUP, &error).await;
            return Err(error);
        }
        Ok(AgaDeletion::InProgress {
            requeue_after,
            reason,
        }) => {
            let change = status_while_deleting(ga, &now());
            if change.changed {
                if let Err(error) = status::write(&ctx.client, ga, &change.status).await {
                    tracing::error!(globalAccelerator = %key, %error, "Failed to update status during accelerator deletion");
                }
            }
            let after = requeue_after.min(ctx.cfg.deletion_requeue);
            tracing::info!(globalAccelerator = %key, %reason, retry_in = ?after, "requeue after");
            return Ok(Next::After(after));
        }
        Ok(AgaDeletion::Deleted) => {}
    }
    tracing::info!(globalAccelerator = %key, "Successfully cleaned up all GlobalAccelerator resources");
    let removed = remove_finalizer(&api_of(&ctx.client, ga), ga, FINALIZER).await;
    if removed.is_err() {
        ctx.rec.error("remove_finalizers_error");
    }
    ctx.events
        .warned(&[ga], Failed::REMOVE_FINALIZER, removed)
        .await?;
    Ok(Next::Done)
}
