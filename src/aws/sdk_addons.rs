//! `WafV2`, `WafRegional` and `Shield` over the AWS SDK, and their construction next to the
//! ELBv2/EC2 clients: the same region, credentials chain, `Caller` settings (throttle, retries,
//! metrics under the SDK service ids `WAFV2`, `WAF Regional`, `Shield`) and leader fence, with
//! `--aws-api-endpoints` overrides (`wafv2=`, `waf-regional=`, `shield=`).

use async_trait::async_trait;
use aws_config::retry::RetryConfig;
use aws_config::{BehaviorVersion, Region};
use aws_sdk_wafregional::config::endpoint::ResolveEndpoint;

use super::addons::{AddonClients, Protection, Shield, WafRegional, WafV2, WebAclSummary};
use super::caller::Caller;
use super::config::{endpoint_for, AwsConfig};
use super::error::Result;
use super::fence::Fence;
use super::metrics::AwsMetrics;
use super::sdk::{all_pages, s, send};
use super::types::Service;

#[derive(Debug, Clone)]
pub struct SdkWafV2 {
    client: aws_sdk_wafv2::Client,
    caller: Caller,
}

#[derive(Debug, Clone)]
pub struct SdkWafRegional {
    client: aws_sdk_wafregional::Client,
    caller: Caller,
    available: bool,
}

#[derive(Debug, Clone)]
pub struct SdkShield {
    client: aws_sdk_shield::Client,
    caller: Caller,
}

/// Whether the SDK resolves a `waf-regional` endpoint for `region` (upstream's `Available()`).
async fn waf_regional_available(region: &str) -> bool {
    let Ok(params) = aws_sdk_wafregional::config::endpoint::Params::builder()
        .region(region)
        .build()
    else {
        return false;
    };
    let resolver = aws_sdk_wafregional::config::endpoint::DefaultResolver::new();
    ResolveEndpoint::resolve_endpoint(&resolver, &params)
        .await
        .is_ok()
}

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

#[async_trait]
impl WafV2 for SdkWafV2 {
    async fn get_web_acl_for_resource(&self, resource_arn: &str) -> Result<Option<String>> {
        let out = send(&self.caller, Service::WafV2, "GetWebACLForResource", || {
            self.client
                .get_web_acl_for_resource()
                .resource_arn(resource_arn)
                .send()
        })
        .await?;
        Ok(out.web_acl().map(|a| a.arn().to_string()))
    }

    async fn associate_web_acl(&self, web_acl_arn: &str, resource_arn: &str) -> Result<()> {
        send(&self.caller, Service::WafV2, "AssociateWebACL", || {
            self.client
                .associate_web_acl()
                .web_acl_arn(web_acl_arn)
                .resource_arn(resource_arn)
                .send()
        })
        .await?;
        Ok(())
    }

    async fn disassociate_web_acl(&self, resource_arn: &str) -> Result<()> {
        send(&self.caller, Service::WafV2, "DisassociateWebACL", || {
            self.client
                .disassociate_web_acl()
                .resource_arn(resource_arn)
                .send()
        })
        .await?;
        Ok(())
    }

    async fn list_web_acls(&self) -> Result<Vec<WebAclSummary>> {
        all_pages(|marker| async move {
            let out = send(&self.caller, Service::WafV2, "ListWebACLs", || {
                self.client
                    .list_web_acls()
                    .scope(aws_sdk_wafv2::types::Scope::Regional)
                    .set_next_marker(marker.clone())
                    .send()
            })
            .await?;
            let items = out
                .web_acls()
                .iter()
                .map(|a| WebAclSummary {
                    name: s(a.name()),
                    arn: s(a.arn()),
                })
                .collect();
            Ok((items, out.next_marker().map(str::to_string)))
        })
        .await
    }
}

#[async_trait]
impl WafRegional for SdkWafRegional {
    fn available(&self) -> bool {
        self.available
    }

    async fn get_web_acl_for_resource(&self, resource_arn: &str) -> Result<Option<String>> {
        let out = send(
            &self.caller,
            Service::WafRegional,
            "GetWebACLForResource",
            || {
                self.client
                    .get_web_acl_for_resource()
                    .resource_arn(resource_arn)
                    .send()
            },
        )
        .await?;
        Ok(out.web_acl_summary().map(|a| a.web_acl_id().to_string()))
    }

    async fn associate_web_acl(&self, web_acl_id: &str, resource_arn: &str) -> Result<()> {
        send(
            &self.caller,
            Service::WafRegional,
            "AssociateWebACL",
            || {
                self.client
                    .associate_web_acl()
                    .web_acl_id(web_acl_id)
                    .resource_arn(resource_arn)
                    .send()
            },
        )
        .await?;
        Ok(())
    }

    async fn disassociate_web_acl(&self, resource_arn: &str) -> Result<()> {
        send(
            &self.caller,
            Service::WafRegional,
            "DisassociateWebACL",
            || {
                self.client
                    .disassociate_web_acl()
                    .resource_arn(resource_arn)
                    .send()
            },
        )
        .await?;
        Ok(())
    }
}

#[async_trait]
impl Shield for SdkShield {
    async fn get_subscription_state(&self) -> Result<String> {
        let out = send(
            &self.caller,
            Service::Shield,
            "GetSubscriptionState",
            || self.client.get_subscription_state().send(),
        )
        .await?;
        Ok(out.subscription_state().as_str().to_string())
    }

    async fn describe_protection(&self, resource_arn: &str) -> Result<Option<Protection>> {
        let out = send(&self.caller, Service::Shield, "DescribeProtection", || {
            self.client
                .describe_protection()
                .resource_arn(resource_arn)
                .send()
        })
        .await;
        match out {
            Ok(out) => Ok(out.protection().map(|p| Protection {
                id: s(p.id()),
                name: s(p.name()),
                resource_arn: s(p.resource_arn()),
            })),
            Err(e) if e.is_not_found() => Ok(None),
            Err(e) => Err(e),
        }
    }

    async fn create_protection(&self, name: &str, resource_arn: &str) -> Result<String> {
        let out = send(&self.caller, Service::Shield, "CreateProtection", || {
            self.client
                .create_protection()
                .name(name)
                .resource_arn(resource_arn)
                .send()
        })
        .await?;
        Ok(s(out.protection_id()))
    }

    async fn delete_protection(&self, protection_id: &str) -> Result<()> {
        send(&self.caller, Service::Shield, "DeleteProtection", || {
            self.client
                .delete_protection()
                .protection_id(protection_id)
                .send()
        })
        .await?;
        Ok(())
    }
}
