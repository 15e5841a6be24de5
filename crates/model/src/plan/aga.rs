//! `plan` for GlobalAccelerators (gate `GlobalAcceleratorController`): every GlobalAccelerator of
//! the manifests planned as the controller builds it — accelerator, listeners, endpoint groups —
//! with its endpoints loaded from the manifests' Services, Ingresses, Gateways and ReferenceGrants.
//!
//! Offline there is no load balancer to resolve a DNS name against. A Service or Ingress of the
//! manifests this controller gives a load balancer (a planned Ingress group or Service) is
//! planned as that load balancer will be: its status as the controller will write it (the load
//! balancer's name in a placeholder DNS name, its listener ports) and a placeholder ARN of AWS's
//! shape naming the load balancer, with a note; an endpoint whose load balancer exists already
//! (its DNS name in the manifest's status) or is not this controller's is left out with the
//! loader's reason, as the controller leaves out an endpoint that does not load.

use std::collections::BTreeMap;
use std::path::Path;

use anyhow::Context;
use gateway_api::apis::standard::gateways::Gateway;
use gateway_api::apis::standard::referencegrants::ReferenceGrant;
use k8s_openapi::api::core::v1::{LoadBalancerIngress, PortStatus, Service};
use k8s_openapi::api::networking::v1::{Ingress, IngressLoadBalancerIngress, IngressPortStatus};
use serde::Serialize;
use serde_json::Value;

use super::gateway::GatewayManifests;
use crate::crd::global_accelerator::GlobalAccelerator;
use crate::model::aga::{
    build_aga_stack, desired_endpoints, load_endpoints, AgaConfig, AgaStack, EndpointSource,
    LoadedEndpointStatus, Lookup,
};
use crate::model::{ClusterObjects, ModelConfig, Stack};

/// The gate of the GlobalAccelerator controller.
pub const GATE: &str = "GlobalAcceleratorController";
/// The region a plan without `--aws-region` names (noted): generated accelerator names hash the
/// region, and endpoint groups without one default to it.
pub const PLACEHOLDER_REGION: &str = "aws-region-unset";
/// The account and id of a planned load balancer's placeholder ARN (known once it exists).
pub const PLACEHOLDER_ACCOUNT: &str = "000000000000";
pub const PLACEHOLDER_LB_ID: &str = "0000000000000000";

/// The GlobalAccelerators of the manifests.
#[derive(Default)]
pub(crate) struct AgaManifests {
    pub(crate) accelerators: Vec<GlobalAccelerator>,
}

impl AgaManifests {
    /// Keeps `doc` when it is a GlobalAccelerator; false otherwise.
    pub(crate) fn take(&mut self, doc: &Value, file: &Path) -> anyhow::Result<bool> {
        if doc.get("kind").and_then(Value::as_str) != Some("GlobalAccelerator") {
            return Ok(false);
        }
        let mut ga: GlobalAccelerator = serde_json::from_value(doc.clone())
            .with_context(|| format!("{}: GlobalAccelerator", file.display()))?;
        ga.metadata
            .namespace
            .get_or_insert_with(|| "default".into());
        self.accelerators.push(ga);
        Ok(true)
    }
}

/// One GlobalAccelerator's plan.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
pub(super) struct AcceleratorPlan {
    accelerator: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    stack: Option<AgaStack>,
    #[serde(skip_serializing_if = "Option::is_none")]
    error: Option<String>,
    /// Endpoints left out of their groups, with the loader's reason (the controller warns and
    /// retries them), and those planned on a load balancer not created yet.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    endpoints: Vec<EndpointNote>,
}

impl AcceleratorPlan {
    /// Whether the GlobalAccelerator failed its build (a fatal endpoint error included).
    pub(super) fn failed(&self) -> bool {
        self.error.is_some()
    }
}

/// One endpoint the plan shows apart: `<Type>/<namespace>/<name>` and why.
#[derive(Serialize)]
pub(super) struct EndpointNote {
    endpoint: String,
    note: String,
}

/// A load balancer the plan gives a Service or Ingress of the manifests.
#[derive(Debug, Clone, PartialEq)]
pub(super) struct PlannedLb {
    /// Its name, as the stack names it.
    name: String,
    /// `application` or `network`.
    lb_type: String,
    /// The ports its status will list: the listeners' (Ingress), the spec's (Service).
    ports: Vec<(i32, String)>,
}

impl PlannedLb {
    fn dns_name(&self, region: &str) -> String {
        format!("{}-0000000000.{region}.elb.amazonaws.com", self.name).to_ascii_lowercase()
    }

    fn arn(&self, region: &str) -> String {
        let short = if self.lb_type == "network" {
            "net"
        } else {
            "app"
        };
        format!(
            "arn:aws:elasticloadbalancing:{region}:{PLACEHOLDER_ACCOUNT}:loadbalancer/{short}/{}/{PLACEHOLDER_LB_ID}",
            self.name
        )
    }
}

/// The load balancers the plan gives the manifests' objects: `Ingress ns/name` and
/// `Service ns/name` → the planned load balancer.
pub(super) type PlannedLbs = BTreeMap<String, PlannedLb>;

/// Each member of an Ingress group's stack gets the group's load balancer.
pub(super) fn plan_ingress_lbs(stack: &Stack, out: &mut PlannedLbs) {
    let Some(lb) = &stack.load_balancer else {
        return;
    };
    // ALB listeners are TCP in the status, as the Ingress controller writes it.
    let ports: Vec<(i32, String)> = stack
        .listeners
        .iter()
        .map(|l| (l.port, "TCP".to_string()))
        .collect();
    for member in &stack.members {
        out.insert(
            format!("Ingress {member}"),
            PlannedLb {
                name: lb.name.clone(),
                lb_type: lb.lb_type.clone(),
                ports: ports.clone(),
            },
        );
    }
}

/// A Service's stack gets its NLB; its status lists the spec's ports.
pub(super) fn plan_service_lb(
    key: &str,
    svc: Option<&Service>,
    stack: &Stack,
    out: &mut PlannedLbs,
) {
    let Some(lb) = &stack.load_balancer else {
        return;
    };
    let ports: Vec<(i32, String)> = svc
        .and_then(|s| s.spec.as_ref())
        .and_then(|s| s.ports.as_ref())
        .into_iter()
        .flatten()
        .map(|p| (p.port, p.protocol.clone().unwrap_or_else(|| "TCP".into())))
        .collect();
    out.insert(
        format!("Service {key}"),
        PlannedLb {
            name: lb.name.clone(),
            lb_type: lb.lb_type.clone(),
            ports,
        },
    );
}

/// What endpoint loading reads, from the manifests and the plan's load balancers.
struct PlanSource<'a> {
    objs: &'a ClusterObjects,
    gateways: &'a GatewayManifests,
    planned: &'a PlannedLbs,
    region: &'a str,
}

fn key(meta: &k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta) -> String {
    format!(
        "{}/{}",
        meta.namespace.as_deref().unwrap_or("default"),
        meta.name.as_deref().unwrap_or_default()
    )
}

fn has_hostname<'a>(mut hostnames: impl Iterator<Item = Option<&'a String>>) -> bool {
    hostnames.any(|h| h.is_some_and(|h| !h.is_empty()))
}

impl PlanSource<'_> {
    fn planned(&self, kind: &str, ns: &str, name: &str) -> Option<&PlannedLb> {
        self.planned.get(&format!("{kind} {ns}/{name}"))
    }
}

impl EndpointSource for PlanSource<'_> {
    fn service(&self, namespace: &str, name: &str) -> Lookup<Service> {
        let Some(svc) = self.objs.service(namespace, name) else {
            return Lookup::NotFound;
        };
        let mut svc = svc.clone();
        let entries = svc
            .status
            .as_ref()
            .and_then(|s| s.load_balancer.as_ref())
            .and_then(|lb| lb.ingress.as_ref());
        let known = has_hostname(entries.into_iter().flatten().map(|e| e.hostname.as_ref()));
        if let (false, Some(lb)) = (known, self.planned("Service", namespace, name)) {
            let ports: Vec<PortStatus> = lb
                .ports
                .iter()
                .map(|(port, protocol)| PortStatus {
                    port: *port,
                    protocol: protocol.clone(),
                    error: None,
                })
                .collect();
            let status = svc.status.get_or_insert_with(Default::default);
            status
                .load_balancer
                .get_or_insert_with(Default::default)
                .ingress = Some(vec![LoadBalancerIngress {
                hostname: Some(lb.dns_name(self.region)),
                ports: (!ports.is_empty()).then_some(ports),
                ..Default::default()
            }]);
        }
        Lookup::Found(svc)
    }

    fn ingress(&self, namespace: &str, name: &str) -> Lookup<Ingress> {
        let found = self
            .objs
            .ingresses
            .iter()
            .find(|i| key(&i.metadata) == format!("{namespace}/{name}"));
        let Some(ing) = found else {
            return Lookup::NotFound;
        };
        let mut ing = ing.clone();
        let entries = ing
            .status
            .as_ref()
            .and_then(|s| s.load_balancer.as_ref())
            .and_then(|lb| lb.ingress.as_ref());
        let known = has_hostname(entries.into_iter().flatten().map(|e| e.hostname.as_ref()));
        if let (false, Some(lb)) = (known, self.planned("Ingress", namespace, name)) {
            let ports: Vec<IngressPortStatus> = lb
                .ports
                .iter()
                .map(|(port, protocol)| IngressPortStatus {
                    port: *port,
                    protocol: protocol.clone(),
                    error: None,
                })
                .collect();
            let status = ing.status.get_or_insert_with(Default::default);
            status
                .load_balancer
                .get_or_insert_with(Default::default)
                .ingress = Some(vec![IngressLoadBalancerIngress {
                hostname: Some(lb.dns_name(self.region)),
                ip: None,
                ports: (!ports.is_empty()).then_some(ports),
            }]);
        }
        Lookup::Found(ing)
    }

    fn gateway(&self, namespace: &str, name: &str) -> Lookup<Gateway> {
        self.gateways
            .gateways
            .iter()
            .find(|g| key(&g.metadata) == format!("{namespace}/{name}"))
            .map_or(Lookup::NotFound, |g| Lookup::Found(g.clone()))
    }

    fn reference_grants(&self, namespace: &str) -> Result<Vec<ReferenceGrant>, String> {
        Ok(self
            .gateways
            .reference_grants
            .iter()
            .filter(|g| g.metadata.namespace.as_deref() == Some(namespace))
            .cloned()
            .collect())
    }

    fn load_balancer_arn(&self, dns_name: &str) -> Result<String, String> {
        self.planned
            .values()
            .find(|lb| lb.dns_name(self.region) == dns_name)
            .map(|lb| lb.arn(self.region))
            .ok_or_else(|| {
                "plan reads no AWS account: the load balancer's ARN is known to the controller only"
                    .to_string()
            })
    }
}

/// The plan of every GlobalAccelerator of `manifests` (sorted by `namespace/name`), or a note
/// when the gate is off.
pub(super) fn accelerator_plans(
    manifests: &AgaManifests,
    objs: &ClusterObjects,
    gateways: &GatewayManifests,
    planned: &PlannedLbs,
    cfg: &ModelConfig,
    region: Option<&str>,
    notes: &mut Vec<String>,
) -> Vec<AcceleratorPlan> {
    if manifests.accelerators.is_empty() {
        return Vec::new();
    }
    if !cfg.gate(GATE) {
        notes.push(format!(
            "feature gate {GATE} is off: no GlobalAccelerator is reconciled ({} in the manifests)",
            manifests.accelerators.len()
        ));
        return Vec::new();
    }
    let region = match region.filter(|r| !r.is_empty()) {
        Some(r) => r,
        None => {
            notes.push(format!(
                "no --aws-region: GlobalAccelerators are planned in region {PLACEHOLDER_REGION} (generated accelerator names hash the region; endpoint groups without a region take it)"
            ));
            PLACEHOLDER_REGION
        }
    };
    let builder = AgaConfig::new(cfg, region);
    let source = PlanSource {
        objs,
        gateways,
        planned,
        region,
    };
    let mut plans: Vec<AcceleratorPlan> = manifests
        .accelerators
        .iter()
        .map(|ga| one(&builder, &source, ga))
        .collect();
    plans.sort_by(|a, b| a.accelerator.cmp(&b.accelerator));
    plans
}

fn one(builder: &AgaConfig, source: &PlanSource<'_>, ga: &GlobalAccelerator) -> AcceleratorPlan {
    let desired = desired_endpoints(ga);
    let (loaded, fatal) = load_endpoints(source, ga, &desired);
    let mut endpoints: Vec<EndpointNote> = Vec::new();
    for e in &loaded {
        match e.status {
            LoadedEndpointStatus::Loaded => {
                let pending = source
                    .planned
                    .values()
                    .find(|lb| lb.arn(source.region) == e.arn);
                if let Some(lb) = pending {
                    endpoints.push(EndpointNote {
                        endpoint: e.key(),
                        note: format!(
                            "planned on load balancer {} of the manifests, not created yet: its ARN's account and id are placeholders",
                            lb.name
                        ),
                    });
                }
            }
            LoadedEndpointStatus::Warning | LoadedEndpointStatus::Fatal => {
                endpoints.push(EndpointNote {
                    endpoint: e.key(),
                    note: e
                        .error
                        .as_ref()
                        .map_or_else(|| e.message.clone(), ToString::to_string),
                });
            }
        }
    }
    let (stack, error) = match fatal.first() {
        Some(f) => (None, Some(format!("failed to load endpoints: {f}"))),
        None => match build_aga_stack(builder, ga, &loaded) {
            Ok(stack) => (Some(stack), None),
            Err(e) => (None, Some(e.to_string())),
        },
    };
    AcceleratorPlan {
        accelerator: ga.key(),
        stack,
        error,
        endpoints,
    }
}
