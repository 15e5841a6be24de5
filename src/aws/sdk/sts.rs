//! Cross-account ELBv2 clients for TargetGroupBindings with `iamRoleArnToAssume`, as upstream:
//! STS AssumeRole with session name `AWS-LBC-<cluster>` (and the external id when given), one
//! session per (role, external id) reused until 30 s before its credentials expire, then assumed
//! again. The assumed clients share the controller's caller (throttles, retries, metrics).
//!
//! Each (role, external id) waits only on itself: one role's slow STS answer holds up no other.
//! A failure is remembered for [`RETRY_FAILED_AFTER`], so bindings (or admissions) naming a role
//! that cannot be assumed do not call STS on every try, and at most [`MAX_CONCURRENT_ASSUMES`]
//! calls run at once, however many distinct roles are named.

use std::collections::HashMap;
use std::sync::Arc;
use std::time::{Duration, SystemTime};

use async_trait::async_trait;
use aws_config::sts::AssumeRoleProvider;
use aws_config::SdkConfig;
use aws_sdk_elasticloadbalancingv2::config::ProvideCredentials;
use aws_smithy_types::error::display::DisplayErrorContext;

use super::SdkElbV2;
use crate::aws::caller::Caller;
use crate::aws::error::{AwsError, Result};
use crate::aws::{AssumeRole, ElbV2};

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

/// A failed AssumeRole is answered from memory this long before STS is asked again.
pub const RETRY_FAILED_AFTER: Duration = Duration::from_secs(30);
/// AssumeRole calls in flight at most.
pub const MAX_CONCURRENT_ASSUMES: usize = 4;
/// Past this many remembered roles, expired sessions and failures are swept.
const SWEEP_AT: usize = 1024;

/// What is known of one (role, external id).
#[derive(Default)]
enum Slot {
    #[default]
    Unknown,
    Assumed {
        client: Arc<dyn ElbV2>,
        renew_at: SystemTime,
    },
    Failed {
        error: AwsError,
        retry_at: SystemTime,
    },
}

impl Slot {
    /// The answer while still valid at `now`.
    fn current(&self, now: SystemTime) -> Option<Result<Arc<dyn ElbV2>>> {
        match self {
            Slot::Assumed { client, renew_at } if now < *renew_at => Some(Ok(client.clone())),
            Slot::Failed { error, retry_at } if now < *retry_at => Some(Err(error.clone())),
            _ => None,
        }
    }
}

impl std::fmt::Debug for Slot {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Slot::Unknown => f.write_str("Unknown"),
            Slot::Assumed { renew_at, .. } => f
                .debug_struct("Assumed")
                .field("renew_at", renew_at)
                .finish_non_exhaustive(),
            Slot::Failed { error, retry_at } => f
                .debug_struct("Failed")
                .field("error", error)
                .field("retry_at", retry_at)
                .finish(),
        }
    }
}

type Slots = HashMap<(String, String), Arc<tokio::sync::Mutex<Slot>>>;

/// Assumed-role ELBv2 clients over the SDK.
#[derive(Debug)]
pub struct SdkRoles {
    base: SdkConfig,
    sts_endpoint: Option<String>,
    elb_endpoint: Option<String>,
    caller: Caller,
    session_name: String,
    /// One slot per (role, external id), each locked only by its own callers.
    slots: std::sync::Mutex<Slots>,
    assumes: tokio::sync::Semaphore,
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
            slots: Default::default(),
            assumes: tokio::sync::Semaphore::new(MAX_CONCURRENT_ASSUMES),
        }
    }

    /// The slot of `key`, created when new; sweeps what has expired when many are held.
    fn slot(&self, key: (String, String)) -> Arc<tokio::sync::Mutex<Slot>> {
        let mut slots = self.slots.lock().unwrap_or_else(|p| p.into_inner());
        if slots.len() >= SWEEP_AT && !slots.contains_key(&key) {
            let now = SystemTime::now();
            slots.retain(|_, slot| {
                // A slot in use is kept; an idle one only while its answer holds.
                slot.try_lock()
                    .map_or(true, |s| s.current(now).is_some_and(|a| a.is_ok()))
            });
        }
        slots.entry(key).or_default().clone()
    }

    /// One AssumeRole call, bounded in time, and the ELBv2 client on its credentials.
    async fn assume(
        &self,
        role_arn: &str,
        external_id: &str,
    ) -> Result<(Arc<dyn ElbV2>, SystemTime)> {
        let _permit = self
            .assumes
            .acquire()
            .await
            .expect("the semaphore is never closed");
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
        // Bounded: callers of this role wait meanwhile, and an unreachable STS endpoint must
        // not stall its admissions and reconciles for long.
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
        Ok((client, renew_at))
    }
}

/// How long one AssumeRole may take.
const STS_TIMEOUT: Duration = Duration::from_secs(10);

#[async_trait]
impl AssumeRole for SdkRoles {
    async fn elbv2_as(&self, role_arn: &str, external_id: &str) -> Result<Arc<dyn ElbV2>> {
        let slot = self.slot((role_arn.to_string(), external_id.to_string()));
        // Concurrent callers of one role share its session (or its failure) instead of each
        // calling STS.
        let mut slot = slot.lock().await;
        if let Some(answer) = slot.current(SystemTime::now()) {
            return answer;
        }
        let (known, answer) = match self.assume(role_arn, external_id).await {
            Ok((client, renew_at)) => (
                Slot::Assumed {
                    client: client.clone(),
                    renew_at,
                },
                Ok(client),
            ),
            Err(error) => {
                tracing::warn!(role = %role_arn, %error, "cannot assume role; STS is asked again after {RETRY_FAILED_AFTER:?}");
                let retry_at = SystemTime::now() + RETRY_FAILED_AFTER;
                (
                    Slot::Failed {
                        error: error.clone(),
                        retry_at,
                    },
                    Err(error),
                )
            }
        };
        *slot = known;
        answer
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicUsize, Ordering};

    #[test]
    fn session_names_are_upstreams() {
        assert_eq!(session_name("prod-eu_1.a"), "AWS-LBC-prod-eu_1.a");
        assert_eq!(session_name("my cluster/ü"), "AWS-LBC-mycluster");
        assert_eq!(session_name(&"x".repeat(3000)).len(), 2047);
    }

    /// An STS endpoint on 127.0.0.1 that refuses every role, answering roles named `slow` only
    /// after 3 s; returns its URL and its request count.
    async fn sts_stub() -> (String, Arc<AtomicUsize>, tokio_util::sync::DropGuard) {
        let calls = Arc::new(AtomicUsize::new(0));
        let counted = calls.clone();
        let app = axum::Router::new().fallback(move |body: String| {
            let counted = counted.clone();
            async move {
                counted.fetch_add(1, Ordering::SeqCst);
                if body.contains("slow") {
                    tokio::time::sleep(Duration::from_secs(3)).await;
                }
                (
                    axum::http::StatusCode::FORBIDDEN,
                    [("content-type", "text/xml")],
                    "<ErrorResponse><Error><Type>Sender</Type><Code>AccessDenied</Code>\
                     <Message>not allowed</Message></Error><RequestId>r</RequestId></ErrorResponse>",
                )
            }
        });
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let url = format!("http://{}", listener.local_addr().unwrap());
        let stop = tokio_util::sync::CancellationToken::new();
        let until = stop.clone();
        tokio::spawn(async move {
            axum::serve(listener, app)
                .with_graceful_shutdown(until.cancelled_owned())
                .await
        });
        (url, calls, stop.drop_guard())
    }

    async fn roles(sts: &str) -> SdkRoles {
        let sdk = aws_config::defaults(aws_config::BehaviorVersion::latest())
            .region(aws_config::Region::new("us-west-2"))
            .credentials_provider(aws_sdk_elasticloadbalancingv2::config::Credentials::new(
                "AKIDTEST", "secret", None, None, "test",
            ))
            .retry_config(aws_config::retry::RetryConfig::disabled())
            .load()
            .await;
        SdkRoles::new(sdk, Some(sts.into()), None, Caller::default(), "it")
    }

    #[tokio::test]
    async fn a_refused_role_is_remembered_instead_of_asked_again() {
        let (url, calls, _stop) = sts_stub().await;
        let roles = roles(&url).await;
        let role = "arn:aws:iam::222222222222:role/denied";
        for _ in 0..3 {
            let Err(err) = roles.elbv2_as(role, "").await else {
                panic!("assumed a refused role")
            };
            assert!(err.to_string().contains("unable to assume role"), "{err}");
        }
        assert_eq!(
            calls.load(Ordering::SeqCst),
            1,
            "one STS call for three tries"
        );
        // Another external id is another session.
        assert!(roles.elbv2_as(role, "ext").await.is_err());
        assert_eq!(calls.load(Ordering::SeqCst), 2);
    }

    #[tokio::test]
    async fn one_roles_slow_sts_answer_holds_up_no_other_role() {
        let (url, _calls, _stop) = sts_stub().await;
        let roles = Arc::new(roles(&url).await);
        let slow = tokio::spawn({
            let roles = roles.clone();
            async move {
                roles
                    .elbv2_as("arn:aws:iam::222222222222:role/slow", "")
                    .await
            }
        });
        tokio::time::sleep(Duration::from_millis(200)).await;
        assert!(roles
            .elbv2_as("arn:aws:iam::222222222222:role/other", "")
            .await
            .is_err());
        // Answered while the slow role's STS call is still out: it did not wait behind it.
        assert!(!slow.is_finished(), "the slow role is still being assumed");
        assert!(slow.await.unwrap().is_err());
    }
}
