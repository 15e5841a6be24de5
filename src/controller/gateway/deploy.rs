//! A built Gateway, deployed (upstream's `deployModel` and status updates): the finalizer
//! before any AWS write, the stack, its TargetGroupBindings, then Gateway, ListenerSet and
//! route status and the closing event; the requeue while the load balancer provisions.

use std::time::Duration;

use gateway_api::apis::standard::gateways::Gateway;
use kube::Resource;
use kube::ResourceExt;

use super::kind::{binding_labels, kind, ns_of, ADD_FINALIZER};
use super::listener_set_status;
use super::status::{self, fail_status};
use super::{Ctx, GatewayError};
use crate::controller::gateway_class::services_of;
use crate::controller::ingress::sync_bindings;
use crate::controller::skeleton::{api_of, reason, Failed};
use crate::controller::{add_finalizer, route_status};
use crate::deploy::Error as DeployError;
use crate::model::gateway::refused::{
    http_refused_rules, refused_rules_of, RefusedRule, REFUSED_REASON,
};
use crate::model::gateway::routes::{RouteKind, RouteRef};
use crate::model::gateway::{GatewayBuild, GatewayInputs};
use k8s_openapi::api::core::v1::ObjectReference;

/// Upstream's requeue while the load balancer is not active yet.
pub const PROGRAMMED_REQUEUE: Duration = Duration::from_secs(120);

pub(super) async fn deploy(
    ctx: &Ctx,
    gw: &Gateway,
    built: &GatewayBuild,
    inputs: &GatewayInputs<'_>,
) -> Result<Option<Duration>, GatewayError> {
    let finalizer = kind(ctx.cfg.lb).finalizer;
    // Before any AWS write: from here on, deleting the Gateway cannot leak its load balancer.
    let added = add_finalizer(&api_of(&ctx.client, gw), gw, finalizer).await;
    ctx.events.warned(&[gw], ADD_FINALIZER, added).await?;
    let stack = &built.stack;
    if !stack.warnings.is_empty() {
        let notes: Vec<&str> = stack.warnings.iter().map(|w| w.message.as_str()).collect();
        let r = reason::UNSUPPORTED_CONFIGURATION;
        ctx.events.warn_on(gw, r, notes.join("; ")).await;
    }
    // Said on the route too: its owner may not read the Gateway's events.
    for (route, note) in refused_rules(inputs, built) {
        ctx.events
            .warning(&route, reason::UNSUPPORTED_CONFIGURATION, note)
            .await;
    }
    let deployed = ctx
        .rec
        .staged_unless(
            "deploy_model",
            async {
                let deployed = ctx.deployer.deploy(stack).await?;
                sync_bindings(
                    &ctx.client,
                    &binding_labels(ctx, gw),
                    &deployed.target_group_bindings,
                    &ctx.cfg.namespaces,
                    ctx.cfg.metrics.as_ref(),
                )
                .await?;
                Ok::<_, GatewayError>(deployed)
            },
            |e| matches!(e, GatewayError::Deploy(DeployError::NotReady { .. })),
        )
        .await;
    let deployed = match deployed {
        Ok(d) => d,
        // A load balancer still provisioning is waited for as upstream's `RequeueNeededAfter`:
        // queued again after the step's delay, no Warning, status untouched.
        Err(GatewayError::Deploy(DeployError::NotReady {
            reason,
            retry_after,
        })) => {
            tracing::info!(gateway = %gw.name_any(), %reason, retry_in = ?retry_after, "requeue after");
            return Ok(Some(retry_after));
        }
        Err(e) => {
            ctx.events.failed(gw, Failed::DEPLOY_MODEL, &e).await;
            fail_status(ctx, gw, status::RECONCILE_ERROR).await;
            return Err(e);
        }
    };
    tracing::info!(gateway = %gw.name_any(), "successfully deployed model");
    // Upstream releases the shared backend SG when the Gateway's stack does not need it.
    if stack
        .backend_security_group
        .as_ref()
        .is_none_or(|b| b.group_id.is_some())
    {
        super::cleanup::release_backend_sg(ctx, &format!("{}/{}", ns_of(gw), gw.name_any())).await;
    }
    let Some(lb) = &deployed.load_balancer else {
        return Ok(Some(ctx.cfg.sync_period));
    };
    let sets_on = ctx.feed.stores.listener_sets_on;
    let (programmed, st) = status::after_deploy(gw, ctx.cfg.lb, built, lb, sets_on);
    if let Some(st) = st {
        if let Err(e) = ctx
            .rec
            .staged("update_status", status::patch(&ctx.client, gw, &st))
            .await
        {
            let why = format!(
                "failed to update gw status: {}/{}: {e}",
                ns_of(gw),
                gw.name_any()
            );
            ctx.events.failed(gw, Failed::UPDATE_STATUS, &why).await;
            return Err(e.into());
        }
    }
    if sets_on {
        let lb = ctx.cfg.lb;
        let sets = listener_set_status::publish(&ctx.client, built, lb, programmed.active);
        if let Err(e) = ctx.rec.staged("update_listener_set_status", sets).await {
            tracing::warn!(gateway = %gw.name_any(), error = %e, "failed to update ListenerSet status");
            return Err(e.into());
        }
    }
    if let Some(refs) = &ctx.cfg.service_references {
        refs.update(
            &format!("{}/{}", ns_of(gw), gw.name_any()),
            services_of(stack),
        );
    }
    // Each route naming the Gateway: accepted or refused, and whether its backends resolved.
    if let Err(e) = ctx
        .rec
        .staged(
            "update_route_status",
            route_status::publish(&ctx.client, inputs, built),
        )
        .await
    {
        tracing::warn!(gateway = %gw.name_any(), error = %e, "failed to update route status");
        return Err(e.into());
    }
    ctx.events
        .normal(
            &gw.object_ref(&()),
            reason::SUCCESSFULLY_RECONCILED,
            "Successfully reconciled".into(),
        )
        .await;
    if programmed.active {
        Ok(Some(ctx.cfg.sync_period))
    } else {
        Ok(Some(PROGRAMMED_REQUEUE))
    }
}

/// The refusals decoding noted on a route.
fn decoded<K: Resource>(route: &K) -> Vec<RefusedRule> {
    refused_rules_of(route.meta())
}

/// The rules of the routes the build loaded that decoding refused (values the route types do
/// not know, such as an `ExternalAuth` filter; see `model::gateway::refused`) or, of an
/// HTTPRoute, whose redirect an ALB cannot answer with, each with the route to tell.
fn refused_rules(
    inputs: &GatewayInputs<'_>,
    built: &GatewayBuild,
) -> Vec<(ObjectReference, String)> {
    fn of<K: Resource<DynamicType = ()>>(
        kind: RouteKind,
        routes: &[K],
        built: &GatewayBuild,
        out: &mut Vec<(ObjectReference, String)>,
        refused_of: fn(&K) -> Vec<RefusedRule>,
    ) {
        for r in routes {
            let refused = refused_of(r);
            if refused.is_empty() {
                continue;
            }
            let me = RouteRef {
                kind,
                namespace: r
                    .meta()
                    .namespace
                    .clone()
                    .unwrap_or_else(|| "default".into()),
                name: r.meta().name.clone().unwrap_or_default(),
            };
            // Loaded (attached): its status carries the refusal.
            let loaded = built
                .route_problems
                .iter()
                .any(|p| p.route == me && p.reason == REFUSED_REASON);
            if !loaded {
                continue;
            }
            let object = r.object_ref(&());
            for x in refused {
                let note = format!(
                    "{} {}/{} {}",
                    kind.as_str(),
                    me.namespace,
                    me.name,
                    x.message
                );
                out.push((object.clone(), note));
            }
        }
    }
    let mut out = Vec::new();
    // HTTPRoutes add the redirects an ALB cannot answer with, refused as the model reads them.
    let http = RouteKind::Http;
    of(
        http,
        inputs.http_routes,
        built,
        &mut out,
        http_refused_rules,
    );
    of(
        RouteKind::Grpc,
        inputs.grpc_routes,
        built,
        &mut out,
        decoded,
    );
    of(RouteKind::Tcp, inputs.tcp_routes, built, &mut out, decoded);
    of(RouteKind::Udp, inputs.udp_routes, built, &mut out, decoded);
    of(RouteKind::Tls, inputs.tls_routes, built, &mut out, decoded);
    out
}
