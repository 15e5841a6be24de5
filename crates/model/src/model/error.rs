//! Model errors: one naming an Ingress (and the annotation, when one is at fault), one about
//! the group as a whole (conflicts between members), or one per other kind (Service, Gateway,
//! GlobalAccelerator), with upstream's message texts.

use crate::annotations::AnnotationError;

/// Why a stack (or one member of it) could not be built.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ModelError {
    /// The Ingress's own configuration is invalid; `annotation` is the full key when known.
    #[error("ingress: {ingress}: {message}")]
    Ingress {
        ingress: String,
        annotation: Option<String>,
        message: String,
    },
    /// Members disagree, or a group-wide setting is invalid: the whole group cannot be built.
    #[error("{0}")]
    Group(String),
    /// A LoadBalancer Service's configuration is invalid; the text is upstream's (it becomes the
    /// `Failed build model due to <message>` event).
    #[error("{message}")]
    Service {
        service: String,
        annotation: Option<String>,
        message: String,
    },
    /// A Gateway (or a route, configuration or backend it uses) cannot be built; the text is
    /// upstream's, and becomes the Gateway's `Accepted`/`Programmed` False message.
    #[error("{message}")]
    Gateway { gateway: String, message: String },
    /// Upstream's fatal route loader error (`LoaderError`): the Gateway is not built and its
    /// `Accepted` condition is False with reason `ListenersNotValid` and this message.
    #[error("{message}")]
    ListenersNotValid { gateway: String, message: String },
    /// A GlobalAccelerator (`namespace/name`) cannot be built; the text is upstream's (the
    /// `Failed build model due to <message>` event, reason `ModelBuildFailed` in its status).
    #[error("{message}")]
    GlobalAccelerator {
        accelerator: String,
        message: String,
    },
}

/// An error before it is attributed to an Ingress.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Fail {
    pub annotation: Option<String>,
    pub message: String,
}

impl Fail {
    pub fn msg(message: impl Into<String>) -> Self {
        Fail {
            annotation: None,
            message: message.into(),
        }
    }
    pub fn at(annotation: impl Into<String>, message: impl Into<String>) -> Self {
        Fail {
            annotation: Some(annotation.into()),
            message: message.into(),
        }
    }
    /// Attributes the failure to a Service (`ns/name`).
    pub fn on_service(self, service: &str) -> ModelError {
        ModelError::Service {
            service: service.to_string(),
            annotation: self.annotation,
            message: self.message,
        }
    }
    /// Attributes the failure to an Ingress (`ns/name`).
    pub fn on(self, ingress: &str) -> ModelError {
        ModelError::Ingress {
            ingress: ingress.to_string(),
            annotation: self.annotation,
            message: self.message,
        }
    }
}

impl From<AnnotationError> for Fail {
    fn from(e: AnnotationError) -> Self {
        Fail {
            annotation: Some(e.key),
            message: e.message,
        }
    }
}
