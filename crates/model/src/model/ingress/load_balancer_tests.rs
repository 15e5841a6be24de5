//! Group-wide settings two members set: what agrees builds, what differs fails the group with
//! upstream's text, what one member gets wrong excludes that member (pinned on the code before
//! the one-function-per-setting refactor).

use std::collections::BTreeMap;

use k8s_openapi::api::core::v1::Service;
use k8s_openapi::api::networking::v1::Ingress;
use serde_json::json;

use crate::model::{build_stack, load_groups, BuildEnv, ClusterObjects, ModelConfig};

/// One annotation line, as a manifest would carry it.
fn a(key: &str, value: &str) -> String {
    format!("alb.ingress.kubernetes.io/{key}: '{value}'\n")
}

/// An Ingress of group `shop` routing `host` to Service `web`, with `extra` annotation lines.
fn ingress(name: &str, host: &str, extra: &str) -> Ingress {
    let mut annotations: BTreeMap<String, String> = match extra {
        "" => BTreeMap::new(),
        _ => serde_yaml::from_str(extra).unwrap(),
    };
    annotations.insert("kubernetes.io/ingress.class".into(), "alb".into());
    annotations.insert("alb.ingress.kubernetes.io/group.name".into(), "shop".into());
    let backend = json!({"service": {"name": "web", "port": {"number": 80}}});
    let path = json!({"path": "/", "pathType": "Prefix", "backend": backend});
    serde_json::from_value(json!({
        "metadata": {"name": name, "namespace": "demo", "annotations": annotations},
        "spec": {"rules": [{"host": host, "http": {"paths": [path]}}]},
    }))
    .unwrap()
}

/// The build's outcome in one line: members and excluded members, or the group's error.
fn outcome(web: &str, other: &str) -> String {
    let service: Service = serde_json::from_value(json!({
        "metadata": {"name": "web", "namespace": "demo"},
        "spec": {"type": "NodePort", "ports": [{"port": 80, "targetPort": 8080, "nodePort": 30080}]},
    }))
    .unwrap();
    let objs = ClusterObjects {
        services: vec![service],
        ingresses: vec![
            ingress("web", "shop.example.com", web),
            ingress("other", "other.example.com", other),
        ],
        ..ClusterObjects::default()
    };
    let cfg = ModelConfig {
        cluster_name: "c".into(),
        vpc_id: Some("vpc-1".into()),
        ..ModelConfig::default()
    };
    let (groups, errors) = load_groups(&objs, &cfg.ingress_class);
    assert!(errors.is_empty(), "{errors:?}");
    let g = groups.values().next().unwrap();
    match build_stack(g, &objs, &cfg, &BuildEnv::default()) {
        Ok(s) => {
            let ex: Vec<String> = s
                .excluded_members
                .iter()
                .map(|e| format!("{}: {}", e.ingress, e.error))
                .collect();
            format!("ok {:?} excluded {ex:?}", s.members)
        }
        Err(e) => format!("err {e}"),
    }
}

const BOTH: &str = r#"ok ["demo/other", "demo/web"] excluded []"#;

fn check(cases: &[(String, String, &str)]) {
    let mut wrong = Vec::new();
    for (web, other, want) in cases {
        let got = outcome(web, other);
        if got != *want {
            wrong.push(format!("{web}{other} got:  {got}\n want: {want}"));
        }
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}

#[test]
fn load_balancer_settings_agree_or_fail_with_upstream_texts() {
    check(&[
        (
            a("scheme", "internal"),
            a("scheme", "internet-facing"),
            r#"err conflicting scheme: map[internal:{} internet-facing:{}]"#,
        ),
        (
            a("scheme", "bogus"),
            String::new(),
            r#"err unknown scheme: bogus"#,
        ),
        (
            a("ip-address-type", "ipv4"),
            a("ip-address-type", "dualstack"),
            r#"err conflicting IPAddressType: [dualstack ipv4]"#,
        ),
        (
            a("ip-address-type", "ipv5"),
            String::new(),
            r#"err unknown IPAddressType: ipv5"#,
        ),
        (
            a("security-groups", "sg-1, sg-2"),
            a("security-groups", "sg-3"),
            r#"err conflicting securityGroups: [sg-3] | [sg-1 sg-2]"#,
        ),
        (
            a("tags", "team=a, env=prod"),
            a("tags", "team=b"),
            r#"err conflicting tag team: b | a"#,
        ),
        (a("tags", "team=a"), a("tags", "team=a, env=prod"), BOTH),
        (
            a("security-groups", "sg-1"),
            a("security-groups", "sg-1"),
            BOTH,
        ),
        (
            a("manage-backend-security-group-rules", "true"),
            a("manage-backend-security-group-rules", "false"),
            r#"err conflicting manage backend security group rules settings"#,
        ),
        (
            a("customer-owned-ipv4-pool", ""),
            String::new(),
            r#"err cannot use empty value for customer-owned-ipv4-pool annotation, ingress: demo/web"#,
        ),
        (
            a(
                "load-balancer-attributes",
                "idle_timeout.timeout_seconds=60",
            ),
            a(
                "load-balancer-attributes",
                "idle_timeout.timeout_seconds=30",
            ),
            r#"err conflicting load balancer attributes idle_timeout.timeout_seconds: 30 | 60"#,
        ),
        (
            a("minimum-load-balancer-capacity", "Foo=1"),
            String::new(),
            r#"err invalid key to set the capacity: Foo, Expected key: CapacityUnits"#,
        ),
        (
            a("minimum-load-balancer-capacity", "CapacityUnits=100"),
            a("minimum-load-balancer-capacity", "CapacityUnits=200"),
            r#"err conflicting capacity reservation CapacityUnits: 200 | 100"#,
        ),
        (
            a("load-balancer-name", "aaa"),
            a("load-balancer-name", "bbb"),
            r#"err conflicting load balancer name: map[aaa:{} bbb:{}]"#,
        ),
        (
            a("load-balancer-name", &"n".repeat(33)),
            String::new(),
            r#"err load balancer name cannot be longer than 32 characters"#,
        ),
        (
            a("subnets", "subnet-a, subnet-b"),
            a("subnets", "subnet-b, subnet-a"),
            BOTH,
        ),
        (
            a("subnets", "subnet-a"),
            a("subnets", "subnet-c"),
            r#"err conflicting subnets: [subnet-c] | [subnet-a]"#,
        ),
        (
            a("ipam-ipv4-pool-id", "ipam-pool-1"),
            a("ipam-ipv4-pool-id", "ipam-pool-2"),
            r#"err conflicting ipv4 ipam pools ipam-pool-1: ipam-pool-2"#,
        ),
        (
            a("shield-advanced-protection", "true"),
            a("shield-advanced-protection", "false"),
            r#"err conflicting enable shield advanced protection"#,
        ),
        (a("shield-advanced-protection", "true"), String::new(), BOTH),
        (
            a("shield-advanced-protection", "maybe"),
            String::new(),
            r#"ok ["demo/other"] excluded ["demo/web: failed to parse bool annotation, alb.ingress.kubernetes.io/shield-advanced-protection: maybe: strconv.ParseBool: parsing \"maybe\": invalid syntax"]"#,
        ),
        (
            a("wafv2-acl-arn", "arn:a"),
            a("wafv2-acl-arn", "arn:b"),
            r#"err conflicting WAFv2 WebACL ARNs: [arn:a arn:b]"#,
        ),
        (
            a("wafv2-acl-name", "a"),
            a("wafv2-acl-name", "b"),
            r#"err conflicting WAFv2 WebACL names: [a b]"#,
        ),
        (
            a("wafv2-acl-name", "a"),
            a("wafv2-acl-arn", "arn:a") + &a("wafv2-acl-arn", "arn:b"),
            BOTH,
        ),
        (
            a("waf-acl-id", "w1"),
            a("web-acl-id", "w2"),
            r#"err conflicting WAFClassic WebACL IDs: [w1 w2]"#,
        ),
        (
            a("security-groups", "sg-1"),
            a("security-groups", "sg-2") + &a("manage-backend-security-group-rules", "maybe"),
            r#"ok ["demo/web"] excluded ["demo/other: failed to parse bool annotation, alb.ingress.kubernetes.io/manage-backend-security-group-rules: maybe: strconv.ParseBool: parsing \"maybe\": invalid syntax"]"#,
        ),
    ]);
}

#[test]
fn listener_settings_agree_or_fail_with_upstream_texts() {
    let https = a(
        "listen-ports",
        r#"[{"HTTP": 80}, {"HTTPS": 443}, {"HTTPS": 8443}]"#,
    ) + &a(
        "certificate-arn",
        "arn:aws:acm:us-west-2:111122223333:certificate/c",
    );
    check(&[
        (
            https.clone() + &a("ssl-redirect", "443"),
            https.clone() + &a("ssl-redirect", "8443"),
            r#"err conflicting sslRedirect port: [443 8443]"#,
        ),
        (
            a("ssl-redirect", "443"),
            String::new(),
            r#"err listener does not exist for SSLRedirect port: 443"#,
        ),
        (
            https.clone() + &a("ssl-redirect", "80"),
            String::new(),
            r#"err listener protocol non-SSL for SSLRedirect port: 80"#,
        ),
        (
            a(
                "listener-attributes.HTTP-80",
                "routing.http.response.server.enabled=true",
            ),
            a(
                "listener-attributes.HTTP-80",
                "routing.http.response.server.enabled=false",
            ),
            r#"err conflicting listener attributes routing.http.response.server.enabled: false | true for ingress demo/web"#,
        ),
        (
            a(
                "listener-attributes.HTTP-80",
                "routing.http.response.server.enabled=true",
            ),
            a(
                "listener-attributes.HTTP-80",
                "routing.http.response.server.enabled=true",
            ),
            BOTH,
        ),
    ]);
}
