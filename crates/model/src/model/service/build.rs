//! Orchestration, in upstream's order: scheme → IP address type → subnets → load balancer
//! (security groups, attributes, tags, subnet mappings, name) → one listener per port, each
//! with its target group and TargetGroupBinding (and those of the backends its weighted
//! `actions.*` annotation names).

use k8s_openapi::api::core::v1::Service;

use super::annotations::{key, sfx, SvcAnnotations};
use super::env::ServiceEnv;
use super::load_balancer::LbFacts;
use super::task::Task;
use super::{listeners, load_balancer, qualify, security_groups, subnets};
use crate::annotations::{self as ann, AnnotationMap};
use crate::model::cluster::PLACEHOLDER_SERVICE_UID;
use crate::model::config::ModelConfig;
use crate::model::error::{Fail, ModelError};
use crate::model::tags::{TagContext, SERVICE_TAG_PREFIX};
use crate::model::types::{GroupId, Stack, StackKind};

/// Builds the stack of one Service. A Service that does not qualify gets an empty stack
/// (everything tagged with it must go), unless deletion protection forbids that.
pub fn build_service_stack(
    svc: &Service,
    cfg: &ModelConfig,
    env: &ServiceEnv,
) -> Result<Stack, ModelError> {
    let empty = AnnotationMap::new();
    let annotations = svc.metadata.annotations.as_ref().unwrap_or(&empty);
    let namespace = svc.metadata.namespace.as_deref().unwrap_or("default");
    let name = svc.metadata.name.as_deref().unwrap_or("");
    let group = GroupId::implicit(namespace, name);
    let t = Task {
        svc,
        a: SvcAnnotations(annotations),
        cfg,
        env,
        tags: TagContext {
            cfg,
            group: &group,
            prefix: SERVICE_TAG_PREFIX,
        },
        namespace,
        name,
        uid: svc
            .metadata
            .uid
            .as_deref()
            .unwrap_or(PLACEHOLDER_SERVICE_UID),
    };
    let mut stack = Stack {
        stack_id: group.as_string(),
        kind: StackKind::Service,
        ..Default::default()
    };
    if !qualify::is_service_supported(svc, cfg) {
        if qualify::is_pending_finalization(svc) {
            check_deletion_protection(&t).map_err(|f| f.on_service(&t.key()))?;
        }
        return Ok(stack);
    }
    stack.members = vec![t.key()];
    build(&t, &mut stack).map_err(|f| f.on_service(&t.key()))?;
    Ok(stack)
}

fn build(t: &Task<'_>, stack: &mut Stack) -> Result<(), Fail> {
    let scheme = load_balancer::scheme(t)?;
    let ip_type = load_balancer::ip_address_type(t)?;
    let subnets = subnets::subnets(t, scheme, ip_type)?;
    let sgs = security_groups::decide(t, ip_type)?;
    stack.load_balancer = Some(load_balancer::build(t, scheme, ip_type, &subnets, &sgs)?);
    stack.managed_security_group = sgs.managed.clone();
    stack.backend_security_group = sgs.backend.clone();
    let facts = LbFacts {
        scheme,
        ip: ip_type,
        sgs,
        subnets: subnets.resolved,
    };
    listeners::build_all(t, &facts, stack)?;
    stack.listeners.sort_by_key(|l| l.port);
    stack.target_groups.sort_by(|a, b| a.id.cmp(&b.id));
    stack.target_group_bindings.sort_by(|a, b| a.id.cmp(&b.id));
    Ok(())
}

/// Upstream's refusal to tear down a Service whose annotation asks for deletion protection,
/// followed by `: <name>` (`pkg/service/model_builder.go`); the Service controller's Warning and
/// `plan` both carry it.
pub const SERVICE_DELETION_PROTECTED: &str =
    "deletion_protection is enabled, cannot delete the service";

/// Upstream refuses to tear down a Service whose annotation asks for deletion protection.
fn check_deletion_protection(t: &Task<'_>) -> Result<(), Fail> {
    let attrs = t.a.map(sfx::LB_ATTRIBUTES)?.unwrap_or_default();
    let Some(raw) = attrs.get("deletion_protection.enabled") else {
        return Ok(());
    };
    match ann::go_parse_bool(raw) {
        Some(true) => Err(Fail::msg(format!(
            "{SERVICE_DELETION_PROTECTED}: {}",
            t.name
        ))),
        Some(false) => Ok(()),
        None => Err(Fail::at(
            key(sfx::LB_ATTRIBUTES),
            format!("strconv.ParseBool: parsing {raw:?}: invalid syntax"),
        )),
    }
}
