//! Tests for flag parsing and validation (upstream spellings and messages).

use super::*;
use clap::{CommandFactory, Parser};

/// The controller's flags as its binary parses them (the binary's `Cli` flattens them too).
#[derive(Parser)]
#[command(name = "aws-load-balancer-controller")]
struct Cli {
    #[command(flatten)]
    controller: ControllerArgs,
}

fn parse(args: &[&str]) -> Result<Config, String> {
    let mut argv = vec!["aws-load-balancer-controller"];
    argv.extend_from_slice(args);
    let cli = Cli::try_parse_from(argv).map_err(|e| e.to_string())?;
    Config::from_args(&cli.controller).map_err(|e| e.to_string())
}

#[test]
fn cluster_name_is_required_with_upstreams_message() {
    assert_eq!(
        parse(&[]).unwrap_err(),
        "kubernetes cluster name must be specified"
    );
}

#[test]
fn defaults_match_upstream() {
    let c = parse(&["--cluster-name=demo"]).unwrap();
    assert_eq!(c.ingress_class, "alb");
    assert_eq!(c.load_balancer_class, "service.k8s.aws/nlb");
    assert_eq!(c.webhook.bind.port(), 9443);
    assert_eq!(c.metrics_bind.unwrap().port(), 8080);
    assert_eq!(c.health_probe_bind.unwrap().port(), 61779);
    assert_eq!(c.sync_period, Duration::from_secs(36_000));
    assert_eq!(c.targetgroupbinding_max_backoff, Duration::from_secs(1000));
    assert_eq!(c.targetgroupbinding_requeue, Duration::from_secs(15));
    assert_eq!(c.default_ssl_policy, "ELBSecurityPolicy-2016-08");
    assert_eq!(c.default_target_type, TargetType::Instance);
    assert_eq!(c.default_scheme, LoadBalancerScheme::Internal);
    assert_eq!(c.log_level, LogLevel::Info);
    assert_eq!(c.aws_max_retries, 10);
    assert!(
        c.enable_leader_election && c.enable_pod_readiness_gate_inject && c.enable_endpoint_slices
    );
    assert_eq!(c.leader_election_id, "aws-load-balancer-controller-leader");
    assert_eq!(
        c.webhook.cert_file,
        PathBuf::from("/tmp/k8s-webhook-server/serving-certs/tls.crt")
    );
    assert_eq!(c.webhook.tls_min_version, TlsMinVersion::Tls13);
    assert!(c.gate("ListenerRulesTagging") && !c.gate("EnableRGTAPI"));
}

#[test]
fn booleans_take_pflag_forms() {
    assert!(
        !parse(&["--cluster-name=a", "--enable-leader-election=false"])
            .unwrap()
            .enable_leader_election
    );
    assert!(
        parse(&["--cluster-name=a", "--enable-leader-election"])
            .unwrap()
            .enable_leader_election
    );
    assert!(
        parse(&["--cluster-name=a", "--enable-leader-election=true"])
            .unwrap()
            .enable_leader_election
    );
    let err = parse(&["--cluster-name=a", "--enable-leader-election=maybe"]).unwrap_err();
    assert!(err.contains("--enable-leader-election"), "{err}");
}

#[test]
fn values_as_the_chart_writes_them() {
    let c = parse(&[
        "--cluster-name=prod",
        "--sync-period=2m30s",
        "--default-tags=team=web,env=prod",
        "--external-managed-tags=a,b",
        "--feature-gates=EnableRGTAPI=true,ListenerRulesTagging=false",
        "--aws-api-endpoints=elasticloadbalancing=http://127.0.0.1:5000,ec2=http://127.0.0.1:5000",
        "--metrics-bind-addr=127.0.0.1:0",
        "--webhook-bind-port",
        "10443",
        "--default-target-type=ip",
        "--default-load-balancer-scheme=internet-facing",
        "--log-level=debug",
    ])
    .unwrap();
    // Parsed once here; the layers take the typed values.
    assert_eq!(c.default_target_type, TargetType::Ip);
    assert_eq!(c.default_scheme, LoadBalancerScheme::InternetFacing);
    assert_eq!(c.log_level, LogLevel::Debug);
    let model = ModelConfig::from(&c);
    assert_eq!(
        (model.default_target_type, model.default_scheme),
        (TargetType::Ip, LoadBalancerScheme::InternetFacing)
    );
    assert_eq!(c.sync_period, Duration::from_secs(150));
    assert_eq!(c.default_tags.get("team").map(String::as_str), Some("web"));
    assert_eq!(c.external_managed_tags, vec!["a", "b"]);
    assert!(c.gate("EnableRGTAPI") && !c.gate("ListenerRulesTagging"));
    assert_eq!(c.aws_api_endpoints.len(), 2);
    assert_eq!(c.webhook.bind.port(), 10443);
}

#[test]
fn bad_values_name_their_flag() {
    let cases: &[(&[&str], &str)] = &[
        (&["--sync-period=10"], "--sync-period"),
        (&["--default-tags=nokey"], "--default-tags"),
        (
            &["--default-load-balancer-scheme=public"],
            "--default-load-balancer-scheme",
        ),
        (&["--metrics-bind-addr=nope"], "--metrics-bind-addr"),
        (
            &["--webhook-tls-min-version=1.1"],
            "--webhook-tls-min-version",
        ),
        (
            &["--backend-security-group=abc"],
            "--backend-security-group",
        ),
        (&["--aws-vpc-id=abc"], "--aws-vpc-id"),
        (&["--log-format=xml"], "--log-format"),
        (
            &["--targetgroupbinding-requeue-duration=soon"],
            "--targetgroupbinding-requeue-duration",
        ),
        (
            &[
                "--enable-backend-security-group=false",
                "--enable-manage-backend-security-group-rules",
            ],
            "--enable-manage-backend-security-group-rules",
        ),
        (
            &["--webhook-max-connections=0"],
            "--webhook-max-connections",
        ),
        (
            &["--webhook-max-inflight-body-bytes=1048576"],
            "--webhook-max-inflight-body-bytes",
        ),
    ];
    for (args, flag) in cases {
        let mut all = vec!["--cluster-name=a"];
        all.extend_from_slice(args);
        let err = parse(&all).unwrap_err();
        assert!(err.contains(flag), "{args:?}: {err}");
    }
}

#[test]
fn upstream_messages_for_target_type_tags_and_gates() {
    assert_eq!(
        parse(&["--cluster-name=a", "--default-target-type=lambda"]).unwrap_err(),
        "invalid value lambda for default target type"
    );
    assert_eq!(
        parse(&["--cluster-name=a", "--default-tags=elbv2.k8s.aws/cluster=x"]).unwrap_err(),
        "tag key elbv2.k8s.aws/cluster cannot be specified in default-tags flag"
    );
    assert_eq!(
        parse(&[
            "--cluster-name=a",
            "--external-managed-tags=ingress.k8s.aws/stack"
        ])
        .unwrap_err(),
        "tag key ingress.k8s.aws/stack cannot be specified in external-managed-tags flag"
    );
    assert_eq!(
        parse(&["--cluster-name=a", "--feature-gates=Bogus=true"]).unwrap_err(),
        "unknown feature: Bogus"
    );
}

#[test]
fn unknown_flags_are_refused() {
    assert!(parse(&["--cluster-name=a", "--no-such-flag"]).is_err());
}

#[test]
fn flags_not_acted_on_say_so_in_help() {
    let help = Cli::command().render_long_help().to_string();
    for flag in [
        "--enable-waf",
        "--enable-shield",
        "--default-pca-arn",
        "--kube-ca-pem-filepath",
        "--service-max-concurrent-reconciles",
    ] {
        let line = help
            .split("\n\n")
            .find(|block| block.contains(flag))
            .unwrap_or_default();
        assert!(
            line.contains(crate::args::NOT_YET),
            "{flag} help should say it is not acted on: {line}"
        );
    }
    // Flags we do act on must not carry the marker.
    let line = help
        .split("\n\n")
        .find(|b| b.contains("--cluster-name"))
        .unwrap();
    assert!(!line.contains(crate::args::NOT_YET));
}

#[test]
fn unimplemented_gates_are_refused_and_quic_env_name_is_checked() {
    for gate in ["ALBTargetControlAgent", "GlobalAcceleratorController"] {
        let flag = format!("--feature-gates=EnableRGTAPI=true,{gate}=true");
        let err = parse(&["--cluster-name=a", &flag]).unwrap_err();
        assert!(
            err.contains("--feature-gates")
                && err.contains(&format!("{gate} is not supported by this build")),
            "{err}"
        );
    }
    let c = parse(&[
        "--cluster-name=a",
        "--feature-gates=ALBTargetControlAgent=false",
    ])
    .unwrap();
    assert!(!c.gate("ALBTargetControlAgent"));
    assert_eq!(c.quic_environment_variable_name, "AWS_LBC_QUIC_SERVER_ID");
    let c = parse(&["--cluster-name=a", "--quic-environment-variable-name=SID"]).unwrap();
    assert_eq!(c.quic_environment_variable_name, "SID");
    let err = parse(&["--cluster-name=a", "--quic-environment-variable-name="]).unwrap_err();
    assert!(err.contains("--quic-environment-variable-name"), "{err}");
}

#[test]
fn watch_namespace_takes_one_namespace_or_a_comma_list() {
    let ns = |flag: &str| parse(&["--cluster-name=c", flag]).unwrap().watch_namespaces;
    assert!(ns("--watch-namespace=").is_empty());
    assert_eq!(ns("--watch-namespace=team-a"), ["team-a"]);
    assert_eq!(ns("--watch-namespace=team-a, team-b"), ["team-a", "team-b"]);
}

#[test]
fn dry_run_never_takes_the_owners_default_lease() {
    let c = parse(&["--cluster-name=demo"]).unwrap();
    assert_eq!(c.leader_election_id, "aws-load-balancer-controller-leader");
    assert!(!c.dry_run);
    let c = parse(&["--cluster-name=demo", "--dry-run"]).unwrap();
    assert!(c.dry_run);
    assert_eq!(c.leader_election_id, "aws-load-balancer-controller-dry-run");
    // The chart's own id for the shadow stays as it is.
    let c = parse(&[
        "--cluster-name=demo",
        "--dry-run",
        "--leader-election-id=aws-load-balancer-controller-dry-run",
    ])
    .unwrap();
    assert_eq!(c.leader_election_id, "aws-load-balancer-controller-dry-run");
    let err = parse(&["--cluster-name=demo", "--dry-run-events"]).unwrap_err();
    assert!(err.contains("dry-run-events"), "{err}");
}

#[test]
fn dry_run_never_takes_the_owners_custom_lease() {
    fn id(args: &[&str]) -> String {
        parse(args).unwrap().leader_election_id
    }
    // The owner keeps its custom id; a shadow given the same id moves to `<id>-dry-run`.
    assert_eq!(
        id(&["--cluster-name=demo", "--leader-election-id=custom"]),
        "custom"
    );
    assert_eq!(
        id(&[
            "--cluster-name=demo",
            "--dry-run",
            "--leader-election-id=custom"
        ]),
        "custom-dry-run"
    );
    // An id that already names a shadow's Lease is not suffixed twice.
    assert_eq!(
        id(&[
            "--cluster-name=demo",
            "--dry-run",
            "--leader-election-id=custom-dry-run"
        ]),
        "custom-dry-run"
    );
    // Without --dry-run an id ending in -dry-run is taken as given.
    assert_eq!(
        id(&["--cluster-name=demo", "--leader-election-id=x-dry-run"]),
        "x-dry-run"
    );
}

#[test]
fn aws_api_throttle_is_parsed_at_start() {
    // Unset: no user rules (the AWS layer applies upstream's defaults).
    assert!(parse(&["--cluster-name=a"])
        .unwrap()
        .aws_api_throttle
        .is_empty());
    // The chart's example value becomes typed rules, in order.
    let c = parse(&[
        "--cluster-name=a",
        "--aws-api-throttle=Elastic Load Balancing v2:RegisterTargets|DeregisterTargets=4:20,Elastic Load Balancing v2:.*=10:40",
    ])
    .unwrap();
    let r = &c.aws_api_throttle;
    assert_eq!(r.len(), 2);
    assert_eq!(r[0].service, "Elastic Load Balancing v2");
    assert_eq!(r[0].operation.as_str(), "RegisterTargets|DeregisterTargets");
    assert!(r[0].operation.is_match("DeregisterTargets"));
    assert_eq!((r[0].rate, r[0].burst), (4.0, 20));
    assert_eq!(
        (r[1].operation.as_str(), r[1].rate, r[1].burst),
        (".*", 10.0, 40)
    );
    // A bad value fails the whole configuration with the parser's message.
    for (value, want) in [
        (
            "garbage",
            "invalid --aws-api-throttle: garbage must be formatted as serviceID:operationRegex=rate:burst",
        ),
        (
            "ec2:Describe.*=fast:10",
            "invalid --aws-api-throttle: fast must be valid positive float number as rate limit",
        ),
        (
            "ec2:(=1:2",
            "invalid --aws-api-throttle: ( must be valid regex expression for operation",
        ),
    ] {
        let flag = format!("--aws-api-throttle={value}");
        let err = parse(&["--cluster-name=a", &flag]).unwrap_err();
        assert_eq!(err, want);
    }
}
