//! The configuration a Gateway is built with (upstream's `config_resolver.go`): the class must be
//! Accepted and must have processed its LoadBalancerConfiguration's current version (else the
//! Gateway waits, with upstream's message); then the class's and the Gateway's
//! LoadBalancerConfigurations, each of which gets upstream's finalizer before it is used.

use gateway_api::apis::standard::gatewayclasses::GatewayClass;
use gateway_api::apis::standard::gateways::Gateway;
use kube::ResourceExt;

use super::feed::Stores;
use crate::controller::gateway_class::{gateway_may_build, hold_config};
use crate::crd::gateway::{LoadBalancerConfiguration, TargetGroupConfiguration};

/// The class's and the Gateway's LoadBalancerConfigurations.
#[derive(Debug, Clone, Default)]
pub struct Configs {
    pub class: Option<LoadBalancerConfiguration>,
    pub gateway: Option<LoadBalancerConfiguration>,
}

fn lb_config(stores: &Stores, ns: &str, name: &str) -> Result<LoadBalancerConfiguration, String> {
    stores
        .lb_configs
        .get(ns, name)
        .map(|c| (*c).clone())
        .ok_or_else(|| format!("loadbalancerconfigurations.gateway.k8s.aws \"{name}\" not found"))
}

/// The default TargetGroupConfiguration `lbc` names, if any; errors carry upstream's wording for
/// a class's (`of_class`) or a Gateway's configuration.
fn default_tgc(
    stores: &Stores,
    lbc: &LoadBalancerConfiguration,
    of_class: bool,
) -> Result<Option<TargetGroupConfiguration>, String> {
    let Some(r) = &lbc.spec.default_target_group_configuration else {
        return Ok(None);
    };
    let ns = lbc.namespace().unwrap_or_default();
    let wrap = |e: String| {
        if of_class {
            format!("failed to resolve default TargetGroupConfiguration for GatewayClass LBC: {e}")
        } else {
            format!(
                "failed to resolve default TargetGroupConfiguration {:?} referenced by Gateway LoadBalancerConfiguration {:?} in namespace {ns:?}: {e}",
                r.name,
                lbc.name_any()
            )
        }
    };
    let tgc = stores.tg_configs.get(&ns, &r.name).ok_or_else(|| {
        wrap(format!(
            "targetgroupconfigurations.gateway.k8s.aws \"{}\" not found",
            r.name
        ))
    })?;
    if tgc.spec.target_reference.is_some() {
        return Err(wrap(format!(
            "TargetGroupConfiguration \"{}\" in namespace \"{ns}\" has targetReference set and cannot be used as a defaultTargetGroupConfiguration — a default TGC must not have targetReference",
            r.name
        )));
    }
    Ok(Some((*tgc).clone()))
}

/// Resolves the configurations of `gw` (class `class`), or upstream's error text.
pub fn resolve(stores: &Stores, gw: &Gateway, class: &GatewayClass) -> Result<Configs, String> {
    // Accepted first (upstream's order), then the configuration version the class processed.
    gateway_may_build(class, None, None)?;
    let mut out = Configs::default();
    if let Some(p) = &class.spec.parameters_ref {
        let Some(ns) = &p.namespace else {
            return Err("Namespace must be specified in ParametersRef".into());
        };
        let lbc = lb_config(stores, ns, &p.name)?;
        gateway_may_build(class, Some(&lbc), default_tgc(stores, &lbc, true)?.as_ref())?;
        out.class = Some(lbc);
    }
    let gw_ref = gw
        .spec
        .infrastructure
        .as_ref()
        .and_then(|i| i.parameters_ref.as_ref());
    if let Some(p) = gw_ref {
        let ns = gw.namespace().unwrap_or_else(|| "default".into());
        let lbc = lb_config(stores, &ns, &p.name)?;
        default_tgc(stores, &lbc, false)?;
        out.gateway = Some(lbc);
    }
    Ok(out)
}

/// Adds upstream's finalizer to each configuration in use (so it is not deleted under us).
pub async fn hold(client: &kube::Client, configs: &Configs) -> Result<(), String> {
    for lbc in configs.class.iter().chain(&configs.gateway) {
        if let Err(e) = hold_config(client, lbc).await {
            tracing::debug!(error = ?e, "adding the LoadBalancerConfiguration finalizer failed");
            return Err(e.to_string());
        }
    }
    Ok(())
}

/// Upstream's refusal to delete a Gateway whose merged configuration protects its load balancer.
pub fn deletion_protected(
    spec: &crate::crd::gateway::load_balancer_configuration::LoadBalancerConfigurationSpec,
) -> bool {
    spec.load_balancer_attributes
        .iter()
        .any(|a| a.key == "deletion_protection.enabled" && a.value == "true")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::gateway::LAST_PROCESSED_CONFIG_ANNOTATION;
    use crate::watch::Index;
    use serde_json::json;
    use std::sync::Arc;

    fn class(accepted: &str, annotation: Option<&str>, params: bool) -> GatewayClass {
        let mut v = json!({
            "metadata": {"name": "alb"},
            "spec": {"controllerName": "gateway.k8s.aws/alb"},
            "status": {"conditions": [{"type": "Accepted", "status": accepted, "reason": "Accepted",
                        "message": "", "lastTransitionTime": "2024-01-01T00:00:00Z"}]}
        });
        if let Some(a) = annotation {
            v["metadata"]["annotations"] = json!({LAST_PROCESSED_CONFIG_ANNOTATION: a});
        }
        if params {
            v["spec"]["parametersRef"] = json!({"group": "gateway.k8s.aws",
                "kind": "LoadBalancerConfiguration", "name": "lbc", "namespace": "infra"});
        }
        serde_json::from_value(v).unwrap()
    }

    fn gw() -> Gateway {
        serde_json::from_value(json!({
            "metadata": {"name": "gw", "namespace": "apps"},
            "spec": {"gatewayClassName": "alb", "listeners": []}
        }))
        .unwrap()
    }

    #[test]
    fn a_class_not_accepted_or_behind_its_config_holds_the_gateway_back_with_upstreams_words() {
        let stores = Stores::default();
        let e = resolve(&stores, &gw(), &class("Unknown", None, false)).unwrap_err();
        assert_eq!(
            e,
            "Unable to materialize gateway when gateway class [alb] is not accepted"
        );
        assert!(resolve(&stores, &gw(), &class("True", None, false)).is_ok());
        let e = resolve(&stores, &gw(), &class("True", Some("1"), true)).unwrap_err();
        assert!(e.contains("\"lbc\" not found"), "{e}");
        let lbc: LoadBalancerConfiguration = serde_json::from_value(json!({
            "apiVersion": "gateway.k8s.aws/v1", "kind": "LoadBalancerConfiguration",
            "metadata": {"name": "lbc", "namespace": "infra", "resourceVersion": "7"},
            "spec": {}
        }))
        .unwrap();
        stores.lb_configs.apply(&Arc::new(lbc));
        let e = resolve(&stores, &gw(), &class("True", Some("6"), true)).unwrap_err();
        assert_eq!(
            e,
            "GatewayClass [alb] hasn't processed latest loadbalancer config. Processed version 6, Latest version 7"
        );
        let ok = resolve(&stores, &gw(), &class("True", Some("7"), true)).unwrap();
        assert!(ok.class.is_some() && ok.gateway.is_none());
    }
}
