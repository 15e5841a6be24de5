//! Watch streams: newline-delimited JSON events (ADDED/MODIFIED/DELETED, BOOKMARK, ERROR)
//! fed from the store's broadcast. Each watch runs in its own task with a bounded outgoing
//! queue; a watcher that cannot keep up is closed (clients re-watch), never waited for.

use crate::app::App;
use crate::error::ApiError;
use crate::resources::ResourceDef;
use crate::selectors::{FieldSelector, LabelSelector};
use crate::store::{Broadcast, EventType, WatchEvent, WatchStart};
use axum::body::Body;
use axum::response::Response;
use bytes::Bytes;
use serde_json::{json, Value};
use std::convert::Infallible;
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::{broadcast, mpsc};
use tokio_stream::wrappers::ReceiverStream;

pub struct WatchParams {
    pub def: ResourceDef,
    pub ns: Option<String>,
    pub labels: LabelSelector,
    pub fields: FieldSelector,
    pub start: WatchStart,
    pub bookmarks: bool,
    pub send_initial_events: bool,
    pub timeout: Duration,
}

impl WatchParams {
    fn matches(&self, obj: &Value) -> bool {
        let ns_ok = match &self.ns {
            Some(ns) => {
                obj.pointer("/metadata/namespace").and_then(Value::as_str) == Some(ns.as_str())
            }
            None => true,
        };
        ns_ok && self.labels.matches(obj) && self.fields.matches(obj)
    }

    fn line(&self, ty: &str, obj: &Value) -> Bytes {
        let av = self.def.api_version();
        let body = if obj.get("apiVersion").and_then(Value::as_str) == Some(av.as_str()) {
            serde_json::to_string(obj)
        } else {
            let mut o = obj.clone();
            o["apiVersion"] = json!(av);
            serde_json::to_string(&o)
        };
        Bytes::from(format!(
            "{{\"type\":\"{ty}\",\"object\":{}}}\n",
            body.unwrap_or_default()
        ))
    }

    fn bookmark(&self, rv: u64, initial_end: bool) -> Bytes {
        let mut meta = json!({"resourceVersion": rv.to_string()});
        if initial_end {
            meta["annotations"] = json!({"k8s.io/initial-events-end": "true"});
        }
        let obj =
            json!({"kind": self.def.kind, "apiVersion": self.def.api_version(), "metadata": meta});
        self.line("BOOKMARK", &obj)
    }

    /// The line for one stored event as this watcher sees it (the object as its resource
    /// serves it), honouring selectors.
    fn event_line(&self, ev: &WatchEvent) -> Option<Bytes> {
        if ev.key != self.def.storage_key() {
            return None;
        }
        let object = self.def.served(&ev.object);
        let now = self.matches(&object);
        let ty = match ev.kind {
            EventType::Modified => {
                let before = ev
                    .prev
                    .as_ref()
                    .is_some_and(|p| self.matches(&self.def.served(p)));
                match (before, now) {
                    (true, true) => "MODIFIED",
                    (false, true) => "ADDED",
                    (true, false) => "DELETED",
                    (false, false) => return None,
                }
            }
            k if now => k.as_str(),
            _ => return None,
        };
        Some(self.line(ty, &object))
    }
}

fn gone_line(p: &WatchParams, msg: String) -> Bytes {
    p.line("ERROR", &ApiError::Gone(msg).to_status())
}

pub fn watch_response(app: Arc<App>, p: WatchParams) -> Response {
    let (tx, rx) = mpsc::channel::<Result<Bytes, Infallible>>(1024);
    tokio::spawn(run(app, p, tx));
    Response::builder()
        .header(http::header::CONTENT_TYPE, "application/json")
        .header(http::header::CACHE_CONTROL, "no-cache, private")
        .body(Body::from_stream(ReceiverStream::new(rx)))
        .unwrap_or_default()
}

async fn run(app: Arc<App>, p: WatchParams, tx: mpsc::Sender<Result<Bytes, Infallible>>) {
    let send = |b: Bytes| {
        let tx = tx.clone();
        async move { tx.send(Ok(b)).await.is_ok() }
    };
    let setup = match app.store.watch(&p.def.storage_key(), p.start) {
        Ok(s) => s,
        Err(compacted) => {
            let asked = match p.start {
                WatchStart::From(rv) => rv,
                WatchStart::Now => 0,
            };
            send(gone_line(
                &p,
                format!("too old resource version: {asked} ({compacted})"),
            ))
            .await;
            return;
        }
    };
    let mut last_rv = setup.rv;
    for ev in &setup.initial {
        if let Some(line) = p.event_line(ev) {
            if !send(line).await {
                return;
            }
        }
    }
    if p.send_initial_events && p.bookmarks && !send(p.bookmark(last_rv, true)).await {
        return;
    }
    let mut rx = setup.rx;
    let mut shutdown = app.shutdown.clone();
    let deadline = tokio::time::sleep(p.timeout);
    tokio::pin!(deadline);
    let mut ticker = tokio::time::interval(Duration::from_secs(2));
    ticker.tick().await;
    loop {
        let line = tokio::select! {
            _ = &mut deadline => return,
            _ = shutdown.changed() => return,
            _ = ticker.tick(), if p.bookmarks => p.bookmark(last_rv, false),
            msg = rx.recv() => match msg {
                Ok(Broadcast::Event(ev)) => {
                    last_rv = ev.rv;
                    match p.event_line(&ev) {
                        Some(line) => line,
                        None => continue,
                    }
                }
                Ok(Broadcast::Expire(rv)) => {
                    send(gone_line(&p, format!("too old resource version: {last_rv} ({rv})"))).await;
                    return;
                }
                // Fell behind the broadcast buffer: close, the client re-watches from its last version.
                Err(broadcast::error::RecvError::Lagged(_)) | Err(broadcast::error::RecvError::Closed) => return,
            },
        };
        if !send(line).await {
            return;
        }
    }
}
