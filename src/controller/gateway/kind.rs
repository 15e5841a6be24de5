//! What the ALB and NLB Gateway controllers differ in ([`Kind`]: finalizer, tag prefix, stack
//! kind) and what reconcile, deploy and cleanup all derive from a Gateway with it (namespace,
//! TargetGroupBinding labels, the finalizer steps' notes). Below all three, so none of them
//! imports another for these.

use std::collections::BTreeMap;

use gateway_api::apis::standard::gateways::Gateway;
use kube::ResourceExt;

use super::Ctx;
use crate::controller::skeleton::{reason, Failed};
use crate::model::gateway::listeners::LbKind;
use crate::model::gateway::{ALB_GATEWAY_FINALIZER, NLB_GATEWAY_FINALIZER};
use crate::model::tags::{TagContext, ALB_GATEWAY_TAG_PREFIX, NLB_GATEWAY_TAG_PREFIX};
use crate::model::{GroupId, StackKind};

/// What the ALB and NLB Gateway controllers differ in.
pub(crate) struct Kind {
    pub(crate) finalizer: &'static str,
    pub(crate) prefix: &'static str,
    pub(crate) stack: StackKind,
}

/// The [`Kind`] of the controller of `lb` load balancers.
pub(crate) fn kind(lb: LbKind) -> Kind {
    match lb {
        LbKind::Alb => Kind {
            finalizer: ALB_GATEWAY_FINALIZER,
            prefix: ALB_GATEWAY_TAG_PREFIX,
            stack: StackKind::AlbGateway,
        },
        LbKind::Nlb => Kind {
            finalizer: NLB_GATEWAY_FINALIZER,
            prefix: NLB_GATEWAY_TAG_PREFIX,
            stack: StackKind::NlbGateway,
        },
    }
}

/// Upstream's Gateway controller names its finalizer in these notes.
pub(super) const ADD_FINALIZER: Failed =
    Failed::step(reason::FAILED_ADD_FINALIZER, "add gateway finalizer");
pub(super) const REMOVE_FINALIZER: Failed =
    Failed::step(reason::FAILED_REMOVE_FINALIZER, "remove gateway finalizer");

/// The Gateway's namespace (`default` when unset).
pub(super) fn ns_of(gw: &Gateway) -> String {
    gw.namespace().unwrap_or_else(|| "default".into())
}

/// Labels of the stack's TargetGroupBindings (`gateway.k8s.aws.alb/stack-namespace`, `-name`).
pub(super) fn binding_labels(ctx: &Ctx, gw: &Gateway) -> BTreeMap<String, String> {
    let group = GroupId::implicit(&ns_of(gw), &gw.name_any());
    TagContext {
        cfg: &ctx.cfg.model,
        group: &group,
        prefix: kind(ctx.cfg.lb).prefix,
    }
    .stack_labels()
}
