//! The one error type of the AWS layer: every failure classified so callers can decide without
//! matching on strings, while the AWS error code and message are kept for logs and status texts.

/// A failed AWS call (or a failed setup of the AWS clients).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum AwsError {
    /// The resource does not exist (`LoadBalancerNotFound`, `InvalidGroup.NotFound`, ...).
    #[error("{code}: {message}")]
    NotFound { code: String, message: String },
    /// AWS (or the fake) throttled the call (`Throttling`, `RequestLimitExceeded`, ...).
    #[error("{code}: {message}")]
    Throttled { code: String, message: String },
    /// The resource is still used by another (`ResourceInUse`, `DependencyViolation`).
    #[error("{code}: {message}")]
    InUse { code: String, message: String },
    /// Something with that name/key/priority exists already (`DuplicateLoadBalancerName`, ...).
    #[error("{code}: {message}")]
    Duplicate { code: String, message: String },
    /// The request is invalid (`ValidationError`, `InvalidConfigurationRequest`, ...).
    #[error("{code}: {message}")]
    Validation { code: String, message: String },
    /// The operation is refused in this state (e.g. deletion protection: `OperationNotPermitted`).
    #[error("{code}: {message}")]
    NotPermitted { code: String, message: String },
    /// A quota was hit (`TooManyLoadBalancers`, `TooManyTags`, `RulesPerSecurityGroupLimitExceeded`).
    #[error("{code}: {message}")]
    LimitExceeded { code: String, message: String },
    /// Missing IAM permission or bad credentials (`AccessDenied`, `UnauthorizedOperation`).
    #[error("{code}: {message}")]
    AccessDenied { code: String, message: String },
    /// Anything else; `status` is the HTTP status when a response was received
    /// (`None` for connection failures and timeouts).
    #[error("{code}: {message}")]
    Other {
        code: String,
        message: String,
        status: Option<u16>,
    },
    /// Bad configuration of the AWS layer (flags, endpoints, region/VPC resolution).
    #[error("{0}")]
    Config(String),
    /// A write refused before it was sent: this replica does not (or no longer surely) hold the
    /// leader Lease (see [`super::fence::Fence`]).
    #[error("{0}")]
    NotLeader(String),
    /// A request refused before it was built: it names a model reference (`Token`) or trust
    /// store the deployer had not resolved to an ARN (a deployer bug, never sent to AWS).
    #[error("{0}")]
    Unresolved(String),
}

impl AwsError {
    /// Classifies an AWS error code; `status` is the HTTP status of the response, if any.
    pub fn from_code(code: &str, message: impl Into<String>, status: Option<u16>) -> Self {
        let message = message.into();
        let c = code.to_string();
        match classify(code) {
            Class::NotFound => Self::NotFound { code: c, message },
            Class::Throttled => Self::Throttled { code: c, message },
            Class::InUse => Self::InUse { code: c, message },
            Class::Duplicate => Self::Duplicate { code: c, message },
            Class::Validation => Self::Validation { code: c, message },
            Class::NotPermitted => Self::NotPermitted { code: c, message },
            Class::LimitExceeded => Self::LimitExceeded { code: c, message },
            Class::AccessDenied => Self::AccessDenied { code: c, message },
            Class::Other => Self::Other {
                code: c,
                message,
                status,
            },
        }
    }

    /// The AWS error code (`""` for configuration errors).
    pub fn code(&self) -> &str {
        match self {
            Self::NotFound { code, .. }
            | Self::Throttled { code, .. }
            | Self::InUse { code, .. }
            | Self::Duplicate { code, .. }
            | Self::Validation { code, .. }
            | Self::NotPermitted { code, .. }
            | Self::LimitExceeded { code, .. }
            | Self::AccessDenied { code, .. }
            | Self::Other { code, .. } => code,
            Self::Config(_) | Self::NotLeader(_) | Self::Unresolved(_) => "",
        }
    }

    /// The AWS error message.
    pub fn message(&self) -> &str {
        match self {
            Self::NotFound { message, .. }
            | Self::Throttled { message, .. }
            | Self::InUse { message, .. }
            | Self::Duplicate { message, .. }
            | Self::Validation { message, .. }
            | Self::NotPermitted { message, .. }
            | Self::LimitExceeded { message, .. }
            | Self::AccessDenied { message, .. }
            | Self::Other { message, .. } => message,
            Self::Config(m) | Self::NotLeader(m) | Self::Unresolved(m) => m,
        }
    }

    /// The HTTP status the error most likely came with (for the `status_code` metric label).
    pub fn http_status(&self) -> Option<u16> {
        match self {
            Self::Other { status, .. } => *status,
            Self::NotFound { .. } => Some(400),
            Self::Throttled { .. } => Some(400),
            Self::AccessDenied { .. } => Some(403),
            Self::Config(_) | Self::NotLeader(_) | Self::Unresolved(_) => None,
            _ => Some(400),
        }
    }

    /// Whether a retry may succeed: throttling, server errors, and transport failures.
    pub fn is_retryable(&self) -> bool {
        match self {
            Self::Throttled { .. } => true,
            Self::Other { status, .. } => status.is_none_or(|s| s >= 500),
            _ => false,
        }
    }

    pub fn is_not_found(&self) -> bool {
        matches!(self, Self::NotFound { .. })
    }

    /// Builds a validation error the way AWS words it (code `ValidationError`).
    pub fn validation(message: impl Into<String>) -> Self {
        Self::Validation {
            code: "ValidationError".into(),
            message: message.into(),
        }
    }
}

enum Class {
    NotFound,
    Throttled,
    InUse,
    Duplicate,
    Validation,
    NotPermitted,
    LimitExceeded,
    AccessDenied,
    Other,
}

fn classify(code: &str) -> Class {
    const THROTTLE: &[&str] = &[
        "Throttling",
        "ThrottlingException",
        "ThrottledException",
        "RequestThrottledException",
        "RequestThrottled",
        "TooManyRequestsException",
        "RequestLimitExceeded",
        "BandwidthLimitExceeded",
        "SlowDown",
        "PriorRequestNotComplete",
        "EC2ThrottledException",
    ];
    const ACCESS: &[&str] = &[
        "AccessDenied",
        "AccessDeniedException",
        "UnauthorizedOperation",
        "UnauthorizedAccess",
        "AuthFailure",
        "InvalidClientTokenId",
        "SignatureDoesNotMatch",
        "ExpiredToken",
    ];
    // ACM: a certificate a listener still uses (`ResourceInUseException`).
    const IN_USE: &[&str] = &[
        "ResourceInUse",
        "ResourceInUseException",
        "DependencyViolation",
        "InvalidGroup.InUse",
        // Global Accelerator: a listener (endpoint group) still on the accelerator (listener).
        "AssociatedListenerFoundException",
        "AssociatedEndpointGroupFoundException",
    ];
    const VALIDATION: &[&str] = &[
        "ValidationError",
        "InvalidConfigurationRequest",
        "InvalidParameterValue",
        "InvalidParameter",
        "InvalidParameterCombination",
        "MissingParameter",
        "InvalidSubnet",
        "InvalidSecurityGroup",
        "InvalidTarget",
        "InvalidScheme",
        "InvalidLoadBalancerAction",
        "IncompatibleProtocols",
        "UnsupportedProtocol",
        "SSLPolicyNotFound",
        "InvalidFilter",
        // Route 53: a record to create that exists, or to delete that does not (or differs).
        "InvalidChangeBatch",
        "InvalidArgumentException",
        "InvalidPortRangeException",
        "InvalidNextTokenException",
    ];
    if THROTTLE.contains(&code) {
        Class::Throttled
    } else if ACCESS.contains(&code) {
        Class::AccessDenied
    } else if IN_USE.contains(&code) {
        Class::InUse
    } else if code == "OperationNotPermitted" || code == "AcceleratorNotDisabledException" {
        Class::NotPermitted
    } else if VALIDATION.contains(&code) {
        Class::Validation
    } else if code.contains("NotFound") {
        Class::NotFound
    } else if code.contains("Duplicate")
        || code == "PriorityInUse"
        || code == "EndpointGroupAlreadyExistsException"
    {
        Class::Duplicate
    } else if code.starts_with("TooMany")
        || code.ends_with("LimitExceeded")
        || code == "LimitExceededException"
    {
        Class::LimitExceeded
    } else if code.starts_with("Invalid") && code.ends_with(".Malformed") {
        Class::Validation
    } else {
        Class::Other
    }
}

pub type Result<T, E = AwsError> = std::result::Result<T, E>;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn codes_are_classified() {
        let e = |c: &str| AwsError::from_code(c, "m", Some(400));
        assert!(matches!(
            e("LoadBalancerNotFound"),
            AwsError::NotFound { .. }
        ));
        assert!(matches!(
            e("InvalidGroup.NotFound"),
            AwsError::NotFound { .. }
        ));
        assert!(matches!(e("Throttling"), AwsError::Throttled { .. }));
        assert!(matches!(
            e("RequestLimitExceeded"),
            AwsError::Throttled { .. }
        ));
        assert!(matches!(e("DependencyViolation"), AwsError::InUse { .. }));
        assert!(matches!(e("ResourceInUse"), AwsError::InUse { .. }));
        assert!(matches!(
            e("ResourceInUseException"),
            AwsError::InUse { .. }
        ));
        assert!(matches!(
            e("ResourceNotFoundException"),
            AwsError::NotFound { .. }
        ));
        assert!(matches!(
            e("LimitExceededException"),
            AwsError::LimitExceeded { .. }
        ));
        assert!(matches!(
            e("InvalidChangeBatch"),
            AwsError::Validation { .. }
        ));
        assert!(matches!(
            e("DuplicateLoadBalancerName"),
            AwsError::Duplicate { .. }
        ));
        assert!(matches!(
            e("InvalidPermission.Duplicate"),
            AwsError::Duplicate { .. }
        ));
        assert!(matches!(e("PriorityInUse"), AwsError::Duplicate { .. }));
        assert!(matches!(e("ValidationError"), AwsError::Validation { .. }));
        assert!(matches!(
            e("OperationNotPermitted"),
            AwsError::NotPermitted { .. }
        ));
        assert!(matches!(e("TooManyTags"), AwsError::LimitExceeded { .. }));
        assert!(matches!(
            e("UnauthorizedOperation"),
            AwsError::AccessDenied { .. }
        ));
        assert!(matches!(
            e("InternalFailure"),
            AwsError::Other {
                status: Some(400),
                ..
            }
        ));
        // Global Accelerator's codes.
        assert!(matches!(
            e("AcceleratorNotFoundException"),
            AwsError::NotFound { .. }
        ));
        assert!(matches!(
            e("ListenerNotFoundException"),
            AwsError::NotFound { .. }
        ));
        assert!(matches!(
            e("AcceleratorNotDisabledException"),
            AwsError::NotPermitted { .. }
        ));
        assert!(matches!(
            e("AssociatedListenerFoundException"),
            AwsError::InUse { .. }
        ));
        assert!(matches!(
            e("EndpointGroupAlreadyExistsException"),
            AwsError::Duplicate { .. }
        ));
        assert!(matches!(
            e("InvalidPortRangeException"),
            AwsError::Validation { .. }
        ));
        assert!(matches!(
            e("LimitExceededException"),
            AwsError::LimitExceeded { .. }
        ));
        assert!(matches!(
            e("AccessDeniedException"),
            AwsError::AccessDenied { .. }
        ));
        assert_eq!(e("Throttling").code(), "Throttling");
        assert_eq!(e("Throttling").message(), "m");
    }

    #[test]
    fn retryable_errors() {
        assert!(AwsError::from_code("Throttling", "", Some(400)).is_retryable());
        assert!(AwsError::from_code("InternalError", "", Some(500)).is_retryable());
        assert!(AwsError::from_code("DispatchFailure", "", None).is_retryable());
        assert!(!AwsError::from_code("Whatever", "", Some(400)).is_retryable());
        assert!(!AwsError::from_code("LoadBalancerNotFound", "", Some(400)).is_retryable());
    }
}
