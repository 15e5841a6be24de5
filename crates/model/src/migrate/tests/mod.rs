//! Upstream's `pkg/ingress2gateway` and `cmd/lbc-migrate` unit tests replayed, one module per
//! upstream test file (`replay_<file>`), each case under its upstream name; each module's header
//! counts the cases it replays and names any left out. Helpers build the inputs from YAML, as
//! upstream's tests build them from Go literals.
// Upstream's test tables, one tuple per case, as its Go tables are.
#![allow(clippy::type_complexity)]

mod replay_actions;
mod replay_conditions;
mod replay_coverage;
mod replay_gateway;
mod replay_group;
mod replay_helpers;
mod replay_httproute;
mod replay_icp;
mod replay_lb_config;
mod replay_lr_config;
mod replay_main;
mod replay_migrate;
mod replay_parser;
mod replay_pre_routing;
mod replay_reader;
mod replay_tg_config;
mod replay_transforms;
mod replay_translate;
mod replay_warnings;
mod replay_writer;

use std::collections::BTreeMap;

use k8s_openapi::api::core::v1::Service;
use k8s_openapi::api::networking::v1::{Ingress, IngressClass};

use super::annotations::ListenPort;
use crate::annotations::AnnotationMap;
use crate::crd::IngressClassParams;

/// An object from YAML (the tests' Go literals).
pub(crate) fn yaml<T: serde::de::DeserializeOwned>(text: &str) -> T {
    serde_yaml::from_str(text).unwrap_or_else(|e| panic!("{e}: {text}"))
}

/// An Ingress `ns/name` with annotations and a spec (YAML of `spec`, may be empty).
pub(crate) fn ingress(ns: &str, name: &str, annotations: &[(&str, &str)], spec: &str) -> Ingress {
    let mut ing: Ingress = Ingress::default();
    ing.metadata.name = Some(name.into());
    if !ns.is_empty() {
        ing.metadata.namespace = Some(ns.into());
    }
    if !annotations.is_empty() {
        ing.metadata.annotations = Some(annotations_map(annotations));
    }
    if !spec.trim().is_empty() {
        ing.spec = Some(yaml(spec));
    }
    ing
}

pub(crate) fn annotations_map(pairs: &[(&str, &str)]) -> AnnotationMap {
    pairs
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect()
}

/// `alb.ingress.kubernetes.io/<suffix>` (leaked: tests build annotation lists of `&str` pairs).
pub(crate) fn alb(sfx: &str) -> &'static str {
    Box::leak(format!("alb.ingress.kubernetes.io/{sfx}").into_boxed_str())
}

/// A spec of one rule: host (may be empty), one path of this type to a Service port number.
pub(crate) fn one_path(host: &str, path: &str, path_type: &str, svc: &str, port: i32) -> String {
    let host = if host.is_empty() {
        String::new()
    } else {
        format!("host: {host}\n  ")
    };
    format!(
        "rules:\n- {host}http:\n    paths:\n    - path: {path}\n      pathType: {path_type}\n      backend:\n        service:\n          name: {svc}\n          port:\n            number: {port}\n"
    )
}

/// A spec with only a default backend.
pub(crate) fn default_backend(svc: &str, port: i32) -> String {
    format!("defaultBackend:\n  service:\n    name: {svc}\n    port:\n      number: {port}\n")
}

pub(crate) fn service(
    ns: &str,
    name: &str,
    annotations: &[(&str, &str)],
    ports: &[(&str, i32)],
) -> Service {
    let mut s = Service::default();
    s.metadata.name = Some(name.into());
    s.metadata.namespace = Some(ns.into());
    if !annotations.is_empty() {
        s.metadata.annotations = Some(annotations_map(annotations));
    }
    if !ports.is_empty() {
        s.spec = Some(k8s_openapi::api::core::v1::ServiceSpec {
            ports: Some(
                ports
                    .iter()
                    .map(|(n, p)| k8s_openapi::api::core::v1::ServicePort {
                        name: (!n.is_empty()).then(|| n.to_string()),
                        port: *p,
                        ..Default::default()
                    })
                    .collect(),
            ),
            ..Default::default()
        });
    }
    s
}

pub(crate) fn services_map(services: &[Service]) -> BTreeMap<String, Service> {
    super::translate::build_service_map(services)
}

/// IngressClass `name` whose parameters are IngressClassParams `params`.
pub(crate) fn class_with_params(name: &str, params: &str) -> IngressClass {
    yaml(&format!(
        "metadata: {{name: {name}}}\nspec: {{parameters: {{kind: IngressClassParams, name: {params}}}}}"
    ))
}

/// IngressClassParams `name` with a spec in YAML.
pub(crate) fn icp(name: &str, spec: &str) -> IngressClassParams {
    // A block spec (several lines) goes under `spec:` indented; a flow one (`{..}`) inline.
    let spec = if spec.trim_start().starts_with('{') {
        format!(" {}", spec.trim())
    } else {
        spec.lines().map(|l| format!("\n  {l}")).collect()
    };
    let v: serde_json::Value = yaml(&format!("metadata: {{name: {name}}}\nspec:{spec}"));
    IngressClassParams::decode(v).expect("IngressClassParams")
}

pub(crate) fn lp(protocol: &str, port: i32) -> ListenPort {
    ListenPort::new(protocol, port)
}
