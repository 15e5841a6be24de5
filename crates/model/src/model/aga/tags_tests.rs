//! Replays upstream's `pkg/aga/tag_helper_test.go` (`getAcceleratorTags`, 8 cases; its 5
//! constructor cases check a Go type assertion and have no counterpart), and pins the tracking
//! tags upstream's deployer puts on accelerators.
// Upstream's test tables, one tuple per case, as its Go tables are.
#![allow(clippy::type_complexity)]

use serde_json::json;

use super::*;
use crate::model::aga::test_support::ga;

fn tags(pairs: &[(&str, &str)]) -> Tags {
    pairs
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect()
}

#[test]
fn accelerator_tags_table() {
    let env_team = tags(&[("Environment", "test"), ("Team", "platform")]);
    let env = tags(&[("Environment", "test")]);
    let cases: Vec<(
        &str,
        serde_json::Value,
        Vec<&str>,
        Tags,
        bool,
        Result<Tags, &str>,
    )> = vec![
        (
            "no tags specified",
            json!({}),
            vec![],
            env_team.clone(),
            false,
            Ok(env_team.clone()),
        ),
        (
            "user tags specified",
            json!({"tags": {"Application": "my-app", "Owner": "team-a"}}),
            vec![],
            env_team.clone(),
            false,
            Ok(tags(&[
                ("Application", "my-app"),
                ("Owner", "team-a"),
                ("Environment", "test"),
                ("Team", "platform"),
            ])),
        ),
        (
            "user tags override default tags",
            json!({"tags": {"Environment": "production", "Application": "my-app"}}),
            vec![],
            env_team.clone(),
            true,
            Ok(tags(&[
                ("Environment", "production"),
                ("Application", "my-app"),
                ("Team", "platform"),
            ])),
        ),
        (
            "external managed tags configured but not specified by user",
            json!({"tags": {"Application": "my-app", "Owner": "team-a"}}),
            vec!["ExternalTag", "ManagedByTeam"],
            env.clone(),
            false,
            Ok(tags(&[
                ("Application", "my-app"),
                ("Owner", "team-a"),
                ("Environment", "test"),
            ])),
        ),
        (
            "external managed tags specified by user should cause error",
            json!({"tags": {"Application": "my-app", "ExternalTag": "external-value",
                            "ManagedByTeam": "platform-team"}}),
            vec!["ExternalTag", "ManagedByTeam"],
            env.clone(),
            false,
            Err("external managed tag key ExternalTag cannot be specified"),
        ),
        (
            "single external managed tag specified by user should cause error",
            json!({"tags": {"Application": "my-app", "ExternalTag": "external-value"}}),
            vec!["ExternalTag", "ManagedByTeam"],
            env.clone(),
            false,
            Err("external managed tag key ExternalTag cannot be specified"),
        ),
        (
            "empty default tags",
            json!({"tags": {"Application": "my-app"}}),
            vec![],
            tags(&[]),
            false,
            Ok(tags(&[("Application", "my-app")])),
        ),
        (
            "nil user tags",
            json!({}),
            vec![],
            env.clone(),
            false,
            Ok(env.clone()),
        ),
    ];
    for (case, spec, external, defaults, low_priority, want) in cases {
        let cfg = AgaConfig {
            default_tags: defaults,
            external_managed_tags: external.iter().map(|s| s.to_string()).collect(),
            user_tags_over_default_tags: low_priority,
            ..AgaConfig::default()
        };
        let got = user_tags(&cfg, &ga("ns", "ga", spec));
        assert_eq!(got, want.map_err(str::to_string), "{case}");
    }
}

#[test]
fn default_tags_win_over_the_objects_unless_low_priority() {
    let cfg = AgaConfig {
        default_tags: tags(&[("Environment", "test")]),
        ..AgaConfig::default()
    };
    let object = ga("ns", "ga", json!({"tags": {"Environment": "prod"}}));
    assert_eq!(user_tags(&cfg, &object).unwrap()["Environment"], "test");
    let low = AgaConfig {
        user_tags_over_default_tags: true,
        ..cfg
    };
    assert_eq!(user_tags(&low, &object).unwrap()["Environment"], "prod");
}

#[test]
fn tracking_tags_are_upstreams_and_win_over_user_tags() {
    let cfg = AgaConfig {
        cluster_name: "prod".into(),
        region: "eu-west-1".into(),
        ..AgaConfig::default()
    };
    let object = ga(
        "apps",
        "web",
        json!({"tags": {"aga.k8s.aws/stack": "mine", "team": "a"}}),
    );
    assert_eq!(
        tracking_tags(&cfg, &object),
        tags(&[
            ("elbv2.k8s.aws/cluster", "prod"),
            ("aga.k8s.aws/stack", "apps/web"),
            ("aga.k8s.aws/resource", "GlobalAccelerator"),
            ("elbv2.k8s.aws/cluster-region", "eu-west-1"),
        ])
    );
    let all = accelerator_tags(&cfg, &object).unwrap();
    assert_eq!(all["aga.k8s.aws/stack"], "apps/web");
    assert_eq!(all["team"], "a");
    // No region known: no region tag.
    let no_region = AgaConfig {
        region: String::new(),
        ..cfg
    };
    assert!(!tracking_tags(&no_region, &object).contains_key("elbv2.k8s.aws/cluster-region"));
}
