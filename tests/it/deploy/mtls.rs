//! `mutual-authentication` reaches the HTTPS listener: a trust store named in the annotation
//! is resolved to its ARN before any write (a missing one fails the deploy with upstream's
//! message and nothing written), the setting is kept true, and a listener the annotation no
//! longer mentions keeps what it has (upstream: `mode: off` turns it off).

use aws_load_balancer_controller::model::MutualAuthentication;

use super::functional::{deployer, inventory};
use super::*;

const HTTPS: &str = "\n    alb.ingress.kubernetes.io/listen-ports: '[{\"HTTPS\": 443}]'\n    alb.ingress.kubernetes.io/certificate-arn: arn:aws:acm:us-west-2:111122223333:certificate/c";

pub(super) fn shop(mtls: Option<&str>) -> String {
    let extra = mtls
        .map(|m| format!("\n    alb.ingress.kubernetes.io/mutual-authentication: '{m}'"))
        .unwrap_or_default();
    SHOP.replace(
        "group.order: \"1\"",
        &format!("group.order: \"1\"{HTTPS}{extra}"),
    )
}

pub(super) const VERIFY: &str = r#"[{"port":443,"mode":"verify","trustStore":"corp-ca"}]"#;

pub(super) async fn https_mtls(fake: &FakeAws) -> Option<MutualAuthentication> {
    let inv = inventory(fake, fake, "shop").await;
    inv.listeners
        .iter()
        .find(|l| l.port == 443)
        .unwrap()
        .mutual_authentication
        .clone()
}

#[tokio::test]
async fn verify_with_a_named_trust_store_is_applied_and_kept_true() {
    let fake = fake();
    let vpc = network(&fake);
    let d = deployer(&fake, &vpc);

    // The trust store does not exist yet: refused before any write.
    let err = d
        .deploy(&build_one(&shop(Some(VERIFY)), &vpc))
        .await
        .unwrap_err();
    assert!(
        err.to_string()
            .contains("couldn't find TrustStores with names [corp-ca]"),
        "{err}"
    );
    assert_eq!(write_ops(&fake), Vec::<String>::new());

    let arn = fake.add_trust_store("corp-ca");
    let stack = build_one(&shop(Some(VERIFY)), &vpc);
    d.deploy(&stack).await.unwrap();
    let m = https_mtls(&fake).await.unwrap();
    assert_eq!(m.mode, "verify");
    assert_eq!(m.trust_store.as_deref(), Some(arn.as_str()));
    fake.clear_calls();
    d.deploy(&stack).await.unwrap();
    assert_eq!(write_ops(&fake), Vec::<String>::new());

    // passthrough: one ModifyListener.
    fake.clear_calls();
    d.deploy(&build_one(
        &shop(Some(r#"[{"port":443,"mode":"passthrough"}]"#)),
        &vpc,
    ))
    .await
    .unwrap();
    assert_eq!(write_ops(&fake), vec!["ModifyListener".to_string()]);
    assert_eq!(https_mtls(&fake).await.unwrap().mode, "passthrough");

    // Annotation gone: left as it is (upstream needs mode off to turn it off).
    fake.clear_calls();
    d.deploy(&build_one(&shop(None), &vpc)).await.unwrap();
    assert_eq!(write_ops(&fake), Vec::<String>::new());
    assert_eq!(https_mtls(&fake).await.unwrap().mode, "passthrough");
    d.deploy(&build_one(
        &shop(Some(r#"[{"port":443,"mode":"off"}]"#)),
        &vpc,
    ))
    .await
    .unwrap();
    assert_eq!(https_mtls(&fake).await.unwrap().mode, "off");
}
