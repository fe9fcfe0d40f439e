//! Status codes, grouped by subsystem, and the per-thread error detail.

use std::cell::RefCell;
use std::ffi::{c_char, CString};

use crate::error::{Error, ErrorKind};

/// The result of every fallible natsio function. `NATSIO_OK` is 0; errors
/// are grouped by hundreds: 1xx arguments and usage, 2xx connection,
/// 3xx protocol and server, 4xx messaging, 5xx JetStream, 6xx Key-Value,
/// 7xx Object Store. Positive codes below 100 are not errors.
#[repr(i32)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[allow(non_camel_case_types)]
pub enum natsio_status {
    /// Success.
    NATSIO_OK = 0,
    /// An iteration has ended (no more items); not an error.
    NATSIO_DONE = 1,
    /// An asynchronous operation has not completed yet; not an error.
    NATSIO_PENDING = 2,

    /// A required pointer argument was NULL.
    NATSIO_ERR_NULL_ARGUMENT = 100,
    /// A string argument was not valid UTF-8.
    NATSIO_ERR_INVALID_UTF8 = 101,
    /// An argument was out of range or malformed.
    NATSIO_ERR_INVALID_ARGUMENT = 102,
    /// A subject was empty, had empty tokens, whitespace, or misplaced wildcards.
    NATSIO_ERR_BAD_SUBJECT = 103,
    /// A queue group name was empty or had whitespace.
    NATSIO_ERR_BAD_QUEUE_NAME = 104,
    /// A header name or value could break wire framing (BadHeadersError).
    NATSIO_ERR_BAD_HEADERS = 105,
    /// Options were invalid, alone or together (ConfigError).
    NATSIO_ERR_CONFIG = 106,
    /// The call is not allowed in the object's current state or on this thread.
    NATSIO_ERR_ILLEGAL_STATE = 107,
    /// The requested item does not exist.
    NATSIO_ERR_NOT_FOUND = 108,
    /// An internal error (a bug in natsio); the detail says where.
    NATSIO_ERR_INTERNAL = 109,

    /// The operation did not complete in time (TimeoutError).
    NATSIO_ERR_TIMEOUT = 200,
    /// The connection is closed or draining (ConnectionClosedError).
    NATSIO_ERR_CONNECTION_CLOSED = 201,
    /// No server could be reached (NoServersAvailableError).
    NATSIO_ERR_NO_SERVERS = 202,
    /// A socket error.
    NATSIO_ERR_IO = 203,
    /// A drain did not finish within drain_timeout (DrainTimeoutError).
    NATSIO_ERR_DRAIN_TIMEOUT = 204,
    /// The operation was cancelled through its token.
    NATSIO_ERR_CANCELLED = 205,
    /// A publish made while reconnecting did not fit the reconnect buffer,
    /// or buffering is disabled (ReconnectBufExceededError).
    NATSIO_ERR_RECONNECT_BUF_EXCEEDED = 206,

    /// The server violated the protocol (ProtocolError).
    NATSIO_ERR_PROTOCOL = 300,
    /// A frame from the server could not be parsed (ParserError).
    NATSIO_ERR_PARSER = 301,
    /// A control line exceeded max_control_line (MaxControlLineExceededError).
    NATSIO_ERR_MAX_CONTROL_LINE = 302,
    /// A message is larger than the server's max_payload (MaxPayloadExceededError).
    NATSIO_ERR_MAX_PAYLOAD = 303,
    /// The server sent an -ERR not covered below (ServerError).
    NATSIO_ERR_SERVER = 304,
    /// The connection went stale (StaleConnection).
    NATSIO_ERR_STALE_CONNECTION = 305,
    /// Authentication was rejected (AuthorizationViolation).
    NATSIO_ERR_AUTHORIZATION = 306,
    /// Credentials expired or were revoked (AuthenticationExpired).
    NATSIO_ERR_AUTH_EXPIRED = 307,
    /// Publish or subscribe was denied (PermissionsViolation).
    NATSIO_ERR_PERMISSIONS = 308,
    /// The account's subscription limit was reached (MaxSubscriptionsExceeded).
    NATSIO_ERR_MAX_SUBSCRIPTIONS = 309,

    /// Nobody is subscribed to the request subject (NoRespondersError, 503).
    NATSIO_ERR_NO_RESPONDERS = 400,
    /// The message has no reply subject (NoReplySubjectError).
    NATSIO_ERR_NO_REPLY_SUBJECT = 401,
    /// The subscription is closed, or in callback mode (SubscriptionClosedError).
    NATSIO_ERR_SUBSCRIPTION_CLOSED = 402,
    /// Pending limits were exceeded (SlowConsumerError).
    NATSIO_ERR_SLOW_CONSUMER = 403,

    /// A JetStream operation failed (JetStreamError), e.g. an unexpected reply.
    NATSIO_ERR_JETSTREAM = 500,
    /// The JetStream API returned an error not covered below (APIError);
    /// `natsio_last_error` gives its code, err_code and description.
    NATSIO_ERR_JS_API = 501,
    /// JetStream is not enabled for the account or server (JetStreamNotEnabled).
    NATSIO_ERR_JS_NOT_ENABLED = 502,
    /// No stream answered a JetStream publish (NoStreamResponseError).
    NATSIO_ERR_NO_STREAM_RESPONSE = 503,
    /// The stream does not exist (StreamNotFound, err_code 10059).
    NATSIO_ERR_STREAM_NOT_FOUND = 504,
    /// A stream with this name but another configuration exists (StreamNameInUse, 10058).
    NATSIO_ERR_STREAM_NAME_IN_USE = 505,
    /// The consumer does not exist (ConsumerNotFound, 10014).
    NATSIO_ERR_CONSUMER_NOT_FOUND = 506,
    /// The stream has no such message (MessageNotFound, 10037).
    NATSIO_ERR_MESSAGE_NOT_FOUND = 507,
    /// An expected-last-sequence check failed (WrongLastSequence, 10071).
    NATSIO_ERR_WRONG_LAST_SEQUENCE = 508,
    /// Too many asynchronous publishes are awaiting acks, for longer than the
    /// stall wait (TooManyStalledMsgsError).
    NATSIO_ERR_TOO_MANY_STALLED = 509,
    /// An asynchronous publish got no ack in time (AsyncPublishTimeoutError).
    NATSIO_ERR_ASYNC_PUBLISH_TIMEOUT = 510,
    /// A fetch or next ended without a message (NoMessagesError).
    NATSIO_ERR_NO_MESSAGES = 511,
    /// The consumer was deleted while pulling from it (ConsumerDeletedError).
    NATSIO_ERR_CONSUMER_DELETED = 512,
    /// The message was already acknowledged, or terminated
    /// (MessageAlreadyAckedError).
    NATSIO_ERR_MESSAGE_ALREADY_ACKED = 513,
    /// The message did not come from a JetStream consumer: its reply
    /// subject is not an ack subject (NotJSMessageError).
    NATSIO_ERR_NOT_JS_MESSAGE = 514,

    /// The Key-Value or Object Store bucket does not exist (BucketNotFoundError).
    NATSIO_ERR_BUCKET_NOT_FOUND = 600,
    /// A bucket with this name but another configuration exists (BucketExistsError).
    NATSIO_ERR_BUCKET_EXISTS = 601,
    /// The key has no value (KeyNotFoundError).
    NATSIO_ERR_KEY_NOT_FOUND = 602,
    /// The key's latest revision is a delete or purge marker (KeyDeletedError).
    NATSIO_ERR_KEY_DELETED = 603,
    /// `create` found a live value for the key (KeyExistsError).
    NATSIO_ERR_KEY_EXISTS = 604,
    /// A bucket name outside [A-Za-z0-9_-]+ (InvalidBucketName).
    NATSIO_ERR_INVALID_BUCKET_NAME = 605,
    /// A key outside [-/_=.A-Za-z0-9]+ or with empty tokens (InvalidKey).
    NATSIO_ERR_INVALID_KEY = 606,

    /// No object of that name in the bucket (ObjectNotFoundError).
    NATSIO_ERR_OBJECT_NOT_FOUND = 700,
    /// The object was deleted: only its tombstone is left (ObjectDeletedError,
    /// a kind of ObjectNotFoundError).
    NATSIO_ERR_OBJECT_DELETED = 701,
    /// A live object already has that name (ObjectExistsError: a rename or
    /// link onto it).
    NATSIO_ERR_OBJECT_EXISTS = 702,
    /// The object read back does not match its recorded SHA-256 digest, size
    /// or chunk count (DigestMismatchError).
    NATSIO_ERR_DIGEST_MISMATCH = 703,
    /// A link that ADR-20 forbids: to a deleted object, to another link, or
    /// reading a bucket link as an object (LinkError).
    NATSIO_ERR_OBJECT_LINK = 704,
    /// An empty object name or one that is not valid UTF-8 (InvalidObjectName).
    NATSIO_ERR_INVALID_OBJECT_NAME = 705,
    /// The bucket is sealed: it can be read but no longer changed.
    NATSIO_ERR_BUCKET_SEALED = 706,
}

use natsio_status::*;

impl From<ErrorKind> for natsio_status {
    fn from(k: ErrorKind) -> Self {
        match k {
            ErrorKind::NullArgument => NATSIO_ERR_NULL_ARGUMENT,
            ErrorKind::InvalidUtf8 => NATSIO_ERR_INVALID_UTF8,
            ErrorKind::InvalidArgument => NATSIO_ERR_INVALID_ARGUMENT,
            ErrorKind::NotFound => NATSIO_ERR_NOT_FOUND,
            ErrorKind::Internal => NATSIO_ERR_INTERNAL,
            ErrorKind::BadSubject => NATSIO_ERR_BAD_SUBJECT,
            ErrorKind::BadQueueName => NATSIO_ERR_BAD_QUEUE_NAME,
            ErrorKind::BadHeaders => NATSIO_ERR_BAD_HEADERS,
            ErrorKind::Config => NATSIO_ERR_CONFIG,
            ErrorKind::IllegalState => NATSIO_ERR_ILLEGAL_STATE,
            ErrorKind::Timeout => NATSIO_ERR_TIMEOUT,
            ErrorKind::ConnectionClosed => NATSIO_ERR_CONNECTION_CLOSED,
            ErrorKind::NoServers => NATSIO_ERR_NO_SERVERS,
            ErrorKind::Io => NATSIO_ERR_IO,
            ErrorKind::DrainTimeout => NATSIO_ERR_DRAIN_TIMEOUT,
            ErrorKind::Cancelled => NATSIO_ERR_CANCELLED,
            ErrorKind::ReconnectBufExceeded => NATSIO_ERR_RECONNECT_BUF_EXCEEDED,
            ErrorKind::Protocol => NATSIO_ERR_PROTOCOL,
            ErrorKind::Parser => NATSIO_ERR_PARSER,
            ErrorKind::MaxControlLineExceeded => NATSIO_ERR_MAX_CONTROL_LINE,
            ErrorKind::MaxPayloadExceeded => NATSIO_ERR_MAX_PAYLOAD,
            ErrorKind::Server => NATSIO_ERR_SERVER,
            ErrorKind::StaleConnection => NATSIO_ERR_STALE_CONNECTION,
            ErrorKind::AuthorizationViolation => NATSIO_ERR_AUTHORIZATION,
            ErrorKind::AuthenticationExpired => NATSIO_ERR_AUTH_EXPIRED,
            ErrorKind::PermissionsViolation => NATSIO_ERR_PERMISSIONS,
            ErrorKind::MaxSubscriptionsExceeded => NATSIO_ERR_MAX_SUBSCRIPTIONS,
            ErrorKind::NoResponders => NATSIO_ERR_NO_RESPONDERS,
            ErrorKind::NoReplySubject => NATSIO_ERR_NO_REPLY_SUBJECT,
            ErrorKind::SubscriptionClosed => NATSIO_ERR_SUBSCRIPTION_CLOSED,
            ErrorKind::SlowConsumer => NATSIO_ERR_SLOW_CONSUMER,
            ErrorKind::JetStream => NATSIO_ERR_JETSTREAM,
            ErrorKind::JetStreamApi => NATSIO_ERR_JS_API,
            ErrorKind::JetStreamNotEnabled => NATSIO_ERR_JS_NOT_ENABLED,
            ErrorKind::NoStreamResponse => NATSIO_ERR_NO_STREAM_RESPONSE,
            ErrorKind::StreamNotFound => NATSIO_ERR_STREAM_NOT_FOUND,
            ErrorKind::StreamNameInUse => NATSIO_ERR_STREAM_NAME_IN_USE,
            ErrorKind::ConsumerNotFound => NATSIO_ERR_CONSUMER_NOT_FOUND,
            ErrorKind::MessageNotFound => NATSIO_ERR_MESSAGE_NOT_FOUND,
            ErrorKind::WrongLastSequence => NATSIO_ERR_WRONG_LAST_SEQUENCE,
            ErrorKind::TooManyStalledMsgs => NATSIO_ERR_TOO_MANY_STALLED,
            ErrorKind::AsyncPublishTimeout => NATSIO_ERR_ASYNC_PUBLISH_TIMEOUT,
            ErrorKind::NoMessages => NATSIO_ERR_NO_MESSAGES,
            ErrorKind::ConsumerDeleted => NATSIO_ERR_CONSUMER_DELETED,
            ErrorKind::MessageAlreadyAcked => NATSIO_ERR_MESSAGE_ALREADY_ACKED,
            ErrorKind::NotJsMessage => NATSIO_ERR_NOT_JS_MESSAGE,
            ErrorKind::BucketNotFound => NATSIO_ERR_BUCKET_NOT_FOUND,
            ErrorKind::BucketExists => NATSIO_ERR_BUCKET_EXISTS,
            ErrorKind::KeyNotFound => NATSIO_ERR_KEY_NOT_FOUND,
            ErrorKind::KeyDeleted => NATSIO_ERR_KEY_DELETED,
            ErrorKind::KeyExists => NATSIO_ERR_KEY_EXISTS,
            ErrorKind::InvalidBucketName => NATSIO_ERR_INVALID_BUCKET_NAME,
            ErrorKind::InvalidKey => NATSIO_ERR_INVALID_KEY,
            ErrorKind::ObjectNotFound => NATSIO_ERR_OBJECT_NOT_FOUND,
            ErrorKind::ObjectDeleted => NATSIO_ERR_OBJECT_DELETED,
            ErrorKind::ObjectExists => NATSIO_ERR_OBJECT_EXISTS,
            ErrorKind::DigestMismatch => NATSIO_ERR_DIGEST_MISMATCH,
            ErrorKind::ObjectLink => NATSIO_ERR_OBJECT_LINK,
            ErrorKind::InvalidObjectName => NATSIO_ERR_INVALID_OBJECT_NAME,
            ErrorKind::BucketSealed => NATSIO_ERR_BUCKET_SEALED,
        }
    }
}

fn describe(code: i32) -> &'static str {
    const TABLE: &[(natsio_status, &str)] = &[
        (NATSIO_OK, "ok\0"),
        (NATSIO_DONE, "done: no more items\0"),
        (NATSIO_PENDING, "pending: the operation has not completed\0"),
        (
            NATSIO_ERR_NULL_ARGUMENT,
            "a required pointer argument was NULL\0",
        ),
        (
            NATSIO_ERR_INVALID_UTF8,
            "a string argument was not valid UTF-8\0",
        ),
        (NATSIO_ERR_INVALID_ARGUMENT, "invalid argument\0"),
        (NATSIO_ERR_BAD_SUBJECT, "invalid subject\0"),
        (NATSIO_ERR_BAD_QUEUE_NAME, "invalid queue group name\0"),
        (NATSIO_ERR_BAD_HEADERS, "invalid header name or value\0"),
        (NATSIO_ERR_CONFIG, "invalid configuration\0"),
        (
            NATSIO_ERR_ILLEGAL_STATE,
            "not allowed in the current state\0",
        ),
        (NATSIO_ERR_NOT_FOUND, "not found\0"),
        (NATSIO_ERR_INTERNAL, "internal error\0"),
        (NATSIO_ERR_TIMEOUT, "timeout\0"),
        (NATSIO_ERR_CONNECTION_CLOSED, "connection closed\0"),
        (NATSIO_ERR_NO_SERVERS, "no servers available\0"),
        (NATSIO_ERR_IO, "I/O error\0"),
        (NATSIO_ERR_DRAIN_TIMEOUT, "drain timeout\0"),
        (NATSIO_ERR_CANCELLED, "cancelled\0"),
        (
            NATSIO_ERR_RECONNECT_BUF_EXCEEDED,
            "reconnect buffer exceeded\0",
        ),
        (NATSIO_ERR_PROTOCOL, "protocol error\0"),
        (NATSIO_ERR_PARSER, "parser error\0"),
        (
            NATSIO_ERR_MAX_CONTROL_LINE,
            "maximum control line exceeded\0",
        ),
        (NATSIO_ERR_MAX_PAYLOAD, "maximum payload exceeded\0"),
        (NATSIO_ERR_SERVER, "server error\0"),
        (NATSIO_ERR_STALE_CONNECTION, "stale connection\0"),
        (NATSIO_ERR_AUTHORIZATION, "authorization violation\0"),
        (NATSIO_ERR_AUTH_EXPIRED, "authentication expired\0"),
        (NATSIO_ERR_PERMISSIONS, "permissions violation\0"),
        (
            NATSIO_ERR_MAX_SUBSCRIPTIONS,
            "maximum subscriptions exceeded\0",
        ),
        (NATSIO_ERR_NO_RESPONDERS, "no responders\0"),
        (
            NATSIO_ERR_NO_REPLY_SUBJECT,
            "message has no reply subject\0",
        ),
        (NATSIO_ERR_SUBSCRIPTION_CLOSED, "subscription closed\0"),
        (NATSIO_ERR_SLOW_CONSUMER, "slow consumer\0"),
        (NATSIO_ERR_JETSTREAM, "JetStream error\0"),
        (NATSIO_ERR_JS_API, "JetStream API error\0"),
        (NATSIO_ERR_JS_NOT_ENABLED, "JetStream not enabled\0"),
        (NATSIO_ERR_NO_STREAM_RESPONSE, "no response from stream\0"),
        (NATSIO_ERR_STREAM_NOT_FOUND, "stream not found\0"),
        (
            NATSIO_ERR_STREAM_NAME_IN_USE,
            "stream name already in use\0",
        ),
        (NATSIO_ERR_CONSUMER_NOT_FOUND, "consumer not found\0"),
        (NATSIO_ERR_MESSAGE_NOT_FOUND, "message not found\0"),
        (NATSIO_ERR_WRONG_LAST_SEQUENCE, "wrong last sequence\0"),
        (
            NATSIO_ERR_TOO_MANY_STALLED,
            "too many stalled async publishes\0",
        ),
        (
            NATSIO_ERR_ASYNC_PUBLISH_TIMEOUT,
            "async publish timed out\0",
        ),
        (NATSIO_ERR_NO_MESSAGES, "no messages\0"),
        (NATSIO_ERR_CONSUMER_DELETED, "consumer deleted\0"),
        (
            NATSIO_ERR_MESSAGE_ALREADY_ACKED,
            "message already acknowledged\0",
        ),
        (NATSIO_ERR_NOT_JS_MESSAGE, "not a JetStream message\0"),
        (NATSIO_ERR_BUCKET_NOT_FOUND, "bucket not found\0"),
        (NATSIO_ERR_BUCKET_EXISTS, "bucket exists\0"),
        (NATSIO_ERR_KEY_NOT_FOUND, "key not found\0"),
        (NATSIO_ERR_KEY_DELETED, "key deleted\0"),
        (NATSIO_ERR_KEY_EXISTS, "key exists\0"),
        (NATSIO_ERR_INVALID_BUCKET_NAME, "invalid bucket name\0"),
        (NATSIO_ERR_INVALID_KEY, "invalid key\0"),
        (NATSIO_ERR_OBJECT_NOT_FOUND, "object not found\0"),
        (NATSIO_ERR_OBJECT_DELETED, "object deleted\0"),
        (NATSIO_ERR_OBJECT_EXISTS, "object exists\0"),
        (NATSIO_ERR_DIGEST_MISMATCH, "object digest mismatch\0"),
        (NATSIO_ERR_OBJECT_LINK, "invalid object link\0"),
        (NATSIO_ERR_INVALID_OBJECT_NAME, "invalid object name\0"),
        (NATSIO_ERR_BUCKET_SEALED, "bucket is sealed\0"),
    ];
    TABLE
        .iter()
        .find(|(s, _)| *s as i32 == code)
        .map_or("unknown status code\0", |(_, d)| d)
}

thread_local! {
    static LAST_ERROR: RefCell<CString> = RefCell::new(CString::default());
}

/// Records `e` as this thread's last error and returns its status.
pub(crate) fn record(e: &Error) -> natsio_status {
    let status = natsio_status::from(e.kind());
    let text = CString::new(e.detail().replace('\0', " ")).unwrap_or_default();
    LAST_ERROR.with(|l| *l.borrow_mut() = text);
    status
}

/// A short English description of a status code (never NULL; unknown codes
/// give "unknown status code"). The string is static.
#[no_mangle]
pub extern "C" fn natsio_status_str(status: i32) -> *const c_char {
    describe(status).as_ptr().cast()
}

/// The detail of the last failure on the calling thread (server text,
/// which argument was wrong, ...), or "" if none. Successful calls leave it
/// unchanged. The string belongs to the library and stays valid until the
/// next failing natsio call on this thread.
#[no_mangle]
pub extern "C" fn natsio_last_error() -> *const c_char {
    LAST_ERROR.with(|l| l.borrow().as_ptr())
}
