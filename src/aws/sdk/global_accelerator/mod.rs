//! [`GlobalAccelerator`] over aws-sdk-globalaccelerator: requests through the [`Caller`]
//! (throttle, retries, metrics under the SDK service id `Global Accelerator`, the leader fence
//! on writes), pagination folded in. The client always talks to us-west-2, the one region AWS
//! serves the API from (upstream pins it too); `--aws-api-endpoints` may send it elsewhere under
//! upstream's key (`GlobalAccelerator=` / `globalaccelerator=`).

mod convert;
mod requests;

use std::sync::Arc;

use async_trait::async_trait;
use aws_config::retry::RetryConfig;
use aws_config::{BehaviorVersion, Region};

use super::{all_pages, send};
use crate::aws::caller::Caller;
use crate::aws::config::{endpoint_for, AwsConfig};
use crate::aws::error::{AwsError, Result};
use crate::aws::fence::Fence;
use crate::aws::global_accelerator::{
    DescribedAccelerator, DescribedEndpointGroup, DescribedListener, GlobalAccelerator,
    GA_API_REGION,
};
use crate::aws::metrics::AwsMetrics;
use crate::aws::types::{Service, Tags};
use crate::model::aga::{
    Accelerator, AgaListener, EndpointConfiguration, EndpointGroup, PortOverride,
};
use convert::{accelerator_from, group_from, listener_from, tags_from};

const SVC: Service = Service::GlobalAccelerator;
/// The largest page AWS serves for the List calls.
const PAGE: i32 = 100;

/// Global Accelerator over the AWS SDK.
#[derive(Debug, Clone)]
pub struct SdkGlobalAccelerator {
    client: aws_sdk_globalaccelerator::Client,
    caller: Caller,
}

impl SdkGlobalAccelerator {
    pub fn new(client: aws_sdk_globalaccelerator::Client, caller: Caller) -> Self {
        Self { client, caller }
    }
}

/// The Global Accelerator client of the controller: credentials from the default chain, region
/// us-west-2 whatever the cluster's, SDK retries off (ours run in the caller), every write
/// gated by the leader's `fence`.
pub async fn build_global_accelerator(
    cfg: &AwsConfig,
    metrics: Option<AwsMetrics>,
    fence: Fence,
) -> Arc<dyn GlobalAccelerator> {
    let caller = Caller::from_flags(&cfg.api_throttle, cfg.max_retries, metrics).with_fence(fence);
    let sdk = aws_config::defaults(BehaviorVersion::latest())
        .region(Region::new(GA_API_REGION))
        .retry_config(RetryConfig::disabled())
        .load()
        .await;
    let mut conf = aws_sdk_globalaccelerator::config::Builder::from(&sdk);
    if let Some(url) = endpoint_for(&cfg.api_endpoints, SVC) {
        conf = conf.endpoint_url(url);
    }
    Arc::new(SdkGlobalAccelerator::new(
        aws_sdk_globalaccelerator::Client::from_conf(conf.build()),
        caller,
    ))
}

/// A successful answer without the resource it describes: never retried (AWS answered).
fn empty(op: &str) -> AwsError {
    AwsError::Other {
        code: "EmptyResponse".into(),
        message: format!("{op} answered without the resource"),
        status: Some(200),
    }
}

#[async_trait]
impl GlobalAccelerator for SdkGlobalAccelerator {
    async fn list_accelerators(&self) -> Result<Vec<DescribedAccelerator>> {
        all_pages(|token| async move {
            let page = send(&self.caller, SVC, "ListAccelerators", || {
                self.client
                    .list_accelerators()
                    .max_results(PAGE)
                    .set_next_token(token.clone())
                    .send()
            })
            .await?;
            let items = page.accelerators().iter().map(accelerator_from).collect();
            Ok((items, page.next_token().map(String::from)))
        })
        .await
    }

    async fn describe_accelerator(&self, arn: &str) -> Result<DescribedAccelerator> {
        let out = send(&self.caller, SVC, "DescribeAccelerator", || {
            self.client
                .describe_accelerator()
                .accelerator_arn(arn)
                .send()
        })
        .await?;
        out.accelerator()
            .map(accelerator_from)
            .ok_or_else(|| empty("DescribeAccelerator"))
    }

    async fn create_accelerator(&self, accelerator: &Accelerator) -> Result<DescribedAccelerator> {
        let input = requests::create_accelerator(accelerator)?;
        let out = send(&self.caller, SVC, "CreateAccelerator", || {
            input.clone().send_with(&self.client)
        })
        .await?;
        out.accelerator()
            .map(accelerator_from)
            .ok_or_else(|| empty("CreateAccelerator"))
    }

    async fn update_accelerator(
        &self,
        arn: &str,
        accelerator: &Accelerator,
    ) -> Result<DescribedAccelerator> {
        let input = requests::update_accelerator(arn, accelerator);
        let out = send(&self.caller, SVC, "UpdateAccelerator", || {
            input.clone().send_with(&self.client)
        })
        .await?;
        out.accelerator()
            .map(accelerator_from)
            .ok_or_else(|| empty("UpdateAccelerator"))
    }

    async fn disable_accelerator(&self, arn: &str) -> Result<DescribedAccelerator> {
        let input = requests::disable_accelerator(arn);
        let out = send(&self.caller, SVC, "UpdateAccelerator", || {
            input.clone().send_with(&self.client)
        })
        .await?;
        out.accelerator()
            .map(accelerator_from)
            .ok_or_else(|| empty("UpdateAccelerator"))
    }

    async fn delete_accelerator(&self, arn: &str) -> Result<()> {
        send(&self.caller, SVC, "DeleteAccelerator", || {
            self.client.delete_accelerator().accelerator_arn(arn).send()
        })
        .await?;
        Ok(())
    }

    async fn list_tags_for_resource(&self, arn: &str) -> Result<Tags> {
        let out = send(&self.caller, SVC, "ListTagsForResource", || {
            self.client
                .list_tags_for_resource()
                .resource_arn(arn)
                .send()
        })
        .await?;
        Ok(tags_from(out.tags()))
    }

    async fn tag_resource(&self, arn: &str, tags: &Tags) -> Result<()> {
        let input = requests::tag_resource(arn, tags)?;
        send(&self.caller, SVC, "TagResource", || {
            input.clone().send_with(&self.client)
        })
        .await?;
        Ok(())
    }

    async fn untag_resource(&self, arn: &str, keys: &[String]) -> Result<()> {
        send(&self.caller, SVC, "UntagResource", || {
            self.client
                .untag_resource()
                .resource_arn(arn)
                .set_tag_keys(Some(keys.to_vec()))
                .send()
        })
        .await?;
        Ok(())
    }

    async fn list_listeners(&self, accelerator_arn: &str) -> Result<Vec<DescribedListener>> {
        all_pages(|token| async move {
            let page = send(&self.caller, SVC, "ListListeners", || {
                self.client
                    .list_listeners()
                    .accelerator_arn(accelerator_arn)
                    .max_results(PAGE)
                    .set_next_token(token.clone())
                    .send()
            })
            .await?;
            let items = page.listeners().iter().map(listener_from).collect();
            Ok((items, page.next_token().map(String::from)))
        })
        .await
    }

    async fn create_listener(
        &self,
        accelerator_arn: &str,
        listener: &AgaListener,
    ) -> Result<DescribedListener> {
        let input = requests::create_listener(accelerator_arn, listener);
        let out = send(&self.caller, SVC, "CreateListener", || {
            input.clone().send_with(&self.client)
        })
        .await?;
        out.listener()
            .map(listener_from)
            .ok_or_else(|| empty("CreateListener"))
    }

    async fn update_listener(
        &self,
        arn: &str,
        listener: &AgaListener,
    ) -> Result<DescribedListener> {
        let input = requests::update_listener(arn, listener);
        let out = send(&self.caller, SVC, "UpdateListener", || {
            input.clone().send_with(&self.client)
        })
        .await?;
        out.listener()
            .map(listener_from)
            .ok_or_else(|| empty("UpdateListener"))
    }

    async fn delete_listener(&self, arn: &str) -> Result<()> {
        send(&self.caller, SVC, "DeleteListener", || {
            self.client.delete_listener().listener_arn(arn).send()
        })
        .await?;
        Ok(())
    }

    async fn list_endpoint_groups(
        &self,
        listener_arn: &str,
    ) -> Result<Vec<DescribedEndpointGroup>> {
        all_pages(|token| async move {
            let page = send(&self.caller, SVC, "ListEndpointGroups", || {
                self.client
                    .list_endpoint_groups()
                    .listener_arn(listener_arn)
                    .max_results(PAGE)
                    .set_next_token(token.clone())
                    .send()
            })
            .await?;
            let items = page.endpoint_groups().iter().map(group_from).collect();
            Ok((items, page.next_token().map(String::from)))
        })
        .await
    }

    async fn create_endpoint_group(
        &self,
        listener_arn: &str,
        group: &EndpointGroup,
    ) -> Result<DescribedEndpointGroup> {
        let input = requests::create_endpoint_group(listener_arn, group);
        let out = send(&self.caller, SVC, "CreateEndpointGroup", || {
            input.clone().send_with(&self.client)
        })
        .await?;
        out.endpoint_group()
            .map(group_from)
            .ok_or_else(|| empty("CreateEndpointGroup"))
    }

    async fn update_endpoint_group(
        &self,
        arn: &str,
        group: &EndpointGroup,
    ) -> Result<DescribedEndpointGroup> {
        let input = requests::update_endpoint_group(arn, group);
        let out = send(&self.caller, SVC, "UpdateEndpointGroup", || {
            input.clone().send_with(&self.client)
        })
        .await?;
        out.endpoint_group()
            .map(group_from)
            .ok_or_else(|| empty("UpdateEndpointGroup"))
    }

    async fn set_port_overrides(
        &self,
        arn: &str,
        overrides: &[PortOverride],
    ) -> Result<DescribedEndpointGroup> {
        let input = requests::set_port_overrides(arn, overrides);
        let out = send(&self.caller, SVC, "UpdateEndpointGroup", || {
            input.clone().send_with(&self.client)
        })
        .await?;
        out.endpoint_group()
            .map(group_from)
            .ok_or_else(|| empty("UpdateEndpointGroup"))
    }

    async fn set_endpoints(
        &self,
        arn: &str,
        endpoints: &[EndpointConfiguration],
    ) -> Result<DescribedEndpointGroup> {
        let input = requests::set_endpoints(arn, endpoints);
        let out = send(&self.caller, SVC, "UpdateEndpointGroup", || {
            input.clone().send_with(&self.client)
        })
        .await?;
        out.endpoint_group()
            .map(group_from)
            .ok_or_else(|| empty("UpdateEndpointGroup"))
    }

    async fn add_endpoints(&self, arn: &str, endpoints: &[EndpointConfiguration]) -> Result<()> {
        let input = requests::add_endpoints(arn, endpoints);
        send(&self.caller, SVC, "AddEndpoints", || {
            input.clone().send_with(&self.client)
        })
        .await?;
        Ok(())
    }

    async fn remove_endpoints(&self, arn: &str, endpoint_ids: &[String]) -> Result<()> {
        let input = requests::remove_endpoints(arn, endpoint_ids)?;
        send(&self.caller, SVC, "RemoveEndpoints", || {
            input.clone().send_with(&self.client)
        })
        .await?;
        Ok(())
    }

    async fn delete_endpoint_group(&self, arn: &str) -> Result<()> {
        send(&self.caller, SVC, "DeleteEndpointGroup", || {
            self.client
                .delete_endpoint_group()
                .endpoint_group_arn(arn)
                .send()
        })
        .await?;
        Ok(())
    }
}
