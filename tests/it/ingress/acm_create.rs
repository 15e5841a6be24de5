//! ACM certificate creation through the Ingress controller (gate `EnableCertificateManagement`),
//! against FakeAws with the in-memory ACM and Route 53 (ACM issues once the validation record is
//! in Route 53; a certificate a listener uses cannot be deleted): an Ingress with
//! `create-acm-cert` gets a certificate for its host, its validation record, and an HTTPS
//! listener serving it; a later reconcile writes nothing; deleting the Ingress deletes the
//! certificate and its record after the load balancer. While ACM has not issued it the group
//! waits (requeued, no Warning) with nothing else written; a host without a hosted zone, or no
//! host at all, is refused before any AWS write.

use std::sync::Arc;
use std::time::Duration;

use aws_load_balancer_controller::aws::fake::{validation_record, FakeAcm, FakeAws, FakeRoute53};
use aws_load_balancer_controller::deploy::{CertificateTiming, Certificates};

use super::fake::{fake_aws, reconcile_again, settle};
use super::*;

/// An Ingress for `host` with `create-acm-cert` (no listen-ports: HTTPS 443 by default).
fn certified_app(ns: &str, name: &str, host: &str) -> Vec<Value> {
    app_with(ns, name, 30241, None, Some(host), |ingress| {
        ingress.annotation("alb.ingress.kubernetes.io/create-acm-cert", "true")
    })
}

struct Certs {
    fake: Arc<FakeAws>,
    acm: Arc<FakeAcm>,
    dns: Arc<FakeRoute53>,
    vpc: String,
}

/// The fakes, a zone for example.com; `validating`: ACM issues once the records exist (else
/// a certificate stays pending until the test issues it).
fn certs(validating: bool) -> Certs {
    let (fake, vpc) = fake_aws();
    let acm = Arc::new(FakeAcm::new());
    let dns = Arc::new(FakeRoute53::new());
    dns.add_zone("example.com");
    if validating {
        acm.validated_by(dns.clone());
    }
    acm.used_by_listeners_of(fake.clone());
    Certs {
        fake,
        acm,
        dns,
        vpc,
    }
}

impl Certs {
    async fn start(&self) -> Harness {
        let mut cfg = test_config(&self.vpc);
        cfg.model
            .feature_gates
            .insert("EnableCertificateManagement".into(), true);
        let timing = CertificateTiming {
            records_interval: Duration::from_millis(10),
            issue_wait: Duration::from_millis(100),
            issue_interval: Duration::from_millis(10),
            requeue: Duration::from_millis(200),
            ..CertificateTiming::default()
        };
        cfg.certificates = Some(Arc::new(
            Certificates::new(self.acm.clone(), self.dns.clone()).with_timing(timing),
        ));
        Harness::start_with(self.fake.clone(), self.fake.clone(), &self.vpc, cfg).await
    }

    fn records(&self) -> usize {
        self.dns
            .zone_ids()
            .iter()
            .map(|z| self.dns.records(z).len())
            .sum()
    }
}

#[tokio::test]
async fn a_created_certificate_is_served_and_deleted_with_the_ingress() {
    let c = certs(true);
    let h = c.start().await;
    h.apply_objects(certified_app("tls", "shop", "shop.example.com"))
        .await;
    eventually("deployed with its certificate", WAIT, || async {
        h.hostname("tls", "shop").await.is_some()
    })
    .await;
    let acm = c.acm.certificates();
    assert_eq!(acm.len(), 1, "{acm:?}");
    let (arn, cert) = acm.iter().next().unwrap();
    assert_eq!(cert.status, "ISSUED");
    assert_eq!(cert.domain_name, "shop.example.com");
    assert_eq!(cert.tags["elbv2.k8s.aws/cluster"], CLUSTER);
    assert_eq!(cert.tags["ingress.k8s.aws/stack"], "tls/shop");
    assert!(
        cert.tags["ingress.k8s.aws/resource"].starts_with("amazon_issued/shop.example.com-"),
        "{:?}",
        cert.tags
    );
    let r = validation_record("shop.example.com");
    assert!(c.dns.has_record(&r.name, "CNAME", &r.value));
    let inv = inventory(c.fake.as_ref(), c.fake.as_ref(), "tls/shop").await;
    assert_eq!(inv.listeners.len(), 1);
    assert_eq!(inv.listeners[0].port, 443);
    assert_eq!(inv.listeners[0].certificates, vec![arn.clone()]);

    // Settled: a reconcile writes nothing, to ELBv2, ACM or Route 53.
    c.acm.clear_calls();
    c.dns.clear_calls();
    assert_eq!(
        reconcile_again(&h, &c.fake, "tls", "shop").await,
        Vec::<String>::new()
    );
    assert_eq!(c.acm.write_calls(), Vec::<String>::new());
    assert_eq!(c.dns.count("ChangeResourceRecordSets"), 0);

    // Deleted with the Ingress, after the load balancer that served it.
    h.delete_ingress("tls", "shop").await;
    eventually("certificate deleted", WAIT, || async {
        c.acm.certificates().is_empty()
    })
    .await;
    eventually("Ingress released", WAIT, || async {
        h.ingress("tls", "shop").await.is_none()
    })
    .await;
    let inv = inventory(c.fake.as_ref(), c.fake.as_ref(), "tls/shop").await;
    assert!(inv.lbs.is_empty() && inv.listeners.is_empty());
    assert_eq!(c.records(), 0, "its validation record went with it");
    h.stop().await;
}

/// While ACM validates, the group is queued again without a Warning and nothing but the
/// certificate and its record is written; issued, the group deploys with it.
#[tokio::test]
async fn the_group_waits_for_acm_to_issue_the_certificate() {
    let c = certs(false);
    let h = c.start().await;
    h.apply_objects(certified_app("wait", "web", "web.example.com"))
        .await;
    eventually("certificate requested", WAIT, || async {
        c.acm.certificates().len() == 1
    })
    .await;
    // A few requeues (every 200 ms).
    tokio::time::sleep(Duration::from_millis(800)).await;
    assert_eq!(
        c.acm.count("RequestCertificate"),
        1,
        "requeued, not requested again"
    );
    assert!(
        c.acm.count("DescribeCertificate") > 2,
        "asked again after the requeue"
    );
    assert_eq!(c.fake.write_calls(), vec![], "nothing else half-built");
    assert_eq!(c.records(), 1);
    assert!(!h
        .events("wait", "web")
        .await
        .iter()
        .any(|(t, _, _)| t == "Warning"));
    let arn = c.acm.certificates().into_keys().next().unwrap();
    c.acm.set_status(&arn, "ISSUED");
    eventually("deployed once issued", WAIT, || async {
        h.hostname("wait", "web").await.is_some()
    })
    .await;
    let inv = inventory(c.fake.as_ref(), c.fake.as_ref(), "wait/web").await;
    assert_eq!(inv.listeners[0].certificates, vec![arn]);
    h.stop().await;
}

/// No hosted zone for the host: upstream's pre-check fails the deploy before any write (no
/// certificate requested, nothing in ELBv2). No host at all: the member's build fails naming
/// the annotation (upstream's text), and a served member that gains it keeps its last
/// configuration.
#[tokio::test]
async fn a_host_without_zone_or_no_host_is_refused_before_any_write() {
    let c = certs(true);
    let h = c.start().await;
    h.apply_objects(certified_app("nozone", "web", "web.example.org"))
        .await;
    let want = "Failed deploy model due to pre-check failed for domain \"web.example.org\": no hosted zone found for validation records";
    eventually("FailedDeployModel naming the domain", WAIT, || async {
        h.events("nozone", "web")
            .await
            .iter()
            .any(|(t, r, n)| t == "Warning" && r == "FailedDeployModel" && n == want)
    })
    .await;
    settle(&c.fake).await;
    assert_eq!(c.fake.write_calls(), vec![], "no ELBv2 or EC2 write");
    assert_eq!(c.acm.count("RequestCertificate"), 0);

    // A served Ingress (no certificate asked) that gains the annotation without any host.
    h.apply_objects(app("nohost", "api", 30242, None)).await;
    eventually("api deployed", WAIT, || async {
        h.hostname("nohost", "api").await.is_some()
    })
    .await;
    settle(&c.fake).await;
    c.fake.clear_calls();
    h.patch_ingress(
        "nohost",
        "api",
        json!({"metadata": {"annotations": {"alb.ingress.kubernetes.io/create-acm-cert": "true"}}}),
    )
    .await;
    eventually(
        "api: FailedBuildModel, last configuration kept",
        WAIT,
        || async {
            h.events("nohost", "api").await.iter().any(|(t, r, n)| {
                t == "Warning"
                    && r == "FailedBuildModel"
                    && n.contains(
                        "ingress nohost/api has create-acm-cert enabled but no hostnames defined",
                    )
            })
        },
    )
    .await;
    settle(&c.fake).await;
    assert_eq!(c.fake.write_calls(), vec![], "the edit reached AWS");
    assert_eq!(c.acm.count("RequestCertificate"), 0);
    let inv = inventory(c.fake.as_ref(), c.fake.as_ref(), "nohost/api").await;
    assert_eq!(inv.lbs.len(), 1, "still serving");
    h.stop().await;
}
