//! Replays `pkg/ingress2gateway/migrate_test.go` `TestMigrate_VanillaIngress` (1 case): the
//! file written for upstream's vanilla Ingress is upstream's expected file, byte for byte
//! (names and hashes, key order, layout). Also what `--dry-run` (upstream's default) adds and
//! the messages upstream prints on the way.

use std::path::PathBuf;

use crate::migrate::{reader, run, MigrateOptions};

pub(crate) fn testdata(p: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("src/migrate/testdata")
        .join(p)
}

fn migrate_vanilla(dry_run: bool) -> (String, String) {
    let dir = tempfile::tempdir().unwrap();
    let opts = MigrateOptions {
        files: vec![testdata("vanilla_ingress.yaml").display().to_string()],
        output_dir: dir.path().display().to_string(),
        output_format: "yaml".into(),
        dry_run,
        ..Default::default()
    };
    let mut log = Vec::new();
    let files = reader::input_files(&opts).unwrap();
    let input = reader::read_files(&files, &mut log).unwrap();
    let migrated = run::run(&opts, input, &mut log)
        .unwrap()
        .expect("an Ingress");
    assert_eq!(
        migrated.files,
        vec![dir.path().join("gateway-resources.yaml")]
    );
    let text = std::fs::read_to_string(dir.path().join("gateway-resources.yaml")).unwrap();
    (text, String::from_utf8(log).unwrap())
}

#[test]
fn migrate_vanilla_ingress() {
    let (actual, log) = migrate_vanilla(false);
    let expected = std::fs::read_to_string(testdata("expected_vanilla_gateway.yaml")).unwrap();
    assert_eq!(
        actual, expected,
        "generated gateway manifest does not match expected"
    );
    assert!(
        log.contains(
            "Found 1 Ingress(es), 0 Service(s), 1 IngressClass(es), 0 IngressClassParams\n"
        ),
        "{log}"
    );
    assert!(log.contains("Generated 6 resource(s) in "), "{log}");
}

/// Upstream's default `--dry-run=true` annotates every Gateway (the value quoted, as a string).
#[test]
fn dry_run_annotates_the_gateway_only() {
    let (text, _) = migrate_vanilla(true);
    let expected = std::fs::read_to_string(testdata("expected_vanilla_gateway.yaml")).unwrap();
    let annotated = expected.replace(
        "kind: Gateway\nmetadata:\n  name: vanilla-gateway-86d474571f\n",
        "kind: Gateway\nmetadata:\n  annotations:\n    gateway.k8s.aws/dry-run: \"true\"\n  name: vanilla-gateway-86d474571f\n",
    );
    assert_ne!(annotated, expected);
    assert_eq!(text, annotated);
}

/// No Ingress: upstream's message and no file.
#[test]
fn no_ingress_writes_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let opts = MigrateOptions {
        output_dir: dir.path().join("out").display().to_string(),
        output_format: "yaml".into(),
        ..Default::default()
    };
    let mut log = Vec::new();
    let got = run::run(&opts, Default::default(), &mut log).unwrap();
    assert!(got.is_none());
    assert_eq!(
        String::from_utf8(log).unwrap(),
        "No Ingress resources found in input.\n"
    );
    assert!(!dir.path().join("out").exists());
}
