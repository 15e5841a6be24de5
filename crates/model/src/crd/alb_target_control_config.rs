//! ALBTargetControlConfig `elbv2.k8s.aws/v1beta1` (namespaced): the settings of the ALB target
//! control agent sidecar that the pod webhooks inject (gate `ALBTargetControlAgent`). Field names,
//! limits, enums, patterns and printer columns follow upstream's
//! `apis/elbv2/v1beta1/albtargetcontrolconfig_types.go`.
//!
//! Optional texts stay texts (`protocolVersion`, `rustLog` included, checked by the schema's enums
//! as upstream's `*string` fields are): the injector hands them to the agent as they are.

use k8s_openapi::api::core::v1::ResourceRequirements;
use kube::CustomResource;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// The one name the injector reads, in the pod's namespace and then in
/// [`FALLBACK_NAMESPACE`]; objects of other names are ignored, as upstream does.
pub const DEFAULT_NAME: &str = "aws-load-balancer-controller-alb-target-control-agent-config";

/// Where the injector looks when the pod's namespace has no configuration: upstream's fixed
/// `kube-system`, whatever namespace the controller runs in.
pub const FALLBACK_NAMESPACE: &str = "kube-system";

/// Desired state of an ALBTargetControlConfig.
#[derive(CustomResource, Serialize, Deserialize, Clone, Debug, PartialEq, Default, JsonSchema)]
#[kube(
    group = "elbv2.k8s.aws",
    version = "v1beta1",
    kind = "ALBTargetControlConfig",
    root = "AlbTargetControlConfig",
    plural = "albtargetcontrolconfigs",
    singular = "albtargetcontrolconfig",
    namespaced,
    printcolumn = r#"{"name":"IMAGE","type":"string","jsonPath":".spec.image","description":"The ALB target control agent sidecar image"}"#,
    printcolumn = r#"{"name":"DESTINATION","type":"string","jsonPath":".spec.destinationAddress","description":"Application destination address"}"#,
    printcolumn = r#"{"name":"AGE","type":"date","jsonPath":".metadata.creationTimestamp"}"#
)]
#[serde(rename_all = "camelCase")]
pub struct AlbTargetControlConfigSpec {
    // Required fields first, in name order: the schema lists them in this order.
    /// Socket (IP:port) of the agent's management traffic; its port is the target control port.
    #[schemars(regex(pattern = r"^.+:[0-9]+$"))]
    pub control_address: String,
    /// Socket (IP:port) where the agent receives traffic; its port is the target group's port.
    #[schemars(regex(pattern = r"^.+:[0-9]+$"))]
    pub data_address: String,
    /// Socket (IP:port) the agent proxies traffic to, where the application listens.
    #[schemars(regex(pattern = r"^.+:[0-9]+$"))]
    pub destination_address: String,
    /// Image of the agent sidecar (public.ecr.aws/aws-elb/target-optimizer/target-control-agent).
    pub image: String,
    /// Most concurrent requests the target receives from the load balancer (0–1000).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(extend("default" = 1, "minimum" = 0, "maximum" = 1000))]
    pub max_concurrency: Option<i32>,
    /// Protocol between the load balancer and the agent (HTTP1, HTTP2 or GRPC).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(extend("enum" = ["HTTP1", "HTTP2", "GRPC"]))]
    pub protocol_version: Option<String>,
    /// Resource requirements of the agent sidecar.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(schema_with = "resources_schema")]
    pub resources: Option<ResourceRequirements>,
    /// Log level of the agent process (debug, info or error).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(extend("enum" = ["debug", "info", "error"]))]
    pub rust_log: Option<String>,
    /// TLS certificate the agent presents (by default a self-signed one made in memory).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tls_cert_path: Option<String>,
    /// Private key of that certificate (by default made in memory).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tls_key_path: Option<String>,
    /// ELB security policy configured for the target group.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tls_security_policy: Option<String>,
}

/// `resources` as controller-gen writes a core `ResourceRequirements` (claims as a map list keyed
/// by name), with quantities as int-or-string. k8s-openapi's own schema would inline Kubernetes'
/// long type descriptions and lose the list-map keys.
fn resources_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
    schemars::json_schema!({
        "type": "object",
        "properties": {
            "claims": {
                "type": "array",
                "items": {
                    "type": "object",
                    "properties": {
                        "name": {"type": "string"},
                        "request": {"type": "string"}
                    },
                    "required": ["name"]
                },
                "x-kubernetes-list-map-keys": ["name"],
                "x-kubernetes-list-type": "map"
            },
            "limits": {
                "type": "object",
                "additionalProperties": {"x-kubernetes-int-or-string": true}
            },
            "requests": {
                "type": "object",
                "additionalProperties": {"x-kubernetes-int-or-string": true}
            }
        }
    })
}
