//! Replays `pkg/ingress2gateway/reader/file_reader_test.go`: all 8 tests, on this module's copy
//! of upstream's `test_files` (same documents). `cluster_reader_test.go` is replayed in
//! `tests/it/migrate_cli.rs` against the in-memory API server.

use super::replay_migrate::testdata;
use crate::migrate::reader::{read_dir, read_files};

fn test_file(name: &str) -> std::path::PathBuf {
    testdata("test_files").join(name)
}

#[test]
fn read_from_files_full_resources() {
    let mut log = Vec::new();
    let r = read_files(&[test_file("full_resources.yaml")], &mut log).unwrap();
    assert_eq!(r.ingresses.len(), 1);
    assert_eq!(
        r.ingresses[0].metadata.name.as_deref(),
        Some("2048-ingress")
    );
    assert_eq!(
        r.ingresses[0].metadata.namespace.as_deref(),
        Some("2048-game")
    );
    assert_eq!(r.services.len(), 1);
    assert_eq!(r.services[0].metadata.name.as_deref(), Some("service-2048"));
    assert_eq!(r.ingress_classes.len(), 1);
    assert_eq!(r.ingress_classes[0].metadata.name.as_deref(), Some("alb"));
    assert_eq!(r.ingress_class_params.len(), 1);
    assert_eq!(
        r.ingress_class_params[0].metadata.name.as_deref(),
        Some("alb-params")
    );
}

#[test]
fn read_from_files_invalid_input() {
    let err = read_files(&[test_file("invalid.yaml")], &mut std::io::sink()).unwrap_err();
    assert!(err.to_string().starts_with("error reading file "), "{err}");
}

#[test]
fn read_from_files_nonexistent_file() {
    assert!(read_files(&[test_file("nope.yaml")], &mut std::io::sink()).is_err());
}

#[test]
fn read_from_dir() {
    // full_resources.yaml, ingress_missing_service.yaml, invalid.yaml, ingress_basic.json
    assert_eq!(read_dir(&testdata("test_files")).unwrap().len(), 4);
}

#[test]
fn read_from_dir_nonexistent_dir() {
    assert!(read_dir(std::path::Path::new("/nonexistent/path")).is_err());
}

#[test]
fn read_from_files_json_input() {
    let r = read_files(&[test_file("ingress_basic.json")], &mut std::io::sink()).unwrap();
    assert_eq!(r.ingresses.len(), 1);
    let ing = &r.ingresses[0];
    assert_eq!(ing.metadata.name.as_deref(), Some("json-ingress"));
    assert_eq!(ing.metadata.namespace.as_deref(), Some("default"));
    assert_eq!(
        ing.metadata.annotations.as_ref().unwrap()["alb.ingress.kubernetes.io/scheme"],
        "internet-facing"
    );
}

#[test]
fn read_from_dir_includes_json() {
    let files = read_dir(&testdata("test_files")).unwrap();
    assert!(files
        .iter()
        .any(|f| f.extension().and_then(|e| e.to_str()) == Some("json")));
}

#[test]
fn read_from_files_comment_only_documents_skipped() {
    let mut log = Vec::new();
    let r = read_files(&[test_file("full_resources.yaml")], &mut log).unwrap();
    assert_eq!(
        (
            r.ingresses.len(),
            r.services.len(),
            r.ingress_classes.len(),
            r.ingress_class_params.len()
        ),
        (1, 1, 1, 1)
    );
    assert!(log.is_empty(), "{}", String::from_utf8_lossy(&log));
}

/// Objects of other kinds are named on stderr (upstream names those its scheme lacks; it is
/// silent about built-in kinds, this build is not); a `List` is read item by item.
#[test]
fn other_kinds_are_named_and_lists_are_read() {
    let text = r#"
apiVersion: apps/v1
kind: Deployment
metadata: {name: web, namespace: shop}
---
apiVersion: v1
kind: List
items:
- apiVersion: networking.k8s.io/v1
  kind: Ingress
  metadata: {name: a, namespace: shop}
- apiVersion: v1
  kind: Service
  metadata: {name: web, namespace: shop}
---
{}
"#;
    let mut r = crate::migrate::InputResources::default();
    let mut log = Vec::new();
    crate::migrate::reader::decode_resources(text, &mut r, &mut log).unwrap();
    assert_eq!((r.ingresses.len(), r.services.len()), (1, 1));
    let log = String::from_utf8(log).unwrap();
    assert_eq!(
        log,
        "Skipping unrecognized resource in input: apps/v1 Deployment \"web\" is not an object migrate reads\n"
    );
}
