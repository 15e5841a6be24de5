//! `ipam-ipv4-pool-id` and `customer-owned-ipv4-pool` reach AWS: both at creation, the IPAM
//! pool kept true afterwards with ModifyIpPools (set, changed, removed), the customer-owned
//! pool never changed in place; an unchanged deploy writes nothing.

use aws_load_balancer_controller::aws::*;

use super::functional::{deployer, inventory};
use super::*;

fn with(extra: &str) -> String {
    SHOP.replace(
        "alb.ingress.kubernetes.io/tags: Team=api",
        &format!("alb.ingress.kubernetes.io/tags: Team=api{extra}"),
    )
}

const IPAM: &str = "\n    alb.ingress.kubernetes.io/ipam-ipv4-pool-id: ipam-pool-0aaa";
const COIP: &str = "\n    alb.ingress.kubernetes.io/customer-owned-ipv4-pool: ipv4pool-coip-0bbb";

async fn the_lb(fake: &FakeAws) -> LoadBalancer {
    let inv = inventory(fake, fake, "shop").await;
    assert_eq!(inv.lbs.len(), 1);
    inv.lbs[0].0.clone()
}

#[tokio::test]
async fn address_pools_are_created_then_the_ipam_pool_is_kept_true() {
    let fake = fake();
    let vpc = network(&fake);
    let d = deployer(&fake, &vpc);
    let stack = build_one(&with(&format!("{IPAM}{COIP}")), &vpc);
    let want = stack.load_balancer.as_ref().unwrap();
    assert_eq!(want.ipv4_ipam_pool_id.as_deref(), Some("ipam-pool-0aaa"));
    assert_eq!(
        want.customer_owned_ipv4_pool.as_deref(),
        Some("ipv4pool-coip-0bbb")
    );
    d.deploy(&stack).await.unwrap();
    let lb = the_lb(&fake).await;
    assert_eq!(lb.ipv4_ipam_pool_id.as_deref(), Some("ipam-pool-0aaa"));
    assert_eq!(
        lb.customer_owned_ipv4_pool.as_deref(),
        Some("ipv4pool-coip-0bbb")
    );
    fake.clear_calls();
    d.deploy(&stack).await.unwrap();
    assert_eq!(write_ops(&fake), Vec::<String>::new());

    // Another IPAM pool: one ModifyIpPools; a changed customer-owned pool is not written.
    let changed = with(
        &format!("{IPAM}{COIP}")
            .replace("ipam-pool-0aaa", "ipam-pool-0ccc")
            .replace("coip-0bbb", "coip-0ddd"),
    );
    fake.clear_calls();
    d.deploy(&build_one(&changed, &vpc)).await.unwrap();
    assert_eq!(write_ops(&fake), vec!["ModifyIpPools".to_string()]);
    let lb = the_lb(&fake).await;
    assert_eq!(lb.ipv4_ipam_pool_id.as_deref(), Some("ipam-pool-0ccc"));
    assert_eq!(
        lb.customer_owned_ipv4_pool.as_deref(),
        Some("ipv4pool-coip-0bbb")
    );

    // Annotation gone: the pool is removed, then nothing more is written.
    let plain = build_one(SHOP, &vpc);
    fake.clear_calls();
    d.deploy(&plain).await.unwrap();
    assert_eq!(write_ops(&fake), vec!["ModifyIpPools".to_string()]);
    assert_eq!(the_lb(&fake).await.ipv4_ipam_pool_id, None);
    fake.clear_calls();
    d.deploy(&plain).await.unwrap();
    assert_eq!(write_ops(&fake), Vec::<String>::new());
}
