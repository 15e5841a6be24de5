//! ACM certificate creation end to end on moto through the real SDK clients (ACM, Route 53 and
//! ELBv2 as the binary builds them): an Ingress with `create-acm-cert` (gate
//! `EnableCertificateManagement`) → a certificate requested with the tracking tags, its DNS
//! validation record written into the hosted zone, issued (moto issues after
//! `MOTO_ACM_VALIDATION_WAIT`, shortened here), and served by the HTTPS listener; a redeploy writes
//! nothing; deleting the stack deletes the certificate and its record after the load balancer.

use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use aws_load_balancer_controller::aws::fence::is_write;
use aws_load_balancer_controller::aws::{
    build_acm_fenced, build_route53, parse_api_endpoints, AwsConfig, AwsMetrics, Fence,
};
use aws_load_balancer_controller::deploy::{CertificateTiming, Certificates, Deployer};
use aws_load_balancer_controller::model::{self, BuildEnv, ClusterObjects, ModelConfig};
use aws_load_balancer_controller::plan::add_manifests;
use prometheus_client::registry::Registry;

use super::acm_discovery::raw_acm;
use super::functional::inventory;
use super::CLUSTER;
use crate::support::moto::Moto;
use crate::support::moto_cloud::{calls_by_op, cloud_on, new_writes};

const INGRESS: &str = r#"
apiVersion: v1
kind: Service
metadata: {name: web, namespace: acm, uid: 14141414-0000-0000-0000-000000000001}
spec: {type: NodePort, ports: [{port: 80, targetPort: 8080, nodePort: 30072}]}
---
apiVersion: networking.k8s.io/v1
kind: Ingress
metadata:
  name: web
  namespace: acm
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

/// The stack with the gate on, as the controller builds it.
fn stack(vpc: &str) -> model::Stack {
    let mut objs = ClusterObjects::default();
    add_manifests(&mut objs, INGRESS, Path::new("acm.yaml")).unwrap();
    let mut cfg = ModelConfig {
        cluster_name: CLUSTER.into(),
        vpc_id: Some(vpc.into()),
        ..ModelConfig::default()
    };
    cfg.feature_gates
        .insert("EnableCertificateManagement".into(), true);
    let (groups, errors) = model::load_groups(&objs, &cfg.ingress_class);
    assert!(errors.is_empty(), "{errors:?}");
    let g = groups.values().next().unwrap();
    model::build_stack(g, &objs, &cfg, &BuildEnv::default()).unwrap()
}

/// The ACM and Route 53 writes counted in `r` since `before`.
fn certificate_writes(
    r: &Registry,
    before: &std::collections::BTreeMap<String, f64>,
) -> Vec<String> {
    calls_by_op(r)
        .into_iter()
        .filter(|(op, _)| is_write(op))
        .filter_map(|(op, v)| {
            let d = v - before.get(&op).copied().unwrap_or(0.0);
            (d > 0.0).then(|| format!("{op}={d}"))
        })
        .collect()
}

/// The CNAME records of the zone `zone_id`.
async fn cnames(r53: &aws_sdk_route53::Client, zone_id: &str) -> Vec<(String, Vec<String>)> {
    let out = r53
        .list_resource_record_sets()
        .hosted_zone_id(zone_id)
        .send()
        .await
        .unwrap();
    out.resource_record_sets()
        .iter()
        .filter(|r| r.r#type().as_str() == "CNAME")
        .map(|r| {
            let values = r
                .resource_records()
                .iter()
                .map(|v| v.value().to_string())
                .collect();
            (r.name().to_string(), values)
        })
        .collect()
}

#[tokio::test]
async fn moto_a_created_certificate_is_validated_served_and_deleted_with_the_stack() {
    let c = cloud_on(Moto::start_with_acm_validation_wait(2)).await;
    let r53 = raw_route53(&c.moto);
    let zone = r53
        .create_hosted_zone()
        .name("example.com")
        .caller_reference("acm-create-test")
        .send()
        .await
        .unwrap();
    let zone_id = zone.hosted_zone().unwrap().id().to_string();

    // The certificate clients as the binary builds them (`acm=`, `route53=` endpoints),
    // metered apart: the ELBv2 registry's write check counts every non-Describe call.
    let mut registry = Registry::default();
    let metrics = AwsMetrics::register(&mut registry);
    let cfg = AwsConfig {
        region: Some("us-west-2".into()),
        api_endpoints: parse_api_endpoints(&format!("acm={0},route53={0}", c.moto.endpoint))
            .unwrap(),
        ..Default::default()
    };
    let acm = build_acm_fenced(&cfg, "us-west-2", Some(metrics.clone()), Fence::default()).await;
    let route53 = build_route53(&cfg, "us-west-2", Some(metrics), Fence::default()).await;
    let timing = CertificateTiming {
        issue_wait: Duration::from_secs(30),
        issue_interval: Duration::from_millis(500),
        records_interval: Duration::from_millis(200),
        ..CertificateTiming::default()
    };
    let d = Deployer::new(c.elb.clone(), c.ec2.clone(), CLUSTER, c.vpc.clone())
        .with_delete_retry(Duration::from_millis(100), Duration::from_secs(5))
        .with_certificate_management(Arc::new(
            Certificates::new(acm, route53).with_timing(timing),
        ));

    let stack = stack(&c.vpc);
    assert_eq!(stack.certificates.len(), 1);
    let id = stack.certificates[0].id.clone();
    let deployed = d.deploy(&stack).await.unwrap();
    let arn = deployed.certificate_arns[&id].clone();

    // Issued, with the tracking tags.
    let raw = raw_acm(&c.moto);
    let desc = raw
        .describe_certificate()
        .certificate_arn(&arn)
        .send()
        .await
        .unwrap();
    let cert = desc.certificate().unwrap();
    assert_eq!(cert.status().map(|s| s.as_str()), Some("ISSUED"));
    assert_eq!(cert.domain_name(), Some("shop.example.com"));
    let tags = raw
        .list_tags_for_certificate()
        .certificate_arn(&arn)
        .send()
        .await
        .unwrap();
    let tag = |k: &str| {
        tags.tags()
            .iter()
            .find(|t| t.key() == k)
            .and_then(|t| t.value())
            .map(String::from)
    };
    assert_eq!(tag("elbv2.k8s.aws/cluster").as_deref(), Some(CLUSTER));
    assert_eq!(tag("ingress.k8s.aws/stack").as_deref(), Some("acm/web"));
    assert_eq!(tag("ingress.k8s.aws/resource"), Some(id.clone()));

    // Its validation record, as ACM describes it, is in the zone.
    let record = cert.domain_validation_options()[0]
        .resource_record()
        .unwrap()
        .clone();
    assert_eq!(
        cnames(&r53, &zone_id).await,
        vec![(record.name().to_string(), vec![record.value().to_string()])]
    );

    // The HTTPS listener serves it.
    let inv = inventory(c.elb.as_ref(), c.ec2.as_ref(), "acm/web").await;
    assert_eq!(inv.listeners.len(), 1);
    assert_eq!(inv.listeners[0].port, 443);
    assert_eq!(inv.listeners[0].certificates, vec![arn.clone()]);

    // Converged: nothing written anywhere.
    let elb_before = calls_by_op(&c.registry);
    let cert_before = calls_by_op(&registry);
    let again = d.deploy(&stack).await.unwrap();
    assert_eq!(again.certificate_arns[&id], arn);
    assert_eq!(new_writes(&c.registry, &elb_before), Vec::<String>::new());
    assert_eq!(
        certificate_writes(&registry, &cert_before),
        Vec::<String>::new()
    );

    // Deleted with the stack: the load balancer first, then the certificate and its record.
    d.delete_stack("acm/web").await.unwrap();
    let inv = inventory(c.elb.as_ref(), c.ec2.as_ref(), "acm/web").await;
    assert!(inv.lbs.is_empty() && inv.listeners.is_empty());
    let gone = raw
        .describe_certificate()
        .certificate_arn(&arn)
        .send()
        .await;
    assert!(gone.is_err(), "{gone:?}");
    assert_eq!(cnames(&r53, &zone_id).await, vec![]);
}
