//! Replays `pkg/ingress2gateway/writer/writer_test.go` `TestWrite`: all 8 cases (single file
//! YAML and JSON, bad format, bad split mode, nested output directory, and the three
//! `--split namespace` layouts).

use std::path::Path;

use crate::crd::gateway::{TargetGroupConfiguration, TargetGroupConfigurationSpec};
use crate::migrate::gateway::build_gateway;
use crate::migrate::httproute::new_http_route;
use crate::migrate::writer::write;
use crate::migrate::{OutputResources, WriteOptions, SPLIT_NAMESPACE};

fn gateway_in(ns: &str, name: &str) -> crate::migrate::objects::Gateway {
    build_gateway(name, ns, None, &[], "")
}

fn route_in(ns: &str, name: &str) -> crate::migrate::HttpRoute {
    new_http_route(name, ns, Vec::new(), Vec::new(), Vec::new())
}

fn tgc_in(ns: &str, name: &str) -> TargetGroupConfiguration {
    let mut t = TargetGroupConfiguration::new(name, TargetGroupConfigurationSpec::default());
    t.metadata.namespace = Some(ns.into());
    t
}

struct FileWant {
    path: &'static str,
    contains: Vec<&'static str>,
    not_contains: Vec<&'static str>,
}

fn want(
    path: &'static str,
    contains: Vec<&'static str>,
    not_contains: Vec<&'static str>,
) -> FileWant {
    FileWant {
        path,
        contains,
        not_contains,
    }
}

struct Case {
    name: &'static str,
    nested: bool,
    out: OutputResources,
    format: &'static str,
    split: &'static str,
    err: Option<&'static str>,
    files: Vec<FileWant>,
    top: Option<Vec<&'static str>>,
}

fn entries(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    names
}

#[test]
fn write_upstream_cases() {
    let base = OutputResources::new;
    let cases = vec![
        Case {
            name: "yaml with gateway class and gateway",
            nested: false,
            out: OutputResources {
                gateways: vec![gateway_in("default", "test-gateway")],
                ..base()
            },
            format: "yaml",
            split: "",
            err: None,
            files: vec![want(
                "gateway-resources.yaml",
                vec!["kind: GatewayClass", "kind: Gateway"],
                vec![],
            )],
            top: Some(vec!["gateway-resources.yaml"]),
        },
        Case {
            name: "json output",
            nested: false,
            out: base(),
            format: "json",
            split: "",
            err: None,
            files: vec![want(
                "gateway-resources.json",
                vec![r#""kind": "GatewayClass""#],
                vec![],
            )],
            top: Some(vec!["gateway-resources.json"]),
        },
        Case {
            name: "invalid format",
            nested: false,
            out: base(),
            format: "xml",
            split: "",
            err: Some("unsupported output format"),
            files: vec![],
            top: None,
        },
        Case {
            name: "invalid split mode",
            nested: false,
            out: base(),
            format: "yaml",
            split: "group",
            err: Some("unsupported split mode"),
            files: vec![],
            top: None,
        },
        Case {
            name: "creates nested output directory",
            nested: true,
            out: base(),
            format: "yaml",
            split: "",
            err: None,
            files: vec![want("gateway-resources.yaml", vec![], vec![])],
            top: Some(vec!["gateway-resources.yaml"]),
        },
        Case {
            name: "split namespace: resources across two namespaces",
            nested: false,
            out: OutputResources {
                gateways: vec![gateway_in("team-a", "gw-a"), gateway_in("team-b", "gw-b")],
                http_routes: vec![route_in("team-a", "route-a"), route_in("team-b", "route-b")],
                target_group_configurations: vec![tgc_in("team-a", "tgc-a")],
                ..base()
            },
            format: "yaml",
            split: SPLIT_NAMESPACE,
            err: None,
            files: vec![
                want(
                    "gatewayclass.yaml",
                    vec!["kind: GatewayClass"],
                    vec!["kind: Gateway\n", "kind: HTTPRoute"],
                ),
                want(
                    "team-a/gateway-resources.yaml",
                    vec!["name: gw-a", "name: route-a", "name: tgc-a"],
                    vec!["name: gw-b", "name: route-b", "kind: GatewayClass"],
                ),
                want(
                    "team-b/gateway-resources.yaml",
                    vec!["name: gw-b", "name: route-b"],
                    vec!["name: gw-a", "name: tgc-a"],
                ),
            ],
            top: Some(vec!["gatewayclass.yaml", "team-a", "team-b"]),
        },
        Case {
            name: "split namespace: cross-namespace group splits across directories",
            nested: false,
            out: OutputResources {
                gateways: vec![gateway_in("team-a", "shared-gw")],
                http_routes: vec![route_in("team-a", "route-a"), route_in("team-b", "route-b")],
                ..base()
            },
            format: "yaml",
            split: SPLIT_NAMESPACE,
            err: None,
            files: vec![
                want(
                    "team-a/gateway-resources.yaml",
                    vec!["name: shared-gw", "name: route-a"],
                    vec!["name: route-b"],
                ),
                want(
                    "team-b/gateway-resources.yaml",
                    vec!["name: route-b"],
                    vec!["name: shared-gw", "name: route-a"],
                ),
            ],
            top: Some(vec!["gatewayclass.yaml", "team-a", "team-b"]),
        },
        Case {
            name: "split namespace: only GatewayClass produces only cluster file",
            nested: false,
            out: base(),
            format: "yaml",
            split: SPLIT_NAMESPACE,
            err: None,
            files: vec![want(
                "gatewayclass.yaml",
                vec!["kind: GatewayClass"],
                vec![],
            )],
            top: Some(vec!["gatewayclass.yaml"]),
        },
    ];
    assert_eq!(cases.len(), 8);
    for c in cases {
        let tmp = tempfile::tempdir().unwrap();
        let dir = if c.nested {
            tmp.path().join("nested").join("output")
        } else {
            tmp.path().to_path_buf()
        };
        let opts = WriteOptions {
            format: c.format.into(),
            split: c.split.into(),
        };
        let got = write(&c.out, &dir, &opts, &mut std::io::sink());
        if let Some(e) = c.err {
            let err = got.expect_err(c.name);
            assert!(err.to_string().contains(e), "{}: {err}", c.name);
            continue;
        }
        got.unwrap_or_else(|e| panic!("{}: {e}", c.name));
        assert!(dir.is_dir(), "{}", c.name);
        for f in &c.files {
            let text = std::fs::read_to_string(dir.join(f.path))
                .unwrap_or_else(|e| panic!("{}: {}: {e}", c.name, f.path));
            for s in &f.contains {
                assert!(
                    text.contains(s),
                    "{}: {} should contain {s:?}:\n{text}",
                    c.name,
                    f.path
                );
            }
            for s in &f.not_contains {
                assert!(
                    !text.contains(s),
                    "{}: {} should not contain {s:?}:\n{text}",
                    c.name,
                    f.path
                );
            }
        }
        if let Some(top) = &c.top {
            assert_eq!(&entries(&dir), top, "{}", c.name);
        }
    }
}

/// Upstream's one printer counts documents across files: every namespace file of a split run
/// starts with `---` (the GatewayClass file was the first document).
#[test]
fn split_files_after_the_first_start_with_a_separator() {
    let out = OutputResources {
        gateways: vec![gateway_in("team-a", "gw-a")],
        ..OutputResources::new()
    };
    let tmp = tempfile::tempdir().unwrap();
    let opts = WriteOptions {
        format: "yaml".into(),
        split: SPLIT_NAMESPACE.into(),
    };
    let mut log = Vec::new();
    write(&out, tmp.path(), &opts, &mut log).unwrap();
    let class = std::fs::read_to_string(tmp.path().join("gatewayclass.yaml")).unwrap();
    let team = std::fs::read_to_string(tmp.path().join("team-a/gateway-resources.yaml")).unwrap();
    assert!(class.starts_with("apiVersion: "), "{class}");
    assert!(team.starts_with("---\napiVersion: "), "{team}");
    let log = String::from_utf8(log).unwrap();
    assert!(log.contains("Generated 1 resource(s) in "), "{log}");
}
