//! The deployer of a load-balancer controller (Ingress, Service, Gateway), built in one place
//! from the model's settings: cluster name, external managed tags and the gates the deployer
//! reads (`ListenerRulesTagging`, `EnhancedDefaultBehavior`, `EnableRGTAPI`), plus what the
//! controller has of the cloud, the process's shared inventory among it.

use std::sync::Arc;
use std::time::Duration;

use crate::aws::{AddonClients, Ec2, ElbV2, ResourceTagging};
use crate::deploy::{inventory, CertDiscovery, Deployer, Inventory};
use crate::model::ModelConfig;

/// What a controller gives its deployer besides the model's settings.
pub struct DeployerParts {
    /// Resource Groups Tagging API client, used only under gate `EnableRGTAPI`.
    pub tagging: Option<Arc<dyn ResourceTagging>>,
    /// WAFv2 / WAF Classic / Shield (none: the stacks have no add-ons).
    pub addons: AddonClients,
    /// `--lb-stabilization-monitor-interval`.
    pub lb_stabilization_interval: Duration,
    /// ACM certificate discovery (`None`: a listener without certificates fails to build).
    pub cert_discovery: Option<Arc<CertDiscovery>>,
    /// The inventory every deployer of the process shares (`None`: the controller's own).
    pub inventory: Option<Arc<Inventory>>,
    /// The controller's resync period: the TTL of an inventory of its own is capped by it
    /// ([`inventory::ttl_for`]).
    pub sync_period: Duration,
}

/// The deployer of a controller whose stacks live in `vpc_id`.
pub fn deployer(
    elbv2: Arc<dyn ElbV2>,
    ec2: Arc<dyn Ec2>,
    vpc_id: &str,
    model: &ModelConfig,
    parts: DeployerParts,
) -> Deployer {
    // One inventory for all the controller's stacks when the process gives none.
    let shared = parts.inventory.unwrap_or_else(|| {
        let own = Inventory::new(elbv2.clone(), ec2.clone(), vpc_id)
            .with_ttl(inventory::ttl_for(parts.sync_period));
        Arc::new(own)
    });
    let deployer = Deployer::new(elbv2, ec2, model.cluster_name.clone(), vpc_id)
        .with_external_managed_tags(model.external_managed_tags.clone())
        .with_listener_rules_tagging(model.gate("ListenerRulesTagging"))
        .with_enhanced_default_behavior(model.gate("EnhancedDefaultBehavior"))
        .with_resource_tagging(parts.tagging.filter(|_| model.gate("EnableRGTAPI")))
        .with_addons(parts.addons)
        .with_lb_stabilization_interval(parts.lb_stabilization_interval);
    let deployer = deployer.with_inventory(shared);
    match parts.cert_discovery {
        Some(d) => deployer.with_cert_discovery(d),
        None => deployer,
    }
}
