//! In-memory fake of ELBv2 and EC2 (and ACM, the add-ons, the tagging API and Global
//! Accelerator) behind the same traits as the SDK implementation, for fast tests and scale
//! benchmarks. It enforces the AWS rules moto does not (name limits, deletion
//! protection, DependencyViolation, tag limits), lets tests set target health, logs every
//! request, and injects faults (throttling, 5xx, latency, failing the N-th request).
//! Requests go through the same [`Caller`] (limiter, retries, metrics) as the SDK ones.

mod acm;
mod addons;
mod ec2;
mod ec2_filters;
mod ec2_sg;
mod elb;
mod elb_api;
mod elb_listeners;
mod elb_quic;
mod elb_rules;
mod elb_tg;
mod filter;
mod ga_rules;
mod ga_state;
mod global_accelerator;
mod roles;
mod route53;
pub mod spec;
mod state;
mod tagging;

pub use acm::{validation_record, FakeAcm, FakeCertificate};
pub use ga_state::{GaDeployment, GaLimits};
pub use roles::FakeRoles;
pub use route53::{FakeRecord, FakeRoute53};

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Mutex, MutexGuard};
use std::time::Duration;

use rand::Rng;

use super::caller::Caller;
use super::error::{AwsError, Result};
use super::types::*;
pub(crate) use state::State;

/// Injected failures; rates are probabilities per request in `[0, 1]`.
#[derive(Debug, Clone, Default)]
struct Faults {
    throttle_rate: f64,
    server_error_rate: f64,
    latency: Duration,
    /// Request numbers (1-based, over the fake's lifetime) that fail with the given error.
    fail_at: Vec<(u64, AwsError)>,
}

/// The fake AWS account (one region). Share it as `Arc<FakeAws>`; it coerces to both
/// `Arc<dyn ElbV2>` and `Arc<dyn Ec2>`.
#[derive(Debug)]
pub struct FakeAws {
    state: Mutex<State>,
    faults: Mutex<Faults>,
    log: Mutex<Vec<(Service, String)>>,
    requests: AtomicU64,
    caller: Caller,
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

impl Default for FakeAws {
    fn default() -> Self {
        Self::new()
    }
}

impl FakeAws {
    /// A fake in `us-west-2`, account `123456789012`, with three AZs and no limiter or retries.
    pub fn new() -> Self {
        Self::with_caller("us-west-2", Caller::default())
    }

    /// A fake of another account (ARNs carry `account`), for cross-account bindings.
    pub fn in_account(account: &str) -> Self {
        let fake = Self::new();
        fake.with_state(|st| *st = State::new("us-west-2", account));
        fake
    }

    /// A fake whose requests go through `caller` (limiter, retries, metrics).
    pub fn with_caller(region: &str, caller: Caller) -> Self {
        Self {
            state: Mutex::new(State::new(region, "123456789012")),
            faults: Mutex::new(Faults::default()),
            log: Mutex::new(Vec::new()),
            requests: AtomicU64::new(0),
            caller,
        }
    }

    pub fn region(&self) -> String {
        lock(&self.state).region.clone()
    }

    // ---------------------------------------------------------------- call log

    /// Every request that reached the fake (retries included), in order.
    pub fn calls(&self) -> Vec<(Service, String)> {
        lock(&self.log).clone()
    }

    /// The requests that change something (not Describe*, Get*, List*).
    pub fn write_calls(&self) -> Vec<(Service, String)> {
        self.calls()
            .into_iter()
            .filter(|(_, op)| crate::aws::fence::is_write(op))
            .collect()
    }

    /// How many requests named `op` reached the fake.
    pub fn count(&self, op: &str) -> usize {
        lock(&self.log).iter().filter(|(_, o)| o == op).count()
    }

    /// Every OIDC client secret stored on a listener or rule (which DescribeListeners and
    /// DescribeRules never show, as on AWS), by ARN.
    pub fn oidc_client_secrets(&self) -> Vec<(String, String)> {
        let st = lock(&self.state);
        let secrets = |arn: &String, actions: &[crate::model::Action]| {
            actions
                .iter()
                .filter_map(|a| match a {
                    crate::model::Action::AuthenticateOidc { config } => {
                        Some(config.client_secret.expose().to_string()).filter(|s| !s.is_empty())
                    }
                    _ => None,
                })
                .map(|s| (arn.clone(), s))
                .collect::<Vec<_>>()
        };
        let mut out: Vec<(String, String)> = st
            .rules
            .iter()
            .filter(|(_, r)| !r.rule.is_default)
            .flat_map(|(arn, r)| secrets(arn, &r.rule.actions))
            .collect();
        out.extend(
            st.listeners
                .iter()
                .flat_map(|(arn, l)| secrets(arn, &l.listener.default_actions)),
        );
        out
    }

    pub fn clear_calls(&self) {
        lock(&self.log).clear();
    }

    // ---------------------------------------------------------------- faults

    /// Fraction of requests answered with `Throttling` (HTTP 400).
    pub fn set_throttle_rate(&self, rate: f64) {
        lock(&self.faults).throttle_rate = rate.clamp(0.0, 1.0);
    }

    /// Fraction of requests answered with `InternalFailure` (HTTP 500).
    pub fn set_server_error_rate(&self, rate: f64) {
        lock(&self.faults).server_error_rate = rate.clamp(0.0, 1.0);
    }

    /// Added to every request.
    pub fn set_latency(&self, latency: Duration) {
        lock(&self.faults).latency = latency;
    }

    /// Makes the `n`-th request from now (1 = the next one) fail with `err`.
    pub fn fail_nth_call(&self, n: u64, err: AwsError) {
        let at = self.requests.load(Ordering::SeqCst) + n.max(1);
        lock(&self.faults).fail_at.push((at, err));
    }

    pub fn clear_faults(&self) {
        *lock(&self.faults) = Faults::default();
    }

    // ---------------------------------------------------------------- test access to state

    /// Runs `f` on the state directly (no log, no faults): for seeding and inspection.
    pub(crate) fn with_state<T>(&self, f: impl FnOnce(&mut State) -> T) -> T {
        f(&mut lock(&self.state))
    }

    /// Every certificate ARN a listener uses (default or extra), which AWS refuses to let ACM
    /// delete.
    pub fn certificates_in_use(&self) -> std::collections::BTreeSet<String> {
        self.with_state(|st| {
            st.listeners
                .values()
                .flat_map(|l| l.listener.certificates.iter().chain(&l.extra_certs))
                .cloned()
                .collect()
        })
    }

    /// Adds a VPC; returns its ID.
    pub fn add_vpc(&self, cidr: &str, tags: Tags) -> String {
        self.with_state(|st| st.add_vpc(cidr, tags))
    }

    /// Adds a subnet (8 + 243 free addresses unless `available_ips` is set later).
    pub fn add_subnet(&self, vpc_id: &str, cidr: &str, az: &str, tags: Tags) -> Result<String> {
        self.with_state(|st| st.add_subnet(vpc_id, cidr, az, tags))
    }

    /// Puts in place a target group the controller never creates (`lambda`, another VPC, no
    /// health check...), as AWS would describe `tg`; its ARN is made up. CreateTargetGroup
    /// takes the model's target groups only.
    pub fn add_target_group(&self, tg: TargetGroup, tags: Tags) -> TargetGroup {
        self.with_state(|st| st.seed_tg(tg, tags))
    }

    /// Sets a load balancer's state (`provisioning`, `active`...), as AWS moves it.
    pub fn set_load_balancer_state(&self, arn: &str, state: &str) {
        self.with_state(|st| {
            if let Some(r) = st.lbs.get_mut(arn) {
                r.lb.state = state.into();
            }
        })
    }

    /// Associates an IPv6 CIDR block with a subnet (dualstack load balancers need one).
    pub fn add_subnet_ipv6_cidr(&self, subnet_id: &str, cidr: &str) {
        self.with_state(|st| {
            if let Some(s) = st.subnets.get_mut(subnet_id) {
                s.ipv6_cidr_blocks.push(cidr.into());
            }
        })
    }

    /// Changes the free address count of a subnet.
    pub fn set_subnet_available_ips(&self, subnet_id: &str, n: i32) {
        self.with_state(|st| {
            if let Some(s) = st.subnets.get_mut(subnet_id) {
                s.available_ip_address_count = n;
            }
        })
    }

    /// Adds a running instance with a primary ENI in the subnet; returns the instance ID.
    pub fn add_instance(
        &self,
        subnet_id: &str,
        private_ip: &str,
        security_groups: &[String],
    ) -> Result<String> {
        self.with_state(|st| st.add_instance(subnet_id, private_ip, security_groups))
    }

    /// Adds a route table associated with the subnets; `igw` adds a default route to an IGW.
    pub fn add_route_table(&self, vpc_id: &str, subnet_ids: &[String], igw: bool) -> String {
        self.with_state(|st| st.add_route_table(vpc_id, subnet_ids, igw))
    }

    /// Sets the health of a registered target (AWS starts them `initial`; moto says `healthy`).
    pub fn set_target_health(
        &self,
        tg_arn: &str,
        target: &TargetDescription,
        state: TargetHealthState,
        reason: Option<&str>,
    ) -> Result<()> {
        self.with_state(|st| st.set_target_health(tg_arn, target, state, reason))
    }

    /// Sets every registered target of the group to `state`.
    pub fn set_all_targets_health(&self, tg_arn: &str, state: TargetHealthState) -> Result<()> {
        self.with_state(|st| st.set_all_targets_health(tg_arn, state))
    }

    /// Adds a trust store `name`; returns its ARN.
    pub fn add_trust_store(&self, name: &str) -> String {
        self.with_state(|st| {
            let arn = st.elb_arn(&format!("truststore/{name}/0123456789abcdef"));
            st.trust_stores.insert(name.to_string(), arn.clone());
            arn
        })
    }

    /// Makes GetResources go on listing `arn` with `tags` though no such resource exists (the
    /// tagging index lags behind deletions).
    pub fn add_stale_tagging_entry(&self, arn: &str, tags: Tags) {
        self.with_state(|st| {
            st.tagging_stale.insert(arn.to_string(), tags);
        })
    }

    /// When on, deregistered targets stay `draining` until [`FakeAws::finish_draining`].
    pub fn set_deregistration_draining(&self, on: bool) {
        self.with_state(|st| st.drain_on_deregister = on)
    }

    pub fn finish_draining(&self) {
        self.with_state(|st| st.finish_draining())
    }

    // ---------------------------------------------------------------- request path

    /// One logical request: through the caller, with the fault checks on each attempt.
    async fn run<T, F>(&self, service: Service, op: &'static str, f: F) -> Result<T>
    where
        F: Fn(&mut State) -> Result<T> + Send + Sync,
        T: Send,
    {
        self.caller
            .call(service, op, || self.attempt(service, op, &f))
            .await
    }

    async fn attempt<T, F>(&self, service: Service, op: &'static str, f: &F) -> Result<T>
    where
        F: Fn(&mut State) -> Result<T> + Send + Sync,
    {
        let n = self.requests.fetch_add(1, Ordering::SeqCst) + 1;
        lock(&self.log).push((service, op.to_string()));
        let latency = lock(&self.faults).latency;
        if !latency.is_zero() {
            tokio::time::sleep(latency).await;
        }
        if let Some(err) = self.injected(n) {
            return Err(err);
        }
        f(&mut lock(&self.state))
    }

    fn injected(&self, n: u64) -> Option<AwsError> {
        let mut faults = lock(&self.faults);
        if let Some(i) = faults.fail_at.iter().position(|(at, _)| *at == n) {
            return Some(faults.fail_at.remove(i).1);
        }
        let mut rng = rand::rng();
        if faults.throttle_rate > 0.0 && rng.random_bool(faults.throttle_rate) {
            return Some(AwsError::from_code(
                "Throttling",
                "Rate exceeded",
                Some(400),
            ));
        }
        if faults.server_error_rate > 0.0 && rng.random_bool(faults.server_error_rate) {
            return Some(AwsError::from_code(
                "InternalFailure",
                "injected server error",
                Some(500),
            ));
        }
        None
    }
}
