//! Status codes, grouped by subsystem, and the per-thread error detail.

use std::cell::{Cell, RefCell};
use std::ffi::{c_char, CString};

use crate::error::{Error, ErrorData, ErrorKind};

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
    /// The WebSocket upgrade failed (not a WebSocket endpoint, wrong path,
    /// bad Sec-WebSocket-Accept) or the server broke the framing (RSV bits
    /// set, a frame over 64 MiB, a masked frame).
    NATSIO_ERR_WEBSOCKET = 310,

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
    /// An expected-last-sequence check failed (WrongLastSequence, 10071;
    /// 10164 from a replicated stream).
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
            ErrorKind::Websocket => NATSIO_ERR_WEBSOCKET,
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

/// One row of the status table: the code, its name without the
/// `NATSIO_ERR_` prefix, its description and its parents in the reference
/// client's error tree (`ConfigError` above the bad-name errors,
/// `TimeoutError` and `JetStreamError` above `NoMessagesError`, ...). The
/// one table every binding's error classes follow: C++ is checked against
/// it, Go and Node build their class trees from it at load.
struct StatusEntry {
    status: natsio_status,
    name: &'static str,
    text: &'static str,
    parents: &'static [natsio_status],
}

const STATUS_TABLE: &[StatusEntry] = &[
    StatusEntry {
        status: NATSIO_OK,
        name: "OK\0",
        text: "ok\0",
        parents: &[],
    },
    StatusEntry {
        status: NATSIO_DONE,
        name: "DONE\0",
        text: "done: no more items\0",
        parents: &[],
    },
    StatusEntry {
        status: NATSIO_PENDING,
        name: "PENDING\0",
        text: "pending: the operation has not completed\0",
        parents: &[],
    },
    StatusEntry {
        status: NATSIO_ERR_NULL_ARGUMENT,
        name: "NULL_ARGUMENT\0",
        text: "a required pointer argument was NULL\0",
        parents: &[NATSIO_ERR_INVALID_ARGUMENT],
    },
    StatusEntry {
        status: NATSIO_ERR_INVALID_UTF8,
        name: "INVALID_UTF8\0",
        text: "a string argument was not valid UTF-8\0",
        parents: &[NATSIO_ERR_INVALID_ARGUMENT],
    },
    StatusEntry {
        status: NATSIO_ERR_INVALID_ARGUMENT,
        name: "INVALID_ARGUMENT\0",
        text: "invalid argument\0",
        parents: &[],
    },
    StatusEntry {
        status: NATSIO_ERR_BAD_SUBJECT,
        name: "BAD_SUBJECT\0",
        text: "invalid subject\0",
        parents: &[],
    },
    StatusEntry {
        status: NATSIO_ERR_BAD_QUEUE_NAME,
        name: "BAD_QUEUE_NAME\0",
        text: "invalid queue group name\0",
        parents: &[],
    },
    StatusEntry {
        status: NATSIO_ERR_BAD_HEADERS,
        name: "BAD_HEADERS\0",
        text: "invalid header name or value\0",
        parents: &[],
    },
    StatusEntry {
        status: NATSIO_ERR_CONFIG,
        name: "CONFIG\0",
        text: "invalid configuration\0",
        parents: &[],
    },
    StatusEntry {
        status: NATSIO_ERR_ILLEGAL_STATE,
        name: "ILLEGAL_STATE\0",
        text: "not allowed in the current state\0",
        parents: &[],
    },
    StatusEntry {
        status: NATSIO_ERR_NOT_FOUND,
        name: "NOT_FOUND\0",
        text: "not found\0",
        parents: &[],
    },
    StatusEntry {
        status: NATSIO_ERR_INTERNAL,
        name: "INTERNAL\0",
        text: "internal error\0",
        parents: &[],
    },
    StatusEntry {
        status: NATSIO_ERR_TIMEOUT,
        name: "TIMEOUT\0",
        text: "timeout\0",
        parents: &[],
    },
    StatusEntry {
        status: NATSIO_ERR_CONNECTION_CLOSED,
        name: "CONNECTION_CLOSED\0",
        text: "connection closed\0",
        parents: &[],
    },
    StatusEntry {
        status: NATSIO_ERR_NO_SERVERS,
        name: "NO_SERVERS\0",
        text: "no servers available\0",
        parents: &[NATSIO_ERR_CONNECTION_CLOSED],
    },
    StatusEntry {
        status: NATSIO_ERR_IO,
        name: "IO\0",
        text: "I/O error\0",
        parents: &[],
    },
    StatusEntry {
        status: NATSIO_ERR_DRAIN_TIMEOUT,
        name: "DRAIN_TIMEOUT\0",
        text: "drain timeout\0",
        parents: &[NATSIO_ERR_TIMEOUT],
    },
    StatusEntry {
        status: NATSIO_ERR_CANCELLED,
        name: "CANCELLED\0",
        text: "cancelled\0",
        parents: &[],
    },
    StatusEntry {
        status: NATSIO_ERR_RECONNECT_BUF_EXCEEDED,
        name: "RECONNECT_BUF_EXCEEDED\0",
        text: "reconnect buffer exceeded\0",
        parents: &[],
    },
    StatusEntry {
        status: NATSIO_ERR_PROTOCOL,
        name: "PROTOCOL\0",
        text: "protocol error\0",
        parents: &[],
    },
    StatusEntry {
        status: NATSIO_ERR_PARSER,
        name: "PARSER\0",
        text: "parser error\0",
        parents: &[NATSIO_ERR_PROTOCOL],
    },
    StatusEntry {
        status: NATSIO_ERR_MAX_CONTROL_LINE,
        name: "MAX_CONTROL_LINE\0",
        text: "maximum control line exceeded\0",
        parents: &[NATSIO_ERR_PARSER],
    },
    StatusEntry {
        status: NATSIO_ERR_MAX_PAYLOAD,
        name: "MAX_PAYLOAD\0",
        text: "maximum payload exceeded\0",
        parents: &[NATSIO_ERR_PROTOCOL],
    },
    StatusEntry {
        status: NATSIO_ERR_SERVER,
        name: "SERVER\0",
        text: "server error\0",
        parents: &[],
    },
    StatusEntry {
        status: NATSIO_ERR_STALE_CONNECTION,
        name: "STALE_CONNECTION\0",
        text: "stale connection\0",
        parents: &[NATSIO_ERR_SERVER],
    },
    StatusEntry {
        status: NATSIO_ERR_AUTHORIZATION,
        name: "AUTHORIZATION\0",
        text: "authorization violation\0",
        parents: &[NATSIO_ERR_SERVER],
    },
    StatusEntry {
        status: NATSIO_ERR_AUTH_EXPIRED,
        name: "AUTH_EXPIRED\0",
        text: "authentication expired\0",
        parents: &[NATSIO_ERR_SERVER],
    },
    StatusEntry {
        status: NATSIO_ERR_PERMISSIONS,
        name: "PERMISSIONS\0",
        text: "permissions violation\0",
        parents: &[NATSIO_ERR_SERVER],
    },
    StatusEntry {
        status: NATSIO_ERR_MAX_SUBSCRIPTIONS,
        name: "MAX_SUBSCRIPTIONS\0",
        text: "maximum subscriptions exceeded\0",
        parents: &[NATSIO_ERR_SERVER],
    },
    StatusEntry {
        status: NATSIO_ERR_WEBSOCKET,
        name: "WEBSOCKET\0",
        text: "websocket error\0",
        parents: &[NATSIO_ERR_PROTOCOL],
    },
    StatusEntry {
        status: NATSIO_ERR_NO_RESPONDERS,
        name: "NO_RESPONDERS\0",
        text: "no responders\0",
        parents: &[],
    },
    StatusEntry {
        status: NATSIO_ERR_NO_REPLY_SUBJECT,
        name: "NO_REPLY_SUBJECT\0",
        text: "message has no reply subject\0",
        parents: &[],
    },
    StatusEntry {
        status: NATSIO_ERR_SUBSCRIPTION_CLOSED,
        name: "SUBSCRIPTION_CLOSED\0",
        text: "subscription closed\0",
        parents: &[],
    },
    StatusEntry {
        status: NATSIO_ERR_SLOW_CONSUMER,
        name: "SLOW_CONSUMER\0",
        text: "slow consumer\0",
        parents: &[],
    },
    StatusEntry {
        status: NATSIO_ERR_JETSTREAM,
        name: "JETSTREAM\0",
        text: "JetStream error\0",
        parents: &[],
    },
    StatusEntry {
        status: NATSIO_ERR_JS_API,
        name: "JS_API\0",
        text: "JetStream API error\0",
        parents: &[NATSIO_ERR_JETSTREAM],
    },
    StatusEntry {
        status: NATSIO_ERR_JS_NOT_ENABLED,
        name: "JS_NOT_ENABLED\0",
        text: "JetStream not enabled\0",
        parents: &[NATSIO_ERR_JS_API],
    },
    StatusEntry {
        status: NATSIO_ERR_NO_STREAM_RESPONSE,
        name: "NO_STREAM_RESPONSE\0",
        text: "no response from stream\0",
        parents: &[NATSIO_ERR_JETSTREAM],
    },
    StatusEntry {
        status: NATSIO_ERR_STREAM_NOT_FOUND,
        name: "STREAM_NOT_FOUND\0",
        text: "stream not found\0",
        parents: &[NATSIO_ERR_JS_API],
    },
    StatusEntry {
        status: NATSIO_ERR_STREAM_NAME_IN_USE,
        name: "STREAM_NAME_IN_USE\0",
        text: "stream name already in use\0",
        parents: &[NATSIO_ERR_JS_API],
    },
    StatusEntry {
        status: NATSIO_ERR_CONSUMER_NOT_FOUND,
        name: "CONSUMER_NOT_FOUND\0",
        text: "consumer not found\0",
        parents: &[NATSIO_ERR_JS_API],
    },
    StatusEntry {
        status: NATSIO_ERR_MESSAGE_NOT_FOUND,
        name: "MESSAGE_NOT_FOUND\0",
        text: "message not found\0",
        parents: &[NATSIO_ERR_JS_API],
    },
    StatusEntry {
        status: NATSIO_ERR_WRONG_LAST_SEQUENCE,
        name: "WRONG_LAST_SEQUENCE\0",
        text: "wrong last sequence\0",
        parents: &[NATSIO_ERR_JS_API],
    },
    StatusEntry {
        status: NATSIO_ERR_TOO_MANY_STALLED,
        name: "TOO_MANY_STALLED\0",
        text: "too many stalled async publishes\0",
        parents: &[NATSIO_ERR_JETSTREAM],
    },
    StatusEntry {
        status: NATSIO_ERR_ASYNC_PUBLISH_TIMEOUT,
        name: "ASYNC_PUBLISH_TIMEOUT\0",
        text: "async publish timed out\0",
        parents: &[NATSIO_ERR_JETSTREAM, NATSIO_ERR_TIMEOUT],
    },
    StatusEntry {
        status: NATSIO_ERR_NO_MESSAGES,
        name: "NO_MESSAGES\0",
        text: "no messages\0",
        parents: &[NATSIO_ERR_JETSTREAM, NATSIO_ERR_TIMEOUT],
    },
    StatusEntry {
        status: NATSIO_ERR_CONSUMER_DELETED,
        name: "CONSUMER_DELETED\0",
        text: "consumer deleted\0",
        parents: &[NATSIO_ERR_JETSTREAM],
    },
    StatusEntry {
        status: NATSIO_ERR_MESSAGE_ALREADY_ACKED,
        name: "MESSAGE_ALREADY_ACKED\0",
        text: "message already acknowledged\0",
        parents: &[NATSIO_ERR_JETSTREAM],
    },
    StatusEntry {
        status: NATSIO_ERR_NOT_JS_MESSAGE,
        name: "NOT_JS_MESSAGE\0",
        text: "not a JetStream message\0",
        parents: &[NATSIO_ERR_JETSTREAM],
    },
    StatusEntry {
        status: NATSIO_ERR_BUCKET_NOT_FOUND,
        name: "BUCKET_NOT_FOUND\0",
        text: "bucket not found\0",
        parents: &[NATSIO_ERR_JETSTREAM],
    },
    StatusEntry {
        status: NATSIO_ERR_BUCKET_EXISTS,
        name: "BUCKET_EXISTS\0",
        text: "bucket exists\0",
        parents: &[NATSIO_ERR_JETSTREAM],
    },
    StatusEntry {
        status: NATSIO_ERR_KEY_NOT_FOUND,
        name: "KEY_NOT_FOUND\0",
        text: "key not found\0",
        parents: &[NATSIO_ERR_JETSTREAM],
    },
    StatusEntry {
        status: NATSIO_ERR_KEY_DELETED,
        name: "KEY_DELETED\0",
        text: "key deleted\0",
        parents: &[NATSIO_ERR_KEY_NOT_FOUND],
    },
    StatusEntry {
        status: NATSIO_ERR_KEY_EXISTS,
        name: "KEY_EXISTS\0",
        text: "key exists\0",
        parents: &[NATSIO_ERR_JETSTREAM],
    },
    StatusEntry {
        status: NATSIO_ERR_INVALID_BUCKET_NAME,
        name: "INVALID_BUCKET_NAME\0",
        text: "invalid bucket name\0",
        parents: &[NATSIO_ERR_CONFIG],
    },
    StatusEntry {
        status: NATSIO_ERR_INVALID_KEY,
        name: "INVALID_KEY\0",
        text: "invalid key\0",
        parents: &[NATSIO_ERR_CONFIG],
    },
    StatusEntry {
        status: NATSIO_ERR_OBJECT_NOT_FOUND,
        name: "OBJECT_NOT_FOUND\0",
        text: "object not found\0",
        parents: &[NATSIO_ERR_JETSTREAM],
    },
    StatusEntry {
        status: NATSIO_ERR_OBJECT_DELETED,
        name: "OBJECT_DELETED\0",
        text: "object deleted\0",
        parents: &[NATSIO_ERR_OBJECT_NOT_FOUND],
    },
    StatusEntry {
        status: NATSIO_ERR_OBJECT_EXISTS,
        name: "OBJECT_EXISTS\0",
        text: "object exists\0",
        parents: &[NATSIO_ERR_JETSTREAM],
    },
    StatusEntry {
        status: NATSIO_ERR_DIGEST_MISMATCH,
        name: "DIGEST_MISMATCH\0",
        text: "object digest mismatch\0",
        parents: &[NATSIO_ERR_JETSTREAM],
    },
    StatusEntry {
        status: NATSIO_ERR_OBJECT_LINK,
        name: "OBJECT_LINK\0",
        text: "invalid object link\0",
        parents: &[NATSIO_ERR_JETSTREAM],
    },
    StatusEntry {
        status: NATSIO_ERR_INVALID_OBJECT_NAME,
        name: "INVALID_OBJECT_NAME\0",
        text: "invalid object name\0",
        parents: &[NATSIO_ERR_CONFIG],
    },
    StatusEntry {
        status: NATSIO_ERR_BUCKET_SEALED,
        name: "BUCKET_SEALED\0",
        text: "bucket is sealed\0",
        parents: &[NATSIO_ERR_JETSTREAM],
    },
];

fn entry(code: i32) -> Option<&'static StatusEntry> {
    STATUS_TABLE.iter().find(|e| e.status as i32 == code)
}

fn describe(code: i32) -> &'static str {
    entry(code).map_or("unknown status code\0", |e| e.text)
}

thread_local! {
    static LAST_ERROR: RefCell<CString> = RefCell::new(CString::default());
    static LAST_ERROR_DATA: Cell<ErrorData> = Cell::new(ErrorData::default());
}

/// Records `e` as this thread's last error and returns its status.
pub(crate) fn record(e: &Error) -> natsio_status {
    let status = natsio_status::from(e.kind());
    let text = CString::new(e.detail().replace('\0', " ")).unwrap_or_default();
    LAST_ERROR.with(|l| *l.borrow_mut() = text);
    LAST_ERROR_DATA.with(|d| d.set(e.data()));
    status
}

/// A short English description of a status code (never NULL; unknown codes
/// give "unknown status code"). The string is static.
#[no_mangle]
pub extern "C" fn natsio_status_str(status: i32) -> *const c_char {
    describe(status).as_ptr().cast()
}

/// The name of a status code without its prefix: "TIMEOUT" for
/// NATSIO_ERR_TIMEOUT, "OK", "DONE" and "PENDING" for the others; "" for a
/// code this library does not know. The string is static. Bindings name
/// their error classes after it.
#[no_mangle]
pub extern "C" fn natsio_status_name(status: i32) -> *const c_char {
    entry(status).map_or("\0", |e| e.name).as_ptr().cast()
}

/// The `index`-th (0 or 1) parent of `status` in the error tree of the
/// reference client, or NATSIO_OK when it has no such parent (a root of
/// the tree, NATSIO_OK/DONE/PENDING, an unknown code, an index past the
/// last parent). The tree: NATSIO_ERR_NO_SERVERS is a kind of
/// NATSIO_ERR_CONNECTION_CLOSED, NATSIO_ERR_DRAIN_TIMEOUT of
/// NATSIO_ERR_TIMEOUT, NATSIO_ERR_NO_MESSAGES and
/// NATSIO_ERR_ASYNC_PUBLISH_TIMEOUT of both NATSIO_ERR_JETSTREAM and
/// NATSIO_ERR_TIMEOUT, the API errors (stream/consumer/message not found,
/// ...) of NATSIO_ERR_JS_API, itself a kind of NATSIO_ERR_JETSTREAM, the
/// invalid-name errors of NATSIO_ERR_CONFIG, and so on
/// (tests/conformance/cases.txt lists every code's ancestors). Never fails.
#[no_mangle]
pub extern "C" fn natsio_status_parent(status: i32, index: usize) -> natsio_status {
    entry(status)
        .and_then(|e| e.parents.get(index).copied())
        .unwrap_or(NATSIO_OK)
}

/// True when `status` is `ancestor` or a kind of it, directly or through
/// other parents (see `natsio_status_parent`): a program that handles
/// every timeout checks `natsio_status_is(st, NATSIO_ERR_TIMEOUT)`, which
/// also holds for NATSIO_ERR_NO_MESSAGES. Never fails.
#[no_mangle]
pub extern "C" fn natsio_status_is(status: i32, ancestor: i32) -> bool {
    status == ancestor
        || entry(status).is_some_and(|e| {
            e.parents
                .iter()
                .any(|&p| natsio_status_is(p as i32, ancestor))
        })
}

/// The detail of the last failure on the calling thread (server text,
/// which argument was wrong, ...), or "" if none. Successful calls leave it
/// unchanged. The string belongs to the library and stays valid until the
/// next failing natsio call on this thread.
#[no_mangle]
pub extern "C" fn natsio_last_error() -> *const c_char {
    LAST_ERROR.with(|l| l.borrow().as_ptr())
}

/// The `code` of the JetStream API error of the last failure on the
/// calling thread (an HTTP-like status: 400, 404, 503), or 0 when that
/// failure was not a rejection by the JetStream API. Set with
/// `natsio_last_error`, by the failing call or by the token reader
/// (`natsio_token_status`, ...) that reported it.
#[no_mangle]
pub extern "C" fn natsio_last_error_code() -> i32 {
    LAST_ERROR_DATA.with(|d| i32::try_from(d.get().code).unwrap_or(i32::MAX))
}

/// The `err_code` of the JetStream API error of the last failure on the
/// calling thread (10059: stream not found, 10058: stream name in use,
/// 10071: wrong last sequence, ...), or 0 when none. As
/// `natsio_last_error_code`.
#[no_mangle]
pub extern "C" fn natsio_last_error_err_code() -> i32 {
    LAST_ERROR_DATA.with(|d| i32::try_from(d.get().err_code).unwrap_or(i32::MAX))
}

/// The key revision the last failure on the calling thread is about: for
/// NATSIO_ERR_KEY_DELETED the revision of the delete or purge marker, for
/// NATSIO_ERR_KEY_EXISTS the revision of the live value; 0 for other
/// failures. As `natsio_last_error_code`.
#[no_mangle]
pub extern "C" fn natsio_last_error_revision() -> u64 {
    LAST_ERROR_DATA.with(|d| d.get().revision)
}
