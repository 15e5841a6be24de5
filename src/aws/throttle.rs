//! Client-side rate limits per AWS operation: the `--aws-api-throttle` parser, upstream's defaults,
//! and token buckets. Each request takes exactly one token from the first bucket whose service
//! and operation pattern match (upstream once charged every matching bucket).

use std::sync::Mutex;
use std::time::Duration;

use regex::Regex;
use tokio::time::Instant;

use super::error::AwsError;
use super::types::Service;

const FLAG: &str = "--aws-api-throttle";

/// One `serviceID:operationRegex=rate:burst` entry.
#[derive(Debug, Clone)]
pub struct ThrottleRule {
    /// The service ID as written (e.g. `Elastic Load Balancing v2` or `elasticloadbalancing`).
    pub service: String,
    /// Matched anywhere in the operation name (like Go's `MatchString`); anchor with `^`/`$`.
    pub operation: Regex,
    /// Tokens per second.
    pub rate: f64,
    pub burst: u32,
}

impl PartialEq for ThrottleRule {
    fn eq(&self, o: &Self) -> bool {
        self.service == o.service
            && self.operation.as_str() == o.operation.as_str()
            && self.rate == o.rate
            && self.burst == o.burst
    }
}

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

/// Upstream's defaults for the services we call (WAF defaults belong to the WAF addon).
pub fn default_rules() -> Vec<ThrottleRule> {
    let r = |op: &str, rate: f64, burst: u32| ThrottleRule {
        service: Service::ElbV2.id().into(),
        operation: Regex::new(op).expect("static regex"),
        rate,
        burst,
    };
    vec![
        r("^RegisterTargets|^DeregisterTargets", 4.0, 20),
        r("^Describe", 50.0, 200),
        r("^Modify", 3.0, 20),
    ]
}

/// Parses the flag value; error texts follow upstream's and name the flag.
pub fn parse_throttle(value: &str) -> Result<Vec<ThrottleRule>, AwsError> {
    let bad = |m: String| AwsError::Config(format!("invalid {FLAG}: {m}"));
    let mut out = Vec::new();
    for pair in value.split(',') {
        let kv: Vec<&str> = pair.split('=').collect();
        if kv.len() != 2 {
            return Err(bad(format!(
                "{pair} must be formatted as serviceID:operationRegex=rate:burst"
            )));
        }
        let so: Vec<&str> = kv[0].split(':').collect();
        if so.len() != 2 || so[0].trim().is_empty() {
            return Err(bad(format!(
                "{} must be formatted as serviceID:operationRegex",
                kv[0]
            )));
        }
        let rb: Vec<&str> = kv[1].split(':').collect();
        if rb.len() != 2 {
            return Err(bad(format!("{} must be formatted as rate:burst", kv[1])));
        }
        let operation = Regex::new(so[1]).map_err(|_| {
            bad(format!(
                "{} must be valid regex expression for operation",
                so[1]
            ))
        })?;
        let rate: f64 = rb[0]
            .trim()
            .parse()
            .ok()
            .filter(|r: &f64| r.is_finite() && *r > 0.0)
            .ok_or_else(|| {
                bad(format!(
                    "{} must be valid positive float number as rate limit",
                    rb[0]
                ))
            })?;
        let burst: u32 = rb[1]
            .trim()
            .parse()
            .ok()
            .filter(|b| *b >= 1)
            .ok_or_else(|| bad(format!("{} must be valid positive integer as burst", rb[1])))?;
        out.push(ThrottleRule {
            service: so[0].trim().into(),
            operation,
            rate,
            burst,
        });
    }
    Ok(out)
}

/// Effective rules: the user's entries first, then the defaults of services the user did not
/// configure (as upstream: configuring a service replaces that service's defaults).
pub fn effective_rules(user: Option<&str>) -> Result<Vec<ThrottleRule>, AwsError> {
    let user = match user.map(str::trim).filter(|s| !s.is_empty()) {
        Some(v) => parse_throttle(v)?,
        None => vec![],
    };
    let overridden: Vec<String> = user.iter().map(|r| service_key(&r.service)).collect();
    let defaults = default_rules()
        .into_iter()
        .filter(|r| !overridden.contains(&service_key(&r.service)));
    Ok(user.into_iter().chain(defaults).collect())
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
    fn parses_upstream_syntax() {
        let r = parse_throttle(
            "elasticloadbalancing:RegisterTargets|DeregisterTargets=4:20,ec2:.*=1.5:3",
        )
        .unwrap();
        assert_eq!(r.len(), 2);
        assert_eq!(r[0].service, "elasticloadbalancing");
        assert!(r[0].operation.is_match("DeregisterTargets"));
        assert_eq!((r[0].rate, r[0].burst), (4.0, 20));
        assert_eq!((r[1].rate, r[1].burst), (1.5, 3));
    }

    #[test]
    fn rejects_bad_syntax_with_flag_name() {
        for (v, want) in [
            (
                "ec2",
                "ec2 must be formatted as serviceID:operationRegex=rate:burst",
            ),
            (
                "ec2=1:2",
                "ec2 must be formatted as serviceID:operationRegex",
            ),
            ("ec2:Foo=1", "1 must be formatted as rate:burst"),
            (
                "ec2:(=1:2",
                "( must be valid regex expression for operation",
            ),
            (
                "ec2:Foo=x:2",
                "x must be valid positive float number as rate limit",
            ),
            ("ec2:Foo=1:-2", "-2 must be valid positive integer as burst"),
        ] {
            let e = parse_throttle(v).unwrap_err().to_string();
            assert!(e.starts_with("invalid --aws-api-throttle: "), "{e}");
            assert!(e.ends_with(want), "{v}: {e}");
        }
    }

    #[test]
    fn user_entries_replace_service_defaults() {
        assert_eq!(effective_rules(None).unwrap().len(), 3);
        let r = effective_rules(Some("Elastic Load Balancing v2:^Describe=1:1")).unwrap();
        assert_eq!(r.len(), 1);
        let r = effective_rules(Some("ec2:^Describe=1:1")).unwrap();
        assert_eq!(r.len(), 4);
        assert_eq!(r[0].service, "ec2");
    }

    #[tokio::test]
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

    #[tokio::test]
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
