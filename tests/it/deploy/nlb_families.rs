//! NLB Services covering the annotation families the golden cases miss (subnet mappings,
//! source NAT, TLS/ALPN, TCP_UDP, attributes of all kinds, capacity, PrivateLink, legacy
//! SG-less NLBs) deploy on FakeAws as asked, then redeploy with no write call.

use aws_load_balancer_controller::aws::*;

use super::functional::deployer;
use super::nlb::*;
use super::*;

/// Dualstack, internet-facing, ip targets (IPv6 target groups): EIPs, IPv6 addresses and
/// source-NAT prefixes per subnet, TLS with two certificates, an SSL policy and ALPN, TCP_UDP,
/// listener / load-balancer / target-group attributes, proxy protocol, HTTP health checks,
/// capacity reservation, PrivateLink enforcement, ICMP path MTU and extra tags.
pub const EDGE: &str = r#"
metadata:
  name: edge
  namespace: net
  uid: 0d6f5a1e-0000-4000-8000-000000000001
  annotations:
    service.beta.kubernetes.io/aws-load-balancer-type: external
    service.beta.kubernetes.io/aws-load-balancer-nlb-target-type: ip
    service.beta.kubernetes.io/aws-load-balancer-scheme: internet-facing
    service.beta.kubernetes.io/aws-load-balancer-ip-address-type: dualstack
    service.beta.kubernetes.io/aws-load-balancer-eip-allocations: eipalloc-0a,eipalloc-0b,eipalloc-0c
    service.beta.kubernetes.io/aws-load-balancer-ipv6-addresses: 2600:1f13:0::10,2600:1f13:1::10,2600:1f13:2::10
    service.beta.kubernetes.io/aws-load-balancer-enable-prefix-for-ipv6-source-nat: "on"
    service.beta.kubernetes.io/aws-load-balancer-source-nat-ipv6-prefixes: auto_assigned,auto_assigned,auto_assigned
    service.beta.kubernetes.io/aws-load-balancer-ssl-cert: arn:aws:acm:us-west-2:111122223333:certificate/a,arn:aws:acm:us-west-2:111122223333:certificate/b
    service.beta.kubernetes.io/aws-load-balancer-ssl-ports: tls
    service.beta.kubernetes.io/aws-load-balancer-ssl-negotiation-policy: ELBSecurityPolicy-TLS13-1-2-2021-06
    service.beta.kubernetes.io/aws-load-balancer-alpn-policy: HTTP2Preferred
    service.beta.kubernetes.io/aws-load-balancer-backend-protocol: ssl
    service.beta.kubernetes.io/aws-load-balancer-enable-tcp-udp-listener: "true"
    service.beta.kubernetes.io/aws-load-balancer-attributes: load_balancing.cross_zone.enabled=true,dns_record.client_routing_policy=availability_zone_affinity
    service.beta.kubernetes.io/aws-load-balancer-target-group-attributes: deregistration_delay.timeout_seconds=30,stickiness.enabled=true,stickiness.type=source_ip
    service.beta.kubernetes.io/aws-load-balancer-proxy-protocol-per-target-group: "80"
    service.beta.kubernetes.io/aws-load-balancer-listener-attributes.TCP-80: tcp.idle_timeout.seconds=600
    service.beta.kubernetes.io/aws-load-balancer-minimum-load-balancer-capacity: CapacityUnits=100
    service.beta.kubernetes.io/aws-load-balancer-inbound-sg-rules-on-private-link-traffic: "off"
    service.beta.kubernetes.io/aws-load-balancer-healthcheck-protocol: HTTP
    service.beta.kubernetes.io/aws-load-balancer-healthcheck-path: /ready
    service.beta.kubernetes.io/aws-load-balancer-healthcheck-success-codes: 200-299
    service.beta.kubernetes.io/aws-load-balancer-enable-icmp-for-path-mtu-discovery: "on"
    service.beta.kubernetes.io/aws-load-balancer-additional-resource-tags: team=edge
spec:
  type: LoadBalancer
  ipFamilies: [IPv6]
  ports:
  - {name: http, port: 80, targetPort: 8080, protocol: TCP}
  - {name: tls, port: 443, targetPort: 8443, protocol: TCP}
  - {name: dns, port: 53, targetPort: 5353, protocol: UDP}
  - {name: dns-tcp, port: 53, targetPort: 5353, protocol: TCP}
"#;

/// Internal, instance targets with `externalTrafficPolicy: Local`: fixed private IPv4
/// addresses per subnet, source ranges, health check on the health-check node port.
pub const INNER: &str = r#"
metadata:
  name: inner
  namespace: net
  uid: 0d6f5a1e-0000-4000-8000-000000000002
  annotations:
    service.beta.kubernetes.io/aws-load-balancer-type: external
    service.beta.kubernetes.io/aws-load-balancer-nlb-target-type: instance
    service.beta.kubernetes.io/aws-load-balancer-scheme: internal
    service.beta.kubernetes.io/aws-load-balancer-private-ipv4-addresses: 10.0.1.10,10.0.2.10,10.0.3.10
    service.beta.kubernetes.io/aws-load-balancer-target-group-attributes: preserve_client_ip.enabled=true,deregistration_delay.connection_termination.enabled=true
spec:
  type: LoadBalancer
  externalTrafficPolicy: Local
  healthCheckNodePort: 32000
  loadBalancerSourceRanges: [10.0.0.0/8]
  ports:
  - {name: db, port: 5432, targetPort: 5432, nodePort: 30432, protocol: TCP}
"#;

/// QUIC on a UDP port and on a TCP_UDP pair (`quic-enabled-ports`).
pub const QUIC: &str = r#"
metadata:
  name: quic
  namespace: net
  uid: 0d6f5a1e-0000-4000-8000-000000000004
  annotations:
    service.beta.kubernetes.io/aws-load-balancer-type: nlb-ip
    service.beta.kubernetes.io/aws-load-balancer-scheme: internet-facing
    service.beta.kubernetes.io/aws-load-balancer-enable-tcp-udp-listener: "true"
    service.beta.kubernetes.io/aws-load-balancer-quic-enabled-ports: "443,8443"
spec:
  type: LoadBalancer
  ports:
  - {name: h3, port: 443, targetPort: 8443, protocol: UDP}
  - {name: both-tcp, port: 8443, targetPort: 9443, protocol: TCP}
  - {name: both-udp, port: 8443, targetPort: 9443, protocol: UDP}
"#;

/// An NLB without security groups (`disable-nlb-sg`), UDP, legacy node rules from CIDRs.
pub const LEGACY: &str = r#"
metadata:
  name: legacy
  namespace: net
  uid: 0d6f5a1e-0000-4000-8000-000000000003
  annotations:
    service.beta.kubernetes.io/aws-load-balancer-type: external
    service.beta.kubernetes.io/aws-load-balancer-nlb-target-type: instance
    service.beta.kubernetes.io/aws-load-balancer-scheme: internet-facing
    service.beta.kubernetes.io/aws-load-balancer-disable-nlb-sg: "true"
spec:
  type: LoadBalancer
  ports:
  - {name: syslog, port: 514, targetPort: 514, nodePort: 30514, protocol: UDP}
"#;

#[tokio::test]
async fn nlb_annotation_families_deploy_as_asked_then_redeploy_without_writes() {
    for (name, yaml) in [
        ("edge", EDGE),
        ("inner", INNER),
        ("legacy", LEGACY),
        ("quic", QUIC),
    ] {
        let fake = fake();
        let vpc = nlb_network(&fake, &SUBNETS, true);
        let stack = service_stack(&fake, &vpc, &svc(yaml), &nlb_config(&vpc)).await;
        deploy_twice(name, &fake, &vpc, &stack).await;
        let inv = nlb_inventory(&fake, &stack.stack_id).await;
        let (lb, _) = &inv.lbs[0];
        let want = stack.load_balancer.as_ref().unwrap();
        let attrs = fake
            .describe_load_balancer_attributes(&lb.arn)
            .await
            .unwrap();
        for (k, v) in &want.attributes {
            assert_eq!(attrs.get(k), Some(v), "{name}: {k}");
        }
        for l in &inv.listeners {
            let la = fake.describe_listener_attributes(&l.arn).await.unwrap();
            let w = stack.listeners.iter().find(|w| w.port == i32::from(l.port));
            for (k, v) in &w.unwrap().attributes {
                assert_eq!(la.get(k), Some(v), "{name}: listener {} {k}", l.port);
            }
        }
        for (tg, _) in &inv.tgs {
            let ta = fake
                .describe_target_group_attributes(&tg.arn)
                .await
                .unwrap();
            let w = stack.target_groups.iter().find(|w| w.name == tg.name);
            for (k, v) in &w.unwrap().attributes {
                assert_eq!(ta.get(k), Some(v), "{name}: TG {} {k}", tg.name);
            }
        }
        let addresses: Vec<LbAddress> = lb
            .availability_zones
            .iter()
            .flat_map(|z| z.addresses.clone())
            .collect();
        match name {
            "edge" => {
                assert_eq!(lb.ip_address_type, "dualstack");
                assert_eq!(lb.enable_prefix_for_ipv6_source_nat.as_deref(), Some("on"));
                assert_eq!(
                    lb.enforce_private_link_inbound_rules.as_deref(),
                    Some("off")
                );
                let mut eips: Vec<String> = addresses
                    .iter()
                    .filter_map(|a| a.allocation_id.clone())
                    .collect();
                eips.sort();
                assert_eq!(eips, ["eipalloc-0a", "eipalloc-0b", "eipalloc-0c"]);
                assert_eq!(
                    addresses
                        .iter()
                        .filter(|a| a.ipv6_address.is_some())
                        .count(),
                    3
                );
                assert_eq!(
                    fake.describe_capacity_reservation(&lb.arn).await.unwrap(),
                    Some(100)
                );
                let tls = inv.listeners.iter().find(|l| l.port == 443).unwrap();
                assert_eq!(tls.alpn_policy, vec!["HTTP2Preferred".to_string()]);
                let certs = fake.describe_listener_certificates(&tls.arn).await.unwrap();
                assert_eq!(certs.len(), 2, "default + extra certificate: {certs:?}");
                assert!(inv.listeners.iter().any(|l| l.protocol == "TCP_UDP"));
                assert!(inv
                    .tgs
                    .iter()
                    .all(|(t, _)| t.ip_address_type.as_deref() == Some("ipv6")));
            }
            "inner" => {
                let mut ips: Vec<String> = addresses
                    .iter()
                    .filter_map(|a| a.private_ipv4_address.clone())
                    .collect();
                ips.sort();
                assert_eq!(ips, ["10.0.1.10", "10.0.2.10", "10.0.3.10"]);
                let hc = &inv.tgs[0].0.health_check;
                assert_eq!(hc.port.as_deref(), Some("32000"));
                assert_eq!(hc.path.as_deref(), Some("/healthz"));
            }
            "quic" => {
                let mut protocols: Vec<&str> =
                    inv.listeners.iter().map(|l| l.protocol.as_str()).collect();
                protocols.sort();
                assert_eq!(protocols, ["QUIC", "TCP_QUIC"]);
            }
            _ => assert!(lb.security_groups.is_empty()),
        }
    }
}

#[tokio::test]
async fn an_nlb_created_without_security_groups_never_gets_any() {
    let fake = fake();
    let vpc = nlb_network(&fake, &SUBNETS, false);
    let cfg = nlb_config(&vpc);
    let legacy = service_stack(&fake, &vpc, &svc(LEGACY), &cfg).await;
    deployer(&fake, &vpc).deploy(&legacy).await.unwrap();
    // A stack that asks for security groups on the SG-less NLB (a model built without
    // knowing it exists): AWS cannot add them, so the deployer leaves the NLB's alone.
    let yaml = LEGACY.replace(
        "aws-load-balancer-disable-nlb-sg: \"true\"",
        "aws-load-balancer-disable-nlb-sg: \"false\"",
    );
    let with_sgs = service_stack(&fake, &vpc, &svc(&yaml), &cfg).await;
    assert!(with_sgs.managed_security_group.is_some());
    fake.clear_calls();
    deployer(&fake, &vpc).deploy(&with_sgs).await.unwrap();
    assert!(
        !write_ops(&fake).contains(&"SetSecurityGroups".to_string()),
        "{:?}",
        write_ops(&fake)
    );
    let inv = nlb_inventory(&fake, "net/legacy").await;
    assert!(inv.lbs[0].0.security_groups.is_empty());
    assert_eq!(fake.count("CreateLoadBalancer"), 0, "kept, not replaced");
}

#[tokio::test]
async fn the_existing_nlb_the_model_needs_comes_from_the_deployer() {
    let fake = fake();
    let vpc = nlb_network(&fake, &SUBNETS, false);
    let d = deployer(&fake, &vpc);
    assert_eq!(d.existing_nlb("net/legacy").await.unwrap(), None);
    let cfg = nlb_config(&vpc);
    let legacy = service_stack(&fake, &vpc, &svc(LEGACY), &cfg).await;
    d.deploy(&legacy).await.unwrap();
    let existing = d.existing_nlb("net/legacy").await.unwrap().unwrap();
    assert_eq!(existing.scheme.as_str(), "internet-facing");
    assert!(existing.security_groups.is_empty());
    assert_eq!(existing.subnet_ids.len(), 3);
    // With it, a Service that no longer disables NLB SGs keeps the SG-less NLB as it is.
    let yaml = LEGACY.replace(
        "aws-load-balancer-disable-nlb-sg: \"true\"",
        "aws-load-balancer-disable-nlb-sg: \"false\"",
    );
    let env = aws_load_balancer_controller::model::service::ServiceEnv {
        subnets: Some(subnet_infos(fake.as_ref(), &vpc).await),
        existing_load_balancer: Some(existing),
        vpc_cidrs: None,
        ..Default::default()
    };
    let stack =
        aws_load_balancer_controller::model::service::build_service_stack(&svc(&yaml), &cfg, &env)
            .unwrap();
    assert!(stack.managed_security_group.is_none());
    fake.clear_calls();
    deployer(&fake, &vpc).deploy(&stack).await.unwrap();
    assert_eq!(write_ops(&fake), Vec::<String>::new());
}
