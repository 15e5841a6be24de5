//! Kubernetes Events of the controllers (`events.k8s.io/v1`), written as kube's recorder writes
//! them: the first occurrence is created, a repeat within six minutes patches its series. The
//! difference is what is remembered for the repeats: kube's recorder keeps every Event it
//! wrote, whole, for six minutes, and scans them all on each publish. With a few thousand
//! bindings each reporting its reconcile, that cache was the largest thing in the heap (17.7 of
//! 68 MiB at 5,000 bindings, heaptrack). Here a repeat needs only the Event's name, its count
//! and when it was last seen, under a 64-bit hash of what makes two Events the same.

use std::collections::HashMap;
use std::hash::{DefaultHasher, Hash, Hasher};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use k8s_openapi::api::core::v1::ObjectReference;
use k8s_openapi::api::events::v1::{Event, EventSeries};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{MicroTime, ObjectMeta};
use k8s_openapi::jiff::{SignedDuration, Timestamp};
use kube::api::{Patch, PatchParams, PostParams};
use kube::Api;

/// How long a written Event takes repeats into its series (kube's recorder: six minutes).
const SERIES_WINDOW: SignedDuration = SignedDuration::from_mins(6);
/// Expired entries are dropped at most this often, not on every publish.
const PURGE_EVERY: Duration = Duration::from_secs(30);
/// events.k8s.io/v1 refuses a note over 1 KiB, and the user would see no event at all.
const NOTE_MAX: usize = 1024;

/// Normal or Warning, as the API spells them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
enum Kind {
    Normal,
    Warning,
}

impl Kind {
    fn as_str(self) -> &'static str {
        match self {
            Kind::Normal => "Normal",
            Kind::Warning => "Warning",
        }
    }
}

/// What is remembered of one written Event, to patch its series on a repeat.
#[derive(Debug)]
struct Written {
    namespace: Box<str>,
    name: Box<str>,
    count: i32,
    last: Timestamp,
}

#[derive(Debug)]
struct Seen {
    by_key: HashMap<u64, Written>,
    purged: Instant,
}

impl Seen {
    fn purge(&mut self, now: Timestamp) {
        if self.purged.elapsed() < PURGE_EVERY {
            return;
        }
        self.purged = Instant::now();
        self.by_key.retain(|_, w| w.last + SERIES_WINDOW > now);
    }
}

/// Publishes events for one controller. Failures are logged, never returned: an event is
/// a courtesy to the user and must not fail a reconcile.
#[derive(Clone)]
pub struct Events {
    inner: Arc<Inner>,
}

struct Inner {
    client: kube::Client,
    controller: String,
    instance: String,
    seen: Mutex<Seen>,
}

impl Events {
    pub fn new(client: kube::Client, controller: &str) -> Self {
        let instance = std::env::var("POD_NAME").unwrap_or_else(|_| controller.to_string());
        Self {
            inner: Arc::new(Inner {
                client,
                controller: controller.to_string(),
                instance,
                seen: Mutex::new(Seen {
                    by_key: HashMap::new(),
                    purged: Instant::now(),
                }),
            }),
        }
    }

    pub async fn normal(&self, obj: &ObjectReference, reason: &str, note: String) {
        self.publish(obj, Kind::Normal, reason, note).await
    }

    pub async fn warning(&self, obj: &ObjectReference, reason: &str, note: String) {
        self.publish(obj, Kind::Warning, reason, note).await
    }

    async fn publish(&self, obj: &ObjectReference, kind: Kind, reason: &str, note: String) {
        if let Err(e) = self.write(obj, kind, reason, event_note(note)).await {
            tracing::warn!(error = %e, reason, "failed to publish event");
        }
    }

    fn seen(&self) -> std::sync::MutexGuard<'_, Seen> {
        self.inner.seen.lock().unwrap_or_else(|p| p.into_inner())
    }

    async fn write(
        &self,
        obj: &ObjectReference,
        kind: Kind,
        reason: &str,
        note: String,
    ) -> Result<(), kube::Error> {
        let now = Timestamp::now();
        let key = event_key(
            kind,
            reason,
            &self.inner.controller,
            &self.inner.instance,
            obj,
        );
        let repeat = {
            let mut seen = self.seen();
            seen.purge(now);
            seen.by_key
                .get(&key)
                .filter(|w| w.last + SERIES_WINDOW > now)
                .map(|w| {
                    (
                        w.namespace.clone(),
                        w.name.clone(),
                        w.count.saturating_add(1),
                    )
                })
        };
        if let Some((namespace, name, count)) = repeat {
            let series = EventSeries {
                count,
                last_observed_time: MicroTime(now),
            };
            let patch = serde_json::json!({ "series": series });
            let api: Api<Event> = Api::namespaced(self.inner.client.clone(), &namespace);
            match api
                .patch(&name, &PatchParams::default(), &Patch::Merge(&patch))
                .await
            {
                Ok(_) => {
                    // Unless a concurrent publish replaced the entry meanwhile (a new Event).
                    if let Some(w) = self.seen().by_key.get_mut(&key).filter(|w| w.name == name) {
                        w.count = count;
                        w.last = now;
                    }
                    return Ok(());
                }
                // Gone (the API server's event TTL): a new Event starts a new series.
                Err(kube::Error::Api(s)) if s.code == 404 => {}
                Err(e) => return Err(e),
            }
        }
        let event = self.event(obj, kind, reason, note, now);
        let namespace = event.metadata.namespace.clone().unwrap_or_default();
        let api: Api<Event> = Api::namespaced(self.inner.client.clone(), &namespace);
        let created = api.create(&PostParams::default(), &event).await?;
        let name = created.metadata.name.unwrap_or_default();
        self.seen().by_key.insert(
            key,
            Written {
                namespace: namespace.into(),
                name: name.into(),
                count: 1,
                last: now,
            },
        );
        Ok(())
    }

    /// The Event kube's recorder creates: named after the object and the time, in the object's
    /// namespace (`default` for cluster-scoped objects).
    fn event(
        &self,
        obj: &ObjectReference,
        kind: Kind,
        reason: &str,
        note: String,
        now: Timestamp,
    ) -> Event {
        let base = obj.name.as_deref().unwrap_or(&self.inner.controller);
        Event {
            metadata: ObjectMeta {
                namespace: Some(obj.namespace.clone().unwrap_or_else(|| "default".into())),
                name: Some(event_name(base, now)),
                ..Default::default()
            },
            action: Some("Reconcile".into()),
            reason: Some(reason.into()),
            note: Some(note),
            event_time: Some(MicroTime(now)),
            regarding: Some(obj.clone()),
            reporting_controller: Some(self.inner.controller.clone()),
            reporting_instance: Some(self.inner.instance.clone()),
            type_: Some(kind.as_str().into()),
            ..Default::default()
        }
    }
}

/// `<object>.<time in hex nanoseconds>`, as kube's recorder names Events, with the object's
/// name cut so the whole stays a valid name (at most 253 characters; kube's recorder does not
/// cut, and the API server refuses the Event of an object with a name near that length).
fn event_name(base: &str, now: Timestamp) -> String {
    const MAX: usize = 253;
    let suffix = format!(".{:x}", now.as_nanosecond());
    let mut end = base.len().min(MAX - suffix.len());
    while !base.is_char_boundary(end) {
        end -= 1;
    }
    let base = base[..end].trim_end_matches(['.', '-']);
    format!("{base}{suffix}")
}

/// What makes two Events one series, as kube's recorder keys them: type, action, reason,
/// reporter and the whole reference (so a new resourceVersion starts a new series), not the
/// note. A 64-bit hash: two keys colliding (odds about n² / 2^64) would only count one
/// object's repeat in another's series.
fn event_key(
    kind: Kind,
    reason: &str,
    controller: &str,
    instance: &str,
    obj: &ObjectReference,
) -> u64 {
    let mut h = DefaultHasher::new();
    kind.hash(&mut h);
    "Reconcile".hash(&mut h);
    reason.hash(&mut h);
    controller.hash(&mut h);
    instance.hash(&mut h);
    obj.api_version.hash(&mut h);
    obj.field_path.hash(&mut h);
    obj.kind.hash(&mut h);
    obj.name.hash(&mut h);
    obj.namespace.hash(&mut h);
    obj.resource_version.hash(&mut h);
    obj.uid.hash(&mut h);
    h.finish()
}

/// Longer notes (a JSON parse error quoting a whole annotation) are cut at a character
/// boundary.
fn event_note(mut text: String) -> String {
    if text.len() > NOTE_MAX {
        let mut end = NOTE_MAX - 3;
        while !text.is_char_boundary(end) {
            end -= 1;
        }
        text.truncate(end);
        text.push_str("...");
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn event_notes_fit_the_api_limit_at_a_character_boundary() {
        assert_eq!(event_note("short".into()), "short");
        let long = "é".repeat(600); // 1,200 bytes
        let cut = event_note(long);
        assert!(cut.len() <= 1024, "{}", cut.len());
        assert!(cut.ends_with("..."));
    }

    #[test]
    fn event_names_stay_valid_for_long_object_names() {
        let now = Timestamp::from_second(1_800_000_000).unwrap();
        assert_eq!(event_name("b", now), format!("b.{:x}", now.as_nanosecond()));
        let long = format!("{}-x", "a".repeat(260));
        let name = event_name(&long, now);
        assert!(name.len() <= 253, "{}", name.len());
        assert!(name.starts_with("aaa") && name.ends_with(&format!(".{:x}", now.as_nanosecond())));
        let dashed = format!("{}{}", "a".repeat(233), "-".repeat(30));
        assert!(
            !event_name(&dashed, now).contains("-."),
            "no '-' before the dot"
        );
    }

    #[test]
    fn the_key_is_the_reference_and_reason_not_the_note() {
        let obj = ObjectReference {
            kind: Some("TargetGroupBinding".into()),
            name: Some("b".into()),
            namespace: Some("ns".into()),
            uid: Some("u".into()),
            ..Default::default()
        };
        let k = |kind, reason: &str, o: &ObjectReference| event_key(kind, reason, "c", "i", o);
        assert_eq!(k(Kind::Normal, "R", &obj), k(Kind::Normal, "R", &obj));
        assert_ne!(k(Kind::Normal, "R", &obj), k(Kind::Warning, "R", &obj));
        assert_ne!(k(Kind::Normal, "R", &obj), k(Kind::Normal, "S", &obj));
        let other = ObjectReference {
            name: Some("c".into()),
            ..obj.clone()
        };
        assert_ne!(k(Kind::Normal, "R", &obj), k(Kind::Normal, "R", &other));
    }
}
