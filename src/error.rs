//! Error kinds of the core. Each maps one to one onto an error class of the
//! reference client and onto a C status code (see `ffi::status`).

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
}

/// An error with its kind and a human-readable detail (server text included).
#[derive(Debug, Clone, Error)]
#[error("{detail}")]
pub struct Error {
    kind: ErrorKind,
    detail: String,
}

impl Error {
    pub fn new(kind: ErrorKind, detail: impl Into<String>) -> Self {
        Error {
            kind,
            detail: detail.into(),
        }
    }

    pub fn kind(&self) -> ErrorKind {
        self.kind
    }

    pub fn detail(&self) -> &str {
        &self.detail
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
    /// whether the server closes the connection after sending it.
    pub(crate) fn from_server(text: &str) -> (Self, bool) {
        let lower = text.to_ascii_lowercase();
        let (kind, fatal) = if lower.starts_with("permissions violation") {
            (ErrorKind::PermissionsViolation, false)
        } else if lower.contains("maximum subscriptions exceeded") {
            (ErrorKind::MaxSubscriptionsExceeded, false)
        } else if lower.starts_with("invalid subject")
            || lower.starts_with("invalid publish subject")
        {
            (ErrorKind::BadSubject, false)
        } else if lower.starts_with("stale connection") {
            (ErrorKind::StaleConnection, true)
        } else if lower.starts_with("authorization violation")
            || lower.starts_with("user authentication revoked")
        {
            (ErrorKind::AuthorizationViolation, true)
        } else if lower.starts_with("user authentication expired")
            || lower.contains("authentication expired")
        {
            (ErrorKind::AuthenticationExpired, true)
        } else if lower.starts_with("maximum payload") {
            (ErrorKind::MaxPayloadExceeded, true)
        } else {
            (ErrorKind::Server, true)
        };
        (Error::new(kind, format!("server error: {text}")), fatal)
    }
}

impl From<std::io::Error> for Error {
    fn from(e: std::io::Error) -> Self {
        if e.kind() == std::io::ErrorKind::TimedOut {
            Error::new(ErrorKind::Timeout, e.to_string())
        } else {
            Error::new(ErrorKind::Io, e.to_string())
        }
    }
}
