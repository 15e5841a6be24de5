//! A Service view keeps exactly what the Ingress model reads: rebuilt, it carries only those
//! fields, and the model built from the rebuilt Services equals the model built from the whole
//! ones (ip and instance targets, a named health-check port, Service tags and target type
//! overriding the Ingress's, a weighted forward to two Services, an IPv6 Service).

use k8s_openapi::api::core::v1::Service;
use k8s_openapi::api::networking::v1::Ingress;
use serde_json::json;

use super::*;
use crate::model::{build_stack, load_groups, ClusterObjects, ModelConfig};

const CLUSTER: &str = r#"
apiVersion: v1
kind: Service
metadata:
  name: web
  namespace: shop
  uid: 11111111-2222-3333-4444-555555555555
  resourceVersion: "42"
  labels: {app: web}
  annotations:
    kubectl.kubernetes.io/last-applied-configuration: '{"kind":"Service","metadata":{"name":"web"}}'
    alb.ingress.kubernetes.io/target-type: ip
    alb.ingress.kubernetes.io/healthcheck-port: metrics
    alb.ingress.kubernetes.io/tags: team=web
    service.beta.kubernetes.io/aws-load-balancer-type: external
spec:
  type: ClusterIP
  clusterIP: 10.0.0.10
  clusterIPs: [10.0.0.10]
  ipFamilies: [IPv4]
  ipFamilyPolicy: SingleStack
  selector: {app: web}
  sessionAffinity: None
  ports:
  - {name: http, port: 80, targetPort: 8080, protocol: TCP}
  - {name: metrics, port: 9090, targetPort: 9091, protocol: TCP}
status: {loadBalancer: {}}
---
apiVersion: v1
kind: Service
metadata: {name: api, namespace: shop, uid: aaaaaaaa-0000-0000-0000-000000000001}
spec:
  type: NodePort
  selector: {app: api}
  ports:
  - {name: grpc, port: 50051, targetPort: grpc, nodePort: 31000, protocol: TCP}
---
apiVersion: v1
kind: Service
metadata: {name: unrelated, namespace: shop, uid: bbbbbbbb-0000-0000-0000-000000000002}
spec: {ports: [{port: 1}]}
---
apiVersion: v1
kind: Service
metadata: {name: web, namespace: elsewhere, uid: cccccccc-0000-0000-0000-000000000003}
spec: {ports: [{name: http, port: 80}]}
---
apiVersion: networking.k8s.io/v1
kind: Ingress
metadata:
  name: shop
  namespace: shop
  annotations:
    kubernetes.io/ingress.class: alb
    alb.ingress.kubernetes.io/actions.split: >-
      {"type":"forward","forwardConfig":{"targetGroups":[{"serviceName":"web","servicePort":"http","weight":70},{"serviceName":"api","servicePort":50051,"weight":30}]}}
spec:
  rules:
  - http:
      paths:
      - {path: /web, pathType: Prefix, backend: {service: {name: web, port: {name: http}}}}
      - {path: /api, pathType: Prefix, backend: {service: {name: api, port: {number: 50051}}}}
      - {path: /split, pathType: Prefix, backend: {service: {name: split, port: {name: use-annotation}}}}
"#;

fn objects(yaml: &str) -> ClusterObjects {
    let mut objs = ClusterObjects::default();
    for d in crate::plan::parse_documents(yaml).unwrap() {
        match d["kind"].as_str() {
            Some("Service") => objs.services.push(serde_json::from_value(d).unwrap()),
            _ => objs.ingresses.push(serde_json::from_value(d).unwrap()),
        }
    }
    objs
}

fn views(services: &[Service]) -> ServiceViews {
    let views = ServiceViews::default();
    for s in services {
        let key = (
            s.metadata.namespace.clone().unwrap_or_default(),
            s.metadata.name.clone().unwrap_or_default(),
        );
        views.set(key, Arc::new(ServiceView::of(s)));
    }
    views
}

/// The group's stack (or its error) built from `objs`, as text to compare.
fn built(objs: &ClusterObjects) -> String {
    let cfg = ModelConfig {
        cluster_name: "cluster".into(),
        vpc_id: Some("vpc-1".into()),
        ..Default::default()
    };
    let (groups, errors) = load_groups(objs, "alb");
    assert!(errors.is_empty(), "{errors:?}");
    let group = groups.values().next().expect("one group");
    format!("{:#?}", build_stack(group, objs, &cfg, &Default::default()))
}

/// `objs` with its Services replaced by those the views rebuild for its Ingresses.
fn through_views(objs: &ClusterObjects) -> ClusterObjects {
    let readers: Vec<&Ingress> = objs.ingresses.iter().collect();
    ClusterObjects {
        services: views(&objs.services).named_by(&readers),
        ..objs.clone()
    }
}

#[test]
fn a_rebuilt_service_carries_exactly_the_fields_the_model_reads() {
    let objs = objects(CLUSTER);
    let rebuilt = ServiceView::of(&objs.services[0]).to_service("shop", "web");
    let want: Service = serde_json::from_value(json!({
        "metadata": {"name": "web", "namespace": "shop",
            "uid": "11111111-2222-3333-4444-555555555555",
            "annotations": {
                "alb.ingress.kubernetes.io/target-type": "ip",
                "alb.ingress.kubernetes.io/healthcheck-port": "metrics",
                "alb.ingress.kubernetes.io/tags": "team=web"}},
        "spec": {"ports": [
            {"name": "http", "port": 80, "targetPort": 8080},
            {"name": "metrics", "port": 9090, "targetPort": 9091}]}
    }))
    .unwrap();
    assert_eq!(rebuilt, want);
    let bare = ServiceView::of(&objs.services[2]).to_service("shop", "unrelated");
    assert_eq!(
        bare.metadata.annotations, None,
        "no annotation kept, none shown"
    );
}

#[test]
fn only_the_services_the_ingresses_mention_are_rebuilt() {
    let objs = through_views(&objects(CLUSTER));
    let names: Vec<String> = objs
        .services
        .iter()
        .map(|s| crate::model::group::key_of(&s.metadata))
        .collect();
    assert_eq!(names, ["shop/api", "shop/web"]);
}

#[test]
fn the_model_from_views_equals_the_model_from_whole_services() {
    let whole = objects(CLUSTER);
    let from_whole = built(&whole);
    assert!(from_whole.starts_with("Ok("), "{from_whole}");
    assert_eq!(built(&through_views(&whole)), from_whole);
}

#[test]
fn an_ipv6_service_fails_the_same_way_from_its_view() {
    let yaml = CLUSTER.replace("ipFamilies: [IPv4]", "ipFamilies: [IPv6]");
    let whole = objects(&yaml);
    let from_whole = built(&whole);
    assert!(from_whole.contains("lb not dual-stack"), "{from_whole}");
    assert_eq!(built(&through_views(&whole)), from_whole);
}
