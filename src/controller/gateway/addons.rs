//! The Gateway's record of its add-ons (upstream's `controllers/gateway/addons.go`): the
//! annotations `gateway.k8s.aws.addon.{wafv2,shield,provisionedcapacity}`. A newly enabled
//! add-on is recorded `"true"` before the deploy that makes it, so a failure halfway can never
//! leave one the next pass would not remove; a removed one is recorded `"false"` only after the
//! deploy that removed it succeeded, so it is retried until it is gone.

use gateway_api::apis::standard::gateways::Gateway;
use kube::api::{Patch, PatchParams};
use kube::ResourceExt;

use super::{Ctx, GatewayError};
use crate::controller::skeleton::api_of;

/// Sets each annotation of `keys` to `"true"` (`on`) or `"false"`; returns the Gateway as
/// written, whose resourceVersion later precondition-checked writes (the finalizer) need.
pub(super) async fn record(
    ctx: &Ctx,
    gw: &Gateway,
    keys: &[&str],
    on: bool,
) -> Result<Gateway, GatewayError> {
    let value = if on { "true" } else { "false" };
    let annotations: serde_json::Map<String, serde_json::Value> =
        keys.iter().map(|k| (k.to_string(), value.into())).collect();
    let body = serde_json::json!({"metadata": {"annotations": annotations}});
    tracing::info!(gateway = %gw.name_any(), addons = ?keys, value, "recording gateway add-ons");
    let written = api_of(&ctx.client, gw)
        .patch(
            &gw.name_any(),
            &PatchParams::default(),
            &Patch::Merge(&body),
        )
        .await?;
    Ok(written)
}
