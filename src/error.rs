//! Error kinds of the core. Each maps one to one onto an error class of the
//! reference client (the `natsio` Python package 1.0.1, whose documents
//! libnatsio translates) and onto a C status code (see `ffi::status`).

use thiserror::Error;

/// Result alias used across the core.
pub type Result<T, E = Error> = std::result::Result<T, E>;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ErrorKind {
    // Argument and configuration errors.
    NullArgument,
    InvalidUtf8,
    InvalidArgument,
    NotFound,
    Internal,
    BadSubject,
    BadQueueName,
    BadHeaders,
    Config,
    IllegalState,
    // Connection and timing.
    Timeout,
    ConnectionClosed,
    NoServers,
    Io,
    DrainTimeout,
    Cancelled,
    ReconnectBufExceeded,
    // Protocol and server.
    Protocol,
    Parser,
    MaxControlLineExceeded,
    MaxPayloadExceeded,
    /// A WebSocket handshake failure or framing violation.
    Websocket,
    Server,
    StaleConnection,
    AuthorizationViolation,
    AuthenticationExpired,
    PermissionsViolation,
    MaxSubscriptionsExceeded,
    // Messaging.
    NoResponders,
    NoReplySubject,
    SubscriptionClosed,
    SlowConsumer,
    // JetStream.
    JetStream,
    JetStreamApi,
    JetStreamNotEnabled,
    NoStreamResponse,
    StreamNotFound,
    StreamNameInUse,
    ConsumerNotFound,
    MessageNotFound,
    WrongLastSequence,
    TooManyStalledMsgs,
    AsyncPublishTimeout,
    NoMessages,
    ConsumerDeleted,
    MessageAlreadyAcked,
    NotJsMessage,
    // Key-Value.
    BucketNotFound,
    BucketExists,
    KeyNotFound,
    KeyDeleted,
    KeyExists,
    InvalidBucketName,
    InvalidKey,
    // Key-Value codecs (the reference's kvcodec errors).
    KvNoCodecs,
    KvWildcardNotSupported,
    KvKeyEncodeFailed,
    KvKeyDecodeFailed,
    KvValueEncodeFailed,
    KvValueDecodeFailed,
    KvFilterEncodeFailed,
    // Object Store (buckets share BucketNotFound/BucketExists/InvalidBucketName).
    ObjectNotFound,
    ObjectDeleted,
    ObjectExists,
    DigestMismatch,
    ObjectLink,
    InvalidObjectName,
    BucketSealed,
    // Services (ADR-32).
    /// A service, group or endpoint configuration that ADR-32 refuses
    /// (name, version, subject, queue group).
    ServiceConfig,
}

/// An error with its kind and a human-readable detail (server text included).
///
/// Boxed: a `Result<()>` is then one pointer wide and comes back in a
/// register instead of through memory, on every call of the hot paths (a
/// publish goes through five fallible calls); the box is allocated only
/// when something fails.
#[derive(Clone, Error)]
#[error("{}", .0.detail)]
pub struct Error(Box<ErrorFields>);

#[derive(Clone)]
struct ErrorFields {
    kind: ErrorKind,
    detail: String,
    data: ErrorData,
}

impl std::fmt::Debug for Error {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Error")
            .field("kind", &self.0.kind)
            .field("detail", &self.0.detail)
            .field("data", &self.0.data)
            .finish()
    }
}

/// What a program may act on beyond the kind, as the reference's error
/// attributes: `APIError.code`/`err_code`, `KeyDeleted.revision`. Zero
/// means "none".
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ErrorData {
    /// The JetStream API error's `code` (an HTTP-like status: 400, 404, 503).
    pub code: u32,
    /// The JetStream API error's `err_code` (10059: stream not found, ...).
    pub err_code: u32,
    /// The key revision a KeyDeleted or KeyExists error is about.
    pub revision: u64,
}

impl Error {
    pub fn new(kind: ErrorKind, detail: impl Into<String>) -> Self {
        Error(Box::new(ErrorFields {
            kind,
            detail: detail.into(),
            data: ErrorData::default(),
        }))
    }

    /// The error with the JetStream API's `code` and `err_code` attached.
    pub(crate) fn with_api_codes(mut self, code: u32, err_code: u32) -> Self {
        self.0.data.code = code;
        self.0.data.err_code = err_code;
        self
    }

    /// The error with the key revision it is about attached.
    pub(crate) fn with_revision(mut self, revision: u64) -> Self {
        self.0.data.revision = revision;
        self
    }

    pub fn kind(&self) -> ErrorKind {
        self.0.kind
    }

    pub fn detail(&self) -> &str {
        &self.0.detail
    }

    /// The API codes and key revision the error carries (zero: none).
    pub fn data(&self) -> ErrorData {
        self.0.data
    }

    pub(crate) fn closed() -> Self {
        Error::new(ErrorKind::ConnectionClosed, "connection closed")
    }

    pub(crate) fn timeout(what: &str) -> Self {
        Error::new(ErrorKind::Timeout, format!("{what} timed out"))
    }

    pub(crate) fn sub_closed() -> Self {
        Error::new(ErrorKind::SubscriptionClosed, "subscription closed")
    }

    /// Classify a server `-ERR` text as nats.go does. Returns the kind and
    /// whether the server closes the connection after sending it (the
    /// client then reconnects, if allowed).
    pub(crate) fn from_server(text: &str) -> (Self, bool) {
        let lower = text.to_ascii_lowercase();
        let (kind, fatal) = if lower.starts_with("permissions violation") {
            (ErrorKind::PermissionsViolation, false)
        } else if lower.starts_with("maximum subscriptions exceeded") {
            (ErrorKind::MaxSubscriptionsExceeded, false)
        } else if lower.starts_with("invalid subject")
            || lower.starts_with("invalid publish subject")
        {
            (ErrorKind::BadSubject, false)
        } else if lower.starts_with("stale connection") {
            (ErrorKind::StaleConnection, true)
        } else if lower.starts_with("authorization violation") {
            (ErrorKind::AuthorizationViolation, true)
        } else if lower.starts_with("user authentication expired")
            || lower.starts_with("user authentication revoked")
            || lower.starts_with("account authentication expired")
        {
            // Credentials that worked stopped working (NATSIO_ERR_AUTH_EXPIRED:
            // "expired or were revoked"); nats.go's ErrAuthExpired,
            // ErrAuthRevoked and ErrAccountAuthExpired.
            (ErrorKind::AuthenticationExpired, true)
        } else if lower.starts_with("maximum payload") {
            (ErrorKind::MaxPayloadExceeded, true)
        } else if lower.starts_with("maximum control line exceeded") {
            (ErrorKind::MaxControlLineExceeded, true)
        } else {
            (ErrorKind::Server, true)
        };
        (Error::new(kind, format!("server error: {text}")), fatal)
    }
}

impl From<std::io::Error> for Error {
    fn from(e: std::io::Error) -> Self {
        // A transport (the WebSocket framing) reports its own errors
        // through the byte stream's io::Error: they keep their kind.
        if let Some(inner) = e.get_ref().and_then(|r| r.downcast_ref::<Error>()) {
            return inner.clone();
        }
        if e.kind() == std::io::ErrorKind::TimedOut {
            Error::new(ErrorKind::Timeout, e.to_string())
        } else {
            Error::new(ErrorKind::Io, e.to_string())
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ffi::status::natsio_status::{self, *};

    #[test]
    fn a_result_of_nothing_is_one_pointer_wide() {
        // What keeps the hot paths' results in a register (see `Error`).
        assert_eq!(
            std::mem::size_of::<Result<()>>(),
            std::mem::size_of::<usize>()
        );
        let e = Error::new(ErrorKind::Timeout, "flush timed out").with_api_codes(503, 10_008);
        assert_eq!(
            (e.kind(), e.detail(), e.data().code),
            (ErrorKind::Timeout, "flush timed out", 503)
        );
        assert_eq!(e.to_string(), "flush timed out");
        assert!(format!("{e:?}").contains("Timeout"));
    }

    /// Every `-ERR` text nats-server sends that the classification tells
    /// apart, spelled as the server spells it (server/errors.go, client.go):
    /// the kind, the C status it surfaces as, and whether the server closes
    /// the connection after it.
    const SERVER_ERRORS: &[(&str, ErrorKind, natsio_status, bool)] = &[
        (
            "Permissions Violation for Publish to \"deny.x\"",
            ErrorKind::PermissionsViolation,
            NATSIO_ERR_PERMISSIONS,
            false,
        ),
        (
            "Permissions Violation for Subscription to \"deny.x\"",
            ErrorKind::PermissionsViolation,
            NATSIO_ERR_PERMISSIONS,
            false,
        ),
        (
            "Permissions Violation for Subscription to \"deny.x\" using queue \"q\"",
            ErrorKind::PermissionsViolation,
            NATSIO_ERR_PERMISSIONS,
            false,
        ),
        (
            "maximum subscriptions exceeded",
            ErrorKind::MaxSubscriptionsExceeded,
            NATSIO_ERR_MAX_SUBSCRIPTIONS,
            false,
        ),
        (
            "Invalid Subject",
            ErrorKind::BadSubject,
            NATSIO_ERR_BAD_SUBJECT,
            false,
        ),
        (
            "Invalid Publish Subject",
            ErrorKind::BadSubject,
            NATSIO_ERR_BAD_SUBJECT,
            false,
        ),
        (
            "Stale Connection",
            ErrorKind::StaleConnection,
            NATSIO_ERR_STALE_CONNECTION,
            true,
        ),
        (
            "Authorization Violation",
            ErrorKind::AuthorizationViolation,
            NATSIO_ERR_AUTHORIZATION,
            true,
        ),
        (
            "User Authentication Expired",
            ErrorKind::AuthenticationExpired,
            NATSIO_ERR_AUTH_EXPIRED,
            true,
        ),
        (
            "User Authentication Revoked",
            ErrorKind::AuthenticationExpired,
            NATSIO_ERR_AUTH_EXPIRED,
            true,
        ),
        (
            "Account Authentication Expired",
            ErrorKind::AuthenticationExpired,
            NATSIO_ERR_AUTH_EXPIRED,
            true,
        ),
        (
            "Maximum Payload Violation",
            ErrorKind::MaxPayloadExceeded,
            NATSIO_ERR_MAX_PAYLOAD,
            true,
        ),
        (
            "Maximum Control Line Exceeded",
            ErrorKind::MaxControlLineExceeded,
            NATSIO_ERR_MAX_CONTROL_LINE,
            true,
        ),
        // The rest end the connection as plain server errors.
        (
            "maximum connections exceeded",
            ErrorKind::Server,
            NATSIO_ERR_SERVER,
            true,
        ),
        (
            "maximum account active connections exceeded",
            ErrorKind::Server,
            NATSIO_ERR_SERVER,
            true,
        ),
        (
            "Unknown Protocol Operation",
            ErrorKind::Server,
            NATSIO_ERR_SERVER,
            true,
        ),
        (
            "Authentication Timeout",
            ErrorKind::Server,
            NATSIO_ERR_SERVER,
            true,
        ),
        (
            "Secure Connection - TLS Required",
            ErrorKind::Server,
            NATSIO_ERR_SERVER,
            true,
        ),
        ("", ErrorKind::Server, NATSIO_ERR_SERVER, true),
    ];

    #[test]
    fn server_errors_are_classified_with_their_status_and_fatality() {
        for &(text, kind, status, fatal) in SERVER_ERRORS {
            let (e, closes) = Error::from_server(text);
            assert_eq!(e.kind(), kind, "kind of {text:?}");
            assert_eq!(natsio_status::from(e.kind()), status, "status of {text:?}");
            assert_eq!(closes, fatal, "fatal of {text:?}");
            assert_eq!(e.detail(), format!("server error: {text}"));
        }
    }

    #[test]
    fn server_error_classification_ignores_case() {
        for &(text, kind, _, fatal) in SERVER_ERRORS {
            for variant in [text.to_ascii_uppercase(), text.to_ascii_lowercase()] {
                let (e, closes) = Error::from_server(&variant);
                assert_eq!((e.kind(), closes), (kind, fatal), "{variant:?}");
            }
        }
    }

    /// The classification reads the start of the text: the same words
    /// later in another error do not change it (a subject may hold them).
    #[test]
    fn server_error_classification_reads_the_leading_words() {
        let (e, fatal) = Error::from_server("Unknown Protocol Operation: authorization violation");
        assert_eq!((e.kind(), fatal), (ErrorKind::Server, true));
        let (e, fatal) = Error::from_server("Invalid Subject \"user authentication expired\"");
        assert_eq!((e.kind(), fatal), (ErrorKind::BadSubject, false));
        let (e, fatal) =
            Error::from_server("Unknown Protocol Operation: maximum subscriptions exceeded");
        assert_eq!((e.kind(), fatal), (ErrorKind::Server, true));
    }
}
