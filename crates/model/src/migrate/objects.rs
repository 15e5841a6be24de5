//! The Gateway API objects `migrate` writes — GatewayClass, Gateway and HTTPRoute — with the
//! fields upstream's translation sets, under their Gateway API JSON names (the `gateway.k8s.aws`
//! kinds are the CRD types of `crate::crd::gateway`). Unset fields are left out, as Go's
//! `omitempty` leaves them out of upstream's files.

use std::collections::BTreeMap;

use serde::Serialize;

/// `apiVersion` of the Gateway API kinds written.
pub const GATEWAY_API_VERSION: &str = "gateway.networking.k8s.io/v1";
/// Controller name of the ALB GatewayClass.
pub const ALB_GATEWAY_CONTROLLER: &str = "gateway.k8s.aws/alb";

pub const PATH_EXACT: &str = "Exact";
pub const PATH_PREFIX: &str = "PathPrefix";
pub const PATH_REGEX: &str = "RegularExpression";
pub const HEADER_EXACT: &str = "Exact";
pub const HEADER_REGEX: &str = "RegularExpression";
pub const QUERY_EXACT: &str = "Exact";
pub const FILTER_REQUEST_REDIRECT: &str = "RequestRedirect";
pub const FILTER_URL_REWRITE: &str = "URLRewrite";
pub const FILTER_EXTENSION_REF: &str = "ExtensionRef";
pub const FULL_PATH_MODIFIER: &str = "ReplaceFullPath";

/// The metadata `migrate` sets.
#[derive(Serialize, Clone, Debug, PartialEq, Default)]
pub struct Meta {
    pub name: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub namespace: Option<String>,
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    pub annotations: BTreeMap<String, String>,
}

impl Meta {
    pub fn named(name: &str, namespace: Option<&str>) -> Meta {
        Meta {
            name: name.to_string(),
            namespace: namespace.map(String::from),
            annotations: BTreeMap::new(),
        }
    }
}

#[derive(Serialize, Clone, Debug, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct GatewayClass {
    pub api_version: String,
    pub kind: String,
    pub metadata: Meta,
    pub spec: GatewayClassSpec,
}

#[derive(Serialize, Clone, Debug, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct GatewayClassSpec {
    pub controller_name: String,
}

#[derive(Serialize, Clone, Debug, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct Gateway {
    pub api_version: String,
    pub kind: String,
    pub metadata: Meta,
    pub spec: GatewaySpec,
}

#[derive(Serialize, Clone, Debug, PartialEq, Default)]
#[serde(rename_all = "camelCase")]
pub struct GatewaySpec {
    pub gateway_class_name: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub infrastructure: Option<GatewayInfrastructure>,
    pub listeners: Vec<GatewayListener>,
}

#[derive(Serialize, Clone, Debug, PartialEq, Default)]
#[serde(rename_all = "camelCase")]
pub struct GatewayInfrastructure {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub parameters_ref: Option<LocalParametersReference>,
}

#[derive(Serialize, Clone, Debug, PartialEq, Default)]
pub struct LocalParametersReference {
    pub group: String,
    pub kind: String,
    pub name: String,
}

#[derive(Serialize, Clone, Debug, PartialEq, Default)]
#[serde(rename_all = "camelCase")]
pub struct GatewayListener {
    pub name: String,
    pub port: i32,
    pub protocol: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub allowed_routes: Option<AllowedRoutes>,
}

#[derive(Serialize, Clone, Debug, PartialEq, Default)]
pub struct AllowedRoutes {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub namespaces: Option<RouteNamespaces>,
}

#[derive(Serialize, Clone, Debug, PartialEq, Default)]
pub struct RouteNamespaces {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub from: Option<String>,
}

#[derive(Serialize, Clone, Debug, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct HttpRoute {
    pub api_version: String,
    pub kind: String,
    pub metadata: Meta,
    pub spec: HttpRouteSpec,
}

#[derive(Serialize, Clone, Debug, PartialEq, Default)]
#[serde(rename_all = "camelCase")]
pub struct HttpRouteSpec {
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub parent_refs: Vec<ParentReference>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub hostnames: Vec<String>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub rules: Vec<HttpRouteRule>,
}

#[derive(Serialize, Clone, Debug, PartialEq, Default)]
#[serde(rename_all = "camelCase")]
pub struct ParentReference {
    pub name: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub namespace: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub section_name: Option<String>,
}

#[derive(Serialize, Clone, Debug, PartialEq, Default)]
#[serde(rename_all = "camelCase")]
pub struct HttpRouteRule {
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub matches: Vec<HttpRouteMatch>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub filters: Vec<HttpRouteFilter>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub backend_refs: Vec<HttpBackendRef>,
}

#[derive(Serialize, Clone, Debug, PartialEq, Default)]
#[serde(rename_all = "camelCase")]
pub struct HttpRouteMatch {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub path: Option<HttpPathMatch>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub headers: Vec<HttpHeaderMatch>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub query_params: Vec<HttpQueryParamMatch>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub method: Option<String>,
}

#[derive(Serialize, Clone, Debug, PartialEq, Default)]
pub struct HttpPathMatch {
    #[serde(rename = "type", skip_serializing_if = "Option::is_none")]
    pub type_: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub value: Option<String>,
}

#[derive(Serialize, Clone, Debug, PartialEq, Default)]
pub struct HttpHeaderMatch {
    #[serde(rename = "type", skip_serializing_if = "Option::is_none")]
    pub type_: Option<String>,
    pub name: String,
    pub value: String,
}

#[derive(Serialize, Clone, Debug, PartialEq, Default)]
pub struct HttpQueryParamMatch {
    #[serde(rename = "type", skip_serializing_if = "Option::is_none")]
    pub type_: Option<String>,
    pub name: String,
    pub value: String,
}

#[derive(Serialize, Clone, Debug, PartialEq, Default)]
#[serde(rename_all = "camelCase")]
pub struct HttpRouteFilter {
    #[serde(rename = "type")]
    pub type_: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub request_redirect: Option<HttpRequestRedirectFilter>,
    #[serde(rename = "urlRewrite", skip_serializing_if = "Option::is_none")]
    pub url_rewrite: Option<HttpUrlRewriteFilter>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub extension_ref: Option<LocalObjectReference>,
}

#[derive(Serialize, Clone, Debug, PartialEq, Default)]
#[serde(rename_all = "camelCase")]
pub struct HttpRequestRedirectFilter {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub scheme: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub hostname: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub path: Option<HttpPathModifier>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub port: Option<i32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub status_code: Option<i32>,
}

#[derive(Serialize, Clone, Debug, PartialEq, Default)]
#[serde(rename_all = "camelCase")]
pub struct HttpPathModifier {
    #[serde(rename = "type")]
    pub type_: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub replace_full_path: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub replace_prefix_match: Option<String>,
}

#[derive(Serialize, Clone, Debug, PartialEq, Default)]
pub struct HttpUrlRewriteFilter {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub hostname: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub path: Option<HttpPathModifier>,
}

#[derive(Serialize, Clone, Debug, PartialEq, Default)]
pub struct LocalObjectReference {
    pub group: String,
    pub kind: String,
    pub name: String,
}

#[derive(Serialize, Clone, Debug, PartialEq, Default)]
pub struct HttpBackendRef {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub kind: Option<String>,
    pub name: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub port: Option<i32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub weight: Option<i32>,
}

/// What one generated Gateway stands for (this build's, not written): the IngressGroup it
/// replaces, for `--verify` and the cutover plan.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct MigratedGateway {
    /// `group.name`, or the Ingress's name for an Ingress of its own.
    pub group: String,
    /// Whether `group.name` made the group (else one Ingress).
    pub explicit: bool,
    /// The Gateway's namespace and name.
    pub namespace: String,
    pub gateway: String,
    /// The members (`ns/name`) in upstream's order (`group.order`, then `ns/name`).
    pub members: Vec<String>,
    /// Every host the members' rules and TLS sections name, sorted.
    pub hostnames: Vec<String>,
}

impl MigratedGateway {
    /// `ns/name` of the Gateway.
    pub fn gateway_key(&self) -> String {
        format!("{}/{}", self.namespace, self.gateway)
    }

    /// How the report names the group: `group.name` or the Ingress's `ns/name`.
    pub fn label(&self) -> String {
        if self.explicit {
            format!("IngressGroup {}", self.group)
        } else {
            format!("Ingress {}/{}", self.namespace, self.group)
        }
    }
}
