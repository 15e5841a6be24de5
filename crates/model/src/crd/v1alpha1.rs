//! TargetGroupBinding `elbv2.k8s.aws/v1alpha1`: the older served (non-storage) version, a subset
//! of v1beta1 (no ipAddressType, nodeSelector, vpcID or targetGroupProtocol). Kept only so the
//! merged CRD serves both versions like upstream's; there is no conversion webhook.

use kube::CustomResource;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

pub use super::target_group_binding::{
    NetworkingIngressRule, NetworkingPeer, NetworkingPort, ServiceReference,
    TargetGroupBindingNetworking, TargetType,
};

fn is_false(b: &bool) -> bool {
    !*b
}

/// Desired state of a v1alpha1 TargetGroupBinding.
#[derive(CustomResource, Serialize, Deserialize, Clone, Debug, PartialEq, Default, JsonSchema)]
#[kube(
    group = "elbv2.k8s.aws",
    version = "v1alpha1",
    kind = "TargetGroupBinding",
    plural = "targetgroupbindings",
    namespaced,
    status = "TargetGroupBindingStatus",
    printcolumn = r#"{"name":"SERVICE-NAME","type":"string","jsonPath":".spec.serviceRef.name","description":"The Kubernetes Service's name"}"#,
    printcolumn = r#"{"name":"SERVICE-PORT","type":"string","jsonPath":".spec.serviceRef.port","description":"The Kubernetes Service's port"}"#,
    printcolumn = r#"{"name":"TARGET-TYPE","type":"string","jsonPath":".spec.targetType","description":"The AWS TargetGroup's TargetType"}"#,
    printcolumn = r#"{"name":"ARN","type":"string","jsonPath":".spec.targetGroupARN","description":"The AWS TargetGroup's Amazon Resource Name","priority":1}"#,
    printcolumn = r#"{"name":"NAME","type":"string","jsonPath":".spec.targetGroupName","description":"The AWS TargetGroup's Name","priority":2}"#,
    printcolumn = r#"{"name":"AGE","type":"date","jsonPath":".metadata.creationTimestamp"}"#
)]
#[serde(rename_all = "camelCase")]
pub struct TargetGroupBindingSpec {
    /// The Amazon Resource Name (ARN) of the TargetGroup.
    #[serde(
        rename = "targetGroupARN",
        default,
        skip_serializing_if = "String::is_empty"
    )]
    pub target_group_arn: String,
    /// The name of the TargetGroup.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub target_group_name: String,
    /// Whether the TargetGroup is shared among multiple clusters.
    #[serde(default, skip_serializing_if = "is_false")]
    pub multi_cluster_target_group: bool,
    /// TargetType of the TargetGroup.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub target_type: Option<TargetType>,
    /// Reference to a Kubernetes Service and ServicePort.
    pub service_ref: ServiceReference,
    /// Networking rules allowing the load balancer to reach the targets.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub networking: Option<TargetGroupBindingNetworking>,
    /// IAM role to assume for cross-account target groups.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub iam_role_arn_to_assume: String,
    /// External id used when assuming `iamRoleArnToAssume`.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub assume_role_external_id: String,
}

/// Observed state of a v1alpha1 TargetGroupBinding.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, Default, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct TargetGroupBindingStatus {
    /// The generation observed by the TargetGroupBinding controller.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub observed_generation: Option<i64>,
}
