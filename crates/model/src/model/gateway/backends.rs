//! One backendRef resolved (upstream's `commonBackendLoader` with `serviceLoader`,
//! `gatewayLoader` and `literalTargetGroupLoader`): a Service port; a Gateway whose ALB becomes
//! the target of an `alb`-type target group (NLB → ALB chaining, the ALB's ARN read from the
//! Gateway's `Programmed=True` condition message, which this controller writes too); or an
//! existing target group named by `TargetGroupName`, forwarded to by the ARN the controller looked
//! up. A backend that cannot be used is dropped (route status says why) or, where upstream
//! stops the reconcile, fails the Gateway.

use k8s_openapi::api::core::v1::{Service, ServicePort};

use super::grants::{reference_allowed, From, To, GATEWAY_API_GROUP, REFERENCE_GRANT_NOT_EXISTS};
use super::routes::{BackendRef, RouteView};
use super::tg_props::{props_for, props_for_gateway};
use super::GatewayInputs;
use crate::crd::gateway::target_group_configuration::TargetGroupProps;

/// Backend kind of an existing target group named by its AWS name.
pub const TARGET_GROUP_NAME_KIND: &str = "TargetGroupName";
/// Backend kind of a Gateway (NLB → ALB chaining).
pub const GATEWAY_KIND: &str = "Gateway";

/// Why a backend produced no target group: upstream drops it (route status, reason `reason`)
/// or fails the Gateway (`fatal`); `listeners_not_valid`: a fatal one upstream raises as a
/// loader error, which sets the Gateway's `Accepted` False `ListenersNotValid` with `message`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BackendProblem {
    pub fatal: bool,
    pub listeners_not_valid: bool,
    pub reason: &'static str,
    pub message: String,
}

fn dropped(reason: &'static str, message: impl Into<String>) -> BackendProblem {
    BackendProblem {
        fatal: false,
        listeners_not_valid: false,
        reason,
        message: message.into(),
    }
}

/// What a usable backend sends traffic to.
#[derive(Debug, Clone)]
pub enum BackendTarget<'a> {
    /// A Service port: a target group and a TargetGroupBinding.
    Service {
        service: &'a Service,
        port: ServicePort,
    },
    /// A Gateway's ALB, registered in an `alb`-type target group (no binding).
    Gateway(GatewayBackend),
    /// An existing target group, by name; its ARN is looked up when the stack is built.
    TargetGroupName(String),
}

/// A Gateway backend: the Gateway, its ALB and the backendRef port (the ALB listener's).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GatewayBackend {
    pub namespace: String,
    pub name: String,
    pub alb_arn: String,
    pub port: i32,
}

/// One usable backend of a rule.
#[derive(Debug, Clone)]
pub struct LoadedBackend<'a> {
    pub target: BackendTarget<'a>,
    pub weight: i32,
    /// The Service's (or Gateway's) TargetGroupConfiguration props for this route.
    pub props: Option<TargetGroupProps>,
}

/// Resolves `b` in upstream's order of checks (kind, then the kind's own checks), then the
/// weight (fatal above 999).
pub(super) fn resolve_backend<'a>(
    inputs: &GatewayInputs<'a>,
    route: &RouteView<'_>,
    b: &BackendRef,
) -> Result<LoadedBackend<'a>, BackendProblem> {
    let (target, props) = match b.kind.as_deref() {
        None | Some("Service") => resolve_service(inputs, route, b)?,
        Some(GATEWAY_KIND) => resolve_gateway(inputs, route, b)?,
        Some(TARGET_GROUP_NAME_KIND) => (BackendTarget::TargetGroupName(b.name.clone()), None),
        Some(_) => return Err(dropped("InvalidKind", "Unknown backend reference kind")),
    };
    if b.weight > 999 {
        // A plain error upstream, not a loader error: no Gateway status.
        return Err(BackendProblem {
            fatal: true,
            listeners_not_valid: false,
            reason: "UnsupportedValue",
            message: format!("Weight [{}] must be less than or equal to 999", b.weight),
        });
    }
    Ok(LoadedBackend {
        target,
        weight: b.weight,
        props,
    })
}

type Resolved<'a> = (BackendTarget<'a>, Option<TargetGroupProps>);

/// Whether a ReferenceGrant lets `route` reference `to` (always, in its own namespace).
fn granted(inputs: &GatewayInputs<'_>, route: &RouteView<'_>, to: &To<'_>) -> bool {
    let from = From {
        group: GATEWAY_API_GROUP,
        kind: route.kind.as_str(),
        namespace: &route.namespace,
    };
    to.namespace == route.namespace || reference_allowed(inputs.reference_grants, &from, to)
}

/// The Service port: port given, a ReferenceGrant for another namespace, the Service, its port.
fn resolve_service<'a>(
    inputs: &GatewayInputs<'a>,
    route: &RouteView<'_>,
    b: &BackendRef,
) -> Result<Resolved<'a>, BackendProblem> {
    let Some(port) = b.port else {
        return Err(dropped("UnsupportedValue", "Port is required"));
    };
    let namespace = b.namespace.as_deref().unwrap_or(&route.namespace);
    let to = To {
        group: "",
        kind: "Service",
        namespace,
        name: &b.name,
    };
    if !granted(inputs, route, &to) {
        return Err(dropped("RefNotPermitted", REFERENCE_GRANT_NOT_EXISTS));
    }
    let svc = inputs.service(namespace, &b.name).ok_or_else(|| {
        dropped(
            "BackendNotFound",
            format!("Service ({namespace}:{}) not found)", b.name),
        )
    })?;
    let sp = svc
        .spec
        .as_ref()
        .and_then(|s| s.ports.as_ref())
        .and_then(|ports| ports.iter().find(|p| p.port == port))
        .cloned()
        .ok_or_else(|| {
            dropped(
                "BackendNotFound",
                format!("Unable to find service port for port {port}"),
            )
        })?;
    let props = props_for(inputs.tg_configs, route, namespace, &b.name);
    Ok((
        BackendTarget::Service {
            service: svc,
            port: sp,
        },
        props,
    ))
}

/// The Gateway's ALB: port given, a ReferenceGrant (to kind `Gateway`) for another namespace,
/// the Gateway, its TargetGroupConfiguration, the ALB ARN of its `Programmed=True` condition
/// (none yet stops the reconcile, so that it runs again once the ARN is there, as upstream),
/// which must be an ALB's.
fn resolve_gateway<'a>(
    inputs: &GatewayInputs<'a>,
    route: &RouteView<'_>,
    b: &BackendRef,
) -> Result<Resolved<'a>, BackendProblem> {
    let Some(port) = b.port else {
        return Err(dropped("UnsupportedValue", "Port is required"));
    };
    let namespace = b.namespace.as_deref().unwrap_or(&route.namespace);
    let to = To {
        group: GATEWAY_API_GROUP,
        kind: GATEWAY_KIND,
        namespace,
        name: &b.name,
    };
    if !granted(inputs, route, &to) {
        return Err(dropped("RefNotPermitted", REFERENCE_GRANT_NOT_EXISTS));
    }
    let gw = inputs
        .gateways
        .iter()
        .find(|g| {
            g.metadata.namespace.as_deref().unwrap_or("default") == namespace
                && g.metadata.name.as_deref() == Some(b.name.as_str())
        })
        .ok_or_else(|| {
            dropped(
                "BackendNotFound",
                format!("Gateway ({namespace}:{}) not found)", b.name),
            )
        })?;
    let props = props_for_gateway(inputs.tg_configs, route, namespace, &b.name);
    let arn = gw
        .status
        .as_ref()
        .and_then(|s| s.conditions.as_ref())
        .and_then(|cs| {
            cs.iter()
                .find(|c| c.type_ == "Programmed" && c.status == "True")
        })
        .map(|c| c.message.clone())
        .unwrap_or_default();
    if arn.is_empty() {
        return Err(BackendProblem {
            fatal: true,
            listeners_not_valid: true,
            reason: "BackendNotFound",
            message: with_route(
                &format!(
                    "Gateway ({namespace}:{}) is not usable yet, LB ARN is not provisioned)",
                    b.name
                ),
                route,
            ),
        });
    }
    // `arn:aws:elasticloadbalancing:<region>:<account>:loadbalancer/app/<name>/<id>`.
    if arn.split('/').nth(1) != Some("app") {
        return Err(dropped(
            "BackendNotFound",
            format!(
                "invalid gateway ARN: {arn}, the resource type must be application load balancer"
            ),
        ));
    }
    let target = BackendTarget::Gateway(GatewayBackend {
        namespace: namespace.to_string(),
        name: b.name.clone(),
        alb_arn: arn,
        port,
    });
    Ok((target, props))
}

/// Upstream's Gateway-side message of a problem found in `route`.
fn with_route(message: &str, route: &RouteView<'_>) -> String {
    format!(
        "{message}. Invalid data can be found in route ({}, {}:{})",
        route.kind.as_str(),
        route.namespace,
        route.name
    )
}

/// The ARN of the existing target group `name` (`TargetGroupName` backend) as the controller
/// looked it up; a failed lookup fails the build, as upstream's model builder does.
pub(super) fn target_group_arn(inputs: &GatewayInputs<'_>, name: &str) -> Result<String, String> {
    match inputs.target_group_arns.get(name) {
        Some(Ok(arn)) => Ok(arn.clone()),
        Some(Err(e)) => Err(e.clone()),
        None => Err(format!(
            "the ARN of target group {name} (backendRef kind {TARGET_GROUP_NAME_KIND}) is not known: it is looked up by name in AWS"
        )),
    }
}
