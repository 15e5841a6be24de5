//! The real AWS implementation, one module per AWS service (mirroring `fake/`): ELBv2, EC2,
//! ACM, Route 53, the add-ons (WAFv2, WAF Regional, Shield), STS roles, the Resource Groups
//! Tagging API and Global Accelerator. Shared here: SDK clients run with retries off (ours run in
//! [`Caller`]), SDK errors become [`AwsError`], and the pagination and parameter helpers every
//! service uses.

mod acm;
mod addons;
mod ec2;
pub(crate) mod elbv2;
mod global_accelerator;
mod route53;
pub mod sts;
mod tagging;

pub use acm::{build_acm, build_acm_fenced, SdkAcm};
pub use addons::build_addons;
pub use ec2::SdkEc2;
pub use elbv2::SdkElbV2;
pub use global_accelerator::{build_global_accelerator, SdkGlobalAccelerator};
pub use route53::{build_route53, SdkRoute53};
pub use tagging::build_tagging;

use std::error::Error as StdError;
use std::future::Future;

use aws_smithy_runtime_api::client::orchestrator::HttpResponse;
use aws_smithy_runtime_api::client::result::SdkError;
use aws_smithy_types::error::display::DisplayErrorContext;
use aws_smithy_types::error::metadata::ProvideErrorMetadata;

use super::caller::Caller;
use super::error::{AwsError, Result};
use super::types::Service;

/// Turns an SDK error into ours, keeping the AWS code, message and HTTP status.
pub(crate) fn from_sdk<E>(err: SdkError<E, HttpResponse>) -> AwsError
where
    E: ProvideErrorMetadata + StdError + Send + Sync + 'static,
{
    match &err {
        SdkError::ServiceError(se) => {
            let status = se.raw().status().as_u16();
            let code = se.err().code().unwrap_or("Unknown").to_string();
            let message = se.err().message().unwrap_or_default().to_string();
            AwsError::from_code(&code, message, Some(status))
        }
        SdkError::ResponseError(re) => AwsError::Other {
            code: "ResponseError".into(),
            message: DisplayErrorContext(&err).to_string(),
            status: Some(re.raw().status().as_u16()),
        },
        SdkError::TimeoutError(_) => AwsError::Other {
            code: "RequestTimeout".into(),
            message: DisplayErrorContext(&err).to_string(),
            status: None,
        },
        SdkError::DispatchFailure(_) => AwsError::Other {
            code: "RequestError".into(),
            message: DisplayErrorContext(&err).to_string(),
            status: None,
        },
        // Construction failures are our bug or bad input: never retried.
        _ => AwsError::Validation {
            code: "ConstructionFailure".into(),
            message: DisplayErrorContext(&err).to_string(),
        },
    }
}

/// Sends one SDK request through the caller (throttle, retry, metrics).
pub(crate) async fn send<T, E, F, Fut>(
    caller: &Caller,
    service: Service,
    op: &'static str,
    mut f: F,
) -> Result<T>
where
    F: FnMut() -> Fut,
    Fut: Future<Output = std::result::Result<T, SdkError<E, HttpResponse>>>,
    E: ProvideErrorMetadata + StdError + Send + Sync + 'static,
{
    caller
        .call(service, op, || {
            let fut = f();
            async move { fut.await.map_err(from_sdk) }
        })
        .await
}

/// Follows ELBv2 `Marker` pagination: `fetch(marker)` sends one request and returns that page's
/// items and its next marker; pages are requested until the marker runs out.
pub(crate) async fn all_pages<T, F, Fut>(mut fetch: F) -> Result<Vec<T>>
where
    F: FnMut(Option<String>) -> Fut,
    Fut: Future<Output = Result<(Vec<T>, Option<String>)>>,
{
    let mut out = Vec::new();
    let mut marker = None;
    loop {
        let (items, next) = fetch(marker.take()).await?;
        out.extend(items);
        match next {
            Some(m) if !m.is_empty() => marker = Some(m),
            _ => return Ok(out),
        }
    }
}

/// `None` for an empty list, so the SDK leaves the parameter out (AWS rejects some empty lists).
pub(crate) fn non_empty<T: Clone>(v: &[T]) -> Option<Vec<T>> {
    if v.is_empty() {
        None
    } else {
        Some(v.to_vec())
    }
}

pub(crate) fn s(v: Option<&str>) -> String {
    v.unwrap_or_default().to_string()
}

pub(crate) fn os(v: Option<&str>) -> Option<String> {
    v.map(str::to_string)
}
