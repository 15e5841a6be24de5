//! The target-control port on the fake, through the deployer: the model's port is what the
//! target group is created with; an unchanged stack deploys with no write (the described port
//! matches); a changed port replaces the target group as upstream does (a new one created, the
//! rule moved to it, the old one deleted after).

use aws_load_balancer_controller::aws::*;

use super::functional::{deployer, inventory};
use super::*;

/// The `shop` group with `web` on IP targets and target-control port `port`.
fn shop_with_control_port(port: u16) -> String {
    SHOP.replace(
        "    alb.ingress.kubernetes.io/group.order: \"2\"\n",
        &format!(
            "    alb.ingress.kubernetes.io/group.order: \"2\"\n    \
             alb.ingress.kubernetes.io/target-type: ip\n    \
             alb.ingress.kubernetes.io/target-control-port.web.80: \"{port}\"\n"
        ),
    )
}

/// The described target group of resource id `shop/web-web:80`.
async fn web_tg(fake: &FakeAws) -> TargetGroup {
    let inv = inventory(fake, fake, "shop").await;
    let found: Vec<&TargetGroup> = inv
        .tgs
        .iter()
        .filter(|(_, t)| {
            t.get("ingress.k8s.aws/resource").map(String::as_str) == Some("shop/web-web:80")
        })
        .map(|(tg, _)| tg)
        .collect();
    assert_eq!(found.len(), 1, "{inv:#?}");
    found[0].clone()
}

#[tokio::test]
async fn a_changed_target_control_port_replaces_the_target_group_on_the_fake() {
    let fake = fake();
    let vpc = network(&fake);
    let d = deployer(&fake, &vpc);
    let first = build_one(&shop_with_control_port(3000), &vpc);
    let want = first
        .target_groups
        .iter()
        .find(|t| t.id == "shop/web-web:80")
        .expect("the web target group");
    assert_eq!(
        want.target_control_port,
        Some(3000),
        "the model has the port"
    );
    d.deploy(&first).await.unwrap();
    let old = web_tg(&fake).await;
    assert_eq!(old.target_control_port, Some(3000));

    // Unchanged: the described port matches the model's, nothing is replaced.
    fake.clear_calls();
    d.deploy(&first).await.unwrap();
    assert_eq!(write_ops(&fake), Vec::<String>::new());

    // Changed: created, the rule moved to it, the old one deleted after.
    let second = build_one(&shop_with_control_port(3001), &vpc);
    fake.clear_calls();
    d.deploy(&second).await.unwrap();
    let ops = write_ops(&fake);
    let at = |op: &str| {
        ops.iter()
            .position(|o| o == op)
            .unwrap_or_else(|| panic!("no {op} in {ops:?}"))
    };
    assert!(at("CreateTargetGroup") < at("ModifyRule"), "{ops:?}");
    assert!(at("ModifyRule") < at("DeleteTargetGroup"), "{ops:?}");
    assert_eq!(
        ops.iter().filter(|o| *o == "CreateTargetGroup").count(),
        1,
        "{ops:?}"
    );
    let new = web_tg(&fake).await;
    assert_ne!(new.arn, old.arn);
    assert_eq!(new.target_control_port, Some(3001));
    let inv = inventory(fake.as_ref(), fake.as_ref(), "shop").await;
    assert!(
        inv.rules
            .iter()
            .any(|(r, _)| format!("{:?}", r.actions).contains(&new.arn)),
        "a rule forwards to the new target group: {inv:#?}"
    );
    assert!(
        !inv.rules
            .iter()
            .any(|(r, _)| format!("{:?}", r.actions).contains(&old.arn)),
        "no rule forwards to the old one"
    );
}
