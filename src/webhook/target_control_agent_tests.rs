//! Upstream's tables of the injector's checks (`target_control_injection_test.go`:
//! `Test_isValidAddress`, `Test_extractPortFromAddress`, `Test_isValidConcurrency`,
//! `Test_isValidProtocolVersion`), replayed case for case, and the container the settings make.

use super::*;

fn spec() -> AlbTargetControlConfigSpec {
    AlbTargetControlConfigSpec {
        image: "public.ecr.aws/aws-elb/target-optimizer/target-control-agent:latest".into(),
        data_address: "0.0.0.0:80".into(),
        control_address: "0.0.0.0:3000".into(),
        destination_address: "127.0.0.1:8080".into(),
        max_concurrency: Some(1000),
        ..Default::default()
    }
}

/// `(name, input, want)` rows of upstream's `Test_isValidAddress`.
const VALID_ADDRESS: &[(&str, &str, bool)] = &[
    ("valid IP address with port", "0.0.0.0:8080", true),
    ("hostname with port", "localhost:3000", false),
    ("invalid address without port", "127.0.0.1", false),
    ("empty address", "", false),
    ("multiple colons", "127.0.0.1:80:80", false),
    ("port only", "3000", false),
    ("valid IPv6 with port", "[::1]:8080", true),
    (
        "valid IPv6 full address with port",
        "[2001:db8::1]:3000",
        true,
    ),
    ("invalid IPv6 without brackets", "::1:8080", false),
];

/// `(name, input, port, ok)` rows of upstream's `Test_extractPortFromAddress`.
const EXTRACT_PORT: &[(&str, &str, i32, bool)] = &[
    ("valid address with port", "0.0.0.0:8080", 8080, true),
    ("invalid format", "invalid", 0, false),
    ("empty string", "", 0, false),
    ("IPv6 with port", "[::1]:8080", 8080, true),
    (
        "IPv6 full address with port",
        "[2001:db8::1]:3000",
        3000,
        true,
    ),
    ("IPv6 without brackets", "::1:8080", 0, false),
];

/// `(name, input, want)` rows of upstream's `Test_isValidConcurrency`.
const VALID_CONCURRENCY: &[(&str, &str, bool)] = &[
    ("valid concurrency 1", "1", true),
    ("valid concurrency 500", "500", true),
    ("valid concurrency 1000", "1000", true),
    ("zero concurrency", "0", true),
    ("negative concurrency", "-1", false),
    ("too high concurrency", "1001", false),
    ("invalid format", "abc", false),
    ("empty string", "", false),
];

/// `(name, input, want)` rows of upstream's `Test_isValidProtocolVersion`.
const VALID_PROTOCOL_VERSION: &[(&str, &str, bool)] = &[
    ("valid HTTP1", "HTTP1", true),
    ("valid HTTP2", "HTTP2", true),
    ("valid GRPC", "GRPC", true),
    ("invalid lowercase http1", "http1", false),
    ("invalid HTTP3", "HTTP3", false),
    ("empty string", "", false),
    ("invalid random string", "invalid", false),
];

/// Every row of the four tables, counted so a dropped row fails.
#[test]
fn upstreams_check_tables_replay_row_for_row() {
    let mut matched = 0;
    for (name, input, want) in VALID_ADDRESS {
        assert_eq!(is_valid_address(input), *want, "isValidAddress: {name}");
        matched += 1;
    }
    for (name, input, port, ok) in EXTRACT_PORT {
        let got = port_of(input);
        assert_eq!(
            (got.unwrap_or(0), got.is_some()),
            (*port, *ok),
            "extractPortFromAddress: {name}"
        );
        matched += 1;
    }
    for (name, input, want) in VALID_CONCURRENCY {
        assert_eq!(
            concurrency(input).is_some(),
            *want,
            "isValidConcurrency: {name}"
        );
        matched += 1;
    }
    for (name, input, want) in VALID_PROTOCOL_VERSION {
        assert_eq!(
            is_valid_protocol_version(input),
            *want,
            "isValidProtocolVersion: {name}"
        );
        matched += 1;
    }
    assert_eq!(matched, 9 + 6 + 8 + 7);
}

#[test]
fn split_host_port_follows_gos_net_package() {
    for (input, want) in [
        ("a:1", Some(("a", "1"))),
        ("[::1]:80", Some(("::1", "80"))),
        ("1.2.3.4:", Some(("1.2.3.4", ""))),
        (":80", Some(("", "80"))),
        ("[::1]", None),
        ("[::1]x:80", None),
        ("[::1]:80:1", None),
        ("a[b:1", None),
        ("a]b:1", None),
        ("[a]b]:1", None),
        ("noport", None),
    ] {
        assert_eq!(split_host_port(input), want, "{input}");
    }
    // Go's ParseInt(port, 10, 32): a sign is taken, 32 bits is the only range.
    assert!(is_valid_address("0.0.0.0:+80"));
    assert!(is_valid_address("0.0.0.0:-1"));
    assert!(!is_valid_address("0.0.0.0:4294967296"));
    assert!(!is_valid_address("0.0.0.0:"));
    assert!(is_valid_address("[::ffff:1.2.3.4]:80"));
    assert!(!is_valid_address("[fe80::1%eth0]:80"));
    // The configuration's addresses only need a port to read: a host name is fine there.
    assert_eq!(port_of("localhost:9000"), Some(9000));
}

#[test]
fn rust_log_levels_and_quantities_are_checked_as_upstream() {
    for ok in ["debug", "info", "error"] {
        assert!(is_valid_rust_log(ok));
    }
    for bad in ["warn", "DEBUG", ""] {
        assert!(!is_valid_rust_log(bad));
    }
    for ok in [
        "100m", "1", "0.5", ".5", "1.", "128Mi", "1Gi", "2e3", "1E", "+1", "-1", "5n", "3u",
    ] {
        assert!(is_quantity(ok), "{ok}");
    }
    for bad in [
        "", "m", "1.5.5", "1 Gi", " 1", "1Gb", "1e1.5", "1e", "abc", "1ki",
    ] {
        assert!(!is_quantity(bad), "{bad}");
    }
}

#[test]
fn the_configuration_alone_makes_upstreams_container() {
    let mut s = spec();
    s.tls_security_policy = Some("ELBSecurityPolicy-TLS-1-2-2017-01".into());
    s.rust_log = Some("info".into());
    s.resources = Some(ResourceRequirements {
        requests: Some(BTreeMap::from([
            ("cpu".to_string(), Quantity("100m".into())),
            ("memory".to_string(), Quantity("128Mi".into())),
        ])),
        limits: Some(BTreeMap::from([(
            "cpu".to_string(),
            Quantity("500m".into()),
        )])),
        claims: None,
    });
    let agent = Agent::new(&s, &BTreeMap::new()).unwrap();
    assert_eq!(
        agent.container(),
        json!({
            "name": "alb-target-control-agent",
            "image": "public.ecr.aws/aws-elb/target-optimizer/target-control-agent:latest",
            "ports": [
                {"name": "data", "containerPort": 80, "protocol": "TCP"},
                {"name": "control", "containerPort": 3000, "protocol": "TCP"}
            ],
            // Upstream's order: the four always there, then the optional ones that are set.
            "env": [
                {"name": "TARGET_CONTROL_DATA_ADDRESS", "value": "0.0.0.0:80"},
                {"name": "TARGET_CONTROL_CONTROL_ADDRESS", "value": "0.0.0.0:3000"},
                {"name": "TARGET_CONTROL_DESTINATION_ADDRESS", "value": "127.0.0.1:8080"},
                {"name": "TARGET_CONTROL_MAX_CONCURRENCY", "value": "1000"},
                {"name": "TARGET_CONTROL_TLS_SECURITY_POLICY", "value": "ELBSecurityPolicy-TLS-1-2-2017-01"},
                {"name": "RUST_LOG", "value": "info"}
            ],
            "resources": {
                "requests": {"cpu": "100m", "memory": "128Mi"},
                "limits": {"cpu": "500m"}
            }
        })
    );
}

#[test]
fn a_configuration_without_max_concurrency_takes_the_crds_default() {
    let mut s = spec();
    s.max_concurrency = None;
    let agent = Agent::new(&s, &BTreeMap::new()).unwrap();
    assert_eq!(agent.max_concurrency, 1);
    let c = agent.container();
    assert_eq!(
        c["env"][3],
        json!({"name": ENV_MAX_CONCURRENCY, "value": "1"})
    );
    assert_eq!(c["resources"], json!({}));
}

#[test]
fn every_annotation_overrides_its_setting() {
    use super::annotations as a;
    let overrides = BTreeMap::from([
        (a::IMAGE, "custom:v2"),
        (a::DATA_ADDRESS, "0.0.0.0:8080"),
        (a::CONTROL_ADDRESS, "[::]:9000"),
        (a::DESTINATION_ADDRESS, "127.0.0.1:3000"),
        (a::MAX_CONCURRENCY, "0"),
        (a::TLS_CERT_PATH, "/etc/tls/tls.crt"),
        (a::TLS_KEY_PATH, "/etc/tls/tls.key"),
        (a::TLS_SECURITY_POLICY, "policy"),
        (a::PROTOCOL_VERSION, "GRPC"),
        (a::RUST_LOG, "debug"),
        (a::CPU_REQUEST, "200m"),
        (a::CPU_LIMIT, "1000m"),
        (a::MEMORY_REQUEST, "256Mi"),
        (a::MEMORY_LIMIT, "1Gi"),
    ]);
    let agent = Agent::new(&spec(), &overrides).unwrap();
    assert!(agent.ignored.is_empty());
    let c = agent.container();
    assert_eq!(c["image"], "custom:v2");
    assert_eq!(c["ports"][0]["containerPort"], 8080);
    assert_eq!(c["ports"][1]["containerPort"], 9000);
    let env: Vec<(&str, &str)> = c["env"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| (e["name"].as_str().unwrap(), e["value"].as_str().unwrap()))
        .collect();
    assert_eq!(
        env,
        vec![
            (ENV_DATA_ADDRESS, "0.0.0.0:8080"),
            (ENV_CONTROL_ADDRESS, "[::]:9000"),
            (ENV_DESTINATION_ADDRESS, "127.0.0.1:3000"),
            (ENV_MAX_CONCURRENCY, "0"),
            (ENV_TLS_CERT_PATH, "/etc/tls/tls.crt"),
            (ENV_TLS_KEY_PATH, "/etc/tls/tls.key"),
            (ENV_TLS_SECURITY_POLICY, "policy"),
            (ENV_PROTOCOL_VERSION, "GRPC"),
            (ENV_RUST_LOG, "debug"),
        ]
    );
    assert_eq!(
        c["resources"],
        json!({"requests": {"cpu": "200m", "memory": "256Mi"},
               "limits": {"cpu": "1000m", "memory": "1Gi"}})
    );
}

#[test]
fn overrides_upstream_refuses_name_the_value_in_upstreams_words() {
    use super::annotations as a;
    for (key, value, message) in [
        (a::MAX_CONCURRENCY, "2000", "invalid concurrency value: 2000 (must be 0-1000)"),
        (a::MAX_CONCURRENCY, "", "invalid concurrency value:  (must be 0-1000)"),
        (
            a::DATA_ADDRESS,
            "localhost:80",
            "invalid data address format: localhost:80 (expected host:port format, e.g., 0.0.0.0:80)",
        ),
        (
            a::CONTROL_ADDRESS,
            "3000",
            "invalid control address format: 3000 (expected host:port format, e.g., 0.0.0.0:3000)",
        ),
        (
            a::DESTINATION_ADDRESS,
            "",
            "invalid destination address format:  (expected host:port format, e.g., 127.0.0.1:8080)",
        ),
        (
            a::PROTOCOL_VERSION,
            "http1",
            "invalid protocol version: http1 (must be HTTP1, HTTP2, or GRPC)",
        ),
        (
            a::RUST_LOG,
            "trace",
            "invalid rust log level: trace (must be debug, info, or error)",
        ),
    ] {
        let err = Agent::new(&spec(), &BTreeMap::from([(key, value)])).unwrap_err();
        assert_eq!(err.to_string(), message);
    }
    // The first bad override in upstream's order is the one reported.
    let both = BTreeMap::from([(a::RUST_LOG, "x"), (a::MAX_CONCURRENCY, "-5")]);
    assert_eq!(
        Agent::new(&spec(), &both).unwrap_err(),
        AgentError::Concurrency("-5".into())
    );
}

#[test]
fn empty_overrides_clear_optional_settings_and_bad_quantities_are_left_out() {
    use super::annotations as a;
    let mut s = spec();
    s.tls_cert_path = Some("/from/config".into());
    s.resources = Some(ResourceRequirements {
        limits: Some(BTreeMap::from([("cpu".to_string(), Quantity("1".into()))])),
        ..Default::default()
    });
    let overrides = BTreeMap::from([
        (a::TLS_CERT_PATH, ""),
        (a::CPU_LIMIT, "lots"),
        (a::MEMORY_LIMIT, "64Mi"),
    ]);
    let agent = Agent::new(&s, &overrides).unwrap();
    assert_eq!(agent.tls_cert_path, "");
    assert_eq!(agent.ignored, vec![(a::CPU_LIMIT, "lots".to_string())]);
    let c = agent.container();
    assert!(
        c["env"]
            .as_array()
            .unwrap()
            .iter()
            .all(|e| e["name"] != ENV_TLS_CERT_PATH),
        "{c}"
    );
    // The configuration's CPU limit stays; the valid memory override is added.
    assert_eq!(
        c["resources"],
        json!({"limits": {"cpu": "1", "memory": "64Mi"}})
    );
    // An empty image override leaves `image` out, as Go's omitempty does.
    let c = Agent::new(&s, &BTreeMap::from([(a::IMAGE, "")]))
        .unwrap()
        .container();
    assert!(c.get("image").is_none(), "{c}");
}
