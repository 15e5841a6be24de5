//! `/mutate-elbv2-k8s-aws-v1beta1-targetgroupbinding`: on CREATE, fills the target group ARN
//! (from `targetGroupName`), `targetType`, `ipAddressType`, `vpcID` and `targetGroupProtocol`
//! from the target group itself, as upstream. UPDATE is admitted unchanged.
//!
//! All defaulting steps share one lazily made `DescribeTargetGroups` (through [`TgCache`]); fields
//! already set are never touched, and when nothing is missing AWS is not called at all. The
//! patch adds/replaces only the defaulted keys under `/spec` of the raw object, so fields this
//! build does not know survive.
//!
//! Cross-account bindings (`iamRoleArnToAssume`, `assumeRoleExternalId`) are looked up with the
//! role's STS-assumed client, as upstream.

use std::sync::Arc;

use json_patch::jsonptr::PointerBuf;
use json_patch::{AddOperation, PatchOperation, ReplaceOperation};
use serde_json::Value;

use super::tg_cache::{ip_address_type, RequestTg, TgCache};
use super::tgb_view::TgbView;
use super::{AdmissionRequest, Decision, Handler, Operation};

pub const PATH: &str = "/mutate-elbv2-k8s-aws-v1beta1-targetgroupbinding";

pub struct TgbMutator {
    pub target_groups: Arc<TgCache>,
}

impl TgbMutator {
    pub fn new(target_groups: Arc<TgCache>) -> Self {
        TgbMutator { target_groups }
    }
}

/// Sets `/spec/<key>`: replace when the key is present (even `null` or `""`), else add.
fn set(obj: &Value, key: &str, value: &str) -> PatchOperation {
    let path = PointerBuf::parse(format!("/spec/{key}")).expect("static pointer");
    let value = Value::String(value.to_string());
    if obj.get("spec").and_then(|s| s.get(key)).is_some() {
        PatchOperation::Replace(ReplaceOperation { path, value })
    } else {
        PatchOperation::Add(AddOperation { path, value })
    }
}

impl TgbMutator {
    async fn mutate_create(&self, obj: &Value, tgb: TgbView) -> Decision {
        if tgb.target_group_arn.is_empty() && tgb.target_group_name.is_empty() {
            return Decision::deny(
                "checkTargetGroupArnOrName",
                "must provide either TargetGroupARN or TargetGroupName",
            );
        }
        let role = tgb.role();
        let mut ops = Vec::new();
        let mut arn = tgb.target_group_arn.clone();
        if arn.is_empty() {
            match self
                .target_groups
                .by_name_as(&role, &tgb.target_group_name)
                .await
            {
                Ok(tg) => arn = tg.arn,
                Err(e) => return Decision::deny("getArnFromNameIfNeeded", e.to_string()),
            }
            ops.push(set(obj, "targetGroupARN", &arn));
        }
        let tg = RequestTg::for_role(&self.target_groups, role, &arn);

        if tgb.target_type.is_none() {
            let target_type = match tg.get().await {
                Err(e) => {
                    return Decision::deny(
                        "defaultingTargetType",
                        format!("couldn't determine TargetType: {e}"),
                    )
                }
                Ok(t) => t.target_type.as_str(),
            };
            if target_type != "instance" && target_type != "ip" {
                return Decision::deny(
                    "defaultingTargetType",
                    format!("unsupported TargetType: {target_type}"),
                );
            }
            ops.push(set(obj, "targetType", target_type));
        }
        if tgb.ip_address_type.is_none() {
            let ip = tg
                .get()
                .await
                .as_ref()
                .map_err(ToString::to_string)
                .and_then(ip_address_type);
            match ip {
                Ok(ip) => ops.push(set(obj, "ipAddressType", ip)),
                Err(e) => {
                    return Decision::deny(
                        "defaultingIPAddressType",
                        format!("unable to get target group IP address type: {e}"),
                    )
                }
            }
        }
        if tgb.vpc_id.is_empty() {
            match tg.get().await {
                Err(e) => {
                    return Decision::deny(
                        "defaultingVpcID",
                        format!("unable to get target group VpcID: {e}"),
                    )
                }
                // No VPC from AWS leaves the field empty, as upstream.
                Ok(t) => {
                    if let Some(vpc) = t.vpc_id.as_deref().filter(|v| !v.is_empty()) {
                        ops.push(set(obj, "vpcID", vpc));
                    }
                }
            }
        }
        if tgb.protocol.is_none() {
            match tg.get().await {
                Err(e) => {
                    return Decision::deny(
                        "defaultingTargetGroupProtocol",
                        format!("couldn't determine TargetGroup protocol: {e}"),
                    )
                }
                // Upstream copies the value as is (empty when AWS has none); the CRD schema
                // then judges it.
                Ok(t) => ops.push(set(
                    obj,
                    "targetGroupProtocol",
                    t.protocol.as_deref().unwrap_or(""),
                )),
            }
        }
        Decision::Patch(ops)
    }
}

#[async_trait::async_trait]
impl Handler for TgbMutator {
    fn mutating(&self) -> bool {
        true
    }

    async fn admit(&self, req: &AdmissionRequest) -> Decision {
        if req.operation != Operation::Create {
            return Decision::Patch(vec![]);
        }
        let Some(obj) = req.object.as_ref() else {
            return Decision::errored("decode", "admission request carries no object");
        };
        match TgbView::parse(obj, req.namespace.as_deref()) {
            Ok(tgb) => self.mutate_create(obj, tgb).await,
            Err(e) => Decision::errored("decode", e),
        }
    }
}

#[cfg(test)]
#[path = "tgb_mutator_tests.rs"]
mod tests;
