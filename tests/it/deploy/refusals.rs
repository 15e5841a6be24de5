//! A stack that needs something this deployer does not do is refused before the first AWS
//! call: no security group, target group or load balancer is left half-built.

use aws_load_balancer_controller::deploy::Error;
use aws_load_balancer_controller::model::MemberCertificates;

use super::functional::{deployer, inventory};
use super::*;

#[tokio::test]
async fn undeployable_stacks_make_no_aws_write_at_all() {
    let fake = fake();
    let vpc = network(&fake);
    let base = build_one(SHOP, &vpc);
    let d = deployer(&fake, &vpc);
    let mut cases: Vec<(&str, Stack)> = Vec::new();
    let mut s = base.clone();
    // Certificate discovery without an ACM client to ask (see acm_discovery.rs for with one).
    s.listeners[0].certificate_discovery = vec![MemberCertificates {
        ingress: "shop/api".into(),
        certificates: vec![],
        discovery_hosts: Some(vec!["shop.example.com".into()]),
    }];
    cases.push(("ACM", s));
    let mut s = base.clone();
    // Certificate creation without ACM and Route 53 clients (see acm_create.rs for with them).
    s.certificates = vec![model::Certificate {
        id: "amazon_issued/shop.example.com-00000000".into(),
        ingress: "shop/api".into(),
        cert_type: model::CertificateType::AmazonIssued,
        certificate_authority_arn: None,
        domain_name: "shop.example.com".into(),
        subject_alternative_names: vec!["shop.example.com".into()],
        validation_method: "DNS".into(),
        key_algorithm: None,
        tags: Default::default(),
    }];
    cases.push(("ACM certificate", s));
    let mut s = base.clone();
    s.addons.shield_advanced_protection = Some(true);
    cases.push(("Shield", s));
    for (what, stack) in cases {
        fake.clear_calls();
        let err = d.deploy(&stack).await.unwrap_err();
        assert!(matches!(err, Error::Unsupported(_)), "{what}: {err}");
        assert!(err.to_string().contains(what), "{what}: {err}");
        assert_eq!(fake.calls(), vec![], "{what}: not even a describe");
    }
    assert!(inventory(fake.as_ref(), fake.as_ref(), "shop")
        .await
        .is_empty());
}
