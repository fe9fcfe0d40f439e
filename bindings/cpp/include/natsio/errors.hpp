// natsio/errors.hpp: the exception hierarchy of the C++ binding of libnatsio.
//
// Every failing natsio_status becomes one exception. natsio::Error carries the
// status code and the library's detail text (natsio_last_error() of the
// failing call); one subclass per status family lets callers catch what they
// care about, e.g. `catch (const natsio::TimeoutError&)`.
//
// make_error() is the single mapping from a status to its class; throw_error()
// throws it. Codes unknown to this header (a newer library) map to
// natsio::Error itself, so nothing is ever lost.
#ifndef NATSIO_CPP_ERRORS_HPP
#define NATSIO_CPP_ERRORS_HPP

#include <natsio.h>

#include <cstdint>
#include <exception>
#include <stdexcept>
#include <string>
#include <string_view>

namespace natsio {

using Status = natsio_status;

/// A short English name of a status code (static text from the library).
inline std::string_view status_text(Status status) noexcept {
    return natsio_status_str(static_cast<int32_t>(status));
}

/// Base of every exception thrown by the binding for a failing natsio call.
class Error : public std::runtime_error {
public:
    Error(Status status, std::string detail)
        : std::runtime_error(compose(status, detail)), status_(status), detail_(std::move(detail)) {}

    /// The natsio_status the library returned.
    Status status() const noexcept { return status_; }
    /// natsio_last_error() text of the failing call ("" when there was none).
    const std::string& detail() const noexcept { return detail_; }

private:
    static std::string compose(Status status, const std::string& detail) {
        std::string text(status_text(status));
        if (!detail.empty()) {
            text += ": ";
            text += detail;
        }
        return text;
    }

    Status status_;
    std::string detail_;
};

// Each class below inherits Error's constructor; the comment names the
// natsio_status codes it stands for.
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
        Name() : Error(Code, std::string()) {}                                 \
    }

// 1xx: arguments and usage.
NATSIO_CPP_ERROR_CLASS(InvalidArgumentError, Error);   // NULL_ARGUMENT, INVALID_UTF8, INVALID_ARGUMENT
NATSIO_CPP_ERROR_CLASS(BadSubjectError, Error);        // BAD_SUBJECT
NATSIO_CPP_ERROR_CLASS(BadQueueNameError, Error);      // BAD_QUEUE_NAME
NATSIO_CPP_ERROR_CLASS(BadHeadersError, Error);        // BAD_HEADERS
NATSIO_CPP_ERROR_CLASS(ConfigError, Error);            // CONFIG
NATSIO_CPP_ERROR_CLASS(IllegalStateError, Error);      // ILLEGAL_STATE
NATSIO_CPP_ERROR_CLASS(NotFoundError, Error);          // NOT_FOUND
NATSIO_CPP_ERROR_CLASS(InternalError, Error);          // INTERNAL
// 2xx: connection.
NATSIO_CPP_ERROR_CLASS_VIRTUAL(TimeoutError, NATSIO_ERR_TIMEOUT);  // TIMEOUT
NATSIO_CPP_ERROR_CLASS(ConnectionClosedError, Error);  // CONNECTION_CLOSED
NATSIO_CPP_ERROR_CLASS(NoServersError, Error);         // NO_SERVERS
NATSIO_CPP_ERROR_CLASS(IoError, Error);                // IO
NATSIO_CPP_ERROR_CLASS(DrainTimeoutError, TimeoutError);  // DRAIN_TIMEOUT
NATSIO_CPP_ERROR_CLASS(CancelledError, Error);         // CANCELLED
NATSIO_CPP_ERROR_CLASS(ReconnectBufExceededError, Error);  // RECONNECT_BUF_EXCEEDED
// 3xx: protocol and server.
NATSIO_CPP_ERROR_CLASS(ProtocolError, Error);          // PROTOCOL
NATSIO_CPP_ERROR_CLASS(ParserError, ProtocolError);    // PARSER
NATSIO_CPP_ERROR_CLASS(MaxControlLineError, ProtocolError);  // MAX_CONTROL_LINE
NATSIO_CPP_ERROR_CLASS(MaxPayloadError, Error);        // MAX_PAYLOAD
NATSIO_CPP_ERROR_CLASS(ServerError, Error);            // SERVER
NATSIO_CPP_ERROR_CLASS(StaleConnectionError, ServerError);       // STALE_CONNECTION
NATSIO_CPP_ERROR_CLASS(AuthorizationError, ServerError);         // AUTHORIZATION
NATSIO_CPP_ERROR_CLASS(AuthExpiredError, AuthorizationError);    // AUTH_EXPIRED
NATSIO_CPP_ERROR_CLASS(PermissionsError, ServerError);           // PERMISSIONS
NATSIO_CPP_ERROR_CLASS(MaxSubscriptionsError, ServerError);      // MAX_SUBSCRIPTIONS
// 4xx: messaging.
NATSIO_CPP_ERROR_CLASS(NoRespondersError, Error);      // NO_RESPONDERS
NATSIO_CPP_ERROR_CLASS(NoReplySubjectError, Error);    // NO_REPLY_SUBJECT
NATSIO_CPP_ERROR_CLASS(SubscriptionClosedError, Error);  // SUBSCRIPTION_CLOSED
NATSIO_CPP_ERROR_CLASS(SlowConsumerError, Error);      // SLOW_CONSUMER
// 5xx: JetStream. ApiError and its subclasses are rejections by the
// JetStream API (detail: code, err_code, description).
NATSIO_CPP_ERROR_CLASS_VIRTUAL(JetStreamError, NATSIO_ERR_JETSTREAM);  // JETSTREAM
NATSIO_CPP_ERROR_CLASS(ApiError, JetStreamError);      // JS_API
NATSIO_CPP_ERROR_CLASS(JetStreamNotEnabledError, ApiError);  // JS_NOT_ENABLED
NATSIO_CPP_ERROR_CLASS(NoStreamResponseError, JetStreamError);  // NO_STREAM_RESPONSE
NATSIO_CPP_ERROR_CLASS(StreamNotFoundError, ApiError);       // STREAM_NOT_FOUND
NATSIO_CPP_ERROR_CLASS(StreamNameInUseError, ApiError);      // STREAM_NAME_IN_USE
NATSIO_CPP_ERROR_CLASS(ConsumerNotFoundError, ApiError);     // CONSUMER_NOT_FOUND
NATSIO_CPP_ERROR_CLASS(MessageNotFoundError, ApiError);      // MESSAGE_NOT_FOUND
NATSIO_CPP_ERROR_CLASS(WrongLastSequenceError, ApiError);    // WRONG_LAST_SEQUENCE
NATSIO_CPP_ERROR_CLASS(TooManyStalledMsgsError, JetStreamError);   // TOO_MANY_STALLED
NATSIO_CPP_ERROR_CLASS(AsyncPublishTimeoutError, JetStreamError);  // ASYNC_PUBLISH_TIMEOUT
NATSIO_CPP_ERROR_CLASS(ConsumerDeletedError, JetStreamError);      // CONSUMER_DELETED
NATSIO_CPP_ERROR_CLASS(MessageAlreadyAckedError, JetStreamError);  // MESSAGE_ALREADY_ACKED
NATSIO_CPP_ERROR_CLASS(NotJsMessageError, JetStreamError);         // NOT_JS_MESSAGE
/// NO_MESSAGES: a pull ended without a message. Both a JetStreamError and a
/// TimeoutError, so `catch (const natsio::TimeoutError&)` sees it too.
class NoMessagesError : public JetStreamError, public TimeoutError {
public:
    NoMessagesError(Status status, std::string detail) : Error(status, std::move(detail)) {}
};
// 6xx: Key-Value. A deleted key is also "not found"; bad names are config
// errors.
NATSIO_CPP_ERROR_CLASS(BucketNotFoundError, JetStreamError);  // BUCKET_NOT_FOUND
NATSIO_CPP_ERROR_CLASS(BucketExistsError, JetStreamError);    // BUCKET_EXISTS
NATSIO_CPP_ERROR_CLASS(KeyNotFoundError, JetStreamError);     // KEY_NOT_FOUND
NATSIO_CPP_ERROR_CLASS(KeyDeletedError, KeyNotFoundError);    // KEY_DELETED
NATSIO_CPP_ERROR_CLASS(KeyExistsError, JetStreamError);       // KEY_EXISTS
NATSIO_CPP_ERROR_CLASS(InvalidBucketNameError, ConfigError);  // INVALID_BUCKET_NAME
NATSIO_CPP_ERROR_CLASS(InvalidKeyError, ConfigError);         // INVALID_KEY
// 7xx: Object Store (buckets share the 6xx bucket codes and classes). A
// deleted object is also "not found"; a bad object name is a config error.
NATSIO_CPP_ERROR_CLASS(ObjectNotFoundError, JetStreamError);     // OBJECT_NOT_FOUND
NATSIO_CPP_ERROR_CLASS(ObjectDeletedError, ObjectNotFoundError); // OBJECT_DELETED
NATSIO_CPP_ERROR_CLASS(ObjectExistsError, JetStreamError);       // OBJECT_EXISTS
NATSIO_CPP_ERROR_CLASS(DigestMismatchError, JetStreamError);     // DIGEST_MISMATCH
NATSIO_CPP_ERROR_CLASS(ObjectLinkError, JetStreamError);         // OBJECT_LINK
NATSIO_CPP_ERROR_CLASS(InvalidObjectNameError, ConfigError);     // INVALID_OBJECT_NAME
NATSIO_CPP_ERROR_CLASS(BucketSealedError, JetStreamError);       // BUCKET_SEALED

#undef NATSIO_CPP_ERROR_CLASS
#undef NATSIO_CPP_ERROR_CLASS_VIRTUAL

/// The exception for `status` with `detail`, as an exception_ptr (for
/// promises and error handlers). Every natsio_status maps to its class;
/// unknown codes map to natsio::Error.
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

/// Throws the exception make_error() maps `status` to.
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
