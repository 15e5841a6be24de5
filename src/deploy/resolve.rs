//! Model references resolved: what the stack's tokens stand for, filled in as the deploy
//! creates things, and the model's actions with every target group token replaced by its ARN
//! (`Token::Literal`), the form the AWS layer takes (and refuses otherwise).

use std::collections::BTreeMap;

use super::error::{Error, Result};
use crate::model::{self, Token};

/// What tokens in the model resolve to, filled in as the deploy creates things.
#[derive(Debug, Clone, Default)]
pub struct Resolved {
    pub load_balancer_arn: Option<String>,
    pub frontend_nlb_arn: Option<String>,
    pub listener_arns: BTreeMap<i32, String>,
    pub target_group_arns: BTreeMap<String, String>,
    pub managed_sg: Option<String>,
    pub backend_sg: Option<String>,
    /// Trust store ARN by name (`mutual-authentication`).
    pub trust_store_arns: BTreeMap<String, String>,
    /// ARN of each ACM certificate the deploy created (or found), by model resource id.
    pub certificate_arns: BTreeMap<String, String>,
}

impl Resolved {
    pub fn token(&self, t: &Token) -> Result<String> {
        let missing = |what: String| Error::Invalid(format!("unresolved reference to {what}"));
        match t {
            Token::Literal(s) => Ok(s.clone()),
            Token::LoadBalancerArn => self
                .load_balancer_arn
                .clone()
                .ok_or_else(|| missing("the load balancer".into())),
            Token::FrontendNlbArn => self
                .frontend_nlb_arn
                .clone()
                .ok_or_else(|| missing("the frontend NLB".into())),
            Token::ListenerArn(p) => self
                .listener_arns
                .get(p)
                .cloned()
                .ok_or_else(|| missing(format!("listener {p}"))),
            Token::TargetGroupArn(id) => self
                .target_group_arns
                .get(id)
                .cloned()
                .ok_or_else(|| missing(format!("target group {id}"))),
            Token::ManagedSecurityGroupId => self
                .managed_sg
                .clone()
                .ok_or_else(|| missing("the managed security group".into())),
            Token::BackendSecurityGroupId => self
                .backend_sg
                .clone()
                .ok_or_else(|| missing("the backend security group".into())),
            Token::CertificateArn(id) => self
                .certificate_arns
                .get(id)
                .cloned()
                .ok_or_else(|| missing(format!("certificate {id}"))),
        }
    }

    /// The token as the literal it stands for.
    pub fn literal(&self, t: &Token) -> Result<Token> {
        self.token(t).map(Token::Literal)
    }

    /// The action with its target groups' ARNs in place of their tokens; nothing else changes.
    pub fn action(&self, a: &model::Action) -> Result<model::Action> {
        let model::Action::Forward { config } = a else {
            return Ok(a.clone());
        };
        let mut config = config.clone();
        for t in &mut config.target_groups {
            t.target_group_arn = self.literal(&t.target_group_arn)?;
        }
        Ok(model::Action::Forward { config })
    }

    pub fn actions(&self, list: &[model::Action]) -> Result<Vec<model::Action>> {
        list.iter().map(|a| self.action(a)).collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{ForwardConfig, StickinessConfig, TargetGroupTuple};

    #[test]
    fn tokens_resolve_or_fail_clearly() {
        let mut r = Resolved::default();
        r.target_group_arns
            .insert("ns/i-svc:80".into(), "arn:tg".into());
        let forward = |arn: Token| model::Action::Forward {
            config: ForwardConfig {
                target_groups: vec![TargetGroupTuple {
                    target_group_arn: arn,
                    weight: Some(5),
                }],
                target_group_stickiness_config: Some(StickinessConfig {
                    enabled: Some(true),
                    duration_seconds: Some(60),
                }),
            },
        };
        // Only the ARN changes: weight and stickiness are the model's.
        assert_eq!(
            r.action(&forward(Token::TargetGroupArn("ns/i-svc:80".into())))
                .unwrap(),
            forward(Token::Literal("arn:tg".into()))
        );
        let fixed = model::Action::fixed("404", None);
        assert_eq!(
            r.actions(std::slice::from_ref(&fixed)).unwrap(),
            vec![fixed]
        );
        let err = r
            .action(&forward(Token::TargetGroupArn("ns/other:80".into())))
            .unwrap_err();
        assert_eq!(
            err.to_string(),
            "unresolved reference to target group ns/other:80"
        );
        let err = r.token(&Token::ListenerArn(443)).unwrap_err();
        assert_eq!(err.to_string(), "unresolved reference to listener 443");
        let cert = Token::CertificateArn("amazon_issued/a.example.com-01234567".into());
        let err = r.token(&cert).unwrap_err();
        assert_eq!(
            err.to_string(),
            "unresolved reference to certificate amazon_issued/a.example.com-01234567"
        );
        r.certificate_arns.insert(
            "amazon_issued/a.example.com-01234567".into(),
            "arn:aws:acm:us-west-2:1:certificate/a".into(),
        );
        assert_eq!(
            r.token(&cert).unwrap(),
            "arn:aws:acm:us-west-2:1:certificate/a"
        );
    }
}
