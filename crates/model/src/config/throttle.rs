//! The syntax of `--aws-api-throttle` (`serviceID:operationRegex=rate:burst,...`), parsed once at
//! start so a bad value stops the controller with upstream's message instead of surfacing only
//! when the AWS clients are built. Defaults and token buckets belong to the AWS layer.

use regex::Regex;

use super::ConfigError;

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

/// Compared by the pattern's text (`Regex` has no equality of its own).
impl PartialEq for ThrottleRule {
    fn eq(&self, o: &Self) -> bool {
        self.service == o.service
            && self.operation.as_str() == o.operation.as_str()
            && self.rate == o.rate
            && self.burst == o.burst
    }
}

/// Parses the flag value; each message follows upstream's and is reported as
/// `invalid --aws-api-throttle: <message>`.
pub fn parse_throttle(value: &str) -> Result<Vec<ThrottleRule>, ConfigError> {
    let bad = ConfigError::ApiThrottle;
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

/// The flag as given: empty (or blank) means no user entries, so the AWS layer's defaults apply.
pub fn throttle_flag(value: &str) -> Result<Vec<ThrottleRule>, ConfigError> {
    match value.trim() {
        "" => Ok(vec![]),
        v => parse_throttle(v),
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
        assert!(throttle_flag("  ").unwrap().is_empty());
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
            assert_eq!(e, format!("invalid --aws-api-throttle: {want}"), "{v}");
        }
    }
}
