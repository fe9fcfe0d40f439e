/// @file
/// The exception hierarchy of the C++ binding of libnatsio.
///
/// Every failing natsio_status becomes one exception. natsio::Error carries
/// the status code and the library's detail text (natsio_last_error() of the
/// failing call); one subclass per status family lets callers catch what
/// they care about, e.g. `catch (const natsio::TimeoutError&)`.
///
/// make_error() is the single mapping from a status to its class;
/// throw_error() throws it. Codes unknown to this header (a newer library)
/// map to natsio::Error itself, so nothing is ever lost.
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
    /// natsio_last_error() of the failing call; "" for none). Every
    /// subclass inherits this constructor; make_error() picks the class.
    Error(Status status, std::string detail)
        : std::runtime_error(compose(status, detail)), status_(status), detail_(std::move(detail)) {}

    /// The natsio_status the library returned.
    Status status() const noexcept { return status_; }
    /// natsio_last_error() text of the failing call ("" when there was none).
    const std::string& detail() const noexcept { return detail_; }

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
};

// Each class below inherits Error's constructor; its doc comment names the
// natsio_status codes it stands for. (The doc comments inside the macros
// use /** */: a /// comment would swallow the rest of the spliced line.)
#define NATSIO_CPP_ERROR_CLASS(Name, Base)                                      \
    class Name : public Base {                                                 \
    public:                                                                    \
        using Base::Base;                                                      \
    }

// TimeoutError and JetStreamError derive from Error virtually so that
// NoMessagesError can be both with a single Error inside (catching
// `const Error&` stays unambiguous). Their subclasses inherit Error's
// constructor, which then initialises that virtual base directly; the
// protected default constructor exists only for NoMessagesError (a virtual
// base is initialised by the most derived class, so its Error(...) there
// never runs).
#define NATSIO_CPP_ERROR_CLASS_VIRTUAL(Name, Code)                              \
    class Name : public virtual Error {                                        \
    public:                                                                    \
        using Error::Error;                                                    \
                                                                               \
    protected:                                                                 \
        /** Initialises Error with Code and no detail. Exists only             \
            for NoMessagesError, which initialises its virtual Error           \
            base itself (so this Error(...) never runs). */                    \
        Name() : Error(Code, std::string()) {}                                 \
    }

// 1xx: arguments and usage.
/// NATSIO_ERR_NULL_ARGUMENT, NATSIO_ERR_INVALID_UTF8 and
/// NATSIO_ERR_INVALID_ARGUMENT: a missing, non-UTF-8, out-of-range or malformed
/// argument (also thrown by the binding for a string with an embedded NUL
/// byte).
NATSIO_CPP_ERROR_CLASS(InvalidArgumentError, Error);
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
/// DrainTimeoutError and NoMessagesError.
NATSIO_CPP_ERROR_CLASS_VIRTUAL(TimeoutError, NATSIO_ERR_TIMEOUT);
/// NATSIO_ERR_CONNECTION_CLOSED: the connection is closed or draining.
NATSIO_CPP_ERROR_CLASS(ConnectionClosedError, Error);
/// NATSIO_ERR_NO_SERVERS: no server could be reached.
NATSIO_CPP_ERROR_CLASS(NoServersError, Error);
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
/// NATSIO_ERR_PROTOCOL: the server violated the protocol.
NATSIO_CPP_ERROR_CLASS(ProtocolError, Error);
/// NATSIO_ERR_PARSER: a frame from the server could not be parsed (a
/// ProtocolError).
NATSIO_CPP_ERROR_CLASS(ParserError, ProtocolError);
/// NATSIO_ERR_MAX_CONTROL_LINE: a control line exceeded max_control_line (a
/// ProtocolError).
NATSIO_CPP_ERROR_CLASS(MaxControlLineError, ProtocolError);
/// NATSIO_ERR_MAX_PAYLOAD: a message is larger than the server's max_payload.
NATSIO_CPP_ERROR_CLASS(MaxPayloadError, Error);
/// NATSIO_ERR_SERVER: the server sent an -ERR not covered by a subclass.
NATSIO_CPP_ERROR_CLASS(ServerError, Error);
/// NATSIO_ERR_STALE_CONNECTION: the connection went stale (a ServerError).
NATSIO_CPP_ERROR_CLASS(StaleConnectionError, ServerError);
/// NATSIO_ERR_AUTHORIZATION: authentication was rejected (a ServerError).
NATSIO_CPP_ERROR_CLASS(AuthorizationError, ServerError);
/// NATSIO_ERR_AUTH_EXPIRED: credentials expired or were revoked (an
/// AuthorizationError).
NATSIO_CPP_ERROR_CLASS(AuthExpiredError, AuthorizationError);
/// NATSIO_ERR_PERMISSIONS: a publish or subscribe was denied (a ServerError).
NATSIO_CPP_ERROR_CLASS(PermissionsError, ServerError);
/// NATSIO_ERR_MAX_SUBSCRIPTIONS: the account's subscription limit was reached
/// (a ServerError).
NATSIO_CPP_ERROR_CLASS(MaxSubscriptionsError, ServerError);
// 4xx: messaging.
/// NATSIO_ERR_NO_RESPONDERS: nobody is subscribed to the request subject
/// (status 503).
NATSIO_CPP_ERROR_CLASS(NoRespondersError, Error);
/// NATSIO_ERR_NO_REPLY_SUBJECT: the message has no reply subject.
NATSIO_CPP_ERROR_CLASS(NoReplySubjectError, Error);
/// NATSIO_ERR_SUBSCRIPTION_CLOSED: the subscription is closed, or in callback
/// mode.
NATSIO_CPP_ERROR_CLASS(SubscriptionClosedError, Error);
/// NATSIO_ERR_SLOW_CONSUMER: pending limits were exceeded.
NATSIO_CPP_ERROR_CLASS(SlowConsumerError, Error);
// 5xx: JetStream. ApiError and its subclasses are rejections by the
// JetStream API (detail: code, err_code, description).
/// NATSIO_ERR_JETSTREAM: a JetStream operation failed (e.g. an unexpected
/// reply). Base of every JetStream, Key-Value and Object Store error except the
/// bad-name ones (ConfigError subclasses).
NATSIO_CPP_ERROR_CLASS_VIRTUAL(JetStreamError, NATSIO_ERR_JETSTREAM);
/// NATSIO_ERR_JS_API: the JetStream API rejected the request for a reason no
/// subclass covers; detail() gives its code, err_code and description.
NATSIO_CPP_ERROR_CLASS(ApiError, JetStreamError);
/// NATSIO_ERR_JS_NOT_ENABLED: JetStream is not enabled for the account or
/// server (an ApiError).
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
/// time.
NATSIO_CPP_ERROR_CLASS(AsyncPublishTimeoutError, JetStreamError);
/// NATSIO_ERR_CONSUMER_DELETED: the consumer was deleted while pulling from it.
NATSIO_CPP_ERROR_CLASS(ConsumerDeletedError, JetStreamError);
/// NATSIO_ERR_MESSAGE_ALREADY_ACKED: the message was already acknowledged or
/// terminated through this handle.
NATSIO_CPP_ERROR_CLASS(MessageAlreadyAckedError, JetStreamError);
/// NATSIO_ERR_NOT_JS_MESSAGE: the message did not come from a JetStream
/// consumer (its reply subject is not an ack subject).
NATSIO_CPP_ERROR_CLASS(NotJsMessageError, JetStreamError);
/// NATSIO_ERR_NO_MESSAGES: a pull (JetStream::next) ended without a message.
/// Both a JetStreamError and a TimeoutError, so
/// `catch (const natsio::TimeoutError&)` sees it too.
class NoMessagesError : public JetStreamError, public TimeoutError {
public:
    /// As Error's constructor; initialises the single, virtual Error base.
    NoMessagesError(Status status, std::string detail) : Error(status, std::move(detail)) {}
};
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
/// marker (a KeyNotFoundError).
NATSIO_CPP_ERROR_CLASS(KeyDeletedError, KeyNotFoundError);
/// NATSIO_ERR_KEY_EXISTS: KeyValue::create found a live value for the key.
NATSIO_CPP_ERROR_CLASS(KeyExistsError, JetStreamError);
/// NATSIO_ERR_INVALID_BUCKET_NAME: a bucket name outside `[A-Za-z0-9_-]+` (a
/// ConfigError).
NATSIO_CPP_ERROR_CLASS(InvalidBucketNameError, ConfigError);
/// NATSIO_ERR_INVALID_KEY: a key outside `[-/_=.A-Za-z0-9]+` or with empty
/// tokens (a ConfigError).
NATSIO_CPP_ERROR_CLASS(InvalidKeyError, ConfigError);
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

#undef NATSIO_CPP_ERROR_CLASS
#undef NATSIO_CPP_ERROR_CLASS_VIRTUAL

/// The exception for `status` with `detail`, as an exception_ptr (for
/// promises and error handlers). Every natsio_status error code maps to
/// the class documented for it; unknown codes (and NATSIO_OK, NATSIO_DONE,
/// NATSIO_PENDING) map to natsio::Error itself.
inline std::exception_ptr make_error(Status status, std::string detail) {
    switch (status) {
    case NATSIO_ERR_NULL_ARGUMENT:
    case NATSIO_ERR_INVALID_UTF8:
    case NATSIO_ERR_INVALID_ARGUMENT:
        return std::make_exception_ptr(InvalidArgumentError(status, std::move(detail)));
    case NATSIO_ERR_BAD_SUBJECT:
        return std::make_exception_ptr(BadSubjectError(status, std::move(detail)));
    case NATSIO_ERR_BAD_QUEUE_NAME:
        return std::make_exception_ptr(BadQueueNameError(status, std::move(detail)));
    case NATSIO_ERR_BAD_HEADERS:
        return std::make_exception_ptr(BadHeadersError(status, std::move(detail)));
    case NATSIO_ERR_CONFIG:
        return std::make_exception_ptr(ConfigError(status, std::move(detail)));
    case NATSIO_ERR_ILLEGAL_STATE:
        return std::make_exception_ptr(IllegalStateError(status, std::move(detail)));
    case NATSIO_ERR_NOT_FOUND:
        return std::make_exception_ptr(NotFoundError(status, std::move(detail)));
    case NATSIO_ERR_INTERNAL:
        return std::make_exception_ptr(InternalError(status, std::move(detail)));
    case NATSIO_ERR_TIMEOUT:
        return std::make_exception_ptr(TimeoutError(status, std::move(detail)));
    case NATSIO_ERR_CONNECTION_CLOSED:
        return std::make_exception_ptr(ConnectionClosedError(status, std::move(detail)));
    case NATSIO_ERR_NO_SERVERS:
        return std::make_exception_ptr(NoServersError(status, std::move(detail)));
    case NATSIO_ERR_IO:
        return std::make_exception_ptr(IoError(status, std::move(detail)));
    case NATSIO_ERR_DRAIN_TIMEOUT:
        return std::make_exception_ptr(DrainTimeoutError(status, std::move(detail)));
    case NATSIO_ERR_CANCELLED:
        return std::make_exception_ptr(CancelledError(status, std::move(detail)));
    case NATSIO_ERR_RECONNECT_BUF_EXCEEDED:
        return std::make_exception_ptr(ReconnectBufExceededError(status, std::move(detail)));
    case NATSIO_ERR_PROTOCOL:
        return std::make_exception_ptr(ProtocolError(status, std::move(detail)));
    case NATSIO_ERR_PARSER:
        return std::make_exception_ptr(ParserError(status, std::move(detail)));
    case NATSIO_ERR_MAX_CONTROL_LINE:
        return std::make_exception_ptr(MaxControlLineError(status, std::move(detail)));
    case NATSIO_ERR_MAX_PAYLOAD:
        return std::make_exception_ptr(MaxPayloadError(status, std::move(detail)));
    case NATSIO_ERR_SERVER:
        return std::make_exception_ptr(ServerError(status, std::move(detail)));
    case NATSIO_ERR_STALE_CONNECTION:
        return std::make_exception_ptr(StaleConnectionError(status, std::move(detail)));
    case NATSIO_ERR_AUTHORIZATION:
        return std::make_exception_ptr(AuthorizationError(status, std::move(detail)));
    case NATSIO_ERR_AUTH_EXPIRED:
        return std::make_exception_ptr(AuthExpiredError(status, std::move(detail)));
    case NATSIO_ERR_PERMISSIONS:
        return std::make_exception_ptr(PermissionsError(status, std::move(detail)));
    case NATSIO_ERR_MAX_SUBSCRIPTIONS:
        return std::make_exception_ptr(MaxSubscriptionsError(status, std::move(detail)));
    case NATSIO_ERR_NO_RESPONDERS:
        return std::make_exception_ptr(NoRespondersError(status, std::move(detail)));
    case NATSIO_ERR_NO_REPLY_SUBJECT:
        return std::make_exception_ptr(NoReplySubjectError(status, std::move(detail)));
    case NATSIO_ERR_SUBSCRIPTION_CLOSED:
        return std::make_exception_ptr(SubscriptionClosedError(status, std::move(detail)));
    case NATSIO_ERR_SLOW_CONSUMER:
        return std::make_exception_ptr(SlowConsumerError(status, std::move(detail)));
    case NATSIO_ERR_JETSTREAM:
        return std::make_exception_ptr(JetStreamError(status, std::move(detail)));
    case NATSIO_ERR_JS_API:
        return std::make_exception_ptr(ApiError(status, std::move(detail)));
    case NATSIO_ERR_JS_NOT_ENABLED:
        return std::make_exception_ptr(JetStreamNotEnabledError(status, std::move(detail)));
    case NATSIO_ERR_NO_STREAM_RESPONSE:
        return std::make_exception_ptr(NoStreamResponseError(status, std::move(detail)));
    case NATSIO_ERR_STREAM_NOT_FOUND:
        return std::make_exception_ptr(StreamNotFoundError(status, std::move(detail)));
    case NATSIO_ERR_STREAM_NAME_IN_USE:
        return std::make_exception_ptr(StreamNameInUseError(status, std::move(detail)));
    case NATSIO_ERR_CONSUMER_NOT_FOUND:
        return std::make_exception_ptr(ConsumerNotFoundError(status, std::move(detail)));
    case NATSIO_ERR_MESSAGE_NOT_FOUND:
        return std::make_exception_ptr(MessageNotFoundError(status, std::move(detail)));
    case NATSIO_ERR_WRONG_LAST_SEQUENCE:
        return std::make_exception_ptr(WrongLastSequenceError(status, std::move(detail)));
    case NATSIO_ERR_TOO_MANY_STALLED:
        return std::make_exception_ptr(TooManyStalledMsgsError(status, std::move(detail)));
    case NATSIO_ERR_ASYNC_PUBLISH_TIMEOUT:
        return std::make_exception_ptr(AsyncPublishTimeoutError(status, std::move(detail)));
    case NATSIO_ERR_NO_MESSAGES:
        return std::make_exception_ptr(NoMessagesError(status, std::move(detail)));
    case NATSIO_ERR_CONSUMER_DELETED:
        return std::make_exception_ptr(ConsumerDeletedError(status, std::move(detail)));
    case NATSIO_ERR_MESSAGE_ALREADY_ACKED:
        return std::make_exception_ptr(MessageAlreadyAckedError(status, std::move(detail)));
    case NATSIO_ERR_NOT_JS_MESSAGE:
        return std::make_exception_ptr(NotJsMessageError(status, std::move(detail)));
    case NATSIO_ERR_BUCKET_NOT_FOUND:
        return std::make_exception_ptr(BucketNotFoundError(status, std::move(detail)));
    case NATSIO_ERR_BUCKET_EXISTS:
        return std::make_exception_ptr(BucketExistsError(status, std::move(detail)));
    case NATSIO_ERR_KEY_NOT_FOUND:
        return std::make_exception_ptr(KeyNotFoundError(status, std::move(detail)));
    case NATSIO_ERR_KEY_DELETED:
        return std::make_exception_ptr(KeyDeletedError(status, std::move(detail)));
    case NATSIO_ERR_KEY_EXISTS:
        return std::make_exception_ptr(KeyExistsError(status, std::move(detail)));
    case NATSIO_ERR_INVALID_BUCKET_NAME:
        return std::make_exception_ptr(InvalidBucketNameError(status, std::move(detail)));
    case NATSIO_ERR_INVALID_KEY:
        return std::make_exception_ptr(InvalidKeyError(status, std::move(detail)));
    case NATSIO_ERR_OBJECT_NOT_FOUND:
        return std::make_exception_ptr(ObjectNotFoundError(status, std::move(detail)));
    case NATSIO_ERR_OBJECT_DELETED:
        return std::make_exception_ptr(ObjectDeletedError(status, std::move(detail)));
    case NATSIO_ERR_OBJECT_EXISTS:
        return std::make_exception_ptr(ObjectExistsError(status, std::move(detail)));
    case NATSIO_ERR_DIGEST_MISMATCH:
        return std::make_exception_ptr(DigestMismatchError(status, std::move(detail)));
    case NATSIO_ERR_OBJECT_LINK:
        return std::make_exception_ptr(ObjectLinkError(status, std::move(detail)));
    case NATSIO_ERR_INVALID_OBJECT_NAME:
        return std::make_exception_ptr(InvalidObjectNameError(status, std::move(detail)));
    case NATSIO_ERR_BUCKET_SEALED:
        return std::make_exception_ptr(BucketSealedError(status, std::move(detail)));
    case NATSIO_OK:
    case NATSIO_DONE:
    case NATSIO_PENDING:
        break;
    }
    return std::make_exception_ptr(Error(status, std::move(detail)));
}

/// Throws the exception make_error() maps `status` to, with `detail`.
[[noreturn]] inline void throw_error(Status status, std::string detail) {
    std::rethrow_exception(make_error(status, std::move(detail)));
}

namespace detail {

/// Throws for any status other than NATSIO_OK, reading this thread's
/// natsio_last_error() at once (the next failing call would replace it).
inline void check(Status status) {
    if (status != NATSIO_OK) {
        throw_error(status, natsio_last_error());
    }
}

}  // namespace detail
}  // namespace natsio

#endif  // NATSIO_CPP_ERRORS_HPP
