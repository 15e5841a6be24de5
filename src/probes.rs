//! Health probes (--health-probe-bind-addr): `/readyz` over named readiness checks, and
//! `/healthz`, which fails while this replica is a stuck leader. Above leader election, whose
//! health it reports, and apart from the metrics, which know nothing of either.

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};

use axum::extract::State;
use axum::http::StatusCode;
use axum::response::IntoResponse;
use axum::routing::get;
use axum::Router;

use crate::controller::leader::LeaderHealth;

/// Named readiness checks; `/readyz` is ready only when every registered check has passed.
#[derive(Clone, Debug, Default)]
pub struct Readiness {
    checks: Arc<Mutex<BTreeMap<&'static str, bool>>>,
}

impl Readiness {
    /// Registers a check that starts out not ready.
    pub fn add(&self, name: &'static str) {
        self.checks
            .lock()
            .expect("readiness lock")
            .insert(name, false);
    }

    pub fn set(&self, name: &'static str, ready: bool) {
        self.checks
            .lock()
            .expect("readiness lock")
            .insert(name, ready);
    }

    pub fn is_ready(&self) -> bool {
        self.checks
            .lock()
            .expect("readiness lock")
            .values()
            .all(|ok| *ok)
    }

    /// A report in the API server's style: one `[+]name ok` / `[-]name not ready` line per check.
    pub fn report(&self) -> String {
        let checks = self.checks.lock().expect("readiness lock");
        let mut out = String::new();
        for (name, ok) in checks.iter() {
            out.push_str(&if *ok {
                format!("[+]{name} ok\n")
            } else {
                format!("[-]{name} not ready\n")
            });
        }
        out
    }
}

/// The `/healthz` and `/readyz` router. `/healthz` fails while this replica is a stuck leader.
pub fn probes_router(readiness: Readiness, leader: LeaderHealth) -> Router {
    Router::new()
        .route("/healthz", get(healthz).with_state(leader))
        .route("/readyz", get(readyz))
        .with_state(readiness)
}

async fn healthz(State(leader): State<LeaderHealth>) -> impl IntoResponse {
    match leader.check() {
        Ok(()) => (StatusCode::OK, "ok".to_string()),
        Err(reason) => (
            StatusCode::INTERNAL_SERVER_ERROR,
            format!("[+]ping ok\n[-]leaderElection failed: {reason}\nhealthz check failed\n"),
        ),
    }
}

async fn readyz(State(readiness): State<Readiness>) -> impl IntoResponse {
    let report = readiness.report();
    if readiness.is_ready() {
        (StatusCode::OK, format!("{report}readyz check passed\n"))
    } else {
        (
            StatusCode::SERVICE_UNAVAILABLE,
            format!("{report}readyz check failed\n"),
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn readiness_needs_every_check() {
        let r = Readiness::default();
        assert!(
            r.is_ready(),
            "no checks registered means nothing to wait for"
        );
        r.add("webhook");
        r.add("kube-api");
        assert!(!r.is_ready());
        r.set("webhook", true);
        assert!(!r.is_ready());
        assert!(r.report().contains("[-]kube-api not ready"));
        r.set("kube-api", true);
        assert!(r.is_ready());
    }
}
