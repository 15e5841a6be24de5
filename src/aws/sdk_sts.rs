//! Cross-account ELBv2 clients for TargetGroupBindings with `iamRoleArnToAssume`, as upstream:
//! STS AssumeRole with session name `AWS-LBC-<cluster>` (and the external id when given), one
//! session per (role, external id) reused until 30 s before its credentials expire, then assumed
//! again. The assumed clients share the controller's caller (throttles, retries, metrics).

use std::collections::HashMap;
use std::sync::Arc;
use std::time::{Duration, SystemTime};

use async_trait::async_trait;
use aws_config::sts::AssumeRoleProvider;
use aws_config::SdkConfig;
use aws_sdk_elasticloadbalancingv2::config::ProvideCredentials;
use aws_smithy_types::error::display::DisplayErrorContext;

use super::caller::Caller;
use super::error::{AwsError, Result};
use super::sdk::SdkElbV2;
use super::{AssumeRole, ElbV2};

/// Sessions are renewed this long before their credentials expire (upstream's buffer).
const RENEW_BEFORE_EXPIRY: Duration = Duration::from_secs(30);
/// Upstream's cap on the session name.
const MAX_SESSION_NAME: usize = 2047;

/// Upstream's session name: `AWS-LBC-` and the cluster name without characters STS refuses.
pub fn session_name(cluster: &str) -> String {
    let safe: String = cluster
        .chars()
        .filter(|c| c.is_ascii_alphanumeric() || "=,.@-_".contains(*c))
        .collect();
    let mut name = format!("AWS-LBC-{safe}");
    name.truncate(MAX_SESSION_NAME);
    name
}

struct Session {
    client: Arc<dyn ElbV2>,
    renew_at: SystemTime,
}

impl std::fmt::Debug for Session {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Session")
            .field("renew_at", &self.renew_at)
            .finish_non_exhaustive()
    }
}

/// Assumed-role ELBv2 clients over the SDK.
#[derive(Debug)]
pub struct SdkRoles {
    base: SdkConfig,
    sts_endpoint: Option<String>,
    elb_endpoint: Option<String>,
    caller: Caller,
    session_name: String,
    sessions: tokio::sync::Mutex<HashMap<(String, String), Session>>,
}

impl SdkRoles {
    pub fn new(
        base: SdkConfig,
        sts_endpoint: Option<String>,
        elb_endpoint: Option<String>,
        caller: Caller,
        cluster: &str,
    ) -> Self {
        SdkRoles {
            base,
            sts_endpoint,
            elb_endpoint,
            caller,
            session_name: session_name(cluster),
            sessions: tokio::sync::Mutex::new(HashMap::new()),
        }
    }
}

/// How long one AssumeRole may take.
const STS_TIMEOUT: Duration = Duration::from_secs(10);

#[async_trait]
impl AssumeRole for SdkRoles {
    async fn elbv2_as(&self, role_arn: &str, external_id: &str) -> Result<Arc<dyn ElbV2>> {
        let key = (role_arn.to_string(), external_id.to_string());
        // One lock for the lookup and the STS call: concurrent reconciles of one role share a
        // session instead of each assuming it.
        let mut sessions = self.sessions.lock().await;
        if let Some(s) = sessions.get(&key) {
            if SystemTime::now() < s.renew_at {
                return Ok(s.client.clone());
            }
        }
        let mut sts = self.base.to_builder();
        if let Some(url) = &self.sts_endpoint {
            sts = sts.endpoint_url(url);
        }
        let mut provider = AssumeRoleProvider::builder(role_arn)
            .session_name(&self.session_name)
            .configure(&sts.build());
        if !external_id.is_empty() {
            provider = provider.external_id(external_id);
        }
        // Bounded: the lock above is held meanwhile, and an unreachable STS endpoint must not
        // stall every cross-account admission and reconcile behind it.
        let assumed = tokio::time::timeout(STS_TIMEOUT, async {
            provider.build().await.provide_credentials().await
        })
        .await
        .map_err(|_| AwsError::Other {
            code: "AssumeRoleTimeout".into(),
            message: format!(
                "unable to assume role {role_arn}: STS did not answer within {STS_TIMEOUT:?}"
            ),
            status: None,
        })?;
        let creds = assumed.map_err(|e| AwsError::Other {
            code: "AssumeRoleFailed".into(),
            message: format!(
                "unable to assume role {role_arn}: {}",
                DisplayErrorContext(&e)
            ),
            status: None,
        })?;
        let renew_at = creds
            .expiry()
            .and_then(|t| t.checked_sub(RENEW_BEFORE_EXPIRY))
            .unwrap_or_else(|| SystemTime::now() + Duration::from_secs(15 * 60));
        let mut conf = aws_sdk_elasticloadbalancingv2::config::Builder::from(&self.base)
            .credentials_provider(creds);
        if let Some(url) = &self.elb_endpoint {
            conf = conf.endpoint_url(url);
        }
        let client: Arc<dyn ElbV2> = Arc::new(SdkElbV2::new(
            aws_sdk_elasticloadbalancingv2::Client::from_conf(conf.build()),
            self.caller.clone(),
        ));
        tracing::info!(role = %role_arn, "assumed role for cross-account target groups");
        sessions.insert(
            key,
            Session {
                client: client.clone(),
                renew_at,
            },
        );
        Ok(client)
    }
}

#[cfg(test)]
mod tests {
    use super::session_name;

    #[test]
    fn session_names_are_upstreams() {
        assert_eq!(session_name("prod-eu_1.a"), "AWS-LBC-prod-eu_1.a");
        assert_eq!(session_name("my cluster/ü"), "AWS-LBC-mycluster");
        assert_eq!(session_name(&"x".repeat(3000)).len(), 2047);
    }
}
