//! Custom resource types: TargetGroupBinding (v1beta1 storage + v1alpha1 served) and
//! IngressClassParams, with upstream's group, names, schema and printer columns.

pub mod ingress_class_params;
pub mod target_group_binding;
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
    let tgb = kube::core::crd::merge_crds(
        vec![
            v1alpha1::TargetGroupBinding::crd(),
            TargetGroupBinding::crd(),
        ],
        "v1beta1",
    )
    .expect("the two TargetGroupBinding versions share group, kind, names and scope");
    vec![tgb, IngressClassParams::crd()]
}

#[cfg(test)]
mod tests;
