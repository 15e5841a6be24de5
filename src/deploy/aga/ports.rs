//! Port-range helpers the listener and endpoint-group steps share (upstream's
//! `pkg/deploy/aga/utils.go`): ordering, port sets, the `80-80,443-443` form of listener keys.
//! One `PortRange` type serves the model and what AWS describes, so each helper exists once.

use std::cmp::Ordering;
use std::collections::BTreeSet;

use crate::model::aga::PortRange;

/// By first port, then last port.
pub fn compare_port_ranges(a: &PortRange, b: &PortRange) -> Ordering {
    a.from_port
        .cmp(&b.from_port)
        .then(a.to_port.cmp(&b.to_port))
}

pub fn sort_port_ranges(ranges: &mut [PortRange]) {
    ranges.sort_by(compare_port_ranges);
}

/// Every port of `from..=to` into `set` (nothing when `from > to`).
pub fn add_ports(from: i32, to: i32, set: &mut BTreeSet<i32>) {
    set.extend(from..=to);
}

/// Every port the ranges cover.
pub fn port_set(ranges: &[PortRange]) -> BTreeSet<i32> {
    let mut set = BTreeSet::new();
    for r in ranges {
        add_ports(r.from_port, r.to_port, &mut set);
    }
    set
}

pub fn format_port_range(from: i32, to: i32) -> String {
    format!("{from}-{to}")
}

/// `80-80,443-443`, in the order given.
pub fn port_ranges_to_string(ranges: &[PortRange]) -> String {
    ranges
        .iter()
        .map(|r| format_port_range(r.from_port, r.to_port))
        .collect::<Vec<_>>()
        .join(",")
}

/// Whether a port falls in any of the ranges (upstream's `IsPortInRanges`).
pub fn is_port_in_ranges(port: i32, ranges: &[PortRange]) -> bool {
    ranges
        .iter()
        .any(|r| r.from_port <= port && port <= r.to_port)
}

#[cfg(test)]
mod tests {
    //! Upstream's utils_test.go, every table: TestSortModelPortRanges (4), TestSortSDKPortRanges
    //! (4), TestPortRangeCompare (5), TestPortRangesToSet (3), TestResPortRangesToSet (3),
    //! TestSDKPortRangesToSet (3), TestResPortRangesToString (3), TestSDKPortRangesToString (3),
    //! TestFormatPortRangeToString (2). The model and SDK variants are one function here, so
    //! each SDK table runs against the same function as its model twin.

    use super::*;

    fn r(from_port: i32, to_port: i32) -> PortRange {
        PortRange { from_port, to_port }
    }

    fn sorting_cases() -> Vec<(&'static str, Vec<PortRange>, Vec<PortRange>)> {
        vec![
            (
                "already sorted by FromPort",
                vec![r(80, 80), r(443, 443)],
                vec![r(80, 80), r(443, 443)],
            ),
            (
                "unsorted by FromPort",
                vec![r(443, 443), r(80, 80)],
                vec![r(80, 80), r(443, 443)],
            ),
            (
                "same FromPort, different ToPort",
                vec![r(80, 100), r(80, 90)],
                vec![r(80, 90), r(80, 100)],
            ),
            ("empty slice", vec![], vec![]),
        ]
    }

    #[test]
    fn sort_model_and_sdk_port_ranges() {
        // The model table, then the SDK table (the same cases).
        let mut n = 0;
        for _table in ["model", "sdk"] {
            for (name, mut got, want) in sorting_cases() {
                sort_port_ranges(&mut got);
                assert_eq!(got, want, "{name}");
                n += 1;
            }
        }
        assert_eq!(n, 8);
    }

    #[test]
    fn port_range_compare() {
        for (name, a, b, want) in [
            (
                "first range starts before second",
                r(80, 100),
                r(90, 110),
                Ordering::Less,
            ),
            (
                "first range starts after second",
                r(90, 110),
                r(80, 100),
                Ordering::Greater,
            ),
            (
                "same start, first end before second",
                r(80, 100),
                r(80, 110),
                Ordering::Less,
            ),
            (
                "same start, first end after second",
                r(80, 110),
                r(80, 100),
                Ordering::Greater,
            ),
            (
                "identical port ranges",
                r(80, 100),
                r(80, 100),
                Ordering::Equal,
            ),
        ] {
            assert_eq!(compare_port_ranges(&a, &b), want, "{name}");
        }
    }

    #[test]
    fn port_ranges_to_set() {
        for (name, from, to, want) in [
            ("single port", 80, 80, vec![80]),
            ("port range", 80, 82, vec![80, 81, 82]),
            (
                "fromPort > toPort (invalid but shouldn't crash)",
                82,
                80,
                vec![],
            ),
        ] {
            let mut set = BTreeSet::new();
            add_ports(from, to, &mut set);
            assert_eq!(set.into_iter().collect::<Vec<_>>(), want, "{name}");
        }
        // TestResPortRangesToSet and TestSDKPortRangesToSet.
        for _table in ["res", "sdk"] {
            for (name, ranges, want) in [
                ("single port range", vec![r(80, 82)], vec![80, 81, 82]),
                (
                    "multiple port ranges",
                    vec![r(80, 81), r(443, 444)],
                    vec![80, 81, 443, 444],
                ),
                ("empty slice", vec![], vec![]),
            ] {
                let got: Vec<i32> = port_set(&ranges).into_iter().collect();
                assert_eq!(got, want, "{name}");
            }
        }
    }

    #[test]
    fn port_ranges_as_strings() {
        // TestResPortRangesToString and TestSDKPortRangesToString.
        for _table in ["res", "sdk"] {
            for (name, ranges, want) in [
                ("single port range", vec![r(80, 80)], "80-80"),
                (
                    "multiple port ranges",
                    vec![r(80, 80), r(443, 443)],
                    "80-80,443-443",
                ),
                ("empty slice", vec![], ""),
            ] {
                assert_eq!(port_ranges_to_string(&ranges), want, "{name}");
            }
        }
        // TestFormatPortRangeToString.
        assert_eq!(format_port_range(80, 80), "80-80", "single port");
        assert_eq!(format_port_range(80, 100), "80-100", "port range");
    }

    #[test]
    fn ports_in_ranges() {
        let ranges = [r(80, 90), r(443, 443)];
        assert!(is_port_in_ranges(80, &ranges));
        assert!(is_port_in_ranges(90, &ranges));
        assert!(is_port_in_ranges(443, &ranges));
        assert!(!is_port_in_ranges(91, &ranges));
        assert!(!is_port_in_ranges(8080, &[]));
    }
}
