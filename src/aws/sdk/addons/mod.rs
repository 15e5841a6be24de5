//! `WafV2`, `WafRegional` and `Shield` over the AWS SDK (one module each), and their
//! construction next to the ELBv2/EC2 clients: the same region, credentials chain, `Caller`
//! settings (throttle, retries, metrics under the SDK service ids `WAFV2`, `WAF Regional`,
//! `Shield`) and leader fence, with `--aws-api-endpoints` overrides (`wafv2=`, `waf-regional=`,
//! `shield=`).

mod shield;
mod waf_regional;
mod wafv2;

use aws_config::retry::RetryConfig;
use aws_config::{BehaviorVersion, Region};

use crate::aws::addons::AddonClients;
use crate::aws::caller::Caller;
use crate::aws::config::{endpoint_for, AwsConfig};
use crate::aws::fence::Fence;
use crate::aws::metrics::AwsMetrics;
use crate::aws::types::Service;
use shield::SdkShield;
use waf_regional::{waf_regional_available, SdkWafRegional};
use wafv2::SdkWafV2;

/// The add-on clients for `region` (as resolved with the ELBv2/EC2 clients), every write gated
/// by `fence`. All three are built; the deployer's flags decide which are used.
pub async fn build_addons(
    cfg: &AwsConfig,
    region: &str,
    metrics: Option<AwsMetrics>,
    fence: Fence,
) -> AddonClients {
    let caller = Caller::from_flags(&cfg.api_throttle, cfg.max_retries, metrics).with_fence(fence);
    let sdk = aws_config::defaults(BehaviorVersion::latest())
        .region(Region::new(region.to_string()))
        .retry_config(RetryConfig::disabled())
        .load()
        .await;
    let endpoint = |svc| endpoint_for(&cfg.api_endpoints, svc);
    let mut v2 = aws_sdk_wafv2::config::Builder::from(&sdk);
    if let Some(url) = endpoint(Service::WafV2) {
        v2 = v2.endpoint_url(url);
    }
    let mut regional = aws_sdk_wafregional::config::Builder::from(&sdk);
    if let Some(url) = endpoint(Service::WafRegional) {
        regional = regional.endpoint_url(url);
    }
    let mut shield = aws_sdk_shield::config::Builder::from(&sdk);
    if let Some(url) = endpoint(Service::Shield) {
        shield = shield.endpoint_url(url);
    }
    AddonClients {
        wafv2: Some(std::sync::Arc::new(SdkWafV2 {
            client: aws_sdk_wafv2::Client::from_conf(v2.build()),
            caller: caller.clone(),
        })),
        waf_regional: Some(std::sync::Arc::new(SdkWafRegional {
            client: aws_sdk_wafregional::Client::from_conf(regional.build()),
            caller: caller.clone(),
            available: waf_regional_available(region).await,
        })),
        shield: Some(std::sync::Arc::new(SdkShield {
            client: aws_sdk_shield::Client::from_conf(shield.build()),
            caller,
        })),
    }
}
