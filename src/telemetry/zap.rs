//! Upstream's JSON log line: zap's production encoder as controller-runtime sets it up —
//! `level` (lower-case), `ts` (RFC 3339, seconds), `logger`, `msg`, then the fields of the
//! enclosing spans (outermost first) and of the event — so log parsers, CloudWatch Logs Insights
//! queries and alerts written for upstream keep matching after the switch.

use std::fmt;

use serde_json::Value;
use tracing::field::{Field, Visit};
use tracing::span::{Attributes, Id, Record};
use tracing::{Event, Level, Subscriber};
use tracing_subscriber::fmt::format::Writer;
use tracing_subscriber::fmt::{FmtContext, FormatEvent, FormatFields};
use tracing_subscriber::layer::{Context, Layer};
use tracing_subscriber::registry::LookupSpan;

/// The crate whose module path is left out of `logger` (upstream's loggers are named by part,
/// not by Go package).
const OWN_CRATE: &str = "aws_load_balancer_controller";

/// Fields in the order they were recorded; a later value for a name replaces the earlier one in
/// place (zap would write the key twice; JSON readers keep the last anyway).
#[derive(Default, Clone)]
struct Fields(Vec<(&'static str, Value)>);

impl Fields {
    fn set(&mut self, name: &'static str, value: Value) {
        // controller-runtime logs the object as `klog.KRef`: `{"name": …, "namespace": …}`.
        let value = match (name, value) {
            ("object", Value::String(key)) => kref(&key),
            (_, value) => value,
        };
        match self.0.iter_mut().find(|(n, _)| *n == name) {
            Some(slot) => slot.1 = value,
            None => self.0.push((name, value)),
        }
    }

    fn extend(&mut self, other: &Fields) {
        for (name, value) in &other.0 {
            self.set(name, value.clone());
        }
    }
}

/// `ns/name` as klog's object reference; a cluster-scoped key (no `/`) has a name only.
fn kref(key: &str) -> Value {
    match key.split_once('/') {
        Some((namespace, name)) => serde_json::json!({"name": name, "namespace": namespace}),
        None => serde_json::json!({"name": key}),
    }
}

impl Visit for Fields {
    fn record_str(&mut self, field: &Field, value: &str) {
        self.set(field.name(), Value::from(value));
    }
    fn record_bool(&mut self, field: &Field, value: bool) {
        self.set(field.name(), Value::from(value));
    }
    fn record_i64(&mut self, field: &Field, value: i64) {
        self.set(field.name(), Value::from(value));
    }
    fn record_u64(&mut self, field: &Field, value: u64) {
        self.set(field.name(), Value::from(value));
    }
    fn record_f64(&mut self, field: &Field, value: f64) {
        self.set(field.name(), Value::from(value));
    }
    fn record_error(&mut self, field: &Field, value: &(dyn std::error::Error + 'static)) {
        // The message alone, as upstream's concise logger logs errors (no cause chain dump).
        self.set(field.name(), Value::from(value.to_string()));
    }
    fn record_debug(&mut self, field: &Field, value: &dyn fmt::Debug) {
        // `%value` arrives here too, already as its Display text.
        self.set(field.name(), Value::from(format!("{value:?}")));
    }
}

/// Keeps each span's fields in its extensions for [`ZapJson`] (the fmt layer's own field store
/// is text, which the JSON line would have to parse back).
pub struct SpanFields;

impl<S> Layer<S> for SpanFields
where
    S: Subscriber + for<'a> LookupSpan<'a>,
{
    fn on_new_span(&self, attrs: &Attributes<'_>, id: &Id, ctx: Context<'_, S>) {
        let Some(span) = ctx.span(id) else { return };
        let mut fields = Fields::default();
        attrs.record(&mut fields);
        span.extensions_mut().insert(fields);
    }

    fn on_record(&self, id: &Id, values: &Record<'_>, ctx: Context<'_, S>) {
        let Some(span) = ctx.span(id) else { return };
        let mut ext = span.extensions_mut();
        if let Some(fields) = ext.get_mut::<Fields>() {
            values.record(fields);
        }
    }
}

/// The event formatter writing one zap JSON object per line.
pub struct ZapJson;

impl<S, N> FormatEvent<S, N> for ZapJson
where
    S: Subscriber + for<'a> LookupSpan<'a>,
    N: for<'a> FormatFields<'a> + 'static,
{
    fn format_event(
        &self,
        ctx: &FmtContext<'_, S, N>,
        mut writer: Writer<'_>,
        event: &Event<'_>,
    ) -> fmt::Result {
        let mut fields = Fields::default();
        if let Some(scope) = ctx.event_scope() {
            for span in scope.from_root() {
                if let Some(own) = span.extensions().get::<Fields>() {
                    fields.extend(own);
                }
            }
        }
        let mut own = Fields::default();
        event.record(&mut own);
        let msg = match own.0.iter().position(|(n, _)| *n == "message") {
            Some(i) => own.0.remove(i).1,
            None => Value::from(""),
        };
        fields.extend(&own);
        let meta = event.metadata();
        let mut line = String::with_capacity(256);
        line.push('{');
        push_pair(&mut line, "level", &Value::from(level(meta.level())));
        push_pair(&mut line, "ts", &Value::from(timestamp()));
        if let Some(logger) = logger(meta.target()) {
            push_pair(&mut line, "logger", &Value::from(logger));
        }
        push_pair(&mut line, "msg", &msg);
        for (name, value) in &fields.0 {
            push_pair(&mut line, name, value);
        }
        line.push('}');
        writeln!(writer, "{line}")
    }
}

fn push_pair(line: &mut String, name: &str, value: &Value) {
    if !line.ends_with('{') {
        line.push(',');
    }
    // Serializing a str or a Value cannot fail.
    line.push_str(&serde_json::to_string(name).unwrap_or_default());
    line.push(':');
    line.push_str(&serde_json::to_string(value).unwrap_or_default());
}

/// zap's lower-case level names; logr's verbose levels are zap debug, hence trace too.
pub fn level(level: &Level) -> &'static str {
    match *level {
        Level::ERROR => "error",
        Level::WARN => "warn",
        Level::INFO => "info",
        Level::DEBUG | Level::TRACE => "debug",
    }
}

/// zap's RFC3339TimeEncoder: Go's `time.RFC3339`, whole seconds, UTC written `Z`.
fn timestamp() -> String {
    let t = time::OffsetDateTime::now_utc();
    format!(
        "{:04}-{:02}-{:02}T{:02}:{:02}:{:02}Z",
        t.year(),
        u8::from(t.month()),
        t.day(),
        t.hour(),
        t.minute(),
        t.second()
    )
}

/// The logger name: the module path inside this crate, dotted as logr joins names
/// (`controller.ingress.reconcile`); other crates keep their own name in front.
pub fn logger(target: &str) -> Option<String> {
    let path = match target.strip_prefix(OWN_CRATE) {
        Some("") => return None,
        Some(rest) => rest.strip_prefix("::")?,
        None => target,
    };
    Some(path.replace("::", "."))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::telemetry::tests::Buffer;
    use tracing::Instrument;
    use tracing_subscriber::layer::SubscriberExt;

    fn lines(run: impl FnOnce()) -> Vec<Value> {
        let buffer = Buffer::default();
        let sink = buffer.clone();
        let subscriber = tracing_subscriber::fmt()
            .with_writer(move || sink.clone())
            .with_max_level(Level::DEBUG)
            .event_format(ZapJson)
            .finish()
            .with(SpanFields);
        tracing::subscriber::with_default(subscriber, run);
        let out = String::from_utf8(buffer.0.lock().unwrap().clone()).unwrap();
        out.lines()
            .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("{e}: {l}")))
            .collect()
    }

    #[test]
    fn a_line_has_upstreams_keys_and_values() {
        let out = lines(|| {
            tracing::warn!(
                addr = "127.0.0.1:9443",
                port = 9443u64,
                tls = true,
                "serving"
            );
        });
        let line = out[0].as_object().unwrap();
        let keys: Vec<&str> = line.keys().map(String::as_str).collect();
        assert_eq!(line["level"], "warn");
        assert_eq!(line["msg"], "serving");
        assert_eq!(line["logger"], "telemetry.zap.tests");
        assert_eq!(line["port"], 9443);
        assert_eq!(line["tls"], true);
        assert!(
            !keys.contains(&"message") && !keys.contains(&"target"),
            "{keys:?}"
        );
        let ts = line["ts"].as_str().unwrap();
        assert_eq!(ts.len(), "2026-11-27T23:01:09Z".len(), "{ts}");
        assert!(ts.ends_with('Z') && ts.as_bytes()[10] == b'T', "{ts}");
    }

    #[test]
    fn keys_come_in_zaps_order_with_span_fields_before_the_events() {
        let buffer = Buffer::default();
        let sink = buffer.clone();
        let subscriber = tracing_subscriber::fmt()
            .with_writer(move || sink.clone())
            .event_format(ZapJson)
            .finish()
            .with(SpanFields);
        tracing::subscriber::with_default(subscriber, || {
            let span = crate::telemetry::reconcile_span("ingress", "apps/web");
            let _g = span.enter();
            tracing::error!(error = "boom", "Reconciler error");
        });
        let out = String::from_utf8(buffer.0.lock().unwrap().clone()).unwrap();
        let line = out.trim_end();
        let (head, rest) = line.split_at(r#"{"level":"error","ts":""#.len());
        assert_eq!(head, r#"{"level":"error","ts":""#, "{line}");
        let middle = r#"Z","logger":"telemetry.zap.tests","msg":"Reconciler error","controller":"ingress","object":{"name":"web","namespace":"apps"},"namespace":"apps","name":"web","reconcileID":""#;
        let rest = &rest[rest.find(middle).unwrap_or_else(|| panic!("{line}")) + middle.len()..];
        assert_eq!(&rest[36..], r#"","error":"boom"}"#, "{line}");
    }

    #[test]
    fn every_line_of_a_reconcile_carries_its_controller_object_and_id() {
        let out = lines(|| {
            futures::executor::block_on(
                async {
                    tracing::info!("one");
                    tracing::debug!(step = 2, "two");
                }
                .instrument(crate::telemetry::reconcile_span("gatewayclass", "alb")),
            );
            tracing::info!("outside");
        });
        assert_eq!(out.len(), 3);
        assert_eq!(out[0]["reconcileID"], out[1]["reconcileID"]);
        let id = out[0]["reconcileID"].as_str().unwrap();
        assert_eq!(id.len(), 36, "a UUID like controller-runtime's: {id}");
        // A cluster-scoped object has a name only.
        assert_eq!(out[1]["object"], serde_json::json!({"name": "alb"}));
        assert_eq!(out[1]["namespace"], "");
        assert_eq!(out[1]["level"], "debug");
        assert_eq!(out[1]["step"], 2);
        assert!(out[2].get("reconcileID").is_none(), "{}", out[2]);
    }

    #[test]
    fn control_characters_in_values_stay_escaped_on_one_line() {
        let out = lines(|| tracing::info!(uid = "x\n{\"level\":\"error\"}", "a\r\nb"));
        assert_eq!(out.len(), 1);
        assert_eq!(out[0]["uid"], "x\n{\"level\":\"error\"}");
        assert_eq!(out[0]["msg"], "a\r\nb");
    }

    #[test]
    fn logger_names_follow_the_module_path() {
        assert_eq!(
            logger("aws_load_balancer_controller::controller::ingress").as_deref(),
            Some("controller.ingress")
        );
        assert_eq!(logger("aws_load_balancer_controller"), None);
        assert_eq!(
            logger("albc_model::plan").as_deref(),
            Some("albc_model.plan")
        );
    }
}
