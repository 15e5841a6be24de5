//! One reconcile of one Gateway, in upstream's order (`gateway_controller.go`): a Gateway whose
//! class is missing or another controller's is left alone; the class must be Accepted and up to
//! date with its configuration, and the LoadBalancerConfigurations must resolve (else Accepted
//! False `Invalid` with the error, and a retry); the model is built (an error is a
//! `FailedBuildModel` Warning, Accepted False `Invalid` `Check Gateway Events for more
//! information.` — or, for upstream's route loader errors, `ListenersNotValid` with their
//! message — and no AWS write; ACM certificate discovery belongs to it); a dry run writes the
//! plan annotation (`plan`: upstream's stack schema) instead of deploying; otherwise finalizer
//! → deploy (AWS, then the TargetGroupBinding objects) → status → `SuccessfullyReconciled`.
//! (Upstream reports its requeue while the load balancer provisions as a `FailedUpdateStatus`
//! Warning; provisioning is not a failure and Warnings page people, so here the Gateway's
//! `Programmed` condition says `Pending` instead.) A deleted Gateway: refused while its
//! configuration, or the live load balancer's attribute, protects the load balancer (before
//! its add-ons come off); else bindings, then the stack, go, and the finalizer is released only
//! once AWS shows no load balancer of the stack.

use std::borrow::Cow;
use std::sync::Arc;
use std::time::Duration;

use gateway_api::apis::standard::gateways::Gateway;
use kube::ResourceExt;

use super::config::{self, Configs};
use super::deploy::deploy;
use super::feed::controller_name;
use super::inputs::Owned;
use super::kind::kind;
use super::status::{self, fail_status, write_failure};
use super::{Ctx, GatewayError};
use crate::controller::skeleton::{reason, Failed};
use crate::model::gateway::addons::ActiveAddons;
use crate::model::gateway::listeners::LbKind;
use crate::model::gateway::{
    build_alb_gateway_stack, build_nlb_gateway_stack, GatewayBuild, GatewayInputs,
    DRY_RUN_ANNOTATION, DRY_RUN_PLAN_ANNOTATION,
};
use crate::model::Stack;

/// Gateway `key` reads no Secret any more (gone, deleted, or no longer ours).
pub(super) fn forget_secrets(ctx: &Ctx, key: &str) {
    if let Some(m) = &ctx.secrets {
        m.monitor(key, Default::default());
    }
}

/// Reconciles Gateway `key`; `Ok(Some(d))` asks for another pass after `d`.
pub async fn reconcile(ctx: &Ctx, key: &str) -> Result<Option<Duration>, GatewayError> {
    let Some((gw, configs)) = ours(ctx, key).await? else {
        return Ok(None);
    };
    if gw.metadata.deletion_timestamp.is_some() && deleted(ctx, &gw, &configs, key).await? {
        return Ok(None);
    }
    let mut owned = Owned::gather(&ctx.feed.stores, ctx.cfg.lb, key);
    let built = match build(ctx, &gw, &configs, &mut owned, key).await {
        Ok(b) => b,
        Err(e) => {
            ctx.events
                .failed(gw.as_ref(), Failed::BUILD_MODEL, &e)
                .await;
            write_failure(ctx, &gw, status::build_failure(&gw, &e)).await;
            return Err(e);
        }
    };
    if planned_only(ctx, &gw, &built.stack, key).await? {
        return Ok(None);
    }
    let ignored = not_built(&owned, &built.stack);
    if !ignored.is_empty() {
        let note = format!(
            "{} not supported by this build yet: no listener, rule or target group is made for them",
            ignored.join(", ")
        );
        let r = reason::UNSUPPORTED_CONFIGURATION;
        ctx.events.warn_on(gw.as_ref(), r, note).await;
    }
    deploy_recording_addons(ctx, &gw, &built, &owned, &configs).await
}

/// Gateway `key` when a controller of ours handles it, with its configurations resolved and
/// held (a failure to resolve is Accepted False `Invalid` with the error, and a retry).
async fn ours(ctx: &Ctx, key: &str) -> Result<Option<(Arc<Gateway>, Configs)>, GatewayError> {
    let stores = &ctx.feed.stores;
    let (ns, name) = key.split_once('/').unwrap_or(("default", key));
    let Some(gw) = stores.gateways.get(ns, name) else {
        forget_secrets(ctx, key);
        return Ok(None);
    };
    let Some(class) = stores.classes.get("", &gw.spec.gateway_class_name) else {
        tracing::info!(gateway = %key, class = %gw.spec.gateway_class_name, "Failed to get GatewayClass");
        return Ok(None);
    };
    if class.spec.controller_name != controller_name(ctx.cfg.lb) {
        forget_secrets(ctx, key);
        return Ok(None);
    }
    let resolved = match config::resolve(stores, &gw, &class) {
        Ok(c) => config::hold(&ctx.client, &c).await.map(|_| c),
        Err(e) => Err(e),
    };
    match resolved {
        Ok(configs) => Ok(Some((gw, configs))),
        Err(message) => {
            fail_status(ctx, &gw, &message).await;
            Err(GatewayError::Config(message))
        }
    }
}

/// A deleted Gateway: refused while its configuration protects the load balancer; else its
/// stack goes (`true`: the pass is done), unless add-ons are still recorded active (`false`:
/// this pass deploys the stack without them first).
async fn deleted(
    ctx: &Ctx,
    gw: &Gateway,
    configs: &Configs,
    key: &str,
) -> Result<bool, GatewayError> {
    let merged = crate::model::gateway::build::merged_config(&Configs::inputs(configs, gw));
    if config::deletion_protected(&merged) {
        let (ns, name) = key.split_once('/').unwrap_or(("default", key));
        let e = format!(
            "Unable to delete gateway {{Namespace:{ns} Name:{name}}} because deletion protection is enabled."
        );
        ctx.events.failed(gw, Failed::BUILD_MODEL, &e).await;
        fail_status(ctx, gw, status::RECONCILE_ERROR).await;
        return Err(GatewayError::Config(e));
    }
    // Upstream: with add-ons still recorded active, one more pass deploys the stack without
    // them (and records them off); the next pass, with none active, deletes the stack. With
    // no load balancer left there is nothing to take them off: none is made for that.
    let k = kind(ctx.cfg.lb);
    let releasing = gw.finalizers().iter().any(|f| f == k.finalizer)
        && ActiveAddons::of(gw).any()
        && ctx.deployer.has_load_balancer_of(k.stack, key).await?;
    if !releasing {
        forget_secrets(ctx, key);
        ctx.rec
            .staged("cleanup", super::cleanup::cleanup(ctx, gw))
            .await?;
        return Ok(true);
    }
    // A protected load balancer stays whole, its web ACL and Shield protection included:
    // checked before the add-ons come off, not only before the stack goes.
    ctx.rec
        .staged("cleanup", super::cleanup::check_deletable(ctx, gw, key))
        .await?;
    tracing::info!(gateway = %key, "removing the gateway's add-ons before deleting its stack");
    Ok(false)
}

/// The model of `gw` (upstream's build: reads only, ACM certificate discovery included). The
/// Secrets it reads are watched from now on (upstream's MonitorSecrets), also when the build
/// then fails on one: its creation or fix queues the Gateway.
async fn build(
    ctx: &Ctx,
    gw: &Gateway,
    configs: &Configs,
    owned: &mut Owned,
    key: &str,
) -> Result<GatewayBuild, GatewayError> {
    let secret_refs = super::secrets::refs_of(owned);
    if let Some(m) = &ctx.secrets {
        m.monitor(key, secret_refs.clone());
    }
    let work = async {
        if let Some(m) = &ctx.secrets {
            owned.secrets = m.read(&ctx.client, &secret_refs).await?;
        }
        owned.look_up_target_groups(&ctx.target_groups).await;
        let subnets = ctx.env.subnets().await?;
        // What AWS allows of its security groups is checked by the model, before any write.
        let existing = match ctx.cfg.lb {
            LbKind::Alb => None,
            LbKind::Nlb => {
                let k = kind(ctx.cfg.lb).stack;
                ctx.deployer.existing_nlb_of(k, key).await?
            }
        };
        let inputs = GatewayInputs {
            vpc_cidrs: Some(ctx.env.vpc_cidrs.as_slice()),
            existing_load_balancer: existing.as_ref(),
            ..owned.inputs(gw, configs)
        };
        let mut b = match ctx.cfg.lb {
            LbKind::Alb => {
                build_alb_gateway_stack(&inputs, &ctx.cfg.model, Some(subnets.as_slice()))
            }
            LbKind::Nlb => {
                build_nlb_gateway_stack(&inputs, &ctx.cfg.model, Some(subnets.as_slice()))
            }
        }?;
        // ACM discovery is part of upstream's model build (reads only): a host without a
        // certificate is a `FailedBuildModel` before any write, and a dry-run plan shows
        // the certificates found.
        if let Cow::Owned(s) = ctx.deployer.resolve_certificates(&b.stack).await? {
            b.stack = s;
        }
        Ok::<_, GatewayError>(b)
    };
    ctx.rec.staged("build_model", work).await
}

/// The dry-run annotation: a Gateway not provisioned yet gets the plan of `stack` written
/// instead of a deploy (`true`: the pass is done); a plan left from before goes.
async fn planned_only(
    ctx: &Ctx,
    gw: &Gateway,
    stack: &Stack,
    key: &str,
) -> Result<bool, GatewayError> {
    let finalizer = kind(ctx.cfg.lb).finalizer;
    let dry_run = gw.annotations().get(DRY_RUN_ANNOTATION).map(String::as_str) == Some("true");
    if dry_run && gw.metadata.deletion_timestamp.is_none() {
        if !gw.finalizers().iter().any(|f| f == finalizer) {
            super::plan::write(ctx, gw, stack).await?;
            tracing::info!(gateway = %key, "dry-run plan generated");
            return Ok(true);
        }
        tracing::info!(gateway = %key, "Ignoring dry-run annotation on already-provisioned Gateway");
    }
    if gw.annotations().contains_key(DRY_RUN_PLAN_ANNOTATION) {
        super::plan::clear(ctx, gw).await?;
    }
    Ok(false)
}

/// Deploys `built` with upstream's add-on record: newly enabled add-ons are recorded before
/// the deploy makes them, removed ones after.
async fn deploy_recording_addons(
    ctx: &Ctx,
    gw: &Gateway,
    built: &GatewayBuild,
    owned: &Owned,
    configs: &Configs,
) -> Result<Option<Duration>, GatewayError> {
    let active = ActiveAddons::of(gw);
    let added = built.addons.keys_not_in(&active);
    let recorded;
    let gw: &Gateway = if added.is_empty() {
        gw
    } else {
        recorded = super::addons::record(ctx, gw, &added, true).await?;
        &recorded
    };
    let requeue = deploy(ctx, gw, built, &owned.inputs(gw, configs)).await?;
    let removed = active.keys_not_in(&built.addons);
    if !removed.is_empty() {
        super::addons::record(ctx, gw, &removed, false).await?;
    }
    Ok(requeue)
}

/// Routes naming the Gateway that the model left out (kinds it does not build yet): they must
/// not look served.
fn not_built(owned: &Owned, stack: &Stack) -> Vec<String> {
    let key = |ns: Option<String>, name: String| {
        format!("{}/{name}", ns.unwrap_or_else(|| "default".into()))
    };
    let grpc = owned
        .grpc_routes
        .iter()
        .map(|r| ("GRPCRoute", key(r.namespace(), r.name_any())));
    let tls = owned
        .tls_routes
        .iter()
        .map(|r| ("TLSRoute", key(r.namespace(), r.name_any())));
    grpc.chain(tls)
        .filter(|(_, k)| !stack.members.contains(k))
        .map(|(kind, k)| format!("{kind} {k}"))
        .collect()
}

impl Configs {
    /// Model inputs carrying only the configurations (what the merge reads).
    pub(crate) fn inputs<'a>(&'a self, gw: &'a Gateway) -> GatewayInputs<'a> {
        GatewayInputs {
            class_config: self.class.as_ref(),
            gateway_config: self.gateway.as_ref(),
            ..GatewayInputs::new(gw)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn attached_routes_the_model_left_out_are_named_not_ignored() {
        let grpc = serde_json::from_value(json!({
            "metadata": {"name": "g", "namespace": "apps"},
            "spec": {"parentRefs": [{"name": "gw"}]}
        }))
        .unwrap();
        let owned = Owned {
            grpc_routes: vec![grpc],
            ..Owned::default()
        };
        let mut stack = Stack::default();
        assert_eq!(not_built(&owned, &stack), vec!["GRPCRoute apps/g"]);
        stack.members.push("apps/g".into());
        assert!(
            not_built(&owned, &stack).is_empty(),
            "once the model builds it, no warning"
        );
    }
}
