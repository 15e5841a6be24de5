//! The accelerator of a stack (upstream's `accelerator_synthesizer.go` and
//! `accelerator_manager.go`): found by the ARN the object's status names, else by its tags (so
//! an accelerator upstream made, or one whose ARN never reached the status, is adopted, not made
//! twice); created when there is none; its tags, name, IP address type and enabled flag brought
//! to the model's. An accelerator without this cluster's and stack's tags is never touched.
//!
//! Deletion follows upstream's order without blocking: disable it, come back once AWS reports
//! it `DEPLOYED`, then delete its endpoint groups, listeners and itself.

use super::listener;
use super::tags::{self, ownership_problem};
use super::{AgaDeletion, Ctx, DELETION_REQUEUE_AFTER};
use crate::aws::{AwsError, DescribedAccelerator, IpSet, Tags};
use crate::deploy::error::{Context, Result};
use crate::model::aga::Accelerator;

/// An accelerator this stack owns, with its tags.
#[derive(Debug, Clone)]
pub(super) struct Found {
    pub acc: DescribedAccelerator,
    pub tags: Tags,
}

/// What the lookup of a stack's accelerators found.
#[derive(Debug)]
pub(super) enum Lookup {
    /// Every accelerator tagged for the stack (the one the status names first).
    Owned(Vec<Found>),
    /// The status names an accelerator that is not the stack's.
    Foreign { arn: String, reason: String },
}

/// The stack's accelerators: the one `known_arn` names when it exists (refused as
/// [`Lookup::Foreign`] when not ours; with `denied_is_foreign`, also when AWS will not describe
/// it, as upstream's IAM policy answers for untagged ones), else every one carrying the stack's
/// tags (ListAccelerators, then ListTagsForResource each).
pub(super) async fn find(
    ctx: &mut Ctx<'_>,
    known_arn: Option<&str>,
    denied_is_foreign: bool,
) -> Result<Lookup> {
    if let Some(arn) = known_arn.filter(|a| !a.is_empty()) {
        match describe_with_tags(ctx, arn).await {
            Ok(Some(found)) => {
                return Ok(
                    match ownership_problem(&found.tags, ctx.cluster, ctx.stack_id) {
                        None => Lookup::Owned(vec![found]),
                        Some(reason) => Lookup::Foreign {
                            arn: arn.to_string(),
                            reason,
                        },
                    },
                );
            }
            Ok(None) => {
                tracing::info!(
                    stack = ctx.stack_id,
                    arn = %arn,
                    "the accelerator the status names is gone; looking for the stack's by tag"
                );
            }
            Err(e @ AwsError::AccessDenied { .. }) if denied_is_foreign => {
                return Ok(Lookup::Foreign {
                    arn: arn.to_string(),
                    reason: format!("AWS refused to describe it: {e}"),
                });
            }
            Err(e) => return Err(e).ctx(|| format!("describe accelerator {arn}")),
        }
    }
    let all = ctx
        .ga
        .list_accelerators()
        .await
        .ctx(|| "list accelerators".to_string())?;
    let mut owned = Vec::new();
    for acc in all {
        match ctx.ga.list_tags_for_resource(&acc.arn).await {
            Ok(tags) if tags::is_owned(&tags, ctx.cluster, ctx.stack_id) => {
                owned.push(Found { acc, tags })
            }
            Ok(_) => {}
            // Deleted since it was listed.
            Err(e) if e.is_not_found() => {}
            Err(e) => return Err(e).ctx(|| format!("list tags of accelerator {}", acc.arn)),
        }
    }
    owned.sort_by(|a, b| a.acc.arn.cmp(&b.acc.arn));
    Ok(Lookup::Owned(owned))
}

/// DescribeAccelerator and ListTagsForResource; `None` when it does not exist.
async fn describe_with_tags(
    ctx: &Ctx<'_>,
    arn: &str,
) -> std::result::Result<Option<Found>, AwsError> {
    let acc = match ctx.ga.describe_accelerator(arn).await {
        Ok(a) => a,
        Err(e) if e.is_not_found() => return Ok(None),
        Err(e) => return Err(e),
    };
    match ctx.ga.list_tags_for_resource(arn).await {
        Ok(tags) => Ok(Some(Found { acc, tags })),
        Err(e) if e.is_not_found() => Ok(None),
        Err(e) => Err(e),
    }
}

/// Of several accelerators tagged for the stack, the one to keep: the model's name first, else
/// the first; the others are reported, never deleted by a deploy.
pub(super) fn pick(ctx: &mut Ctx<'_>, mut owned: Vec<Found>, name: &str) -> Option<Found> {
    if owned.is_empty() {
        return None;
    }
    let i = owned.iter().position(|f| f.acc.name == name).unwrap_or(0);
    let keep = owned.remove(i);
    for other in owned {
        ctx.warn(format!(
            "accelerator {} is tagged for stack {} too; it is left as it is (the stack uses {})",
            other.acc.arn, ctx.stack_id, keep.acc.arn
        ));
    }
    Some(keep)
}

/// The IPv4 addresses of the IP sets equal the wanted ones, in any order (upstream's
/// `areIPv4AddressesEqual`).
pub fn ipv4_addresses_equal(want: &[String], have: &[IpSet]) -> bool {
    let mut have: Vec<&str> = have
        .iter()
        .filter(|s| s.ip_address_family == "IPv4")
        .flat_map(|s| s.ip_addresses.iter().map(String::as_str))
        .collect();
    let mut want: Vec<&str> = want.iter().map(String::as_str).collect();
    if want.len() != have.len() {
        return false;
    }
    want.sort_unstable();
    have.sort_unstable();
    want == have
}

/// Name, IP address type or enabled flag (AWS's default, on, when the model leaves it out)
/// differ. BYOIP addresses are creation-only and do not count (upstream's
/// `isSDKAcceleratorSettingsDrifted`).
pub fn accelerator_drifted(want: &Accelerator, have: &DescribedAccelerator) -> bool {
    want.name != have.name
        || want.ip_address_type.as_str() != have.ip_address_type
        || want.enabled.unwrap_or(true) != have.enabled
}

/// Creates the accelerator, or brings the found one to the model: tags first, then the
/// settings when they drifted (upstream's order).
pub(super) async fn sync(
    ctx: &mut Ctx<'_>,
    want: &Accelerator,
    found: Option<Found>,
) -> Result<DescribedAccelerator> {
    let Some(found) = found else {
        tracing::info!(stack = ctx.stack_id, name = %want.name, "creating accelerator");
        let acc = ctx
            .ga
            .create_accelerator(want)
            .await
            .ctx(|| format!("create accelerator {}", want.name))?;
        ctx.wrote();
        return Ok(acc);
    };
    let arn = found.acc.arn.clone();
    tags::reconcile_tags(ctx, &arn, &want.tags, &found.tags).await?;
    if !want.ip_addresses.is_empty()
        && !ipv4_addresses_equal(&want.ip_addresses, &found.acc.ip_sets)
    {
        ctx.warn(format!(
            "accelerator {arn}: IP addresses cannot be changed after creation; it keeps {} instead of {}",
            found.acc.ipv4_addresses().join(","),
            want.ip_addresses.join(",")
        ));
    }
    if !accelerator_drifted(want, &found.acc) {
        return Ok(found.acc);
    }
    tracing::info!(stack = ctx.stack_id, arn = %arn, "updating accelerator");
    let acc = ctx
        .ga
        .update_accelerator(&arn, want)
        .await
        .ctx(|| format!("update accelerator {arn}"))?;
    ctx.wrote();
    Ok(acc)
}

fn in_progress(reason: String) -> AgaDeletion {
    AgaDeletion::InProgress {
        requeue_after: DELETION_REQUEUE_AFTER,
        reason,
    }
}

/// One step of deleting an accelerator: disable it (then wait), wait while AWS reports it
/// `IN_PROGRESS`, then delete its listeners (each with its endpoint groups) and itself.
pub(super) async fn delete(ctx: &mut Ctx<'_>, found: &Found) -> Result<AgaDeletion> {
    let arn = found.acc.arn.as_str();
    if found.acc.enabled {
        tracing::info!(stack = ctx.stack_id, arn = %arn, "disabling accelerator before deleting it");
        match ctx.ga.disable_accelerator(arn).await {
            Ok(_) => ctx.wrote(),
            Err(e) if e.is_not_found() => return Ok(AgaDeletion::Deleted),
            Err(e) => return Err(e).ctx(|| format!("disable accelerator {arn}")),
        }
        return Ok(in_progress(format!(
            "Waiting for Global Accelerator {arn} to be disabled before deleting it"
        )));
    }
    if !found.acc.is_deployed() {
        return Ok(in_progress(format!(
            "Waiting for Global Accelerator {arn} with status '{}' to complete",
            found.acc.status
        )));
    }
    let listeners = match ctx.ga.list_listeners(arn).await {
        Ok(l) => l,
        Err(e) if e.is_not_found() => return Ok(AgaDeletion::Deleted),
        Err(e) => return Err(e).ctx(|| format!("list listeners of accelerator {arn}")),
    };
    for l in &listeners {
        listener::delete_tree(ctx, &l.arn).await?;
    }
    tracing::info!(stack = ctx.stack_id, arn = %arn, "deleting accelerator");
    match ctx.ga.delete_accelerator(arn).await {
        Ok(()) => {
            ctx.wrote();
            Ok(AgaDeletion::Deleted)
        }
        Err(e) if e.is_not_found() => Ok(AgaDeletion::Deleted),
        // Disabled, but AWS still propagates the disable.
        Err(e) if e.code() == "AcceleratorNotDisabledException" => Ok(in_progress(format!(
            "Waiting for Global Accelerator {arn} to finish disabling: {e}"
        ))),
        Err(e) => Err(e).ctx(|| format!("delete accelerator {arn}")),
    }
}

#[cfg(test)]
mod tests {
    //! Upstream's pure accelerator tables (accelerator_manager_test.go):
    //! `isSDKAcceleratorSettingsDrifted` (7 cases) and `areIPv4AddressesEqual` (5).

    use super::*;
    use crate::model::aga::AgaIpAddressType;

    fn want(name: &str, ip: AgaIpAddressType, enabled: bool, ips: &[&str]) -> Accelerator {
        Accelerator {
            name: name.into(),
            ip_addresses: ips.iter().map(|s| s.to_string()).collect(),
            ip_address_type: ip,
            enabled: Some(enabled),
            tags: Tags::new(),
            crd_uid: "test-uid".into(),
            existing_arn: None,
        }
    }

    fn have(name: &str, ip: &str, enabled: bool, ips: &[&str]) -> DescribedAccelerator {
        DescribedAccelerator {
            name: name.into(),
            ip_address_type: ip.into(),
            enabled,
            ip_sets: vec![IpSet {
                // Upstream's cases leave the family out.
                ip_address_family: String::new(),
                ip_addresses: ips.iter().map(|s| s.to_string()).collect(),
            }],
            ..Default::default()
        }
    }

    #[test]
    fn accelerator_settings_drift() {
        use AgaIpAddressType::{DualStack, Ipv4};
        let t = "test-accelerator";
        for (name, w, h, drift) in [
            (
                "No drift - all fields match",
                want(t, Ipv4, true, &[]),
                have(t, "IPV4", true, &[]),
                false,
            ),
            (
                "Name differs - drift detected",
                want("new-name", Ipv4, true, &[]),
                have("old-name", "IPV4", true, &[]),
                true,
            ),
            (
                "IP address type differs - drift detected",
                want(t, DualStack, true, &[]),
                have(t, "IPV4", true, &[]),
                true,
            ),
            (
                "Enabled state differs - drift detected",
                want(t, Ipv4, false, &[]),
                have(t, "IPV4", true, &[]),
                true,
            ),
            (
                "IP addresses match - no drift",
                want(t, Ipv4, true, &["192.0.2.1", "192.0.2.2"]),
                have(t, "IPV4", true, &["192.0.2.1", "192.0.2.2"]),
                false,
            ),
            (
                "IP addresses differ - no drift but logs warning",
                want(t, Ipv4, true, &["192.0.2.1", "192.0.2.2"]),
                have(t, "IPV4", true, &["192.0.2.3", "192.0.2.4"]),
                false,
            ),
            (
                "Multiple fields differ - drift detected",
                want("new-name", DualStack, false, &[]),
                have("old-name", "IPV4", true, &[]),
                true,
            ),
        ] {
            assert_eq!(accelerator_drifted(&w, &h), drift, "{name}");
        }
    }

    /// Enabled left out of the model is AWS's default: on.
    #[test]
    fn enabled_left_out_means_on() {
        let mut w = want("a", AgaIpAddressType::Ipv4, true, &[]);
        w.enabled = None;
        assert!(!accelerator_drifted(&w, &have("a", "IPV4", true, &[])));
        assert!(accelerator_drifted(&w, &have("a", "IPV4", false, &[])));
    }

    fn v4(ips: &[&str]) -> Vec<IpSet> {
        vec![IpSet {
            ip_address_family: "IPv4".into(),
            ip_addresses: ips.iter().map(|s| s.to_string()).collect(),
        }]
    }

    fn s(ips: &[&str]) -> Vec<String> {
        ips.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn ipv4_addresses_equality() {
        for (name, want, have, equal) in [
            (
                "Two BYOIPs match current - no drift",
                s(&["169.254.8.13", "169.254.8.14"]),
                v4(&["169.254.8.13", "169.254.8.14"]),
                true,
            ),
            (
                "One BYOIP matches current - drift",
                s(&["169.254.8.13, 169.254.9.13"]),
                v4(&["169.254.8.13", "99.82.158.217"]),
                false,
            ),
            (
                "One BYOIP missing from current - drift detected",
                s(&["169.254.9.13"]),
                v4(&["169.254.8.13", "99.82.158.217"]),
                false,
            ),
            (
                "Changing from one BYOIP to another - drift detected",
                s(&["169.254.8.16", "99.82.158.217"]),
                v4(&["169.254.9.13", "99.82.158.217"]),
                false,
            ),
            (
                "Two BYOIPs in different order - no drift",
                s(&["169.254.8.14", "169.254.8.13"]),
                v4(&["169.254.8.13", "169.254.8.14"]),
                true,
            ),
        ] {
            assert_eq!(ipv4_addresses_equal(&want, &have), equal, "{name}");
        }
        // IPv6 sets do not count.
        let mut dual = v4(&["192.0.2.1"]);
        dual.push(IpSet {
            ip_address_family: "IPv6".into(),
            ip_addresses: s(&["2001:db8::1"]),
        });
        assert!(ipv4_addresses_equal(&s(&["192.0.2.1"]), &dual));
    }
}

#[cfg(test)]
#[path = "accelerator_tests.rs"]
mod fake_tests;
