//! The SDK-free `albc-model plan` behaves as `aws-load-balancer-controller plan` (whose CI-gate
//! behaviour `tests/it/plan_cli.rs` covers): exit status 1 when an object fails its model build,
//! 0 otherwise, 2 on a usage error; YAML without tags.

use std::process::{Command, Output};

fn albc_model(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_albc-model"))
        .args(args)
        .output()
        .expect("run albc-model")
}

#[test]
fn exit_status_follows_the_model_builds() {
    let samples = albc_model(&["plan"]);
    let stderr = String::from_utf8_lossy(&samples.stderr);
    assert_eq!(samples.status.code(), Some(0), "{stderr}");
    let yaml = String::from_utf8(samples.stdout).unwrap();
    assert!(yaml.contains("group: shop"), "{yaml}");
    assert!(!yaml.contains(": !"), "{yaml}");

    let fixture = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/fixtures/invalid_member.yaml"
    );
    let broken = albc_model(&["plan", "-f", fixture, "-o", "json"]);
    let stderr = String::from_utf8_lossy(&broken.stderr);
    assert_eq!(broken.status.code(), Some(1), "{stderr}");
    let v: serde_json::Value = serde_json::from_slice(&broken.stdout).unwrap();
    assert_eq!(v["groups"][0]["stack"]["members"][0], "team/good", "{v:#}");

    let usage = albc_model(&["plan", "--no-such-flag"]);
    assert_eq!(usage.status.code(), Some(2));
}
