//! End to end with the real binary (the API test server, a private moto_server, kubectl), gate
//! `EnableCertificateManagement` on and the `acm` and `route53` endpoints in moto: an Ingress
//! with `create-acm-cert` gets an ACM certificate for its host (moto issues it after a short
//! validation wait), its validation record in the hosted zone, and an HTTPS listener serving it;
//! deleting the Ingress deletes the certificate and its record, and releases the finalizer.

use std::time::Duration;

use crate::e2e_pod_gates::kubectl;
use crate::ingress::inventory;
use crate::support::e2e::Cluster;
use crate::support::moto::Moto;
use crate::support::moto_cloud::cloud_on;
use crate::tgb::eventually;
use k8s_openapi::api::networking::v1::Ingress;
use kube::api::Api;

const STACK: &str = "certs/web";
/// Long enough for one deploy's bounded wait (30 s) around moto's validation.
const WAIT: Duration = Duration::from_secs(90);

const APP: &str = r#"
apiVersion: v1
kind: Namespace
metadata: {name: certs}
---
apiVersion: v1
kind: Service
metadata: {name: web, namespace: certs}
spec: {type: NodePort, selector: {app: web}, ports: [{port: 80, targetPort: 8080, nodePort: 30095}]}
---
apiVersion: networking.k8s.io/v1
kind: Ingress
metadata:
  name: web
  namespace: certs
  annotations:
    kubernetes.io/ingress.class: alb
    alb.ingress.kubernetes.io/scheme: internet-facing
    alb.ingress.kubernetes.io/create-acm-cert: "true"
spec:
  rules:
  - host: shop.example.com
    http:
      paths:
      - {path: /, pathType: Prefix, backend: {service: {name: web, port: {number: 80}}}}
"#;

fn raw_acm(moto: &Moto) -> aws_sdk_acm::Client {
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

fn raw_route53(moto: &Moto) -> aws_sdk_route53::Client {
    use aws_sdk_route53::config::{BehaviorVersion, Credentials, Region};
    aws_sdk_route53::Client::from_conf(
        aws_sdk_route53::config::Builder::new()
            .behavior_version(BehaviorVersion::latest())
            .region(Region::new("us-west-2"))
            .endpoint_url(&moto.endpoint)
            .credentials_provider(Credentials::new("testing", "testing", None, None, "test"))
            .build(),
    )
}

async fn certificate_arns(acm: &aws_sdk_acm::Client) -> Vec<String> {
    let out = acm.list_certificates().send().await.unwrap();
    out.certificate_summary_list()
        .iter()
        .filter_map(|c| c.certificate_arn().map(String::from))
        .collect()
}

async fn cname_count(r53: &aws_sdk_route53::Client, zone_id: &str) -> usize {
    let out = r53
        .list_resource_record_sets()
        .hosted_zone_id(zone_id)
        .send()
        .await
        .unwrap();
    out.resource_record_sets()
        .iter()
        .filter(|r| r.r#type().as_str() == "CNAME")
        .count()
}

async fn hostname(api: &Api<Ingress>) -> Option<String> {
    let ing = api.get_opt("web").await.ok()??;
    ing.status?
        .load_balancer?
        .ingress?
        .first()?
        .hostname
        .clone()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn create_acm_cert_through_the_binary_serves_then_deletes_the_certificate() {
    let c = cloud_on(Moto::start_with_acm_validation_wait(2)).await;
    let r53 = raw_route53(&c.moto);
    let zone = r53
        .create_hosted_zone()
        .name("example.com")
        .caller_reference("e2e-acm-create")
        .send()
        .await
        .unwrap();
    let zone_id = zone.hosted_zone().unwrap().id().to_string();
    let acm = raw_acm(&c.moto);

    let k8s = Cluster::start().await;
    let (client, kubeconfig) = (k8s.client.clone(), k8s.kubeconfig.clone());
    let ctl = k8s.controller(&[
        "--cluster-name=e2e".into(),
        "--aws-region=us-west-2".into(),
        format!("--aws-vpc-id={}", c.vpc),
        format!(
            "--aws-api-endpoints=elasticloadbalancing={0},ec2={0},acm={0},route53={0}",
            c.moto.endpoint
        ),
        "--feature-gates=EnableCertificateManagement=true".into(),
    ]);
    ctl.wait_for_log("became leader", WAIT);
    let (ok, out) = kubectl(&kubeconfig, &["apply", "-f", "-"], Some(APP));
    assert!(ok, "{out}");
    let ingresses: Api<Ingress> = Api::namespaced(client.clone(), "certs");
    eventually("the Ingress gets its status", WAIT, || async {
        hostname(&ingresses).await.is_some()
    })
    .await;

    // One certificate, issued, tagged for the stack, served on HTTPS:443; its record in the zone.
    let arns = certificate_arns(&acm).await;
    assert_eq!(arns.len(), 1, "{arns:?}");
    let desc = acm
        .describe_certificate()
        .certificate_arn(&arns[0])
        .send()
        .await
        .unwrap();
    let cert = desc.certificate().unwrap();
    assert_eq!(cert.status().map(|s| s.as_str()), Some("ISSUED"));
    assert_eq!(cert.domain_name(), Some("shop.example.com"));
    let tags = acm
        .list_tags_for_certificate()
        .certificate_arn(&arns[0])
        .send()
        .await
        .unwrap();
    assert!(
        tags.tags()
            .iter()
            .any(|t| t.key() == "ingress.k8s.aws/stack" && t.value() == Some(STACK)),
        "{tags:?}"
    );
    let inv = inventory(c.elb.as_ref(), c.ec2.as_ref(), STACK).await;
    assert_eq!(inv.listeners.len(), 1, "{inv:#?}");
    assert_eq!(inv.listeners[0].port, 443);
    assert_eq!(inv.listeners[0].certificates, arns);
    assert_eq!(cname_count(&r53, &zone_id).await, 1);

    // Deleted with the Ingress.
    let (ok, out) = kubectl(
        &kubeconfig,
        &["delete", "ingress", "-n", "certs", "web", "--wait=false"],
        None,
    );
    assert!(ok, "{out}");
    eventually("the Ingress is gone", WAIT, || async {
        ingresses.get_opt("web").await.unwrap().is_none()
    })
    .await;
    let inv = inventory(c.elb.as_ref(), c.ec2.as_ref(), STACK).await;
    assert!(inv.is_empty() && inv.listeners.is_empty(), "{inv:#?}");
    assert_eq!(certificate_arns(&acm).await, Vec::<String>::new());
    assert_eq!(cname_count(&r53, &zone_id).await, 0);

    drop(ctl);
    k8s.server.stop().await;
}
