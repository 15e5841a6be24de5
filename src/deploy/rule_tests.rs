//! Unit tests of the rule planner.

use super::*;

fn path(p: &str) -> Vec<aws::RuleCondition> {
    vec![aws::RuleCondition::PathPattern {
        values: vec![p.into()],
        regex_values: vec![],
    }]
}

fn want(prio: u32, p: &str, tg: &str) -> WantRule {
    WantRule {
        id: format!("80:{prio}"),
        priority: prio,
        conditions: path(p),
        actions: vec![aws::Action::forward(tg)],
        transforms: vec![],
        tags: Tags::new(),
    }
}

fn have(arn: &str, prio: u32, p: &str, tg: &str) -> HaveRule {
    HaveRule {
        rule: aws::Rule {
            arn: arn.into(),
            priority: prio.to_string(),
            is_default: false,
            conditions: path(p),
            // As AWS echoes it: explicit weight and stickiness.
            actions: vec![aws::Action::Forward(aws::ForwardConfig {
                target_groups: vec![aws::WeightedTargetGroup {
                    arn: tg.into(),
                    weight: Some(1),
                }],
                stickiness: Some(aws::Stickiness::default()),
            })],
            transforms: vec![],
        },
        priority: prio,
        resource_id: Some(format!("80:{prio}")),
    }
}

#[test]
fn unchanged_rules_need_nothing() {
    let w = vec![want(1, "/a", "tg1"), want(2, "/b", "tg2")];
    let h = vec![have("r1", 1, "/a", "tg1"), have("r2", 2, "/b", "tg2")];
    let p = plan(&w, &h);
    assert!(p.modify.is_empty() && p.priorities.is_empty() && p.create.is_empty());
    assert!(p.delete_first.is_empty() && p.delete_later.is_empty());
    assert_eq!(p.paired, vec![(0, "r1".into()), (1, "r2".into())]);
}

#[test]
fn one_edited_path_is_one_modify() {
    let w = vec![
        want(1, "/a", "tg1"),
        want(2, "/b2", "tg2"),
        want(3, "/c", "tg1"),
    ];
    let h = vec![
        have("r1", 1, "/a", "tg1"),
        have("r2", 2, "/b", "tg2"),
        have("r3", 3, "/c", "tg1"),
    ];
    let p = plan(&w, &h);
    assert_eq!(p.modify, vec![(1, "r2".into())]);
    assert!(p.priorities.is_empty() && p.create.is_empty() && p.delete_later.is_empty());
}

#[test]
fn inserted_rule_moves_others_by_priority_not_by_rewrite() {
    // A new path at the top: existing rules keep content and only move down.
    let w = vec![
        want(1, "/new", "tg3"),
        want(2, "/a", "tg1"),
        want(3, "/b", "tg2"),
    ];
    let h = vec![have("r1", 1, "/a", "tg1"), have("r2", 2, "/b", "tg2")];
    let p = plan(&w, &h);
    assert!(p.modify.is_empty());
    assert_eq!(p.priorities, vec![("r1".into(), 2), ("r2".into(), 3)]);
    assert_eq!(p.create, vec![0]);
}

#[test]
fn removed_rule_is_deleted_and_blocking_one_goes_first() {
    // /a removed: /b moves 2→1, and nothing else holds 1 once r1 is gone.
    let w = vec![want(1, "/b", "tg2")];
    let h = vec![have("r1", 1, "/a", "tg1"), have("r2", 2, "/b", "tg2")];
    let p = plan(&w, &h);
    assert_eq!(p.priorities, vec![("r2".into(), 1)]);
    assert_eq!(p.delete_first, vec!["r1".to_string()]);
    assert!(p.delete_later.is_empty() && p.create.is_empty() && p.modify.is_empty());
    // Last rule removed: deleted in the cleanup phase.
    let p = plan(&[want(1, "/a", "tg1")], &h);
    assert_eq!(p.delete_later, vec!["r2".to_string()]);
    assert!(p.delete_first.is_empty());
}

#[test]
fn swapped_rules_are_one_priority_call() {
    let w = vec![want(1, "/b", "tg2"), want(2, "/a", "tg1")];
    let h = vec![have("r1", 1, "/a", "tg1"), have("r2", 2, "/b", "tg2")];
    let p = plan(&w, &h);
    assert!(p.modify.is_empty() && p.create.is_empty());
    assert_eq!(p.priorities, vec![("r2".into(), 1), ("r1".into(), 2)]);
}

#[test]
fn changed_rules_reuse_existing_rules_in_place() {
    let w = vec![want(1, "/x", "tg9"), want(2, "/y", "tg9")];
    let h = vec![have("r1", 1, "/a", "tg1"), have("r2", 2, "/b", "tg2")];
    let p = plan(&w, &h);
    assert_eq!(p.modify, vec![(0, "r1".into()), (1, "r2".into())]);
    assert!(p.create.is_empty() && p.delete_first.is_empty() && p.delete_later.is_empty());
}
