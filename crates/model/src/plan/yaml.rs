//! `plan -o yaml`: plain YAML — mappings, sequences, strings, numbers, booleans, null — that
//! every YAML loader reads back as the data `-o json` prints. serde_yaml alone writes enum
//! variants as `!tags`, which standard loaders (PyYAML's `safe_load`) refuse, and leaves strings
//! such as `80:1` (a rule id) or `on` unquoted, which YAML 1.1 loaders read as the number 4801
//! and `true`; so the text is laid out here, in serde_yaml's block layout.

use serde::Serialize;
use serde_yaml::{Mapping, Value};

/// `value` as plain YAML text.
pub(super) fn to_string<T: Serialize + ?Sized>(value: &T) -> Result<String, serde_yaml::Error> {
    let value = plain(serde_yaml::to_value(value)?);
    let mut out = String::new();
    match &value {
        Value::Mapping(m) if !m.is_empty() => mapping(&mut out, m, 0, false),
        Value::Sequence(s) if !s.is_empty() => sequence(&mut out, s, 0, false),
        other => end_line(&mut out, other),
    }
    Ok(out)
}

/// `value` without YAML tags: serde_yaml makes an enum variant holding data a tagged value
/// (`listenerArn: !listenerArn 80`, a reference to the port-80 listener, known once it is
/// created; `subnets: !discover {...}`, subnets left to discovery). Each becomes the one-key map
/// `-o json` prints (`{"listenerArn": 80}`), so both formats carry the same data.
pub(super) fn plain(value: Value) -> Value {
    match value {
        Value::Tagged(tagged) => {
            let serde_yaml::value::TaggedValue { tag, value } = *tagged;
            // A tag displays as `!name`.
            let tag = tag.to_string();
            let name = tag.strip_prefix('!').unwrap_or(&tag).to_string();
            let mut map = Mapping::new();
            map.insert(Value::String(name), plain(value));
            Value::Mapping(map)
        }
        Value::Sequence(items) => Value::Sequence(items.into_iter().map(plain).collect()),
        Value::Mapping(map) => {
            Value::Mapping(map.into_iter().map(|(k, v)| (plain(k), plain(v))).collect())
        }
        other => other,
    }
}

/// Where `v` holds a YAML tag, the first one with its path (`.groups[0].stack...: !tag`): what
/// a standard loader refuses, so what `plan -o yaml` must never print.
pub fn first_tag(v: &Value) -> Option<String> {
    fn walk(v: &Value, at: &str) -> Option<String> {
        match v {
            Value::Tagged(t) => Some(format!("{at}: {}", t.tag)),
            Value::Sequence(items) => items
                .iter()
                .enumerate()
                .find_map(|(i, item)| walk(item, &format!("{at}[{i}]"))),
            Value::Mapping(m) => m.iter().find_map(|(k, item)| {
                let key = k.as_str().unwrap_or("?");
                walk(k, at).or_else(|| walk(item, &format!("{at}.{key}")))
            }),
            _ => None,
        }
    }
    walk(v, "")
}

/// The entries of `m` at `indent`; the first on the current line when `inline` (after `- `).
fn mapping(out: &mut String, m: &Mapping, indent: usize, inline: bool) {
    for (i, (k, v)) in m.iter().enumerate() {
        if i > 0 || !inline {
            push_indent(out, indent);
        }
        out.push_str(&key(k));
        out.push(':');
        match v {
            Value::Mapping(m) if !m.is_empty() => {
                out.push('\n');
                mapping(out, m, indent + 2, false);
            }
            // As serde_yaml: a sequence's `- ` at its key's indent.
            Value::Sequence(s) if !s.is_empty() => {
                out.push('\n');
                sequence(out, s, indent, false);
            }
            other => {
                out.push(' ');
                end_line(out, other);
            }
        }
    }
}

/// The items of `s` at `indent`; the first on the current line when `inline` (after `- `).
fn sequence(out: &mut String, s: &[Value], indent: usize, inline: bool) {
    for (i, item) in s.iter().enumerate() {
        if i > 0 || !inline {
            push_indent(out, indent);
        }
        out.push_str("- ");
        match item {
            Value::Mapping(m) if !m.is_empty() => mapping(out, m, indent + 2, true),
            Value::Sequence(s) if !s.is_empty() => sequence(out, s, indent + 2, true),
            other => end_line(out, other),
        }
    }
}

fn push_indent(out: &mut String, indent: usize) {
    out.push_str(&" ".repeat(indent));
}

/// Ends the line with a scalar, or an empty mapping or sequence (others are laid out in blocks).
fn end_line(out: &mut String, value: &Value) {
    out.push_str(&scalar(value));
    out.push('\n');
}

/// A scalar, or an empty mapping or sequence, as written on one line.
fn scalar(value: &Value) -> String {
    match value {
        Value::Null => "null".into(),
        Value::Bool(b) => b.to_string(),
        // `.nan`, `.inf` and `-.inf` for the floats JSON has no number for.
        Value::Number(n) => n.to_string(),
        Value::String(s) => string(s),
        Value::Sequence(_) => "[]".into(),
        Value::Mapping(_) => "{}".into(),
        Value::Tagged(_) => unreachable!("`plain` leaves no tag"),
    }
}

/// A mapping key: a plan's keys are strings (field names, tag and attribute keys).
fn key(k: &Value) -> String {
    match k {
        Value::String(s) => string(s),
        Value::Null | Value::Bool(_) | Value::Number(_) => scalar(k),
        // Never in a plan; quoted so the text stays one line and valid.
        other => double_quoted(&format!("{other:?}")),
    }
}

/// Words YAML 1.1 loaders (PyYAML) read as booleans or null, in any case.
const SPECIAL_WORDS: &[&str] = &["y", "yes", "n", "no", "true", "false", "on", "off", "null"];

/// `s` as a scalar every loader reads back as this string: plain when nothing in it could be
/// read otherwise (it starts with a letter, `/` or `_`, so no YAML 1.0–1.2 number, date, null or
/// indicator; holds only characters that mean nothing mid-scalar; is no special word), else
/// single-quoted, or double-quoted with escapes when it holds a line break or another control
/// character.
fn string(s: &str) -> String {
    let plain = s.starts_with(|c: char| c.is_ascii_alphabetic() || c == '/' || c == '_')
        && s.chars().all(plain_char)
        && !s.contains(": ")
        && !s.ends_with([' ', ':'])
        && !SPECIAL_WORDS.contains(&s.to_ascii_lowercase().as_str());
    if plain {
        s.to_string()
    } else if s.chars().any(needs_escape) {
        double_quoted(s)
    } else {
        format!("'{}'", s.replace('\'', "''"))
    }
}

/// What a plain scalar may hold past its first character: nothing that means anything there.
fn plain_char(c: char) -> bool {
    c.is_ascii_alphanumeric() || " -_./:@()+=,*".contains(c)
}

/// Characters a single-quoted scalar cannot hold as they are: control characters, and the line
/// and paragraph separators, which YAML 1.1 treats as line breaks.
fn needs_escape(c: char) -> bool {
    c.is_control() || matches!(c, '\u{2028}' | '\u{2029}' | '\u{feff}')
}

/// `s` double-quoted, with JSON's escapes (YAML's double-quoted style takes them all).
fn double_quoted(s: &str) -> String {
    let mut out = String::from("\"");
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if needs_escape(c) => out.push_str(&format!("\\u{:04x}", u32::from(c))),
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

#[cfg(test)]
#[path = "yaml_tests.rs"]
mod tests;
