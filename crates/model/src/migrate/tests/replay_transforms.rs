//! Replays `translate/translate_transform_helper_test.go`: `TestTranslateTransforms` (8 cases)
//! and `TestHasCaptureGroupRef` (7 inputs): all 15. Skipped transforms come with upstream's
//! warning.

use crate::migrate::objects::{FILTER_URL_REWRITE, FULL_PATH_MODIFIER};
use crate::migrate::transforms::{has_capture_group_ref, translate_transforms};
use crate::model::backend::Transform;

fn transforms(json: &str) -> Vec<Transform> {
    crate::annotations::go_json::from_str(json).unwrap()
}

fn url(regex: &str, replace: &str) -> String {
    format!(
        r#"{{"type":"url-rewrite","urlRewriteConfig":{{"rewrites":[{{"regex":{regex:?},"replace":{replace:?}}}]}}}}"#
    )
}

fn host(regex: &str, replace: &str) -> String {
    format!(
        r#"{{"type":"host-header-rewrite","hostHeaderRewriteConfig":{{"rewrites":[{{"regex":{regex:?},"replace":{replace:?}}}]}}}}"#
    )
}

fn list(items: &[String]) -> Vec<Transform> {
    transforms(&format!("[{}]", items.join(",")))
}

#[test]
fn translate_transforms_upstream_cases() {
    // nil / empty transforms return nil
    assert!(translate_transforms(&[]).0.is_none());
    assert!(translate_transforms(&list(&[])).0.is_none());

    // url-rewrite with static replace produces ReplaceFullPath
    let (f, w) = translate_transforms(&list(&[url(".*", "/new/path")]));
    let f = f.unwrap();
    assert!(w.is_empty());
    assert_eq!(f.type_, FILTER_URL_REWRITE);
    let rw = f.url_rewrite.unwrap();
    let p = rw.path.unwrap();
    assert_eq!(p.type_, FULL_PATH_MODIFIER);
    assert_eq!(p.replace_full_path.as_deref(), Some("/new/path"));
    assert!(rw.hostname.is_none());

    // url-rewrite with capture group reference is skipped
    let (f, w) = translate_transforms(&list(&[url(r"^\/api\/(.+)$", "/$1")]));
    assert!(f.is_none());
    assert_eq!(
        w,
        vec!["WARNING: url-rewrite transform with capture group reference \"/$1\" cannot be represented in Gateway API — skipping.\n"]
    );

    // host-header-rewrite with static replacement produces Hostname
    let (f, _) = translate_transforms(&list(&[host(".*", "example.org")]));
    let rw = f.unwrap().url_rewrite.unwrap();
    assert_eq!(rw.hostname.as_deref(), Some("example.org"));
    assert!(rw.path.is_none());

    // host-header-rewrite with capture group reference is skipped
    let (f, w) = translate_transforms(&list(&[host(r"^(.+)\.example\.com$", "$1.internal")]));
    assert!(f.is_none());
    assert_eq!(w.len(), 1);

    // both url-rewrite and host-header-rewrite with static replacements combined
    let (f, _) = translate_transforms(&list(&[url(".*", "/new"), host(".*", "foo.com")]));
    let rw = f.unwrap().url_rewrite.unwrap();
    assert_eq!(rw.path.unwrap().replace_full_path.as_deref(), Some("/new"));
    assert_eq!(rw.hostname.as_deref(), Some("foo.com"));

    // url-rewrite with capture group skipped but host-header-rewrite static kept
    let (f, w) = translate_transforms(&list(&[
        url(r"^\/api\/(.+)$", "/$1"),
        host(".*", "backend.internal"),
    ]));
    let rw = f.unwrap().url_rewrite.unwrap();
    assert!(rw.path.is_none());
    assert_eq!(rw.hostname.as_deref(), Some("backend.internal"));
    assert_eq!(w.len(), 1);
}

#[test]
fn has_capture_group_ref_upstream() {
    for (input, want) in [
        ("/$1", true),
        ("$1.example.org", true),
        ("/new/$2/path", true),
        ("/static/path", false),
        ("backend.internal", false),
        ("", false),
        ("$notadigit", false),
    ] {
        assert_eq!(has_capture_group_ref(input), want, "{input}");
    }
}
