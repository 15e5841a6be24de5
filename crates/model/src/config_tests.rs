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

/// The block of `--help` that describes `--long` (its usage line and help text).
fn help_block<'h>(help: &'h str, long: &str) -> Option<&'h str> {
    let usage = format!("--{long}");
    help.split("\n\n").find(|block| {
        block.lines().any(|line| {
            line.trim_start()
                .strip_prefix(&usage)
                .is_some_and(|rest| rest.is_empty() || rest.starts_with([' ', '[', '=']))
        })
    })
}

fn one_line(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// `--help` marks exactly the flags of the table, each with its own reason, and nothing else;
/// the seven flags that used to be marked by hand although acted on carry no mark.
#[test]
fn help_marks_exactly_the_inert_flags() {
    let cmd = Cli::command();
    let help = cmd.clone().render_long_help().to_string();
    let mut marked = 0;
    for arg in cmd.get_arguments() {
        let Some(long) = arg.get_long() else { continue };
        if long == "help" {
            continue;
        }
        let block = help_block(&help, long).unwrap_or_else(|| panic!("--{long} not in help"));
        match inert::inert_flag(long) {
            Some(flag) => {
                assert!(
                    one_line(block).contains(&inert::mark(flag)),
                    "--{long} should carry its mark: {block}"
                );
                marked += 1;
            }
            None => assert!(
                !block.contains(inert::MARK),
                "--{long} is acted on: {block}"
            ),
        }
    }
    assert_eq!(
        marked,
        INERT_FLAGS.len(),
        "every entry of the table is a flag"
    );
    for acted_on in [
        "enable-waf",
        "enable-wafv2",
        "enable-shield",
        "service-max-concurrent-reconciles",
        "gateway-class-max-concurrent-reconciles",
        "alb-gateway-max-concurrent-reconciles",
        "nlb-gateway-max-concurrent-reconciles",
        "required-secrets-label",
        "lb-stabilization-monitor-interval",
        "kube-ca-pem-filepath",
    ] {
        assert!(inert::inert_flag(acted_on).is_none(), "--{acted_on}");
        let block = help_block(&help, acted_on).unwrap();
        assert!(!block.contains(inert::MARK), "{block}");
    }
    // Marked once, however often the command is built.
    let again = Cli::command().render_long_help().to_string();
    assert_eq!(again.matches(inert::MARK).count(), INERT_FLAGS.len());
}

/// The type system keeps readers off the inert flags: a flag parses into [`Inert`] (whose text
/// only the config's `inert` module reads) exactly when it is in the table, with the table's
/// default.
#[test]
fn a_flag_parses_into_inert_exactly_when_the_table_lists_it() {
    let cmd = Cli::command();
    let matches = cmd
        .clone()
        .try_get_matches_from(["aws-load-balancer-controller", "--cluster-name=a"])
        .unwrap();
    let mut inert_seen = Vec::new();
    for arg in cmd.get_arguments() {
        let Some(long) = arg.get_long() else { continue };
        let parsed_inert = matches!(
            matches.try_get_one::<Inert>(arg.get_id().as_str()),
            Ok(Some(_))
        );
        let listed = inert::inert_flag(long);
        assert_eq!(parsed_inert, listed.is_some(), "--{long}");
        if let Some(flag) = listed {
            let default: Vec<&str> = arg
                .get_default_values()
                .iter()
                .filter_map(|v| v.to_str())
                .collect();
            assert_eq!(default, [flag.default], "--{long}: the table's default");
            inert_seen.push(long.to_string());
        }
    }
    assert_eq!(inert_seen.len(), INERT_FLAGS.len(), "{inert_seen:?}");
}

/// Each inert flag set to something else than its default is refused or warned about as its
/// entry says, naming the flag; its default is silent; a malformed value fails the start.
#[test]
fn inert_flags_set_are_refused_or_warned_about() {
    assert!(parse(&["--cluster-name=a"])
        .unwrap()
        .inert_warnings
        .is_empty());
    for flag in INERT_FLAGS {
        let value = ["7", "5m", "custom"]
            .into_iter()
            .find(|v| (flag.syntax)(v).is_ok() && *v != flag.default)
            .unwrap();
        let arg = format!("--{}={value}", flag.long);
        let defaulted = format!("--{}={}", flag.long, flag.default);
        let quiet = parse(&["--cluster-name=a", &defaulted]).unwrap();
        assert!(quiet.inert_warnings.is_empty(), "{defaulted}");
        match flag.when_set {
            inert::WhenSet::Refuse => {
                let err = parse(&["--cluster-name=a", &arg]).unwrap_err();
                assert_eq!(
                    err,
                    format!(
                        "--{}={value:?} is refused by this build: {}; unset the flag",
                        flag.long, flag.why
                    )
                );
            }
            inert::WhenSet::Warn => {
                let c = parse(&["--cluster-name=a", &arg]).unwrap();
                assert_eq!(c.inert_warnings.len(), 1, "{arg}");
                let w = &c.inert_warnings[0];
                assert_eq!((w.flag, w.value.as_str()), (flag.long, value));
                assert!(w.message.contains(flag.why), "{}", w.message);
            }
        }
    }
}

/// The GlobalAccelerator controller's two flags are acted on: parsed with upstream's defaults
/// (1 worker, 1000s), no warning when set, a malformed value failing the start with the flag's
/// name.
#[test]
fn globalaccelerator_flags_are_acted_on() {
    let d = parse(&["--cluster-name=a"]).unwrap();
    assert_eq!(d.globalaccelerator_max_concurrent_reconciles, 1);
    assert_eq!(d.globalaccelerator_max_backoff, Duration::from_secs(1000));
    let c = parse(&[
        "--cluster-name=a",
        "--globalaccelerator-max-concurrent-reconciles=5",
        "--globalaccelerator-max-exponential-backoff-delay=90s",
    ])
    .unwrap();
    assert!(c.inert_warnings.is_empty(), "{:?}", c.inert_warnings);
    assert_eq!(c.globalaccelerator_max_concurrent_reconciles, 5);
    assert_eq!(c.globalaccelerator_max_backoff, Duration::from_secs(90));
    for flag in [
        "globalaccelerator-max-concurrent-reconciles",
        "globalaccelerator-max-exponential-backoff-delay",
    ] {
        assert!(inert::inert_flag(flag).is_none(), "--{flag}");
    }
    let err = parse(&[
        "--cluster-name=a",
        "--globalaccelerator-max-concurrent-reconciles=many",
    ])
    .unwrap_err();
    assert!(
        err.contains("--globalaccelerator-max-concurrent-reconciles"),
        "{err}"
    );
    let err = parse(&[
        "--cluster-name=a",
        "--globalaccelerator-max-exponential-backoff-delay=soon",
    ])
    .unwrap_err();
    assert!(
        err.contains("--globalaccelerator-max-exponential-backoff-delay"),
        "{err}"
    );
}

/// `--default-pca-arn` is acted on: no warning, and its CA reaches the model's settings (the
/// certificates created for Ingresses without `acm-pca-arn` are issued by it); empty is unset.
#[test]
fn default_pca_arn_reaches_the_model_config() {
    let unset = parse(&["--cluster-name=a", "--default-pca-arn="]).unwrap();
    assert_eq!(unset.default_pca_arn, None);
    assert_eq!(ModelConfig::from(&unset).default_pca_arn, None);
    let ca = "arn:aws:acm-pca:us-west-2:1:certificate-authority/x";
    let c = parse(&["--cluster-name=a", &format!("--default-pca-arn={ca}")]).unwrap();
    assert!(c.inert_warnings.is_empty(), "{:?}", c.inert_warnings);
    assert_eq!(c.default_pca_arn.as_deref(), Some(ca));
    assert_eq!(ModelConfig::from(&c).default_pca_arn.as_deref(), Some(ca));
    assert!(inert::inert_flag("default-pca-arn").is_none());
}

/// `--aws-vpc-tag-key`: deprecated upstream (all `--aws-vpc-tags` are used); another key is
/// warned about, and the VPC tags stay whole.
#[test]
fn aws_vpc_tag_key_is_warned_about_and_every_vpc_tag_is_used() {
    let c = parse(&[
        "--cluster-name=a",
        "--aws-vpc-tags=team=web,env=prod",
        "--aws-vpc-tag-key=team",
    ])
    .unwrap();
    assert_eq!(c.aws_vpc_tags.len(), 2);
    assert_eq!(c.inert_warnings[0].flag, "aws-vpc-tag-key");
    assert!(
        c.inert_warnings[0]
            .message
            .contains("every tag of --aws-vpc-tags"),
        "{:?}",
        c.inert_warnings
    );
}

#[test]
fn required_secrets_label_lb_stabilization_and_client_ca_are_read() {
    let c = parse(&["--cluster-name=a"]).unwrap();
    assert_eq!(c.required_secrets_label, None);
    assert_eq!(
        c.lb_stabilization_monitor_interval,
        Duration::from_secs(120)
    );
    assert_eq!(c.webhook.client_ca_file, None);
    let c = parse(&[
        "--cluster-name=a",
        "--required-secrets-label=albc/oidc=yes",
        "--lb-stabilization-monitor-interval=30s",
        "--kube-ca-pem-filepath=/etc/kube/ca.pem",
    ])
    .unwrap();
    let label = c.required_secrets_label.unwrap();
    assert_eq!(
        (label.key.as_str(), label.value.as_str()),
        ("albc/oidc", "yes")
    );
    assert_eq!(c.lb_stabilization_monitor_interval, Duration::from_secs(30));
    assert_eq!(
        c.webhook.client_ca_file,
        Some(PathBuf::from("/etc/kube/ca.pem"))
    );
    assert_eq!(
        parse(&["--cluster-name=a", "--required-secrets-label=nolabel"]).unwrap_err(),
        "invalid value \"nolabel\" for --required-secrets-label: must be in key=value format"
    );
    for bad in ["0s", "later"] {
        let flag = format!("--lb-stabilization-monitor-interval={bad}");
        let err = parse(&["--cluster-name=a", &flag]).unwrap_err();
        assert!(err.contains("--lb-stabilization-monitor-interval"), "{err}");
    }
}

#[test]
fn unimplemented_gates_are_refused_and_quic_env_name_is_checked() {
    for gate in UNSUPPORTED_GATES.iter().map(|(gate, _)| *gate) {
        let flag = format!("--feature-gates=EnableRGTAPI=true,{gate}=true");
        let err = parse(&["--cluster-name=a", &flag]).unwrap_err();
        assert!(
            err.contains("--feature-gates")
                && err.contains(&format!("{gate} is not supported by this build")),
            "{err}"
        );
    }
    // The GlobalAccelerator controller is in this build: its gate turns on (off by default).
    assert!(!UNSUPPORTED_GATES
        .iter()
        .any(|(gate, _)| *gate == "GlobalAcceleratorController"));
    assert!(!parse(&["--cluster-name=a"])
        .unwrap()
        .gate("GlobalAcceleratorController"));
    let c = parse(&[
        "--cluster-name=a",
        "--feature-gates=GlobalAcceleratorController=true",
    ])
    .unwrap();
    assert!(c.gate("GlobalAcceleratorController"));
    let c = parse(&[
        "--cluster-name=a",
        "--feature-gates=ALBTargetControlAgent=false",
    ])
    .unwrap();
    assert!(!c.gate("ALBTargetControlAgent"));
    // The target control agent injector is in this build: its gate turns on.
    let c = parse(&[
        "--cluster-name=a",
        "--feature-gates=ALBTargetControlAgent=true",
    ])
    .unwrap();
    assert!(c.gate("ALBTargetControlAgent"));
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
