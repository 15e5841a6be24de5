//! The AWS facts a Service's model reads ([`ServiceEnv`]): the VPC's subnets (with their
//! reachability when discovery by reachability is on), the NLB already tagged with the
//! Service's stack (its scheme and subnets stay; an NLB without security groups never gets
//! one), and the VPC's CIDR blocks. Reads only. The subnets are cached for a few seconds, and
//! which stack a load balancer belongs to is remembered per ARN (its tracking tags never
//! change), so a burst of reconciles costs one DescribeSubnets and no repeated DescribeTags.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use crate::aws::{self, AwsError, Ec2, Ec2Query, ElbV2, LoadBalancerQuery, Tags};
use crate::deploy::lb_subnets::{mark_reachability, subnet_info};
use crate::model::service::{ExistingNlb, ServiceEnv};
use crate::model::subnets::SubnetInfo;
use crate::model::LoadBalancerScheme;

/// How long one DescribeSubnets answer serves all reconciles.
const SUBNETS_TTL: Duration = Duration::from_secs(30);
const CLUSTER_TAG: &str = "elbv2.k8s.aws/cluster";
const LEGACY_CLUSTER_TAG: &str = "ingress.k8s.aws/cluster";
const STACK_TAG: &str = "service.k8s.aws/stack";

type SubnetCache = Option<(Instant, Arc<Vec<SubnetInfo>>)>;

/// Reads [`ServiceEnv`] for one Service stack at a time; shared by all workers.
pub struct EnvReader {
    pub elbv2: Arc<dyn ElbV2>,
    pub ec2: Arc<dyn Ec2>,
    pub vpc_id: String,
    pub cluster: String,
    pub vpc_cidrs: Vec<String>,
    /// Gate `SubnetDiscoveryByReachability`: route tables say which subnets are public.
    pub reachability: bool,
    subnets: Mutex<SubnetCache>,
    /// Load balancer ARN → the Service stack its tags name (None: not a Service stack of ours).
    owners: Mutex<HashMap<String, Option<String>>>,
}

impl EnvReader {
    pub fn new(
        elbv2: Arc<dyn ElbV2>,
        ec2: Arc<dyn Ec2>,
        vpc_id: String,
        cluster: String,
        vpc_cidrs: Vec<String>,
        reachability: bool,
    ) -> Self {
        Self {
            elbv2,
            ec2,
            vpc_id,
            cluster,
            vpc_cidrs,
            reachability,
            subnets: Mutex::new(None),
            owners: Mutex::new(HashMap::new()),
        }
    }

    /// Everything the model of stack `ns/name` reads from AWS.
    pub async fn read(&self, stack_id: &str) -> Result<ServiceEnv, AwsError> {
        Ok(ServiceEnv {
            subnets: Some(self.subnets().await?.as_ref().clone()),
            existing_load_balancer: self.existing(stack_id).await?,
            vpc_cidrs: Some(self.vpc_cidrs.clone()),
        })
    }

    async fn subnets(&self) -> Result<Arc<Vec<SubnetInfo>>, AwsError> {
        if let Some((at, list)) = &*self.subnets.lock().unwrap_or_else(|p| p.into_inner()) {
            if at.elapsed() < SUBNETS_TTL {
                return Ok(list.clone());
            }
        }
        let q = Ec2Query::default().filter("vpc-id", [self.vpc_id.as_str()]);
        let mut infos: Vec<SubnetInfo> = self
            .ec2
            .describe_subnets(&q)
            .await?
            .iter()
            .map(subnet_info)
            .collect();
        if self.reachability {
            let tables = self.ec2.describe_route_tables(&q).await?;
            mark_reachability(&mut infos, &tables);
        }
        let list = Arc::new(infos);
        *self.subnets.lock().unwrap_or_else(|p| p.into_inner()) =
            Some((Instant::now(), list.clone()));
        Ok(list)
    }

    /// The load balancer tagged with this cluster and `stack_id`, as upstream finds it.
    pub async fn existing(&self, stack_id: &str) -> Result<Option<ExistingNlb>, AwsError> {
        let lbs: Vec<aws::LoadBalancer> = self
            .elbv2
            .describe_load_balancers(&LoadBalancerQuery::default())
            .await?
            .into_iter()
            .filter(|l| l.vpc_id == self.vpc_id)
            .collect();
        let unknown: Vec<String> = {
            let owners = self.owners.lock().unwrap_or_else(|p| p.into_inner());
            lbs.iter()
                .filter(|l| !owners.contains_key(&l.arn))
                .map(|l| l.arn.clone())
                .collect()
        };
        if !unknown.is_empty() {
            let tags = self.elbv2.describe_tags(&unknown).await?;
            let mut owners = self.owners.lock().unwrap_or_else(|p| p.into_inner());
            for arn in unknown {
                let stack = tags.get(&arn).and_then(|t| self.stack_of(t));
                owners.insert(arn, stack);
            }
        }
        let owners = self.owners.lock().unwrap_or_else(|p| p.into_inner());
        Ok(lbs
            .into_iter()
            .find(|l| owners.get(&l.arn).and_then(Option::as_deref) == Some(stack_id))
            .map(|l| ExistingNlb {
                scheme: if l.scheme == "internet-facing" {
                    LoadBalancerScheme::InternetFacing
                } else {
                    LoadBalancerScheme::Internal
                },
                subnet_ids: l
                    .availability_zones
                    .iter()
                    .map(|z| z.subnet_id.clone())
                    .collect(),
                security_groups: l.security_groups,
            }))
    }

    /// The Service stack named by `tags`, when they also name this cluster.
    fn stack_of(&self, tags: &Tags) -> Option<String> {
        let cluster = tags
            .get(CLUSTER_TAG)
            .or_else(|| tags.get(LEGACY_CLUSTER_TAG));
        (cluster == Some(&self.cluster))
            .then(|| tags.get(STACK_TAG).cloned())
            .flatten()
    }
}
