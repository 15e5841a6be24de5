//! Client-side rate limits per AWS operation: upstream's defaults under the `--aws-api-throttle`
//! rules (parsed at start by the config) and token buckets. Each request takes exactly one token
//! from the first bucket whose service and operation pattern match (upstream once charged every
//! matching bucket).

use std::sync::Mutex;
use std::time::Duration;

use regex::Regex;
use tokio::time::Instant;

use super::types::Service;

pub use crate::config::{parse_throttle, ThrottleRule};

/// Normalises service IDs so `Elastic Load Balancing v2`, `elasticloadbalancing`, `elbv2` agree.
fn service_key(s: &str) -> String {
    let k: String = s
        .chars()
        .filter(|c| c.is_ascii_alphanumeric())
        .collect::<String>()
        .to_ascii_lowercase();
    match k.as_str() {
        "elasticloadbalancingv2" | "elasticloadbalancing" | "elbv2" => "elbv2".into(),
        _ => k,
    }
}

/// Upstream's defaults for the services we call: ELBv2, and the WAFv2 / WAF Regional
/// association calls (0.5/s writes, 1/s reads, burst 1).
pub fn default_rules() -> Vec<ThrottleRule> {
    let rule = |service: Service, op: &str, rate: f64, burst: u32| ThrottleRule {
        service: service.id().into(),
        operation: Regex::new(op).expect("static regex"),
        rate,
        burst,
    };
    let r = |op: &str, rate: f64, burst: u32| rule(Service::ElbV2, op, rate, burst);
    let mut rules = vec![
        r("^RegisterTargets|^DeregisterTargets", 4.0, 20),
        r("^Describe", 50.0, 200),
        r("^Modify", 3.0, 20),
    ];
    for waf in [Service::WafRegional, Service::WafV2] {
        rules.push(rule(waf, "^AssociateWebACL|DisassociateWebACL", 0.5, 1));
        rules.push(rule(
            waf,
            "^GetWebACLForResource|ListResourcesForWebACL",
            1.0,
            1,
        ));
    }
    rules
}

/// Effective rules: the user's entries first, then the defaults of services the user did not
/// configure (as upstream: configuring a service replaces that service's defaults).
pub fn effective_rules(user: &[ThrottleRule]) -> Vec<ThrottleRule> {
    let overridden: Vec<String> = user.iter().map(|r| service_key(&r.service)).collect();
    let defaults = default_rules()
        .into_iter()
        .filter(|r| !overridden.contains(&service_key(&r.service)));
    user.iter().cloned().chain(defaults).collect()
}

/// A token bucket in the style of Go's `rate.Limiter`: a caller reserves a token at once (the
/// balance may go negative) and sleeps until it is due, so waiters are served in order.
#[derive(Debug)]
pub struct TokenBucket {
    rate: f64,
    burst: f64,
    state: Mutex<(f64, Instant)>,
}

impl TokenBucket {
    pub fn new(rate: f64, burst: u32) -> Self {
        Self {
            rate,
            burst: burst as f64,
            state: Mutex::new((burst as f64, Instant::now())),
        }
    }

    /// Reserves one token and returns how long to wait before using it.
    fn reserve(&self) -> Duration {
        let now = Instant::now();
        let mut st = self.state.lock().unwrap_or_else(|p| p.into_inner());
        let elapsed = now.saturating_duration_since(st.1).as_secs_f64();
        st.0 = (st.0 + elapsed * self.rate).min(self.burst) - 1.0;
        st.1 = now;
        if st.0 >= 0.0 {
            Duration::ZERO
        } else {
            Duration::from_secs_f64(-st.0 / self.rate)
        }
    }

    /// Takes one token, sleeping until one is available.
    pub async fn acquire(&self) {
        let wait = self.reserve();
        if !wait.is_zero() {
            tokio::time::sleep(wait).await;
        }
    }
}

/// All buckets of a client, looked up by service and operation.
#[derive(Debug)]
pub struct Throttler {
    buckets: Vec<(String, Regex, TokenBucket)>,
}

impl Throttler {
    pub fn new(rules: &[ThrottleRule]) -> Self {
        let buckets = rules
            .iter()
            .map(|r| {
                (
                    service_key(&r.service),
                    r.operation.clone(),
                    TokenBucket::new(r.rate, r.burst),
                )
            })
            .collect();
        Self { buckets }
    }

    /// No limits at all (for tests and benchmarks of the raw fake).
    pub fn unlimited() -> Self {
        Self { buckets: vec![] }
    }

    /// Waits for a token of the first matching bucket (if any); one token per request.
    pub async fn acquire(&self, service: Service, operation: &str) {
        let key = service_key(service.id());
        if let Some((_, _, b)) = self
            .buckets
            .iter()
            .find(|(s, re, _)| *s == key && re.is_match(operation))
        {
            b.acquire().await;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn user_entries_replace_service_defaults() {
        assert_eq!(effective_rules(&[]).len(), 7);
        let user = |v: &str| effective_rules(&parse_throttle(v).unwrap());
        let r = user("Elastic Load Balancing v2:^Describe=1:1");
        assert_eq!(r.len(), 5);
        let r = user("ec2:^Describe=1:1");
        assert_eq!(r.len(), 8);
        assert_eq!(r[0].service, "ec2");
        let r = user("WAFV2:^Associate=1:1");
        assert_eq!(r.len(), 6, "WAFv2's two defaults replaced");
    }

    // tokio's clock, paused: the buckets are checked against virtual time, which only the
    // waits move, so the figures are exact on any machine.
    #[tokio::test(start_paused = true)]
    async fn first_matching_bucket_only() {
        // Two matching rules: only the first is charged, so 5 calls fit its burst of 5 with no
        // wait even though the second bucket has a burst of 1.
        let rules = parse_throttle("elbv2:Describe.*=1:5,elbv2:DescribeTags=1:1").unwrap();
        let t = Throttler::new(&rules);
        let start = Instant::now();
        for _ in 0..5 {
            t.acquire(Service::ElbV2, "DescribeTags").await;
        }
        assert!(start.elapsed() < Duration::from_millis(50));
        t.acquire(Service::ElbV2, "DescribeTags").await;
        let waited = start.elapsed();
        assert!(
            waited >= Duration::from_millis(990) && waited < Duration::from_millis(1100),
            "{waited:?}"
        );
        // EC2 is not limited by ELBv2 rules.
        t.acquire(Service::Ec2, "DescribeTags").await;
        assert!(start.elapsed() - waited < Duration::from_millis(50));
    }

    #[tokio::test(start_paused = true)]
    async fn bucket_holds_rate() {
        let b = TokenBucket::new(20.0, 5);
        let start = Instant::now();
        for _ in 0..45 {
            b.acquire().await;
        }
        // 5 from the burst, 40 more at 20/s = 2 s.
        let s = start.elapsed().as_secs_f64();
        assert!((s - 2.0).abs() < 0.1, "{s}");
    }
}
