//! An HTTPS listener whose default certificate the group names again (two members with the same
//! `certificate-arn`, `a,b` + `b,a`, `a,a`): the default is set once by the listener, never added
//! to the certificate list, and a second deploy writes nothing, on the fake and on moto. A
//! certificate-list entry equal to the default (as upstream leaves it; AWS then lists the
//! default twice) is kept, also without a write.

use aws_load_balancer_controller::aws::{ElbV2, ListenerCertificate};
use aws_load_balancer_controller::deploy::Deployer;

use super::functional::{deployer, inventory};
use super::*;
use crate::support::moto_cloud::{calls_by_op, cloud, new_writes};

/// (member one's, member two's) `certificate-arn`, with `{a}` / `{b}` for the two certificates.
const CASES: [(&str, &str); 3] = [("{a}", "{a}"), ("{a},{b}", "{b},{a}"), ("{a},{a}", "{b}")];

/// One Service and a group `group` of two HTTPS-only Ingresses with the given certificates.
fn group(group: &str, certs: (&str, &str), a: &str, b: &str) -> String {
    let ing = |name: &str, path: &str, cert: &str| {
        let cert = cert.replace("{a}", a).replace("{b}", b);
        format!(
            r#"---
apiVersion: networking.k8s.io/v1
kind: Ingress
metadata:
  name: {name}
  namespace: certs
  annotations:
    kubernetes.io/ingress.class: alb
    alb.ingress.kubernetes.io/group.name: {group}
    alb.ingress.kubernetes.io/listen-ports: '[{{"HTTPS": 443}}]'
    alb.ingress.kubernetes.io/certificate-arn: '{cert}'
spec:
  rules:
  - http:
      paths:
      - {{path: {path}, pathType: Prefix, backend: {{service: {{name: web, port: {{number: 80}}}}}}}}
"#
        )
    };
    format!(
        r#"apiVersion: v1
kind: Service
metadata: {{name: web, namespace: certs, uid: 12121212-0000-0000-0000-000000000001}}
spec: {{type: NodePort, ports: [{{port: 80, targetPort: 8080, nodePort: 30070}}]}}
{}{}"#,
        ing("one", "/one", certs.0),
        ing("two", "/two", certs.1)
    )
}

/// The HTTPS listener's certificates as DescribeListenerCertificates lists them, sorted.
async fn listed(elb: &dyn ElbV2, arn: &str) -> Vec<(String, bool)> {
    let mut v: Vec<(String, bool)> = elb
        .describe_listener_certificates(arn)
        .await
        .unwrap()
        .into_iter()
        .map(|ListenerCertificate { arn, is_default }| (arn, is_default))
        .collect();
    v.sort();
    v
}

/// What the first deploy leaves: the default once, `b` (when named) in the certificate list.
fn expected(certs: (&str, &str), a: &str, b: &str) -> Vec<(String, bool)> {
    let mut v = vec![(a.to_string(), true)];
    if certs.0.contains("{b}") || certs.1.contains("{b}") {
        v.push((b.to_string(), false));
    }
    v.sort();
    v
}

#[tokio::test]
async fn a_default_certificate_named_again_is_not_added_on_every_deploy() {
    let (a, b) = (
        "arn:aws:acm:us-west-2:111122223333:certificate/a",
        "arn:aws:acm:us-west-2:111122223333:certificate/b",
    );
    for certs in CASES {
        let fake = fake();
        let vpc = network(&fake);
        let stack = build_one(&group("certs", certs, a, b), &vpc);
        assert_eq!(stack.listeners[0].certificates[0], a, "{certs:?}");
        let d = deployer(&fake, &vpc);
        d.deploy(&stack).await.unwrap();
        let inv = inventory(fake.as_ref(), fake.as_ref(), "certs").await;
        let arn = inv.listeners[0].arn.clone();
        assert_eq!(
            listed(fake.as_ref(), &arn).await,
            expected(certs, a, b),
            "{certs:?}"
        );

        fake.clear_calls();
        d.deploy(&stack).await.unwrap();
        assert_eq!(write_ops(&fake), Vec::<String>::new(), "{certs:?}");

        // The default added to the certificate list too (upstream does): listed twice, kept.
        fake.add_listener_certificates(&arn, &[a.to_string()])
            .await
            .unwrap();
        let mut twice = expected(certs, a, b);
        twice.push((a.to_string(), false));
        twice.sort();
        assert_eq!(listed(fake.as_ref(), &arn).await, twice, "{certs:?}");
        fake.clear_calls();
        d.deploy(&stack).await.unwrap();
        assert_eq!(write_ops(&fake), Vec::<String>::new(), "{certs:?}");
        assert_eq!(listed(fake.as_ref(), &arn).await, twice, "{certs:?}");
    }
}

#[tokio::test]
async fn moto_a_default_certificate_named_again_is_not_added_on_every_deploy() {
    let c = cloud().await;
    let a = crate::takeover::seed::certificate(&c, "a.example.com").await;
    let b = crate::takeover::seed::certificate(&c, "b.example.com").await;
    let d = Deployer::new(c.elb.clone(), c.ec2.clone(), CLUSTER, c.vpc.clone());
    for (i, certs) in CASES.into_iter().enumerate() {
        let name = format!("certs{i}");
        let stack = build_one(&group(&name, certs, &a, &b), &c.vpc);
        d.deploy(&stack).await.unwrap();
        let inv = inventory(c.elb.as_ref(), c.ec2.as_ref(), &name).await;
        let arn = inv.listeners[0].arn.clone();
        assert_eq!(
            listed(c.elb.as_ref(), &arn).await,
            expected(certs, &a, &b),
            "{certs:?}"
        );

        let before = calls_by_op(&c.registry);
        d.deploy(&stack).await.unwrap();
        assert_eq!(
            new_writes(&c.registry, &before),
            Vec::<String>::new(),
            "{certs:?}"
        );

        // AWS (and moto) list a default also in the certificate list twice; the fake agrees.
        c.elb
            .add_listener_certificates(&arn, std::slice::from_ref(&a))
            .await
            .unwrap();
        let mut twice = expected(certs, &a, &b);
        twice.push((a.clone(), false));
        twice.sort();
        assert_eq!(listed(c.elb.as_ref(), &arn).await, twice, "{certs:?}");
        let before = calls_by_op(&c.registry);
        d.deploy(&stack).await.unwrap();
        assert_eq!(
            new_writes(&c.registry, &before),
            Vec::<String>::new(),
            "{certs:?}"
        );
    }
}
