//! WAF Classic regional, WAFv2 names and Shield Advanced on FakeAws (moto answers `waf-regional`
//! with 500s and cannot say whether Shield is subscribed): each annotation, from the Ingress
//! through the model to the deployer, associates / protects; `none` / `false` removes; an absent
//! annotation leaves what is there; a second deploy writes nothing; a web ACL name that does not
//! resolve stops the deploy before its first write.

use std::sync::Arc;

use aws_load_balancer_controller::aws::fake::FakeAws;
use aws_load_balancer_controller::aws::{AddonClients, Service};
use aws_load_balancer_controller::deploy::shield::PROTECTION_NAME;
use aws_load_balancer_controller::deploy::Deployer;

use super::functional::{deployer, inventory};
use super::*;

/// SHOP with `extra` annotation lines (`key: value`, prefix added) on its `web` Ingress.
fn shop_with(vpc: &str, extra: &[(&str, &str)]) -> Stack {
    let anchor = "    alb.ingress.kubernetes.io/group.order: \"2\"\n";
    let mut lines = anchor.to_string();
    for (k, v) in extra {
        lines.push_str(&format!("    alb.ingress.kubernetes.io/{k}: '{v}'\n"));
    }
    assert!(SHOP.contains(anchor));
    build_one(&SHOP.replace(anchor, &lines), vpc)
}

fn with_addons(fake: &Arc<FakeAws>, vpc: &str) -> Deployer {
    deployer(fake, vpc).with_addons(AddonClients::all(fake.clone()))
}

/// Calls that reached WAFv2, WAF Regional or Shield.
fn addon_calls(fake: &FakeAws) -> Vec<String> {
    fake.calls()
        .into_iter()
        .filter(|(s, _)| matches!(s, Service::WafV2 | Service::WafRegional | Service::Shield))
        .map(|(s, op)| format!("{}:{op}", s.id()))
        .collect()
}

#[tokio::test]
async fn waf_classic_web_acl_by_id_follows_the_annotations() {
    let fake = fake();
    let vpc = network(&fake);
    fake.add_waf_regional_web_acl("acl-1");
    fake.add_waf_regional_web_acl("acl-2");
    let d = with_addons(&fake, &vpc);

    let out = d
        .deploy(&shop_with(&vpc, &[("waf-acl-id", "acl-1")]))
        .await
        .unwrap();
    let lb = out.load_balancer.unwrap().arn;
    assert_eq!(fake.waf_regional_web_acl_of(&lb).as_deref(), Some("acl-1"));
    fake.clear_calls();
    d.deploy(&shop_with(&vpc, &[("waf-acl-id", "acl-1")]))
        .await
        .unwrap();
    assert_eq!(write_ops(&fake), Vec::<String>::new(), "second deploy");

    // The deprecated annotation is acted on too: the association is replaced.
    fake.clear_calls();
    d.deploy(&shop_with(&vpc, &[("web-acl-id", "acl-2")]))
        .await
        .unwrap();
    assert_eq!(fake.waf_regional_web_acl_of(&lb).as_deref(), Some("acl-2"));
    assert_eq!(addon_calls(&fake), vec!["WAF Regional:AssociateWebACL"]);

    // Absent: left alone, not even read.
    fake.clear_calls();
    d.deploy(&shop_with(&vpc, &[])).await.unwrap();
    assert_eq!(fake.waf_regional_web_acl_of(&lb).as_deref(), Some("acl-2"));
    assert_eq!(addon_calls(&fake), Vec::<String>::new());

    // `none` removes it; a fresh deployer (no cache) reads it first.
    let d = with_addons(&fake, &vpc);
    fake.clear_calls();
    d.deploy(&shop_with(&vpc, &[("waf-acl-id", "none")]))
        .await
        .unwrap();
    assert_eq!(fake.waf_regional_web_acl_of(&lb), None);
    assert_eq!(
        addon_calls(&fake),
        vec![
            "WAF Regional:GetWebACLForResource",
            "WAF Regional:DisassociateWebACL"
        ]
    );

    // Where the region has no waf-regional endpoint, upstream skips it (no call at all).
    fake.set_waf_regional_available(false);
    fake.clear_calls();
    d.deploy(&shop_with(&vpc, &[("waf-acl-id", "acl-1")]))
        .await
        .unwrap();
    assert_eq!(addon_calls(&fake), Vec::<String>::new());
}

#[tokio::test]
async fn shield_protection_only_when_subscribed_and_only_ours_removed() {
    let fake = fake();
    let vpc = network(&fake);
    let on = [("shield-advanced-protection", "true")];
    let off = [("shield-advanced-protection", "false")];

    // Not subscribed: upstream skips Shield without a word; only the state is read.
    let d = with_addons(&fake, &vpc);
    let lb = d
        .deploy(&shop_with(&vpc, &on))
        .await
        .unwrap()
        .load_balancer
        .unwrap()
        .arn;
    assert!(fake.shield_protections().is_empty());
    assert_eq!(addon_calls(&fake), vec!["Shield:GetSubscriptionState"]);

    fake.set_shield_subscription(true);
    // (The state is cached for two hours, as upstream; a new deployer asks again.)
    let d = with_addons(&fake, &vpc);
    fake.clear_calls();
    d.deploy(&shop_with(&vpc, &on)).await.unwrap();
    let p = fake.shield_protections();
    assert_eq!(p.len(), 1);
    assert_eq!(
        (p[0].name.as_str(), p[0].resource_arn.as_str()),
        (PROTECTION_NAME, lb.as_str())
    );
    assert_eq!(write_ops(&fake), vec!["CreateProtection"]);
    fake.clear_calls();
    d.deploy(&shop_with(&vpc, &on)).await.unwrap();
    assert_eq!(write_ops(&fake), Vec::<String>::new(), "second deploy");
    // Absent: kept.
    d.deploy(&shop_with(&vpc, &[])).await.unwrap();
    assert_eq!(fake.shield_protections().len(), 1);
    // false: ours is deleted.
    fake.clear_calls();
    d.deploy(&shop_with(&vpc, &off)).await.unwrap();
    assert!(fake.shield_protections().is_empty());
    assert_eq!(write_ops(&fake), vec!["DeleteProtection"]);

    // A protection someone else made (another name) is never deleted.
    let theirs = fake.add_shield_protection("security team", &lb);
    let d = with_addons(&fake, &vpc);
    fake.clear_calls();
    d.deploy(&shop_with(&vpc, &off)).await.unwrap();
    assert_eq!(fake.shield_protections()[0].id, theirs);
    assert_eq!(write_ops(&fake), Vec::<String>::new());
    // ...and with `true` it counts as the protection (nothing created).
    d.deploy(&shop_with(&vpc, &on)).await.unwrap();
    assert_eq!(fake.shield_protections().len(), 1);
    assert_eq!(write_ops(&fake), Vec::<String>::new());
}

#[tokio::test]
async fn wafv2_by_name_and_arn_on_the_fake_and_deletion_leaves_add_ons_to_aws() {
    let fake = fake();
    let vpc = network(&fake);
    let a = fake.add_wafv2_web_acl("acl-a");
    let b = fake.add_wafv2_web_acl("acl-b");
    let d = with_addons(&fake, &vpc);
    let lb = d
        .deploy(&shop_with(&vpc, &[("wafv2-acl-arn", &a)]))
        .await
        .unwrap()
        .load_balancer
        .unwrap()
        .arn;
    assert_eq!(fake.wafv2_web_acl_of(&lb), Some(a.clone()));
    // A name beats an ARN given in the same group.
    d.deploy(&shop_with(
        &vpc,
        &[("wafv2-acl-arn", &a), ("wafv2-acl-name", "acl-b")],
    ))
    .await
    .unwrap();
    assert_eq!(fake.wafv2_web_acl_of(&lb), Some(b.clone()));
    fake.clear_calls();
    d.deploy(&shop_with(&vpc, &[("wafv2-acl-name", "acl-b")]))
        .await
        .unwrap();
    assert_eq!(
        addon_calls(&fake),
        Vec::<String>::new(),
        "cached name, cached association"
    );

    // Deleting the stack: the association goes with the load balancer, no add-on call.
    fake.set_shield_subscription(true);
    fake.clear_calls();
    d.delete_stack("shop").await.unwrap();
    assert!(inventory(fake.as_ref(), fake.as_ref(), "shop")
        .await
        .is_empty());
    assert_eq!(addon_calls(&fake), Vec::<String>::new());
    assert_eq!(fake.wafv2_web_acl_of(&lb), None);
}

#[tokio::test]
async fn a_web_acl_name_that_does_not_resolve_makes_no_aws_write_for_the_group() {
    let fake = fake();
    let vpc = network(&fake);
    fake.add_wafv2_web_acl("acl-a");
    let d = with_addons(&fake, &vpc);
    let missing = [("wafv2-acl-name", "acl-missing")];

    // A new group: nothing created at all.
    let err = d.deploy(&shop_with(&vpc, &missing)).await.unwrap_err();
    assert_eq!(
        err.to_string(),
        "couldn't find WAFv2 WebACL with name: acl-missing"
    );
    assert_eq!(write_ops(&fake), Vec::<String>::new());
    assert!(inventory(fake.as_ref(), fake.as_ref(), "shop")
        .await
        .is_empty());

    // A deployed group whose edit comes with the bad name: the edit does not go out either.
    d.deploy(&shop_with(&vpc, &[])).await.unwrap();
    let mut edited = shop_with(&vpc, &missing);
    edited.listener_rules.pop();
    fake.clear_calls();
    assert!(d.deploy(&edited).await.is_err());
    assert_eq!(write_ops(&fake), Vec::<String>::new());
}
