//! Writing a GlobalAccelerator's status: the model computes the new status and whether it
//! differs (`model::aga::status`); this merge-patches `/status` with it, as upstream's
//! `client.MergeFrom` does: every field of the new status, and `null` for a field the new status
//! drops (a dual-stack DNS name that went), so nothing stale stays.

use kube::api::{Patch, PatchParams};
use kube::ResourceExt;
use serde_json::{Map, Value};

use crate::controller::skeleton::api_of;
use crate::crd::global_accelerator::{GlobalAccelerator, GlobalAcceleratorStatus};
use crate::deploy::aga::AgaDeployed;
use crate::model::aga::{DeployOutcome, DeployedIpSet};

/// What a deploy left, as the status builder reads it.
pub fn outcome_of(deployed: &AgaDeployed) -> DeployOutcome {
    DeployOutcome {
        accelerator_arn: deployed.accelerator_arn.clone(),
        dns_name: deployed.dns_name.clone(),
        dual_stack_dns_name: deployed.dual_stack_dns_name.clone().unwrap_or_default(),
        ip_sets: deployed
            .ip_sets
            .iter()
            .map(|s| DeployedIpSet {
                ip_addresses: s.ip_addresses.clone(),
                ip_address_family: s.ip_address_family.clone(),
            })
            .collect(),
        status: deployed.status.clone(),
    }
}

/// The merge patch turning `old` into `new` at the top level of the status: `new`'s fields,
/// and `null` for each field `old` has and `new` does not (lists are replaced whole).
pub fn merge_patch(old: &Value, new: &Value) -> Value {
    let mut patch: Map<String, Value> = new.as_object().cloned().unwrap_or_default();
    if let Some(old) = old.as_object() {
        for key in old.keys() {
            patch.entry(key.clone()).or_insert(Value::Null);
        }
    }
    Value::Object(patch)
}

/// Merge-patches `/status` of `ga` to `status`; an object deleted meanwhile counts as done.
pub async fn write(
    client: &kube::Client,
    ga: &GlobalAccelerator,
    status: &GlobalAcceleratorStatus,
) -> kube::Result<()> {
    let old = serde_json::to_value(ga.status.clone().unwrap_or_default())
        .map_err(kube::Error::SerdeError)?;
    let new = serde_json::to_value(status).map_err(kube::Error::SerdeError)?;
    let body = serde_json::json!({ "status": merge_patch(&old, &new) });
    match api_of(client, ga)
        .patch_status(
            &ga.name_any(),
            &PatchParams::default(),
            &Patch::Merge(&body),
        )
        .await
    {
        Ok(_) => Ok(()),
        Err(kube::Error::Api(e)) if e.code == 404 => Ok(()),
        Err(e) => Err(e),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::aws::IpSet;
    use serde_json::json;

    #[test]
    fn a_dropped_field_is_nulled_and_the_rest_sent_whole() {
        let old = json!({"dnsName": "a.awsglobalaccelerator.com", "dualStackDnsName": "b", "status": "DEPLOYED"});
        let new = json!({"dnsName": "a.awsglobalaccelerator.com", "status": "IN_PROGRESS", "conditions": []});
        assert_eq!(
            merge_patch(&old, &new),
            json!({"dnsName": "a.awsglobalaccelerator.com", "dualStackDnsName": null,
                   "status": "IN_PROGRESS", "conditions": []})
        );
        assert_eq!(merge_patch(&json!({}), &json!({"a": 1})), json!({"a": 1}));
    }

    #[test]
    fn the_deploy_outcome_carries_what_aws_answered() {
        let deployed = AgaDeployed {
            accelerator_arn: "arn:aws:globalaccelerator::1:accelerator/x".into(),
            dns_name: "x.awsglobalaccelerator.com".into(),
            dual_stack_dns_name: None,
            ip_sets: vec![IpSet {
                ip_address_family: "IPv4".into(),
                ip_addresses: vec!["192.0.2.1".into(), "192.0.2.2".into()],
            }],
            status: "IN_PROGRESS".into(),
            ..AgaDeployed::default()
        };
        let o = outcome_of(&deployed);
        assert_eq!(o.accelerator_arn, deployed.accelerator_arn);
        assert_eq!(o.dual_stack_dns_name, "");
        assert_eq!(o.ip_sets[0].ip_addresses, ["192.0.2.1", "192.0.2.2"]);
        assert_eq!(o.ip_sets[0].ip_address_family, "IPv4");
        assert_eq!(o.status, "IN_PROGRESS");
    }
}
