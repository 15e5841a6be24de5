//! The setting of the end-to-end tests: an API test server with our CRDs, a kubeconfig and a
//! serving certificate on disk, the real controller binary pointed at them, and the check that
//! every request the controller made is allowed by the chart's RBAC.

use std::collections::BTreeSet;
use std::path::PathBuf;

use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
use kube::api::{Api, PostParams};
use kube_test_apiserver::{Options, RequestRecord, TestApiServer};
use webhook_certs::Bundle;

use super::process::Controller;
use super::rbac::grants_for;
use super::{test_bundle, write_pair_atomic};

pub struct Cluster {
    pub server: TestApiServer,
    pub client: kube::Client,
    pub dir: tempfile::TempDir,
    pub kubeconfig: PathBuf,
    /// The webhook serving certificate written to `dir` (its CA goes into caBundles).
    pub bundle: Bundle,
}

impl Cluster {
    pub async fn start() -> Cluster {
        let server = TestApiServer::start(Options::default()).await.unwrap();
        let client = server.client();
        let dir = tempfile::tempdir().unwrap();
        let kubeconfig = dir.path().join("kubeconfig");
        server.write_kubeconfig(&kubeconfig).unwrap();
        let crds: Api<CustomResourceDefinition> = Api::all(client.clone());
        for crd in aws_load_balancer_controller::crd::all_crds() {
            crds.create(&PostParams::default(), &crd).await.unwrap();
        }
        let bundle = test_bundle(None);
        write_pair_atomic(dir.path(), &bundle);
        Cluster {
            server,
            client,
            dir,
            kubeconfig,
            bundle,
        }
    }

    /// Starts the binary on this cluster's kubeconfig and certificate, plus `extra` flags.
    pub fn controller(&self, extra: &[String]) -> Controller {
        self.controller_with_env(extra, &[])
    }

    /// As [`Cluster::controller`], with environment variables `env` set for the process.
    pub fn controller_with_env(&self, extra: &[String], env: &[(&str, &str)]) -> Controller {
        let mut args = vec![
            format!("--webhook-cert-dir={}", self.dir.path().display()),
            format!("--kubeconfig={}", self.kubeconfig.display()),
        ];
        args.extend_from_slice(extra);
        Controller::start_with_env(&args, env)
    }

    /// Asserts the controller made each of `expected` (as `RequestRecord::describe` prints it)
    /// and nothing the chart's RBAC (default values) would forbid.
    pub fn assert_requests_allowed_by_chart(&self, expected: &[&str]) {
        self.assert_requests_allowed_by_chart_and(expected, &[]);
    }

    /// [`Self::assert_requests_allowed_by_chart`] with `extra` RBAC objects beside the chart's
    /// (what a user adds, e.g. a namespaced Role naming the Secrets OIDC reads).
    pub fn assert_requests_allowed_by_chart_and(
        &self,
        expected: &[&str],
        extra: &[serde_yaml::Value],
    ) {
        // The controller authenticates with the kubeconfig's token; test clients send none.
        let records: Vec<RequestRecord> = self
            .server
            .requests()
            .into_iter()
            .filter(|r| r.user.is_some())
            .collect();
        let did: BTreeSet<String> = records.iter().map(RequestRecord::describe).collect();
        for want in expected {
            assert!(did.contains(*want), "no `{want}` among {did:#?}");
        }
        let mut docs = crate::chart::docs(&crate::chart::render(&["--set", "clusterName=e2e"]));
        docs.extend_from_slice(extra);
        let grants = grants_for(&docs, "kube-system", "aws-load-balancer-controller");
        let denied: BTreeSet<String> = records
            .iter()
            .filter(|r| !grants.allows(r))
            .map(RequestRecord::describe)
            .collect();
        assert!(
            denied.is_empty(),
            "forbidden by the chart's RBAC: {denied:#?}"
        );
    }
}
