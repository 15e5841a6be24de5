//! TargetGroupBinding `elbv2.k8s.aws/v1beta1` (storage version): binds a Service port to an
//! existing ELBv2 target group. Field names, enums and printer columns follow upstream exactly so
//! that objects written by upstream controllers round-trip unchanged.

use k8s_openapi::apimachinery::pkg::apis::meta::v1::{Condition, LabelSelector};
use k8s_openapi::apimachinery::pkg::util::intstr::IntOrString;
use kube::CustomResource;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// How targets are registered: nodes on their NodePort (`instance`) or pods on their port (`ip`).
#[derive(
    Serialize, Deserialize, Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, JsonSchema,
)]
pub enum TargetType {
    #[serde(rename = "instance")]
    Instance,
    #[serde(rename = "ip")]
    Ip,
}

impl Default for ServiceReference {
    fn default() -> Self {
        ServiceReference {
            name: String::new(),
            port: IntOrString::Int(0),
        }
    }
}

impl TargetType {
    /// The wire value (`instance` / `ip`).
    pub fn as_str(&self) -> &'static str {
        match self {
            TargetType::Instance => "instance",
            TargetType::Ip => "ip",
        }
    }
}

/// IP address family of the target group.
#[derive(
    Serialize, Deserialize, Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, JsonSchema,
)]
pub enum TargetGroupIpAddressType {
    #[serde(rename = "ipv4")]
    Ipv4,
    #[serde(rename = "ipv6")]
    Ipv6,
}

/// Target group protocol (upstream `elbv2.Protocol` restricted by the CRD enum).
#[derive(
    Serialize, Deserialize, Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, JsonSchema,
)]
pub enum TargetGroupProtocol {
    #[serde(rename = "HTTP")]
    Http,
    #[serde(rename = "HTTPS")]
    Https,
    #[serde(rename = "TCP")]
    Tcp,
    #[serde(rename = "TLS")]
    Tls,
    #[serde(rename = "UDP")]
    Udp,
    #[serde(rename = "TCP_UDP")]
    TcpUdp,
    #[serde(rename = "QUIC")]
    Quic,
    #[serde(rename = "TCP_QUIC")]
    TcpQuic,
}

/// Reference to a Service and one of its ports (by number or by name).
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, JsonSchema)]
pub struct ServiceReference {
    /// Name is the name of the Service.
    pub name: String,
    /// Port is the port of the ServicePort.
    pub port: IntOrString,
}

/// A CIDR peer.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, Eq, JsonSchema)]
pub struct IpBlock {
    /// CIDR is the network CIDR (IPv4 or IPv6).
    pub cidr: String,
}

/// A security-group peer.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, Eq, JsonSchema)]
pub struct SecurityGroup {
    /// GroupID is the EC2 SecurityGroupID.
    #[serde(rename = "groupID")]
    pub group_id: String,
}

/// Source of allowed traffic: exactly one of ipBlock / securityGroup.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, Default, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct NetworkingPeer {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ip_block: Option<IpBlock>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub security_group: Option<SecurityGroup>,
}

/// Protocol of a networking rule.
#[derive(Serialize, Deserialize, Clone, Copy, Debug, PartialEq, Eq, JsonSchema)]
pub enum NetworkingProtocol {
    #[serde(rename = "TCP")]
    Tcp,
    #[serde(rename = "UDP")]
    Udp,
}

/// Port and protocol of a networking rule; no port means all ports.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, Default, JsonSchema)]
pub struct NetworkingPort {
    /// The protocol which traffic must match; TCP when unspecified.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub protocol: Option<NetworkingProtocol>,
    /// The port which traffic must match; all ports when unspecified.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub port: Option<IntOrString>,
}

/// Traffic allowed from `from` peers to the `ports` of the targets.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, Default, JsonSchema)]
pub struct NetworkingIngressRule {
    pub from: Vec<NetworkingPeer>,
    pub ports: Vec<NetworkingPort>,
}

/// Security-group rules the controller maintains so the load balancer can reach the targets.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, Default, JsonSchema)]
pub struct TargetGroupBindingNetworking {
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub ingress: Vec<NetworkingIngressRule>,
}

fn is_false(b: &bool) -> bool {
    !*b
}

/// Desired state of a TargetGroupBinding.
#[derive(CustomResource, Serialize, Deserialize, Clone, Debug, PartialEq, Default, JsonSchema)]
#[kube(
    group = "elbv2.k8s.aws",
    version = "v1beta1",
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
    /// The name of the TargetGroup (alternative to the ARN; the webhook resolves it).
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub target_group_name: String,
    /// Whether the TargetGroup is shared among multiple clusters.
    #[serde(default, skip_serializing_if = "is_false")]
    pub multi_cluster_target_group: bool,
    /// TargetType of the TargetGroup; inferred when unspecified.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub target_type: Option<TargetType>,
    /// Protocol of the TargetGroup; inferred when unspecified.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub target_group_protocol: Option<TargetGroupProtocol>,
    /// Reference to a Kubernetes Service and ServicePort.
    pub service_ref: ServiceReference,
    /// Networking rules allowing the load balancer to reach the targets.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub networking: Option<TargetGroupBindingNetworking>,
    /// Node selector for instance targets.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub node_selector: Option<LabelSelector>,
    /// IPv4 or IPv6; inferred when unspecified.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ip_address_type: Option<TargetGroupIpAddressType>,
    /// VPC of the TargetGroup; inferred when unspecified.
    #[serde(rename = "vpcID", default, skip_serializing_if = "String::is_empty")]
    pub vpc_id: String,
    /// IAM role to assume for cross-account target groups.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub iam_role_arn_to_assume: String,
    /// External id used when assuming `iamRoleArnToAssume`.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub assume_role_external_id: String,
}

/// Observed state of a TargetGroupBinding.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, Default, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct TargetGroupBindingStatus {
    /// The generation observed by the TargetGroupBinding controller.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub observed_generation: Option<i64>,
    /// Current conditions of the TargetGroupBinding.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub conditions: Vec<Condition>,
}
