//! The Service producer of `diff`: for each Service the Service reconciler would handle, the
//! writes it would make, in its order (finalizer → AWS → TargetGroupBindings → status), or, for a
//! Service that is going or no longer ours but holds the finalizer, the teardown (bindings → AWS
//! → status → finalizer). Only reads reach the cluster; the comparisons are the reconciler's own.

use k8s_openapi::api::core::v1::{LoadBalancerIngress, Service};
use kube::ResourceExt;

use super::groups::{bindings_labeled, kube_write, one, Env};
use super::{Sink, StackDiff, Write};
use crate::controller::service::{desired_status, status_is_current, EnvReader};
use crate::model::service::{
    build_service_stack, is_pending_finalization, is_service_supported, service_key, ServiceEnv,
    SERVICE_FINALIZER,
};
use crate::model::tags::{TagContext, SERVICE_TAG_PREFIX};
use crate::model::{ClusterObjects, GroupId};

/// Every Service the controller would reconcile, in `ns/name` order.
pub fn plan<'o>(env: &Env<'_>, objs: &'o ClusterObjects) -> Vec<&'o Service> {
    let mut services: Vec<&Service> = objs
        .services
        .iter()
        .filter(|s| is_service_supported(s, &env.cfg.model) || is_pending_finalization(s))
        .collect();
    services.sort_by_key(|s| service_key(s));
    services
}

/// Each of `services` ([`plan`]) in turn, handed to `sink` as soon as it is computed.
pub async fn diff_services(
    env: &Env<'_>,
    reader: &EnvReader,
    objs: &ClusterObjects,
    services: &[&Service],
    sink: &mut Sink<'_>,
) -> std::io::Result<()> {
    for &svc in services {
        let mut d = StackDiff {
            kind: "service",
            stack: service_key(svc),
            writes: Vec::new(),
            error: None,
        };
        if let Err(e) = one_service(env, reader, objs, svc, &mut d.writes).await {
            let mut aws = env.recorder.take();
            d.writes.append(&mut aws);
            d.error = Some(e);
        }
        sink.stack(d)?;
    }
    Ok(())
}

fn labels(env: &Env<'_>, svc: &Service) -> std::collections::BTreeMap<String, String> {
    let ns = svc.namespace().unwrap_or_else(|| "default".into());
    let group = GroupId::implicit(&ns, &svc.name_any());
    TagContext {
        cfg: &env.cfg.model,
        group: &group,
        prefix: SERVICE_TAG_PREFIX,
    }
    .stack_labels()
}

/// Where the Service controller looks for the stack's bindings: the Service's own namespace.
fn own_ns(svc: &Service) -> [String; 1] {
    [svc.namespace().unwrap_or_else(|| "default".into())]
}

fn finalizer_write(svc: &Service, add: bool) -> Write {
    super::groups::finalizer_write("Service", service_key(svc), SERVICE_FINALIZER, add)
}

/// A status entry as the report shows it: the hostname (or IP) and the ports upstream lists,
/// so a change of either is visible as before → after.
fn ingress_text(e: &LoadBalancerIngress) -> String {
    let host = e
        .hostname
        .clone()
        .or_else(|| e.ip.clone())
        .unwrap_or_default();
    let ports: Vec<String> = e
        .ports
        .iter()
        .flatten()
        .map(|p| format!("{}/{}", p.port, p.protocol))
        .collect();
    if ports.is_empty() {
        host
    } else {
        format!("{host} [{}]", ports.join(" "))
    }
}

/// The Service's current status entry, as [`ingress_text`] shows it.
fn status_text(svc: &Service) -> Option<String> {
    svc.status
        .as_ref()?
        .load_balancer
        .as_ref()?
        .ingress
        .as_ref()?
        .first()
        .map(ingress_text)
}

async fn one_service(
    env: &Env<'_>,
    reader: &EnvReader,
    objs: &ClusterObjects,
    svc: &Service,
    writes: &mut Vec<Write>,
) -> Result<(), String> {
    let key = service_key(svc);
    let aws_env = if is_service_supported(svc, &env.cfg.model) {
        reader
            .read(env.deployer, &key)
            .await
            .map_err(|e| format!("Failed build model due to {e}"))?
            .with_backends_of(svc, |ns, name| objs.service(ns, name).cloned())
    } else {
        ServiceEnv::default()
    };
    let stack = build_service_stack(svc, &env.cfg.model, &aws_env)
        .map_err(|e| format!("Failed build model due to {e}"))?;
    let has_finalizer = is_pending_finalization(svc);
    if stack.load_balancer.is_none() {
        // The Service stack's own tags, as the controller checks (not an Ingress stack's).
        env.deployer
            .check_deletable_of(stack.kind, &stack.stack_id)
            .await
            .map_err(|e| format!("Failed deploy model due to {e}"))?;
        if let Some(client) = env.client {
            bindings_labeled(client, &labels(env, svc), &own_ns(svc), &[], writes).await?;
        }
        env.deployer
            .deploy(&stack)
            .await
            .map_err(|e| format!("Failed deploy model due to {e}"))?;
        writes.append(&mut env.recorder.take());
        if env.client.is_some() {
            if let Some(h) = status_text(svc) {
                writes.push(kube_write(
                    "patch Service/status",
                    key.clone(),
                    one("status.loadBalancer", Some(h), None),
                ));
            }
            writes.push(finalizer_write(svc, false));
        }
        return Ok(());
    }
    if env.client.is_some() && !has_finalizer {
        writes.push(finalizer_write(svc, true));
    }
    let deployed = env
        .deployer
        .deploy(&stack)
        .await
        .map_err(|e| format!("Failed deploy model due to {e}"))?;
    writes.append(&mut env.recorder.take());
    let Some(client) = env.client else {
        return Ok(());
    };
    bindings_labeled(
        client,
        &labels(env, svc),
        &own_ns(svc),
        &deployed.target_group_bindings,
        writes,
    )
    .await?;
    if let Some(lb) = &deployed.load_balancer {
        let want = desired_status(svc, &lb.dns_name);
        if !status_is_current(svc, &want) {
            writes.push(kube_write(
                "patch Service/status",
                key,
                one(
                    "status.loadBalancer",
                    status_text(svc),
                    Some(ingress_text(&want)),
                ),
            ));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use k8s_openapi::api::core::v1::PortStatus;

    #[test]
    fn a_status_differing_only_in_ports_shows_the_ports() {
        let have = LoadBalancerIngress {
            hostname: Some("nlb.example".into()),
            ..Default::default()
        };
        let want = LoadBalancerIngress {
            ports: Some(vec![PortStatus {
                port: 80,
                protocol: "TCP".into(),
                error: None,
            }]),
            ..have.clone()
        };
        assert_eq!(ingress_text(&have), "nlb.example");
        assert_eq!(ingress_text(&want), "nlb.example [80/TCP]");
    }
}
