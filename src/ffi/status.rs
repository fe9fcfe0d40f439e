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
    /// From a JetStream call: nobody answered its API request, e.g. a
    /// stream or consumer without a leader during an election (retry), or
    /// a server without JetStream.
    NATSIO_ERR_NO_RESPONDERS = 400,
    /// The message has no reply subject (NoReplySubjectError).
    NATSIO_ERR_NO_REPLY_SUBJECT = 401,
    /// The subscription or iterator was stopped (SubscriptionClosedError):
    /// a drain cut short by a stop, an end token or an unsubscribe count
    /// asked of a stopped one. Reading a stopped iterator is no error (it
    /// ends: NATSIO_DONE); reading one in callback mode is
    /// NATSIO_ERR_ILLEGAL_STATE.
    NATSIO_ERR_SUBSCRIPTION_CLOSED = 402,
    /// Pending limits were exceeded (SlowConsumerError).
    NATSIO_ERR_SLOW_CONSUMER = 403,

    /// A JetStream operation failed (JetStreamError), e.g. an unexpected reply.
    NATSIO_ERR_JETSTREAM = 500,
    /// The JetStream API returned an error not covered below (APIError);
    /// `natsio_last_error` gives its code, err_code and description.
    NATSIO_ERR_JS_API = 501,
    /// JetStream is not enabled for the account or server (JetStreamNotEnabled):
    /// the server says so (err_code 10039 or 10076), or nobody answers
    /// natsio_js_account_info.
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
    /// A Key-Value codec chain was built from no codecs (NoCodecsError).
    NATSIO_ERR_KV_NO_CODECS = 607,
    /// A watch or key listing filter has wildcard tokens and the bucket's
    /// key codec cannot encode filters (WildcardNotSupportedError).
    NATSIO_ERR_KV_WILDCARD_NOT_SUPPORTED = 608,
    /// The bucket's key codec failed to encode a key (KeyEncodeFailedError).
    NATSIO_ERR_KV_KEY_ENCODE_FAILED = 609,
    /// The bucket's key codec failed to decode a stored key
    /// (KeyDecodeFailedError).
    NATSIO_ERR_KV_KEY_DECODE_FAILED = 610,
    /// The bucket's value codec failed to encode a value
    /// (ValueEncodeFailedError).
    NATSIO_ERR_KV_VALUE_ENCODE_FAILED = 611,
    /// The bucket's value codec failed to decode a stored value
    /// (ValueDecodeFailedError).
    NATSIO_ERR_KV_VALUE_DECODE_FAILED = 612,
    /// The bucket's key codec failed to encode a filter
    /// (FilterEncodeFailedError).
    NATSIO_ERR_KV_FILTER_ENCODE_FAILED = 613,

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

    /// A service, group or endpoint configuration ADR-32 refuses: a name
    /// outside [A-Za-z0-9_-]+, a version that is not SemVer, a bad subject
    /// or queue group (ServiceConfigError).
    NATSIO_ERR_SERVICE_CONFIG = 800,
}

use natsio_status::*;

/// One row of the status table: the code, its description and its
/// parents in the reference client's error tree (`ConfigError` above the
/// bad-name errors, `TimeoutError` and `JetStreamError` above
/// `NoMessagesError`, ...). The one table every binding's error classes
/// follow: C++ is checked against it, Go and Node build their class trees
/// from it at load.
struct StatusEntry {
    status: natsio_status,
    /// The variant's name, NUL-terminated (`name` strips its prefix).
    full_name: &'static str,
    text: &'static str,
    parents: &'static [natsio_status],
}

impl StatusEntry {
    /// The name without `NATSIO_ERR_` (or `NATSIO_`), NUL-terminated.
    fn name(&self) -> &'static str {
        let n = self.full_name;
        n.strip_prefix("NATSIO_ERR_")
            .or_else(|| n.strip_prefix("NATSIO_"))
            .unwrap_or(n)
    }
}

/// The one list of statuses: each variant of `natsio_status` with the
/// `ErrorKind` it reports (none for OK, DONE and PENDING), its text and its
/// parents. It makes `STATUS_TABLE` and `From<ErrorKind>` (whose match is
/// exhaustive: a kind without a status does not compile). The enum stays
/// written out above, for cbindgen, which expands no macros;
/// `every_status_is_in_the_table_once` ties the two.
macro_rules! statuses {
    ($($status:ident $(<= $kind:ident)? : $text:literal $(, parents: [$($parent:ident),+])? ;)+) => {
        const STATUS_TABLE: &[StatusEntry] = &[$(
            StatusEntry {
                status: $status,
                full_name: concat!(stringify!($status), "\0"),
                text: concat!($text, "\0"),
                parents: &[$($($parent),+)?],
            },
        )+];

        impl From<ErrorKind> for natsio_status {
            fn from(k: ErrorKind) -> Self {
                match k {
                    $($(ErrorKind::$kind => $status,)?)+
                }
            }
        }
    };
}

statuses! {
    NATSIO_OK: "ok";
    NATSIO_DONE: "done: no more items";
    NATSIO_PENDING: "pending: the operation has not completed";
    NATSIO_ERR_NULL_ARGUMENT <= NullArgument: "a required pointer argument was NULL", parents: [NATSIO_ERR_INVALID_ARGUMENT];
    NATSIO_ERR_INVALID_UTF8 <= InvalidUtf8: "a string argument was not valid UTF-8", parents: [NATSIO_ERR_INVALID_ARGUMENT];
    NATSIO_ERR_INVALID_ARGUMENT <= InvalidArgument: "invalid argument";
    NATSIO_ERR_BAD_SUBJECT <= BadSubject: "invalid subject";
    NATSIO_ERR_BAD_QUEUE_NAME <= BadQueueName: "invalid queue group name";
    NATSIO_ERR_BAD_HEADERS <= BadHeaders: "invalid header name or value";
    NATSIO_ERR_CONFIG <= Config: "invalid configuration";
    NATSIO_ERR_ILLEGAL_STATE <= IllegalState: "not allowed in the current state";
    NATSIO_ERR_NOT_FOUND <= NotFound: "not found";
    NATSIO_ERR_INTERNAL <= Internal: "internal error";
    NATSIO_ERR_TIMEOUT <= Timeout: "timeout";
    NATSIO_ERR_CONNECTION_CLOSED <= ConnectionClosed: "connection closed";
    NATSIO_ERR_NO_SERVERS <= NoServers: "no servers available", parents: [NATSIO_ERR_CONNECTION_CLOSED];
    NATSIO_ERR_IO <= Io: "I/O error";
    NATSIO_ERR_DRAIN_TIMEOUT <= DrainTimeout: "drain timeout", parents: [NATSIO_ERR_TIMEOUT];
    NATSIO_ERR_CANCELLED <= Cancelled: "cancelled";
    NATSIO_ERR_RECONNECT_BUF_EXCEEDED <= ReconnectBufExceeded: "reconnect buffer exceeded";
    NATSIO_ERR_PROTOCOL <= Protocol: "protocol error";
    NATSIO_ERR_PARSER <= Parser: "parser error", parents: [NATSIO_ERR_PROTOCOL];
    NATSIO_ERR_MAX_CONTROL_LINE <= MaxControlLineExceeded: "maximum control line exceeded", parents: [NATSIO_ERR_PARSER];
    NATSIO_ERR_MAX_PAYLOAD <= MaxPayloadExceeded: "maximum payload exceeded", parents: [NATSIO_ERR_PROTOCOL];
    NATSIO_ERR_SERVER <= Server: "server error";
    NATSIO_ERR_STALE_CONNECTION <= StaleConnection: "stale connection", parents: [NATSIO_ERR_SERVER];
    NATSIO_ERR_AUTHORIZATION <= AuthorizationViolation: "authorization violation", parents: [NATSIO_ERR_SERVER];
    NATSIO_ERR_AUTH_EXPIRED <= AuthenticationExpired: "authentication expired", parents: [NATSIO_ERR_SERVER];
    NATSIO_ERR_PERMISSIONS <= PermissionsViolation: "permissions violation", parents: [NATSIO_ERR_SERVER];
    NATSIO_ERR_MAX_SUBSCRIPTIONS <= MaxSubscriptionsExceeded: "maximum subscriptions exceeded", parents: [NATSIO_ERR_SERVER];
    NATSIO_ERR_WEBSOCKET <= Websocket: "websocket error", parents: [NATSIO_ERR_PROTOCOL];
    NATSIO_ERR_NO_RESPONDERS <= NoResponders: "no responders";
    NATSIO_ERR_NO_REPLY_SUBJECT <= NoReplySubject: "message has no reply subject";
    NATSIO_ERR_SUBSCRIPTION_CLOSED <= SubscriptionClosed: "subscription closed";
    NATSIO_ERR_SLOW_CONSUMER <= SlowConsumer: "slow consumer";
    NATSIO_ERR_JETSTREAM <= JetStream: "JetStream error";
    NATSIO_ERR_JS_API <= JetStreamApi: "JetStream API error", parents: [NATSIO_ERR_JETSTREAM];
    NATSIO_ERR_JS_NOT_ENABLED <= JetStreamNotEnabled: "JetStream not enabled", parents: [NATSIO_ERR_JS_API];
    NATSIO_ERR_NO_STREAM_RESPONSE <= NoStreamResponse: "no response from stream", parents: [NATSIO_ERR_JETSTREAM];
    NATSIO_ERR_STREAM_NOT_FOUND <= StreamNotFound: "stream not found", parents: [NATSIO_ERR_JS_API];
    NATSIO_ERR_STREAM_NAME_IN_USE <= StreamNameInUse: "stream name already in use", parents: [NATSIO_ERR_JS_API];
    NATSIO_ERR_CONSUMER_NOT_FOUND <= ConsumerNotFound: "consumer not found", parents: [NATSIO_ERR_JS_API];
    NATSIO_ERR_MESSAGE_NOT_FOUND <= MessageNotFound: "message not found", parents: [NATSIO_ERR_JS_API];
    NATSIO_ERR_WRONG_LAST_SEQUENCE <= WrongLastSequence: "wrong last sequence", parents: [NATSIO_ERR_JS_API];
    NATSIO_ERR_TOO_MANY_STALLED <= TooManyStalledMsgs: "too many stalled async publishes", parents: [NATSIO_ERR_JETSTREAM];
    NATSIO_ERR_ASYNC_PUBLISH_TIMEOUT <= AsyncPublishTimeout: "async publish timed out", parents: [NATSIO_ERR_JETSTREAM, NATSIO_ERR_TIMEOUT];
    NATSIO_ERR_NO_MESSAGES <= NoMessages: "no messages", parents: [NATSIO_ERR_JETSTREAM, NATSIO_ERR_TIMEOUT];
    NATSIO_ERR_CONSUMER_DELETED <= ConsumerDeleted: "consumer deleted", parents: [NATSIO_ERR_JETSTREAM];
    NATSIO_ERR_MESSAGE_ALREADY_ACKED <= MessageAlreadyAcked: "message already acknowledged", parents: [NATSIO_ERR_JETSTREAM];
    NATSIO_ERR_NOT_JS_MESSAGE <= NotJsMessage: "not a JetStream message", parents: [NATSIO_ERR_JETSTREAM];
    NATSIO_ERR_BUCKET_NOT_FOUND <= BucketNotFound: "bucket not found", parents: [NATSIO_ERR_JETSTREAM];
    NATSIO_ERR_BUCKET_EXISTS <= BucketExists: "bucket exists", parents: [NATSIO_ERR_JETSTREAM];
    NATSIO_ERR_KEY_NOT_FOUND <= KeyNotFound: "key not found", parents: [NATSIO_ERR_JETSTREAM];
    NATSIO_ERR_KEY_DELETED <= KeyDeleted: "key deleted", parents: [NATSIO_ERR_KEY_NOT_FOUND];
    NATSIO_ERR_KEY_EXISTS <= KeyExists: "key exists", parents: [NATSIO_ERR_JETSTREAM];
    NATSIO_ERR_INVALID_BUCKET_NAME <= InvalidBucketName: "invalid bucket name", parents: [NATSIO_ERR_CONFIG];
    NATSIO_ERR_INVALID_KEY <= InvalidKey: "invalid key", parents: [NATSIO_ERR_CONFIG];
    NATSIO_ERR_KV_NO_CODECS <= KvNoCodecs: "no codecs in a codec chain", parents: [NATSIO_ERR_INVALID_ARGUMENT];
    NATSIO_ERR_KV_WILDCARD_NOT_SUPPORTED <= KvWildcardNotSupported: "key codec does not support wildcard filters", parents: [NATSIO_ERR_INVALID_KEY];
    NATSIO_ERR_KV_KEY_ENCODE_FAILED <= KvKeyEncodeFailed: "key codec failed to encode a key";
    NATSIO_ERR_KV_KEY_DECODE_FAILED <= KvKeyDecodeFailed: "key codec failed to decode a key";
    NATSIO_ERR_KV_VALUE_ENCODE_FAILED <= KvValueEncodeFailed: "value codec failed to encode a value";
    NATSIO_ERR_KV_VALUE_DECODE_FAILED <= KvValueDecodeFailed: "value codec failed to decode a value";
    NATSIO_ERR_KV_FILTER_ENCODE_FAILED <= KvFilterEncodeFailed: "key codec failed to encode a filter";
    NATSIO_ERR_OBJECT_NOT_FOUND <= ObjectNotFound: "object not found", parents: [NATSIO_ERR_JETSTREAM];
    NATSIO_ERR_OBJECT_DELETED <= ObjectDeleted: "object deleted", parents: [NATSIO_ERR_OBJECT_NOT_FOUND];
    NATSIO_ERR_OBJECT_EXISTS <= ObjectExists: "object exists", parents: [NATSIO_ERR_JETSTREAM];
    NATSIO_ERR_DIGEST_MISMATCH <= DigestMismatch: "object digest mismatch", parents: [NATSIO_ERR_JETSTREAM];
    NATSIO_ERR_OBJECT_LINK <= ObjectLink: "invalid object link", parents: [NATSIO_ERR_JETSTREAM];
    NATSIO_ERR_INVALID_OBJECT_NAME <= InvalidObjectName: "invalid object name", parents: [NATSIO_ERR_CONFIG];
    NATSIO_ERR_BUCKET_SEALED <= BucketSealed: "bucket is sealed", parents: [NATSIO_ERR_JETSTREAM];
    NATSIO_ERR_SERVICE_CONFIG <= ServiceConfig: "invalid service configuration", parents: [NATSIO_ERR_CONFIG];
}

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

/// The description of any integer a callback returned as a status
/// ("unknown status code" for one that is none).
pub(crate) fn text_of(code: i32) -> &'static str {
    describe(code).trim_end_matches('\0')
}

/// The description a callback's failing status gives a service's error
/// reply ("handler failed: timeout").
pub(crate) fn failure_text(code: i32) -> String {
    format!("handler failed: {}", text_of(code))
}

/// NATSIO_OK as a callback's integer status. A C callback declared to
/// return natsio_status may return any int (a C enum holds one); read as
/// the Rust enum, a value outside it would be undefined behaviour, so the
/// library calls such callbacks through a type returning i32 (the same
/// ABI: natsio_status is repr(i32)) and compares with this.
pub(crate) const CALLBACK_OK: i32 = natsio_status::NATSIO_OK as i32;

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
    entry(status).map_or("\0", |e| e.name()).as_ptr().cast()
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

#[cfg(test)]
mod tests {
    use super::*;

    /// Every variant of the enum (read from this file, as cbindgen reads
    /// it) is in STATUS_TABLE exactly once, and nothing else is.
    #[test]
    fn every_status_is_in_the_table_once() {
        let source = include_str!("status.rs");
        let start = source.find("pub enum natsio_status {").expect("the enum");
        let body = &source[start..start + source[start..].find("\n}").expect("its end")];
        let variants: Vec<&str> = body
            .lines()
            .map(str::trim)
            .filter(|l| !l.starts_with("//"))
            .filter_map(|l| l.split_once(" = ").map(|(name, _)| name))
            .collect();
        assert!(variants.len() > 60, "read {} variants", variants.len());
        for v in &variants {
            let rows = STATUS_TABLE
                .iter()
                .filter(|e| e.full_name.trim_end_matches('\0') == *v)
                .count();
            assert_eq!(rows, 1, "{v} is in STATUS_TABLE {rows} times");
        }
        assert_eq!(STATUS_TABLE.len(), variants.len());
        for e in STATUS_TABLE {
            assert_eq!(
                format!("{:?}\0", e.status),
                e.full_name,
                "a row names its own status"
            );
        }
    }

    #[test]
    fn names_drop_the_prefix() {
        let name = |s: natsio_status| entry(s as i32).map(StatusEntry::name);
        assert_eq!(name(NATSIO_ERR_TIMEOUT), Some("TIMEOUT\0"));
        assert_eq!(name(NATSIO_OK), Some("OK\0"));
        assert_eq!(name(NATSIO_PENDING), Some("PENDING\0"));
    }
}
