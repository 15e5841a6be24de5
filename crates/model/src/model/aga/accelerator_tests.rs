//! Replays upstream's `pkg/aga/model_build_accelerator_test.go` (20 cases): generated names
//! (checked hash-for-hash here, where upstream checks only their shape), address types, BYOIP
//! addresses, tags, and the whole accelerator — with the tracking tags this builder adds where
//! upstream's deployer does.
// Upstream's test tables, one tuple per case, as its Go tables are.
#![allow(clippy::type_complexity)]

use std::collections::BTreeMap;

use serde_json::json;

use super::*;
use crate::model::aga::test_support::ga;

fn cfg(cluster: &str, region: &str) -> AgaConfig {
    AgaConfig {
        cluster_name: cluster.into(),
        region: region.into(),
        ..AgaConfig::default()
    }
}

fn tags(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
    pairs
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect()
}

#[test]
fn names_are_the_specs_or_upstreams_generated_ones() {
    // Upstream's buildAcceleratorName table; its builder has no region, so neither has ours.
    let cases = [
        (
            "specify accelerator name in spec",
            ga("", "", json!({"name": "my-example-accelerator"})),
            AgaIpAddressType::Ipv4,
            "my-example-accelerator",
        ),
        (
            "generated name with valid characters",
            ga("test-namespace", "test-accelerator", json!({})),
            AgaIpAddressType::Ipv4,
            "k8s_test-namespace_test-accelerator_00f13b334c3bbf4e8e9273b07",
        ),
        (
            "generated name with invalid characters",
            ga("test@namespace", "test#accelerator", json!({})),
            AgaIpAddressType::Ipv4,
            "k8s_testnamespace_testaccelerator_74bfffc9efa948927e62b2346",
        ),
        (
            "provide long namespace and name",
            ga(
                "very-long-namespace-that-exceeds-limit",
                "very-long-accelerator-name-that-exceeds-limit",
                json!({}),
            ),
            AgaIpAddressType::Ipv4,
            "k8s_very-long-namesp_very-long-accele_5515c00952888c7fda2e20805",
        ),
        (
            "different IP address types generate different names",
            ga("test-namespace", "test-accelerator", json!({})),
            AgaIpAddressType::DualStack,
            "k8s_test-namespace_test-accelerator_10d1dc4ed4166ad7165d315a8",
        ),
    ];
    let shape = regex::Regex::new("^k8s_[a-zA-Z0-9_-]+_[a-zA-Z0-9_-]+_[a-zA-Z0-9]+$").unwrap();
    for (case, object, ip_type, want) in cases {
        let got = accelerator_name("test-cluster", "", &object, ip_type);
        assert_eq!(got, want, "{case}");
        if object.spec.name.is_none() {
            assert!(shape.is_match(&got), "{case}: {got}");
            assert!(got.len() <= 64, "{case}: {got}");
            assert!(!got.starts_with('-') && !got.ends_with('-'), "{case}");
        }
    }
    // The region is part of the hash.
    assert_eq!(
        accelerator_name(
            "prod",
            "us-west-2",
            &ga("apps", "web", json!({})),
            AgaIpAddressType::Ipv4
        ),
        "k8s_apps_web_f223b8e840cf32027d434d941"
    );
}

#[test]
fn address_type_defaults_to_ipv4() {
    for (case, spec, want) in [
        (
            "default to IPv4 when not specified",
            json!({}),
            AgaIpAddressType::Ipv4,
        ),
        (
            "explicitly set to IPv4",
            json!({"ipAddressType": "IPV4"}),
            AgaIpAddressType::Ipv4,
        ),
        (
            "explicitly set to dual stack",
            json!({"ipAddressType": "DUAL_STACK"}),
            AgaIpAddressType::DualStack,
        ),
    ] {
        assert_eq!(
            accelerator_ip_address_type(&ga("ns", "ga", spec)),
            want,
            "{case}"
        );
    }
}

#[test]
fn byoip_addresses_are_copied() {
    for (case, spec, want) in [
        ("no IP addresses specified", json!({}), vec![]),
        (
            "single IP address specified",
            json!({"ipAddresses": ["1.2.3.4"]}),
            vec!["1.2.3.4"],
        ),
        (
            "multiple IP addresses specified",
            json!({"ipAddresses": ["1.2.3.4", "5.6.7.8"]}),
            vec!["1.2.3.4", "5.6.7.8"],
        ),
    ] {
        let got = build_accelerator(&cfg("test-cluster", "us-west-2"), &ga("ns", "ga", spec))
            .unwrap()
            .ip_addresses;
        assert_eq!(got, want, "{case}");
    }
}

#[test]
fn user_tags_merge_defaults_and_refuse_external_managed_keys() {
    // Upstream's buildAcceleratorTags table: the tags before tracking tags are added.
    let cases: [(
        &str,
        serde_json::Value,
        Vec<&str>,
        bool,
        Option<BTreeMap<String, String>>,
    ); 5] = [
        (
            "no user tags specified",
            json!({}),
            vec![],
            false,
            Some(tags(&[("Environment", "test")])),
        ),
        (
            "user tags specified",
            json!({"tags": {"Application": "my-app", "Owner": "team-a"}}),
            vec![],
            false,
            Some(tags(&[
                ("Environment", "test"),
                ("Application", "my-app"),
                ("Owner", "team-a"),
            ])),
        ),
        (
            "user tags override default tags",
            json!({"tags": {"Environment": "production"}}),
            vec![],
            true,
            Some(tags(&[("Environment", "production")])),
        ),
        (
            "external managed tags configured but not specified by user",
            json!({"tags": {"Application": "my-app", "Owner": "team-a"}}),
            vec!["ExternalTag", "ManagedByTeam"],
            false,
            Some(tags(&[
                ("Environment", "test"),
                ("Application", "my-app"),
                ("Owner", "team-a"),
            ])),
        ),
        (
            "external managed tags specified by user should cause error",
            json!({"tags": {"Application": "my-app", "ExternalTag": "external-value",
                            "ManagedByTeam": "platform-team"}}),
            vec!["ExternalTag", "ManagedByTeam"],
            false,
            None,
        ),
    ];
    for (case, spec, external, user_over_default, want) in cases {
        let c = AgaConfig {
            default_tags: tags(&[("Environment", "test")]),
            external_managed_tags: external.iter().map(|s| s.to_string()).collect(),
            user_tags_over_default_tags: user_over_default,
            ..cfg("test-cluster", "us-west-2")
        };
        let got = crate::model::aga::tags::user_tags(&c, &ga("test", "test", spec));
        match want {
            Some(want) => assert_eq!(got.unwrap(), want, "{case}"),
            None => assert_eq!(
                got.unwrap_err(),
                "external managed tag key ExternalTag cannot be specified",
                "{case}"
            ),
        }
    }
}

#[test]
fn accelerator_is_enabled_with_name_type_addresses_and_tags() {
    // Upstream's Build table; every accelerator also carries the tracking tags.
    let tracking = |ns: &str, name: &str| {
        let stack = format!("{ns}/{name}");
        tags(&[
            ("elbv2.k8s.aws/cluster", "test-cluster"),
            ("aga.k8s.aws/stack", stack.as_str()),
            ("aga.k8s.aws/resource", "GlobalAccelerator"),
            ("elbv2.k8s.aws/cluster-region", "us-west-2"),
        ])
    };
    let cases = [
        (
            "successful build with minimal spec",
            json!({"name": "test-minimal-accelerator"}),
            tags(&[]),
            vec![],
            Ok((
                "test-minimal-accelerator",
                AgaIpAddressType::Ipv4,
                vec![],
                tags(&[]),
            )),
        ),
        (
            "successful build with full spec",
            json!({"name": "my-accelerator", "ipAddressType": "DUAL_STACK",
                   "ipAddresses": ["1.2.3.4"], "tags": {"Application": "my-app"}}),
            tags(&[("Environment", "test")]),
            vec![],
            Ok((
                "my-accelerator",
                AgaIpAddressType::DualStack,
                vec!["1.2.3.4"],
                tags(&[("Environment", "test"), ("Application", "my-app")]),
            )),
        ),
        (
            "build with external managed tags configured but not specified by user",
            json!({"name": "test-external-tags-accelerator",
                   "tags": {"Application": "my-app", "Owner": "team-a"}}),
            tags(&[("Environment", "test")]),
            vec!["ExternalTag", "ManagedByTeam"],
            Ok((
                "test-external-tags-accelerator",
                AgaIpAddressType::Ipv4,
                vec![],
                tags(&[
                    ("Environment", "test"),
                    ("Application", "my-app"),
                    ("Owner", "team-a"),
                ]),
            )),
        ),
        (
            "build fails when user specifies external managed tags",
            json!({"name": "test-error-accelerator",
                   "tags": {"Application": "my-app", "ExternalTag": "external-value",
                            "ManagedByTeam": "platform-team"}}),
            tags(&[("Environment", "test")]),
            vec!["ExternalTag", "ManagedByTeam"],
            Err("external managed tag key ExternalTag cannot be specified"),
        ),
    ];
    for (case, spec, defaults, external, want) in cases {
        let c = AgaConfig {
            default_tags: defaults,
            external_managed_tags: external.iter().map(|s| s.to_string()).collect(),
            ..cfg("test-cluster", "us-west-2")
        };
        let got = build_accelerator(&c, &ga("test-namespace", "test-accelerator", spec));
        match want {
            Ok((name, ip_type, addresses, user)) => {
                let got = got.unwrap();
                assert_eq!(got.name, name, "{case}");
                assert_eq!(got.enabled, Some(true), "{case}");
                assert_eq!(got.ip_address_type, ip_type, "{case}");
                assert_eq!(got.ip_addresses, addresses, "{case}");
                let mut all = user;
                all.extend(tracking("test-namespace", "test-accelerator"));
                assert_eq!(got.tags, all, "{case}");
            }
            Err(message) => assert_eq!(got.unwrap_err(), message, "{case}"),
        }
    }
}

#[test]
fn uid_and_status_arn_identify_the_accelerator() {
    let mut object = ga("ns", "ga", json!({"name": "a"}));
    object.metadata.uid = Some("uid-1".into());
    let a = build_accelerator(&cfg("c", "us-west-2"), &object).unwrap();
    assert_eq!(a.crd_uid, "uid-1");
    assert_eq!(a.existing_arn, None);
    object.status = Some(crate::crd::global_accelerator::GlobalAcceleratorStatus {
        accelerator_arn: Some("arn:aws:globalaccelerator::1:accelerator/x".into()),
        ..Default::default()
    });
    let a = build_accelerator(&cfg("c", "us-west-2"), &object).unwrap();
    assert_eq!(
        a.existing_arn.as_deref(),
        Some("arn:aws:globalaccelerator::1:accelerator/x")
    );
}
