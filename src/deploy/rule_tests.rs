//! Unit tests of the rule planner.

use super::*;

fn path(p: &str) -> Vec<model::RuleCondition> {
    vec![model::RuleCondition::PathPattern {
        config: model::action::ValuesConfig {
            values: vec![p.into()],
            regex_values: vec![],
        },
    }]
}

fn want(prio: u32, p: &str, tg: &str) -> WantRule {
    WantRule {
        priority: prio,
        rule: model::ListenerRule {
            id: format!("80:{prio}"),
            ..model::ListenerRule::new(
                Token::Literal("arn:l".into()),
                prio as i32,
                path(p),
                vec![model::Action::forward_arn(tg)],
            )
        },
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
            actions: vec![model::Action::Forward {
                config: model::ForwardConfig {
                    target_groups: vec![model::TargetGroupTuple {
                        target_group_arn: Token::Literal(tg.into()),
                        weight: Some(1),
                    }],
                    target_group_stickiness_config: Some(model::StickinessConfig {
                        enabled: Some(false),
                        duration_seconds: None,
                    }),
                },
            }],
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

#[test]
fn want_rule_is_the_model_rule_on_its_listener_with_arns() {
    let mut res = Resolved::default();
    res.target_group_arns.insert("tg".into(), "arn:tg".into());
    let r = model::ListenerRule {
        id: "80:3".into(),
        tags: [("team".to_string(), "a".to_string())].into(),
        ..model::ListenerRule::new(
            Token::ListenerArn(80),
            3,
            path("/a"),
            vec![model::Action::Forward {
                config: model::ForwardConfig {
                    target_groups: vec![model::TargetGroupTuple {
                        target_group_arn: Token::TargetGroupArn("tg".into()),
                        weight: Some(2),
                    }],
                    target_group_stickiness_config: None,
                },
            }],
        )
    };
    let w = want_rule(&r, "arn:listener", &res).unwrap();
    assert_eq!(w.priority, 3);
    assert_eq!(w.rule.listener_arn, Token::Literal("arn:listener".into()));
    let model::Action::Forward { config } = &w.rule.actions[0] else {
        panic!("{:?}", w.rule.actions)
    };
    assert_eq!(
        config.target_groups[0].target_group_arn,
        Token::Literal("arn:tg".into())
    );
    assert_eq!(config.target_groups[0].weight, Some(2));
    // Everything else is the model rule's own.
    assert_eq!((&w.rule.conditions, &w.rule.tags), (&r.conditions, &r.tags));
    let negative = model::ListenerRule { priority: -1, ..r };
    assert_eq!(
        want_rule(&negative, "arn:listener", &res)
            .unwrap_err()
            .to_string(),
        "invalid priority -1 of rule 80:3"
    );
}
