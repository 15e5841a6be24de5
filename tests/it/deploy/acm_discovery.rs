//! ACM certificate discovery end to end on moto through the real SDK clients: certificates
//! imported (issued) and requested (still pending validation) in moto's ACM, an Ingress with an
//! HTTPS listener and no `certificate-arn` → the listener serves every issued certificate
//! matching its hosts (wildcard and exact), never the pending one; a redeploy writes nothing; a
//! new matching certificate is added once the certificate list cache expires; a host without a
//! certificate stops the group before any AWS write with upstream's message naming the host.

use std::sync::Arc;
use std::time::Duration;

use aws_load_balancer_controller::aws::{build_acm, parse_api_endpoints, AwsConfig, ElbV2};
use aws_load_balancer_controller::deploy::cert_discovery::CacheTtls;
use aws_load_balancer_controller::deploy::{CertDiscovery, Deployer};

use super::functional::inventory;
use super::*;
use crate::support::moto::Moto;
use crate::support::moto_cloud::{calls_by_op, cloud, new_writes, Cloud};

pub(crate) fn raw_acm(moto: &Moto) -> aws_sdk_acm::Client {
    use aws_sdk_acm::config::{BehaviorVersion, Credentials, Region};
    aws_sdk_acm::Client::from_conf(
        aws_sdk_acm::config::Builder::new()
            .behavior_version(BehaviorVersion::latest())
            .region(Region::new("us-west-2"))
            .endpoint_url(&moto.endpoint)
            .credentials_provider(Credentials::new("testing", "testing", None, None, "test"))
            .build(),
    )
}

/// Imports a fresh ECDSA certificate valid for `names` (plus the webhook-style names the
/// generator always adds, none under example.*); returns its ARN.
pub(crate) async fn import(acm: &aws_sdk_acm::Client, names: &[&str]) -> String {
    let mut spec = webhook_certs::ServingSpec::new("cert", "acm-test");
    spec.extra_sans = names.iter().map(|n| n.to_string()).collect();
    let b = webhook_certs::generate(&spec, 30).unwrap();
    let out = acm
        .import_certificate()
        .certificate(aws_sdk_acm::primitives::Blob::new(b.cert_pem.into_bytes()))
        .private_key(aws_sdk_acm::primitives::Blob::new(b.key_pem.into_bytes()))
        .send()
        .await
        .unwrap();
    out.certificate_arn().unwrap().to_string()
}

/// Requests an Amazon-issued certificate: moto keeps it PENDING_VALIDATION for a minute.
async fn request(acm: &aws_sdk_acm::Client, name: &str) -> String {
    let out = acm
        .request_certificate()
        .domain_name(name)
        .send()
        .await
        .unwrap();
    out.certificate_arn().unwrap().to_string()
}

/// The controller's ACM client built as the binary builds it (`acm=` endpoint), with `ttls`.
async fn discovery(c: &Cloud, ttls: CacheTtls) -> Arc<CertDiscovery> {
    let cfg = AwsConfig {
        region: Some("us-west-2".into()),
        api_endpoints: parse_api_endpoints(&format!("acm={}", c.moto.endpoint)).unwrap(),
        ..Default::default()
    };
    // No metrics: the registry's writes check counts everything but Describe* as a write.
    let acm = build_acm(&cfg, "us-west-2", None).await;
    Arc::new(CertDiscovery::new(acm).with_cache_ttls(ttls))
}

fn deployer(c: &Cloud, d: Arc<CertDiscovery>) -> Deployer {
    Deployer::new(c.elb.clone(), c.ec2.clone(), CLUSTER, c.vpc.clone())
        .with_delete_retry(Duration::from_millis(100), Duration::from_secs(5))
        .with_cert_discovery(d)
}

/// One Service and an HTTPS-only Ingress without `certificate-arn` for `hosts`.
fn https_ingress(group: &str, hosts: &[&str]) -> String {
    let rules: String = hosts
        .iter()
        .map(|h| {
            format!(
                "  - host: {h}\n    http:\n      paths:\n      - {{path: /, pathType: Prefix, backend: {{service: {{name: web, port: {{number: 80}}}}}}}}\n"
            )
        })
        .collect();
    format!(
        r#"apiVersion: v1
kind: Service
metadata: {{name: web, namespace: acm, uid: 13131313-0000-0000-0000-000000000001}}
spec: {{type: NodePort, ports: [{{port: 80, targetPort: 8080, nodePort: 30071}}]}}
---
apiVersion: networking.k8s.io/v1
kind: Ingress
metadata:
  name: web
  namespace: acm
  annotations:
    kubernetes.io/ingress.class: alb
    alb.ingress.kubernetes.io/group.name: {group}
    alb.ingress.kubernetes.io/scheme: internet-facing
    alb.ingress.kubernetes.io/listen-ports: '[{{"HTTPS": 443}}]'
spec:
  rules:
{rules}"#
    )
}

/// (default certificate, every certificate DescribeListenerCertificates lists) of the listener.
async fn listener_certs(elb: &dyn ElbV2, arn: &str) -> (String, Vec<String>) {
    let ls = elb.describe_listeners(arn).await.unwrap();
    assert_eq!(ls.len(), 1);
    let default = ls[0].certificates.first().cloned().unwrap_or_default();
    let mut all: Vec<String> = elb
        .describe_listener_certificates(&ls[0].arn)
        .await
        .unwrap()
        .into_iter()
        .map(|c| c.arn)
        .collect();
    all.sort();
    all.dedup();
    (default, all)
}

#[tokio::test]
async fn moto_discovered_certificates_serve_the_https_listener() {
    let c = cloud().await;
    let acm = raw_acm(&c.moto);
    let wildcard = import(&acm, &["*.example.com"]).await;
    let exact = import(&acm, &["api.example.org"]).await;
    let _unrelated = import(&acm, &["www.example.net"]).await;
    let pending = request(&acm, "api.example.org").await;

    let stack = build_one(
        &https_ingress("acm", &["shop.example.com", "api.example.org"]),
        &c.vpc,
    );
    assert!(stack.listeners[0].certificates.is_empty());
    let ttl = Duration::from_millis(1500);
    let d = deployer(
        &c,
        discovery(
            &c,
            CacheTtls {
                certificate_list: ttl,
                ..CacheTtls::default()
            },
        )
        .await,
    );
    d.deploy(&stack).await.unwrap();
    let inv = inventory(c.elb.as_ref(), c.ec2.as_ref(), "acm").await;
    let lb = inv.lbs[0].0.arn.clone();
    let mut want = vec![wildcard.clone(), exact.clone()];
    want.sort();
    let (default, all) = listener_certs(c.elb.as_ref(), &lb).await;
    assert_eq!(default, want[0], "the smallest matching ARN is the default");
    assert_eq!(
        all, want,
        "wildcard and exact certificates, never {pending}"
    );

    // Converged: a redeploy writes nothing (within the cache and after it expires).
    let before = calls_by_op(&c.registry);
    d.deploy(&stack).await.unwrap();
    assert_eq!(new_writes(&c.registry, &before), Vec::<String>::new());

    // A new matching certificate is used once the certificate list is read again.
    let newer = import(&acm, &["shop.example.com"]).await;
    let before = calls_by_op(&c.registry);
    d.deploy(&stack).await.unwrap();
    assert_eq!(
        new_writes(&c.registry, &before),
        Vec::<String>::new(),
        "cached"
    );
    tokio::time::sleep(ttl + Duration::from_millis(200)).await;
    d.deploy(&stack).await.unwrap();
    let mut want3 = vec![wildcard, exact, newer];
    want3.sort();
    let (default, all) = listener_certs(c.elb.as_ref(), &lb).await;
    assert_eq!(all, want3);
    assert_eq!(default, want3[0]);
    let before = calls_by_op(&c.registry);
    d.deploy(&stack).await.unwrap();
    assert_eq!(new_writes(&c.registry, &before), Vec::<String>::new());
}

#[tokio::test]
async fn moto_a_host_without_certificate_fails_the_group_before_any_write() {
    let c = cloud().await;
    let acm = raw_acm(&c.moto);
    import(&acm, &["*.example.com"]).await;
    // Pending validation: not a certificate discovery may use.
    request(&acm, "pending.example.org").await;
    let stack = build_one(
        &https_ingress("nocert", &["shop.example.com", "pending.example.org"]),
        &c.vpc,
    );
    let d = deployer(&c, discovery(&c, CacheTtls::default()).await);
    let before = calls_by_op(&c.registry);
    let err = d.deploy(&stack).await.unwrap_err();
    assert_eq!(
        err.to_string(),
        "ingress: acm/web: no certificate found for host: pending.example.org"
    );
    assert_eq!(new_writes(&c.registry, &before), Vec::<String>::new());
    let inv = inventory(c.elb.as_ref(), c.ec2.as_ref(), "nocert").await;
    assert!(inv.is_empty(), "nothing of the group exists");
}

/// The same on the fake (every call logged): discovery reads ACM only, a host without an issued
/// certificate leaves ELBv2 and EC2 untouched (not even a describe), and once a certificate
/// exists the listener serves it and a redeploy writes nothing.
#[tokio::test]
async fn fake_discovery_fails_before_any_call_then_converges() {
    use aws_load_balancer_controller::aws::fake::{FakeAcm, FakeCertificate};
    let fake = fake();
    let vpc = network(&fake);
    let acm = Arc::new(FakeAcm::new());
    acm.add(FakeCertificate::imported("shop.example.com", &[]).status("PENDING_VALIDATION"));
    let d = super::functional::deployer(&fake, &vpc).with_cert_discovery(Arc::new(
        CertDiscovery::new(acm.clone()).with_cache_ttls(CacheTtls {
            certificate_list: Duration::ZERO,
            ..CacheTtls::default()
        }),
    ));
    let stack = build_one(&https_ingress("fakeacm", &["shop.example.com"]), &vpc);
    let err = d.deploy(&stack).await.unwrap_err();
    assert_eq!(
        err.to_string(),
        "ingress: acm/web: no certificate found for host: shop.example.com"
    );
    assert_eq!(fake.calls(), vec![], "no ELBv2/EC2 call at all");
    assert_eq!(acm.calls(), vec!["ListCertificates".to_string()]);

    let arn =
        acm.add(FakeCertificate::imported("*.example.com", &[]).key_algorithm("EC_secp384r1"));
    d.deploy(&stack).await.unwrap();
    let inv = inventory(fake.as_ref(), fake.as_ref(), "fakeacm").await;
    assert_eq!(inv.listeners[0].certificates, vec![arn]);
    fake.clear_calls();
    d.deploy(&stack).await.unwrap();
    assert_eq!(write_ops(&fake), Vec::<String>::new());
}

/// The real client against moto: ListTagsForCertificate (gate `EnableCertificateManagement`)
/// leaves out certificates carrying the controller's stack tag keys, and every ACM request is
/// counted under upstream's service ID `ACM`.
#[tokio::test]
async fn moto_managed_certificates_are_not_discovered_and_calls_are_metered() {
    use aws_load_balancer_controller::aws::AwsMetrics;
    use prometheus_client::registry::Registry;
    // Keys from the environment, as `moto_cloud::clients` sets them for every moto test.
    std::env::set_var("AWS_ACCESS_KEY_ID", "testing");
    std::env::set_var("AWS_SECRET_ACCESS_KEY", "testing");
    let moto = Moto::start();
    let acm = raw_acm(&moto);
    let user = import(&acm, &["a.example.com"]).await;
    let managed = import(&acm, &["a.example.com"]).await;
    let tag = |k: &str, v: &str| {
        aws_sdk_acm::types::Tag::builder()
            .key(k)
            .value(v)
            .build()
            .unwrap()
    };
    acm.add_tags_to_certificate()
        .certificate_arn(&managed)
        .tags(tag("elbv2.k8s.aws/cluster", "prod"))
        .tags(tag("ingress.k8s.aws/stack", "ns/other"))
        .send()
        .await
        .unwrap();
    let mut registry = Registry::default();
    let metrics = AwsMetrics::register(&mut registry);
    let cfg = AwsConfig {
        region: Some("us-west-2".into()),
        api_endpoints: parse_api_endpoints(&format!("acm={}", moto.endpoint)).unwrap(),
        ..Default::default()
    };
    let client = build_acm(&cfg, "us-west-2", Some(metrics)).await;
    let hosts = vec!["a.example.com".to_string()];
    let gated = CertDiscovery::new(client.clone()).with_managed_excluded(true);
    assert_eq!(gated.discover(&hosts).await.unwrap(), vec![user.clone()]);
    let mut both = vec![user, managed];
    both.sort();
    assert_eq!(
        CertDiscovery::new(client).discover(&hosts).await.unwrap(),
        both
    );

    let mut text = String::new();
    prometheus_client::encoding::text::encode(&mut text, &registry).unwrap();
    for op in [
        "ListCertificates",
        "ListTagsForCertificate",
        "DescribeCertificate",
    ] {
        assert!(
            text.lines().any(|l| l.starts_with("aws_api_calls_total{")
                && l.contains("service=\"ACM\"")
                && l.contains(&format!("operation=\"{op}\""))),
            "{op} not counted under ACM:\n{text}"
        );
    }
}
