//! API errors and their wire form: every failure leaves the server as a `Status` object
//! (kind Status, apiVersion v1, status Failure) with the HTTP code the real apiserver uses.

use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use serde_json::{json, Value};

/// One error of the API layer. `resource` is the qualified resource name used in messages
/// (`pods`, `ingresses.networking.k8s.io`), as the real apiserver prints it.
#[derive(Debug, Clone, thiserror::Error)]
pub enum ApiError {
    #[error("{resource} \"{name}\" not found")]
    NotFound { resource: String, name: String },
    #[error("{resource} \"{name}\" already exists")]
    AlreadyExists { resource: String, name: String },
    #[error("Operation cannot be fulfilled on {resource} \"{name}\": {detail}")]
    Conflict {
        resource: String,
        name: String,
        detail: String,
    },
    #[error("{0}")]
    Invalid(String),
    #[error("{0}")]
    Gone(String),
    #[error("{0}")]
    BadRequest(String),
    #[error("{0}")]
    MethodNotAllowed(String),
    #[error("{0}")]
    UnsupportedMediaType(String),
    #[error("{0}")]
    NotAcceptable(String),
    #[error("{0}")]
    InternalError(String),
    /// A webhook denial or any Status built elsewhere: message, reason and code are kept as given.
    #[error("{message}")]
    Custom {
        code: u16,
        reason: String,
        message: String,
    },
}

impl ApiError {
    pub fn conflict_modified(resource: &str, name: &str) -> Self {
        ApiError::Conflict {
            resource: resource.to_string(),
            name: name.to_string(),
            detail: "the object has been modified; please apply your changes to the latest version and try again".into(),
        }
    }

    pub fn not_found(resource: &str, name: &str) -> Self {
        ApiError::NotFound {
            resource: resource.into(),
            name: name.into(),
        }
    }

    pub fn code(&self) -> u16 {
        match self {
            ApiError::NotFound { .. } => 404,
            ApiError::AlreadyExists { .. } | ApiError::Conflict { .. } => 409,
            ApiError::Invalid(_) => 422,
            ApiError::Gone(_) => 410,
            ApiError::BadRequest(_) => 400,
            ApiError::MethodNotAllowed(_) => 405,
            ApiError::UnsupportedMediaType(_) => 415,
            ApiError::NotAcceptable(_) => 406,
            ApiError::InternalError(_) => 500,
            ApiError::Custom { code, .. } => *code,
        }
    }

    pub fn reason(&self) -> &str {
        match self {
            ApiError::NotFound { .. } => "NotFound",
            ApiError::AlreadyExists { .. } => "AlreadyExists",
            ApiError::Conflict { .. } => "Conflict",
            ApiError::Invalid(_) => "Invalid",
            ApiError::Gone(_) => "Expired",
            ApiError::BadRequest(_) => "BadRequest",
            ApiError::MethodNotAllowed(_) => "MethodNotAllowed",
            ApiError::UnsupportedMediaType(_) => "UnsupportedMediaType",
            ApiError::NotAcceptable(_) => "NotAcceptable",
            ApiError::InternalError(_) => "InternalError",
            ApiError::Custom { reason, .. } => reason,
        }
    }

    /// The `Status` object, as sent in a response body or inside a watch ERROR event.
    pub fn to_status(&self) -> Value {
        let mut status = json!({
            "kind": "Status",
            "apiVersion": "v1",
            "metadata": {},
            "status": "Failure",
            "message": self.to_string(),
            "reason": self.reason(),
            "code": self.code(),
        });
        match self {
            ApiError::NotFound { resource, name }
            | ApiError::AlreadyExists { resource, name }
            | ApiError::Conflict { resource, name, .. } => {
                let (kind, group) = resource.split_once('.').unwrap_or((resource.as_str(), ""));
                status["details"] = json!({ "name": name, "group": group, "kind": kind });
            }
            ApiError::InternalError(msg) => {
                status["message"] = json!(format!("Internal error occurred: {msg}"));
                status["details"] = json!({ "causes": [{ "message": msg }] });
            }
            _ => {}
        }
        status
    }
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        let code = StatusCode::from_u16(self.code()).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
        json_response(code, &self.to_status())
    }
}

/// A JSON response with the content type clients expect.
pub fn json_response(code: StatusCode, body: &Value) -> Response {
    let bytes = serde_json::to_vec(body).unwrap_or_default();
    (
        code,
        [(axum::http::header::CONTENT_TYPE, "application/json")],
        bytes,
    )
        .into_response()
}

pub type ApiResult<T> = Result<T, ApiError>;
