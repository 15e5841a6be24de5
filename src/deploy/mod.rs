//! Deploys a model [`Stack`] to AWS idempotently through the [`ElbV2`] / [`Ec2`] traits, in
//! upstream's order: ACM certificates (`create-acm-cert`, see [`certificate`]) → security
//! groups → target groups → load balancer → listeners → rules, then leftovers deleted in
//! reverse (rules, listeners, load balancers, target groups, certificates, security groups),
//! and last the ALB registered behind the frontend NLB (`frontend_nlb`; also an NLB
//! Gateway's `alb`-type target groups of Gateway backends, each with another Gateway's ALB).
//! Existing resources are found by ownership tags (cluster + stack, legacy cluster key
//! accepted) in the process's shared [`Inventory`] of the VPC (see [`inventory`]) and paired
//! with model resources by the resource tag — `ingress.k8s.aws/*` for
//! Ingress stacks, `service.k8s.aws/*` for Service (NLB) stacks (`Stack::kind`); anything
//! without our cluster and stack tags is never touched. A second deploy of an unchanged stack
//! makes no write call. An empty stack (no load balancer) deletes everything tagged with it.
//!
//! WAFv2 / WAF Classic / Shield follow the rules (see [`addons`]).
//!
//! TargetGroupBinding objects are not written here: [`DeployResult::target_group_bindings`]
//! carries their specs with the target-group ARNs and security-group ids filled in.
//!
//! Global Accelerator stacks (GlobalAccelerator objects) have a deployer of their own: [`aga`].

pub mod addons;
pub mod aga;
pub mod cert_discovery;
pub mod certificate;
pub mod compare;
mod error;
pub mod frontend_nlb;
pub mod inventory;
pub mod ip_pools;
pub mod lb_subnets;
pub mod listener;
pub mod load_balancer;
pub mod mtls;
pub mod oidc_secrets;
pub mod plan_facts;
pub mod preflight;
pub mod resolve;
pub mod rule;
pub mod security_group;
pub mod sg_resolver;
pub mod shield;
mod steps;
mod tagged;
pub mod tags;
pub mod target_group;
pub(crate) mod tgb;
pub mod waf_regional;
pub mod wafv2;

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;

pub use cert_discovery::CertDiscovery;
pub use certificate::{CertificateTiming, Certificates};
pub use error::{Error, Result};
pub use inventory::Inventory;
pub use plan_facts::BackendSgInPlan;
pub use sg_resolver::resolve_security_groups;
pub use tgb::ResolvedTargetGroupBinding;

use crate::aws::{AwsError, Ec2, ElbV2, ResourceTagging};
use crate::model::{self, Stack, StackKind};
use resolve::Resolved;

/// Deploys stacks of one cluster in one VPC. Cheap to share (`Arc<Deployer>`); concurrent
/// deploys of different stacks are safe (the shared backend SG is found/created once).
pub struct Deployer {
    elbv2: Arc<dyn ElbV2>,
    ec2: Arc<dyn Ec2>,
    cluster: String,
    vpc_id: String,
    external_managed_tags: Vec<String>,
    listener_rules_tagging: bool,
    /// Feature gate `EnhancedDefaultBehavior`: an ALPN policy or mTLS setting the model no
    /// longer has is reset on the listener instead of left as it is.
    enhanced_defaults: bool,
    /// Feature gate `EnableRGTAPI`: the stack's load balancers and target groups are found
    /// through the Resource Groups Tagging API (see [`tagged`]).
    tagging: Option<Arc<dyn ResourceTagging>>,
    delete_interval: Duration,
    delete_timeout: Duration,
    /// Listener and rule tags (load balancers and target groups have theirs in `inventory`).
    tag_cache: tags::TagCache,
    /// The VPC's load balancers, target groups and cluster security groups: the process's
    /// shared one ([`Self::with_inventory`]), else this deployer's own.
    inventory: Arc<Inventory>,
    backend_sg: tokio::sync::Mutex<Option<String>>,
    /// OIDC client secrets last sent, by listener/rule (AWS never describes them).
    oidc_secrets: oidc_secrets::SentSecrets,
    addons: addons::Addons,
    cert_discovery: Option<Arc<CertDiscovery>>,
    /// Gate `EnableCertificateManagement`: the clients that create the stack's ACM certificates
    /// (`None`: a stack with certificates is refused, and none is looked for).
    certificates: Option<Arc<Certificates>>,
    /// `--lb-stabilization-monitor-interval`: the retry of a capacity reservation while the
    /// load balancer provisions.
    lb_stabilization_interval: Duration,
}

/// `--lb-stabilization-monitor-interval`'s default, upstream's.
pub const DEFAULT_LB_STABILIZATION_INTERVAL: Duration = Duration::from_secs(120);

/// What a deploy produced, for the reconciler (Ingress status, TargetGroupBindings).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct DeployResult {
    /// None for an empty stack (everything deleted).
    pub load_balancer: Option<DeployedLoadBalancer>,
    /// The frontend NLB in front of the ALB (`enable-frontend-nlb`).
    pub frontend_nlb: Option<DeployedLoadBalancer>,
    /// Listener ports, ascending (Ingress `status.loadBalancer.ingress[].ports`).
    pub listener_ports: Vec<i32>,
    /// Target-group ARN by model resource id.
    pub target_group_arns: BTreeMap<String, String>,
    /// ACM certificate ARN by model resource id (certificates created for `create-acm-cert`).
    pub certificate_arns: BTreeMap<String, String>,
    pub target_group_bindings: Vec<ResolvedTargetGroupBinding>,
    pub managed_security_group: Option<String>,
    pub backend_security_group: Option<String>,
}

#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct DeployedLoadBalancer {
    pub arn: String,
    pub name: String,
    /// Lower-cased, as upstream writes it into Ingress status.
    pub dns_name: String,
    pub canonical_hosted_zone_id: String,
    /// `provisioning`, `active`, ... as the create or describe call answered (Gateway status).
    pub state: String,
}

impl From<crate::aws::LoadBalancer> for DeployedLoadBalancer {
    fn from(l: crate::aws::LoadBalancer) -> Self {
        DeployedLoadBalancer {
            arn: l.arn,
            name: l.name,
            dns_name: l.dns_name.to_ascii_lowercase(),
            canonical_hosted_zone_id: l.canonical_hosted_zone_id,
            state: l.state,
        }
    }
}

impl Deployer {
    /// Upstream defaults: listener/rule tagging on, SG deletion retried every 2 s for 2 min.
    pub fn new(
        elbv2: Arc<dyn ElbV2>,
        ec2: Arc<dyn Ec2>,
        cluster: impl Into<String>,
        vpc_id: impl Into<String>,
    ) -> Self {
        let vpc_id = vpc_id.into();
        let inventory = Arc::new(Inventory::new(elbv2.clone(), ec2.clone(), vpc_id.clone()));
        Self {
            elbv2,
            ec2,
            cluster: cluster.into(),
            vpc_id,
            external_managed_tags: vec![],
            listener_rules_tagging: true,
            enhanced_defaults: false,
            tagging: None,
            delete_interval: Duration::from_secs(2),
            delete_timeout: Duration::from_secs(120),
            tag_cache: tags::TagCache::default(),
            inventory,
            backend_sg: tokio::sync::Mutex::new(None),
            oidc_secrets: Default::default(),
            addons: addons::Addons::default(),
            cert_discovery: None,
            certificates: None,
            lb_stabilization_interval: DEFAULT_LB_STABILIZATION_INTERVAL,
        }
    }

    /// How long a reconcile waits before trying again to set the capacity reservation of a
    /// load balancer still provisioning (`--lb-stabilization-monitor-interval`).
    pub fn with_lb_stabilization_interval(mut self, interval: Duration) -> Self {
        self.lb_stabilization_interval = interval;
        self
    }

    /// The WAFv2 / WAF Classic / Shield clients (only those whose `--enable-*` flag is on);
    /// without one, a stack asking for that add-on is refused before any write.
    pub fn with_addons(mut self, clients: crate::aws::AddonClients) -> Self {
        self.addons = addons::Addons::new(clients);
        self
    }

    /// Where HTTPS listeners without explicit certificates find theirs (ACM discovery).
    pub fn with_cert_discovery(mut self, discovery: Arc<CertDiscovery>) -> Self {
        self.cert_discovery = Some(discovery);
        self
    }

    /// Gate `EnableCertificateManagement`: the stack's ACM certificates are created (and found,
    /// and deleted with the stack) through `certificates`.
    pub fn with_certificate_management(mut self, certificates: Arc<Certificates>) -> Self {
        self.certificates = Some(certificates);
        self
    }

    /// `--external-managed-tags`: keys never added or removed.
    pub fn with_external_managed_tags(mut self, keys: Vec<String>) -> Self {
        self.external_managed_tags = keys;
        self
    }

    /// Feature gate `ListenerRulesTagging` (default on).
    pub fn with_listener_rules_tagging(mut self, on: bool) -> Self {
        self.listener_rules_tagging = on;
        self
    }

    /// Feature gate `EnhancedDefaultBehavior` (default off; upstream's Gateway controllers
    /// always have it on): a listener whose ALPN policy or mutual authentication the model no
    /// longer sets gets AWS's default back (`None`, mode `off`) instead of keeping it.
    pub fn with_enhanced_default_behavior(mut self, on: bool) -> Self {
        self.enhanced_defaults = on;
        self
    }

    /// Feature gate `EnableRGTAPI` (default off): with a client, the stack's load balancers and
    /// target groups are looked up with `GetResources` by their stack tags instead of listing
    /// every one of the VPC and reading its tags; `None` keeps the ELBv2 lookups.
    pub fn with_resource_tagging(mut self, client: Option<Arc<dyn ResourceTagging>>) -> Self {
        self.tagging = client;
        self
    }

    /// The inventory shared by every deployer of the process (built next to the AWS clients),
    /// instead of this deployer's own. One of another VPC is refused: the deployer keeps its own.
    pub fn with_inventory(mut self, inventory: Arc<Inventory>) -> Self {
        if inventory.vpc_id() == self.vpc_id {
            self.inventory = inventory;
        } else {
            tracing::warn!(
                inventory_vpc = inventory.vpc_id(),
                vpc = %self.vpc_id,
                "the shared inventory is of another VPC; this deployer keeps its own"
            );
        }
        self
    }

    /// The inventory this deployer reads.
    pub fn inventory(&self) -> &Arc<Inventory> {
        &self.inventory
    }

    /// How deletes of in-use security groups / target groups are retried.
    pub fn with_delete_retry(mut self, interval: Duration, timeout: Duration) -> Self {
        self.delete_interval = interval;
        self.delete_timeout = timeout;
        self
    }

    pub fn cluster(&self) -> &str {
        &self.cluster
    }

    pub fn vpc_id(&self) -> &str {
        &self.vpc_id
    }

    /// Makes AWS match `stack`; see the module docs. When it fails while the remembered
    /// backend security group is gone (deleted by a concurrent deploy or by hand), the group is
    /// resolved again and the deploy retried once, so one stale id never fails every deploy.
    pub async fn deploy(&self, stack: &Stack) -> Result<DeployResult> {
        let auto_backend_sg = stack
            .backend_security_group
            .as_ref()
            .is_some_and(|b| b.group_id.is_none());
        match self.deploy_checked(stack).await {
            // Only an AWS error can come from a vanished group; the others (invalid stack,
            // protection, a lost lease) would only cost a describe call.
            Err(e @ Error::Aws { .. })
                if auto_backend_sg
                    && !matches!(
                        &e,
                        Error::Aws {
                            source: AwsError::NotLeader(_),
                            ..
                        }
                    )
                    && self.forget_stale_backend_sg().await =>
            {
                tracing::info!(error = %e, "the backend security group was gone; deploying again with it resolved anew");
                self.deploy_checked(stack).await
            }
            other => other,
        }
    }

    /// [`Self::deploy_once`]; an error saying the inventory may no longer match AWS invalidates
    /// it, so the retry lists again.
    async fn deploy_checked(&self, stack: &Stack) -> Result<DeployResult> {
        let out = self.deploy_once(stack).await;
        if let Err(e) = &out {
            self.invalidate_if_stale(e);
        }
        out
    }

    /// Invalidates the inventory when `e` says it may no longer match AWS (a resource taken from
    /// it is gone, one it lacks exists, a write's outcome is unknown); the error stays as it is.
    pub(crate) fn invalidate_if_stale(&self, e: &Error) {
        if let Error::Aws { source, what } = e {
            if inventory::stales(source) {
                tracing::debug!(
                    error = %source,
                    step = %what,
                    "the inventory may be stale; listing again at the next read"
                );
                self.inventory.invalidate();
            }
        }
    }

    /// One deploy, step by step (see the module docs); the steps live in [`steps`].
    async fn deploy_once(&self, stack: &Stack) -> Result<DeployResult> {
        steps::check(stack)?;
        let sid = stack.stack_id.as_str();
        // Add-on names and the Shield subscription resolved before the first write too.
        let addon_plan = self.prepare_addons(stack).await?;
        // Certificates found in ACM (reads only) before the first write: a host without one
        // leaves AWS untouched. Already done when the reconciler resolved them first.
        let discovered = self.resolve_certificates(stack).await?;
        let stack: &Stack = &discovered;
        // Names resolved before the first write: a missing trust store leaves nothing half-built.
        let trust_store_arns = self.resolve_trust_stores(stack).await?;
        let mut res = Resolved {
            trust_store_arns,
            ..Default::default()
        };
        // 0. ACM certificates, before any other call of the stack's resources: the HTTPS
        // listeners need their ARNs, and a group waiting for ACM to issue one (or refused for a
        // name without a hosted zone) has nothing else read or half-built meanwhile.
        let certificate_leftovers = self.sync_certificates(stack, &mut res).await?;
        let kind = stack.kind;
        let mut owned = self.find_owned(stack, sid).await?;
        let fe_want = stack.frontend_nlb.as_ref();
        let fe_planned = match fe_want {
            Some(f) => Some(self.plan_frontend_nlb(f, &owned.frontend).await?),
            None => None,
        };
        if stack.load_balancer.is_none() {
            self.release_alb_targets(&owned.tgs).await?;
        }

        // 1. Security groups.
        if let Some(sg) = &stack.managed_security_group {
            res.managed_sg = Some(self.sync_managed_sg(kind, sg, &mut owned.sgs).await?);
        }
        if let Some(b) = &stack.backend_security_group {
            res.backend_sg = Some(self.backend_sg(b).await?);
        }
        // 1b. ALB targets of `alb`-type target groups that go away (the frontend NLB's; an NLB
        // Gateway's Gateway backends). A stack being deleted released them all above.
        let fe_tgs = fe_want.map_or(&[][..], |f| &f.target_groups[..]);
        if stack.load_balancer.is_some() {
            let want: Vec<&model::AlbTargetGroup> =
                fe_tgs.iter().chain(&stack.alb_target_groups).collect();
            let have: Vec<_> = owned.frontend.tgs.iter().chain(&owned.tgs).collect();
            self.release_unwanted_alb_targets(kind, &want, &have)
                .await?;
        }
        // 2. Target groups: the stack's `alb`-type ones first, then the others, then the
        // frontend NLB's.
        let tgs = self
            .sync_stack_target_groups(stack, fe_tgs, owned.tgs, owned.frontend.tgs, &mut res)
            .await?;
        // 3. Load balancers: the ALB, then the frontend NLB with its listeners.
        let lbs = self
            .sync_stack_load_balancers(
                stack,
                owned.lbs,
                owned.frontend.lbs,
                fe_planned.as_ref(),
                &mut res,
            )
            .await?;
        let lb = lbs.lb;
        // 4. Listeners, 5. rules, 6. WAFv2, WAF Classic, Shield.
        let mut listener_leftovers = lbs.listener_leftovers;
        let mut rule_leftovers = Vec::new();
        if let Some(lb) = &lb {
            let (listeners, rules) = self
                .sync_listeners_and_rules(stack, &lb.arn, &addon_plan, &mut res)
                .await?;
            listener_leftovers.extend(listeners);
            rule_leftovers = rules;
        }
        // Cleanup, in reverse order.
        self.delete_leftovers(steps::Leftovers {
            rules: &rule_leftovers,
            listeners: &listener_leftovers,
            lbs: &lbs.leftovers,
            tgs: &tgs.leftovers,
            certificates: &certificate_leftovers,
            sgs: &owned.sgs,
        })
        .await?;
        // 6. The ALB registered behind the frontend NLB, now that its listeners exist; the
        // other Gateways' ALBs in the target groups of an NLB Gateway's Gateway backends.
        if let (Some(f), Some(lb)) = (fe_want, &lb) {
            self.register_alb(&f.target_groups, &tgs.fe_arns, &lb.arn)
                .await?;
        }
        if let Some(lb) = &lb {
            self.register_alb(&stack.alb_target_groups, &tgs.gw_alb_arns, &lb.arn)
                .await?;
        }

        // 7. Capacity reservation, after everything else: the load balancer serves meanwhile.
        let units = stack
            .load_balancer
            .as_ref()
            .and_then(|w| w.minimum_capacity_units);
        if let (Some(lb), Some(units)) = (&lb, units) {
            self.sync_capacity(lb, units).await?;
        }
        let target_group_bindings = stack
            .target_group_bindings
            .iter()
            .map(|b| tgb::resolve(b, &res, &self.vpc_id))
            .collect::<Result<_>>()?;
        Ok(DeployResult {
            load_balancer: lb.map(DeployedLoadBalancer::from),
            frontend_nlb: lbs.frontend_nlb.map(DeployedLoadBalancer::from),
            listener_ports: res.listener_arns.keys().copied().collect(),
            target_group_arns: res.target_group_arns,
            certificate_arns: res.certificate_arns,
            target_group_bindings,
            managed_security_group: res.managed_sg,
            backend_security_group: res.backend_sg,
        })
    }

    /// Deletes every AWS resource tagged with this cluster and the Ingress stack `stack_id`
    /// (load balancer with its listeners and rules, then target groups, then security groups).
    pub async fn delete_stack(&self, stack_id: &str) -> Result<()> {
        self.delete_stack_of(StackKind::Ingress, stack_id).await
    }

    /// [`Self::delete_stack`] for a stack of either kind (a Service's: `service.k8s.aws/stack`).
    pub async fn delete_stack_of(&self, kind: StackKind, stack_id: &str) -> Result<()> {
        let empty = Stack {
            stack_id: stack_id.to_string(),
            kind,
            ..Default::default()
        };
        self.deploy(&empty).await.map(|_| ())
    }
}
