//! The listener and rule write requests, each built from the model's `Listener` /
//! `ListenerRule` by one pure function (no client, no network): CreateListener, ModifyListener,
//! CreateRule, ModifyRule. Each destructures its model struct whole, so a field added to the
//! model does not compile until it is sent here or named as not part of the call; the tests
//! (`listeners_tests.rs`) read every sent field back from the built input.

use aws_sdk_elasticloadbalancingv2::operation::create_listener::builders::CreateListenerInputBuilder;
use aws_sdk_elasticloadbalancingv2::operation::create_listener::CreateListenerInput;
use aws_sdk_elasticloadbalancingv2::operation::create_rule::builders::CreateRuleInputBuilder;
use aws_sdk_elasticloadbalancingv2::operation::create_rule::CreateRuleInput;
use aws_sdk_elasticloadbalancingv2::operation::modify_listener::builders::ModifyListenerInputBuilder;
use aws_sdk_elasticloadbalancingv2::operation::modify_listener::ModifyListenerInput;
use aws_sdk_elasticloadbalancingv2::operation::modify_rule::builders::ModifyRuleInputBuilder;
use aws_sdk_elasticloadbalancingv2::operation::modify_rule::ModifyRuleInput;
use aws_sdk_elasticloadbalancingv2::types as et;

use crate::aws::error::{AwsError, Result};
use crate::aws::sdk::elbv2::convert::{certs_to, mtls_to, tags_to};
use crate::aws::sdk::elbv2::rules::{actions_to, cond_to, transform_to};
use crate::aws::sdk::non_empty;
use crate::aws::types::literal;
use crate::model::{Listener, ListenerRule, Transform};

/// A listener whose certificates ACM has still to complete is never sent with a part of them.
fn discovered(l: &Listener) -> Result<()> {
    if l.certificate_discovery.is_empty() {
        return Ok(());
    }
    Err(AwsError::Unresolved(format!(
        "listener {}: its ACM certificates were not discovered before the call",
        l.port
    )))
}

fn transforms_to(transforms: &[Transform]) -> Vec<et::RuleTransform> {
    transforms.iter().map(transform_to).collect()
}

/// CreateListener. Not part of it: `id` (the resource tag carries it), `certificate_discovery`
/// (must be empty: done before), `attributes` (ModifyListenerAttributes).
pub(crate) fn create_listener(l: &Listener) -> Result<CreateListenerInputBuilder> {
    discovered(l)?;
    let Listener {
        id: _,
        load_balancer_arn,
        port,
        protocol,
        default_actions,
        certificates,
        certificate_discovery: _,
        ssl_policy,
        mutual_authentication,
        alpn_policy,
        attributes: _,
        tags,
    } = l;
    Ok(CreateListenerInput::builder()
        .load_balancer_arn(literal(load_balancer_arn, "listener's load balancer")?)
        .port(*port)
        .protocol(et::ProtocolEnum::from(protocol.as_str()))
        .set_ssl_policy(ssl_policy.clone())
        .set_certificates(certs_to(certificates))
        .set_alpn_policy(alpn_policy.as_ref().map(|p| vec![p.clone()]))
        .set_default_actions(Some(actions_to(default_actions)?))
        .set_mutual_authentication(mutual_authentication.as_ref().map(mtls_to).transpose()?)
        .set_tags(tags_to(tags)))
}

/// ModifyListener of listener `arn`; it replaces every field it is sent and keeps the others.
/// Not part of it: `id`, `load_balancer_arn` (a listener does not move), `certificate_discovery`
/// (must be empty), `attributes` (ModifyListenerAttributes), `tags` (AddTags / RemoveTags).
pub(crate) fn modify_listener(arn: &str, l: &Listener) -> Result<ModifyListenerInputBuilder> {
    discovered(l)?;
    let Listener {
        id: _,
        load_balancer_arn: _,
        port,
        protocol,
        default_actions,
        certificates,
        certificate_discovery: _,
        ssl_policy,
        mutual_authentication,
        alpn_policy,
        attributes: _,
        tags: _,
    } = l;
    Ok(ModifyListenerInput::builder()
        .listener_arn(arn)
        .port(*port)
        .protocol(et::ProtocolEnum::from(protocol.as_str()))
        .set_ssl_policy(ssl_policy.clone())
        .set_certificates(certs_to(certificates))
        .set_alpn_policy(alpn_policy.as_ref().map(|p| vec![p.clone()]))
        .set_default_actions(Some(actions_to(default_actions)?))
        .set_mutual_authentication(mutual_authentication.as_ref().map(mtls_to).transpose()?))
}

/// CreateRule. Not part of it: `id` (the resource tag carries it), `ingress` (where the rule
/// comes from).
pub(crate) fn create_rule(r: &ListenerRule) -> Result<CreateRuleInputBuilder> {
    let ListenerRule {
        id: _,
        listener_arn,
        priority,
        ingress: _,
        conditions,
        actions,
        transforms,
        tags,
    } = r;
    Ok(CreateRuleInput::builder()
        .listener_arn(literal(listener_arn, "rule's listener")?)
        .priority(*priority)
        .set_conditions(Some(conditions.iter().map(cond_to).collect()))
        .set_actions(Some(actions_to(actions)?))
        .set_transforms(non_empty(&transforms_to(transforms)))
        .set_tags(tags_to(tags)))
}

/// ModifyRule of rule `arn`: conditions, actions and transforms replaced (no transforms is
/// sent as ResetTransforms, since an empty list means "keep"). Not part of it: `id`,
/// `listener_arn` (a rule does not move), `priority` (SetRulePriorities), `ingress`, `tags`
/// (AddTags / RemoveTags).
pub(crate) fn modify_rule(arn: &str, r: &ListenerRule) -> Result<ModifyRuleInputBuilder> {
    let ListenerRule {
        id: _,
        listener_arn: _,
        priority: _,
        ingress: _,
        conditions,
        actions,
        transforms,
        tags: _,
    } = r;
    let b = ModifyRuleInput::builder()
        .rule_arn(arn)
        .set_conditions(Some(conditions.iter().map(cond_to).collect()))
        .set_actions(Some(actions_to(actions)?));
    Ok(if transforms.is_empty() {
        b.reset_transforms(true)
    } else {
        b.set_transforms(Some(transforms_to(transforms)))
    })
}

#[cfg(test)]
#[path = "listeners_tests.rs"]
mod tests;
