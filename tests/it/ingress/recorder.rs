//! The `diff` recorder in front of FakeAws: on an empty account the deployer's whole chain shows
//! as writes with placeholder ARNs (each later write pointing at the placeholder of what it
//! depends on) while the fake receives reads only and never a placeholder; once the stack is
//! really deployed, the same run records nothing.

use std::sync::Arc;

use aws_load_balancer_controller::aws::shadow::{is_placeholder, Recorder};
use aws_load_balancer_controller::deploy::Deployer;
use aws_load_balancer_controller::model::{self, BuildEnv, ClusterObjects};

use super::fake::fake_aws;
use super::{test_config, DEMO};

#[tokio::test]
async fn recorder_shows_the_whole_chain_on_an_empty_account_then_nothing() {
    let (fake, vpc) = fake_aws();
    let cfg = test_config(&vpc);
    let mut objs = ClusterObjects::default();
    aws_load_balancer_controller::plan::add_manifests(&mut objs, DEMO, "demo.yaml".as_ref())
        .unwrap();
    let (groups, _) = model::load_groups(&objs, "alb");
    let group = groups.values().next().unwrap();
    let stack = model::build_stack(group, &objs, &cfg.model, &BuildEnv::default()).unwrap();

    let recorder = Arc::new(Recorder::new(fake.clone(), fake.clone()));
    let dry = Deployer::new(
        recorder.clone(),
        recorder.clone(),
        &cfg.model.cluster_name,
        &vpc,
    );
    let result = dry.deploy(&stack).await.unwrap();
    let writes = recorder.take();
    assert_eq!(fake.write_calls(), vec![], "the fake saw a write");
    let calls: Vec<&str> = writes.iter().map(|w| w.call.as_str()).collect();
    for want in [
        "ec2:CreateSecurityGroup",
        "elasticloadbalancing:CreateTargetGroup",
        "elasticloadbalancing:CreateLoadBalancer",
        "elasticloadbalancing:CreateListener",
        "elasticloadbalancing:CreateRule",
    ] {
        assert!(calls.contains(&want), "no {want} in {calls:?}");
    }
    let pos = |c: &str| calls.iter().position(|x| *x == c).unwrap();
    assert!(
        pos("elasticloadbalancing:CreateTargetGroup")
            < pos("elasticloadbalancing:CreateLoadBalancer")
    );
    assert!(pos("elasticloadbalancing:CreateListener") < pos("elasticloadbalancing:CreateRule"));
    // The rule hangs off the placeholder listener, which hangs off the placeholder LB.
    let listener = writes
        .iter()
        .find(|w| w.call.ends_with("CreateListener"))
        .unwrap();
    let rule = writes
        .iter()
        .find(|w| w.call.ends_with("CreateRule"))
        .unwrap();
    let field = |w: &aws_load_balancer_controller::aws::shadow::Write, f: &str| {
        w.changes
            .iter()
            .find(|c| c.field == f)
            .and_then(|c| c.after.clone())
            .unwrap()
    };
    assert!(is_placeholder(&listener.resource));
    assert_eq!(field(rule, "listener"), listener.resource);
    let lb = writes
        .iter()
        .find(|w| w.call.ends_with("CreateLoadBalancer"))
        .unwrap();
    assert_eq!(field(listener, "loadBalancer"), lb.resource);
    // The bindings carry the placeholder target-group ARNs, so their writes show too.
    assert_eq!(result.target_group_bindings.len(), 2);
    for b in &result.target_group_bindings {
        assert!(is_placeholder(&b.spec.target_group_arn), "{b:?}");
    }
    // No request of the fake named a placeholder (the fake would have answered NotFound).
    assert!(fake
        .calls()
        .iter()
        .all(|(_, op)| op.starts_with("Describe")));

    // Deployed for real, the recorded run is empty.
    let real = Deployer::new(fake.clone(), fake.clone(), &cfg.model.cluster_name, &vpc);
    real.deploy(&stack).await.unwrap();
    fake.clear_calls();
    let recorder = Arc::new(Recorder::new(fake.clone(), fake.clone()));
    let dry = Deployer::new(
        recorder.clone(),
        recorder.clone(),
        &cfg.model.cluster_name,
        &vpc,
    );
    dry.deploy(&stack).await.unwrap();
    assert_eq!(recorder.take(), vec![]);
    assert_eq!(fake.write_calls(), vec![]);
}

/// WAFv2 and Shield through the recorder (`diff`, `--dry-run`): the association and the
/// protection a deploy would make are reported against the load balancer, AWS gets reads only.
#[tokio::test]
async fn recorder_reports_add_on_writes_and_sends_none() {
    use aws_load_balancer_controller::aws::AddonClients;
    let (fake, vpc) = fake_aws();
    let acl = fake.add_wafv2_web_acl("shop-acl");
    fake.set_shield_subscription(true);
    let cfg = test_config(&vpc);
    let yaml = DEMO.replace(
        "    alb.ingress.kubernetes.io/scheme: internet-facing\n",
        "    alb.ingress.kubernetes.io/scheme: internet-facing\n    alb.ingress.kubernetes.io/wafv2-acl-name: shop-acl\n    alb.ingress.kubernetes.io/shield-advanced-protection: \"true\"\n",
    );
    let mut objs = ClusterObjects::default();
    aws_load_balancer_controller::plan::add_manifests(&mut objs, &yaml, "demo.yaml".as_ref())
        .unwrap();
    let (groups, _) = model::load_groups(&objs, "alb");
    let group = groups.values().next().unwrap();
    let stack = model::build_stack(group, &objs, &cfg.model, &BuildEnv::default()).unwrap();
    let mut bare = stack.clone();
    bare.addons = Default::default();
    let real = Deployer::new(fake.clone(), fake.clone(), &cfg.model.cluster_name, &vpc);
    let lb = real.deploy(&bare).await.unwrap().load_balancer.unwrap().arn;

    let clients = AddonClients::all(fake.clone());
    let recorder = Arc::new(Recorder::new(fake.clone(), fake.clone()).with_addons(clients.clone()));
    let dry = Deployer::new(
        recorder.clone(),
        recorder.clone(),
        &cfg.model.cluster_name,
        &vpc,
    )
    .with_addons(recorder.addons_view(&clients));
    fake.clear_calls();
    dry.deploy(&stack).await.unwrap();
    let writes = recorder.take();
    let shown: Vec<(String, String)> = writes
        .iter()
        .map(|w| (w.call.clone(), w.resource.clone()))
        .collect();
    assert_eq!(
        shown,
        vec![
            ("wafv2:AssociateWebACL".to_string(), lb.clone()),
            ("shield:CreateProtection".to_string(), lb.clone())
        ]
    );
    assert_eq!(writes[0].changes[0].after.as_deref(), Some(acl.as_str()));
    assert_eq!(fake.write_calls(), vec![], "the fake saw a write");
    assert_eq!(fake.wafv2_web_acl_of(&lb), None);
    assert!(fake.shield_protections().is_empty());
}

/// `diff` with `enable-frontend-nlb`: the recorder shows the NLB, its listener, its `alb`-type
/// target group and the ALB's registration (all on placeholders, nothing sent to the fake);
/// once deployed for real, nothing; with the annotation then removed, exactly its deletion.
#[tokio::test]
async fn recorder_shows_the_frontend_nlb_then_nothing_then_its_removal() {
    let (fake, vpc) = fake_aws();
    let cfg = test_config(&vpc);
    let stack_of = |yaml: &str| {
        let mut objs = ClusterObjects::default();
        aws_load_balancer_controller::plan::add_manifests(&mut objs, yaml, "demo.yaml".as_ref())
            .unwrap();
        let (groups, _) = model::load_groups(&objs, "alb");
        let group = groups.values().next().unwrap();
        model::build_stack(group, &objs, &cfg.model, &BuildEnv::default()).unwrap()
    };
    let with_nlb = stack_of(&DEMO.replace(
        "    alb.ingress.kubernetes.io/scheme: internet-facing\n",
        "    alb.ingress.kubernetes.io/scheme: internet-facing\n    alb.ingress.kubernetes.io/enable-frontend-nlb: \"true\"\n",
    ));
    let dry_run = |stack: model::Stack| {
        let recorder = Arc::new(Recorder::new(fake.clone(), fake.clone()));
        let dry = Deployer::new(
            recorder.clone(),
            recorder.clone(),
            &cfg.model.cluster_name,
            &vpc,
        );
        async move {
            dry.deploy(&stack).await.unwrap();
            recorder.take()
        }
    };
    let writes = dry_run(with_nlb.clone()).await;
    assert_eq!(fake.write_calls(), vec![], "the fake saw a write");
    let calls: Vec<&str> = writes.iter().map(|w| w.call.as_str()).collect();
    let count = |c: &str| calls.iter().filter(|x| **x == c).count();
    assert_eq!(
        count("elasticloadbalancing:CreateLoadBalancer"),
        2,
        "{calls:?}"
    );
    assert_eq!(
        count("elasticloadbalancing:CreateTargetGroup"),
        3,
        "{calls:?}"
    );
    assert_eq!(count("elasticloadbalancing:CreateListener"), 2, "{calls:?}");
    assert_eq!(calls.last(), Some(&"elasticloadbalancing:RegisterTargets"));

    let real = Deployer::new(fake.clone(), fake.clone(), &cfg.model.cluster_name, &vpc);
    real.deploy(&with_nlb).await.unwrap();
    assert_eq!(dry_run(with_nlb.clone()).await, vec![]);

    fake.clear_calls();
    let writes = dry_run(stack_of(DEMO)).await;
    assert_eq!(fake.write_calls(), vec![], "the fake saw a write");
    let calls: Vec<&str> = writes.iter().map(|w| w.call.as_str()).collect();
    assert_eq!(
        calls,
        [
            "elasticloadbalancing:DeregisterTargets",
            "elasticloadbalancing:DeleteLoadBalancer",
            "elasticloadbalancing:DeleteTargetGroup"
        ]
    );
}
