//! Prometheus text format 0.0.4 as upstream serves it, converted from prometheus-client's
//! OpenMetrics: counters under their `_total` names, no `# UNIT` or `# EOF`, and every number in
//! Go's `strconv.FormatFloat(v, 'g', -1, 64)` spelling (`le="60"`, `1e+06`), because Prometheus 2
//! stores `le` and `quantile` exactly as scraped and dashboards select buckets by that string.
//!
//! Std-only on purpose: the converter reads text, so it holds for any registry or collector.

/// Content type of [`openmetrics_to_text`]'s output, as client_golang's `expfmt.FmtText`.
pub const TEXT_CONTENT_TYPE: &str = "text/plain; version=0.0.4; charset=utf-8";

/// Content type of prometheus-client's own encoding.
pub const OPENMETRICS_CONTENT_TYPE: &str =
    "application/openmetrics-text; version=1.0.0; charset=utf-8";

/// Whether a scrape with this `Accept` header gets OpenMetrics: only a client that asks for it and
/// does not take `text/plain`. Prometheus (2 and 3) asks for OpenMetrics first but takes
/// `text/plain` too, and upstream (controller-runtime's promhttp handler, OpenMetrics not enabled)
/// answers it with text 0.0.4: answering OpenMetrics would store `le="60.0"` where upstream's
/// series have `le="60"`.
pub fn wants_openmetrics(accept: &str) -> bool {
    let mut openmetrics = false;
    for range in accept.split(',') {
        let mut parts = range.split(';');
        let media = parts.next().unwrap_or("").trim();
        let q = parts
            .filter_map(|p| {
                let (k, v) = p.split_once('=')?;
                k.trim()
                    .eq_ignore_ascii_case("q")
                    .then(|| v.trim().parse::<f64>().ok())?
            })
            .next()
            .unwrap_or(1.0);
        // `q=0` means "not acceptable"; a q that is no number counts as the default 1.
        if q.is_nan() || q <= 0.0 {
            continue;
        }
        if media.eq_ignore_ascii_case("text/plain") {
            return false;
        }
        if media.eq_ignore_ascii_case("application/openmetrics-text") {
            openmetrics = true;
        }
    }
    openmetrics
}

/// `v` as client_golang's text encoder writes a sample value, an `le` or a `quantile`
/// (`expfmt.writeFloat`): `NaN`, `+Inf`, `-Inf`, `0` for both zeros, else
/// `strconv.FormatFloat(v, 'g', -1, 64)`. That is the shortest digits that read back as `v`,
/// in `%e` form (`d.ddde±XX`, at least two exponent digits) when the decimal exponent is below
/// -4 or at least 6 (Go's `eprec = 6` for shortest), plain decimal otherwise, never a trailing
/// `.0`.
pub fn go_float(v: f64) -> String {
    if v.is_nan() {
        return "NaN".into();
    }
    if v.is_infinite() {
        return if v > 0.0 { "+Inf" } else { "-Inf" }.into();
    }
    if v == 0.0 {
        return "0".into();
    }
    // Rust's `{:e}` without a precision writes the shortest round-trip digits, as Go's
    // shortest mode picks them: `d[.ddd]e<exp>`.
    let sci = format!("{:e}", v.abs());
    let (mantissa, exp) = sci.split_once('e').expect("LowerExp writes an exponent");
    let exp: i32 = exp.parse().expect("LowerExp's exponent is an integer");
    let digits: String = mantissa.chars().filter(|c| *c != '.').collect();
    let mut out = String::with_capacity(digits.len() + 8);
    if v < 0.0 {
        out.push('-');
    }
    if !(-4..6).contains(&exp) {
        out.push_str(&digits[..1]);
        if digits.len() > 1 {
            out.push('.');
            out.push_str(&digits[1..]);
        }
        out.push('e');
        out.push(if exp < 0 { '-' } else { '+' });
        let e = exp.unsigned_abs();
        if e < 10 {
            out.push('0');
        }
        out.push_str(&e.to_string());
    } else if exp < 0 {
        out.push_str("0.");
        for _ in 1..-exp {
            out.push('0');
        }
        out.push_str(&digits);
    } else {
        let int_len = exp as usize + 1;
        if digits.len() <= int_len {
            out.push_str(&digits);
            for _ in digits.len()..int_len {
                out.push('0');
            }
        } else {
            out.push_str(&digits[..int_len]);
            out.push('.');
            out.push_str(&digits[int_len..]);
        }
    }
    out
}

/// A number as OpenMetrics writes it (`60.0`, `1e-8`, `+Inf`, `inf`, `NaN`).
fn parse_float(s: &str) -> Option<f64> {
    match s {
        "+Inf" | "Inf" => Some(f64::INFINITY),
        "-Inf" => Some(f64::NEG_INFINITY),
        _ => s.parse().ok(),
    }
}

/// The metric family being converted: its header is held back until its first sample, so a
/// family without samples is left out, as client_golang leaves out a vector without children.
#[derive(Default)]
struct Family {
    /// The OpenMetrics family name (`# TYPE` / `# HELP`), without `_total` for counters.
    name: String,
    help: Option<String>,
    /// The OpenMetrics type (`counter`, `gauge`, `histogram`, `info`, `unknown`, ...).
    kind: String,
    written: bool,
}

impl Family {
    /// Writes `# HELP` and `# TYPE` under the names and types client_golang gives the family.
    fn write_header(&mut self, out: &mut String) {
        // No header before the first `# TYPE`/`# HELP` (prometheus-client always writes them).
        if self.written || self.name.is_empty() {
            return;
        }
        self.written = true;
        let (suffix, kind) = match self.kind.as_str() {
            // client_golang's counter family is named with `_total`, as its samples.
            "counter" => ("_total", "counter"),
            // An OpenMetrics info `foo` is the gauge `foo_info` (value 1) in text 0.0.4.
            "info" => ("_info", "gauge"),
            "gauge" => ("", "gauge"),
            "histogram" => ("", "histogram"),
            "summary" => ("", "summary"),
            _ => ("", "untyped"),
        };
        if let Some(help) = &self.help {
            out.push_str(&format!("# HELP {}{suffix} {help}\n", self.name));
        }
        out.push_str(&format!("# TYPE {}{suffix} {kind}\n", self.name));
    }

    /// The label, if any, whose value is a number Go writes last (`le` of a bucket, `quantile`
    /// of a summary sample).
    fn numeric_label(&self, sample: &str) -> Option<&'static str> {
        let rest = sample.strip_prefix(self.name.as_str())?;
        match (self.kind.as_str(), rest) {
            ("histogram", "_bucket") => Some("le"),
            ("summary", "") => Some("quantile"),
            _ => None,
        }
    }

    /// OpenMetrics' `_created` series, which client_golang's text format does not have.
    fn is_created(&self, sample: &str) -> bool {
        matches!(self.kind.as_str(), "counter" | "histogram" | "summary")
            && sample.strip_prefix(self.name.as_str()) == Some("_created")
    }
}

/// Converts prometheus-client's OpenMetrics exposition to Prometheus text 0.0.4 as client_golang
/// writes it. `# HELP` text is passed through (prometheus-client writes it unescaped); label
/// values keep their escaping (the same `\\`, `\"`, `\n` in both formats); exemplars are dropped;
/// a sample timestamp (seconds in OpenMetrics) becomes milliseconds. Label order is kept, except
/// that `le`/`quantile` goes last, where Go puts it.
pub fn openmetrics_to_text(om: &str) -> String {
    let mut out = String::with_capacity(om.len());
    let mut family = Family::default();
    for line in om.lines() {
        if let Some(comment) = line.strip_prefix('#') {
            let comment = comment.trim_start();
            let (keyword, rest) = comment.split_once(' ').unwrap_or((comment, ""));
            let (name, rest) = rest.split_once(' ').unwrap_or((rest, ""));
            if !matches!(keyword, "HELP" | "TYPE") {
                // `# UNIT`, `# EOF` and other comments have no place in upstream's text.
                continue;
            }
            if name != family.name {
                family = Family {
                    name: name.to_string(),
                    kind: "unknown".into(),
                    ..Family::default()
                };
            }
            if keyword == "HELP" {
                // prometheus-client ends every help text with a '.' of its own; the texts are
                // registered as upstream writes them (some with their own full stop).
                family.help = Some(rest.strip_suffix('.').unwrap_or(rest).to_string());
            } else {
                family.kind = rest.trim().to_string();
            }
            continue;
        }
        if line.is_empty() {
            continue;
        }
        let Some(sample) = Sample::parse(line) else {
            // Not something prometheus-client writes; passed on rather than lost.
            out.push_str(line);
            out.push('\n');
            continue;
        };
        if family.is_created(sample.name) {
            continue;
        }
        family.write_header(&mut out);
        sample.write(family.numeric_label(sample.name), &mut out);
    }
    out
}

/// One OpenMetrics sample line, split (exemplar left out).
struct Sample<'a> {
    name: &'a str,
    /// `(name, value as written, still escaped)`.
    labels: Vec<(&'a str, &'a str)>,
    value: &'a str,
    timestamp: Option<&'a str>,
}

impl<'a> Sample<'a> {
    fn parse(line: &'a str) -> Option<Self> {
        let name_end = line.find(['{', ' '])?;
        let name = &line[..name_end];
        let mut labels = Vec::new();
        let mut rest = &line[name_end..];
        if let Some(inner) = rest.strip_prefix('{') {
            let mut s = inner;
            loop {
                s = s.trim_start_matches([',', ' ']);
                if let Some(after) = s.strip_prefix('}') {
                    rest = after;
                    break;
                }
                let (label, after) = s.split_once("=\"")?;
                let end = closing_quote(after)?;
                labels.push((label.trim(), &after[..end]));
                s = &after[end + 1..];
            }
        }
        // An exemplar follows ` # `, which neither a value nor a timestamp contains.
        let rest = rest.split(" # ").next().unwrap_or("");
        let mut fields = rest.split_whitespace();
        let value = fields.next()?;
        let timestamp = fields.next();
        Some(Sample {
            name,
            labels,
            value,
            timestamp,
        })
    }

    fn write(&self, numeric_label: Option<&str>, out: &mut String) {
        out.push_str(self.name);
        let mut last = None;
        let mut first = true;
        for (name, value) in &self.labels {
            if Some(*name) == numeric_label {
                last = Some((*name, *value));
                continue;
            }
            out.push(if first { '{' } else { ',' });
            first = false;
            out.push_str(&format!("{name}=\"{value}\""));
        }
        if let Some((name, value)) = last {
            let value = parse_float(value).map_or_else(|| value.to_string(), go_float);
            out.push(if first { '{' } else { ',' });
            first = false;
            out.push_str(&format!("{name}=\"{value}\""));
        }
        if !first {
            out.push('}');
        }
        out.push(' ');
        match parse_float(self.value) {
            Some(v) => out.push_str(&go_float(v)),
            None => out.push_str(self.value),
        }
        if let Some(ts) = self.timestamp.and_then(parse_float) {
            out.push_str(&format!(" {}", (ts * 1000.0).round() as i64));
        }
        out.push('\n');
    }
}

/// Index of the quote that closes a label value starting at `s`, skipping escaped characters.
fn closing_quote(s: &str) -> Option<usize> {
    let mut escaped = false;
    for (i, b) in s.bytes().enumerate() {
        match (escaped, b) {
            (true, _) => escaped = false,
            (false, b'\\') => escaped = true,
            (false, b'"') => return Some(i),
            _ => {}
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_are_spelled_as_go_strconv_g_shortest() {
        for (v, go) in [
            (60.0, "60"),
            (0.005, "0.005"),
            (2.5, "2.5"),
            (1e6, "1e+06"),
            (123456789.0, "1.23456789e+08"),
            (0.00001, "1e-05"),
            (0.0001, "0.0001"),
            (100000.0, "100000"),
            (123456.0, "123456"),
            (1234567.0, "1.234567e+06"),
            (f64::INFINITY, "+Inf"),
            (f64::NEG_INFINITY, "-Inf"),
            (f64::NAN, "NaN"),
            (0.0, "0"),
            (-0.0, "0"),
            (1.0, "1"),
            (-1.0, "-1"),
            (-2.5, "-2.5"),
            (10.0, "10"),
            (600.0, "600"),
            (1000.0, "1000"),
            (1e-8, "1e-08"),
            (1e21, "1e+21"),
            (1e100, "1e+100"),
            (1e-100, "1e-100"),
            (0.1, "0.1"),
            (0.30000000000000004, "0.30000000000000004"),
            (1.5e300, "1.5e+300"),
            (5e-324, "5e-324"),
            (f64::MAX, "1.7976931348623157e+308"),
            // client_golang's ExponentialBuckets(10e-9, 10, 12): start times ten, repeatedly.
            (10e-9 * 10.0 * 10.0 * 10.0, "9.999999999999999e-06"),
            (12345.678, "12345.678"),
            (0.000123, "0.000123"),
        ] {
            assert_eq!(go_float(v), go, "{v:?}");
        }
    }

    #[test]
    fn go_numbers_read_back_exactly() {
        // A spread of bit patterns (a fixed LCG), each finite value printed and parsed again.
        let mut x: u64 = 0x2545_f491_4f6c_dd1d;
        for _ in 0..20_000 {
            x = x
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            let v = f64::from_bits(x);
            if !v.is_finite() {
                continue;
            }
            let s = go_float(v);
            assert_eq!(s.parse::<f64>().unwrap(), v, "{s}");
            assert!(!s.contains(".0e") && !s.ends_with(".0"), "{s}");
        }
    }

    #[test]
    fn accept_header_picks_openmetrics_only_without_text() {
        for (accept, om) in [
            ("", false),
            ("*/*", false),
            ("text/plain", false),
            ("application/openmetrics-text", true),
            ("application/openmetrics-text; version=1.0.0; charset=utf-8", true),
            ("Application/OpenMetrics-Text;version=0.0.1", true),
            ("application/openmetrics-text;version=1.0.0,*/*;q=0.1", true),
            // Prometheus 2's scrape header: upstream answers it with text 0.0.4.
            ("application/openmetrics-text;version=1.0.0,application/openmetrics-text;version=0.0.1;q=0.75,text/plain;version=0.0.4;q=0.5,*/*;q=0.1", false),
            // Prometheus 3's default scrape protocols.
            ("application/openmetrics-text;version=1.0.0;escaping=allow-utf-8;q=0.5,application/openmetrics-text;version=0.0.1;q=0.4,text/plain;version=1.0.0;escaping=allow-utf-8;q=0.3,text/plain;version=0.0.4;q=0.2,*/*;q=0.1", false),
            ("application/openmetrics-text;q=0, text/plain", false),
            ("text/plain;q=0, application/openmetrics-text", true),
        ] {
            assert_eq!(wants_openmetrics(accept), om, "{accept}");
        }
    }

    #[test]
    fn openmetrics_becomes_text_0_0_4() {
        let om = concat!(
            "# HELP reqs Requests.\n",
            "# TYPE reqs counter\n",
            "reqs_total{code=\"200\"} 1000000 # {trace_id=\"x\"} 1.0 1.5\n",
            "reqs_created{code=\"200\"} 1.7e9\n",
            "# HELP temp Temperature, own stop..\n",
            "# TYPE temp gauge\n",
            "# UNIT temp celsius\n",
            "temp -2.50\n",
            "# HELP lat Latency.\n",
            "# TYPE lat histogram\n",
            "lat_sum{path=\"/a\\\"b\"} 0.0\n",
            "lat_count{path=\"/a\\\"b\"} 3\n",
            "lat_bucket{le=\"0.005\",path=\"/a\\\"b\"} 1\n",
            "lat_bucket{le=\"60.0\",path=\"/a\\\"b\"} 2\n",
            "lat_bucket{le=\"1e-8\",path=\"/a\\\"b\"} 0\n",
            "lat_bucket{le=\"+Inf\",path=\"/a\\\"b\"} 3\n",
            "# HELP empty Never set.\n",
            "# TYPE empty gauge\n",
            "# HELP build Build.\n",
            "# TYPE build info\n",
            "build_info{version=\"1.0\"} 1\n",
            "# TYPE odd unknown\n",
            "odd 7 1700000000.5\n",
            "# EOF\n",
        );
        let want = concat!(
            "# HELP reqs_total Requests\n",
            "# TYPE reqs_total counter\n",
            "reqs_total{code=\"200\"} 1e+06\n",
            "# HELP temp Temperature, own stop.\n",
            "# TYPE temp gauge\n",
            "temp -2.5\n",
            "# HELP lat Latency\n",
            "# TYPE lat histogram\n",
            "lat_sum{path=\"/a\\\"b\"} 0\n",
            "lat_count{path=\"/a\\\"b\"} 3\n",
            "lat_bucket{path=\"/a\\\"b\",le=\"0.005\"} 1\n",
            "lat_bucket{path=\"/a\\\"b\",le=\"60\"} 2\n",
            "lat_bucket{path=\"/a\\\"b\",le=\"1e-08\"} 0\n",
            "lat_bucket{path=\"/a\\\"b\",le=\"+Inf\"} 3\n",
            "# HELP build_info Build\n",
            "# TYPE build_info gauge\n",
            "build_info{version=\"1.0\"} 1\n",
            "# TYPE odd untyped\n",
            "odd 7 1700000000500\n",
        );
        assert_eq!(openmetrics_to_text(om), want);
    }

    #[test]
    fn a_label_value_may_hold_braces_quotes_and_hashes() {
        let om = concat!(
            "# TYPE c counter\n",
            "c_total{a=\"} # {\\\"x\\\\\",b=\"\"} 2.0\n",
        );
        let want = concat!(
            "# TYPE c_total counter\n",
            "c_total{a=\"} # {\\\"x\\\\\",b=\"\"} 2\n",
        );
        assert_eq!(openmetrics_to_text(om), want);
    }
}
