//! ELBv2 over the AWS SDK: the client, its calls (`calls.rs`), the conversions between the
//! SDK's types and ours (`convert.rs`; actions, conditions and transforms in `rules.rs`) and the
//! write requests built from the model (`requests/`, which the fake builds too, so both refuse
//! the same inputs).

mod calls;
mod convert;
pub(crate) mod requests;
mod rules;

use crate::aws::caller::Caller;

/// ELBv2 over the AWS SDK.
#[derive(Debug, Clone)]
pub struct SdkElbV2 {
    pub(crate) client: aws_sdk_elasticloadbalancingv2::Client,
    pub(crate) caller: Caller,
}

impl SdkElbV2 {
    pub fn new(client: aws_sdk_elasticloadbalancingv2::Client, caller: Caller) -> Self {
        Self { client, caller }
    }
}
