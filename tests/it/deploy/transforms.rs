//! `transforms.<service>` reaches AWS: the rules forwarding to that Service carry the rewrites
//! (CreateRule / ModifyRule), an unchanged deploy writes nothing, removing them resets them.

use aws_load_balancer_controller::model::action::{Rewrite, RewriteConfigObject};
use aws_load_balancer_controller::model::Transform;

use super::functional::{deployer, inventory};
use super::*;

const REWRITE: &str = "\n    alb.ingress.kubernetes.io/transforms.api: '[{\"type\":\"url-rewrite\",\"urlRewriteConfig\":{\"rewrites\":[{\"regex\":\"^/api/v1/(.*)$\",\"replace\":\"/$1\"}]}}]'";

fn shop(extra: &str) -> String {
    SHOP.replace(
        "alb.ingress.kubernetes.io/tags: Team=api",
        &format!("alb.ingress.kubernetes.io/tags: Team=api{extra}"),
    )
}

#[tokio::test]
async fn transforms_are_applied_to_the_rules_and_kept_true() {
    let fake = fake();
    let vpc = network(&fake);
    let d = deployer(&fake, &vpc);
    let stack = build_one(&shop(REWRITE), &vpc);
    d.deploy(&stack).await.unwrap();
    let want = Transform {
        transform_type: "url-rewrite".into(),
        host_header_rewrite_config: None,
        url_rewrite_config: Some(RewriteConfigObject {
            rewrites: vec![Rewrite {
                regex: "^/api/v1/(.*)$".into(),
                replace: "/$1".into(),
            }],
        }),
    };
    let inv = inventory(fake.as_ref(), fake.as_ref(), "shop").await;
    let rewritten = inv
        .rules
        .iter()
        .filter(|(r, _)| r.transforms == vec![want.clone()])
        .count();
    assert_eq!(rewritten, 2, "both api paths: {:?}", inv.rules);
    assert_eq!(
        inv.rules
            .iter()
            .filter(|(r, _)| r.transforms.is_empty())
            .count(),
        1,
        "web's rule has none"
    );
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
    assert!(inv.rules.iter().all(|(r, _)| r.transforms.is_empty()));
}
