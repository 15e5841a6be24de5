//! The ownership tag keys users may not set through `--default-tags` or
//! `--external-managed-tags`.

use super::ConfigError;

/// Tag keys the controller uses to track ownership; users may not set them through flags.
pub const TRACKING_TAG_KEYS: &[&str] = &[
    "elbv2.k8s.aws/cluster",
    "elbv2.k8s.aws/resource",
    "ingress.k8s.aws/stack",
    "ingress.k8s.aws/resource",
    "service.k8s.aws/stack",
    "service.k8s.aws/resource",
    "gateway.k8s.aws.nlb/stack",
    "gateway.k8s.aws.nlb/resource",
    "gateway.k8s.aws.alb/stack",
    "gateway.k8s.aws.alb/resource",
];

/// Refuses an ownership key in a tag flag.
pub(super) fn check_tag_keys<'a>(
    keys: impl Iterator<Item = &'a String>,
    flag: &'static str,
) -> Result<(), ConfigError> {
    for key in keys {
        if TRACKING_TAG_KEYS.contains(&key.as_str()) {
            return Err(ConfigError::ReservedTagKey {
                key: key.clone(),
                flag,
            });
        }
    }
    Ok(())
}
