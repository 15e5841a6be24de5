//! The binary's `plan` is the model crate's, and plans with the Ingress controller's settings.

use super::*;
use crate::config::Config;
use crate::controller::ingress::IngressConfig;

#[test]
fn plan_subcommand_builds_the_ingress_controllers_model_config() {
    let flags = [
        "--cluster-name=prod",
        "--ingress-class=edge",
        "--default-target-type=ip",
        "--feature-gates=ListenerRulesTagging=false",
        "--enable-backend-security-group=false",
    ];
    let cli = Cli::try_parse_from(["controller", "plan"].into_iter().chain(flags)).unwrap();
    let Some(Command::Plan(mut plan)) = cli.command else {
        panic!("not parsed as plan: {cli:?}");
    };
    let controller = Cli::try_parse_from(std::iter::once("controller").chain(flags)).unwrap();
    let running = IngressConfig::from(&Config::from_args(&controller.controller).unwrap());
    let planned = plan.model_config().unwrap();
    assert_eq!(planned, running.model);
    assert!(!planned.enable_backend_sg && !planned.gate("ListenerRulesTagging"));
}
