//! `/validate-elbv2-k8s-aws-v1beta1-targetgroupbinding`: upstream's checks, order, messages and
//! metric categories.
//!
//! CREATE: required fields → nodeSelector → duplicate target group → IP address type (AWS) →
//! VPC id (format, then AWS) → assume role → protocol (AWS).
//! UPDATE: required fields → immutable fields → nodeSelector → assume role → duplicate target
//! group (no AWS checks). DELETE is allowed.
//!
//! The duplicate check reads the watch-fed [`TgbIndex`]; AWS answers come from the shared
//! [`TgCache`], made with the role's STS-assumed client for bindings with `iamRoleArnToAssume`,
//! as upstream.

use std::sync::{Arc, LazyLock};

use regex::Regex;

use super::indexes::TgbIndex;
use super::tg_cache::{ip_address_type, RequestTg, TgCache};
use super::tgb_view::{TgbView, ASSUME_ROLE_INSTANCE};
use super::{AdmissionRequest, Decision, Handler, Operation};

pub const PATH: &str = "/validate-elbv2-k8s-aws-v1beta1-targetgroupbinding";

static VPC_ID: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new("^(?:vpc-[0-9a-f]{8}|vpc-[0-9a-f]{17}|vpc-[0-9a-f]{32})$").expect("static regex")
});

pub struct TgbValidator {
    pub target_groups: Arc<TgCache>,
    /// Every TargetGroupBinding in the cluster (fed by a watch).
    pub bindings: TgbIndex,
    /// The controller's own VPC: `vpcID` may go from "" to exactly this on update.
    pub vpc_id: String,
}

type Check = Result<(), Decision>;

fn deny(category: &str, message: impl Into<String>) -> Check {
    Err(Decision::deny(category, message))
}

impl TgbValidator {
    pub fn new(target_groups: Arc<TgCache>, bindings: TgbIndex, vpc_id: impl Into<String>) -> Self {
        TgbValidator {
            target_groups,
            bindings,
            vpc_id: vpc_id.into(),
        }
    }

    /// Also resolves `targetGroupARN` from the name, for the checks that follow (as upstream).
    async fn check_required_fields(&self, tgb: &mut TgbView) -> Check {
        let mut absent = Vec::new();
        if tgb.target_group_arn.is_empty() {
            if tgb.target_group_name.is_empty() {
                absent.push("either TargetGroupARN or TargetGroupName");
            } else {
                let role = tgb.role();
                match self
                    .target_groups
                    .by_name_as(&role, &tgb.target_group_name)
                    .await
                {
                    Ok(tg) => tgb.target_group_arn = tg.arn,
                    Err(e) => {
                        let name = &tgb.target_group_name;
                        return deny(
                            "checkRequiredFields",
                            format!("searching TargetGroup with name {name}: {e}"),
                        );
                    }
                }
            }
        }
        if tgb.target_type.is_none() {
            absent.push("spec.targetType");
        }
        if absent.is_empty() {
            return Ok(());
        }
        deny(
            "checkRequiredFields",
            format!(
                "TargetGroupBinding must specify these fields: {}",
                absent.join(",")
            ),
        )
    }

    fn check_immutable_fields(&self, new: &TgbView, old: &TgbView) -> Check {
        let mut changed = Vec::new();
        if new.target_group_arn != old.target_group_arn {
            changed.push("spec.targetGroupARN");
        }
        if new.target_type != old.target_type {
            changed.push("spec.targetType");
        }
        let ip_changed = match (&old.ip_address_type, &new.ip_address_type) {
            (None, Some(n)) => n != "ipv4",
            (Some(_), None) => true,
            (Some(o), Some(n)) => o != n,
            (None, None) => false,
        };
        if ip_changed {
            changed.push("spec.ipAddressType");
        }
        let vpc_changed = match (old.vpc_id.as_str(), new.vpc_id.as_str()) {
            ("", "") => false,
            ("", n) => n != self.vpc_id,
            (_, "") => true,
            (o, n) => o != n,
        };
        if vpc_changed {
            changed.push("spec.vpcID");
        }
        if changed.is_empty() {
            return Ok(());
        }
        deny(
            "checkImmutableFields",
            format!(
                "TargetGroupBinding update may not change these immutable fields: {}",
                changed.join(",")
            ),
        )
    }

    fn check_node_selector(tgb: &TgbView) -> Check {
        if tgb.target_type.as_deref() == Some("ip") && tgb.has_node_selector {
            return deny(
                "checkNodeSelector",
                "TargetGroupBinding cannot set NodeSelector when TargetType is ip",
            );
        }
        Ok(())
    }

    fn check_existing_target_groups(&self, tgb: &TgbView) -> Check {
        if !self.bindings.synced() {
            return deny(
                "checkExistingTargetGroups",
                "failed to list TargetGroupBindings in the cluster: the TargetGroupBinding cache has not synced yet",
            );
        }
        let arn = &tgb.target_group_arn;
        // Upstream compares UIDs; without one (never on a real API server) the key decides.
        let is_self = |ns: &str, name: &str, uid: &str| {
            if tgb.uid.is_empty() {
                ns == tgb.namespace && name == tgb.name
            } else {
                uid == tgb.uid
            }
        };
        let duplicates: Vec<_> = self
            .bindings
            .bound_to(arn)
            .into_iter()
            .filter(|b| !is_self(&b.namespace, &b.name, &b.uid))
            .collect();
        let all_multi = tgb.multi_cluster && duplicates.iter().all(|b| b.multi_cluster);
        if duplicates.is_empty() || all_multi {
            return Ok(());
        }
        // Go prints a []NamespacedName as `[ns/a ns/b]`.
        let list: Vec<String> = duplicates
            .iter()
            .map(|b| format!("{}/{}", b.namespace, b.name))
            .collect();
        deny(
            "checkExistingTargetGroups",
            format!(
                "TargetGroup {arn} is already bound to following TargetGroupBindings [{}]. Please enable MultiCluster mode on all TargetGroupBindings referencing {arn} or choose a different Target Group ARN.",
                list.join(" ")
            ),
        )
    }

    async fn check_ip_address_type(tgb: &TgbView, tg: &RequestTg<'_>) -> Check {
        let aws = match tg.get().await {
            Ok(t) => ip_address_type(t),
            Err(e) => Err(e.to_string()),
        };
        let aws = match aws {
            Ok(ip) => ip,
            Err(e) => {
                return deny(
                    "checkTargetGroupIPAddressType",
                    format!("unable to get target group IP address type: {e}"),
                )
            }
        };
        let mismatch = match tgb.ip_address_type.as_deref() {
            Some(spec) => spec != aws,
            None => aws != "ipv4",
        };
        if mismatch {
            let arn = &tgb.target_group_arn;
            return deny(
                "checkTargetGroupIPAddressType",
                format!("invalid IP address type {aws} for TargetGroup {arn}"),
            );
        }
        Ok(())
    }

    async fn check_vpc_id(tgb: &TgbView, tg: &RequestTg<'_>) -> Check {
        let vpc = &tgb.vpc_id;
        if vpc.is_empty() {
            return Ok(());
        }
        if !VPC_ID.is_match(vpc) {
            return deny("checkTargetGroupVpcID", format!("ValidationError: vpcID {vpc} failed to satisfy constraint: VPC Id must begin with 'vpc-' followed by 8, 17 or 32 lowercase letters (a-f) or numbers."));
        }
        match tg.get().await {
            Err(e) => deny(
                "checkTargetGroupVpcID",
                format!("unable to get target group VpcID: {e}"),
            ),
            Ok(t) if t.vpc_id.as_deref().unwrap_or("") != vpc => {
                let arn = &tgb.target_group_arn;
                deny(
                    "checkTargetGroupVpcID",
                    format!("invalid VpcID {vpc} doesnt match VpcID from TargetGroup {arn}"),
                )
            }
            Ok(_) => Ok(()),
        }
    }

    fn check_assume_role(tgb: &TgbView) -> Check {
        if tgb.uses_assume_role() && tgb.is_instance() {
            return deny("checkAssumeRoleConfig", ASSUME_ROLE_INSTANCE);
        }
        Ok(())
    }

    async fn check_protocol(tgb: &TgbView, tg: &RequestTg<'_>) -> Check {
        let Some(spec) = tgb.protocol.as_deref() else {
            return Ok(()); // older bindings have none
        };
        let aws = match tg.get().await {
            // Upstream's text for this failure names the VPC id; kept for fidelity.
            Err(e) => {
                return deny(
                    "checkTargetGroupProtocol",
                    format!("unable to get target group VpcID: {e}"),
                )
            }
            Ok(t) => t.protocol.as_deref().unwrap_or(""),
        };
        if aws != spec {
            let arn = &tgb.target_group_arn;
            return deny(
                "checkTargetGroupProtocol",
                format!("TargetGroup {arn} protocol differs (got {spec}, expected {aws})"),
            );
        }
        if matches!(aws, "QUIC" | "TCP_QUIC") && tgb.is_instance() {
            return deny(
                "checkTargetGroupProtocol",
                "QUIC protocol is not supported for Instance target types.",
            );
        }
        Ok(())
    }

    async fn validate_create(&self, mut tgb: TgbView) -> Check {
        self.check_required_fields(&mut tgb).await?;
        Self::check_node_selector(&tgb)?;
        self.check_existing_target_groups(&tgb)?;
        let tg = RequestTg::for_role(&self.target_groups, tgb.role(), &tgb.target_group_arn);
        Self::check_ip_address_type(&tgb, &tg).await?;
        Self::check_vpc_id(&tgb, &tg).await?;
        Self::check_assume_role(&tgb)?;
        Self::check_protocol(&tgb, &tg).await
    }

    async fn validate_update(&self, mut tgb: TgbView, old: TgbView) -> Check {
        self.check_required_fields(&mut tgb).await?;
        self.check_immutable_fields(&tgb, &old)?;
        Self::check_node_selector(&tgb)?;
        Self::check_assume_role(&tgb)?;
        self.check_existing_target_groups(&tgb)
    }
}

#[async_trait::async_trait]
impl Handler for TgbValidator {
    fn mutating(&self) -> bool {
        false
    }

    async fn admit(&self, req: &AdmissionRequest) -> Decision {
        let parse = |obj: Option<&serde_json::Value>, what: &str| match obj {
            None => Err(Decision::errored(
                "decode",
                format!("admission request carries no {what}"),
            )),
            Some(o) => TgbView::parse(o, req.namespace.as_deref())
                .map_err(|e| Decision::errored("decode", e)),
        };
        let outcome = match req.operation {
            Operation::Create => match parse(req.object.as_ref(), "object") {
                Ok(tgb) => self.validate_create(tgb).await,
                Err(d) => Err(d),
            },
            Operation::Update => match (
                parse(req.object.as_ref(), "object"),
                parse(req.old_object.as_ref(), "oldObject"),
            ) {
                (Ok(tgb), Ok(old)) => self.validate_update(tgb, old).await,
                (Err(d), _) | (_, Err(d)) => Err(d),
            },
            Operation::Delete | Operation::Connect | Operation::Other => Ok(()),
        };
        outcome.err().unwrap_or(Decision::Allow)
    }
}

#[cfg(test)]
#[path = "tgb_validator_tests.rs"]
mod tests;
#[cfg(test)]
#[path = "tgb_validator_update_tests.rs"]
mod update_tests;
