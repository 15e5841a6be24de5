//! Replays `translate/lr_config_test.go`: `TestBuildListenerRuleConfiguration` and
//! `TestExtensionRefFilter`: both.

use crate::migrate::lr_config::{build_listener_rule_configuration, extension_ref_filter};
use crate::migrate::names::lr_config_name;
use crate::migrate::objects::FILTER_EXTENSION_REF;
use crate::migrate::LBC_GATEWAY_API_GROUP;

#[test]
fn build_listener_rule_configuration_is_empty_and_named() {
    let lrc = build_listener_rule_configuration("my-ns", "my-ing", "my-action");
    let v = serde_json::to_value(&lrc).unwrap();
    assert_eq!(v["apiVersion"], "gateway.k8s.aws/v1");
    assert_eq!(v["kind"], "ListenerRuleConfiguration");
    assert_eq!(lrc.metadata.namespace.as_deref(), Some("my-ns"));
    assert_eq!(
        lrc.metadata.name.as_deref(),
        Some(lr_config_name("my-ns", "my-ing", "my-action").as_str())
    );
    assert!(lrc.spec.tags.is_none());
}

#[test]
fn extension_ref_filter_names_the_configuration() {
    let f = extension_ref_filter("my-lrc");
    assert_eq!(f.type_, FILTER_EXTENSION_REF);
    let r = f.extension_ref.unwrap();
    assert_eq!(r.group, LBC_GATEWAY_API_GROUP);
    assert_eq!(r.kind, "ListenerRuleConfiguration");
    assert_eq!(r.name, "my-lrc");
}
