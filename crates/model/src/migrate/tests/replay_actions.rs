//! Replays `translate/translate_action_helper_test.go`: all 10 tests (fixed response, redirect
//! with and without query, forwards to a Service, a target group name or ARN, with
//! stickiness; ARN names, redirect status codes, `use-annotation`).

use std::collections::BTreeMap;

use k8s_openapi::apimachinery::pkg::util::intstr::IntOrString;

use crate::crd::gateway::listener_rule_configuration::ActionType;
use crate::migrate::actions::*;
use crate::migrate::objects::{FILTER_EXTENSION_REF, FILTER_REQUEST_REDIRECT};
use crate::migrate::TARGET_GROUP_NAME_BACKEND_KIND;
use crate::model::action::{FixedResponseConfig, RedirectConfig, StickinessConfig};
use crate::model::backend::{ActionInput, ForwardInput, TupleInput};

fn translate(a: &ActionInput) -> ActionResult {
    translate_action(a, "default", "test-ing", "test-action", &BTreeMap::new()).unwrap()
}

fn forward(tgs: Vec<TupleInput>, sticky: Option<StickinessConfig>) -> ActionInput {
    ActionInput {
        action_type: "forward".into(),
        forward_config: Some(ForwardInput {
            target_groups: tgs,
            target_group_stickiness_config: sticky,
        }),
        ..Default::default()
    }
}

#[test]
fn translate_action_fixed_response() {
    let r = translate(&ActionInput {
        action_type: "fixed-response".into(),
        fixed_response_config: Some(FixedResponseConfig {
            status_code: "503".into(),
            content_type: Some("text/plain".into()),
            message_body: Some("503 error text".into()),
        }),
        ..Default::default()
    });
    let lrc = r.listener_rule_configuration.unwrap();
    assert_eq!(lrc.spec.actions.len(), 1);
    assert_eq!(lrc.spec.actions[0].type_, ActionType::FixedResponse);
    assert_eq!(
        lrc.spec.actions[0]
            .fixed_response_config
            .as_ref()
            .unwrap()
            .status_code,
        503
    );
    assert_eq!(r.filters.len(), 1);
    assert_eq!(r.filters[0].type_, FILTER_EXTENSION_REF);
    assert!(r.backend_refs.is_empty());
}

#[test]
fn translate_action_redirect() {
    let r = translate(&ActionInput {
        action_type: "redirect".into(),
        redirect_config: Some(RedirectConfig {
            host: Some("aws.amazon.com".into()),
            path: Some("/eks/".into()),
            port: Some("443".into()),
            protocol: Some("HTTPS".into()),
            status_code: "HTTP_302".into(),
            ..Default::default()
        }),
        ..Default::default()
    });
    assert_eq!(r.filters.len(), 1);
    assert_eq!(r.filters[0].type_, FILTER_REQUEST_REDIRECT);
    let rr = r.filters[0].request_redirect.as_ref().unwrap();
    assert_eq!(rr.hostname.as_deref(), Some("aws.amazon.com"));
    assert_eq!(rr.scheme.as_deref(), Some("https"));
    assert_eq!(rr.status_code, Some(302));
    assert!(r.listener_rule_configuration.is_none());
    assert!(r.backend_refs.is_empty());
}

#[test]
fn translate_action_redirect_with_query() {
    let r = translate(&ActionInput {
        action_type: "redirect".into(),
        redirect_config: Some(RedirectConfig {
            host: Some("example.com".into()),
            query: Some("k=v".into()),
            status_code: "HTTP_301".into(),
            ..Default::default()
        }),
        ..Default::default()
    });
    assert_eq!(r.filters.len(), 2);
    assert_eq!(r.filters[0].type_, FILTER_REQUEST_REDIRECT);
    assert_eq!(r.filters[1].type_, FILTER_EXTENSION_REF);
    let lrc = r.listener_rule_configuration.unwrap();
    assert_eq!(lrc.spec.actions.len(), 1);
    assert_eq!(lrc.spec.actions[0].type_, ActionType::Redirect);
    assert_eq!(
        lrc.spec.actions[0]
            .redirect_config
            .as_ref()
            .unwrap()
            .query
            .as_deref(),
        Some("k=v")
    );
}

#[test]
fn translate_action_forward_single_service() {
    let r = translate(&forward(
        vec![TupleInput {
            service_name: Some("my-service".into()),
            service_port: Some(IntOrString::Int(80)),
            weight: Some(1),
            ..Default::default()
        }],
        None,
    ));
    assert_eq!(r.backend_refs.len(), 1);
    assert_eq!(r.backend_refs[0].name, "my-service");
    assert_eq!(r.backend_refs[0].port, Some(80));
    assert!(r.listener_rule_configuration.is_none());
}

#[test]
fn translate_action_forward_target_group_name() {
    let r = translate(&forward(
        vec![TupleInput {
            target_group_name: Some("my-external-tg".into()),
            ..Default::default()
        }],
        None,
    ));
    assert_eq!(r.backend_refs.len(), 1);
    assert_eq!(r.backend_refs[0].name, "my-external-tg");
    assert_eq!(
        r.backend_refs[0].kind.as_deref(),
        Some(TARGET_GROUP_NAME_BACKEND_KIND)
    );
}

#[test]
fn translate_action_forward_target_group_arn() {
    let r = translate(&forward(
        vec![TupleInput {
            target_group_arn: Some(
                "arn:aws:elasticloadbalancing:us-west-2:123456789:targetgroup/my-tg/abc123".into(),
            ),
            ..Default::default()
        }],
        None,
    ));
    assert_eq!(r.backend_refs[0].name, "my-tg");
    assert_eq!(
        r.backend_refs[0].kind.as_deref(),
        Some(TARGET_GROUP_NAME_BACKEND_KIND)
    );
}

#[test]
fn translate_action_forward_with_stickiness() {
    let tuple = |name: &str, w: i32| TupleInput {
        service_name: Some(name.into()),
        service_port: Some(IntOrString::Int(80)),
        weight: Some(w),
        ..Default::default()
    };
    let r = translate(&forward(
        vec![tuple("service-1", 20), tuple("service-2", 80)],
        Some(StickinessConfig {
            enabled: Some(true),
            duration_seconds: Some(200),
        }),
    ));
    assert_eq!(r.backend_refs.len(), 2);
    assert_eq!(
        (r.backend_refs[0].weight, r.backend_refs[1].weight),
        (Some(20), Some(80))
    );
    let lrc = r.listener_rule_configuration.unwrap();
    assert_eq!(lrc.spec.actions.len(), 1);
    assert_eq!(lrc.spec.actions[0].type_, ActionType::Forward);
    let s = lrc.spec.actions[0]
        .forward_config
        .as_ref()
        .unwrap()
        .target_group_stickiness_config
        .as_ref()
        .unwrap();
    assert_eq!((s.enabled, s.duration_seconds), (Some(true), Some(200)));
    assert_eq!(r.filters.len(), 1);
    assert_eq!(r.filters[0].type_, FILTER_EXTENSION_REF);
}

#[test]
fn extract_tg_name_from_arn_upstream() {
    for (arn, want) in [
        (
            "arn:aws:elasticloadbalancing:us-west-2:123456789:targetgroup/my-tg/abc123",
            "my-tg",
        ),
        (
            "arn:aws:elasticloadbalancing:us-east-1:999:targetgroup/another-tg/xyz",
            "another-tg",
        ),
        ("not-an-arn", "not-an-arn"),
        (
            "arn:aws:elasticloadbalancing:us-west-2:123:targetgroup/name-only",
            "name-only",
        ),
    ] {
        assert_eq!(extract_tg_name_from_arn(arn), want);
    }
}

#[test]
fn redirect_status_code_upstream() {
    assert_eq!(redirect_status_code("HTTP_301"), Ok(301));
    assert_eq!(redirect_status_code("HTTP_302"), Ok(302));
    assert_eq!(redirect_status_code("301"), Ok(301));
    assert!(redirect_status_code("unknown").is_err());
}

#[test]
fn is_use_annotation_upstream() {
    assert!(is_use_annotation("use-annotation"));
    assert!(!is_use_annotation("http"));
    assert!(!is_use_annotation("80"));
    assert!(!is_use_annotation(""));
}
