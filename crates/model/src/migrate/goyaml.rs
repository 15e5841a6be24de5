//! The text of upstream's printers, so `migrate`'s files are byte for byte `lbc-migrate`'s:
//! YAML as `sigs.k8s.io/yaml` writes it (go-yaml v2: keys in its natural order, sequences
//! not indented under their key, strings plain unless they would read as something else —
//! then double-quoted — or cannot be plain — then single-quoted; lines of plain and
//! single-quoted strings folded at spaces past column 80; strings with line breaks as literal
//! blocks) and JSON as `encoding/json`'s `MarshalIndent` with four spaces (`<`, `>`, `&`, U+2028
//! and U+2029 escaped).

use std::cmp::Ordering;

use serde_json::Value;

/// go-yaml v2's preferred line width.
const BEST_WIDTH: usize = 80;

/// One object as a YAML document (no `---`; the writer puts it between documents).
pub fn to_yaml(v: &Value) -> String {
    let mut e = Emitter::default();
    match v {
        Value::Object(m) if !m.is_empty() => e.mapping(m, 0, false),
        Value::Array(a) if !a.is_empty() => e.sequence(a, 0, false),
        other => {
            e.scalar(other, 0, false);
            e.newline();
        }
    }
    e.out
}

#[derive(Default)]
struct Emitter {
    out: String,
    /// Characters on the current line.
    column: usize,
}

impl Emitter {
    fn push(&mut self, s: &str) {
        self.out.push_str(s);
        match s.rfind('\n') {
            Some(i) => self.column = s[i + 1..].chars().count(),
            None => self.column += s.chars().count(),
        }
    }

    fn newline(&mut self) {
        self.out.push('\n');
        self.column = 0;
    }

    fn indent(&mut self, n: usize) {
        self.push(&" ".repeat(n));
    }

    /// The entries at `indent`; the first on the current line when `inline` (after `- `).
    fn mapping(&mut self, m: &serde_json::Map<String, Value>, indent: usize, inline: bool) {
        let mut keys: Vec<&String> = m.keys().collect();
        keys.sort_by(|a, b| key_order(a, b));
        for (i, k) in keys.into_iter().enumerate() {
            if i > 0 || !inline {
                self.indent(indent);
            }
            self.key(k);
            self.push(":");
            match &m[k] {
                Value::Object(child) if !child.is_empty() => {
                    self.newline();
                    self.mapping(child, indent + 2, false);
                }
                // go-yaml v2 writes a mapping's sequence at the key's indent.
                Value::Array(items) if !items.is_empty() => {
                    self.newline();
                    self.sequence(items, indent, false);
                }
                other => {
                    self.push(" ");
                    self.scalar(other, indent + 2, true);
                    self.newline();
                }
            }
        }
    }

    fn sequence(&mut self, items: &[Value], indent: usize, inline: bool) {
        for (i, item) in items.iter().enumerate() {
            if i > 0 || !inline {
                self.indent(indent);
            }
            self.push("- ");
            match item {
                Value::Object(m) if !m.is_empty() => self.mapping(m, indent + 2, true),
                Value::Array(a) if !a.is_empty() => self.sequence(a, indent + 2, true),
                other => {
                    self.scalar(other, indent + 2, true);
                    self.newline();
                }
            }
        }
    }

    /// A mapping key: a simple key, never folded.
    fn key(&mut self, k: &str) {
        let text = match style(k, true) {
            Style::Plain => k.to_string(),
            Style::Single => single_quoted(k),
            Style::Double | Style::Literal => double_quoted(k),
        };
        self.push(&text);
    }

    /// A scalar value at the current column; continuation lines (folds, literal blocks) at
    /// `indent`.
    fn scalar(&mut self, v: &Value, indent: usize, breaks: bool) {
        match v {
            Value::Null => self.push("null"),
            Value::Bool(b) => self.push(if *b { "true" } else { "false" }),
            Value::Number(n) => self.push(&n.to_string()),
            Value::String(s) => self.string(s, indent, breaks),
            Value::Array(_) => self.push("[]"),
            Value::Object(_) => self.push("{}"),
        }
    }

    fn string(&mut self, s: &str, indent: usize, breaks: bool) {
        match style(s, false) {
            Style::Plain => self.folded(s, indent, breaks, false),
            Style::Single => {
                self.push("'");
                self.folded(&s.replace('\'', "''"), indent, breaks, true);
                self.push("'");
            }
            Style::Double => self.push(&double_quoted(s)),
            Style::Literal => self.literal(s, indent),
        }
    }

    /// Writes `s`, a space past the preferred width becoming a line break and `indent` (go-yaml's
    /// plain and single-quoted writers; a quoted scalar never breaks at its first or last
    /// character).
    fn folded(&mut self, s: &str, indent: usize, breaks: bool, quoted: bool) {
        let chars: Vec<char> = s.chars().collect();
        let mut spaces = false;
        for (i, &c) in chars.iter().enumerate() {
            if c == ' ' {
                let next_space = chars.get(i + 1) == Some(&' ');
                let edge = quoted && (i == 0 || i + 1 == chars.len());
                if breaks && !spaces && self.column > BEST_WIDTH && !next_space && !edge {
                    self.newline();
                    self.indent(indent);
                } else {
                    self.push(" ");
                }
                spaces = true;
            } else {
                let mut buf = [0u8; 4];
                self.push(c.encode_utf8(&mut buf));
                spaces = false;
            }
        }
    }

    /// A literal block (`|`, `|-`, `|+`), its lines at `indent`.
    fn literal(&mut self, s: &str, indent: usize) {
        self.push("|");
        if s.starts_with(' ') || s.starts_with('\n') {
            self.push("2");
        }
        let trailing = s.len() - s.trim_end_matches('\n').len();
        match trailing {
            0 => self.push("-"),
            1 => {}
            _ => self.push("+"),
        }
        self.newline();
        let body = s.strip_suffix('\n').unwrap_or(s);
        for (i, line) in body.split('\n').enumerate() {
            if i > 0 {
                self.newline();
            }
            if !line.is_empty() {
                self.indent(indent);
                self.push(line);
            }
        }
        // The caller ends the line.
        if trailing > 1 {
            for _ in 1..trailing {
                self.newline();
            }
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Style {
    Plain,
    Single,
    Double,
    Literal,
}

/// The style go-yaml v2 writes a string in.
fn style(s: &str, simple_key: bool) -> Style {
    if s.contains('\n') {
        return if simple_key || !block_allowed(s) {
            Style::Double
        } else {
            Style::Literal
        };
    }
    if resolves_to_other_than_string(s) || is_base60_float(s) {
        return Style::Double;
    }
    let a = analyze(s);
    if s.is_empty() && simple_key {
        return if a.single_allowed {
            Style::Single
        } else {
            Style::Double
        };
    }
    if a.block_plain_allowed {
        Style::Plain
    } else if a.single_allowed {
        Style::Single
    } else {
        Style::Double
    }
}

/// What go-yaml's scalar analysis allows.
struct Analysis {
    block_plain_allowed: bool,
    single_allowed: bool,
    block_allowed: bool,
}

fn is_printable(c: char) -> bool {
    matches!(c, '\t' | '\n' | '\r' | ' '..='~' | '\u{85}')
        || (('\u{a0}'..='\u{d7ff}').contains(&c))
        || (('\u{e000}'..='\u{fffd}').contains(&c) && c != '\u{feff}')
        || (('\u{10000}'..='\u{10ffff}').contains(&c))
}

fn analyze(s: &str) -> Analysis {
    if s.is_empty() {
        return Analysis {
            block_plain_allowed: true,
            single_allowed: true,
            block_allowed: false,
        };
    }
    let chars: Vec<char> = s.chars().collect();
    let mut block_indicators = s.starts_with("---") || s.starts_with("...");
    let mut special = false;
    let mut line_breaks = false;
    let (mut leading_space, mut leading_break, mut trailing_space, mut trailing_break) =
        (false, false, false, false);
    let (mut break_space, mut space_break) = (false, false);
    let (mut previous_space, mut previous_break) = (false, false);
    let mut preceded_by_ws = true;
    let blankz = |i: usize| -> bool {
        match chars.get(i) {
            None => true,
            Some(c) => matches!(
                c,
                ' ' | '\t' | '\r' | '\n' | '\u{85}' | '\u{2028}' | '\u{2029}'
            ),
        }
    };
    let is_break = |c: char| matches!(c, '\r' | '\n' | '\u{85}' | '\u{2028}' | '\u{2029}');
    for (i, &c) in chars.iter().enumerate() {
        let followed_by_ws = blankz(i + 1);
        if i == 0 {
            match c {
                '#' | ',' | '[' | ']' | '{' | '}' | '&' | '*' | '!' | '|' | '>' | '\'' | '"'
                | '%' | '@' | '`' => block_indicators = true,
                '?' | ':' if followed_by_ws => block_indicators = true,
                '-' if followed_by_ws => block_indicators = true,
                _ => {}
            }
        } else {
            match c {
                ':' if followed_by_ws => block_indicators = true,
                '#' if preceded_by_ws => block_indicators = true,
                _ => {}
            }
        }
        if !is_printable(c) {
            special = true;
        }
        if is_break(c) {
            line_breaks = true;
        }
        if c == ' ' {
            if i == 0 {
                leading_space = true;
            }
            if i + 1 == chars.len() {
                trailing_space = true;
            }
            if previous_break {
                break_space = true;
            }
            previous_space = true;
            previous_break = false;
        } else if is_break(c) {
            if i == 0 {
                leading_break = true;
            }
            if i + 1 == chars.len() {
                trailing_break = true;
            }
            if previous_space {
                space_break = true;
            }
            previous_space = false;
            previous_break = true;
        } else {
            previous_space = false;
            previous_break = false;
        }
        preceded_by_ws = blankz(i);
    }
    let mut plain = true;
    let mut single = true;
    let mut block = true;
    if leading_space || leading_break || trailing_space || trailing_break {
        plain = false;
    }
    if trailing_space {
        block = false;
    }
    if break_space {
        plain = false;
        single = false;
    }
    if space_break || special {
        plain = false;
        single = false;
        block = false;
    }
    if line_breaks || block_indicators {
        plain = false;
    }
    Analysis {
        block_plain_allowed: plain,
        single_allowed: single,
        block_allowed: block,
    }
}

fn block_allowed(s: &str) -> bool {
    analyze(s).block_allowed
}

/// Whether go-yaml's resolver reads the plain text as a non-string (null, bool, int, float,
/// timestamp): then it must be quoted. (Its merge key `<<` is only looked up behind a first
/// character of its table, which `<` is not, so `<<` stays a string.)
fn resolves_to_other_than_string(s: &str) -> bool {
    const WORDS: &[&str] = &[
        "y", "Y", "yes", "Yes", "YES", "true", "True", "TRUE", "on", "On", "ON", "n", "N", "no",
        "No", "NO", "false", "False", "FALSE", "off", "Off", "OFF", "", "~", "null", "Null",
        "NULL", ".nan", ".NaN", ".NAN", ".inf", ".Inf", ".INF", "+.inf", "+.Inf", "+.INF", "-.inf",
        "-.Inf", "-.INF",
    ];
    if WORDS.contains(&s) {
        return true;
    }
    let Some(first) = s.chars().next() else {
        return true;
    };
    match first {
        '.' => is_float(s),
        '+' | '-' | '0'..='9' => {
            if is_timestamp(s) {
                return true;
            }
            let plain = s.replace('_', "");
            is_go_int(&plain) || is_float(&plain) || is_binary(&plain)
        }
        _ => false,
    }
}

/// `strconv.ParseInt(s, 0, 64)` / `ParseUint` accepting: decimal, `0x`, `0o`, `0b`, leading-0
/// octal, with a sign.
fn is_go_int(s: &str) -> bool {
    let digits = s.strip_prefix(['+', '-']).unwrap_or(s);
    if digits.is_empty() {
        return false;
    }
    let lower = digits.to_ascii_lowercase();
    if let Some(h) = lower.strip_prefix("0x") {
        return !h.is_empty() && h.chars().all(|c| c.is_ascii_hexdigit());
    }
    if let Some(o) = lower.strip_prefix("0o") {
        return !o.is_empty() && o.chars().all(|c| ('0'..='7').contains(&c));
    }
    if let Some(b) = lower.strip_prefix("0b") {
        return !b.is_empty() && b.chars().all(|c| c == '0' || c == '1');
    }
    if digits.len() > 1 && digits.starts_with('0') {
        return digits.chars().all(|c| ('0'..='7').contains(&c));
    }
    digits.chars().all(|c| c.is_ascii_digit())
}

/// go-yaml's float syntax: `[-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)?`.
fn is_float(s: &str) -> bool {
    let b = s.as_bytes();
    let mut i = 0;
    if i < b.len() && (b[i] == b'+' || b[i] == b'-') {
        i += 1;
    }
    let digits = |i: &mut usize| {
        let start = *i;
        while *i < b.len() && b[*i].is_ascii_digit() {
            *i += 1;
        }
        *i - start
    };
    if i < b.len() && b[i] == b'.' {
        i += 1;
        if digits(&mut i) == 0 {
            return false;
        }
    } else {
        if digits(&mut i) == 0 {
            return false;
        }
        if i < b.len() && b[i] == b'.' {
            i += 1;
            digits(&mut i);
        }
    }
    if i < b.len() && (b[i] == b'e' || b[i] == b'E') {
        i += 1;
        if i < b.len() && (b[i] == b'+' || b[i] == b'-') {
            i += 1;
        }
        if digits(&mut i) == 0 {
            return false;
        }
    }
    i == b.len()
}

fn is_binary(s: &str) -> bool {
    let rest = s.strip_prefix('-').unwrap_or(s);
    rest.strip_prefix("0b")
        .is_some_and(|b| !b.is_empty() && b.chars().all(|c| c == '0' || c == '1'))
}

/// go-yaml's timestamps: `2006-1-2`, optionally with `T`/`t`/space and a time.
fn is_timestamp(s: &str) -> bool {
    let (date, time) = match s.find(['T', 't', ' ']) {
        Some(i) => (&s[..i], Some(&s[i + 1..])),
        None => (s, None),
    };
    let parts: Vec<&str> = date.split('-').collect();
    let date_ok = parts.len() == 3
        && parts[0].len() == 4
        && parts
            .iter()
            .all(|p| !p.is_empty() && p.len() <= 4 && p.bytes().all(|b| b.is_ascii_digit()));
    match time {
        None => date_ok,
        Some(t) => {
            date_ok
                && t.split(':').count() >= 3
                && t.chars().next().is_some_and(|c| c.is_ascii_digit())
        }
    }
}

/// `^[-+]?[0-9][0-9_]*(?::[0-5]?[0-9])+(?:\.[0-9_]*)?$`: YAML 1.1 sexagesimal numbers.
fn is_base60_float(s: &str) -> bool {
    let body = s.strip_prefix(['+', '-']).unwrap_or(s);
    let (main, frac) = match body.find('.') {
        Some(i) => (&body[..i], Some(&body[i + 1..])),
        None => (body, None),
    };
    if frac.is_some_and(|f| !f.chars().all(|c| c.is_ascii_digit() || c == '_')) {
        return false;
    }
    let mut groups = main.split(':');
    let Some(head) = groups.next() else {
        return false;
    };
    let head_ok = head.chars().next().is_some_and(|c| c.is_ascii_digit())
        && head.chars().all(|c| c.is_ascii_digit() || c == '_');
    let rest: Vec<&str> = groups.collect();
    head_ok
        && !rest.is_empty()
        && rest.iter().all(|g| {
            let b = g.as_bytes();
            match b.len() {
                1 => b[0].is_ascii_digit(),
                2 => (b'0'..=b'5').contains(&b[0]) && b[1].is_ascii_digit(),
                _ => false,
            }
        })
}

fn single_quoted(s: &str) -> String {
    format!("'{}'", s.replace('\'', "''"))
}

/// go-yaml's double-quoted style with its escapes.
fn double_quoted(s: &str) -> String {
    let mut out = String::from("\"");
    for c in s.chars() {
        match c {
            '\0' => out.push_str("\\0"),
            '\u{7}' => out.push_str("\\a"),
            '\u{8}' => out.push_str("\\b"),
            '\t' => out.push_str("\\t"),
            '\n' => out.push_str("\\n"),
            '\u{b}' => out.push_str("\\v"),
            '\u{c}' => out.push_str("\\f"),
            '\r' => out.push_str("\\r"),
            '\u{1b}' => out.push_str("\\e"),
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\u{85}' => out.push_str("\\N"),
            '\u{a0}' => out.push_str("\\_"),
            '\u{2028}' => out.push_str("\\L"),
            '\u{2029}' => out.push_str("\\P"),
            c if !is_printable(c) || c == '\u{feff}' => {
                let v = u32::from(c);
                if v <= 0xff {
                    out.push_str(&format!("\\x{v:02X}"));
                } else if v <= 0xffff {
                    out.push_str(&format!("\\u{v:04X}"));
                } else {
                    out.push_str(&format!("\\U{v:08X}"));
                }
            }
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

/// go-yaml v2's key order: letters after other characters, digit runs compared as numbers.
pub fn key_order(a: &str, b: &str) -> Ordering {
    let ar: Vec<char> = a.chars().collect();
    let br: Vec<char> = b.chars().collect();
    let mut i = 0;
    while i < ar.len() && i < br.len() {
        if ar[i] == br[i] {
            i += 1;
            continue;
        }
        let al = ar[i].is_alphabetic();
        let bl = br[i].is_alphabetic();
        if al && bl {
            return ar[i].cmp(&br[i]);
        }
        if al || bl {
            return if bl {
                Ordering::Less
            } else {
                Ordering::Greater
            };
        }
        let (mut an, mut bn) = (0i64, 0i64);
        if ar[i] == '0' || br[i] == '0' {
            let mut j = i;
            while j > 0 && ar[j - 1].is_ascii_digit() {
                if ar[j - 1] != '0' {
                    an = 1;
                    bn = 1;
                    break;
                }
                j -= 1;
            }
        }
        let mut ai = i;
        while ai < ar.len() && ar[ai].is_ascii_digit() {
            an = an
                .saturating_mul(10)
                .saturating_add(i64::from(ar[ai] as u8 - b'0'));
            ai += 1;
        }
        let mut bi = i;
        while bi < br.len() && br[bi].is_ascii_digit() {
            bn = bn
                .saturating_mul(10)
                .saturating_add(i64::from(br[bi] as u8 - b'0'));
            bi += 1;
        }
        if an != bn {
            return an.cmp(&bn);
        }
        if ai != bi {
            return ai.cmp(&bi);
        }
        return ar[i].cmp(&br[i]);
    }
    ar.len().cmp(&br.len())
}

/// One object as `encoding/json`'s `MarshalIndent(v, "", "    ")` plus the printer's newline.
pub fn to_json(v: &Value) -> String {
    let mut out = String::new();
    json_value(&mut out, v, 0);
    out.push('\n');
    out
}

fn json_value(out: &mut String, v: &Value, depth: usize) {
    let pad = |out: &mut String, d: usize| out.push_str(&"    ".repeat(d));
    match v {
        Value::Null => out.push_str("null"),
        Value::Bool(b) => out.push_str(if *b { "true" } else { "false" }),
        Value::Number(n) => out.push_str(&n.to_string()),
        Value::String(s) => json_string(out, s),
        Value::Array(items) if items.is_empty() => out.push_str("[]"),
        Value::Array(items) => {
            out.push_str("[\n");
            for (i, item) in items.iter().enumerate() {
                pad(out, depth + 1);
                json_value(out, item, depth + 1);
                if i + 1 < items.len() {
                    out.push(',');
                }
                out.push('\n');
            }
            pad(out, depth);
            out.push(']');
        }
        Value::Object(m) if m.is_empty() => out.push_str("{}"),
        Value::Object(m) => {
            out.push_str("{\n");
            // Go sorts map keys byte-wise.
            let mut keys: Vec<&String> = m.keys().collect();
            keys.sort();
            for (i, k) in keys.iter().enumerate() {
                pad(out, depth + 1);
                json_string(out, k);
                out.push_str(": ");
                json_value(out, &m[*k], depth + 1);
                if i + 1 < keys.len() {
                    out.push(',');
                }
                out.push('\n');
            }
            pad(out, depth);
            out.push('}');
        }
    }
}

/// A string with `encoding/json`'s escapes (HTML-safe, as `Marshal` writes it).
fn json_string(out: &mut String, s: &str) {
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            '<' | '>' | '&' | '\u{2028}' | '\u{2029}' => {
                out.push_str(&format!("\\u{:04x}", u32::from(c)))
            }
            c if u32::from(c) < 0x20 => out.push_str(&format!("\\u{:04x}", u32::from(c))),
            c => out.push(c),
        }
    }
    out.push('"');
}

#[cfg(test)]
#[path = "goyaml_tests.rs"]
mod tests;
