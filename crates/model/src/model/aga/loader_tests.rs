//! Replays upstream's `pkg/aga/endpoint_loader_test.go` (11 of 13 cases: its constructor case
//! checks a Go type, and a nil endpoint reference cannot be built here), with the objects in an
//! [`EndpointObjects`] and the DNS lookup over described load balancers where upstream mocks a
//! client and a resolver; then the failures upstream's tests leave out, with their texts.

use serde_json::{json, Value};

use super::*;
use crate::crd::global_accelerator::GlobalAcceleratorEndpointType as T;
use crate::model::aga::endpoints::desired_endpoints;
use crate::model::aga::test_support::{by_id, ga, named, named_in};

const SVC_DNS: &str = "test-lb-1234567890.us-west-2.elb.amazonaws.com";
const SVC_ARN: &str =
    "arn:aws:elasticloadbalancing:us-west-2:123456789012:loadbalancer/app/test-lb/1234567890";

fn lb(dns_name: &str, arn: &str) -> DescribedLoadBalancer {
    DescribedLoadBalancer {
        dns_name: dns_name.into(),
        arn: arn.into(),
    }
}

fn svc(namespace: &str, name: &str, spec: Value, status: Value) -> Service {
    serde_json::from_value(json!({
        "apiVersion": "v1", "kind": "Service",
        "metadata": {"name": name, "namespace": namespace},
        "spec": spec, "status": status
    }))
    .unwrap()
}

fn lb_service(namespace: &str) -> Service {
    svc(
        namespace,
        "test-service",
        json!({"type": "LoadBalancer"}),
        json!({"loadBalancer": {"ingress": [{"hostname": SVC_DNS}]}}),
    )
}

fn grant(namespace: &str, from_namespace: &str, to: Value) -> ReferenceGrant {
    serde_json::from_value(json!({
        "apiVersion": "gateway.networking.k8s.io/v1beta1", "kind": "ReferenceGrant",
        "metadata": {"name": "allow-ga-to-service", "namespace": namespace},
        "spec": {
            "from": [{"group": "aga.k8s.aws", "kind": "GlobalAccelerator", "namespace": from_namespace}],
            "to": [to]
        }
    }))
    .unwrap()
}

#[test]
fn service() {
    let source = EndpointObjects {
        services: vec![lb_service("default")],
        load_balancers: vec![lb(SVC_DNS, SVC_ARN)],
        ..Default::default()
    };
    let e = load_endpoint(&source, &named(T::Service, "test-service"), "default");
    assert_eq!(e.status, LoadedEndpointStatus::Loaded);
    assert_eq!(e.dns_name, SVC_DNS);
    assert_eq!(e.arn, SVC_ARN);
    assert_eq!(e.error, None);
    assert_eq!(
        e.message,
        "Successfully resolved Service to LoadBalancer ARN"
    );
    assert!(matches!(e.resource, Some(EndpointResource::Service(_))));
    assert!(!e.cross_namespace_allowed);
}

#[test]
fn service_error() {
    let e = load_endpoint(
        &EndpointObjects::default(),
        &named(T::Service, "non-existent-service"),
        "default",
    );
    assert_eq!(e.status, LoadedEndpointStatus::Warning);
    assert!(e.message.contains("not found"), "{}", e.message);
    assert_eq!(
        e.error.unwrap().to_string(),
        "Warning error for endpoint Service/default/non-existent-service: Referenced resource not found - services \"non-existent-service\" not found"
    );
}

#[test]
fn cross_namespace() {
    let source = EndpointObjects {
        services: vec![lb_service("other-namespace")],
        reference_grants: vec![grant(
            "other-namespace",
            "default",
            json!({"group": "", "kind": "Service"}),
        )],
        load_balancers: vec![lb(SVC_DNS, SVC_ARN)],
        ..Default::default()
    };
    let e = load_endpoint(
        &source,
        &named_in(T::Service, "other-namespace", "test-service"),
        "default",
    );
    assert_eq!(e.status, LoadedEndpointStatus::Loaded);
    assert_eq!(e.dns_name, SVC_DNS);
    assert_eq!(e.arn, SVC_ARN);
    assert_eq!(e.error, None);
    assert!(e.cross_namespace_allowed);
}

#[test]
fn cross_namespace_not_allowed() {
    // No grant; and grants that do not fit (another kind, another source namespace, another
    // name, a grant in another namespace) change nothing.
    for grants in [
        vec![],
        vec![grant(
            "other-namespace",
            "default",
            json!({"group": "networking.k8s.io", "kind": "Ingress"}),
        )],
        vec![grant(
            "other-namespace",
            "elsewhere",
            json!({"group": "", "kind": "Service"}),
        )],
        vec![grant(
            "other-namespace",
            "default",
            json!({"group": "", "kind": "Service", "name": "another"}),
        )],
        vec![grant(
            "third",
            "default",
            json!({"group": "", "kind": "Service"}),
        )],
    ] {
        let source = EndpointObjects {
            services: vec![lb_service("other-namespace")],
            reference_grants: grants,
            load_balancers: vec![lb(SVC_DNS, SVC_ARN)],
            ..Default::default()
        };
        let e = load_endpoint(
            &source,
            &named_in(T::Service, "other-namespace", "test-service"),
            "default",
        );
        assert_eq!(e.status, LoadedEndpointStatus::Warning);
        assert!(e.message.contains("Cross-namespace reference denied"));
        assert!(!e.cross_namespace_allowed);
        assert_eq!(
            e.error.unwrap().to_string(),
            "Warning error for endpoint Service/other-namespace/test-service: Cross-namespace reference denied - <nil>"
        );
    }
}

#[test]
fn service_no_load_balancer() {
    let source = EndpointObjects {
        services: vec![svc(
            "default",
            "test-service",
            json!({"type": "ClusterIP"}),
            json!({}),
        )],
        ..Default::default()
    };
    let e = load_endpoint(&source, &named(T::Service, "test-service"), "default");
    assert_eq!(e.status, LoadedEndpointStatus::Warning);
    assert!(e.message.contains("Resource does not have a LoadBalancer"));
    assert_eq!(
        e.error.unwrap().cause.as_deref(),
        Some("service default/test-service is not of type LoadBalancer")
    );
}

#[test]
fn ingress() {
    let dns = "test-ing-1234567890.us-west-2.elb.amazonaws.com";
    let arn =
        "arn:aws:elasticloadbalancing:us-west-2:123456789012:loadbalancer/app/test-ing/1234567890";
    let source = EndpointObjects {
        ingresses: vec![serde_json::from_value(json!({
            "apiVersion": "networking.k8s.io/v1", "kind": "Ingress",
            "metadata": {"name": "test-ingress", "namespace": "default"},
            "status": {"loadBalancer": {"ingress": [{"hostname": dns}]}}
        }))
        .unwrap()],
        load_balancers: vec![lb(dns, arn)],
        ..Default::default()
    };
    let e = load_endpoint(&source, &named(T::Ingress, "test-ingress"), "default");
    assert_eq!(e.status, LoadedEndpointStatus::Loaded);
    assert_eq!((e.dns_name.as_str(), e.arn.as_str()), (dns, arn));
    assert_eq!(e.error, None);
    assert_eq!(
        e.message,
        "Successfully resolved Ingress to LoadBalancer ARN"
    );
}

#[test]
fn gateway() {
    let dns = "test-gw-1234567890.us-west-2.elb.amazonaws.com";
    let arn =
        "arn:aws:elasticloadbalancing:us-west-2:123456789012:loadbalancer/app/test-gw/1234567890";
    let source = EndpointObjects {
        gateways: vec![serde_json::from_value(json!({
            "apiVersion": "gateway.networking.k8s.io/v1", "kind": "Gateway",
            "metadata": {"name": "test-gateway", "namespace": "default"},
            "spec": {"gatewayClassName": "c", "listeners": []},
            "status": {"addresses": [{"type": "Hostname", "value": dns}]}
        }))
        .unwrap()],
        load_balancers: vec![lb(dns, arn)],
        ..Default::default()
    };
    let e = load_endpoint(&source, &named(T::Gateway, "test-gateway"), "default");
    assert_eq!(e.status, LoadedEndpointStatus::Loaded);
    assert_eq!((e.dns_name.as_str(), e.arn.as_str()), (dns, arn));
    assert_eq!(e.error, None);
}

#[test]
fn endpoint_id() {
    let id = "arn:aws:elasticloadbalancing:us-west-2:123456789012:loadbalancer/app/direct-arn/1234567890";
    let e = load_endpoint(&EndpointObjects::default(), &by_id(id), "default");
    assert_eq!(e.status, LoadedEndpointStatus::Loaded);
    assert_eq!(e.arn, id);
    assert_eq!(e.error, None);
    assert_eq!(e.message, "Using provided EndpointID directly");
}

fn ga_with(endpoints: Value) -> crate::crd::global_accelerator::GlobalAccelerator {
    ga(
        "default",
        "test-ga",
        json!({"listeners": [{"endpointGroups": [{"endpoints": endpoints}]}]}),
    )
}

#[test]
fn load_endpoints_all() {
    let source = EndpointObjects {
        services: vec![lb_service("default")],
        load_balancers: vec![lb(SVC_DNS, SVC_ARN)],
        ..Default::default()
    };
    let object = ga_with(json!([{"type": "Service", "name": "test-service"}]));
    let (loaded, fatal) = load_endpoints(&source, &object, &desired_endpoints(&object));
    assert_eq!(loaded.len(), 1);
    assert!(fatal.is_empty());
    assert_eq!(loaded[0].status, LoadedEndpointStatus::Loaded);
    assert_eq!(loaded[0].dns_name, SVC_DNS);
    assert_eq!(loaded[0].arn, SVC_ARN);
}

#[test]
fn load_endpoints_with_error() {
    let id = "arn:aws:elasticloadbalancing:us-west-2:123456789012:loadbalancer/app/direct-arn/1234567890";
    let object = ga_with(json!([
        {"type": "Service", "name": "non-existent-service"},
        {"type": "EndpointID", "endpointID": id}
    ]));
    let (loaded, fatal) = load_endpoints(
        &EndpointObjects::default(),
        &object,
        &desired_endpoints(&object),
    );
    assert_eq!(loaded.len(), 2);
    assert!(fatal.is_empty(), "a missing Service is a warning");
    assert_eq!(loaded[0].status, LoadedEndpointStatus::Warning);
    assert_eq!(loaded[1].status, LoadedEndpointStatus::Loaded);
    assert_eq!(loaded[1].arn, id);
}

#[test]
fn load_endpoints_with_missing_service_is_no_fatal_error() {
    let object = ga_with(json!([{"type": "Service", "name": "error-service-nonexistent"}]));
    let (loaded, fatal) = load_endpoints(
        &EndpointObjects::default(),
        &object,
        &desired_endpoints(&object),
    );
    assert_eq!(loaded.len(), 1);
    assert!(fatal.is_empty());
    assert_eq!(loaded[0].status, LoadedEndpointStatus::Warning);
    assert!(loaded[0].error.is_some());
}

/// A source whose reads fail, as an API server that cannot be reached.
struct Unreachable;

impl EndpointSource for Unreachable {
    fn service(&self, _: &str, _: &str) -> Lookup<Service> {
        Lookup::Failed("connection refused".into())
    }
    fn ingress(&self, _: &str, _: &str) -> Lookup<Ingress> {
        Lookup::Failed("connection refused".into())
    }
    fn gateway(&self, _: &str, _: &str) -> Lookup<Gateway> {
        Lookup::Failed("connection refused".into())
    }
    fn reference_grants(&self, _: &str) -> Result<Vec<ReferenceGrant>, String> {
        Err("connection refused".into())
    }
    fn load_balancer_arn(&self, _: &str) -> Result<String, String> {
        Err("not reached".into())
    }
}

#[test]
fn unreadable_objects_and_empty_ids_are_fatal() {
    let object = ga_with(json!([
        {"type": "Ingress", "name": "web"},
        {"type": "Gateway", "name": "gw", "namespace": "other"},
        {"type": "EndpointID", "endpointID": ""}
    ]));
    let (loaded, fatal) = load_endpoints(&Unreachable, &object, &desired_endpoints(&object));
    assert!(loaded
        .iter()
        .all(|e| e.status == LoadedEndpointStatus::Fatal));
    let texts: Vec<String> = fatal.iter().map(ToString::to_string).collect();
    assert_eq!(
        texts,
        vec![
            "Fatal error for endpoint Ingress/default/web: Error contacting Kubernetes API server - connection refused",
            "Fatal error for endpoint Gateway/other/gw: Error contacting Kubernetes API server - connection refused",
            "Fatal error for endpoint EndpointID/: EndpointID is required for EndpointID type - endpointID is required for endpoint type EndpointID",
        ]
    );
    assert_eq!(loaded[0].message, "Error contacting Kubernetes API server");
}

#[test]
fn load_balancer_dns_failures_are_warnings_with_upstreams_texts() {
    let cause = |source: &EndpointObjects, endpoint| {
        let e = load_endpoint(source, &endpoint, "default");
        assert_eq!(e.status, LoadedEndpointStatus::Warning);
        e.error.unwrap().cause.unwrap_or_default()
    };
    // A Service whose load balancer is not among the described ones.
    let source = EndpointObjects {
        services: vec![lb_service("default")],
        load_balancers: vec![lb("other.elb.amazonaws.com", SVC_ARN)],
        ..Default::default()
    };
    assert_eq!(
        cause(&source, named(T::Service, "test-service")),
        format!(
            "failed to resolve DNS name {SVC_DNS} to ARN: no load balancer found for dns {SVC_DNS}"
        )
    );
    // Describing failed.
    let source = EndpointObjects {
        services: vec![lb_service("default")],
        describe_error: Some("Throttling".into()),
        ..Default::default()
    };
    assert_eq!(
        cause(&source, named(T::Service, "test-service")),
        format!("failed to resolve DNS name {SVC_DNS} to ARN: failed to describe load balancers: Throttling")
    );
    // A LoadBalancer Service without status, and one with an IP only.
    let source = EndpointObjects {
        services: vec![
            svc(
                "default",
                "pending",
                json!({"type": "LoadBalancer"}),
                json!({}),
            ),
            svc(
                "default",
                "ip-only",
                json!({"type": "LoadBalancer"}),
                json!({"loadBalancer": {"ingress": [{"ip": "192.0.2.1"}]}}),
            ),
        ],
        ..Default::default()
    };
    assert_eq!(
        cause(&source, named(T::Service, "pending")),
        "service default/pending does not have a LoadBalancer"
    );
    assert_eq!(
        cause(&source, named(T::Service, "ip-only")),
        "service default/ip-only LoadBalancer has no DNS name"
    );
    // Ingresses without status, and with an NLB hostname only.
    let ingress = |name: &str, status: Value| -> Ingress {
        serde_json::from_value(json!({
            "apiVersion": "networking.k8s.io/v1", "kind": "Ingress",
            "metadata": {"name": name, "namespace": "default"}, "status": status
        }))
        .unwrap()
    };
    let source = EndpointObjects {
        ingresses: vec![
            ingress("pending", json!({})),
            ingress(
                "nlb-only",
                json!({"loadBalancer": {"ingress": [{"hostname": "x.elb.us-west-2.amazonaws.com"}]}}),
            ),
        ],
        ..Default::default()
    };
    assert_eq!(
        cause(&source, named(T::Ingress, "pending")),
        "ingress default/pending does not have a LoadBalancer"
    );
    assert_eq!(
        cause(&source, named(T::Ingress, "nlb-only")),
        "ingress default/nlb-only LoadBalancer has no DNS name"
    );
    // Gateways without addresses, and with an IP address only.
    let gateway = |name: &str, status: Value| -> Gateway {
        serde_json::from_value(json!({
            "apiVersion": "gateway.networking.k8s.io/v1", "kind": "Gateway",
            "metadata": {"name": name, "namespace": "default"},
            "spec": {"gatewayClassName": "c", "listeners": []}, "status": status
        }))
        .unwrap()
    };
    let source = EndpointObjects {
        gateways: vec![
            gateway("pending", json!({})),
            gateway(
                "ip-only",
                json!({"addresses": [{"type": "IPAddress", "value": "192.0.2.1"}]}),
            ),
        ],
        ..Default::default()
    };
    assert_eq!(
        cause(&source, named(T::Gateway, "pending")),
        "gateway default/pending does not have any addresses"
    );
    assert_eq!(
        cause(&source, named(T::Gateway, "ip-only")),
        "gateway default/ip-only has no hostname address"
    );
    // Missing objects name the resource as the API server does.
    let empty = EndpointObjects::default();
    assert_eq!(
        cause(&empty, named(T::Ingress, "gone")),
        "ingresses.networking.k8s.io \"gone\" not found"
    );
    assert_eq!(
        cause(&empty, named(T::Gateway, "gone")),
        "gateways.gateway.networking.k8s.io \"gone\" not found"
    );
}

#[test]
fn the_alb_hostname_is_the_last_elb_one() {
    let ing: Ingress = serde_json::from_value(json!({
        "apiVersion": "networking.k8s.io/v1", "kind": "Ingress",
        "metadata": {"name": "web", "namespace": "default"},
        "status": {"loadBalancer": {"ingress": [
            {"hostname": "a.us-west-2.elb.amazonaws.com"},
            {"hostname": "nlb.example.com"},
            {"hostname": "b.us-west-2.elb.amazonaws.com"}
        ]}}
    }))
    .unwrap();
    assert_eq!(ingress_alb_dns(&ing), Some("b.us-west-2.elb.amazonaws.com"));
    assert_eq!(ingress_dns(&ing).unwrap(), "b.us-west-2.elb.amazonaws.com");
}
