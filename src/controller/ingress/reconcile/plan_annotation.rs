//! Upstream's dry-run plan on Ingresses (feature gate `IngressPlanAnnotation`,
//! `controllers/ingress/dryrun.go`): once the group's model builds, its stack in upstream's
//! schema (`model::upstream_json`) goes into `alb.ingress.kubernetes.io/dry-run-plan` on the
//! group's first member, and the annotation is cleared from every other member, so upstream's
//! migration console finds exactly one plan per group; with the gate off it is cleared from
//! all members. A patch is sent only when the value changes (no write, no new reconcile, on an
//! unchanged plan). Failures are logged and never fail the reconcile, as upstream.

use k8s_openapi::api::networking::v1::Ingress;
use kube::api::{Patch, PatchParams};
use kube::ResourceExt;
use serde_json::{json, Value};

use super::{api_of, Ctx};
use crate::annotations::DRY_RUN_PLAN;
use crate::deploy::{BackendSgInPlan, Deployer};
use crate::model::upstream_json;
use crate::model::Stack;

/// Upstream's feature-gate name.
pub(crate) const GATE: &str = "IngressPlanAnnotation";

/// Writes or clears the plan on `members` (upstream's member order) for `stack`.
pub(super) async fn publish(ctx: &Ctx, members: &[&Ingress], stack: &Stack) {
    let Some((first, others)) = members.split_first() else {
        return;
    };
    let plan = wanted(&ctx.deployer, ctx.cfg.model.gate(GATE), stack).await;
    set(ctx, first, plan.as_deref()).await;
    for ing in others {
        set(ctx, ing, None).await;
    }
}

/// The plan the group's first member carries (`None`: cleared, the gate being off); every
/// other member carries none. Shared with `diff`, which shows the same patches.
pub(crate) async fn wanted(deployer: &Deployer, gate_on: bool, stack: &Stack) -> Option<String> {
    if !gate_on {
        return None;
    }
    // The backend security group found or created, as upstream's builder does (the deploy
    // that follows uses it).
    let facts = deployer
        .plan_facts(stack, BackendSgInPlan::FindOrCreate)
        .await;
    Some(upstream_json::to_string(stack, &facts))
}

/// Sets (`Some`) or removes (`None`) the plan annotation of `ing`; no request when it already
/// has that value.
async fn set(ctx: &Ctx, ing: &Ingress, plan: Option<&str>) {
    if ing.annotations().get(DRY_RUN_PLAN).map(String::as_str) == plan {
        return;
    }
    let value = plan.map_or(Value::Null, |p| json!(p));
    let patch = json!({"metadata": {"annotations": {DRY_RUN_PLAN: value}}});
    let api = api_of(ctx, ing);
    if let Err(error) = api
        .patch(
            &ing.name_any(),
            &PatchParams::default(),
            &Patch::Merge(&patch),
        )
        .await
    {
        let what = if plan.is_some() { "patch" } else { "clear" };
        tracing::error!(%error, ingress = %format!("{}/{}", ing.namespace().unwrap_or_default(), ing.name_any()),
            "failed to {what} the dry-run plan annotation");
    }
}
