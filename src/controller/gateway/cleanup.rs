//! Teardown of a deleted Gateway's stack (upstream's `reconcileDelete`): unless a load balancer
//! of the stack has deletion protection on ([`check_deletable`], also before the add-on pass),
//! the TargetGroupBinding objects go, then every AWS resource of the stack; the finalizer is
//! released only once AWS shows no load balancer of it.
//! Then, as upstream's backend-SG provider, the shared backend security group is released.

use gateway_api::apis::standard::gateways::Gateway;
use kube::ResourceExt;

use super::config::Configs;
use super::inputs::Owned;
use super::kind::{binding_labels, kind, ns_of, REMOVE_FINALIZER};
use super::{Ctx, GatewayError};
use crate::controller::ingress::sync_bindings;
use crate::controller::skeleton::{api_of, Failed};
use crate::controller::{remove_finalizer, route_status};
use crate::model::gateway::{ALB_GATEWAY_FINALIZER, NLB_GATEWAY_FINALIZER};
use crate::model::Stack;

/// The Gateway is going and holds the finalizer: its stack goes.
pub(super) async fn cleanup(ctx: &Ctx, gw: &Gateway) -> Result<(), GatewayError> {
    let k = kind(ctx.cfg.lb);
    if !gw.finalizers().iter().any(|f| f == k.finalizer) {
        return Ok(());
    }
    let stack_id = format!("{}/{}", ns_of(gw), gw.name_any());
    let empty = Stack {
        stack_id: stack_id.clone(),
        kind: k.stack,
        ..Default::default()
    };
    // A protected load balancer stays serving, and so do its bindings; the user lifts it.
    check_deletable(ctx, gw, &stack_id).await?;
    let removed = async {
        sync_bindings(
            &ctx.client,
            &binding_labels(ctx, gw),
            &[],
            &ctx.cfg.namespaces,
            ctx.cfg.metrics.as_ref(),
        )
        .await?;
        ctx.deployer.deploy(&empty).await?;
        // The finalizer is all that keeps the load balancer from leaking: released only once
        // AWS shows none of the stack any more.
        if ctx
            .deployer
            .has_load_balancer_of(k.stack, &stack_id)
            .await?
        {
            return Err(GatewayError::Leftover(stack_id.clone()));
        }
        Ok::<_, GatewayError>(())
    };
    ctx.events
        .warned(&[gw], Failed::DEPLOY_MODEL, removed.await)
        .await?;
    tracing::info!(gateway = %stack_id, "deleted the gateway's resources");
    // Before the finalizer goes: a crash in between re-runs this deletion, so the last Gateway
    // cannot leave the shared backend SG behind.
    release_backend_sg(ctx, &stack_id).await;
    let released = remove_finalizer(&api_of(&ctx.client, gw), gw, k.finalizer).await;
    ctx.events.warned(&[gw], REMOVE_FINALIZER, released).await?;
    if let Some(refs) = &ctx.cfg.service_references {
        refs.forget(&stack_id);
    }
    // Our entries on the routes that named it now say the parent is gone (upstream's text);
    // the Gateway is already released, so a failed write is only logged.
    let owned = Owned::gather(&ctx.feed.stores, ctx.cfg.lb, &stack_id);
    let configs = Configs::default();
    if let Err(e) = route_status::forget(&ctx.client, &owned.inputs(gw, &configs)).await {
        tracing::warn!(gateway = %stack_id, error = %e, "failed to update route status");
    }
    Ok(())
}

/// Refuses while a load balancer of the stack `stack_id` has deletion protection on (the live
/// attribute `deletion_protection.enabled`, read as the Ingress path reads it), with the
/// Ingress path's `FailedDeployModel` Warning: nothing of a protected stack is taken apart —
/// its bindings, its rules, nor its add-ons (WAF, Shield), which a deleted Gateway's first
/// pass takes off before the stack goes.
pub(super) async fn check_deletable(
    ctx: &Ctx,
    gw: &Gateway,
    stack_id: &str,
) -> Result<(), GatewayError> {
    let k = kind(ctx.cfg.lb);
    let checked = ctx.deployer.check_deletable_of(k.stack, stack_id).await;
    let checked = checked.map_err(GatewayError::from);
    ctx.events
        .warned(&[gw], Failed::DEPLOY_MODEL, checked)
        .await
}

/// The auto-created backend SG goes once Gateway `key` no longer uses it (deleted, or its stack
/// needs none), as upstream releases it for Gateways; never a configured one. Kept while another
/// Gateway holds a finalizer (its load balancer may be about to list it) and while any load
/// balancer in the VPC lists it (Ingresses, Services); see [`Deployer::release_backend_sg`].
/// Best effort: a failure is logged and retried at the next release.
///
/// [`Deployer::release_backend_sg`]: crate::deploy::Deployer::release_backend_sg
pub(super) async fn release_backend_sg(ctx: &Ctx, key: &str) {
    let m = &ctx.cfg.model;
    if !m.enable_backend_sg || m.backend_sg_id.is_some() {
        return;
    }
    let others = ctx.feed.stores.gateways.state().iter().any(|g| {
        let other = format!("{}/{}", ns_of(g), g.name_any());
        other != key
            && g.metadata.deletion_timestamp.is_none()
            && g.finalizers()
                .iter()
                .any(|f| f == ALB_GATEWAY_FINALIZER || f == NLB_GATEWAY_FINALIZER)
    });
    if others {
        return;
    }
    match ctx.deployer.release_backend_sg().await {
        Ok(true) => {
            tracing::info!(gateway = %key, "deleted the backend security group: no Gateway uses it")
        }
        Ok(false) => {}
        Err(error) => tracing::warn!(%error, "cannot delete the unused backend security group"),
    }
}
