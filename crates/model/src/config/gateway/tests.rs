//! Gateway gates, concurrency flags, CRD detection and the start-up warning.

use super::*;
use crate::args::ControllerArgs;
use crate::config::Config;
use clap::Parser;

#[derive(Parser)]
struct Cli {
    #[command(flatten)]
    controller: ControllerArgs,
}

fn parse(args: &[&str]) -> Result<Config, String> {
    let mut argv = vec!["aws-load-balancer-controller", "--cluster-name=demo"];
    argv.extend_from_slice(args);
    let cli = Cli::try_parse_from(argv).map_err(|e| e.to_string())?;
    Config::from_args(&cli.controller).map_err(|e| e.to_string())
}

fn served(kinds: &[(&str, &[&str])]) -> BTreeMap<String, BTreeSet<String>> {
    kinds
        .iter()
        .map(|(gv, ks)| (gv.to_string(), ks.iter().map(|k| k.to_string()).collect()))
        .collect()
}

fn everything() -> BTreeMap<String, BTreeSet<String>> {
    served(&[
        (
            GATEWAY_V1,
            &[
                "Gateway",
                "GatewayClass",
                "HTTPRoute",
                "GRPCRoute",
                "TLSRoute",
                "TCPRoute",
                "UDPRoute",
                "ListenerSet",
            ],
        ),
        (LBC_GATEWAY_V1, &LBC_KINDS),
    ])
}

#[test]
fn gates_and_concurrency_default_as_upstream() {
    let g = parse(&[]).unwrap().gateway;
    let on_by_default = Gate {
        enabled: true,
        explicit: false,
    };
    assert_eq!(g.alb, on_by_default);
    assert_eq!(g.nlb, on_by_default);
    assert_eq!(g.listener_set, on_by_default);
    assert_eq!(
        (
            g.alb_max_concurrent_reconciles,
            g.nlb_max_concurrent_reconciles,
            g.gateway_class_max_concurrent_reconciles
        ),
        (3, 3, 3)
    );
}

#[test]
fn flags_are_parsed_and_zero_is_refused() {
    let g = parse(&[
        "--alb-gateway-max-concurrent-reconciles=5",
        "--nlb-gateway-max-concurrent-reconciles=7",
        "--gateway-class-max-concurrent-reconciles=2",
        "--feature-gates=NLBGatewayAPI=false,GatewayListenerSet=true",
    ])
    .unwrap()
    .gateway;
    assert_eq!(
        (
            g.alb_max_concurrent_reconciles,
            g.nlb_max_concurrent_reconciles,
            g.gateway_class_max_concurrent_reconciles
        ),
        (5, 7, 2)
    );
    assert_eq!(
        g.nlb,
        Gate {
            enabled: false,
            explicit: true
        }
    );
    assert!(g.listener_set.explicit && g.listener_set.enabled);
    assert!(!g.alb.explicit);
    let err = parse(&["--nlb-gateway-max-concurrent-reconciles=0"]).unwrap_err();
    assert!(
        err.contains("--nlb-gateway-max-concurrent-reconciles") && err.contains("at least 1"),
        "{err}"
    );
}

#[test]
fn crd_detection_turns_off_gates_with_upstreams_lines() {
    let mut g = parse(&[]).unwrap().gateway;
    assert!(g.apply_crd_detection(&everything()).is_empty());
    assert!(g.alb.enabled && g.nlb.enabled && g.listener_set.enabled);

    // Only the ALB kinds installed (no L4 routes, no ListenerSet).
    let only_alb = served(&[
        (
            GATEWAY_V1,
            &["Gateway", "GatewayClass", "HTTPRoute", "GRPCRoute"],
        ),
        (LBC_GATEWAY_V1, &LBC_KINDS),
    ]);
    let off = g.apply_crd_detection(&only_alb);
    assert!(g.alb.enabled);
    assert!(!g.nlb.enabled && !g.listener_set.enabled);
    assert_eq!(
        off,
        vec![
            DisabledGate {
                message: "Disabling NLBGatewayAPI: missing required CRDs".into(),
                missing: vec!["TLSRoute".into(), "TCPRoute".into(), "UDPRoute".into()],
            },
            DisabledGate {
                message: "Disabling GatewayListenerSet: missing required CRDs".into(),
                missing: vec!["ListenerSet".into()],
            },
        ]
    );
}

#[test]
fn crd_detection_keeps_upstreams_explicit_gate_quirks() {
    // NLB set explicitly: kept on although its CRDs are missing; ALB set explicitly is still
    // turned off because another gate was defaulted (upstream's behaviour).
    let mut g = parse(&["--feature-gates=ALBGatewayAPI=true,NLBGatewayAPI=true"])
        .unwrap()
        .gateway;
    let off = g.apply_crd_detection(&BTreeMap::new());
    assert!(!g.alb.enabled);
    assert!(g.nlb.enabled);
    assert!(!g.listener_set.enabled);
    assert_eq!(
        off[0].message,
        "Disabling ALBGatewayAPI: missing required CRDs"
    );
    assert_eq!(off.len(), 2);

    // All three set: no detection at all.
    let mut g =
        parse(&["--feature-gates=ALBGatewayAPI=true,NLBGatewayAPI=true,GatewayListenerSet=true"])
            .unwrap()
            .gateway;
    assert!(!g.crd_detection_needed());
    assert!(g.apply_crd_detection(&BTreeMap::new()).is_empty());
    assert!(g.alb.enabled && g.nlb.enabled);
}
