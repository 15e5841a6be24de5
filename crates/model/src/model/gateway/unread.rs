//! Warnings for Gateway inputs upstream accepts and never acts on (nothing accepted and ignored):
//! the Gateway's `spec.tls` and `spec.addresses`, fields its type dropped in decoding, a `spec.infrastructure.parametersRef` of
//! another kind (read by name as a LoadBalancerConfiguration all the same), a listener's `tls.certificateRefs` and
//! `tls.options`, a `listenerConfigurations[]` entry that matches no built listener, and the
//! regular-expression match types ALB rules take as literal values.

use gateway_api::apis::standard::gateways::{Gateway, GatewayListeners};
use gateway_api::apis::standard::grpcroutes::GrpcRouteRulesMatchesHeadersType;
use gateway_api::apis::standard::httproutes::HttpRouteRulesMatchesQueryParamsType;

use super::listeners::elb_protocol;
use super::routes::RouteView;

use crate::crd::gateway::{foreign_parameters_ref, LoadBalancerConfigurationSpec};
use crate::model::types::{Stack, Warning};

pub(super) fn warning(field: &str, message: String) -> Warning {
    Warning {
        ingress: None,
        annotation: Some(field.into()),
        message,
    }
}

/// The Gateway's own fields and its (valid) listeners' TLS fields that nothing reads.
pub(super) fn warn_unread_gateway_fields(
    gateway: &Gateway,
    listeners: &[&GatewayListeners],
    stack: &mut Stack,
) {
    let spec = &gateway.spec;
    if let Some(tls) = &spec.tls {
        for (field, set) in [
            ("spec.tls.frontend", tls.frontend.is_some()),
            ("spec.tls.backend", tls.backend.is_some()),
        ] {
            if set {
                let message = format!("Gateway field {field} is not supported and is ignored");
                stack.warnings.push(warning(field, message));
            }
        }
    }
    for path in super::dropped::dropped_of(&gateway.metadata) {
        let message = super::dropped::dropped_message("Gateway", path);
        stack.warnings.push(warning(path, message));
    }
    let infra_ref = spec
        .infrastructure
        .as_ref()
        .and_then(|i| i.parameters_ref.as_ref());
    if let Some(p) = infra_ref {
        let field = "spec.infrastructure.parametersRef";
        if let Some(message) = foreign_parameters_ref(field, &p.group, &p.kind, &p.name) {
            stack.warnings.push(warning(field, message));
        }
    }
    if spec.addresses.as_ref().is_some_and(|a| !a.is_empty()) {
        let message = "Gateway field spec.addresses is not supported and is ignored: the load balancer's addresses come from AWS (use LoadBalancerConfiguration subnet allocations for fixed NLB addresses)".to_string();
        stack.warnings.push(warning("spec.addresses", message));
    }
    for l in listeners {
        let Some(tls) = &l.tls else { continue };
        if tls.certificate_refs.as_ref().is_some_and(|c| !c.is_empty()) {
            let message = format!(
                "listener {} (port {}): tls.certificateRefs are not used: certificates come from LoadBalancerConfiguration or ACM discovery",
                l.name, l.port
            );
            stack.warnings.push(warning("tls.certificateRefs", message));
        }
        if tls.options.as_ref().is_some_and(|o| !o.is_empty()) {
            let message = format!(
                "listener {} (port {}): tls.options are not used: TLS settings come from LoadBalancerConfiguration listenerConfigurations",
                l.name, l.port
            );
            stack.warnings.push(warning("tls.options", message));
        }
    }
}

/// The Gateway's own `listenerConfigurations[]` entries whose `protocolPort` names no listener it
/// declares (its own and its accepted ListenerSets'): a typo, or a port removed from the Gateway.
/// A class-wide configuration is left alone: it may list ports only some of its Gateways have.
/// Also a `protocolPort` listed more than once: upstream applies one of the entries only.
pub(super) fn warn_unmatched_listener_configurations(
    own: Option<&LoadBalancerConfigurationSpec>,
    valid: &[&GatewayListeners],
    stack: &mut Stack,
) {
    let mut counts: std::collections::BTreeMap<&str, usize> = Default::default();
    for c in own
        .iter()
        .flat_map(|o| o.listener_configurations.iter().flatten())
    {
        *counts.entry(c.protocol_port.as_str()).or_default() += 1;
    }
    for (protocol_port, n) in counts.into_iter().filter(|(_, n)| *n > 1) {
        let message = format!(
            "listenerConfigurations has {n} entries for {protocol_port}: only one of them is applied"
        );
        stack
            .warnings
            .push(warning("listenerConfigurations", message));
    }
    let declared: Vec<String> = valid
        .iter()
        .filter_map(|l| Some(format!("{}:{}", elb_protocol(l)?.as_str(), l.port)))
        .collect();
    for c in own
        .iter()
        .flat_map(|o| o.listener_configurations.iter().flatten())
    {
        if !declared
            .iter()
            .any(|d| d.eq_ignore_ascii_case(&c.protocol_port))
        {
            let message = format!(
                "listenerConfigurations entry {} matches no listener of the Gateway and is not applied",
                c.protocol_port
            );
            stack
                .warnings
                .push(warning("listenerConfigurations", message));
        }
    }
}

/// HTTPRoute `queryParams[].type: RegularExpression` and GRPCRoute `headers[].type:
/// RegularExpression`: upstream builds them as literal values (ALB query-string and gRPC header
/// conditions take no regex), so the route matches only that exact text, which we say.
pub(super) fn warn_literal_regex(route: &RouteView<'_>, stack: &mut Stack) {
    let query_params = route
        .http_rules
        .iter()
        .flat_map(|r| r.matches.iter().flatten())
        .flat_map(|m| m.query_params.iter().flatten())
        .filter(|q| q.r#type == Some(HttpRouteRulesMatchesQueryParamsType::RegularExpression))
        .map(|q| ("queryParams", q.name.as_str(), q.value.as_str()));
    let headers = route
        .grpc_rules
        .iter()
        .flat_map(|r| r.matches.iter().flatten())
        .flat_map(|m| m.headers.iter().flatten())
        .filter(|h| h.r#type == Some(GrpcRouteRulesMatchesHeadersType::RegularExpression))
        .map(|h| ("headers", h.name.as_str(), h.value.as_str()));
    for (field, name, value) in query_params.chain(headers) {
        let message = format!(
            "{} {}/{}: {field} {name} of type RegularExpression is matched as the literal value {value:?} (the load balancer takes no regular expression there)",
            route.kind.as_str(),
            route.namespace,
            route.name
        );
        if !stack.warnings.iter().any(|w| w.message == message) {
            stack.warnings.push(Warning {
                ingress: Some(route.key()),
                annotation: Some(format!("{field}.type")),
                message,
            });
        }
    }
}
