//! Controller settings the model depends on (`ModelConfig`), with upstream's flag defaults, and
//! the feature-gate set with upstream's names and default values.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use super::types::{LoadBalancerScheme, TargetType};

/// Upstream's feature gates and their defaults (`--feature-gates`).
pub const FEATURE_GATE_DEFAULTS: &[(&str, bool)] = &[
    ("ListenerRulesTagging", true),
    ("WeightedTargetGroups", true),
    ("ServiceTypeLoadBalancerOnly", false),
    ("EndpointsFailOpen", true),
    ("EnableServiceController", true),
    ("EnableIPTargetType", true),
    ("EnableTCPUDPListener", false),
    ("EnableRGTAPI", false),
    ("SubnetsClusterTagCheck", true),
    ("NLBHealthCheckAdvancedConfig", true),
    ("NLBSecurityGroup", true),
    ("ALBSingleSubnet", false),
    ("LBCapacityReservation", true),
    ("SubnetDiscoveryByReachability", true),
    ("NLBGatewayAPI", true),
    ("ALBGatewayAPI", true),
    ("GatewayListenerSet", true),
    ("GlobalAcceleratorController", false),
    ("EnhancedDefaultBehavior", false),
    ("EnableDefaultTagsLowPriority", false),
    ("ALBTargetControlAgent", false),
    ("EnableCertificateManagement", false),
    ("IngressPlanAnnotation", false),
];

/// Everything the model builder needs from the controller's configuration. `Default` matches
/// upstream's defaults except `cluster_name`, which upstream requires.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ModelConfig {
    /// `--cluster-name`.
    pub cluster_name: String,
    /// `--aws-vpc-id` (copied into TargetGroupBindings' `vpcID`).
    pub vpc_id: Option<String>,
    /// `--ingress-class` (default `alb`; "" also manages class-less Ingresses).
    pub ingress_class: String,
    /// `--default-tags`.
    pub default_tags: BTreeMap<String, String>,
    /// `--external-managed-tags`: keys users may not set through annotations.
    pub external_managed_tags: Vec<String>,
    /// `--default-target-type`.
    pub default_target_type: TargetType,
    /// `--default-load-balancer-scheme`.
    pub default_scheme: LoadBalancerScheme,
    /// `--default-ssl-policy`.
    pub default_ssl_policy: String,
    /// `--enable-backend-security-group`.
    pub enable_backend_sg: bool,
    /// `--backend-security-group` (empty = auto-created `k8s-traffic-...`).
    pub backend_sg_id: Option<String>,
    /// `--enable-manage-backend-security-group-rules`.
    pub enable_manage_backend_sg_rules: bool,
    /// `--disable-restricted-sg-rules`.
    pub disable_restricted_sg_rules: bool,
    /// `--tolerate-non-existent-backend-service`.
    pub tolerate_non_existent_backend_service: bool,
    /// `--tolerate-non-existent-backend-action`.
    pub tolerate_non_existent_backend_action: bool,
    /// `--enable-waf` / `--enable-wafv2` / `--enable-shield` (addons are only modelled when on).
    pub enable_waf: bool,
    pub enable_wafv2: bool,
    pub enable_shield: bool,
    /// `--feature-gates` overrides; unset gates take `FEATURE_GATE_DEFAULTS`.
    pub feature_gates: BTreeMap<String, bool>,
    /// `--load-balancer-class`: the `spec.loadBalancerClass` of Services this controller owns.
    pub load_balancer_class: String,
    /// `--default-pca-arn`: the private CA of the ACM certificates created for Ingresses
    /// (`create-acm-cert`) without `acm-pca-arn`; none: Amazon-issued certificates.
    pub default_pca_arn: Option<String>,
}

impl Default for ModelConfig {
    fn default() -> Self {
        ModelConfig {
            cluster_name: String::new(),
            vpc_id: None,
            ingress_class: "alb".to_string(),
            default_tags: BTreeMap::new(),
            external_managed_tags: Vec::new(),
            default_target_type: TargetType::Instance,
            default_scheme: LoadBalancerScheme::Internal,
            default_ssl_policy: "ELBSecurityPolicy-2016-08".to_string(),
            enable_backend_sg: true,
            backend_sg_id: None,
            enable_manage_backend_sg_rules: false,
            disable_restricted_sg_rules: false,
            tolerate_non_existent_backend_service: true,
            tolerate_non_existent_backend_action: true,
            enable_waf: true,
            enable_wafv2: true,
            enable_shield: true,
            feature_gates: BTreeMap::new(),
            load_balancer_class: "service.k8s.aws/nlb".to_string(),
            default_pca_arn: None,
        }
    }
}

impl ModelConfig {
    /// Whether a feature gate is on (explicit setting, else upstream's default; unknown = off).
    pub fn gate(&self, name: &str) -> bool {
        if let Some(v) = self.feature_gates.get(name) {
            return *v;
        }
        FEATURE_GATE_DEFAULTS
            .iter()
            .find(|(n, _)| *n == name)
            .map(|(_, v)| *v)
            .unwrap_or(false)
    }

    /// Parses `--feature-gates` text (`K=bool,...`) with upstream's unknown-key error.
    pub fn parse_feature_gates(raw: &str) -> Result<BTreeMap<String, bool>, String> {
        let mut out = BTreeMap::new();
        for pair in raw.split(',').map(str::trim).filter(|s| !s.is_empty()) {
            let (k, v) = pair
                .split_once('=')
                .ok_or_else(|| format!("invalid feature gate: {pair}"))?;
            let k = k.trim();
            if !FEATURE_GATE_DEFAULTS.iter().any(|(n, _)| *n == k) {
                return Err(format!("unknown feature: {k}"));
            }
            let v = crate::annotations::go_parse_bool(v.trim())
                .ok_or_else(|| format!("invalid value of {k}: {v}"))?;
            out.insert(k.to_string(), v);
        }
        Ok(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_match_upstream_flags() {
        let c = ModelConfig::default();
        assert_eq!(c.ingress_class, "alb");
        assert_eq!(c.default_ssl_policy, "ELBSecurityPolicy-2016-08");
        assert_eq!(c.default_target_type, TargetType::Instance);
        assert_eq!(c.default_scheme, LoadBalancerScheme::Internal);
        assert!(c.enable_backend_sg && c.tolerate_non_existent_backend_service);
        assert!(c.gate("ListenerRulesTagging"));
        assert!(c.gate("SubnetsClusterTagCheck"));
        assert!(!c.gate("ALBSingleSubnet"));
        assert!(!c.gate("NoSuchGate"));
    }

    #[test]
    fn feature_gate_parsing_rejects_unknown_keys() {
        let g =
            ModelConfig::parse_feature_gates("ALBSingleSubnet=true, ListenerRulesTagging=false")
                .unwrap();
        let c = ModelConfig {
            feature_gates: g,
            ..Default::default()
        };
        assert!(c.gate("ALBSingleSubnet"));
        assert!(!c.gate("ListenerRulesTagging"));
        assert_eq!(
            ModelConfig::parse_feature_gates("Bogus=true").unwrap_err(),
            "unknown feature: Bogus"
        );
    }
}
