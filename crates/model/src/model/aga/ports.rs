//! Port ranges (upstream's `pkg/aga/utils.go`): membership, and discovered ports folded into the
//! fewest ranges; and where the Global Accelerator controller may run at all.

use crate::model::types::aga::PortRange;

/// Whether `port` lies in one of `ranges` (both ends included).
pub fn is_port_in_ranges(port: i32, ranges: &[PortRange]) -> bool {
    ranges
        .iter()
        .any(|r| r.from_port <= port && port <= r.to_port)
}

/// `ports` as ascending ranges of consecutive ports, duplicates dropped; none for none.
pub fn consolidate_port_ranges(ports: &[i32]) -> Vec<PortRange> {
    let mut sorted = ports.to_vec();
    sorted.sort_unstable();
    let Some((&first, rest)) = sorted.split_first() else {
        return Vec::new();
    };
    let mut out = Vec::new();
    let (mut start, mut end) = (first, first);
    for &port in rest {
        // i64: the next port after `end` never overflows, whatever the input.
        let next = i64::from(end) + 1;
        if i64::from(port) == next {
            end = port;
        } else if i64::from(port) > next {
            out.push(PortRange {
                from_port: start,
                to_port: end,
            });
            start = port;
            end = port;
        }
    }
    out.push(PortRange {
        from_port: start,
        to_port: end,
    });
    out
}

/// Region prefixes of partitions without Global Accelerator (China, GovCloud, ISO, ISO-E).
const UNSUPPORTED_REGION_PREFIXES: &[&str] = &["cn-", "us-gov-", "us-iso", "eu-isoe-"];

/// Upstream's `IsGlobalAcceleratorControllerEnabled`: the `GlobalAcceleratorController` gate is
/// on and `region` is in a partition that has Global Accelerator. Gates the controller and its
/// webhook alike.
pub fn controller_enabled(gate_on: bool, region: &str) -> bool {
    if !gate_on {
        return false;
    }
    let region = region.to_ascii_lowercase();
    !UNSUPPORTED_REGION_PREFIXES
        .iter()
        .any(|p| region.starts_with(p))
}

#[cfg(test)]
#[path = "ports_tests.rs"]
mod tests;
