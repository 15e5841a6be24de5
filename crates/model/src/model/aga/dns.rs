//! A load balancer's DNS name → its ARN (upstream's `DNSToLoadBalancerResolver`, without the
//! AWS call and the cache): a lookup over the load balancers the controller described.

/// One load balancer as ELBv2's DescribeLoadBalancers returns it, reduced to what the lookup
/// reads.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DescribedLoadBalancer {
    pub dns_name: String,
    pub arn: String,
}

/// The ARN of the load balancer whose DNS name is `dns_name`, from `described` (the load
/// balancers of the region, or why describing them failed), with upstream's errors; the first
/// match wins.
pub fn load_balancer_arn_by_dns(
    dns_name: &str,
    described: Result<&[DescribedLoadBalancer], &str>,
) -> Result<String, String> {
    if dns_name.is_empty() {
        return Err("empty DNS name".into());
    }
    let lbs = described.map_err(|e| format!("failed to describe load balancers: {e}"))?;
    if lbs.is_empty() {
        return Err("no load balancers found".into());
    }
    match lbs.iter().find(|lb| lb.dns_name == dns_name) {
        Some(lb) if !lb.arn.is_empty() => Ok(lb.arn.clone()),
        _ => Err(format!("no load balancer found for dns {dns_name}")),
    }
}

#[cfg(test)]
#[path = "dns_tests.rs"]
mod tests;
