//! An NLB Gateway whose NLB already exists: AWS never adds security groups to an NLB created
//! without any nor takes every group off one that has some, so flipping `disableSecurityGroup`
//! fails the build (before any AWS call) instead of the deploy half-way.

use super::lb_config::nlb_gateway;
use crate::model::service::ExistingNlb;
use crate::model::types::{LoadBalancerScheme, Token};

fn nlb(scheme: LoadBalancerScheme, groups: &[&str]) -> ExistingNlb {
    ExistingNlb {
        scheme,
        subnet_ids: vec!["subnet-a".into()],
        security_groups: groups.iter().map(|g| g.to_string()).collect(),
    }
}

const DISABLED: &str = "{disableSecurityGroup: true}";

#[test]
fn disabling_groups_of_an_existing_nlb_with_groups_fails_the_build() {
    let with = nlb(LoadBalancerScheme::Internal, &["sg-managed"]);
    let e = nlb_gateway(DISABLED, None, Some(&with))
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("conflicting security groups configuration: disableSecurityGroup is true but the Gateway's existing NLB has security groups"),
        "{e}"
    );
    // Keeping groups, or naming other ones, is a change AWS makes.
    let b = nlb_gateway("{}", None, Some(&with)).unwrap();
    let lb = b.stack.load_balancer.unwrap();
    assert_eq!(lb.security_groups[0], Token::ManagedSecurityGroupId);
    let b = nlb_gateway("{securityGroups: [sg-1]}", None, Some(&with)).unwrap();
    let lb = b.stack.load_balancer.unwrap();
    assert_eq!(lb.security_group_names_or_ids, ["sg-1"]);
}

#[test]
fn asking_groups_of_an_existing_nlb_without_any_fails_the_build() {
    let without = nlb(LoadBalancerScheme::Internal, &[]);
    for spec in [
        "{}",
        "{disableSecurityGroup: false}",
        "{securityGroups: [sg-1]}",
    ] {
        let e = nlb_gateway(spec, None, Some(&without))
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("conflicting security groups configuration: the Gateway's existing NLB was created without security groups"),
            "{spec}: {e}"
        );
    }
    // Still without groups: built as before.
    let b = nlb_gateway(DISABLED, None, Some(&without)).unwrap();
    let lb = b.stack.load_balancer.unwrap();
    assert!(lb.security_groups.is_empty() && lb.security_group_names_or_ids.is_empty());
    assert!(b.stack.managed_security_group.is_none());
}

#[test]
fn without_an_existing_nlb_or_with_a_scheme_change_the_switch_is_free() {
    // No NLB yet (and a plan from manifests): as the configuration says.
    let b = nlb_gateway(DISABLED, None, None).unwrap();
    assert!(b.stack.load_balancer.unwrap().security_groups.is_empty());
    let b = nlb_gateway("{}", None, None).unwrap();
    assert!(b.stack.managed_security_group.is_some());
    // A scheme change replaces the NLB: the old one's groups do not bind the new one.
    let facing = nlb(LoadBalancerScheme::InternetFacing, &["sg-managed"]);
    let b = nlb_gateway(DISABLED, None, Some(&facing)).unwrap();
    assert!(b.stack.load_balancer.unwrap().security_groups.is_empty());
    let facing = nlb(LoadBalancerScheme::InternetFacing, &[]);
    assert!(nlb_gateway("{}", None, Some(&facing)).is_ok());
}
