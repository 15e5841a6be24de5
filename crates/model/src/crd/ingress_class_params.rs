//! IngressClassParams `elbv2.k8s.aws/v1beta1` (cluster-scoped): per-IngressClass settings that take
//! precedence over the equivalent Ingress annotations. JSON names follow upstream, including the
//! legacy capitalised `PrefixListsIDs` field and the non-omitempty `wafv2AclArn`/`wafv2AclName`.

use std::collections::BTreeMap;

use k8s_openapi::apimachinery::pkg::apis::meta::v1::LabelSelector;
use kube::{CustomResource, KubeSchema};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

pub use super::target_group_binding::TargetType;

/// IP address type of the load balancer.
#[derive(
    Serialize, Deserialize, Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, JsonSchema,
)]
pub enum IpAddressType {
    #[serde(rename = "ipv4")]
    Ipv4,
    #[serde(rename = "dualstack")]
    DualStack,
    #[serde(rename = "dualstack-without-public-ipv4")]
    DualStackWithoutPublicIpv4,
}

/// Scheme of the load balancer.
#[derive(
    Serialize, Deserialize, Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, JsonSchema,
)]
pub enum LoadBalancerScheme {
    #[serde(rename = "internal")]
    Internal,
    #[serde(rename = "internet-facing")]
    InternetFacing,
}

/// Selects subnets by id or by tag values; exactly one of the two.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, Default, JsonSchema)]
pub struct SubnetSelector {
    /// Subnet ids (pattern `subnet-[0-9a-f]+`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[schemars(length(min = 1), inner(regex(pattern = "subnet-[0-9a-f]+")))]
    pub ids: Vec<String>,
    /// Tag key → accepted values.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub tags: BTreeMap<String, Vec<String>>,
}

/// IngressGroup settings.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, Default, JsonSchema)]
pub struct IngressGroup {
    /// Name of the IngressGroup.
    pub name: String,
}

/// An AWS tag.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, Default, JsonSchema)]
pub struct Tag {
    pub key: String,
    pub value: String,
}

/// A load balancer or listener attribute.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, Default, JsonSchema)]
pub struct Attribute {
    pub key: String,
    pub value: String,
}

/// Listener protocol for per-listener attributes.
#[derive(Serialize, Deserialize, Clone, Copy, Debug, PartialEq, Eq, JsonSchema)]
pub enum ListenerProtocol {
    #[serde(rename = "HTTP")]
    Http,
    #[serde(rename = "HTTPS")]
    Https,
}

/// Attributes for the listener with this protocol and port.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, Default, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Listener {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub protocol: Option<ListenerProtocol>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub port: Option<i32>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub listener_attributes: Vec<Attribute>,
}

/// Load balancer capacity reservation.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, Default, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct MinimumLoadBalancerCapacity {
    pub capacity_units: i32,
}

/// IPAM settings.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, Default, JsonSchema)]
pub struct IpamConfiguration {
    #[serde(
        rename = "ipv4IPAMPoolId",
        default,
        skip_serializing_if = "Option::is_none"
    )]
    pub ipv4_ipam_pool_id: Option<String>,
}

/// Desired state of IngressClassParams.
#[derive(CustomResource, KubeSchema, Serialize, Deserialize, Clone, Debug, PartialEq, Default)]
#[kube(
    group = "elbv2.k8s.aws",
    version = "v1beta1",
    kind = "IngressClassParams",
    plural = "ingressclassparams",
    singular = "ingressclassparam",
    printcolumn = r#"{"name":"GROUP-NAME","type":"string","jsonPath":".spec.group.name","description":"The Ingress Group name"}"#,
    printcolumn = r#"{"name":"SCHEME","type":"string","jsonPath":".spec.scheme","description":"The AWS Load Balancer scheme"}"#,
    printcolumn = r#"{"name":"IP-ADDRESS-TYPE","type":"string","jsonPath":".spec.ipAddressType","description":"The AWS Load Balancer ipAddressType"}"#,
    printcolumn = r#"{"name":"AGE","type":"date","jsonPath":".metadata.creationTimestamp"}"#
)]
#[x_kube(validation = kube::core::Rule::new("!(has(self.prefixListsIDs) && has(self.PrefixListsIDs))").message("cannot specify both 'prefixListsIDs' and 'PrefixListsIDs' fields"))]
#[serde(rename_all = "camelCase")]
pub struct IngressClassParamsSpec {
    /// Name of the load balancer created for this class.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub load_balancer_name: String,
    /// Certificate ARNs for all Ingresses of this class.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub certificate_arn: Vec<String>,
    /// Namespaces allowed to use this class; absent or empty selects all.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub namespace_selector: Option<LabelSelector>,
    /// IngressGroup for all Ingresses of this class.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub group: Option<IngressGroup>,
    /// Scheme for all Ingresses of this class.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub scheme: Option<LoadBalancerScheme>,
    /// CIDRs allowed to reach the load balancer.
    #[serde(
        rename = "inboundCIDRs",
        default,
        skip_serializing_if = "Vec::is_empty"
    )]
    pub inbound_cidrs: Vec<String>,
    /// SSL policy of HTTPS listeners.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub ssl_policy: String,
    /// HTTPS port HTTP listeners redirect to.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub ssl_redirect_port: String,
    /// Subnets of the load balancer.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub subnets: Option<SubnetSelector>,
    /// IP address type of the load balancer.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ip_address_type: Option<IpAddressType>,
    /// Tags on every AWS resource of this class.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub tags: Vec<Tag>,
    /// Target type of every target group of this class.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub target_type: Option<TargetType>,
    /// Load balancer attributes.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub load_balancer_attributes: Vec<Attribute>,
    /// Per-listener attributes.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub listeners: Vec<Listener>,
    /// Capacity reservation.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub minimum_load_balancer_capacity: Option<MinimumLoadBalancerCapacity>,
    /// IPAM settings.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ipam_configuration: Option<IpamConfiguration>,
    /// Legacy spelling of `prefixListsIDs` (not recommended).
    #[serde(
        rename = "PrefixListsIDs",
        default,
        skip_serializing_if = "Vec::is_empty"
    )]
    pub prefix_lists_ids_legacy: Vec<String>,
    /// Security-group prefix lists allowed to reach the load balancer.
    #[serde(
        rename = "prefixListsIDs",
        default,
        skip_serializing_if = "Vec::is_empty"
    )]
    pub prefix_lists_ids: Vec<String>,
    /// ARN of the WAFv2 web ACL.
    #[serde(default)]
    pub wafv2_acl_arn: String,
    /// Name of the WAFv2 web ACL.
    #[serde(default)]
    pub wafv2_acl_name: String,
}

impl IngressClassParams {
    /// Decodes one as upstream's Go types do. There `spec` is `omitempty` and every field in it
    /// optional, and upstream's chart renders the default class's params with no `spec` at all;
    /// the derived type requires one, so a missing (or null) `spec` is read as the empty one. Every
    /// reader (watch, `diff`, `plan`) decodes through here.
    pub fn decode(mut value: serde_json::Value) -> serde_json::Result<IngressClassParams> {
        if let Some(obj) = value.as_object_mut() {
            if obj.get("spec").is_none_or(serde_json::Value::is_null) {
                obj.insert("spec".into(), serde_json::json!({}));
            }
        }
        serde_json::from_value(value)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn params_without_a_spec_decode_as_the_empty_spec() {
        // As upstream's chart renders `alb`'s params by default.
        let v = serde_json::json!({"apiVersion": "elbv2.k8s.aws/v1beta1", "kind": "IngressClassParams",
            "metadata": {"name": "alb"}});
        assert!(serde_json::from_value::<IngressClassParams>(v.clone()).is_err());
        let p = IngressClassParams::decode(v).unwrap();
        assert_eq!(p.spec, IngressClassParamsSpec::default());
        let mut null = serde_json::json!({"metadata": {"name": "alb"}, "spec": null});
        null["apiVersion"] = "elbv2.k8s.aws/v1beta1".into();
        assert_eq!(
            IngressClassParams::decode(null).unwrap().spec,
            IngressClassParamsSpec::default()
        );
        let set = serde_json::json!({"metadata": {"name": "x"}, "spec": {"scheme": "internal"}});
        assert_eq!(
            IngressClassParams::decode(set).unwrap().spec.scheme,
            Some(LoadBalancerScheme::Internal)
        );
    }
}
