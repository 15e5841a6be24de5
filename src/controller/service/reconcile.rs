//! One reconcile of one Service, in upstream's order (`controllers/service`): a Service we
//! neither handle nor hold the finalizer of is left alone; otherwise the model is built from
//! the Service and the AWS facts it reads (a build error is a `FailedBuildModel` Warning and
//! nothing is written). A stack with a load balancer: finalizer → deploy (AWS, then the
//! TargetGroupBinding objects) → status → `SuccessfullyReconciled`. An empty stack (deleting,
//! or stopped qualifying): unless a load balancer of the stack has deletion protection on (then
//! a Warning, and the finalizer stays), the bindings go, then every AWS resource of the stack,
//! then the status, then the finalizer.

use std::collections::BTreeMap;
use std::time::Duration;

use k8s_openapi::api::core::v1::Service;
use kube::{Api, Resource, ResourceExt};

use super::{status, Ctx, ServiceError};
use crate::controller::ingress::sync_bindings;
use crate::controller::skeleton::{api_of, reason, Failed};
use crate::controller::{add_finalizer, remove_finalizer};
use crate::model::service::{
    build_service_stack, is_pending_finalization, is_service_supported, service_key,
    weighted_backend_names, ServiceEnv, SERVICE_FINALIZER,
};
use crate::model::tags::{TagContext, SERVICE_TAG_PREFIX};
use crate::model::{GroupId, Stack};

/// Labels of the stack's TargetGroupBindings (`service.k8s.aws/stack-namespace`, `-name`).
fn binding_labels(ctx: &Ctx, svc: &Service) -> std::collections::BTreeMap<String, String> {
    let ns = svc.namespace().unwrap_or_else(|| "default".into());
    let group = GroupId::implicit(&ns, &svc.name_any());
    TagContext {
        cfg: &ctx.cfg.model,
        group: &group,
        prefix: SERVICE_TAG_PREFIX,
    }
    .stack_labels()
}

/// Reconciles Service `key`; `Ok(Some(d))` asks for a resync after `d`.
pub async fn reconcile(ctx: &Ctx, key: &str) -> Result<Option<Duration>, ServiceError> {
    let Some(svc) = ctx.feed.get(key) else {
        return Ok(None);
    };
    let supported = is_service_supported(&svc, &ctx.cfg.model);
    if !supported && !is_pending_finalization(&svc) {
        return Ok(None);
    }
    let built = ctx
        .rec
        .staged("build_model", async {
            let env = if supported {
                // Weighted backends (they are not watched: changing one queues nothing).
                let backends = backend_services(ctx, &svc).await?;
                ctx.env
                    .read(&ctx.deployer, key)
                    .await?
                    .with_backends_of(&svc, |_, name| backends.get(name).cloned())
            } else {
                ServiceEnv::default()
            };
            Ok::<_, ServiceError>(build_service_stack(&svc, &ctx.cfg.model, &env)?)
        })
        .await;
    let stack = match built {
        Ok(s) => s,
        Err(e) => {
            ctx.events
                .failed(svc.as_ref(), Failed::BUILD_MODEL, &e)
                .await;
            return Err(e);
        }
    };
    if stack.load_balancer.is_none() {
        ctx.rec
            .staged("cleanup_load_balancer", cleanup(ctx, &svc, &stack))
            .await?;
        return Ok(None);
    }
    match deploy(ctx, &svc, &stack).await {
        // Waited for as upstream's `RequeueNeededAfter` (no Warning: see `deploy`).
        Err(ServiceError::Deploy(crate::deploy::Error::NotReady {
            reason,
            retry_after,
        })) => {
            tracing::info!(service = %service_key(&svc), %reason, retry_in = ?retry_after, "requeue after");
            Ok(Some(retry_after))
        }
        Err(e) => Err(e),
        Ok(()) => Ok(Some(ctx.cfg.sync_period)),
    }
}

/// The Services `svc`'s weighted actions name (in its namespace), by name: from the feed when
/// it keeps them (Services the controller handles), else read from the API server. Upstream
/// reads them from its cache of every Service; the feed keeps only the Services the controller
/// handles, and a backend is most often a NodePort or ClusterIP Service it does not, so the
/// rare Service with weighted backends pays one read per backend per reconcile rather than
/// every Service of the cluster being kept whole. A Service that does not exist is left out
/// (the build says it is not found, as with the cache).
async fn backend_services(
    ctx: &Ctx,
    svc: &Service,
) -> Result<BTreeMap<String, Service>, ServiceError> {
    let ns = svc.namespace().unwrap_or_else(|| "default".into());
    let mut found = BTreeMap::new();
    for name in weighted_backend_names(svc) {
        let backend = match ctx.feed.get(&format!("{ns}/{name}")) {
            Some(kept) => Some((*kept).clone()),
            None => {
                Api::<Service>::namespaced(ctx.client.clone(), &ns)
                    .get_opt(&name)
                    .await?
            }
        };
        if let Some(b) = backend {
            found.insert(name, b);
        }
    }
    Ok(found)
}

async fn deploy(ctx: &Ctx, svc: &Service, stack: &Stack) -> Result<(), ServiceError> {
    tracing::debug!(service = %service_key(svc), "built model");
    // Before any AWS write: from here on, deleting the Service cannot leak its NLB.
    let api = api_of(&ctx.client, svc);
    let added = ctx
        .rec
        .staged(
            "add_finalizers",
            add_finalizer(&api, svc, SERVICE_FINALIZER),
        )
        .await;
    ctx.events
        .warned(&[svc], Failed::ADD_FINALIZER, added)
        .await?;
    if !stack.warnings.is_empty() {
        let notes: Vec<String> = stack
            .warnings
            .iter()
            .map(|w| match &w.annotation {
                Some(a) => format!("{a}: {}", w.message),
                None => w.message.clone(),
            })
            .collect();
        let note = notes.join("; ");
        let r = reason::UNSUPPORTED_CONFIGURATION;
        ctx.events.warn_on(svc, r, note).await;
    }
    let deployed = ctx
        .rec
        .staged_unless(
            "deploy_model",
            async {
                let deployed = ctx.deployer.deploy(stack).await?;
                sync_bindings(
                    &ctx.client,
                    &binding_labels(ctx, svc),
                    &deployed.target_group_bindings,
                    &[svc.namespace().unwrap_or_else(|| "default".into())],
                    ctx.cfg.metrics.as_ref(),
                )
                .await?;
                Ok::<_, ServiceError>(deployed)
            },
            |e| {
                matches!(
                    e,
                    ServiceError::Deploy(crate::deploy::Error::NotReady { .. })
                )
            },
        )
        .await;
    let deployed = match deployed {
        Ok(d) => d,
        Err(e) => {
            // A load balancer still provisioning is waited for, as upstream requeues: no Warning.
            if !matches!(
                e,
                ServiceError::Deploy(crate::deploy::Error::NotReady { .. })
            ) {
                ctx.events.failed(svc, Failed::DEPLOY_MODEL, &e).await;
            }
            return Err(e);
        }
    };
    tracing::info!(service = %service_key(svc), "successfully deployed model");
    if let Some(lb) = &deployed.load_balancer {
        let updated = ctx
            .rec
            .staged(
                "update_status",
                status::update(&ctx.client, svc, &lb.dns_name),
            )
            .await;
        if let Err(e) = updated {
            let why = format!("failed to update service status: {}: {e}", service_key(svc));
            ctx.events.failed(svc, Failed::UPDATE_STATUS, &why).await;
            return Err(e.into());
        }
    }
    ctx.events
        .normal(
            &svc.object_ref(&()),
            reason::SUCCESSFULLY_RECONCILED,
            "Successfully reconciled".into(),
        )
        .await;
    Ok(())
}

/// The Service is going or no longer ours, and holds the finalizer: its stack goes.
async fn cleanup(ctx: &Ctx, svc: &Service, stack: &Stack) -> Result<(), ServiceError> {
    let key = service_key(svc);
    // A protected NLB stays serving, and so do its bindings; the user lifts the protection.
    let removed = async {
        ctx.deployer
            .check_deletable_of(stack.kind, &stack.stack_id)
            .await?;
        sync_bindings(
            &ctx.client,
            &binding_labels(ctx, svc),
            &[],
            &[svc.namespace().unwrap_or_else(|| "default".into())],
            ctx.cfg.metrics.as_ref(),
        )
        .await?;
        ctx.deployer.deploy(stack).await?;
        // The finalizer is all that keeps the NLB from leaking: released only once AWS shows
        // no load balancer of the stack any more.
        if ctx.deployer.existing_nlb(&stack.stack_id).await?.is_some() {
            return Err(ServiceError::Leftover(stack.stack_id.clone()));
        }
        Ok::<_, ServiceError>(())
    };
    ctx.events
        .warned(&[svc], Failed::DEPLOY_MODEL, removed.await)
        .await?;
    tracing::info!(service = %key, "deleted the service's resources");
    if let Err(e) = status::clear(&ctx.client, svc).await {
        let why = format!("failed to cleanup service status: {key}: {e}");
        ctx.events.failed(svc, Failed::CLEANUP_STATUS, &why).await;
        return Err(e.into());
    }
    let removed = remove_finalizer(&api_of(&ctx.client, svc), svc, SERVICE_FINALIZER).await;
    ctx.events
        .warned(&[svc], Failed::REMOVE_FINALIZER, removed)
        .await?;
    Ok(())
}
