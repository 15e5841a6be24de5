//! The feature gates upstream reads in its deployer, each on and off against the fake:
//! `EnhancedDefaultBehavior` (a listener's mTLS setting or ALPN policy the annotations dropped
//! is reset to AWS's default, or left as it is) and `EnableRGTAPI` (the stack's load balancers
//! and target groups are found with GetResources instead of being listed and tag-read with
//! DescribeTags; `moto.rs` runs it through the SDK). `EndpointsFailOpen` is tested with the
//! endpoint selection (`src/controller/tgb/tests.rs`).

use std::sync::Arc;

use aws_load_balancer_controller::aws::*;

use super::functional::{deployer, inventory};
use super::mtls::{https_mtls, shop, VERIFY};
use super::nlb::{nlb_config, nlb_inventory, nlb_network, service_stack, svc, SUBNETS};
use super::*;

#[tokio::test]
async fn enhanced_default_behavior_turns_off_mtls_the_annotation_no_longer_sets() {
    for enhanced in [false, true] {
        let fake = fake();
        let vpc = network(&fake);
        fake.add_trust_store("corp-ca");
        let d = deployer(&fake, &vpc).with_enhanced_default_behavior(enhanced);
        d.deploy(&build_one(&shop(Some(VERIFY)), &vpc))
            .await
            .unwrap();
        assert_eq!(https_mtls(&fake).await.unwrap().mode, "verify");

        fake.clear_calls();
        let dropped = build_one(&shop(None), &vpc);
        d.deploy(&dropped).await.unwrap();
        let writes = write_ops(&fake);
        let mode = https_mtls(&fake).await.unwrap().mode;
        if enhanced {
            assert_eq!(writes, vec!["ModifyListener".to_string()]);
            assert_eq!(mode, "off");
        } else {
            assert_eq!(writes, Vec::<String>::new(), "gate off: left as it is");
            assert_eq!(mode, "verify");
        }
        // Either way the next deploy has nothing left to do.
        fake.clear_calls();
        d.deploy(&dropped).await.unwrap();
        assert_eq!(
            write_ops(&fake),
            Vec::<String>::new(),
            "enhanced={enhanced}"
        );
    }
}

/// An NLB with a TLS listener and an ALPN policy.
const TLS: &str = r#"
metadata:
  name: tls
  namespace: net
  uid: 0d6f5a1e-0000-4000-8000-000000000030
  annotations:
    service.beta.kubernetes.io/aws-load-balancer-type: external
    service.beta.kubernetes.io/aws-load-balancer-nlb-target-type: ip
    service.beta.kubernetes.io/aws-load-balancer-scheme: internet-facing
    service.beta.kubernetes.io/aws-load-balancer-ssl-cert: arn:aws:acm:us-west-2:111122223333:certificate/a
    service.beta.kubernetes.io/aws-load-balancer-ssl-ports: tls
    service.beta.kubernetes.io/aws-load-balancer-alpn-policy: HTTP2Preferred
spec:
  type: LoadBalancer
  ports:
  - {name: tls, port: 443, targetPort: 8443, protocol: TCP}
"#;

const ALPN: &str = "    service.beta.kubernetes.io/aws-load-balancer-alpn-policy: HTTP2Preferred\n";

async fn tls_alpn(fake: &FakeAws, stack: &str) -> Vec<String> {
    let inv = nlb_inventory(fake, stack).await;
    let tls = inv.listeners.iter().find(|l| l.port == 443).unwrap();
    tls.alpn_policy.clone()
}

#[tokio::test]
async fn enhanced_default_behavior_resets_an_alpn_policy_the_annotation_no_longer_sets() {
    let without_alpn = TLS.replace(ALPN, "");
    assert!(!without_alpn.contains("alpn"));
    for enhanced in [false, true] {
        let fake = fake();
        let vpc = nlb_network(&fake, &SUBNETS, false);
        let cfg = nlb_config(&vpc);
        let d = deployer(&fake, &vpc).with_enhanced_default_behavior(enhanced);
        let with = service_stack(&fake, &vpc, &svc(TLS), &cfg).await;
        d.deploy(&with).await.unwrap();
        assert_eq!(
            tls_alpn(&fake, &with.stack_id).await,
            vec!["HTTP2Preferred"]
        );

        let without = service_stack(&fake, &vpc, &svc(&without_alpn), &cfg).await;
        fake.clear_calls();
        d.deploy(&without).await.unwrap();
        let writes = write_ops(&fake);
        let alpn = tls_alpn(&fake, &without.stack_id).await;
        if enhanced {
            assert_eq!(writes, vec!["ModifyListener".to_string()]);
            assert_eq!(alpn, vec!["None"], "AWS's `no policy`");
        } else {
            assert_eq!(writes, Vec::<String>::new(), "gate off: left as it is");
            assert_eq!(alpn, vec!["HTTP2Preferred"]);
        }
        fake.clear_calls();
        d.deploy(&without).await.unwrap();
        assert_eq!(
            write_ops(&fake),
            Vec::<String>::new(),
            "enhanced={enhanced}"
        );
    }
}

#[tokio::test]
async fn enable_rgt_api_finds_the_stack_with_get_resources_instead_of_describe_tags() {
    for rgt in [false, true] {
        let fake = fake();
        let vpc = network(&fake);
        let stack = build_one(SHOP, &vpc);
        let tagging = rgt.then(|| fake.clone() as Arc<dyn ResourceTagging>);
        // A fresh deployer for each deploy (an empty tag cache), without listener and rule
        // tagging: the only ELBv2 tags left to read are the load balancer's and target groups'.
        let d = || {
            deployer(&fake, &vpc)
                .with_listener_rules_tagging(false)
                .with_resource_tagging(tagging.clone())
        };
        d().deploy(&stack).await.unwrap();
        fake.clear_calls();
        d().deploy(&stack).await.unwrap();
        assert_eq!(write_ops(&fake), Vec::<String>::new(), "rgt={rgt}");
        let (listed, described) = (fake.count("GetResources"), fake.count("DescribeTags"));
        if rgt {
            // Load balancers and target groups, each by the current and the legacy cluster key.
            assert_eq!(listed, 4);
            assert_eq!(described, 0, "the tags came with GetResources");
        } else {
            assert_eq!(listed, 0);
            assert!(
                described > 0,
                "the ELBv2 lookups read tags with DescribeTags"
            );
        }

        if rgt {
            // The index still lists a load balancer and a target group of the stack that were
            // deleted: Describe does not find them and they are skipped, not an error.
            let owned = tags(&[
                ("elbv2.k8s.aws/cluster", CLUSTER),
                ("ingress.k8s.aws/stack", stack.stack_id.as_str()),
            ]);
            let account = "arn:aws:elasticloadbalancing:us-west-2:123456789012";
            for gone in [
                format!("{account}:loadbalancer/app/k8s-gone/0123456789abcdef"),
                format!("{account}:targetgroup/k8s-gone/0123456789abcdef"),
            ] {
                fake.add_stale_tagging_entry(&gone, owned.clone());
            }
            fake.clear_calls();
            d().deploy(&stack).await.unwrap();
            assert_eq!(write_ops(&fake), Vec::<String>::new());
        }

        // The deletion finds everything the same way.
        d().delete_stack(&stack.stack_id).await.unwrap();
        let inv = inventory(&*fake, &*fake, &stack.stack_id).await;
        assert!(inv.lbs.is_empty() && inv.tgs.is_empty(), "rgt={rgt}");
    }
}
