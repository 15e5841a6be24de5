//! The binary's `plan` is the model crate's and plans with the Ingress controller's settings; every
//! layer takes its settings from the one validated `Config`.

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

#[test]
fn every_layer_takes_its_settings_from_the_validated_flags() {
    let cli = Cli::try_parse_from([
        "controller",
        "--cluster-name=prod",
        "--aws-region=eu-west-1",
        "--aws-max-retries=4",
        "--targetgroupbinding-max-concurrent-reconciles=7",
        "--ingress-max-concurrent-reconciles=5",
        "--watch-namespace=a,b",
        "--leader-election-namespace=lease-ns",
        "--leader-election-id=my-lease",
        "--webhook-max-body-bytes=2048",
    ])
    .unwrap();
    let cfg = Config::from_args(&cli.controller).unwrap();
    let aws = crate::aws::AwsConfig::from(&cfg);
    assert_eq!(
        (aws.region.as_deref(), aws.max_retries),
        (Some("eu-west-1"), 4)
    );
    let tgb = crate::controller::tgb::TgbConfig::from(&cfg);
    assert_eq!(tgb.concurrency, 7);
    assert_eq!(tgb.cluster_name, "prod");
    assert_eq!(tgb.namespaces, vec!["a", "b"]);
    let ingress = IngressConfig::from(&cfg);
    assert_eq!(ingress.concurrency, 5);
    assert_eq!(ingress.namespaces, vec!["a", "b"]);
    assert_eq!(ingress.model.cluster_name, "prod");
    let lease = crate::controller::leader::LeaderConfig::from(&cfg);
    assert_eq!(
        (lease.namespace.as_str(), lease.name.as_str()),
        ("lease-ns", "my-lease")
    );
    assert_eq!(
        crate::webhook::Limits::from(&cfg.webhook).max_body_bytes,
        2048
    );
}
