//! The certificate step against the fake ACM and Route 53 (the fake issues an Amazon-issued
//! certificate once its validation records are in Route 53, and refuses to delete one a
//! listener uses). Upstream's tables replayed: `Test_Synthesizer` (6 cases),
//! `Test_matchResAndSDKCertificates` (6) and `Test_defaultTaggingManager_ListCertificates` (3),
//! each case's expected calls and outcome asserted on what the fakes saw; then what this
//! deployer adds (bounded waits, failures, shared validation records, tags, deletion).

use std::sync::Arc;
use std::time::Duration;

use super::*;
use crate::aws::fake::{validation_record, FakeAcm, FakeAws, FakeCertificate, FakeRoute53};
use crate::model::{Certificate, CertificateType, MemberCertificates, Token};

const CLUSTER: &str = "prod";
const STACK: &str = "namespace/name";
const CA: &str = "arn:aws:acm-pca:::::my-ca";

fn tracking(id: &str) -> Tags {
    Tags::from([
        ("elbv2.k8s.aws/cluster".to_string(), CLUSTER.to_string()),
        ("ingress.k8s.aws/stack".to_string(), STACK.to_string()),
        ("ingress.k8s.aws/resource".to_string(), id.to_string()),
    ])
}

fn want(id: &str, names: &[&str]) -> Certificate {
    Certificate {
        id: id.into(),
        ingress: "namespace/ing".into(),
        cert_type: CertificateType::AmazonIssued,
        certificate_authority_arn: None,
        domain_name: names[0].into(),
        subject_alternative_names: names.iter().map(|n| n.to_string()).collect(),
        validation_method: "DNS".into(),
        key_algorithm: None,
        tags: tracking(id),
    }
}

fn private(id: &str, names: &[&str]) -> Certificate {
    Certificate {
        cert_type: CertificateType::Private,
        certificate_authority_arn: Some(CA.into()),
        ..want(id, names)
    }
}

fn stack(certs: Vec<Certificate>) -> Stack {
    Stack {
        stack_id: STACK.into(),
        certificates: certs,
        ..Default::default()
    }
}

fn fast() -> CertificateTiming {
    CertificateTiming {
        records_wait: Duration::from_millis(500),
        records_interval: Duration::from_millis(1),
        issue_wait: Duration::from_millis(50),
        issue_interval: Duration::from_millis(1),
        requeue: Duration::from_secs(7),
        ..CertificateTiming::default()
    }
}

struct Env {
    acm: Arc<FakeAcm>,
    dns: Arc<FakeRoute53>,
    elb: Arc<FakeAws>,
    d: Deployer,
}

/// Fakes with a zone per entry of `zones`, the ACM validating against them.
fn env(zones: &[&str]) -> Env {
    let acm = Arc::new(FakeAcm::new());
    let dns = Arc::new(FakeRoute53::new());
    for z in zones {
        dns.add_zone(z);
    }
    acm.validated_by(dns.clone());
    let elb = Arc::new(FakeAws::new());
    acm.used_by_listeners_of(elb.clone());
    let certs = Certificates::new(acm.clone(), dns.clone()).with_timing(fast());
    let d = Deployer::new(elb.clone(), elb.clone(), CLUSTER, "vpc-1")
        .with_delete_retry(Duration::from_millis(1), Duration::from_millis(30))
        .with_certificate_management(Arc::new(certs));
    Env { acm, dns, elb, d }
}

/// A certificate of the account as the controller requested it.
fn ours(names: &[&str], id: &str) -> FakeCertificate {
    let mut c = FakeCertificate::imported(names[0], &names[1..]);
    c.cert_type = "AMAZON_ISSUED".into();
    c.dns_validated = true;
    c.tags = tracking(id);
    c
}

impl Env {
    async fn sync(&self, s: &Stack) -> (Result<CertificateLeftovers>, Resolved) {
        let mut res = Resolved::default();
        let out = self.d.sync_certificates(s, &mut res).await;
        (out, res)
    }

    fn acm_writes(&self) -> Vec<String> {
        self.acm.write_calls()
    }

    fn records(&self) -> usize {
        self.dns
            .zone_ids()
            .iter()
            .map(|z| self.dns.records(z).len())
            .sum()
    }
}

fn leftover_arns(l: &CertificateLeftovers) -> Vec<String> {
    l.certificates.iter().map(|c| c.arn.clone()).collect()
}

// ------------------------------------------------------------ upstream's Test_Synthesizer

/// "happy path with simple amazon issued certificate": requested with its names, DNS
/// validation and the tracking tags; its record written into the zone; issued; its ARN resolves;
/// nothing to delete.
#[tokio::test]
async fn synthesizer_happy_path_requests_validates_and_resolves() {
    let e = env(&["example.com"]);
    let id = "amazon_issued/example.com";
    let (left, res) = e.sync(&stack(vec![want(id, &["example.com"])])).await;
    let left = left.unwrap();
    assert!(left.certificates.is_empty());
    let arn = &res.certificate_arns[id];
    let certs = e.acm.certificates();
    let c = &certs[arn];
    assert_eq!(c.domain_name, "example.com");
    assert_eq!(c.status, "ISSUED");
    assert!(c.dns_validated);
    assert_eq!(c.tags, tracking(id));
    let r = validation_record("example.com");
    assert!(e.dns.has_record(&r.name, "CNAME", &r.value));
    assert_eq!(e.acm_writes(), ["RequestCertificate"]);
    assert_eq!(e.dns.count("ChangeResourceRecordSets"), 1);
}

/// "happy path with existing certificate": found by its tags, nothing requested or written.
#[tokio::test]
async fn synthesizer_existing_certificate_is_kept_without_a_write() {
    let e = env(&["example.com"]);
    let id = "amazon_issued/example.com";
    let arn = e.acm.add(ours(&["example.com"], id));
    let (left, res) = e.sync(&stack(vec![want(id, &["example.com"])])).await;
    assert!(left.unwrap().certificates.is_empty());
    assert_eq!(res.certificate_arns[id], arn);
    assert_eq!(e.acm_writes(), Vec::<String>::new());
    assert_eq!(e.dns.calls(), Vec::<String>::new());
}

/// "existing certificate but not enough SANs": a new one for both names (a record in each
/// name's zone), the old one left for the cleanup.
#[tokio::test]
async fn synthesizer_missing_names_request_a_replacement() {
    let e = env(&["example.com", "otherexample.com"]);
    let id = "amazon_issued/example.com";
    let old = e.acm.add(ours(&["example.com"], id));
    let names = ["example.com", "otherexample.com"];
    let (left, res) = e.sync(&stack(vec![want(id, &names)])).await;
    let left = left.unwrap();
    assert_eq!(leftover_arns(&left), std::slice::from_ref(&old));
    let new = &res.certificate_arns[id];
    assert_ne!(*new, old);
    assert_eq!(e.acm.certificates()[new].status, "ISSUED");
    for n in names {
        let r = validation_record(n);
        assert!(e.dns.has_record(&r.name, "CNAME", &r.value), "{n}");
    }
    assert_eq!(e.acm_writes(), ["RequestCertificate"]);
}

/// "existing certificate but not issued within reissueWaitTime": deleted and requested anew.
/// Its validation record stays (the new certificate validates with the same one; upstream
/// deletes it and writes it again).
#[tokio::test]
async fn synthesizer_stale_pending_certificate_is_requested_anew() {
    let e = env(&["example.com"]);
    let id = "amazon_issued/example.com";
    let old = e
        .acm
        .add(ours(&["example.com"], id).status("PENDING_VALIDATION"));
    e.acm.set_created_at(&old, 31 * 60);
    let (left, res) = e.sync(&stack(vec![want(id, &["example.com"])])).await;
    assert!(left.unwrap().certificates.is_empty());
    let new = &res.certificate_arns[id];
    assert_ne!(*new, old);
    assert!(!e.acm.certificates().contains_key(&old));
    assert_eq!(e.acm.certificates()[new].status, "ISSUED");
    assert_eq!(e.acm_writes(), ["DeleteCertificate", "RequestCertificate"]);
    assert_eq!(e.records(), 1);
}

/// "no certificate, cleaning orphaned resources": the stack's certificate is left for the
/// cleanup; nothing resolves.
#[tokio::test]
async fn synthesizer_orphans_go_to_the_cleanup() {
    let e = env(&["example.com"]);
    let id = "amazon_issued/example.com";
    let arn = e.acm.add(ours(&["example.com"], id));
    let (left, res) = e.sync(&stack(vec![])).await;
    assert_eq!(leftover_arns(&left.unwrap()), [arn]);
    assert!(res.certificate_arns.is_empty());
    assert_eq!(e.acm_writes(), Vec::<String>::new());
}

/// "pre-check fails when hosted zone not found": upstream's error, and nothing requested.
#[tokio::test]
async fn synthesizer_precheck_refuses_a_name_without_a_zone() {
    let e = env(&["example.com"]);
    let host = "wrong.nonexistent-domain.com";
    let id = "amazon_issued/wrong.nonexistent-domain.com";
    let (left, _) = e.sync(&stack(vec![want(id, &[host])])).await;
    assert_eq!(
        left.unwrap_err().to_string(),
        "pre-check failed for domain \"wrong.nonexistent-domain.com\": no hosted zone found for validation records"
    );
    assert_eq!(e.acm_writes(), Vec::<String>::new());
    assert_eq!(e.dns.count("ChangeResourceRecordSets"), 0);
}

// ---------------------------------------------- upstream's Test_matchResAndSDKCertificates

fn found(
    id: &str,
    arn: &str,
    names: &[&str],
    status: &str,
    created: Option<i64>,
) -> OwnedCertificate {
    OwnedCertificate {
        arn: arn.into(),
        resource_id: id.into(),
        tags: tracking(id),
        detail: crate::aws::acm::CertificateDetail {
            arn: arn.into(),
            domain_name: names[0].into(),
            subject_alternative_names: names.iter().map(|n| n.to_string()).collect(),
            status: status.into(),
            cert_type: "AMAZON_ISSUED".into(),
            created_at: created,
            ..Default::default()
        },
    }
}

/// The six cases: a match; missing names; pending but young; pending and old (the age is the
/// step's concern, not the pairing's); Amazon-issued where a private one is wanted and a changed
/// domain name (both other resource ids).
#[test]
fn pairing_replays_upstreams_match_table() {
    let now = now_secs();
    let old = now - 31 * 60;
    // 1. all certificates have match
    let w = [want("id-1", &["example.com"])];
    let o = found("id-1", "arn-1", &["example.com"], "ISSUED", None);
    let p = pair(&w, vec![o.clone()]);
    assert_eq!(p.matched, vec![(&w[0], o)]);
    assert!(p.create.is_empty() && p.leftovers.is_empty());
    // 2. certificate with missing SANs
    let w = [want("id-2", &["example.com", "otherexample.com"])];
    let o = found("id-2", "arn-2", &["example.com"], "ISSUED", None);
    let p = pair(&w, vec![o.clone()]);
    assert!(p.matched.is_empty());
    assert_eq!(p.create, vec![&w[0]]);
    assert_eq!(p.leftovers, vec![o]);
    // 3. and 4. pending validation, young and old: matched either way
    for (id, at) in [("id-3", now), ("id-4", old)] {
        let w = [want(id, &["example.com"])];
        let o = found(id, "arn", &["example.com"], "PENDING_VALIDATION", Some(at));
        let p = pair(&w, vec![o.clone()]);
        assert_eq!(p.matched, vec![(&w[0], o)], "{id}");
    }
    // 5. amazon issued but want private one
    let w = [private("private/example.com", &["example.com"])];
    let o = found(
        "amazon_issued/example.com",
        "arn-5",
        &["example.com"],
        "ISSUED",
        None,
    );
    let p = pair(&w, vec![o.clone()]);
    assert_eq!((p.create, p.leftovers), (vec![&w[0]], vec![o]));
    // 6. certificate domainname changes
    let w = [private("private/otherexample.com", &["otherexample.com"])];
    let mut o = found(
        "private/example.com",
        "arn-6",
        &["example.com"],
        "ISSUED",
        None,
    );
    o.detail.cert_type = "PRIVATE".into();
    let p = pair(&w, vec![o.clone()]);
    assert_eq!((p.create, p.leftovers), (vec![&w[0]], vec![o]));
}

/// Beyond upstream's table: a private certificate of another CA is replaced (a rotated
/// `--default-pca-arn`); of two fitting one model certificate, the issued one serves and the
/// other goes.
#[test]
fn pairing_replaces_another_ca_and_keeps_one_duplicate() {
    let w = [private("private/example.com", &["example.com"])];
    let mut o = found(
        "private/example.com",
        "arn-1",
        &["example.com"],
        "ISSUED",
        None,
    );
    o.detail.cert_type = "PRIVATE".into();
    o.detail.certificate_authority_arn = Some("arn:aws:acm-pca:::::old-ca".into());
    let p = pair(&w, vec![o.clone()]);
    assert_eq!((p.create, p.leftovers), (vec![&w[0]], vec![o.clone()]));
    o.detail.certificate_authority_arn = Some(CA.into());
    assert_eq!(pair(&w, vec![o.clone()]).matched.len(), 1);

    let w = [want("id", &["example.com"])];
    let pending = found(
        "id",
        "arn-a",
        &["example.com"],
        "PENDING_VALIDATION",
        Some(1),
    );
    let issued = found("id", "arn-b", &["example.com"], "ISSUED", Some(2));
    let p = pair(&w, vec![pending.clone(), issued.clone()]);
    assert_eq!(p.matched, vec![(&w[0], issued)]);
    assert_eq!(p.leftovers, vec![pending]);
}

// ------------------------------ upstream's Test_defaultTaggingManager_ListCertificates

/// "successfully retrieve tags from ACM" (the tags then cached: a second look reads none),
/// "list tags for certificate with wrong tagfilters", "empty certificates list".
#[tokio::test]
async fn finding_the_stacks_certificates_by_their_tags() {
    let e = env(&[]);
    let certs = e.d.certificates.clone().unwrap();
    // empty certificates list
    let (owned, all) = certs.find("example", "default/name").await.unwrap();
    assert!(owned.is_empty() && all.is_empty());
    // successfully retrieve tags from ACM
    let tags = Tags::from([
        ("elbv2.k8s.aws/cluster".to_string(), "example".to_string()),
        (
            "ingress.k8s.aws/stack".to_string(),
            "default/name".to_string(),
        ),
        ("ingress.k8s.aws/resource".to_string(), "r".to_string()),
    ]);
    let mut c = FakeCertificate::imported("a.example.com", &[]);
    c.tags = tags.clone();
    let arn = e.acm.add(c);
    let (owned, _) = certs.find("example", "default/name").await.unwrap();
    assert_eq!(owned.len(), 1);
    assert_eq!(
        (owned[0].arn.as_str(), &owned[0].tags),
        (arn.as_str(), &tags)
    );
    assert_eq!(e.acm.count("ListTagsForCertificate"), 1);
    certs.find("example", "default/name").await.unwrap();
    assert_eq!(e.acm.count("ListTagsForCertificate"), 1, "cached");
    // wrong tags: not the stack's
    let e = env(&[]);
    let certs = e.d.certificates.clone().unwrap();
    e.acm.add(
        FakeCertificate::imported("a.example.com", &[])
            .tag("elbv2.k8s.aws/foo", "example")
            .tag("elbv2.k8s.aws/bar", "default/name"),
    );
    let (owned, all) = certs.find("example", "default/name").await.unwrap();
    assert!(owned.is_empty());
    assert_eq!(all.len(), 1);
}

// ------------------------------------------------------------------------ beyond upstream

/// The legacy cluster key owns too; a certificate of the stack without a resource tag is
/// upstream's error.
#[tokio::test]
async fn legacy_cluster_key_owns_and_a_missing_resource_tag_fails() {
    let e = env(&[]);
    let certs = e.d.certificates.clone().unwrap();
    e.acm.add(
        FakeCertificate::imported("a.example.com", &[])
            .tag("ingress.k8s.aws/cluster", CLUSTER)
            .tag("ingress.k8s.aws/stack", STACK)
            .tag("ingress.k8s.aws/resource", "r"),
    );
    assert_eq!(certs.find(CLUSTER, STACK).await.unwrap().0.len(), 1);
    let arn = e.acm.add(
        FakeCertificate::imported("b.example.com", &[])
            .tag("elbv2.k8s.aws/cluster", CLUSTER)
            .tag("ingress.k8s.aws/stack", STACK),
    );
    let err = certs.find(CLUSTER, STACK).await.unwrap_err();
    assert_eq!(
        err.to_string(),
        format!("unexpected certificate with no resourceID: {arn}")
    );
}

/// ACM slow to make up the records: described again until it has; never answered: upstream's
/// error after the wait.
#[tokio::test]
async fn validation_records_are_waited_for() {
    let e = env(&["example.com"]);
    e.acm.hide_records_for(3);
    let id = "amazon_issued/example.com";
    let (left, res) = e.sync(&stack(vec![want(id, &["example.com"])])).await;
    left.unwrap();
    assert_eq!(
        e.acm.certificates()[&res.certificate_arns[id]].status,
        "ISSUED"
    );
    assert!(e.acm.count("DescribeCertificate") >= 4);

    let e = env(&["example.com"]);
    e.acm.hide_records_for(u32::MAX);
    let (left, _) = e.sync(&stack(vec![want(id, &["example.com"])])).await;
    let err = left.unwrap_err().to_string();
    assert!(
        err.starts_with("failed to find validation records for AMAZON_ISSUED certificate"),
        "{err}"
    );
}

/// Pending validation past the bounded wait: `NotReady` with the step's requeue (no Warning),
/// the ARN named; the next pass, once ACM has issued it, resolves with no write.
#[tokio::test]
async fn a_pending_certificate_requeues_the_deploy() {
    let e = env(&["example.com"]);
    // Another account's record in the way: ACM cannot validate (the fake keeps it pending).
    let id = "amazon_issued/example.com";
    let r = validation_record("example.com");
    let zone = e.dns.zone_ids()[0].clone();
    e.dns
        .change_resource_record_sets(
            &zone,
            &[RecordChange {
                action: RecordAction::Create,
                name: r.name.clone(),
                record_type: "CNAME".into(),
                ttl: 60,
                value: "someone-else.".into(),
            }],
        )
        .await
        .unwrap();
    let s = stack(vec![want(id, &["example.com"])]);
    let (left, res) = e.sync(&s).await;
    let arn = res.certificate_arns[id].clone();
    match left {
        Err(Error::NotReady {
            reason,
            retry_after,
        }) => {
            assert_eq!(retry_after, Duration::from_secs(7));
            assert!(
                reason.contains(&arn) && reason.contains("pending validation"),
                "{reason}"
            );
        }
        other => panic!("{other:?}"),
    }
    e.acm.set_status(&arn, "ISSUED");
    e.acm.clear_calls();
    e.dns.clear_calls();
    let (left, res) = e.sync(&s).await;
    left.unwrap();
    assert_eq!(res.certificate_arns[id], arn);
    assert_eq!(e.acm_writes(), Vec::<String>::new());
    assert_eq!(e.dns.calls(), Vec::<String>::new());
}

/// A failed certificate is an error (a Warning) naming its status until it is old enough to be
/// requested anew.
#[tokio::test]
async fn a_failed_certificate_is_an_error() {
    let e = env(&["example.com"]);
    let id = "amazon_issued/example.com";
    let arn = e.acm.add(ours(&["example.com"], id).status("FAILED"));
    e.acm.set_created_at(&arn, 60);
    let (left, _) = e.sync(&stack(vec![want(id, &["example.com"])])).await;
    let err = left.unwrap_err().to_string();
    assert!(err.contains(&arn) && err.contains("is FAILED"), "{err}");
    assert_eq!(e.acm_writes(), Vec::<String>::new());
}

/// A private certificate: requested from the CA, no validation record, issued at once.
#[tokio::test]
async fn a_private_certificate_needs_no_zone() {
    let e = env(&[]);
    let id = "private/example.com";
    let (left, res) = e.sync(&stack(vec![private(id, &["example.com"])])).await;
    left.unwrap();
    let c = &e.acm.certificates()[&res.certificate_arns[id]];
    assert_eq!(c.cert_type, "PRIVATE");
    assert_eq!(c.certificate_authority_arn.as_deref(), Some(CA));
    assert_eq!(e.dns.calls(), Vec::<String>::new());
}

/// Tags added on the model reach the certificate (only what changed); nothing else is written.
#[tokio::test]
async fn new_tags_reach_an_existing_certificate() {
    let e = env(&["example.com"]);
    let id = "amazon_issued/example.com";
    let arn = e.acm.add(ours(&["example.com"], id).tag("team", "web"));
    let mut w = want(id, &["example.com"]);
    w.tags.insert("team".into(), "shop".into());
    w.tags.insert("env".into(), "prod".into());
    let (left, _) = e.sync(&stack(vec![w])).await;
    left.unwrap();
    assert_eq!(e.acm_writes(), ["AddTagsToCertificate"]);
    let tags = &e.acm.certificates()[&arn].tags;
    assert_eq!(
        (tags["team"].as_str(), tags["env"].as_str()),
        ("shop", "prod")
    );
}

/// The cleanup: the record goes unless another certificate of the account still names the
/// domain; a certificate a listener holds is retried, then the deploy fails naming it; once
/// released it goes.
#[tokio::test]
async fn cleanup_deletes_records_and_certificates_it_may() {
    let e = env(&["example.com"]);
    let id = "amazon_issued/a.example.com";
    let s = stack(vec![want(id, &["a.example.com", "b.example.com"])]);
    let (left, res) = e.sync(&s).await;
    left.unwrap();
    let arn = res.certificate_arns[id].clone();
    assert_eq!(e.records(), 2);
    // Someone else's certificate still names b.example.com.
    e.acm.add(FakeCertificate::imported("b.example.com", &[]));
    e.acm
        .set_in_use_by(&arn, &["arn:aws:elasticloadbalancing:::loadbalancer/app/x"]);
    let (left, _) = e.sync(&stack(vec![])).await;
    let left = left.unwrap();
    let err = e.d.delete_certificates(&left).await.unwrap_err();
    assert!(matches!(err, Error::DeleteTimeout { .. }), "{err}");
    assert!(e.acm.count("DeleteCertificate") > 1, "retried");
    assert_eq!(
        e.records(),
        1,
        "a.example.com's record went before the delete"
    );
    e.acm.set_in_use_by(&arn, &[]);
    e.d.delete_certificates(&left).await.unwrap();
    assert!(!e.acm.certificates().contains_key(&arn));
    let b = validation_record("b.example.com");
    assert!(
        e.dns.has_record(&b.name, "CNAME", &b.value),
        "still validates the other one"
    );
    let _ = &e.elb;
}

/// A certificate without the stack's tags is never touched, whatever its names.
#[tokio::test]
async fn foreign_certificates_are_never_deleted() {
    let e = env(&["example.com"]);
    let foreign = e.acm.add(
        ours(&["example.com"], "amazon_issued/example.com")
            .tag("ingress.k8s.aws/stack", "other/stack"),
    );
    let (left, _) = e.sync(&stack(vec![])).await;
    let left = left.unwrap();
    assert!(left.certificates.is_empty());
    e.d.delete_certificates(&left).await.unwrap();
    assert!(e.acm.certificates().contains_key(&foreign));
}

/// Without certificate management a stack asking for certificates is refused before any call.
#[tokio::test]
async fn a_deployer_without_the_clients_refuses_certificates() {
    let elb = Arc::new(FakeAws::new());
    let d = Deployer::new(elb.clone(), elb.clone(), CLUSTER, "vpc-1");
    let mut res = Resolved::default();
    let err = d
        .sync_certificates(&stack(vec![want("id", &["example.com"])]), &mut res)
        .await
        .unwrap_err();
    assert!(matches!(err, Error::Unsupported(_)), "{err}");
    assert!(elb.calls().is_empty());
}

/// The listener's certificate list: each member's created certificate in place of its token, in
/// upstream's merge order; a listener still waiting for discovery is left for `resolve` to
/// refuse.
#[test]
fn listeners_take_the_created_certificates_in_member_order() {
    let mut s = stack(vec![want("id-a", &["a.example.com"])]);
    s.certificates[0].ingress = "ns/a".into();
    let member = |ing: &str, certs: &[&str], hosts: Option<Vec<String>>| MemberCertificates {
        ingress: ing.into(),
        certificates: certs.iter().map(|c| c.to_string()).collect(),
        discovery_hosts: hosts,
    };
    let mut l = model::Listener::new(443, model::Protocol::Https, vec![]);
    l.certificate_discovery = vec![member("ns/b", &["arn:b"], None), member("ns/a", &[], None)];
    s.listeners.push(l.clone());
    let mut res = Resolved::default();
    let err = listeners_with_certificates(&s, &res).unwrap_err();
    assert_eq!(err.to_string(), "unresolved reference to certificate id-a");
    res.certificate_arns.insert("id-a".into(), "arn:a".into());
    let out = listeners_with_certificates(&s, &res).unwrap();
    assert_eq!(out[0].certificates, ["arn:b", "arn:a"]);
    assert!(out[0].certificate_discovery.is_empty());
    assert_eq!(
        s.listener_certificate_tokens(&s.listeners[0]).unwrap(),
        [
            Token::Literal("arn:b".into()),
            Token::CertificateArn("id-a".into())
        ]
    );
    // Still to discover: untouched.
    s.listeners[0].certificate_discovery[0].discovery_hosts = Some(vec!["b.example.com".into()]);
    let out = listeners_with_certificates(&s, &res).unwrap();
    assert_eq!(out[0], s.listeners[0]);
}
