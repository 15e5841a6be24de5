//! Replays upstream's `pkg/aga/utils_test.go`: `IsGlobalAcceleratorControllerEnabled` (7 cases),
//! `consolidatePortRanges` (7) and `IsPortInRanges` (9). Its `canApplyAutoDiscoveryForGA` table
//! is replayed beside the listeners step.

use super::*;

fn r(from_port: i32, to_port: i32) -> PortRange {
    PortRange { from_port, to_port }
}

#[test]
fn controller_runs_only_with_the_gate_and_outside_special_partitions() {
    for (case, gate, region, want) in [
        ("Feature gate disabled", false, "us-west-2", false),
        (
            "Feature gate enabled, standard region",
            true,
            "us-west-2",
            true,
        ),
        (
            "Feature gate enabled, China region",
            true,
            "cn-north-1",
            false,
        ),
        (
            "Feature gate enabled, GovCloud region",
            true,
            "us-gov-west-1",
            false,
        ),
        (
            "Feature gate enabled, ISO region",
            true,
            "us-iso-east-1",
            false,
        ),
        (
            "Feature gate enabled, ISO-E region",
            true,
            "eu-isoe-west-1",
            false,
        ),
        (
            "Feature gate enabled, upper case region",
            true,
            "US-WEST-2",
            true,
        ),
    ] {
        assert_eq!(controller_enabled(gate, region), want, "{case}");
    }
}

#[test]
fn ports_fold_into_ascending_ranges() {
    for (case, ports, want) in [
        ("empty ports", vec![], vec![]),
        ("single port", vec![80], vec![r(80, 80)]),
        ("consecutive ports", vec![80, 81, 82], vec![r(80, 82)]),
        (
            "non-consecutive ports",
            vec![80, 443, 8080],
            vec![r(80, 80), r(443, 443), r(8080, 8080)],
        ),
        (
            "mixed consecutive and non-consecutive ports",
            vec![80, 81, 443, 8080, 8081, 8082],
            vec![r(80, 81), r(443, 443), r(8080, 8082)],
        ),
        (
            "unsorted ports",
            vec![443, 80, 8080, 81],
            vec![r(80, 81), r(443, 443), r(8080, 8080)],
        ),
        (
            "duplicate ports",
            vec![80, 80, 81, 443, 443],
            vec![r(80, 81), r(443, 443)],
        ),
    ] {
        assert_eq!(consolidate_port_ranges(&ports), want, "{case}");
    }
    // The last port there is: no overflow past it.
    assert_eq!(
        consolidate_port_ranges(&[i32::MAX, i32::MAX - 1]),
        vec![r(i32::MAX - 1, i32::MAX)]
    );
}

#[test]
fn port_membership_includes_both_ends() {
    let several = vec![r(80, 100), r(443, 443), r(8080, 8090)];
    for (case, port, ranges, want) in [
        ("port within single range", 85, vec![r(80, 100)], true),
        ("port at lower boundary", 80, vec![r(80, 100)], true),
        ("port at upper boundary", 100, vec![r(80, 100)], true),
        ("port below range", 79, vec![r(80, 100)], false),
        ("port above range", 101, vec![r(80, 100)], false),
        (
            "port within one of multiple ranges",
            443,
            several.clone(),
            true,
        ),
        (
            "port not within any of multiple ranges",
            8000,
            several.clone(),
            false,
        ),
        ("empty port ranges", 80, vec![], false),
        // Upstream's nil slice; the same as empty here.
        ("nil port ranges", 80, Vec::new(), false),
    ] {
        assert_eq!(is_port_in_ranges(port, &ranges), want, "{case}");
    }
}
