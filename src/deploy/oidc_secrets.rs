//! OIDC client secrets as the deployer compares them. ELBv2 never returns `ClientSecret` in
//! DescribeListeners/DescribeRules, so a described OIDC action is completed with the secret this
//! process last sent to that listener or rule before it is compared: an unchanged stack makes no
//! write, a changed Secret is pushed. After a restart nothing is known, so each OIDC action is
//! re-sent once (upstream, which compares the secret as described, re-sends on every
//! reconcile). Where a peer does echo the secret (moto), the echo is compared as it is.

use std::collections::HashMap;
use std::sync::Mutex;

use crate::model::{Action, Redacted};

/// Secret last sent, by listener/rule ARN and action position. `Debug` shows no values.
#[derive(Default)]
pub struct SentSecrets(Mutex<HashMap<String, Vec<(usize, String)>>>);

impl std::fmt::Debug for SentSecrets {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let n = self.0.lock().map(|m| m.len()).unwrap_or_default();
        write!(f, "SentSecrets({n} resources)")
    }
}

impl SentSecrets {
    fn map(&self) -> std::sync::MutexGuard<'_, HashMap<String, Vec<(usize, String)>>> {
        self.0.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Gives described OIDC actions without a secret the one last sent to `arn` at that position.
    pub fn fill(&self, arn: &str, actions: &mut [Action]) {
        let map = self.map();
        let Some(sent) = map.get(arn) else { return };
        for (i, a) in actions.iter_mut().enumerate() {
            if let Action::AuthenticateOidc { config: c } = a {
                if c.client_secret.expose().is_empty() {
                    if let Some((_, s)) = sent.iter().find(|(p, _)| *p == i) {
                        c.client_secret = Redacted::new(s.clone());
                    }
                }
            }
        }
    }

    /// `arn` now carries `actions` (just written, or found equal).
    pub fn record(&self, arn: &str, actions: &[Action]) {
        let sent: Vec<(usize, String)> = actions
            .iter()
            .enumerate()
            .filter_map(|(i, a)| match a {
                Action::AuthenticateOidc { config: c } if !c.client_secret.expose().is_empty() => {
                    Some((i, c.client_secret.expose().to_string()))
                }
                _ => None,
            })
            .collect();
        let mut map = self.map();
        if sent.is_empty() {
            map.remove(arn);
        } else {
            map.insert(arn.to_string(), sent);
        }
    }

    /// `arn` is gone.
    pub fn forget(&self, arn: &str) {
        self.map().remove(arn);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::AuthenticateOidcConfig;

    fn oidc(secret: Option<&str>) -> Action {
        Action::AuthenticateOidc {
            config: AuthenticateOidcConfig {
                client_id: Redacted::new("id"),
                client_secret: Redacted::new(secret.unwrap_or_default()),
                ..Default::default()
            },
        }
    }

    #[test]
    fn described_actions_get_the_secret_last_sent_to_that_resource_only() {
        let s = SentSecrets::default();
        s.record("rule-a", &[oidc(Some("one")), Action::forward_arn("tg")]);
        let mut described = vec![oidc(None), Action::forward_arn("tg")];
        s.fill("rule-b", &mut described);
        assert_eq!(described[0], oidc(None));
        s.fill("rule-a", &mut described);
        assert_eq!(described[0], oidc(Some("one")));
        // An echoed secret (moto) is kept as described.
        let mut echoed = vec![oidc(Some("other"))];
        s.fill("rule-a", &mut echoed);
        assert_eq!(echoed[0], oidc(Some("other")));
        s.forget("rule-a");
        let mut after = vec![oidc(None)];
        s.fill("rule-a", &mut after);
        assert_eq!(after[0], oidc(None));
        assert!(!format!("{s:?}").contains("one"));
    }
}
