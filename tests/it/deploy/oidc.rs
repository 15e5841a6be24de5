//! `auth-type: oidc` reaches AWS with the client id and secret of the Secret. AWS (and the fake)
//! never describe the secret back: an unchanged stack redeploys with no write, a changed
//! Secret is pushed, and a fresh process re-sends the secret once (it cannot know what AWS has).

use aws_load_balancer_controller::aws::*;

use super::functional::deployer;
use super::*;

const OIDC: &str = "\n    alb.ingress.kubernetes.io/listen-ports: '[{\"HTTPS\": 443}]'\n    alb.ingress.kubernetes.io/certificate-arn: arn:aws:acm:us-west-2:111122223333:certificate/c\n    alb.ingress.kubernetes.io/auth-type: oidc\n    alb.ingress.kubernetes.io/auth-idp-oidc: '{\"issuer\":\"https://idp.example.com\",\"authorizationEndpoint\":\"https://idp.example.com/auth\",\"tokenEndpoint\":\"https://idp.example.com/token\",\"userInfoEndpoint\":\"https://idp.example.com/userinfo\",\"secretName\":\"oidc\"}'";

fn shop(client_secret: &str) -> String {
    let secret = format!(
        "---\napiVersion: v1\nkind: Secret\nmetadata: {{name: oidc, namespace: shop}}\nstringData: {{clientID: shop-client, clientSecret: {client_secret}}}\n"
    );
    // Only api (two paths) listens on HTTPS with OIDC.
    SHOP.replace("group.order: \"1\"", &format!("group.order: \"1\"{OIDC}")) + &secret
}

fn secrets(fake: &FakeAws) -> Vec<String> {
    let mut v: Vec<String> = fake
        .oidc_client_secrets()
        .into_iter()
        .map(|(_, s)| s)
        .collect();
    v.sort();
    v
}

#[tokio::test]
async fn oidc_secret_is_sent_kept_and_pushed_only_when_it_changes() {
    let fake = fake();
    let vpc = network(&fake);
    let d = deployer(&fake, &vpc);
    let stack = build_one(&shop("first"), &vpc);
    d.deploy(&stack).await.unwrap();
    assert_eq!(secrets(&fake), ["first", "first"]);
    let rules = fake
        .describe_rules(&fake.oidc_client_secrets()[0].0)
        .await
        .unwrap_or_default();
    assert!(
        rules.iter().all(|r| r.actions.iter().all(|a| !matches!(
            a,
            aws_load_balancer_controller::model::Action::AuthenticateOidc { config }
                if !config.client_secret.expose().is_empty()
        ))),
        "the fake describes like AWS: no secret"
    );

    fake.clear_calls();
    d.deploy(&stack).await.unwrap();
    assert_eq!(
        write_ops(&fake),
        Vec::<String>::new(),
        "unchanged: no write"
    );

    fake.clear_calls();
    d.deploy(&build_one(&shop("second"), &vpc)).await.unwrap();
    assert_eq!(write_ops(&fake), ["ModifyRule", "ModifyRule"]);
    assert_eq!(secrets(&fake), ["second", "second"]);
    fake.clear_calls();
    d.deploy(&build_one(&shop("second"), &vpc)).await.unwrap();
    assert_eq!(write_ops(&fake), Vec::<String>::new());

    // A new process knows nothing of what was sent: each OIDC rule is re-sent once.
    let restarted = deployer(&fake, &vpc);
    fake.clear_calls();
    restarted
        .deploy(&build_one(&shop("second"), &vpc))
        .await
        .unwrap();
    assert_eq!(write_ops(&fake), ["ModifyRule", "ModifyRule"]);
    fake.clear_calls();
    restarted
        .deploy(&build_one(&shop("second"), &vpc))
        .await
        .unwrap();
    assert_eq!(write_ops(&fake), Vec::<String>::new());
}

/// `diff` (the deployer over the recording layer) shows that the rules' actions will be sent,
/// never the secret itself: not on create, not when the Secret changed.
#[tokio::test]
async fn diff_output_never_shows_the_client_secret() {
    use aws_load_balancer_controller::aws::shadow::Recorder;
    use aws_load_balancer_controller::deploy::Deployer;
    let fake = fake();
    let vpc = network(&fake);
    let dry = |fake: &std::sync::Arc<FakeAws>| {
        let recorder = std::sync::Arc::new(Recorder::new(fake.clone(), fake.clone()));
        let d = Deployer::new(recorder.clone(), recorder.clone(), CLUSTER, &vpc);
        (recorder, d)
    };
    let (recorder, d) = dry(&fake);
    d.deploy(&build_one(&shop("hunter2-first"), &vpc))
        .await
        .unwrap();
    let created = serde_json::to_string(&recorder.take()).unwrap();
    assert!(created.contains("CreateRule"), "{created}");
    assert!(created.contains("AuthenticateOidc"), "{created}");
    assert!(!created.contains("hunter2"), "{created}");

    deployer(&fake, &vpc)
        .deploy(&build_one(&shop("hunter2-first"), &vpc))
        .await
        .unwrap();
    let (recorder, d) = dry(&fake);
    d.deploy(&build_one(&shop("hunter2-second"), &vpc))
        .await
        .unwrap();
    let writes = recorder.take();
    let text = serde_json::to_string(&writes).unwrap();
    assert!(
        writes.iter().any(|w| w.call.ends_with("ModifyRule")),
        "{text}"
    );
    assert!(!text.contains("hunter2"), "{text}");
}
