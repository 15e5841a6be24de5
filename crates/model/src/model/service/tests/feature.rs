//! Behaviour tests per setting that upstream's stack table does not cover: TCP_UDP merging,
//! QUIC, TLS details, listener attributes, proxy protocol, target-group attributes, instance
//! targets.

use k8s_openapi::apimachinery::pkg::util::intstr::IntOrString;

use crate::crd::target_group_binding::NetworkingProtocol;
use crate::model::naming;
use crate::model::service::test_support::*;
use crate::model::types::*;

#[test]
fn names_match_upstream_name_table() {
    // Upstream's buildLoadBalancerName table: no cluster, no UID, internet-facing.
    assert_eq!(
        naming::service_load_balancer_name(
            "",
            "foo",
            "bar",
            "",
            LoadBalancerScheme::InternetFacing
        ),
        "k8s-foo-bar-e053368fb2"
    );
    let s = svc(&[("aws-load-balancer-name", "baz")], WEB_PORTS);
    assert_eq!(build(&s, &cfg()).load_balancer.unwrap().name, "baz");
}

#[test]
fn tcp_and_udp_on_one_port_merge_into_tcp_udp() {
    use NetworkingProtocol::{Tcp, Udp};
    let s = svc(
        &[("aws-load-balancer-enable-tcp-udp-listener", "true")],
        DNS_PORTS,
    );
    let stack = build(&s, &cfg());
    assert_eq!(stack.listeners.len(), 1);
    assert_eq!(stack.listeners[0].protocol, Protocol::TcpUdp);
    assert_eq!(stack.target_groups[0].protocol, Protocol::TcpUdp);
    let p = Some(IntOrString::Int(5353));
    assert_eq!(
        rules(&stack.target_group_bindings[0]),
        vec![(Some(Udp), p.clone()), (Some(Tcp), p)]
    );
    // The managed SG opens both entries of the pair.
    let sg = stack.managed_security_group.unwrap();
    let protos: Vec<&str> = sg.ingress.iter().map(|r| r.ip_protocol.as_str()).collect();
    assert_eq!(protos, vec!["tcp", "udp"]);
    // The gate does the same as the annotation; the annotation wins either way.
    let mut gated = cfg();
    gated
        .feature_gates
        .insert("EnableTCPUDPListener".into(), true);
    let plain = svc(&[], DNS_PORTS);
    assert_eq!(
        build(&plain, &gated).listeners[0].protocol,
        Protocol::TcpUdp
    );
    let off = svc(
        &[("aws-load-balancer-enable-tcp-udp-listener", "false")],
        DNS_PORTS,
    );
    assert_eq!(build(&off, &gated).listeners[0].protocol, Protocol::Tcp);
}

#[test]
fn without_merging_the_second_entry_is_dropped_with_a_warning() {
    let stack = build(&svc(&[], DNS_PORTS), &cfg());
    assert_eq!(stack.listeners.len(), 1);
    assert_eq!(stack.listeners[0].protocol, Protocol::Tcp);
    assert!(
        stack.warnings[0]
            .message
            .contains("port 53 is listed 2 times"),
        "{:?}",
        stack.warnings
    );
}

#[test]
fn merge_errors_have_upstream_texts() {
    let on = [("aws-load-balancer-enable-tcp-udp-listener", "true")];
    let two_tcp = "  ports:\n  - {name: a, port: 53, protocol: TCP}\n  - {name: b, port: 53, protocol: TCP}\n";
    assert_eq!(
        err(&svc(&on, two_tcp), &cfg()),
        "protocols can't match for merging: TCP"
    );
    let sctp = "  ports:\n  - {name: a, port: 53, protocol: TCP}\n  - {name: b, port: 53, protocol: SCTP}\n";
    assert_eq!(
        err(&svc(&on, sctp), &cfg()),
        "unsupported protocol for merging: SCTP"
    );
    let three = format!("{DNS_PORTS}  - {{name: c, port: 53, protocol: TCP}}\n");
    assert!(err(&svc(&on, &three), &cfg()).starts_with("can only merge two ports, not 3"));
}

#[test]
fn quic_ports_upgrade_udp_and_tcp_udp() {
    let udp = "  ports:\n  - {name: h3, port: 443, targetPort: 8443, protocol: UDP}\n";
    let stack = build(
        &svc(&[("aws-load-balancer-quic-enabled-ports", "h3")], udp),
        &cfg(),
    );
    assert_eq!(stack.listeners[0].protocol, Protocol::Quic);
    assert_eq!(stack.target_groups[0].protocol, Protocol::Quic);
    let merged = svc(
        &[
            ("aws-load-balancer-enable-tcp-udp-listener", "true"),
            ("aws-load-balancer-quic-enabled-ports", "53"),
        ],
        DNS_PORTS,
    );
    assert_eq!(
        build(&merged, &cfg()).listeners[0].protocol,
        Protocol::TcpQuic
    );
}

#[test]
fn tls_listeners_get_certificates_policy_and_alpn() {
    let s = svc(
        &[
            ("aws-load-balancer-ssl-cert", "arn:a,arn:b"),
            ("aws-load-balancer-ssl-ports", "https"),
            (
                "aws-load-balancer-ssl-negotiation-policy",
                "ELBSecurityPolicy-TLS13-1-2-2021-06",
            ),
            ("aws-load-balancer-alpn-policy", "HTTP2Preferred"),
            ("aws-load-balancer-backend-protocol", "ssl"),
        ],
        WEB_PORTS,
    );
    let stack = build(&s, &cfg());
    let (http, https) = (&stack.listeners[0], &stack.listeners[1]);
    assert_eq!(
        (http.protocol, https.protocol),
        (Protocol::Tcp, Protocol::Tls)
    );
    assert!(
        http.certificates.is_empty() && http.ssl_policy.is_none() && http.alpn_policy.is_none()
    );
    assert_eq!(https.certificates, vec!["arn:a", "arn:b"]);
    assert_eq!(
        https.ssl_policy.as_deref(),
        Some("ELBSecurityPolicy-TLS13-1-2-2021-06")
    );
    assert_eq!(https.alpn_policy.as_deref(), Some("HTTP2Preferred"));
    // backend-protocol ssl makes the target group TLS too; without it the TG stays TCP.
    assert_eq!(tg(&stack, 443).protocol, Protocol::Tls);
    let plain = svc(&[("aws-load-balancer-ssl-cert", "arn:a")], WEB_PORTS);
    let stack = build(&plain, &cfg());
    assert_eq!(
        stack.listeners[0].protocol,
        Protocol::Tls,
        "no ssl-ports: every port"
    );
    assert_eq!(
        stack.listeners[0].ssl_policy.as_deref(),
        Some("ELBSecurityPolicy-2016-08")
    );
    assert_eq!(tg(&stack, 80).protocol, Protocol::Tcp);
}

#[test]
fn listener_attributes_are_keyed_by_final_protocol_and_never_on_tls() {
    let s = svc(
        &[
            (
                "aws-load-balancer-listener-attributes.TCP-80",
                "tcp.idle_timeout.seconds=400",
            ),
            (
                "aws-load-balancer-listener-attributes.TLS-443",
                "tcp.idle_timeout.seconds=500",
            ),
            ("aws-load-balancer-ssl-cert", "arn:a"),
            ("aws-load-balancer-ssl-ports", "443"),
        ],
        WEB_PORTS,
    );
    let stack = build(&s, &cfg());
    assert_eq!(
        stack.listeners[0].attributes["tcp.idle_timeout.seconds"],
        "400"
    );
    assert!(stack.listeners[1].attributes.is_empty());
    assert!(stack
        .warnings
        .iter()
        .any(|w| w.message.contains("not applied to TLS")));
}

#[test]
fn proxy_protocol_and_port_specific_target_group_attributes() {
    let per_tg = svc(
        &[("aws-load-balancer-proxy-protocol-per-target-group", "443")],
        WEB_PORTS,
    );
    let stack = build(&per_tg, &cfg());
    assert_eq!(
        tg_attr(&stack, 80, "proxy_protocol_v2.enabled").as_deref(),
        Some("false")
    );
    assert_eq!(
        tg_attr(&stack, 443, "proxy_protocol_v2.enabled").as_deref(),
        Some("true")
    );
    // `*` beats per-port settings and the attributes annotations.
    let all = svc(
        &[
            ("aws-load-balancer-proxy-protocol", "*"),
            (
                "aws-load-balancer-target-group-attributes.80",
                "proxy_protocol_v2.enabled=false",
            ),
        ],
        WEB_PORTS,
    );
    assert_eq!(
        tg_attr(&build(&all, &cfg()), 80, "proxy_protocol_v2.enabled").as_deref(),
        Some("true")
    );
    // Upstream's table: an empty port-specific value keeps the Service-wide one.
    let s = svc(
        &[
            (
                "aws-load-balancer-target-group-attributes",
                "deregistration_delay.timeout_seconds=80",
            ),
            (
                "aws-load-balancer-target-group-attributes.80",
                "deregistration_delay.timeout_seconds=",
            ),
            (
                "aws-load-balancer-target-group-attributes.443",
                "deregistration_delay.timeout_seconds=5",
            ),
        ],
        WEB_PORTS,
    );
    let stack = build(&s, &cfg());
    assert_eq!(
        tg_attr(&stack, 80, "deregistration_delay.timeout_seconds").as_deref(),
        Some("80")
    );
    assert_eq!(
        tg_attr(&stack, 443, "deregistration_delay.timeout_seconds").as_deref(),
        Some("5")
    );
}

#[test]
fn instance_targets_use_node_ports_node_labels_and_local_health_checks() {
    let s = svc(
        &[
            ("aws-load-balancer-nlb-target-type", "instance"),
            ("aws-load-balancer-target-node-labels", "pool=edge"),
            ("aws-load-balancer-multi-cluster-target-group", "true"),
        ],
        "  externalTrafficPolicy: Local\n  healthCheckNodePort: 31999\n  ports:\n  - {name: http, port: 80, targetPort: 8080, nodePort: 30080}\n",
    );
    // `nlb-ip` forces ip targets whatever the target-type annotation says.
    let mut s2 = s.clone();
    s2.metadata.annotations.as_mut().unwrap().insert(
        "service.beta.kubernetes.io/aws-load-balancer-type".into(),
        "external".into(),
    );
    assert_eq!(
        build(&s, &cfg()).target_groups[0].target_type,
        TargetType::Ip
    );
    let stack = build(&s2, &cfg());
    let tg = &stack.target_groups[0];
    assert_eq!((tg.target_type, tg.port), (TargetType::Instance, 30080));
    let hc = &tg.health_check;
    assert_eq!(
        (hc.protocol, hc.port.as_str(), hc.path.as_str()),
        (Protocol::Http, "31999", "/healthz")
    );
    assert_eq!((hc.timeout_seconds, hc.healthy_threshold_count), (6, 2));
    let b = &stack.target_group_bindings[0].spec;
    let labels = b.node_selector.as_ref().unwrap().match_labels.as_ref();
    assert_eq!(labels.unwrap()["pool"], "edge");
    assert!(b.multi_cluster_target_group);
    // Traffic on the node port, health checks on the health-check node port.
    assert_eq!(
        rules(&stack.target_group_bindings[0]),
        vec![
            (Some(NetworkingProtocol::Tcp), Some(IntOrString::Int(30080))),
            (Some(NetworkingProtocol::Tcp), Some(IntOrString::Int(31999))),
        ]
    );
}
