//! Orchestration, in upstream's order: scheme → IP address type → subnets → load balancer
//! (security groups, attributes, tags, subnet mappings, name) → one listener per port, each
//! with its target group and TargetGroupBinding (and those of the backends its weighted
//! `actions.*` annotation names).

use k8s_openapi::api::core::v1::{Service, ServicePort};

use super::annotations::{key, sfx, SvcAnnotations};
use super::security_groups::SgDecision;
use super::{listeners, load_balancer, qualify, security_groups, ServiceEnv};
use crate::annotations::{self as ann, AnnotationMap};
use crate::model::config::ModelConfig;
use crate::model::error::{Fail, ModelError};
use crate::model::subnets::SubnetInfo;
use crate::model::tags::{TagContext, SERVICE_TAG_PREFIX};
use crate::model::target_group::PLACEHOLDER_SERVICE_UID;
use crate::model::types::{GroupId, IpAddressType, LoadBalancerScheme, Stack, StackKind};

/// The load balancer settings target groups and TargetGroupBindings depend on.
pub(super) struct LbFacts {
    pub scheme: LoadBalancerScheme,
    pub ip: IpAddressType,
    pub sgs: SgDecision,
    /// The NLB's subnets, when the VPC's subnets are known.
    pub subnets: Option<Vec<SubnetInfo>>,
}

/// Everything one Service build reads.
pub(super) struct Task<'a> {
    pub svc: &'a Service,
    pub a: SvcAnnotations<'a>,
    pub cfg: &'a ModelConfig,
    pub env: &'a ServiceEnv,
    pub tags: TagContext<'a>,
    pub namespace: &'a str,
    pub name: &'a str,
    /// The Service UID (placeholder when the manifest has none, as in `plan`).
    pub uid: &'a str,
}

impl<'a> Task<'a> {
    /// `ns/name`.
    pub fn key(&self) -> String {
        format!("{}/{}", self.namespace, self.name)
    }

    pub fn ports(&self) -> &[ServicePort] {
        self.svc
            .spec
            .as_ref()
            .and_then(|s| s.ports.as_deref())
            .unwrap_or(&[])
    }

    /// The same build seen from `backend`, a Service of this namespace a weighted action names:
    /// its spec, name and UID, with this Service's annotations, settings and stack (upstream
    /// builds the target groups of weighted backends from the base Service's annotations).
    pub fn for_backend(&self, backend: &'a Service) -> Task<'a> {
        Task {
            svc: backend,
            a: self.a,
            cfg: self.cfg,
            env: self.env,
            tags: TagContext {
                cfg: self.tags.cfg,
                group: self.tags.group,
                prefix: self.tags.prefix,
            },
            namespace: self.namespace,
            name: backend.metadata.name.as_deref().unwrap_or(""),
            uid: backend
                .metadata
                .uid
                .as_deref()
                .unwrap_or(PLACEHOLDER_SERVICE_UID),
        }
    }

    /// `--default-tags` merged with `aws-load-balancer-additional-resource-tags` (user tags of
    /// every resource; the tracking tags are added by `TagContext::resource_tags`).
    pub fn annotation_tags(&self) -> Result<std::collections::BTreeMap<String, String>, Fail> {
        let tags = self.a.map(sfx::ADDITIONAL_TAGS)?.unwrap_or_default();
        if let Some(k) = tags
            .keys()
            .find(|k| self.cfg.external_managed_tags.contains(k))
        {
            return Err(Fail::at(
                key(sfx::ADDITIONAL_TAGS),
                format!("external managed tag key {k} cannot be specified on Service"),
            ));
        }
        Ok(tags)
    }
}

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
    let subnets = load_balancer::subnets(t, scheme, ip_type)?;
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
