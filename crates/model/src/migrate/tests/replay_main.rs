//! Replays `cmd/lbc-migrate/main_test.go` `TestValidateFlags`: all 18 cases (14 refusals, each
//! with upstream's text, and 4 accepted combinations).

use crate::migrate::{validate_flags, MigrateOptions};

fn opts(f: impl FnOnce(&mut MigrateOptions)) -> MigrateOptions {
    let mut o = MigrateOptions::default();
    f(&mut o);
    o
}

#[test]
fn validate_flags_upstream_cases() {
    let v = |s: &str| vec![s.to_string()];
    let cases: Vec<(&str, MigrateOptions, &str)> = vec![
        (
            "no input mode specified",
            opts(|_| {}),
            "must specify at least one of",
        ),
        (
            "from-cluster with file is invalid",
            opts(|o| {
                o.from_cluster = true;
                o.files = v("foo.yaml");
            }),
            "--from-cluster cannot be used with --file or --input-dir",
        ),
        (
            "from-cluster with input-dir is invalid",
            opts(|o| {
                o.from_cluster = true;
                o.input_dir = "./manifests".into();
            }),
            "--from-cluster cannot be used with --file or --input-dir",
        ),
        (
            "namespaces without from-cluster is invalid",
            opts(|o| {
                o.files = v("foo.yaml");
                o.namespaces = v("ns");
            }),
            "--namespaces can only be used with --from-cluster",
        ),
        (
            "all-namespaces without from-cluster is invalid",
            opts(|o| {
                o.files = v("foo.yaml");
                o.all_namespaces = true;
            }),
            "--all-namespaces can only be used with --from-cluster",
        ),
        (
            "ingress-name without from-cluster is invalid",
            opts(|o| {
                o.files = v("foo.yaml");
                o.ingress_name = "my-ing".into();
            }),
            "--ingress-name can only be used with --from-cluster",
        ),
        (
            "kubeconfig without from-cluster is invalid",
            opts(|o| {
                o.files = v("foo.yaml");
                o.kubeconfig = "/path/to/config".into();
            }),
            "--kubeconfig can only be used with --from-cluster",
        ),
        (
            "namespaces and all-namespaces are mutually exclusive",
            opts(|o| {
                o.from_cluster = true;
                o.namespaces = v("ns");
                o.all_namespaces = true;
            }),
            "--namespaces and --all-namespaces are mutually exclusive",
        ),
        (
            "ingress-name with comma is invalid",
            opts(|o| {
                o.from_cluster = true;
                o.namespaces = v("ns");
                o.ingress_name = "foo,bar".into();
            }),
            "--ingress-name accepts a single Ingress name",
        ),
        (
            "ingress-name with all-namespaces is invalid",
            opts(|o| {
                o.from_cluster = true;
                o.all_namespaces = true;
                o.ingress_name = "my-ing".into();
            }),
            "--ingress-name and --all-namespaces are mutually exclusive",
        ),
        (
            "ingress-name requires exactly one namespace",
            opts(|o| {
                o.from_cluster = true;
                o.namespaces = vec!["ns-a".into(), "ns-b".into()];
                o.ingress_name = "my-ing".into();
            }),
            "--ingress-name requires exactly one --namespaces value",
        ),
        (
            "ingress-name without namespaces is invalid",
            opts(|o| {
                o.from_cluster = true;
                o.ingress_name = "my-ing".into();
            }),
            "--ingress-name requires exactly one --namespaces value",
        ),
        (
            "invalid output format",
            opts(|o| {
                o.from_cluster = true;
                o.output_format = "xml".into();
                o.all_namespaces = true;
            }),
            "--output-format must be yaml or json",
        ),
        (
            "invalid split mode",
            opts(|o| {
                o.from_cluster = true;
                o.all_namespaces = true;
                o.output_format = "yaml".into();
                o.split = "invalid".into();
            }),
            "--split must be",
        ),
        (
            "valid: from-cluster with all-namespaces",
            opts(|o| {
                o.from_cluster = true;
                o.all_namespaces = true;
                o.output_format = "yaml".into();
            }),
            "",
        ),
        (
            "valid: from-cluster with single namespace",
            opts(|o| {
                o.from_cluster = true;
                o.namespaces = v("production");
                o.output_format = "yaml".into();
            }),
            "",
        ),
        (
            "valid: from-cluster with ingress-name",
            opts(|o| {
                o.from_cluster = true;
                o.namespaces = v("production");
                o.ingress_name = "my-ing".into();
                o.output_format = "yaml".into();
            }),
            "",
        ),
        (
            "valid: file input",
            opts(|o| {
                o.files = v("foo.yaml");
                o.output_format = "yaml".into();
            }),
            "",
        ),
    ];
    assert_eq!(cases.len(), 18);
    for (name, o, want) in cases {
        match (validate_flags(&o), want) {
            (Ok(()), "") => {}
            (Err(e), w) if !w.is_empty() => {
                assert!(e.to_string().contains(w), "{name}: {e}")
            }
            (got, w) => panic!("{name}: got {got:?}, want error {w:?}"),
        }
    }
}

/// The exact texts of the refusals that quote a value (Go's `%q`).
#[test]
fn refusals_quote_values_as_upstream() {
    let o = opts(|o| {
        o.from_cluster = true;
        o.all_namespaces = true;
        o.output_format = "yaml".into();
        o.split = "invalid".into();
    });
    assert_eq!(
        validate_flags(&o).unwrap_err().to_string(),
        r#"--split must be "" or "namespace", got "invalid""#
    );
    let o = opts(|o| {
        o.from_cluster = true;
        o.namespaces = vec!["ns".into()];
        o.ingress_name = "foo,bar".into();
        o.output_format = "yaml".into();
    });
    assert_eq!(
        validate_flags(&o).unwrap_err().to_string(),
        r#"--ingress-name accepts a single Ingress name, got "foo,bar""#
    );
}
