//! Parsers for flag values written the way upstream's pflag flags and Helm chart write them.
//!
//! Upstream users pass `--sync-period=10h`, `--default-tags=k1=v1,k2=v2` and
//! `--feature-gates=A=true,B=false`; we accept exactly those spellings.

use std::collections::BTreeMap;
use std::time::Duration;

/// Parses a Go `time.Duration` string: `10h`, `15s`, `1000s`, `2m30s`, `1.5h`, `300ms`, `0`.
pub fn parse_duration(raw: &str) -> Result<Duration, String> {
    let s = raw.trim();
    if s.is_empty() {
        return Err(format!("invalid duration {raw:?}"));
    }
    if s == "0" {
        return Ok(Duration::ZERO);
    }
    if s.starts_with('-') {
        return Err(format!(
            "invalid duration {raw:?}: negative durations are not allowed"
        ));
    }
    let s = s.strip_prefix('+').unwrap_or(s);
    let mut total = 0f64;
    let mut rest = s;
    while !rest.is_empty() {
        let num_len = rest
            .find(|c: char| !(c.is_ascii_digit() || c == '.'))
            .unwrap_or(rest.len());
        if num_len == 0 {
            return Err(format!("invalid duration {raw:?}"));
        }
        let value: f64 = rest[..num_len]
            .parse()
            .map_err(|_| format!("invalid duration {raw:?}"))?;
        rest = &rest[num_len..];
        let unit_len = rest
            .find(|c: char| c.is_ascii_digit() || c == '.')
            .unwrap_or(rest.len());
        let seconds_per_unit = match &rest[..unit_len] {
            "ns" => 1e-9,
            "us" | "µs" | "μs" => 1e-6,
            "ms" => 1e-3,
            "s" => 1.0,
            "m" => 60.0,
            "h" => 3600.0,
            "" => return Err(format!("invalid duration {raw:?}: missing unit")),
            unit => return Err(format!("invalid duration {raw:?}: unknown unit {unit:?}")),
        };
        rest = &rest[unit_len..];
        total += value * seconds_per_unit;
    }
    if !total.is_finite() || total > u64::MAX as f64 {
        return Err(format!("invalid duration {raw:?}: out of range"));
    }
    Ok(Duration::from_secs_f64(total))
}

/// Formats a duration the way Go prints it (`1h0m0s`, `15s`, `16m40s`), for help texts and logs.
pub fn format_duration(d: Duration) -> String {
    let secs = d.as_secs();
    let (h, m, s) = (secs / 3600, (secs % 3600) / 60, secs % 60);
    let frac = d.subsec_millis();
    let s_part = if frac > 0 {
        format!("{s}.{frac:03}s")
    } else {
        format!("{s}s")
    };
    match (h, m) {
        (0, 0) => s_part,
        (0, m) => format!("{m}m{s_part}"),
        (h, m) => format!("{h}h{m}m{s_part}"),
    }
}

/// Parses a pflag `stringToString` value: `k1=v1,k2=v2` (empty string = empty map).
pub fn parse_string_map(raw: &str) -> Result<BTreeMap<String, String>, String> {
    let mut out = BTreeMap::new();
    if raw.trim().is_empty() {
        return Ok(out);
    }
    for pair in raw.split(',') {
        let Some((k, v)) = pair.split_once('=') else {
            return Err(format!("{pair:?} must be formatted as key=value"));
        };
        let key = k.trim();
        if key.is_empty() {
            return Err(format!("{pair:?} has an empty key"));
        }
        out.insert(key.to_string(), v.trim().to_string());
    }
    Ok(out)
}

/// Parses a pflag `mapStringBool` value: `A=true,B=false`.
pub fn parse_bool_map(raw: &str) -> Result<BTreeMap<String, bool>, String> {
    parse_string_map(raw)?
        .into_iter()
        .map(|(k, v)| parse_bool(&v).map(|b| (k, b)))
        .collect()
}

/// Parses a Go `strconv.ParseBool` value.
pub fn parse_bool(raw: &str) -> Result<bool, String> {
    match raw.trim() {
        "1" | "t" | "T" | "true" | "TRUE" | "True" => Ok(true),
        "0" | "f" | "F" | "false" | "FALSE" | "False" => Ok(false),
        other => Err(format!("invalid boolean {other:?}")),
    }
}

/// Parses a comma-separated list, trimming items and dropping empties.
pub fn parse_list(raw: &str) -> Vec<String> {
    raw.split(',')
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .map(String::from)
        .collect()
}

/// Parses a Go-style bind address (`:8080`, `0.0.0.0:8080`, `127.0.0.1:0`, `[::]:8080`); `0` disables.
pub fn parse_bind_addr(raw: &str) -> Result<Option<std::net::SocketAddr>, String> {
    let s = raw.trim();
    if s == "0" || s.is_empty() {
        return Ok(None);
    }
    let full = if s.starts_with(':') {
        format!("0.0.0.0{s}")
    } else {
        s.to_string()
    };
    // `$(POD_IP):61779` as a kubelet expands it is unbracketed for an IPv6 pod IP: the part
    // after the last colon is then the port.
    let unbracketed_v6 = || {
        let (host, port) = full.rsplit_once(':')?;
        let ip: std::net::Ipv6Addr = host.parse().ok()?;
        Some(std::net::SocketAddr::from((ip, port.parse::<u16>().ok()?)))
    };
    full.parse()
        .ok()
        .or_else(|| (!full.starts_with('[')).then(unbracketed_v6).flatten())
        .map(Some)
        .ok_or_else(|| format!("invalid address {raw:?}: expected host:port or :port"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bind_addresses_with_a_pod_ip_of_either_family() {
        let p = |s: &str| parse_bind_addr(s).unwrap().unwrap().to_string();
        assert_eq!(p(":61779"), "0.0.0.0:61779");
        assert_eq!(p("10.1.2.3:61779"), "10.1.2.3:61779");
        assert_eq!(p("[fd00::1]:61779"), "[fd00::1]:61779");
        // `$(POD_IP):61779` with an IPv6 pod IP, as the kubelet expands it.
        assert_eq!(p("fd00::1:61779"), "[fd00::1]:61779");
        assert!(parse_bind_addr("fd00::1").is_err());
        assert!(parse_bind_addr("nonsense:1").is_err());
    }

    #[test]
    fn durations_in_go_syntax() {
        assert_eq!(parse_duration("10h").unwrap(), Duration::from_secs(36_000));
        assert_eq!(parse_duration("15s").unwrap(), Duration::from_secs(15));
        assert_eq!(parse_duration("1000s").unwrap(), Duration::from_secs(1000));
        assert_eq!(parse_duration("2m30s").unwrap(), Duration::from_secs(150));
        assert_eq!(parse_duration("1.5h").unwrap(), Duration::from_secs(5400));
        assert_eq!(parse_duration("300ms").unwrap(), Duration::from_millis(300));
        assert_eq!(parse_duration("1h0m0s").unwrap(), Duration::from_secs(3600));
        assert_eq!(parse_duration("0").unwrap(), Duration::ZERO);
        for bad in ["", "10", "10x", "h", "-5s", "1..5s", "s10"] {
            assert!(parse_duration(bad).is_err(), "{bad:?} should be rejected");
        }
    }

    #[test]
    fn durations_print_like_go() {
        assert_eq!(format_duration(Duration::from_secs(1000)), "16m40s");
        assert_eq!(format_duration(Duration::from_secs(36_000)), "10h0m0s");
        assert_eq!(format_duration(Duration::from_secs(15)), "15s");
        assert_eq!(format_duration(Duration::from_millis(1500)), "1.500s");
    }

    #[test]
    fn string_maps() {
        let m = parse_string_map("k1=v1, k2 = v2,k3=").unwrap();
        assert_eq!(m.len(), 3);
        assert_eq!(m["k2"], "v2");
        assert_eq!(m["k3"], "");
        assert!(parse_string_map("").unwrap().is_empty());
        assert!(parse_string_map("novalue").is_err());
        assert!(parse_string_map("=v").is_err());
        // A value may itself contain '=' (only the first one splits).
        assert_eq!(parse_string_map("a=b=c").unwrap()["a"], "b=c");
    }

    #[test]
    fn bool_maps_and_bools() {
        let m = parse_bool_map("A=true,B=false,C=1").unwrap();
        assert_eq!((m["A"], m["B"], m["C"]), (true, false, true));
        assert!(parse_bool_map("A=yes").is_err());
        assert!(parse_bool("T").unwrap());
        assert!(!parse_bool("0").unwrap());
    }

    #[test]
    fn lists_and_addresses() {
        assert_eq!(parse_list(" a, ,b,"), vec!["a", "b"]);
        assert_eq!(parse_bind_addr(":8080").unwrap().unwrap().port(), 8080);
        assert_eq!(parse_bind_addr("127.0.0.1:0").unwrap().unwrap().port(), 0);
        assert!(parse_bind_addr("[::]:9").unwrap().unwrap().is_ipv6());
        assert_eq!(parse_bind_addr("0").unwrap(), None);
        assert!(parse_bind_addr("nonsense").is_err());
    }
}
