//! The AWS facts a Service's model reads ([`ServiceEnv`]): the VPC's subnets (with their
//! reachability when discovery by reachability is on), the NLB already tagged with the
//! Service's stack (found by the deployer, as it finds every stack's resources: its scheme and
//! subnets stay; an NLB without security groups never gets one), and the VPC's CIDR blocks.
//! Reads only. The subnets are cached for a few seconds, so a burst of reconciles costs one
//! DescribeSubnets.

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use super::ServiceError;
use crate::aws::{AwsError, Ec2, Ec2Query};
use crate::deploy::lb_subnets::{mark_reachability, subnet_info};
use crate::deploy::Deployer;
use crate::model::service::ServiceEnv;
use crate::model::subnets::SubnetInfo;

/// How long one DescribeSubnets answer serves all reconciles.
const SUBNETS_TTL: Duration = Duration::from_secs(30);

type SubnetCache = Option<(Instant, Arc<Vec<SubnetInfo>>)>;

/// Reads [`ServiceEnv`] for one Service stack at a time; shared by all workers.
pub struct EnvReader {
    pub ec2: Arc<dyn Ec2>,
    pub vpc_id: String,
    pub vpc_cidrs: Vec<String>,
    /// Gate `SubnetDiscoveryByReachability`: route tables say which subnets are public.
    pub reachability: bool,
    subnets: Mutex<SubnetCache>,
}

impl EnvReader {
    pub fn new(
        ec2: Arc<dyn Ec2>,
        vpc_id: String,
        vpc_cidrs: Vec<String>,
        reachability: bool,
    ) -> Self {
        Self {
            ec2,
            vpc_id,
            vpc_cidrs,
            reachability,
            subnets: Mutex::new(None),
        }
    }

    /// Everything the model of stack `ns/name` reads from AWS; `deployer` finds the stack's NLB.
    pub async fn read(
        &self,
        deployer: &Deployer,
        stack_id: &str,
    ) -> Result<ServiceEnv, ServiceError> {
        Ok(ServiceEnv {
            subnets: Some(self.subnets().await?.as_ref().clone()),
            existing_load_balancer: deployer.existing_nlb(stack_id).await?,
            vpc_cidrs: Some(self.vpc_cidrs.clone()),
            // Cluster objects, not AWS facts: the caller adds them (`with_backends_of`).
            backend_services: Default::default(),
        })
    }

    /// The VPC's subnets (cached for a few seconds); the Gateway controllers read them too.
    pub(crate) async fn subnets(&self) -> Result<Arc<Vec<SubnetInfo>>, AwsError> {
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
}
