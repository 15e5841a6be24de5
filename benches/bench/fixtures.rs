//! What several benches start from: group-shaped Ingress manifests and a fake account with a VPC
//! and three internal subnets, behind upstream's default client throttles and retries.

use std::sync::Arc;

use aws_load_balancer_controller::aws::fake::FakeAws;
use aws_load_balancer_controller::aws::{Caller, Tags};

/// `groups` explicit groups of `per_group` Ingresses, each with its own NodePort Service.
pub fn ingress_manifests(groups: usize, per_group: usize) -> String {
    let mut y = String::new();
    for g in 0..groups {
        for i in 0..per_group {
            y.push_str(&format!(
                "apiVersion: v1\nkind: Service\nmetadata: {{name: svc{i}, namespace: ns{g}, uid: u-{g}-{i}}}\n\
                 spec: {{type: NodePort, ports: [{{port: 80, targetPort: 8080, nodePort: {np}}}]}}\n---\n\
                 apiVersion: networking.k8s.io/v1\nkind: Ingress\nmetadata:\n  name: ing{i}\n  namespace: ns{g}\n  annotations:\n\
                 \x20   kubernetes.io/ingress.class: alb\n    alb.ingress.kubernetes.io/group.name: group{g}\n\
                 spec:\n  rules:\n  - host: app{i}.group{g}.example.com\n    http:\n      paths:\n\
                 \x20     - {{path: /, pathType: Prefix, backend: {{service: {{name: svc{i}, port: {{number: 80}}}}}}}}\n---\n",
                np = 30000 + i
            ));
        }
    }
    y
}

/// A fake account (upstream's default throttles, 10 SDK retries) with a VPC and one internal
/// subnet in each of three zones; returns it and the VPC id.
pub fn fake_account() -> (Arc<FakeAws>, String) {
    let caller = Caller::from_flags(&[], 10, None);
    let fake = Arc::new(FakeAws::with_caller("us-west-2", caller));
    let vpc = fake.add_vpc("10.0.0.0/16", Tags::new());
    for (i, az) in ["a", "b", "c"].iter().enumerate() {
        let role: Tags = [(
            "kubernetes.io/role/internal-elb".to_string(),
            "1".to_string(),
        )]
        .into();
        fake.add_subnet(
            &vpc,
            &format!("10.0.{i}.0/24"),
            &format!("us-west-2{az}"),
            role,
        )
        .expect("subnet");
    }
    (fake, vpc)
}

/// An API test server with our CRDs installed (the controllers' benches run against it).
pub async fn api_server_with_crds() -> kube_test_apiserver::TestApiServer {
    use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
    use kube::api::{Api, PostParams};
    let server = kube_test_apiserver::TestApiServer::start(kube_test_apiserver::Options::default())
        .await
        .expect("apiserver");
    let crds: Api<CustomResourceDefinition> = Api::all(server.client());
    for crd in aws_load_balancer_controller::crd::all_crds() {
        crds.create(&PostParams::default(), &crd).await.unwrap();
    }
    server
}
