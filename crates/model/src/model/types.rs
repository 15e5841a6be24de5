//! The serialisable desired state of one Ingress group, Service or Gateway (`Stack`): the
//! bottom floor of the model, importing nothing else of it. Every collection is ordered (sorted
//! Vec or BTreeMap) so the JSON is byte-stable. References between resources are `Token`s (e.g.
//! "ARN of target group X") that the deployer resolves after creating things.
//!
//! One file per concept: `values` (scheme, protocol, `Token`), `action` (rule actions and
//! conditions), one per AWS kind as `deploy/` has them (`certificate`: ACM), and `stack` (the
//! whole).

pub use crate::crd::target_group_binding::TargetType;

pub mod action;
pub mod aga;
mod certificate;
mod frontend_nlb;
mod listener;
mod load_balancer;
mod security_group;
mod stack;
mod target_group;
mod values;

pub use action::{
    Action, AuthenticateCognitoConfig, AuthenticateOidcConfig, FixedResponseConfig, ForwardConfig,
    JwtValidationConfig, Redacted, RedirectConfig, RuleCondition, StickinessConfig,
    TargetGroupTuple, Transform,
};
pub use certificate::*;
pub use frontend_nlb::*;
pub use listener::*;
pub use load_balancer::*;
pub use security_group::*;
pub use stack::*;
pub use target_group::*;
pub use values::*;
