//! End to end with the real binary, the API test server and moto: an Ingress with `auth-type:
//! oidc` gets a rule whose authenticate-oidc action carries the client id and secret of its
//! Secret; a redeploy writes nothing; a changed Secret updates the action; a deleted Secret is a
//! `FailedBuildModel` Warning with upstream's error and no AWS write, the rule keeping its last
//! values. The secret never shows in the controller's logs or events, and every request the
//! controller made is allowed by the chart's RBAC plus the namespaced Role (resourceNames) that
//! upstream's docs ask users to create for OIDC Secrets — no cluster-wide Secret access. With
//! `--required-secrets-label`, a Secret without the label is as good as missing.

use std::time::Duration;

use crate::e2e_pod_gates::kubectl;
use crate::ingress::{events_of, inventory, WAIT};
use crate::support::e2e::Cluster;
use crate::support::moto_cloud::cloud;
use crate::tgb::eventually;
use aws_load_balancer_controller::aws::ElbV2;
use aws_load_balancer_controller::model::Action;

const STACK: &str = "demo/app";

/// moto takes IAM server-certificate ARNs without an ACM certificate behind them.
const APP: &str = r#"
apiVersion: v1
kind: Service
metadata: {name: front, namespace: demo}
spec: {type: NodePort, selector: {app: front}, ports: [{port: 80, targetPort: 8080, nodePort: 30090}]}
---
apiVersion: networking.k8s.io/v1
kind: Ingress
metadata:
  name: app
  namespace: demo
  annotations:
    kubernetes.io/ingress.class: alb
    alb.ingress.kubernetes.io/scheme: internet-facing
    alb.ingress.kubernetes.io/listen-ports: '[{"HTTPS": 443}]'
    alb.ingress.kubernetes.io/certificate-arn: arn:aws:iam::123456789012:server-certificate/e2e
    alb.ingress.kubernetes.io/auth-type: oidc
    alb.ingress.kubernetes.io/auth-idp-oidc: '{"issuer":"https://idp.example.com","authorizationEndpoint":"https://idp.example.com/auth","tokenEndpoint":"https://idp.example.com/token","userInfoEndpoint":"https://idp.example.com/userinfo","secretName":"oidc-creds"}'
spec:
  rules:
  - http:
      paths:
      - {path: /, pathType: Prefix, backend: {service: {name: front, port: {number: 80}}}}
"#;

/// The Secret as a manifest (`data`, base64): `clientID` e2e-client, `clientSecret` as given.
fn secret(client_secret: &str) -> String {
    use base64::Engine;
    let b64 = |s: &str| base64::engine::general_purpose::STANDARD.encode(s);
    format!(
        "apiVersion: v1\nkind: Secret\nmetadata: {{name: oidc-creds, namespace: demo}}\ntype: Opaque\ndata: {{clientID: {}, clientSecret: {}}}\n",
        b64("e2e-client"),
        b64(client_secret)
    )
}

/// What a user creates for the controller (upstream's docs): read access to that one Secret.
const USER_ROLE: &str = r#"
apiVersion: rbac.authorization.k8s.io/v1
kind: Role
metadata: {name: albc-oidc-secrets, namespace: demo}
rules:
- apiGroups: [""]
  resources: [secrets]
  resourceNames: [oidc-creds]
  verbs: [get, list, watch]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: RoleBinding
metadata: {name: albc-oidc-secrets, namespace: demo}
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: Role, name: albc-oidc-secrets}
subjects:
- {kind: ServiceAccount, name: aws-load-balancer-controller, namespace: kube-system}
"#;

/// (client id, client secret) of every authenticate-oidc action of the stack's rules, as moto
/// describes them (moto echoes the secret; AWS would not).
async fn oidc_actions(
    elb: &dyn ElbV2,
    ec2: &dyn aws_load_balancer_controller::aws::Ec2,
) -> Vec<(String, String)> {
    let inv = inventory(elb, ec2, STACK).await;
    inv.rules
        .iter()
        .flat_map(|(r, _)| r.actions.iter())
        .filter_map(|a| match a {
            Action::AuthenticateOidc { config } => Some((
                config.client_id.expose().to_string(),
                config.client_secret.expose().to_string(),
            )),
            _ => None,
        })
        .collect()
}

/// moto's write requests (not Describe*/Get*) since the last `start_recording`.
fn writes(c: &crate::support::moto_cloud::Cloud) -> Vec<String> {
    c.moto
        .recorded_actions()
        .into_iter()
        .filter(|a| {
            let op = a.split(':').nth(1).unwrap_or("");
            !op.starts_with("Describe") && !op.starts_with("Get")
        })
        .collect()
}

fn apply(kubeconfig: &std::path::Path, yaml: &str) {
    let (ok, out) = kubectl(kubeconfig, &["apply", "-f", "-"], Some(yaml));
    assert!(ok, "{out}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn oidc_action_follows_its_secret_through_the_binary() {
    let c = cloud().await;
    let k8s = Cluster::start().await;
    let (client, kubeconfig) = (k8s.client.clone(), k8s.kubeconfig.clone());
    let ctl = k8s.controller(&[
        "--cluster-name=e2e".into(),
        "--aws-region=us-west-2".into(),
        format!("--aws-vpc-id={}", c.vpc),
        format!(
            "--aws-api-endpoints=elasticloadbalancing={0},ec2={0}",
            c.moto.endpoint
        ),
    ]);
    ctl.wait_for_log("became leader", WAIT);
    let (ok, out) = kubectl(
        &kubeconfig,
        &["create", "-f", "-"],
        Some("apiVersion: v1\nkind: Namespace\nmetadata: {name: demo}\n"),
    );
    assert!(ok, "{out}");
    apply(&kubeconfig, &secret("first-secret"));
    apply(&kubeconfig, APP);

    let (elb, ec2) = (c.elb.as_ref(), c.ec2.as_ref());
    let first = vec![("e2e-client".to_string(), "first-secret".to_string())];
    eventually(
        "the rule authenticates with the Secret's client",
        WAIT,
        || async { oidc_actions(elb, ec2).await == first },
    )
    .await;
    let inv = inventory(elb, ec2, STACK).await;
    assert_eq!(inv.listeners.len(), 1);
    assert_eq!(inv.listeners[0].port, 443);
    assert!(matches!(
        inv.rules[0].0.actions.as_slice(),
        [Action::AuthenticateOidc { .. }, Action::Forward { .. }]
    ));

    // A reconcile of the unchanged stack writes nothing.
    let done = "successfully deployed model";
    let before = ctl.count_logs(done);
    c.moto.start_recording().await;
    let (ok, out) = kubectl(
        &kubeconfig,
        &[
            "annotate",
            "ingress",
            "-n",
            "demo",
            "app",
            "example.com/touch=1",
        ],
        None,
    );
    assert!(ok, "{out}");
    eventually("the touched Ingress is reconciled", WAIT, || async {
        ctl.count_logs(done) > before
    })
    .await;
    assert_eq!(writes(&c), Vec::<String>::new(), "redeploy: no write");

    // A changed Secret re-reconciles the group and pushes the new secret.
    c.moto.start_recording().await;
    apply(&kubeconfig, &secret("second-secret"));
    let second = vec![("e2e-client".to_string(), "second-secret".to_string())];
    eventually("the rule follows the Secret", WAIT, || async {
        oidc_actions(elb, ec2).await == second
    })
    .await;
    let w = writes(&c);
    assert!(
        !w.is_empty() && w.iter().all(|a| a == "elasticloadbalancing:ModifyRule"),
        "{w:?}"
    );

    // The Secret goes: upstream's error as a Warning, no AWS write, the rule stays as it was.
    c.moto.start_recording().await;
    let (ok, out) = kubectl(
        &kubeconfig,
        &["delete", "secret", "-n", "demo", "oidc-creds"],
        None,
    );
    assert!(ok, "{out}");
    eventually(
        "FailedBuildModel names the missing Secret",
        WAIT,
        || async {
            events_of(&client, "demo", "app")
                .await
                .iter()
                .any(|(t, reason, note)| {
                    t == "Warning"
                        && reason == "FailedBuildModel"
                        && note.contains(r#"secrets "oidc-creds" not found"#)
                })
        },
    )
    .await;
    tokio::time::sleep(Duration::from_millis(1000)).await;
    assert_eq!(writes(&c), Vec::<String>::new(), "missing Secret: no write");
    assert_eq!(oidc_actions(elb, ec2).await, second);

    // The secret never shows: not in the logs, not in any event.
    let logs = ctl.stderr();
    for s in ["first-secret", "second-secret"] {
        assert!(!logs.contains(s), "{s} in the logs");
    }
    let events = events_of(&client, "demo", "app").await;
    assert!(
        events
            .iter()
            .all(|(_, _, note)| !note.contains("first-secret") && !note.contains("second-secret")),
        "{events:?}"
    );

    // Secrets were read by name in their namespace only, which a namespaced Role allows.
    tokio::time::sleep(Duration::from_millis(200)).await;
    let extra = crate::chart::docs(USER_ROLE);
    k8s.assert_requests_allowed_by_chart_and(
        &[
            "list secrets demo/oidc-creds",
            "watch secrets demo/oidc-creds",
            "patch ingresses.networking.k8s.io/status demo/app",
        ],
        &extra,
    );
    let cluster_wide: Vec<String> = k8s
        .server
        .requests()
        .into_iter()
        .filter(|r| r.user.is_some() && r.resource == "secrets" && r.name.is_none())
        .map(|r| r.describe())
        .collect();
    assert!(cluster_wide.is_empty(), "{cluster_wide:?}");

    drop(ctl);
    k8s.server.stop().await;
}

/// `--required-secrets-label`: an OIDC Secret without the label is not used — upstream's
/// not-found error as a `FailedBuildModel` Warning, nothing deployed — until it is labelled;
/// then the rule authenticates with it; when the label goes, the Secret is missing again (and
/// the rule keeps its last values). Without the flag the same unlabelled Secret is used at once
/// (`oidc_action_follows_its_secret_through_the_binary`).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_required_secrets_label_keeps_unlabelled_secrets_out() {
    let c = cloud().await;
    let k8s = Cluster::start().await;
    let (client, kubeconfig) = (k8s.client.clone(), k8s.kubeconfig.clone());
    let ctl = k8s.controller(&[
        "--cluster-name=e2e".into(),
        "--aws-region=us-west-2".into(),
        format!("--aws-vpc-id={}", c.vpc),
        format!(
            "--aws-api-endpoints=elasticloadbalancing={0},ec2={0}",
            c.moto.endpoint
        ),
        "--required-secrets-label=albc.example/oidc=yes".into(),
    ]);
    ctl.wait_for_log("became leader", WAIT);
    let (ok, out) = kubectl(
        &kubeconfig,
        &["create", "-f", "-"],
        Some("apiVersion: v1\nkind: Namespace\nmetadata: {name: demo}\n"),
    );
    assert!(ok, "{out}");
    apply(&kubeconfig, &secret("labelled-later"));
    apply(&kubeconfig, APP);

    eventually("the unlabelled Secret reads as missing", WAIT, || async {
        events_of(&client, "demo", "app")
            .await
            .iter()
            .any(|(t, reason, note)| {
                t == "Warning"
                    && reason == "FailedBuildModel"
                    && note.contains(r#"secrets "oidc-creds" not found"#)
            })
    })
    .await;
    // Failed passes over the missing Secret, as logged (the Warning events fold into one).
    let missing = || {
        ctl.stderr()
            .lines()
            .filter(|l| l.contains("Reconciler error") && l.contains("oidc-creds"))
            .count()
    };
    let (elb, ec2) = (c.elb.as_ref(), c.ec2.as_ref());
    assert!(oidc_actions(elb, ec2).await.is_empty(), "nothing deployed");

    let label = |arg: &str| {
        let (ok, out) = kubectl(
            &kubeconfig,
            &["label", "secret", "-n", "demo", "oidc-creds", arg],
            None,
        );
        assert!(ok, "{out}");
    };
    label("albc.example/oidc=yes");
    let used = vec![("e2e-client".to_string(), "labelled-later".to_string())];
    eventually("the labelled Secret is used", WAIT, || async {
        oidc_actions(elb, ec2).await == used
    })
    .await;

    let before = missing();
    label("albc.example/oidc-");
    eventually(
        "without its label the Secret is missing again",
        WAIT,
        || async { missing() > before },
    )
    .await;
    assert_eq!(
        oidc_actions(elb, ec2).await,
        used,
        "the rule keeps its last values"
    );

    // Still read by name in its namespace only: a namespaced Role is enough.
    tokio::time::sleep(Duration::from_millis(200)).await;
    k8s.assert_requests_allowed_by_chart_and(
        &["patch ingresses.networking.k8s.io/status demo/app"],
        &crate::chart::docs(USER_ROLE),
    );
    let cluster_wide: Vec<String> = k8s
        .server
        .requests()
        .into_iter()
        .filter(|r| r.user.is_some() && r.resource == "secrets" && r.name.is_none())
        .map(|r| r.describe())
        .collect();
    assert!(cluster_wide.is_empty(), "{cluster_wide:?}");

    drop(ctl);
    k8s.server.stop().await;
}
