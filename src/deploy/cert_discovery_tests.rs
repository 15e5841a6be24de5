//! ACM discovery against the in-memory ACM: upstream's matching, filters and caches, and the
//! resolution of a stack's listeners (group order, explicit certificates, error texts), for what
//! moto cannot show (the default RSA-only key filter, private CAs, failures, cache expiry).

use std::sync::Arc;
use std::time::Duration;

use super::*;
use crate::aws::fake::FakeAws;
use crate::aws::fake::{FakeAcm, FakeCertificate};
use crate::model::{Listener, MemberCertificates, Protocol, Token};

fn discovery(acm: &Arc<FakeAcm>) -> CertDiscovery {
    CertDiscovery::new(acm.clone())
}

fn hosts(v: &[&str]) -> Vec<String> {
    v.iter().map(|s| s.to_string()).collect()
}

#[test]
fn wildcards_cover_exactly_one_label_and_names_match_exactly() {
    assert!(domain_matches_host("*.example.com", "shop.example.com"));
    assert!(domain_matches_host("*.example.com", "*.example.com"));
    assert!(!domain_matches_host("*.example.com", "example.com"));
    assert!(!domain_matches_host("*.example.com", "a.shop.example.com"));
    assert!(!domain_matches_host("*.example.com", "shop.example.org"));
    assert!(domain_matches_host("shop.example.com", "shop.example.com"));
    assert!(!domain_matches_host("shop.example.com", "Shop.example.com"));
    assert!(!domain_matches_host(
        "shop.example.com",
        "x.shop.example.com"
    ));
}

#[tokio::test]
async fn every_matching_issued_certificate_of_every_host_sorted() {
    let acm = Arc::new(FakeAcm::new());
    let wild = acm.add(FakeCertificate::imported("*.example.com", &[]));
    let exact = acm.add(FakeCertificate::imported(
        "shop.example.com",
        &["api.example.org"],
    ));
    let pending =
        acm.add(FakeCertificate::imported("shop.example.com", &[]).status("PENDING_VALIDATION"));
    let _other = acm.add(FakeCertificate::imported("other.example.net", &[]));
    let d = discovery(&acm);
    let got = d
        .discover(&hosts(&["api.example.org", "shop.example.com"]))
        .await
        .unwrap();
    let mut want = vec![wild, exact];
    want.sort();
    assert_eq!(got, want);
    assert!(!got.contains(&pending));
    // Only issued certificates are listed, with every key type.
    assert_eq!(acm.count("ListCertificates"), 1);
}

#[tokio::test]
async fn a_host_without_certificate_is_named() {
    let acm = Arc::new(FakeAcm::new());
    acm.add(FakeCertificate::imported("*.example.com", &[]));
    acm.add(FakeCertificate::imported("www.example.org", &[]).status("EXPIRED"));
    let err = discovery(&acm)
        .discover(&hosts(&[
            "a.example.com",
            "www.example.org",
            "z.example.org",
        ]))
        .await
        .unwrap_err();
    assert_eq!(
        err.to_string(),
        "no certificate found for host: www.example.org"
    );
}

/// ACM lists only RSA_1024/RSA_2048 certificates unless asked for every key type (moto lists
/// all): an ECDSA or RSA_4096 certificate is found only because discovery asks for them.
#[tokio::test]
async fn certificates_of_every_key_type_are_found() {
    let acm = Arc::new(FakeAcm::new());
    let ec =
        acm.add(FakeCertificate::imported("ec.example.com", &[]).key_algorithm("EC_prime256v1"));
    let rsa = acm.add(FakeCertificate::imported("rsa.example.com", &[]).key_algorithm("RSA_4096"));
    let got = discovery(&acm)
        .discover(&hosts(&["ec.example.com", "rsa.example.com"]))
        .await
        .unwrap();
    let mut want = vec![ec, rsa];
    want.sort();
    assert_eq!(got, want);
}

#[tokio::test]
async fn allowed_certificate_authorities_keep_only_their_certificates() {
    let acm = Arc::new(FakeAcm::new());
    let ca = "arn:aws:acm-pca:us-west-2:123456789012:certificate-authority/ok";
    let imported = acm.add(FakeCertificate::imported("a.example.com", &[]));
    let ours = acm.add(FakeCertificate::imported("a.example.com", &[]).private(ca));
    let theirs = acm.add(
        FakeCertificate::imported("a.example.com", &[])
            .private("arn:aws:acm-pca:us-west-2:123456789012:certificate-authority/other"),
    );
    let d = discovery(&acm).with_allowed_ca_arns(vec![ca.to_string()]);
    assert_eq!(
        d.discover(&hosts(&["a.example.com"])).await.unwrap(),
        vec![ours.clone()]
    );
    // Without the flag every issued certificate counts.
    let mut all = vec![imported, ours, theirs];
    all.sort();
    assert_eq!(
        discovery(&acm)
            .discover(&hosts(&["a.example.com"]))
            .await
            .unwrap(),
        all
    );
}

#[tokio::test]
async fn certificate_management_leaves_out_the_controllers_own_certificates() {
    let acm = Arc::new(FakeAcm::new());
    let user = acm.add(FakeCertificate::imported("a.example.com", &[]).tag("team", "web"));
    let _managed = acm.add(
        FakeCertificate::imported("a.example.com", &[])
            .tag("elbv2.k8s.aws/cluster", "other-cluster")
            .tag("ingress.k8s.aws/stack", "ns/x"),
    );
    let got = discovery(&acm)
        .with_managed_excluded(true)
        .discover(&hosts(&["a.example.com"]))
        .await
        .unwrap();
    assert_eq!(got, vec![user]);
    assert_eq!(acm.count("ListTagsForCertificate"), 2);
    // Without the gate tags are never read (and the managed certificate counts).
    acm.clear_calls();
    let got = discovery(&acm)
        .discover(&hosts(&["a.example.com"]))
        .await
        .unwrap();
    assert_eq!(got.len(), 2);
    assert_eq!(acm.count("ListTagsForCertificate"), 0);
}

#[tokio::test]
async fn answers_are_cached_per_upstreams_lifetimes() {
    let acm = Arc::new(FakeAcm::new());
    acm.add(FakeCertificate::imported("a.example.com", &[]));
    let d = discovery(&acm);
    let h = hosts(&["a.example.com"]);
    d.discover(&h).await.unwrap();
    d.discover(&h).await.unwrap();
    assert_eq!(acm.count("ListCertificates"), 1);
    assert_eq!(acm.count("DescribeCertificate"), 1);

    // The list expires, the imported certificate's names do not yet.
    let short_list = CacheTtls {
        certificate_list: Duration::ZERO,
        ..CacheTtls::default()
    };
    let d = discovery(&acm).with_cache_ttls(short_list);
    acm.clear_calls();
    d.discover(&h).await.unwrap();
    d.discover(&h).await.unwrap();
    assert_eq!(acm.count("ListCertificates"), 2);
    assert_eq!(acm.count("DescribeCertificate"), 1);

    // Types other than imported / Amazon-issued / private are never cached.
    let odd = Arc::new(FakeAcm::new());
    let mut c = FakeCertificate::imported("a.example.com", &[]);
    c.cert_type = "UNKNOWN".into();
    odd.add(c);
    let d = discovery(&odd);
    d.discover(&h).await.unwrap();
    d.discover(&h).await.unwrap();
    assert_eq!(odd.count("DescribeCertificate"), 2);
}

#[tokio::test]
async fn a_new_certificate_shows_up_once_the_list_expires() {
    let acm = Arc::new(FakeAcm::new());
    let first = acm.add(FakeCertificate::imported("a.example.com", &[]));
    let ttl = Duration::from_millis(300);
    let d = discovery(&acm).with_cache_ttls(CacheTtls {
        certificate_list: ttl,
        ..CacheTtls::default()
    });
    let h = hosts(&["a.example.com"]);
    assert_eq!(d.discover(&h).await.unwrap(), vec![first.clone()]);
    let second = acm.add(FakeCertificate::imported("a.example.com", &[]));
    assert_eq!(d.discover(&h).await.unwrap(), vec![first.clone()], "cached");
    tokio::time::sleep(ttl + Duration::from_millis(50)).await;
    let mut both = vec![first, second];
    both.sort();
    assert_eq!(d.discover(&h).await.unwrap(), both);
}

#[tokio::test]
async fn an_acm_failure_is_returned_and_not_cached() {
    let acm = Arc::new(FakeAcm::new());
    let arn = acm.add(FakeCertificate::imported("a.example.com", &[]));
    acm.fail_next(AwsError::from_code(
        "AccessDeniedException",
        "no acm:ListCertificates",
        Some(400),
    ));
    let d = discovery(&acm);
    let h = hosts(&["a.example.com"]);
    let err = d.discover(&h).await.unwrap_err();
    assert!(err.to_string().contains("no acm:ListCertificates"), "{err}");
    assert_eq!(d.discover(&h).await.unwrap(), vec![arn]);
}

// ------------------------------------------------------------------ stacks

fn listener(port: i32, members: Vec<MemberCertificates>) -> Listener {
    Listener {
        id: port.to_string(),
        load_balancer_arn: Token::LoadBalancerArn,
        port,
        protocol: Protocol::Https,
        default_actions: vec![],
        certificates: vec![],
        certificate_discovery: members,
        ssl_policy: None,
        mutual_authentication: None,
        alpn_policy: None,
        attributes: Default::default(),
        tags: Default::default(),
    }
}

fn explicit(ingress: &str, arns: &[&str]) -> MemberCertificates {
    MemberCertificates {
        ingress: ingress.into(),
        certificates: hosts(arns),
        discovery_hosts: None,
    }
}

fn discovered(ingress: &str, h: &[&str]) -> MemberCertificates {
    MemberCertificates {
        ingress: ingress.into(),
        certificates: vec![],
        discovery_hosts: Some(hosts(h)),
    }
}

fn deployer(acm: Option<Arc<FakeAcm>>) -> Deployer {
    let fake = Arc::new(FakeAws::new());
    let d = Deployer::new(fake.clone(), fake, "c", "vpc-1");
    match acm {
        Some(acm) => d.with_cert_discovery(Arc::new(CertDiscovery::new(acm))),
        None => d,
    }
}

#[tokio::test]
async fn listeners_get_the_members_certificates_merged_in_group_order() {
    let acm = Arc::new(FakeAcm::new());
    let a = acm.add(FakeCertificate::imported("a.example.com", &[]));
    let b = acm.add(FakeCertificate::imported("*.example.org", &[]));
    let stack = Stack {
        stack_id: "g".into(),
        members: vec!["ns/first".into(), "ns/second".into(), "ns/third".into()],
        listeners: vec![listener(
            443,
            vec![
                discovered("ns/first", &["a.example.com", "x.example.org"]),
                explicit("ns/second", &["arn:explicit"]),
                discovered("ns/third", &["a.example.com"]),
            ],
        )],
        ..Default::default()
    };
    let d = deployer(Some(acm));
    let out = d.resolve_certificates(&stack).await.unwrap();
    let l = &out.listeners[0];
    let mut first = vec![a.clone(), b.clone()];
    first.sort();
    // The first member's smallest ARN is the default; then the rest once, in member order
    // (upstream's merge: the default comes again as the third member's SNI certificate).
    let mut want = first.clone();
    want.push("arn:explicit".into());
    want.push(a.clone());
    assert_eq!(l.certificates, want);
    assert!(l.certificate_discovery.is_empty());

    // An explicit member first keeps its certificate as the default.
    let mut s2 = stack.clone();
    s2.listeners[0].certificate_discovery.swap(0, 1);
    let out = d.resolve_certificates(&s2).await.unwrap();
    assert_eq!(out.listeners[0].certificates[0], "arn:explicit");
    assert_eq!(out.listeners[0].certificates.len(), 3);
}

#[tokio::test]
async fn the_first_member_in_group_order_without_certificate_fails_the_stack() {
    let acm = Arc::new(FakeAcm::new());
    acm.add(FakeCertificate::imported("a.example.com", &[]));
    let stack = Stack {
        stack_id: "g".into(),
        // Group order differs from name order: `ns/z` is asked first.
        members: vec!["ns/z".into(), "ns/a".into()],
        listeners: vec![
            listener(443, vec![discovered("ns/a", &["missing-a.example.com"])]),
            listener(
                8443,
                vec![discovered(
                    "ns/z",
                    &["a.example.com", "missing-z.example.com"],
                )],
            ),
        ],
        ..Default::default()
    };
    let err = deployer(Some(acm))
        .resolve_certificates(&stack)
        .await
        .unwrap_err();
    assert_eq!(
        err.to_string(),
        "ingress: ns/z: no certificate found for host: missing-z.example.com"
    );
}

#[tokio::test]
async fn stacks_without_discovery_are_passed_through_without_acm() {
    let mut stack = Stack {
        stack_id: "g".into(),
        listeners: vec![listener(443, vec![])],
        ..Default::default()
    };
    stack.listeners[0].certificates = vec!["arn:x".into()];
    let d = deployer(None);
    assert!(matches!(
        d.resolve_certificates(&stack).await.unwrap(),
        Cow::Borrowed(_)
    ));
    stack.listeners[0].certificate_discovery = vec![discovered("ns/a", &["a.example.com"])];
    let err = d.resolve_certificates(&stack).await.unwrap_err();
    assert!(
        err.to_string().contains("no ACM client is configured"),
        "{err}"
    );
}

/// A Gateway is one member with its own hosts per listener: each listener gets the certificates
/// of its hosts (not those of another listener), and a host without one fails with upstream's
/// bare Gateway text, the lowest port first.
#[tokio::test]
async fn gateway_listeners_are_discovered_each_by_its_own_hosts() {
    let acm = Arc::new(FakeAcm::new());
    let shop = acm.add(FakeCertificate::imported("shop.example.com", &[]));
    let api = acm.add(FakeCertificate::imported("*.example.org", &[]));
    let mut stack = Stack {
        stack_id: "apps/gw".into(),
        kind: crate::model::StackKind::AlbGateway,
        members: vec!["apps/route".into()],
        listeners: vec![
            listener(443, vec![discovered("apps/gw", &["shop.example.com"])]),
            listener(8443, vec![discovered("apps/gw", &["api.example.org"])]),
        ],
        ..Default::default()
    };
    let d = deployer(Some(acm));
    let out = d.resolve_certificates(&stack).await.unwrap();
    assert_eq!(out.listeners[0].certificates, vec![shop]);
    assert_eq!(out.listeners[1].certificates, vec![api]);
    assert!(out
        .listeners
        .iter()
        .all(|l| l.certificate_discovery.is_empty()));

    stack.listeners[1].certificate_discovery = vec![discovered("apps/gw", &["b.example.net"])];
    stack.listeners[0].certificate_discovery = vec![discovered("apps/gw", &["a.example.net"])];
    let err = d.resolve_certificates(&stack).await.unwrap_err();
    assert_eq!(
        err.to_string(),
        "no certificate found for host: a.example.net"
    );
}
