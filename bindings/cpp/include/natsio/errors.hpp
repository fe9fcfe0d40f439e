/// @file
/// The exception hierarchy of the C++ binding of libnatsio.
///
/// Every failing natsio_status becomes one exception. natsio::Error carries
/// the status code, the library's detail text (natsio_last_error() of the
/// failing call) and its error data (api_code(), err_code(), revision());
/// one class per status, derived from the classes of its parent statuses
/// in the reference client's error tree (natsio_status_is), lets callers
/// catch what they care about, e.g. `catch (const natsio::TimeoutError&)`
/// also catches NoMessagesError and DrainTimeoutError.
///
/// NATSIO_CPP_ERRORS is the single mapping from a status to its class;
/// make_error() builds the exception from it and throw_error() throws it.
/// Codes unknown to this header (a newer library) map to natsio::Error
/// itself, so nothing is ever lost.
#ifndef NATSIO_CPP_ERRORS_HPP
#define NATSIO_CPP_ERRORS_HPP

#include <natsio.h>

#include <cstddef>
#include <cstdint>
#include <exception>
#include <stdexcept>
#include <string>
#include <string_view>

namespace natsio {

/// A status code of the C ABI (natsio_status): NATSIO_OK, NATSIO_DONE,
/// NATSIO_PENDING or one of the NATSIO_ERR_* codes.
using Status = natsio_status;

/// A short English name of a status code (static text from the library).
inline std::string_view status_text(Status status) noexcept {
    return natsio_status_str(static_cast<int32_t>(status));
}

/// The error data of a failure, beside its status and text: what a
/// JetStream API rejection or a Key-Value revision check reported (the
/// natsio_last_error_code(), _err_code() and _revision() of the failing
/// call). Zero fields mean "none".
struct ErrorData {
    /// The JetStream API error's "code" (e.g. 404), 0 when none.
    int api_code = 0;
    /// The JetStream API error's "err_code" (e.g. 10059), 0 when none.
    int err_code = 0;
    /// The key revision a KEY_DELETED or KEY_EXISTS failure concerns, 0
    /// when none.
    std::uint64_t revision = 0;
};

/// Base of every exception thrown by the binding for a failing natsio call.
/// Its what() is status_text(status()), followed by ": " and detail() when
/// there is a detail text; a detail that already begins with the status
/// text (compared case-insensitively, as whole words, e.g. "wrong last
/// sequence: 2 (code 400, err_code 10071)") is the what() on its own, so
/// the status text never appears twice. Catch a subclass for one status
/// family, or `const natsio::Error&` for all of them.
class Error : public std::runtime_error {
public:
    /// An exception for `status` with the library's `detail` text (usually
    /// natsio_last_error() of the failing call; "" for none) and its error
    /// `data` (none by default). Every subclass inherits this constructor;
    /// make_error() picks the class.
    Error(Status status, std::string detail, ErrorData data = {})
        : std::runtime_error(compose(status, detail)),
          status_(status),
          detail_(std::move(detail)),
          data_(data) {}

    /// The natsio_status the library returned.
    Status status() const noexcept { return status_; }
    /// natsio_last_error() text of the failing call ("" when there was none).
    const std::string& detail() const noexcept { return detail_; }
    /// The JetStream API error's "code" (e.g. 400, 404, 503) when the
    /// JetStream API rejected the request (an ApiError, or the Key-Value or
    /// Object Store error it became), 0 otherwise
    /// (natsio_last_error_code()).
    int api_code() const noexcept { return data_.api_code; }
    /// The JetStream API error's "err_code" (e.g. 10058 stream name in use,
    /// 10059 stream not found), 0 when none (natsio_last_error_err_code()).
    int err_code() const noexcept { return data_.err_code; }
    /// The key revision a KeyDeletedError (the delete or purge marker's
    /// revision) or KeyExistsError (the live value's revision) concerns, 0
    /// when none (natsio_last_error_revision()).
    std::uint64_t revision() const noexcept { return data_.revision; }
    /// All three: api_code(), err_code() and revision().
    const ErrorData& data() const noexcept { return data_; }

private:
    static std::string compose(Status status, const std::string& detail) {
        const std::string_view name = status_text(status);
        if (starts_with_words(detail, name)) {
            return detail;
        }
        std::string text(name);
        if (!detail.empty()) {
            text += ": ";
            text += detail;
        }
        return text;
    }

    /// True when `text` begins with `prefix` (non-empty; ASCII letters
    /// compared case-insensitively) and the prefix ends there or before a
    /// character that is not a letter, digit or '_' (so "timeout" is not a
    /// prefix of "timeout_ms ...").
    static bool starts_with_words(std::string_view text, std::string_view prefix) noexcept {
        if (prefix.empty() || text.size() < prefix.size()) {
            return false;
        }
        for (std::size_t i = 0; i < prefix.size(); ++i) {
            if (ascii_lower(text[i]) != ascii_lower(prefix[i])) {
                return false;
            }
        }
        if (text.size() == prefix.size()) {
            return true;
        }
        const char next = text[prefix.size()];
        return !(ascii_lower(next) >= 'a' && ascii_lower(next) <= 'z') &&
               !(next >= '0' && next <= '9') && next != '_';
    }

    static char ascii_lower(char c) noexcept {
        return (c >= 'A' && c <= 'Z') ? static_cast<char>(c - 'A' + 'a') : c;
    }

    Status status_;
    std::string detail_;
    ErrorData data_;
};

// The classes mirror the reference client's error tree
// (tests/conformance/cases.txt, natsio_status_parent/natsio_status_is in
// the core): a status's class derives from the class of each of its parent
// statuses. Each class inherits Error's constructor; its doc comment names
// the natsio_status code it stands for. (The doc comments inside the macros
// use /** */: a /// comment would swallow the rest of the spliced line.)
#define NATSIO_CPP_ERROR_CLASS(Name, Base)                                      \
    class Name : public Base {                                                 \
    public:                                                                    \
        using Base::Base;                                                      \
    }

// TimeoutError and JetStreamError derive from Error virtually so that
// NoMessagesError and AsyncPublishTimeoutError can be both with a single
// Error inside (catching `const Error&` stays unambiguous). Their
// subclasses inherit Error's constructor, which then initialises that
// virtual base directly; the protected default constructor exists only for
// the classes with both parents (a virtual base is initialised by the most
// derived class, so its Error(...) there never runs).
#define NATSIO_CPP_ERROR_CLASS_VIRTUAL(Name, Code)                              \
    class Name : public virtual Error {                                        \
    public:                                                                    \
        using Error::Error;                                                    \
                                                                               \
    protected:                                                                 \
        /** Initialises Error with Code and no detail. Exists only             \
            for the classes that are both a TimeoutError and a                 \
            JetStreamError, which initialise their virtual Error               \
            base themselves (so this Error(...) never runs). */                \
        Name() : Error(Code, std::string()) {}                                 \
    }

// A class that is both a JetStreamError and a TimeoutError (one virtual
// Error base, which it initialises itself).
#define NATSIO_CPP_ERROR_CLASS_JS_TIMEOUT(Name)                                 \
    class Name : public JetStreamError, public TimeoutError {                  \
    public:                                                                    \
        /** As Error's constructor; initialises the single, virtual Error      \
            base. */                                                           \
        Name(Status status, std::string detail, ErrorData data = {})           \
            : Error(status, std::move(detail), data) {}                        \
    }

// 1xx: arguments and usage.
/// NATSIO_ERR_INVALID_ARGUMENT: an out-of-range or malformed argument (also
/// thrown by the binding for a string with an embedded NUL byte). Also the
/// base of NullArgumentError and InvalidUtf8Error.
NATSIO_CPP_ERROR_CLASS(InvalidArgumentError, Error);
/// NATSIO_ERR_NULL_ARGUMENT: a missing argument (an InvalidArgumentError).
NATSIO_CPP_ERROR_CLASS(NullArgumentError, InvalidArgumentError);
/// NATSIO_ERR_INVALID_UTF8: a string argument that is not valid UTF-8 (an
/// InvalidArgumentError).
NATSIO_CPP_ERROR_CLASS(InvalidUtf8Error, InvalidArgumentError);
/// NATSIO_ERR_BAD_SUBJECT: a subject that is empty or has empty tokens,
/// whitespace or misplaced wildcards.
NATSIO_CPP_ERROR_CLASS(BadSubjectError, Error);
/// NATSIO_ERR_BAD_QUEUE_NAME: an empty queue group name or one with whitespace.
NATSIO_CPP_ERROR_CLASS(BadQueueNameError, Error);
/// NATSIO_ERR_BAD_HEADERS: a header name or value that could break wire
/// framing.
NATSIO_CPP_ERROR_CLASS(BadHeadersError, Error);
/// NATSIO_ERR_CONFIG: invalid options or configuration, alone or together (also
/// the base of the bad-name errors of Key-Value and Object Store).
NATSIO_CPP_ERROR_CLASS(ConfigError, Error);
/// NATSIO_ERR_ILLEGAL_STATE: the call is not allowed in the object's current
/// state or on this thread.
NATSIO_CPP_ERROR_CLASS(IllegalStateError, Error);
/// NATSIO_ERR_NOT_FOUND: the requested item does not exist (e.g.
/// HeadersView::entry out of range).
NATSIO_CPP_ERROR_CLASS(NotFoundError, Error);
/// NATSIO_ERR_INTERNAL: a bug in natsio; detail() says where.
NATSIO_CPP_ERROR_CLASS(InternalError, Error);
// 2xx: connection.
/// NATSIO_ERR_TIMEOUT: the operation did not complete in time. Also the base of
/// DrainTimeoutError, NoMessagesError and AsyncPublishTimeoutError.
NATSIO_CPP_ERROR_CLASS_VIRTUAL(TimeoutError, NATSIO_ERR_TIMEOUT);
/// NATSIO_ERR_CONNECTION_CLOSED: the connection is closed or draining. Also
/// the base of NoServersError.
NATSIO_CPP_ERROR_CLASS(ConnectionClosedError, Error);
/// NATSIO_ERR_NO_SERVERS: no server could be reached (a
/// ConnectionClosedError).
NATSIO_CPP_ERROR_CLASS(NoServersError, ConnectionClosedError);
/// NATSIO_ERR_IO: a socket error (also thrown by the binding when a
/// std::istream or std::ostream fails).
NATSIO_CPP_ERROR_CLASS(IoError, Error);
/// NATSIO_ERR_DRAIN_TIMEOUT: a drain did not finish within its timeout (a
/// TimeoutError).
NATSIO_CPP_ERROR_CLASS(DrainTimeoutError, TimeoutError);
/// NATSIO_ERR_CANCELLED: the operation was cancelled (Future::cancel).
NATSIO_CPP_ERROR_CLASS(CancelledError, Error);
/// NATSIO_ERR_RECONNECT_BUF_EXCEEDED: a publish made while reconnecting did not
/// fit the reconnect buffer, or buffering is disabled.
NATSIO_CPP_ERROR_CLASS(ReconnectBufExceededError, Error);
// 3xx: protocol and server.
/// NATSIO_ERR_PROTOCOL: the server violated the protocol, or a protocol
/// limit was exceeded.
NATSIO_CPP_ERROR_CLASS(ProtocolError, Error);
/// NATSIO_ERR_PARSER: a frame from the server could not be parsed (a
/// ProtocolError).
NATSIO_CPP_ERROR_CLASS(ParserError, ProtocolError);
/// NATSIO_ERR_MAX_CONTROL_LINE: a control line exceeded max_control_line (a
/// ParserError, so a ProtocolError).
NATSIO_CPP_ERROR_CLASS(MaxControlLineError, ParserError);
/// NATSIO_ERR_MAX_PAYLOAD: a message is larger than the server's max_payload
/// (a ProtocolError).
NATSIO_CPP_ERROR_CLASS(MaxPayloadError, ProtocolError);
/// NATSIO_ERR_SERVER: the server sent an -ERR not covered by a subclass.
NATSIO_CPP_ERROR_CLASS(ServerError, Error);
/// NATSIO_ERR_STALE_CONNECTION: the connection went stale (a ServerError).
NATSIO_CPP_ERROR_CLASS(StaleConnectionError, ServerError);
/// NATSIO_ERR_AUTHORIZATION: authentication was rejected (a ServerError).
NATSIO_CPP_ERROR_CLASS(AuthorizationError, ServerError);
/// NATSIO_ERR_AUTH_EXPIRED: credentials expired or were revoked (a
/// ServerError; not an AuthorizationError, as in the reference client).
NATSIO_CPP_ERROR_CLASS(AuthExpiredError, ServerError);
/// NATSIO_ERR_PERMISSIONS: a publish or subscribe was denied (a ServerError).
NATSIO_CPP_ERROR_CLASS(PermissionsError, ServerError);
/// NATSIO_ERR_MAX_SUBSCRIPTIONS: the account's subscription limit was reached
/// (a ServerError).
NATSIO_CPP_ERROR_CLASS(MaxSubscriptionsError, ServerError);
/// NATSIO_ERR_WEBSOCKET: a ws:// or wss:// server failed the WebSocket
/// upgrade or broke the framing (a ProtocolError).
NATSIO_CPP_ERROR_CLASS(WebsocketError, ProtocolError);
// 4xx: messaging.
/// NATSIO_ERR_NO_RESPONDERS: nobody is subscribed to the request subject
/// (status 503). From a JetStream call: nobody answered its API request
/// (no leader during an election, retry; or a server without JetStream).
NATSIO_CPP_ERROR_CLASS(NoRespondersError, Error);
/// NATSIO_ERR_NO_REPLY_SUBJECT: the message has no reply subject.
NATSIO_CPP_ERROR_CLASS(NoReplySubjectError, Error);
/// NATSIO_ERR_SUBSCRIPTION_CLOSED: the subscription is closed, or in callback
/// mode.
NATSIO_CPP_ERROR_CLASS(SubscriptionClosedError, Error);
/// NATSIO_ERR_SLOW_CONSUMER: pending limits were exceeded.
NATSIO_CPP_ERROR_CLASS(SlowConsumerError, Error);
// 5xx: JetStream. ApiError and its subclasses are rejections by the
// JetStream API (api_code(), err_code(); detail: the description).
/// NATSIO_ERR_JETSTREAM: a JetStream operation failed (e.g. an unexpected
/// reply). Base of every JetStream, Key-Value and Object Store error except the
/// bad-name ones (ConfigError subclasses).
NATSIO_CPP_ERROR_CLASS_VIRTUAL(JetStreamError, NATSIO_ERR_JETSTREAM);
/// NATSIO_ERR_JS_API: the JetStream API rejected the request for a reason no
/// subclass covers; api_code() and err_code() say which, detail() gives
/// the description.
NATSIO_CPP_ERROR_CLASS(ApiError, JetStreamError);
/// NATSIO_ERR_JS_NOT_ENABLED: JetStream is not enabled for the account or
/// server (an ApiError): the server says so, or nobody answers
/// account_info.
NATSIO_CPP_ERROR_CLASS(JetStreamNotEnabledError, ApiError);
/// NATSIO_ERR_NO_STREAM_RESPONSE: no stream answered a JetStream publish.
NATSIO_CPP_ERROR_CLASS(NoStreamResponseError, JetStreamError);
/// NATSIO_ERR_STREAM_NOT_FOUND: the stream does not exist (an ApiError,
/// err_code 10059).
NATSIO_CPP_ERROR_CLASS(StreamNotFoundError, ApiError);
/// NATSIO_ERR_STREAM_NAME_IN_USE: a stream with this name but another
/// configuration exists (an ApiError, err_code 10058).
NATSIO_CPP_ERROR_CLASS(StreamNameInUseError, ApiError);
/// NATSIO_ERR_CONSUMER_NOT_FOUND: the consumer does not exist (an ApiError,
/// err_code 10014).
NATSIO_CPP_ERROR_CLASS(ConsumerNotFoundError, ApiError);
/// NATSIO_ERR_MESSAGE_NOT_FOUND: the stream has no such message (an ApiError,
/// err_code 10037).
NATSIO_CPP_ERROR_CLASS(MessageNotFoundError, ApiError);
/// NATSIO_ERR_WRONG_LAST_SEQUENCE: an expected-last-sequence check failed (an
/// ApiError, err_code 10071).
NATSIO_CPP_ERROR_CLASS(WrongLastSequenceError, ApiError);
/// NATSIO_ERR_TOO_MANY_STALLED: too many asynchronous publishes awaited their
/// acks for longer than the stall wait.
NATSIO_CPP_ERROR_CLASS(TooManyStalledMsgsError, JetStreamError);
/// NATSIO_ERR_ASYNC_PUBLISH_TIMEOUT: an asynchronous publish got no ack in
/// time. Both a JetStreamError and a TimeoutError.
NATSIO_CPP_ERROR_CLASS_JS_TIMEOUT(AsyncPublishTimeoutError);
/// NATSIO_ERR_NO_MESSAGES: a pull (JetStream::next) ended without a message.
/// Both a JetStreamError and a TimeoutError, so
/// `catch (const natsio::TimeoutError&)` sees it too.
NATSIO_CPP_ERROR_CLASS_JS_TIMEOUT(NoMessagesError);
/// NATSIO_ERR_CONSUMER_DELETED: the consumer was deleted while pulling from it.
NATSIO_CPP_ERROR_CLASS(ConsumerDeletedError, JetStreamError);
/// NATSIO_ERR_MESSAGE_ALREADY_ACKED: the message was already acknowledged or
/// terminated through this handle.
NATSIO_CPP_ERROR_CLASS(MessageAlreadyAckedError, JetStreamError);
/// NATSIO_ERR_NOT_JS_MESSAGE: the message did not come from a JetStream
/// consumer (its reply subject is not an ack subject).
NATSIO_CPP_ERROR_CLASS(NotJsMessageError, JetStreamError);
// 6xx: Key-Value. A deleted key is also "not found"; bad names are config
// errors.
/// NATSIO_ERR_BUCKET_NOT_FOUND: the Key-Value or Object Store bucket does not
/// exist.
NATSIO_CPP_ERROR_CLASS(BucketNotFoundError, JetStreamError);
/// NATSIO_ERR_BUCKET_EXISTS: a bucket with this name but another configuration
/// exists.
NATSIO_CPP_ERROR_CLASS(BucketExistsError, JetStreamError);
/// NATSIO_ERR_KEY_NOT_FOUND: the key has no value. Also the base of
/// KeyDeletedError.
NATSIO_CPP_ERROR_CLASS(KeyNotFoundError, JetStreamError);
/// NATSIO_ERR_KEY_DELETED: the key's latest revision is a delete or purge
/// marker (a KeyNotFoundError); revision() is the marker's revision.
NATSIO_CPP_ERROR_CLASS(KeyDeletedError, KeyNotFoundError);
/// NATSIO_ERR_KEY_EXISTS: KeyValue::create found a live value for the key;
/// revision() is that value's revision.
NATSIO_CPP_ERROR_CLASS(KeyExistsError, JetStreamError);
/// NATSIO_ERR_INVALID_BUCKET_NAME: a bucket name outside `[A-Za-z0-9_-]+` (a
/// ConfigError).
NATSIO_CPP_ERROR_CLASS(InvalidBucketNameError, ConfigError);
/// NATSIO_ERR_INVALID_KEY: a key outside `[-/_=.A-Za-z0-9]+` or with empty
/// tokens (a ConfigError).
NATSIO_CPP_ERROR_CLASS(InvalidKeyError, ConfigError);
/// NATSIO_ERR_KV_NO_CODECS: a Key-Value codec chain of no codecs (an
/// InvalidArgumentError).
NATSIO_CPP_ERROR_CLASS(KvNoCodecsError, InvalidArgumentError);
/// NATSIO_ERR_KV_WILDCARD_NOT_SUPPORTED: a watch or listing filter with
/// wildcards and a key codec without a filter form (an InvalidKeyError).
NATSIO_CPP_ERROR_CLASS(KvWildcardNotSupportedError, InvalidKeyError);
/// NATSIO_ERR_KV_KEY_ENCODE_FAILED: the key codec failed to encode a key.
NATSIO_CPP_ERROR_CLASS(KvKeyEncodeFailedError, Error);
/// NATSIO_ERR_KV_KEY_DECODE_FAILED: the key codec failed to decode a stored key.
NATSIO_CPP_ERROR_CLASS(KvKeyDecodeFailedError, Error);
/// NATSIO_ERR_KV_VALUE_ENCODE_FAILED: the value codec failed to encode a value.
NATSIO_CPP_ERROR_CLASS(KvValueEncodeFailedError, Error);
/// NATSIO_ERR_KV_VALUE_DECODE_FAILED: the value codec failed to decode a
/// stored value.
NATSIO_CPP_ERROR_CLASS(KvValueDecodeFailedError, Error);
/// NATSIO_ERR_KV_FILTER_ENCODE_FAILED: the key codec failed to encode a filter.
NATSIO_CPP_ERROR_CLASS(KvFilterEncodeFailedError, Error);
// 7xx: Object Store (buckets share the 6xx bucket codes and classes). A
// deleted object is also "not found"; a bad object name is a config error.
/// NATSIO_ERR_OBJECT_NOT_FOUND: no object of that name in the bucket. Also the
/// base of ObjectDeletedError.
NATSIO_CPP_ERROR_CLASS(ObjectNotFoundError, JetStreamError);
/// NATSIO_ERR_OBJECT_DELETED: the object was deleted, only its tombstone is
/// left (an ObjectNotFoundError).
NATSIO_CPP_ERROR_CLASS(ObjectDeletedError, ObjectNotFoundError);
/// NATSIO_ERR_OBJECT_EXISTS: a live object already has that name (a rename or
/// link onto it).
NATSIO_CPP_ERROR_CLASS(ObjectExistsError, JetStreamError);
/// NATSIO_ERR_DIGEST_MISMATCH: the object read back does not match its recorded
/// SHA-256 digest, size or chunk count.
NATSIO_CPP_ERROR_CLASS(DigestMismatchError, JetStreamError);
/// NATSIO_ERR_OBJECT_LINK: a link ADR-20 forbids (to a deleted object or to
/// another link), or a bucket link read as an object.
NATSIO_CPP_ERROR_CLASS(ObjectLinkError, JetStreamError);
/// NATSIO_ERR_INVALID_OBJECT_NAME: an empty object name or one that is not
/// valid UTF-8 (a ConfigError).
NATSIO_CPP_ERROR_CLASS(InvalidObjectNameError, ConfigError);
/// NATSIO_ERR_BUCKET_SEALED: the bucket is sealed; it can be read but no longer
/// changed.
NATSIO_CPP_ERROR_CLASS(BucketSealedError, JetStreamError);
// 8xx: services.
/// NATSIO_ERR_SERVICE_CONFIG: a service, group or endpoint configuration
/// ADR-32 refuses (a name outside `[A-Za-z0-9_-]+`, a version that is not
/// SemVer, a bad subject or queue group; the reference's ServiceConfigError;
/// a ConfigError).
NATSIO_CPP_ERROR_CLASS(ServiceConfigError, ConfigError);

#undef NATSIO_CPP_ERROR_CLASS
#undef NATSIO_CPP_ERROR_CLASS_VIRTUAL
#undef NATSIO_CPP_ERROR_CLASS_JS_TIMEOUT

/// The one mapping from error status to class: calls `X(code, Class)` for
/// every NATSIO_ERR_* code of natsio.h, in code order. make_error() is
/// built from it; a program can use it too, e.g. to list every class.
#define NATSIO_CPP_ERRORS(X)                                                   \
    X(NATSIO_ERR_NULL_ARGUMENT, NullArgumentError)                             \
    X(NATSIO_ERR_INVALID_UTF8, InvalidUtf8Error)                               \
    X(NATSIO_ERR_INVALID_ARGUMENT, InvalidArgumentError)                       \
    X(NATSIO_ERR_BAD_SUBJECT, BadSubjectError)                                 \
    X(NATSIO_ERR_BAD_QUEUE_NAME, BadQueueNameError)                            \
    X(NATSIO_ERR_BAD_HEADERS, BadHeadersError)                                 \
    X(NATSIO_ERR_CONFIG, ConfigError)                                          \
    X(NATSIO_ERR_ILLEGAL_STATE, IllegalStateError)                             \
    X(NATSIO_ERR_NOT_FOUND, NotFoundError)                                     \
    X(NATSIO_ERR_INTERNAL, InternalError)                                      \
    X(NATSIO_ERR_TIMEOUT, TimeoutError)                                        \
    X(NATSIO_ERR_CONNECTION_CLOSED, ConnectionClosedError)                     \
    X(NATSIO_ERR_NO_SERVERS, NoServersError)                                   \
    X(NATSIO_ERR_IO, IoError)                                                  \
    X(NATSIO_ERR_DRAIN_TIMEOUT, DrainTimeoutError)                             \
    X(NATSIO_ERR_CANCELLED, CancelledError)                                    \
    X(NATSIO_ERR_RECONNECT_BUF_EXCEEDED, ReconnectBufExceededError)            \
    X(NATSIO_ERR_PROTOCOL, ProtocolError)                                      \
    X(NATSIO_ERR_PARSER, ParserError)                                          \
    X(NATSIO_ERR_MAX_CONTROL_LINE, MaxControlLineError)                        \
    X(NATSIO_ERR_MAX_PAYLOAD, MaxPayloadError)                                 \
    X(NATSIO_ERR_SERVER, ServerError)                                          \
    X(NATSIO_ERR_STALE_CONNECTION, StaleConnectionError)                       \
    X(NATSIO_ERR_AUTHORIZATION, AuthorizationError)                            \
    X(NATSIO_ERR_AUTH_EXPIRED, AuthExpiredError)                               \
    X(NATSIO_ERR_PERMISSIONS, PermissionsError)                                \
    X(NATSIO_ERR_MAX_SUBSCRIPTIONS, MaxSubscriptionsError)                     \
    X(NATSIO_ERR_WEBSOCKET, WebsocketError)                                    \
    X(NATSIO_ERR_NO_RESPONDERS, NoRespondersError)                             \
    X(NATSIO_ERR_NO_REPLY_SUBJECT, NoReplySubjectError)                        \
    X(NATSIO_ERR_SUBSCRIPTION_CLOSED, SubscriptionClosedError)                 \
    X(NATSIO_ERR_SLOW_CONSUMER, SlowConsumerError)                             \
    X(NATSIO_ERR_JETSTREAM, JetStreamError)                                    \
    X(NATSIO_ERR_JS_API, ApiError)                                             \
    X(NATSIO_ERR_JS_NOT_ENABLED, JetStreamNotEnabledError)                     \
    X(NATSIO_ERR_NO_STREAM_RESPONSE, NoStreamResponseError)                    \
    X(NATSIO_ERR_STREAM_NOT_FOUND, StreamNotFoundError)                        \
    X(NATSIO_ERR_STREAM_NAME_IN_USE, StreamNameInUseError)                     \
    X(NATSIO_ERR_CONSUMER_NOT_FOUND, ConsumerNotFoundError)                    \
    X(NATSIO_ERR_MESSAGE_NOT_FOUND, MessageNotFoundError)                      \
    X(NATSIO_ERR_WRONG_LAST_SEQUENCE, WrongLastSequenceError)                  \
    X(NATSIO_ERR_TOO_MANY_STALLED, TooManyStalledMsgsError)                    \
    X(NATSIO_ERR_ASYNC_PUBLISH_TIMEOUT, AsyncPublishTimeoutError)              \
    X(NATSIO_ERR_NO_MESSAGES, NoMessagesError)                                 \
    X(NATSIO_ERR_CONSUMER_DELETED, ConsumerDeletedError)                       \
    X(NATSIO_ERR_MESSAGE_ALREADY_ACKED, MessageAlreadyAckedError)              \
    X(NATSIO_ERR_NOT_JS_MESSAGE, NotJsMessageError)                            \
    X(NATSIO_ERR_BUCKET_NOT_FOUND, BucketNotFoundError)                        \
    X(NATSIO_ERR_BUCKET_EXISTS, BucketExistsError)                             \
    X(NATSIO_ERR_KEY_NOT_FOUND, KeyNotFoundError)                              \
    X(NATSIO_ERR_KEY_DELETED, KeyDeletedError)                                 \
    X(NATSIO_ERR_KEY_EXISTS, KeyExistsError)                                   \
    X(NATSIO_ERR_INVALID_BUCKET_NAME, InvalidBucketNameError)                  \
    X(NATSIO_ERR_INVALID_KEY, InvalidKeyError)                                 \
    X(NATSIO_ERR_KV_NO_CODECS, KvNoCodecsError)                                \
    X(NATSIO_ERR_KV_WILDCARD_NOT_SUPPORTED, KvWildcardNotSupportedError)       \
    X(NATSIO_ERR_KV_KEY_ENCODE_FAILED, KvKeyEncodeFailedError)                 \
    X(NATSIO_ERR_KV_KEY_DECODE_FAILED, KvKeyDecodeFailedError)                 \
    X(NATSIO_ERR_KV_VALUE_ENCODE_FAILED, KvValueEncodeFailedError)             \
    X(NATSIO_ERR_KV_VALUE_DECODE_FAILED, KvValueDecodeFailedError)             \
    X(NATSIO_ERR_KV_FILTER_ENCODE_FAILED, KvFilterEncodeFailedError)           \
    X(NATSIO_ERR_OBJECT_NOT_FOUND, ObjectNotFoundError)                        \
    X(NATSIO_ERR_OBJECT_DELETED, ObjectDeletedError)                           \
    X(NATSIO_ERR_OBJECT_EXISTS, ObjectExistsError)                             \
    X(NATSIO_ERR_DIGEST_MISMATCH, DigestMismatchError)                         \
    X(NATSIO_ERR_OBJECT_LINK, ObjectLinkError)                                 \
    X(NATSIO_ERR_INVALID_OBJECT_NAME, InvalidObjectNameError)                  \
    X(NATSIO_ERR_BUCKET_SEALED, BucketSealedError)                             \
    X(NATSIO_ERR_SERVICE_CONFIG, ServiceConfigError)

/// The exception for `status` with `detail` and error `data`, as an
/// exception_ptr (for promises and error handlers). Every natsio_status
/// error code maps to the class documented for it (NATSIO_CPP_ERRORS);
/// unknown codes (and NATSIO_OK, NATSIO_DONE, NATSIO_PENDING) map to
/// natsio::Error itself.
inline std::exception_ptr make_error(Status status, std::string detail, ErrorData data = {}) {
    switch (static_cast<std::int32_t>(status)) {
#define NATSIO_CPP_ERROR_CASE(Code, Class)                                      \
    case Code:                                                                 \
        return std::make_exception_ptr(Class(status, std::move(detail), data));
        NATSIO_CPP_ERRORS(NATSIO_CPP_ERROR_CASE)
#undef NATSIO_CPP_ERROR_CASE
    default:
        break;
    }
    return std::make_exception_ptr(Error(status, std::move(detail), data));
}

/// Throws the exception make_error() maps `status` to, with `detail` and
/// error `data`.
[[noreturn]] inline void throw_error(Status status, std::string detail, ErrorData data = {}) {
    std::rethrow_exception(make_error(status, std::move(detail), data));
}

namespace detail {

/// This thread's error data of the last failing call
/// (natsio_last_error_code, _err_code, _revision).
inline ErrorData last_error_data() noexcept {
    ErrorData data;
    data.api_code = static_cast<int>(natsio_last_error_code());
    data.err_code = static_cast<int>(natsio_last_error_err_code());
    data.revision = natsio_last_error_revision();
    return data;
}

/// The exception for `status` with this thread's last error text and data
/// (read at once: the next failing call would replace them).
inline std::exception_ptr last_error(Status status) {
    ErrorData data = last_error_data();
    return make_error(status, natsio_last_error(), data);
}

/// Throws for any status other than NATSIO_OK, reading this thread's
/// natsio_last_error() and its error data at once (the next failing call
/// would replace them).
inline void check(Status status) {
    if (status != NATSIO_OK) {
        std::rethrow_exception(last_error(status));
    }
}

}  // namespace detail
}  // namespace natsio

#endif  // NATSIO_CPP_ERRORS_HPP
