//! Settings of the AWS layer (filled from `--aws-*` flags by the argument parser) and the
//! construction of the SDK clients. IMDS is only asked for what the flags and environment do
//! not say: with region and VPC given it is never contacted (an upstream crash-loop source).

use std::collections::BTreeMap;
use std::sync::Arc;

use aws_config::retry::RetryConfig;
use aws_config::{BehaviorVersion, Region};

use super::caller::Caller;
use super::error::{AwsError, Result};
use super::fence::Fence;
use super::metrics::AwsMetrics;
use super::sdk::sts::SdkRoles;
use super::sdk::{SdkEc2, SdkElbV2};
use super::throttle::ThrottleRule;
use super::types::{Ec2Query, Service};
use super::{AssumeRole, Ec2, ElbV2};

/// What the `--aws-*` flags say.
#[derive(Debug, Clone, PartialEq)]
pub struct AwsConfig {
    /// `--aws-region`.
    pub region: Option<String>,
    /// `--aws-vpc-id`.
    pub vpc_id: Option<String>,
    /// `--aws-vpc-tags`: all must match, on exactly one VPC.
    pub vpc_tags: BTreeMap<String, String>,
    /// `--aws-api-endpoints`, as parsed by [`parse_api_endpoints`].
    pub api_endpoints: BTreeMap<String, String>,
    /// `--aws-api-throttle`, as parsed by the config (empty: upstream's defaults only).
    pub api_throttle: Vec<ThrottleRule>,
    /// `--aws-max-retries`.
    pub max_retries: u32,
}

impl Default for AwsConfig {
    fn default() -> Self {
        Self {
            region: None,
            vpc_id: None,
            vpc_tags: BTreeMap::new(),
            api_endpoints: BTreeMap::new(),
            api_throttle: Vec::new(),
            max_retries: 10,
        }
    }
}

/// The `--aws-*` flags as the AWS layer takes them.
impl From<&crate::config::Config> for AwsConfig {
    fn from(cfg: &crate::config::Config) -> Self {
        Self {
            region: cfg.aws_region.clone(),
            vpc_id: cfg.aws_vpc_id.clone(),
            vpc_tags: cfg.aws_vpc_tags.clone(),
            api_endpoints: cfg.aws_api_endpoints.clone(),
            api_throttle: cfg.aws_api_throttle.clone(),
            max_retries: cfg.aws_max_retries,
        }
    }
}

/// Where the controller runs, as resolved at startup.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ResolvedCloud {
    pub region: String,
    pub vpc_id: String,
}

/// Parses `--aws-api-endpoints` (`serviceID=URL,serviceID=URL`).
pub fn parse_api_endpoints(value: &str) -> Result<BTreeMap<String, String>> {
    let bad = |m: String| AwsError::Config(format!("invalid --aws-api-endpoints: {m}"));
    let mut out = BTreeMap::new();
    for pair in value.split(',').map(str::trim).filter(|p| !p.is_empty()) {
        let (k, v) = pair
            .split_once('=')
            .ok_or_else(|| bad(format!("{pair} must be formatted as serviceID=URL")))?;
        let (k, v) = (k.trim(), v.trim());
        if k.is_empty() || v.is_empty() {
            return Err(bad(format!("{pair} must be formatted as serviceID=URL")));
        }
        if !(v.starts_with("http://") || v.starts_with("https://")) {
            return Err(bad(format!(
                "{v} must be a URL starting with http:// or https://"
            )));
        }
        if out.insert(k.to_string(), v.to_string()).is_some() {
            return Err(bad(format!("duplicate endpoint for {k}")));
        }
    }
    Ok(out)
}

/// The endpoint configured for a service; keys may be spelled as upstream's docs do
/// (`elasticloadbalancing`, `ec2`) or as the SDK service ID (`Elastic Load Balancing v2`).
pub fn endpoint_for(endpoints: &BTreeMap<String, String>, service: Service) -> Option<&str> {
    let norm = |s: &str| {
        s.chars()
            .filter(char::is_ascii_alphanumeric)
            .collect::<String>()
            .to_ascii_lowercase()
    };
    let wanted: &[&str] = match service {
        Service::ElbV2 => &["elasticloadbalancing", "elasticloadbalancingv2", "elbv2"],
        Service::Ec2 => &["ec2"],
        Service::WafV2 => &["wafv2"],
        Service::WafRegional => &["wafregional"],
        Service::Shield => &["shield"],
        Service::Acm => &["acm"],
        Service::Tagging => &[
            "tagging",
            "resourcegroupstaggingapi",
            "resourcegroupstagging",
        ],
        Service::Route53 => &["route53"],
        // Upstream's key is the SDK service id (`Global Accelerator`, `GlobalAccelerator`).
        Service::GlobalAccelerator => &["globalaccelerator"],
    };
    endpoints
        .iter()
        .find(|(k, _)| wanted.contains(&norm(k).as_str()))
        .map(|(_, v)| v.as_str())
}

fn non_empty(v: Option<&String>) -> Option<String> {
    v.map(|s| s.trim().to_string()).filter(|s| !s.is_empty())
}

fn env(name: &str) -> Option<String> {
    std::env::var(name).ok().filter(|v| !v.trim().is_empty())
}

/// Builds the SDK clients, resolves region and VPC.
pub async fn build(
    cfg: &AwsConfig,
    metrics: Option<AwsMetrics>,
) -> Result<(Arc<dyn ElbV2>, Arc<dyn Ec2>, ResolvedCloud)> {
    build_fenced(cfg, metrics, Fence::default()).await
}

/// [`build`] with every write gated by the leader's `fence`.
pub async fn build_fenced(
    cfg: &AwsConfig,
    metrics: Option<AwsMetrics>,
    fence: Fence,
) -> Result<(Arc<dyn ElbV2>, Arc<dyn Ec2>, ResolvedCloud)> {
    let (elb, ec2, _, cloud) = build_with_roles(cfg, "", metrics, fence).await?;
    Ok((elb, ec2, cloud))
}

/// ELBv2, EC2, assumed-role ELBv2 clients and where they run.
pub type Clients = (
    Arc<dyn ElbV2>,
    Arc<dyn Ec2>,
    Arc<dyn AssumeRole>,
    ResolvedCloud,
);

/// The `sts` entry of `--aws-api-endpoints`, where AssumeRole goes.
fn sts_endpoint(endpoints: &BTreeMap<String, String>) -> Option<String> {
    endpoints
        .iter()
        .find(|(k, _)| k.trim().eq_ignore_ascii_case("sts"))
        .map(|(_, v)| v.clone())
}

/// [`build`] plus the assumed-role ELBv2 clients of cross-account TargetGroupBindings, whose
/// STS sessions are named after `cluster`. Every write, assumed-role ones too, is gated by the
/// leader's `fence`.
pub async fn build_with_roles(
    cfg: &AwsConfig,
    cluster: &str,
    metrics: Option<AwsMetrics>,
    fence: Fence,
) -> Result<Clients> {
    let caller = Caller::from_flags(&cfg.api_throttle, cfg.max_retries, metrics).with_fence(fence);
    let region = match non_empty(cfg.region.as_ref()).or_else(|| env("AWS_REGION")).or_else(|| env("AWS_DEFAULT_REGION")) {
        Some(r) => r,
        None => aws_config::imds::region::ImdsRegionProvider::builder()
            .build()
            .region()
            .await
            .map(|r| r.to_string())
            .ok_or_else(|| {
                AwsError::Config(
                    "unable to determine the AWS region: set --aws-region or AWS_REGION (instance metadata did not answer)".into(),
                )
            })?,
    };
    // Credentials come from the default chain; it is lazy and tries the environment first, so
    // IMDS is only contacted on the first request and only when nothing else provides keys.
    let sdk = aws_config::defaults(BehaviorVersion::latest())
        .region(Region::new(region.clone()))
        .retry_config(RetryConfig::disabled())
        .load()
        .await;
    let mut elb_conf = aws_sdk_elasticloadbalancingv2::config::Builder::from(&sdk);
    if let Some(url) = endpoint_for(&cfg.api_endpoints, Service::ElbV2) {
        elb_conf = elb_conf.endpoint_url(url);
    }
    let mut ec2_conf = aws_sdk_ec2::config::Builder::from(&sdk);
    if let Some(url) = endpoint_for(&cfg.api_endpoints, Service::Ec2) {
        ec2_conf = ec2_conf.endpoint_url(url);
    }
    let elb = SdkElbV2::new(
        aws_sdk_elasticloadbalancingv2::Client::from_conf(elb_conf.build()),
        caller.clone(),
    );
    let roles = SdkRoles::new(
        sdk.clone(),
        sts_endpoint(&cfg.api_endpoints),
        endpoint_for(&cfg.api_endpoints, Service::ElbV2).map(String::from),
        caller.clone(),
        cluster,
    );
    let ec2 = SdkEc2::new(aws_sdk_ec2::Client::from_conf(ec2_conf.build()), caller);
    let vpc_id = resolve_vpc(cfg, &ec2).await?;
    Ok((
        Arc::new(elb),
        Arc::new(ec2),
        Arc::new(roles),
        ResolvedCloud { region, vpc_id },
    ))
}

/// `--aws-vpc-id`, else the one VPC carrying all `--aws-vpc-tags`, else IMDS.
pub async fn resolve_vpc(cfg: &AwsConfig, ec2: &dyn Ec2) -> Result<String> {
    if let Some(v) = non_empty(cfg.vpc_id.as_ref()) {
        return Ok(v);
    }
    if !cfg.vpc_tags.is_empty() {
        let mut q = Ec2Query::default();
        for (k, v) in &cfg.vpc_tags {
            q = q.filter(&format!("tag:{k}"), [v.clone()]);
        }
        let vpcs = ec2.describe_vpcs(&q).await?;
        let shown = cfg
            .vpc_tags
            .iter()
            .map(|(k, v)| format!("{k}={v}"))
            .collect::<Vec<_>>()
            .join(",");
        return match vpcs.as_slice() {
            [one] => Ok(one.id.clone()),
            [] => Err(AwsError::Config(format!(
                "no VPC exists with tags: {shown}"
            ))),
            many => Err(AwsError::Config(format!(
                "multiple VPCs exist with tags {shown}: {}",
                many.iter()
                    .map(|v| v.id.as_str())
                    .collect::<Vec<_>>()
                    .join(", ")
            ))),
        };
    }
    let imds = aws_config::imds::Client::builder().build();
    let fail = |e: aws_config::imds::client::error::ImdsError| {
        AwsError::Config(format!("unable to determine the VPC: set --aws-vpc-id or --aws-vpc-tags (instance metadata: {e})"))
    };
    let mac = imds.get("/latest/meta-data/mac").await.map_err(fail)?;
    let path = format!(
        "/latest/meta-data/network/interfaces/macs/{}/vpc-id",
        mac.as_ref()
    );
    Ok(String::from(imds.get(path).await.map_err(fail)?))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn endpoints_parse_and_resolve() {
        let m = parse_api_endpoints(
            "elasticloadbalancing=http://127.0.0.1:5000, ec2=https://ec2.example",
        )
        .unwrap();
        assert_eq!(
            endpoint_for(&m, Service::ElbV2),
            Some("http://127.0.0.1:5000")
        );
        assert_eq!(endpoint_for(&m, Service::Ec2), Some("https://ec2.example"));
        let m = parse_api_endpoints("Elastic Load Balancing v2=http://x").unwrap();
        assert_eq!(endpoint_for(&m, Service::ElbV2), Some("http://x"));
        assert_eq!(endpoint_for(&m, Service::Ec2), None);
        assert!(parse_api_endpoints("").unwrap().is_empty());
        // The tagging client's: upstream's key is the SDK service id.
        for key in ["Resource Groups Tagging API", "tagging"] {
            let m = parse_api_endpoints(&format!("{key}=http://rgt")).unwrap();
            assert_eq!(endpoint_for(&m, Service::Tagging), Some("http://rgt"));
            assert_eq!(endpoint_for(&m, Service::ElbV2), None);
        }
        // Route 53's: the SDK service id (`Route 53`) or its endpoint prefix.
        for key in ["Route 53", "route53"] {
            let m = parse_api_endpoints(&format!("{key}=http://r53")).unwrap();
            assert_eq!(endpoint_for(&m, Service::Route53), Some("http://r53"));
        }
        for key in [
            "GlobalAccelerator",
            "globalaccelerator",
            "Global Accelerator",
        ] {
            let m = parse_api_endpoints(&format!("{key}=http://ga")).unwrap();
            assert_eq!(
                endpoint_for(&m, Service::GlobalAccelerator),
                Some("http://ga")
            );
            assert_eq!(endpoint_for(&m, Service::Tagging), None);
        }
    }

    #[test]
    fn endpoints_reject_bad_input() {
        for (v, want) in [
            ("ec2", "ec2 must be formatted as serviceID=URL"),
            ("=http://x", "=http://x must be formatted as serviceID=URL"),
            (
                "ec2=ftp://x",
                "ftp://x must be a URL starting with http:// or https://",
            ),
            ("ec2=http://a,ec2=http://b", "duplicate endpoint for ec2"),
        ] {
            assert_eq!(
                parse_api_endpoints(v).unwrap_err().to_string(),
                format!("invalid --aws-api-endpoints: {want}")
            );
        }
    }
}
