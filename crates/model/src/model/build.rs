//! The top floor: the model's entry points, one per kind of stack, and the AWS facts they take.
//! Each builder lives in its own module (`ingress`, `service`, `gateway`); this is where callers
//! find all of them.

pub use super::env::BuildEnv;
pub use super::gateway::{build_alb_gateway_stack, build_nlb_gateway_stack, GatewayBuild};
pub use super::ingress::build_stack;
pub use super::service::{build_service_stack, ServiceEnv};
