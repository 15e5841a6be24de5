//! Which Ingresses this controller owns: the class annotation vs `spec.ingressClassName`, the
//! default IngressClass, and IngressClassParams (with its namespaceSelector).

use std::collections::BTreeMap;

use k8s_openapi::api::networking::v1::{Ingress, IngressClass};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::LabelSelector;

use super::cluster::{key_of, ClusterObjects};
use crate::annotations as ann;
use crate::crd::IngressClassParams;

/// `spec.controller` of IngressClasses this controller serves.
pub const INGRESS_CLASS_CONTROLLER: &str = "ingress.k8s.aws/alb";

/// An Ingress this controller owns, with its IngressClassParams if any.
#[derive(Debug, Clone, Copy)]
pub struct ClassifiedIngress<'a> {
    pub ingress: &'a Ingress,
    pub params: Option<&'a IngressClassParams>,
}

impl ClassifiedIngress<'_> {
    pub fn key(&self) -> String {
        key_of(&self.ingress.metadata)
    }
    pub fn namespace(&self) -> &str {
        self.ingress
            .metadata
            .namespace
            .as_deref()
            .unwrap_or("default")
    }
    pub fn name(&self) -> &str {
        self.ingress.metadata.name.as_deref().unwrap_or("")
    }
    pub fn annotations(&self) -> &ann::AnnotationMap {
        static EMPTY: ann::AnnotationMap = BTreeMap::new();
        self.ingress.metadata.annotations.as_ref().unwrap_or(&EMPTY)
    }
}

/// Classification outcome for one Ingress.
#[derive(Debug, Clone, PartialEq)]
pub enum ClassError {
    /// Upstream's `ErrInvalidIngressClass` family (`invalid ingress class: ...`).
    InvalidClass(String),
    Other(String),
}

impl std::fmt::Display for ClassError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ClassError::InvalidClass(m) => write!(f, "invalid ingress class: {m}"),
            ClassError::Other(m) => f.write_str(m),
        }
    }
}

/// Whether this controller owns `ing`, and its IngressClassParams. `Ok(None)` = not ours.
pub fn classify<'a>(
    ing: &'a Ingress,
    objs: &'a ClusterObjects,
    ingress_class_flag: &str,
) -> Result<Option<Option<&'a IngressClassParams>>, ClassError> {
    let annotations = ing.metadata.annotations.as_ref();
    if let Some(value) = annotations.and_then(|a| a.get(ann::INGRESS_CLASS)) {
        let matches =
            (ingress_class_flag.is_empty() && value == "alb") || value == ingress_class_flag;
        return Ok(matches.then_some(None));
    }
    let class_name = match ing.spec.as_ref().and_then(|s| s.ingress_class_name.clone()) {
        Some(n) => n,
        None => {
            let defaults: Vec<&IngressClass> = objs
                .ingress_classes
                .iter()
                .filter(|c| {
                    c.metadata
                        .annotations
                        .as_ref()
                        .and_then(|a| a.get(ann::DEFAULT_CLASS))
                        .map(String::as_str)
                        == Some("true")
                })
                .collect();
            match defaults.as_slice() {
                [] => return Ok(ingress_class_flag.is_empty().then_some(None)),
                [one] => one.metadata.name.clone().unwrap_or_default(),
                _ => {
                    return Err(ClassError::Other(
                        "multiple default IngressClasses found".into(),
                    ))
                }
            }
        }
    };
    let class = objs
        .ingress_classes
        .iter()
        .find(|c| c.metadata.name.as_deref() == Some(class_name.as_str()))
        .ok_or_else(|| {
            ClassError::InvalidClass(format!(
                "ingressclasses.networking.k8s.io \"{class_name}\" not found"
            ))
        })?;
    let spec = class.spec.as_ref();
    if spec.and_then(|s| s.controller.as_deref()) != Some(INGRESS_CLASS_CONTROLLER) {
        return Ok(None);
    }
    let Some(params_ref) = spec.and_then(|s| s.parameters.as_ref()) else {
        return Ok(Some(None));
    };
    if params_ref.api_group.as_deref() != Some(crate::crd::GROUP)
        || params_ref.kind != "IngressClassParams"
    {
        return Err(ClassError::InvalidClass(format!(
            "IngressClass {class_name} references unknown parameters"
        )));
    }
    let params = objs
        .ingress_class_params
        .iter()
        .find(|p| p.metadata.name.as_deref() == Some(params_ref.name.as_str()))
        .ok_or_else(|| {
            ClassError::InvalidClass(format!(
                "ingressclassparams.elbv2.k8s.aws \"{}\" not found",
                params_ref.name
            ))
        })?;
    if let Some(sel) = &params.spec.namespace_selector {
        let ns = ing.metadata.namespace.as_deref().unwrap_or("default");
        if !selector_matches(sel, &namespace_labels(objs, ns)) {
            return Err(ClassError::InvalidClass(format!(
                "namespaceSelector of IngressClassParams {} mismatch",
                params_ref.name
            )));
        }
    }
    Ok(Some(Some(params)))
}

/// Labels of a namespace; an unknown namespace only has the automatic name label.
fn namespace_labels(objs: &ClusterObjects, ns: &str) -> BTreeMap<String, String> {
    objs.namespaces
        .iter()
        .find(|n| n.metadata.name.as_deref() == Some(ns))
        .and_then(|n| n.metadata.labels.clone())
        .unwrap_or_else(|| {
            BTreeMap::from([("kubernetes.io/metadata.name".to_string(), ns.to_string())])
        })
}

/// Label-selector matching (matchLabels AND every matchExpression).
pub fn selector_matches(sel: &LabelSelector, labels: &BTreeMap<String, String>) -> bool {
    let labels_ok = sel
        .match_labels
        .iter()
        .flatten()
        .all(|(k, v)| labels.get(k) == Some(v));
    let exprs_ok = sel.match_expressions.iter().flatten().all(|e| {
        let values = e.values.as_deref().unwrap_or(&[]);
        let got = labels.get(&e.key);
        match e.operator.as_str() {
            "In" => got.is_some_and(|g| values.contains(g)),
            "NotIn" => got.is_none_or(|g| !values.contains(g)),
            "Exists" => got.is_some(),
            "DoesNotExist" => got.is_none(),
            _ => false,
        }
    });
    labels_ok && exprs_ok
}
