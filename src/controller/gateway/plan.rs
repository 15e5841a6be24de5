//! Upstream's Gateway dry run (`controllers/gateway/dryrun.go`): the stack, in upstream's stack
//! schema (`model::upstream_json`, as upstream's stack marshaller writes it), goes into
//! `gateway.k8s.aws/dry-run-plan`; a patch only when the text changes (no write, no new
//! reconcile, on an unchanged plan); the annotation goes once dry run is off. What upstream's
//! model builder resolves itself is resolved here by reads only — the load balancer's subnets,
//! the ids of the configured security groups, the shared backend security group — since a dry
//! run creates nothing in AWS: a backend security group that does not exist yet shows as "".
//! Shared with `diff`, which shows the same patch.

use gateway_api::apis::standard::gateways::Gateway;
use kube::api::{Patch, PatchParams};
use kube::ResourceExt;

use super::{Ctx, GatewayError};
use crate::controller::skeleton::api_of;
use crate::deploy::{BackendSgInPlan, Deployer};
use crate::model::gateway::DRY_RUN_PLAN_ANNOTATION;
use crate::model::upstream_json;
use crate::model::Stack;

/// The plan text of `stack`, with what the model leaves to the deployer read from AWS.
pub(crate) async fn text(deployer: &Deployer, stack: &Stack) -> String {
    upstream_json::to_string(
        stack,
        &deployer.plan_facts(stack, BackendSgInPlan::ReadOnly).await,
    )
}

/// Writes the plan of `stack` onto `gw`, unless it already carries that text.
pub(super) async fn write(ctx: &Ctx, gw: &Gateway, stack: &Stack) -> Result<(), GatewayError> {
    let plan = text(&ctx.deployer, stack).await;
    if gw.annotations().get(DRY_RUN_PLAN_ANNOTATION) == Some(&plan) {
        return Ok(());
    }
    let body = serde_json::json!({"metadata": {"annotations": {DRY_RUN_PLAN_ANNOTATION: plan}}});
    api_of(&ctx.client, gw)
        .patch(
            &gw.name_any(),
            &PatchParams::default(),
            &Patch::Merge(&body),
        )
        .await?;
    Ok(())
}

/// Removes the plan annotation from `gw`.
pub(super) async fn clear(ctx: &Ctx, gw: &Gateway) -> Result<(), GatewayError> {
    let body = serde_json::json!({"metadata": {"annotations": {DRY_RUN_PLAN_ANNOTATION: null}}});
    api_of(&ctx.client, gw)
        .patch(
            &gw.name_any(),
            &PatchParams::default(),
            &Patch::Merge(&body),
        )
        .await?;
    Ok(())
}
