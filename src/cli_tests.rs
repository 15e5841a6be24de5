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
        "--lb-stabilization-monitor-interval=45s",
        "--required-secrets-label=albc.example/oidc=yes",
        "--kube-ca-pem-filepath=/etc/kube/ca.pem",
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
    // `--lb-stabilization-monitor-interval` reaches every controller that deploys.
    let stabilization = std::time::Duration::from_secs(45);
    assert_eq!(ingress.lb_stabilization_interval, stabilization);
    assert_eq!(
        crate::controller::service::ServiceConfig::from(&cfg).lb_stabilization_interval,
        stabilization
    );
    for lb in [
        crate::model::gateway::listeners::LbKind::Alb,
        crate::model::gateway::listeners::LbKind::Nlb,
    ] {
        let gw = crate::controller::gateway::GatewayControllerConfig::from_flags(&cfg, lb);
        assert_eq!(gw.lb_stabilization_interval, stabilization);
    }
    // `--required-secrets-label` narrows the process's Secret watch.
    let watches =
        crate::watch::Watches::with_required_secrets_label(cfg.required_secrets_label.clone());
    assert_eq!(
        watches.secrets.required_label().map(|l| l.selector()),
        Some("albc.example/oidc=yes".to_string())
    );
    assert!(crate::watch::Watches::default()
        .secrets
        .required_label()
        .is_none());
    // `--kube-ca-pem-filepath` reaches the webhook server's settings.
    assert_eq!(
        cfg.webhook.client_ca_file.as_deref(),
        Some(std::path::Path::new("/etc/kube/ca.pem"))
    );
}
