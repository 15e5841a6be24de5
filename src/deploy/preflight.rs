//! Checks made before the first AWS call of a deploy: a stack that needs something this
//! deployer does not do is refused whole, so a deploy never stops half-way with security
//! groups, target groups or a load balancer already written. The model builder refuses these
//! inputs first (with the Ingress and annotation named); this is the deployer's own guard for
//! stacks built any other way.

use super::error::{Error, Result};
use crate::model::{Action, Stack, Token};

fn action_need(a: &Action) -> Option<&'static str> {
    match a {
        Action::Forward { config } => config
            .target_groups
            .iter()
            .any(|t| matches!(&t.target_group_arn, Token::Literal(s) if s.starts_with("name:")))
            .then_some("forwards to a target group by name"),
        _ => None,
    }
}

/// The first thing of `stack` this deployer cannot deploy, as an `Unsupported` error.
pub fn check(stack: &Stack) -> Result<()> {
    let unsupported = |what: String| Err(Error::Unsupported(what));
    for l in &stack.listeners {
        if let Some(what) = l.default_actions.iter().find_map(action_need) {
            return unsupported(format!("{what} on listener {}", l.port));
        }
    }
    for r in &stack.listener_rules {
        if let Some(what) = r.actions.iter().find_map(action_need) {
            return unsupported(format!("{what} on rule {}", r.id));
        }
    }
    Ok(())
}
