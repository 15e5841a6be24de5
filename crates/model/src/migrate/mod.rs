//! `migrate`: upstream's `lbc-migrate` (v3.4+). Ingresses, Services, IngressClasses and
//! IngressClassParams become Gateway API objects (GatewayClass, Gateway, HTTPRoute) and the
//! controller's `gateway.k8s.aws` configuration objects (LoadBalancerConfiguration,
//! TargetGroupConfiguration, ListenerRuleConfiguration), object for object and name for name as
//! upstream's `pkg/ingress2gateway` writes them, so upstream's controller accepts the output too.
//!
//! One module per concept, as upstream splits its `translate` package: `names` (the generated
//! names), `objects` (the Gateway API kinds written), `annotations` (the annotation readers the
//! translation uses), `group` (IngressGroups: members, merged annotations, listen ports,
//! ssl-redirect), `gateway`, `httproute`, `actions`, `conditions`, `transforms`, `pre_routing`,
//! `lr_config`, `lb_config`, `tg_config`, `icp` (IngressClassParams), `translate` on top;
//! `reader` (manifest files), `warnings` (upstream's input checks), `unsupported` (what the
//! translation does not carry, warned instead of dropped in silence), `writer` with `goyaml` (the
//! files, byte for byte as upstream's printers write them), `options` (flags and their
//! combination errors), `run` (upstream's `Migrate`), `cutover` (the cutover plan), `verify`
//! (both stacks built and every derived request routed through each, as ALB does) and `console`
//! (the migration console's comparisons: upstream's plan diff and `verify`'s table).

pub mod actions;
pub mod annotations;
pub mod conditions;
pub mod console;
pub mod cutover;
pub mod gateway;
pub mod goyaml;
pub mod group;
pub mod httproute;
pub mod icp;
pub mod lb_config;
pub mod lr_config;
pub mod names;
pub mod objects;
pub mod options;
pub mod pre_routing;
pub mod reader;
pub mod run;
pub mod service_ref;
pub mod tg_config;
pub mod transforms;
pub mod translate;
pub mod unsupported;
pub mod verify;
pub mod warnings;
pub mod writer;

use k8s_openapi::api::core::v1::Service;
use k8s_openapi::api::networking::v1::{Ingress, IngressClass};

use crate::crd::gateway::{
    ListenerRuleConfiguration, LoadBalancerConfiguration, TargetGroupConfiguration,
};
use crate::crd::IngressClassParams;

pub use objects::{GatewayClass, HttpRoute, MigratedGateway};
pub use options::{validate_flags, MigrateOptions, WriteOptions, SPLIT_NAMESPACE, SPLIT_NONE};
pub use translate::translate;

/// GatewayClass every generated Gateway names.
pub const GATEWAY_CLASS_NAME: &str = "aws-alb";
/// API version of the `gateway.k8s.aws` kinds.
pub const LB_CONFIG_API_VERSION: &str = "gateway.k8s.aws/v1";
/// API group of the `gateway.k8s.aws` kinds.
pub const LBC_GATEWAY_API_GROUP: &str = "gateway.k8s.aws";
/// Tag on every generated AWS resource: where it was migrated from.
pub const MIGRATION_TAG_KEY: &str = "gateway.k8s.aws/migrated-from";
pub const PROTOCOL_HTTP: &str = "HTTP";
pub const PROTOCOL_HTTPS: &str = "HTTPS";
/// Port name of an Ingress backend that names an `actions.*` annotation, not a Service port.
pub const SERVICE_PORT_USE_ANNOTATION: &str = "use-annotation";
/// backendRef kind of an existing target group named by its name.
pub const TARGET_GROUP_NAME_BACKEND_KIND: &str = "TargetGroupName";
/// Annotation key prefix of `actions.*`.
pub const ACTION_ANNOTATION_PREFIX: &str = "alb.ingress.kubernetes.io/actions.";
/// The Gateway annotation `--dry-run` sets, and its value.
pub const DRY_RUN_ANNOTATION: &str = "gateway.k8s.aws/dry-run";
pub const DRY_RUN_ENABLED_VALUE: &str = "true";

/// Upstream's warning when actions reference existing target groups.
pub const WARN_EXTERNAL_TARGET_GROUP_MESSAGE: &str = "
\t\tWARNING: Generated manifests reference external target groups (TargetGroupName/TargetGroupARN).
\t\tExternal TGs can only be associated with one ALB at a time.
\t\tApplying the Gateway manifests while the Ingress ALB is still active will fail.
\t\tTo migrate, either:
\t\t\t1. Delete the Ingress rules referencing the external TG before applying Gateway manifests (cutover)
\t\t\t2. Create a duplicate TG and update the generated Gateway manifest to use the new TG name";

/// Upstream's tip after missing-resource warnings.
pub const TIP_USE_FROM_CLUSTER_MESSAGE: &str = "
\t\tTip: Use --from-cluster to automatically read all referenced resources,
\t\t\tor include Service/IngressClass/IngressClassParams files in your input.
\t\t";

/// Upstream's warning when an Ingress sets `group.order`.
pub const WARN_GROUP_ORDER_MESSAGE: &str = "
\t\tWARNING: group.order annotation detected. Gateway API has no equivalent of group.order.
\t\tRule precedence will be determined by Gateway API definitions. Review generated HTTPRoutes to verify
\t\texpected behavior matches current Ingress rule ordering.
\t\t";

/// Upstream's warning for an IngressGroup whose members are in several namespaces.
pub fn warn_cross_namespace_group(group: &str) -> String {
    format!(
        "WARNING: IngressGroup {} has members in different namespaces. The generated Gateway uses allowedRoutes with From: All, which permits HTTPRoutes from any namespace to attach. To restrict this, change From: All to From: Selector with a namespace label selector.\n",
        go_quote(group)
    )
}

/// Errors of the migration layer; the texts are upstream's (`lbc-migrate` prints them after
/// `Error: `).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum MigrateError {
    /// A refused flag combination.
    #[error("{0}")]
    Flags(String),
    /// The input could not be read (files, directory or cluster).
    #[error("{0}")]
    Read(String),
    /// An object could not be translated.
    #[error("{0}")]
    Translate(String),
    /// The output could not be written.
    #[error("{0}")]
    Write(String),
    /// `--verify` could not run (its configuration), as opposed to differences it found.
    #[error("{0}")]
    Verify(String),
    /// The migration console could not start or serve.
    #[error("{0}")]
    Console(String),
}

impl MigrateError {
    /// The same error with `prefix: ` before its text (Go's `fmt.Errorf("prefix: %w", err)`).
    pub fn context(self, prefix: &str) -> Self {
        let wrap = |m: String| format!("{prefix}: {m}");
        match self {
            MigrateError::Flags(m) => MigrateError::Flags(wrap(m)),
            MigrateError::Read(m) => MigrateError::Read(wrap(m)),
            MigrateError::Translate(m) => MigrateError::Translate(wrap(m)),
            MigrateError::Write(m) => MigrateError::Write(wrap(m)),
            MigrateError::Verify(m) => MigrateError::Verify(wrap(m)),
            MigrateError::Console(m) => MigrateError::Console(wrap(m)),
        }
    }
}

/// Go's `%q` for the ASCII names and values these messages quote.
pub fn go_quote(s: &str) -> String {
    let mut out = String::from("\"");
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if c.is_control() => out.push_str(&format!("\\x{:02x}", u32::from(c))),
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

/// Everything read from the input (files or the cluster).
#[derive(Debug, Clone, Default)]
pub struct InputResources {
    pub ingresses: Vec<Ingress>,
    pub services: Vec<Service>,
    pub ingress_classes: Vec<IngressClass>,
    pub ingress_class_params: Vec<IngressClassParams>,
}

impl InputResources {
    /// Empty namespaces become `default`, as the API server admits objects (file input has no
    /// admission); everything after may take a namespace as given.
    pub fn normalize_namespaces(&mut self) {
        for ing in &mut self.ingresses {
            if ing
                .metadata
                .namespace
                .as_deref()
                .unwrap_or_default()
                .is_empty()
            {
                ing.metadata.namespace = Some("default".into());
            }
        }
        for svc in &mut self.services {
            if svc
                .metadata
                .namespace
                .as_deref()
                .unwrap_or_default()
                .is_empty()
            {
                svc.metadata.namespace = Some("default".into());
            }
        }
    }
}

/// What the translation produces: upstream's objects, plus what this build adds around them —
/// the IngressGroup each Gateway stands for (for `--verify` and the cutover plan) and the
/// warnings met while translating (printed to stderr in order, as upstream prints its own).
#[derive(Debug, Clone)]
pub struct OutputResources {
    pub gateway_class: GatewayClass,
    pub gateways: Vec<objects::Gateway>,
    pub http_routes: Vec<HttpRoute>,
    pub load_balancer_configurations: Vec<LoadBalancerConfiguration>,
    pub target_group_configurations: Vec<TargetGroupConfiguration>,
    pub listener_rule_configurations: Vec<ListenerRuleConfiguration>,
    pub groups: Vec<MigratedGateway>,
    pub warnings: Vec<String>,
}

impl OutputResources {
    /// No object yet but the GatewayClass.
    pub fn new() -> Self {
        OutputResources {
            gateway_class: gateway::build_gateway_class(),
            gateways: Vec::new(),
            http_routes: Vec::new(),
            load_balancer_configurations: Vec::new(),
            target_group_configurations: Vec::new(),
            listener_rule_configurations: Vec::new(),
            groups: Vec::new(),
            warnings: Vec::new(),
        }
    }
}

impl Default for OutputResources {
    fn default() -> Self {
        Self::new()
    }
}

/// `ns/name` of an object's metadata (namespace `default` when unset).
pub(crate) fn key_of(meta: &k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta) -> String {
    format!(
        "{}/{}",
        meta.namespace.as_deref().unwrap_or("default"),
        meta.name.as_deref().unwrap_or_default()
    )
}

/// An object's annotations (none = empty).
pub(crate) fn annotations_of(
    meta: &k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta,
) -> crate::annotations::AnnotationMap {
    meta.annotations.clone().unwrap_or_default()
}

#[cfg(test)]
mod tests;
