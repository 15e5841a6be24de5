//! A strict reading of Prometheus text format 0.0.4 as client_golang writes it: what upstream's
//! `/metrics` gives the scrapes, dashboards and recording rules built on it, down to how every
//! number is spelled (`le="60"`, never `le="60.0"`).

use std::collections::HashSet;

/// Checks every line of `body`; the error names the first line that upstream could not have
/// written.
pub fn check(body: &str) -> Result<(), String> {
    if !body.is_empty() && !body.ends_with('\n') {
        return Err("the last line has no newline".into());
    }
    let mut typed = HashSet::new();
    let mut helped = HashSet::new();
    let mut help: Option<&str> = None;
    let mut family: Option<(&str, &str)> = None;
    for (i, line) in body.lines().enumerate() {
        let at = |why: &str| format!("line {}: {why}: {line:?}", i + 1);
        if let Some(comment) = line.strip_prefix('#') {
            let mut parts = comment.strip_prefix(' ').unwrap_or("").splitn(3, ' ');
            match (parts.next(), parts.next(), parts.next()) {
                (Some("HELP"), Some(name), Some(doc)) => {
                    if !metric_name(name) || !help_text(doc) || help.is_some() {
                        return Err(at("bad HELP"));
                    }
                    if !helped.insert(name) {
                        return Err(at("second HELP for the family"));
                    }
                    help = Some(name);
                }
                (Some("TYPE"), Some(name), Some(kind)) => {
                    let known = ["counter", "gauge", "histogram", "summary", "untyped"];
                    if !metric_name(name) || !known.contains(&kind) {
                        return Err(at("bad TYPE"));
                    }
                    if help.take().is_some_and(|h| h != name) {
                        return Err(at("TYPE of another family than the HELP before it"));
                    }
                    if !typed.insert(name) {
                        return Err(at("second TYPE for the family"));
                    }
                    family = Some((name, kind));
                }
                // `# EOF`, `# UNIT`: OpenMetrics; client_golang writes no other comment.
                _ => return Err(at("not a HELP or TYPE line")),
            }
            continue;
        }
        if help.is_some() {
            return Err(at("a sample after HELP without TYPE"));
        }
        let Some(sample) = Sample::parse(line) else {
            return Err(at("not a sample line"));
        };
        let Some((name, kind)) = family else {
            return Err(at("a sample before any TYPE"));
        };
        let suffix = sample.name.strip_prefix(name);
        let numeric = match (kind, suffix) {
            ("histogram", Some("_bucket")) => Some("le"),
            ("histogram", Some("_sum" | "_count")) => None,
            ("summary", Some("")) => Some("quantile"),
            ("summary", Some("_sum" | "_count")) => None,
            ("counter" | "gauge" | "untyped", Some("")) => None,
            _ => return Err(at("a sample outside the family of the TYPE before it")),
        };
        if let Some(label) = numeric {
            match sample.labels.iter().find(|(n, _)| *n == label) {
                Some((_, v)) if go_number(v) => {}
                _ => return Err(at(&format!("no `{label}` in Go's spelling"))),
            }
        }
        if !go_number(sample.value) {
            return Err(at("a value not in Go's spelling"));
        }
    }
    if help.is_some() {
        return Err("HELP without TYPE at the end".into());
    }
    Ok(())
}

/// `[a-zA-Z_:][a-zA-Z0-9_:]*`
fn metric_name(s: &str) -> bool {
    let mut bytes = s.bytes();
    bytes
        .next()
        .is_some_and(|b| b.is_ascii_alphabetic() || b == b'_' || b == b':')
        && bytes.all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b':')
}

/// `[a-zA-Z_][a-zA-Z0-9_]*`
fn label_name(s: &str) -> bool {
    let mut bytes = s.bytes();
    bytes
        .next()
        .is_some_and(|b| b.is_ascii_alphabetic() || b == b'_')
        && bytes.all(|b| b.is_ascii_alphanumeric() || b == b'_')
}

/// HELP text: a backslash only as `\\` or `\n`, no other escape.
fn help_text(s: &str) -> bool {
    let mut chars = s.chars();
    while let Some(c) = chars.next() {
        if c == '\\' && !matches!(chars.next(), Some('\\' | 'n')) {
            return false;
        }
    }
    true
}

/// A number as client_golang writes it (`expfmt.writeFloat`): `NaN`, `+Inf`, `-Inf`, `0`, or
/// `strconv.FormatFloat(v, 'g', -1, 64)`: no trailing zero after a point, `d[.ddd]e±XX` (two
/// exponent digits at least) exactly when the decimal exponent is below -4 or from 6 on.
pub fn go_number(s: &str) -> bool {
    if matches!(s, "NaN" | "+Inf" | "-Inf" | "0") {
        return true;
    }
    if s.parse::<f64>().is_err() {
        return false;
    }
    let unsigned = s.strip_prefix('-').unwrap_or(s);
    let (mantissa, exponent) = match unsigned.split_once('e') {
        Some((m, e)) => (m, Some(e)),
        None => (unsigned, None),
    };
    let digits = |t: &str| !t.is_empty() && t.bytes().all(|b| b.is_ascii_digit());
    let (int, frac) = mantissa.split_once('.').unwrap_or((mantissa, ""));
    if !digits(int) || (mantissa.contains('.') && (!digits(frac) || frac.ends_with('0'))) {
        return false;
    }
    match exponent {
        Some(e) => {
            let (negative, e_digits) = match (e.strip_prefix('-'), e.strip_prefix('+')) {
                (Some(d), _) => (true, d),
                (_, Some(d)) => (false, d),
                _ => return false,
            };
            if !digits(e_digits)
                || e_digits.len() < 2
                || (e_digits.len() > 2 && e_digits.starts_with('0'))
            {
                return false;
            }
            let n: i32 = e_digits.parse().unwrap_or(0);
            let n = if negative { -n } else { n };
            int.len() == 1 && int != "0" && !(-4..6).contains(&n)
        }
        None if int == "0" => {
            // 0.000d at the smallest (exponent -4); below that Go writes d.ddde-05.
            !frac.is_empty() && frac.len() - frac.trim_start_matches('0').len() <= 3
        }
        // Six integer digits at most (exponent 5); from 1e+06 Go writes the exponent form.
        None => !int.starts_with('0') && int.len() <= 6,
    }
}

/// One sample line: `name{label="value",...} value [timestamp]`.
struct Sample<'a> {
    name: &'a str,
    labels: Vec<(&'a str, &'a str)>,
    value: &'a str,
}

impl<'a> Sample<'a> {
    fn parse(line: &'a str) -> Option<Self> {
        let name_end = line.find(['{', ' '])?;
        let name = &line[..name_end];
        if !metric_name(name) {
            return None;
        }
        let mut rest = &line[name_end..];
        let mut labels = Vec::new();
        if let Some(mut s) = rest.strip_prefix('{') {
            loop {
                let (label, after) = s.split_once("=\"")?;
                if !label_name(label) || labels.iter().any(|(n, _)| *n == label) {
                    return None;
                }
                let end = closing_quote(after)?;
                labels.push((label, &after[..end]));
                s = &after[end + 1..];
                if let Some(after) = s.strip_prefix('}') {
                    rest = after;
                    break;
                }
                s = s.strip_prefix(',')?;
            }
        }
        let mut fields = rest.strip_prefix(' ')?.split(' ');
        let value = fields.next()?;
        if let Some(ts) = fields.next() {
            let ms = ts.strip_prefix('-').unwrap_or(ts);
            if ms.is_empty() || !ms.bytes().all(|b| b.is_ascii_digit()) {
                return None;
            }
        }
        if fields.next().is_some() {
            return None;
        }
        Some(Sample {
            name,
            labels,
            value,
        })
    }
}

/// Index of the quote closing a label value that starts at `s`; only `\\`, `\"` and `\n` escape.
fn closing_quote(s: &str) -> Option<usize> {
    let mut escaped = false;
    for (i, b) in s.bytes().enumerate() {
        match (escaped, b) {
            (true, b'\\' | b'"' | b'n') => escaped = false,
            (true, _) => return None,
            (false, b'\\') => escaped = true,
            (false, b'"') => return Some(i),
            (false, b'\n') => return None,
            _ => {}
        }
    }
    None
}

#[test]
fn the_grammar_takes_go_output_and_refuses_openmetrics() {
    let go = concat!(
        "# HELP rest_client_requests_total Number of HTTP requests.\n",
        "# TYPE rest_client_requests_total counter\n",
        "rest_client_requests_total{code=\"200\",host=\"a\\\"b\\\\c\",method=\"GET\"} 1.234567e+06\n",
        "# TYPE up gauge\n",
        "up 1 1700000000000\n",
        "# HELP t Time.\n",
        "# TYPE t histogram\n",
        "t_bucket{controller=\"ingress\",le=\"9.999999999999999e-06\"} 0\n",
        "t_bucket{controller=\"ingress\",le=\"60\"} 2\n",
        "t_bucket{controller=\"ingress\",le=\"+Inf\"} 2\n",
        "t_sum{controller=\"ingress\"} 42.004\n",
        "t_count{controller=\"ingress\"} 2\n",
    );
    assert_eq!(check(go), Ok(()));
    for bad in [
        go.replace("le=\"60\"", "le=\"60.0\""),
        go.replace("1.234567e+06", "1234567"),
        go.replace("1.234567e+06", "1.234567e6"),
        go.replace("42.004", "42.0040"),
        format!("{go}# EOF\n"),
        go.replace("# TYPE up gauge\n", "# TYPE up gauge\n# UNIT up seconds\n"),
        go.replace(
            "rest_client_requests_total counter",
            "rest_client_requests counter",
        ),
        go.replace("t_sum", "u_sum"),
        go.replace(",le=\"+Inf\"", ""),
        go.replace("up 1 ", "up 1  "),
    ] {
        assert!(check(&bad).is_err(), "taken:\n{bad}");
    }
    for (n, ok) in [
        ("0.0001", true),
        ("0.00001", false),
        ("1e-05", true),
        ("100000", true),
        ("1e+06", true),
        ("1e+100", true),
        ("-2.5", true),
        ("-0", false),
        ("0.0", false),
        ("60.", false),
        ("1e+5", false),
        ("1.0e+06", false),
        ("inf", false),
    ] {
        assert_eq!(go_number(n), ok, "{n}");
    }
}
