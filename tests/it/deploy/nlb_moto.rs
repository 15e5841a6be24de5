//! NLB stacks on moto through the real SDK clients: the main shapes (instance TCP, ip TCP, UDP,
//! TCP_UDP, TLS with certificates and ALPN, dualstack, EIP subnet mappings) deploy, redeploy
//! with no write, and delete to nothing; an NLB stack pre-created exactly as upstream leaves it
//! is adopted with no write at all.
//!
//! What moto does not model, covered on the fake instead (`nlb.rs`): NLB subnet addresses
//! (EIPs and private IPv4 are accepted but not described back), the PrivateLink SG setting
//! (accepted, never described: perpetual drift), capacity reservations (HTTP 500), and it
//! accepts TCP health checks with a path.

use std::collections::BTreeMap;

use aws_load_balancer_controller::deploy::Deployer;
use aws_load_balancer_controller::model::StackKind;

use super::nlb::*;
use super::*;
use crate::support::inventory::inventory_of;
use crate::support::moto_cloud::{calls_by_op, cloud, raw_ec2, Cloud};
use crate::support::nlb_seed::seed_as_upstream;

fn deployer(c: &Cloud) -> Deployer {
    Deployer::new(c.elb.clone(), c.ec2.clone(), CLUSTER, c.vpc.clone()).with_delete_retry(
        std::time::Duration::from_millis(100),
        std::time::Duration::from_secs(5),
    )
}

/// Write operations whose count grew since `before`.
fn writes_since(c: &Cloud, before: &BTreeMap<String, f64>) -> Vec<String> {
    calls_by_op(&c.registry)
        .into_iter()
        .filter(|(op, _)| !op.starts_with("Describe"))
        .filter_map(|(op, v)| {
            let d = v - before.get(&op).copied().unwrap_or(0.0);
            (d > 0.0).then(|| format!("{op}={d}"))
        })
        .collect()
}

fn shape(name: &str, annotations: &[(&str, &str)], ports: &str, extra_spec: &str) -> String {
    let mut y = format!(
        "metadata:\n  name: {name}\n  namespace: moto\n  uid: 5e7a1c2d-0000-4000-8000-{:012}\n  annotations:\n    service.beta.kubernetes.io/aws-load-balancer-scheme: internet-facing\n",
        name.bytes().map(u64::from).sum::<u64>()
    );
    for (k, v) in annotations {
        y.push_str(&format!("    service.beta.kubernetes.io/{k}: \"{v}\"\n"));
    }
    y.push_str(&format!(
        "spec:\n  type: LoadBalancer\n{extra_spec}  ports:\n{ports}"
    ));
    y
}

const IP: (&str, &str) = ("aws-load-balancer-type", "nlb-ip");
const INSTANCE: [(&str, &str); 2] = [
    ("aws-load-balancer-type", "external"),
    ("aws-load-balancer-nlb-target-type", "instance"),
];

async fn allocate_eips(c: &Cloud, n: usize) -> Vec<String> {
    let raw = raw_ec2(&c.moto.endpoint);
    let mut out = Vec::new();
    for _ in 0..n {
        let a = raw
            .allocate_address()
            .domain("vpc".into())
            .send()
            .await
            .unwrap();
        out.push(a.allocation_id().unwrap().to_string());
    }
    out
}

#[tokio::test]
async fn moto_nlb_shapes_deploy_redeploy_without_writes_and_delete_to_nothing() {
    let c = cloud().await;
    crate::takeover::prepare_network(&c).await;
    let eips = allocate_eips(&c, c.subnets.len()).await.join(",");
    let tcp = "  - {name: web, port: 80, targetPort: 8080, nodePort: 30080, protocol: TCP}\n";
    let cert = crate::takeover::seed::certificate(&c, "tls.example.com").await;
    let cert = cert.as_str();
    let shapes = [
        shape("inst", &INSTANCE, tcp, ""),
        shape("ip", &[IP], tcp, ""),
        shape("udp", &[IP], "  - {name: dns, port: 53, targetPort: 5353, protocol: UDP}\n", ""),
        shape(
            "tcpudp",
            &[IP, ("aws-load-balancer-enable-tcp-udp-listener", "true")],
            "  - {name: d1, port: 53, targetPort: 53, protocol: TCP}\n  - {name: d2, port: 53, targetPort: 53, protocol: UDP}\n",
            "",
        ),
        shape(
            "tls",
            &[
                IP,
                ("aws-load-balancer-ssl-cert", cert),
                ("aws-load-balancer-ssl-ports", "443"),
                ("aws-load-balancer-alpn-policy", "HTTP2Preferred"),
                ("aws-load-balancer-ssl-negotiation-policy", "ELBSecurityPolicy-TLS13-1-2-2021-06"),
                ("aws-load-balancer-listener-attributes.TCP-80", "tcp.idle_timeout.seconds=400"),
                ("aws-load-balancer-target-group-attributes", "deregistration_delay.timeout_seconds=30"),
            ],
            "  - {name: web, port: 80, targetPort: 8080, protocol: TCP}\n  - {name: tls, port: 443, targetPort: 8443, protocol: TCP}\n",
            "",
        ),
        shape(
            "dual",
            &[IP, ("aws-load-balancer-ip-address-type", "dualstack")],
            tcp,
            "  ipFamilies: [IPv6]\n",
        ),
        shape("eips", &[IP, ("aws-load-balancer-eip-allocations", &eips)], tcp, ""),
    ];
    for yaml in &shapes {
        let s = svc(yaml);
        let name = s.metadata.name.clone().unwrap();
        let stack = service_stack_in(c.ec2.as_ref(), &c.vpc, &s, &nlb_config(&c.vpc)).await;
        deployer(&c)
            .deploy(&stack)
            .await
            .unwrap_or_else(|e| panic!("{name}: {e}"));
        let inv = inventory_of(
            c.elb.as_ref(),
            c.ec2.as_ref(),
            SERVICE_STACK_TAG,
            &stack.stack_id,
        )
        .await;
        assert_nlb_shape(&name, &inv, &stack);
        let before = calls_by_op(&c.registry);
        deployer(&c)
            .deploy(&stack)
            .await
            .unwrap_or_else(|e| panic!("{name} (second): {e}"));
        assert_eq!(
            writes_since(&c, &before),
            Vec::<String>::new(),
            "{name}: second deploy on moto"
        );
    }
    for yaml in &shapes {
        let id = format!("moto/{}", svc(yaml).metadata.name.unwrap());
        deployer(&c)
            .delete_stack_of(StackKind::Service, &id)
            .await
            .unwrap();
        let inv = inventory_of(c.elb.as_ref(), c.ec2.as_ref(), SERVICE_STACK_TAG, &id).await;
        assert!(inv.is_empty(), "{id}: {inv:#?}");
    }
}

#[tokio::test]
async fn moto_nlb_left_by_upstream_is_adopted_without_any_write() {
    let c = cloud().await;
    let ports = "  - {name: web, port: 80, targetPort: 8080, nodePort: 30080, protocol: TCP}\n  - {name: dns, port: 53, targetPort: 5353, nodePort: 30053, protocol: UDP}\n";
    let yaml = shape("adopt", &INSTANCE, ports, "");
    let stack = service_stack_in(c.ec2.as_ref(), &c.vpc, &svc(&yaml), &nlb_config(&c.vpc)).await;
    seed_as_upstream(&c, &stack).await;
    let before = calls_by_op(&c.registry);
    deployer(&c).deploy(&stack).await.unwrap();
    assert_eq!(
        writes_since(&c, &before),
        Vec::<String>::new(),
        "adoption needs no write at all"
    );
    let inv = inventory_of(
        c.elb.as_ref(),
        c.ec2.as_ref(),
        SERVICE_STACK_TAG,
        "moto/adopt",
    )
    .await;
    assert_nlb_shape("adopted", &inv, &stack);
}
