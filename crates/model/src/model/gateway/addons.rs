//! Gateway add-ons (upstream's `pkg/gateway/model/addons` and `controllers/gateway/addons.go`):
//! the LoadBalancerConfiguration's `wafV2.webACL` and `shieldConfiguration.enabled` (ALB) and
//! `minimumLoadBalancerCapacity.capacityUnits` (ALB and NLB) become the stack's add-ons and the
//! load balancer's capacity reservation. Which add-ons were ever enabled is remembered on the
//! Gateway in annotations `gateway.k8s.aws.addon.<name>`: an add-on the configuration leaves out
//! is only removed (disassociate, protection off, capacity 0) while its annotation says it is
//! active, so what someone attached by hand stays. A Gateway being deleted asks for every active
//! add-on to be removed before its stack goes.

use gateway_api::apis::standard::gateways::Gateway;

use super::listeners::LbKind;
use crate::crd::gateway::load_balancer_configuration::LoadBalancerConfigurationSpec;
use crate::model::types::{Stack, Warning};

/// Prefix of the Gateway annotations recording the add-ons enabled on its load balancer.
pub const ADDON_ANNOTATION_PREFIX: &str = "gateway.k8s.aws.addon.";
/// `gateway.k8s.aws.addon.wafv2`.
pub const WAFV2_ANNOTATION: &str = "gateway.k8s.aws.addon.wafv2";
/// `gateway.k8s.aws.addon.shield`.
pub const SHIELD_ANNOTATION: &str = "gateway.k8s.aws.addon.shield";
/// `gateway.k8s.aws.addon.provisionedcapacity`.
pub const PROVISIONED_CAPACITY_ANNOTATION: &str = "gateway.k8s.aws.addon.provisionedcapacity";

/// Which add-ons are on: as the Gateway's annotations record them, or as a build leaves them.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ActiveAddons {
    pub wafv2: bool,
    pub shield: bool,
    pub provisioned_capacity: bool,
}

impl ActiveAddons {
    /// What the Gateway's `gateway.k8s.aws.addon.*` annotations say; a value Go's
    /// `strconv.ParseBool` does not read counts as `false`, as upstream.
    pub fn of(gw: &Gateway) -> Self {
        let on = |key: &str| {
            gw.metadata
                .annotations
                .as_ref()
                .and_then(|a| a.get(key))
                .is_some_and(|v| parse_bool(v))
        };
        Self {
            wafv2: on(WAFV2_ANNOTATION),
            shield: on(SHIELD_ANNOTATION),
            provisioned_capacity: on(PROVISIONED_CAPACITY_ANNOTATION),
        }
    }

    pub fn any(&self) -> bool {
        self.wafv2 || self.shield || self.provisioned_capacity
    }

    /// The annotation keys of the add-ons on in `self` and off in `other` (sorted).
    pub fn keys_not_in(&self, other: &ActiveAddons) -> Vec<&'static str> {
        [
            (self.provisioned_capacity && !other.provisioned_capacity)
                .then_some(PROVISIONED_CAPACITY_ANNOTATION),
            (self.shield && !other.shield).then_some(SHIELD_ANNOTATION),
            (self.wafv2 && !other.wafv2).then_some(WAFV2_ANNOTATION),
        ]
        .into_iter()
        .flatten()
        .collect()
    }
}

/// Go's `strconv.ParseBool` true values.
fn parse_bool(v: &str) -> bool {
    matches!(v, "1" | "t" | "T" | "TRUE" | "true" | "True")
}

/// Puts the configuration's add-ons on `stack` (whose load balancer is built) and returns the
/// add-ons on after it. An add-on the configuration leaves out is removed only while `active`
/// says it is on; `deleting` removes every active one. ALB Gateways carry all three, NLB
/// Gateways only the capacity reservation (upstream's `albAddons` / `nlbAddons`): a WAF or
/// Shield setting on an NLB Gateway's configuration gets a warning instead of being ignored.
pub(super) fn apply_addons(
    lbc: &LoadBalancerConfigurationSpec,
    lb: LbKind,
    active: ActiveAddons,
    deleting: bool,
    stack: &mut Stack,
) -> ActiveAddons {
    let none = LoadBalancerConfigurationSpec::default();
    let cfg = if deleting { &none } else { lbc };
    let mut on = ActiveAddons::default();
    if lb == LbKind::Alb {
        let acl = cfg
            .waf_v2
            .as_ref()
            .map(|w| w.web_acl.clone())
            .unwrap_or_default();
        if !acl.is_empty() || active.wafv2 {
            on.wafv2 = !acl.is_empty();
            stack.addons.wafv2_acl_arn = Some(acl);
        }
        let shield = cfg.shield_configuration.as_ref().is_some_and(|s| s.enabled);
        if shield || active.shield {
            on.shield = shield;
            stack.addons.shield_advanced_protection = Some(shield);
        }
    } else {
        for (field, set) in [
            ("wafV2", cfg.waf_v2.is_some()),
            ("shieldConfiguration", cfg.shield_configuration.is_some()),
        ] {
            if set {
                stack.warnings.push(Warning {
                    ingress: None,
                    annotation: Some(field.into()),
                    message: format!(
                        "LoadBalancerConfiguration field {field} applies to ALB Gateways only and is not applied to this NLB"
                    ),
                });
            }
        }
    }
    let units = cfg
        .minimum_load_balancer_capacity
        .as_ref()
        .map_or(0, |c| c.capacity_units);
    if units != 0 || active.provisioned_capacity {
        on.provisioned_capacity = units != 0;
        if let Some(lb) = stack.load_balancer.as_mut() {
            lb.minimum_capacity_units = Some(units);
        }
    }
    on
}
