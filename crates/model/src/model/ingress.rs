//! The Ingress builder: one IngressGroup → an ALB `Stack` (and its frontend NLB). `build` on top
//! runs the steps, each its own module: the ACM certificates members ask for (`certificate`),
//! the group's listen ports (`ports`, merged by `listener`), the load balancer's agreed settings
//! (`lb_settings`), the load balancer with its subnets and security groups (`load_balancer`,
//! `lb_subnets`, `security_group`), listeners and rules (`build::listeners`, from `rule`, which
//! reads `backend` and `enhanced_backend`, and `mtls`), target groups (`target_group`), and the
//! frontend NLB (`frontend_nlb`). `not_deployed` refuses what this build reads but does not
//! deploy yet (a forward to a target group by name).

pub mod backend;
pub mod build;
pub mod certificate;
pub mod enhanced_backend;
pub mod frontend_nlb;
mod lb_settings;
mod lb_subnets;
pub mod listener;
pub mod load_balancer;
pub mod mtls;
pub mod not_deployed;
mod ports;
pub mod rule;
pub mod security_group;
pub mod target_group;

#[cfg(test)]
#[path = "ingress_tests.rs"]
mod tests;

pub use build::build_stack;
