//! A webhook whose handler can only be built once a dependency is ready (the AWS clients, which
//! may need instance metadata or an API call to resolve). Until then it answers every request
//! with a clear error instead of a 404, and the rest of the server keeps serving: upstream exits
//! when AWS is unreachable at start, taking the pod webhook down with it.

use std::sync::{Arc, OnceLock};

use super::{AdmissionRequest, Decision, Handler};

/// The route's handler, installed once.
pub struct Late {
    slot: Arc<OnceLock<Arc<dyn Handler>>>,
    mutating: bool,
    waiting_for: &'static str,
}

/// Installs the handler behind a [`Late`] route.
#[derive(Clone)]
pub struct LateSlot(Arc<OnceLock<Arc<dyn Handler>>>);

impl LateSlot {
    /// Installs `handler`; later calls are ignored (the first handler stays).
    pub fn set(&self, handler: Arc<dyn Handler>) {
        let _ = self.0.set(handler);
    }

    pub fn is_set(&self) -> bool {
        self.0.get().is_some()
    }
}

impl Late {
    /// `waiting_for` names the dependency in the error message users see.
    pub fn new(mutating: bool, waiting_for: &'static str) -> (Self, LateSlot) {
        let slot = Arc::new(OnceLock::new());
        let late = Late {
            slot: slot.clone(),
            mutating,
            waiting_for,
        };
        (late, LateSlot(slot))
    }
}

#[async_trait::async_trait]
impl Handler for Late {
    fn mutating(&self) -> bool {
        self.mutating
    }

    async fn admit(&self, request: &AdmissionRequest) -> Decision {
        match self.slot.get() {
            Some(handler) => handler.admit(request).await,
            None => Decision::errored(
                "NotReady",
                format!(
                    "the controller cannot answer this request yet: {} is not ready (see the controller's log)",
                    self.waiting_for
                ),
            ),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::webhook::Operation;

    struct Always;

    #[async_trait::async_trait]
    impl Handler for Always {
        fn mutating(&self) -> bool {
            true
        }
        async fn admit(&self, _: &AdmissionRequest) -> Decision {
            Decision::deny("x", "inner answered")
        }
    }

    fn request() -> AdmissionRequest {
        AdmissionRequest {
            uid: "u".into(),
            operation: Operation::Create,
            namespace: Some("ns".into()),
            name: None,
            object: None,
            old_object: None,
            dry_run: false,
        }
    }

    #[tokio::test]
    async fn errors_until_installed_then_delegates() {
        let (late, slot) = Late::new(true, "the AWS client");
        assert!(late.mutating());
        match late.admit(&request()).await {
            Decision::Errored { message, .. } => assert!(message.contains("the AWS client")),
            other => panic!("expected an error before install, got {other:?}"),
        }
        assert!(!slot.is_set());
        slot.set(Arc::new(Always));
        assert!(slot.is_set());
        match late.admit(&request()).await {
            Decision::Deny { message, .. } => assert_eq!(message, "inner answered"),
            other => panic!("expected the inner handler's answer, got {other:?}"),
        }
    }
}
