//! Logging: tracing-subscriber with upstream's `--log-level` (info|debug); `--log-format` json
//! (the default: upstream's zap keys, see [`zap`]) or text for humans.
//!
//! Text logs carry client-controlled strings (admission uids, object names, API error texts). A
//! raw newline in one of them would start a forged log line, so every field value and message is
//! escaped on the way out: control characters never reach the log verbatim (JSON escapes them by
//! itself).

mod zap;

use crate::config::{LogFormat, LogLevel};
use std::fmt;
use tracing::field::Field;
use tracing_subscriber::field::MakeExt;
use tracing_subscriber::fmt::format::{debug_fn, Writer};
use tracing_subscriber::layer::SubscriberExt;
use tracing_subscriber::util::SubscriberInitExt;
use tracing_subscriber::EnvFilter;

/// Installs the global subscriber. `RUST_LOG`, when set, overrides `--log-level` for fine filters.
pub fn init(level: LogLevel, format: LogFormat) {
    let level = level.as_str();
    let filter = EnvFilter::try_from_default_env().unwrap_or_else(|_| {
        // Our own crates at the chosen level; dependencies stay at warn unless asked for.
        EnvFilter::new(format!(
            "warn,aws_load_balancer_controller={level},albc_model={level}"
        ))
    });
    let builder = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr);
    let _ = match format {
        LogFormat::Json => builder
            .event_format(zap::ZapJson)
            .finish()
            .with(zap::SpanFields)
            .try_init()
            .is_ok(),
        // Colour only on a terminal: piped or shipped lines must not carry escape sequences
        // that log parsers and queries then have to strip.
        LogFormat::Text => builder
            .with_ansi(std::io::IsTerminal::is_terminal(&std::io::stderr()))
            .fmt_fields(debug_fn(write_field).delimited(" "))
            .try_init()
            .is_ok(),
    };
}

/// The span of one reconcile pass, as controller-runtime's reconcile logger: every line of the
/// pass carries `controller`, `object` (`{name, namespace}` in JSON), `namespace`, `name` and a
/// fresh `reconcileID`, so one pass can be followed and upstream's log queries keep working.
/// `key` is the queue key: `namespace/name`, or a bare name (GatewayClasses, explicit groups).
pub fn reconcile_span(controller: &str, key: &str) -> tracing::Span {
    let (namespace, name) = key.split_once('/').unwrap_or(("", key));
    tracing::info_span!(
        "reconcile",
        controller,
        object = key,
        namespace,
        name,
        reconcileID = %uuid::Uuid::new_v4(),
    )
}

/// Writes one text-format field: `message` as escaped text, others as `name=value`, the value
/// quoted (Rust string escapes) when it holds a control or line-separator character.
pub fn write_field(w: &mut Writer<'_>, field: &Field, value: &dyn fmt::Debug) -> fmt::Result {
    let text = format!("{value:?}");
    if field.name() == "message" {
        return write_escaped(w, &text);
    }
    write!(w, "{}=", field.name())?;
    if text.chars().any(needs_escape) {
        write!(w, "{text:?}")
    } else {
        w.write_str(&text)
    }
}

fn needs_escape(c: char) -> bool {
    c.is_control() || matches!(c, '\u{2028}' | '\u{2029}')
}

fn write_escaped(w: &mut Writer<'_>, text: &str) -> fmt::Result {
    for c in text.chars() {
        if needs_escape(c) {
            write!(w, "{}", c.escape_default())?;
        } else {
            w.write_char(c)?;
        }
    }
    Ok(())
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use std::sync::{Arc, Mutex};

    /// An in-memory log sink for formatter tests.
    #[derive(Clone, Default)]
    pub(crate) struct Buffer(pub(crate) Arc<Mutex<Vec<u8>>>);

    impl std::io::Write for Buffer {
        fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
            self.0.lock().unwrap().extend_from_slice(buf);
            Ok(buf.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }

    #[test]
    fn client_strings_with_newlines_stay_on_one_line() {
        let buffer = Buffer::default();
        let sink = buffer.clone();
        let subscriber = tracing_subscriber::fmt()
            .with_writer(move || sink.clone())
            .with_ansi(false)
            .fmt_fields(debug_fn(write_field).delimited(" "))
            .finish();
        let forged = "x\n2026-01-01T00:00:00Z  INFO aws_load_balancer_controller::controller::leader: became leader lease=l\r\u{1b}[2K";
        tracing::subscriber::with_default(subscriber, || {
            tracing::info!(uid = %forged, name = forged, "admission refused");
            tracing::warn!("object {forged} skipped");
            tracing::info!(path = "/mutate-v1-pod", plain = %"no-escape", "admission allowed");
        });
        let out = String::from_utf8(buffer.0.lock().unwrap().clone()).unwrap();
        let lines: Vec<&str> = out.lines().collect();
        assert_eq!(lines.len(), 3, "{out}");
        assert!(lines[0].contains(r#"uid="x\n2026"#), "{}", lines[0]);
        assert!(!out.contains('\u{1b}') && !out.contains('\r'), "{out:?}");
        assert!(lines[1].contains(r"object x\n2026"), "{}", lines[1]);
        // Ordinary values are written as before: unquoted.
        assert!(
            lines[2].ends_with("admission allowed path=\"/mutate-v1-pod\" plain=no-escape"),
            "{}",
            lines[2]
        );
    }
}
