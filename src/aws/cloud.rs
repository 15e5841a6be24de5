//! The cloud handle: every AWS client the reconcilers and the AWS-backed webhooks use, with what
//! AWS resolved at start (region, VPC and its CIDRs). Built once by [`Cloud::build`]; a
//! `--dry-run` shadow wraps it in the recorder ([`Cloud::shadowed`]) so no write leaves the
//! process.

use std::sync::Arc;

use ipnet::IpNet;

use super::shadow::{RecordedRoles, Recorder};
use super::{
    build_acm_fenced, build_addons, build_route53, build_tagging, build_with_roles, Acm,
    AddonClients, AssumeRole, AwsConfig, AwsError, AwsMetrics, Ec2, Ec2Query, ElbV2, Fence,
    ResolvedCloud, ResourceTagging, Route53,
};
use super::{build_global_accelerator, GlobalAccelerator};
use crate::config::Config;

/// The AWS side, once resolved.
#[derive(Clone)]
pub struct Cloud {
    pub elbv2: Arc<dyn ElbV2>,
    pub ec2: Arc<dyn Ec2>,
    /// ELBv2 clients of cross-account TargetGroupBindings (`iamRoleArnToAssume`).
    pub roles: Arc<dyn AssumeRole>,
    /// ACM: certificate discovery, and the certificates created for Ingresses (gate
    /// `EnableCertificateManagement`).
    pub acm: Arc<dyn Acm>,
    /// Route 53: the DNS validation records of the certificates the controller creates.
    pub route53: Arc<dyn Route53>,
    pub resolved: ResolvedCloud,
    /// CIDRs of the VPC (pod IPs outside them register with `AvailabilityZone: all`).
    pub vpc_cidrs: Vec<IpNet>,
    /// The AWS metrics (also `aws_target_group_info` of the Ingress controller's bindings).
    pub metrics: Option<AwsMetrics>,
    /// WAFv2 / WAF Classic / Shield, those whose `--enable-*` flag is on.
    pub addons: AddonClients,
    /// Resource Groups Tagging API, which the deployers use under gate `EnableRGTAPI` (`None`:
    /// never, as in a dry run, whose pretended resources only the recorder's ELBv2 reads show).
    pub tagging: Option<Arc<dyn ResourceTagging>>,
    /// Global Accelerator (its API lives in us-west-2, whatever the cluster's region).
    pub global_accelerator: Arc<dyn GlobalAccelerator>,
}

impl Cloud {
    /// One attempt at resolving region, VPC and clients from the flags; every AWS write of the
    /// clients passes `fence` (the leader's, under leader election).
    pub async fn build(
        cfg: &Config,
        metrics: Option<AwsMetrics>,
        fence: &Fence,
    ) -> Result<Cloud, AwsError> {
        let aws = AwsConfig::from(cfg);
        let (elbv2, ec2, roles, resolved) =
            build_with_roles(&aws, &cfg.cluster_name, metrics.clone(), fence.clone()).await?;
        let vpc_cidrs = vpc_cidrs(ec2.as_ref(), &resolved.vpc_id).await?;
        let addons = build_addons(&aws, &resolved.region, metrics.clone(), fence.clone())
            .await
            .enabled(cfg.enable_waf, cfg.enable_wafv2, cfg.enable_shield);
        let acm = build_acm_fenced(&aws, &resolved.region, metrics.clone(), fence.clone()).await;
        let route53 = build_route53(&aws, &resolved.region, metrics.clone(), fence.clone()).await;
        let tagging = build_tagging(&aws, &resolved.region, metrics.clone(), fence.clone()).await;
        let global_accelerator =
            build_global_accelerator(&aws, metrics.clone(), fence.clone()).await;
        Ok(Cloud {
            elbv2,
            ec2,
            roles,
            acm,
            route53,
            resolved,
            vpc_cidrs,
            metrics,
            addons,
            tagging: Some(tagging),
            global_accelerator,
        })
    }

    /// Shadow mode: real reads, every write noted (log + gauge) and never sent — the
    /// cross-account bindings' clients and the certificates' ACM and Route 53 included.
    pub fn shadowed(mut self) -> Cloud {
        let recorder = Arc::new(
            Recorder::shadow(self.elbv2, self.ec2)
                .with_addons(self.addons.clone())
                .with_certificates(self.acm, self.route53)
                .with_global_accelerator(self.global_accelerator.clone()),
        );
        self.global_accelerator = recorder.clone();
        self.addons = recorder.addons_view(&self.addons);
        // The tagging index knows nothing of what the recorder pretends to create: lookups go
        // through the recorder's ELBv2 reads, which do (they find the same resources).
        self.tagging = None;
        self.acm = recorder.clone();
        self.route53 = recorder.clone();
        self.elbv2 = recorder.clone();
        self.ec2 = recorder;
        self.roles = Arc::new(RecordedRoles::shadow(self.roles, self.ec2.clone()));
        self
    }

    /// The VPC's CIDRs as text (what the Service and Gateway models read).
    pub fn vpc_cidr_texts(&self) -> Vec<String> {
        self.vpc_cidrs.iter().map(ToString::to_string).collect()
    }
}

/// The CIDRs (IPv4 and IPv6) of a VPC.
pub async fn vpc_cidrs(ec2: &dyn Ec2, vpc_id: &str) -> Result<Vec<IpNet>, AwsError> {
    let vpcs = ec2.describe_vpcs(&Ec2Query::ids([vpc_id])).await?;
    Ok(vpcs
        .iter()
        .flat_map(|v| v.cidr_blocks.iter().chain(&v.ipv6_cidr_blocks))
        .filter_map(|c| c.parse().ok())
        .collect())
}
