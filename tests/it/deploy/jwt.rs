//! `jwt-validation` reaches AWS: on an HTTPS listener every rule of the Ingress validates the
//! token first, then forwards; an unchanged deploy writes nothing, removing it modifies the rules.

use aws_load_balancer_controller::aws::*;
use aws_load_balancer_controller::model::action::JwtAdditionalClaim;
use aws_load_balancer_controller::model::{Action, JwtValidationConfig};

use super::functional::{deployer, inventory};
use super::*;

const HTTPS: &str = "\n    alb.ingress.kubernetes.io/listen-ports: '[{\"HTTPS\": 443}]'\n    alb.ingress.kubernetes.io/certificate-arn: arn:aws:acm:us-west-2:111122223333:certificate/c";
const JWT: &str = "\n    alb.ingress.kubernetes.io/jwt-validation: '{\"jwksEndpoint\":\"https://idp.example.com/jwks\",\"issuer\":\"https://idp.example.com\",\"additionalClaims\":[{\"format\":\"single-string\",\"name\":\"aud\",\"values\":[\"shop\"]}]}'";

fn shop(extra: &str) -> String {
    // Only api listens on HTTPS (web stays on HTTP 80), with one certificate.
    SHOP.replace(
        "group.order: \"1\"",
        &format!("group.order: \"1\"{HTTPS}{extra}"),
    )
}

#[tokio::test]
async fn jwt_validation_runs_before_the_forward_and_is_kept_true() {
    let fake = fake();
    let vpc = network(&fake);
    let d = deployer(&fake, &vpc);
    let stack = build_one(&shop(JWT), &vpc);
    d.deploy(&stack).await.unwrap();
    let inv = inventory(fake.as_ref(), fake.as_ref(), "shop").await;
    let want = JwtValidationConfig {
        jwks_endpoint: "https://idp.example.com/jwks".into(),
        issuer: "https://idp.example.com".into(),
        additional_claims: vec![JwtAdditionalClaim {
            format: "single-string".into(),
            name: "aud".into(),
            values: vec!["shop".into()],
        }],
    };
    let with_jwt: Vec<&Rule> = inv
        .rules
        .iter()
        .map(|(r, _)| r)
        .filter(|r| {
            matches!(r.actions.first(), Some(Action::JwtValidation { config }) if *config == want)
        })
        .collect();
    assert_eq!(with_jwt.len(), 2, "both paths of api: {:?}", inv.rules);
    assert!(with_jwt
        .iter()
        .all(|r| matches!(r.actions.get(1), Some(Action::Forward { .. }))));
    fake.clear_calls();
    d.deploy(&stack).await.unwrap();
    assert_eq!(write_ops(&fake), Vec::<String>::new());

    fake.clear_calls();
    d.deploy(&build_one(&shop(""), &vpc)).await.unwrap();
    assert_eq!(
        write_ops(&fake),
        vec!["ModifyRule".to_string(), "ModifyRule".to_string()]
    );
    let inv = inventory(fake.as_ref(), fake.as_ref(), "shop").await;
    assert!(inv
        .rules
        .iter()
        .all(|(r, _)| !matches!(r.actions.first(), Some(Action::JwtValidation { .. }))));
}
