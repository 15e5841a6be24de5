//! GlobalAccelerator `aga.k8s.aws/v1beta1` (namespaced): one AWS Global Accelerator with its
//! listeners and endpoint groups, whose endpoints are load balancers named by ARN or by the
//! Service, Ingress or Gateway fronting them. Follows upstream's
//! `apis/aga/v1beta1/globalaccelerator_types.go`: same fields, limits, defaults, CEL rules,
//! printer columns and status.
//!
//! Lists and maps are `Option`s because upstream tells "absent" from "empty" in places (an absent
//! `protocol` or `portRanges` asks for auto-discovery).

use std::collections::BTreeMap;

use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::Condition;
use kube::{CustomResource, CustomResourceExt, KubeSchema};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// The API group of GlobalAccelerator.
pub const GROUP: &str = "aga.k8s.aws";
/// The kind, as ReferenceGrants name it in `from`.
pub const KIND: &str = "GlobalAccelerator";
/// Upstream's finalizer on GlobalAccelerator objects (its controller removes the accelerator
/// before letting the object go).
pub const FINALIZER: &str = "aga.k8s.aws/resources";

/// Protocol of a listener.
#[derive(
    Serialize, Deserialize, Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, JsonSchema,
)]
pub enum GlobalAcceleratorProtocol {
    #[serde(rename = "TCP")]
    Tcp,
    #[serde(rename = "UDP")]
    Udp,
}

/// Client affinity of a listener.
#[derive(
    Serialize, Deserialize, Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, JsonSchema,
)]
pub enum ClientAffinityType {
    #[serde(rename = "SOURCE_IP")]
    SourceIp,
    #[serde(rename = "NONE")]
    None,
}

/// Address family of the accelerator's static addresses.
#[derive(
    Serialize, Deserialize, Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, JsonSchema,
)]
pub enum IpAddressType {
    #[serde(rename = "IPV4")]
    Ipv4,
    #[serde(rename = "DUAL_STACK")]
    DualStack,
}

/// Ports a listener accepts, both ends included.
#[derive(KubeSchema, Serialize, Deserialize, Clone, Copy, Debug, PartialEq, Eq, Default)]
#[x_kube(validation = kube::core::Rule::new("self.fromPort <= self.toPort").message("FromPort must be less than or equal to ToPort"))]
#[serde(rename_all = "camelCase")]
pub struct PortRange {
    /// First port of the range.
    #[schemars(range(min = 1, max = 65535))]
    pub from_port: i32,
    /// Last port of the range.
    #[schemars(range(min = 1, max = 65535))]
    pub to_port: i32,
}

/// One listener of the accelerator.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, Default, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct GlobalAcceleratorListener {
    /// TCP or UDP; read from the referenced Service, Ingress or Gateway when unset.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub protocol: Option<GlobalAcceleratorProtocol>,
    /// Ports clients connect to; read from the referenced Service, Ingress or Gateway when unset.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(length(min = 1, max = 10))]
    pub port_ranges: Option<Vec<PortRange>>,
    /// SOURCE_IP sends every connection of a client to the same endpoint; NONE (the default)
    /// hashes the five-tuple.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(extend("default" = "NONE"))]
    pub client_affinity: Option<ClientAffinityType>,
    /// The listener's endpoint groups, one per region.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub endpoint_groups: Option<Vec<GlobalAcceleratorEndpointGroup>>,
}

/// One endpoint group: the endpoints of a listener in one region.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, Default, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct GlobalAcceleratorEndpointGroup {
    /// AWS region of the endpoints; the cluster's region when unset.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(length(max = 255))]
    pub region: Option<String>,
    /// Share of the region's traffic sent to this group, 0–100.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(extend("default" = 100, "minimum" = 0, "maximum" = 100))]
    pub traffic_dial_percentage: Option<i32>,
    /// Listener ports mapped to other ports on the endpoints.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub port_overrides: Option<Vec<PortOverride>>,
    /// The group's endpoints.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub endpoints: Option<Vec<GlobalAcceleratorEndpoint>>,
}

/// A listener port sent to another port on the endpoints.
#[derive(Serialize, Deserialize, Clone, Copy, Debug, PartialEq, Eq, Default, JsonSchema)]
#[serde(rename_all = "camelCase")]
// Fields in controller-gen's order of `required` (alphabetical), which schemars follows.
pub struct PortOverride {
    /// Port the endpoints receive the traffic on.
    #[schemars(range(min = 1, max = 65535))]
    pub endpoint_port: i32,
    /// Port the traffic arrives on at the accelerator.
    #[schemars(range(min = 1, max = 65535))]
    pub listener_port: i32,
}

/// How an endpoint is named: `endpointID` is the endpoint's id (a load balancer ARN) for
/// EndpointID, `name` a LoadBalancer Service, an Ingress or a Gateway for the others.
#[derive(
    Serialize, Deserialize, Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, JsonSchema,
)]
// No doc comments on the variants: schemars would turn the plain `enum` into a `oneOf`.
pub enum GlobalAcceleratorEndpointType {
    EndpointID,
    Service,
    Ingress,
    Gateway,
}

impl GlobalAcceleratorEndpointType {
    /// Upstream's spelling (the CRD's enum values).
    pub fn as_str(&self) -> &'static str {
        match self {
            GlobalAcceleratorEndpointType::EndpointID => "EndpointID",
            GlobalAcceleratorEndpointType::Service => "Service",
            GlobalAcceleratorEndpointType::Ingress => "Ingress",
            GlobalAcceleratorEndpointType::Gateway => "Gateway",
        }
    }
}

impl std::fmt::Display for GlobalAcceleratorEndpointType {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// One endpoint of an endpoint group.
#[derive(KubeSchema, Serialize, Deserialize, Clone, Debug, PartialEq)]
#[x_kube(validation = kube::core::Rule::new("self.type != 'EndpointID' || (has(self.endpointID) && !has(self.name))").message("endpointID is required and name must not be set when type is EndpointID"))]
#[x_kube(validation = kube::core::Rule::new("self.type == 'EndpointID' || (has(self.name) && !has(self.endpointID))").message("name is required and endpointID must not be set when type is Service/Ingress/Gateway"))]
#[serde(rename_all = "camelCase")]
pub struct GlobalAcceleratorEndpoint {
    /// What names the endpoint.
    #[serde(rename = "type")]
    pub endpoint_type: GlobalAcceleratorEndpointType,
    /// The endpoint's id (for a load balancer its ARN) when type is EndpointID.
    #[serde(
        rename = "endpointID",
        default,
        skip_serializing_if = "Option::is_none"
    )]
    #[schemars(length(max = 255))]
    pub endpoint_id: Option<String>,
    /// Name of the Service, Ingress or Gateway.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// Namespace of the Service, Ingress or Gateway; the GlobalAccelerator's when unset. Another
    /// namespace needs a ReferenceGrant there.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub namespace: Option<String>,
    /// Share of the group's traffic, relative to the other endpoints' weights (0–255).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(extend("default" = 128, "minimum" = 0, "maximum" = 255))]
    pub weight: Option<i32>,
    /// Whether an Application Load Balancer endpoint sees the client's address.
    #[serde(
        rename = "clientIPPreservationEnabled",
        default,
        skip_serializing_if = "Option::is_none"
    )]
    #[schemars(extend("default" = true))]
    pub client_ip_preservation_enabled: Option<bool>,
}

impl GlobalAcceleratorEndpoint {
    /// An endpoint of `endpoint_type` with nothing else set.
    pub fn of_type(endpoint_type: GlobalAcceleratorEndpointType) -> Self {
        GlobalAcceleratorEndpoint {
            endpoint_type,
            endpoint_id: None,
            name: None,
            namespace: None,
            weight: None,
            client_ip_preservation_enabled: None,
        }
    }
}

/// Desired state of a GlobalAccelerator.
#[derive(CustomResource, Serialize, Deserialize, Clone, Debug, PartialEq, Default, JsonSchema)]
#[kube(
    group = "aga.k8s.aws",
    version = "v1beta1",
    kind = "GlobalAccelerator",
    plural = "globalaccelerators",
    singular = "globalaccelerator",
    namespaced,
    status = "GlobalAcceleratorStatus",
    printcolumn = r#"{"name":"ACCELERATOR-NAME","type":"string","jsonPath":".spec.name","description":"The Global Accelerator name"}"#,
    printcolumn = r#"{"name":"DNS-NAME","type":"string","jsonPath":".status.dnsName","description":"The Global Accelerator DNS name"}"#,
    printcolumn = r#"{"name":"TYPE","type":"string","jsonPath":".spec.type","description":"The Global Accelerator type"}"#,
    printcolumn = r#"{"name":"STATUS","type":"string","jsonPath":".status.status","description":"The Global Accelerator status"}"#,
    printcolumn = r#"{"name":"ARN","type":"string","jsonPath":".status.acceleratorARN","description":"The Global Accelerator ARN","priority":1}"#,
    printcolumn = r#"{"name":"AGE","type":"date","jsonPath":".metadata.creationTimestamp"}"#
)]
#[serde(rename_all = "camelCase")]
pub struct GlobalAcceleratorSpec {
    /// Name of the accelerator (letters, digits, `_` and `-`); generated when unset.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(length(min = 1, max = 64), regex(pattern = r"^[a-zA-Z0-9_-]{1,64}$"))]
    pub name: Option<String>,
    /// One or two addresses from your own pools (BYOIP), without `/32`; fixed at creation.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(length(min = 1, max = 2))]
    pub ip_addresses: Option<Vec<String>>,
    /// IPV4 (the default) or DUAL_STACK.
    #[serde(
        rename = "ipAddressType",
        default,
        skip_serializing_if = "Option::is_none"
    )]
    #[schemars(extend("default" = "IPV4"))]
    pub ip_address_type: Option<IpAddressType>,
    /// AWS tags on the accelerator.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tags: Option<BTreeMap<String, String>>,
    /// The accelerator's listeners.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub listeners: Option<Vec<GlobalAcceleratorListener>>,
}

/// Static addresses of one family.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, Eq, Default, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct IpSet {
    /// The addresses.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ip_addresses: Option<Vec<String>>,
    /// IPv4 or IPv6.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ip_address_family: Option<String>,
}

/// Observed state of a GlobalAccelerator, written by its controller.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, Default, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct GlobalAcceleratorStatus {
    /// Generation the status describes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub observed_generation: Option<i64>,
    /// ARN of the accelerator.
    #[serde(
        rename = "acceleratorARN",
        default,
        skip_serializing_if = "Option::is_none"
    )]
    pub accelerator_arn: Option<String>,
    /// DNS name pointing at the accelerator's static IPv4 addresses.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dns_name: Option<String>,
    /// DNS name pointing at a dual-stack accelerator's IPv4 and IPv6 addresses.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dual_stack_dns_name: Option<String>,
    /// The accelerator's static addresses.
    #[serde(rename = "ipSets", default, skip_serializing_if = "Vec::is_empty")]
    pub ip_sets: Vec<IpSet>,
    /// AWS's status of the accelerator (IN_PROGRESS, DEPLOYED), or DELETING.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub status: Option<String>,
    /// Ready (and AcceleratorDisabling while it is deleted).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[schemars(schema_with = "conditions_schema")]
    pub conditions: Vec<Condition>,
}

/// `metav1.Condition` as controller-gen writes it (k8s-openapi's schema lacks the limits).
fn conditions_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
    schemars::json_schema!({
        "description": "Conditions of the GlobalAccelerator.",
        "type": "array",
        "items": {
            "description": "One aspect of the current state of the object.",
            "type": "object",
            "properties": {
                "lastTransitionTime": {
                    "description": "When the condition last changed status.",
                    "type": "string",
                    "format": "date-time"
                },
                "message": {
                    "description": "Human-readable details; may be empty.",
                    "type": "string",
                    "maxLength": 32768
                },
                "observedGeneration": {
                    "description": "Generation the condition was set from.",
                    "type": "integer",
                    "format": "int64",
                    "minimum": 0
                },
                "reason": {
                    "description": "CamelCase reason of the last transition.",
                    "type": "string",
                    "maxLength": 1024,
                    "minLength": 1,
                    "pattern": "^[A-Za-z]([A-Za-z0-9_,:]*[A-Za-z0-9_])?$"
                },
                "status": {
                    "description": "True, False or Unknown.",
                    "type": "string",
                    "enum": ["True", "False", "Unknown"]
                },
                "type": {
                    "description": "Type of the condition.",
                    "type": "string",
                    "maxLength": 316,
                    "pattern": "^([a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*/)?(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])$"
                }
            },
            "required": ["lastTransitionTime", "message", "reason", "status", "type"]
        }
    })
}

impl GlobalAccelerator {
    /// `namespace/name`, the stack id and the `aga.k8s.aws/stack` tag value.
    pub fn key(&self) -> String {
        format!(
            "{}/{}",
            self.metadata.namespace.as_deref().unwrap_or_default(),
            self.metadata.name.as_deref().unwrap_or_default()
        )
    }

    /// The namespace the object lives in ("" when unset).
    pub fn namespace_or_empty(&self) -> &str {
        self.metadata.namespace.as_deref().unwrap_or_default()
    }
}

/// The CRD, with `spec` optional at the root as upstream's schema has it (its Go field is
/// `omitempty`; kube's derive requires it).
pub fn crd() -> CustomResourceDefinition {
    let mut crd = GlobalAccelerator::crd();
    for version in &mut crd.spec.versions {
        if let Some(root) = version
            .schema
            .as_mut()
            .and_then(|s| s.open_api_v3_schema.as_mut())
        {
            if let Some(required) = root.required.as_mut() {
                required.retain(|r| r != "spec");
                if required.is_empty() {
                    root.required = None;
                }
            }
        }
    }
    crd
}

#[cfg(test)]
#[path = "global_accelerator_tests.rs"]
mod tests;
