//! ACM certificate discovery through the Ingress controller (FakeAws + the in-memory ACM): an
//! HTTPS Ingress without `certificate-arn` whose host has no issued certificate gets upstream's
//! `FailedBuildModel` naming the host and nothing is written to AWS; once a certificate is
//! issued the group deploys with it, and a later reconcile writes nothing.

use std::sync::Arc;
use std::time::Duration;

use aws_load_balancer_controller::aws::fake::{FakeAcm, FakeCertificate};
use aws_load_balancer_controller::deploy::cert_discovery::CacheTtls;
use aws_load_balancer_controller::deploy::CertDiscovery;

use super::fake::{fake_aws, reconcile_again, settle};
use super::*;

fn https_app(ns: &str, name: &str, host: &str) -> Vec<Value> {
    app_with(ns, name, 30231, None, Some(host), |ingress| {
        ingress.annotation(
            "alb.ingress.kubernetes.io/listen-ports",
            r#"[{"HTTPS": 443}]"#,
        )
    })
}

#[tokio::test]
async fn a_host_without_certificate_is_a_failed_build_with_no_aws_write() {
    let (fake, vpc) = fake_aws();
    let acm = Arc::new(FakeAcm::new());
    acm.add(FakeCertificate::imported("shop.example.com", &[]).status("PENDING_VALIDATION"));
    let mut cfg = test_config(&vpc);
    cfg.cert_discovery = Some(Arc::new(CertDiscovery::new(acm.clone()).with_cache_ttls(
        CacheTtls {
            certificate_list: Duration::from_millis(200),
            ..CacheTtls::default()
        },
    )));
    let h = Harness::start_with(fake.clone(), fake.clone(), &vpc, cfg).await;
    h.apply_objects(https_app("tls", "web", "shop.example.com"))
        .await;
    let want = "Failed build model due to ingress: tls/web: no certificate found for host: shop.example.com";
    eventually("FailedBuildModel naming the host", WAIT, || async {
        h.events("tls", "web")
            .await
            .iter()
            .any(|(t, r, n)| t == "Warning" && r == "FailedBuildModel" && n == want)
    })
    .await;
    settle(&fake).await;
    assert_eq!(fake.write_calls(), vec![], "no AWS write for the group");
    assert!(h.hostname("tls", "web").await.is_none());

    // Issued now (an ECDSA wildcard): the retry finds it and the ALB serves it.
    let arn =
        acm.add(FakeCertificate::imported("*.example.com", &[]).key_algorithm("EC_prime256v1"));
    eventually("deployed with the certificate", WAIT, || async {
        h.hostname("tls", "web").await.is_some()
    })
    .await;
    let inv = inventory(fake.as_ref(), fake.as_ref(), "tls/web").await;
    assert_eq!(inv.listeners.len(), 1);
    assert_eq!(inv.listeners[0].certificates, vec![arn]);
    assert_eq!(
        reconcile_again(&h, &fake, "tls", "web").await,
        Vec::<String>::new()
    );
    h.stop().await;
}
