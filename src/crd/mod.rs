//! Custom resource types: TargetGroupBinding (v1beta1 storage + v1alpha1 served) and
//! IngressClassParams, with upstream's group, names, schema and printer columns.

pub mod ingress_class_params;
pub mod names;
pub mod target_group_binding;
pub mod tgb_shape;
pub mod v1alpha1;

use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
use kube::CustomResourceExt;

pub use ingress_class_params::{IngressClassParams, IngressClassParamsSpec};
pub use target_group_binding::{
    TargetGroupBinding, TargetGroupBindingSpec, TargetGroupBindingStatus,
};

/// The API group of both custom resources.
pub const GROUP: &str = "elbv2.k8s.aws";

/// Every CRD this controller owns: TargetGroupBinding with v1alpha1 and v1beta1 merged into one
/// object (v1beta1 is the storage version), then IngressClassParams.
pub fn all_crds() -> Vec<CustomResourceDefinition> {
    let mut tgb = kube::core::crd::merge_crds(
        vec![
            v1alpha1::TargetGroupBinding::crd(),
            TargetGroupBinding::crd(),
        ],
        "v1beta1",
    )
    .expect("the two TargetGroupBinding versions share group, kind, names and scope");
    tgb.spec.versions.sort_by(|a, b| a.name.cmp(&b.name));
    vec![
        like_controller_gen(tgb),
        like_controller_gen(IngressClassParams::crd()),
    ]
}

/// Optional fields are plain optional properties in upstream's (controller-gen) schemas, not
/// `nullable` with `null` in enums as schemars emits them; strip both so the CRDs match.
fn like_controller_gen(crd: CustomResourceDefinition) -> CustomResourceDefinition {
    fn walk(v: &mut serde_json::Value) {
        match v {
            serde_json::Value::Object(map) => {
                if map.remove("nullable").is_some() {
                    if let Some(serde_json::Value::Array(e)) = map.get_mut("enum") {
                        e.retain(|x| !x.is_null());
                    }
                }
                map.values_mut().for_each(walk);
            }
            serde_json::Value::Array(items) => items.iter_mut().for_each(walk),
            _ => {}
        }
    }
    let Ok(mut value) = serde_json::to_value(&crd) else {
        return crd;
    };
    walk(&mut value);
    serde_json::from_value(value).unwrap_or(crd)
}

#[cfg(test)]
mod tests;
