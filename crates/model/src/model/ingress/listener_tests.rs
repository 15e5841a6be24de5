//! The per-port merge of members' listen-port settings: the first member that sets a value fixes
//! it, a later one that differs fails with upstream's text naming both; what merges, merges.

use super::*;

fn pc(protocol: Protocol) -> PortConfig {
    PortConfig {
        protocol: Some(protocol),
        ..PortConfig::default()
    }
}

fn strings(v: &[&str]) -> Vec<String> {
    v.iter().map(|s| s.to_string()).collect()
}

fn merged(cfgs: &[(&str, &PortConfig)]) -> Result<PortConfig, String> {
    let cfgs: Vec<(String, &PortConfig)> = cfgs.iter().map(|(k, c)| (k.to_string(), *c)).collect();
    merge(443, &cfgs, "pol-default")
}

#[test]
fn settings_merge_certificates_in_order_with_defaults_filled() {
    let a = PortConfig {
        certificates: strings(&["c1", "c2"]),
        cidr_v4: strings(&["10.0.0.0/8", "10.0.0.0/8"]),
        ..pc(Protocol::Https)
    };
    let b = PortConfig {
        certificates: strings(&["c3", "c1", "c2"]),
        cidr_v4: strings(&["10.0.0.0/8"]),
        ..pc(Protocol::Https)
    };
    let out = merged(&[("ns/a", &a), ("ns/b", &b)]).unwrap();
    // The default (first) certificate's own slot is not counted: it comes back as an SNI one.
    assert_eq!(out.certificates, strings(&["c1", "c2", "c3", "c1"]));
    assert_eq!(out.cidr_v4, strings(&["10.0.0.0/8"]));
    assert!(out.cidr_v6.is_empty());
    assert_eq!(out.ssl_policy.as_deref(), Some("pol-default"));
    let plain = merged(&[("ns/a", &pc(Protocol::Http))]).unwrap();
    assert_eq!(plain.cidr_v4, strings(&["0.0.0.0/0"]));
    assert_eq!(plain.cidr_v6, strings(&["::/0"]));
    assert_eq!(plain.ssl_policy, None);
}

#[test]
fn conflicts_name_the_first_setter_and_the_member_that_differs() {
    let wrap = |e: &str| format!("failed to merge listenPort config for port: 443: {e}");
    let err = merged(&[
        ("ns/a", &pc(Protocol::Https)),
        ("ns/b", &pc(Protocol::Http)),
    ]);
    assert_eq!(
        err.unwrap_err(),
        wrap("conflicting protocol, ns/a: HTTPS | ns/b: HTTP")
    );
    let cidr = |v4: &[&str]| PortConfig {
        cidr_v4: strings(v4),
        ..pc(Protocol::Https)
    };
    let (a, none, b) = (
        cidr(&["1.0.0.0/8"]),
        pc(Protocol::Https),
        cidr(&["2.0.0.0/8"]),
    );
    assert_eq!(
        merged(&[("ns/a", &a), ("ns/n", &none), ("ns/b", &b)]).unwrap_err(),
        wrap("conflicting inbound-cidrs, ns/a: [1.0.0.0/8], [] | ns/b: [2.0.0.0/8], []")
    );
    let pl = |v: &[&str]| PortConfig {
        prefix_lists: strings(v),
        ..pc(Protocol::Https)
    };
    assert_eq!(
        merged(&[
            ("ns/a", &pl(&["pl-1", "pl-2"])),
            ("ns/b", &pl(&["pl-2", "pl-1"])),
            ("ns/c", &pl(&["pl-3"]))
        ])
        .unwrap_err(),
        wrap("conflicting inbound-prefix-lists, ns/a: [pl-1 pl-2] | ns/c: [pl-3]")
    );
    let ssl = |p: &str| PortConfig {
        ssl_policy: Some(p.into()),
        ..pc(Protocol::Https)
    };
    assert_eq!(
        merged(&[("ns/a", &ssl("p1")), ("ns/b", &ssl("p2"))]).unwrap_err(),
        wrap("conflicting sslPolicy, ns/a: p1 | ns/b: p2")
    );
    let mtls = |mode: &str| PortConfig {
        mtls: Some(MutualAuthentication {
            mode: mode.into(),
            trust_store: None,
            ignore_client_certificate_expiry: None,
            advertise_trust_store_ca_names: None,
        }),
        ..pc(Protocol::Https)
    };
    let err = merged(&[("ns/a", &mtls("off")), ("ns/b", &mtls("passthrough"))]).unwrap_err();
    assert!(
        err.starts_with(&wrap(
            "conflicting mTLS Attributes, ns/a: Some(MutualAuthentication { mode: \"off\""
        )),
        "{err}"
    );
}

#[test]
fn the_first_conflict_in_member_order_is_reported() {
    // ns/b differs on its inbound CIDRs, ns/c on its protocol: ns/b's conflict comes first;
    // within one member the protocol is checked before the SSL policy.
    let a = PortConfig {
        cidr_v4: strings(&["1.0.0.0/8"]),
        ssl_policy: Some("p1".into()),
        ..pc(Protocol::Https)
    };
    let b = PortConfig {
        cidr_v4: strings(&["2.0.0.0/8"]),
        ..pc(Protocol::Https)
    };
    let c = PortConfig {
        ssl_policy: Some("p2".into()),
        ..pc(Protocol::Http)
    };
    let err = merged(&[("ns/a", &a), ("ns/b", &b), ("ns/c", &c)]).unwrap_err();
    assert!(err.contains("conflicting inbound-cidrs"), "{err}");
    let err = merged(&[("ns/a", &a), ("ns/c", &c)]).unwrap_err();
    assert!(err.contains("conflicting protocol"), "{err}");
}

/// Members without explicit certificates make the merged port carry every member's source in
/// group order (explicit ARNs or hosts), for discovery to complete before the deploy.
#[test]
fn discovery_keeps_each_members_certificate_source_in_order() {
    let mut a = pc(Protocol::Https);
    a.discovery_hosts = Some(["b.example.com", "a.example.com"].map(String::from).into());
    let mut b = pc(Protocol::Https);
    b.certificates = strings(&["arn:b"]);
    let m = merged(&[("ns/a", &a), ("ns/b", &b)]).unwrap();
    assert_eq!(m.certificates, strings(&["arn:b"]));
    assert_eq!(
        m.certificate_discovery,
        vec![
            MemberCertificates {
                ingress: "ns/a".into(),
                certificates: vec![],
                discovery_hosts: Some(strings(&["a.example.com", "b.example.com"])),
            },
            MemberCertificates {
                ingress: "ns/b".into(),
                certificates: strings(&["arn:b"]),
                discovery_hosts: None,
            },
        ]
    );
    // Explicit certificates only: nothing to discover.
    assert!(merged(&[("ns/b", &b)])
        .unwrap()
        .certificate_discovery
        .is_empty());
}
