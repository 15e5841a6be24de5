//! Shared server state: the store, the resource table, webhook service endpoints, counters for
//! allocated cluster IPs and node ports, and small helpers (timestamps, uids, generated names).

use crate::resources::{ResourceDef, ResourceTable};
use crate::store::Store;
use std::collections::HashMap;
use std::net::SocketAddr;
use std::sync::{Mutex, RwLock};

pub struct App {
    pub store: Store,
    pub resources: RwLock<ResourceTable>,
    /// `clientConfig.service` (namespace, name) of webhooks → the ready endpoints of that service
    /// (several during a rolling update), taken in turn as kube-proxy spreads connections.
    pub endpoints: RwLock<HashMap<(String, String), Vec<SocketAddr>>>,
    /// Turn counter for the endpoints above.
    endpoint_turn: std::sync::atomic::AtomicUsize,
    /// Whether service accounts' requests are authorized by the stored RBAC objects.
    pub rbac: std::sync::atomic::AtomicBool,
    pub addr: SocketAddr,
    pub shutdown: tokio::sync::watch::Receiver<bool>,
    /// Every resource request, in arrival order (see `audit`).
    pub requests: crate::audit::RequestLog,
    alloc: Mutex<(u32, u16)>,
}

impl App {
    pub fn new(
        history: usize,
        endpoints: HashMap<(String, String), SocketAddr>,
        addr: SocketAddr,
        shutdown: tokio::sync::watch::Receiver<bool>,
    ) -> Self {
        App {
            store: Store::new(history),
            resources: RwLock::new(ResourceTable::new()),
            endpoints: RwLock::new(endpoints.into_iter().map(|(k, a)| (k, vec![a])).collect()),
            endpoint_turn: Default::default(),
            rbac: Default::default(),
            addr,
            shutdown,
            requests: Default::default(),
            alloc: Mutex::new((10, 30000)),
        }
    }

    pub fn table(&self) -> std::sync::RwLockReadGuard<'_, ResourceTable> {
        self.resources.read().unwrap_or_else(|p| p.into_inner())
    }

    pub fn table_mut(&self) -> std::sync::RwLockWriteGuard<'_, ResourceTable> {
        self.resources.write().unwrap_or_else(|p| p.into_inner())
    }

    pub fn resource(&self, group: &str, version: &str, plural: &str) -> Option<ResourceDef> {
        self.table().get(group, version, plural).cloned()
    }

    pub fn core(&self, plural: &str) -> ResourceDef {
        self.resource("", "v1", plural)
            .expect("built-in core resource")
    }

    pub fn endpoint(&self, ns: &str, name: &str) -> Option<SocketAddr> {
        let map = self.endpoints.read().unwrap_or_else(|p| p.into_inner());
        let ready = map.get(&(ns.to_string(), name.to_string()))?;
        let turn = self
            .endpoint_turn
            .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        ready.get(turn % ready.len().max(1)).copied()
    }

    /// Next free cluster IP in 10.96.0.0/16.
    pub fn next_cluster_ip(&self) -> String {
        let mut a = self.alloc.lock().unwrap_or_else(|p| p.into_inner());
        a.0 += 1;
        format!("10.96.{}.{}", (a.0 >> 8) & 0xff, a.0 & 0xff)
    }

    /// Next free node port in 30000–32767 (wraps around; tests never use that many).
    pub fn next_node_port(&self) -> u16 {
        let mut a = self.alloc.lock().unwrap_or_else(|p| p.into_inner());
        a.1 = if a.1 >= 32767 { 30000 } else { a.1 + 1 };
        a.1
    }
}

/// RFC 3339 UTC timestamp with second precision, as Kubernetes writes `metav1.Time`.
pub fn now() -> String {
    let f = time::macros::format_description!("[year]-[month]-[day]T[hour]:[minute]:[second]Z");
    time::OffsetDateTime::now_utc()
        .format(&f)
        .unwrap_or_else(|_| "1970-01-01T00:00:00Z".into())
}

pub fn new_uid() -> String {
    uuid::Uuid::new_v4().to_string()
}

/// `generateName` suffix: five characters from the alphabet the apiserver uses.
pub fn name_suffix() -> String {
    const ALPHABET: &[u8] = b"bcdfghjklmnpqrstvwxz2456789";
    uuid::Uuid::new_v4().as_bytes()[..5]
        .iter()
        .map(|b| ALPHABET[*b as usize % ALPHABET.len()] as char)
        .collect()
}
