//! Upstream's `pkg/ingress2gateway/console` unit tests replayed, one module per upstream test
//! file (`replay_<file>`), each case under its upstream name, each module's header counting the
//! cases it replays (`server_test.go` is replayed beside the server, in the binary); and this
//! build's own: a plan's routing read back agrees with the stack it was rendered from
//! (`routing`), and the reports of translated files (`files`).
// Upstream's test tables, one tuple per case, as its Go tables are.
#![allow(clippy::type_complexity)]

mod files;
mod replay_classify;
mod replay_differ;
mod replay_discovery;
mod replay_model;
mod routing;

use serde_json::Value;

use super::differ::{DiffEntry, DiffStatus};

pub(crate) const LB: &str = "AWS::ElasticLoadBalancingV2::LoadBalancer";
pub(crate) const LISTENER: &str = "AWS::ElasticLoadBalancingV2::Listener";
pub(crate) const LISTENER_RULE: &str = "AWS::ElasticLoadBalancingV2::ListenerRule";
pub(crate) const TG: &str = "AWS::ElasticLoadBalancingV2::TargetGroup";
pub(crate) const SG: &str = "AWS::EC2::SecurityGroup";
pub(crate) const TGB: &str = "K8S::ElasticLoadBalancingV2::TargetGroupBinding";

/// An entry as upstream's tests write one (the ids left empty).
pub(crate) fn entry(
    kind: &str,
    field: &str,
    status: DiffStatus,
    ingress: Option<Value>,
    gateway: Option<Value>,
) -> DiffEntry {
    DiffEntry {
        resource_type: kind.into(),
        correlation_id: String::new(),
        ingress_resource_id: String::new(),
        gateway_resource_id: String::new(),
        field: field.into(),
        ingress,
        gateway,
        status,
        known: false,
        known_cause: String::new(),
    }
}
