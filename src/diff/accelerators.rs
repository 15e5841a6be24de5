//! The GlobalAccelerator producer of `diff` (gate `GlobalAcceleratorController`): for each
//! GlobalAccelerator, the writes its reconcile would make, in the controller's order (finalizer →
//! Global Accelerator → status), or, for one being deleted that holds the finalizer, the step of
//! its teardown the controller would take now (the accelerator disabled, or deleted once AWS has
//! disabled it, then the finalizer). Endpoints load from the listed (or `-f`) Services,
//! Ingresses, Gateways and ReferenceGrants, and DNS names resolve over a real
//! DescribeLoadBalancers: a load balancer this report only pretends to create has no DNS name in
//! its object's status yet, so that endpoint is left out with the loader's reason, as the
//! controller's first pass would leave it.

use gateway_api::apis::standard::gateways::Gateway;
use gateway_api::apis::standard::referencegrants::ReferenceGrant;
use k8s_openapi::api::core::v1::Service;
use k8s_openapi::api::networking::v1::Ingress;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;
use kube::ResourceExt;

use super::groups::{finalizer_write, kube_write, one};
use super::{Recorder, Sink, StackDiff, Write};
use crate::aws::{ElbV2, GlobalAccelerator as GaApi};
use crate::controller::aga::source::{describe_if_needed, describe_listeners, resolve, Described};
use crate::controller::aga::status::outcome_of;
use crate::controller::gateway::Stores;
use crate::crd::global_accelerator::{GlobalAccelerator, GlobalAcceleratorStatus, FINALIZER};
use crate::deploy::aga::{delete, deploy_with, AgaDeletion, AgaOptions};
use crate::model::aga::{
    build_aga_stack, desired_endpoints, listeners_to_describe, load_endpoints, status_after_deploy,
    status_while_deleting, AgaConfig, EndpointSource, Lookup,
};
use crate::model::ClusterObjects;

/// What the producer reads and writes through.
pub struct AgaEnv<'a> {
    pub recorder: &'a Recorder,
    /// The recorder, as the Global Accelerator client.
    pub ga: &'a dyn GaApi,
    /// The recorder, as the ELBv2 client (real reads).
    pub elbv2: &'a dyn ElbV2,
    pub objs: &'a ClusterObjects,
    /// The Gateway controllers' stores, when a Gateway gate is on and the API is served.
    pub gateways: Option<&'a Stores>,
    pub builder: AgaConfig,
    pub opts: AgaOptions,
    /// Objects read from the cluster: the Kubernetes writes are shown.
    pub kube: bool,
}

/// Every GlobalAccelerator, in `namespace/name` order.
pub fn plan(accelerators: &mut [GlobalAccelerator]) {
    accelerators.sort_by_key(|a| a.key());
}

/// Each of `accelerators` in turn, handed to `sink` as soon as it is computed.
pub async fn diff_accelerators(
    env: &AgaEnv<'_>,
    accelerators: &[GlobalAccelerator],
    sink: &mut Sink<'_>,
) -> std::io::Result<()> {
    for ga in accelerators {
        let mut d = StackDiff {
            kind: "globalaccelerator",
            stack: ga.key(),
            writes: Vec::new(),
            error: None,
        };
        if let Err(e) = one_accelerator(env, ga, &mut d.writes).await {
            let mut aws = env.recorder.take();
            d.writes.append(&mut aws);
            d.error = Some(e);
        }
        sink.stack(d)?;
    }
    Ok(())
}

/// What endpoint loading reads in the report.
struct DiffSource<'a> {
    env: &'a AgaEnv<'a>,
    load_balancers: Option<&'a Described>,
}

impl EndpointSource for DiffSource<'_> {
    fn service(&self, namespace: &str, name: &str) -> Lookup<Service> {
        self.env
            .objs
            .service(namespace, name)
            .map_or(Lookup::NotFound, |s| Lookup::Found(s.clone()))
    }

    fn ingress(&self, namespace: &str, name: &str) -> Lookup<Ingress> {
        self.env
            .objs
            .ingresses
            .iter()
            .find(|i| {
                i.metadata.namespace.as_deref().unwrap_or("default") == namespace
                    && i.metadata.name.as_deref() == Some(name)
            })
            .map_or(Lookup::NotFound, |i| Lookup::Found(i.clone()))
    }

    fn gateway(&self, namespace: &str, name: &str) -> Lookup<Gateway> {
        match self.env.gateways {
            Some(stores) => stores
                .gateways
                .get(namespace, name)
                .map_or(Lookup::NotFound, |g| Lookup::Found((*g).clone())),
            None => Lookup::Failed(
                "diff reads Gateways only with gate ALBGatewayAPI or NLBGatewayAPI on and the Gateway API served".into(),
            ),
        }
    }

    fn reference_grants(&self, namespace: &str) -> Result<Vec<ReferenceGrant>, String> {
        let Some(stores) = self.env.gateways else {
            return Ok(Vec::new());
        };
        let mut grants: Vec<ReferenceGrant> = stores
            .reference_grants
            .state()
            .iter()
            .filter(|g| g.metadata.namespace.as_deref() == Some(namespace))
            .map(|g| (**g).clone())
            .collect();
        grants.sort_by(|a, b| a.metadata.name.cmp(&b.metadata.name));
        Ok(grants)
    }

    fn load_balancer_arn(&self, dns_name: &str) -> Result<String, String> {
        resolve(self.load_balancers, dns_name)
    }
}

fn now() -> Time {
    Time(k8s_openapi::jiff::Timestamp::now())
}

/// A status as the report shows it: AWS's status, the accelerator, its DNS name, conditions.
fn status_text(s: &GlobalAcceleratorStatus) -> String {
    let mut parts = Vec::new();
    if let Some(st) = &s.status {
        parts.push(st.clone());
    }
    if let Some(arn) = &s.accelerator_arn {
        parts.push(arn.clone());
    }
    if let Some(dns) = &s.dns_name {
        parts.push(dns.clone());
    }
    let mut conditions: Vec<String> = s
        .conditions
        .iter()
        .map(|c| format!("{}={} ({})", c.type_, c.status, c.reason))
        .collect();
    conditions.sort();
    parts.extend(conditions);
    parts.join(", ")
}

fn status_write(ga: &GlobalAccelerator, new: &GlobalAcceleratorStatus) -> Write {
    let before = ga
        .status
        .as_ref()
        .map(status_text)
        .filter(|t| !t.is_empty());
    kube_write(
        "patch GlobalAccelerator/status",
        ga.key(),
        one("status", before, Some(status_text(new))),
    )
}

async fn one_accelerator(
    env: &AgaEnv<'_>,
    ga: &GlobalAccelerator,
    writes: &mut Vec<Write>,
) -> Result<(), String> {
    let key = ga.key();
    let has_finalizer = ga.finalizers().iter().any(|f| f == FINALIZER);
    if ga.metadata.deletion_timestamp.is_some() {
        if !has_finalizer {
            return Ok(());
        }
        let arn = ga
            .status
            .as_ref()
            .and_then(|s| s.accelerator_arn.clone())
            .filter(|a| !a.is_empty());
        let step = delete(env.ga, &key, arn.as_deref(), &env.opts.cluster)
            .await
            .map_err(|e| {
                let which = arn.clone().unwrap_or_else(|| format!("of {key}"));
                format!("Failed cleanup due to failed to delete accelerator {which}: {e}")
            })?;
        writes.append(&mut env.recorder.take());
        if env.kube {
            match step {
                AgaDeletion::Deleted => {
                    writes.push(finalizer_write("GlobalAccelerator", key, FINALIZER, false))
                }
                AgaDeletion::InProgress { .. } => {
                    let change = status_while_deleting(ga, &now());
                    if change.changed {
                        writes.push(status_write(ga, &change.status));
                    }
                }
            }
        }
        return Ok(());
    }
    if env.kube && !has_finalizer {
        writes.push(finalizer_write(
            "GlobalAccelerator",
            key.clone(),
            FINALIZER,
            true,
        ));
    }
    let desired = desired_endpoints(ga);
    let described = describe_if_needed(env.elbv2, &desired).await;
    let source = DiffSource {
        env,
        load_balancers: described.as_ref(),
    };
    let (mut loaded, fatal) = load_endpoints(&source, ga, &desired);
    if let Some(f) = fatal.first() {
        return Err(format!(
            "Failed to reconcile due to failed to load endpoints: {f}"
        ));
    }
    if let Some(arn) = listeners_to_describe(ga, &loaded).map(str::to_string) {
        let listeners = describe_listeners(env.elbv2, &arn).await;
        if let Some(endpoint) = loaded.first_mut() {
            endpoint.listeners = Some(listeners);
        }
    }
    let stack = build_aga_stack(&env.builder, ga, &loaded)
        .map_err(|e| format!("Failed build model due to {e}"))?;
    let deployed = deploy_with(env.ga, &stack, &env.opts)
        .await
        .map_err(|e| format!("Failed to deploy stack due to {e}"))?;
    writes.append(&mut env.recorder.take());
    if env.kube {
        let change = status_after_deploy(ga, &outcome_of(&deployed), &now());
        if change.changed {
            writes.push(status_write(ga, &change.status));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use k8s_openapi::apimachinery::pkg::apis::meta::v1::Condition;

    #[test]
    fn a_status_shows_aws_status_accelerator_dns_and_conditions() {
        let s = GlobalAcceleratorStatus {
            status: Some("DEPLOYED".into()),
            accelerator_arn: Some("arn:aws:globalaccelerator::1:accelerator/x".into()),
            dns_name: Some("a1.awsglobalaccelerator.com".into()),
            conditions: vec![Condition {
                type_: "Ready".into(),
                status: "True".into(),
                reason: "AcceleratorReady".into(),
                message: String::new(),
                last_transition_time: now(),
                observed_generation: None,
            }],
            ..Default::default()
        };
        assert_eq!(
            status_text(&s),
            "DEPLOYED, arn:aws:globalaccelerator::1:accelerator/x, a1.awsglobalaccelerator.com, Ready=True (AcceleratorReady)"
        );
        assert_eq!(status_text(&GlobalAcceleratorStatus::default()), "");
    }
}
